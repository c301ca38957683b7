static char help[] = "Eigenvalues of an ODE block's Jacobian df/du from SLEPc (NNODEComputeSpectrum()) against LAPACK's\n"
                     "geev of the Jacobian formed densely (MatComputeOperator() on NNODECreateJacobian()'s shell, through\n"
                     "KSPComputeEigenvaluesExplicitly()):\n"
                     "a nonlinear dense field (dense-tanh-dense) and a convolutional field on the spatial (DMDA) layout,\n"
                     "at the block's input and at a state along the trajectory, for the ts and discrete schemes, and at the\n"
                     "input of a layer-parallel (MGRIT) block.\n\n"
                     "  -verbose  print the measured errors\n\n";

#include <petnn.h>

static PetscBool       verbose = PETSC_FALSE, spatialonly = PETSC_FALSE;
static PetscInt        nkinds  = 3; /* largest magnitude, rightmost, smallest magnitude */
static const PetscReal tol     = 1e-8;
#define NB 3

/* the same batch on every rank */
static PetscErrorCode FillBatch(NN net, Vec *x)
{
  PetscScalar *a;
  PetscInt     nx;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, NULL));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetArray(*x, &a));
  for (PetscInt i = 0; i < nx; i++) a[i] = PetscSinReal(0.3 + 1.9 * i);
  PetscCall(VecRestoreArray(*x, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode BuildDense(const char scheme[], PetscBool mgrit, NN *net)
{
  NNLayer  l, blk;
  PetscInt shape[] = {6};

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputShape(*net, 1, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, "mse"));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", &blk));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "f1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERTANH, "fa", NULL));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "f2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 6));
  PetscCall(NNLayerODESetSteps(blk, 3));
  PetscCall(NNLayerODESetTime(blk, 0.9));
  PetscCall(NNLayerODESetScheme(blk, !strcmp(scheme, "ts") ? NNODE_SCHEME_TS : NNODE_SCHEME_DISCRETE));
  if (mgrit) PetscCall(NNLayerODESetParallel(blk, NNODE_PARALLEL_MGRIT));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode BuildSpatial(const char scheme[], NN *net)
{
  NNLayer  l, blk;
  PetscInt shape[] = {1, 4, 5};

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, "mse"));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c0", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", &blk));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERCONV2D, "f1", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERTANH, "fa", NULL));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERCONV2D, "f2", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNLayerODESetSteps(blk, 3));
  PetscCall(NNLayerODESetTime(blk, 0.6));
  PetscCall(NNLayerODESetScheme(blk, !strcmp(scheme, "ts") ? NNODE_SCHEME_TS : NNODE_SCHEME_DISCRETE));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 2));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* eigenvalues of the shell formed densely (MatComputeOperator()) by LAPACK's geev, through
   KSPComputeEigenvaluesExplicitly() with no preconditioner (the test programs do not link LAPACK
   themselves); computed on rank 0 and broadcast */
static PetscErrorCode DenseEigs(Mat J, PetscInt *M, PetscReal **wr, PetscReal **wi)
{
  KSP         ksp;
  PC          pc;
  PetscMPIInt cnt;

  PetscFunctionBegin;
  PetscCall(MatGetSize(J, M, NULL));
  PetscCall(PetscMalloc2(*M, wr, *M, wi));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)J), &ksp));
  PetscCall(KSPSetOperators(ksp, J, J));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetUp(ksp));
  PetscCall(KSPComputeEigenvaluesExplicitly(ksp, *M, *wr, *wi));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(PetscMPIIntCast(*M, &cnt));
  PetscCallMPI(MPI_Bcast(*wr, cnt, MPIU_REAL, 0, PetscObjectComm((PetscObject)J)));
  PetscCallMPI(MPI_Bcast(*wi, cnt, MPIU_REAL, 0, PetscObjectComm((PetscObject)J)));
  PetscFunctionReturn(0);
}

/* SLEPc's eigenvalues of sample s at state k against the dense ones: each is one of them, and the first is the extreme one */
static PetscErrorCode Compare(const char what[], NN net, PetscInt s, PetscInt k, Vec x)
{
  Mat         J;
  PetscInt    M, nc;
  PetscReal  *wr, *wi, re[3], im[3], err = 0, ext[3] = {0, -PETSC_MAX_REAL, PETSC_MAX_REAL};
  const char *kinds[3] = {"largest magnitude", "rightmost", "smallest magnitude"};

  PetscFunctionBegin;
  PetscCall(NNODECreateJacobian(net, "blk", NB, x, s, k, &J));
  PetscCall(DenseEigs(J, &M, &wr, &wi));
  PetscCall(MatDestroy(&J));
  for (PetscInt i = 0; i < M; i++) {
    PetscReal a = PetscSqrtReal(wr[i] * wr[i] + wi[i] * wi[i]);
    ext[0]      = PetscMax(ext[0], a);
    ext[1]      = PetscMax(ext[1], wr[i]);
    ext[2]      = PetscMin(ext[2], a);
  }
  for (PetscInt w = 0; w < nkinds; w++) {
    PetscReal e = 0, got;
    PetscCall(NNODEComputeSpectrum(net, "blk", NB, x, s, k, (NNODESpectrumWhich)w, 3, &nc, re, im));
    PetscCheck(nc == 3, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s: %" PetscInt_FMT " of 3 eigenvalues converged", what, nc);
    for (PetscInt i = 0; i < nc; i++) { /* relative distance to the nearest dense eigenvalue */
      PetscReal best = PETSC_MAX_REAL;
      for (PetscInt j = 0; j < M; j++) {
        PetscReal d = PetscSqrtReal(PetscSqr(re[i] - wr[j]) + PetscSqr(im[i] - wi[j])) / PetscSqrtReal(wr[j] * wr[j] + wi[j] * wi[j]);
        best        = PetscMin(best, d);
      }
      e = PetscMax(e, best);
    }
    got = w == 1 ? re[0] : PetscSqrtReal(re[0] * re[0] + im[0] * im[0]);
    e   = PetscMax(e, PetscAbsReal(got - ext[w]) / PetscAbsReal(ext[w]));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s %s: relative error %g (state size %" PetscInt_FMT ")\n", what, kinds[w], (double)e, M));
    err = PetscMax(err, e);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, sample %" PetscInt_FMT ", state u_%" PetscInt_FMT ": SLEPc vs LAPACK geev %s (|lambda|max = %.5f)\n", what, s, k, err <= tol ? "pass" : "FAIL", (double)ext[0]));
  PetscCall(PetscFree2(wr, wi));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const char *schemes[] = {"ts", "discrete"};

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  /* 3 and 4 ranks on two cores: every EPS iteration's reductions wait for descheduled ranks, so those runs
     check the spatially decomposed field (the one whose layout changes with the rank count) at one state
     and the two ends of the spectrum that converge in few products */
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-spatial_only", &spatialonly, NULL));
  if (spatialonly) nkinds = 2;
  for (PetscInt c = 0; c < 2; c++) {
    NN   net;
    Vec  x;
    char what[64];
    PetscCall(BuildDense(schemes[c], PETSC_FALSE, &net));
    PetscCall(FillBatch(net, &x));
    PetscCall(PetscSNPrintf(what, sizeof(what), "dense-tanh-dense f, %s scheme", schemes[c]));
    if (!spatialonly) PetscCall(Compare(what, net, 1, 0, x));
    if (!spatialonly) PetscCall(Compare(what, net, 2, 2, x));
    PetscCall(VecDestroy(&x));
    PetscCall(NNDestroy(&net));
    PetscCall(BuildSpatial(schemes[c], &net));
    PetscCall(FillBatch(net, &x));
    PetscCall(PetscSNPrintf(what, sizeof(what), "conv-tanh-conv f (DMDA), %s scheme", schemes[c]));
    PetscCall(Compare(what, net, 0, 0, x));
    if (!spatialonly) PetscCall(Compare(what, net, 2, 1, x));
    PetscCall(VecDestroy(&x));
    PetscCall(NNDestroy(&net));
  }
  if (!spatialonly) { /* layer-parallel (MGRIT) block: the input state */
    NN  net;
    Vec x;
    PetscCall(BuildDense("ts", PETSC_TRUE, &net));
    PetscCall(FillBatch(net, &x));
    PetscCall(Compare("dense-tanh-dense f, ts scheme with -blk_parallel mgrit", net, 1, 0, x));
    PetscCall(VecDestroy(&x));
    PetscCall(NNDestroy(&net));
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   build:
      requires: slepc

   test:
      suffix: 1
      nsize: 1
      requires: slepc
      output_file: output/spectral_ode.out

   test:
      suffix: 2
      nsize: 2
      requires: slepc
      args: -sp_da_processors_x 2 -sp_da_processors_y 1
      output_file: output/spectral_ode.out

   test:
      suffix: spatial_1
      nsize: 1
      requires: slepc
      args: -spatial_only
      output_file: output/spectral_ode_spatial.out

   test:
      suffix: 3
      nsize: 3
      requires: slepc
      args: -spatial_only -sp_da_processors_x 1 -sp_da_processors_y 3
      output_file: output/spectral_ode_spatial.out

   test:
      suffix: 4
      nsize: 4
      requires: slepc
      args: -spatial_only -sp_da_processors_x 2 -sp_da_processors_y 2
      output_file: output/spectral_ode_spatial.out

TEST*/
