/* Read access to an optimizer's counters and state Vecs through the public API. */
#include <petnn/private/nnimpl.h>

/*@C
   NNOptGetNumSteps - gets the number of steps the optimizer has taken (Adam's bias-correction count)

   Not Collective

   Input Parameter:
.  opt - the optimizer

   Output Parameter:
.  nsteps - the steps taken, restored by `NNCheckpointLoad()`

   Level: intermediate

.seealso: `NNOptStep()`, `NNOptGetState()`, `NNGetCursor()`
@*/
PetscErrorCode NNOptGetNumSteps(NNOpt opt, PetscInt *nsteps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(opt, NNOPT_CLASSID, 1);
  PetscAssertPointer(nsteps, 2);
  *nsteps = opt->nsteps;
  PetscFunctionReturn(0);
}

/*@C
   NNOptGetNumStates - gets how many state Vecs the optimizer keeps (momentum buffers, Adam moments)

   Not Collective

   Input Parameter:
.  opt - the optimizer, set up

   Output Parameter:
.  n - the number of state Vecs

   Level: advanced

.seealso: `NNOptGetState()`, `NNOptSetUp()`
@*/
PetscErrorCode NNOptGetNumStates(NNOpt opt, PetscInt *n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(opt, NNOPT_CLASSID, 1);
  PetscAssertPointer(n, 2);
  *n = opt->nstate;
  PetscFunctionReturn(0);
}

/*@C
   NNOptGetState - gets one of the optimizer's state Vecs, shaped like the parameters

   Not Collective

   Input Parameters:
+  opt - the optimizer, set up
-  i - which state, 0 <= i < `NNOptGetNumStates()`

   Output Parameters:
+  name - its name, as in PyTorch's optimizer state (may be NULL)
-  state - the Vec, owned by the optimizer (may be NULL)

   Level: advanced

.seealso: `NNOptGetNumStates()`, `NNOptGetNumSteps()`, `NNCheckpointSave()`
@*/
PetscErrorCode NNOptGetState(NNOpt opt, PetscInt i, const char *name[], Vec *state)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(opt, NNOPT_CLASSID, 1);
  PetscCheck(i >= 0 && i < opt->nstate, PetscObjectComm((PetscObject)opt), PETSC_ERR_ARG_OUTOFRANGE, "Optimizer state %" PetscInt_FMT " does not exist: the optimizer has %" PetscInt_FMT " state Vecs", i, opt->nstate);
  if (name) *name = opt->statename[i];
  if (state) *state = opt->state[i];
  PetscFunctionReturn(0);
}
