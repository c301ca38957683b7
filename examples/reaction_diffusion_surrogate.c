static char help[] = "A learned surrogate of one implicit time step of a PETSc simulation.\n\n"
                     "The simulation: the Allen-Cahn reaction-diffusion equation u_t = D lap(u) + u - u^3 on the\n"
                     "periodic unit square, a DMDA grid, backward Euler through TS (Newton with an assembled\n"
                     "Jacobian and a Krylov solver). It generates its own training data: trajectories from random\n"
                     "smooth initial states. A fully convolutional PetNN network (periodic convolutions on the\n"
                     "simulation's own DMDA and decomposition) learns the increment u(t+dt) - u(t), is checked on\n"
                     "held-out trajectories, and then replaces the solver inside the time loop.\n\n"
                     "  -M <n>            grid points per direction (default 64)\n"
                     "  -dt <t>           time step (default 0.5)\n"
                     "  -diffusion <D>    diffusion coefficient (default 1e-3)\n"
                     "  -ntrain <k>       training trajectories (default 24)\n"
                     "  -ntest <k>        held-out trajectories (default 4)\n"
                     "  -nsteps <k>       steps per trajectory (default 10)\n"
                     "  -horizon <K>      implicit steps one surrogate call replaces: it learns u(t) -> u(t+K dt) (default 1)\n"
                     "  -write_data <f>   also write the state pairs in PETSc binary format for other tools\n"
                     "                    (bench/fno_reference.py trains the reference FNO on them)\n"
                     "  -save <f.h5>      write the trained network (NNCheckpointSave)\n"
                     "  -load <f.h5>      start from a saved network (NNCheckpointLoad); with -nn_epochs 0: evaluate only\n"
                     "  -nn_epochs <k>    training epochs (default 30); -nn_batch_size (default 8)\n"
                     "  -c1_filters, -c2_filters, -c*_kernel ...   the network's layers c1,a1,c2,a2,c3\n"
                     "  -nn_layers ...    any other network instead, e.g. -options_file examples/allen_cahn_fno.opts\n\n";

#include <petnn.h>
#include <petscts.h>
#include <petscdmda.h>

typedef struct {
  PetscReal D;
} AppCtx;

/* F(u) = D lap(u) + u - u^3 with the 5-point Laplacian on the periodic grid */
static PetscErrorCode RHSFunction(TS ts, PetscReal t PETSC_UNUSED, Vec U, Vec F, void *ctx)
{
  AppCtx        *app = (AppCtx *)ctx;
  DM             da;
  Vec            Ul;
  PetscScalar  **u, **f;
  PetscInt       xs, ys, xm, ym, M;
  PetscReal      c;

  PetscFunctionBeginUser;
  PetscCall(TSGetDM(ts, &da));
  PetscCall(DMDAGetInfo(da, NULL, &M, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  c = app->D * M * M;
  PetscCall(DMGetLocalVector(da, &Ul));
  PetscCall(DMGlobalToLocalBegin(da, U, INSERT_VALUES, Ul));
  PetscCall(DMGlobalToLocalEnd(da, U, INSERT_VALUES, Ul));
  PetscCall(DMDAVecGetArrayRead(da, Ul, &u));
  PetscCall(DMDAVecGetArray(da, F, &f));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) f[j][i] = c * (u[j][i - 1] + u[j][i + 1] + u[j - 1][i] + u[j + 1][i] - 4 * u[j][i]) + u[j][i] - u[j][i] * u[j][i] * u[j][i];
  PetscCall(DMDAVecRestoreArray(da, F, &f));
  PetscCall(DMDAVecRestoreArrayRead(da, Ul, &u));
  PetscCall(DMRestoreLocalVector(da, &Ul));
  PetscCall(PetscLogFlops(12.0 * xm * ym));
  PetscFunctionReturn(0);
}

static PetscErrorCode RHSJacobian(TS ts, PetscReal t PETSC_UNUSED, Vec U, Mat J, Mat P, void *ctx)
{
  AppCtx             *app = (AppCtx *)ctx;
  DM                  da;
  const PetscScalar **u;
  PetscInt            xs, ys, xm, ym, M;
  PetscReal           c;

  PetscFunctionBeginUser;
  PetscCall(TSGetDM(ts, &da));
  PetscCall(DMDAGetInfo(da, NULL, &M, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  c = app->D * M * M;
  PetscCall(DMDAVecGetArrayRead(da, U, &u));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      MatStencil  row = {.i = i, .j = j}, col[5] = {{.i = i, .j = j}, {.i = i - 1, .j = j}, {.i = i + 1, .j = j}, {.i = i, .j = j - 1}, {.i = i, .j = j + 1}};
      PetscScalar v[5] = {-4 * c + 1 - 3 * u[j][i] * u[j][i], c, c, c, c};
      PetscCall(MatSetValuesStencil(P, 1, &row, 5, col, v, INSERT_VALUES));
    }
  PetscCall(DMDAVecRestoreArrayRead(da, U, &u));
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  if (J != P) {
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

/* a random smooth state: a few periodic Gaussian bumps of random sign, clipped to [-1, 1] */
static PetscErrorCode RandomState(DM da, PetscRandom r, Vec U)
{
  PetscScalar **u;
  PetscInt      xs, ys, xm, ym, M;
  PetscScalar   cx[6], cy[6], a[6], w[6];

  PetscFunctionBeginUser;
  PetscCall(DMDAGetInfo(da, NULL, &M, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  for (PetscInt k = 0; k < 6; k++) { /* every rank draws the same numbers (a replicated generator) */
    PetscCall(PetscRandomGetValue(r, &cx[k]));
    PetscCall(PetscRandomGetValue(r, &cy[k]));
    PetscCall(PetscRandomGetValue(r, &a[k]));
    PetscCall(PetscRandomGetValue(r, &w[k]));
  }
  PetscCall(DMDAVecGetArray(da, U, &u));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscReal x = (i + 0.5) / M, y = (j + 0.5) / M, v = 0;
      for (PetscInt k = 0; k < 6; k++) {
        PetscReal dx = PetscAbsReal(x - PetscRealPart(cx[k])), dy = PetscAbsReal(y - PetscRealPart(cy[k])), s = 0.05 + 0.1 * PetscRealPart(w[k]);
        dx = PetscMin(dx, 1 - dx);
        dy = PetscMin(dy, 1 - dy);
        v += (2 * PetscRealPart(a[k]) - 1) * 1.5 * PetscExpReal(-(dx * dx + dy * dy) / (2 * s * s));
      }
      u[j][i] = PetscMax(-1.0, PetscMin(1.0, v));
    }
  PetscCall(DMDAVecRestoreArray(da, U, &u));
  PetscFunctionReturn(0);
}

/* states[k*(nsteps+1) + s] = the simulation's state after s steps of trajectory k */
static PetscErrorCode Simulate(TS ts, PetscRandom r, PetscInt ntraj, PetscInt nsteps, Vec **states, PetscLogDouble *tstep)
{
  DM             da;
  Vec            U;
  PetscLogDouble t0, t1;

  PetscFunctionBeginUser;
  PetscCall(TSGetDM(ts, &da));
  PetscCall(DMCreateGlobalVector(da, &U));
  PetscCall(VecDuplicateVecs(U, ntraj * (nsteps + 1), states));
  *tstep = 0;
  for (PetscInt k = 0; k < ntraj; k++) {
    PetscCall(RandomState(da, r, U));
    PetscCall(VecCopy(U, (*states)[k * (nsteps + 1)]));
    PetscCall(TSSetSolution(ts, U));
    for (PetscInt s = 1; s <= nsteps; s++) {
      PetscCall(PetscTime(&t0));
      PetscCall(TSStep(ts));
      PetscCall(PetscTime(&t1));
      *tstep += t1 - t0;
      PetscCall(VecCopy(U, (*states)[k * (nsteps + 1) + s]));
    }
  }
  *tstep /= ntraj * nsteps;
  PetscCall(VecDestroy(&U));
  PetscFunctionReturn(0);
}

/* the state pairs the surrogate learns: pair i of a set of trajectories is (u(s dt), u((s+K) dt)) of
   trajectory i / (nsteps-K+1), step s = i % (nsteps-K+1) */
typedef struct {
  Vec     *states; /* states[k*(nsteps+1) + s]: trajectory k after s steps */
  PetscInt ntraj, nsteps, horizon;
} Pairs;

static PetscInt PairsCount(const Pairs *p)
{
  return p->ntraj * (p->nsteps - p->horizon + 1);
}

static void PairsGet(const Pairs *p, PetscInt i, Vec *u0, Vec *u1)
{
  PetscInt per = p->nsteps - p->horizon + 1, k = i / per, s = i % per;

  *u0 = p->states[k * (p->nsteps + 1) + s];
  *u1 = p->states[k * (p->nsteps + 1) + s + p->horizon];
}

/* packs the pairs idx[0..n) into the network's batch layout: x = u(t), target = u(t+K dt) - u(t) */
static PetscErrorCode PackBatch(const Pairs *p, PetscInt n, const PetscInt idx[], PetscInt nb, Vec x, Vec t)
{
  PetscScalar *xa, *ta;
  PetscInt     npix;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(p->states[0], &npix));
  PetscCall(VecGetArrayWrite(x, &xa));
  PetscCall(VecGetArrayWrite(t, &ta));
  for (PetscInt s = 0; s < nb; s++) {
    const PetscScalar *u0 = NULL, *u1 = NULL;
    Vec                v0 = NULL, v1 = NULL;
    if (s < n) {
      PairsGet(p, idx[s], &v0, &v1);
      PetscCall(VecGetArrayRead(v0, &u0));
      PetscCall(VecGetArrayRead(v1, &u1));
    }
    for (PetscInt q = 0; q < npix; q++) { /* channels-last, batch in the dof: [pixel][sample] */
      xa[q * nb + s] = s < n ? u0[q] : 0;
      ta[q * nb + s] = s < n ? u1[q] - u0[q] : 0;
    }
    if (s < n) {
      PetscCall(VecRestoreArrayRead(v0, &u0));
      PetscCall(VecRestoreArrayRead(v1, &u1));
    }
  }
  PetscCall(VecRestoreArrayWrite(t, &ta));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscFunctionReturn(0);
}

/* one surrogate call: U <- U + net(U) */
static PetscErrorCode SurrogateStep(NN net, Vec U, Vec dU)
{
  PetscFunctionBeginUser;
  PetscCall(NNPredict(net, U, dU));
  PetscCall(VecAXPY(U, 1.0, dU));
  PetscFunctionReturn(0);
}

/* the built-in network (periodic convolutions), unless the options name other layers with -nn_layers */
static PetscErrorCode CreateNetwork(MPI_Comm comm, DM da, NN *net)
{
  NNLayer   l;
  NNOpt     opt;
  PetscBool custom;

  PetscFunctionBeginUser;
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetInputDM(*net, da));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(*net, 8));
  PetscCall(NNSetEpochs(*net, 30));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-nn_layers", &custom));
  if (!custom) {
    const char *conv[] = {"c1", "c2", "c3"}, *act[] = {"a1", "a2"};
    for (PetscInt i = 0; i < 3; i++) {
      PetscCall(NNAddLayer(*net, NNLAYERCONV2D, conv[i], &l));
      PetscCall(NNLayerConvSetFilters(l, i < 2 ? 16 : 1));
      PetscCall(NNLayerConvSetKernelSize(l, 5));
      PetscCall(NNLayerConvSetPeriodic(l, PETSC_TRUE));
      if (i < 2) PetscCall(NNAddLayer(*net, NNLAYERTANH, act[i], NULL));
    }
  }
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, NNOPTADAM));
  PetscCall(NNOptSetLearningRate(opt, 2e-3));
  PetscCall(NNOptSetSchedule(opt, NNOPTSCHEDULECOSINE, 1, 1.0));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* Adam over shuffled minibatches of training pairs, batches packed in the network's input layout */
static PetscErrorCode Train(NN net, const Pairs *train, PetscRandom r)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)net);
  PetscInt nb, epochs, npairs = PairsCount(train), *perm;
  NNOpt    opt;
  Vec      x, t, theta, grad;

  PetscFunctionBeginUser;
  PetscCall(NNGetBatchSize(net, &nb));
  PetscCall(NNGetEpochs(net, &epochs));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNCreateInputVec(net, &x)); /* the output has the input's layout (one channel, same decomposition) */
  PetscCall(VecDuplicate(x, &t));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(NNGetGradient(net, &grad));
  PetscCall(PetscMalloc1(npairs, &perm));
  for (PetscInt e = 0; e < epochs; e++) {
    PetscReal Lsum = 0;
    PetscCall(NNOptSetEpoch(opt, e, epochs));
    for (PetscInt i = 0; i < npairs; i++) perm[i] = i;
    for (PetscInt i = npairs - 1; i > 0; i--) { /* replicated shuffle */
      PetscScalar v;
      PetscInt    j, tmp;
      PetscCall(PetscRandomGetValue(r, &v));
      j       = (PetscInt)(PetscRealPart(v) * (i + 1)) % (i + 1);
      tmp     = perm[i];
      perm[i] = perm[j];
      perm[j] = tmp;
    }
    for (PetscInt s = 0; s < npairs; s += nb) {
      PetscInt  n = PetscMin(nb, npairs - s);
      PetscReal L;
      PetscCall(PackBatch(train, n, perm + s, nb, x, t));
      PetscCall(NNLossGradient(net, n, x, t, &L, NULL));
      PetscCall(NNOptStep(opt, theta, grad));
      Lsum += L * n;
    }
    if (e % 10 == 9 || e == epochs - 1) PetscCall(PetscPrintf(comm, "epoch %3" PetscInt_FMT ": training loss %.4e\n", e + 1, (double)(Lsum / npairs)));
  }
  PetscCall(PetscFree(perm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

/* ||a - b||_2 and ||b||_2 */
static PetscErrorCode DiffNorms(Vec a, Vec b, Vec work, PetscReal *nd, PetscReal *nb)
{
  PetscFunctionBeginUser;
  PetscCall(VecWAXPY(work, -1.0, b, a));
  PetscCall(VecNorm(work, NORM_2, nd));
  PetscCall(VecNorm(b, NORM_2, nb));
  PetscFunctionReturn(0);
}

/* held-out error of one call from the true state, and of a rollout with the surrogate in the time
   loop; a simulation advances one state at a time, so the network is resized to batch size 1 */
static PetscErrorCode Evaluate(NN net, const Pairs *test, PetscLogDouble tsolve)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)net);
  PetscInt       K = test->horizon, nsteps = test->nsteps, ncalls = nsteps / K, npairs = PairsCount(test);
  PetscReal      num = 0, den = 0, dnum = 0, rnum = 0, rden = 0, mean = 0, nd, nb;
  PetscLogDouble t0, t1, tnet = 0;
  Vec            U, dU, E, u0, u1;

  PetscFunctionBeginUser;
  PetscCall(NNSetBatchSize(net, 1));
  PetscCall(NNSetUp(net));
  PetscCall(VecDuplicate(test->states[0], &U));
  PetscCall(VecDuplicate(U, &dU));
  PetscCall(VecDuplicate(U, &E));
  for (PetscInt i = 0; i < npairs; i++) { /* one call from the true state */
    PairsGet(test, i, &u0, &u1);
    PetscCall(VecCopy(u0, U));
    PetscCall(SurrogateStep(net, U, dU));
    PetscCall(DiffNorms(U, u1, E, &nd, &nb));
    num += nd * nd;
    den += nb * nb;
    mean += nd / nb;
    PetscCall(DiffNorms(u0, u1, E, &nd, &nb));
    dnum += nd * nd;
  }
  for (PetscInt k = 0; k < test->ntraj; k++) { /* the surrogate replaces the solver for the whole trajectory */
    Vec *traj = test->states + k * (nsteps + 1);
    PetscCall(VecCopy(traj[0], U));
    PetscCall(PetscTime(&t0));
    for (PetscInt c = 0; c < ncalls; c++) PetscCall(SurrogateStep(net, U, dU));
    PetscCall(PetscTime(&t1));
    tnet += t1 - t0;
    PetscCall(DiffNorms(U, traj[ncalls * K], E, &nd, &nb));
    rnum += nd * nd;
    rden += nb * nb;
  }
  tnet /= test->ntraj * ncalls;
  if (K == 1) {
    PetscCall(PetscPrintf(comm, "Held-out one-step relative L2 error: %.3e (of the state), %.3e (of the increment)\n", (double)PetscSqrtReal(num / den), (double)PetscSqrtReal(num / dnum)));
  } else {
    PetscCall(PetscPrintf(comm, "Held-out %" PetscInt_FMT "-step prediction u(t) -> u(t+%" PetscInt_FMT " dt): relative L2 error %.3e (of the state), %.3e (of the increment); mean over the %" PetscInt_FMT " held-out pairs of the per-sample relative L2 error %.3e\n", K, K, (double)PetscSqrtReal(num / den), (double)PetscSqrtReal(num / dnum), npairs, (double)(mean / npairs)));
  }
  PetscCall(PetscPrintf(comm, "Held-out %" PetscInt_FMT "-step rollout with the surrogate in the time loop: relative L2 error %.3e\n", ncalls * K, (double)PetscSqrtReal(rnum / rden)));
  if (K == 1) PetscCall(PetscPrintf(comm, "Time per step: implicit solver (TSStep) %.3e s, surrogate (NNPredict) %.3e s, speed-up %.2fx\n", tsolve, tnet, tsolve / tnet));
  else PetscCall(PetscPrintf(comm, "Time per call: %" PetscInt_FMT " implicit solver steps (TSStep) %.3e s, surrogate (NNPredict) %.3e s, speed-up %.2fx\n", K, K * tsolve, tnet, K * tsolve / tnet));
  PetscCall(VecDestroy(&U));
  PetscCall(VecDestroy(&dU));
  PetscCall(VecDestroy(&E));
  PetscFunctionReturn(0);
}

/* every state of both sets in PETSc binary format (natural ordering): train trajectories, then test */
static PetscErrorCode WriteData(const char file[], const Pairs *train, const Pairs *test)
{
  PetscViewer v;

  PetscFunctionBeginUser;
  PetscCall(PetscViewerBinaryOpen(PetscObjectComm((PetscObject)train->states[0]), file, FILE_MODE_WRITE, &v));
  for (PetscInt i = 0; i < train->ntraj * (train->nsteps + 1); i++) PetscCall(VecView(train->states[i], v));
  for (PetscInt i = 0; i < test->ntraj * (test->nsteps + 1); i++) PetscCall(VecView(test->states[i], v));
  PetscCall(PetscViewerDestroy(&v));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  AppCtx         app = {.D = 1e-3};
  PetscInt       M = 64, ntrain = 24, ntest = 4, nsteps = 10, horizon = 1;
  PetscReal      dt = 0.5;
  char           datafile[PETSC_MAX_PATH_LEN] = "", savefile[PETSC_MAX_PATH_LEN] = "", loadfile[PETSC_MAX_PATH_LEN] = "";
  DM             da;
  TS             ts;
  Mat            J;
  NN             net;
  PetscRandom    r;
  Pairs          train, test;
  PetscLogDouble tsolve;
  MPI_Comm       comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscOptionsBegin(comm, NULL, "Reaction-diffusion surrogate options", NULL);
  PetscCall(PetscOptionsInt("-M", "Grid points per direction", NULL, M, &M, NULL));
  PetscCall(PetscOptionsReal("-dt", "Time step", NULL, dt, &dt, NULL));
  PetscCall(PetscOptionsReal("-diffusion", "Diffusion coefficient D", NULL, app.D, &app.D, NULL));
  PetscCall(PetscOptionsInt("-ntrain", "Training trajectories", NULL, ntrain, &ntrain, NULL));
  PetscCall(PetscOptionsInt("-ntest", "Held-out trajectories", NULL, ntest, &ntest, NULL));
  PetscCall(PetscOptionsInt("-nsteps", "Steps per trajectory", NULL, nsteps, &nsteps, NULL));
  PetscCall(PetscOptionsInt("-horizon", "Implicit steps one surrogate call replaces", NULL, horizon, &horizon, NULL));
  PetscCall(PetscOptionsString("-write_data", "Write the states in PETSc binary format to this file", NULL, datafile, datafile, sizeof(datafile), NULL));
  PetscCall(PetscOptionsString("-save", "Write the trained network to this HDF5 file", "NNCheckpointSave", savefile, savefile, sizeof(savefile), NULL));
  PetscCall(PetscOptionsString("-load", "Start from the network in this HDF5 file", "NNCheckpointLoad", loadfile, loadfile, sizeof(loadfile), NULL));
  PetscOptionsEnd();
  PetscCheck(M > 4 && ntrain > 0 && ntest > 0 && nsteps > 0 && dt > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Need -M > 4 and positive -ntrain, -ntest, -nsteps, -dt");
  PetscCheck(horizon >= 1 && horizon <= nsteps, comm, PETSC_ERR_ARG_OUTOFRANGE, "-horizon %" PetscInt_FMT " must be between 1 and -nsteps %" PetscInt_FMT, horizon, nsteps);

  /* the simulation: a periodic DMDA and backward Euler through TS */
  PetscCall(DMDACreate2d(comm, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, M, M, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &J));
  PetscCall(TSCreate(comm, &ts));
  PetscCall(TSSetDM(ts, da));
  PetscCall(TSSetProblemType(ts, TS_NONLINEAR));
  PetscCall(TSSetType(ts, TSBEULER));
  PetscCall(TSSetRHSFunction(ts, NULL, RHSFunction, &app));
  PetscCall(TSSetRHSJacobian(ts, J, J, RHSJacobian, &app));
  PetscCall(TSSetTimeStep(ts, dt));
  PetscCall(TSSetMaxSteps(ts, PETSC_MAX_INT - 1)); /* stepped one step at a time by TSStep(); TS wants a bound */
  PetscCall(TSSetExactFinalTime(ts, TS_EXACTFINALTIME_STEPOVER));
  PetscCall(TSSetFromOptions(ts));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r)); /* the same sequence on every rank */
  PetscCall(PetscRandomSetSeed(r, 2026));
  PetscCall(PetscRandomSeed(r));
  train = (Pairs){.ntraj = ntrain, .nsteps = nsteps, .horizon = horizon};
  test  = (Pairs){.ntraj = ntest, .nsteps = nsteps, .horizon = horizon};
  PetscCall(Simulate(ts, r, ntrain, nsteps, &train.states, &tsolve));
  PetscCall(Simulate(ts, r, ntest, nsteps, &test.states, &tsolve));
  PetscCall(PetscPrintf(comm, "Simulation: %" PetscInt_FMT " x %" PetscInt_FMT " Allen-Cahn, dt %g, D %g; %" PetscInt_FMT " training and %" PetscInt_FMT " held-out trajectories of %" PetscInt_FMT " implicit steps\n", M, M, (double)dt, (double)app.D, ntrain, ntest, nsteps));
  if (datafile[0]) PetscCall(WriteData(datafile, &train, &test));

  /* the surrogate on the simulation's DMDA: u(t) -> u(t + K dt) - u(t) */
  PetscCall(CreateNetwork(comm, da, &net));
  PetscCall(NNView(net, NULL));
  if (loadfile[0]) PetscCall(NNCheckpointLoad(net, loadfile));
  PetscCall(Train(net, &train, r));
  if (savefile[0]) PetscCall(NNCheckpointSave(net, savefile));
  PetscCall(Evaluate(net, &test, tsolve));

  PetscCall(VecDestroyVecs(ntrain * (nsteps + 1), &train.states));
  PetscCall(VecDestroyVecs(ntest * (nsteps + 1), &test.states));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(TSDestroy(&ts));
  PetscCall(MatDestroy(&J));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: tiny
     args: -M 16 -ntrain 3 -ntest 2 -nsteps 3 -nn_epochs 2 -c1_filters 4 -c2_filters 4 -c1_threads 1 -c2_threads 1 -c3_threads 1

   test:
     suffix: horizon
     nsize: 2
     args: -M 16 -ntrain 3 -ntest 2 -nsteps 4 -horizon 2 -nn_epochs 2 -c1_filters 4 -c2_filters 4 -c1_threads 1 -c2_threads 1 -c3_threads 1 -da_processors_x 2 -da_processors_y 1

TEST*/
