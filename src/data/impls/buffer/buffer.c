/*
   NNDATABUFFER: the replay buffer of online training (include/petnn/private/bufferimpl.h). The type's
   set-up, views and options; pushes in bufferpush.c, draws in buffersample.c, checkpoints in
   buffercheckpoint.c.
*/
#include <petnn/private/bufferimpl.h>

static PetscErrorCode NNDataSetFromOptions_Buffer(NNData d, NNOptionItems PetscOptionsObject)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;
  PetscInt       K = b->capacity, h = b->horizon;
  PetscInt       seed = (PetscInt)b->seed;
  PetscBool      flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Replay buffer (online training)");
  PetscCall(PetscOptionsInt("-data_buffer_capacity", "Samples the ring holds; the oldest is overwritten when full", "NNDataBufferSetCapacity", K, &K, &flg));
  if (flg) PetscCall(NNDataBufferSetCapacity(d, K));
  PetscCall(PetscOptionsBool("-data_buffer_replacement", "Draw minibatches with replacement", "NNDataBufferSetReplacement", b->replacement, &b->replacement, NULL));
  PetscCall(PetscOptionsInt("-data_buffer_seed", "Seed of the draws (each data group mixes in its index)", "NNDataBufferSetSeed", seed, &seed, &flg));
  if (flg) PetscCall(NNDataBufferSetSeed(d, (PetscInt64)seed));
  PetscCall(PetscOptionsInt("-data_buffer_horizon", "NNDataBufferTSMonitor() pushes (u_n, u_{n+h}) pairs: h in time steps", "NNDataBufferSetHorizon", h, &h, &flg));
  if (flg) PetscCall(NNDataBufferSetHorizon(d, h));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

/* nothing to read: the samples pushed so far are the data set */
static PetscErrorCode NNDataSetUp_Buffer(NNData d)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;

  PetscFunctionBegin;
  PetscCheck(b->count > 0, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Replay buffer%s%s is empty: push samples with NNDataBufferPush() (or NNDataBufferTSMonitor()) before training from it", NNBufferSep(d), NNBufferName(d));
  d->nsamples = b->count;
  PetscFunctionReturn(0);
}

/* whole samples for NNTrain() and NNDataGetBatch(); idx are slots */
static PetscErrorCode NNDataGetBatch_Buffer(NNData d, PetscInt n, const PetscInt idx[], PetscScalar *x, PetscScalar *t)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;

  PetscFunctionBegin;
  PetscCheck(!b->xdm && !b->ydm, PETSC_COMM_SELF, PETSC_ERR_SUP, "Replay buffer%s%s holds each rank's piece of DMDA Vecs, not whole samples: train from it with NNTrainStepBuffer()", NNBufferSep(d), NNBufferName(d));
  PetscCall(NNDataCopySamples(d, b->x, b->y, n, idx, x, t));
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferGetMemory - bytes this rank's replay buffer holds for its samples (capacity x (input + target) entries)

   Not Collective

   Level: intermediate

.seealso: `NNDataBufferSetCapacity()`, `NNDataView()`
@*/
PetscErrorCode NNDataBufferGetMemory(NNData d, PetscLogDouble *bytes)
{
  NNData_Buffer *b = NULL;
  PetscBool      isbuf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)d, NNDATABUFFER, &isbuf));
  PetscCheck(isbuf, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_WRONG, "NNDataBufferGetMemory() needs a data set of type %s, not %s", NNDATABUFFER, ((PetscObject)d)->type_name);
  b      = (NNData_Buffer *)d->data;
  *bytes = (PetscLogDouble)b->capacity * (b->xsize + b->ysize) * sizeof(PetscScalar);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataView_Buffer(NNData d, PetscViewer viewer)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;
  PetscLogDouble mem, mmax;

  PetscFunctionBegin;
  PetscCall(NNDataBufferGetMemory(d, &mem));
  PetscCallMPI(MPI_Allreduce(&mem, &mmax, 1, MPI_DOUBLE, MPI_MAX, PetscObjectComm((PetscObject)d)));
  PetscCall(PetscViewerASCIIPrintf(viewer, "replay buffer: %" PetscInt_FMT " of %" PetscInt_FMT " slots in use, %" PetscInt64_FMT " samples pushed, draws %s replacement\n", b->count, b->capacity, b->pushed, b->replacement ? "with" : "without"));
  if (b->xsize) PetscCall(PetscViewerASCIIPrintf(viewer, "a sample: %s of %" PetscInt_FMT " input and %" PetscInt_FMT " target values (%" PetscInt_FMT " and %" PetscInt_FMT " on this rank)\n", b->xdm ? "DMDA pieces" : "whole samples", b->xglobal, b->yglobal, b->xsize, b->ysize));
  PetscCall(PetscViewerASCIIPrintf(viewer, "memory: %.4g MiB per rank at most (capacity x (input + target) entries)\n", mmax / 1048576.0));
  if (b->horizon > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "TS monitor horizon: %" PetscInt_FMT " steps\n", b->horizon));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataDestroy_Buffer(NNData d)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(b->x));
  PetscCall(PetscFree(b->y));
  if (b->hist) PetscCall(VecDestroyVecs(b->horizon, &b->hist));
  PetscCall(PetscFree(d->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataBufferCheckType(NNData d, const char fn[], NNData_Buffer **b)
{
  PetscBool isbuf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)d, NNDATABUFFER, &isbuf));
  PetscCheck(isbuf, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_WRONG, "%s() needs a data set of type %s (NNDataSetType()), not %s", fn, NNDATABUFFER, ((PetscObject)d)->type_name ? ((PetscObject)d)->type_name : "(unset)");
  *b = (NNData_Buffer *)d->data;
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferSetCapacity - how many samples the replay buffer holds

   Logically Collective

   Input Parameters:
+  d - the buffer
-  K - its capacity (positive); when it is full, each push overwrites the oldest sample

   Options Database Key:
.  -data_buffer_capacity <K> - capacity (default 1024)

   Notes:
   Each rank keeps K times its part of an input and a target (NNDataBufferGetMemory(), NNDataView()). The
   capacity can change only while the buffer is empty.

   Level: beginner

.seealso: `NNDataBufferPush()`, `NNDATABUFFER`
@*/
PetscErrorCode NNDataBufferSetCapacity(NNData d, PetscInt K)
{
  NNData_Buffer *b = NULL;

  PetscFunctionBegin;
  PetscCall(NNDataBufferCheckType(d, "NNDataBufferSetCapacity", &b));
  PetscCheck(K > 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_OUTOFRANGE, "Replay buffer capacity %" PetscInt_FMT " (-%sdata_buffer_capacity): it must hold at least one sample", K, ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "");
  if (K == b->capacity) PetscFunctionReturn(0);
  PetscCheck(b->count == 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ORDER, "Replay buffer capacity: it holds %" PetscInt_FMT " samples already; set the capacity before the first push", b->count);
  PetscCall(PetscFree(b->x));
  PetscCall(PetscFree(b->y));
  b->capacity = K;
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferGetCapacity - the replay buffer's capacity

   Not Collective

   Level: beginner

.seealso: `NNDataBufferSetCapacity()`
@*/
PetscErrorCode NNDataBufferGetCapacity(NNData d, PetscInt *K)
{
  NNData_Buffer *b = NULL;

  PetscFunctionBegin;
  PetscCall(NNDataBufferCheckType(d, "NNDataBufferGetCapacity", &b));
  *K = b->capacity;
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferSetReplacement - whether minibatches are drawn with replacement

   Logically Collective

   Input Parameters:
+  d - the buffer
-  flg - PETSC_TRUE: each of the batch size draws is uniform over the samples held; PETSC_FALSE (default): the
         minibatch is a uniform random subset of min(batch size, samples held) distinct samples

   Options Database Key:
.  -data_buffer_replacement <bool> - draw with replacement

   Level: intermediate

.seealso: `NNDataBufferSample()`, `NNTrainStepBuffer()`
@*/
PetscErrorCode NNDataBufferSetReplacement(NNData d, PetscBool flg)
{
  NNData_Buffer *b = NULL;

  PetscFunctionBegin;
  PetscCall(NNDataBufferCheckType(d, "NNDataBufferSetReplacement", &b));
  b->replacement = flg;
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferSetSeed - seeds the generator of the buffer's draws

   Logically Collective

   Input Parameters:
+  d - the buffer
-  seed - the seed (default 0); data group g draws from a stream of its own (seed mixed with g)

   Options Database Key:
.  -data_buffer_seed <seed> - the seed

   Notes:
   Takes effect before the first draw; later the generator's state is part of the checkpoint.

   Level: intermediate

.seealso: `NNDataBufferSample()`
@*/
PetscErrorCode NNDataBufferSetSeed(NNData d, PetscInt64 seed)
{
  NNData_Buffer *b = NULL;

  PetscFunctionBegin;
  PetscCall(NNDataBufferCheckType(d, "NNDataBufferSetSeed", &b));
  b->seed   = seed;
  b->seeded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferGetCount - samples the replay buffer holds and samples ever pushed into it

   Not Collective

   Output Parameters:
+  count - samples held (at most the capacity; may be NULL)
-  pushed - samples pushed since it was created (restored by checkpoints; may be NULL)

   Level: beginner

.seealso: `NNDataBufferPush()`
@*/
PetscErrorCode NNDataBufferGetCount(NNData d, PetscInt *count, PetscInt64 *pushed)
{
  NNData_Buffer *b = NULL;

  PetscFunctionBegin;
  PetscCall(NNDataBufferCheckType(d, "NNDataBufferGetCount", &b));
  if (count) *count = b->count;
  if (pushed) *pushed = b->pushed;
  PetscFunctionReturn(0);
}

/*MC
   NNDATABUFFER - "buffer": a replay buffer for online training, filled by the running simulation

   Options Database Keys:
+  -data_buffer_capacity <K> - samples held (default 1024); when full, a push overwrites the oldest
.  -data_buffer_replacement <bool> - minibatches drawn with replacement (default false)
.  -data_buffer_seed <s> - seed of the draws (default 0)
-  -data_buffer_horizon <h> - NNDataBufferTSMonitor() pushes (u_n, u_{n+h}) (default 1)

   Notes:
   The simulation pushes (input, target) pairs, one sample per NNDataBufferPush(): sequential Vecs (each
   rank its whole sample) or Vecs of a DMDA (each rank keeps its own piece: nothing is gathered).
   NNTrainStepBuffer() draws a minibatch uniformly and takes one optimizer step on it; each data group keeps
   and draws from its own buffer. A buffer of whole samples is also an ordinary data set (NNTrain(),
   NNDataGetBatch(), sample indices are slots). Attached to a network (NNSetTrainBuffer()), the buffer's
   contents and generator are part of its checkpoints, so a restarted simulation continues bitwise.

   Level: beginner

.seealso: `NNDataBufferPush()`, `NNTrainStepBuffer()`, `NNTrainStep()`, `NNDataBufferTSMonitor()`
M*/
PETSC_INTERN PetscErrorCode NNDataCreate_Buffer(NNData d)
{
  NNData_Buffer *b = NULL;

  PetscFunctionBegin;
  PetscCall(PetscNew(&b));
  b->capacity            = 1024;
  b->horizon             = 1;
  d->data                = b;
  d->distribute          = PETSC_FALSE;
  d->ops->setup          = NNDataSetUp_Buffer;
  d->ops->getbatch       = NNDataGetBatch_Buffer;
  d->ops->setfromoptions = NNDataSetFromOptions_Buffer;
  d->ops->view           = NNDataView_Buffer;
  d->ops->destroy        = NNDataDestroy_Buffer;
  PetscFunctionReturn(0);
}
