/*
   NNMGRIT: the object (creation, options, viewing, set up). The algorithm is in mgrit_solve.c, the
   TS-based default propagator in mgrit_ts.c.

   The fine grid has N steps t_k = t0 + k h, h = (tf - t0)/N. Rank r owns the steps range[r]..range[r+1]-1,
   so it stores the states u_k, range[r] < k <= range[r+1] (the outputs of its steps), and in the adjoint the
   lambda_k, range[r] <= k < range[r+1] (the inputs of its steps). Level l+1 keeps every m-th point of level l.
*/
#include <petnn/private/mgritimpl.h>

PetscClassId  NNMGRIT_CLASSID;
PetscLogEvent NNMGRIT_Solve, NNMGRIT_AdjointSolve, NNMGRIT_Step, NNMGRIT_AdjointStep, NNMGRIT_Gradient, NNMGRIT_Wait;

const char *const NNMGRITModes[]      = {"exact", "one_shot", "NNMGRITMode", "NNMGRIT_", NULL};
const char *const NNMGRITRelaxTypes[] = {"F", "FCF", "NNMGRITRelaxType", "NNMGRIT_RELAX_", NULL};

static PetscBool NNMGRITPackageInitialized = PETSC_FALSE;

static PetscErrorCode NNMGRITFinalizePackage(void)
{
  PetscFunctionBegin;
  NNMGRITPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITInitializePackage - registers the NNMGRIT class and its log events; called by NNMGRITCreate()

   Level: developer

.seealso: `NNMGRITCreate()`, `PetNNInitializePackage()`
@*/
PetscErrorCode NNMGRITInitializePackage(void)
{
  PetscFunctionBegin;
  if (NNMGRITPackageInitialized) PetscFunctionReturn(0);
  NNMGRITPackageInitialized = PETSC_TRUE;
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscClassIdRegister("NN MGRIT", &NNMGRIT_CLASSID));
  PetscCall(PetscLogEventRegister("MGRITSolve", NNMGRIT_CLASSID, &NNMGRIT_Solve));
  PetscCall(PetscLogEventRegister("MGRITAdjSolve", NNMGRIT_CLASSID, &NNMGRIT_AdjointSolve));
  PetscCall(PetscLogEventRegister("MGRITStep", NNMGRIT_CLASSID, &NNMGRIT_Step));
  PetscCall(PetscLogEventRegister("MGRITAdjStep", NNMGRIT_CLASSID, &NNMGRIT_AdjointStep));
  PetscCall(PetscLogEventRegister("MGRITGradient", NNMGRIT_CLASSID, &NNMGRIT_Gradient));
  PetscCall(PetscLogEventRegister("MGRITWait", NNMGRIT_CLASSID, &NNMGRIT_Wait));
  PetscCall(PetscRegisterFinalize(NNMGRITFinalizePackage));
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITCreate - creates a multigrid-reduction-in-time solver for u_{k+1} = Phi_k(u_k) over the ranks of comm

   Collective

   Input Parameter:
.  comm - the "layer" communicator: the N time steps are split in contiguous chunks over its ranks

   Output Parameter:
.  mg - the solver

   Notes:
   The states are Vecs with the layout of the template (NNMGRITSetStateTemplate()); usually sequential, one
   full state per rank. A state distributed over a spatial communicator works too when comm connects the
   processes holding the same piece of the state in different time chunks (MPI_Comm_split by spatial rank).

   Defaults: coarsening factor 2, 2 levels, FCF-relaxation, exact mode with rtol 1e-10, atol 1e-50, at most 50
   iterations.

   Level: beginner

.seealso: `NNMGRITSetTimeSpan()`, `NNMGRITSetStep()`, `NNMGRITSetTS()`, `NNMGRITSolve()`, `NNMGRITAdjointSolve()`
@*/
PetscErrorCode NNMGRITCreate(MPI_Comm comm, NNMGRIT *mg)
{
  NNMGRIT m;

  PetscFunctionBegin;
  PetscValidPointer(mg, 2);
  PetscCall(NNMGRITInitializePackage());
  PetscCall(PetscHeaderCreate(m, NNMGRIT_CLASSID, "NNMGRIT", "Multigrid reduction in time", "NNMGRIT", comm, NNMGRITDestroy, NNMGRITView));
  m->t0         = 0.0;
  m->tf         = 1.0;
  m->cf         = 2;
  m->maxlevels  = 2;
  m->relax      = NNMGRIT_RELAX_FCF;
  m->max_it     = 50;
  m->adj_max_it = -1; /* same as max_it */
  m->oneshot_it = 1;
  m->rtol       = 1e-10;
  m->atol       = 1e-50;
  m->mode       = NNMGRIT_EXACT;
  m->kstart = m->kend = -1;
  PetscCall(PetscObjectChangeTypeName((PetscObject)m, "fas")); /* the one algorithm: FAS-MGRIT with injection */
  PetscCallMPI(MPI_Comm_dup(comm, &m->comm));
  PetscCallMPI(MPI_Comm_rank(comm, &m->rank));
  PetscCallMPI(MPI_Comm_size(comm, &m->size));
  *mg = m;
  PetscFunctionReturn(0);
}

/* frees everything NNMGRITSetUp() made; the iterates (and warm start) are lost */
static PetscErrorCode NNMGRITReset(NNMGRIT mg)
{
  PetscFunctionBegin;
  PetscCall(NNMGRITGridReset(mg, &mg->fwd));
  PetscCall(NNMGRITGridReset(mg, &mg->adj));
  PetscCall(NNMGRITPoolReset(mg));
  PetscCall(VecDestroy(&mg->work));
  PetscCall(VecDestroy(&mg->work2));
  PetscCall(PetscFree(mg->range));
  mg->setupcalled = PETSC_FALSE;
  mg->fwddone     = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITDestroy - destroys the solver

   Collective

   Level: beginner
@*/
PetscErrorCode NNMGRITDestroy(NNMGRIT *mg)
{
  PetscFunctionBegin;
  if (!*mg) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*mg, NNMGRIT_CLASSID, 1);
  if (--((PetscObject)(*mg))->refct > 0) {
    *mg = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(NNMGRITReset(*mg));
  PetscCall(VecDestroy(&(*mg)->tmpl));
  if ((*mg)->tspropdestroy) PetscCall((*(*mg)->tspropdestroy)(&(*mg)->tsprop));
  PetscCallMPI(MPI_Comm_free(&(*mg)->comm));
  PetscCall(PetscHeaderDestroy(mg));
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITSetOptionsPrefix - sets the prefix of the solver's options (-<prefix>mgrit_cf, ...)

   Level: intermediate
@*/
PetscErrorCode NNMGRITSetOptionsPrefix(NNMGRIT mg, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)mg, prefix));
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITAppendOptionsPrefix - appends to the prefix of the solver's options

   Level: intermediate
@*/
PetscErrorCode NNMGRITAppendOptionsPrefix(NNMGRIT mg, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)mg, prefix));
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetFromOptions - reads the solver's options

   Collective

   Options Database Keys:
+  -mgrit_cf <m> - coarsening factor (C-points every m steps), at least 2
.  -mgrit_levels <L> - number of levels (1: the sequential solve, pipelined over the ranks)
.  -mgrit_relax <F,FCF> - relaxation
.  -mgrit_max_it <n> - maximum forward iterations (exact mode)
.  -mgrit_adjoint_max_it <n> - maximum adjoint iterations (exact mode; default the forward's)
.  -mgrit_rtol <r> - stop when the residual norm falls below r times the first one
.  -mgrit_atol <a> - or below a
.  -mgrit_mode <exact,one_shot> - iterate to the tolerances, or a fixed number of warm-started iterations
.  -mgrit_one_shot_it <n> - iterations per solve in one-shot mode
.  -mgrit_warm_start - exact mode: start from the previous solve's iterate
.  -mgrit_monitor - print the residual norm of every iteration
-  -mgrit_view - view the solver after each NNMGRITSolve()

   Level: beginner

.seealso: `NNMGRITSetCoarsening()`, `NNMGRITSetLevels()`, `NNMGRITSetRelaxation()`, `NNMGRITSetMode()`
@*/
PetscErrorCode NNMGRITSetFromOptions(NNMGRIT mg)
{
  PetscInt         cf = mg->cf, L = mg->maxlevels, it, adjit;
  PetscBool        flg;
  NNMGRITRelaxType relax = mg->relax;
  NNMGRITMode      mode  = mg->mode;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)mg);
  PetscCall(PetscOptionsInt("-mgrit_cf", "Coarsening factor: C-points every m steps", "NNMGRITSetCoarsening", cf, &cf, &flg));
  if (flg) PetscCall(NNMGRITSetCoarsening(mg, cf));
  PetscCall(PetscOptionsInt("-mgrit_levels", "Number of time grids (1: sequential)", "NNMGRITSetLevels", L, &L, &flg));
  if (flg) PetscCall(NNMGRITSetLevels(mg, L));
  PetscCall(PetscOptionsEnum("-mgrit_relax", "Relaxation", "NNMGRITSetRelaxation", NNMGRITRelaxTypes, (PetscEnum)relax, (PetscEnum *)&relax, &flg));
  if (flg) PetscCall(NNMGRITSetRelaxation(mg, relax));
  it    = mg->max_it;
  adjit = mg->adj_max_it;
  PetscCall(PetscOptionsInt("-mgrit_max_it", "Maximum forward iterations (exact mode)", "NNMGRITSetMaxIterations", it, &it, NULL));
  PetscCall(PetscOptionsInt("-mgrit_adjoint_max_it", "Maximum adjoint iterations (exact mode; -1: as the forward)", "NNMGRITSetMaxIterations", adjit, &adjit, NULL));
  PetscCall(NNMGRITSetMaxIterations(mg, it, adjit));
  PetscCall(PetscOptionsReal("-mgrit_rtol", "Relative tolerance on the residual norm", "NNMGRITSetTolerances", mg->rtol, &mg->rtol, NULL));
  PetscCall(PetscOptionsReal("-mgrit_atol", "Absolute tolerance on the residual norm", "NNMGRITSetTolerances", mg->atol, &mg->atol, NULL));
  PetscCall(NNMGRITSetTolerances(mg, mg->rtol, mg->atol));
  it = mg->oneshot_it;
  PetscCall(PetscOptionsEnum("-mgrit_mode", "Training mode", "NNMGRITSetMode", NNMGRITModes, (PetscEnum)mode, (PetscEnum *)&mode, NULL));
  PetscCall(PetscOptionsInt("-mgrit_one_shot_it", "Iterations per solve in one-shot mode", "NNMGRITSetMode", it, &it, NULL));
  PetscCall(NNMGRITSetMode(mg, mode, it));
  PetscCall(PetscOptionsBool("-mgrit_warm_start", "Start from the previous solve's iterate", "NNMGRITSetWarmStart", mg->warm, &mg->warm, NULL));
  PetscCall(PetscOptionsBool("-mgrit_monitor", "Print the residual norm of every iteration", "NNMGRITSetMonitor", mg->monitor, &mg->monitor, NULL));
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)mg, PetscOptionsObject));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetTimeSpan - sets the time interval and the number of fine steps

   Logically Collective

   Input Parameters:
+  mg - the solver
.  t0, tf - the interval; the fine steps have size h = (tf - t0)/N
-  N - the number of fine steps

   Level: beginner
@*/
PetscErrorCode NNMGRITSetTimeSpan(NNMGRIT mg, PetscReal t0, PetscReal tf, PetscInt N)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(N > 0, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "MGRIT needs at least one time step, got N = %" PetscInt_FMT, N);
  PetscCheck(tf != t0, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "MGRIT time span [%g, %g] is empty", (double)t0, (double)tf);
  if (mg->N != N) PetscCall(NNMGRITReset(mg));
  mg->t0 = t0;
  mg->tf = tf;
  mg->N  = N;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetStateTemplate - sets the layout of a state (duplicated for every stored point)

   Collective

   Notes:
   NNMGRITSolve() uses its initial state as the template when none was set.

   Level: intermediate
@*/
PetscErrorCode NNMGRITSetStateTemplate(NNMGRIT mg, Vec u)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscValidHeaderSpecific(u, VEC_CLASSID, 2);
  PetscCall(PetscObjectReference((PetscObject)u));
  PetscCall(NNMGRITReset(mg));
  PetscCall(VecDestroy(&mg->tmpl));
  mg->tmpl = u;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetOwnershipRange - sets the fine steps kstart..kend-1 this rank owns

   Collective

   Notes:
   The ranges must be contiguous in rank order and cover 0..N-1 (a rank may own none). By default the steps
   are split evenly, in blocks of m^j steps (the largest j < levels with N/size >= m^j) so that relaxation
   starts every chunk at a C-point.

   Level: advanced

.seealso: `NNMGRITGetOwnershipRange()`
@*/
PetscErrorCode NNMGRITSetOwnershipRange(NNMGRIT mg, PetscInt kstart, PetscInt kend)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(0 <= kstart && kstart <= kend, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "MGRIT ownership range [%" PetscInt_FMT ", %" PetscInt_FMT ") is not a range of steps", kstart, kend);
  PetscCall(NNMGRITReset(mg));
  mg->userrange = PETSC_TRUE;
  mg->kstart    = kstart;
  mg->kend      = kend;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetOwnershipRange - gets the fine steps kstart..kend-1 this rank owns (sets the solver up)

   Collective on the first call

   Notes:
   The rank stores the states u_k for kstart < k <= kend and, in the adjoint, lambda_k for kstart <= k < kend;
   the parameter gradients of steps kstart..kend-1 are accumulated here.

   Level: intermediate

.seealso: `NNMGRITSetOwnershipRange()`
@*/
PetscErrorCode NNMGRITGetOwnershipRange(NNMGRIT mg, PetscInt *kstart, PetscInt *kend)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCall(NNMGRITSetUp(mg));
  if (kstart) *kstart = mg->range[mg->rank];
  if (kend) *kend = mg->range[mg->rank + 1];
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITSetStep - sets the propagator u_out = Phi(u_in) on every level

   Logically Collective

   Input Parameters:
+  mg - the solver
.  step - step(ctx, level, k, t, dt, uin, uout): one step of size dt from t; k is the fine-grid index of the
          step's first point (level l steps start at multiples of m^l and have dt = m^l h); a coarse step uses
          the parameters of fine step k (injection)
-  ctx - its context

   Level: beginner

.seealso: `NNMGRITSetAdjointStep()`, `NNMGRITSetTS()`
@*/
PetscErrorCode NNMGRITSetStep(NNMGRIT mg, NNMGRITStepFn step, void *ctx)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  mg->step      = step;
  mg->stepctx   = ctx;
  mg->propcheck = NULL; /* a user step replaces the TS propagator's checks */
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITSetAdjointStep - sets the adjoint propagator

   Logically Collective

   Input Parameters:
+  mg - the solver
.  adj - adj(ctx, level, k, t, dt, u, lin, lout, gradient): lout = (dPhi/du)^T lin for the step of
         NNMGRITSetStep() with the same arguments, linearized at its start state u; with gradient (asked only on
         level 0, once per owned step after the adjoint has converged) also ADD (dPhi/dtheta_k)^T lin into the
         parameter gradient of step k
-  ctx - its context

   Level: beginner

.seealso: `NNMGRITSetStep()`, `NNMGRITAdjointSolve()`
@*/
PetscErrorCode NNMGRITSetAdjointStep(NNMGRIT mg, NNMGRITAdjointStepFn adj, void *ctx)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  mg->adjstep = adj;
  mg->adjctx  = ctx;
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITSetForcing - sets observations inside the interval: the adjoint becomes
   lambda_k = (dPhi_k/du)^T lambda_{k+1} + dJ/du_k

   Logically Collective

   Input Parameters:
+  mg - the solver
.  f - f(ctx, k, t_k, u_k, dJdu): set dJdu (called for the owned k < N at the start of each adjoint solve)
-  ctx - its context

   Level: intermediate

.seealso: `NNMGRITAdjointSolve()`
@*/
PetscErrorCode NNMGRITSetForcing(NNMGRIT mg, NNMGRITForcingFn f, void *ctx)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  mg->forcing    = f;
  mg->forcingctx = ctx;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetCoarsening - sets the coarsening factor m: C-points every m steps

   Logically Collective

   Options Database Key:
.  -mgrit_cf <m> - coarsening factor

   Level: beginner
@*/
PetscErrorCode NNMGRITSetCoarsening(NNMGRIT mg, PetscInt m)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(m >= 2, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "-mgrit_cf %" PetscInt_FMT " is invalid: the coarsening factor must be at least 2", m);
  if (m == mg->cf) PetscFunctionReturn(0);
  PetscCall(NNMGRITReset(mg));
  mg->cf = m;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetLevels - sets the maximum number of time grids (fewer are used when a coarse grid would have no step)

   Logically Collective

   Options Database Key:
.  -mgrit_levels <L> - number of levels; 1 is the sequential solve (pipelined over the ranks)

   Level: beginner
@*/
PetscErrorCode NNMGRITSetLevels(NNMGRIT mg, PetscInt L)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(L >= 1 && L <= NN_MGRIT_MAX_LEVELS, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "-mgrit_levels %" PetscInt_FMT " is invalid: give 1 to %d levels", L, NN_MGRIT_MAX_LEVELS);
  if (L == mg->maxlevels) PetscFunctionReturn(0);
  PetscCall(NNMGRITReset(mg));
  mg->maxlevels = L;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetNumLevels - gets the number of levels in use (sets the solver up)

   Collective on the first call

   Level: intermediate
@*/
PetscErrorCode NNMGRITGetNumLevels(NNMGRIT mg, PetscInt *L)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCall(NNMGRITSetUp(mg));
  *L = mg->fwd.nlevels;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetRelaxation - sets F- or FCF-relaxation

   Logically Collective

   Options Database Key:
.  -mgrit_relax <F,FCF> - relaxation

   Level: beginner
@*/
PetscErrorCode NNMGRITSetRelaxation(NNMGRIT mg, NNMGRITRelaxType r)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(r == NNMGRIT_RELAX_F || r == NNMGRIT_RELAX_FCF, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "Unknown MGRIT relaxation %d (-mgrit_relax): use F or FCF", (int)r);
  mg->relax = r;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetTolerances - sets the stopping tolerances of exact mode: stop when the residual norm is at most
   max(atol, rtol * the first residual norm)

   Logically Collective

   Options Database Keys:
+  -mgrit_rtol <r> - relative tolerance
-  -mgrit_atol <a> - absolute tolerance

   Level: beginner
@*/
PetscErrorCode NNMGRITSetTolerances(NNMGRIT mg, PetscReal rtol, PetscReal atol)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(rtol >= 0 && atol >= 0, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "MGRIT tolerances -mgrit_rtol %g and -mgrit_atol %g must be non-negative", (double)rtol, (double)atol);
  mg->rtol = rtol;
  mg->atol = atol;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetMaxIterations - sets the maximum number of iterations (coarse-grid corrections) of exact mode

   Logically Collective

   Input Parameters:
+  mg - the solver
.  maxit - forward
-  adjmaxit - adjoint (-1: as the forward)

   Options Database Keys:
+  -mgrit_max_it <n> - forward
-  -mgrit_adjoint_max_it <n> - adjoint

   Level: beginner
@*/
PetscErrorCode NNMGRITSetMaxIterations(NNMGRIT mg, PetscInt maxit, PetscInt adjmaxit)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(maxit >= 0, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "-mgrit_max_it %" PetscInt_FMT " must be non-negative", maxit);
  PetscCheck(adjmaxit >= -1, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "-mgrit_adjoint_max_it %" PetscInt_FMT " must be non-negative (or -1: as -mgrit_max_it)", adjmaxit);
  mg->max_it     = maxit;
  mg->adj_max_it = adjmaxit;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetMode - sets the training mode

   Logically Collective

   Input Parameters:
+  mg - the solver
.  mode - NNMGRIT_EXACT (iterate to the tolerances) or NNMGRIT_ONE_SHOT (a fixed number of iterations per
          forward and per adjoint solve, each warm-started from the previous solve's iterate)
-  it - iterations per solve in one-shot mode (raise it as training converges; ignored in exact mode)

   Options Database Keys:
+  -mgrit_mode <exact,one_shot> - mode
-  -mgrit_one_shot_it <n> - iterations per solve

   Level: beginner
@*/
PetscErrorCode NNMGRITSetMode(NNMGRIT mg, NNMGRITMode mode, PetscInt it)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(mode == NNMGRIT_EXACT || mode == NNMGRIT_ONE_SHOT, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "Unknown MGRIT mode %d (-mgrit_mode): use exact or one_shot", (int)mode);
  PetscCheck(it >= 0, PetscObjectComm((PetscObject)mg), PETSC_ERR_ARG_OUTOFRANGE, "-mgrit_one_shot_it %" PetscInt_FMT " must be non-negative", it);
  mg->mode       = mode;
  mg->oneshot_it = it;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetWarmStart - starts each solve from the previous solve's iterate (always on in one-shot mode)

   Logically Collective

   Options Database Key:
.  -mgrit_warm_start - warm start

   Level: intermediate
@*/
PetscErrorCode NNMGRITSetWarmStart(NNMGRIT mg, PetscBool warm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  mg->warm = warm;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITSetMonitor - prints the residual norm of every iteration

   Logically Collective

   Options Database Key:
.  -mgrit_monitor - monitor

   Level: intermediate
@*/
PetscErrorCode NNMGRITSetMonitor(NNMGRIT mg, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  mg->monitor = flg;
  PetscFunctionReturn(0);
}

/* levels in use: coarsen while a coarse grid keeps at least one step */
static PetscInt NNMGRITNumLevels(NNMGRIT mg)
{
  PetscInt L = 1, N = mg->N;

  while (L < mg->maxlevels && N / mg->cf >= 1) {
    N /= mg->cf;
    L++;
  }
  return L;
}

/*@
   NNMGRITSetUp - splits the steps over the ranks and allocates the time grids

   Collective

   Notes:
   Called by NNMGRITSolve(); needs NNMGRITSetTimeSpan(), a propagator and a state template.

   Level: advanced
@*/
PetscErrorCode NNMGRITSetUp(NNMGRIT mg)
{
  MPI_Comm comm;
  PetscInt L, P;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  if (mg->setupcalled) PetscFunctionReturn(0);
  comm = PetscObjectComm((PetscObject)mg);
  PetscCheck(mg->N > 0, comm, PETSC_ERR_ORDER, "Call NNMGRITSetTimeSpan() before setting MGRIT up");
  PetscCheck(mg->tmpl, comm, PETSC_ERR_ORDER, "MGRIT has no state layout: call NNMGRITSetStateTemplate() (or NNMGRITSolve(), which uses its initial state)");
  PetscCheck(mg->step, comm, PETSC_ERR_ORDER, "MGRIT has no propagator: call NNMGRITSetStep() or NNMGRITSetTS()");
  L = NNMGRITNumLevels(mg);
  P = mg->size;
  PetscCall(PetscMalloc1(P + 1, &mg->range));
  if (mg->userrange) {
    PetscInt *ks, *ke, mine[2] = {mg->kstart, mg->kend};

    PetscCall(PetscMalloc2(P, &ks, P, &ke));
    PetscCallMPI(MPI_Allgather(&mine[0], 1, MPIU_INT, ks, 1, MPIU_INT, comm));
    PetscCallMPI(MPI_Allgather(&mine[1], 1, MPIU_INT, ke, 1, MPIU_INT, comm));
    for (PetscInt r = 0; r < P; r++) {
      PetscCheck(ks[r] == (r ? ke[r - 1] : 0), comm, PETSC_ERR_ARG_INCOMP, "MGRIT ownership ranges must be contiguous in rank order from step 0: rank %" PetscInt_FMT " starts at %" PetscInt_FMT ", expected %" PetscInt_FMT, r, ks[r], r ? ke[r - 1] : 0);
      mg->range[r] = ks[r];
    }
    PetscCheck(ke[P - 1] == mg->N, comm, PETSC_ERR_ARG_INCOMP, "MGRIT ownership ranges end at step %" PetscInt_FMT " but there are N = %" PetscInt_FMT " steps", ke[P - 1], mg->N);
    PetscCall(PetscFree2(ks, ke));
  } else {
    PetscInt align = 1, nb;

    for (PetscInt l = 1; l < L; l++)
      if (mg->N / P >= align * mg->cf) align *= mg->cf;
    nb = mg->N / align;
    for (PetscInt r = 0; r < P; r++) mg->range[r] = align * ((r * nb + P / 2) / P);
  }
  mg->range[P] = mg->N;
  PetscCall(VecGetLocalSize(mg->tmpl, &mg->nloc));
  PetscCall(VecDuplicate(mg->tmpl, &mg->work));
  PetscCall(VecDuplicate(mg->tmpl, &mg->work2));
  mg->fwd.nlevels = mg->adj.nlevels = L;
  PetscCall(NNMGRITPoolSetUp(mg, L));
  PetscCall(NNMGRITGridSetUp(mg, &mg->fwd, PETSC_FALSE));
  mg->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITView - prints the grids, the method, the ownership and the last solves' iteration counts

   Collective

   Level: beginner
@*/
PetscErrorCode NNMGRITView(NNMGRIT mg, PetscViewer viewer)
{
  PetscBool iascii;
  PetscInt  nsteps[2][NN_MGRIT_MAX_LEVELS];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)mg), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)mg, viewer));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " steps on [%g, %g], coarsening factor %" PetscInt_FMT ", %s-relaxation, up to %" PetscInt_FMT " levels\n", mg->N, (double)mg->t0, (double)mg->tf, mg->cf, NNMGRITRelaxTypes[mg->relax], mg->maxlevels));
  if (mg->mode == NNMGRIT_EXACT) PetscCall(PetscViewerASCIIPrintf(viewer, "exact mode: rtol %g, atol %g, at most %" PetscInt_FMT " forward and %" PetscInt_FMT " adjoint iterations%s\n", (double)mg->rtol, (double)mg->atol, mg->max_it, mg->adj_max_it < 0 ? mg->max_it : mg->adj_max_it, mg->warm ? ", warm start" : ""));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "one-shot mode: %" PetscInt_FMT " warm-started iterations per forward and adjoint solve\n", mg->oneshot_it));
  if (!mg->setupcalled) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "not set up\n"));
    PetscCall(PetscViewerASCIIPopTab(viewer));
    PetscFunctionReturn(0);
  }
  for (PetscInt l = 0; l < mg->fwd.nlevels; l++) {
    PetscReal h = (mg->tf - mg->t0) / mg->N;
    PetscCall(PetscViewerASCIIPrintf(viewer, "level %" PetscInt_FMT ": %" PetscInt_FMT " steps of %g%s\n", l, mg->fwd.level[l].N, (double)(h * mg->fwd.level[l].stride), l == mg->fwd.nlevels - 1 ? " (solved sequentially)" : ""));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "steps per rank:"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  for (PetscMPIInt r = 0; r < mg->size && r < 16; r++) PetscCall(PetscViewerASCIIPrintf(viewer, " [%" PetscInt_FMT ",%" PetscInt_FMT ")", mg->range[r], mg->range[r + 1]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", mg->size > 16 ? " ..." : ""));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  if (mg->fwd.valid) PetscCall(PetscViewerASCIIPrintf(viewer, "last forward solve: %" PetscInt_FMT " iterations, residual norm %g (first %g)\n", mg->fwd.it, (double)mg->fwd.rnorm, (double)mg->fwd.rnorm0));
  if (mg->adj.valid) PetscCall(PetscViewerASCIIPrintf(viewer, "last adjoint solve: %" PetscInt_FMT " iterations, residual norm %g (first %g)\n", mg->adj.it, (double)mg->adj.rnorm, (double)mg->adj.rnorm0));
  /* the busiest rank's propagator calls: the work model's per-rank cost */
  for (PetscInt l = 0; l < NN_MGRIT_MAX_LEVELS; l++) {
    nsteps[0][l] = mg->fwd.nsteps[l];
    nsteps[1][l] = mg->adj.nsteps[l];
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, nsteps, 2 * NN_MGRIT_MAX_LEVELS, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)mg)));
  for (PetscInt d = 0; d < 2; d++) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "%s steps per level on the busiest rank:", d ? "adjoint" : "forward"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (PetscInt l = 0; l < mg->fwd.nlevels; l++) PetscCall(PetscViewerASCIIPrintf(viewer, " %" PetscInt_FMT, nsteps[d][l]));
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetIterationNumber - gets the iterations (coarse-grid corrections) of the last forward or adjoint solve

   Not Collective

   Level: intermediate
@*/
PetscErrorCode NNMGRITGetIterationNumber(NNMGRIT mg, PetscBool adjoint, PetscInt *it)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  *it = adjoint ? mg->adj.it : mg->fwd.it;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetResidualNorm - gets the final residual norm of the last forward or adjoint solve

   Not Collective

   Level: intermediate
@*/
PetscErrorCode NNMGRITGetResidualNorm(NNMGRIT mg, PetscBool adjoint, PetscReal *rnorm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  *rnorm = adjoint ? mg->adj.rnorm : mg->fwd.rnorm;
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetStepCounts - gets this rank's propagator calls per level since creation (forward or adjoint)

   Not Collective

   Input Parameters:
+  mg - the solver
.  adjoint - adjoint (PETSC_TRUE) or forward steps
-  n - length of counts[]

   Output Parameter:
.  counts - counts[l] for the levels l < min(n, levels in use); the adjoint's level 0 includes the gradient pass

   Level: advanced
@*/
PetscErrorCode NNMGRITGetStepCounts(NNMGRIT mg, PetscBool adjoint, PetscInt n, PetscInt counts[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  for (PetscInt l = 0; l < n && l < NN_MGRIT_MAX_LEVELS; l++) counts[l] = adjoint ? mg->adj.nsteps[l] : mg->fwd.nsteps[l];
  PetscFunctionReturn(0);
}
