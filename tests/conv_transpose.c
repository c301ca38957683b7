static char help[] = "Transposed convolutions on the spatial (DMDA) layout (conv_transpose2d, conv_transpose3d): for\n"
                     "configurations with stride 1, 2 and 3, padding, output padding, dilation and groups, the\n"
                     "dot-product adjoint tests <F x, y> = <x, F^T y> in the input direction (no bias) and the\n"
                     "parameter direction, a network's loss, parameter gradient and input gradient on the run's\n"
                     "communicator against a serial copy, central finite differences, the U-Net layout (max pool by\n"
                     "2 then conv_transpose k2 s2 gives back the encoder's DMDA ranges) and clear errors for bad\n"
                     "configurations. The PyTorch cross-check is tests/torch_crosscheck_conv_transpose.py.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define NB 3

/* one configuration; in[] in PyTorch order (depth, height, width), 2-d cases use height and width */
typedef struct {
  const char *name;
  PetscInt    nd, C, F, in[3];
  PetscInt    k, s, p, op, dil, groups;
} Case;

static const Case cases[] = {
  {"2-d k2 s2",               2, 2, 3, {1, 6, 7}, 2, 2, 0, 0, 1, 1},
  {"2-d k3 s1 p1",            2, 2, 3, {1, 6, 7}, 3, 1, 1, 0, 1, 1},
  {"2-d k3 s1 p0",            2, 3, 2, {1, 6, 7}, 3, 1, 0, 0, 1, 1},
  {"2-d k3 s2 p1 op1",        2, 2, 3, {1, 6, 7}, 3, 2, 1, 1, 1, 1},
  {"2-d k4 s2 p1",            2, 2, 2, {1, 6, 7}, 4, 2, 1, 0, 1, 1},
  {"2-d k3 s2 d2 p2 op1 g2",  2, 4, 2, {1, 6, 7}, 3, 2, 2, 1, 2, 2},
  {"2-d k3 s3 p1 op2",        2, 2, 2, {1, 6, 7}, 3, 3, 1, 2, 1, 1},
  {"3-d k2 s2",               3, 2, 2, {5, 4, 7}, 2, 2, 0, 0, 1, 1},
  {"3-d k3 s1 p1",            3, 2, 2, {5, 4, 7}, 3, 1, 1, 0, 1, 1},
  {"3-d k3 s2 p1 op1",        3, 2, 3, {5, 4, 7}, 3, 2, 1, 1, 1, 1},
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

/* sp (to_spatial, "sp" or "sp3") -> ct (the case) [-> tanh -> spatial_flatten, mse] */
static PetscErrorCode Build(MPI_Comm comm, const char prefix[], const Case *c, PetscBool bias, PetscBool full, NN *net)
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
  PetscCall(NNAddLayer(*net, c->nd == 2 ? NNLAYERCONVTRANSPOSE2D : NNLAYERCONVTRANSPOSE3D, "ct", &l));
  PetscCall(NNLayerConvSetFilters(l, c->F));
  PetscCall(NNLayerConvSetKernelSize(l, c->k));
  PetscCall(NNLayerConvSetStride(l, c->s));
  PetscCall(NNLayerConvSetPadding(l, c->p));
  PetscCall(NNLayerConvTransposeSetOutputPadding(l, c->op));
  PetscCall(NNLayerConvSetDilation(l, c->dil));
  PetscCall(NNLayerConvSetGroups(l, c->groups));
  PetscCall(NNLayerConvSetBias(l, bias));
  if (full) {
    PetscCall(NNAddLayer(*net, NNLAYERTANH, "a", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* <F x, y> = <x, F^T y> without bias (input direction) and <F(theta) x, y> = <theta, dtheta> with bias (parameter direction) */
static PetscErrorCode TestAdjoints(const Case *c)
{
  NN           net;
  NNLayer      ct;
  Vec          x, y, dy, dx;
  PetscScalar *th, *dth;
  PetscInt     np;
  PetscReal    a, b;
  char         what[128];

  PetscFunctionBegin;
  for (PetscInt dir = 0; dir < 2; dir++) {
    PetscCall(Build(PETSC_COMM_WORLD, NULL, c, dir ? PETSC_TRUE : PETSC_FALSE, PETSC_FALSE, &net));
    PetscCall(NNGetLayer(net, "ct", &ct));
    PetscCall(NNGetActivations(net, "ct", &x, &y));
    PetscCall(NNBeginLayerCalls(net));
    PetscCall(NNGetLayerParameters(net, "ct", &np, &th));
    PetscCall(NNGetLayerGradient(net, "ct", NULL, &dth));
    PetscCall(FillGlobal(x, 3));
    PetscCall(VecDuplicate(y, &dy));
    PetscCall(FillGlobal(dy, 4));
    PetscCall(VecDuplicate(x, &dx));
    if (dir) PetscCall(FillReplicated(9, np, th));
    PetscCall(PetscArrayzero(dth, np));
    PetscCall(NNLayerForward(ct, NB, x, y));
    PetscCall(VecDot(y, dy, &a));
    PetscCall(NNLayerBackward(ct, NB, x, y, dy, dx));
    if (dir) {
      b = 0;
      for (PetscInt i = 0; i < np; i++) b += th[i] * dth[i];
    } else PetscCall(VecDot(x, dx, &b));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s: adjoint, %s direction", c->name, dir ? "parameter" : "input"));
    PetscCall(Report(what, a, b));
    PetscCall(NNRestoreLayerGradient(net, "ct", &dth));
    PetscCall(NNRestoreLayerParameters(net, "ct", &th));
    PetscCall(NNEndLayerCalls(net));
    PetscCall(VecDestroy(&dy));
    PetscCall(VecDestroy(&dx));
    PetscCall(NNDestroy(&net));
  }
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
  PetscCall(Build(PETSC_COMM_WORLD, NULL, c, PETSC_TRUE, PETSC_TRUE, &par));
  PetscCall(Build(PETSC_COMM_SELF, "serial_", c, PETSC_TRUE, PETSC_TRUE, &ser));
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
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: adjoints, 1 vs N ranks (< 1e-12) and finite differences (< 1e-6) pass\n", c->name));
  PetscFunctionReturn(0);
}

/* to_spatial -> maxpool k2 -> conv_transpose k2 s2: the output DMDA has the to_spatial output's grid and ranges */
static PetscErrorCode TestUNetLayout(PetscInt nd)
{
  NN              net;
  NNLayer         l;
  PetscInt        shape[4] = {2, nd == 2 ? 8 : 4, nd == 2 ? 12 : 8, 12};
  Vec             a, b;
  DM              da, db;
  PetscInt        dim, M[2][3], r[2][3];
  const PetscInt *lr[2][3];

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, nd + 1, shape));
  PetscCall(NNSetBatchSize(net, 2));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, nd == 2 ? "sp" : "sp3", NULL));
  PetscCall(NNAddLayer(net, nd == 2 ? NNLAYERMAXPOOL2D : NNLAYERMAXPOOL3D, "pool", &l));
  PetscCall(NNAddLayer(net, nd == 2 ? NNLAYERCONVTRANSPOSE2D : NNLAYERCONVTRANSPOSE3D, "up", &l));
  PetscCall(NNLayerConvSetFilters(l, 2)); /* kernel 2 and stride 2 are the defaults */
  PetscCall(NNSetUp(net));
  PetscCall(NNGetActivations(net, nd == 2 ? "sp" : "sp3", NULL, &a));
  PetscCall(NNGetActivations(net, "up", NULL, &b));
  PetscCall(VecGetDM(a, &da));
  PetscCall(VecGetDM(b, &db));
  PetscCall(DMDAGetInfo(da, &dim, &M[0][0], &M[0][1], &M[0][2], &r[0][0], &r[0][1], &r[0][2], NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetInfo(db, NULL, &M[1][0], &M[1][1], &M[1][2], &r[1][0], &r[1][1], &r[1][2], NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetOwnershipRanges(da, &lr[0][0], &lr[0][1], &lr[0][2]));
  PetscCall(DMDAGetOwnershipRanges(db, &lr[1][0], &lr[1][1], &lr[1][2]));
  for (PetscInt ax = 0; ax < dim; ax++) {
    PetscCheck(M[0][ax] == M[1][ax] && r[0][ax] == r[1][ax], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "U-Net layout: axis %" PetscInt_FMT ": %" PetscInt_FMT " pixels over %" PetscInt_FMT " ranks before, %" PetscInt_FMT " over %" PetscInt_FMT " after", ax, M[0][ax], r[0][ax], M[1][ax], r[1][ax]);
    for (PetscInt i = 0; i < r[0][ax]; i++) PetscCheck(lr[0][ax][i] == lr[1][ax][i], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "U-Net layout: axis %" PetscInt_FMT ", rank %" PetscInt_FMT ": %" PetscInt_FMT " pixels before, %" PetscInt_FMT " after", ax, i, lr[0][ax][i], lr[1][ax][i]);
  }
  PetscCall(NNDestroy(&net));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT "-d U-Net layout: maxpool 2 then conv_transpose k2 s2 gives back the encoder's DMDA ranges\n", nd));
  PetscFunctionReturn(0);
}

/* set-up with options opts must fail with a message containing expect */
static PetscErrorCode ExpectError(const char name[], PetscInt nd, PetscBool spatial, const char opts[], const char expect[])
{
  NN             net;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL, **args;
  int            nargs;
  PetscInt       shape[4] = {2, 5, 6, 7};

  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "bad_"));
  PetscCall(NNSetInputShape(net, nd + 1, shape));
  PetscCall(NNSetBatchSize(net, NB));
  if (spatial) PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, nd == 2 ? NNLAYERCONVTRANSPOSE2D : NNLAYERCONVTRANSPOSE3D, "ct", NULL));
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

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(cases); i++) {
    PetscCall(TestAdjoints(&cases[i]));
    PetscCall(TestRanksAndFD(&cases[i]));
  }
  PetscCall(TestUNetLayout(2));
  PetscCall(TestUNetLayout(3));
  PetscCall(ExpectError("output padding not below stride or dilation", 2, PETSC_TRUE, "-bad_ct_filters 2 -bad_ct_stride 2 -bad_ct_output_padding 2", "Layer ct (conv_transpose2d): output padding 2 along the width must be non-negative and smaller than the stride 2 or the dilation 1 (-bad_ct_output_padding)"));
  PetscCall(ExpectError("padding leaving no output", 2, PETSC_TRUE, "-bad_ct_filters 2 -bad_ct_kernel 1 -bad_ct_stride 1 -bad_ct_padding 4", "must be positive (-bad_ct_padding too large)"));
  PetscCall(ExpectError("negative padding", 3, PETSC_TRUE, "-bad_ct_filters 2 -bad_ct_padding -1", "padding -1 along the width must be non-negative (-bad_ct_padding)"));
  PetscCall(ExpectError("zero stride", 2, PETSC_TRUE, "-bad_ct_filters 2 -bad_ct_stride 0", "stride 0 along the width must be positive (-bad_ct_stride)"));
  PetscCall(ExpectError("no filters", 2, PETSC_TRUE, "-bad_ct_kernel 3", "give a positive -bad_ct_filters"));
  PetscCall(ExpectError("groups not dividing the channels", 2, PETSC_TRUE, "-bad_ct_filters 3 -bad_ct_groups 2", "must divide both the 2 input channels and the 3 filters"));
  PetscCall(ExpectError("three kernel sizes for conv_transpose2d", 2, PETSC_TRUE, "-bad_ct_filters 2 -bad_ct_kernel 3,3,3", "-bad_ct_kernel takes 1 or 2 values (height,width)"));
  PetscCall(ExpectError("sequential input", 2, PETSC_FALSE, "-bad_ct_filters 2", "needs a spatial (DMDA) input"));
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size == 3) { /* width 6 over 3 ranks: 2 inputs each */
      PetscCall(ExpectError("last rank without outputs", 2, PETSC_TRUE, "-bad_sp_da_processors_x 3 -bad_sp_da_processors_y 1 -bad_ct_filters 2 -bad_ct_kernel 1 -bad_ct_padding 2", "Layer ct (conv_transpose2d): rank 2 along the width gets no output pixels"));
      PetscCall(ExpectError("halo wider than a rank's inputs", 2, PETSC_TRUE, "-bad_sp_da_processors_x 3 -bad_sp_da_processors_y 1 -bad_ct_filters 2 -bad_ct_kernel 1,7 -bad_ct_stride 1", "Layer ct (conv_transpose2d) needs a halo of 4 pixels but rank 0 along the width holds only 2 of the 6 input pixels"));
    }
  }
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

   testset:
      requires: torch
      timeoutfactor: 2
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_conv_transpose.py ${PETNN_BINARY_DIR}/examples/nnrun ${PETNN_BINARY_DIR}/tests/crosscheck_spatial --nsize ${nsize} --mpiexec "${mpiexec}"
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
      requires: torch
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_conv_transpose.py ${PETNN_BINARY_DIR}/examples/nnrun ${PETNN_BINARY_DIR}/tests/crosscheck_spatial --perturb 1e-8 --only "conv_transpose2d k3 s2 p1 op1,conv_transpose3d k3 s2,upsample bilinear x3,upsample trilinear x2,encoder-decoder ("

TEST*/
