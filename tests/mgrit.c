static char help[] = "MGRIT (NNMGRIT) with hand-written propagators: forward and adjoint equal the sequential solve and its\n"
                     "adjoint on any number of ranks, for 2 and 3 levels, F and FCF; F-relaxation with two levels is exact\n"
                     "after N/m iterations; finite differences confirm the gradient; one-shot mode converges when warm-started.\n"
                     "Options: -verbose prints iteration counts and errors.\n";

#include <petnn.h>

/* du/dt = f(theta_k, u): "linear" f = A u (one A shared by all steps) or "tanh" f = tanh(W_k u + b_k) (per step),
   integrated by forward Euler or classical RK4, with the hand-written discrete adjoint of the RK stages. */
typedef struct {
  const char  *name;
  PetscBool    tanh, shared;
  PetscInt     scheme; /* 1: forward Euler, 4: RK4 */
  PetscInt     n, N, np, ntheta, obs;
  PetscReal    t0, tf;
  PetscScalar *theta, *grad, *target; /* target[(N+1)*n]: observations at k % obs == 0 (k > 0) and at N */
  PetscScalar  Y[4][16], K[4][16], Kb[4][16], Yb[16];
} Prob;

static const PetscReal RKa[4][4] = {{0}, {0.5}, {0, 0.5}, {0, 0, 1}};
static const PetscReal RKb4[4]   = {1.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 6};

static const PetscScalar *Theta(Prob *P, PetscInt k)
{
  return P->theta + (P->shared ? 0 : k * P->np);
}

static void F(Prob *P, const PetscScalar *th, const PetscScalar *y, PetscScalar *f)
{
  PetscInt n = P->n;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar z = P->tanh ? th[n * n + i] : 0;
    for (PetscInt j = 0; j < n; j++) z += th[i * n + j] * y[j];
    f[i] = P->tanh ? PetscTanhScalar(z) : z;
  }
}

/* yb += (df/dy)^T v; thb += (df/dtheta)^T v (thb may be NULL) */
static void FT(Prob *P, const PetscScalar *th, const PetscScalar *y, const PetscScalar *v, PetscScalar *yb, PetscScalar *thb)
{
  PetscInt n = P->n;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar s = 1;
    if (P->tanh) {
      PetscScalar z = th[n * n + i], t;
      for (PetscInt j = 0; j < n; j++) z += th[i * n + j] * y[j];
      t = PetscTanhScalar(z);
      s = 1 - t * t;
    }
    for (PetscInt j = 0; j < n; j++) yb[j] += th[i * n + j] * s * v[i];
    if (thb) {
      for (PetscInt j = 0; j < n; j++) thb[i * n + j] += s * v[i] * y[j];
      if (P->tanh) thb[n * n + i] += s * v[i];
    }
  }
}

static PetscInt Stages(Prob *P)
{
  return P->scheme == 1 ? 1 : 4;
}

static PetscReal RKb(Prob *P, PetscInt i)
{
  return P->scheme == 1 ? 1.0 : RKb4[i];
}

/* uout = Phi(uin), keeping the stages in P->Y, P->K */
static void RKStep(Prob *P, const PetscScalar *th, PetscReal dt, const PetscScalar *uin, PetscScalar *uout)
{
  PetscInt n = P->n, s = Stages(P);
  for (PetscInt i = 0; i < s; i++) {
    for (PetscInt q = 0; q < n; q++) {
      P->Y[i][q] = uin[q];
      for (PetscInt j = 0; j < i; j++) P->Y[i][q] += dt * RKa[i][j] * P->K[j][q];
    }
    F(P, th, P->Y[i], P->K[i]);
  }
  for (PetscInt q = 0; q < n; q++) {
    PetscScalar v = uin[q];
    for (PetscInt i = 0; i < s; i++) v += dt * RKb(P, i) * P->K[i][q];
    uout[q] = v;
  }
}

/* lout = (dPhi/du)^T lin at u; thb += (dPhi/dtheta)^T lin (thb may be NULL) */
static void RKAdjoint(Prob *P, const PetscScalar *th, PetscReal dt, const PetscScalar *u, const PetscScalar *lin, PetscScalar *lout, PetscScalar *thb)
{
  PetscInt    n = P->n, s = Stages(P);
  PetscScalar tmp[16];

  RKStep(P, th, dt, u, tmp);
  for (PetscInt q = 0; q < n; q++) lout[q] = lin[q];
  for (PetscInt i = 0; i < s; i++)
    for (PetscInt q = 0; q < n; q++) P->Kb[i][q] = dt * RKb(P, i) * lin[q];
  for (PetscInt i = s - 1; i >= 0; i--) {
    for (PetscInt q = 0; q < n; q++) P->Yb[q] = 0;
    FT(P, th, P->Y[i], P->Kb[i], P->Yb, thb);
    for (PetscInt q = 0; q < n; q++) lout[q] += P->Yb[q];
    for (PetscInt j = 0; j < i; j++)
      for (PetscInt q = 0; q < n; q++) P->Kb[j][q] += dt * RKa[i][j] * P->Yb[q];
  }
}

static PetscErrorCode Step(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec uin, Vec uout)
{
  Prob              *P = (Prob *)ctx;
  const PetscScalar *x;
  PetscScalar       *y;

  PetscFunctionBegin;
  (void)level;
  (void)t;
  PetscCall(VecGetArrayRead(uin, &x));
  PetscCall(VecGetArrayWrite(uout, &y));
  RKStep(P, Theta(P, k), dt, x, y);
  PetscCall(VecRestoreArrayRead(uin, &x));
  PetscCall(VecRestoreArrayWrite(uout, &y));
  PetscFunctionReturn(0);
}

static PetscErrorCode AdjointStep(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec u, Vec lin, Vec lout, PetscBool gradient)
{
  Prob              *P = (Prob *)ctx;
  const PetscScalar *x, *l;
  PetscScalar       *y;

  PetscFunctionBegin;
  (void)t;
  PetscCheck(!gradient || level == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "gradient asked on level %" PetscInt_FMT, level);
  PetscCall(VecGetArrayRead(u, &x));
  PetscCall(VecGetArrayRead(lin, &l));
  PetscCall(VecGetArrayWrite(lout, &y));
  RKAdjoint(P, Theta(P, k), dt, x, l, y, gradient ? P->grad + (P->shared ? 0 : k * P->np) : NULL);
  PetscCall(VecRestoreArrayRead(u, &x));
  PetscCall(VecRestoreArrayRead(lin, &l));
  PetscCall(VecRestoreArrayWrite(lout, &y));
  PetscFunctionReturn(0);
}

static PetscBool Observed(Prob *P, PetscInt k)
{
  return (PetscBool)(k == P->N || (P->obs > 0 && k > 0 && k % P->obs == 0));
}

/* J = 1/2 sum over observed k of |u_k - target_k|^2 */
static PetscErrorCode Forcing(void *ctx, PetscInt k, PetscReal t, Vec u, Vec g)
{
  Prob              *P = (Prob *)ctx;
  const PetscScalar *x;
  PetscScalar       *y;

  PetscFunctionBegin;
  (void)t;
  PetscCall(VecGetArrayRead(u, &x));
  PetscCall(VecGetArrayWrite(g, &y));
  for (PetscInt q = 0; q < P->n; q++) y[q] = Observed(P, k) ? x[q] - P->target[k * P->n + q] : 0;
  PetscCall(VecRestoreArrayRead(u, &x));
  PetscCall(VecRestoreArrayWrite(g, &y));
  PetscFunctionReturn(0);
}

/* sequential reference: states U[(N+1)n], loss, adjoints L[(N+1)n], gradient G (P->grad is used and restored) */
static PetscErrorCode Sequential(Prob *P, const PetscScalar *u0, PetscScalar *U, PetscScalar *L, PetscScalar *G, PetscReal *loss)
{
  PetscInt  n = P->n, N = P->N;
  PetscReal h = (P->tf - P->t0) / N, J = 0;

  PetscFunctionBegin;
  for (PetscInt q = 0; q < n; q++) U[q] = u0[q];
  for (PetscInt k = 0; k < N; k++) RKStep(P, Theta(P, k), h, U + k * n, U + (k + 1) * n);
  for (PetscInt k = 1; k <= N; k++)
    if (Observed(P, k))
      for (PetscInt q = 0; q < n; q++) J += 0.5 * PetscSqr(PetscRealPart(U[k * n + q] - P->target[k * n + q]));
  *loss = J;
  if (!L) PetscFunctionReturn(0);
  for (PetscInt q = 0; q < n; q++) L[N * n + q] = U[N * n + q] - P->target[N * n + q];
  PetscCall(PetscArrayzero(G, P->ntheta));
  for (PetscInt k = N - 1; k >= 0; k--) {
    RKAdjoint(P, Theta(P, k), h, U + k * n, L + (k + 1) * n, L + k * n, G + (P->shared ? 0 : k * P->np));
    if (Observed(P, k))
      for (PetscInt q = 0; q < n; q++) L[k * n + q] += U[k * n + q] - P->target[k * n + q];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ProbCreate(const char name[], PetscBool tanh, PetscInt scheme, PetscInt N, PetscInt obs, Prob *P)
{
  PetscRandom r;
  PetscInt    n = 4;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(P, sizeof(*P)));
  P->name   = name;
  P->tanh   = tanh;
  P->shared = (PetscBool)!tanh;
  P->scheme = scheme;
  P->n      = n;
  P->N      = N;
  P->obs    = obs;
  P->t0     = 0;
  P->tf     = 2.0;
  P->np     = tanh ? n * n + n : n * n;
  P->ntheta = P->shared ? P->np : N * P->np;
  PetscCall(PetscMalloc3(P->ntheta, &P->theta, P->ntheta, &P->grad, (N + 1) * n, &P->target));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 7 + N));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < P->ntheta; i++) PetscCall(PetscRandomGetValue(r, &P->theta[i]));
  if (!tanh) { /* A = -0.3 I + a rotation + noise: decaying oscillations; "oscillator": a fast rotation only, for which
                  a coarse forward-Euler step is a poor propagator and MGRIT converges slowly */
    PetscBool   osc;
    PetscScalar noise = 0.3, damp = -0.3, rot = 1.5;
    PetscCall(PetscStrcmp(name, "oscillator", &osc));
    if (osc) {
      noise = damp = 0;
      rot          = 8;
    }
    for (PetscInt i = 0; i < n; i++)
      for (PetscInt j = 0; j < n; j++) P->theta[i * n + j] = noise * P->theta[i * n + j] + (i == j ? damp : 0) + (j == (i + 1) % n ? rot : 0) - (i == (j + 1) % n ? rot : 0);
  } else
    for (PetscInt i = 0; i < P->ntheta; i++) P->theta[i] *= 1.5;
  for (PetscInt i = 0; i < (N + 1) * n; i++) PetscCall(PetscRandomGetValue(r, &P->target[i]));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode ProbDestroy(Prob *P)
{
  PetscFunctionBegin;
  PetscCall(PetscFree3(P->theta, P->grad, P->target));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt         levels, cf, maxit;
  NNMGRITRelaxType relax;
  NNMGRITMode      mode;
  PetscBool        userrange; /* a ragged split: rank 1 owns nothing, the others uneven chunks */
  PetscReal        rtol;
} Method;

static PetscErrorCode CreateSolver(Prob *P, const Method *M, NNMGRIT *mg)
{
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(NNMGRITCreate(PETSC_COMM_WORLD, mg));
  PetscCall(NNMGRITSetTimeSpan(*mg, P->t0, P->tf, P->N));
  PetscCall(NNMGRITSetStep(*mg, Step, P));
  PetscCall(NNMGRITSetAdjointStep(*mg, AdjointStep, P));
  if (P->obs) PetscCall(NNMGRITSetForcing(*mg, Forcing, P));
  PetscCall(NNMGRITSetLevels(*mg, M->levels));
  PetscCall(NNMGRITSetCoarsening(*mg, M->cf));
  PetscCall(NNMGRITSetRelaxation(*mg, M->relax));
  PetscCall(NNMGRITSetMaxIterations(*mg, M->maxit, -1));
  PetscCall(NNMGRITSetTolerances(*mg, M->rtol, 0.0));
  PetscCall(NNMGRITSetMode(*mg, M->mode, 1));
  if (M->userrange) { /* boundaries at 0, 0.3N, (rank 1 empty), then uneven, not aligned with m */
    PetscInt ks, ke;
    if (size == 1) {
      ks = 0;
      ke = P->N;
    } else {
      PetscInt b[64];
      b[0] = 0;
      b[1] = (3 * P->N) / 10 + 1;
      b[2] = b[1];
      for (PetscMPIInt r = 3; r <= size; r++) b[r] = b[1] + ((P->N - b[1]) * (r - 2) * (r - 1)) / ((size - 2) * (size - 1));
      if (size == 2) b[2] = P->N;
      ks = b[rank];
      ke = b[rank + 1];
    }
    PetscCall(NNMGRITSetOwnershipRange(*mg, ks, ke));
  }
  PetscCall(NNMGRITSetFromOptions(*mg));
  PetscFunctionReturn(0);
}

/* relative max-norm errors of the owned states, owned adjoints, lambda_0 and the gradient against the reference */
static PetscErrorCode Compare(Prob *P, NNMGRIT mg, const PetscScalar *U, const PetscScalar *L, const PetscScalar *G, Vec uN, Vec l0, PetscBool adjoint, PetscReal err[3])
{
  PetscInt           ks, ke, n = P->n;
  PetscReal          e[3] = {0, 0, 0}, s[3] = {0, 0, 0};
  const PetscScalar *x;
  Vec                v;

  PetscFunctionBegin;
  PetscCall(NNMGRITGetOwnershipRange(mg, &ks, &ke));
  for (PetscInt k = ks; k <= ke && ks < ke; k++) {
    PetscCall(NNMGRITGetState(mg, k, &v));
    PetscCall(VecGetArrayRead(v, &x));
    for (PetscInt q = 0; q < n; q++) e[0] = PetscMax(e[0], PetscAbsScalar(x[q] - U[k * n + q]));
    PetscCall(VecRestoreArrayRead(v, &x));
    if (adjoint) {
      PetscCall(NNMGRITGetAdjointState(mg, k, &v));
      PetscCall(VecGetArrayRead(v, &x));
      for (PetscInt q = 0; q < n; q++) e[1] = PetscMax(e[1], PetscAbsScalar(x[q] - L[k * n + q]));
      PetscCall(VecRestoreArrayRead(v, &x));
    }
  }
  PetscCall(NNMGRITGetFinalState(mg, uN));
  PetscCall(VecGetArrayRead(uN, &x));
  for (PetscInt q = 0; q < n; q++) e[0] = PetscMax(e[0], PetscAbsScalar(x[q] - U[P->N * n + q]));
  PetscCall(VecRestoreArrayRead(uN, &x));
  for (PetscInt i = 0; i < (P->N + 1) * n; i++) s[0] = PetscMax(s[0], PetscAbsScalar(U[i]));
  if (adjoint) {
    PetscScalar *g;
    PetscCall(VecGetArrayRead(l0, &x));
    for (PetscInt q = 0; q < n; q++) e[1] = PetscMax(e[1], PetscAbsScalar(x[q] - L[q]));
    PetscCall(VecRestoreArrayRead(l0, &x));
    for (PetscInt i = 0; i < (P->N + 1) * n; i++) s[1] = PetscMax(s[1], PetscAbsScalar(L[i]));
    /* each rank holds the gradient of its own steps: sum them */
    PetscCall(PetscMalloc1(P->ntheta, &g));
    PetscCall(PetscArraycpy(g, P->grad, P->ntheta));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, (PetscMPIInt)P->ntheta, MPIU_SCALAR, MPIU_SUM, PETSC_COMM_WORLD));
    for (PetscInt i = 0; i < P->ntheta; i++) {
      e[2] = PetscMax(e[2], PetscAbsScalar(g[i] - G[i]));
      s[2] = PetscMax(s[2], PetscAbsScalar(G[i]));
    }
    PetscCall(PetscFree(g));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, e, 3, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  for (PetscInt i = 0; i < 3; i++) err[i] = s[i] > 0 ? e[i] / s[i] : e[i];
  PetscFunctionReturn(0);
}

static PetscBool verbose = PETSC_FALSE;

/* MGRIT to a tight tolerance against the sequential solve and adjoint */
static PetscErrorCode TestEquivalence(Prob *P, const Method *M, const char label[])
{
  NNMGRIT      mg;
  PetscScalar *U, *L, *G, u0a[4] = {0.5, -0.25, 0.75, 0.1};
  Vec          u0, uN, lN, l0;
  PetscReal    loss, err[3];
  PetscInt     itf, ita, L_;
  PetscBool    ok;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3((P->N + 1) * P->n, &U, (P->N + 1) * P->n, &L, P->ntheta, &G));
  PetscCall(Sequential(P, u0a, U, L, G, &loss));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, P->n, u0a, &u0));
  PetscCall(VecDuplicate(u0, &uN));
  PetscCall(VecDuplicate(u0, &lN));
  PetscCall(VecDuplicate(u0, &l0));
  PetscCall(CreateSolver(P, M, &mg));
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(NNMGRITGetFinalState(mg, uN));
  {
    PetscScalar *l;
    const PetscScalar *x;
    PetscCall(VecGetArrayRead(uN, &x));
    PetscCall(VecGetArrayWrite(lN, &l));
    for (PetscInt q = 0; q < P->n; q++) l[q] = x[q] - P->target[P->N * P->n + q];
    PetscCall(VecRestoreArrayRead(uN, &x));
    PetscCall(VecRestoreArrayWrite(lN, &l));
  }
  PetscCall(PetscArrayzero(P->grad, P->ntheta));
  PetscCall(NNMGRITAdjointSolve(mg, lN, l0));
  PetscCall(Compare(P, mg, U, L, G, uN, l0, PETSC_TRUE, err));
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_FALSE, &itf));
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_TRUE, &ita));
  PetscCall(NNMGRITGetNumLevels(mg, &L_));
  PetscCheck(L_ == M->levels, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " levels in use, %" PetscInt_FMT " asked", label, L_, M->levels);
  ok = (PetscBool)(err[0] < 1e-10 && err[1] < 1e-10 && err[2] < 1e-10);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    [%s: iterations forward %" PetscInt_FMT " adjoint %" PetscInt_FMT ", relative errors %.2e %.2e %.2e]\n", label, itf, ita, (double)err[0], (double)err[1], (double)err[2]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: states, adjoints and gradient match the sequential solve: %s\n", label, ok ? "PASS" : "FAIL"));
  PetscCheck(ok, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: relative errors %g (states) %g (adjoints) %g (gradient) exceed 1e-10", label, (double)err[0], (double)err[1], (double)err[2]);
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&uN));
  PetscCall(VecDestroy(&lN));
  PetscCall(VecDestroy(&l0));
  PetscCall(PetscFree3(U, L, G));
  PetscFunctionReturn(0);
}

/* F-relaxation, two levels, exactly N/m iterations: the sequential solution to round-off */
static PetscErrorCode TestExactness(Prob *P, PetscInt cf, PetscBool slow)
{
  Method       M = {2, cf, P->N / cf, NNMGRIT_RELAX_F, NNMGRIT_EXACT, PETSC_FALSE, 0.0};
  NNMGRIT      mg;
  PetscScalar *U, u0a[4] = {0.5, -0.25, 0.75, 0.1};
  Vec          u0, uN;
  PetscReal    loss, err[3], errm1 = 0;
  PetscInt     it;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1((P->N + 1) * P->n, &U));
  PetscCall(Sequential(P, u0a, U, NULL, NULL, &loss));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, P->n, u0a, &u0));
  PetscCall(VecDuplicate(u0, &uN));
  /* one iteration fewer, for comparison (-verbose) */
  PetscCall(CreateSolver(P, &M, &mg));
  PetscCall(NNMGRITSetMode(mg, NNMGRIT_ONE_SHOT, P->N / cf - 1)); /* a fixed number of iterations from a cold start */
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(Compare(P, mg, U, NULL, NULL, uN, NULL, PETSC_FALSE, err));
  errm1 = err[0];
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(CreateSolver(P, &M, &mg));
  PetscCall(NNMGRITSetMode(mg, NNMGRIT_ONE_SHOT, P->N / cf));
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_FALSE, &it));
  PetscCall(Compare(P, mg, U, NULL, NULL, uN, NULL, PETSC_FALSE, err));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    [relative error after N/m-1 iterations %.2e, after N/m %.2e]\n", (double)errm1, (double)err[0]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, F-relaxation, two levels, m = %" PetscInt_FMT ": the sequential solution after N/m = %" PetscInt_FMT " iterations (relative error below 1e-13): %s\n", P->name, cf, it, err[0] < 1e-13 ? "PASS" : "FAIL"));
  PetscCheck(it == P->N / cf && err[0] < 1e-13, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "not exact after N/m iterations: relative error %g", (double)err[0]);
  if (slow) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: not yet after N/m-1 iterations (relative error above 1e-6): %s\n", P->name, errm1 > 1e-6 ? "PASS" : "FAIL"));
    PetscCheck(errm1 > 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "expected a slowly converging case, got relative error %g after N/m-1 iterations", (double)errm1);
  }
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&uN));
  PetscCall(PetscFree(U));
  PetscFunctionReturn(0);
}

/* loss through an MGRIT solve (to tolerance) */
static PetscErrorCode MGRITLoss(Prob *P, const Method *M, const PetscScalar *u0a, PetscReal *loss)
{
  NNMGRIT      mg;
  Vec          u0;
  PetscReal    J = 0;
  PetscInt     ks, ke;
  PetscScalar  u0c[4];

  PetscFunctionBegin;
  PetscCall(PetscArraycpy(u0c, u0a, P->n));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, P->n, u0c, &u0));
  PetscCall(CreateSolver(P, M, &mg));
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(NNMGRITGetOwnershipRange(mg, &ks, &ke));
  for (PetscInt k = ks + 1; k <= ke; k++) {
    Vec                v;
    const PetscScalar *x;
    if (!Observed(P, k)) continue;
    PetscCall(NNMGRITGetState(mg, k, &v));
    PetscCall(VecGetArrayRead(v, &x));
    for (PetscInt q = 0; q < P->n; q++) J += 0.5 * PetscSqr(PetscRealPart(x[q] - P->target[k * P->n + q]));
    PetscCall(VecRestoreArrayRead(v, &x));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &J, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  *loss = J;
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(VecDestroy(&u0));
  PetscFunctionReturn(0);
}

/* directional derivative of the loss (MGRIT forward) by central differences vs the adjoint-MGRIT gradient */
static PetscErrorCode TestFiniteDifferences(Prob *P, const Method *M)
{
  NNMGRIT      mg;
  PetscScalar  u0a[4] = {0.5, -0.25, 0.75, 0.1}, du0[4], up[4], *dth, *th0, *g;
  Vec          u0, uN, lN, l0;
  PetscReal    eps = 1e-6, Jp, Jm, fd, ad = 0, rel;
  PetscRandom  r;
  const PetscScalar *x;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(P->ntheta, &dth, P->ntheta, &th0, P->ntheta, &g));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 99));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < P->ntheta; i++) PetscCall(PetscRandomGetValue(r, &dth[i]));
  for (PetscInt i = 0; i < P->n; i++) PetscCall(PetscRandomGetValue(r, &du0[i]));
  PetscCall(PetscRandomDestroy(&r));
  /* gradient by adjoint MGRIT */
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, P->n, u0a, &u0));
  PetscCall(VecDuplicate(u0, &uN));
  PetscCall(VecDuplicate(u0, &lN));
  PetscCall(VecDuplicate(u0, &l0));
  PetscCall(CreateSolver(P, M, &mg));
  PetscCall(NNMGRITSolve(mg, u0));
  PetscCall(NNMGRITGetFinalState(mg, uN));
  PetscCall(VecCopy(uN, lN));
  {
    PetscScalar *l;
    PetscCall(VecGetArray(lN, &l));
    for (PetscInt q = 0; q < P->n; q++) l[q] -= P->target[P->N * P->n + q];
    PetscCall(VecRestoreArray(lN, &l));
  }
  PetscCall(PetscArrayzero(P->grad, P->ntheta));
  PetscCall(NNMGRITAdjointSolve(mg, lN, l0));
  PetscCall(PetscArraycpy(g, P->grad, P->ntheta));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, (PetscMPIInt)P->ntheta, MPIU_SCALAR, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCall(VecGetArrayRead(l0, &x));
  for (PetscInt q = 0; q < P->n; q++) ad += PetscRealPart(x[q] * du0[q]);
  PetscCall(VecRestoreArrayRead(l0, &x));
  for (PetscInt i = 0; i < P->ntheta; i++) ad += PetscRealPart(g[i] * dth[i]);
  PetscCall(NNMGRITDestroy(&mg));
  /* central differences */
  PetscCall(PetscArraycpy(th0, P->theta, P->ntheta));
  for (PetscInt sgn = -1; sgn <= 1; sgn += 2) {
    for (PetscInt i = 0; i < P->ntheta; i++) P->theta[i] = th0[i] + sgn * eps * dth[i];
    for (PetscInt q = 0; q < P->n; q++) up[q] = u0a[q] + sgn * eps * du0[q];
    PetscCall(MGRITLoss(P, M, up, sgn > 0 ? &Jp : &Jm));
  }
  PetscCall(PetscArraycpy(P->theta, th0, P->ntheta));
  fd  = (Jp - Jm) / (2 * eps);
  rel = PetscAbsReal(fd - ad) / PetscMax(PetscAbsReal(fd), 1e-12);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    [directional derivative: adjoint %.12e, finite differences %.12e, relative difference %.2e]\n", (double)ad, (double)fd, (double)rel));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: adjoint-MGRIT directional derivative (u_0 and parameters) matches central differences within 1e-6: %s\n", P->name, rel < 1e-6 ? "PASS" : "FAIL"));
  PetscCheck(rel < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: relative difference %g", (double)rel);
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&uN));
  PetscCall(VecDestroy(&lN));
  PetscCall(VecDestroy(&l0));
  PetscCall(PetscFree3(dth, th0, g));
  PetscFunctionReturn(0);
}

/* one-shot: 1 forward and 1 adjoint iteration per call, warm-started; repeated calls with fixed parameters reach
   the exact gradient (they continue the same iteration) */
static PetscErrorCode TestOneShot(Prob *P)
{
  Method       M = {2, 4, 0, NNMGRIT_RELAX_FCF, NNMGRIT_ONE_SHOT, PETSC_FALSE, 0.0};
  NNMGRIT      mg;
  PetscScalar *U, *L, *G, u0a[4] = {0.5, -0.25, 0.75, 0.1};
  Vec          u0, uN, lN, l0;
  PetscReal    loss, err[3], first = 0, last = 0;
  PetscInt     calls = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3((P->N + 1) * P->n, &U, (P->N + 1) * P->n, &L, P->ntheta, &G));
  PetscCall(Sequential(P, u0a, U, L, G, &loss));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, P->n, u0a, &u0));
  PetscCall(VecDuplicate(u0, &uN));
  PetscCall(VecDuplicate(u0, &lN));
  PetscCall(VecDuplicate(u0, &l0));
  PetscCall(CreateSolver(P, &M, &mg));
  for (calls = 1; calls <= 40; calls++) {
    PetscScalar       *l;
    const PetscScalar *x;

    PetscCall(NNMGRITSolve(mg, u0));
    PetscCall(NNMGRITGetFinalState(mg, uN));
    PetscCall(VecGetArrayRead(uN, &x));
    PetscCall(VecGetArrayWrite(lN, &l));
    for (PetscInt q = 0; q < P->n; q++) l[q] = x[q] - P->target[P->N * P->n + q];
    PetscCall(VecRestoreArrayRead(uN, &x));
    PetscCall(VecRestoreArrayWrite(lN, &l));
    PetscCall(PetscArrayzero(P->grad, P->ntheta));
    PetscCall(NNMGRITAdjointSolve(mg, lN, l0));
    PetscCall(Compare(P, mg, U, L, G, uN, l0, PETSC_TRUE, err));
    if (calls == 1) first = err[2];
    last = err[2];
    if (last < 1e-10) break;
  }
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "    [one-shot gradient relative error: %.2e after the first call, %.2e after %" PetscInt_FMT " calls]\n", (double)first, (double)last, calls));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, one-shot mode (1 iteration per solve, warm start): inexact after one call, the exact gradient within 1e-10 after repeated calls: %s\n", P->name, first > 1e-6 && last < 1e-10 ? "PASS" : "FAIL"));
  PetscCheck(first > 1e-6 && last < 1e-10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "one-shot: gradient errors %g (first call) %g (after %" PetscInt_FMT " calls)", (double)first, (double)last, calls);
  PetscCall(NNMGRITDestroy(&mg));
  PetscCall(VecDestroy(&u0));
  PetscCall(VecDestroy(&uN));
  PetscCall(VecDestroy(&lN));
  PetscCall(VecDestroy(&l0));
  PetscCall(PetscFree3(U, L, G));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Prob        P;
  char        label[128];
  const char *schemes[] = {"", "Euler", "", "", "RK4"};

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  /* equivalence: both problems, Euler and RK4, 2 and 3 levels, F and FCF; the linear one with observations */
  for (PetscInt tanh = 0; tanh < 2; tanh++) {
    for (PetscInt scheme = 1; scheme <= 4; scheme += 3) {
      PetscCall(ProbCreate(tanh ? "tanh" : "linear", (PetscBool)tanh, scheme, 64, tanh ? 0 : 8, &P));
      for (PetscInt L = 2; L <= 3; L++) {
        for (PetscInt relax = 0; relax < 2; relax++) {
          Method M = {L, 2, 100, (NNMGRITRelaxType)relax, NNMGRIT_EXACT, PETSC_FALSE, 1e-13};
          PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s, N = 64, m = 2, %" PetscInt_FMT " levels, %s", P.name, schemes[scheme], L, NNMGRITRelaxTypes[relax]));
          PetscCall(TestEquivalence(&P, &M, label));
        }
      }
      PetscCall(ProbDestroy(&P));
    }
  }
  /* ragged: N not a multiple of m^2, a split not aligned with the C-points and a rank without steps */
  PetscCall(ProbCreate("tanh", PETSC_TRUE, 4, 45, 5, &P));
  for (PetscInt relax = 0; relax < 2; relax++) {
    Method M = {3, 3, 100, (NNMGRITRelaxType)relax, NNMGRIT_EXACT, PETSC_TRUE, 1e-13};
    PetscCall(PetscSNPrintf(label, sizeof(label), "tanh RK4 with observations, N = 45, m = 3, 3 levels, %s, uneven split", NNMGRITRelaxTypes[relax]));
    PetscCall(TestEquivalence(&P, &M, label));
  }
  {
    Method M = {1, 3, 100, NNMGRIT_RELAX_F, NNMGRIT_EXACT, PETSC_TRUE, 1e-13};
    PetscCall(TestEquivalence(&P, &M, "tanh RK4 with observations, N = 45, 1 level (sequential, pipelined), uneven split"));
  }
  PetscCall(ProbDestroy(&P));
  /* fewer steps than ranks on the coarse grid (and on the fine grid with 8 ranks) */
  PetscCall(ProbCreate("tanh", PETSC_TRUE, 1, 6, 0, &P));
  for (PetscInt L = 2; L <= 3; L++) {
    Method M = {L, 2, 100, NNMGRIT_RELAX_FCF, NNMGRIT_EXACT, PETSC_FALSE, 1e-13};
    PetscCall(PetscSNPrintf(label, sizeof(label), "tanh Euler, N = 6, m = 2, %" PetscInt_FMT " levels, FCF", L));
    PetscCall(TestEquivalence(&P, &M, label));
  }
  PetscCall(ProbDestroy(&P));
  /* exactness after N/m iterations with F-relaxation and two levels */
  PetscCall(ProbCreate("linear", PETSC_FALSE, 1, 48, 0, &P));
  PetscCall(TestExactness(&P, 4, PETSC_FALSE));
  PetscCall(ProbDestroy(&P));
  PetscCall(ProbCreate("oscillator", PETSC_FALSE, 1, 48, 0, &P));
  PetscCall(TestExactness(&P, 4, PETSC_TRUE));
  PetscCall(ProbDestroy(&P));
  PetscCall(ProbCreate("tanh", PETSC_TRUE, 4, 48, 0, &P));
  PetscCall(TestExactness(&P, 2, PETSC_FALSE));
  PetscCall(TestExactness(&P, 3, PETSC_FALSE));
  PetscCall(ProbDestroy(&P));
  /* finite differences */
  PetscCall(ProbCreate("tanh RK4 with observations", PETSC_TRUE, 4, 32, 4, &P));
  {
    Method M = {3, 2, 100, NNMGRIT_RELAX_FCF, NNMGRIT_EXACT, PETSC_FALSE, 1e-13};
    PetscCall(TestFiniteDifferences(&P, &M));
  }
  PetscCall(ProbDestroy(&P));
  PetscCall(ProbCreate("linear Euler", PETSC_FALSE, 1, 32, 0, &P));
  {
    Method M = {2, 4, 100, NNMGRIT_RELAX_F, NNMGRIT_EXACT, PETSC_FALSE, 1e-13};
    PetscCall(TestFiniteDifferences(&P, &M));
  }
  PetscCall(ProbDestroy(&P));
  /* one-shot */
  PetscCall(ProbCreate("tanh RK4", PETSC_TRUE, 4, 64, 0, &P));
  PetscCall(TestOneShot(&P));
  PetscCall(ProbDestroy(&P));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      output_file: output/mgrit_1.out

   test:
      suffix: 2
      nsize: 2
      output_file: output/mgrit_1.out

   test:
      suffix: 3
      nsize: 3
      output_file: output/mgrit_1.out

   test:
      suffix: 4
      nsize: 4
      output_file: output/mgrit_1.out

   test:
      suffix: 8
      nsize: 8
      output_file: output/mgrit_1.out

TEST*/
