/*
   NNMGRIT: the object (package, creation, destruction, prefixes) and the problem it solves (time span,
   state layout, ownership, propagators). As SLEPc's eps*.c: options and method setters in mgritopts.c,
   set-up of the time grids in mgritsetup.c, the algorithm in mgritcycle.c, the solves and their
   results in mgritsolve.c, viewing in mgritview.c; the TS-based default propagator in mgrit_ts.c.

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
  PetscCall(NNLogEventRegister("MGRITSolve", NNMGRIT_CLASSID, &NNMGRIT_Solve));
  PetscCall(NNLogEventRegister("MGRITAdjSolve", NNMGRIT_CLASSID, &NNMGRIT_AdjointSolve));
  PetscCall(NNLogEventRegister("MGRITStep", NNMGRIT_CLASSID, &NNMGRIT_Step));
  PetscCall(NNLogEventRegister("MGRITAdjStep", NNMGRIT_CLASSID, &NNMGRIT_AdjointStep));
  PetscCall(NNLogEventRegister("MGRITGradient", NNMGRIT_CLASSID, &NNMGRIT_Gradient));
  PetscCall(NNLogEventRegister("MGRITWait", NNMGRIT_CLASSID, &NNMGRIT_Wait));
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
  PetscAssertPointer(mg, 2);
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
  if ((*mg)->tsprop.destroy) PetscCall((*(*mg)->tsprop.destroy)(&(*mg)->tsprop.ctx));
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
  mg->tsprop.check = NULL; /* a user step replaces the TS propagator's checks */
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
