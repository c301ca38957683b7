/* NNMGRIT: options and the setters of the method (coarsening, levels, relaxation, tolerances, mode). */
#include <petnn/private/mgritimpl.h>

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
