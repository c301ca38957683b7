/*
   The trainer's epoch monitors and the options of the built-in monitors: progress inside an epoch
   (-nn_monitor_steps, trainprogress.c) and training curves (-nn_monitor_csv, -nn_monitor_draw,
   traincurves.c). Without these options training runs exactly as before: nothing is computed,
   printed or communicated for them.
*/
#include <petnn/private/trainerimpl.h>

/*@C
   NNTrainerEpochMonitorSet - adds a function the trainer calls after every epoch

   Logically Collective

   Input Parameters:
+  tr - the trainer
.  monitor - monitor(net, epoch, train_loss, train_acc, test_loss, test_acc, ctx): the 0-based epoch
             just done, the mean training loss and accuracy over the epoch and the mean loss and
             accuracy on the test set given to NNTrain(); an accuracy is -1 for regression losses,
             the test values are -1 without a test set
.  ctx - context for the monitor
-  destroy - frees ctx when the monitors are cancelled or the trainer destroyed (may be NULL)

   Notes:
   Called on every rank with the values of the rank's own trainer (tournaments), after the
   -nn_monitor line of the epoch. Monitors are called in the order they were added; at most 8.
   The built-in monitors -nn_monitor_csv and -nn_monitor_draw come after them.

   Level: intermediate

.seealso: `NNTrainerEpochMonitorCancel()`, `NNTrainerMonitorSet()`, `NNTrainerSetMonitorCSV()`, `NNTrainerSetMonitorDraw()`, `NNTrain()`
@*/
PetscErrorCode NNTrainerEpochMonitorSet(NNTrainer tr, PetscErrorCode (*monitor)(NN, PetscInt, PetscReal, PetscReal, PetscReal, PetscReal, void *), void *ctx, PetscErrorCode (*destroy)(void **))
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(tr->nepochmonitors < NN_MAX_MONITORS, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "Too many epoch monitors: at most %d (NNTrainerEpochMonitorCancel() removes them)", NN_MAX_MONITORS);
  tr->epochmonitors[tr->nepochmonitors++] = (NNTrainerEpochMonitor){monitor, ctx, destroy};
  PetscFunctionReturn(0);
}

/*@
   NNTrainerEpochMonitorCancel - removes all epoch monitors, freeing their contexts

   Logically Collective

   Notes:
   The built-in monitors (-nn_monitor_csv, -nn_monitor_draw) stay; turn them off with their setters.

   Level: intermediate

.seealso: `NNTrainerEpochMonitorSet()`
@*/
PetscErrorCode NNTrainerEpochMonitorCancel(NNTrainer tr)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  for (PetscInt i = 0; i < tr->nepochmonitors; i++)
    if (tr->epochmonitors[i].destroy) PetscCall((*tr->epochmonitors[i].destroy)(&tr->epochmonitors[i].ctx));
  tr->nepochmonitors = 0;
  PetscFunctionReturn(0);
}

/* whether an epoch's losses are wanted by anyone but the -nn_monitor line */
PetscBool NNTrainerHasEpochMonitors(NNTrainer tr)
{
  return (PetscBool)(tr->nepochmonitors > 0 || tr->mon.csv[0] || tr->mon.draw);
}

/* calls every epoch monitor, then the built-in CSV and draw monitors; dt: the epoch's training time */
PetscErrorCode NNTrainerMonitorEpochCall(NNTrainer tr, PetscInt epoch, PetscReal loss, PetscReal acc, PetscReal tloss, PetscReal tacc, PetscLogDouble dt)
{
  PetscFunctionBegin;
  tr->mon.dt = dt;
  for (PetscInt i = 0; i < tr->nepochmonitors; i++) PetscCall((*tr->epochmonitors[i].fn)(tr->net, epoch, loss, acc, tloss, tacc, tr->epochmonitors[i].ctx));
  if (tr->mon.csv[0] || tr->mon.draw) PetscCall(NNTrainerMonitorCurves(tr->net, epoch, loss, acc, tloss, tacc, tr));
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetMonitorSteps - prints the progress inside an epoch every k optimizer steps

   Logically Collective

   Input Parameters:
+  tr - the trainer
-  k - the interval in optimizer steps (0: off, the default)

   Options Database Keys:
+  -nn_monitor_steps <k> - the interval
-  -nn_monitor_steps_tty <bool> - a progress bar redrawn in place (true) or plain lines (false); by default a bar when standard output is a terminal

   Notes:
   Rank 0 prints the epoch, the optimizer step, the batch i/n of the epoch, the running mean loss
   of the epoch, the samples per second and the estimated time left in the epoch. On a terminal
   this is one line redrawn with a carriage return, ended by a newline after the epoch's last
   batch; otherwise (files, CI logs) one line each time. Nothing is communicated for it.
   Open MPI's mpiexec hands its processes a pseudo-terminal whatever its own output is, so under it
   the default is plain lines; -nn_monitor_steps_tty 1 gives the bar there.

   Level: beginner

.seealso: `NNTrainerGetMonitorSteps()`, `NNTrainerSetMonitorStepsTTY()`, `NNTrainerSetMonitor()`, `NNTrainerMonitorSet()`
@*/
PetscErrorCode NNTrainerSetMonitorSteps(NNTrainer tr, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(k >= 0, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "-nn_monitor_steps %" PetscInt_FMT " must be non-negative (0: off)", k);
  tr->mon.steps = k;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetMonitorSteps - gets the interval in optimizer steps of the progress lines (0: off)

   Not Collective

   Level: beginner

.seealso: `NNTrainerSetMonitorSteps()`
@*/
PetscErrorCode NNTrainerGetMonitorSteps(NNTrainer tr, PetscInt *k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *k = tr->mon.steps;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetMonitorStepsTTY - whether the progress of -nn_monitor_steps is a bar redrawn in place or plain lines

   Logically Collective

   Input Parameters:
+  tr - the trainer
-  tty - 1: a bar redrawn with carriage returns, 0: plain lines, PETSC_DECIDE: a bar when rank 0's standard output is a terminal (the default)

   Options Database Key:
.  -nn_monitor_steps_tty <bool> - force the bar (true) or plain lines (false)

   Level: intermediate

.seealso: `NNTrainerSetMonitorSteps()`, `NNTrainerGetMonitorStepsTTY()`
@*/
PetscErrorCode NNTrainerSetMonitorStepsTTY(NNTrainer tr, PetscInt tty)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(tty == 0 || tty == 1 || tty == PETSC_DECIDE, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "-nn_monitor_steps_tty %" PetscInt_FMT " must be 0 (plain lines), 1 (a bar) or PETSC_DECIDE (a bar on a terminal)", tty);
  tr->mon.tty = tty;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetMonitorStepsTTY - gets whether the progress is a bar (1), plain lines (0) or decided by the terminal (PETSC_DECIDE)

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetMonitorStepsTTY()`
@*/
PetscErrorCode NNTrainerGetMonitorStepsTTY(NNTrainer tr, PetscInt *tty)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *tty = tr->mon.tty;
  PetscFunctionReturn(0);
}

/*@C
   NNTrainerSetMonitorCSV - writes the training curves to a CSV file, one row per epoch (NULL or "" for none)

   Logically Collective

   Options Database Key:
.  -nn_monitor_csv <file> - the file

   Notes:
   Rank 0 writes the header epoch,train_loss,train_acc,test_loss,test_acc,lr,seconds when training
   starts writing it (the file is created anew) and then a row after every epoch, flushed at once:
   the 1-based epoch, the mean training loss and accuracy over the epoch, the test set's loss and
   accuracy, the learning rate and the seconds of training of the epoch (as the -nn_monitor line;
   the test set's evaluation excluded). Values that do not exist (accuracy of a regression, the
   test set when none is given) are empty fields. With tournaments, the values are trainer 0's.
   bench/plot_curves.py turns the file into a picture.

   Level: beginner

.seealso: `NNTrainerGetMonitorCSV()`, `NNTrainerSetMonitorDraw()`, `NNTrainerEpochMonitorSet()`
@*/
PetscErrorCode NNTrainerSetMonitorCSV(NNTrainer tr, const char file[])
{
  PetscBool same;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCall(PetscStrcmp(tr->mon.csv, file ? file : "", &same));
  if (same) PetscFunctionReturn(0); /* options read again: the open file goes on */
  PetscCall(NNTrainerMonitorCurvesClose(tr));
  PetscCall(PetscStrncpy(tr->mon.csv, file ? file : "", sizeof(tr->mon.csv)));
  PetscFunctionReturn(0);
}

/*@C
   NNTrainerGetMonitorCSV - gets the CSV file of the training curves ("" for none)

   Not Collective

   Level: beginner

.seealso: `NNTrainerSetMonitorCSV()`
@*/
PetscErrorCode NNTrainerGetMonitorCSV(NNTrainer tr, const char *file[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *file = tr->mon.csv;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetMonitorDraw - draws the loss and accuracy per epoch in a PetscDraw window (PetscDrawLG)

   Logically Collective

   Options Database Keys:
+  -nn_monitor_draw - draw
.  -draw_save <file.ppm> - also save the picture (PetscDrawSetSave(); this PETSc writes .ppm, .png needs a PETSc built with libpng)
-  -nox, -draw_type null - no window (for runs without a display)

   Notes:
   Rank 0 draws on PETSC_COMM_SELF one graph with the curves it has: training loss, test loss,
   training accuracy, test accuracy (losses and accuracies share the axis; -nn_monitor_csv and
   bench/plot_curves.py give separate panels).

   Level: intermediate

.seealso: `NNTrainerGetMonitorDraw()`, `NNTrainerSetMonitorCSV()`, `PetscDrawLGCreate()`
@*/
PetscErrorCode NNTrainerSetMonitorDraw(NNTrainer tr, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  if (!flg) PetscCall(PetscViewerDestroy(&tr->mon.viewer));
  tr->mon.draw = flg;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetMonitorDraw - gets whether the training curves are drawn

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetMonitorDraw()`
@*/
PetscErrorCode NNTrainerGetMonitorDraw(NNTrainer tr, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *flg = tr->mon.draw;
  PetscFunctionReturn(0);
}

/* the options of the built-in monitors, in the trainer's options block */
PetscErrorCode NNTrainerMonitorsSetFromOptions_Private(NNTrainer tr, NNOptionItems PetscOptionsObject)
{
  PetscInt  k = tr->mon.steps;
  PetscBool tty = (PetscBool)(tr->mon.tty == 1), draw = tr->mon.draw, set;
  char      csv[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscOptionsInt("-nn_monitor_steps", "Print progress inside an epoch every this many optimizer steps (0: off)", "NNTrainerSetMonitorSteps", k, &k, &set));
  if (set) PetscCall(NNTrainerSetMonitorSteps(tr, k));
  PetscCall(PetscOptionsBool("-nn_monitor_steps_tty", "Progress as a bar redrawn in place (default: when stdout is a terminal)", "NNTrainerSetMonitorStepsTTY", tty, &tty, &set));
  if (set) PetscCall(NNTrainerSetMonitorStepsTTY(tr, tty ? 1 : 0));
  PetscCall(PetscStrncpy(csv, tr->mon.csv, sizeof(csv)));
  PetscCall(PetscOptionsString("-nn_monitor_csv", "Write the training curves (loss, accuracy per epoch) to this CSV file", "NNTrainerSetMonitorCSV", csv, csv, sizeof(csv), &set));
  if (set) PetscCall(NNTrainerSetMonitorCSV(tr, csv));
  PetscCall(PetscOptionsBool("-nn_monitor_draw", "Draw the loss and accuracy per epoch (PetscDrawLG; -draw_save file.ppm)", "NNTrainerSetMonitorDraw", draw, &draw, &set));
  if (set) PetscCall(NNTrainerSetMonitorDraw(tr, draw));
  PetscFunctionReturn(0);
}

/* frees what the built-in monitors hold and the epoch monitors' contexts */
PetscErrorCode NNTrainerMonitorsDestroy_Private(NNTrainer tr)
{
  PetscFunctionBegin;
  PetscCall(NNTrainerEpochMonitorCancel(tr));
  PetscCall(NNTrainerMonitorCurvesClose(tr));
  PetscCall(PetscViewerDestroy(&tr->mon.viewer));
  PetscFunctionReturn(0);
}
