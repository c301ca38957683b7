static char help[] = "The replay buffer (NNDATABUFFER) of online training.\n\n"
                     "  -mode ring      capacity and wrap-around: which samples the slots hold after more pushes than slots\n"
                     "  -mode sample    uniform draws with and without replacement: slot frequencies against a chi-square bound\n"
                     "  -mode restart   a simulation pushing into the network's buffer and training from it every few steps,\n"
                     "                  checkpointed, destroyed and resumed, against an uninterrupted one: bitwise (each data\n"
                     "                  group pushes its own samples into its own buffer)\n"
                     "Bad input: tests/online_badinput.c.\n";

#include "nntest.h"
#include <string.h>

#define NIN  4
#define NOUT 2

/* sample s of data group g: inputs and targets of a smooth map */
static PetscErrorCode FillSample(PetscInt s, PetscInt g, Vec x, Vec y)
{
  PetscScalar *xa, *ya;

  PetscFunctionBegin;
  PetscCall(VecGetArrayWrite(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  for (PetscInt i = 0; i < NIN; i++) xa[i] = PetscSinReal(0.3 * s + 0.7 * i + 1.1 * g);
  ya[0] = xa[0] * xa[1] + 0.5 * xa[2];
  ya[1] = PetscCosReal(xa[3]) - xa[0];
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateBuffer(MPI_Comm comm, PetscInt K, NNData *d)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(comm, d));
  PetscCall(NNDataSetType(*d, NNDATABUFFER));
  PetscCall(NNDataBufferSetCapacity(*d, K));
  PetscCall(NNDataSetFromOptions(*d));
  PetscFunctionReturn(0);
}

/* capacity 5, 12 pushes of sample id i (input (i, i + 0.5), target 10 i): the slots hold 10, 11, 7, 8, 9 */
static PetscErrorCode TestRing(void)
{
  NNData      d;
  Vec         x, y, xb, yb;
  PetscInt    count, idx[5] = {0, 1, 2, 3, 4}, expect[5] = {10, 11, 7, 8, 9};
  PetscInt64  pushed;
  const PetscScalar *xa, *ya;

  PetscFunctionBegin;
  PetscCall(CreateBuffer(PETSC_COMM_SELF, 5, &d));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 1, &y));
  for (PetscInt i = 0; i < 12; i++) {
    PetscCall(VecSetValue(x, 0, (PetscScalar)i, INSERT_VALUES));
    PetscCall(VecSetValue(x, 1, i + 0.5, INSERT_VALUES));
    PetscCall(VecSet(y, 10.0 * i));
    PetscCall(NNDataBufferPush(d, x, y));
    PetscCall(NNDataBufferGetCount(d, &count, &pushed));
    PetscCheck(count == PetscMin(i + 1, 5) && pushed == i + 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "after %" PetscInt_FMT " pushes: %" PetscInt_FMT " held, %" PetscInt64_FMT " pushed", i + 1, count, pushed);
  }
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 10, &xb));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 5, &yb));
  PetscCall(NNDataGetBatch(d, 5, idx, xb, yb));
  PetscCall(VecGetArrayRead(xb, &xa));
  PetscCall(VecGetArrayRead(yb, &ya));
  for (PetscInt s = 0; s < 5; s++) PetscCheck(xa[2 * s] == expect[s] && xa[2 * s + 1] == expect[s] + 0.5 && ya[s] == 10.0 * expect[s], PETSC_COMM_SELF, PETSC_ERR_PLIB, "slot %" PetscInt_FMT " holds sample %g, expected %" PetscInt_FMT, s, (double)PetscRealPart(xa[2 * s]), expect[s]);
  PetscCall(VecRestoreArrayRead(yb, &ya));
  PetscCall(VecRestoreArrayRead(xb, &xa));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "capacity 5, 12 pushes: 5 held, slots 0-4 hold samples 10 11 7 8 9 (the oldest overwritten first)\n"));
  PetscCall(NNDataView(d, PETSC_VIEWER_STDOUT_SELF));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xb));
  PetscCall(VecDestroy(&yb));
  PetscCall(NNDataDestroy(&d));
  PetscFunctionReturn(0);
}

/* draws of n slots from K held, ndraws times: chi-square of the slot counts (K - 1 degrees of freedom) below bound,
   no slot twice in a minibatch without replacement, some twice with */
static PetscErrorCode TestSampling(PetscBool replace)
{
  const PetscInt K = 20, n = 8, ndraws = 5000;
  NNData         d;
  Vec            x, y;
  PetscInt       idx[8], counts[20] = {0}, repeats = 0;
  PetscReal      chi2 = 0, E = (PetscReal)n * ndraws / K, bound = 43.8; /* chi-square, 19 dof, p = 0.001 */

  PetscFunctionBegin;
  PetscCall(CreateBuffer(PETSC_COMM_SELF, K, &d));
  PetscCall(NNDataBufferSetReplacement(d, replace));
  PetscCall(NNDataBufferSetSeed(d, 3));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 1, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 1, &y));
  for (PetscInt i = 0; i < K; i++) PetscCall(NNDataBufferPush(d, x, y));
  for (PetscInt r = 0; r < ndraws; r++) {
    PetscCall(NNDataBufferSample(d, n, idx));
    for (PetscInt i = 0; i < n; i++) {
      PetscCheck(idx[i] >= 0 && idx[i] < K, PETSC_COMM_SELF, PETSC_ERR_PLIB, "slot %" PetscInt_FMT " out of range", idx[i]);
      counts[idx[i]]++;
      for (PetscInt j = 0; j < i; j++) repeats += idx[j] == idx[i];
    }
  }
  for (PetscInt k = 0; k < K; k++) chi2 += (counts[k] - E) * (counts[k] - E) / E;
  PetscCheck(chi2 < bound, PETSC_COMM_SELF, PETSC_ERR_PLIB, "chi-square of the slot counts %g >= %g: not uniform", (double)chi2, (double)bound);
  PetscCheck(replace ? repeats > 0 : repeats == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " repeated slots within minibatches %s replacement", repeats, replace ? "with" : "without");
  PetscCall(PetscInfo(NULL, "chi-square %g, repeats %" PetscInt_FMT "\n", (double)chi2, repeats));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%" PetscInt_FMT " minibatches of %" PetscInt_FMT " from %" PetscInt_FMT " samples %s replacement: slot counts uniform (chi-square below the p = 0.001 bound), %s\n", ndraws, n, K, replace ? "with" : "without", replace ? "slots repeat within minibatches" : "no slot twice in a minibatch"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(NNDataDestroy(&d));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateNet(MPI_Comm comm, NN *net)
{
  NNLayer     l;
  NNOpt       opt;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetProcessGrid(*net, 1, size)); /* every rank its own data group */
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 16));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "act", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, NOUT));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(*net, 6));
  PetscCall(NNSetSeed(*net, 4));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){NIN}));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.01));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the simulation's steps [from, to): push every step, train every 3rd; returns the network and buffer */
static PetscErrorCode Simulate(NN net, NNData d, PetscInt from, PetscInt to)
{
  Vec         x, y;
  MPI_Comm    dcomm;
  PetscMPIInt g;

  PetscFunctionBegin;
  PetscCall(NNGetProcessGridComms(net, NULL, &dcomm, NULL));
  PetscCallMPI(MPI_Comm_rank(dcomm, &g));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NIN, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NOUT, &y));
  for (PetscInt s = from; s < to; s++) {
    PetscCall(FillSample(s, g, x, y));
    PetscCall(NNDataBufferPush(d, x, y));
    if ((s + 1) % 3 == 0) PetscCall(NNTrainStepBuffer(net, NULL));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

static PetscErrorCode CompareRuns(NN a, NNData da, NN b, NNData db)
{
  Vec        va, vb;
  NNOpt      oa, ob;
  PetscBool  eq;
  PetscInt   ca, cb, ia[6], ib[6], ns;
  PetscInt64 pa, pb, ra[NN_RANDOM_STATE_SIZE], rb[NN_RANDOM_STATE_SIZE];

  PetscFunctionBegin;
  PetscCall(NNGetParameters(a, &va));
  PetscCall(NNGetParameters(b, &vb));
  PetscCall(NNTestVecsEqual(va, vb, &eq));
  PetscCheck(eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the parameters differ");
  PetscCall(NNGetOpt(a, &oa));
  PetscCall(NNGetOpt(b, &ob));
  PetscCall(NNOptGetNumStates(oa, &ns));
  for (PetscInt i = 0; i < ns; i++) {
    PetscCall(NNOptGetState(oa, i, NULL, &va));
    PetscCall(NNOptGetState(ob, i, NULL, &vb));
    PetscCall(NNTestVecsEqual(va, vb, &eq));
    PetscCheck(eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "optimizer state %" PetscInt_FMT " differs", i);
  }
  PetscCall(NNGetRandomState(a, ra));
  PetscCall(NNGetRandomState(b, rb));
  PetscCheck(!memcmp(ra, rb, sizeof(ra)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the networks' generators differ");
  PetscCall(NNDataBufferGetCount(da, &ca, &pa));
  PetscCall(NNDataBufferGetCount(db, &cb, &pb));
  PetscCheck(ca == cb && pa == pb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the buffers hold %" PetscInt_FMT "/%" PetscInt_FMT " samples of %" PetscInt64_FMT "/%" PetscInt64_FMT " pushed", ca, cb, pa, pb);
  PetscCall(NNDataBufferSample(da, 6, ia));
  PetscCall(NNDataBufferSample(db, 6, ib));
  PetscCheck(!memcmp(ia, ib, sizeof(ia)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "the buffers' next draws differ");
  PetscFunctionReturn(0);
}

static PetscErrorCode TestRestart(void)
{
  NN          a, b;
  NNData      da, db;
  const char *file = "buffer_restart.h5";
  PetscInt    step, total = 40;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_COMM_WORLD, &a));
  PetscCall(CreateBuffer(PETSC_COMM_WORLD, 16, &da));
  PetscCall(NNSetTrainBuffer(a, da));
  PetscCall(Simulate(a, da, 0, total));
  PetscCall(PetscOptionsSetValue(NULL, "-nn_checkpoint", file));
  PetscCall(PetscOptionsSetValue(NULL, "-nn_checkpoint_steps", "4"));
  PetscCall(CreateNet(PETSC_COMM_WORLD, &b));
  PetscCall(CreateBuffer(PETSC_COMM_WORLD, 16, &db));
  PetscCall(NNSetTrainBuffer(b, db));
  PetscCall(Simulate(b, db, 0, 29)); /* training steps 1-9 (simulation steps 3, ..., 27), checkpoints after 4 and 8 */
  PetscCall(NNDestroy(&b));          /* the simulation dies at step 29 */
  PetscCall(NNDataDestroy(&db));
  PetscCall(PetscOptionsClearValue(NULL, "-nn_checkpoint"));
  PetscCall(PetscOptionsClearValue(NULL, "-nn_checkpoint_steps"));
  PetscCall(CreateNet(PETSC_COMM_WORLD, &b));
  PetscCall(CreateBuffer(PETSC_COMM_WORLD, 16, &db));
  PetscCall(NNSetTrainBuffer(b, db)); /* before the load: the checkpoint fills it */
  PetscCall(NNCheckpointLoad(b, file));
  PetscCall(NNGetCursor(b, NULL, NULL, &step));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "resumed from %s after training step %" PetscInt_FMT ": the simulation continues at step %" PetscInt_FMT "\n", file, step, 3 * step));
  PetscCall(Simulate(b, db, 3 * step, total));
  PetscCall(CompareRuns(a, da, b, db));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "online run from the replay buffer resumed from its checkpoint and an uninterrupted one: parameters, optimizer state, generators, buffer contents and draws bitwise identical\n"));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscCall(NNDataDestroy(&da));
  PetscCall(NNDataDestroy(&db));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char      mode[16] = "ring";
  PetscBool is;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Replay buffer test options", NULL);
  PetscCall(PetscOptionsString("-mode", "ring, sample or restart", NULL, mode, mode, sizeof(mode), NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrcmp(mode, "ring", &is));
  if (is) PetscCall(TestRing());
  PetscCall(PetscStrcmp(mode, "sample", &is));
  if (is) PetscCall(TestSampling(PETSC_FALSE));
  if (is) PetscCall(TestSampling(PETSC_TRUE));
  PetscCall(PetscStrcmp(mode, "restart", &is));
  if (is) PetscCall(TestRestart());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: ring

   test:
     suffix: sample
     args: -mode sample

   test:
     suffix: restart
     args: -mode restart

   test:
     suffix: restart_dp
     nsize: 2
     args: -mode restart

TEST*/
