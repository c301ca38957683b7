static char help[] = "A CNN with a spatially split trunk (DMDA convolutions and pooling over the ranks) and a dense head\n"
                     "partitioned by rows and columns over the same ranks trains to the loss curve of a serial copy (one\n"
                     "rank): loss of each of 20 Adam steps, gradients and final weights within 1e-12; a checkpoint of the\n"
                     "distributed network loads into the serial one.\n\n"
                     "  -verbose   print the measured differences\n\n";

#include <petnn/private/nnimpl.h>

static PetscBool verbose = PETSC_FALSE;

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.3e\n", what, (double)err));
  PetscCheck(err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: error %g > %g", what, (double)err, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", what));
  PetscFunctionReturn(0);
}

/* (3,8,8) -> to_spatial -> conv 5 -> relu -> maxpool 2 -> conv 6 -> tanh -> spatial_flatten -> dense 20 (rows)
   -> tanh -> dense 7 (columns); the serial copy replicates the head */
static PetscErrorCode Build(MPI_Comm comm, const char prefix[], PetscBool part, NN *net)
{
  NNLayer l;
  NNOpt   opt;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){3, 8, 8}));
  PetscCall(NNSetBatchSize(*net, 5));
  PetscCall(NNSetSeed(*net, 17));
  PetscCall(NNSetLoss(*net, "cross_entropy"));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "cv1", &l));
  PetscCall(NNLayerConvSetFilters(l, 5));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPadding(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "r1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p1", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "cv2", &l));
  PetscCall(NNLayerConvSetFilters(l, 6));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPadding(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "t1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 20));
  if (part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_ROWS));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "t2", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 7));
  if (part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_COLUMNS));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, "adam"));
  PetscCall(NNOptSetLearningRate(opt, 0.005));
  PetscCall(NNSetFromOptions(*net)); /* the DMDA rank grid: -dist_sp_da_processors_x/y */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* max |a - b| / max |b| with a gathered from the distributed network's pieces (rank 0 compares, all learn it) */
static PetscErrorCode CompareParams(NN dist, Vec a, Vec b, PetscReal *err)
{
  const PetscScalar *pa, *pb;
  PetscScalar       *full = NULL;
  PetscInt           n;
  PetscReal          e = 0, m = 0;
  PetscMPIInt        rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(VecGetSize(b, &n));
  PetscCheck(n == dist->part.np, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Full layouts differ: %" PetscInt_FMT " vs %" PetscInt_FMT, dist->part.np, n);
  if (!rank) PetscCall(PetscMalloc1(n, &full));
  PetscCall(VecGetArrayRead(a, &pa));
  PetscCall(NNPartitionGather(dist, NN_TENSOR_PARAM, pa, full));
  PetscCall(VecRestoreArrayRead(a, &pa));
  PetscCall(VecGetArrayRead(b, &pb));
  for (PetscInt i = 0; !rank && i < n; i++) {
    e = PetscMax(e, PetscAbsScalar(full[i] - pb[i]));
    m = PetscMax(m, PetscAbsScalar(pb[i]));
  }
  PetscCall(VecRestoreArrayRead(b, &pb));
  PetscCall(PetscFree(full));
  *err = e / PetscMax(m, 1e-300);
  PetscCallMPI(MPI_Bcast(err, 1, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN           dist, ser, ser2;
  NNOpt        od, os;
  Vec          x, t, thd, ths, gd, gs;
  PetscScalar *a;
  PetscInt     n;
  PetscReal    Ld, Ls, err, worst = 0;
  PetscRandom  r;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(Build(PETSC_COMM_WORLD, "dist_", PETSC_TRUE, &dist));
  PetscCall(Build(PETSC_COMM_SELF, "ser_", PETSC_FALSE, &ser));
  if (verbose) PetscCall(NNView(dist, PETSC_VIEWER_STDOUT_WORLD));

  /* the same batch on every rank: inputs in [-1,1), labels 0..6 */
  PetscCall(NNCreateBatchVecs(ser, &x, &t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(VecSetRandom(x, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(VecGetLocalSize(t, &n));
  PetscCall(VecGetArray(t, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = (PetscScalar)((3 * i + 1) % 7);
  PetscCall(VecRestoreArray(t, &a));

  PetscCall(NNGetParameters(dist, &thd));
  PetscCall(NNGetParameters(ser, &ths));
  PetscCall(CompareParams(dist, thd, ths, &err));
  PetscCall(Report("initial weights equal the serial copy's", err, 0.0));
  PetscCall(NNGetOpt(dist, &od));
  PetscCall(NNGetOpt(ser, &os));
  for (PetscInt step = 0; step < 20; step++) {
    PetscCall(NNLossGradient(dist, 5, x, t, &Ld, NULL));
    PetscCall(NNLossGradient(ser, 5, x, t, &Ls, NULL));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  step %2" PetscInt_FMT ": loss %.15f vs serial %.15f\n", step, (double)Ld, (double)Ls));
    worst = PetscMax(worst, PetscAbsReal(Ld - Ls) / PetscAbsReal(Ls));
    PetscCall(NNGetGradient(dist, &gd));
    PetscCall(NNGetGradient(ser, &gs));
    if (!step) {
      PetscCall(CompareParams(dist, gd, gs, &err));
      PetscCall(Report("gradient equals the serial copy's", err, 1e-12));
    }
    PetscCall(NNOptStep(od, thd, gd));
    PetscCall(NNOptStep(os, ths, gs));
  }
  PetscCall(Report("loss of each of 20 Adam steps equals the serial copy's", worst, 1e-12));
  PetscCall(CompareParams(dist, thd, ths, &err));
  PetscCall(Report("weights after 20 steps equal the serial copy's", err, 1e-12));

  /* the distributed network's checkpoint (gathered to PyTorch shapes) loads into a serial network */
  PetscCall(NNCheckpointSave(dist, "model_parallel_cnn.h5"));
  PetscCall(Build(PETSC_COMM_SELF, "ser_", PETSC_FALSE, &ser2));
  PetscCall(NNCheckpointLoad(ser2, "model_parallel_cnn.h5"));
  {
    Vec th2;
    PetscCall(NNGetParameters(ser2, &th2));
    PetscCall(CompareParams(dist, thd, th2, &err));
    PetscCall(Report("checkpoint loads into a serial network", err, 0.0));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&dist));
  PetscCall(NNDestroy(&ser));
  PetscCall(NNDestroy(&ser2));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      output_file: output/model_parallel_cnn.out

   test:
      suffix: 2
      nsize: 2
      args: -dist_sp_da_processors_x 2 -dist_sp_da_processors_y 1
      output_file: output/model_parallel_cnn.out

   test:
      suffix: 3
      nsize: 3
      args: -dist_sp_da_processors_x 1 -dist_sp_da_processors_y 3
      output_file: output/model_parallel_cnn.out

   test:
      suffix: 4
      nsize: 4
      args: -dist_sp_da_processors_x 2 -dist_sp_da_processors_y 2
      output_file: output/model_parallel_cnn.out

TEST*/
