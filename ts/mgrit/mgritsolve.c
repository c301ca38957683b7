/* NNMGRIT: the forward and adjoint solves (the algorithm is in mgritcycle.c) and their results. */
#include <petnn/private/mgritimpl.h>

/*@
   NNMGRITSolve - solves u_{k+1} = Phi_k(u_k), k = 0..N-1, from u_0 with MGRIT

   Collective

   Input Parameters:
+  mg - the solver
-  u0 - the initial state, the same on every rank of the solver's communicator

   Notes:
   Each rank keeps the states of its chunk (NNMGRITGetState()); NNMGRITGetFinalState() broadcasts u_N. In exact
   mode the iteration stops at the tolerances or -mgrit_max_it; in one-shot mode after -mgrit_one_shot_it
   iterations. With -mgrit_levels 1 this is the sequential solve, pipelined over the ranks.

   Level: beginner

.seealso: `NNMGRITAdjointSolve()`, `NNMGRITGetState()`, `NNMGRITGetFinalState()`
@*/
PetscErrorCode NNMGRITSolve(NNMGRIT mg, Vec u0)
{
  PetscInt n;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscValidHeaderSpecific(u0, VEC_CLASSID, 2);
  if (!mg->tmpl) PetscCall(NNMGRITSetStateTemplate(mg, u0));
  PetscCall(NNMGRITSetUp(mg));
  PetscCall(VecGetLocalSize(u0, &n));
  PetscCheck(n == mg->nloc, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "MGRIT initial state has local size %" PetscInt_FMT " but the state template has %" PetscInt_FMT, n, mg->nloc);
  if (mg->tsprop.check) PetscCall((*mg->tsprop.check)(mg));
  PetscCall(PetscLogEventBegin(NNMGRIT_Solve, mg, 0, 0, 0));
  if (mg->mode == NNMGRIT_ONE_SHOT) PetscCall(NNMGRITGridSolve(mg, &mg->fwd, u0, mg->oneshot_it, PETSC_TRUE));
  else PetscCall(NNMGRITGridSolve(mg, &mg->fwd, u0, mg->max_it, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(NNMGRIT_Solve, mg, 0, 0, 0));
  mg->fwddone = PETSC_TRUE;
  PetscCall(PetscObjectViewFromOptions((PetscObject)mg, NULL, "-mgrit_view"));
  PetscFunctionReturn(0);
}

/*@
   NNMGRITAdjointSolve - solves the discrete adjoint of the last NNMGRITSolve() with MGRIT in reversed time and
   accumulates the parameter gradient of the owned steps

   Collective

   Input Parameters:
+  mg - the solver
-  lambdaN - dJ/du_N, the same on every rank

   Output Parameter:
.  lambda0 - dJ/du_0 on every rank (may be NULL)

   Notes:
   lambda_k = (dPhi_k/du)^T lambda_{k+1} (+ dJ/du_k with NNMGRITSetForcing()). The iteration ends with a sweep in
   which the adjoint step is called with gradient = PETSC_TRUE exactly once for each owned step k, at its stored
   state u_k and the final lambda_{k+1}, so the caller's gradient of step k receives
   (dPhi_k/dtheta_k)^T lambda_{k+1}; each rank holds the gradient of the steps it owns
   (NNMGRITGetOwnershipRange()). Zero the gradient first. The sweep costs one fine adjoint step per owned step
   (with one level it is the sequential adjoint itself); MGRITGradient in -log_view times it.

   Level: beginner

.seealso: `NNMGRITSolve()`, `NNMGRITSetAdjointStep()`, `NNMGRITGetAdjointState()`
@*/
PetscErrorCode NNMGRITAdjointSolve(NNMGRIT mg, Vec lambdaN, Vec lambda0)
{
  NNMGRITGrid  *grid = &mg->adj;
  NNMGRITLevel *lev;
  PetscReal     h = (mg->tf - mg->t0) / mg->N;
  PetscInt      maxit;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscValidHeaderSpecific(lambdaN, VEC_CLASSID, 2);
  PetscCheck(mg->fwddone, PetscObjectComm((PetscObject)mg), PETSC_ERR_ORDER, "Call NNMGRITSolve() before NNMGRITAdjointSolve()");
  PetscCheck(mg->adjstep, PetscObjectComm((PetscObject)mg), PETSC_ERR_ORDER, "MGRIT has no adjoint propagator: call NNMGRITSetAdjointStep() or NNMGRITSetTS()");
  if (!grid->level[0].N) PetscCall(NNMGRITGridSetUp(mg, grid, PETSC_TRUE));
  lev = &grid->level[0];
  PetscCall(PetscLogEventBegin(NNMGRIT_AdjointSolve, mg, 0, 0, 0));
  /* observations: the fine level's right-hand side g_p = dJ/du_{N-p} */
  if (mg->forcing && lev->a < lev->b) {
    if (!lev->g) PetscCall(VecDuplicateVecs(mg->tmpl, lev->b - lev->a, &lev->g));
    for (PetscInt p = lev->a + 1; p <= lev->b; p++) {
      PetscInt k = mg->N - p;
      Vec      u;

      PetscCall(NNMGRITForwardState(mg, k, &u));
      PetscCall((*mg->forcing)(mg->forcingctx, k, mg->t0 + k * h, u, lev->g[p - lev->a - 1]));
    }
  } else if (!mg->forcing && lev->g) PetscCall(VecDestroyVecs(lev->b - lev->a, &lev->g));
  maxit = mg->mode == NNMGRIT_ONE_SHOT ? mg->oneshot_it : (mg->adj_max_it < 0 ? mg->max_it : mg->adj_max_it);
  PetscCall(NNMGRITGridSolve(mg, grid, lambdaN, maxit, (PetscBool)(mg->mode == NNMGRIT_ONE_SHOT)));

  if (lambda0) {
    PetscMPIInt  root = NNMGRITOwner(mg, PETSC_TRUE, 1, mg->N), n;
    PetscScalar *x;

    PetscCall(PetscMPIIntCast(mg->nloc, &n));
    if (mg->rank == root) PetscCall(VecCopy(lev->u[mg->N - lev->a - 1], lambda0));
    PetscCall(VecGetArray(lambda0, &x));
    PetscCallMPI(MPI_Bcast(x, n, MPIU_SCALAR, root, mg->comm));
    PetscCall(VecRestoreArray(lambda0, &x));
  }
  PetscCall(PetscLogEventEnd(NNMGRIT_AdjointSolve, mg, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetState - gets the forward state u_k stored on this rank (kstart <= k <= kend of
   NNMGRITGetOwnershipRange(); u_kstart is a copy received from the left neighbour)

   Not Collective

   Notes:
   The Vec belongs to the solver: do not destroy it.

   Level: intermediate

.seealso: `NNMGRITGetFinalState()`, `NNMGRITGetAdjointState()`
@*/
PetscErrorCode NNMGRITGetState(NNMGRIT mg, PetscInt k, Vec *u)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(mg->fwddone, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Call NNMGRITSolve() before NNMGRITGetState()");
  PetscCall(NNMGRITForwardState(mg, k, u));
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetAdjointState - gets lambda_k stored on this rank (kstart <= k <= kend; lambda_kend is a copy)

   Not Collective

   Level: intermediate

.seealso: `NNMGRITAdjointSolve()`
@*/
PetscErrorCode NNMGRITGetAdjointState(NNMGRIT mg, PetscInt k, Vec *lambda)
{
  NNMGRITLevel *lev = &mg->adj.level[0];
  PetscInt      p   = mg->N - k;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscCheck(mg->adj.valid, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Call NNMGRITAdjointSolve() before NNMGRITGetAdjointState()");
  PetscCheck(lev->a < lev->b && lev->a <= p && p <= lev->b, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "MGRIT adjoint state %" PetscInt_FMT " is not stored on rank %d, which holds %" PetscInt_FMT "..%" PetscInt_FMT, k, mg->rank, mg->N - lev->b, mg->N - lev->a);
  *lambda = NNMGRITPoint(lev, p);
  PetscFunctionReturn(0);
}

/*@
   NNMGRITGetFinalState - copies u_N to every rank

   Collective

   Level: beginner

.seealso: `NNMGRITSolve()`
@*/
PetscErrorCode NNMGRITGetFinalState(NNMGRIT mg, Vec uN)
{
  NNMGRITLevel *lev = &mg->fwd.level[0];
  PetscMPIInt   root, n;
  PetscScalar  *x;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscValidHeaderSpecific(uN, VEC_CLASSID, 2);
  PetscCheck(mg->fwddone, PetscObjectComm((PetscObject)mg), PETSC_ERR_ORDER, "Call NNMGRITSolve() before NNMGRITGetFinalState()");
  root = NNMGRITOwner(mg, PETSC_FALSE, 1, mg->N);
  PetscCall(PetscMPIIntCast(mg->nloc, &n));
  if (mg->rank == root) PetscCall(VecCopy(lev->u[mg->N - lev->a - 1], uN));
  PetscCall(VecGetArray(uN, &x));
  PetscCallMPI(MPI_Bcast(x, n, MPIU_SCALAR, root, mg->comm));
  PetscCall(VecRestoreArray(uN, &x));
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
