/* Setters and getters of the trainer's options (each also an option of the options database). */
#include <petnn/private/trainerimpl.h>

/*@
   NNTrainerSetEpochs - sets the number of training epochs

   Logically Collective

   Options Database Key:
.  -nn_epochs <n> - epochs (default 10)

   Level: beginner

.seealso: `NNTrainerGetEpochs()`, `NNSetEpochs()`
@*/
PetscErrorCode NNTrainerSetEpochs(NNTrainer tr, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "Number of epochs %" PetscInt_FMT " must be non-negative (-nn_epochs)", n);
  tr->epochs = n;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetEpochs - gets the number of training epochs

   Not Collective

   Level: beginner

.seealso: `NNTrainerSetEpochs()`
@*/
PetscErrorCode NNTrainerGetEpochs(NNTrainer tr, PetscInt *n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *n = tr->epochs;
  PetscFunctionReturn(0);
}

/*@
   NNSetEpochs - sets the number of training epochs of the network's trainer

   Options Database Key:
.  -nn_epochs <n> - epochs (default 10)

   Level: beginner

.seealso: `NNTrainerSetEpochs()`, `NNGetTrainer()`
@*/
PetscErrorCode NNSetEpochs(NN net, PetscInt n)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNTrainerSetEpochs(tr, n));
  PetscFunctionReturn(0);
}

/*@
   NNGetEpochs - gets the number of training epochs of the network's trainer

   Not Collective

   Level: beginner

.seealso: `NNSetEpochs()`
@*/
PetscErrorCode NNGetEpochs(NN net, PetscInt *n)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNTrainerGetEpochs(tr, n));
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetShuffle - whether the training samples are shuffled every epoch

   Logically Collective

   Options Database Key:
.  -nn_shuffle <bool> - shuffle (default true)

   Level: intermediate

.seealso: `NNTrainerGetShuffle()`, `NNTrain()`
@*/
PetscErrorCode NNTrainerSetShuffle(NNTrainer tr, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  tr->shuffle = flg;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetShuffle - whether the training samples are shuffled every epoch

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetShuffle()`
@*/
PetscErrorCode NNTrainerGetShuffle(NNTrainer tr, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *flg = tr->shuffle;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetMonitor - whether training prints a line per epoch (loss, accuracy, test set, learning rate, time)

   Logically Collective

   Options Database Key:
.  -nn_monitor - print the lines

   Level: beginner

.seealso: `NNTrainerGetMonitor()`, `NNTrainerMonitorSet()`
@*/
PetscErrorCode NNTrainerSetMonitor(NNTrainer tr, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  tr->monitor = flg;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetMonitor - whether training prints a line per epoch

   Not Collective

   Level: beginner

.seealso: `NNTrainerSetMonitor()`
@*/
PetscErrorCode NNTrainerGetMonitor(NNTrainer tr, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *flg = tr->monitor;
  PetscFunctionReturn(0);
}

/*@C
   NNTrainerSetCheckpoint - sets the checkpoint file training writes (NULL or "" for none)

   Logically Collective

   Options Database Key:
.  -nn_checkpoint <file.h5> - the file

   Level: intermediate

.seealso: `NNTrainerGetCheckpoint()`, `NNTrainerSetCheckpointEvery()`, `NNTrainerSetCheckpointInterval()`, `NNCheckpointSave()`
@*/
PetscErrorCode NNTrainerSetCheckpoint(NNTrainer tr, const char file[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCall(PetscStrncpy(tr->checkpoint, file ? file : "", sizeof(tr->checkpoint)));
  PetscFunctionReturn(0);
}

/*@C
   NNTrainerGetCheckpoint - gets the checkpoint file training writes ("" for none)

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetCheckpoint()`
@*/
PetscErrorCode NNTrainerGetCheckpoint(NNTrainer tr, const char *file[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *file = tr->checkpoint;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetCheckpointEvery - checkpoints after every k epochs (and after the last)

   Logically Collective

   Options Database Key:
.  -nn_checkpoint_every <k> - the interval in epochs (default 1)

   Level: intermediate

.seealso: `NNTrainerGetCheckpointEvery()`, `NNTrainerSetCheckpoint()`
@*/
PetscErrorCode NNTrainerSetCheckpointEvery(NNTrainer tr, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(k > 0, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_every %" PetscInt_FMT " must be positive", k);
  tr->checkpoint_every = k;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetCheckpointEvery - gets the checkpoint interval in epochs

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetCheckpointEvery()`
@*/
PetscErrorCode NNTrainerGetCheckpointEvery(NNTrainer tr, PetscInt *k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *k = tr->checkpoint_every;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetCheckpointInterval - checkpoints during an epoch, every so many steps or seconds

   Logically Collective

   Input Parameters:
+  tr - the trainer (give the file with -nn_checkpoint)
.  steps - checkpoint after every this many optimizer steps (0: off)
-  seconds - checkpoint when this many seconds have passed since the last checkpoint (0: off)

   Options Database Keys:
+  -nn_checkpoint_steps <n> - step interval
-  -nn_checkpoint_seconds <s> - time interval (the slowest rank's clock decides)

   Notes:
   A checkpoint written during an epoch holds the position in it (the batch index and the
   generator state from which the epoch's permutation is regenerated), so a run killed at any
   point and restarted with -load from its last checkpoint ends bitwise identical to an
   uninterrupted run. The per-epoch checkpoints (-nn_checkpoint_every) continue as before.

   Level: intermediate

.seealso: `NNTrainerGetCheckpointInterval()`, `NNCheckpointSave()`, `NNCheckpointLoad()`, `NNTrain()`
@*/
PetscErrorCode NNTrainerSetCheckpointInterval(NNTrainer tr, PetscInt steps, PetscReal seconds)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(steps >= 0, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_steps %" PetscInt_FMT " must be non-negative (0: off)", steps);
  PetscCheck(seconds >= 0, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_seconds %g must be non-negative (0: off)", (double)seconds);
  tr->checkpoint_steps   = steps;
  tr->checkpoint_seconds = seconds;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetCheckpointInterval - gets the step and time intervals of checkpoints during an epoch

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetCheckpointInterval()`
@*/
PetscErrorCode NNTrainerGetCheckpointInterval(NNTrainer tr, PetscInt *steps, PetscReal *seconds)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  if (steps) *steps = tr->checkpoint_steps;
  if (seconds) *seconds = tr->checkpoint_seconds;
  PetscFunctionReturn(0);
}

/*@
   NNSetCheckpointInterval - checkpoints during an epoch, every so many steps or seconds (the network's trainer)

   Logically Collective

   Options Database Keys:
+  -nn_checkpoint_steps <n> - step interval
-  -nn_checkpoint_seconds <s> - time interval

   Level: intermediate

.seealso: `NNTrainerSetCheckpointInterval()`, `NNCheckpointSave()`, `NNCheckpointLoad()`, `NNTrain()`
@*/
PetscErrorCode NNSetCheckpointInterval(NN net, PetscInt steps, PetscReal seconds)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNTrainerSetCheckpointInterval(tr, steps, seconds));
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetGradientCheck - checks the gradient of the first training batch against finite differences

   Logically Collective

   Input Parameters:
+  tr - the trainer
.  flg - whether to check
-  tol - relative tolerance (PETSC_DEFAULT keeps the current one, 1e-6 by default)

   Options Database Keys:
+  -nn_gradient_check - check
-  -nn_gradient_check_tol <tol> - the tolerance

   Level: intermediate

.seealso: `NNTrainerGetGradientCheck()`, `NNGradientCheck()`
@*/
PetscErrorCode NNTrainerSetGradientCheck(NNTrainer tr, PetscBool flg, PetscReal tol)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  tr->gradcheck = flg;
  if (tol != (PetscReal)PETSC_DEFAULT) tr->gradcheck_tol = tol;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetGradientCheck - whether and with what tolerance the first training batch's gradient is checked

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetGradientCheck()`
@*/
PetscErrorCode NNTrainerGetGradientCheck(NNTrainer tr, PetscBool *flg, PetscReal *tol)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  if (flg) *flg = tr->gradcheck;
  if (tol) *tol = tr->gradcheck_tol;
  PetscFunctionReturn(0);
}
