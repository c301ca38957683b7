/* Layers in graph networks: the inputs a layer names, and the set-up and passes of multi-input or
   multi-output layers (the forwardmulti/backwardmulti ops of layerimpl.h: concat, add, split). */
#include <petnn/private/nnimpl.h>

/* frees what a set-up of a multi-input layer made (not the names the user gave) */
PetscErrorCode NNLayerGraphReset(NNLayer l)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < l->graph.nin; k++) {
    if (l->graph.indms) PetscCall(DMDestroy(&l->graph.indms[k]));
    if (l->graph.innames) PetscCall(PetscFree(l->graph.innames[k]));
  }
  PetscCall(PetscFree(l->graph.indms));
  PetscCall(PetscFree(l->graph.innames));
  PetscCall(PetscFree(l->graph.inshapes));
  PetscCall(PetscFree(l->graph.outshapes));
  l->graph.nin  = 0;
  l->graph.nout = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerGraphDestroy(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerGraphReset(l));
  for (PetscInt k = 0; k < l->graph.ninputs; k++) PetscCall(PetscFree(l->graph.inputs[k]));
  PetscCall(PetscFree(l->graph.inputs));
  l->graph.ninputs = 0;
  PetscFunctionReturn(0);
}

/*@C
   NNLayerSetInputs - names the inputs of a layer of a graph network

   Logically Collective

   Input Parameters:
+  l - the layer
.  n - the number of inputs (0: the layer before it in the network's list, or the network input for the first)
-  names - each "input" (the network input), the name of another layer of the network, or "name:k" for
           output k of a layer with several outputs (`NNLAYERSPLIT`)

   Options Database Key:
.  -<layer>_inputs <a,b,...> - the same

   Notes:
   Only networks of type `NNTYPEGRAPH` accept inputs; `NNSetUp()` of a sequential network with named inputs
   fails. Layers of types other than `NNLAYERCONCAT` and `NNLAYERADD` take exactly one input.

   Level: intermediate

.seealso: `NNSetType()`, `NNLayerGetInputs()`, `NNLAYERCONCAT`, `NNLAYERADD`, `NNLAYERSPLIT`
@*/
PetscErrorCode NNLayerSetInputs(NNLayer l, PetscInt n, const char *const names[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s: %" PetscInt_FMT " inputs", ((PetscObject)l)->name, n);
  PetscCall(NNLayerGraphDestroy(l));
  PetscCall(PetscCalloc1(n, &l->graph.inputs));
  for (PetscInt k = 0; k < n; k++) PetscCall(PetscStrallocpy(names[k], &l->graph.inputs[k]));
  l->graph.ninputs = n;
  l->setupcalled   = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   NNLayerGetInputs - gets the input names given with `NNLayerSetInputs()` or -<layer>_inputs

   Not Collective

   Input Parameter:
.  l - the layer

   Output Parameters:
+  n - the number of names (0: none given)
-  names - the names, owned by the layer (may be NULL)

   Level: intermediate

.seealso: `NNLayerSetInputs()`
@*/
PetscErrorCode NNLayerGetInputs(NNLayer l, PetscInt *n, const char *const *names[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (n) *n = l->graph.ninputs;
  if (names) *names = (const char *const *)l->graph.inputs;
  PetscFunctionReturn(0);
}

/* sets up a layer from the shapes of its nin inputs, produced by the layers named in from[] (for errors) */
PetscErrorCode NNLayerSetUpMulti(NNLayer l, PetscInt nin, const NNShape shapes[], const char *const from[])
{
  PetscFunctionBegin;
  PetscCall(NNLayerGraphReset(l));
  PetscCall(PetscMalloc1(nin, &l->graph.inshapes));
  PetscCall(PetscCalloc1(nin, &l->graph.indms));
  PetscCall(PetscCalloc1(nin, &l->graph.innames));
  for (PetscInt k = 0; k < nin; k++) {
    l->graph.inshapes[k] = shapes[k];
    PetscCall(PetscStrallocpy(from[k], &l->graph.innames[k]));
  }
  l->graph.nin  = nin;
  l->graph.nout = 1;
  l->inputname  = l->graph.innames[0];
  PetscCall(NNLayerSetInputShape(l, &shapes[0]));
  PetscCall(NNLayerSetUp(l));
  PetscFunctionReturn(0);
}

/* records the inputs' DMs (NULL: sequential) and creates the nout output Vecs */
PetscErrorCode NNLayerCreateOutputVecsMulti(NNLayer l, const DM dms[], Vec y[])
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < l->graph.nin; k++) {
    if (dms[k]) PetscCall(PetscObjectReference((PetscObject)dms[k]));
    PetscCall(DMDestroy(&l->graph.indms[k]));
    l->graph.indms[k] = dms[k];
  }
  PetscCall(NNLayerSetInputDM(l, dms[0]));
  PetscUseTypeMethod(l, createoutputvecs, y);
  PetscFunctionReturn(0);
}

/* the passes of a multi-input or multi-output layer, logged under the type's events */
PetscErrorCode NNLayerForwardMulti(NNLayer l, PetscInt n, PetscInt nin, Vec x[], PetscInt nout, Vec y[])
{

  PetscFunctionBegin;
  PetscCheck(n > 0 && n <= l->nbatch, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch of %" PetscInt_FMT " samples exceeds the capacity %" PetscInt_FMT " of layer %s", n, l->nbatch, ((PetscObject)l)->name);
  PetscCall(PetscLogEventBegin(l->evfwd, l, 0, 0, 0));
  PetscUseTypeMethod(l, forwardmulti, n, nin, x, nout, y);
  PetscCall(PetscLogEventEnd(l->evfwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardMulti(NNLayer l, PetscInt n, PetscInt nin, Vec x[], PetscInt nout, Vec y[], Vec dy[], Vec dx[])
{

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(l->evbwd, l, 0, 0, 0));
  PetscUseTypeMethod(l, backwardmulti, n, nin, x, nout, y, dy, dx);
  PetscCall(PetscLogEventEnd(l->evbwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}
