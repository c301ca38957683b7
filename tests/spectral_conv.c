static char help[] = "Fourier neural operator layers (spectral_conv2d, spectral_conv3d) on the spatial (DMDA) layout:\n"
                     "dot-product adjoint tests of the whole layer (input and parameter directions), the N-rank\n"
                     "network against a serial copy on PETSC_COMM_SELF (outputs, input and parameter gradients,\n"
                     "full and partial batches), central finite differences of small networks with odd grids, and\n"
                     "clear errors for bad configurations.\n\n"
                     "  -verbose   print the measured errors\n"
                     "  -fd <bool> run the finite-difference checks (default true)\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool verbose = PETSC_FALSE, fdcheck = PETSC_TRUE;

#define NB 3 /* batch capacity */

/* one configuration; grid and modes in PyTorch order ((depth,) height, width) */
typedef struct {
  const char *name;
  PetscInt    nd, C, F, in[3], modes[3];
  PetscBool   linear;
} Case;

static PetscErrorCode Check(const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: rel. error %.3e\n", what, (double)err));
  PetscCheck(err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g > %g", what, (double)err, (double)tol);
  PetscFunctionReturn(0);
}

static PetscErrorCode FillReplicated(unsigned long seed, PetscInt n, PetscScalar *a)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, seed));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillGlobal(Vec v, unsigned long seed)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, seed));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* sp (to_spatial) -> sc (the case's layer) -> [tanh] -> sf (spatial_flatten); prefix "ser_" for the serial copy */
static PetscErrorCode BuildNet(MPI_Comm comm, const Case *c, const char prefix[], PetscBool head, NN *net)
{
  NNLayer  l;
  PetscInt shape[4] = {c->C, c->in[0], c->in[1], c->in[2]};

  PetscFunctionBegin;
  if (c->nd == 2) {
    shape[1] = c->in[1];
    shape[2] = c->in[2];
  }
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, c->nd + 1, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, c->nd == 2 ? "sp" : "sp3", NULL));
  PetscCall(NNAddLayer(*net, c->nd == 2 ? NNLAYERSPECTRALCONV2D : NNLAYERSPECTRALCONV3D, "sc", &l));
  PetscCall(NNLayerSpectralConvSetFilters(l, c->F));
  PetscCall(NNLayerSpectralConvSetModes(l, c->nd, c->nd == 2 ? c->modes + 1 : c->modes));
  PetscCall(NNLayerSpectralConvSetLinear(l, c->linear));
  if (head) PetscCall(NNAddLayer(*net, NNLAYERTANH, "act", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  if (verbose) PetscCall(NNView(*net, PETSC_VIEWER_STDOUT_(comm)));
  PetscFunctionReturn(0);
}

static PetscErrorCode SetPointers(NN net, PetscScalar **th, PetscScalar **dth, PetscBool set)
{
  PetscFunctionBegin;
  if (set) {
    PetscCall(NNBeginLayerCalls(net));
    PetscCall(NNGetLayerParameters(net, "sc", NULL, th));
    PetscCall(NNGetLayerGradient(net, "sc", NULL, dth));
  } else {
    PetscCall(NNRestoreLayerGradient(net, "sc", dth));
    PetscCall(NNRestoreLayerParameters(net, "sc", th));
    PetscCall(NNEndLayerCalls(net));
  }
  PetscFunctionReturn(0);
}

/* <F x, dy> = <x, F* dy> on the DMDA Vecs: input direction (bias zeroed: F is linear in x) and
   parameter direction (F is linear in the parameters for a fixed x) */
static PetscErrorCode TestAdjoint(const Case *c)
{
  NN           net;
  NNLayer      sc;
  PetscScalar *th, *dth;
  Vec          x, y, dy, dx;
  PetscReal    a, b, ab;
  PetscInt     np, nw;
  char         what[256];

  PetscFunctionBegin;
  PetscCall(BuildNet(PETSC_COMM_WORLD, c, NULL, PETSC_FALSE, &net));
  PetscCall(NNGetLayer(net, "sc", &sc));
  PetscCall(NNLayerGetNumParameters(sc, &np));
  nw = np - (c->linear ? c->F : 0);
  PetscCall(NNGetActivations(net, "sc", &x, &y));
  PetscCall(VecDuplicate(y, &dy));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(SetPointers(net, &th, &dth, PETSC_TRUE));
  PetscCall(FillReplicated(31, np, th));
  PetscCall(PetscArrayzero(th + nw, np - nw));
  PetscCall(FillGlobal(x, 32));
  PetscCall(FillGlobal(dy, 33));
  PetscCall(NNLayerForward(sc, NB, x, y));
  PetscCall(VecDot(y, dy, &a));
  PetscCall(NNLayerBackward(sc, NB, x, y, dy, dx));
  PetscCall(VecDot(x, dx, &b));
  ab = PetscAbsReal(a - b) / PetscMax(PetscAbsReal(a), PetscAbsReal(b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: adjoint, input direction (%.17g vs %.17g)", c->name, (double)a, (double)b));
  PetscCall(Check(what, ab, 1e-13));

  PetscCall(FillReplicated(34, np, th));
  PetscCall(PetscArrayzero(dth, np));
  PetscCall(NNLayerForward(sc, NB, x, y));
  PetscCall(VecDot(y, dy, &a));
  PetscCall(NNLayerBackward(sc, NB, x, y, dy, NULL));
  b = 0;
  for (PetscInt i = 0; i < np; i++) b += PetscRealPart(th[i] * dth[i]);
  ab = PetscAbsReal(a - b) / PetscMax(PetscAbsReal(a), PetscAbsReal(b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: adjoint, parameter direction (%.17g vs %.17g)", c->name, (double)a, (double)b));
  PetscCall(Check(what, ab, 1e-13));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: adjoint tests in the input and parameter directions: rel. error <= 1e-13\n", c->name));
  PetscCall(SetPointers(net, &th, &dth, PETSC_FALSE));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* sp -> sc -> sf on n samples of the replicated x, backward from the replicated dy: y, dx, the layer's gradient */
static PetscErrorCode RunNet(NN net, PetscInt n, const PetscScalar *th0, const PetscScalar *x, const PetscScalar *dy, PetscScalar *y, PetscScalar *dx, PetscScalar *g)
{
  PetscScalar   *th, *dth, *a;
  const NNLayer *layers;
  const Vec     *act, *dact;
  PetscInt       nx, ny, np;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, NULL, &layers));
  PetscCall(NNGetActivationVecs(net, NULL, &act, &dact));
  PetscCall(NNLayerGetNumParameters(layers[1], &np));
  PetscCall(SetPointers(net, &th, &dth, PETSC_TRUE));
  PetscCall(PetscArraycpy(th, th0, np));
  PetscCall(PetscArrayzero(dth, np));
  PetscCall(VecGetLocalSize(act[0], &nx));
  PetscCall(VecGetLocalSize(act[3], &ny));
  PetscCall(VecGetArrayWrite(act[0], &a));
  PetscCall(PetscArraycpy(a, x, nx));
  PetscCall(VecRestoreArrayWrite(act[0], &a));
  for (PetscInt i = 0; i < 3; i++) PetscCall(NNLayerForward(layers[i], n, act[i], act[i + 1]));
  PetscCall(VecGetArrayWrite(dact[3], &a));
  PetscCall(PetscArraycpy(a, dy, ny));
  PetscCall(VecRestoreArrayWrite(dact[3], &a));
  for (PetscInt i = 2; i >= 0; i--) PetscCall(NNLayerBackward(layers[i], n, act[i], act[i + 1], dact[i + 1], dact[i]));
  PetscCall(VecGetArrayRead(act[3], (const PetscScalar **)&a));
  PetscCall(PetscArraycpy(y, a, ny));
  PetscCall(VecRestoreArrayRead(act[3], (const PetscScalar **)&a));
  PetscCall(VecGetArrayRead(dact[0], (const PetscScalar **)&a));
  PetscCall(PetscArraycpy(dx, a, nx));
  PetscCall(VecRestoreArrayRead(dact[0], (const PetscScalar **)&a));
  PetscCall(PetscArraycpy(g, dth, np));
  PetscCall(SetPointers(net, &th, &dth, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscReal RelErr(PetscInt m, const PetscScalar *a, const PetscScalar *b)
{
  PetscReal e = 0, nb = 0;

  for (PetscInt i = 0; i < m; i++) {
    e  = PetscMax(e, PetscAbsScalar(a[i] - b[i]));
    nb = PetscMax(nb, PetscAbsScalar(b[i]));
  }
  return nb > 0 ? e / nb : (e > 0 ? 1.0 : 0.0);
}

/* the network on all ranks against a serial copy on PETSC_COMM_SELF, full and partial batch */
static PetscErrorCode TestSerial(const Case *c)
{
  NN           net, ser;
  NNLayer      sc;
  PetscScalar *th, *x, *dy, *y[2], *dx[2], *g[2];
  PetscInt     np, nx, ny, n;
  const Vec   *act;
  char         what[256];

  PetscFunctionBegin;
  PetscCall(BuildNet(PETSC_COMM_WORLD, c, NULL, PETSC_FALSE, &net));
  PetscCall(BuildNet(PETSC_COMM_SELF, c, "ser_", PETSC_FALSE, &ser));
  PetscCall(NNGetLayer(net, "sc", &sc));
  PetscCall(NNLayerGetNumParameters(sc, &np));
  PetscCall(NNGetActivationVecs(net, NULL, &act, NULL));
  PetscCall(VecGetLocalSize(act[0], &nx));
  PetscCall(VecGetLocalSize(act[3], &ny));
  PetscCall(PetscMalloc4(np, &th, nx, &x, ny, &dy, 2 * np, &g[0]));
  PetscCall(PetscMalloc4(ny, &y[0], ny, &y[1], nx, &dx[0], nx, &dx[1]));
  g[1] = g[0] + np;
  PetscCall(FillReplicated(51, np, th));
  PetscCall(FillReplicated(52, nx, x));
  PetscCall(FillReplicated(53, ny, dy));
  for (n = NB; n >= 2; n--) {
    PetscCall(RunNet(net, n, th, x, dy, y[0], dx[0], g[0]));
    PetscCall(RunNet(ser, n, th, x, dy, y[1], dx[1], g[1]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %" PetscInt_FMT " of %d samples: N ranks vs 1, output", c->name, n, NB));
    PetscCall(Check(what, RelErr(n * ny / NB, y[0], y[1]), 1e-12));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %" PetscInt_FMT " of %d samples: N ranks vs 1, input gradient", c->name, n, NB));
    PetscCall(Check(what, RelErr(n * nx / NB, dx[0], dx[1]), 1e-12));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %" PetscInt_FMT " of %d samples: N ranks vs 1, parameter gradient", c->name, n, NB));
    PetscCall(Check(what, RelErr(np, g[0], g[1]), 1e-12));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: N ranks and 1 rank agree (outputs, input and parameter gradients, full and partial batch): rel. error <= 1e-12\n", c->name));
  PetscCall(PetscFree4(th, x, dy, g[0]));
  PetscCall(PetscFree4(y[0], y[1], dx[0], dx[1]));
  PetscCall(NNDestroy(&net));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

/* central finite differences of sp -> sc -> tanh -> sf, mse, on 2 of 3 samples */
static PetscErrorCode TestFiniteDifferences(const Case *c)
{
  NN           net;
  Vec          x, t;
  PetscScalar *a;
  PetscInt     nx, nt;
  PetscReal    ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildNet(PETSC_COMM_WORLD, c, NULL, PETSC_TRUE, &net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(x, &a));
  PetscCall(FillReplicated(41, nx, a));
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetArray(t, &a));
  PetscCall(FillReplicated(42, nt, a));
  PetscCall(VecRestoreArray(t, &a));
  PetscCall(NNGradientCheck(net, 2, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s finite differences: parameters %.3e, inputs %.3e\n", c->name, (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: finite-difference check failed: parameters %g, inputs %g", c->name, (double)ep, (double)ei);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: finite differences of input and parameter gradients agree: rel. error < 1e-6\n", c->name));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* a small FNO (lift 1x1, 2 x [spectral_conv2d + gelu], projection 1x1, MSE on the spatial output) trained by
   Adam: 30 full-batch steps lower the loss toward a smooth target */
static PetscErrorCode TestTrainFNO(void)
{
  NN           net;
  NNLayer      l;
  NNOpt        opt;
  Vec          x, t, theta, grad;
  PetscScalar *a;
  PetscInt     shape[3] = {2, 8, 9}, m[2] = {3, 4}, nx;
  PetscReal    first, loss;
  const char  *sc[2] = {"sc1", "sc2"}, *act[2] = {"act1", "act2"};

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape));
  PetscCall(NNSetBatchSize(net, NB));
  PetscCall(NNSetSeed(net, 11));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "lift", &l));
  PetscCall(NNLayerConvSetFilters(l, 4));
  PetscCall(NNLayerConvSetKernelSize(l, 1));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(NNAddLayer(net, NNLAYERSPECTRALCONV2D, sc[k], &l));
    PetscCall(NNLayerSpectralConvSetFilters(l, 4));
    PetscCall(NNLayerSpectralConvSetModes(l, 2, m));
    PetscCall(NNAddLayer(net, NNLAYERGELU, act[k], NULL));
  }
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "proj", &l));
  PetscCall(NNLayerConvSetFilters(l, 1));
  PetscCall(NNLayerConvSetKernelSize(l, 1));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetArray(x, &a));
  PetscCall(FillReplicated(61, nx, a));
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecSet(t, 0.25));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNOptSetType(opt, NNOPTADAM));
  PetscCall(NNOptSetLearningRate(opt, 0.02));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(NNGetGradient(net, &grad));
  PetscCall(NNOptSetUp(opt, theta));
  PetscCall(NNLossGradient(net, NB, x, t, &first, NULL));
  for (PetscInt s = 0; s < 30; s++) {
    PetscCall(NNLossGradient(net, NB, x, t, &loss, NULL));
    PetscCall(NNOptStep(opt, theta, grad));
  }
  PetscCall(NNLossGradient(net, NB, x, t, &loss, NULL));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  FNO training: MSE %.6e -> %.6e\n", (double)first, (double)loss));
  PetscCheck(loss < 0.2 * first, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "30 Adam steps of a small FNO: MSE %g -> %g, expected at least a factor 5 lower", (double)first, (double)loss);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "small FNO (lift, 2 x [spectral_conv2d + gelu], projection): 30 Adam steps lower the MSE at least 5-fold\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* a bad configuration fails at set-up with a message containing expect (and does not leak) */
static PetscErrorCode ExpectError(const char name[], PetscInt ndim, const PetscInt shape[], PetscBool spatial, NNLayerType type, const char opts[], const char expect[])
{
  NN             net;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL, **args;
  int            nargs;

  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "bad_"));
  PetscCall(NNSetInputShape(net, ndim, shape));
  PetscCall(NNSetBatchSize(net, NB));
  if (spatial) PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, type, "sc", NULL));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetFromOptions(net);
  if (!ierr) ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCall(NNDestroy(&net));
  PetscCall(PetscStrToArray(opts, ' ', &nargs, &args));
  for (int i = 0; i < nargs; i++)
    if (args[i][0] == '-' && !(args[i][1] >= '0' && args[i][1] <= '9')) PetscCall(PetscOptionsClearValue(NULL, args[i]));
  PetscCall(PetscStrToArrayDestroy(nargs, args));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrors(void)
{
  const PetscInt s2[3] = {2, 7, 8}, s3[4] = {2, 4, 5, 6};

  PetscFunctionBegin;
  PetscCall(ExpectError("modes too large along H", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2 -bad_sc_modes 4,3", "-bad_sc_modes value 4 (m1, along the height H of 7) must be in [1, 3]"));
  PetscCall(ExpectError("modes too large along W", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2 -bad_sc_modes 2,6", "-bad_sc_modes value 6 (m2, along the width W of 8) must be in [1, 5]"));
  PetscCall(ExpectError("3-d modes too large along H", 4, s3, PETSC_TRUE, NNLAYERSPECTRALCONV3D, "-bad_sc_filters 2 -bad_sc_modes 2,3,2", "-bad_sc_modes value 3 (m2, along the height H of 5) must be in [1, 2]"));
  PetscCall(ExpectError("modes missing", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2", "needs -bad_sc_modes with 2 values (m1,m2), got 0"));
  PetscCall(ExpectError("modes of the wrong count", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2 -bad_sc_modes 1,1,1", "needs -bad_sc_modes with 2 values (m1,m2), got 3"));
#if defined(PETSC_USE_64BIT_INDICES) /* 4e17 filters x 3 channels x 15 modes x 2 > 2^63 - 1 */
  PetscCall(ExpectError("too many weights", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 400000000000000000 -bad_sc_modes 3,5", "make more weights than a PetscInt counts"));
#else
  PetscCall(ExpectError("too many weights", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2000000000 -bad_sc_modes 3,5", "make more weights than a PetscInt counts"));
#endif
  PetscCall(ExpectError("filters missing", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_modes 2,2", "give a positive -bad_sc_filters"));
  PetscCall(ExpectError("non-spatial input", 3, s2, PETSC_FALSE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2 -bad_sc_modes 2,2", "needs a spatial (DMDA) input"));
  PetscCall(ExpectError("2-d layer on 3-d samples", 4, s3, PETSC_TRUE, NNLAYERSPECTRALCONV2D, "-bad_sc_filters 2 -bad_sc_modes 2,2", "use spectral_conv3d for (C,D,H,W) samples"));
  PetscCall(ExpectError("3-d layer on 2-d samples", 3, s2, PETSC_TRUE, NNLAYERSPECTRALCONV3D, "-bad_sc_filters 2 -bad_sc_modes 2,2,2", "use spectral_conv2d for (C,H,W) samples"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  /* odd and even grids; modes at their largest (m1 = H/2, m_last = W/2+1: the Nyquist column) and smaller */
  const Case cases[] = {
    {"2-d 7x8 C3 F2 modes 3,5",          2, 3, 2, {1, 7, 8},  {1, 3, 5},  PETSC_TRUE },
    {"2-d 6x5 C2 F3 modes 2,2 no linear", 2, 2, 3, {1, 6, 5},  {1, 2, 2},  PETSC_FALSE},
    {"2-d 9x10 C2 F2 modes 4,3",         2, 2, 2, {1, 9, 10}, {1, 4, 3},  PETSC_TRUE },
    {"3-d 5x4x6 C2 F2 modes 2,2,4",      3, 2, 2, {5, 4, 6},  {2, 2, 4},  PETSC_TRUE },
    {"3-d 4x5x5 C2 F3 modes 1,2,2",      3, 2, 3, {4, 5, 5},  {1, 2, 2},  PETSC_TRUE },
  };

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-fd", &fdcheck, NULL));
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(cases); i++) {
    PetscCall(TestAdjoint(&cases[i]));
    PetscCall(TestSerial(&cases[i]));
    if (fdcheck) PetscCall(TestFiniteDifferences(&cases[i]));
  }
  PetscCall(TestTrainFNO());
  PetscCall(TestErrors());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
      requires: petnn_fftw
      test:
         suffix: 1
         nsize: 1
      test:
         suffix: 2
         nsize: 2
         args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sp3_da_processors_x 1 -sp3_da_processors_y 1 -sp3_da_processors_z 2
      test:
         suffix: 3
         nsize: 3
         args: -sp_da_processors_x 3 -sp_da_processors_y 1 -sp3_da_processors_x 1 -sp3_da_processors_y 3 -sp3_da_processors_z 1 -fd 0
      test:
         suffix: 3y
         nsize: 3
         args: -sp_da_processors_x 1 -sp_da_processors_y 3 -sp3_da_processors_x 3 -sp3_da_processors_y 1 -sp3_da_processors_z 1 -fd 0
      test:
         suffix: 4
         nsize: 4
         args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sp3_da_processors_x 2 -sp3_da_processors_y 1 -sp3_da_processors_z 2
      # the spectrum in the slab layout (FFTW transposes back after every r2c)
      test:
         suffix: 3_slab
         nsize: 3
         args: -sp_da_processors_x 1 -sp_da_processors_y 3 -sp3_da_processors_x 1 -sp3_da_processors_y 1 -sp3_da_processors_z 3 -fd 0 -sc_fftw_transposed 0 -ser_sc_fftw_transposed 0
      test:
         suffix: 4_slab
         nsize: 4
         args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sp3_da_processors_x 2 -sp3_da_processors_y 1 -sp3_da_processors_z 2 -sc_fftw_transposed 0 -ser_sc_fftw_transposed 0 -sc_fftw_plan measure

   # against a torch.fft implementation of the reference SpectralConv2d/3d (+ the 1x1 convolution) and
   # small FNOs, forward, backward and 3 Adam steps (tests/torch_crosscheck_fno.py), on uneven rank grids
   testset:
      requires: torch petnn_fftw
      timeoutfactor: 2
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_fno.py ${PETNN_BINARY_DIR}/examples/nnrun ${PETNN_BINARY_DIR}/tests/crosscheck_spatial --nsize ${nsize} --mpiexec "${mpiexec}"
      test:
         suffix: torch_1
         nsize: 1
      test:
         suffix: torch_3
         nsize: 3
      test:
         suffix: torch_4
         nsize: 4

   # the comparison can fail: PetNN gets the inputs scaled by 1 + 1e-8 and every case must notice
   test:
      suffix: torch_perturbed
      requires: torch petnn_fftw
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_fno.py ${PETNN_BINARY_DIR}/examples/nnrun ${PETNN_BINARY_DIR}/tests/crosscheck_spatial --perturb 1e-8 --only "spectral_conv2d even,spectral_conv3d modes 3,fno 2-d"

TEST*/
