static char help[] = "Spectral normalization during training (-<layer>_spectral_norm c): after training, the exact\n"
                     "sigma_max of each normalized layer (SLEPc) is at most c (1 + tol) and the projection was active;\n"
                     "data-parallel replicas stay identical; a restart from a checkpoint continues bitwise (the power\n"
                     "iteration's vector is a checkpointed buffer); bad input gives clear errors.\n\n"
                     "  -verbose  print the measured values\n\n";

#include <petnn.h>

#define NSAMPLES  48
#define NCLASSES  3
#define C0        2
#define HW        6

static PetscBool verbose = PETSC_FALSE;

static PetscErrorCode WriteData(const char file[])
{
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;
  PetscInt    nf = C0 * HW * HW;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 11));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, nf, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    PetscInt cls = i % NCLASSES;
    for (PetscInt j = 0; j < nf; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, u + (j % NCLASSES == cls ? 2.0 : 0.0), INSERT_VALUES));
    }
    PetscCall(VecSetValue(y, i, (PetscScalar)cls, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(y));
  PetscCall(VecAssemblyEnd(y));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(X, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* sp -> c1 conv2d (bound 0.4, 3 power iterations per step, by the API) -> relu -> sf -> fc1 dense (bound from -fc1_spectral_norm) -> tanh -> fc2 */
static PetscErrorCode CreateNet(PetscInt seed, PetscInt epochs, const char ckpt[], NN *net)
{
  NNLayer   l;
  NNOpt     opt;
  PetscInt  shape[3] = {C0, HW, HW};
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerSetSpectralNorm(l, 0.4, 3));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "r1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "t1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, NCLASSES));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNSetBatchSize(*net, 8));
  PetscCall(NNSetEpochs(*net, epochs));
  PetscCall(NNSetSeed(*net, seed));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, NNOPTADAM));
  PetscCall(NNOptSetLearningRate(opt, 0.05));
  PetscCall(NNSetFromOptions(*net));
  if (ckpt) {
    PetscCall(NNGetTrainer(*net, &tr));
    PetscCall(NNTrainerSetCheckpoint(tr, ckpt));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the exact norm of a normalized layer after training: at most c (1 + tol), and at least c (1 - 0.1)
   (the weights wanted to grow, so the projection was active) */
static PetscErrorCode CheckBound(NN net, const char name[])
{
  NNLayer   l;
  PetscReal c, sigma, tol = 1e-3;
  PetscInt  its;

  PetscFunctionBegin;
  PetscCall(NNGetLayer(net, name, &l));
  PetscCall(NNLayerGetSpectralNorm(l, &c, &its));
  PetscCall(NNLayerComputeOperatorNorm(net, l, &sigma));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: c %g, %" PetscInt_FMT " its, exact sigma_max %.12g, (sigma - c)/c = %.3e\n", name, (double)c, its, (double)sigma, (double)((sigma - c) / c)));
  PetscCheck(c > 0 && sigma <= c * (1 + tol), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Layer %s: exact sigma_max %.12g exceeds the bound %g by more than %g", name, (double)sigma, (double)c, (double)tol);
  PetscCheck(sigma >= 0.9 * c, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Layer %s: sigma_max %.12g well below the bound %g: was the projection ever active?", name, (double)sigma, (double)c);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: exact sigma_max (SLEPc) <= c (1 + %g) after training, the projection active\n", name, (double)tol));
  PetscFunctionReturn(0);
}

/* every rank holds bitwise the same parameters and buffers */
static PetscErrorCode CheckReplicas(NN net)
{
  Vec                v[2];
  const PetscScalar *a;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(NNGetParameters(net, &v[0]));
  PetscCall(NNGetBuffers(net, &v[1]));
  for (PetscInt k = 0; k < 2; k++) {
    PetscReal *mx, *mn;
    PetscCall(VecGetLocalSize(v[k], &n));
    PetscCall(PetscMalloc2(n, &mx, n, &mn));
    PetscCall(VecGetArrayRead(v[k], &a));
    for (PetscInt i = 0; i < n; i++) mx[i] = mn[i] = PetscRealPart(a[i]);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mx, (PetscMPIInt)n, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mn, (PetscMPIInt)n, MPIU_REAL, MPI_MIN, PETSC_COMM_WORLD));
    for (PetscInt i = 0; i < n; i++) PetscCheck(mx[i] == mn[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s entry %" PetscInt_FMT " differs between ranks", k ? "buffer" : "parameter", i);
    PetscCall(VecRestoreArrayRead(v[k], &a));
    PetscCall(PetscFree2(mx, mn));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "parameters and buffers (with the power-iteration vectors) identical on every rank\n"));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckSame(NN a, NN b)
{
  Vec       va, vb;
  PetscBool eq[2];

  PetscFunctionBegin;
  PetscCall(NNGetParameters(a, &va));
  PetscCall(NNGetParameters(b, &vb));
  PetscCall(VecEqual(va, vb, &eq[0]));
  PetscCall(NNGetBuffers(a, &va));
  PetscCall(NNGetBuffers(b, &vb));
  PetscCall(VecEqual(va, vb, &eq[1]));
  PetscCheck(eq[0] && eq[1], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Restarted run differs from the uninterrupted one (parameters %s, buffers %s)", eq[0] ? "equal" : "differ", eq[1] ? "equal" : "differ");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "restart from a checkpoint: parameters and buffers bitwise identical to the uninterrupted run\n"));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckBadInput(void)
{
  NN             net;
  NNLayer        relu, fc;
  PetscErrorCode ierr[4];
  PetscInt       in = 4;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, &in));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "bad_fc", &fc));
  PetscCall(NNAddLayer(net, NNLAYERRELU, "bad_relu", &relu));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr[0] = NNLayerSetSpectralNorm(fc, 0, 1);
  ierr[1] = NNLayerSetSpectralNorm(fc, -1, 1);
  ierr[2] = NNLayerSetSpectralNorm(relu, 1, 1);
  ierr[3] = NNLayerSetSpectralNorm(fc, 1, 0);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr[0] == PETSC_ERR_ARG_OUTOFRANGE && ierr[1] == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "c <= 0 not rejected");
  PetscCheck(ierr[2] == PETSC_ERR_ARG_WRONG, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "spectral norm on a relu layer not rejected");
  PetscCheck(ierr[3] == PETSC_ERR_ARG_OUTOFRANGE, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "0 power iterations not rejected");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bad input rejected: c = 0, c = -1, a relu layer, 0 iterations\n"));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          a, b, c;
  NNData      data;
  PetscMPIInt rank;
  const char *datafile = "spectral_norm_train.dat", *ck = "spectral_norm_ckpt.h5";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) PetscCall(WriteData(datafile));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, datafile));

  /* 3 epochs in one go: the bounds hold and the replicas agree */
  PetscCall(CreateNet(1, 3, NULL, &a));
  PetscCall(NNTrain(a, data, NULL));
  PetscCall(CheckBound(a, "c1"));
  PetscCall(CheckBound(a, "fc1"));
  PetscCall(CheckReplicas(a));

  /* 1 epoch with a checkpoint, a network of another seed loads it and trains to 3 */
  PetscCall(CreateNet(1, 1, ck, &b));
  PetscCall(NNTrain(b, data, NULL));
  PetscCall(NNDestroy(&b));
  PetscCall(CreateNet(77, 3, NULL, &c));
  PetscCall(NNCheckpointLoad(c, ck));
  PetscCall(NNTrain(c, data, NULL));
  PetscCall(CheckSame(a, c));
  PetscCall(NNDestroy(&c));
  PetscCall(NNDestroy(&a));

  PetscCall(CheckBadInput());
  PetscCall(NNDataDestroy(&data));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      requires: slepc hdf5
      args: -fc1_spectral_norm 0.3 -fc1_spectral_norm_its 2
      output_file: output/spectral_norm.out

   test:
      suffix: 2_spatial
      nsize: 2
      requires: slepc hdf5
      args: -fc1_spectral_norm 0.3 -fc1_spectral_norm_its 2 -sp_da_processors_x 2 -sp_da_processors_y 1
      output_file: output/spectral_norm.out

   test:
      suffix: 2_data
      nsize: 2
      requires: slepc hdf5
      args: -fc1_spectral_norm 0.3 -fc1_spectral_norm_its 2 -nn_data_groups 2
      output_file: output/spectral_norm.out

   test:
      suffix: 3
      nsize: 3
      requires: slepc hdf5
      args: -fc1_spectral_norm 0.3 -fc1_spectral_norm_its 2 -sp_da_processors_x 1 -sp_da_processors_y 3
      output_file: output/spectral_norm.out

   test:
      suffix: 4
      nsize: 4
      requires: slepc hdf5
      args: -fc1_spectral_norm 0.3 -fc1_spectral_norm_its 2 -nn_data_groups 2 -sp_da_processors_x 2 -sp_da_processors_y 1
      output_file: output/spectral_norm.out

TEST*/
