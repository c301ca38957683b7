/*
   The stability check of an ODE block's step: its scheme's stability function R(z) at z = h lambda
   for eigenvalues lambda of df/du (odeblock_spectrum.c).

     explicit RK (the ts scheme's tableau, TSRKGetTableau()):  R(z) = 1 + z b^T (I - z A)^{-1} 1
     discrete scheme (forward Euler):                           R(z) = 1 + z
     theta methods (beuler: theta = 1, cn: theta = 1/2):        R(z) = (1 + (1 - theta) z) / (1 - theta z)

   A step is stable for lambda when |R(h lambda)| <= max(1, |exp(h lambda)|): for Re lambda <= 0 the
   usual absolute stability |R| <= 1; for a growing mode (Re lambda > 0, the learned ODE itself grows)
   the step must not amplify more than the exact flow does.
*/
#include <petnn/private/odeimpl.h>
#include <petnn/private/spectralimpl.h>

/* the block's R(z), from its scheme and integrator */
PetscErrorCode NNODEGetStabilityFn(NNLayer l, NNODEStabilityFn *fn)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscBool    isrk, isbe, iscn;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(fn, sizeof(*fn)));
  if (o->scheme == NNODE_SCHEME_DISCRETE) {
    fn->s    = 1;
    fn->b[0] = 1;
    PetscCall(PetscStrncpy(fn->name, "discrete scheme (forward Euler)", sizeof(fn->name)));
    PetscFunctionReturn(0);
  }
  PetscCall(NNODECreateTS(l));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSRK, &isrk));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSBEULER, &isbe));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSCN, &iscn));
  if (isrk) {
    const PetscReal *A, *b;
    TSRKType         type;
    PetscCall(TSRKGetType(o->integ.ts, &type));
    PetscCall(TSRKGetTableau(o->integ.ts, &fn->s, &A, &b, NULL, NULL, NULL, NULL, NULL));
    PetscCheck(fn->s <= 16, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: RK tableau %s has %" PetscInt_FMT " stages; at most 16 are supported", ((PetscObject)l)->name, type, fn->s);
    PetscCall(PetscArraycpy(fn->A, A, fn->s * fn->s));
    PetscCall(PetscArraycpy(fn->b, b, fn->s));
    PetscCall(PetscSNPrintf(fn->name, sizeof(fn->name), "rk %s", type));
  } else {
    PetscCheck(isbe || iscn, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: no stability function for its TS type", ((PetscObject)l)->name);
    fn->theta_method = PETSC_TRUE;
    PetscCall(TSThetaGetTheta(o->integ.ts, &fn->theta));
    PetscCall(PetscSNPrintf(fn->name, sizeof(fn->name), "%s (theta = %g)", isbe ? "beuler" : "cn", (double)fn->theta));
  }
  PetscFunctionReturn(0);
}

/* complex helpers: (a + bi)(c + di) and (a + bi)/(c + di) */
static void CMul(PetscReal a, PetscReal b, PetscReal c, PetscReal d, PetscReal *r, PetscReal *i)
{
  PetscReal re = a * c - b * d, ie = a * d + b * c;
  *r = re;
  *i = ie;
}

static void CDiv(PetscReal a, PetscReal b, PetscReal c, PetscReal d, PetscReal *r, PetscReal *i)
{
  PetscReal den = c * c + d * d;
  PetscReal re = (a * c + b * d) / den, ie = (b * c - a * d) / den;
  *r = re;
  *i = ie;
}

/* R(z) at z = zr + i zi: for RK the stage values g = 1 + z A g by substitution (A strictly lower triangular) */
void NNODEStabilityEval(const NNODEStabilityFn *fn, PetscReal zr, PetscReal zi, PetscReal *Rr, PetscReal *Ri)
{
  PetscReal gr[16], gi[16], sr = 0, si = 0, tr, ti;

  if (fn->theta_method) {
    CDiv(1 + (1 - fn->theta) * zr, (1 - fn->theta) * zi, 1 - fn->theta * zr, -fn->theta * zi, Rr, Ri);
    return;
  }
  for (PetscInt i = 0; i < fn->s; i++) {
    PetscReal ar = 0, ai = 0;
    for (PetscInt j = 0; j < i; j++) {
      ar += fn->A[i * fn->s + j] * gr[j];
      ai += fn->A[i * fn->s + j] * gi[j];
    }
    CMul(zr, zi, ar, ai, &tr, &ti);
    gr[i] = 1 + tr;
    gi[i] = ti;
    sr += fn->b[i] * gr[i];
    si += fn->b[i] * gi[i];
  }
  CMul(zr, zi, sr, si, &tr, &ti);
  *Rr = 1 + tr;
  *Ri = ti;
}

/* |R(rho u)| / max(1, |exp(rho u)|) for the unit direction u of lambda */
static PetscReal NNODEAmplification(const NNODEStabilityFn *fn, PetscReal rho, PetscReal ur, PetscReal ui)
{
  PetscReal Rr, Ri;

  NNODEStabilityEval(fn, rho * ur, rho * ui, &Rr, &Ri);
  return PetscSqrtReal(Rr * Rr + Ri * Ri) / PetscMax(1.0, PetscExpReal(rho * ur));
}

#define NN_ODE_STABLE_TOL 1e-10 /* round-off in evaluating R near the boundary */

/* the largest step h with h' lambda stable for every h' <= h (PETSC_INFINITY if none is unstable up to |h lambda| = 1e6) */
static PetscReal NNODEStableStep(const NNODEStabilityFn *fn, PetscReal lr, PetscReal li)
{
  PetscReal a = PetscSqrtReal(lr * lr + li * li), ur, ui, lo = 0, hi = -1, rho;

  if (a == 0) return PETSC_INFINITY;
  ur = lr / a;
  ui = li / a;
  for (PetscInt j = 1; j <= 5000 && hi < 0; j++) { /* |z| up to 50 in steps of 0.01, then geometrically */
    rho = 0.01 * j;
    if (NNODEAmplification(fn, rho, ur, ui) > 1 + NN_ODE_STABLE_TOL) hi = rho;
    else lo = rho;
  }
  for (rho = 100; rho <= 1e6 && hi < 0; rho *= 2) {
    if (NNODEAmplification(fn, rho, ur, ui) > 1 + NN_ODE_STABLE_TOL) hi = rho;
    else lo = rho;
  }
  if (hi < 0) return PETSC_INFINITY;
  for (PetscInt it = 0; it < 60; it++) {
    rho = 0.5 * (lo + hi);
    if (NNODEAmplification(fn, rho, ur, ui) > 1 + NN_ODE_STABLE_TOL) hi = rho;
    else lo = rho;
  }
  return lo / a;
}

/* the block's step against R over the eigenvalues (re, im) */
PetscErrorCode NNODEStabilityCompute(NNLayer l, const NNODEStabilityFn *fn, PetscInt n, const PetscReal re[], const PetscReal im[], NNODEStability *st)
{
  NNLayer_ODE *o     = (NNLayer_ODE *)l->data;
  PetscReal    h     = o->h, worst = -1, amin = PETSC_MAX_REAL, amax = 0;
  PetscInt     iworst = -1;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(st, sizeof(*st)));
  st->h      = h;
  st->stable = PETSC_TRUE;
  st->hmax   = PETSC_INFINITY;
  for (PetscInt i = 0; i < n; i++) {
    PetscReal a = PetscSqrtReal(re[i] * re[i] + im[i] * im[i]), Rr, Ri, R, amp;
    NNODEStabilityEval(fn, h * re[i], h * im[i], &Rr, &Ri);
    R   = PetscSqrtReal(Rr * Rr + Ri * Ri);
    amp = R / PetscMax(1.0, PetscExpReal(h * re[i]));
    st->hlmax = PetscMax(st->hlmax, h * a);
    st->Rmax  = PetscMax(st->Rmax, R);
    amin      = PetscMin(amin, a);
    amax      = PetscMax(amax, a);
    if (amp > worst) {
      worst  = amp;
      iworst = i;
    }
  }
  if (iworst >= 0) {
    st->lre    = re[iworst];
    st->lim    = im[iworst];
    st->stable = (PetscBool)(worst <= 1 + NN_ODE_STABLE_TOL);
    st->hmax   = NNODEStableStep(fn, st->lre, st->lim);
  }
  st->stiffness = n ? (amin > 0 ? amax / amin : PETSC_INFINITY) : 0;
  PetscFunctionReturn(0);
}

/* "a", or "a+bi" */
PetscErrorCode NNODEFormatEig(PetscReal re, PetscReal im, size_t len, char buf[])
{
  PetscFunctionBegin;
  if (PetscAbsReal(im) <= 1e-10 * PetscAbsReal(re) || im == 0) PetscCall(PetscSNPrintf(buf, len, "%.6g", (double)re));
  else PetscCall(PetscSNPrintf(buf, len, "%.6g%+.6gi", (double)re, (double)im));
  PetscFunctionReturn(0);
}

/* warns (check = warn) or refuses (check = error) an unstable step */
PetscErrorCode NNODEStabilityReport(NNLayer l, const NNODEStabilityFn *fn, const NNODEStability *st, NNODEStabilityCheck check)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  char         msg[1024], hs[64] = "no positive step is stable", ls[96];
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  PetscReal    Rr, Ri;

  PetscFunctionBegin;
  if (st->stable || check == NNODE_STABILITY_NONE) PetscFunctionReturn(0);
  NNODEStabilityEval(fn, st->h * st->lre, st->h * st->lim, &Rr, &Ri);
  if (st->hmax > 0 && st->hmax < PETSC_INFINITY) PetscCall(PetscSNPrintf(hs, sizeof(hs), "is h = %.6g (-%ssteps %" PetscInt_FMT ")", (double)st->hmax, NNODEPrefix(l), (PetscInt)PetscCeilReal(o->T / st->hmax * (1 + 1e-12))));
  PetscCall(NNODEFormatEig(st->lre, st->lim, sizeof(ls), ls));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "ODE block %s: the step h = %.6g of %s is unstable for the eigenvalue lambda = %s of df/du: |R(h lambda)| = %.6g exceeds max(1, |exp(h lambda)|); the largest stable step along this eigenvalue's ray %s. Use more steps, or an implicit theta method (-%sts_type cn or beuler)",
                          ((PetscObject)l)->name, (double)st->h, fn->name, ls, (double)PetscSqrtReal(Rr * Rr + Ri * Ri), hs, NNODEPrefix(l)));
  PetscCheck(check != NNODE_STABILITY_ERROR, comm, PETSC_ERR_ARG_OUTOFRANGE, "%s", msg);
  PetscCall(PetscInfo(l, "%s\n", msg));
  PetscCall(PetscPrintf(comm, "WARNING: %s\n", msg));
  PetscFunctionReturn(0);
}

/*@C
   NNODEStabilityFunction - the stability function R(z) of an ODE block's scheme

   Not Collective

   Input Parameters:
+  net - a set-up network
.  block - name of a top-level ODE block
-  zr, zi - z = zr + i zi (z = h lambda)

   Output Parameters:
.  Rr, Ri - R(z)

   Notes:
   Explicit RK (-<block>_ts_type rk): R(z) = 1 + z b^T (I - z A)^{-1} 1 from the tableau; the discrete scheme
   (forward Euler): 1 + z; beuler and cn: (1 + (1 - theta) z) / (1 - theta z). The mgrit scheme uses the
   tableau of its propagator, the same.

   Level: advanced

.seealso: `NNODECheckStability()`, `NNODEComputeSpectrum()`
@*/
PetscErrorCode NNODEStabilityFunction(NN net, const char block[], PetscReal zr, PetscReal zi, PetscReal *Rr, PetscReal *Ri)
{
  NNLayer          l;
  PetscInt         pos;
  NNODEStabilityFn fn;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNODEGetBlock(net, block, &l, &pos));
  PetscCall(NNODEGetStabilityFn(l, &fn));
  NNODEStabilityEval(&fn, zr, zi, Rr, Ri);
  PetscFunctionReturn(0);
}

/*@C
   NNODECheckStability - checks an ODE block's step against its scheme's stability region for eigenvalues of df/du

   Collective

   Input Parameters:
+  net - a set-up network
.  block - name of a top-level ODE block
.  n - number of eigenvalues
.  re, im - the eigenvalues (e.g. from `NNODEComputeSpectrum()`)
-  check - `NNODE_STABILITY_NONE` (report only), `NNODE_STABILITY_WARN` (print a warning when unstable) or
           `NNODE_STABILITY_ERROR` (a PETSc error naming the block, h, lambda and the largest stable step)

   Output Parameter:
.  st - max |h lambda|, max |R(h lambda)|, the worst eigenvalue, the largest stable step along its ray,
        the stiffness ratio max|lambda|/min|lambda| and whether the step is stable (may be NULL)

   Notes:
   The step is stable for lambda when |R(h lambda)| <= max(1, |exp(h lambda)|): for Re lambda <= 0 the
   usual absolute stability, for a growing mode of the learned ODE (Re lambda > 0) no more growth than the
   exact flow. The largest stable step along the ray of lambda is found by scanning |h lambda| and bisection.
   Usable after training, on the eigenvalues of any state.

   Level: intermediate

.seealso: `NNODEComputeSpectrum()`, `NNODEStabilityFunction()`, `NNODESpectrumView()`
@*/
PetscErrorCode NNODECheckStability(NN net, const char block[], PetscInt n, const PetscReal re[], const PetscReal im[], NNODEStabilityCheck check, NNODEStability *st)
{
  NNLayer          l;
  PetscInt         pos;
  NNODEStabilityFn fn;
  NNODEStability   s;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " eigenvalues: give n >= 0", n);
  if (n) PetscAssertPointer(re, 4);
  if (n) PetscAssertPointer(im, 5);
  PetscCall(NNODEGetBlock(net, block, &l, &pos));
  PetscCall(NNODEGetStabilityFn(l, &fn));
  PetscCall(NNODEStabilityCompute(l, &fn, n, re, im, &s));
  if (st) *st = s;
  PetscCall(NNODEStabilityReport(l, &fn, &s, check));
  PetscFunctionReturn(0);
}
