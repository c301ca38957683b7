static char help[] = "A learned surrogate of a PETSc simulation's dynamics: a neural ODE fitted to Van der Pol trajectories.\n\n"
                     "The simulation: the Van der Pol oscillator u' = v, v' = mu (1 - u^2) v - u, integrated by a PETSc TS\n"
                     "(options prefix -vdp_; default adaptive rk 5dp, tolerances 1e-10) from random initial states in a box\n"
                     "and recorded at nobs times T/nobs, 2T/nobs, ..., T. The initial states and trajectories are written to\n"
                     "PETSc binary files (MatView) and read back as NNData sets.\n"
                     "The surrogate: a network of one ODE block du/dt = f(u), f a 2-32-32-2 tanh MLP (layers fc1,act1,fc2,act2,fc3;\n"
                     "shared parameters; RK4 with -substeps steps between observations), whose output is the trajectory at the\n"
                     "observation times, so the MSE loss is the trajectory loss. It is trained with Adam (NNTrain, -mode adam) or\n"
                     "full-batch with TAO (NNTrainTao, -mode tao, -tao_type lmvm). Then the learned f is the right-hand side\n"
                     "(NNODERHSFunction) of a TS of the same kind (prefix -learned_) started from held-out initial states.\n\n"
                     "  -mode <adam,tao>        how to train (default adam)\n"
                     "  -mu <m>                 Van der Pol parameter (default 1)\n"
                     "  -box <b>                initial states uniform in [-b,b]^2 (default 2)\n"
                     "  -T <t>                  last observation time (default 5)\n"
                     "  -nobs <m>               number of observation times (default 10)\n"
                     "  -substeps <s>           RK4 steps of the ODE block between observations (default 4)\n"
                     "  -ntrain <n>, -ntest <n> training and held-out trajectories (default 256, 64)\n"
                     "  -seed <s>               seed of the initial states (default 2026)\n"
                     "  -loss_reduction <r>     the training loss must fall by this factor (default 10)\n"
                     "  -max_error <e>          if given, the mean held-out trajectory error must be below e\n"
                     "  -init_scale <s>         scale of the initial parameters of f's last layer (default 0.1)\n"
                     "  -nn_view, -nn_epochs, -opt_learning_rate, -nn_batch_size, -nn_monitor, -tao_max_it, -tao_monitor, -ode_*, -fc1_units ...\n\n";

#include <petnn.h>

typedef enum {
  MODE_ADAM,
  MODE_TAO
} Mode;
static const char *const Modes[] = {"adam", "tao", "Mode", "MODE_", NULL};

/* a TS and the initial step it starts every trajectory with */
typedef struct {
  TS        ts;
  PetscReal dt0;
} Integrator;

/* Van der Pol for any number of states (u, v) stored one after the other */
static PetscErrorCode VanDerPol(TS ts PETSC_UNUSED, PetscReal t PETSC_UNUSED, Vec U, Vec F, void *ctx)
{
  PetscReal          mu = *(PetscReal *)ctx;
  const PetscScalar *x;
  PetscScalar       *f;
  PetscInt           m;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(U, &m));
  PetscCall(VecGetArrayRead(U, &x));
  PetscCall(VecGetArrayWrite(F, &f));
  for (PetscInt i = 0; i < m; i += 2) {
    f[i]     = x[i + 1];
    f[i + 1] = mu * (1 - x[i] * x[i]) * x[i + 1] - x[i];
  }
  PetscCall(VecRestoreArrayWrite(F, &f));
  PetscCall(VecRestoreArrayRead(U, &x));
  PetscCall(PetscLogFlops(3.0 * m));
  PetscFunctionReturn(0);
}

/* a TS for du/dt = rhs(u): adaptive rk 5dp with tight tolerances unless the options say otherwise */
static PetscErrorCode IntegratorCreate(const char prefix[], PetscErrorCode (*rhs)(TS, PetscReal, Vec, Vec, void *), void *ctx, Integrator *ig)
{
  PetscFunctionBeginUser;
  PetscCall(TSCreate(PETSC_COMM_SELF, &ig->ts));
  PetscCall(TSSetOptionsPrefix(ig->ts, prefix));
  PetscCall(TSSetProblemType(ig->ts, TS_NONLINEAR));
  PetscCall(TSSetType(ig->ts, TSRK));
  PetscCall(TSRKSetType(ig->ts, TSRK5DP));
  PetscCall(TSSetRHSFunction(ig->ts, NULL, rhs, ctx));
  PetscCall(TSSetTolerances(ig->ts, 1e-10, NULL, 1e-10, NULL));
  PetscCall(TSSetTimeStep(ig->ts, 1e-3));
  PetscCall(TSSetMaxSteps(ig->ts, PETSC_MAX_INT - 1));
  PetscCall(TSSetExactFinalTime(ig->ts, TS_EXACTFINALTIME_MATCHSTEP)); /* land on every observation time */
  PetscCall(TSSetFromOptions(ig->ts));
  PetscCall(TSGetTimeStep(ig->ts, &ig->dt0));
  PetscFunctionReturn(0);
}

/* integrates the states in U (one or several (u,v) pairs) from t = 0 through the observation times;
   out[(i*nobs + j)*2 + c] = component c of state i at time tobs[j]. Adds the steps taken to *steps. */
static PetscErrorCode Integrate(Integrator *ig, Vec U, PetscInt nobs, const PetscReal tobs[], PetscScalar out[], PetscInt *steps)
{
  const PetscScalar *u;
  PetscInt           m, k;
  TSConvergedReason  reason;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(U, &m));
  PetscCall(TSSetTime(ig->ts, 0));
  PetscCall(TSSetStepNumber(ig->ts, 0));
  PetscCall(TSSetTimeStep(ig->ts, ig->dt0));
  PetscCall(TSRestartStep(ig->ts)); /* a new initial state: no first-same-as-last reuse from the last trajectory */
  for (PetscInt j = 0; j < nobs; j++) {
    PetscCall(TSSetMaxTime(ig->ts, tobs[j]));
    PetscCall(TSSolve(ig->ts, U));
    PetscCall(TSGetConvergedReason(ig->ts, &reason));
    if (reason <= 0) {
      const char *prefix;
      PetscCall(TSGetOptionsPrefix(ig->ts, &prefix));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED, "TS -%s* stopped before t = %g: %s", prefix, (double)tobs[j], TSConvergedReasons[reason]);
    }
    PetscCall(VecGetArrayRead(U, &u));
    for (PetscInt i = 0; i < m / 2; i++)
      for (PetscInt c = 0; c < 2; c++) out[(i * nobs + j) * 2 + c] = u[2 * i + c];
    PetscCall(VecRestoreArrayRead(U, &u));
  }
  PetscCall(TSGetStepNumber(ig->ts, &k));
  *steps += k;
  PetscFunctionReturn(0);
}

/* n trajectories, one TS solve each: out[i] as in Integrate(); returns the seconds per trajectory */
static PetscErrorCode Trajectories(Integrator *ig, PetscInt n, const PetscScalar x0[], PetscInt nobs, const PetscReal tobs[], PetscScalar out[], PetscLogDouble *tper, PetscReal *stepsper)
{
  Vec            U;
  PetscScalar   *u;
  PetscLogDouble t0, t1, t = 0;
  PetscInt       steps = 0;

  PetscFunctionBeginUser;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &U));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(VecGetArrayWrite(U, &u));
    u[0] = x0[2 * i];
    u[1] = x0[2 * i + 1];
    PetscCall(VecRestoreArrayWrite(U, &u));
    PetscCall(PetscTime(&t0));
    PetscCall(Integrate(ig, U, nobs, tobs, out + i * nobs * 2, &steps));
    PetscCall(PetscTime(&t1));
    t += t1 - t0;
  }
  PetscCall(VecDestroy(&U));
  *tper     = t / n;
  *stepsper = (PetscReal)steps / n;
  PetscFunctionReturn(0);
}

/* all n trajectories as one system of 2n equations, one TS solve; returns the seconds per trajectory */
static PetscErrorCode TrajectoriesBatched(Integrator *ig, PetscInt n, const PetscScalar x0[], PetscInt nobs, const PetscReal tobs[], PetscScalar out[], PetscLogDouble *tper, PetscInt *steps)
{
  Vec            U;
  PetscScalar   *u;
  PetscLogDouble t0, t1;

  PetscFunctionBeginUser;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * n, &U));
  PetscCall(VecGetArrayWrite(U, &u));
  PetscCall(PetscArraycpy(u, x0, 2 * n));
  PetscCall(VecRestoreArrayWrite(U, &u));
  *steps = 0;
  PetscCall(PetscTime(&t0));
  PetscCall(Integrate(ig, U, nobs, tobs, out, steps));
  PetscCall(PetscTime(&t1));
  PetscCall(VecDestroy(&U));
  *tper = (t1 - t0) / n;
  PetscFunctionReturn(0);
}

/* relative L2 error of each trajectory over the observation times: mean and max over the n trajectories */
static void TrajectoryErrors(PetscInt n, PetscInt nobs, const PetscScalar a[], const PetscScalar ref[], PetscReal *mean, PetscReal *max)
{
  *mean = 0;
  *max  = 0;
  for (PetscInt i = 0; i < n; i++) {
    PetscReal num = 0, den = 0, e;
    for (PetscInt k = 0; k < 2 * nobs; k++) {
      num += PetscSqr(PetscRealPart(a[i * 2 * nobs + k] - ref[i * 2 * nobs + k]));
      den += PetscSqr(PetscRealPart(ref[i * 2 * nobs + k]));
    }
    e = PetscSqrtReal(num / den);
    *mean += e / n;
    *max = PetscMax(*max, e);
  }
}

/* initial states (rows of a dense Mat) and trajectories (rows of nobs*2 values) to a PETSc binary file */
static PetscErrorCode WriteData(const char file[], PetscInt n, PetscInt nobs, const PetscScalar x0[], const PetscScalar traj[])
{
  Mat         X, Y;
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, 2, NULL, &X));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, 2 * nobs, NULL, &Y));
  for (PetscInt i = 0; i < n; i++) {
    for (PetscInt c = 0; c < 2; c++) PetscCall(MatSetValue(X, i, c, x0[2 * i + c], INSERT_VALUES));
    for (PetscInt k = 0; k < 2 * nobs; k++) PetscCall(MatSetValue(Y, i, k, traj[i * 2 * nobs + k], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(Y, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Y, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &viewer));
  PetscCall(MatView(X, viewer));
  PetscCall(MatView(Y, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));
  PetscFunctionReturn(0);
}

static PetscErrorCode DataOpen(const char file[], const char prefix[], NNData *data)
{
  PetscFunctionBeginUser;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, data));
  PetscCall(NNDataSetType(*data, NNDATABINARY));
  PetscCall(NNDataSetFileName(*data, file));
  PetscCall(NNDataSetOptionsPrefix(*data, prefix));
  PetscCall(NNDataSetFromOptions(*data));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Mode           mode = MODE_ADAM;
  PetscReal      fscale = 0.1, mu = 1, box = 2, T = 5, reduction = 10, maxerr = 0, *tobs;
  PetscInt       nobs = 10, substeps = 4, ntrain = 256, ntest = 64, seed = 2026, nsteps;
  PetscBool      checkerr = PETSC_FALSE, view;
  PetscMPIInt    rank;
  MPI_Comm       comm;
  PetscRandom    r;
  PetscScalar   *x0train, *x0test, *ytrain, *ytest, *ylearned, *yblock, *ycheck;
  Integrator     truth, learned, check;
  PetscLogDouble ttrue, tlearned, ttrueb, tlearnedb, t0, t1, ttrain;
  PetscReal      strue, slearned, emean, emax, bmean, bmax, loss0, loss1, test0, test1;
  PetscInt       sb;
  NN             net;
  NNLayer        blk, dense[3];
  NNOpt          opt;
  NNData         train, test;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscOptionsBegin(comm, NULL, "Van der Pol surrogate options", NULL);
  PetscCall(PetscOptionsEnum("-mode", "Training: adam (NNTrain) or tao (NNTrainTao, full batch)", NULL, Modes, (PetscEnum)mode, (PetscEnum *)&mode, NULL));
  PetscCall(PetscOptionsReal("-mu", "Van der Pol parameter mu", NULL, mu, &mu, NULL));
  PetscCall(PetscOptionsReal("-box", "Initial states uniform in [-box,box]^2", NULL, box, &box, NULL));
  PetscCall(PetscOptionsReal("-T", "Last observation time", NULL, T, &T, NULL));
  PetscCall(PetscOptionsInt("-nobs", "Number of observation times T/nobs, ..., T", NULL, nobs, &nobs, NULL));
  PetscCall(PetscOptionsInt("-substeps", "RK4 steps of the ODE block between two observations", NULL, substeps, &substeps, NULL));
  PetscCall(PetscOptionsInt("-ntrain", "Training trajectories", NULL, ntrain, &ntrain, NULL));
  PetscCall(PetscOptionsInt("-ntest", "Held-out trajectories", NULL, ntest, &ntest, NULL));
  PetscCall(PetscOptionsInt("-seed", "Seed of the initial states", NULL, seed, &seed, NULL));
  PetscCall(PetscOptionsReal("-init_scale", "Scale of the initial parameters of f's last layer", NULL, fscale, &fscale, NULL));
  PetscCall(PetscOptionsReal("-loss_reduction", "Required reduction factor of the training loss", NULL, reduction, &reduction, NULL));
  PetscCall(PetscOptionsReal("-max_error", "Required bound on the mean held-out trajectory error", NULL, maxerr, &maxerr, &checkerr));
  PetscOptionsEnd();
  PetscCheck(mu >= 0 && box > 0 && T > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Need -mu >= 0, -box > 0 and -T > 0; got %g, %g, %g", (double)mu, (double)box, (double)T);
  PetscCheck(nobs > 0 && substeps > 0 && ntrain > 0 && ntest > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Need positive -nobs, -substeps, -ntrain and -ntest; got %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT, nobs, substeps, ntrain, ntest);
  nsteps = nobs * substeps;
  PetscCall(PetscMalloc1(nobs, &tobs));
  for (PetscInt j = 0; j < nobs; j++) tobs[j] = (j + 1) * T / nobs;

  /* ---------------------------------------------------------------- the simulation */
  PetscCall(PetscMalloc4(2 * ntrain, &x0train, 2 * ntest, &x0test, 2 * nobs * ntrain, &ytrain, 2 * nobs * ntest, &ytest));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r)); /* the same states on every rank */
  PetscCall(PetscRandomSetInterval(r, -box, box));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)seed));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < 2 * ntrain; i++) PetscCall(PetscRandomGetValue(r, &x0train[i]));
  for (PetscInt i = 0; i < 2 * ntest; i++) PetscCall(PetscRandomGetValue(r, &x0test[i]));
  PetscCall(IntegratorCreate("vdp_", VanDerPol, &mu, &truth));
  PetscCall(Trajectories(&truth, ntrain, x0train, nobs, tobs, ytrain, &ttrue, &strue));
  PetscCall(Trajectories(&truth, ntest, x0test, nobs, tobs, ytest, &ttrue, &strue)); /* timed: held-out trajectories */
  if (rank == 0) {
    PetscCall(WriteData("vdp_train.bin", ntrain, nobs, x0train, ytrain));
    PetscCall(WriteData("vdp_test.bin", ntest, nobs, x0test, ytest));
  }
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscPrintf(comm, "Simulation: Van der Pol, mu %g, initial states in [-%g,%g]^2, %" PetscInt_FMT " observations at t = %g, %g, ..., %g; %" PetscInt_FMT " training and %" PetscInt_FMT " held-out trajectories\n", (double)mu, (double)box, (double)box, nobs, (double)tobs[0],
                        nobs > 1 ? (double)tobs[1] : (double)tobs[0], (double)T, ntrain, ntest));

  /* ---------------------------------------------------------------- the neural ODE */
  PetscCall(DataOpen("vdp_train.bin", "train_", &train));
  PetscCall(DataOpen("vdp_test.bin", "test_", &test));
  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){2}));
  PetscCall(NNAddLayer(net, NNLAYERODE, "ode", &blk));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "fc1", &dense[0]));
  PetscCall(NNLayerDenseSetUnits(dense[0], 32));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERTANH, "act1", NULL));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "fc2", &dense[1]));
  PetscCall(NNLayerDenseSetUnits(dense[1], 32));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERTANH, "act2", NULL));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "fc3", &dense[2]));
  PetscCall(NNLayerDenseSetUnits(dense[2], 2));
  PetscCall(NNLayerODESetTime(blk, T));
  PetscCall(NNLayerODESetSteps(blk, nsteps));
  PetscCall(NNLayerODESetObservationTimes(blk, nobs, tobs)); /* the output is the trajectory */
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(net, mode == MODE_ADAM ? 8 : 64)); /* TAO's objective is the full batch: the batch size only sets the chunks */
  PetscCall(NNSetEpochs(net, 500));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNOptSetType(opt, NNOPTADAM));
  PetscCall(NNOptSetLearningRate(opt, 1e-2));
  PetscCall(NNOptSetSchedule(opt, NNOPTSCHEDULECOSINE, 1, 1.0));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  if (fscale != 1) { /* a small initial f: the trajectories start near u(t) = u(0) (see the tutorial) */
    Vec          theta;
    PetscScalar *th;
    PetscInt     np, nf = 0, nlast, nc;
    PetscCall(NNGetParameters(net, &theta));
    PetscCall(VecGetSize(theta, &np));
    for (PetscInt c = 0; c < 3; c++) {
      PetscCall(NNLayerGetNumParameters(dense[c], &nc));
      nf += nc;
    }
    nlast = nc;
    PetscCall(VecGetArray(theta, &th)); /* the block's slice: np / nf copies of f (per-step parameters), fc3 last in each */
    for (PetscInt k = 0; k < np / nf; k++)
      for (PetscInt i = (k + 1) * nf - nlast; i < (k + 1) * nf; i++) th[i] *= fscale;
    PetscCall(VecRestoreArray(theta, &th));
  }
  PetscCall(PetscOptionsHasName(NULL, NULL, "-nn_view", &view));
  if (view) PetscCall(NNView(net, NULL));
  PetscCall(NNEvaluate(net, train, &loss0, NULL));
  PetscCall(NNEvaluate(net, test, &test0, NULL));

  PetscCall(PetscTime(&t0));
  if (mode == MODE_ADAM) PetscCall(NNTrain(net, train, test));
  else {
    Tao tao;
    PetscCall(TaoCreate(PETSC_COMM_SELF, &tao));
    PetscCall(TaoSetType(tao, TAOLMVM));
    PetscCall(TaoSetMaximumIterations(tao, 1000));
    PetscCall(TaoSetTolerances(tao, 0, 0, 0));
    PetscCall(TaoSetFromOptions(tao));
    PetscCall(NNTrainTao(net, train, tao));
    PetscCall(TaoDestroy(&tao));
  }
  PetscCall(PetscTime(&t1));
  ttrain = t1 - t0;
  PetscCall(NNEvaluate(net, train, &loss1, NULL));
  PetscCall(NNEvaluate(net, test, &test1, NULL));
  PetscCall(PetscPrintf(comm, "Training (%s): trajectory MSE %.4e -> %.4e (held-out %.4e -> %.4e) in %.1f s\n", Modes[mode], (double)loss0, (double)loss1, (double)test0, (double)test1, ttrain));
  PetscCall(PetscPrintf(comm, "Training loss reduced by a factor of at least %g: %s\n", (double)reduction, loss1 * reduction < loss0 ? "PASS" : "FAIL"));
  PetscCheck(loss1 * reduction < loss0, comm, PETSC_ERR_NOT_CONVERGED, "Training reduced the loss only from %g to %g, by less than -loss_reduction %g", (double)loss0, (double)loss1, (double)reduction);

  /* ---------------------------------------------------------------- the learned model inside TS */
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(PetscMalloc3(2 * nobs * ntest, &ylearned, 2 * nobs * ntest, &yblock, 2 * nobs * ntest, &ycheck));
  { /* the block's own forward pass (fixed-step RK4) on the held-out initial states */
    Vec                x, y;
    const PetscScalar *ya;
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, 2 * ntest, x0test, &x));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * nobs * ntest, &y));
    PetscCall(NNPredict(net, x, y));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(PetscArraycpy(yblock, ya, 2 * nobs * ntest));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
  }
  { /* consistency: a TS with the block's own scheme (rk 4, step h) on the learned f gives the block's output, to
       round-off (in single precision, -nn_precision single, the block integrates in float: float round-off) */
    PetscReal   num = 0, den = 0, tol;
    NNPrecision prec;
    PetscCall(NNGetPrecision(net, &prec));
    tol = prec == NN_PRECISION_SINGLE ? 1e-5 : 1e-10;
    PetscCall(IntegratorCreate("check_", NNODERHSFunction, net, &check));
    PetscCall(TSSetType(check.ts, TSRK));
    PetscCall(TSRKSetType(check.ts, TSRK4));
    PetscCall(TSSetTimeStep(check.ts, T / nsteps));
    check.dt0 = T / nsteps;
    {
      TSAdapt adapt;
      PetscCall(TSGetAdapt(check.ts, &adapt));
      PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
    }
    PetscCall(TrajectoriesBatched(&check, ntest, x0test, nobs, tobs, ycheck, &tlearnedb, &sb));
    for (PetscInt k = 0; k < 2 * nobs * ntest; k++) {
      num += PetscSqr(PetscRealPart(ycheck[k] - yblock[k]));
      den += PetscSqr(PetscRealPart(yblock[k]));
    }
    PetscCall(PetscInfo(NULL, "TS rk4 on the learned f vs the ODE block: relative difference %g\n", (double)PetscSqrtReal(num / den)));
    PetscCall(PetscPrintf(comm, "TS rk 4 (step h) on the learned f reproduces the ODE block's output to %g: %s\n", (double)tol, PetscSqrtReal(num / den) < tol ? "PASS" : "FAIL"));
    PetscCheck(PetscSqrtReal(num / den) < tol, comm, PETSC_ERR_PLIB, "TS rk4 with NNODERHSFunction differs from the ODE block's forward pass by %g (relative)", (double)PetscSqrtReal(num / den));
    PetscCall(TSDestroy(&check.ts));
  }
  PetscCall(IntegratorCreate("learned_", NNODERHSFunction, net, &learned));
  PetscCall(Trajectories(&learned, ntest, x0test, nobs, tobs, ylearned, &tlearned, &slearned));
  TrajectoryErrors(ntest, nobs, ylearned, ytest, &emean, &emax);
  TrajectoryErrors(ntest, nobs, yblock, ytest, &bmean, &bmax);
  {
    TSType    type;
    TSRKType  rk = "";
    PetscBool isrk;
    PetscCall(TSGetType(learned.ts, &type));
    PetscCall(PetscObjectTypeCompare((PetscObject)learned.ts, TSRK, &isrk));
    if (isrk) PetscCall(TSRKGetType(learned.ts, &rk));
    PetscCall(PetscPrintf(comm, "Held-out trajectories (relative L2 error over the %" PetscInt_FMT " observation times, mean / max over %" PetscInt_FMT " initial states):\n", nobs, ntest));
    PetscCall(PetscPrintf(comm, "  learned f in TS %s %s: %.3e / %.3e\n", type, rk, (double)emean, (double)emax));
    PetscCall(PetscPrintf(comm, "  the ODE block itself (rk 4, %" PetscInt_FMT " steps of %g): %.3e / %.3e\n", nsteps, (double)(T / nsteps), (double)bmean, (double)bmax));
    PetscCall(PetscPrintf(comm, "Time per trajectory, one TS solve each: Van der Pol %.3e s (%.1f steps), learned f %.3e s (%.1f steps)\n", ttrue, (double)strue, tlearned, (double)slearned));
  }
  { /* all held-out states as one system: the learned f is evaluated on a batch per stage */
    Integrator tb, lb;
    PetscInt   st, sl;
    PetscCall(IntegratorCreate("vdp_", VanDerPol, &mu, &tb));
    PetscCall(IntegratorCreate("learned_", NNODERHSFunction, net, &lb));
    PetscCall(TrajectoriesBatched(&tb, ntest, x0test, nobs, tobs, ycheck, &ttrueb, &st));
    PetscCall(TrajectoriesBatched(&lb, ntest, x0test, nobs, tobs, ycheck, &tlearnedb, &sl));
    PetscCall(PetscPrintf(comm, "Time per trajectory, all %" PetscInt_FMT " in one TS: Van der Pol %.3e s (%" PetscInt_FMT " steps), learned f %.3e s (%" PetscInt_FMT " steps)\n", ntest, ttrueb, st, tlearnedb, sl));
    PetscCall(TSDestroy(&tb.ts));
    PetscCall(TSDestroy(&lb.ts));
  }
  if (checkerr) {
    PetscCall(PetscPrintf(comm, "Mean held-out trajectory error below %g: %s\n", (double)maxerr, emean < maxerr ? "PASS" : "FAIL"));
    PetscCheck(emean < maxerr, comm, PETSC_ERR_NOT_CONVERGED, "Mean held-out trajectory error %g is not below -max_error %g", (double)emean, (double)maxerr);
  }

  PetscCall(PetscFree3(ylearned, yblock, ycheck));
  PetscCall(PetscFree4(x0train, x0test, ytrain, ytest));
  PetscCall(PetscFree(tobs));
  PetscCall(TSDestroy(&truth.ts));
  PetscCall(TSDestroy(&learned.ts));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(NNDataDestroy(&train));
  PetscCall(NNDataDestroy(&test));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # the adaptive integrators' step counts on the learned f follow its rounding (another CPU's BLAS kernels may take a
   # step more or less): the filter masks them; the errors are checked in the program
   testset:
     filter: sed -E "s/[(][0-9]+ steps[)]/(N steps)/g"
     test:
       suffix: adam
       args: -ntrain 16 -ntest 8 -nn_epochs 4 -nn_batch_size 4 -loss_reduction 2
     test:
       suffix: tao
       args: -mode tao -ntrain 16 -ntest 8 -tao_max_it 8 -nn_batch_size 4 -loss_reduction 2
     # per-step parameters and t as an input of f: NNODERHSFunction selects the set by the step's start time
     test:
       suffix: per_step
       args: -ntrain 16 -ntest 8 -nn_epochs 4 -nn_batch_size 4 -loss_reduction 2 -ode_parameters per_step -ode_time_input -substeps 3

   # the same in single precision: the block (observation times, time input, per-step parameters) in float, on the CPU
   # and on the (emulated) device
   testset:
     args: -ntrain 16 -ntest 8 -nn_epochs 4 -nn_batch_size 4 -loss_reduction 2 -ode_parameters per_step -ode_time_input -substeps 3 -nn_precision single
     filter: sed -E "s/[(][0-9]+ steps[)]/(N steps)/g"
     output_file: output/vdp_surrogate_per_step_single.out
     test:
       suffix: per_step_single
     test:
       requires: cuda_emulation
       suffix: per_step_single_cuda_emulation
       args: -nn_device cuda

TEST*/
