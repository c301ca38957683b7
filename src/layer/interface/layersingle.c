/* NNLayer passes in single precision (-nn_precision single, src/nn/interface/nnprecision.c): the type's float
   passes on the network's float activations, and those of the multi-input and multi-output layers of graph
   networks. The network runs a layer without them through NNLayerForward() and NNLayerBackward() on double
   activations converted at its boundaries. */
#include <petnn/private/nnimpl.h>

/* the layer runs its own float passes: its type has them, and if it is partitioned, its float passes take the
   partition (sharding is the interface's: NNLayerShardBeginSingle()) */
PetscBool NNLayerHasSinglePasses(NNLayer l)
{
  return (PetscBool)(l->ops->forwardsingle && l->ops->backwardsingle && (l->part.type == NN_PARTITION_REPLICATE || l->part.floatpasses));
}

/*
   NNLayerForwardSingle - NNLayerForward() on float activations: xs (the input, laid out as the Vec x) to ys. A spatial
   type (one with Vec-level passes) gets the arrays in its DMDAs' global layouts and exchanges its halo itself.
*/
PetscErrorCode NNLayerForwardSingle(NNLayer l, PetscInt n, Vec x, const float *xs, float *ys)
{

  PetscFunctionBegin;
  PetscCheck(NNLayerHasSinglePasses(l), PetscObjectComm((PetscObject)l), PETSC_ERR_PLIB, "Layer %s (%s) has no single-precision passes", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscCall(PetscLogEventBegin(l->evfwd, l, 0, 0, 0));
  if (!l->ops->forwardvec) PetscCall(NNLayerArraySamples(l, x, &n)); /* a pointwise layer: all batch slots of a spatial activation */
  if (l->part.shard) PetscCall(NNLayerShardBeginSingle(l, PETSC_FALSE));
  PetscUseTypeMethod(l, forwardsingle, n, xs, ys);
  if (l->part.shard) PetscCall(NNLayerShardEndSingle(l, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(l->evfwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNLayerBackwardSingle - NNLayerBackward() on float activations; the parameter gradient is ADDED into l->sdtheta
*/
PetscErrorCode NNLayerBackwardSingle(NNLayer l, PetscInt n, Vec x, const float *xs, const float *ys, const float *dys, float *dxs)
{

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(l->evbwd, l, 0, 0, 0));
  if (!l->ops->backwardvec) PetscCall(NNLayerArraySamples(l, x, &n));
  if (l->part.shard) PetscCall(NNLayerShardBeginSingle(l, PETSC_TRUE));
  PetscUseTypeMethod(l, backwardsingle, n, xs, ys, dys, dxs);
  if (l->part.shard) PetscCall(NNLayerShardEndSingle(l, PETSC_TRUE)); /* this rank's piece of the parameter gradient */
  PetscCall(PetscLogEventEnd(l->evbwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* the multi-input or multi-output layer (add, concat, split) has float passes of its own */
PetscBool NNLayerHasMultiSinglePasses(NNLayer l)
{
  return (PetscBool)(l->ops->forwardmultisingle && l->ops->backwardmultisingle);
}

/*
   NNLayerForwardMultiSingle - NNLayerForwardMulti() on float activations: xs[] (laid out as the Vecs x[]) to ys[] (as y[])
*/
PetscErrorCode NNLayerForwardMultiSingle(NNLayer l, PetscInt n, PetscInt nin, Vec x[], const float *const xs[], PetscInt nout, Vec y[], float *const ys[])
{

  PetscFunctionBegin;
  PetscCheck(n > 0 && n <= l->nbatch, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch of %" PetscInt_FMT " samples exceeds the capacity %" PetscInt_FMT " of layer %s", n, l->nbatch, ((PetscObject)l)->name);
  PetscCall(PetscLogEventBegin(l->evfwd, l, 0, 0, 0));
  PetscUseTypeMethod(l, forwardmultisingle, n, nin, x, xs, nout, y, ys);
  PetscCall(PetscLogEventEnd(l->evfwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNLayerBackwardMultiSingle - NNLayerBackwardMulti() on float activations: every dxs[k] that is not NULL is overwritten
*/
PetscErrorCode NNLayerBackwardMultiSingle(NNLayer l, PetscInt n, PetscInt nin, Vec x[], PetscInt nout, Vec y[], const float *const dys[], float *const dxs[])
{

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(l->evbwd, l, 0, 0, 0));
  PetscUseTypeMethod(l, backwardmultisingle, n, nin, x, nout, y, dys, dxs);
  PetscCall(PetscLogEventEnd(l->evbwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}
