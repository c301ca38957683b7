/*
   The NNTrainer object: a network's training schedule, monitors, checkpoint policy and restart
   cursor. A network has one, created on first use by NNGetTrainer() (as KSPGetPC() creates a
   PC); NNTrain() trains with it. Its options are read when it is created (if the network's
   options were read already) and again whenever NNSetFromOptions() runs on the network.
*/
#include <petnn/private/trainerimpl.h>

PetscClassId NNTRAINER_CLASSID;

static PetscErrorCode NNTrainerDestroy(NNTrainer *tr)
{
  PetscFunctionBegin;
  if (!*tr) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*tr, NNTRAINER_CLASSID, 1);
  if (--((PetscObject)(*tr))->refct > 0) {
    *tr = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(NNTrainerMonitorCancel(*tr));
  PetscCall(NNTrainerMonitorsDestroy_Private(*tr));
  PetscCall(NNOptDestroy(&(*tr)->opt));
  PetscCall(VecDestroy(&(*tr)->online.xs));
  PetscCall(VecDestroy(&(*tr)->online.ts));
  PetscCall(VecDestroy(&(*tr)->online.xb));
  PetscCall(VecDestroy(&(*tr)->online.tb));
  PetscCall(PetscFree((*tr)->online.idx));
  PetscCall(NNDataDestroy(&(*tr)->online.buffer));
  PetscCall(PetscHeaderDestroy(tr));
  PetscFunctionReturn(0);
}

/* the trainer's options, read in an options block (the trainer's own or the network's) */
static PetscErrorCode NNTrainerSetFromOptions_Private(NNTrainer tr, NNOptionItems PetscOptionsObject)
{
  MPI_Comm  comm  = PetscObjectComm((PetscObject)tr);
  PetscInt  steps = tr->checkpoint_steps;
  PetscReal secs  = tr->checkpoint_seconds;
  PetscBool f1, f2;

  PetscFunctionBegin;
  PetscCall(PetscOptionsInt("-nn_epochs", "Training epochs", "NNTrainerSetEpochs", tr->epochs, &tr->epochs, NULL));
  PetscCheck(tr->epochs >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-nn_epochs %" PetscInt_FMT " must be non-negative", tr->epochs);
  PetscCall(PetscOptionsBool("-nn_monitor", "Print loss, accuracy, time and throughput every epoch", "NNTrainerSetMonitor", tr->monitor, &tr->monitor, NULL));
  PetscCall(PetscOptionsBool("-nn_shuffle", "Shuffle the training samples every epoch", "NNTrainerSetShuffle", tr->shuffle, &tr->shuffle, NULL));
  PetscCall(PetscOptionsString("-nn_checkpoint", "Checkpoint file (HDF5) written during training", "NNTrainerSetCheckpoint", tr->checkpoint, tr->checkpoint, sizeof(tr->checkpoint), NULL));
  PetscCall(PetscOptionsInt("-nn_checkpoint_every", "Checkpoint interval in epochs", "NNTrainerSetCheckpointEvery", tr->checkpoint_every, &tr->checkpoint_every, NULL));
  PetscCheck(tr->checkpoint_every > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_every %" PetscInt_FMT " must be positive", tr->checkpoint_every);
  PetscCall(PetscOptionsInt("-nn_checkpoint_steps", "Also checkpoint every this many steps (0: off)", "NNTrainerSetCheckpointInterval", steps, &steps, &f1));
  PetscCall(PetscOptionsReal("-nn_checkpoint_seconds", "Also checkpoint when this many seconds passed since the last checkpoint (0: off)", "NNTrainerSetCheckpointInterval", secs, &secs, &f2));
  if (f1 || f2) PetscCall(NNTrainerSetCheckpointInterval(tr, steps, secs));
  PetscCall(PetscOptionsBool("-nn_gradient_check", "Check the first batch's gradient against finite differences", "NNTrainerSetGradientCheck", tr->gradcheck, &tr->gradcheck, NULL));
  PetscCall(PetscOptionsReal("-nn_gradient_check_tol", "Relative tolerance of the gradient check", "NNTrainerSetGradientCheck", tr->gradcheck_tol, &tr->gradcheck_tol, NULL));
  PetscCall(PetscOptionsInt("-nn_steps_per_epoch", "NNTrainStep() calls that make an epoch of online training (0: one endless epoch)", "NNTrainerSetStepsPerEpoch", tr->online.steps_per_epoch, &tr->online.steps_per_epoch, NULL));
  PetscCheck(tr->online.steps_per_epoch >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "-nn_steps_per_epoch %" PetscInt_FMT " must be non-negative (0: one endless epoch)", tr->online.steps_per_epoch);
  PetscCall(NNTrainerMonitorsSetFromOptions_Private(tr, PetscOptionsObject));
  PetscCall(NNOptSetOptionsPrefix(tr->opt, ((PetscObject)tr)->prefix));
  PetscCall(NNOptSetFromOptions_Private(tr->opt, PetscOptionsObject)); /* -opt_type, -opt_learning_rate, ... */
  PetscFunctionReturn(0);
}

/* NNSetFromOptions() on the network reads the trainer's options too */
static PetscErrorCode NNTrainerOptionsHandler(PetscObject obj PETSC_UNUSED, NNOptionItems PetscOptionsObject, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(NNTrainerSetFromOptions_Private((NNTrainer)ctx, PetscOptionsObject));
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetFromOptions - sets the trainer's options from the options database

   Collective

   Options Database Keys:
+  -nn_epochs <n> - training epochs (default 10)
.  -nn_monitor - print loss, accuracy, time and throughput every epoch
.  -nn_shuffle <bool> - shuffle the training samples every epoch (default true)
.  -nn_checkpoint <file.h5> - checkpoint file written during training
.  -nn_checkpoint_every <k> - checkpoint after every k epochs (default 1)
.  -nn_checkpoint_steps <n> - and every n optimizer steps (0: off)
.  -nn_checkpoint_seconds <s> - and when s seconds have passed since the last checkpoint (0: off)
.  -nn_gradient_check - check the gradient of the first training batch against finite differences
.  -nn_gradient_check_tol <tol> - relative tolerance of that check (default 1e-6)
.  -nn_steps_per_epoch <k> - NNTrainStep() calls that make an epoch of online training (0, the default: one endless epoch)
.  -nn_monitor_steps <k> - print the progress inside an epoch every k optimizer steps (0: off)
.  -nn_monitor_steps_tty <bool> - that progress as a bar redrawn in place (default: when stdout is a terminal)
.  -nn_monitor_csv <file> - write loss and accuracy per epoch to a CSV file
-  -nn_monitor_draw - draw loss and accuracy per epoch (PetscDrawLG)

   Notes:
   The options carry the network's prefix. NNSetFromOptions() on the network reads them as well.

   Level: intermediate

.seealso: `NNGetTrainer()`, `NNSetFromOptions()`
@*/
PetscErrorCode NNTrainerSetFromOptions(NNTrainer tr)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)tr);
  PetscCall(NNTrainerSetFromOptions_Private(tr, PetscOptionsObject));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

/*@C
   NNTrainerView - prints the trainer's schedule, checkpoint policy and where training stands

   Collective

   Level: intermediate

.seealso: `NNGetTrainer()`, `NNView()`
@*/
PetscErrorCode NNTrainerView(NNTrainer tr, PetscViewer viewer)
{
  PetscBool iascii;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)tr), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(NNOptView(tr->opt, viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "trainer: %" PetscInt_FMT " epochs, %s samples, %" PetscInt_FMT " step monitor(s)%s\n", tr->epochs, tr->shuffle ? "shuffled" : "unshuffled", tr->nmonitors, tr->monitor ? ", epoch lines" : ""));
  if (tr->checkpoint[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "checkpoint %s every %" PetscInt_FMT " epoch(s), %" PetscInt_FMT " step(s) (0: off), %g s (0: off)\n", tr->checkpoint, tr->checkpoint_every, tr->checkpoint_steps, (double)tr->checkpoint_seconds));
  if (tr->cursor.step) PetscCall(PetscViewerASCIIPrintf(viewer, "done: %" PetscInt_FMT " epochs, %" PetscInt_FMT " steps, %" PetscInt_FMT " batches of the current epoch\n", tr->cursor.epoch, tr->cursor.step, tr->cursor.batch));
  PetscFunctionReturn(0);
}

/*@
   NNGetTrainer - gets the network's trainer (creating it on first use)

   Collective the first time

   Output Parameter:
.  tr - the trainer, owned by the network

   Notes:
   The trainer holds the optimizer (NNTrainerGetOpt()), the schedule (epochs, shuffling), the
   gradient check, the step monitors, the checkpoint policy and the restart cursor; NNTrain() uses
   it. It takes the network's options prefix. NNSetFromOptions() creates it, so that its options
   and the optimizer's (-opt_type, ...) are read and checked with the network's.

   Level: intermediate

.seealso: `NNTrain()`, `NNTrainerSetEpochs()`, `NNTrainerMonitorSet()`, `NNTrainerSetCheckpoint()`
@*/
PetscErrorCode NNGetTrainer(NN net, NNTrainer *tr)
{
  NNTrainer t;
  NNReducer r;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(tr, 2);
  if (!net->trainer) {
    PetscCall(PetscHeaderCreate(t, NNTRAINER_CLASSID, "NNTrainer", "Neural-network trainer", "NN", PetscObjectComm((PetscObject)net), NNTrainerDestroy, NNTrainerView));
    t->net              = net;
    t->epochs           = 10;
    t->shuffle          = PETSC_TRUE;
    t->checkpoint_every = 1;
    t->gradcheck_tol    = 1e-6;
    t->mon.tty          = PETSC_DECIDE;
    t->cursor.ninit     = net->init.count;
    net->trainer        = t; /* from here on NNDestroy() frees it, also when reading its options fails below */
    PetscCall(NNOptCreate(PetscObjectComm((PetscObject)net), &t->opt));
    PetscCall(PetscObjectSetOptionsPrefix((PetscObject)t, ((PetscObject)net)->prefix));
    PetscCall(NNOptSetOptionsPrefix(t->opt, ((PetscObject)net)->prefix));
    PetscCall(PetscObjectAddOptionsHandler((PetscObject)net, NNTrainerOptionsHandler, NULL, t));
    PetscCall(NNGetReducer(net, &r)); /* the trainer's data groups sum their gradients with it */
    if (net->setfromoptionscalled) PetscCall(NNTrainerSetFromOptions(t));
  }
  *tr = net->trainer;
  PetscFunctionReturn(0);
}

/* the trainer and its cursor, zeroed if the network initialized its parameters anew since (NNSetUp()) */
PetscErrorCode NNGetTrainerCursor(NN net, NNTrainer *tr, NNTrainerCursor **cur)
{
  NNTrainer t = NULL;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &t));
  if (t->cursor.ninit != net->init.count) { /* a new initialization of the parameters: fresh cursor and optimizer state */
    PetscCall(PetscMemzero(&t->cursor, sizeof(t->cursor)));
    t->cursor.ninit = net->init.count;
    t->optinit      = 0;
  }
  if (net->init.count && t->optinit != net->init.count) { /* (also after a change of the optimizer's type) */
    PetscCall(NNOptSetUp(t->opt, net->theta));
    t->optinit = net->init.count;
  }
  if (tr) *tr = t;
  if (cur) *cur = &t->cursor;
  PetscFunctionReturn(0);
}

/*@
   NNGetOpt - gets the optimizer of the network's trainer (creating the trainer on first use)

   Collective the first time

   Input Parameter:
.  net - the network

   Output Parameter:
.  opt - the optimizer, owned by the trainer; set up on the network's parameters when they exist

   Notes:
   Its state starts over whenever the network initializes its parameters anew (NNSetUp() after a
   change of the network); call NNGetOpt() again after such a change before stepping it yourself.

   Level: beginner

.seealso: `NNGetTrainer()`, `NNTrainerGetOpt()`, `NNOptStep()`, `NNTrain()`
@*/
PetscErrorCode NNGetOpt(NN net, NNOpt *opt)
{
  NNTrainer t = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(opt, 2);
  PetscCall(NNGetTrainerCursor(net, &t, NULL));
  *opt = t->opt;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetOpt - gets the trainer's optimizer

   Not Collective

   Input Parameter:
.  tr - the trainer

   Output Parameter:
.  opt - the optimizer (configured with -opt_type, -opt_learning_rate, ...)

   Level: intermediate

.seealso: `NNGetOpt()`, `NNGetTrainer()`
@*/
PetscErrorCode NNTrainerGetOpt(NNTrainer tr, NNOpt *opt)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscAssertPointer(opt, 2);
  PetscCall(NNGetTrainerCursor(tr->net, NULL, NULL));
  *opt = tr->opt;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetProgress - where training stands: epochs done, optimizer steps done, minibatches done in the current epoch

   Not Collective

   Notes:
   NNCheckpointLoad() restores these; a new initialization of the parameters (NNSetUp() after a
   change of the network) resets them to zero.

   Level: intermediate

.seealso: `NNGetTrainer()`, `NNCheckpointLoad()`, `NNTrain()`
@*/
PetscErrorCode NNTrainerGetProgress(NNTrainer tr, PetscInt *epoch, PetscInt *step, PetscInt *batch)
{
  NNTrainerCursor *cur = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCall(NNGetTrainerCursor(tr->net, NULL, &cur));
  if (epoch) *epoch = cur->epoch;
  if (step) *step = cur->step;
  if (batch) *batch = cur->batch;
  PetscFunctionReturn(0);
}

/*@C
   NNGetCursor - gets where training stands: the restart cursor that checkpoints save and restore

   Collective the first time (it creates the network's trainer)

   Input Parameter:
.  net - the network

   Output Parameters:
+  epoch - epochs completed (may be NULL)
.  batch - minibatches completed in the current epoch (may be NULL)
-  step - optimizer steps taken (may be NULL)

   Level: intermediate

   Notes:
   The cursor belongs to the network's trainer (NNGetTrainer(), NNTrainerGetProgress()).

.seealso: `NNTrain()`, `NNCheckpointLoad()`, `NNGetRandomState()`, `NNTrainerGetProgress()`
@*/
PetscErrorCode NNGetCursor(NN net, PetscInt *epoch, PetscInt *batch, PetscInt *step)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNTrainerGetProgress(tr, epoch, step, batch));
  PetscFunctionReturn(0);
}

/*@C
   NNTrainerMonitorSet - adds a function the trainer calls after every optimizer step

   Logically Collective

   Input Parameters:
+  tr - the trainer
.  monitor - monitor(net, epoch, step, loss, ctx): the 0-based epoch, the steps taken so far and the
             mean loss of the global minibatch just trained on (the same on every rank)
.  ctx - context for the monitor
-  destroy - frees ctx when the monitors are cancelled or the trainer destroyed (may be NULL)

   Notes:
   Monitors are called in the order they were added; at most 8.

   Level: intermediate

.seealso: `NNTrainerMonitorCancel()`, `NNTrainMonitorSet()`, `NNTrain()`
@*/
PetscErrorCode NNTrainerMonitorSet(NNTrainer tr, PetscErrorCode (*monitor)(NN, PetscInt, PetscInt, PetscReal, void *), void *ctx, PetscErrorCode (*destroy)(void **))
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(tr->nmonitors < NN_MAX_MONITORS, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "Too many step monitors: at most %d (NNTrainerMonitorCancel() removes them)", NN_MAX_MONITORS);
  tr->monitors[tr->nmonitors++] = (NNTrainerMonitor){monitor, ctx, destroy};
  PetscFunctionReturn(0);
}

/*@
   NNTrainerMonitorCancel - removes all step monitors, freeing their contexts

   Logically Collective

   Level: intermediate

.seealso: `NNTrainerMonitorSet()`
@*/
PetscErrorCode NNTrainerMonitorCancel(NNTrainer tr)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  for (PetscInt i = 0; i < tr->nmonitors; i++)
    if (tr->monitors[i].destroy) PetscCall((*tr->monitors[i].destroy)(&tr->monitors[i].ctx));
  tr->nmonitors = 0;
  PetscFunctionReturn(0);
}

/* calls every step monitor */
PetscErrorCode NNTrainerMonitorStep(NNTrainer tr, PetscInt epoch, PetscInt step, PetscReal loss)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < tr->nmonitors; i++) PetscCall((*tr->monitors[i].fn)(tr->net, epoch, step, loss, tr->monitors[i].ctx));
  PetscFunctionReturn(0);
}

/*@C
   NNTrainMonitorSet - sets a function NNTrain() calls after every optimizer step, replacing those set before

   Logically Collective

   Input Parameters:
+  net - the network
.  monitor - monitor(net, epoch, step, loss, ctx): the 0-based epoch, the steps taken so far and the
             mean loss of the global minibatch just trained on (the same on every rank)
.  ctx - context for the monitor
-  destroy - frees ctx when the network is destroyed (may be NULL)

   Notes:
   The same as NNTrainerMonitorCancel() and NNTrainerMonitorSet() on the network's trainer.

   Level: intermediate

.seealso: `NNTrain()`, `NNTrainerMonitorSet()`
@*/
PetscErrorCode NNTrainMonitorSet(NN net, PetscErrorCode (*monitor)(NN, PetscInt, PetscInt, PetscReal, void *), void *ctx, PetscErrorCode (*destroy)(void **))
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNTrainerMonitorCancel(tr));
  PetscCall(NNTrainerMonitorSet(tr, monitor, ctx, destroy));
  PetscFunctionReturn(0);
}
