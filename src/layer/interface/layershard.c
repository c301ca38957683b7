/*
   Sharded parameters (-<layer>_partition shard; ZeRO stage 3 / FSDP): any layer type computes as if
   replicated while each rank of the layer's communicator stores only its piece of every parameter
   tensor, cut along the first axis (NNPartitionRange()). The layer interface, not the type, does the
   work, so every type supports it:

     set-up      the type declares whole tensors; NNLayerShardSetUp() declares them again as pieces
                 (NNLayerAddTensorSplit()), so the network's arrays, checkpoints, optimizer and TAO
                 see pieces as for any partitioned layer (src/nn/interface/nnpartition.c);
     initialize  into a whole temporary copy, drawing what a replicated layer draws; keep the piece;
     forward     all-gather the whole tensors into a temporary copy, run, free it;
     backward    all-gather again, run with the parameter gradient going to a zeroed whole copy,
                 add this rank's piece of it to the network's gradient, free both.

   In single precision (NNLayerShardBeginSingle()) the pass gathers the double pieces as above, since some float
   passes read the double weights (Winograd's transforms), and rounds the whole copy to float once; the float gradient
   goes to a zeroed whole float copy, whose piece is added to the float gradient the network hands on.

   The activations are replicated on the layer's ranks (every rank runs the same pass), so the whole
   gradient is the same on every rank and keeping the piece is the reduce-scatter of data parallelism
   without the sum. Buffers (running statistics) stay whole on every rank.
*/
#include <petnn/private/nnimpl.h>

/* Declares the layer's parameter tensors again as this rank's pieces (after the type's setup). */
PetscErrorCode NNLayerShardSetUp(NNLayer l)
{
  NNTensor    whole[NN_MAX_TENSORS];
  PetscInt    n = l->ntensors;
  MPI_Comm    comm = NNLayerGetPartitionComm(l);
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCheck(l->nchildren == 0, comm, PETSC_ERR_SUP, "Layer %s (%s) has nested layers; -%spartition shard takes layers without them", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscArraycpy(whole, l->tensors, n));
  l->ntensors     = 0;
  l->nparam       = 0;
  l->nbuf         = 0;
  l->part.gnparam = 0;
  l->part.gnbuf   = 0;
  for (PetscInt t = 0; t < n; t++) {
    const NNTensor *w = &whole[t];
    PetscCheck(!w->split, comm, PETSC_ERR_SUP, "Layer %s: tensor %s is already split; -%spartition shard takes replicated layers", ((PetscObject)l)->name, w->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
    if (w->kind == NN_TENSOR_PARAM && w->ndim > 0) {
      PetscInt start, cnt;
      NNPartitionRange(w->dim[0], rank, size, &start, &cnt);
      PetscCall(NNLayerAddTensorSplit(l, w->name, w->kind, w->ndim, w->dim, 0, start, cnt));
    } else PetscCall(NNLayerAddTensor(l, w->name, w->kind, w->ndim, w->dim));
  }
  /* the type's code indexes its parameters in the whole layout: goffset must equal the type's own offsets */
  for (PetscInt t = 0; t < n; t++) PetscCheck(whole[t].kind != NN_TENSOR_PARAM || l->tensors[t].goffset == whole[t].offset, comm, PETSC_ERR_PLIB, "Layer %s: tensor %s moved in the whole layout", ((PetscObject)l)->name, whole[t].name);
  PetscCall(PetscFree2(l->part.whole, l->part.pieces));
  PetscCall(PetscMalloc2(n, &l->part.whole, n, &l->part.pieces));
  PetscCall(PetscArraycpy(l->part.whole, whole, n));
  PetscCall(PetscArraycpy(l->part.pieces, l->tensors, n));
  l->part.npieces = l->nparam;
  l->part.handled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* the type's code sees the whole tensor table and parameter count during its calls (towhole), the rest of the
   library the pieces */
void NNLayerShardSwap(NNLayer l, PetscBool towhole)
{
  for (PetscInt t = 0; t < l->ntensors; t++) l->tensors[t] = towhole ? l->part.whole[t] : l->part.pieces[t];
  l->nparam = towhole ? l->part.gnparam : l->part.npieces;
}

/* frees the temporary copies (after every pass) */
static PetscErrorCode NNLayerShardFree(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(l->part.full));
  PetscCall(PetscFree(l->part.dfull));
  PetscCall(PetscFree(l->part.sfull));
  PetscCall(PetscFree(l->part.sdfull));
  PetscFunctionReturn(0);
}

/* frees what NNLayerShardSetUp() made (the layer's reset and destroy) */
PetscErrorCode NNLayerShardReset(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerShardFree(l));
  PetscCall(PetscFree2(l->part.whole, l->part.pieces));
  PetscFunctionReturn(0);
}

/* a piece along the first axis is a contiguous block of the whole tensor: [start * post, (start + cnt) * post), post the
   product of the other axes (also on a rank whose piece is empty: every rank must count what the others send) */
PetscInt NNTensorPost(const NNTensor *t)
{
  PetscInt post = 1;

  for (PetscInt a = 1; a < t->ndim; a++) post *= t->dim[a];
  return post;
}

/* whole[] (the whole layout) from every rank's pieces, entries of the MPI datatype type (MPIU_SCALAR, or the device's
   precision: layershard_cuda.c); collective */
PetscErrorCode NNLayerShardGather(NNLayer l, const void *piece, void *whole, MPI_Datatype type)
{
  MPI_Comm     comm = NNLayerGetPartitionComm(l);
  PetscMPIInt  size, *cnt, *dsp, es;
  const char  *p = (const char *)piece;
  char        *w = (char *)whole;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Type_size(type, &es));
  PetscCall(PetscMalloc2(size, &cnt, size, &dsp));
  PetscCall(PetscLogEventBegin(NN_PartGather, l, 0, 0, 0));
  for (PetscInt k = 0; k < l->ntensors; k++) {
    const NNTensor *t = &l->part.pieces[k];
    PetscInt        post = NNTensorPost(t);
    PetscMPIInt     mine;
    if (t->kind != NN_TENSOR_PARAM) continue;
    if (!t->split) {
      PetscCall(PetscMemcpy(w + (size_t)t->goffset * es, p + (size_t)t->offset * es, (size_t)t->size * es));
      continue;
    }
    for (PetscMPIInt r = 0; r < size; r++) {
      PetscInt s, c;
      NNPartitionRange(t->gdim, r, size, &s, &c);
      PetscCall(PetscMPIIntCast(c * post, &cnt[r]));
      PetscCall(PetscMPIIntCast(s * post, &dsp[r]));
    }
    PetscCall(PetscMPIIntCast(t->size, &mine));
    PetscCallMPI(MPI_Allgatherv(p + (size_t)t->offset * es, mine, type, w + (size_t)t->goffset * es, cnt, dsp, type, comm));
  }
  PetscCall(PetscLogEventEnd(NN_PartGather, l, 0, 0, 0));
  PetscCall(PetscFree2(cnt, dsp));
  PetscFunctionReturn(0);
}

/* piece[] = (add ? piece + : ) this rank's part of whole[] */
static void NNLayerShardTake(NNLayer l, const PetscScalar *whole, PetscScalar *piece, PetscBool add)
{
  for (PetscInt k = 0; k < l->ntensors; k++) {
    const NNTensor    *t   = &l->part.pieces[k];
    const PetscScalar *src = whole + t->goffset + (t->split ? t->start * NNTensorPost(t) : 0);
    if (t->kind != NN_TENSOR_PARAM) continue;
    for (PetscInt i = 0; i < t->size; i++) piece[t->offset + i] = add ? piece[t->offset + i] + src[i] : src[i];
  }
}

/* Before a pass: the whole parameters (and for backward a zeroed whole gradient) in temporary copies
   the layer's pointers are moved to. Collective on the layer's communicator. */
PetscErrorCode NNLayerShardBegin(NNLayer l, PetscBool backward)
{
  PetscFunctionBegin;
  PetscCall(NNParallelRegisterEvents());
  PetscCall(PetscMalloc1(PetscMax(l->part.gnparam, 1), &l->part.full));
  PetscCall(NNLayerShardGather(l, l->theta, l->part.full, MPIU_SCALAR));
  l->part.theta0 = l->theta;
  l->theta       = l->part.full;
  if (backward) {
    PetscCall(PetscCalloc1(PetscMax(l->part.gnparam, 1), &l->part.dfull));
    l->part.dtheta0 = l->dtheta;
    l->dtheta       = l->part.dfull;
  }
  NNLayerShardSwap(l, PETSC_TRUE);
  PetscFunctionReturn(0);
}

/* After a pass: (backward) add this rank's piece of the whole gradient, then free the copies and point the
   layer at the network's arrays again. */
PetscErrorCode NNLayerShardEnd(NNLayer l, PetscBool backward)
{
  PetscFunctionBegin;
  NNLayerShardSwap(l, PETSC_FALSE);
  l->theta = l->part.theta0;
  if (backward) {
    l->dtheta = l->part.dtheta0;
    NNLayerShardTake(l, l->part.dfull, l->dtheta, PETSC_TRUE);
  }
  PetscCall(NNLayerShardFree(l));
  PetscFunctionReturn(0);
}

/* Before a float pass (NNLayerForwardSingle(), NNLayerBackwardSingle()): the whole double parameters as in
   NNLayerShardBegin(), their float copy, and for backward a zeroed whole float gradient. Collective. */
PetscErrorCode NNLayerShardBeginSingle(NNLayer l, PetscBool backward)
{
  PetscFunctionBegin;
  PetscCall(NNLayerShardBegin(l, PETSC_FALSE));
  PetscCall(PetscMalloc1(PetscMax(l->part.gnparam, 1), &l->part.sfull));
  for (PetscInt i = 0; i < l->part.gnparam; i++) l->part.sfull[i] = (float)l->theta[i];
  l->part.stheta0 = l->stheta;
  l->stheta       = l->part.sfull;
  if (backward) {
    PetscCall(PetscCalloc1(PetscMax(l->part.gnparam, 1), &l->part.sdfull));
    l->part.sdtheta0 = l->sdtheta;
    l->sdtheta       = l->part.sdfull;
  }
  PetscFunctionReturn(0);
}

/* After a float pass: (backward) add this rank's piece of the whole float gradient, then as NNLayerShardEnd() */
PetscErrorCode NNLayerShardEndSingle(NNLayer l, PetscBool backward)
{
  PetscFunctionBegin;
  l->stheta = l->part.stheta0;
  if (backward) {
    l->sdtheta = l->part.sdtheta0;
    for (PetscInt k = 0; k < l->ntensors; k++) {
      const NNTensor *t   = &l->part.pieces[k];
      const float    *src = l->part.sdfull + t->goffset + (t->split ? t->start * NNTensorPost(t) : 0);
      if (t->kind != NN_TENSOR_PARAM) continue;
      for (PetscInt i = 0; i < t->size; i++) l->sdtheta[t->offset + i] += src[i];
    }
  }
  PetscCall(NNLayerShardEnd(l, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* The type's initialization into a whole copy (every rank draws what a replicated layer draws), then the piece. */
PetscErrorCode NNLayerShardInitialize(NNLayer l)
{
  PetscScalar *piece = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(PetscMax(l->part.gnparam, 1), &l->part.full));
  l->theta = l->part.full;
  NNLayerShardSwap(l, PETSC_TRUE);
  PetscTryTypeMethod(l, initialize);
  NNLayerShardSwap(l, PETSC_FALSE);
  l->theta = piece;
  NNLayerShardTake(l, l->part.full, piece, PETSC_FALSE);
  PetscCall(NNLayerShardFree(l));
  PetscFunctionReturn(0);
}
