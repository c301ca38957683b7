static char help[] = "Online training's bad input, each with a clear error: pushes of the wrong layout, a replay buffer of\n"
                     "capacity 0, training from an empty buffer, NNTrainStep() before NNSetUp(), batches of the wrong size,\n"
                     "NaN pushes, a network without a buffer, a buffer that does not fit the network.\n";

#include <petnn.h>
#include <petscdmda.h>
#include <math.h>

typedef PetscErrorCode (*Case)(void);

/* what a case creates, destroyed after it whether it failed or not (the harness checks for leaks) */
static struct {
  NN     net;
  NNData d;
  DM     da;
  Vec    v[4];
  int    nv;
} T;

static Vec *NewVec(void)
{
  return &T.v[T.nv++];
}

static PetscErrorCode Cleanup(void)
{
  PetscFunctionBegin;
  PetscCall(NNDestroy(&T.net));
  PetscCall(NNDataDestroy(&T.d));
  for (int i = 0; i < T.nv; i++) PetscCall(VecDestroy(&T.v[i]));
  PetscCall(DMDestroy(&T.da));
  T.nv = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectError(const char name[], Case fn, const char expect[])
{
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = (*fn)();
  PetscCall(PetscPopErrorHandler());
  PetscCall(Cleanup());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

static PetscErrorCode CreateBuffer(NNData *d)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, d));
  PetscCall(NNDataSetType(*d, NNDATABUFFER));
  PetscCall(NNDataBufferSetCapacity(*d, 4));
  PetscFunctionReturn(0);
}

/* dense 3 -> 2, mse; set up unless told not to */
static PetscErrorCode CreateNet(PetscBool setup, NN *net)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 2));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(*net, 4));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){3}));
  if (setup) PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode CapacityZero(void)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &T.d));
  PetscCall(NNDataSetType(T.d, NNDATABUFFER));
  PetscCall(NNDataBufferSetCapacity(T.d, 0));
  PetscFunctionReturn(0);
}

/* a sequential push, then a DMDA Vec */
static PetscErrorCode PushWrongKind(void)
{
  NNData d;
  DM     da;
  Vec    x, y, u;

  PetscFunctionBegin;
  PetscCall(CreateBuffer(&d));
  T.d = d;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 64, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
  *NewVec() = y;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, 1.0));
  PetscCall(NNDataBufferPush(d, x, y));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_PERIODIC, DM_BOUNDARY_PERIODIC, DMDA_STENCIL_STAR, 8, 8, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, &da));
  T.da = da;
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateGlobalVector(da, &u));
  *NewVec() = u;
  PetscCall(NNDataBufferPush(d, u, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode PushWrongSize(void)
{
  NNData d;
  Vec    x, y, x2;

  PetscFunctionBegin;
  PetscCall(CreateBuffer(&d));
  T.d = d;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 4, &x2));
  *NewVec() = x2;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
  *NewVec() = y;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(x2, 1.0));
  PetscCall(VecSet(y, 1.0));
  PetscCall(NNDataBufferPush(d, x, y));
  PetscCall(NNDataBufferPush(d, x2, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode PushNaN(void)
{
  NNData d;
  Vec    x, y;

  PetscFunctionBegin;
  PetscCall(CreateBuffer(&d));
  T.d = d;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
  *NewVec() = y;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, 1.0));
  PetscCall(VecSetValue(x, 1, (PetscScalar)INFINITY, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(NNDataBufferPush(d, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainEmpty(void)
{
  NN     net;
  NNData d;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_TRUE, &net));
  T.net = net;
  PetscCall(CreateBuffer(&d));
  T.d = d;
  PetscCall(NNSetTrainBuffer(net, d));
  PetscCall(NNTrainStepBuffer(net, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainNoBuffer(void)
{
  NN net;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_TRUE, &net));
  T.net = net;
  PetscCall(NNTrainStepBuffer(net, NULL));
  PetscFunctionReturn(0);
}

/* a buffer of samples of 5 values for a network that takes 3 */
static PetscErrorCode BufferMismatch(void)
{
  NN     net;
  NNData d;
  Vec    x, y;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_TRUE, &net));
  T.net = net;
  PetscCall(CreateBuffer(&d));
  T.d = d;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 5, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
  *NewVec() = y;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, 1.0));
  PetscCall(NNDataBufferPush(d, x, y));
  PetscCall(NNSetTrainBuffer(net, d));
  PetscCall(NNTrainStepBuffer(net, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode StepBeforeSetUp(void)
{
  NN  net;
  Vec x, y;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_FALSE, &net));
  T.net = net;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
  *NewVec() = y;
  PetscCall(NNTrainStep(net, x, y, NULL));
  PetscFunctionReturn(0);
}

/* 2 samples of input, 3 targets' worth */
static PetscErrorCode StepWrongTargets(void)
{
  NN  net;
  Vec x, y;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_TRUE, &net));
  T.net = net;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 6, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 6, &y));
  *NewVec() = y;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, 1.0));
  PetscCall(NNTrainStep(net, x, y, NULL));
  PetscFunctionReturn(0);
}

/* more samples than the batch size */
static PetscErrorCode StepTooLarge(void)
{
  NN  net;
  Vec x, y;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_TRUE, &net));
  T.net = net;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 15, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 10, &y));
  *NewVec() = y;
  PetscCall(NNTrainStep(net, x, y, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode StepNaN(void)
{
  NN  net;
  Vec x, y;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_TRUE, &net));
  T.net = net;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &x));
  *NewVec() = x;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
  *NewVec() = y;
  PetscCall(VecSet(x, 1.0));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(NNTrainStep(net, x, y, NULL));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(ExpectError("capacity 0", CapacityZero, "it must hold at least one sample"));
  PetscCall(ExpectError("push of a DMDA Vec into a buffer of sequential samples", PushWrongKind, "holds whole samples in sequential Vecs (the layout of its first push)"));
  PetscCall(ExpectError("push of another size", PushWrongSize, "the input has 4 entries (4 on this rank), but replay buffer holds samples of 3"));
  PetscCall(ExpectError("push of an infinite value", PushNaN, "holds a NaN or infinite value on this rank; nothing was pushed"));
  PetscCall(ExpectError("training from an empty buffer", TrainEmpty, "is empty: push samples with NNDataBufferPush()"));
  PetscCall(ExpectError("training from a buffer the network lacks", TrainNoBuffer, "the network has no replay buffer; give it one with NNSetTrainBuffer()"));
  PetscCall(ExpectError("a buffer that does not fit the network", BufferMismatch, "holds inputs of 5 values; the network takes samples of 3"));
  PetscCall(ExpectError("NNTrainStep() before NNSetUp()", StepBeforeSetUp, "NNTrainStep() before NNSetUp()"));
  PetscCall(ExpectError("NNTrainStep() with targets of the wrong size", StepWrongTargets, "the target Vec has 6 entries; 2 sample(s) with 2 target value(s) each need 4"));
  PetscCall(ExpectError("NNTrainStep() with more samples than the batch size", StepTooLarge, "holds 5 samples, more than the batch size 4"));
  PetscCall(ExpectError("NNTrainStep() on a NaN target", StepNaN, "has a NaN or infinite input or target value; no step was taken"));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:

   test:
     suffix: 2
     nsize: 2
     output_file: output/online_badinput_1.out

TEST*/
