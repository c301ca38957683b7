static char help[] = "Spatial (DMDA) layers: dot-product adjoint tests of the halo exchange, to_spatial, conv2d\n"
                     "(input and parameter directions) and spatial_flatten; a CNN's loss and gradient on the run's\n"
                     "communicator against a serial copy on PETSC_COMM_SELF; finite-difference checks.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool verbose = PETSC_FALSE;
static const PetscReal tol = 1e-12;

#define C_IN  2
#define H_IN  6
#define W_IN  7
#define NB    3

static PetscErrorCode Report(const char what[], PetscReal a, PetscReal b)
{
  PetscReal err = PetscAbsReal(a - b) / PetscMax(PetscMax(PetscAbsReal(a), PetscAbsReal(b)), 1e-300);

  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.17g vs %.17g, rel. error %.3e\n", what, (double)a, (double)b, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g (%.17g vs %.17g)", what, (double)err, (double)tol, (double)a, (double)b);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rel. error < 1e-12\n", what));
  PetscFunctionReturn(0);
}

/* the same random numbers on every rank (replicated Vecs and parameters) */
static PetscErrorCode FillReplicated(PetscRandom r, PetscInt n, PetscScalar *a)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscFunctionReturn(0);
}

/* global random values that do not depend on the decomposition */
static PetscErrorCode FillGlobal(Vec v)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetFromOptions(r));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode LocalDot(Vec a, Vec b, PetscReal *d)
{
  const PetscScalar *x, *y;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  *d = 0;
  for (PetscInt i = 0; i < n; i++) *d += x[i] * y[i];
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscFunctionReturn(0);
}

/* <G x, y> = <x, G* y>: G = DMGlobalToLocal, G* = DMLocalToGlobal(ADD_VALUES) */
static PetscErrorCode TestHalo(DMBoundaryType bt)
{
  DM        da;
  Vec       x, gy, xl, yl;
  PetscReal a, b;
  char      what[64];

  PetscFunctionBegin;
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, DMDA_STENCIL_BOX, W_IN, H_IN, PETSC_DECIDE, PETSC_DECIDE, 3, 2, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &gy));
  PetscCall(DMCreateLocalVector(da, &xl));
  PetscCall(VecDuplicate(xl, &yl));
  PetscCall(FillGlobal(x));
  PetscCall(FillGlobal(gy)); /* any values: only the local ones are used */
  PetscCall(DMGlobalToLocal(da, gy, INSERT_VALUES, yl));
  PetscCall(VecScale(yl, 0.5));
  PetscCall(VecShift(yl, 0.25)); /* ghost entries differ from their owners' values */
  PetscCall(DMGlobalToLocal(da, x, INSERT_VALUES, xl));
  PetscCall(LocalDot(xl, yl, &a));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCall(VecZeroEntries(gy));
  PetscCall(DMLocalToGlobal(da, yl, ADD_VALUES, gy));
  PetscCall(VecDot(x, gy, &b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "adjoint halo exchange (%s)", bt == DM_BOUNDARY_PERIODIC ? "periodic" : "non-periodic"));
  PetscCall(Report(what, a, b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&gy));
  PetscCall(VecDestroy(&xl));
  PetscCall(VecDestroy(&yl));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(0);
}

/* sp (to_spatial) -> ca (conv2d k3, no bias) -> cb (conv2d k2, bias, output grid 7x8) -> sf (spatial_flatten) */
static PetscErrorCode TestLayerAdjoints(PetscBool periodic)
{
  NN           net;
  NNLayer      sp, ca, cb, sf;
  PetscInt     shape[] = {C_IN, H_IN, W_IN};
  PetscRandom  r;
  Vec          x, y, dx, dy, act[5];
  PetscScalar *thb, *dthb, *ya;
  PetscInt     nb;
  PetscReal    a, b;
  const char  *suf = periodic ? " (periodic)" : "";
  char         what[128];

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 7));
  PetscCall(PetscRandomSeed(r));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape));
  PetscCall(NNSetBatchSize(net, NB));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", &sp));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "ca", &ca));
  PetscCall(NNLayerConvSetFilters(ca, 3));
  PetscCall(NNLayerConvSetBias(ca, PETSC_FALSE));
  PetscCall(NNLayerConvSetPeriodic(ca, periodic));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "cb", &cb));
  PetscCall(NNLayerConvSetFilters(cb, 4));
  PetscCall(NNLayerConvSetKernelSize(cb, 2));
  PetscCall(NNAddLayer(net, NNLAYERSPATIALFLATTEN, "sf", &sf));
  PetscCall(NNSetUp(net));
  PetscCall(NNGetActivations(net, "sp", &act[0], &act[1]));
  PetscCall(NNGetActivations(net, "cb", &act[2], &act[3]));
  PetscCall(NNGetActivations(net, "sf", NULL, &act[4]));
  PetscCall(NNBeginLayerCalls(net)); /* the layers see their parameter and gradient slices */
  PetscCall(NNGetLayerParameters(net, "cb", &nb, &thb));
  PetscCall(NNGetLayerGradient(net, "cb", NULL, &dthb));

  /* to_spatial: replicated sequential -> DMDA */
  PetscCall(VecDuplicate(act[0], &x));
  PetscCall(VecDuplicate(act[0], &dx));
  PetscCall(VecGetArray(x, &ya));
  PetscCall(FillReplicated(r, NB * C_IN * H_IN * W_IN, ya));
  PetscCall(VecRestoreArray(x, &ya));
  PetscCall(VecDuplicate(act[1], &dy));
  PetscCall(FillGlobal(dy));
  PetscCall(NNLayerForward(sp, NB, x, act[1]));
  PetscCall(VecDot(act[1], dy, &a));
  PetscCall(NNLayerBackward(sp, NB, x, act[1], dy, dx));
  PetscCall(LocalDot(x, dx, &b));
  PetscCall(Report("adjoint to_spatial", a, b));
  PetscCall(VecDestroy(&dy));

  /* conv2d, input direction (ca has no bias, so it is linear in its input) */
  PetscCall(FillGlobal(act[1]));
  PetscCall(VecDuplicate(act[2], &dy));
  PetscCall(FillGlobal(dy));
  PetscCall(VecDuplicate(act[1], &y));
  PetscCall(NNLayerForward(ca, NB, act[1], act[2]));
  PetscCall(VecDot(act[2], dy, &a));
  PetscCall(NNLayerBackward(ca, NB, act[1], act[2], dy, y));
  PetscCall(VecDot(act[1], y, &b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "adjoint conv2d k3 input direction%s", suf));
  PetscCall(Report(what, a, b));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&y));

  /* conv2d, parameter direction: cb (weight and bias) is linear in its parameters for a fixed input */
  PetscCall(FillGlobal(act[2]));
  PetscCall(FillReplicated(r, nb, thb));
  PetscCall(PetscArrayzero(dthb, nb));
  PetscCall(VecDuplicate(act[3], &dy));
  PetscCall(FillGlobal(dy));
  PetscCall(NNLayerForward(cb, NB, act[2], act[3]));
  PetscCall(VecDot(act[3], dy, &a));
  PetscCall(NNLayerBackward(cb, NB, act[2], act[3], dy, NULL));
  b = 0;
  for (PetscInt i = 0; i < nb; i++) b += thb[i] * dthb[i];
  PetscCall(Report("adjoint conv2d k2 parameter direction", a, b));
  PetscCall(VecDestroy(&dy));

  /* spatial_flatten: DMDA -> replicated sequential */
  PetscCall(FillGlobal(act[3]));
  PetscCall(VecDuplicate(act[4], &dy));
  PetscCall(VecGetArray(dy, &ya));
  PetscCall(FillReplicated(r, NB * 4 * 7 * 8, ya));
  PetscCall(VecRestoreArray(dy, &ya));
  PetscCall(VecDuplicate(act[3], &y));
  PetscCall(NNLayerForward(sf, NB, act[3], act[4]));
  PetscCall(LocalDot(act[4], dy, &a));
  PetscCall(NNLayerBackward(sf, NB, act[3], act[4], dy, y));
  PetscCall(VecDot(act[3], y, &b));
  PetscCall(Report("adjoint spatial_flatten", a, b));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&y));

  PetscCall(NNRestoreLayerGradient(net, "cb", &dthb));
  PetscCall(NNRestoreLayerParameters(net, "cb", &thb));
  PetscCall(NNEndLayerCalls(net));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* to_spatial -> conv2d k3 -> act -> conv2d k2 -> spatial_flatten -> dense */
static PetscErrorCode BuildCNN(MPI_Comm comm, const char prefix[], NNLossType loss, NNLayerType act, PetscBool periodic, NN *net)
{
  NNLayer  l;
  PetscInt shape[] = {C_IN, H_IN, W_IN};

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, loss));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNLayerConvSetPeriodic(l, periodic));
  PetscCall(NNAddLayer(*net, act, "a1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c2", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNLayerConvSetKernelSize(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillBatch(NN net, PetscBool labels, Vec *x, Vec *t)
{
  PetscRandom  r;
  PetscScalar *a;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 11));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetLocalSize(*t, &nt));
  PetscCall(VecGetArray(*x, &a));
  PetscCall(FillReplicated(r, nx, a));
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetArray(*t, &a));
  PetscCall(FillReplicated(r, nt, a));
  if (labels)
    for (PetscInt i = 0; i < nt; i++) a[i] = (PetscInt)(2.5 * (a[i] + 1.0)) % 5;
  PetscCall(VecRestoreArray(*t, &a));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* the CNN on the run's communicator against a serial copy on PETSC_COMM_SELF (same seed, same batch) */
static PetscErrorCode TestRankEquivalence(PetscBool periodic)
{
  NN        par, ser;
  Vec       x, t, dxp, dxs, gp, gs, tp, ts;
  PetscReal Lp, Ls, e, nrm;
  PetscInt  n = 2; /* smaller than the batch capacity: unused slots must not leak */
  char      what[128];

  PetscFunctionBegin;
  PetscCall(BuildCNN(PETSC_COMM_WORLD, NULL, NNLOSSCROSSENTROPY, NNLAYERRELU, periodic, &par));
  PetscCall(BuildCNN(PETSC_COMM_SELF, "serial_", NNLOSSCROSSENTROPY, NNLAYERRELU, periodic, &ser));
  PetscCall(NNGetParameters(par, &tp));
  PetscCall(NNGetParameters(ser, &ts));
  {
    PetscBool same;
    PetscCall(VecEqual(tp, ts, &same)); /* VecEqual of SEQ Vecs is local */
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the parallel and serial networks were initialized differently");
  }
  PetscCall(FillBatch(par, PETSC_TRUE, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(NNLossGradient(par, n, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, n, x, t, &Ls, dxs));
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PetscSNPrintf(what, sizeof(what), "CNN%s loss: run's communicator vs serial copy", periodic ? " (periodic conv)" : ""));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %d ranks\n", size));
  }
  PetscCall(Report(what, Lp, Ls));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(VecNorm(gs, NORM_2, &nrm));
  PetscCall(VecAXPY(gp, -1.0, gs));
  PetscCall(VecNorm(gp, NORM_2, &e));
  PetscCall(PetscSNPrintf(what, sizeof(what), "CNN%s parameter gradient: ||g - g_serial|| / ||g_serial||", periodic ? " (periodic conv)" : ""));
  PetscCall(Report(what, nrm + e, nrm));
  PetscCall(VecNorm(dxs, NORM_2, &nrm));
  PetscCall(VecAXPY(dxp, -1.0, dxs));
  PetscCall(VecNorm(dxp, NORM_2, &e));
  PetscCall(PetscSNPrintf(what, sizeof(what), "CNN%s input gradient: ||dx - dx_serial|| / ||dx_serial||", periodic ? " (periodic conv)" : ""));
  PetscCall(Report(what, nrm + e, nrm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestGradientCheck(PetscBool periodic)
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildCNN(PETSC_COMM_WORLD, NULL, NNLOSSMSE, NNLAYERTANH, periodic, &net));
  PetscCall(FillBatch(net, PETSC_FALSE, &x, &t));
  PetscCall(NNGradientCheck(net, 2, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  finite differences: parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: %g %g", (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(TestHalo(DM_BOUNDARY_NONE));
  PetscCall(TestHalo(DM_BOUNDARY_PERIODIC));
  PetscCall(TestLayerAdjoints(PETSC_FALSE));
  PetscCall(TestLayerAdjoints(PETSC_TRUE));
  PetscCall(TestRankEquivalence(PETSC_FALSE));
  PetscCall(TestRankEquivalence(PETSC_TRUE));
  PetscCall(TestGradientCheck(PETSC_FALSE));
  PetscCall(TestGradientCheck(PETSC_TRUE));
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
      args: -da_processors_x 2 -da_processors_y 1 -sp_da_processors_x 2 -sp_da_processors_y 1

   test:
      suffix: 3
      nsize: 3
      args: -da_processors_x 3 -da_processors_y 1 -sp_da_processors_x 3 -sp_da_processors_y 1

   test:
      suffix: 4
      nsize: 4
      args: -da_processors_x 2 -da_processors_y 2 -sp_da_processors_x 2 -sp_da_processors_y 2

TEST*/
