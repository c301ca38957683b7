/* Extreme eigenvalues of the loss Hessian with SLEPc (EPS_HEP), and -nn_hessian_view after training. */
#include <petnn/private/spectralimpl.h>
#include <petnn/private/gridimpl.h>

/* the EPS solve; with x, also the first eigenvector (a Vec of H's layout) */
static PetscErrorCode NNHessianEigenSolve(Mat H, PetscInt nev, PetscBool negative, PetscInt *nconv, PetscReal eig[], Vec x)
{
#if defined(PETNN_HAVE_SLEPC)
  EPS         eps;
  PetscInt    nc, P;
  const char *prefix;
  char        pre[256];
#endif

  PetscFunctionBegin;
#if defined(PETNN_HAVE_SLEPC)
  PetscCall(MatGetSize(H, &P, NULL));
  PetscCheck(nev > 0 && nev <= P, PetscObjectComm((PetscObject)H), PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " Hessian eigenvalues (-nn_hessian_nev): valid values are 1 to the number of parameters %" PetscInt_FMT, nev, P);
  PetscCall(EPSCreate(PetscObjectComm((PetscObject)H), &eps));
  PetscCall(MatGetOptionsPrefix(H, &prefix));
  PetscCall(PetscSNPrintf(pre, sizeof(pre), "%snn_hessian_", prefix ? prefix : ""));
  PetscCall(EPSSetOptionsPrefix(eps, pre));
  PetscCall(EPSSetOperators(eps, H, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_HEP));
  PetscCall(EPSSetWhichEigenpairs(eps, negative ? EPS_SMALLEST_REAL : EPS_LARGEST_REAL));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(eps, 1e-8, PETSC_DEFAULT));
  PetscCall(EPSSetFromOptions(eps));
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nc));
  nc = PetscMin(nc, nev);
  for (PetscInt i = 0; i < nc; i++) {
    PetscScalar kr;
    PetscCall(EPSGetEigenvalue(eps, i, &kr, NULL));
    eig[i] = PetscRealPart(kr);
  }
  if (nconv) *nconv = nc;
  if (x && nc) PetscCall(EPSGetEigenvector(eps, 0, x, NULL));
  PetscCall(EPSDestroy(&eps));
#else
  (void)H;
  (void)nev;
  (void)negative;
  (void)nconv;
  (void)eig;
  (void)x;
#endif
  PetscFunctionReturn(0);
}

/*@
   NNComputeHessianEigenvalues - extreme eigenvalues of a loss Hessian with SLEPc

   Collective

   Input Parameters:
+  H - a Hessian from `NNCreateHessian()` or `NNCreateHessianData()` (any symmetric Mat works)
.  nev - number of eigenvalues wanted
-  negative - PETSC_FALSE: the largest (algebraic) eigenvalues, the sharpness; PETSC_TRUE: the
   smallest (most negative) ones

   Output Parameters:
+  nconv - number of eigenvalues returned (at most nev; fewer when the solver did not converge)
-  eig - the eigenvalues (room for nev), largest first, or most negative first

   Options Database Keys:
   The EPS has the options prefix "<H's prefix>nn_hessian_" and reads its options: -nn_hessian_eps_tol,
   -nn_hessian_eps_ncv, -nn_hessian_eps_max_it, -nn_hessian_eps_type, -nn_hessian_eps_view, ...

   Notes:
   A Hermitian problem (EPS_HEP) with the default Krylov-Schur solver, tolerance 1e-8 unless set.
   Each iteration costs one product (two gradients). The most negative eigenvalues of a trained
   network's Hessian are usually small next to the largest ones and converge more slowly.

   Level: intermediate

.seealso: `NNCreateHessian()`, `NNCreateHessianData()`, `NNHessianGetNumProducts()`
@*/
PetscErrorCode NNComputeHessianEigenvalues(Mat H, PetscInt nev, PetscBool negative, PetscInt *nconv, PetscReal eig[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(H, MAT_CLASSID, 1);
  PetscCall(NNSlepcInitialize());
  PetscCall(NNHessianEigenSolve(H, nev, negative, nconv, eig, NULL));
  PetscFunctionReturn(0);
}

/* the top eigenpair's Rayleigh quotient recomputed with the step h/10: on a smooth loss it agrees to
   about 1e-8; a kink (ReLU, leaky ReLU, max pooling) that some perturbation crosses makes a product a
   difference quotient that grows like 1/eps, and the two disagree (relu and leaky_relu are frozen) */
static PetscErrorCode NNHessianStepCheck(Mat H, Vec x, PetscReal lambda, PetscReal *change)
{
  Vec       y;
  PetscReal h, xx;
  PetscScalar xy;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(x, &y));
  PetscCall(NNHessianGetStep_Private(H, &h));
  PetscCall(NNHessianSetStep_Private(H, h / 10));
  PetscCall(MatMult(H, x, y));
  PetscCall(NNHessianSetStep_Private(H, h));
  PetscCall(VecDot(y, x, &xy));
  PetscCall(VecNorm(x, NORM_2, &xx));
  *change = PetscAbsReal(PetscRealPart(xy) / (xx * xx) - lambda) / PetscMax(PetscAbsReal(lambda), PETSC_SMALL);
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNHessianPrintEigenvalues(PetscViewer viewer, const char what[], PetscInt nev, PetscInt nc, const PetscReal eig[])
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %s:", what));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  for (PetscInt i = 0; i < nc; i++) PetscCall(PetscViewerASCIIPrintf(viewer, " %.6e", (double)eig[i]));
  if (nc < nev) PetscCall(PetscViewerASCIIPrintf(viewer, " (%" PetscInt_FMT " of %" PetscInt_FMT " converged)", nc, nev));
  PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* -nn_hessian_view: the top (and with -nn_hessian_negative the most negative) eigenvalues of the
   loss over the first -nn_hessian_samples training samples, the products and the time */
PetscErrorCode NNHessianViewFromOptions(NN net, NNData data)
{
  PetscBool      view = PETSC_FALSE, negative = PETSC_FALSE;
  PetscInt       nev = 5, N = -1, nc = 0, ncn = 0, nmult, P;
  PetscReal     *eig, h, change = 0;
  Vec            xtop;
  PetscLogDouble t0, t1;
  Mat            H;
  NNParallel     p;
  PetscViewer    viewer;
  const char    *prefix;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)net, &prefix));
  PetscOptionsBegin(PetscObjectComm((PetscObject)net), prefix, "Loss-Hessian eigenvalues after training", "NN");
  PetscCall(PetscOptionsBool("-nn_hessian_view", "Print the top eigenvalues of the loss Hessian (SLEPc)", "NNComputeHessianEigenvalues", view, &view, NULL));
  PetscCall(PetscOptionsInt("-nn_hessian_nev", "Number of eigenvalues", "NNComputeHessianEigenvalues", nev, &nev, NULL));
  PetscCall(PetscOptionsInt("-nn_hessian_samples", "Training samples in the loss (-1: all)", "NNCreateHessianData", N, &N, NULL));
  PetscCall(PetscOptionsBool("-nn_hessian_negative", "Also the most negative eigenvalues", "NNComputeHessianEigenvalues", negative, &negative, NULL));
  PetscOptionsEnd();
  if (!view) PetscFunctionReturn(0);
  PetscCheck(data, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_NULL, "-nn_hessian_view needs the training data");
  PetscCheck(nev > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_hessian_nev %" PetscInt_FMT ": valid values are 1 to the number of parameters", nev);
  PetscCall(NNSlepcInitialize());
  PetscCall(NNParallelGet(net, &p));
  PetscCall(PetscTime(&t0));
  PetscCall(NNCreateHessianData(net, data, N, &H));
  if (prefix) PetscCall(MatSetOptionsPrefix(H, prefix));
  PetscCall(PetscMalloc1(2 * nev, &eig));
  PetscCall(MatCreateVecs(H, &xtop, NULL));
  PetscCall(NNHessianEigenSolve(H, nev, PETSC_FALSE, &nc, eig, xtop));
  if (nc) PetscCall(NNHessianStepCheck(H, xtop, eig[0], &change));
  PetscCall(VecDestroy(&xtop));
  if (negative) PetscCall(NNHessianEigenSolve(H, nev, PETSC_TRUE, &ncn, eig + nev, NULL));
  PetscCall(PetscTime(&t1));
  PetscCall(NNHessianGetNumProducts(H, &nmult));
  PetscCall(MatGetSize(H, &P, NULL));
  PetscCall(NNHessianGetStep_Private(H, &h));
  if (N < 0) PetscCall(NNDataGetNumSamples(data, &N));
  viewer = PETSC_VIEWER_STDOUT_(p->tcomm);
  PetscCall(PetscViewerASCIIPrintf(viewer, "Loss-Hessian eigenvalues (%" PetscInt_FMT " training samples, %" PetscInt_FMT " parameters, SLEPc EPS_HEP, products by central differences of gradients)\n", N, P));
  PetscCall(NNHessianPrintEigenvalues(viewer, "largest", nev, nc, eig));
  if (negative) PetscCall(NNHessianPrintEigenvalues(viewer, "most negative", nev, ncn, eig + nev));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  Hessian-vector products: %" PetscInt_FMT " (%" PetscInt_FMT " gradients), time %.3g s\n", nmult, 2 * nmult, (double)(t1 - t0)));
  if (nc) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  step check: the largest eigenvalue's Rayleigh quotient with step h/10 = %g changes by %.1e (relative)\n", (double)(h / 10), (double)change));
    if (change > 1e-4) PetscCall(PetscViewerASCIIPrintf(viewer, "  WARNING: the products depend on the difference step: perturbations cross kinks (ReLU, leaky ReLU, max pooling) of the loss, where a difference of gradients is no derivative; relu and leaky_relu are frozen at theta unless -nn_hessian_freeze_kinks 0, max pooling is not; compare -nn_hessian_fd_step values\n"));
  }
  PetscCall(PetscFree(eig));
  PetscCall(MatDestroy(&H));
  PetscFunctionReturn(0);
}
