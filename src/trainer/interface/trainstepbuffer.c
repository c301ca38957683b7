/*
   Online training from a replay buffer: the network's buffer (NNSetTrainBuffer(), part of its checkpoints) and
   NNTrainStepBuffer(), one NNTrainStep() on a minibatch drawn from it, assembled directly in the network's batch
   layout (each rank from its own pieces of the samples: nothing is communicated).
*/
#include <petnn/private/trainerimpl.h>
#include <petnn/private/bufferimpl.h>

/*@
   NNSetTrainBuffer - gives the network a replay buffer: NNTrainStepBuffer() draws its minibatches from it, and
   NNCheckpointSave() and NNCheckpointLoad() store and restore its contents with the network

   Logically Collective

   Input Parameters:
+  net - the network
-  data - a data set of type NNDATABUFFER (the network keeps a reference), or NULL to remove it

   Notes:
   Set it before NNCheckpointLoad() when restarting, so the buffer is filled from the checkpoint (it must have the
   capacity it had, and the run as many ranks).

   Level: beginner

.seealso: `NNTrainStepBuffer()`, `NNDATABUFFER`, `NNDataBufferPush()`
@*/
PetscErrorCode NNSetTrainBuffer(NN net, NNData data)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (data) {
    PetscBool isbuf;
    PetscValidHeaderSpecific(data, NNDATA_CLASSID, 2);
    PetscCall(PetscObjectTypeCompare((PetscObject)data, NNDATABUFFER, &isbuf));
    PetscCheck(isbuf, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "NNSetTrainBuffer() needs a data set of type %s, not %s", NNDATABUFFER, ((PetscObject)data)->type_name ? ((PetscObject)data)->type_name : "(unset)");
    PetscCall(PetscObjectReference((PetscObject)data));
  }
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNDataDestroy(&tr->online.buffer));
  PetscCall(VecDestroy(&tr->online.xb));
  PetscCall(VecDestroy(&tr->online.tb));
  tr->online.buffer = data;
  PetscFunctionReturn(0);
}

/*@
   NNGetTrainBuffer - the network's replay buffer (NULL if none)

   Not Collective

   Level: beginner

.seealso: `NNSetTrainBuffer()`
@*/
PetscErrorCode NNGetTrainBuffer(NN net, NNData *data)
{
  NNTrainer tr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNGetTrainer(net, &tr));
  *data = tr->online.buffer;
  PetscFunctionReturn(0);
}

/* the minibatch Vecs in the network's batch layout for the buffer's samples, and the channels per point of
   pieces (cx, cy), with the buffer's layout checked against the network */
static PetscErrorCode NNTrainBufferVecs(NN net, NNTrainer tr, const NNData_Buffer *b, PetscInt *cx, PetscInt *cy)
{
  NNShape     out;
  PetscInt    nb = net->nbatch, in = NNShapeSize(&net->inshape), k, l0, lL;
  DM          dmL;
  MPI_Comm    comm   = PETSC_COMM_SELF;
  const char *prefix = ((PetscObject)tr->online.buffer)->prefix ? ((PetscObject)tr->online.buffer)->prefix : "";

  PetscFunctionBegin;
  PetscCall(NNGetOutputShape(net, &out));
  k = net->lossops.classification ? 1 : NNShapeSize(&out);
  PetscCall(VecGetLocalSize(net->act[0], &l0));
  PetscCall(VecGetLocalSize(net->act[net->nlayers], &lL));
  PetscCall(VecGetDM(net->act[net->nlayers], &dmL));
  *cx = net->inshape.dim[0];
  *cy = out.dim[0];
  if (b->xdm) {
    PetscCheck(net->spatial.indm && b->xsize * nb == l0, comm, PETSC_ERR_ARG_INCOMP, "Replay buffer%s%s holds pieces of DMDA inputs of %" PetscInt_FMT " entries on this rank; the network takes %s", NNBufferSep(tr->online.buffer), prefix, b->xsize, net->spatial.indm ? "another decomposition (NNSetInputDM())" : "sequential input (no NNSetInputDM())");
    if (!tr->online.xb) PetscCall(VecDuplicate(net->act[0], &tr->online.xb));
  } else {
    PetscCheck(b->xsize == in, comm, PETSC_ERR_ARG_SIZ, "Replay buffer%s%s holds inputs of %" PetscInt_FMT " values; the network takes samples of %" PetscInt_FMT, NNBufferSep(tr->online.buffer), prefix, b->xsize, in);
    if (!tr->online.xb) PetscCall(VecCreateSeq(PETSC_COMM_SELF, nb * in, &tr->online.xb));
  }
  if (b->ydm) {
    PetscCheck(dmL && b->ysize * nb == lL, comm, PETSC_ERR_ARG_INCOMP, "Replay buffer%s%s holds pieces of DMDA targets of %" PetscInt_FMT " entries on this rank; the network's output %s", NNBufferSep(tr->online.buffer), prefix, b->ysize, dmL ? "has another decomposition or channel count" : "is not spatial: push sequential targets");
    if (!tr->online.tb) PetscCall(VecDuplicate(net->act[net->nlayers], &tr->online.tb));
  } else {
    PetscCheck(b->ysize == k, comm, PETSC_ERR_ARG_SIZ, "Replay buffer%s%s holds targets of %" PetscInt_FMT " values; loss %s needs %" PetscInt_FMT " per sample", NNBufferSep(tr->online.buffer), prefix, b->ysize, net->loss, k);
    if (!tr->online.tb) PetscCall(VecCreateSeq(PETSC_COMM_SELF, nb * k, &tr->online.tb));
  }
  PetscFunctionReturn(0);
}

/*@
   NNTrainStepBuffer - takes one optimizer step (NNTrainStep()) on a minibatch drawn from the network's replay buffer

   Collective

   Input Parameter:
.  net - the network, set up, with a replay buffer (NNSetTrainBuffer())

   Output Parameter:
.  loss - the minibatch's mean loss before the step (over all data groups; may be NULL)

   Notes:
   The minibatch has the batch size's samples drawn with replacement, or min(batch size, samples held) distinct
   ones without (NNDataBufferSetReplacement()), uniformly; each data group draws from its own buffer with its own
   generator. The samples are placed in the network's batch layout by each rank from its own pieces.
   Training from an empty buffer (on any data group) is an error on every rank.

   Level: beginner

.seealso: `NNSetTrainBuffer()`, `NNTrainStep()`, `NNDataBufferPush()`, `NNDataBufferTSMonitor()`
@*/
PetscErrorCode NNTrainStepBuffer(NN net, PetscReal *loss)
{
  NNTrainer      tr;
  NNData_Buffer *b;
  NNParallel     p;
  PetscInt       n, minc, cx = 1, cy = 1, nb;
  PetscScalar   *xa, *ta;
  MPI_Comm       comm = PetscObjectComm((PetscObject)net);

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(net->setupcalled, comm, PETSC_ERR_ORDER, "NNTrainStepBuffer() before NNSetUp(): set the network up first (its input shape from NNSetInputShape() or NNSetInputDM())");
  PetscCall(NNGetTrainer(net, &tr));
  PetscCheck(tr->online.buffer, comm, PETSC_ERR_ORDER, "NNTrainStepBuffer(): the network has no replay buffer; give it one with NNSetTrainBuffer()");
  b    = (NNData_Buffer *)tr->online.buffer->data;
  minc = b->count;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &minc, 1, MPIU_INT, MPI_MIN, comm));
  PetscCheck(minc > 0, comm, PETSC_ERR_ORDER, "NNTrainStepBuffer(): replay buffer%s%s is empty%s: push samples with NNDataBufferPush() (or NNDataBufferTSMonitor()) before training from it", NNBufferSep(tr->online.buffer), NNBufferName(tr->online.buffer), b->count ? " on another data group" : "");
  PetscCall(NNParallelGet(net, &p));
  nb = net->nbatch;
  n  = b->replacement ? nb : PetscMin(nb, b->count);
  PetscCall(NNTrainBufferVecs(net, tr, b, &cx, &cy));
  if (!tr->online.idx) PetscCall(PetscMalloc1(nb, &tr->online.idx));
  PetscCall(NNDataBufferDraw_Private(tr->online.buffer, p->group, n, tr->online.idx));
  PetscCall(VecGetArrayWrite(tr->online.xb, &xa));
  PetscCall(VecGetArrayWrite(tr->online.tb, &ta));
  PetscCall(NNDataBufferFill_Private(tr->online.buffer, n, tr->online.idx, nb, cx, cy, xa, ta));
  PetscCall(VecRestoreArrayWrite(tr->online.tb, &ta));
  PetscCall(VecRestoreArrayWrite(tr->online.xb, &xa));
  PetscCall(NNTrainStepBatch_Private(net, n, tr->online.xb, tr->online.tb, PETSC_FALSE, loss));
  PetscFunctionReturn(0);
}
