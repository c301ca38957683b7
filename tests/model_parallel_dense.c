static char help[] = "Model-parallel dense layers (-<layer>_partition rows|columns): dot-product adjoint tests of the\n"
                     "all-gather and sum primitives and of the partitioned layers (input and weight maps), a network of\n"
                     "row- and column-partitioned layers against its replicated copy (initial weights, loss, gradients,\n"
                     "20 Adam steps), checkpoints moving between the two, and the errors for partitions that cannot work.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestpartition.h"
#include <petsctao.h>

static PetscBool verbose = PETSC_FALSE;

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.3e\n", what, (double)err));
  PetscCheck(err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: error %g > %g", what, (double)err, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", what));
  PetscFunctionReturn(0);
}

/* values in [-1, 1) from a generator seeded alike (replicated arrays) or by rank (pieces) */
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

/* <G x, y> = <x, G^T y> for G the all-gather of column pieces (x split, y replicated) and for the replication
   R (x replicated, R^T the sum over the ranks of their pieces) */
static PetscErrorCode TestPrimitives(void)
{
  MPI_Comm      comm = PETSC_COMM_WORLD;
  PetscMPIInt   rank;
  NNPartColumns pc;
  PetscInt      rows = 3, ncol = 7, c;
  PetscScalar  *x, *y, *gx, *ty, lhs, rhs, *z, *s;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscMemzero(&pc, sizeof(pc)));
  PetscCall(NNPartColumnsSetUp(comm, ncol, rows, &pc));
  c = pc.cnt[rank];
  PetscCall(PetscMalloc4(rows * c, &x, rows * ncol, &y, rows * ncol, &gx, rows * c, &ty));
  PetscCall(Fill(rank, rows * c, x)); /* pieces differ from rank to rank */
  PetscCall(Fill(99, rows * ncol, y));
  PetscCall(NNPartColumnsAllgather(&pc, rows, x, c, gx, ncol));
  PetscCall(NNPartColumnsTake(&pc, rows, y, ncol, ty, c));
  lhs = Dot(rows * ncol, gx, y); /* replicated: the same on every rank */
  rhs = Dot(rows * c, x, ty);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &rhs, 1, MPIU_SCALAR, MPIU_SUM, comm));
  PetscCall(Report("all-gather of column pieces: <G x, y> = <x, G^T y>", RelDiff(lhs, rhs), 1e-13));
  PetscCall(PetscFree4(x, y, gx, ty));
  PetscCall(NNPartColumnsReset(&pc));

  PetscCall(PetscMalloc2(ncol, &z, ncol, &s));
  PetscCall(Fill(7, ncol, z));    /* replicated */
  PetscCall(Fill(rank, ncol, s)); /* a piece per rank */
  lhs = Dot(ncol, z, s);          /* <R z, s> = sum over the ranks */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &lhs, 1, MPIU_SCALAR, MPIU_SUM, comm));
  PetscCall(NNPartSum(comm, ncol, s));
  rhs = Dot(ncol, z, s);
  PetscCall(Report("replication and sum: <R z, s> = <z, R^T s>", RelDiff(lhs, rhs), 1e-13));
  PetscCall(PetscFree2(z, s));
  PetscFunctionReturn(0);
}

/* in -> fc1 (17, rows) -> tanh -> fc2 (11, columns) -> tanh -> fc3 (5, rows), or all replicated */
static PetscErrorCode BuildMLP(PetscBool part, PetscBool bias, NN *net)
{
  NNLayer l;
  NNOpt   opt;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){13}));
  PetscCall(NNSetBatchSize(*net, 6));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, "mse"));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 17));
  PetscCall(NNLayerDenseSetBias(l, bias));
  if (part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_ROWS));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "a1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 11));
  PetscCall(NNLayerDenseSetBias(l, bias));
  if (part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_COLUMNS));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "a2", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc3", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNLayerDenseSetBias(l, bias));
  if (part) PetscCall(NNLayerSetPartition(l, NN_PARTITION_ROWS));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, "adam"));
  PetscCall(NNOptSetLearningRate(opt, 0.01));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the partitioned dense layer fcK of a bias-free network as a linear map of its input and of its weight */
static PetscErrorCode TestLayerAdjoint(const char name[])
{
  NN                 net;
  NNLayer            l;
  Vec                x, y, v, dx;
  PetscScalar       *th, *dth, *xa, *va, lhs, rhs;
  const PetscScalar *ya, *dxa;
  PetscInt           np, nx, ny, n = 4;
  char               what[128];

  PetscFunctionBegin;
  PetscCall(BuildMLP(PETSC_TRUE, PETSC_FALSE, &net));
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
  PetscCall(Fill(11, nx, xa)); /* replicated input and output direction */
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(VecGetArray(v, &va));
  PetscCall(Fill(12, ny, va));
  PetscCall(VecRestoreArray(v, &va));
  PetscCall(PetscArrayzero(dth, np));
  PetscCall(NNLayerForward(l, n, x, y));
  PetscCall(NNLayerBackward(l, n, x, y, v, dx));
  /* input map: <F x, v> = <x, F^T v>, both sides replicated */
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(dx, &dxa));
  PetscCall(VecGetArray(x, &xa));
  PetscCall(VecGetArray(v, &va));
  lhs = Dot(n * ny / 6, ya, va);
  rhs = Dot(n * nx / 6, xa, dxa);
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s (%s) input map: <F x, v> = <x, F^T v>", name, NNLayerPartitions[l->part.type]));
  PetscCall(Report(what, RelDiff(lhs, rhs), 1e-13));
  /* weight map W -> y = x W^T (linear without bias): <y, v> = <W, dW> summed over the pieces */
  rhs = Dot(np, th, dth);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &rhs, 1, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
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

/* the partitioned network equals its replicated copy: initial weights bitwise, loss and gradients to
   round-off, and 20 Adam steps; then checkpoints move between the two */
static PetscErrorCode TestNetworkEquality(void)
{
  NN        P, R, P2, R2;
  NNOpt     op, orr;
  Vec       x, t, tp, tr, gp, gr;
  PetscReal Lp, Lr, err, worst = 0;

  PetscFunctionBegin;
  PetscCall(BuildMLP(PETSC_TRUE, PETSC_TRUE, &P));
  PetscCall(BuildMLP(PETSC_FALSE, PETSC_TRUE, &R));
  if (verbose) PetscCall(NNView(P, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(FillBatch(R, &x, &t));
  PetscCall(NNGetParameters(P, &tp));
  PetscCall(NNGetParameters(R, &tr));
  PetscCall(NNTestCompareGathered(P, tp, tr, &err));
  PetscCall(Report("initial weights equal the replicated network's", err, 0.0));
  PetscCall(NNGradientCheck(P, 6, x, t, 1e-6, NULL, NULL)); /* finite differences of the partitioned network */
  PetscCall(NNGetOpt(P, &op));
  PetscCall(NNGetOpt(R, &orr));
  for (PetscInt step = 0; step < 20; step++) {
    PetscCall(NNLossGradient(P, 6, x, t, &Lp, NULL));
    PetscCall(NNLossGradient(R, 6, x, t, &Lr, NULL));
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
  PetscCall(Report("loss of 20 Adam steps equals the replicated network's", worst, 1e-12));
  PetscCall(NNTestCompareGathered(P, tp, tr, &err));
  PetscCall(Report("weights after 20 Adam steps equal the replicated network's", err, 1e-12));

  /* checkpoints: partitioned -> replicated and replicated -> partitioned, optimizer state included */
  PetscCall(NNCheckpointSave(P, "model_parallel_p.h5"));
  PetscCall(NNCheckpointSave(R, "model_parallel_r.h5"));
  PetscCall(BuildMLP(PETSC_FALSE, PETSC_TRUE, &R2));
  PetscCall(BuildMLP(PETSC_TRUE, PETSC_TRUE, &P2));
  PetscCall(NNCheckpointLoad(R2, "model_parallel_p.h5"));
  PetscCall(NNCheckpointLoad(P2, "model_parallel_r.h5"));
  {
    Vec   a, b;
    NNOpt o2;
    PetscCall(NNGetParameters(R2, &b));
    PetscCall(NNTestCompareGathered(P, tp, b, &err));
    PetscCall(Report("partitioned checkpoint loads into the replicated network", err, 0.0));
    PetscCall(NNGetParameters(P2, &a));
    PetscCall(NNTestCompareGathered(P2, a, tr, &err));
    PetscCall(Report("replicated checkpoint loads into the partitioned network", err, 0.0));
    PetscCall(NNGetOpt(P2, &o2));
    PetscCall(NNOptGetState(o2, 0, NULL, &a));
    PetscCall(NNOptGetState(orr, 0, NULL, &b));
    PetscCall(NNTestCompareGathered(P2, a, b, &err));
    PetscCall(Report("optimizer state moves with the checkpoint", err, 0.0));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&P));
  PetscCall(NNDestroy(&R));
  PetscCall(NNDestroy(&P2));
  PetscCall(NNDestroy(&R2));
  PetscFunctionReturn(0);
}

/* a PETSc binary data set of N samples: dense Mat N x 13 of inputs, then the N*5 targets */
static PetscErrorCode WriteData(PetscInt N, const char file[])
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) {
    Mat          X;
    Vec          T;
    PetscViewer  v;
    PetscScalar *a;
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, N, 13, NULL, &X));
    PetscCall(MatDenseGetArray(X, &a));
    PetscCall(Fill(31, N * 13, a));
    PetscCall(MatDenseRestoreArray(X, &a));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, N * 5, &T));
    PetscCall(VecGetArray(T, &a));
    PetscCall(Fill(32, N * 5, a));
    PetscCall(VecRestoreArray(T, &a));
    PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
    PetscCall(MatView(X, v));
    PetscCall(VecView(T, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatDestroy(&X));
    PetscCall(VecDestroy(&T));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

static PetscErrorCode LoadData(const char file[], NNData *data)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, data));
  PetscCall(NNDataSetType(*data, NNDATABINARY));
  PetscCall(NNDataSetFileName(*data, file));
  PetscCall(NNDataSetUp(*data));
  PetscFunctionReturn(0);
}

/* TAO (lmvm, 8 iterations) on the partitioned network sees its parameters as one distributed Vec and follows
   the replicated network's path */
static PetscErrorCode TestTao(void)
{
  NN        P, R;
  NNData    data;
  Tao       tao[2];
  Vec       tp, tr;
  PetscReal err;

  PetscFunctionBegin;
  PetscCall(WriteData(10, "model_parallel_tao.dat"));
  PetscCall(LoadData("model_parallel_tao.dat", &data));
  PetscCall(BuildMLP(PETSC_TRUE, PETSC_TRUE, &P));
  PetscCall(BuildMLP(PETSC_FALSE, PETSC_TRUE, &R));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(NNCreateTao(k ? R : P, &tao[k]));
    PetscCall(TaoSetType(tao[k], TAOLMVM));
    PetscCall(TaoSetMaximumIterations(tao[k], 8));
    PetscCall(NNTrainTao(k ? R : P, data, tao[k]));
  }
  PetscCall(NNGetParameters(P, &tp));
  PetscCall(NNGetParameters(R, &tr));
  PetscCall(NNTestCompareGathered(P, tp, tr, &err));
  PetscCall(Report("TAO lmvm on the distributed parameter Vec follows the replicated network", err, 1e-10));
  for (PetscInt k = 0; k < 2; k++) PetscCall(TaoDestroy(&tao[k]));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&P));
  PetscCall(NNDestroy(&R));
  PetscFunctionReturn(0);
}

/* NNTrain (3 shuffled epochs of 23 samples in batches of 6, data groups from -nn_data_groups) of the partitioned
   network, with fc3 sharded instead, against the replicated one */
static PetscErrorCode TestTrain(void)
{
  NN        P, R;
  NNData    data;
  Vec       tp, tr;
  PetscReal err;
  NNLayer   fc3;

  PetscFunctionBegin;
  PetscCall(WriteData(23, "model_parallel_train.dat"));
  PetscCall(LoadData("model_parallel_train.dat", &data));
  PetscCall(BuildMLP(PETSC_TRUE, PETSC_TRUE, &P));
  PetscCall(BuildMLP(PETSC_FALSE, PETSC_TRUE, &R));
  PetscCall(NNGetLayer(P, "fc3", &fc3));
  PetscCall(NNLayerSetPartition(fc3, NN_PARTITION_SHARD));
  for (PetscInt k = 0; k < 2; k++) {
    NN net = k ? R : P;
    PetscCall(NNSetFromOptions(net)); /* -nn_data_groups */
    PetscCall(NNSetEpochs(net, 3));
    PetscCall(NNTrain(net, data, NULL));
  }
  PetscCall(NNGetParameters(P, &tp));
  PetscCall(NNGetParameters(R, &tr));
  PetscCall(NNTestCompareGathered(P, tp, tr, &err));
  PetscCall(Report("NNTrain of the partitioned and sharded network follows the replicated network", err, 1e-12));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&P));
  PetscCall(NNDestroy(&R));
  PetscFunctionReturn(0);
}

/* a partition a layer cannot take */
static PetscErrorCode ExpectError(const char what[], PetscInt units, const char type[], NNLayerPartition part, PetscBool specnorm)
{
  NN             net;
  NNLayer        l;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){4}));
  PetscCall(NNAddLayer(net, type, "bad", &l));
  PetscCall(NNLayerDenseSetUnits(l, units));
  PetscCall(NNLayerSetPartition(l, part));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = specnorm ? NNLayerSetSpectralNorm(l, 1.0, 1) : 0; /* spectral normalization needs the whole weight */
  if (!ierr) ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no error", what);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error raised\n", what));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* the process grid changes after NNSetUp(): a clear error, then NNSetSeed() and a checkpoint bring the trained values back */
static PetscErrorCode TestLayoutChange(void)
{
  NN             net;
  NNLayer        l;
  PetscMPIInt    size;
  PetscErrorCode ierr;
  Vec            x, before, after;
  PetscReal      diff, ref;
  const char    *what = "process grid changed after NNSetUp()";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1) { /* nothing splits on one rank */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error raised\n%s: checkpoint loaded into the new layout\n", what, what));
    PetscFunctionReturn(0);
  }
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){4}));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "split", &l));
  PetscCall(NNLayerDenseSetUnits(l, 2 * size));
  PetscCall(NNLayerSetPartition(l, NN_PARTITION_ROWS));
  PetscCall(NNSetUp(net)); /* split over the spatial group: all ranks */
  PetscCall(NNCheckpointSave(net, "model_parallel_layout.h5"));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3 * 4, &x)); /* 3 samples: the outputs tell the parameters */
  for (PetscInt i = 0; i < 12; i++) PetscCall(VecSetValue(x, i, 0.1 * i - 0.5, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3 * 2 * size, &before));
  PetscCall(VecDuplicate(before, &after));
  PetscCall(NNPredict(net, x, before));
  PetscCall(NNSetProcessGrid(net, 1, size)); /* data groups of one rank: the layer is whole on each */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr == PETSC_ERR_ARG_WRONGSTATE, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: error %d, expected PETSC_ERR_ARG_WRONGSTATE", what, (int)ierr);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error raised\n", what));
  PetscCall(NNSetSeed(net, 7));
  PetscCall(NNCheckpointLoad(net, "model_parallel_layout.h5"));
  PetscCall(NNPredict(net, x, after));
  PetscCall(VecNorm(before, NORM_INFINITY, &ref));
  PetscCall(VecAXPY(after, -1.0, before));
  PetscCall(VecNorm(after, NORM_INFINITY, &diff));
  PetscCheck(diff <= 1e-14 * ref && ref > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the loaded parameters differ by %g", what, (double)diff);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: checkpoint loaded into the new layout\n", what));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&before));
  PetscCall(VecDestroy(&after));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrors(void)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(ExpectError("tanh -bad_partition rows", 3, NNLAYERTANH, NN_PARTITION_ROWS, PETSC_FALSE));
  PetscCall(ExpectError("dense -bad_partition filters", 3, NNLAYERDENSE, NN_PARTITION_FILTERS, PETSC_FALSE));
  PetscCall(ExpectError("spectral normalization of a sharded dense layer", 3, NNLAYERDENSE, NN_PARTITION_SHARD, PETSC_TRUE));
  if (size > 1) PetscCall(ExpectError("dense with fewer units than ranks -bad_partition rows", size - 1, NNLAYERDENSE, NN_PARTITION_ROWS, PETSC_FALSE));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dense with fewer units than ranks -bad_partition rows: error raised\n"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(TestPrimitives());
  PetscCall(TestLayerAdjoint("fc1"));
  PetscCall(TestLayerAdjoint("fc2"));
  PetscCall(TestNetworkEquality());
  PetscCall(TestTao());
  PetscCall(TestTrain());
  PetscCall(TestErrors());
  PetscCall(TestLayoutChange());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      output_file: output/model_parallel_dense.out

   test:
      suffix: 2
      nsize: 2
      output_file: output/model_parallel_dense.out

   test:
      suffix: 3
      nsize: 3
      output_file: output/model_parallel_dense.out

   test:
      suffix: 4
      nsize: 4
      output_file: output/model_parallel_dense.out

   # data groups: each group of 2 ranks splits the partitioned layers, the groups sum their pieces' gradients
   test:
      suffix: dp
      nsize: 4
      args: -nn_data_groups 2 -nn_allreduce {{mpi shared}}
      output_file: output/model_parallel_dense.out

TEST*/
