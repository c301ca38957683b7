/*
   Reports of an ODE block's Jacobian spectrum and step stability: -<block>_spectrum_view and
   -<block>_stability_check at the end of NNTrain() (NNSpectralViewFromOptions()), NNODESpectrumView().
   For each sample and each state u_k of -<block>_spectrum_steps: the largest-magnitude, rightmost and
   smallest-magnitude eigenvalues of df/du (odeblock_spectrum.c), then the step against the scheme's
   stability function (odeblock_stability.c) over all of them.
*/
#include <petnn/private/odeimpl.h>
#include <petnn/private/spectralimpl.h>

PetscErrorCode NNODESetFromOptions_Spectrum(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_ODE      *o = (NNLayer_ODE *)l->data;
  PetscViewer       v = NULL;
  PetscViewerFormat fmt;
  char              chk[16] = "";
  PetscBool         flg;
  PetscInt          n = 16;

  PetscFunctionBegin;
  PetscCall(PetscOptionsViewer("-spectrum_view", "Print eigenvalues of df/du and the step's stability at the end of training " NN_SLEPC_NOTE, "NNODESpectrumView", &v, &fmt, &o->spec.view));
  PetscCall(PetscViewerDestroy(&v)); /* opened again when the view is printed */
  /* no value means warn; otherwise none, warn or error (read before PetscOptionsEnum(), whose errors leak in PETSc 3.18) */
  PetscCall(PetscOptionsGetString(((PetscObject)l)->options, ((PetscObject)l)->prefix, "-stability_check", chk, sizeof(chk), &flg));
  if (flg) {
    PetscBool found = PETSC_FALSE;
    if (!chk[0]) o->spec.check = NNODE_STABILITY_WARN;
    for (PetscInt i = 0; i < 3 && chk[0] && !found; i++) {
      PetscCall(PetscStrcasecmp(chk, NNODEStabilityChecks[i], &found));
      if (found) o->spec.check = (NNODEStabilityCheck)i;
    }
    o->spec.bad[0] = 0;
    if (chk[0] && !found) PetscCall(PetscStrncpy(o->spec.bad, chk, sizeof(o->spec.bad))); /* refused at set up: an error inside an options block leaks in PETSc 3.18 */
  } else PetscCall(PetscOptionsEnum("-stability_check", "Check the step against the scheme's stability region at the end of training: none, warn, error (no value: warn)", "NNODECheckStability", NNODEStabilityChecks, (PetscEnum)o->spec.check, (PetscEnum *)&o->spec.check, NULL));
  PetscCall(PetscOptionsInt("-spectrum_samples", "Test samples whose Jacobian spectra are computed", "NNODESpectrumView", o->spec.samples, &o->spec.samples, NULL));
  PetscCheck(o->spec.samples >= 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%sspectrum_samples %" PetscInt_FMT " must be positive", NNODEPrefix(l), o->spec.samples);
  PetscCall(PetscOptionsInt("-spectrum_nev", "Eigenvalues of each kind (largest magnitude, rightmost, smallest magnitude)", "NNODEComputeSpectrum", o->spec.nev, &o->spec.nev, NULL));
  PetscCheck(o->spec.nev >= 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%sspectrum_nev %" PetscInt_FMT " must be positive", NNODEPrefix(l), o->spec.nev);
  PetscCall(PetscOptionsIntArray("-spectrum_steps", "States u_k whose Jacobian spectra are computed (0: the block's input)", "NNODEComputeSpectrum", o->spec.steps, &n, &flg));
  if (flg) o->spec.nsteps = n;
  PetscCheck(o->spec.nev <= o->S || !l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%sspectrum_nev %" PetscInt_FMT " exceeds %" PetscInt_FMT ", the size of one sample's state", NNODEPrefix(l), o->spec.nev, o->S);
  for (PetscInt j = 0; j < o->spec.nsteps; j++) PetscCheck(o->spec.steps[j] >= 0 && (o->spec.steps[j] < o->N), PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%sspectrum_steps: step %" PetscInt_FMT " is not a step of the block; give 0 to %" PetscInt_FMT, NNODEPrefix(l), o->spec.steps[j], o->N - 1);
  PetscCall(PetscOptionsBool("-spectrum_smallest", "Also the smallest-magnitude eigenvalues (for the stiffness ratio; slow to converge when many eigenvalues cluster near 0)", "NNODESpectrumView", o->spec.smallest, &o->spec.smallest, NULL));
  PetscCall(PetscOptionsReal("-spectrum_stiffness", "Stiffness ratio max|lambda|/min|lambda| above which an implicit method is suggested", "NNODESpectrumView", o->spec.stiff, &o->spec.stiff, NULL));
  PetscFunctionReturn(0);
}

/* an invalid -stability_check value read by NNODESetFromOptions_Spectrum() */
PetscErrorCode NNODESpectrumCheckOptions(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(!o->spec.bad[0], PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "-%sstability_check %s: valid are none, warn, error (no value: warn)", NNODEPrefix(l), o->spec.bad);
  PetscFunctionReturn(0);
}

/* the three kinds of eigenvalues of J, appended to (re, im) at *ne, printed to v (may be NULL) */
static PetscErrorCode NNODESpectrumKinds(NNLayer l, Mat J, PetscViewer v, PetscReal *re, PetscReal *im, PetscInt *ne, PetscBool *smok)
{
  NNLayer_ODE      *o        = (NNLayer_ODE *)l->data;
  const char *const names[3] = {"largest magnitude", "rightmost", "smallest magnitude"};
  char              buf[96];

  PetscFunctionBegin;
  *smok = PETSC_FALSE;
  for (PetscInt w = 0; w < (o->spec.smallest ? 3 : 2); w++) {
    PetscInt nc;
    PetscCall(NNODESpectrumSolve(J, (NNODESpectrumWhich)w, o->spec.nev, 1e-8, PETSC_DEFAULT, &nc, re + *ne, im + *ne)); /* a report: SLEPc's default tolerance */
    if (w == 2) *smok = (PetscBool)(nc == o->spec.nev);
    if (v) {
      PetscCall(PetscViewerASCIIPrintf(v, "%s:", names[w]));
      PetscCall(PetscViewerASCIIUseTabs(v, PETSC_FALSE));
      for (PetscInt i = 0; i < nc; i++) {
        PetscCall(NNODEFormatEig(re[*ne + i], im[*ne + i], sizeof(buf), buf));
        PetscCall(PetscViewerASCIIPrintf(v, " %s", buf));
      }
      if (nc < o->spec.nev) PetscCall(PetscViewerASCIIPrintf(v, " (%" PetscInt_FMT " of %" PetscInt_FMT " converged within -%sspectrum_eps_max_it)", nc, o->spec.nev, NNODEPrefix(l)));
      PetscCall(PetscViewerASCIIPrintf(v, "\n"));
      PetscCall(PetscViewerASCIIUseTabs(v, PETSC_TRUE));
    }
    *ne += nc;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEStabilityLine(NNLayer l, PetscViewer v, const NNODEStability *st, PetscBool smok, const char what[])
{
  char ws[96], hs[32] = "any", ss[64] = "n/a (no smallest-magnitude eigenvalues)";

  PetscFunctionBegin;
  if (!v) PetscFunctionReturn(0);
  PetscCall(NNODEFormatEig(st->lre, st->lim, sizeof(ws), ws));
  if (st->hmax < PETSC_INFINITY) PetscCall(PetscSNPrintf(hs, sizeof(hs), "%.4g", (double)st->hmax));
  if (smok) PetscCall(PetscSNPrintf(ss, sizeof(ss), "%.4g", (double)st->stiffness));
  PetscCall(PetscViewerASCIIPrintf(v, "%smax |h lambda| = %.4g, max |R(h lambda)| = %.4g: %s; worst lambda = %s, largest stable h along its ray = %s; stiffness ratio max|lambda|/min|lambda| = %s\n", what, (double)st->hlmax, (double)st->Rmax, st->stable ? "stable" : "UNSTABLE", ws, hs, ss));
  (void)l;
  PetscFunctionReturn(0);
}

/* the report of block l for the n samples of x (labelled first, first+1, ...); eigenvalues appended to (re, im) */
static PetscErrorCode NNODESpectrumViewSamples(NN net, NNLayer l, PetscInt pos, PetscInt n, Vec x, PetscInt first, PetscViewer v, const NNODEStabilityFn *fn, PetscReal *re, PetscReal *im, PetscInt *ne, PetscInt *nprod, PetscBool *allsmok)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  Vec          xin;
  char         prefix[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%sspectrum_", NNODEPrefix(l)));
  PetscCall(NNODEBlockInput(net, pos, n, x, &xin));
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt j = 0; j < o->spec.nsteps; j++) {
      Mat               J;
      NNODEStability    st;
      NNODEJacobianCtx *ctx;
      PetscInt          k = o->spec.steps[j], ne0 = *ne;
      PetscCall(NNODEJacobianCreate(net, l, n, xin, s, k, &J));
      PetscCall(MatSetOptionsPrefix(J, prefix));
      if (v) PetscCall(PetscViewerASCIIPrintf(v, "sample %" PetscInt_FMT ", state u_%" PetscInt_FMT " (t = %g):\n", first + s, k, (double)(k * o->h)));
      if (v) PetscCall(PetscViewerASCIIPushTab(v));
      PetscBool         smok;
      PetscCall(NNODESpectrumKinds(l, J, v, re, im, ne, &smok));
      PetscCall(NNODEStabilityCompute(l, fn, *ne - ne0, re + ne0, im + ne0, &st));
      PetscCall(NNODEStabilityLine(l, v, &st, smok, ""));
      *allsmok = (PetscBool)(*allsmok && smok);
      if (v) PetscCall(PetscViewerASCIIPopTab(v));
      PetscCall(MatShellGetContext(J, &ctx));
      *nprod += ctx->nprod;
      PetscCall(MatDestroy(&J));
    }
  }
  PetscFunctionReturn(0);
}

/* the summary over all samples and states, the suggestion, and the check */
static PetscErrorCode NNODESpectrumSummary(NNLayer l, PetscViewer v, const NNODEStabilityFn *fn, PetscInt nsamples, PetscInt ne, const PetscReal *re, const PetscReal *im, PetscBool smok, PetscInt nprod, PetscLogDouble t)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  NNODEStability st;
  char           what[128];

  PetscFunctionBegin;
  PetscCall(NNODEStabilityCompute(l, fn, ne, re, im, &st));
  if (!smok) st.stiffness = 0; /* unknown: no suggestion from it */
  if (v) {
    PetscCall(PetscSNPrintf(what, sizeof(what), "over %" PetscInt_FMT " samples x %" PetscInt_FMT " states: ", nsamples, o->spec.nsteps));
    PetscCall(NNODEStabilityLine(l, v, &st, smok, what));
    if (!st.stable || st.stiffness > o->spec.stiff) {
      const char *why = !st.stable ? (st.stiffness > o->spec.stiff ? "the step is unstable and the spectrum stiff" : "the step is unstable") : "the spectrum is stiff";
      PetscCall(PetscViewerASCIIPrintf(v, "suggestion: %s; an implicit, A-stable theta method (-%sts_type cn, or beuler) is stable for any step on decaying modes", why, NNODEPrefix(l)));
      PetscCall(PetscViewerASCIIUseTabs(v, PETSC_FALSE));
      if (!st.stable && st.hmax > 0 && st.hmax < PETSC_INFINITY) PetscCall(PetscViewerASCIIPrintf(v, "; or h <= %.4g (-%ssteps %" PetscInt_FMT ")", (double)st.hmax, NNODEPrefix(l), (PetscInt)PetscCeilReal(o->T / st.hmax * (1 + 1e-12))));
      PetscCall(PetscViewerASCIIPrintf(v, "\n"));
      PetscCall(PetscViewerASCIIUseTabs(v, PETSC_TRUE));
    }
    PetscCall(PetscViewerASCIIPrintf(v, "time: %.3g s, %" PetscInt_FMT " products J^T v (f's backward pass) on this rank\n", (double)t, nprod));
  }
  PetscCall(NNODEStabilityReport(l, fn, &st, o->spec.check));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODESpectrumHeader(NNLayer l, PetscViewer v, const NNODEStabilityFn *fn)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (!v) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(v, "ODE block %s: eigenvalues of df/du (SLEPc EPS on f's exact backward pass J^T v), %" PetscInt_FMT " of each kind; step h = %g of %s\n", ((PetscObject)l)->name, o->spec.nev, (double)o->h, fn->name));
  PetscFunctionReturn(0);
}

/*@C
   NNODESpectrumView - prints the Jacobian spectra of an ODE block and the stability of its step

   Collective

   Input Parameters:
+  net - a set-up network
.  block - name of a top-level ODE block
.  n - samples in x
.  x - a network input batch
-  v - an ASCII viewer, or NULL to check only

   Options Database Keys:
+  -<block>_spectrum_steps <k1,k2,...> - the states u_k (default 0: the block's input)
.  -<block>_spectrum_nev <nev> - eigenvalues of each kind (default 3)
.  -<block>_spectrum_smallest <bool> - also the smallest-magnitude eigenvalues, for the stiffness ratio (default true)
.  -<block>_spectrum_stiffness <r> - stiffness ratio above which an implicit method is suggested (default 1e3)
.  -<block>_stability_check <none,warn,error> - warn or refuse an unstable step
-  -<block>_spectrum_eps_* - the EPS

   Notes:
   For each sample and state: the largest-magnitude, rightmost and smallest-magnitude eigenvalues of df/du,
   max |h lambda|, max |R(h lambda)| and stability; then the same over all of them, a suggestion when the
   step is unstable or the spectrum stiff, and the time taken. The options are read by `NNSetFromOptions()`.

   Level: intermediate

.seealso: `NNODEComputeSpectrum()`, `NNODECheckStability()`, `NNSpectralViewFromOptions()`
@*/
PetscErrorCode NNODESpectrumView(NN net, const char block[], PetscInt n, Vec x, PetscViewer v)
{
  NNLayer          l;
  NNLayer_ODE     *o;
  PetscInt         pos, ne = 0, nprod = 0;
  PetscBool        smok = PETSC_TRUE;
  NNODEStabilityFn fn;
  PetscReal       *re, *im;
  PetscLogDouble   t0, t1;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 4);
  PetscCall(NNSlepcInitialize());
  PetscCall(NNODEGetBlock(net, block, &l, &pos));
  o = (NNLayer_ODE *)l->data;
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(NN_ODESpectrum, l, 0, 0, 0));
  PetscCall(NNODEGetStabilityFn(l, &fn));
  PetscCall(PetscMalloc2(3 * o->spec.nev * o->spec.nsteps * n, &re, 3 * o->spec.nev * o->spec.nsteps * n, &im));
  PetscCall(NNODESpectrumHeader(l, v, &fn));
  if (v) PetscCall(PetscViewerASCIIPushTab(v));
  PetscCall(NNODESpectrumViewSamples(net, l, pos, n, x, 0, v, &fn, re, im, &ne, &nprod, &smok));
  PetscCall(PetscLogEventEnd(NN_ODESpectrum, l, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  PetscCall(NNODESpectrumSummary(l, v, &fn, n, ne, re, im, smok, nprod, t1 - t0));
  if (v) PetscCall(PetscViewerASCIIPopTab(v));
  PetscCall(PetscFree2(re, im));
  PetscFunctionReturn(0);
}

/* one block's report on the first -spectrum_samples samples of data, one sample per pass */
static PetscErrorCode NNODESpectrumViewData(NN net, NNLayer l, PetscInt pos, NNData data, PetscViewer v)
{
  NNLayer_ODE     *o = (NNLayer_ODE *)l->data;
  PetscInt         N, m, ne = 0, nprod = 0;
  PetscBool        smok = PETSC_TRUE;
  NNODEStabilityFn fn;
  PetscReal       *re, *im;
  PetscLogDouble   t0, t1;
  Vec              x, t;

  PetscFunctionBegin;
  PetscCall(NNDataGetNumSamples(data, &N));
  m = PetscMin(o->spec.samples, N);
  PetscCall(PetscTime(&t0));
  PetscCall(PetscLogEventBegin(NN_ODESpectrum, l, 0, 0, 0));
  PetscCall(NNODEGetStabilityFn(l, &fn));
  PetscCall(PetscMalloc2(3 * o->spec.nev * o->spec.nsteps * m, &re, 3 * o->spec.nev * o->spec.nsteps * m, &im));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(NNODESpectrumHeader(l, v, &fn));
  if (v) PetscCall(PetscViewerASCIIPushTab(v));
  for (PetscInt i = 0; i < m; i++) {
    PetscCall(NNDataGetBatch(data, 1, &i, x, t));
    PetscCall(NNODESpectrumViewSamples(net, l, pos, 1, x, i, v, &fn, re, im, &ne, &nprod, &smok));
  }
  PetscCall(PetscLogEventEnd(NN_ODESpectrum, l, 0, 0, 0));
  PetscCall(PetscTime(&t1));
  PetscCall(NNODESpectrumSummary(l, v, &fn, m, ne, re, im, smok, nprod, t1 - t0));
  if (v) PetscCall(PetscViewerASCIIPopTab(v));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(PetscFree2(re, im));
  PetscFunctionReturn(0);
}

/* -<block>_spectrum_view and -<block>_stability_check of every top-level ODE block, on the test (or training) data */
PetscErrorCode NNODESpectrumViewFromOptions(NN net, NNData data)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer           l = net->layers[i];
    NNLayer_ODE      *o;
    PetscBool         isode;
    PetscViewer       v = NULL;
    PetscViewerFormat fmt;
    PetscBool         flg = PETSC_FALSE;

    PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERODE, &isode));
    if (!isode) continue;
    o = (NNLayer_ODE *)l->data;
    PetscCall(NNODESpectrumCheckOptions(l));
    if (!o->spec.view && o->spec.check == NNODE_STABILITY_NONE) continue;
    PetscCheck(data, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_NULL, "ODE block %s: -%sspectrum_view and -%sstability_check need data for the block's states", ((PetscObject)l)->name, NNODEPrefix(l), NNODEPrefix(l));
    PetscCall(NNSlepcInitialize());
    if (!NN_ODESpectrum) PetscCall(NNLogEventRegister("NNODESpectrum", NNLAYER_CLASSID, &NN_ODESpectrum));
    if (o->spec.view) PetscCall(PetscOptionsCreateViewer(PetscObjectComm((PetscObject)net), ((PetscObject)l)->options, ((PetscObject)l)->prefix, "-spectrum_view", &v, &fmt, &flg));
    if (v) PetscCall(PetscViewerPushFormat(v, fmt));
    PetscCall(NNODESpectrumViewData(net, l, i, data, v));
    if (v) PetscCall(PetscViewerPopFormat(v));
    PetscCall(PetscViewerDestroy(&v));
  }
  PetscFunctionReturn(0);
}
