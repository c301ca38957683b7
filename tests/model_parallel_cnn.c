static char help[] = "A CNN with a spatially split trunk (DMDA convolutions and pooling over the ranks) and a dense head\n"
                     "partitioned by rows and columns over the same ranks trains to the loss curve of a serial copy (one\n"
                     "rank): loss of each of 20 Adam steps, gradients and final weights within 1e-12; a checkpoint of the\n"
                     "distributed network loads into the serial one.\n\n"
                     "  -verbose   print the measured differences\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestpartition.h"

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
   -> tanh -> dense 7 (columns); part 0: all replicated (the serial copy), 1: the head partitioned, 2: also the
   convolutions and the first dense layer sharded (their parameters gathered for each pass) */
static PetscErrorCode Build(MPI_Comm comm, const char prefix[], PetscInt part, NN *net)
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
  if (part == 2) PetscCall(NNLayerSetPartition(l, NN_PARTITION_SHARD));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "r1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p1", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "cv2", &l));
  PetscCall(NNLayerConvSetFilters(l, 6));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPadding(l, 1));
  if (part == 2) PetscCall(NNLayerSetPartition(l, NN_PARTITION_SHARD));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "t1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 20));
  if (part) PetscCall(NNLayerSetPartition(l, part == 2 ? NN_PARTITION_SHARD : NN_PARTITION_ROWS));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "t2", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 7));
  if (part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_COLUMNS));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, "adam"));
  PetscCall(NNOptSetLearningRate(opt, 0.005));
  PetscCall(NNSetFromOptions(*net)); /* the DMDA rank grid: -dist_sp_da_processors_x/y, -sharded_sp_da_processors_x/y */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the distributed network (part 1 or 2) against a serial copy: 20 Adam steps, then its checkpoint */
static PetscErrorCode Compare(PetscInt part, Vec x, Vec t)
{
  NN        dist, ser, ser2;
  NNOpt     od, os;
  Vec       thd, ths, gd, gs, th2;
  PetscReal Ld, Ls, err, worst = 0;
  char      what[128];
  const char *mode = part == 1 ? "partitioned head" : "sharded layers";

  PetscFunctionBegin;
  PetscCall(Build(PETSC_COMM_WORLD, part == 1 ? "dist_" : "sharded_", part, &dist));
  PetscCall(Build(PETSC_COMM_SELF, "ser_", 0, &ser));
  if (verbose) PetscCall(NNView(dist, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNGetParameters(dist, &thd));
  PetscCall(NNGetParameters(ser, &ths));
  PetscCall(NNTestCompareGathered(dist, thd, ths, &err));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: initial weights equal the serial copy's", mode));
  PetscCall(Report(what, err, 0.0));
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
      PetscCall(NNTestCompareGathered(dist, gd, gs, &err));
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s: gradient equals the serial copy's", mode));
      PetscCall(Report(what, err, 1e-12));
    }
    PetscCall(NNOptStep(od, thd, gd));
    PetscCall(NNOptStep(os, ths, gs));
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: loss of each of 20 Adam steps equals the serial copy's", mode));
  PetscCall(Report(what, worst, 1e-12));
  PetscCall(NNTestCompareGathered(dist, thd, ths, &err));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: weights after 20 steps equal the serial copy's", mode));
  PetscCall(Report(what, err, 1e-12));

  /* the distributed network's checkpoint (gathered to PyTorch shapes) loads into a serial network */
  PetscCall(NNCheckpointSave(dist, "model_parallel_cnn.h5"));
  PetscCall(Build(PETSC_COMM_SELF, "ser_", 0, &ser2));
  PetscCall(NNCheckpointLoad(ser2, "model_parallel_cnn.h5"));
  PetscCall(NNGetParameters(ser2, &th2));
  PetscCall(NNTestCompareGathered(dist, thd, th2, &err));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: checkpoint loads into a serial network", mode));
  PetscCall(Report(what, err, 0.0));
  PetscCall(NNDestroy(&dist));
  PetscCall(NNDestroy(&ser));
  PetscCall(NNDestroy(&ser2));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN           ser;
  Vec          x, t;
  PetscScalar *a;
  PetscInt     n;
  PetscRandom  r;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  /* the same batch on every rank: inputs in [-1,1), labels 0..6 */
  PetscCall(Build(PETSC_COMM_SELF, "ser_", 0, &ser));
  PetscCall(NNCreateBatchVecs(ser, &x, &t));
  PetscCall(NNDestroy(&ser));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(VecSetRandom(x, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(VecGetLocalSize(t, &n));
  PetscCall(VecGetArray(t, &a));
  for (PetscInt i = 0; i < n; i++) a[i] = (PetscScalar)((3 * i + 1) % 7);
  PetscCall(VecRestoreArray(t, &a));
  PetscCall(Compare(1, x, t));
  PetscCall(Compare(2, x, t));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
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
      args: -dist_sp_da_processors_x 2 -dist_sp_da_processors_y 1 -sharded_sp_da_processors_x 1 -sharded_sp_da_processors_y 2
      output_file: output/model_parallel_cnn.out

   test:
      suffix: 3
      nsize: 3
      args: -dist_sp_da_processors_x 1 -dist_sp_da_processors_y 3 -sharded_sp_da_processors_x 3 -sharded_sp_da_processors_y 1
      output_file: output/model_parallel_cnn.out

   test:
      suffix: 4
      nsize: 4
      args: -dist_sp_da_processors_x 2 -dist_sp_da_processors_y 2 -sharded_sp_da_processors_x 2 -sharded_sp_da_processors_y 2
      output_file: output/model_parallel_cnn.out

   # the sharded network on 2 spatial x 2 model ranks: pieces over the model ranks
   test:
      suffix: 4_model_ranks
      nsize: 4
      args: -dist_sp_da_processors_x 2 -dist_sp_da_processors_y 2 -sharded_nn_model_ranks 2 -sharded_sp_da_processors_x 2 -sharded_sp_da_processors_y 1
      output_file: output/model_parallel_cnn.out

TEST*/
