static char help[] = "Online training inside a running simulation (the C twin of online_heat_f.F90).\n\n"
                     "A 2-D advection-diffusion solver u_t + a . grad u = nu lap u on the periodic unit square (a DMDA,\n"
                     "explicit Euler, upwind advection) pushes each step's pair (u_n, u_{n+1}) into a replay buffer and\n"
                     "trains a CNN surrogate of one step from it every m steps (NNTrainStepBuffer()). Then the surrogate\n"
                     "replaces the solver for n steps (NNPredict()) and its relative error against the solver is reported.\n"
                     "The network, the buffer and the optimizer come from an options file (examples/online_heat.opts).\n\n"
                     "  -M <n>                grid points per direction (default 32)\n"
                     "  -nu <v>               diffusion coefficient (default 0.01)\n"
                     "  -ax <v>, -ay <v>      advection velocity (default 0.5, 0.25)\n"
                     "  -dt <t>               time step (default 0.2/M^2 / nu, at most 0.25/(M (ax + ay)))\n"
                     "  -steps <k>            solver steps while training (default 200)\n"
                     "  -train_every <m>      training after every m solver steps (default 4)\n"
                     "  -train_iters <k>      NNTrainStepBuffer() calls each time (default 2)\n"
                     "  -surrogate_steps <n>  steps with the surrogate instead of the solver (default 20)\n"
                     "  -loss_history <file>  each training step's loss and the final error, to 17 digits\n"
                     "  -load <file.h5>       resume from a checkpoint written with -nn_checkpoint (network, optimizer,\n"
                     "                        buffer): the solver recomputes its state up to the checkpoint's step\n"
                     "  -kill_step <s>        SIGKILL after training step s (tests of the restart)\n";

#include <petnn.h>
#include <petscdmda.h>
#include <signal.h>

typedef struct {
  PetscInt  M, steps, every, iters, nsur, kill;
  PetscReal nu, ax, ay, dt;
  char      history[PETSC_MAX_PATH_LEN], load[PETSC_MAX_PATH_LEN];
  FILE     *fh;
  PetscLogEvent ev_solver;
} AppCtx;

static PetscErrorCode GetOptions(AppCtx *app)
{
  PetscReal dtd, dta;

  PetscFunctionBeginUser;
  *app = (AppCtx){32, 200, 4, 2, 20, -1, 0.01, 0.5, 0.25, 0, "", "", NULL, 0};
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Online training example", NULL);
  PetscCall(PetscOptionsInt("-M", "Grid points per direction", NULL, app->M, &app->M, NULL));
  PetscCall(PetscOptionsReal("-nu", "Diffusion coefficient", NULL, app->nu, &app->nu, NULL));
  PetscCall(PetscOptionsReal("-ax", "Advection velocity, x", NULL, app->ax, &app->ax, NULL));
  PetscCall(PetscOptionsReal("-ay", "Advection velocity, y", NULL, app->ay, &app->ay, NULL));
  dtd     = 0.2 / (app->M * app->M) / app->nu;
  dta     = 0.25 / (app->M * (app->ax + app->ay));
  app->dt = PetscMin(dtd, dta);
  PetscCall(PetscOptionsReal("-dt", "Time step", NULL, app->dt, &app->dt, NULL));
  PetscCall(PetscOptionsInt("-steps", "Solver steps while training", NULL, app->steps, &app->steps, NULL));
  PetscCall(PetscOptionsInt("-train_every", "Train after every m solver steps", NULL, app->every, &app->every, NULL));
  PetscCall(PetscOptionsInt("-train_iters", "NNTrainStepBuffer() calls each time", NULL, app->iters, &app->iters, NULL));
  PetscCall(PetscOptionsInt("-surrogate_steps", "Steps with the surrogate", NULL, app->nsur, &app->nsur, NULL));
  PetscCall(PetscOptionsString("-loss_history", "Loss history file", NULL, app->history, app->history, sizeof(app->history), NULL));
  PetscCall(PetscOptionsString("-load", "Checkpoint to resume from", NULL, app->load, app->load, sizeof(app->load), NULL));
  PetscCall(PetscOptionsInt("-kill_step", "SIGKILL after this training step", NULL, app->kill, &app->kill, NULL));
  PetscOptionsEnd();
  PetscCheck(app->M > 2 && app->every > 0 && app->iters > 0 && app->steps >= 0 && app->nsur >= 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "Need -M > 2, -train_every > 0, -train_iters > 0, -steps >= 0, -surrogate_steps >= 0");
  PetscCall(PetscLogEventRegister("SolverStep", DM_CLASSID, &app->ev_solver));
  PetscFunctionReturn(0);
}

/* u(x, y) = sin(2 pi x) sin(2 pi y) + 0.5 cos(2 pi (2 x + y)) at the cell centres */
static PetscErrorCode InitialState(DM da, const AppCtx *app, Vec U)
{
  PetscScalar **u;
  PetscInt      xs, ys, xm, ym;

  PetscFunctionBeginUser;
  PetscCall(DMDAVecGetArray(da, U, &u));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscReal x = (i + 0.5) / app->M, y = (j + 0.5) / app->M;
      u[j][i] = PetscSinReal(2 * PETSC_PI * x) * PetscSinReal(2 * PETSC_PI * y) + 0.5 * PetscCosReal(2 * PETSC_PI * (2 * x + y));
    }
  PetscCall(DMDAVecRestoreArray(da, U, &u));
  PetscFunctionReturn(0);
}

/* one explicit Euler step, U <- U + dt (nu lap U - ax dU/dx - ay dU/dy), upwind differences (ax, ay >= 0) */
static PetscErrorCode SolverStep(DM da, const AppCtx *app, Vec U, Vec Ul)
{
  PetscScalar **u, **un;
  PetscInt      xs, ys, xm, ym;
  PetscReal     h = 1.0 / app->M, cd = app->nu / (h * h), cx = app->ax / h, cy = app->ay / h;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(app->ev_solver, 0, 0, 0, 0));
  PetscCall(DMGlobalToLocalBegin(da, U, INSERT_VALUES, Ul));
  PetscCall(DMGlobalToLocalEnd(da, U, INSERT_VALUES, Ul));
  PetscCall(DMDAVecGetArrayRead(da, Ul, &u));
  PetscCall(DMDAVecGetArray(da, U, &un));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt j = ys; j < ys + ym; j++)
    for (PetscInt i = xs; i < xs + xm; i++) {
      PetscScalar lap = ((u[j][i + 1] + u[j][i - 1]) + (u[j + 1][i] + u[j - 1][i])) - 4 * u[j][i];
      PetscScalar adv = cx * (u[j][i] - u[j][i - 1]) + cy * (u[j][i] - u[j - 1][i]);
      un[j][i]        = u[j][i] + app->dt * (cd * lap - adv);
    }
  PetscCall(DMDAVecRestoreArray(da, U, &un));
  PetscCall(DMDAVecRestoreArrayRead(da, Ul, &u));
  PetscCall(PetscLogFlops(14.0 * xm * ym));
  PetscCall(PetscLogEventEnd(app->ev_solver, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* training step s (1-based) done with loss L: the history line, and the kill of the restart test */
static PetscErrorCode Record(AppCtx *app, PetscInt s, PetscReal L)
{
  PetscFunctionBeginUser;
  if (app->fh) {
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, app->fh, "%" PetscInt_FMT " %.17e\n", s, (double)L));
    if (app->fh) fflush(app->fh);
  }
  if (s == app->kill) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SIGKILL after training step %" PetscInt_FMT "\n", s));
    fflush(stdout);
    raise(SIGKILL);
  }
  PetscFunctionReturn(0);
}

/* -load: the network, optimizer and buffer from the checkpoint; the solver recomputes its state up to the
   solver step of the checkpoint's training step (checkpoints at whole training rounds: -nn_checkpoint_steps a
   multiple of -train_iters); returns that solver step */
static PetscErrorCode Resume(NN net, DM da, AppCtx *app, Vec U, Vec Ul, PetscInt *n0)
{
  PetscInt s;

  PetscFunctionBeginUser;
  *n0 = 0;
  if (!app->load[0]) PetscFunctionReturn(0);
  PetscCall(NNCheckpointLoad(net, app->load));
  PetscCall(NNGetCursor(net, NULL, NULL, &s));
  PetscCheck(s % app->iters == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "Checkpoint %s is of training step %" PetscInt_FMT ", inside a round of -train_iters %" PetscInt_FMT ": use -nn_checkpoint_steps a multiple of it", app->load, s, app->iters);
  *n0 = (s / app->iters) * app->every;
  for (PetscInt n = 1; n <= *n0; n++) PetscCall(SolverStep(da, app, U, Ul));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "resumed from %s after training step %" PetscInt_FMT ": the solver recomputed %" PetscInt_FMT " steps\n", app->load, s, *n0));
  PetscFunctionReturn(0);
}

/* solver steps n0+1..steps, each pushing (u_n, u_{n+1}); every m steps k training steps from the buffer */
static PetscErrorCode TrainOnline(NN net, NNData buf, DM da, AppCtx *app, Vec U, Vec Ul, PetscInt n0)
{
  Vec      U0;
  PetscInt s;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(U, &U0));
  PetscCall(NNGetCursor(net, NULL, NULL, &s));
  for (PetscInt n = n0 + 1; n <= app->steps; n++) {
    PetscCall(VecCopy(U, U0));
    PetscCall(SolverStep(da, app, U, Ul));
    PetscCall(NNDataBufferPush(buf, U0, U));
    if (n % app->every) continue;
    for (PetscInt k = 0; k < app->iters; k++) {
      PetscReal L;
      PetscCall(NNTrainStepBuffer(net, &L));
      PetscCall(Record(app, ++s, L));
      if (k == app->iters - 1) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "solver step %3" PetscInt_FMT ": training step %3" PetscInt_FMT ", loss %.4e\n", n, s, (double)L));
    }
  }
  PetscCall(VecDestroy(&U0));
  PetscFunctionReturn(0);
}

/* n steps with the surrogate from the current state, against the solver continuing; the relative L2 error */
static PetscErrorCode RunSurrogate(NN net, DM da, AppCtx *app, Vec U, Vec Ul)
{
  Vec       S, T;
  PetscReal nd, nu;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(U, &S));
  PetscCall(VecDuplicate(U, &T));
  PetscCall(VecCopy(U, S));
  for (PetscInt n = 0; n < app->nsur; n++) {
    PetscCall(NNPredict(net, S, T));
    PetscCall(VecCopy(T, S));
    PetscCall(SolverStep(da, app, U, Ul));
  }
  PetscCall(VecAXPY(S, -1.0, U));
  PetscCall(VecNorm(S, NORM_2, &nd));
  PetscCall(VecNorm(U, NORM_2, &nu));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "surrogate for %" PetscInt_FMT " steps instead of the solver: relative L2 error %.3e\n", app->nsur, (double)(nd / nu)));
  if (app->fh) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, app->fh, "error %.17e\n", (double)(nd / nu)));
  PetscCall(VecDestroy(&S));
  PetscCall(VecDestroy(&T));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  AppCtx   app;
  DM       da;
  NN       net;
  NNData   buf;
  Vec      U, Ul;
  PetscInt n0, cap;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(GetOptions(&app));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, app.M, app.M, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateGlobalVector(da, &U));
  PetscCall(DMCreateLocalVector(da, &Ul));
  PetscCall(InitialState(da, &app, U));

  /* the surrogate and its replay buffer, configured by the options (file) */
  PetscCall(NNCreateFromOptionsFile(PETSC_COMM_WORLD, NULL, NULL, &net));
  PetscCall(NNSetInputDM(net, da));
  PetscCall(NNSetUp(net));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &buf));
  PetscCall(NNDataSetType(buf, NNDATABUFFER));
  PetscCall(NNDataSetFromOptions(buf));
  PetscCall(NNSetTrainBuffer(net, buf));
  PetscCall(NNDataBufferGetCapacity(buf, &cap));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "advection-diffusion on %" PetscInt_FMT " x %" PetscInt_FMT ", dt %.3e: %" PetscInt_FMT " solver steps training every %" PetscInt_FMT " (%" PetscInt_FMT " steps from a buffer of %" PetscInt_FMT "), then %" PetscInt_FMT " surrogate steps\n", app.M, app.M, (double)app.dt, app.steps, app.every, app.iters, cap, app.nsur));
  if (app.history[0]) PetscCall(PetscFOpen(PETSC_COMM_WORLD, app.history, "w", &app.fh));

  PetscCall(Resume(net, da, &app, U, Ul, &n0));
  PetscCall(TrainOnline(net, buf, da, &app, U, Ul, n0));
  PetscCall(RunSurrogate(net, da, &app, U, Ul));
  PetscCall(PetscObjectViewFromOptions((PetscObject)buf, NULL, "-buffer_view"));

  if (app.fh) PetscCall(PetscFClose(PETSC_COMM_WORLD, app.fh));
  PetscCall(NNDataDestroy(&buf));
  PetscCall(NNDestroy(&net));
  PetscCall(VecDestroy(&U));
  PetscCall(VecDestroy(&Ul));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: 1
     args: -options_file online_heat.opts -M 16 -steps 24 -surrogate_steps 8 -buffer_view

   test:
     suffix: 4
     nsize: 4
     args: -options_file online_heat.opts -M 16 -steps 24 -surrogate_steps 8

   # killed after training step 27, resumed from the checkpoint of step 24: the rest of the loss history bitwise
   test:
     suffix: restart
     command: bash ${PETNN_SOURCE_DIR}/examples/online_heat_restart.sh ${exe} "${mpiexec}" 1 -options_file online_heat.opts -M 16 -steps 80 -surrogate_steps 8

   test:
     suffix: restart_4
     command: bash ${PETNN_SOURCE_DIR}/examples/online_heat_restart.sh ${exe} "${mpiexec}" 4 -options_file online_heat.opts -M 16 -steps 80 -surrogate_steps 8
     output_file: output/online_heat_restart.out

   # the Fortran twin (examples/online_heat_f.F90, built when CMake finds a Fortran compiler): bitwise the same loss
   # history and surrogate error as this program on the same ranks, and the same kill-and-restart
   test:
     suffix: fortran
     requires: petnn_fortran
     command: bash ${PETNN_SOURCE_DIR}/examples/online_heat_compare.sh ${exe} ${PETNN_BINARY_DIR}/examples/online_heat_f "${mpiexec}" 1 -options_file online_heat.opts -M 16 -steps 40 -surrogate_steps 8

   test:
     suffix: fortran_4
     requires: petnn_fortran
     command: bash ${PETNN_SOURCE_DIR}/examples/online_heat_compare.sh ${exe} ${PETNN_BINARY_DIR}/examples/online_heat_f "${mpiexec}" 4 -options_file online_heat.opts -M 16 -steps 40 -surrogate_steps 8
     output_file: output/online_heat_fortran.out

   test:
     suffix: fortran_restart_4
     requires: petnn_fortran
     command: bash ${PETNN_SOURCE_DIR}/examples/online_heat_restart.sh ${PETNN_BINARY_DIR}/examples/online_heat_f "${mpiexec}" 4 -options_file online_heat.opts -M 16 -steps 80 -surrogate_steps 8
     output_file: output/online_heat_restart.out

TEST*/
