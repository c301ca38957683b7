/* NNLayer set-up: output shape and tensors (NNLayerSetUp()), the input layout and the output Vec. */
#include <petnn/private/nnimpl.h>

/* tensors another part of the library adds after the type's set-up (the spectral normalization's buffer: src/spectral), set by the package registration */
PetscErrorCode (*NNLayerSetUpHook)(NNLayer) = NULL;

PetscBool NNLayerIsPointwise(NNLayer l)
{
  return (PetscBool)(l->nparam == 0 && l->nchildren == 0 && NNShapeSize(&l->inshape) == NNShapeSize(&l->outshape));
}

/* only pointwise array-level layers (no parameters, as many outputs as inputs) run on a spatial (DMDA) activation */
PetscErrorCode NNLayerCheckPointwise(NNLayer l)
{
  PetscFunctionBegin;
  PetscCheck(NNLayerIsPointwise(l), PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Layer %s (%s) cannot take the spatial (DMDA) activation of %s: only pointwise layers (no parameters, as many outputs as inputs) can; put a %s layer before it (-nn_auto_repartition inserts one only between the top-level layers of a sequential network)", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->inputname ? l->inputname : "its input", NNLAYERSPATIALFLATTEN);
  PetscFunctionReturn(0);
}

/*
   l->localsize, the entries of one sample the array-level passes loop over, for the input layout
   NNLayerSetInputDM() recorded: size(inshape) for a sequential activation; for a pointwise layer on
   a spatial (DMDA) activation the rank's local entries per batch slot (channels-last with the batch
   in the dof keeps every slot a valid entry, so the rank's local array is nbatch such "samples").
   Set once per set-up, so the layer's shapes always stay the true ones.
*/
PetscErrorCode NNLayerSetUpLocalSize(NNLayer l)
{
  DM       dm;
  Vec      v;
  PetscInt m;

  PetscFunctionBegin;
  l->localsize = NNShapeSize(&l->inshape);
  PetscCall(NNLayerGetInputDM(l, &dm));
  if (!dm || !l->setupcalled || l->ops->forwardvec || !NNLayerIsPointwise(l)) PetscFunctionReturn(0);
  PetscCall(DMGetGlobalVector(dm, &v));
  PetscCall(VecGetLocalSize(v, &m));
  PetscCall(DMRestoreGlobalVector(dm, &v));
  l->localsize = m / l->nbatch;
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetUp - computes the output shape and declares the layer's tensors

   Collective

   Level: intermediate
@*/
PetscErrorCode NNLayerSetUp(NNLayer l)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (l->setupcalled) PetscFunctionReturn(0);
  PetscCheck(((PetscObject)l)->type_name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has no type", ((PetscObject)l)->name);
  PetscCheck(l->inshape.ndim > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has no input shape", ((PetscObject)l)->name);
  PetscTryTypeMethod(l, reset);
  PetscCall(NNLayerShardReset(l));
  l->ntensors = 0;
  l->nparam   = 0;
  l->nbuf     = 0;
  l->part.gnparam = 0;
  l->part.gnbuf   = 0;
  l->part.handled = PETSC_FALSE;
  l->outshape = l->inshape;
  PetscUseTypeMethod(l, setup);
  if (l->part.shard) PetscCall(NNLayerShardSetUp(l)); /* src/layer/interface/layershard.c */
  PetscCheck(l->part.type == NN_PARTITION_REPLICATE || l->part.handled, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s) cannot be partitioned (-%spartition %s): its type keeps every weight on every rank; dense layers take rows or columns, convolutions filters or channels", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", NNLayerPartitions[l->part.type]);
  if (NNLayerSetUpHook) PetscCall((*NNLayerSetUpHook)(l));
  l->setupcalled = PETSC_TRUE;
  PetscCall(NNLayerSetUpLocalSize(l));
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetInputDM - records the DM of the layer's input activation (NULL: sequential layout)

   Notes:
   NNSetUp() calls it before NNLayerCreateOutputVec(); spatial layers (conv2d, ...) build their
   halo and output DMDAs with the same decomposition, pointwise layers reuse the DM and loop over
   the rank's local entries.

   Level: developer
@*/
PetscErrorCode NNLayerSetInputDM(NNLayer l, DM dm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscObjectCompose((PetscObject)l, "NNLayerInputDM", (PetscObject)dm));
  PetscCall(NNLayerSetUpLocalSize(l));
  PetscFunctionReturn(0);
}

/*@
   NNLayerGetInputDM - gets the DM of the layer's input activation (NULL: sequential layout)

   Level: developer
@*/
PetscErrorCode NNLayerGetInputDM(NNLayer l, DM *dm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscObjectQuery((PetscObject)l, "NNLayerInputDM", (PetscObject *)dm));
  PetscFunctionReturn(0);
}

/*@
   NNLayerCreateOutputVec - creates a Vec for the layer's output batch (capacity nbatch samples)

   Collective

   Notes:
   Layer types with a distributed layout (DMDA) create their DM's global Vec; the default is a
   sequential Vec of nbatch * size(output shape) entries. Gradients of activations use the same layout.

   Level: developer
@*/
PetscErrorCode NNLayerCreateOutputVec(NNLayer l, Vec *y)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Call NNLayerSetUp() first");
  if (l->ops->createoutputvec) PetscUseTypeMethod(l, createoutputvec, y);
  else {
    DM dm;
    PetscCall(NNLayerGetInputDM(l, &dm));
    if (dm && !l->ops->forwardvec) { /* an array-level (pointwise) layer on a spatial activation: its output has the input's layout */
      PetscCall(NNLayerCheckPointwise(l));
      PetscCall(DMCreateGlobalVector(dm, y));
    } else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), y));
  }
  PetscFunctionReturn(0);
}
