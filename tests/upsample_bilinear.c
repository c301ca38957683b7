static char help[] = "Bilinear / trilinear upsampling on the spatial (DMDA) layout (upsample -mode bilinear, with and\n"
                     "without align_corners, factors 2 and 3, 2-d and 3-d): the dot-product adjoint test\n"
                     "<F x, y> = <x, F^T y>, a network's loss, parameter gradient and input gradient on the run's\n"
                     "communicator against a serial copy, central finite differences, and clear errors for bad\n"
                     "settings. The PyTorch cross-check is tests/torch_crosscheck_conv_transpose.py.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define NB 3

/* one configuration; in[] in PyTorch order (depth, height, width), 2-d cases use height and width */
typedef struct {
  const char *name;
  PetscInt    nd, C, in[3], scale;
  PetscBool   align;
} Case;

static const Case cases[] = {
  {"bilinear x2",                  2, 2, {1, 6, 7}, 2, PETSC_FALSE},
  {"bilinear x3",                  2, 2, {1, 6, 7}, 3, PETSC_FALSE},
  {"bilinear x2 align_corners",    2, 2, {1, 6, 7}, 2, PETSC_TRUE},
  {"bilinear x3 align_corners",    2, 3, {1, 5, 7}, 3, PETSC_TRUE},
  {"trilinear x2",                 3, 2, {5, 4, 7}, 2, PETSC_FALSE},
  {"trilinear x2 align_corners",   3, 2, {5, 4, 7}, 2, PETSC_TRUE},
};

static PetscErrorCode Report(const char what[], PetscReal a, PetscReal b)
{
  PetscReal err = PetscAbsReal(a - b) / PetscMax(PetscMax(PetscAbsReal(a), PetscAbsReal(b)), 1e-300);

  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.17g vs %.17g, rel. error %.3e\n", what, (double)a, (double)b, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g (%.17g vs %.17g)", what, (double)err, (double)tol, (double)a, (double)b);
  PetscFunctionReturn(0);
}

/* global random values that do not depend on the decomposition */
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

/* the same random numbers on every rank */
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

/* sp (to_spatial, "sp" or "sp3") [-> conv k3 p1] -> up (the case) [-> tanh -> spatial_flatten, mse] */
static PetscErrorCode Build(MPI_Comm comm, const char prefix[], const Case *c, PetscBool full, NN *net)
{
  NNLayer  l;
  PetscInt shape[4] = {c->C, c->in[c->nd == 2 ? 1 : 0], c->in[c->nd == 2 ? 2 : 1], c->in[2]};

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, c->nd + 1, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, c->nd == 2 ? "sp" : "sp3", NULL));
  if (full) { /* parameters before the upsampling, so the finite differences see its backward pass twice */
    PetscCall(NNAddLayer(*net, c->nd == 2 ? NNLAYERCONV2D : NNLAYERCONV3D, "cv", &l));
    PetscCall(NNLayerConvSetFilters(l, 2));
  }
  PetscCall(NNAddLayer(*net, NNLAYERUPSAMPLE, "up", &l));
  PetscCall(NNLayerUpsampleSetScale(l, c->scale));
  PetscCall(NNLayerUpsampleSetMode(l, c->nd == 2 ? "bilinear" : "trilinear"));
  PetscCall(NNLayerUpsampleSetAlignCorners(l, c->align));
  if (full) {
    PetscCall(NNAddLayer(*net, NNLAYERTANH, "a", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* <F x, y> = <x, F^T y> */
static PetscErrorCode TestAdjoint(const Case *c)
{
  NN        net;
  NNLayer   up;
  Vec       x, y, dy, dx;
  PetscReal a, b;
  char      what[128];

  PetscFunctionBegin;
  PetscCall(Build(PETSC_COMM_WORLD, NULL, c, PETSC_FALSE, &net));
  PetscCall(NNGetLayer(net, "up", &up));
  PetscCall(NNGetActivations(net, "up", &x, &y));
  PetscCall(FillGlobal(x, 3));
  PetscCall(VecDuplicate(y, &dy));
  PetscCall(FillGlobal(dy, 4));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(NNBeginLayerCalls(net));
  PetscCall(NNLayerForward(up, NB, x, y));
  PetscCall(VecDot(y, dy, &a));
  PetscCall(NNLayerBackward(up, NB, x, y, dy, dx));
  PetscCall(VecDot(x, dx, &b));
  PetscCall(NNEndLayerCalls(net));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: adjoint", c->name));
  PetscCall(Report(what, a, b));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetLocalSize(*t, &nt));
  PetscCall(VecGetArray(*x, &a));
  PetscCall(FillReplicated(11, nx, a));
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetArray(*t, &a));
  PetscCall(FillReplicated(12, nt, a));
  PetscCall(VecRestoreArray(*t, &a));
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| of two replicated Vecs */
static PetscErrorCode CompareVecs(const char what[], Vec a, Vec b)
{
  PetscReal nb, e;
  Vec       d;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, b, a));
  PetscCall(VecNorm(d, NORM_2, &e));
  PetscCall(VecNorm(b, NORM_2, &nb));
  PetscCall(VecDestroy(&d));
  PetscCheck(nb > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the reference is zero", what);
  PetscCall(Report(what, nb + e, nb));
  PetscFunctionReturn(0);
}

/* loss and gradients on the run's communicator against a serial copy (2 of the 3 slots used), and finite differences */
static PetscErrorCode TestRanksAndFD(const Case *c)
{
  NN        par, ser;
  Vec       x, t, dxp, dxs, gp, gs;
  PetscReal Lp, Ls, ep, ei;
  PetscInt  n = 2;
  char      what[128];

  PetscFunctionBegin;
  PetscCall(Build(PETSC_COMM_WORLD, NULL, c, PETSC_TRUE, &par));
  PetscCall(Build(PETSC_COMM_SELF, "serial_", c, PETSC_TRUE, &ser));
  PetscCall(FillBatch(par, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(NNLossGradient(par, n, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, n, x, t, &Ls, dxs));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: loss, run's communicator vs serial", c->name));
  PetscCall(Report(what, Lp, Ls));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: parameter gradient vs serial", c->name));
  PetscCall(CompareVecs(what, gp, gs));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: input gradient vs serial", c->name));
  PetscCall(CompareVecs(what, dxp, dxs));
  PetscCall(NNGradientCheck(par, n, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: finite differences: parameters %.3e, inputs %.3e\n", c->name, (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: finite-difference check failed: parameters %g, inputs %g", c->name, (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: adjoint, 1 vs N ranks (< 1e-12) and finite differences (< 1e-6) pass\n", c->name));
  PetscFunctionReturn(0);
}

/* set-up with options opts must fail with a message containing expect */
static PetscErrorCode ExpectError(const char name[], PetscBool spatial, const char opts[], const char expect[])
{
  NN             net;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL, **args;
  int            nargs;
  PetscInt       shape[3] = {2, 5, 6};

  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "bad_"));
  PetscCall(NNSetInputShape(net, 3, shape));
  PetscCall(NNSetBatchSize(net, NB));
  if (spatial) PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERUPSAMPLE, "up", NULL));
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

/* an unknown mode given to the setter */
static PetscErrorCode TestSetterError(void)
{
  NN             net;
  NNLayer        l;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNAddLayer(net, NNLAYERUPSAMPLE, "up", &l));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNLayerUpsampleSetMode(l, "bicubic");
  PetscCall(PetscPopErrorHandler());
  PetscCall(NNDestroy(&net));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNLayerUpsampleSetMode(bicubic): expected an error, got none");
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, "unknown mode \"bicubic\"; use nearest or bilinear", &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the error message \"%s\" does not name the mode and the valid ones", msg ? msg : "");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNLayerUpsampleSetMode(bicubic): clear error\n"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(cases); i++) {
    PetscCall(TestAdjoint(&cases[i]));
    PetscCall(TestRanksAndFD(&cases[i]));
  }
  PetscCall(ExpectError("bilinear on a sequential input", PETSC_FALSE, "-bad_up_mode bilinear", "needs a spatial (DMDA) input"));
  PetscCall(ExpectError("unknown mode option", PETSC_TRUE, "-bad_up_mode bicubic", "Layer up (upsample): unknown -bad_up_mode bicubic; use nearest or bilinear"));
  PetscCall(ExpectError("zero scale with bilinear", PETSC_TRUE, "-bad_up_mode bilinear -bad_up_scale 0", "-bad_up_scale 0 must be a positive integer"));
  PetscCall(TestSetterError());
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
      args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sp3_da_processors_x 1 -sp3_da_processors_y 1 -sp3_da_processors_z 2

   test:
      suffix: 3
      nsize: 3
      args: -sp_da_processors_x 3 -sp_da_processors_y 1 -sp3_da_processors_x 3 -sp3_da_processors_y 1 -sp3_da_processors_z 1

   test:
      suffix: 4
      nsize: 4
      args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sp3_da_processors_x 2 -sp3_da_processors_y 1 -sp3_da_processors_z 2

TEST*/
