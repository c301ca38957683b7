static char help[] = "Model-parallel convolutions (-<layer>_partition filters|channels over -nn_model_ranks): dot-product\n"
                     "adjoint tests of the partitioned layers (input and weight maps, uneven splits), a small CNN against\n"
                     "its replicated copy (initial weights, gradients, 20 Adam steps, checkpoints both ways, finite\n"
                     "differences) on model ranks composed with the spatial split, training with data groups x model\n"
                     "ranks against the replicated network, and the errors for partitions that cannot work.\n\n"
                     "  -model_ranks M  model ranks of the CNN (default: the ranks, 2 on 4 ranks: 2 spatial x 2 model)\n"
                     "  -verbose        print the measured errors and the networks\n"
                     "  -c1_winograd m, -c2_winograd m   the convolutions' algorithm (0: im2col), as any layer option\n"
                     "  -steps_tol t    tolerance after 20 Adam steps (default 1e-12; Winograd's transforms of the\n"
                     "                  split channel sums round differently: up to about 2e-12 measured)\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestpartition.h"

#define NB 4 /* batch */

static PetscBool verbose = PETSC_FALSE;
static PetscReal steptol = 1e-12; /* -steps_tol: after 20 Adam steps */

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.3e\n", what, (double)err));
  PetscCheck(err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: error %g > %g", what, (double)err, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", what));
  PetscFunctionReturn(0);
}

/* values in [-1, 1) from a generator seeded alike on every rank (replicated arrays) */
static PetscErrorCode Fill(PetscInt seed, PetscInt n, PetscScalar a[])
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)(1000 + seed)));
  PetscCall(PetscRandomSeed(r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscScalar Dot(PetscInt n, const PetscScalar a[], const PetscScalar b[])
{
  PetscScalar s = 0;
  for (PetscInt i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static PetscReal RelDiff(PetscScalar a, PetscScalar b)
{
  return PetscAbsScalar(a - b) / PetscMax(PetscAbsScalar(b), 1e-300);
}

typedef struct {
  PetscInt  M, D;       /* model ranks, data groups (1: none) */
  PetscBool part, bias; /* c1 by filters and c2 by channels, or all replicated */
  PetscBool classify;   /* cross-entropy on 3 classes (training from a data set), else mse */
  PetscInt  nd;         /* conv2d (2) or conv3d (3) */
} Config;

/* sp (to_spatial, 3 x 6 x 5, or 3 x 4 x 5 x 3) -> c1 (conv 5 filters) -> a1 (relu) -> c2 (conv 4 filters) -> a2 (relu) -> sf -> fc (dense 3);
   partitioned: c1 by filters, c2 by channels, fc by columns */
static PetscErrorCode BuildCNN(const Config *c, NN *net)
{
  NNLayer l;
  NNOpt   opt;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  if (c->D > 1) PetscCall(NNSetProcessGrid(*net, 1, c->D));
  PetscCall(NNSetModelRanks(*net, c->M));
  if (c->nd == 3) PetscCall(NNSetInputShape(*net, 4, (PetscInt[]){3, 4, 5, 3}));
  else PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){3, 6, 5}));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, c->classify ? NNLOSSCROSSENTROPY : NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, c->nd == 3 ? NNLAYERCONV3D : NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 5));
  PetscCall(NNLayerConvSetBias(l, c->bias));
  if (c->part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_FILTERS));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "a1", NULL));
  PetscCall(NNAddLayer(*net, c->nd == 3 ? NNLAYERCONV3D : NNLAYERCONV2D, "c2", &l));
  PetscCall(NNLayerConvSetFilters(l, 4));
  PetscCall(NNLayerConvSetBias(l, c->bias));
  if (c->part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_CHANNELS));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "a2", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  if (c->part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_COLUMNS)); /* a dense layer over the model ranks too */
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, "adam"));
  PetscCall(NNOptSetLearningRate(opt, 0.01));
  PetscCall(NNSetFromOptions(*net)); /* -c1_winograd, ... */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the partitioned convolution of a bias-free CNN on model ranks only (one spatial rank) as a linear map of its
   input and of its weight: <F x, v> = <x, F^T v>, and <F W, v> = <W, F^T v> summed over the pieces */
static PetscErrorCode TestLayerAdjoint(const char name[])
{
  NN                 net;
  NNLayer            l;
  Config             c = {0, 1, PETSC_TRUE, PETSC_FALSE, PETSC_FALSE, 2};
  PetscMPIInt        size;
  Vec                x, y, v, dx;
  PetscScalar       *th, *dth, *xa, *va, lhs, rhs;
  const PetscScalar *ya, *dxa;
  PetscInt           np, nx, ny;
  char               what[128];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  c.M = size;
  PetscCall(BuildCNN(&c, &net));
  PetscCall(NNGetLayer(net, name, &l));
  PetscCall(NNBeginLayerCalls(net));
  PetscCall(NNGetLayerParameters(net, name, &np, &th));
  PetscCall(NNGetLayerGradient(net, name, NULL, &dth));
  PetscCall(NNGetActivations(net, name, &x, &y));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(VecDuplicate(y, &v));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCall(VecGetArray(x, &xa));
  PetscCall(Fill(11, nx, xa)); /* replicated input and output direction: every model rank holds the whole sample */
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(VecGetArray(v, &va));
  PetscCall(Fill(12, ny, va));
  PetscCall(VecRestoreArray(v, &va));
  PetscCall(PetscArrayzero(dth, np));
  PetscCall(NNLayerForward(l, NB, x, y));
  PetscCall(NNLayerBackward(l, NB, x, y, v, dx));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(dx, &dxa));
  PetscCall(VecGetArray(x, &xa));
  PetscCall(VecGetArray(v, &va));
  lhs = Dot(ny, ya, va);
  rhs = Dot(nx, xa, dxa);
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s (%s) input map: <F x, v> = <x, F^T v>", name, NNLayerPartitions[l->part.type]));
  PetscCall(Report(what, RelDiff(lhs, rhs), 1e-13));
  rhs = Dot(np, th, dth);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &rhs, 1, MPIU_SCALAR, MPIU_SUM, NNGetPartitionComm(net)));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s (%s) weight map: <F W, v> = <W, F^T v>", name, NNLayerPartitions[l->part.type]));
  PetscCall(Report(what, RelDiff(lhs, rhs), 1e-13));
  PetscCall(VecRestoreArray(v, &va));
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(VecRestoreArrayRead(dx, &dxa));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(NNRestoreLayerGradient(net, name, &dth));
  PetscCall(NNRestoreLayerParameters(net, name, &th));
  PetscCall(NNEndLayerCalls(net));
  PetscCall(VecDestroy(&dx));
  PetscCall(VecDestroy(&v));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(VecGetLocalSize(*x, &n));
  PetscCall(VecGetArray(*x, &a));
  PetscCall(Fill(21, n, a));
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetLocalSize(*t, &n));
  PetscCall(VecGetArray(*t, &a));
  PetscCall(Fill(22, n, a));
  PetscCall(VecRestoreArray(*t, &a));
  PetscFunctionReturn(0);
}

/* checkpoints: partitioned -> replicated and replicated -> partitioned, optimizer state included */
static PetscErrorCode TestCheckpoints(NN P, NN R, const Config *cp, const Config *cr)
{
  NN        P2, R2;
  NNOpt     o2, orr;
  Vec       a, b;
  PetscReal err;

  PetscFunctionBegin;
  PetscCall(NNCheckpointSave(P, "model_parallel_conv_p.h5"));
  PetscCall(NNCheckpointSave(R, "model_parallel_conv_r.h5"));
  PetscCall(BuildCNN(cr, &R2));
  PetscCall(BuildCNN(cp, &P2));
  PetscCall(NNCheckpointLoad(R2, "model_parallel_conv_p.h5"));
  PetscCall(NNCheckpointLoad(P2, "model_parallel_conv_r.h5"));
  PetscCall(NNGetParameters(P, &a));
  PetscCall(NNGetParameters(R2, &b));
  PetscCall(NNTestCompareGathered(P, a, b, &err));
  PetscCall(Report("partitioned checkpoint loads into the replicated network", err, 0.0));
  PetscCall(NNGetParameters(P2, &a));
  PetscCall(NNGetParameters(R, &b));
  PetscCall(NNTestCompareGathered(P2, a, b, &err));
  PetscCall(Report("replicated checkpoint loads into the partitioned network", err, 0.0));
  PetscCall(NNGetOpt(P2, &o2));
  PetscCall(NNGetOpt(R, &orr));
  PetscCall(NNOptGetState(o2, 0, NULL, &a));
  PetscCall(NNOptGetState(orr, 0, NULL, &b));
  PetscCall(NNTestCompareGathered(P2, a, b, &err));
  PetscCall(Report("optimizer state moves with the checkpoint", err, 0.0));
  PetscCall(NNDestroy(&P2));
  PetscCall(NNDestroy(&R2));
  PetscFunctionReturn(0);
}

/* the partitioned CNN (model ranks x spatial ranks) equals its replicated copy (all ranks spatial): initial
   weights bitwise, loss and gradients to round-off, 20 Adam steps; then checkpoints move between the two */
static PetscErrorCode TestNetworkEquality(PetscInt M, PetscInt nd)
{
  NN        P, R;
  NNOpt     op, orr;
  Config    cp = {M, 1, PETSC_TRUE, PETSC_TRUE, PETSC_FALSE, nd}, cr = {1, 1, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE, nd};
  Vec       x, t, tp, tr, gp, gr;
  PetscReal Lp, Lr, err, worst = 0;

  PetscFunctionBegin;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "conv%" PetscInt_FMT "d network (c1 filters, c2 channels, fc columns):\n", nd));
  PetscCall(BuildCNN(&cp, &P));
  PetscCall(BuildCNN(&cr, &R));
  if (verbose) PetscCall(NNView(P, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(FillBatch(R, &x, &t));
  PetscCall(NNGetParameters(P, &tp));
  PetscCall(NNGetParameters(R, &tr));
  PetscCall(NNTestCompareGathered(P, tp, tr, &err));
  PetscCall(Report("initial weights equal the replicated network's", err, 0.0));
  PetscCall(NNGradientCheck(P, NB, x, t, 1e-6, NULL, NULL)); /* finite differences of the partitioned network */
  PetscCall(NNGetOpt(P, &op));
  PetscCall(NNGetOpt(R, &orr));
  for (PetscInt step = 0; step < 20; step++) {
    PetscCall(NNLossGradient(P, NB, x, t, &Lp, NULL));
    PetscCall(NNLossGradient(R, NB, x, t, &Lr, NULL));
    worst = PetscMax(worst, PetscAbsReal(Lp - Lr) / PetscAbsReal(Lr));
    if (!step) {
      PetscCall(NNGetGradient(P, &gp));
      PetscCall(NNGetGradient(R, &gr));
      PetscCall(NNTestCompareGathered(P, gp, gr, &err));
      PetscCall(Report("gradient equals the replicated network's", err, 1e-12));
    }
    PetscCall(NNOptStep(op, tp, gp));
    PetscCall(NNOptStep(orr, tr, gr));
  }
  PetscCall(Report("loss of 20 Adam steps equals the replicated network's", worst, steptol));
  PetscCall(NNTestCompareGathered(P, tp, tr, &err));
  PetscCall(Report("weights after 20 Adam steps equal the replicated network's", err, steptol));
  PetscCall(TestCheckpoints(P, R, &cp, &cr));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&P));
  PetscCall(NNDestroy(&R));
  PetscFunctionReturn(0);
}

/* 24 samples of 3 x 6 x 5 features, 3 classes, in PETSc binary (rank 0 writes) */
static PetscErrorCode WriteData(const char file[])
{
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscScalar row[90];

  PetscFunctionBegin;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, 24, 90, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 24, &y));
  for (PetscInt i = 0; i < 24; i++) {
    PetscCall(Fill(100 + i, 90, row));
    for (PetscInt j = 0; j < 90; j++) PetscCall(MatSetValue(X, i, j, row[j] + (j % 3 == i % 3 ? 0.5 : 0.0), INSERT_VALUES));
    PetscCall(VecSetValue(y, i, (PetscScalar)(i % 3), INSERT_VALUES));
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
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainOn(const Config *c, const char file[], NN *net)
{
  NNData data;

  PetscFunctionBegin;
  PetscCall(BuildCNN(c, net));
  PetscCall(NNSetEpochs(*net, 2));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, file));
  PetscCall(PetscOptionsSetValue(NULL, "-mpc_data_shape", "3,6,5"));
  PetscCall(NNDataSetOptionsPrefix(data, "mpc_"));
  PetscCall(NNDataSetFromOptions(data));
  PetscCall(NNTrain(*net, data, NULL));
  PetscCall(NNDataDestroy(&data));
  PetscFunctionReturn(0);
}

/* training with data groups x model ranks (the data-parallel sum pairs the ranks of equal model rank) follows
   the replicated network without data groups */
static PetscErrorCode TestDataGroups(PetscInt D, PetscInt M)
{
  NN          P, R;
  Config      cp = {M, D, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE, 2}, cr = {1, 1, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE, 2};
  const char  file[] = "model_parallel_conv.dat";
  PetscMPIInt rank;
  PetscReal   err;
  Vec         a, b;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) PetscCall(WriteData(file));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(TrainOn(&cp, file, &P));
  PetscCall(TrainOn(&cr, file, &R));
  PetscCall(NNGetParameters(P, &a));
  PetscCall(NNGetParameters(R, &b));
  PetscCall(NNTestCompareGathered(P, a, b, &err));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %" PetscInt_FMT " data groups x %" PetscInt_FMT " model ranks\n", D, M));
  PetscCall(Report("data groups x model ranks train as the replicated network", err, 1e-10));
  PetscCall(NNDestroy(&P));
  PetscCall(NNDestroy(&R));
  PetscFunctionReturn(0);
}

/* a convolution partition that cannot work: set-up (or the grid) raises an error */
static PetscErrorCode ExpectError(const char what[], PetscInt M, PetscInt filters, PetscInt groups, NNLayerPartition part)
{
  NN             net;
  NNLayer        l;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetModelRanks(net, M);
  PetscCall(PetscPopErrorHandler());
  if (!ierr) {
    PetscCall(NNSetInputShape(net, 3, (PetscInt[]){4, 4, 4}));
    PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
    PetscCall(NNAddLayer(net, NNLAYERCONV2D, "bad", &l));
    PetscCall(NNLayerConvSetFilters(l, filters));
    PetscCall(NNLayerConvSetGroups(l, groups));
    PetscCall(NNLayerSetPartition(l, part));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = NNSetUp(net);
    PetscCall(PetscPopErrorHandler());
  }
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no error", what);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error raised\n", what));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrors(void)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(ExpectError("conv2d -bad_partition rows", size, 4, 1, NN_PARTITION_ROWS));
  PetscCall(ExpectError("conv2d -bad_groups 2 -bad_partition filters", size, 4, 2, NN_PARTITION_FILTERS));
  PetscCall(ExpectError("-nn_model_ranks not dividing the ranks", size + 1, 4, 1, NN_PARTITION_FILTERS));
  if (size > 1) {
    PetscCall(ExpectError("conv2d with fewer filters than model ranks -bad_partition filters", size, size - 1, 1, NN_PARTITION_FILTERS));
    PetscCall(ExpectError("conv2d -bad_partition channels over spatial ranks (-nn_model_ranks 1)", 1, 4, 1, NN_PARTITION_CHANNELS));
  } else {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "conv2d with fewer filters than model ranks -bad_partition filters: error raised\n"));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "conv2d -bad_partition channels over spatial ranks (-nn_model_ranks 1): error raised\n"));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt size;
  PetscInt    M;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  M = size == 4 ? 2 : size;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-steps_tol", &steptol, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-model_ranks", &M, NULL));
  PetscCall(TestLayerAdjoint("c1"));
  PetscCall(TestLayerAdjoint("c2"));
  PetscCall(TestNetworkEquality(M, 2));
  PetscCall(TestNetworkEquality(M, 3));
  if (size == 4) PetscCall(TestDataGroups(2, 2));
  else PetscCall(TestDataGroups(size == 2 ? 2 : 1, size == 2 ? 1 : size));
  PetscCall(TestErrors());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      output_file: output/model_parallel_conv.out

   test:
      suffix: 2
      nsize: 2
      output_file: output/model_parallel_conv.out

   test:
      suffix: 3
      nsize: 3
      output_file: output/model_parallel_conv.out

   test:
      suffix: 4
      nsize: 4
      output_file: output/model_parallel_conv.out

   test:
      suffix: winograd_2
      nsize: 2
      args: -c1_winograd 2 -c2_winograd 2 -steps_tol 1e-10
      output_file: output/model_parallel_conv.out

   test:
      suffix: winograd_4
      nsize: 4
      args: -c1_winograd 2 -c2_winograd 2 -steps_tol 1e-10
      output_file: output/model_parallel_conv.out

TEST*/
