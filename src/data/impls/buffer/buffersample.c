/*
   NNDATABUFFER: uniform draws of minibatches from the samples held (with or without replacement), and the
   drawn samples copied into the network's batch layout (whole samples one after the other, or each rank's
   pieces interleaved per grid point as [point][slot][channel], the layout of the network's DMDA activations).
*/
#include <petnn/private/bufferimpl.h>

/* a uniform draw from [0, bound) without modulo bias */
static PetscInt NNBufferBounded(NNRandom *r, PetscInt bound)
{
  uint64_t ub = (uint64_t)bound, threshold = -ub % ub, x;

  do x = NNRandomNext(r);
  while (x < threshold);
  return (PetscInt)(x % ub);
}

PetscErrorCode NNDataBufferDraw_Private(NNData d, PetscInt g, PetscInt n, PetscInt idx[])
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;
  PetscInt      *perm;

  PetscFunctionBegin;
  PetscCheck(b->count > 0, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Replay buffer%s%s is empty: push samples with NNDataBufferPush() (or NNDataBufferTSMonitor()) before training from it", NNBufferSep(d), NNBufferName(d));
  PetscCheck(n >= 0 && (b->replacement || n <= b->count), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Replay buffer: %" PetscInt_FMT " draws without replacement from %" PetscInt_FMT " samples", n, b->count);
  if (!b->seeded) { /* each data group its own stream */
    NNRandomSeed(&b->rng, (uint64_t)b->seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(g + 1));
    b->seeded = PETSC_TRUE;
  }
  if (b->replacement) {
    for (PetscInt i = 0; i < n; i++) idx[i] = NNBufferBounded(&b->rng, b->count);
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1(b->count, &perm)); /* the first n steps of a Fisher-Yates shuffle */
  for (PetscInt i = 0; i < b->count; i++) perm[i] = i;
  for (PetscInt i = 0; i < n; i++) {
    PetscInt j = i + NNBufferBounded(&b->rng, b->count - i), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
    idx[i]  = perm[i];
  }
  PetscCall(PetscFree(perm));
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferSample - draws n sample slots uniformly from the replay buffer, as NNTrainStepBuffer() draws a minibatch

   Not Collective

   Input Parameters:
+  d - the buffer
-  n - draws (without replacement at most the number of samples held)

   Output Parameter:
.  idx - n slot indices in [0, samples held); NNDataGetBatch() copies those samples (whole-sample buffers)

   Notes:
   With replacement each draw is uniform and independent; without (the default) the n slots are a uniform random
   subset in uniform random order. The draws advance the buffer's generator, which checkpoints store; its stream
   is that of data group 0 when this is the first draw.

   Level: intermediate

.seealso: `NNDataBufferSetReplacement()`, `NNDataBufferSetSeed()`, `NNTrainStepBuffer()`
@*/
PetscErrorCode NNDataBufferSample(NNData d, PetscInt n, PetscInt idx[])
{
  PetscBool isbuf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)d, NNDATABUFFER, &isbuf));
  PetscCheck(isbuf, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_WRONG, "NNDataBufferSample() needs a data set of type %s", NNDATABUFFER);
  if (n) PetscAssertPointer(idx, 3);
  PetscCall(NNDataBufferDraw_Private(d, 0, n, idx));
  PetscFunctionReturn(0);
}

/* rows idx[0..n) of [count][size] into a batch of nb slots: whole samples one after the other, or (pieces) c
   entries per point per slot, [point][slot][c]; the slots from n on are zero */
static PetscErrorCode NNBufferFillOne(const PetscScalar *src, PetscInt size, PetscBool pieces, PetscInt n, const PetscInt idx[], PetscInt nb, PetscInt c, PetscScalar *dst)
{
  PetscFunctionBegin;
  if (!pieces) {
    for (PetscInt s = 0; s < n; s++) PetscCall(PetscArraycpy(dst + (size_t)s * size, src + (size_t)idx[s] * size, size));
    PetscFunctionReturn(0);
  }
  PetscCheck(size % c == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Replay buffer: a piece of %" PetscInt_FMT " entries is not a whole number of points of %" PetscInt_FMT " channels", size, c);
  for (PetscInt p = 0; p < size / c; p++) {
    PetscScalar *o = dst + (size_t)p * nb * c;
    for (PetscInt s = 0; s < n; s++) PetscCall(PetscArraycpy(o + s * c, src + (size_t)idx[s] * size + p * c, c));
    PetscCall(PetscArrayzero(o + n * c, (nb - n) * c));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNDataBufferFill_Private(NNData d, PetscInt n, const PetscInt idx[], PetscInt nb, PetscInt cx, PetscInt cy, PetscScalar *x, PetscScalar *y)
{
  NNData_Buffer *b = (NNData_Buffer *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_DataLoad, d, 0, 0, 0));
  PetscCall(NNBufferFillOne(b->x, b->xsize, b->xdm, n, idx, nb, cx, x));
  PetscCall(NNBufferFillOne(b->y, b->ysize, b->ydm, n, idx, nb, cy, y));
  PetscCall(PetscLogEventEnd(NN_DataLoad, d, 0, 0, 0));
  PetscFunctionReturn(0);
}
