static char help[] = "Restarts: a run killed with SIGKILL in the middle of an epoch and restarted from its last\n"
                     "checkpoint ends bitwise identical to an uninterrupted run (tests/restart.sh drives it).\n\n"
                     "  -mode full     train all epochs; write the final state to -out\n"
                     "  -mode train    train with the -nn_checkpoint* options; with -kill_step k, rank -kill_rank\n"
                     "                 sends itself SIGKILL after step k\n"
                     "  -mode resume   -load a checkpoint, train to the end, write the final state to -out\n"
                     "  -mode compare  compare the states in -a and -b: bitwise (-tol 0) or within -tol\n"
                     "The network (dense-tanh-dropout-dense, Adam, step schedule) trains data-parallel on all ranks.\n";

#include <petnn.h>
#include "nntest.h"
#include <signal.h>
#include <string.h>

#define NSAMPLES 43
#define NCLASSES 3
#define EPOCHS   4

typedef struct {
  PetscInt    kill_step;
  PetscMPIInt kill_rank;
} KillCtx;

static PetscErrorCode WriteData(const char file[])
{
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 5));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, 6, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    for (PetscInt j = 0; j < 6; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, u + (j % NCLASSES == i % NCLASSES ? 0.5 : 0.0), INSERT_VALUES));
    }
    PetscCall(VecSetValue(y, i, (PetscScalar)(i % NCLASSES), INSERT_VALUES));
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

static PetscErrorCode CreateNet(MPI_Comm comm, NN *net)
{
  PetscFunctionBegin;
  PetscCall(NNTestCreateDropoutClassifier(comm, 6, NCLASSES, 10, EPOCHS, net));
  PetscCall(NNSetFromOptions(*net)); /* -nn_checkpoint, -nn_checkpoint_steps, ... */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode Killer(NN net, PetscInt epoch, PetscInt step, PetscReal loss PETSC_UNUSED, void *vctx)
{
  KillCtx    *k = (KillCtx *)vctx;
  PetscMPIInt rank;
  PetscInt    batch;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)net), &rank));
  if (step == k->kill_step && rank == k->kill_rank) {
    PetscCall(NNGetCursor(net, NULL, &batch, NULL));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "rank %d: SIGKILL after step %" PetscInt_FMT " (epoch %" PetscInt_FMT ", batch %" PetscInt_FMT ")\n", rank, step, epoch + 1, batch));
    fflush(stdout);
    raise(SIGKILL);
  }
  PetscFunctionReturn(0);
}

/* largest difference of two Vecs relative to the largest entry of a */
static PetscErrorCode RelDiff(Vec a, Vec b, PetscReal *d)
{
  const PetscScalar *x, *y;
  PetscInt           n;
  PetscReal          num = 0, den = 0;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < n; i++) {
    num = PetscMax(num, PetscAbsScalar(x[i] - y[i]));
    den = PetscMax(den, PetscAbsScalar(x[i]));
  }
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  *d = den > 0 ? num / den : num;
  PetscFunctionReturn(0);
}

static PetscErrorCode Compare(const char fa[], const char fb[], PetscReal tol)
{
  NN         a, b;
  NNOpt      oa, ob;
  Vec        ta, tb, sa, sb;
  PetscBool  same = PETSC_TRUE, eq;
  PetscReal  d, worst = 0;
  PetscInt   ea, eb, stepa, stepb, na, nb, nstate;
  PetscInt64 ra[NN_RANDOM_STATE_SIZE], rb[NN_RANDOM_STATE_SIZE];

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_COMM_SELF, &a));
  PetscCall(CreateNet(PETSC_COMM_SELF, &b));
  PetscCall(NNCheckpointLoad(a, fa));
  PetscCall(NNCheckpointLoad(b, fb));
  PetscCall(NNGetCursor(a, &ea, NULL, &stepa));
  PetscCall(NNGetCursor(b, &eb, NULL, &stepb));
  PetscCall(NNGetOpt(a, &oa));
  PetscCall(NNGetOpt(b, &ob));
  PetscCall(NNOptGetNumSteps(oa, &na));
  PetscCall(NNOptGetNumSteps(ob, &nb));
  PetscCheck(ea == eb && stepa == stepb && na == nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Counters differ: epoch %" PetscInt_FMT "/%" PetscInt_FMT ", step %" PetscInt_FMT "/%" PetscInt_FMT, ea, eb, stepa, stepb);
  PetscCall(NNGetParameters(a, &ta));
  PetscCall(NNGetParameters(b, &tb));
  PetscCall(VecEqual(ta, tb, &eq));
  same = (PetscBool)(same && eq);
  PetscCall(RelDiff(ta, tb, &d));
  worst = PetscMax(worst, d);
  PetscCall(NNOptGetNumStates(oa, &nstate));
  for (PetscInt i = 0; i < nstate; i++) {
    PetscCall(NNOptGetState(oa, i, NULL, &sa));
    PetscCall(NNOptGetState(ob, i, NULL, &sb));
    PetscCall(VecEqual(sa, sb, &eq));
    same = (PetscBool)(same && eq);
    PetscCall(RelDiff(sa, sb, &d));
    worst = PetscMax(worst, d);
  }
  PetscCall(NNGetRandomState(a, ra));
  PetscCall(NNGetRandomState(b, rb));
  same = (PetscBool)(same && !memcmp(ra, rb, sizeof(ra)));
  PetscCheck(!memcmp(ra, rb, sizeof(ra)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The random-number generators differ");
  if (tol == 0) {
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s and %s differ: largest relative difference %g", fa, fb, (double)worst);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s and %s: parameters, optimizer state, generator and counters bitwise identical (%" PetscInt_FMT " steps)\n", fa, fb, stepa));
  } else {
    PetscCheck(worst <= tol, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s and %s differ: largest relative difference %g > %g", fa, fb, (double)worst, (double)tol);
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s and %s: parameters and optimizer state within %g, generator and counters identical (%" PetscInt_FMT " steps)\n", fa, fb, (double)tol, stepa));
    PetscCall(PetscInfo(NULL, "largest relative difference %g\n", (double)worst));
  }
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          net;
  NNData      data;
  char        mode[16] = "full", out[PETSC_MAX_PATH_LEN] = "final.h5", load[PETSC_MAX_PATH_LEN] = "", fa[PETSC_MAX_PATH_LEN] = "", fb[PETSC_MAX_PATH_LEN] = "";
  const char *file = "restart_data.dat";
  PetscReal   tol  = 0;
  KillCtx     kill = {-1, 0};
  PetscMPIInt rank, kr = 0;
  PetscBool   compare;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Restart test options", NULL);
  PetscCall(PetscOptionsString("-mode", "full, train, resume or compare", NULL, mode, mode, sizeof(mode), NULL));
  PetscCall(PetscOptionsString("-out", "Final state", NULL, out, out, sizeof(out), NULL));
  PetscCall(PetscOptionsString("-load", "Checkpoint to resume from", NULL, load, load, sizeof(load), NULL));
  PetscCall(PetscOptionsString("-a", "First state to compare", NULL, fa, fa, sizeof(fa), NULL));
  PetscCall(PetscOptionsString("-b", "Second state to compare", NULL, fb, fb, sizeof(fb), NULL));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance of the comparison (0: bitwise)", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsInt("-kill_step", "Kill after this step", NULL, kill.kill_step, &kill.kill_step, NULL));
  {
    PetscInt r = kr;
    PetscCall(PetscOptionsInt("-kill_rank", "Rank that kills itself", NULL, r, &r, NULL));
    kr = (PetscMPIInt)r;
  }
  PetscOptionsEnd();
  kill.kill_rank = kr;
  PetscCall(PetscStrcmp(mode, "compare", &compare));
  if (compare) {
    if (!rank) PetscCall(Compare(fa, fb, tol));
    PetscCall(PetscFinalize());
    return 0;
  }
  if (!rank) {
    PetscBool exists;
    PetscCall(PetscTestFile(file, 'r', &exists));
    if (!exists) PetscCall(WriteData(file));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(CreateNet(PETSC_COMM_WORLD, &net));
  if (load[0]) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(NNCheckpointLoad(net, load));
    PetscInt    epoch, batch, step;
    PetscCall(NNGetCursor(net, &epoch, &batch, &step));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "resumed from %s on %d rank(s): %" PetscInt_FMT " epoch(s) done, step %" PetscInt_FMT ", batch %" PetscInt_FMT " of the next epoch\n", load, size, epoch, step, batch));
  }
  if (kill.kill_step > 0) PetscCall(NNTrainMonitorSet(net, Killer, &kill, NULL));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, file));
  PetscCall(NNTrain(net, data, NULL));
  PetscCall(NNCheckpointSave(net, out)); /* the final state, compared by -mode compare */
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: kill
     command: bash ${PETNN_SOURCE_DIR}/tests/restart.sh ${exe} "${mpiexec}" 2

   test:
     suffix: kill_sharded
     command: bash ${PETNN_SOURCE_DIR}/tests/restart.sh ${exe} "${mpiexec}" 2 -nn_shard_optimizer
     output_file: output/restart_kill.out

   # single precision: the resumed run on the same ranks is bitwise the uninterrupted one too
   test:
     suffix: kill_single
     command: bash ${PETNN_SOURCE_DIR}/tests/restart.sh ${exe} "${mpiexec}" 2 -nn_precision single
     output_file: output/restart_kill.out

TEST*/
