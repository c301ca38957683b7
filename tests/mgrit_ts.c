static char help[] = "MGRIT with the TS propagator (NNMGRITSetTS): forward, TSAdjoint-based adjoint and parameter gradient equal\n"
                     "one TSSolve/TSAdjointSolve over the whole interval, for explicit RK and theta methods, 2 and 3 levels, F and FCF.\n"
                     "Options: -verbose prints iteration counts and errors; -zero_weight runs only the RK tableau with zero weights\n"
                     "(5dp): refused before PETSc 3.21, equal to TSAdjointSolve from 3.21 on.\n";

#include <petnn.h>

/* du/dt = f(theta, u): "linear" f = A u with one A for all steps, or "tanh" f = tanh(W_k u + b_k) with parameters per
   step. The RHS callbacks find k from the hook (MGRIT) or from the TS step number (the whole-interval reference:
   TSSolve counts completed steps, TSAdjointSolve decrements the count before each adjoint step). */
typedef struct {
  PetscBool    tanh, fromstep;
  PetscInt     n, N, np, ntheta, k;
  PetscScalar *theta;
  Vec         *gk; /* gradient slices: gk[k] wraps the gradient of step k (one slice when shared) */
  PetscScalar *grad;
} Ctx;

static PetscInt StepIndex(TS ts, Ctx *c)
{
  PetscInt k = c->k;
  if (c->fromstep) (void)TSGetStepNumber(ts, &k);
  return c->tanh ? k : 0;
}

static PetscErrorCode RHS(TS ts, PetscReal t, Vec U, Vec Fv, void *ctx)
{
  Ctx               *c = (Ctx *)ctx;
  PetscInt           n = c->n;
  const PetscScalar *u, *th = c->theta + StepIndex(ts, c) * c->np;
  PetscScalar       *f;

  PetscFunctionBegin;
  (void)t;
  PetscCall(VecGetArrayRead(U, &u));
  PetscCall(VecGetArrayWrite(Fv, &f));
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar z = c->tanh ? th[n * n + i] : 0;
    for (PetscInt j = 0; j < n; j++) z += th[i * n + j] * u[j];
    f[i] = c->tanh ? PetscTanhScalar(z) : z;
  }
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCall(VecRestoreArrayWrite(Fv, &f));
  PetscFunctionReturn(0);
}

static PetscScalar Slope(Ctx *c, const PetscScalar *th, const PetscScalar *u, PetscInt i)
{
  PetscInt    n = c->n;
  PetscScalar z = th[n * n + i], t;
  if (!c->tanh) return 1;
  for (PetscInt j = 0; j < n; j++) z += th[i * n + j] * u[j];
  t = PetscTanhScalar(z);
  return 1 - t * t;
}

/* assembled every call: theta methods shift and scale the matrix in place */
static PetscErrorCode RHSJacobian(TS ts, PetscReal t, Vec U, Mat A, Mat B, void *ctx)
{
  Ctx               *c = (Ctx *)ctx;
  PetscInt           n = c->n;
  const PetscScalar *u, *th = c->theta + StepIndex(ts, c) * c->np;

  PetscFunctionBegin;
  (void)t;
  (void)B;
  PetscCall(VecGetArrayRead(U, &u));
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar s = Slope(c, th, u, i);
    for (PetscInt j = 0; j < n; j++) PetscCall(MatSetValue(A, i, j, s * th[i * n + j], INSERT_VALUES));
  }
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode RHSJacobianP(TS ts, PetscReal t, Vec U, Mat A, void *ctx)
{
  Ctx               *c = (Ctx *)ctx;
  PetscInt           n = c->n;
  PetscInt           k = StepIndex(ts, c), off = c->fromstep ? k * c->np : 0; /* the reference's mu holds all steps */
  const PetscScalar *u, *th = c->theta + k * c->np;

  PetscFunctionBegin;
  (void)t;
  PetscCall(MatZeroEntries(A));
  PetscCall(VecGetArrayRead(U, &u));
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar s = Slope(c, th, u, i);
    for (PetscInt j = 0; j < n; j++) PetscCall(MatSetValue(A, i, off + i * n + j, s * u[j], INSERT_VALUES));
    if (c->tanh) PetscCall(MatSetValue(A, i, off + n * n + i, s, INSERT_VALUES));
  }
  PetscCall(VecRestoreArrayRead(U, &u));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* MGRIT's hook: the parameters (and gradient slice) of fine step k */
static PetscErrorCode Hook(TS ts, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec *mu, void *ctx)
{
  Ctx *c = (Ctx *)ctx;

  PetscFunctionBegin;
  (void)ts;
  (void)level;
  (void)t;
  (void)dt;
  c->k = k;
  if (mu) *mu = c->gk[c->tanh ? k : 0];
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateTS(Ctx *c, const char type[], Mat *J, Mat *Jp, TS *ts)
{
  PetscBool isrk;
  SNES      snes;
  KSP       ksp;
  PC        pc;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, c->n, c->n, NULL, J));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, c->n, c->fromstep ? c->ntheta : c->np, NULL, Jp)); /* the reference's mu holds all steps */
  PetscCall(TSCreate(PETSC_COMM_SELF, ts));
  PetscCall(TSSetProblemType(*ts, c->tanh ? TS_NONLINEAR : TS_LINEAR));
  PetscCall(PetscStrncmp(type, "rk", 2, &isrk));
  if (isrk) {
    PetscCall(TSSetType(*ts, TSRK));
    PetscCall(TSRKSetType(*ts, type + 2));
  } else PetscCall(TSSetType(*ts, type));
  PetscCall(TSSetRHSFunction(*ts, NULL, RHS, c));
  PetscCall(TSSetRHSJacobian(*ts, *J, *J, RHSJacobian, c));
  PetscCall(TSSetRHSJacobianP(*ts, *Jp, RHSJacobianP, c));
  { /* fixed steps, as MGRIT takes them: tableaus with an embedded error estimate (3bs, 5dp) would adapt them */
    TSAdapt adapt;
    PetscCall(TSGetAdapt(*ts, &adapt));
    PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
  }
  /* exact linear solves, tight Newton: the maps are then the same in any order of evaluation */
  PetscCall(TSGetSNES(*ts, &snes));
  PetscCall(SNESSetTolerances(snes, 1e-14, 1e-14, 1e-14, 50, 1000));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscFunctionReturn(0);
}

static PetscBool verbose = PETSC_FALSE;

static PetscErrorCode Run(PetscBool tanh, const char type[], PetscInt levels, NNMGRITRelaxType relax, PetscInt N)
{
  Ctx          c;
  PetscRandom  r;
  TS           tsref, tsmg;
  Mat          J[2], Jp[2];
  Vec          u0, u, uref, lam, target, mu, lN, l0, uN;
  NNMGRIT      mg;
  PetscScalar *gref, u0a[4] = {0.5, -0.25, 0.75, 0.1};
  PetscReal    tf = 1.0, h, e[3] = {0, 0, 0}, s[3] = {0, 0, 0};
  PetscInt     itf, ita;
  const PetscScalar *x, *y;
  char         label[128];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.tanh   = tanh;
  c.n      = 4;
  c.N      = N;
  c.np     = tanh ? c.n * c.n + c.n : c.n * c.n;
  c.ntheta = tanh ? N * c.np : c.np;
  h        = tf / N;
  PetscCall(PetscMalloc3(c.ntheta, &c.theta, c.ntheta, &c.grad, c.ntheta, &gref));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 11));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < c.ntheta; i++) PetscCall(PetscRandomGetValue(r, &c.theta[i]));
  if (!tanh)
    for (PetscInt i = 0; i < c.n; i++) c.theta[i * c.n + i] -= 1.0;
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, c.n, u0a, &u0));
  PetscCall(VecDuplicate(u0, &u));
  PetscCall(VecDuplicate(u0, &lam));
  PetscCall(VecDuplicate(u0, &target));
  PetscCall(VecDuplicate(u0, &lN));
  PetscCall(VecDuplicate(u0, &l0));
  PetscCall(VecDuplicate(u0, &uN));
  PetscCall(VecDuplicate(u0, &uref));
  PetscCall(VecSetRandom(target, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(PetscMalloc1(tanh ? N : 1, &c.gk));
  for (PetscInt k = 0; k < (tanh ? N : 1); k++) PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, c.np, c.grad + k * c.np, &c.gk[k]));

  /* reference: one TSSolve and one TSAdjointSolve over [0, 1] with N steps; J = |u_N - target|^2/2 */
  c.fromstep = PETSC_TRUE;
  PetscCall(CreateTS(&c, type, &J[0], &Jp[0], &tsref));
  PetscCall(TSSetTimeStep(tsref, h));
  PetscCall(TSSetMaxSteps(tsref, N));
  PetscCall(TSSetMaxTime(tsref, tf));
  PetscCall(TSSetExactFinalTime(tsref, TS_EXACTFINALTIME_MATCHSTEP));
  PetscCall(TSSetSaveTrajectory(tsref));
  {
    TSTrajectory tj;
    TSAdapt      adapt;
    PetscCall(TSGetAdapt(tsref, &adapt));
    PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
    PetscCall(TSGetTrajectory(tsref, &tj));
    PetscCall(TSTrajectorySetType(tj, tsref, TSTRAJECTORYMEMORY));
  }
  PetscCall(VecCopy(u0, u));
  PetscCall(TSSolve(tsref, u));
  PetscCall(VecWAXPY(lam, -1.0, target, u));
  PetscCall(VecCopy(u, uref)); /* TSAdjointSolve overwrites the solution vector */
  PetscCall(PetscArrayzero(c.grad, c.ntheta));
  mu = c.gk[0];
  if (tanh) PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, c.ntheta, c.grad, &mu)); /* the whole gradient as one Vec */
  PetscCall(TSSetCostGradients(tsref, 1, &lam, &mu));
  PetscCall(TSAdjointSolve(tsref));
  PetscCall(PetscArraycpy(gref, c.grad, c.ntheta));

  /* MGRIT with the TS propagator */
  c.fromstep = PETSC_FALSE;
  PetscCall(CreateTS(&c, type, &J[1], &Jp[1], &tsmg));
  PetscCall(NNMGRITCreate(PETSC_COMM_WORLD, &mg));
  PetscCall(NNMGRITSetTimeSpan(mg, 0.0, tf, N));
  PetscCall(NNMGRITSetTS(mg, tsmg, Hook, &c));
  PetscCall(NNMGRITSetLevels(mg, levels));
  PetscCall(NNMGRITSetRelaxation(mg, relax));
  PetscCall(NNMGRITSetTolerances(mg, 1e-13, 0));
  PetscCall(NNMGRITSetFromOptions(mg));
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(NNMGRITGetFinalState(mg, uN));
  PetscCall(VecWAXPY(lN, -1.0, target, uN));
  PetscCall(PetscArrayzero(c.grad, c.ntheta));
  PetscCall(NNMGRITAdjointSolve(mg, lN, l0));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, c.grad, (PetscMPIInt)c.ntheta, MPIU_SCALAR, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_FALSE, &itf));
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_TRUE, &ita));

  PetscCall(VecGetArrayRead(uN, &x));
  PetscCall(VecGetArrayRead(uref, &y));
  for (PetscInt q = 0; q < c.n; q++) {
    e[0] = PetscMax(e[0], PetscAbsScalar(x[q] - y[q]));
    s[0] = PetscMax(s[0], PetscAbsScalar(y[q]));
  }
  PetscCall(VecRestoreArrayRead(uN, &x));
  PetscCall(VecRestoreArrayRead(uref, &y));
  PetscCall(VecGetArrayRead(l0, &x));
  PetscCall(VecGetArrayRead(lam, &y));
  for (PetscInt q = 0; q < c.n; q++) {
    e[1] = PetscMax(e[1], PetscAbsScalar(x[q] - y[q]));
    s[1] = PetscMax(s[1], PetscAbsScalar(y[q]));
  }
  PetscCall(VecRestoreArrayRead(l0, &x));
  PetscCall(VecRestoreArrayRead(lam, &y));
  for (PetscInt i = 0; i < c.ntheta; i++) {
    e[2] = PetscMax(e[2], PetscAbsScalar(c.grad[i] - gref[i]));
    s[2] = PetscMax(s[2], PetscAbsScalar(gref[i]));
  }
  for (PetscInt i = 0; i < 3; i++) e[i] /= s[i];
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s, TS %s, N = %" PetscInt_FMT ", %" PetscInt_FMT " levels, %s", tanh ? "tanh (parameters per step)" : "linear (shared parameters)", type, N, levels, NNMGRITRelaxTypes[relax]));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    [%s: iterations forward %" PetscInt_FMT " adjoint %" PetscInt_FMT ", relative errors %.2e %.2e %.2e]\n", label, itf, ita, (double)e[0], (double)e[1], (double)e[2]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: u_N, lambda_0 and the parameter gradient match TSSolve + TSAdjointSolve within 1e-10: %s\n", label, e[0] < 1e-10 && e[1] < 1e-10 && e[2] < 1e-10 ? "PASS" : "FAIL"));
  PetscCheck(e[0] < 1e-10 && e[1] < 1e-10 && e[2] < 1e-10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: relative errors %g %g %g", label, (double)e[0], (double)e[1], (double)e[2]);

  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(TSDestroy(&tsref));
  PetscCall(TSDestroy(&tsmg));
  for (PetscInt i = 0; i < 2; i++) {
    PetscCall(MatDestroy(&J[i]));
    PetscCall(MatDestroy(&Jp[i]));
  }
  if (tanh) PetscCall(VecDestroy(&mu));
  for (PetscInt k = 0; k < (tanh ? N : 1); k++) PetscCall(VecDestroy(&c.gk[k]));
  PetscCall(PetscFree(c.gk));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&uref));
  PetscCall(VecDestroy(&lam));
  PetscCall(VecDestroy(&target));
  PetscCall(VecDestroy(&lN));
  PetscCall(VecDestroy(&l0));
  PetscCall(VecDestroy(&uN));
  PetscCall(PetscFree3(c.theta, c.grad, gref));
  PetscFunctionReturn(0);
}

#if PETSC_VERSION_LT(3, 21, 0)
/* an RK tableau with a zero weight before its last stage gets a clear error when a parameter gradient is asked */
static PetscErrorCode ExpectZeroWeightError(void)
{
  Ctx            c;
  TS             ts;
  Mat            J, Jp;
  Vec            u0;
  NNMGRIT        mg;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.tanh   = PETSC_TRUE;
  c.n      = 4;
  c.N      = 8;
  c.np     = c.n * c.n + c.n;
  c.ntheta = c.N * c.np;
  PetscCall(PetscCalloc2(c.ntheta, &c.theta, c.ntheta, &c.grad));
  PetscCall(PetscMalloc1(c.N, &c.gk));
  for (PetscInt k = 0; k < c.N; k++) PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, c.np, c.grad + k * c.np, &c.gk[k]));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, c.n, &u0));
  PetscCall(VecSet(u0, 0.5));
  PetscCall(CreateTS(&c, "rk5dp", &J, &Jp, &ts));
  PetscCall(NNMGRITCreate(PETSC_COMM_WORLD, &mg));
  PetscCall(NNMGRITSetTimeSpan(mg, 0.0, 1.0, c.N));
  PetscCall(NNMGRITSetTS(mg, ts, Hook, &c));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNMGRITSolve(mg, u0); /* checked on every rank before any message */
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "rk 5dp: expected an error, got none");
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, "has the zero weight b_2 before its last stage", &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "rk 5dp: unexpected error message \"%s\"", msg ? msg : "");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "TS rk 5dp with a parameter gradient: clear error (has the zero weight b_2 before its last stage)\n"));
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(TSDestroy(&ts));
  PetscCall(MatDestroy(&J));
  PetscCall(MatDestroy(&Jp));
  PetscCall(VecDestroy(&u0));
  for (PetscInt k = 0; k < c.N; k++) PetscCall(VecDestroy(&c.gk[k]));
  PetscCall(PetscFree(c.gk));
  PetscCall(PetscFree2(c.theta, c.grad));
  PetscFunctionReturn(0);
}
#endif

/* a state distributed over a spatial communicator: ranks split into groups of 2 (space) x size/2 (time); the MGRIT
   communicator joins the ranks with the same spatial rank. du/dt = A u with a parallel A, TS rk4; compared with one
   TSSolve/TSAdjointSolve on the spatial communicator */
static PetscErrorCode RHSLinear(TS ts, PetscReal t, Vec U, Vec Fv, void *ctx)
{
  PetscFunctionBegin;
  (void)ts;
  (void)t;
  PetscCall(MatMult((Mat)ctx, U, Fv));
  PetscFunctionReturn(0);
}

static PetscErrorCode SpaceTimeTS(MPI_Comm comm, Mat A, TS *ts)
{
  PetscFunctionBegin;
  PetscCall(TSCreate(comm, ts));
  PetscCall(TSSetProblemType(*ts, TS_LINEAR));
  PetscCall(TSSetType(*ts, TSRK));
  PetscCall(TSRKSetType(*ts, TSRK4));
  PetscCall(TSSetRHSFunction(*ts, NULL, RHSLinear, A));
  PetscCall(TSSetRHSJacobian(*ts, A, A, TSComputeRHSJacobianConstant, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunSpaceTime(void)
{
  PetscMPIInt size, rank, nspace;
  MPI_Comm    scomm, tcomm;
  Mat         A;
  TS          tsref, tsmg;
  Vec         u, uref, lam, u0, uN, l0;
  NNMGRIT     mg;
  PetscInt    n = 12, N = 24, rs, re;
  PetscReal   e[2], s[2];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  nspace = size % 2 == 0 ? 2 : 1;
  PetscCallMPI(MPI_Comm_split(PETSC_COMM_WORLD, rank / nspace, rank, &scomm));
  PetscCallMPI(MPI_Comm_split(PETSC_COMM_WORLD, rank % nspace, rank, &tcomm));
  PetscCall(MatCreateDense(scomm, PETSC_DECIDE, PETSC_DECIDE, n, n, NULL, &A));
  PetscCall(MatGetOwnershipRange(A, &rs, &re));
  for (PetscInt i = rs; i < re; i++) /* damped rotation plus a deterministic perturbation */
    for (PetscInt j = 0; j < n; j++) PetscCall(MatSetValue(A, i, j, (i == j ? -0.5 : 0) + (j == (i + 1) % n ? 2.0 : 0) - (i == (j + 1) % n ? 2.0 : 0) + 0.1 * PetscSinReal(1.0 + i + 3.0 * j), INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &u0, NULL));
  PetscCall(VecDuplicate(u0, &u));
  PetscCall(VecDuplicate(u0, &uref));
  PetscCall(VecDuplicate(u0, &lam));
  PetscCall(VecDuplicate(u0, &uN));
  PetscCall(VecDuplicate(u0, &l0));
  PetscCall(VecGetOwnershipRange(u0, &rs, &re));
  for (PetscInt i = rs; i < re; i++) PetscCall(VecSetValue(u0, i, PetscCosReal(0.7 * i), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(u0));
  PetscCall(VecAssemblyEnd(u0));

  /* reference on the spatial communicator; J = sum(u_N) so lambda_N = 1 */
  PetscCall(SpaceTimeTS(scomm, A, &tsref));
  PetscCall(TSSetTimeStep(tsref, 1.0 / N));
  PetscCall(TSSetMaxSteps(tsref, N));
  PetscCall(TSSetMaxTime(tsref, 1.0));
  PetscCall(TSSetExactFinalTime(tsref, TS_EXACTFINALTIME_MATCHSTEP));
  PetscCall(TSSetSaveTrajectory(tsref));
  {
    TSTrajectory tj;
    PetscCall(TSGetTrajectory(tsref, &tj));
    PetscCall(TSTrajectorySetType(tj, tsref, TSTRAJECTORYMEMORY));
  }
  PetscCall(VecCopy(u0, u));
  PetscCall(TSSolve(tsref, u));
  PetscCall(VecCopy(u, uref));
  PetscCall(VecSet(lam, 1.0));
  PetscCall(TSSetCostGradients(tsref, 1, &lam, NULL));
  PetscCall(TSAdjointSolve(tsref));

  /* MGRIT over the time communicator, 3 levels */
  PetscCall(SpaceTimeTS(scomm, A, &tsmg));
  PetscCall(NNMGRITCreate(tcomm, &mg));
  PetscCall(NNMGRITSetTimeSpan(mg, 0.0, 1.0, N));
  PetscCall(NNMGRITSetTS(mg, tsmg, NULL, NULL));
  PetscCall(NNMGRITSetLevels(mg, 3));
  PetscCall(NNMGRITSetTolerances(mg, 1e-13, 0));
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(NNMGRITGetFinalState(mg, uN));
  PetscCall(VecSet(u, 1.0));
  PetscCall(NNMGRITAdjointSolve(mg, u, l0));
  PetscCall(VecNorm(uref, NORM_INFINITY, &s[0]));
  PetscCall(VecNorm(lam, NORM_INFINITY, &s[1]));
  PetscCall(VecAXPY(uN, -1.0, uref));
  PetscCall(VecAXPY(l0, -1.0, lam));
  PetscCall(VecNorm(uN, NORM_INFINITY, &e[0]));
  PetscCall(VecNorm(l0, NORM_INFINITY, &e[1]));
  e[0] /= s[0];
  e[1] /= s[1];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, e, 2, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    [space-time: %d spatial x %d time ranks, relative errors %.2e %.2e]\n", nspace, size / nspace, (double)e[0], (double)e[1]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "states distributed over a spatial communicator (2 spatial ranks per time chunk when the size is even): u_N and lambda_0 match TSSolve + TSAdjointSolve within 1e-10: %s\n", e[0] < 1e-10 && e[1] < 1e-10 ? "PASS" : "FAIL"));
  PetscCheck(e[0] < 1e-10 && e[1] < 1e-10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "space-time: relative errors %g %g", (double)e[0], (double)e[1]);
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(TSDestroy(&tsref));
  PetscCall(TSDestroy(&tsmg));
  PetscCall(MatDestroy(&A));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&uref));
  PetscCall(VecDestroy(&lam));
  PetscCall(VecDestroy(&uN));
  PetscCall(VecDestroy(&l0));
  PetscCallMPI(MPI_Comm_free(&scomm));
  PetscCallMPI(MPI_Comm_free(&tcomm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const char *types[] = {"rk1fe", "rk4", "rk3bs", "beuler", "cn"};
  PetscBool   zeroweight = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-zero_weight", &zeroweight, NULL));
  if (zeroweight) { /* RK tableaus with a zero weight: refused before PETSc 3.21, exact (and so checked) from 3.21 on */
#if PETSC_VERSION_LT(3, 21, 0)
    PetscCall(ExpectZeroWeightError());
#else
    PetscCall(Run(PETSC_FALSE, "rk5dp", 2, NNMGRIT_RELAX_FCF, 32)); /* shared parameters: 5dp reuses its last stage (FSAL) */
#endif
    PetscCall(PetscFinalize());
    return 0;
  }
  for (PetscInt t = 0; t < 5; t++) PetscCall(Run(PETSC_FALSE, types[t], 2, NNMGRIT_RELAX_FCF, 32));
  PetscCall(Run(PETSC_FALSE, "rk4", 3, NNMGRIT_RELAX_F, 32));
  PetscCall(Run(PETSC_FALSE, "cn", 3, NNMGRIT_RELAX_F, 32));
  for (PetscInt t = 0; t < 2; t++)
    for (PetscInt L = 2; L <= 3; L++)
      for (PetscInt relax = 0; relax < 2; relax++) PetscCall(Run(PETSC_TRUE, types[t], L, (NNMGRITRelaxType)relax, 32));
  PetscCall(Run(PETSC_TRUE, "beuler", 2, NNMGRIT_RELAX_FCF, 32));
  PetscCall(RunSpaceTime());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      output_file: output/mgrit_ts_1.out

   test:
      suffix: 2
      nsize: 2
      output_file: output/mgrit_ts_1.out

   test:
      suffix: 3
      nsize: 3
      output_file: output/mgrit_ts_1.out

   test:
      suffix: 4
      nsize: 4
      output_file: output/mgrit_ts_1.out

   test:
      suffix: 8
      nsize: 8
      output_file: output/mgrit_ts_1.out

   test:
      suffix: zero_weight_refused
      requires: !petsc_rk_adjoint_zero_weights
      nsize: 2
      args: -zero_weight

   test:
      suffix: zero_weight
      requires: petsc_rk_adjoint_zero_weights
      nsize: 2
      args: -zero_weight

TEST*/
