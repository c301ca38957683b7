static char help[] = "Online training on a simulation's DMDA: the layouts NNTrainStep() takes for a network with NNSetInputDM(),\n"
                     "against the same steps on whole samples in sequential Vecs, bitwise:\n"
                     "  1. a replay buffer of each rank's pieces of DMDA Vecs against one of whole samples (same seed, same draws)\n"
                     "  2. NNTrainStep() on one sample given as Vecs of the simulation's DMDA against one given sequentially\n"
                     "  3. NNDataBufferTSMonitor(): the pairs a time stepper pushes are (u_{n-h}, u_n)\n";

#include "nntest.h"
#include <petscdmda.h>

#define M       8
#define NPAIRS  10
#define NSTEPS  6

static PetscErrorCode CreateNet(DM da, NN *net)
{
  NNLayer l;
  NNOpt   opt;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputDM(*net, da));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 4));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPeriodic(l, PETSC_TRUE));
  PetscCall(NNLayerConvSetThreads(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "a1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c2", &l));
  PetscCall(NNLayerConvSetFilters(l, 1));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetPeriodic(l, PETSC_TRUE));
  PetscCall(NNLayerConvSetThreads(l, 1));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(*net, 4));
  PetscCall(NNSetSeed(*net, 11));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, NNOPTADAM));
  PetscCall(NNOptSetLearningRate(opt, 1e-2));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* pair k: u = a smooth periodic field, y = u shifted by one cell in x and scaled */
static PetscErrorCode FillPair(DM da, PetscInt k, Vec u, Vec y)
{
  PetscScalar **ua, **ya;
  PetscInt      xs, ys, xm, ym;

  PetscFunctionBegin;
  PetscCall(DMDAVecGetArray(da, u, &ua));
  PetscCall(DMDAVecGetArray(da, y, &ya));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      ua[j][i] = PetscSinReal(2 * PETSC_PI * (i + 0.3 * k) / M) * PetscCosReal(2 * PETSC_PI * (j - 0.2 * k) / M);
      ya[j][i] = 0.8 * PetscSinReal(2 * PETSC_PI * (i + 1 + 0.3 * k) / M) * PetscCosReal(2 * PETSC_PI * (j - 0.2 * k) / M);
    }
  PetscCall(DMDAVecRestoreArray(da, y, &ya));
  PetscCall(DMDAVecRestoreArray(da, u, &ua));
  PetscFunctionReturn(0);
}

/* the whole sample of a DMDA Vec on every rank, in natural ([y][x]) order: the layout of sequential batches */
static PetscErrorCode Gather(DM da, Vec u, Vec *full)
{
  Vec        nat;
  VecScatter sc;

  PetscFunctionBegin;
  PetscCall(DMDACreateNaturalVector(da, &nat));
  PetscCall(DMDAGlobalToNaturalBegin(da, u, INSERT_VALUES, nat));
  PetscCall(DMDAGlobalToNaturalEnd(da, u, INSERT_VALUES, nat));
  PetscCall(VecScatterCreateToAll(nat, &sc, full));
  PetscCall(VecScatterBegin(sc, nat, *full, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sc, nat, *full, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterDestroy(&sc));
  PetscCall(VecDestroy(&nat));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateBuffer(NNData *d)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, d));
  PetscCall(NNDataSetType(*d, NNDATABUFFER));
  PetscCall(NNDataBufferSetCapacity(*d, 16));
  PetscCall(NNDataBufferSetSeed(*d, 5));
  PetscFunctionReturn(0);
}

static PetscErrorCode SameParameters(NN a, NN b, const char what[])
{
  Vec       ta, tb;
  PetscBool eq;

  PetscFunctionBegin;
  PetscCall(NNGetParameters(a, &ta));
  PetscCall(NNGetParameters(b, &tb));
  PetscCall(NNTestVecsEqual(ta, tb, &eq));
  PetscCheck(eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the parameters differ", what);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: parameters bitwise identical after %d steps\n", what, NSTEPS));
  PetscFunctionReturn(0);
}

/* 1. and 2. */
static PetscErrorCode TestLayouts(DM da)
{
  NN     a, b, c, e;
  NNData da_buf, db_buf;
  Vec    u[NPAIRS], y[NPAIRS], uf[NPAIRS], yf[NPAIRS];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < NPAIRS; k++) {
    PetscCall(DMCreateGlobalVector(da, &u[k]));
    PetscCall(DMCreateGlobalVector(da, &y[k]));
    PetscCall(FillPair(da, k, u[k], y[k]));
    PetscCall(Gather(da, u[k], &uf[k]));
    PetscCall(Gather(da, y[k], &yf[k]));
  }
  PetscCall(CreateNet(da, &a));
  PetscCall(CreateNet(da, &b));
  PetscCall(CreateBuffer(&da_buf));
  PetscCall(CreateBuffer(&db_buf));
  for (PetscInt k = 0; k < NPAIRS; k++) {
    PetscCall(NNDataBufferPush(da_buf, u[k], y[k]));   /* each rank its pieces */
    PetscCall(NNDataBufferPush(db_buf, uf[k], yf[k])); /* every rank the whole samples */
  }
  PetscCall(NNSetTrainBuffer(a, da_buf));
  PetscCall(NNSetTrainBuffer(b, db_buf));
  for (PetscInt s = 0; s < NSTEPS; s++) {
    PetscCall(NNTrainStepBuffer(a, NULL));
    PetscCall(NNTrainStepBuffer(b, NULL));
  }
  PetscCall(SameParameters(a, b, "replay buffer of DMDA pieces against one of whole samples"));
  PetscCall(CreateNet(da, &c));
  PetscCall(CreateNet(da, &e));
  for (PetscInt s = 0; s < NSTEPS; s++) {
    PetscCall(NNTrainStep(c, u[s], y[s], NULL));   /* the simulation's own Vecs */
    PetscCall(NNTrainStep(e, uf[s], yf[s], NULL)); /* one sequential sample */
  }
  PetscCall(SameParameters(c, e, "NNTrainStep() on Vecs of the simulation's DMDA against sequential samples"));
  for (PetscInt k = 0; k < NPAIRS; k++) {
    PetscCall(VecDestroy(&u[k]));
    PetscCall(VecDestroy(&y[k]));
    PetscCall(VecDestroy(&uf[k]));
    PetscCall(VecDestroy(&yf[k]));
  }
  PetscCall(NNDataDestroy(&da_buf));
  PetscCall(NNDataDestroy(&db_buf));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscCall(NNDestroy(&c));
  PetscCall(NNDestroy(&e));
  PetscFunctionReturn(0);
}

/* du/dt = -u by forward Euler: u_n = (1 - dt)^n u_0 up to rounding; with horizon h the monitor pushes (u_{n-h}, u_n)
   after every step n >= h, into slots 0, 1, ... */
static PetscErrorCode Decay(TS ts PETSC_UNUSED, PetscReal t PETSC_UNUSED, Vec U, Vec F, void *ctx PETSC_UNUSED)
{
  PetscFunctionBegin;
  PetscCall(VecCopy(U, F));
  PetscCall(VecScale(F, -1.0));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestTSMonitor(void)
{
  const PetscInt     h = 2, nsteps = 7, n = nsteps + 1 - h;
  TS                 ts;
  NNData             d;
  Vec                U, x, y;
  PetscInt           count, idx[6];
  PetscReal          dt = 0.1;
  const PetscScalar *xa, *ya;

  PetscFunctionBegin;
  PetscCall(CreateBuffer(&d));
  PetscCall(NNDataBufferSetHorizon(d, h));
  PetscCall(TSCreate(PETSC_COMM_SELF, &ts));
  PetscCall(TSSetType(ts, TSEULER));
  PetscCall(TSSetRHSFunction(ts, NULL, Decay, NULL));
  PetscCall(TSSetTimeStep(ts, dt));
  PetscCall(TSSetMaxSteps(ts, nsteps));
  PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_STEPOVER));
  PetscCall(TSMonitorSet(ts, NNDataBufferTSMonitor, d, NULL));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &U));
  PetscCall(VecSet(U, 1.0));
  PetscCall(TSSolve(ts, U));
  PetscCall(TSSolve(ts, U)); /* continues from the last step: the repeated monitor call pushes nothing */
  PetscCall(NNDataBufferGetCount(d, &count, NULL));
  PetscCheck(count == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " pairs pushed, expected %" PetscInt_FMT, count, n);
  for (PetscInt s = 0; s < n; s++) idx[s] = s;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3 * n, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3 * n, &y));
  PetscCall(NNDataGetBatch(d, n, idx, x, y));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt s = 0; s < n; s++) {
    PetscReal ex = PetscPowReal(1 - dt, (PetscReal)s), ey = PetscPowReal(1 - dt, (PetscReal)(s + h));
    PetscCheck(PetscAbsReal(PetscRealPart(xa[3 * s]) - ex) < 1e-14 && PetscAbsReal(PetscRealPart(ya[3 * s + 2]) - ey) < 1e-14, PETSC_COMM_SELF, PETSC_ERR_PLIB, "slot %" PetscInt_FMT " holds (%g, %g), expected (u_%" PetscInt_FMT ", u_%" PetscInt_FMT ") = (%g, %g)", s, (double)PetscRealPart(xa[3 * s]), (double)PetscRealPart(ya[3 * s + 2]), s, s + h, (double)ex, (double)ey);
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNDataBufferTSMonitor() with horizon %" PetscInt_FMT " over %" PetscInt_FMT " steps: %" PetscInt_FMT " pairs (u_{n-h}, u_n), none from the continued TSSolve()\n", h, nsteps, n));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&U));
  PetscCall(TSDestroy(&ts));
  PetscCall(NNDataDestroy(&d));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  DM da;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_BOX, M, M, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(TestLayouts(da));
  PetscCall(TestTSMonitor());
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:

   test:
     suffix: 2
     nsize: 2
     output_file: output/trainstep_spatial_1.out

TEST*/
