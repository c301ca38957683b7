static char help[] = "The repartition NNSetUp() inserts where a layer cannot take the spatial (DMDA) activation before it\n"
                     "(-nn_auto_repartition): a spatially split CNN whose partitioned dense head follows a pooling layer\n"
                     "directly gets a spatial_flatten named fc1_repartition; its loss, gradient and 5 Adam steps equal\n"
                     "those of the same network with the spatial_flatten written (bitwise) and of a serial copy (1e-12);\n"
                     "the inserted operator passes the dot-product adjoint test (1e-13); checkpoints, parameter counts\n"
                     "and layer lists agree; set-up again inserts nothing more; NNTrain with data groups is bitwise\n"
                     "the explicit network's; -nn_auto_repartition false and a taken name give errors that say so.\n\n"
                     "  -verbose   print the measured differences\n\n";

#include <petnn/private/nnimpl.h> /* NNPartitionGather(): whole tensors from partitioned layers' pieces */

static PetscBool verbose = PETSC_FALSE;

#define NB 5

static PetscErrorCode Report(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.3e\n", what, (double)err));
  PetscCheck(err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: error %g > %g", what, (double)err, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", what));
  PetscFunctionReturn(0);
}

static PetscErrorCode Check(const char what[], PetscBool ok)
{
  PetscFunctionBegin;
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: failed", what);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: ok\n", what));
  PetscFunctionReturn(0);
}

typedef enum {
  HEAD_AUTO,     /* ... p2 -> fc1: the network inserts fc1_repartition */
  HEAD_EXPLICIT, /* ... p2 -> sf (spatial_flatten) -> fc1 */
  HEAD_FLATTEN   /* ... p2 -> flat (flatten, as in PyTorch) -> fc1: the network inserts flat_repartition */
} Head;

/* (3,12,12) -> to_spatial -> conv 5 -> relu -> maxpool 2 -> conv 6 -> tanh -> avgpool 2 -> [head] -> dense 20
   -> tanh -> dense 7; part: fc1 split by rows and fc2 by columns over the ranks */
static PetscErrorCode Build(MPI_Comm comm, const char prefix[], Head head, PetscBool part, NN *net)
{
  NNLayer l;
  NNOpt   opt;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){3, 12, 12}));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 23));
  PetscCall(NNSetLoss(*net, "cross_entropy"));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "cv1", &l));
  PetscCall(NNLayerConvSetFilters(l, 5));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPadding(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "r1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p1", &l)); /* runs before r1 (NNSetPoolBeforeActivation()) */
  PetscCall(NNLayerPoolSetKernelSize(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "cv2", &l));
  PetscCall(NNLayerConvSetFilters(l, 6));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPadding(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "t1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERAVGPOOL2D, "p2", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 2));
  if (head == HEAD_EXPLICIT) PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  if (head == HEAD_FLATTEN) PetscCall(NNAddLayer(*net, NNLAYERFLATTEN, "flat", NULL));
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
  PetscCall(NNSetFromOptions(*net)); /* the DMDA rank grid: -sp_da_processors_x/y */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* max |a - b| / max |b| over the whole tensors (gathered from partitioned layers' pieces) */
static PetscErrorCode CompareFull(NN na, Vec a, NN nb, Vec b, PetscReal *err)
{
  PetscInt           n, m;
  PetscScalar       *fa, *fb;
  const PetscScalar *pa, *pb;
  PetscReal          e = 0, mx = 0;
  PetscMPIInt        rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(NNGetNumParameters(na, &n));
  PetscCall(NNGetNumParameters(nb, &m));
  PetscCheck(n == m, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Parameter counts differ: %" PetscInt_FMT " vs %" PetscInt_FMT, n, m);
  PetscCall(PetscMalloc2(n, &fa, n, &fb));
  PetscCall(VecGetArrayRead(a, &pa));
  PetscCall(NNPartitionGather(na, NN_TENSOR_PARAM, pa, fa));
  PetscCall(VecRestoreArrayRead(a, &pa));
  PetscCall(VecGetArrayRead(b, &pb));
  PetscCall(NNPartitionGather(nb, NN_TENSOR_PARAM, pb, fb));
  PetscCall(VecRestoreArrayRead(b, &pb));
  for (PetscInt i = 0; !rank && i < n; i++) {
    e  = PetscMax(e, PetscAbsScalar(fa[i] - fb[i]));
    mx = PetscMax(mx, PetscAbsScalar(fb[i]));
  }
  PetscCall(PetscFree2(fa, fb));
  *err = e / PetscMax(mx, 1e-300);
  PetscCallMPI(MPI_Bcast(err, 1, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}

/* the layer at position i of the running order has that name */
static PetscErrorCode LayerNameIs(NN net, PetscInt i, const char name[], PetscBool *same)
{
  const NNLayer *layers;
  PetscInt       n;
  const char    *lname;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, &n, &layers));
  *same = PETSC_FALSE;
  if (i >= n) PetscFunctionReturn(0);
  PetscCall(PetscObjectGetName((PetscObject)layers[i], &lname));
  PetscCall(PetscStrcmp(lname, name, same));
  PetscFunctionReturn(0);
}

/* the inserted layer: a spatial_flatten at the explicit one's place, no parameters, listed by NNView() with its note */
static PetscErrorCode CheckInserted(NN autonet, NN expl)
{
  NNLayer     r;
  PetscInt    na, ne, pr, pa, pe;
  PetscBool   same, type, ok;
  PetscViewer sv;
  char        text[16384];
  char       *found1 = NULL, *found2 = NULL, *found3 = NULL;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(autonet, &na, NULL));
  PetscCall(NNGetLayers(expl, &ne, NULL));
  PetscCall(LayerNameIs(autonet, 7, "fc1_repartition", &same));
  PetscCall(NNGetLayer(autonet, "fc1_repartition", &r));
  PetscCall(PetscObjectTypeCompare((PetscObject)r, NNLAYERSPATIALFLATTEN, &type));
  PetscCall(Check("fc1_repartition (spatial_flatten) inserted before fc1, as many layers as with sf written", (PetscBool)(na == ne && same && r && type)));
  PetscCall(NNLayerGetNumParameters(r, &pr));
  PetscCall(NNGetNumParameters(autonet, &pa));
  PetscCall(NNGetNumParameters(expl, &pe));
  PetscCall(Check("parameter counts equal (the inserted layer has none)", (PetscBool)(pr == 0 && pa == pe)));
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_WORLD, "model_parallel_repartition_view.txt", &sv)); /* NNView() writes ASCII viewers only */
  PetscCall(NNView(autonet, sv));
  PetscCall(PetscViewerDestroy(&sv));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) {
    FILE  *f;
    size_t len;
    PetscCall(PetscFOpen(PETSC_COMM_SELF, "model_parallel_repartition_view.txt", "r", &f));
    len       = fread(text, 1, sizeof(text) - 1, f);
    text[len] = 0;
    PetscCall(PetscFClose(PETSC_COMM_SELF, f));
    PetscCall(PetscStrstr(text, "fc1_repartition: spatial_flatten (6,3,3) -> (54), 0 parameters", &found1));
    PetscCall(PetscStrstr(text, "inserted automatically: fc1 (dense) cannot take the spatial (DMDA) activation", &found2));
    PetscCall(PetscStrstr(text, "11 layers, 1 of them inserted by NNSetUp() (-nn_auto_repartition)", &found3)); /* sp .. fc2 and the inserted one */
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s", text));
  }
  ok = (PetscBool)(found1 && found2 && found3);
  PetscCallMPI(MPI_Bcast(&ok, 1, NN_MPI_BOOL, 0, PETSC_COMM_WORLD));
  PetscCall(Check("NNView lists fc1_repartition with the note that it was inserted", ok));
  PetscFunctionReturn(0);
}

/* dot-product test of the inserted operator F (DMDA -> replicated flat samples): <F x, y> = <x, F* y>, x on the
   DMDA (global inner product), y replicated (the same on every rank, so a rank's local inner product) */
static PetscErrorCode CheckAdjoint(NN autonet)
{
  NNLayer            r;
  Vec                xin, yout, x, y, dx, dy;
  PetscRandom        rnd;
  PetscScalar       *a;
  const PetscScalar *ya, *dya;
  PetscInt           n;
  PetscReal          lhs = 0, rhs, err;

  PetscFunctionBegin;
  PetscCall(NNGetLayer(autonet, "fc1_repartition", &r));
  PetscCall(NNGetActivations(autonet, "fc1_repartition", &xin, &yout));
  PetscCall(VecDuplicate(xin, &x));
  PetscCall(VecDuplicate(xin, &dx));
  PetscCall(VecDuplicate(yout, &y));
  PetscCall(VecDuplicate(yout, &dy));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)x), &rnd)); /* global values: independent of the decomposition */
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd)); /* the same sequence on every rank */
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 11));
  PetscCall(PetscRandomSeed(rnd));
  PetscCall(VecGetLocalSize(dy, &n));
  PetscCall(VecGetArray(dy, &a));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscRandomGetValue(rnd, &a[i]));
  PetscCall(VecRestoreArray(dy, &a));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(NNBeginLayerCalls(autonet));
  PetscCall(NNLayerForward(r, NB, x, y));
  PetscCall(NNLayerBackward(r, NB, x, y, dy, dx));
  PetscCall(NNEndLayerCalls(autonet));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(dy, &dya));
  for (PetscInt i = 0; i < n; i++) lhs += PetscRealPart(ya[i] * dya[i]);
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecDot(x, dx, &rhs));
  err = PetscAbsReal(lhs - rhs) / PetscMax(PetscMax(PetscAbsReal(lhs), PetscAbsReal(rhs)), 1e-300);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  <F x, y> = %.17g, <x, F* y> = %.17g\n", (double)lhs, (double)rhs));
  PetscCall(Report("dot-product adjoint test of the inserted repartition", err, 1e-13));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&dx));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&dy));
  PetscFunctionReturn(0);
}

/* events of the inserted layer: one forward and one backward spatial_flatten per NNLossGradient() of the network */
static PetscErrorCode EventCounts(PetscInt *fwd, PetscInt *bwd)
{
  PetscLogEvent      ef, eb;
  PetscEventPerfInfo info;

  PetscFunctionBegin;
  PetscCall(PetscLogEventGetId("NNFwd_spatial_flatten", &ef));
  PetscCall(PetscLogEventGetId("NNBwd_spatial_flatten", &eb));
  PetscCall(PetscLogEventGetPerfInfo(0, ef, &info));
  *fwd = info.count;
  PetscCall(PetscLogEventGetPerfInfo(0, eb, &info));
  *bwd = info.count;
  PetscFunctionReturn(0);
}

/* the distributed networks (auto, explicit, flatten) against each other and a serial copy */
static PetscErrorCode TestNetworks(Vec x, Vec t)
{
  NN          autonet, expl, flat, ser, loaded;
  NNOpt       oa, oe, os;
  Vec         tha, the, ths, ga, ge, gs, thl;
  PetscReal   La, Le, Ls, Lf, err, worst = 0;
  PetscBool   bitwise = PETSC_TRUE;
  PetscInt    f0, b0, f1, b1, n0, n1;
  NNLayer     r0, r1;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(Build(PETSC_COMM_WORLD, NULL, HEAD_AUTO, PETSC_TRUE, &autonet));
  PetscCall(Build(PETSC_COMM_WORLD, NULL, HEAD_EXPLICIT, PETSC_TRUE, &expl));
  PetscCall(Build(PETSC_COMM_SELF, "ser_", HEAD_AUTO, PETSC_FALSE, &ser));
  PetscCall(CheckInserted(autonet, expl));
  if (!rank) PetscCall(NNView(ser, PETSC_VIEWER_STDOUT_SELF)); /* what -nn_view shows */

  PetscCall(NNGetParameters(autonet, &tha));
  PetscCall(NNGetParameters(expl, &the));
  PetscCall(NNGetParameters(ser, &ths));
  PetscCall(CompareFull(autonet, tha, expl, the, &err));
  PetscCall(Report("initial weights equal the explicit network's (bitwise)", err, 0.0));
  PetscCall(CompareFull(autonet, tha, ser, ths, &err));
  PetscCall(Report("initial weights equal the serial copy's (bitwise)", err, 0.0));

  PetscCall(NNGetOpt(autonet, &oa));
  PetscCall(NNGetOpt(expl, &oe));
  PetscCall(NNGetOpt(ser, &os));
  for (PetscInt step = 0; step < 5; step++) {
    PetscCall(EventCounts(&f0, &b0));
    PetscCall(NNLossGradient(autonet, NB, x, t, &La, NULL));
    PetscCall(EventCounts(&f1, &b1));
    if (!step) PetscCall(Check("-log_view: one NNFwd_spatial_flatten and one NNBwd_spatial_flatten per pass of the network without sf", (PetscBool)(f1 - f0 == 1 && b1 - b0 == 1)));
    PetscCall(NNLossGradient(expl, NB, x, t, &Le, NULL));
    PetscCall(NNLossGradient(ser, NB, x, t, &Ls, NULL));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  step %" PetscInt_FMT ": loss %.17g, explicit %.17g, serial %.17g\n", step, (double)La, (double)Le, (double)Ls));
    bitwise = (PetscBool)(bitwise && La == Le);
    worst   = PetscMax(worst, PetscAbsReal(La - Ls) / PetscAbsReal(Ls));
    PetscCall(NNGetGradient(autonet, &ga));
    PetscCall(NNGetGradient(expl, &ge));
    PetscCall(NNGetGradient(ser, &gs));
    if (!step) {
      PetscCall(CompareFull(autonet, ga, expl, ge, &err));
      PetscCall(Report("gradient equals the explicit network's (bitwise)", err, 0.0));
      PetscCall(CompareFull(autonet, ga, ser, gs, &err));
      PetscCall(Report("gradient equals the serial copy's", err, 1e-12));
    }
    PetscCall(NNOptStep(oa, tha, ga));
    PetscCall(NNOptStep(oe, the, ge));
    PetscCall(NNOptStep(os, ths, gs));
  }
  PetscCall(Check("loss of each of 5 Adam steps equals the explicit network's (bitwise)", bitwise));
  PetscCall(Report("loss of each of 5 Adam steps equals the serial copy's", worst, 1e-12));
  PetscCall(CompareFull(autonet, tha, expl, the, &err));
  PetscCall(Report("weights after 5 steps equal the explicit network's (bitwise)", err, 0.0));
  PetscCall(CompareFull(autonet, tha, ser, ths, &err));
  PetscCall(Report("weights after 5 steps equal the serial copy's", err, 1e-12));

  /* checkpoints: the same tensors under the same names */
  PetscCall(NNCheckpointSave(autonet, "model_parallel_repartition.h5"));
  PetscCall(Build(PETSC_COMM_WORLD, NULL, HEAD_EXPLICIT, PETSC_TRUE, &loaded));
  PetscCall(NNCheckpointLoad(loaded, "model_parallel_repartition.h5"));
  PetscCall(NNGetParameters(loaded, &thl));
  PetscCall(CompareFull(autonet, tha, loaded, thl, &err));
  PetscCall(Report("checkpoint of the network without sf loads into the one with it (bitwise)", err, 0.0));
  PetscCall(NNDestroy(&loaded));

  PetscCall(CheckAdjoint(autonet));

  /* flatten as in PyTorch: a repartition goes before it; set up again (new batch size, options), nothing more is inserted */
  PetscCall(Build(PETSC_COMM_WORLD, "flat_", HEAD_FLATTEN, PETSC_TRUE, &flat));
  PetscCall(NNGetLayers(flat, &n0, NULL));
  PetscCall(NNGetLayer(flat, "flat_repartition", &r0));
  PetscCall(NNSetBatchSize(flat, 3));
  PetscCall(NNSetUp(flat));
  PetscCall(NNSetFromOptions(flat));
  PetscCall(NNSetBatchSize(flat, NB));
  PetscCall(NNSetUp(flat));
  PetscCall(NNGetLayers(flat, &n1, NULL));
  PetscCall(NNGetLayer(flat, "flat_repartition", &r1));
  PetscCall(Check("flatten after a pooling layer gets flat_repartition before it; set-up again keeps that one layer", (PetscBool)(r0 && r0 == r1 && n0 == n1 && n1 == 12)));
  PetscCall(NNDestroy(&expl));
  PetscCall(Build(PETSC_COMM_WORLD, "flat_", HEAD_EXPLICIT, PETSC_TRUE, &expl)); /* on flat's rank grid */
  PetscCall(NNLossGradient(flat, NB, x, t, &Lf, NULL));
  PetscCall(NNLossGradient(expl, NB, x, t, &Le, NULL));
  PetscCall(NNGetGradient(flat, &ga));
  PetscCall(NNGetGradient(expl, &ge));
  PetscCall(CompareFull(flat, ga, expl, ge, &err));
  PetscCall(Check("network with flatten: loss and gradient equal the explicit network's (bitwise)", (PetscBool)(Lf == Le && err == 0)));

  PetscCall(NNDestroy(&flat));
  PetscCall(NNDestroy(&autonet));
  PetscCall(NNDestroy(&expl));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

/* a PETSc binary data set of N samples of (3,12,12) and their labels 0..6 */
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
    PetscRandom  rnd;
    PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
    PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
    PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, N, 3 * 12 * 12, NULL, &X));
    PetscCall(MatDenseGetArray(X, &a));
    for (PetscInt i = 0; i < N * 3 * 12 * 12; i++) PetscCall(PetscRandomGetValue(rnd, &a[i]));
    PetscCall(MatDenseRestoreArray(X, &a));
    PetscCall(PetscRandomDestroy(&rnd));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, N, &T));
    PetscCall(VecGetArray(T, &a));
    for (PetscInt i = 0; i < N; i++) a[i] = (PetscScalar)((5 * i + 2) % 7);
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

/* NNTrain (2 shuffled epochs of 17 samples, data groups from -dp_nn_data_groups): the trainer, the reducer's per-layer
   buckets and backward callbacks see the inserted layer as any other; the result is the explicit network's, bitwise */
static PetscErrorCode TestTrain(void)
{
  NN        net[2];
  NNData    data;
  Vec       th[2];
  PetscReal err;

  PetscFunctionBegin;
  PetscCall(WriteData(17, "model_parallel_repartition.dat"));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, "model_parallel_repartition.dat"));
  PetscCall(NNDataSetUp(data));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(Build(PETSC_COMM_WORLD, "dp_", k ? HEAD_EXPLICIT : HEAD_AUTO, PETSC_TRUE, &net[k]));
    PetscCall(NNSetEpochs(net[k], 2));
    PetscCall(NNTrain(net[k], data, NULL));
    PetscCall(NNGetParameters(net[k], &th[k]));
  }
  PetscCall(CompareFull(net[0], th[0], net[1], th[1], &err));
  PetscCall(Report("NNTrain of the network without sf equals the explicit network's (bitwise)", err, 0.0));
  PetscCall(NNDestroy(&net[0]));
  PetscCall(NNDestroy(&net[1]));
  PetscCall(NNDataDestroy(&data));
  PetscFunctionReturn(0);
}

/* set-up fails with a message containing expect and expect2 */
static PetscErrorCode ExpectError(const char what[], NN net, const char expect[], const char expect2[])
{
  PetscErrorCode ierr;
  const char    *text;
  char          *msg = NULL, *found = NULL, *found2 = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no error", what);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  if (msg) PetscCall(PetscStrstr(msg, expect2, &found2));
  PetscCheck(found && found2, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not contain \"%s\" and \"%s\"", what, msg ? msg : "", expect, expect2);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s ... %s)\n", what, expect, expect2));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrors(void)
{
  NN      net;
  NNLayer l;

  PetscFunctionBegin;
  /* -nn_auto_repartition false: the error of old, naming the option */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "off_"));
  PetscCall(NNSetInputShape(net, 3, (PetscInt[]){2, 6, 6}));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "cv", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 4));
  PetscCall(NNSetAutoRepartition(net, PETSC_FALSE));
  PetscCall(ExpectError("NNSetAutoRepartition(net, PETSC_FALSE)", net, "Layer fc (dense) cannot take the spatial (DMDA) activation of cv", "put a spatial_flatten layer before it, or let the network insert one (-off_nn_auto_repartition true"));
  PetscCall(NNSetAutoRepartition(net, PETSC_TRUE)); /* and the same network sets up once allowed */
  PetscCall(NNSetUp(net));
  PetscCall(Check("the same network with NNSetAutoRepartition(net, PETSC_TRUE) sets up", PETSC_TRUE));
  PetscCall(NNDestroy(&net));

  /* the name the inserted layer would get is taken */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "taken_"));
  PetscCall(NNSetInputShape(net, 3, (PetscInt[]){2, 6, 6}));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "cv", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNAddLayer(net, NNLAYERRELU, "fc_repartition", NULL));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 4));
  PetscCall(ExpectError("inserted layer's name taken", net, "Layer fc (dense) cannot take the spatial (DMDA) activation", "is named fc_repartition, which another layer of the network is"));
  PetscCall(NNDestroy(&net));
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
  PetscCall(PetscLogDefaultBegin()); /* event counts, as -log_view has them */
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  /* the same batch on every rank: inputs in [-1,1), labels 0..6 */
  PetscCall(Build(PETSC_COMM_SELF, "ser_", HEAD_AUTO, PETSC_FALSE, &ser));
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
  PetscCall(TestNetworks(x, t));
  PetscCall(TestTrain());
  PetscCall(TestErrors());
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(PetscFinalize());
  return 0;
}

/* the serial copy's view (printed by every run) names its convolutions' thread counts: one thread each, whatever
   OPENBLAS_NUM_THREADS is */
/*TEST

   test:
      suffix: 1
      args: -ser_cv1_threads 1 -ser_cv2_threads 1
      output_file: output/model_parallel_repartition.out

   test:
      suffix: 2
      nsize: 2
      args: -ser_cv1_threads 1 -ser_cv2_threads 1 -sp_da_processors_x 2 -sp_da_processors_y 1 -flat_sp_da_processors_x 1 -flat_sp_da_processors_y 2
      output_file: output/model_parallel_repartition.out

   test:
      suffix: 3
      nsize: 3
      args: -ser_cv1_threads 1 -ser_cv2_threads 1 -sp_da_processors_x 1 -sp_da_processors_y 3 -flat_sp_da_processors_x 3 -flat_sp_da_processors_y 1
      output_file: output/model_parallel_repartition.out

   test:
      suffix: 4
      nsize: 4
      args: -ser_cv1_threads 1 -ser_cv2_threads 1 -sp_da_processors_x 2 -sp_da_processors_y 2 -flat_sp_da_processors_x 2 -flat_sp_da_processors_y 2
      output_file: output/model_parallel_repartition.out

   # NNTrain with 2 data groups of 2 spatial ranks each
   test:
      suffix: dp
      nsize: 4
      args: -ser_cv1_threads 1 -ser_cv2_threads 1 -sp_da_processors_x 2 -sp_da_processors_y 2 -dp_nn_data_groups 2 -dp_nn_allreduce {{mpi shared}}
      output_file: output/model_parallel_repartition.out

TEST*/
