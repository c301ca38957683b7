static char help[] = "Training monitors: the progress lines of -nn_monitor_steps, the CSV file of -nn_monitor_csv\n"
                     "(read back and checked against an epoch monitor), the graph of -nn_monitor_draw.\n"
                     "  -csv <file> - the CSV file to check (give the same name as -nn_monitor_csv)\n";

#include <petnn.h>

#define NSAMPLES 96
#define MAXEPOCHS 16

/* 96 samples, 4 features, 3 classes (as tests/tournament.c) */
static PetscErrorCode WriteData(const char file[])
{
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 17));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, 4, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    PetscInt cls = (i * 7) % 3;
    for (PetscInt j = 0; j < 4; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, 2 * u + (j == cls ? 0.8 : 0.0), INSERT_VALUES));
    }
    PetscCall(VecSetValue(y, i, (PetscScalar)cls, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(y));
  PetscCall(VecAssemblyEnd(y));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(X, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscInt  n;
  PetscReal v[MAXEPOCHS][4]; /* train loss, train acc, test loss, test acc */
} Curves;

/* an epoch monitor that records what it is given, to compare with the CSV file */
static PetscErrorCode RecordEpoch(NN net, PetscInt epoch, PetscReal loss, PetscReal acc, PetscReal tloss, PetscReal tacc, void *ctx)
{
  Curves *c = (Curves *)ctx;

  PetscFunctionBegin;
  PetscCheck(epoch == c->n && epoch < MAXEPOCHS, PetscObjectComm((PetscObject)net), PETSC_ERR_PLIB, "Epoch monitor called for epoch %" PetscInt_FMT " after %" PetscInt_FMT " calls", epoch, c->n);
  c->v[c->n][0] = loss;
  c->v[c->n][1] = acc;
  c->v[c->n][2] = tloss;
  c->v[c->n][3] = tacc;
  c->n++;
  PetscFunctionReturn(0);
}

/* reads the CSV file back: the header, one row per epoch in order 1..n, 7 fields, the values the
   epoch monitor saw, a positive learning rate and non-negative seconds */
static PetscErrorCode CheckCSV(const char file[], const Curves *c)
{
  FILE     *fp;
  char      line[1024];
  PetscInt  rows = 0;
  PetscBool ok   = PETSC_TRUE, header;

  PetscFunctionBegin;
  PetscCall(PetscFOpen(PETSC_COMM_SELF, file, "r", &fp));
  PetscCheck(fgets(line, sizeof(line), fp), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s is empty", file);
  PetscCall(PetscStrcmp(line, "epoch,train_loss,train_acc,test_loss,test_acc,lr,seconds\n", &header));
  while (fgets(line, sizeof(line), fp)) {
    long   e;
    double f[6];
    int    n = sscanf(line, "%ld,%lf,%lf,%lf,%lf,%lf,%lf", &e, &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]);

    if (n != 7 || e != rows + 1 || rows >= c->n) ok = PETSC_FALSE;
    else {
      for (PetscInt i = 0; i < 4; i++)
        if (PetscAbsReal(f[i] - c->v[rows][i]) > 1e-7 * PetscMax(1.0, PetscAbsReal(c->v[rows][i]))) ok = PETSC_FALSE;
      if (!(f[4] > 0) || f[5] < 0) ok = PETSC_FALSE;
    }
    rows++;
  }
  PetscCall(PetscFClose(PETSC_COMM_SELF, fp));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "CSV: header %s, %" PetscInt_FMT " rows for %" PetscInt_FMT " epochs, epochs 1..%" PetscInt_FMT " in order with the epoch monitor's values: %s\n", header ? "right" : "WRONG", rows, c->n, rows, ok ? "yes" : "NO"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          net;
  NNData      data;
  NNLayer     l;
  NNOpt       opt;
  NNTrainer   tr;
  PetscMPIInt rank;
  Curves      c = {0};
  char        csv[PETSC_MAX_PATH_LEN] = "";
  PetscInt    k, tty;
  PetscBool   draw;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-csv", csv, sizeof(csv), NULL));
  if (!rank) PetscCall(WriteData("monitors.dat"));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNAddLayer(net, NNLAYERRELU, "act", NULL));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){4}));
  PetscCall(NNSetBatchSize(net, 8));
  PetscCall(NNSetEpochs(net, 3));
  PetscCall(NNSetSeed(net, 2));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.05));
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNTrainerEpochMonitorSet(tr, RecordEpoch, &c, NULL));
  PetscCall(NNSetFromOptions(net)); /* -nn_monitor_steps, -nn_monitor_csv, -nn_monitor_draw, ... */
  PetscCall(NNTrainerGetMonitorSteps(tr, &k));
  PetscCall(NNTrainerGetMonitorStepsTTY(tr, &tty));
  PetscCall(NNTrainerGetMonitorDraw(tr, &draw));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "progress every %" PetscInt_FMT " steps (tty %" PetscInt_FMT "), draw %s\n", k, tty, draw ? "on" : "off"));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, "monitors.dat"));
  PetscCall(NNTrain(net, data, data));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "epoch monitor called %" PetscInt_FMT " times\n", c.n));
  PetscCall(NNTrainerSetMonitorCSV(tr, NULL)); /* closes the file */
  if (csv[0] && !rank) PetscCall(CheckCSV(csv, &c));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # plain progress lines (forced: the harness's output is not a terminal anyway); the rate and
   # the time left are floating-point numbers, which the comparison masks
   test:
     suffix: steps
     args: -nn_monitor -nn_monitor_steps 5 -nn_monitor_steps_tty 0

   # every step, and the test set's evaluation every 4 batches
   test:
     suffix: steps_eval
     args: -nn_monitor -nn_monitor_steps 1 -nn_epochs 1

   test:
     suffix: steps_2
     nsize: 2
     args: -nn_monitor_steps 5 -nn_data_groups 2

   test:
     suffix: csv
     args: -nn_monitor_csv monitors.csv -csv monitors.csv -nn_epochs 5

   test:
     suffix: csv_2
     nsize: 2
     args: -nn_monitor_csv monitors_2.csv -csv monitors_2.csv -nn_epochs 5 -nn_data_groups 2
     output_file: output/monitors_csv.out

   # the graph without a display: PETSc's null draw
   test:
     suffix: draw
     args: -nn_monitor_draw -nox -nn_monitor

   # saved as a picture without a display (this PETSc writes .ppm; .png needs libpng); -nox_warning: a PETSc built
   # without X says so on stderr
   test:
     suffix: draw_save
     args: -nn_monitor_draw -draw_type image -draw_save monitors.ppm -nn_monitor -nox_warning
     output_file: output/monitors_draw.out

TEST*/
