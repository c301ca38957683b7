/*
   Model parallelism, the network side: the full layout of the parameters beside each rank's own.

   A layer partitioned over its communicator (-<layer>_partition, src/layer/interface/layerpartition.c)
   declares each rank's piece of a split tensor; the network's arrays (theta, dtheta, the optimizer's
   state, buf) hold, on every rank, the whole tensors of the other layers (equal on all ranks of the
   group) and this rank's pieces of the split ones. The full layout is the one a single rank would have;
   checkpoints gather into it (NNPartitionGather()) and load from it (NNPartitionExtract()), and
   NNVisitTensorsGlobal() walks the tensors with their full shapes at their offsets in it. Split tensors
   live only in top-level layers without children.
*/
#include <petnn/private/nnimpl.h>

static PetscBool NNLayerHasSplitTensor(NNLayer l)
{
  for (PetscInt t = 0; t < l->ntensors; t++)
    if (l->tensors[t].split) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* full offsets of a layer below a top-level one that holds no split tensor: its local ones moved by (dp, db) */
static PetscErrorCode NNPartitionShiftLayout(NNLayer l, PetscInt dp, PetscInt db)
{
  PetscFunctionBegin;
  PetscCheck(!NNLayerHasSplitTensor(l), PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s is partitioned (-%spartition %s) inside a block; only top-level layers can be partitioned", ((PetscObject)l)->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", NNLayerPartitions[l->part.type]);
  l->part.gpoff = l->poff + dp;
  l->part.gboff = l->boff + db;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNPartitionShiftLayout(l->children[c], dp, db));
  PetscFunctionReturn(0);
}

/* the span of top-level layer i in the local arrays: [poff, end) */
static void NNTopLevelSpan(NN net, PetscInt i, PetscInt np, PetscInt nb, PetscInt *pend, PetscInt *bend)
{
  *pend = i + 1 < net->nlayers ? net->layers[i + 1]->poff : np;
  *bend = i + 1 < net->nlayers ? net->layers[i + 1]->boff : nb;
}

/* Lays out the full (unpartitioned) arrays after NNSetUp()'s local layout of np parameters and nb buffer
   entries: sets every layer's part.gpoff, part.gboff and the network's part.on, part.np, part.nb. */
PetscErrorCode NNPartitionLayout(NN net, PetscInt np, PetscInt nb)
{
  PetscInt gp = 0, gb = 0;

  PetscFunctionBegin;
  net->part.on = PETSC_FALSE;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer  l = net->layers[i];
    PetscInt pend, bend;

    if (NNLayerHasSplitTensor(l)) {
      PetscCheck(l->nchildren == 0, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s has nested layers and split tensors; only layers without nested layers can be partitioned", ((PetscObject)l)->name);
      net->part.on  = PETSC_TRUE;
      l->part.gpoff = gp;
      l->part.gboff = gb;
      gp += l->part.gnparam;
      gb += l->part.gnbuf;
      continue;
    }
    NNTopLevelSpan(net, i, np, nb, &pend, &bend);
    PetscCall(NNPartitionShiftLayout(l, gp - l->poff, gb - l->boff));
    gp += pend - l->poff;
    gb += bend - l->boff;
  }
  net->part.np = gp;
  net->part.nb = gb;
  PetscFunctionReturn(0);
}

/* the arrays of one kind: local and full sizes, offsets of a layer and a tensor */
static PetscInt NNLocalOffset(NNLayer l, const NNTensor *t)
{
  return (t->kind == NN_TENSOR_PARAM ? l->poff : l->boff) + t->offset;
}
static PetscInt NNFullOffset(NNLayer l, const NNTensor *t)
{
  return (t->kind == NN_TENSOR_PARAM ? l->part.gpoff : l->part.gboff) + t->goffset;
}

/* a split tensor as [pre][gdim][post] of which this rank holds [pre][start, start + cnt)[post] */
static void NNSplitExtents(const NNTensor *t, PetscInt *pre, PetscInt *post)
{
  *pre  = 1;
  *post = 1;
  for (PetscInt d = 0; d < t->axis; d++) *pre *= t->dim[d];
  for (PetscInt d = t->axis + 1; d < t->ndim; d++) *post *= t->dim[d];
}

/* gathers the pieces of a split tensor into its full copy on rank 0 of comm */
static PetscErrorCode NNGatherSplitTensor(MPI_Comm comm, const NNTensor *t, const PetscScalar *local, PetscScalar *full)
{
  PetscMPIInt  size, rank, n, *cnt = NULL, *dsp = NULL;
  PetscInt     pre, post, mine[2] = {t->start, t->dim[t->axis]}, *ranges = NULL;
  PetscScalar *tmp = NULL;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  NNSplitExtents(t, &pre, &post);
  if (!rank) PetscCall(PetscMalloc4(2 * size, &ranges, size, &cnt, size, &dsp, pre * t->gdim * post, &tmp));
  PetscCallMPI(MPI_Gather(mine, 2, MPIU_INT, ranges, 2, MPIU_INT, 0, comm));
  if (!rank) {
    PetscInt off = 0;
    for (PetscMPIInt r = 0; r < size; r++) {
      PetscCall(PetscMPIIntCast(pre * ranges[2 * r + 1] * post, &cnt[r]));
      PetscCall(PetscMPIIntCast(off, &dsp[r]));
      off += pre * ranges[2 * r + 1] * post;
    }
    PetscCheck(off == pre * t->gdim * post, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Tensor %s: the pieces hold %" PetscInt_FMT " entries, not %" PetscInt_FMT, t->name, off, pre * t->gdim * post);
  }
  PetscCall(PetscMPIIntCast(t->size, &n));
  PetscCallMPI(MPI_Gatherv(local, n, MPIU_SCALAR, tmp, cnt, dsp, MPIU_SCALAR, 0, comm));
  if (!rank) { /* rank r's piece is [pre][cnt_r][post]: put its rows in place */
    for (PetscMPIInt r = 0; r < size && full; r++) {
      PetscInt s0 = ranges[2 * r], c = ranges[2 * r + 1];
      for (PetscInt b = 0; b < pre; b++) PetscCall(PetscArraycpy(full + (b * t->gdim + s0) * post, tmp + dsp[r] + b * c * post, c * post));
    }
    PetscCall(PetscFree4(ranges, cnt, dsp, tmp));
  }
  PetscFunctionReturn(0);
}

/* the copy of this rank's piece out of a full tensor */
static PetscErrorCode NNExtractSplitTensor(const NNTensor *t, const PetscScalar *full, PetscScalar *local)
{
  PetscInt pre, post, c = t->dim[t->axis];

  PetscFunctionBegin;
  NNSplitExtents(t, &pre, &post);
  for (PetscInt b = 0; b < pre; b++) PetscCall(PetscArraycpy(local + b * c * post, full + (b * t->gdim + t->start) * post, c * post));
  PetscFunctionReturn(0);
}

/* gather (full on rank 0) or extract (full on every rank): the top-level layers' spans and the split tensors */
static PetscErrorCode NNPartitionMove(NN net, NNTensorKind kind, PetscBool gather, PetscScalar *local, PetscScalar *full)
{
  MPI_Comm    comm = NNGetPartitionComm(net); /* every partitioned layer's (NNLayerGetPartitionComm()) */
  PetscMPIInt rank;
  PetscInt    np, nb;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(VecGetSize(net->buf, &nb));
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer  l = net->layers[i];
    PetscInt pend, bend, lo, hi, glo;

    if (!NNLayerHasSplitTensor(l)) { /* whole tensors, the same on every rank */
      NNTopLevelSpan(net, i, np, nb, &pend, &bend);
      lo  = kind == NN_TENSOR_PARAM ? l->poff : l->boff;
      hi  = kind == NN_TENSOR_PARAM ? pend : bend;
      glo = kind == NN_TENSOR_PARAM ? l->part.gpoff : l->part.gboff;
      if (gather && !rank && full) PetscCall(PetscArraycpy(full + glo, local + lo, hi - lo));
      if (!gather) PetscCall(PetscArraycpy(local + lo, full + glo, hi - lo));
      continue;
    }
    for (PetscInt k = 0; k < l->ntensors; k++) {
      const NNTensor *t = &l->tensors[k];
      if (t->kind != kind) continue;
      if (!t->split) {
        if (gather && !rank && full) PetscCall(PetscArraycpy(full + NNFullOffset(l, t), local + NNLocalOffset(l, t), t->size));
        if (!gather) PetscCall(PetscArraycpy(local + NNLocalOffset(l, t), full + NNFullOffset(l, t), t->size));
      } else if (gather) PetscCall(NNGatherSplitTensor(comm, t, local + NNLocalOffset(l, t), rank || !full ? NULL : full + NNFullOffset(l, t)));
      else PetscCall(NNExtractSplitTensor(t, full + NNFullOffset(l, t), local + NNLocalOffset(l, t)));
    }
  }
  PetscFunctionReturn(0);
}

/* Gathers a parameter-shaped (kind NN_TENSOR_PARAM: parameters, gradient, optimizer state) or buffer array of
   this rank's layout into the full layout (net->part.np or nb entries) on rank 0 of the partition communicator
   (NNGetPartitionComm(): the model ranks, or the layer communicator without them); full is used on that rank
   only, and may be NULL there (with data groups or spatial ranks several ranks are such a rank 0).
   Collective on the partition communicator. */
PetscErrorCode NNPartitionGather(NN net, NNTensorKind kind, const PetscScalar local[], PetscScalar full[])
{
  PetscFunctionBegin;
  PetscCall(NNPartitionMove(net, kind, PETSC_TRUE, (PetscScalar *)local, full));
  PetscFunctionReturn(0);
}

/* Copies this rank's layout out of a full-layout array that every rank has. Not collective. */
PetscErrorCode NNPartitionExtract(NN net, NNTensorKind kind, const PetscScalar full[], PetscScalar local[])
{
  PetscFunctionBegin;
  PetscCall(NNPartitionMove(net, kind, PETSC_FALSE, local, (PetscScalar *)full));
  PetscFunctionReturn(0);
}

/* Where each entry of the full parameter layout lives in this rank's array: map[g] is its local index, or -1
   when another rank holds it (a piece of a split tensor). Not collective; the caller frees map. */
PetscErrorCode NNPartitionLocalIndex(NN net, PetscInt **map)
{
  PetscInt np;

  PetscFunctionBegin;
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(PetscMalloc1(PetscMax(net->part.np, 1), map));
  for (PetscInt g = 0; g < net->part.np; g++) (*map)[g] = -1;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer  l = net->layers[i];
    PetscInt pend, bend;

    if (!NNLayerHasSplitTensor(l)) {
      NNTopLevelSpan(net, i, np, 0, &pend, &bend);
      for (PetscInt k = l->poff; k < pend; k++) (*map)[l->part.gpoff + k - l->poff] = k;
      continue;
    }
    for (PetscInt k = 0; k < l->ntensors; k++) {
      const NNTensor *t = &l->tensors[k];
      PetscInt        pre, post, c;
      if (t->kind != NN_TENSOR_PARAM) continue;
      if (!t->split) {
        for (PetscInt e = 0; e < t->size; e++) (*map)[NNFullOffset(l, t) + e] = NNLocalOffset(l, t) + e;
        continue;
      }
      NNSplitExtents(t, &pre, &post);
      c = t->dim[t->axis];
      for (PetscInt b = 0; b < pre; b++)
        for (PetscInt e = 0; e < c * post; e++) (*map)[NNFullOffset(l, t) + (b * t->gdim + t->start) * post + e] = NNLocalOffset(l, t) + b * c * post + e;
    }
  }
  PetscFunctionReturn(0);
}

/* Creates the network's parameters as one distributed Vec on the layer communicator: rank 0 owns the whole
   tensors and its pieces, every other rank its pieces (each entry once), with the maps to and from a rank's
   own array (TAO sees this Vec: src/trainer/interface/train.c). Collective. */
PetscErrorCode NNPartitionVecCreate(NN net, NNPartitionVec *pv)
{
  MPI_Comm    comm = NNGetPartitionComm(net);
  PetscMPIInt rank;
  PetscInt    np, *map, *map0, *gidx, rstart = 0;
  PetscBool  *split;
  IS          is;
  Vec         local;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(pv, sizeof(*pv)));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(PetscCalloc1(PetscMax(np, 1), &split)); /* entries of split tensors: owned by the rank holding them */
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer l = net->layers[i];
    for (PetscInt k = 0; k < l->ntensors; k++)
      if (l->tensors[k].split && l->tensors[k].kind == NN_TENSOR_PARAM)
        for (PetscInt e = 0; e < l->tensors[k].size; e++) split[NNLocalOffset(l, &l->tensors[k]) + e] = PETSC_TRUE;
  }
  PetscCall(PetscMalloc1(PetscMax(np, 1), &pv->own));
  PetscCall(PetscMalloc1(PetscMax(np, 1), &gidx));
  for (PetscInt k = 0; k < np; k++)
    if (!rank || split[k]) pv->own[pv->nown++] = k;
  PetscCallMPI(MPI_Exscan(&pv->nown, &rstart, 1, MPIU_INT, MPI_SUM, comm));
  if (!rank) rstart = 0;
  /* global index of every local entry: its own position, or for a whole tensor's entry rank 0's local index */
  PetscCall(NNPartitionLocalIndex(net, &map));
  PetscCall(PetscMalloc1(PetscMax(net->part.np, 1), &map0));
  if (!rank) PetscCall(PetscArraycpy(map0, map, net->part.np));
  PetscCallMPI(MPI_Bcast(map0, (PetscMPIInt)net->part.np, MPIU_INT, 0, comm));
  for (PetscInt k = 0; k < pv->nown; k++) gidx[pv->own[k]] = rstart + k;
  for (PetscInt g = 0; g < net->part.np; g++)
    if (map[g] >= 0 && !split[map[g]] && rank) gidx[map[g]] = map0[g];
  PetscCall(VecCreateMPI(comm, pv->nown, PETSC_DETERMINE, &pv->g));
  PetscCall(PetscObjectSetName((PetscObject)pv->g, "parameters (distributed)"));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, np, gidx, PETSC_COPY_VALUES, &is));
  PetscCall(VecDuplicate(net->theta, &local));
  PetscCall(VecScatterCreate(pv->g, is, local, NULL, &pv->tolocal));
  PetscCall(VecDestroy(&local));
  PetscCall(ISDestroy(&is));
  PetscCall(PetscFree(map));
  PetscCall(PetscFree(map0));
  PetscCall(PetscFree(split));
  PetscCall(PetscFree(gidx));
  PetscFunctionReturn(0);
}

PetscErrorCode NNPartitionVecDestroy(NNPartitionVec *pv)
{
  PetscFunctionBegin;
  PetscCall(VecDestroy(&pv->g));
  PetscCall(VecScatterDestroy(&pv->tolocal));
  PetscCall(PetscFree(pv->own));
  pv->nown = 0;
  PetscFunctionReturn(0);
}

/* g = the entries of a rank's parameter-shaped array it owns (no communication) */
PetscErrorCode NNPartitionVecFromLocal(NNPartitionVec *pv, Vec local, Vec g)
{
  const PetscScalar *a;
  PetscScalar       *b;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(local, &a));
  PetscCall(VecGetArray(g, &b));
  for (PetscInt k = 0; k < pv->nown; k++) b[k] = a[pv->own[k]];
  PetscCall(VecRestoreArray(g, &b));
  PetscCall(VecRestoreArrayRead(local, &a));
  PetscFunctionReturn(0);
}

/* a rank's parameter-shaped array from the distributed Vec: its pieces, and the whole tensors from rank 0; collective */
PetscErrorCode NNPartitionVecToLocal(NNPartitionVec *pv, Vec g, Vec local)
{
  PetscFunctionBegin;
  PetscCall(VecScatterBegin(pv->tolocal, g, local, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(pv->tolocal, g, local, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}
