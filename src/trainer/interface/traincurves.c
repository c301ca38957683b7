/*
   Training curves, after every epoch on rank 0: a row of the CSV file of -nn_monitor_csv and a
   point of each curve of the PetscDrawLG graph of -nn_monitor_draw (the way PETSc's own monitors,
   e.g. -ksp_monitor_lg_residualnorm, draw). -nox or -draw_type null turn the window off.
*/
#include <petnn/private/trainerimpl.h>
#include <petscdraw.h>

/* closes the CSV file (a new training writes a new one) */
PetscErrorCode NNTrainerMonitorCurvesClose(NNTrainer tr)
{
  PetscFunctionBegin;
  if (tr->mon.fp) PetscCall(PetscFClose(PETSC_COMM_SELF, tr->mon.fp));
  tr->mon.fp = NULL;
  PetscFunctionReturn(0);
}

/* "v," or "," for a value that does not exist (negative) */
static PetscErrorCode NNCSVValue(FILE *fp, PetscReal v, PetscBool exists)
{
  PetscFunctionBegin;
  if (exists) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "%.8g,", (double)v));
  else PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, ","));
  PetscFunctionReturn(0);
}

/* one row epoch,train_loss,train_acc,test_loss,test_acc,lr,seconds; the header when the file is opened */
static PetscErrorCode NNTrainerMonitorCSVRow(NN net, NNTrainer tr, PetscInt epoch, const PetscReal v[4], const PetscBool have[4])
{
  NNOpt     opt;
  PetscReal lr;

  PetscFunctionBegin;
  if (!tr->mon.fp) {
    PetscCall(PetscFOpen(PETSC_COMM_SELF, tr->mon.csv, "w", &tr->mon.fp));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, tr->mon.fp, "epoch,train_loss,train_acc,test_loss,test_acc,lr,seconds\n"));
  }
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNOptGetLearningRate(opt, &lr));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, tr->mon.fp, "%" PetscInt_FMT ",", epoch + 1));
  for (PetscInt i = 0; i < 4; i++) PetscCall(NNCSVValue(tr->mon.fp, v[i], have[i]));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, tr->mon.fp, "%.8g,%.6f\n", (double)lr, (double)tr->mon.dt));
  PetscCheck(!fflush(tr->mon.fp), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write the training curves to -nn_monitor_csv %s", tr->mon.csv);
  PetscFunctionReturn(0);
}

/* the graph: one curve per value that exists, created at the first epoch */
static PetscErrorCode NNTrainerMonitorDrawPoint(NNTrainer tr, PetscInt epoch, const PetscReal v[4], const PetscBool have[4])
{
  static const char *names[4] = {"train loss", "train acc", "test loss", "test acc"};
  const char        *legend[4];
  PetscDrawLG        lg;
  PetscReal          x[4], y[4];
  PetscInt           n = 0;

  PetscFunctionBegin;
  if (!tr->mon.viewer) {
    PetscDrawAxis axis;

    PetscCall(PetscViewerDrawOpen(PETSC_COMM_SELF, NULL, "Training curves (-nn_monitor_draw)", PETSC_DECIDE, PETSC_DECIDE, 400, 300, &tr->mon.viewer));
    PetscCall(PetscViewerDrawGetDrawLG(tr->mon.viewer, 0, &lg));
    tr->mon.ncurves = 0;
    for (PetscInt i = 0; i < 4; i++)
      if (have[i]) legend[tr->mon.ncurves++] = names[i];
    PetscCall(PetscDrawLGSetDimension(lg, tr->mon.ncurves));
    PetscCall(PetscDrawLGSetLegend(lg, legend));
    PetscCall(PetscDrawLGGetAxis(lg, &axis));
    PetscCall(PetscDrawAxisSetLabels(axis, "Training curves", "epoch", "loss, accuracy"));
    PetscCall(PetscDrawLGSetFromOptions(lg));
  }
  PetscCall(PetscViewerDrawGetDrawLG(tr->mon.viewer, 0, &lg));
  for (PetscInt i = 0; i < 4; i++)
    if (have[i] && n < tr->mon.ncurves) {
      x[n]   = epoch + 1;
      y[n++] = v[i];
    }
  for (; n < tr->mon.ncurves; n++) { /* a value missing now that existed at the first epoch */
    x[n] = epoch + 1;
    y[n] = 0;
  }
  PetscCall(PetscDrawLGAddPoint(lg, x, y));
  PetscCall(PetscDrawLGDraw(lg));
  PetscCall(PetscDrawLGSave(lg));
  PetscFunctionReturn(0);
}

/* the built-in epoch monitor of -nn_monitor_csv and -nn_monitor_draw (ctx: the trainer) */
PetscErrorCode NNTrainerMonitorCurves(NN net, PetscInt epoch, PetscReal loss, PetscReal acc, PetscReal tloss, PetscReal tacc, void *ctx)
{
  NNTrainer   tr = (NNTrainer)ctx;
  PetscMPIInt rank;
  PetscReal   v[4]    = {loss, acc, tloss, tacc};
  PetscBool   have[4] = {PETSC_TRUE, (PetscBool)(acc >= 0), (PetscBool)(tloss >= 0), (PetscBool)(tacc >= 0)};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)net), &rank));
  if (rank) PetscFunctionReturn(0);
  if (tr->mon.csv[0]) PetscCall(NNTrainerMonitorCSVRow(net, tr, epoch, v, have));
  if (tr->mon.draw) PetscCall(NNTrainerMonitorDrawPoint(tr, epoch, v, have));
  PetscFunctionReturn(0);
}
