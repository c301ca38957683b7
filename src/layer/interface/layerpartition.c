/*
   Model parallelism, the layer side: a layer's partition (-<layer>_partition) says how its weights are
   split over the ranks of its communicator. The types that support a partition read it in setup and
   declare their pieces with NNLayerAddTensorSplit(); the network lays out each rank's pieces
   (l->nparam) and keeps the full layout beside it for checkpoints and views
   (src/nn/interface/nnpartition.c).
*/
#include <petnn/private/nnimpl.h>

const char *const NNLayerPartitions[] = {"replicate", "rows", "columns", "filters", "channels", "shard", "NNLayerPartition", "NN_PARTITION_", NULL};

/* the range [start, start + count) of n items that rank r of size holds: an even split, the first n % size ranks one more */
void NNPartitionRange(PetscInt n, PetscMPIInt r, PetscMPIInt size, PetscInt *start, PetscInt *count)
{
  PetscInt q = n / size, m = n % size;

  *count = q + (r < m ? 1 : 0);
  *start = r * q + PetscMin((PetscInt)r, m);
}

/* reads -<prefix>partition as a string, so an unknown value gets an error listing the valid ones */
PetscErrorCode NNLayerSetFromOptions_Partition(NNLayer l, NNOptionItems PetscOptionsObject)
{
  char      value[64];
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(value, NNLayerPartitions[l->part.shard ? NN_PARTITION_SHARD : l->part.type], sizeof(value)));
  PetscCall(PetscOptionsString("-partition", "Model parallelism: how the weights are split over the layer's ranks (replicate, rows, columns, filters, channels, shard)", "NNLayerSetPartition", value, value, sizeof(value), &flg));
  if (flg) {
    PetscBool found = PETSC_FALSE;
    for (PetscInt i = 0; i <= NN_PARTITION_SHARD && !found; i++) {
      PetscCall(PetscStrcmp(value, NNLayerPartitions[i], &found));
      if (found) PetscCall(NNLayerSetPartition(l, (NNLayerPartition)i));
    }
    PetscCheck(found, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_UNKNOWN_TYPE, "-%spartition %s is not a partition; valid: replicate, rows, columns (dense), filters, channels (convolutions), shard (any layer)", ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", value);
  }
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetPartition - sets how a layer's weights are split over the ranks of its communicator (model parallelism)

   Logically Collective

   Input Parameters:
+  l - the layer
-  part - `NN_PARTITION_REPLICATE` (every rank holds all weights: the default), `NN_PARTITION_ROWS` or
          `NN_PARTITION_COLUMNS` (dense layers: output or input features split), `NN_PARTITION_FILTERS`
          or `NN_PARTITION_CHANNELS` (convolutions: output or input channels split), `NN_PARTITION_SHARD`
          (any layer with parameters: each rank stores 1/P of every tensor, the pass gathers them)

   Options Database Key:
.  -<prefix>partition <replicate,rows,columns,filters,channels,shard> - the partition

   Notes:
   The ranks are the network's model ranks (`NNSetModelRanks()`, -nn_model_ranks M > 1: ranks that hold
   the same samples and spatial subdomain), or without them the layer's communicator (the network's
   spatial group: all ranks of the network unless `NNSetProcessGrid()` made data groups). Convolutions
   split over model ranks only (their spatial ranks hold different pixels); -nn_model_ranks composes with
   the spatial split (P = data groups x spatial ranks x model ranks). Each rank stores, trains and checkpoints
   only its piece of a split tensor; the network's parameter, gradient and optimizer-state arrays
   hold the pieces, and checkpoints gather them into PyTorch's shapes. Results equal those of the
   replicated layer up to rounding. A type that does not support the partition raises an error at
   set-up naming the ones it supports. Sharding (ZeRO-3/FSDP style) works for every type: the layer
   computes as a replicated one, each forward and backward pass all-gathers its parameters just in
   time and frees them after, and the backward pass keeps the rank's piece of the gradient; at rest
   a rank holds 1/P of the parameters, gradient and optimizer state.

   Level: intermediate

.seealso: `NNLayerGetPartition()`, `NNLayerGetNumParametersGlobal()`, `NNSetModelRanks()`, `NNSetProcessGrid()`
@*/
PetscErrorCode NNLayerSetPartition(NNLayer l, NNLayerPartition part)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(part >= NN_PARTITION_REPLICATE && part <= NN_PARTITION_SHARD, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s: partition %d is not an NNLayerPartition", ((PetscObject)l)->name, (int)part);
  if ((l->part.shard ? NN_PARTITION_SHARD : l->part.type) != part) l->setupcalled = PETSC_FALSE;
  l->part.shard = (PetscBool)(part == NN_PARTITION_SHARD); /* the type computes as replicated: src/layer/interface/layershard.c */
  l->part.type  = l->part.shard ? NN_PARTITION_REPLICATE : part;
  PetscFunctionReturn(0);
}

/*@
   NNLayerGetPartition - gets how a layer's weights are split over its ranks

   Not Collective

   Level: intermediate

.seealso: `NNLayerSetPartition()`
@*/
PetscErrorCode NNLayerGetPartition(NNLayer l, NNLayerPartition *part)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(part, 2);
  *part = l->part.shard ? NN_PARTITION_SHARD : l->part.type;
  PetscFunctionReturn(0);
}

/*@
   NNLayerGetNumParametersGlobal - number of trainable parameters of the whole layer, over all the ranks
   that hold pieces of it (`NNLayerGetNumParameters()` counts this rank's pieces)

   Not Collective

   Level: intermediate

.seealso: `NNLayerSetPartition()`, `NNLayerGetNumParameters()`
@*/
PetscErrorCode NNLayerGetNumParametersGlobal(NNLayer l, PetscInt *n)
{
  PetscInt sum = 0, m = 0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(NNLayerGetNumParametersGlobal(l->children[c], &m));
    sum += m;
  }
  *n = l->part.gnparam + PetscMax(l->ncopies, 1) * sum;
  PetscFunctionReturn(0);
}

/* Errors unless the layer's partition is one of the n given (those its type supports); call from setup. */
PetscErrorCode NNLayerCheckPartition(NNLayer l, PetscInt n, const NNLayerPartition valid[])
{
  char list[128] = "";

  PetscFunctionBegin;
  l->part.handled = PETSC_TRUE;
  if (l->part.type == NN_PARTITION_REPLICATE) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) {
    if (valid[i] == l->part.type) PetscFunctionReturn(0);
    PetscCall(PetscStrlcat(list, ", ", sizeof(list)));
    PetscCall(PetscStrlcat(list, NNLayerPartitions[valid[i]], sizeof(list)));
  }
  SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s) cannot be partitioned by %s (-%spartition); valid: replicate%s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, NNLayerPartitions[l->part.type], ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", list);
}

/* The ranks a partitioned layer splits its weights over: those the network set before set-up (its model ranks,
   NNGetPartitionComm()), or the layer's own communicator for a layer used on its own. */
MPI_Comm NNLayerGetPartitionComm(NNLayer l)
{
  return (l->part.comm && l->part.comm != MPI_COMM_NULL) ? l->part.comm : PetscObjectComm((PetscObject)l);
}

/* Errors when the layer's parameters are split over ranks (partitioned or sharded); what names the caller,
   e.g. "the spectral tools", which need the whole weights on every rank. */
PetscErrorCode NNLayerCheckWhole(NNLayer l, const char what[])
{
  PetscBool split = l->part.shard;

  PetscFunctionBegin;
  for (PetscInt t = 0; t < l->ntensors; t++) split = (PetscBool)(split || l->tensors[t].split);
  PetscCheck(!split, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s) is partitioned (-%spartition %s): %s need its whole weights on every rank; use -%spartition replicate", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", NNLayerPartitions[l->part.shard ? NN_PARTITION_SHARD : l->part.type], what, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  PetscFunctionReturn(0);
}
