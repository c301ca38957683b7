static char help[] = "NNTrainStep(): online steps on the caller's batches against NNTrain() on the same batches, and an online run\n"
                     "checkpointed, destroyed and resumed against an uninterrupted one; both bitwise.\n\n"
                     "The network (dense-tanh-dropout-dense, cross entropy, Adam, step schedule) trains without shuffling,\n"
                     "data-parallel over all ranks; each data group gives NNTrainStep() its shard of every batch.\n"
                     "  -mode train     NNTrain() against NNTrainStep() (default)\n"
                     "  -mode restart   NNTrainStep() with -nn_checkpoint_steps, resumed with NNCheckpointLoad()\n";

#include "nntest.h"
#include <string.h>

#define NSAMPLES 43
#define NFEAT    6
#define NCLASSES 3
#define BATCH    10
#define EPOCHS   3
#define NBATCHES ((NSAMPLES + BATCH - 1) / BATCH)

typedef struct {
  PetscInt  n;
  PetscReal loss[EPOCHS * NBATCHES];
} History;

static PetscErrorCode Record(NN net PETSC_UNUSED, PetscInt epoch PETSC_UNUSED, PetscInt step, PetscReal loss, void *ctx)
{
  History *h = (History *)ctx;

  PetscFunctionBegin;
  if (step - 1 < EPOCHS * NBATCHES) h->loss[step - 1] = loss;
  h->n = PetscMax(h->n, step);
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateNet(MPI_Comm comm, History *h, NN *net)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscCall(NNTestCreateDropoutClassifier(comm, NFEAT, NCLASSES, BATCH, EPOCHS, net));
  PetscCall(NNGetTrainer(*net, &tr));
  PetscCall(NNTrainerSetShuffle(tr, PETSC_FALSE));
  PetscCall(NNTrainerSetStepsPerEpoch(tr, NBATCHES)); /* the schedule's epochs as NNTrain()'s */
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  if (h) PetscCall(NNTrainMonitorSet(*net, Record, h, NULL));
  PetscFunctionReturn(0);
}

/* this data group's shard of batch b (as NNTrain() splits it) into Vecs of exactly its samples, then one step */
static PetscErrorCode OnlineStep(NN net, NNData data, PetscInt b)
{
  PetscInt    n = PetscMin(BATCH, NSAMPLES - b * BATCH), D, idx[BATCH], first, last;
  MPI_Comm    dcomm;
  PetscMPIInt g;
  Vec         x, t;
  PetscReal   loss;

  PetscFunctionBegin;
  PetscCall(NNGetProcessGrid(net, NULL, &D, NULL));
  PetscCall(NNGetProcessGridComms(net, NULL, &dcomm, NULL));
  PetscCallMPI(MPI_Comm_rank(dcomm, &g));
  first = (n * g) / D;
  last  = (n * (g + 1)) / D;
  for (PetscInt i = first; i < last; i++) idx[i - first] = b * BATCH + i;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, (last - first) * NFEAT, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, last - first, &t));
  PetscCall(NNDataGetBatch(data, last - first, idx, x, t));
  PetscCall(NNTrainStep(net, x, t, &loss));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

/* parameters, optimizer state, generator and counters bitwise equal */
static PetscErrorCode CompareNets(NN a, NN b, const char what[])
{
  NNOpt      oa, ob;
  Vec        va, vb;
  PetscBool  eq;
  PetscInt   ea, eb, ba, bb, sa, sb, ns;
  PetscInt64 ra[NN_RANDOM_STATE_SIZE], rb[NN_RANDOM_STATE_SIZE];

  PetscFunctionBegin;
  PetscCall(NNGetCursor(a, &ea, &ba, &sa));
  PetscCall(NNGetCursor(b, &eb, &bb, &sb));
  PetscCheck(ea == eb && ba == bb && sa == sb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: cursors differ (epoch %" PetscInt_FMT "/%" PetscInt_FMT ", batch %" PetscInt_FMT "/%" PetscInt_FMT ", step %" PetscInt_FMT "/%" PetscInt_FMT ")", what, ea, eb, ba, bb, sa, sb);
  PetscCall(NNGetParameters(a, &va));
  PetscCall(NNGetParameters(b, &vb));
  PetscCall(NNTestVecsEqual(va, vb, &eq));
  PetscCheck(eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the parameters differ", what);
  PetscCall(NNGetOpt(a, &oa));
  PetscCall(NNGetOpt(b, &ob));
  PetscCall(NNOptGetNumStates(oa, &ns));
  for (PetscInt i = 0; i < ns; i++) {
    PetscCall(NNOptGetState(oa, i, NULL, &va));
    PetscCall(NNOptGetState(ob, i, NULL, &vb));
    PetscCall(NNTestVecsEqual(va, vb, &eq));
    PetscCheck(eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: optimizer state %" PetscInt_FMT " differs", what, i);
  }
  PetscCall(NNGetRandomState(a, ra));
  PetscCall(NNGetRandomState(b, rb));
  PetscCheck(!memcmp(ra, rb, sizeof(ra)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the generators differ", what);
  PetscFunctionReturn(0);
}

static PetscErrorCode CompareHistories(const History *a, const History *b, const char what[])
{
  PetscFunctionBegin;
  PetscCheck(a->n == b->n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " against %" PetscInt_FMT " steps", what, a->n, b->n);
  for (PetscInt s = 0; s < a->n; s++) PetscCheck(a->loss[s] == b->loss[s], PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the loss of step %" PetscInt_FMT " differs: %.17g against %.17g", what, s + 1, (double)a->loss[s], (double)b->loss[s]);
  PetscFunctionReturn(0);
}

static PetscErrorCode TestTrain(NNData data)
{
  NN        a, b;
  History   ha = {0, {0}}, hb = {0, {0}};
  PetscInt  D;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_COMM_WORLD, &ha, &a));
  PetscCall(NNTrain(a, data, NULL));
  PetscCall(CreateNet(PETSC_COMM_WORLD, &hb, &b));
  for (PetscInt e = 0; e < EPOCHS; e++)
    for (PetscInt bt = 0; bt < NBATCHES; bt++) PetscCall(OnlineStep(b, data, bt));
  PetscCall(CompareNets(a, b, "NNTrain() against NNTrainStep()"));
  PetscCall(CompareHistories(&ha, &hb, "NNTrain() against NNTrainStep()"));
  PetscCall(NNGetProcessGrid(a, NULL, &D, NULL));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNTrain() and %" PetscInt_FMT " NNTrainStep() calls (%" PetscInt_FMT " data group(s)): parameters, optimizer state, generator, cursor and step losses bitwise identical\n", hb.n, D));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestRestart(NNData data)
{
  NN        a, b;
  PetscInt  total = EPOCHS * NBATCHES, stop = 9, epoch, batch, step;
  const char *file = "trainstep_restart.h5";

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_COMM_WORLD, NULL, &a));
  for (PetscInt s = 0; s < total; s++) PetscCall(OnlineStep(a, data, s % NBATCHES));
  PetscCall(PetscOptionsSetValue(NULL, "-nn_checkpoint", file));
  PetscCall(PetscOptionsSetValue(NULL, "-nn_checkpoint_steps", "4"));
  PetscCall(CreateNet(PETSC_COMM_WORLD, NULL, &b));
  for (PetscInt s = 0; s < stop; s++) PetscCall(OnlineStep(b, data, s % NBATCHES)); /* checkpoints after steps 4 and 8 */
  PetscCall(NNDestroy(&b));                                                       /* step 9 is lost */
  PetscCall(PetscOptionsClearValue(NULL, "-nn_checkpoint"));
  PetscCall(PetscOptionsClearValue(NULL, "-nn_checkpoint_steps"));
  PetscCall(CreateNet(PETSC_COMM_WORLD, NULL, &b));
  PetscCall(NNCheckpointLoad(b, file));
  PetscCall(NNGetCursor(b, &epoch, &batch, &step));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "resumed from %s: epoch %" PetscInt_FMT ", batch %" PetscInt_FMT ", step %" PetscInt_FMT "\n", file, epoch, batch, step));
  for (PetscInt s = step; s < total; s++) PetscCall(OnlineStep(b, data, s % NBATCHES));
  PetscCall(CompareNets(a, b, "uninterrupted against resumed"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "online run resumed at step %" PetscInt_FMT " and an uninterrupted one after %" PetscInt_FMT " steps: parameters, optimizer state, generator and cursor bitwise identical\n", step, total));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NNData      data;
  char        mode[16] = "train";
  const char *file     = "trainstep_data.dat";
  PetscMPIInt rank;
  PetscBool   restart;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "NNTrainStep test options", NULL);
  PetscCall(PetscOptionsString("-mode", "train or restart", NULL, mode, mode, sizeof(mode), NULL));
  PetscOptionsEnd();
  if (!rank) PetscCall(NNTestWriteClassificationData(file, NSAMPLES, NFEAT, NCLASSES, 5));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, file));
  PetscCall(NNDataSetDistribute(data, PETSC_FALSE)); /* every rank fetches its own shards without the others */
  PetscCall(PetscStrcmp(mode, "restart", &restart));
  if (restart) PetscCall(TestRestart(data));
  else PetscCall(TestTrain(data));
  PetscCall(NNDataDestroy(&data));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: train

   test:
     suffix: train_dp
     nsize: 2

   test:
     suffix: train_single
     args: -nn_precision single
     output_file: output/trainstep_train.out

   test:
     suffix: restart
     args: -mode restart

   test:
     suffix: restart_dp
     nsize: 2
     args: -mode restart -nn_shard_optimizer

TEST*/
