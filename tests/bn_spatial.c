static char help[] = "Spatial batch norm (batchnorm2d, batchnorm3d) and residual blocks over spatial layers:\n"
                     "statistics and running statistics against a direct computation, dot-product tests (eval-mode\n"
                     "input map, parameter map), outputs, losses and gradients on the run's communicator against\n"
                     "serial copies on PETSC_COMM_SELF (partial batches against a network whose capacity is the\n"
                     "batch), finite-difference checks, and error messages.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define NB 3 /* batch capacity */
#define NP 2 /* samples in the partial batch */

/* 2-d samples (C,H,W): 7 pixels wide, so 3 ranks along x split 3,2,2; 3-d samples (C,D,H,W): depth 5 */
static const PetscInt shape2[] = {2, 6, 7};
static const PetscInt shape3[] = {2, 5, 4, 3};

/* ---------------------------------------------------------------- helpers */

static PetscErrorCode ReportErrTol(const char what[], PetscReal err, PetscReal t)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: rel. error %.3e\n", what, (double)err));
  PetscCheck(err < t, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g", what, (double)err, (double)t);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rel. error < %g\n", what, (double)t));
  PetscFunctionReturn(0);
}

static PetscErrorCode ReportErr(const char what[], PetscReal err)
{
  PetscFunctionBegin;
  PetscCall(ReportErrTol(what, err, tol));
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char what[], PetscReal a, PetscReal b)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.17g vs %.17g\n", what, (double)a, (double)b));
  PetscCall(ReportErr(what, PetscAbsReal(a - b) / PetscMax(PetscMax(PetscAbsReal(a), PetscAbsReal(b)), 1e-300)));
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| over the first N entries (replicated arrays: the same on every rank) */
static PetscReal RelErr(PetscInt N, const PetscScalar *a, const PetscScalar *b)
{
  PetscReal e = 0, nb = 0;

  for (PetscInt i = 0; i < N; i++) {
    e += PetscSqr(PetscRealPart(a[i] - b[i]));
    nb += PetscSqr(PetscRealPart(b[i]));
  }
  return PetscSqrtReal(e) / PetscMax(PetscSqrtReal(nb), 1e-300);
}

static PetscErrorCode CompareVecs(const char what[], PetscInt N, Vec a, Vec b)
{
  const PetscScalar *x, *y;
  PetscReal          e;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  e = RelErr(N, x, y);
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscCall(ReportErr(what, e));
  PetscFunctionReturn(0);
}

/* the same random numbers on every rank */
static PetscErrorCode FillReplicated(PetscRandom r, PetscInt n, PetscReal lo, PetscReal hi, PetscScalar *a)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar v;
    PetscCall(PetscRandomGetValue(r, &v));
    a[i] = lo + (hi - lo) * v;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode SeededRandom(unsigned long seed, PetscRandom *r)
{
  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, r));
  PetscCall(PetscRandomSetSeed(*r, seed));
  PetscCall(PetscRandomSeed(*r));
  PetscFunctionReturn(0);
}

/* random global values (any decomposition: used by the dot-product tests only) */
static PetscErrorCode FillGlobal(Vec v)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* random gamma, beta, running_mean, running_var of the batch-norm layer "name" (replicated, seeded) */
static PetscErrorCode SetBNState(NN net, const char name[], unsigned long seed)
{
  NNLayer      l;
  NNShape      in;
  PetscRandom  r;
  PetscScalar *th, *buf;
  PetscInt     C;

  PetscFunctionBegin;
  PetscCall(NNGetLayer(net, name, &l));
  PetscCall(NNLayerGetInputShape(l, &in));
  C = in.dim[0];
  PetscCall(SeededRandom(seed, &r));
  PetscCall(NNGetLayerParameters(net, name, NULL, &th));
  PetscCall(NNGetLayerBuffers(net, name, NULL, &buf));
  PetscCall(FillReplicated(r, C, 0.5, 1.5, th));       /* weight */
  PetscCall(FillReplicated(r, C, -0.5, 0.5, th + C));  /* bias */
  PetscCall(FillReplicated(r, C, -0.5, 0.5, buf));     /* running_mean */
  PetscCall(FillReplicated(r, C, 0.5, 1.5, buf + C));  /* running_var */
  PetscCall(NNRestoreLayerBuffers(net, name, &buf));
  PetscCall(NNRestoreLayerParameters(net, name, &th));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* input and target batches of capacity NB: the same on every rank and for every network */
static PetscErrorCode FillBatch(NN net, PetscReal offset, Vec *x, Vec *t)
{
  PetscRandom  r;
  PetscScalar *a;
  PetscInt     nx, nt;
  NNLossType   loss;
  PetscBool    classes;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(SeededRandom(11, &r));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetArray(*x, &a));
  PetscCall(FillReplicated(r, nx, offset - 1.0, offset + 1.0, a));
  PetscCall(VecRestoreArray(*x, &a));
  if (t) {
    PetscCall(VecGetLocalSize(*t, &nt));
    PetscCall(VecGetArray(*t, &a));
    PetscCall(FillReplicated(r, nt, -1.0, 1.0, a));
    PetscCall(NNGetLoss(net, &loss));
    PetscCall(PetscStrcmp(loss, NNLOSSCROSSENTROPY, &classes));
    if (classes)
      for (PetscInt i = 0; i < nt; i++) a[i] = (PetscInt)(2.5 * (a[i] + 1.0)) % 5;
    PetscCall(VecRestoreArray(*t, &a));
  }
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* a sequential Vec holding the first N entries of v */
static PetscErrorCode CopyHead(Vec v, PetscInt N, Vec *w)
{
  const PetscScalar *a;
  PetscScalar       *b;

  PetscFunctionBegin;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, N, w));
  PetscCall(VecGetArrayRead(v, &a));
  PetscCall(VecGetArrayWrite(*w, &b));
  PetscCall(PetscArraycpy(b, a, N));
  PetscCall(VecRestoreArrayWrite(*w, &b));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(0);
}

static PetscInt LayerIndex(NN net, const char name[])
{
  PetscInt       nl;
  const NNLayer *layers;

  if (NNGetLayers(net, &nl, &layers)) return -1;
  for (PetscInt i = 0; i < nl; i++) {
    PetscBool   match;
    const char *lname;
    if (PetscObjectGetName((PetscObject)layers[i], &lname) || PetscStrcmp(lname, name, &match)) return -1;
    if (match) return i;
  }
  return -1;
}

/* ---------------------------------------------------------------- networks */

/* to_spatial -> [conv2d 3 filters with bias, 2-d only] -> batchnorm -> spatial_flatten -> tanh (mse) */
static PetscErrorCode BuildBN(MPI_Comm comm, const char prefix[], PetscInt nd, PetscInt nbatch, PetscBool training, NN *net)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, nd + 1, nd == 2 ? shape2 : shape3));
  PetscCall(NNSetBatchSize(*net, nbatch));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, nd == 2 ? "sp" : "sq", NULL));
  if (nd == 2) { /* its bias fills the slots s >= n of a partial batch: batch norm must not count them */
    PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
    PetscCall(NNLayerConvSetFilters(l, 3));
  }
  PetscCall(NNAddLayer(*net, nd == 2 ? NNLAYERBATCHNORM2D : NNLAYERBATCHNORM3D, "bn", &l));
  PetscCall(NNLayerBatchNormSetMomentum(l, 0.25));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "th", NULL));
  PetscCall(NNSetUp(*net));
  PetscCall(NNSetTraining(*net, training));
  PetscCall(SetBNState(*net, "bn", 17));
  PetscFunctionReturn(0);
}

/* to_spatial -> conv2d c0 (3 filters) -> residual{conv2d rc1, batchnorm2d rbn, act ract, conv2d rc2} -> spatial_flatten -> [dense 5];
   flat: the same layers without the residual block (the same parameters: the block has none of its own) */
static PetscErrorCode BuildResNet(MPI_Comm comm, NNLayerType act, NNLossType loss, PetscBool dense, PetscBool flat, NN *net)
{
  NNLayer l, blk = NULL;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetInputShape(*net, 3, shape2));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, loss));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c0", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  if (!flat) PetscCall(NNAddLayer(*net, NNLAYERRESIDUAL, "blk", &blk));
#define ADD(type, name, lp) PetscCall(flat ? NNAddLayer(*net, type, name, lp) : NNLayerResidualAddLayer(blk, type, name, lp))
  ADD(NNLAYERCONV2D, "rc1", &l);
  PetscCall(NNLayerConvSetFilters(l, 3));
  ADD(NNLAYERBATCHNORM2D, "rbn", &l);
  PetscCall(NNLayerBatchNormSetMomentum(l, 0.3));
  ADD(act, "ract", NULL);
  ADD(NNLAYERCONV2D, "rc2", &l);
  PetscCall(NNLayerConvSetFilters(l, 3));
#undef ADD
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  if (dense) {
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
    PetscCall(NNLayerDenseSetUnits(l, 5));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the same residual network from the options database, under the prefix "serial_", on PETSC_COMM_SELF */
static PetscErrorCode BuildResFromOptions(NN *net)
{
  const char *opts = "-serial_nn_layers sp,c0,blk,sf,fc -serial_sp_type to_spatial -serial_c0_type conv2d -serial_c0_filters 3 "
                     "-serial_blk_type residual -serial_blk_layers rc1,rbn,ract,rc2 -serial_rc1_type conv2d -serial_rc1_filters 3 "
                     "-serial_rc1_kernel 3 -serial_rbn_type batchnorm2d -serial_rbn_momentum 0.3 -serial_ract_type relu "
                     "-serial_rc2_type conv2d -serial_rc2_filters 3 -serial_sf_type spatial_flatten -serial_fc_type dense "
                     "-serial_fc_units 5 -serial_nn_loss cross_entropy -serial_nn_batch_size 3 -serial_nn_seed 5";
  const char *keys[] = {"-serial_nn_layers", "-serial_sp_type", "-serial_c0_type", "-serial_c0_filters", "-serial_blk_type", "-serial_blk_layers", "-serial_rc1_type", "-serial_rc1_filters", "-serial_rc1_kernel", "-serial_rbn_type", "-serial_rbn_momentum", "-serial_ract_type", "-serial_rc2_type", "-serial_rc2_filters", "-serial_sf_type", "-serial_fc_type", "-serial_fc_units", "-serial_nn_loss", "-serial_nn_batch_size", "-serial_nn_seed"};

  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_SELF, net));
  PetscCall(NNSetOptionsPrefix(*net, "serial_"));
  PetscCall(NNSetInputShape(*net, 3, shape2));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) PetscCall(PetscOptionsClearValue(NULL, keys[k]));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- tests */

/*
   The layer's statistics against a direct computation on the sequential batch: output, running
   statistics and num_batches_tracked in training mode, output in evaluation mode. The inputs are
   offset by 1000 (|mean| = 1700 std): a one-pass sum-of-squares variance would be off by about
   eps mean^2/var = 3e-10, while x - mean itself loses eps |mean|/std = 2e-13 (in the reference
   too), so the outputs are compared with tolerance 1e-11 and the running statistics with 1e-12.
*/
static PetscErrorCode TestReference(PetscInt nd)
{
  NN                 net;
  NNLayer            bn;
  Vec                x, y;
  const PetscScalar *xa, *ya;
  PetscScalar       *ref, rm0[4], rv0[4], rm[4], rv[4], *th, *buf;
  NNShape            in;
  PetscInt           C = nd == 2 ? shape2[0] : shape3[0], npix, N;
  PetscReal          mom = 0.25, eps = 1e-5, m, nbt0, e;
  char               what[128];

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, nd + 1, nd == 2 ? shape2 : shape3));
  PetscCall(NNSetBatchSize(net, NB));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, nd == 2 ? "sp" : "sq", NULL));
  PetscCall(NNAddLayer(net, nd == 2 ? NNLAYERBATCHNORM2D : NNLAYERBATCHNORM3D, "bn", &bn));
  PetscCall(NNAddLayer(net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(PetscOptionsInsertString(NULL, "-bn_momentum 0.25 -bn_epsilon 1e-5"));
  PetscCall(NNLayerSetFromOptions(bn)); /* the options of batchnorm1d */
  PetscCall(PetscOptionsClearValue(NULL, "-bn_momentum"));
  PetscCall(PetscOptionsClearValue(NULL, "-bn_epsilon"));
  PetscCall(NNSetUp(net));
  PetscCall(SetBNState(net, "bn", 23));
  PetscCall(FillBatch(net, 1000.0, &x, NULL));
  PetscCall(NNGetInputShape(net, &in));
  npix = NNShapeSize(&in) / C;
  N    = NP * C * npix;
  m    = NP * npix;
  PetscCall(PetscMalloc1(N, &ref));
  PetscCall(NNGetLayerBuffers(net, "bn", NULL, &buf));
  for (PetscInt c = 0; c < C; c++) {
    rm0[c] = buf[c];
    rv0[c] = buf[C + c];
  }
  nbt0 = PetscRealPart(buf[2 * C]);
  PetscCall(NNRestoreLayerBuffers(net, "bn", &buf));

  for (PetscInt pass = 0; pass < 2; pass++) { /* training, then evaluation with the updated running statistics */
    PetscCall(NNSetTraining(net, pass == 0 ? PETSC_TRUE : PETSC_FALSE));
    PetscCall(NNForward(net, NP, x, &y));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(NNGetLayerParameters(net, "bn", NULL, &th));
    for (PetscInt c = 0; c < C; c++) {
      PetscScalar mean = 0, var = 0, g = th[c], b = th[C + c];
      for (PetscInt s = 0; s < NP; s++)
        for (PetscInt i = 0; i < npix; i++) mean += xa[(s * C + c) * npix + i];
      mean /= m;
      for (PetscInt s = 0; s < NP; s++)
        for (PetscInt i = 0; i < npix; i++) var += PetscSqr(xa[(s * C + c) * npix + i] - mean);
      var /= m;
      if (pass == 0) {
        rm[c] = (1 - mom) * rm0[c] + mom * mean;
        rv[c] = (1 - mom) * rv0[c] + mom * var * m / (m - 1);
      } else {
        mean = rm[c];
        var  = rv[c];
      }
      for (PetscInt s = 0; s < NP; s++)
        for (PetscInt i = 0; i < npix; i++) ref[(s * C + c) * npix + i] = g * (xa[(s * C + c) * npix + i] - mean) / PetscSqrtReal(var + eps) + b;
    }
    PetscCall(NNRestoreLayerParameters(net, "bn", &th));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(VecGetArrayRead(y, &ya));
    e = RelErr(N, ya, ref);
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d %s output vs direct computation (|mean| = 1700 std)", nd, pass ? "eval-mode" : "training-mode"));
    PetscCall(ReportErrTol(what, e, 1e-11));
    if (pass == 0) {
      PetscCall(NNGetLayerBuffers(net, "bn", NULL, &buf));
      e = PetscMax(RelErr(C, buf, rm), RelErr(C, buf + C, rv));
      PetscCheck(PetscRealPart(buf[2 * C]) == nbt0 + 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "num_batches_tracked %g, expected %g", (double)PetscRealPart(buf[2 * C]), (double)(nbt0 + 1));
      PetscCall(NNRestoreLayerBuffers(net, "bn", &buf));
      PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d running_mean, running_var (unbiased, momentum 0.25)", nd));
      PetscCall(ReportErr(what, e));
    }
  }
  PetscCall(PetscFree(ref));
  PetscCall(VecDestroy(&x));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/*
   Dot-product tests on the DMDA activations of a partial batch (NP of NB slots; random values in
   all slots, which the map must ignore): the eval-mode input map x -> F(x) - F(0) (linear) with its
   adjoint the backward pass, and the parameter map (gamma, beta) -> y (linear in both modes).
*/
static PetscErrorCode TestAdjoint(PetscInt nd)
{
  NN           net;
  NNLayer      bn;
  Vec          x, y, y0, w, dx, zero;
  PetscScalar *th, *dth, *buf;
  PetscReal    a, b;
  PetscInt     C;
  PetscRandom  r;
  NNShape      in;
  Vec          xbn, ybn;
  char         what[128];

  PetscFunctionBegin;
  PetscCall(BuildBN(PETSC_COMM_WORLD, NULL, nd, NB, PETSC_FALSE, &net));
  PetscCall(NNGetLayer(net, "bn", &bn));
  PetscCall(NNLayerGetInputShape(bn, &in));
  C = in.dim[0];
  PetscCall(NNBeginLayerCalls(net)); /* the layers see their slices of the parameters, gradient and buffers */
  PetscCall(NNGetLayerParameters(net, "bn", NULL, &th));
  PetscCall(NNGetLayerGradient(net, "bn", NULL, &dth));
  PetscCall(NNGetLayerBuffers(net, "bn", NULL, &buf));
  PetscCall(NNGetActivations(net, "bn", &xbn, &ybn));
  PetscCall(VecDuplicate(xbn, &x));
  PetscCall(VecDuplicate(xbn, &dx));
  PetscCall(VecDuplicate(xbn, &zero));
  PetscCall(VecDuplicate(ybn, &y));
  PetscCall(VecDuplicate(ybn, &y0));
  PetscCall(VecDuplicate(ybn, &w));
  PetscCall(FillGlobal(x));
  PetscCall(FillGlobal(w));

  /* eval mode, input direction */
  PetscCall(NNLayerSetTraining(bn, PETSC_FALSE));
  PetscCall(VecZeroEntries(zero));
  PetscCall(NNLayerForward(bn, NP, zero, y0));
  PetscCall(NNLayerForward(bn, NP, x, y));
  PetscCall(VecAXPY(y, -1.0, y0));
  PetscCall(VecDot(y, w, &a));
  PetscCall(VecSet(dx, 1.0)); /* every entry must be written: slots s >= n with zeros */
  PetscCall(NNLayerBackward(bn, NP, x, y, w, dx));
  PetscCall(VecDot(x, dx, &b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "adjoint batchnorm%" PetscInt_FMT "d eval-mode input direction (partial batch)", nd));
  PetscCall(Report(what, a, b));

  /* parameter direction, both modes: y = gamma xhat + beta */
  PetscCall(SeededRandom(29, &r));
  for (PetscInt mode = 0; mode < 2; mode++) {
    PetscCall(NNLayerSetTraining(bn, mode ? PETSC_TRUE : PETSC_FALSE));
    PetscCall(FillReplicated(r, 2 * C, -1.0, 1.0, th));
    PetscCall(PetscArrayzero(dth, 2 * C));
    PetscCall(NNLayerForward(bn, NP, x, y));
    PetscCall(VecDot(y, w, &a));
    PetscCall(NNLayerBackward(bn, NP, x, y, w, NULL));
    b = 0;
    for (PetscInt i = 0; i < 2 * C; i++) b += PetscRealPart(th[i] * dth[i]);
    PetscCall(PetscSNPrintf(what, sizeof(what), "adjoint batchnorm%" PetscInt_FMT "d %s parameter direction", nd, mode ? "training-mode" : "eval-mode"));
    PetscCall(Report(what, a, b));
  }
  PetscCall(PetscRandomDestroy(&r));

  /* training mode: values in the slots s >= n change nothing (statistics, output, gradients, running statistics) */
  {
    Vec          x2, y2, dx2;
    PetscScalar  b0[9], b1[9], g1[8], *xa;
    PetscInt     len, D = NB * C;
    PetscBool    same[4];
    PetscCheck(2 * C + 1 <= 9, PETSC_COMM_SELF, PETSC_ERR_PLIB, "too many channels for this test");
    PetscCall(PetscArraycpy(b0, buf, 2 * C + 1));
    PetscCall(VecDuplicate(x, &x2));
    PetscCall(VecDuplicate(y, &y2));
    PetscCall(VecDuplicate(dx, &dx2));
    PetscCall(VecCopy(x, x2));
    PetscCall(VecGetLocalSize(x2, &len));
    PetscCall(VecGetArray(x2, &xa));
    for (PetscInt p = 0; p < len / D; p++)
      for (PetscInt i = NP * C; i < D; i++) xa[p * D + i] = 0.0;
    PetscCall(VecRestoreArray(x2, &xa));
    PetscCall(NNLayerSetTraining(bn, PETSC_TRUE));
    PetscCall(PetscArrayzero(dth, 2 * C));
    PetscCall(NNLayerForward(bn, NP, x, y));
    PetscCall(NNLayerBackward(bn, NP, x, y, w, dx));
    PetscCall(PetscArraycpy(b1, buf, 2 * C + 1));
    PetscCall(PetscArraycpy(g1, dth, 2 * C));
    PetscCall(PetscArraycpy(buf, b0, 2 * C + 1));
    PetscCall(PetscArrayzero(dth, 2 * C));
    PetscCall(NNLayerForward(bn, NP, x2, y2));
    PetscCall(NNLayerBackward(bn, NP, x2, y2, w, dx2));
    PetscCall(VecEqual(y, y2, &same[0]));
    PetscCall(VecEqual(dx, dx2, &same[1]));
    PetscCall(PetscArraycmp(b1, buf, 2 * C + 1, &same[2]));
    PetscCall(PetscArraycmp(g1, dth, 2 * C, &same[3]));
    PetscCheck(same[0] && same[1] && same[2] && same[3], PETSC_COMM_SELF, PETSC_ERR_PLIB, "values in the slots s >= n changed: output %d, input gradient %d, running statistics %d, parameter gradient %d", !same[0], !same[1], !same[2], !same[3]);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batchnorm%" PetscInt_FMT "d training mode: values in slots s >= n change no output, gradient or running statistic\n", nd));
    PetscCall(VecDestroy(&x2));
    PetscCall(VecDestroy(&y2));
    PetscCall(VecDestroy(&dx2));
  }

  PetscCall(NNRestoreLayerBuffers(net, "bn", &buf));
  PetscCall(NNRestoreLayerGradient(net, "bn", &dth));
  PetscCall(NNRestoreLayerParameters(net, "bn", &th));
  PetscCall(NNEndLayerCalls(net));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&dx));
  PetscCall(VecDestroy(&zero));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&y0));
  PetscCall(VecDestroy(&w));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* max |v| over the batch slots s >= NP of a spatial activation with C channels, over all ranks */
static PetscErrorCode MaxUnusedSlots(Vec v, PetscInt C, PetscReal *mx)
{
  const PetscScalar *a;
  PetscInt           len, D = NB * C;

  PetscFunctionBegin;
  *mx = 0;
  PetscCall(VecGetLocalSize(v, &len));
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt p = 0; p < len / D; p++)
    for (PetscInt i = NP * C; i < D; i++) *mx = PetscMax(*mx, PetscAbsScalar(a[p * D + i]));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mx, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)v)));
  PetscFunctionReturn(0);
}

/*
   A partial batch of NP samples through the network on the run's communicator, a serial copy of the
   same capacity NB, and a serial copy of capacity NP: batch-norm output, loss, parameter gradient,
   input gradient and buffers (running statistics) agree; slots s >= NP give zero output and gradient.
*/
static PetscErrorCode TestRankEquivalence(PetscInt nd, PetscBool training)
{
  NN          par, ser, full;
  NN          nets[3];
  Vec         x, t, xf, tf, dx[3], g;
  PetscReal   L[3], mx;
  PetscInt    insz, outsz, ibn, C, gsz = 0;
  const char *mode = training ? "training" : "eval";
  char        what[160];
  NNShape     shape;
  NNLayer     bn, sf;
  Vec         ybn, dxbn, ysf, v, gpar, gpar_buf;
  const NNLayer *layers;

  PetscFunctionBegin;
  PetscCall(BuildBN(PETSC_COMM_WORLD, NULL, nd, NB, training, &par));
  PetscCall(BuildBN(PETSC_COMM_SELF, "serial_", nd, NB, training, &ser));
  PetscCall(BuildBN(PETSC_COMM_SELF, "full_", nd, NP, training, &full));
  nets[0] = par;
  nets[1] = ser;
  nets[2] = full;
  PetscCall(NNGetInputShape(par, &shape));
  insz = NNShapeSize(&shape);
  PetscCall(NNGetLayer(par, "bn", &bn));
  PetscCall(NNGetLayer(par, "sf", &sf));
  PetscCall(NNLayerGetInputShape(bn, &shape));
  C = shape.dim[0];
  PetscCall(NNLayerGetOutputShape(sf, &shape));
  outsz = NNShapeSize(&shape);
  PetscCall(NNGetActivations(par, "bn", NULL, &ybn));
  PetscCall(NNGetActivationGradients(par, "bn", &dxbn, NULL));
  PetscCall(NNGetActivations(par, "sf", NULL, &ysf));
  ibn = LayerIndex(par, "bn");
  PetscCall(NNGetLayers(par, NULL, &layers));
  for (PetscInt i = 0; i <= ibn; i++) { /* the gradient up to the end of the batch norm's slice */
    PetscInt np;
    PetscCall(NNLayerGetNumParameters(layers[i], &np));
    gsz += np;
  }
  PetscCall(FillBatch(par, 0.5, &x, &t));
  PetscCall(CopyHead(x, NP * insz, &xf));
  PetscCall(CopyHead(t, NP * outsz, &tf));
  PetscCall(VecSet(ybn, 1.0)); /* the layer must overwrite the slots s >= n with zeros */
  PetscCall(VecSet(dxbn, 1.0));
  for (PetscInt k = 0; k < 3; k++) {
    PetscCall(VecDuplicate(k == 2 ? xf : x, &dx[k]));
    PetscCall(NNLossGradient(nets[k], NP, k == 2 ? xf : x, k == 2 ? tf : t, &L[k], dx[k]));
  }
  for (PetscInt k = 1; k < 3; k++) {
    const char *other = k == 1 ? "serial copy" : "serial network of capacity n";
    PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d %s, n=%d of %d: output vs %s", nd, mode, NP, NB, other));
    PetscCall(NNGetActivations(nets[k], "sf", NULL, &v));
    PetscCall(CompareVecs(what, NP * outsz, ysf, v));
    PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d %s, n=%d of %d: loss vs %s", nd, mode, NP, NB, other));
    PetscCall(Report(what, L[0], L[k]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d %s, n=%d of %d: parameter gradient vs %s", nd, mode, NP, NB, other));
    PetscCall(NNGetGradient(nets[k], &g));
    PetscCall(NNGetGradient(par, &gpar));
    PetscCall(CompareVecs(what, gsz, gpar, g));
    PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d %s, n=%d of %d: input gradient vs %s", nd, mode, NP, NB, other));
    PetscCall(CompareVecs(what, NP * insz, dx[0], dx[k]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "batchnorm%" PetscInt_FMT "d %s, n=%d of %d: running statistics vs %s", nd, mode, NP, NB, other));
    PetscCall(NNGetBuffers(par, &gpar_buf));
    PetscCall(NNGetBuffers(nets[k], &v));
    PetscCall(CompareVecs(what, 2 * C + 1, gpar_buf, v));
  }
  /* unused slots: zero output and input gradient */
  PetscCall(MaxUnusedSlots(ybn, C, &mx));
  PetscCheck(mx == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "batch-norm output is %g in slots s >= n", (double)mx);
  PetscCall(MaxUnusedSlots(dxbn, C, &mx));
  PetscCheck(mx == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "batch-norm input gradient is %g in slots s >= n", (double)mx);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batchnorm%" PetscInt_FMT "d %s: slots s >= n of the output and input gradient are zero\n", nd, mode));
  for (PetscInt k = 0; k < 3; k++) {
    PetscCall(VecDestroy(&dx[k]));
    PetscCall(NNDestroy(&nets[k]));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&xf));
  PetscCall(VecDestroy(&tf));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestGradientCheck(PetscInt nd, PetscBool training)
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildBN(PETSC_COMM_WORLD, NULL, nd, NB, training, &net));
  PetscCall(FillBatch(net, 0.5, &x, &t));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batchnorm%" PetscInt_FMT "d %s mode, finite differences:\n", nd, training ? "training" : "eval"));
  PetscCall(NNGradientCheck(net, NP, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: %g %g", (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* residual{conv2d, batchnorm2d, relu, conv2d} in a CNN on the run's communicator vs the same network built from options on PETSC_COMM_SELF */
static PetscErrorCode TestResidualRankEquivalence(void)
{
  NN        par, ser;
  Vec       x, t, dxp, dxs, gp, gs, tp, ts;
  PetscReal Lp, Ls;
  PetscBool same;
  NNShape   in;

  PetscFunctionBegin;
  PetscCall(BuildResNet(PETSC_COMM_WORLD, NNLAYERRELU, NNLOSSCROSSENTROPY, PETSC_TRUE, PETSC_FALSE, &par));
  PetscCall(BuildResFromOptions(&ser));
  PetscCall(NNGetParameters(par, &tp));
  PetscCall(NNGetParameters(ser, &ts));
  PetscCall(VecEqual(tp, ts, &same));
  PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the parallel and serial residual networks were initialized differently");
  PetscCall(FillBatch(par, 0.0, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(NNLossGradient(par, NP, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, NP, x, t, &Ls, dxs));
  PetscCall(Report("residual{conv2d,batchnorm2d,relu,conv2d} CNN, n=2 of 3: loss vs serial copy (built from options)", Lp, Ls));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  {
    PetscInt np;
    PetscCall(VecGetSize(gp, &np));
    PetscCall(CompareVecs("residual CNN: parameter gradient vs serial copy", np, gp, gs));
  }
  PetscCall(NNGetInputShape(par, &in));
  PetscCall(CompareVecs("residual CNN: input gradient vs serial copy", NP * NNShapeSize(&in), dxp, dxs));
  {
    PetscInt nb;
    Vec      bp, bs;
    PetscCall(NNGetBuffers(par, &bp));
    PetscCall(NNGetBuffers(ser, &bs));
    PetscCall(VecGetSize(bp, &nb));
    PetscCall(CompareVecs("residual CNN: running statistics of the inner batchnorm2d vs serial copy", nb, bp, bs));
  }
  /* y = x + block(x): the block's output from the same layers without the residual connection */
  {
    NN        flat;
    Vec       ref, tf, xblk, yblk, yrc2;
    PetscReal e, nrm;
    PetscCall(BuildResNet(PETSC_COMM_WORLD, NNLAYERRELU, NNLOSSCROSSENTROPY, PETSC_TRUE, PETSC_TRUE, &flat));
    PetscCall(NNGetParameters(flat, &tf));
    PetscCall(VecEqual(tp, tf, &same));
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the residual and flat networks were initialized differently");
    PetscCall(NNForward(flat, NP, x, NULL));
    PetscCall(NNForward(par, NP, x, NULL));
    PetscCall(NNGetActivations(par, "blk", &xblk, &yblk));
    PetscCall(NNGetActivations(flat, "rc2", NULL, &yrc2));
    PetscCall(VecDuplicate(yblk, &ref));
    PetscCall(VecWAXPY(ref, 1.0, xblk, yrc2)); /* x + block(x) */
    PetscCall(VecNorm(ref, NORM_2, &nrm));
    PetscCall(VecAXPY(ref, -1.0, yblk));
    PetscCall(VecNorm(ref, NORM_2, &e));
    PetscCall(ReportErr("residual CNN: block output vs x + (the same layers without the skip connection)(x)", e / nrm));
    PetscCall(VecDestroy(&ref));
    PetscCall(NNDestroy(&flat));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestResidualGradientCheck(PetscBool training)
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildResNet(PETSC_COMM_WORLD, NNLAYERTANH, NNLOSSMSE, PETSC_FALSE, PETSC_FALSE, &net));
  PetscCall(NNSetTraining(net, training));
  PetscCall(SetBNState(net, "rbn", 31));
  PetscCall(FillBatch(net, 0.0, &x, &t));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "residual{conv2d,batchnorm2d,tanh,conv2d} CNN, %s mode, finite differences:\n", training ? "training" : "eval"));
  PetscCall(NNGradientCheck(net, NP, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: %g %g", (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- expected errors */
typedef struct {
  char      msg[4096];
  PetscBool set;
} ErrCtx;

static PetscErrorCode CatchError(MPI_Comm comm PETSC_UNUSED, int line PETSC_UNUSED, const char *fun PETSC_UNUSED, const char *file PETSC_UNUSED, PetscErrorCode n, PetscErrorType p PETSC_UNUSED, const char *mess, void *ctx)
{
  ErrCtx *e = (ErrCtx *)ctx;

  if (!e->set && mess) {
    PetscStrncpy(e->msg, mess, sizeof(e->msg));
    e->set = PETSC_TRUE;
  }
  return n;
}

static PetscErrorCode Catch(ErrCtx *e)
{
  PetscFunctionBegin;
  e->set    = PETSC_FALSE;
  e->msg[0] = 0;
  PetscCall(PetscPushErrorHandler(CatchError, e));
  PetscFunctionReturn(0);
}

/* pops the handler; requires that ierr is an error whose message contains every string in subs */
static PetscErrorCode Expect(PetscErrorCode ierr, ErrCtx *e, const char what[], PetscInt nsub, const char *const subs[])
{
  PetscFunctionBegin;
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", what);
  for (PetscInt i = 0; i < nsub; i++) {
    char *found;
    PetscCall(PetscStrstr(e->msg, subs[i], &found));
    PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not mention \"%s\"", what, e->msg, subs[i]);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: caught expected error\n", what));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s\n", e->msg));
  PetscFunctionReturn(0);
}

/* a layer outside a network: type, name, input shape and capacity 2, set up */
static PetscErrorCode StandaloneLayer(NNLayerType type, const char name[], PetscInt ndim, const PetscInt dim[], NNLayer *l)
{
  NNShape s;

  PetscFunctionBegin;
  PetscCall(NNLayerCreate(PETSC_COMM_WORLD, l));
  PetscCall(PetscObjectSetName((PetscObject)*l, name));
  PetscCall(NNLayerSetType(*l, type));
  PetscCall(NNShapeSet(&s, ndim, dim));
  PetscCall(NNLayerSetInputShape(*l, &s));
  PetscCall(NNLayerSetBatchCapacity(*l, 2));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrors(void)
{
  NN             net;
  NNLayer        l, blk;
  Vec            y = NULL;
  ErrCtx         e;
  PetscErrorCode ierr;
  PetscInt       flat[] = {10};

  PetscFunctionBegin;
  /* batchnorm2d on flat features, batchnorm3d on (C,H,W) samples */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, flat));
  PetscCall(NNAddLayer(net, NNLAYERBATCHNORM2D, "bn", NULL));
  PetscCall(Catch(&e));
  ierr = NNSetUp(net);
  PetscCall(Expect(ierr, &e, "batchnorm2d on flat features", 4, (const char *const[]){"bn", "(C,H,W)", "(10)", "batchnorm1d"}));
  PetscCall(NNDestroy(&net));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape2));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERBATCHNORM3D, "bn", NULL));
  PetscCall(Catch(&e));
  ierr = NNSetUp(net);
  PetscCall(Expect(ierr, &e, "batchnorm3d on (C,H,W) samples", 4, (const char *const[]){"bn", "(C,D,H,W)", "sp", "batchnorm2d"}));
  PetscCall(NNDestroy(&net));

  /* batchnorm2d on a sequential (C,H,W) activation: needs to_spatial first */
  PetscCall(StandaloneLayer(NNLAYERBATCHNORM2D, "bn", 3, shape2, &l));
  PetscCall(NNLayerSetUp(l));
  PetscCall(NNLayerSetInputDM(l, NULL));
  PetscCall(Catch(&e));
  ierr = NNLayerCreateOutputVec(l, &y);
  PetscCall(Expect(ierr, &e, "batchnorm2d on a sequential activation", 3, (const char *const[]){"bn", "spatial (DMDA)", NNLAYERTOSPATIAL}));
  /* setters: momentum outside [0,1], non-positive epsilon */
  PetscCall(Catch(&e));
  ierr = NNLayerBatchNormSetMomentum(l, 1.5);
  PetscCall(Expect(ierr, &e, "batchnorm2d momentum 1.5", 3, (const char *const[]){"bn", "momentum", "0 <= momentum <= 1"}));
  PetscCall(Catch(&e));
  ierr = NNLayerBatchNormSetEpsilon(l, 0.0);
  PetscCall(Expect(ierr, &e, "batchnorm2d epsilon 0", 2, (const char *const[]){"bn", "epsilon"}));
  PetscCall(NNLayerDestroy(&l));

  /* residual block on a spatial input whose last inner layer changes the channels */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape2));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "blk", &blk));
  PetscCall(NNLayerResidualAddLayer(blk, NNLAYERBATCHNORM2D, "rbn", NULL));
  PetscCall(NNLayerResidualAddLayer(blk, NNLAYERCONV2D, "rc", &l));
  PetscCall(NNLayerConvSetFilters(l, 5));
  PetscCall(Catch(&e));
  ierr = NNSetUp(net);
  PetscCall(Expect(ierr, &e, "spatial residual block with output (5,6,7) for input (2,6,7)", 5, (const char *const[]){"blk", "rc", "conv2d", "(5,6,7)", "(2,6,7)"}));
  PetscCall(NNDestroy(&net));

  /* residual block on a sequential input whose block outputs a spatial activation of the same shape */
  PetscCall(StandaloneLayer(NNLAYERRESIDUAL, "blk", 3, shape2, &blk));
  PetscCall(NNLayerResidualAddLayer(blk, NNLAYERTOSPATIAL, "tsp", NULL));
  PetscCall(NNLayerSetUp(blk));
  PetscCall(NNLayerSetInputDM(blk, NULL));
  PetscCall(Catch(&e));
  ierr = NNLayerCreateOutputVec(blk, &y);
  PetscCall(Expect(ierr, &e, "residual block with a sequential input and a spatial output", 4, (const char *const[]){"blk", "tsp", "sequential", "same layout"}));
  PetscCall(NNLayerDestroy(&blk));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  for (PetscInt nd = 2; nd <= 3; nd++) {
    PetscCall(TestReference(nd));
    PetscCall(TestAdjoint(nd));
    PetscCall(TestRankEquivalence(nd, PETSC_TRUE));
    PetscCall(TestRankEquivalence(nd, PETSC_FALSE));
    PetscCall(TestGradientCheck(nd, PETSC_TRUE));
    PetscCall(TestGradientCheck(nd, PETSC_FALSE));
  }
  PetscCall(TestResidualRankEquivalence());
  PetscCall(TestResidualGradientCheck(PETSC_TRUE));
  PetscCall(TestResidualGradientCheck(PETSC_FALSE));
  PetscCall(TestErrors());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1

   test:
      suffix: 2
      nsize: 2
      args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sq_da_processors_x 1 -sq_da_processors_y 1 -sq_da_processors_z 2

   test:
      suffix: 3
      nsize: 3
      args: -sp_da_processors_x 3 -sp_da_processors_y 1 -sq_da_processors_x 1 -sq_da_processors_y 1 -sq_da_processors_z 3

   test:
      suffix: 4
      nsize: 4
      args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sq_da_processors_x 2 -sq_da_processors_y 1 -sq_da_processors_z 2

TEST*/
