/* Setting a network up: layer shapes, the parameter layout, pointers into it, initialization, tensor walks. */
#include <petnn/private/nnimpl.h>


/* the activation and gradient Vecs, one by one: after a failed set-up some are NULL, and one made
   by VecCreate() whose VecSetType() failed (an allocation refused) has no type, so the
   VecDestroyVecs() dispatch through the first Vec's ops would call a NULL function */
PetscErrorCode NNDestroyActivationVecs(NN net)
{
  PetscFunctionBegin;
  PetscCall(NNPrecisionReset(net)); /* their float copies (single precision) */
  PetscCall(NNDeviceReset(net));    /* their device copies (-nn_device cuda) */
  for (PetscInt i = 0; i < net->nact; i++) {
    if (net->act) PetscCall(VecDestroy(&net->act[i]));
    if (net->dact) PetscCall(VecDestroy(&net->dact[i]));
  }
  PetscCall(PetscFree(net->act));
  PetscCall(PetscFree(net->dact));
  PetscFunctionReturn(0);
}

/* assigns each layer's slice, parent before children; children of a layer with ncopies > 1 get copy 0,
   and the further copies follow it (l->pcopy, l->bcopy apart) */
static PetscErrorCode NNLayout(NN net, NNLayer l, PetscInt *poff, PetscInt *boff)
{
  PetscInt p0, b0;

  PetscFunctionBegin;
  l->rng  = &net->rng;
  l->poff = *poff;
  l->boff = *boff;
  *poff += l->nparam;
  *boff += l->nbuf;
  p0 = *poff;
  b0 = *boff;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayout(net, l->children[c], poff, boff));
  l->pcopy = *poff - p0;
  l->bcopy = *boff - b0;
  *poff += (PetscMax(l->ncopies, 1) - 1) * l->pcopy;
  *boff += (PetscMax(l->ncopies, 1) - 1) * l->bcopy;
  PetscFunctionReturn(0);
}

/* moves the pointers of a layer and its descendants by dp parameters and db buffer entries */
static void NNLayerShiftPointers(NNLayer l, PetscInt dp, PetscInt db)
{
  if (l->theta) l->theta += dp;
  if (l->dtheta) l->dtheta += dp;
  if (l->buf) l->buf += db;
  for (PetscInt c = 0; c < l->nchildren; c++) NNLayerShiftPointers(l->children[c], dp, db);
}

static PetscErrorCode NNLayerSetPointers(NNLayer l, const PetscScalar *theta, PetscScalar *dtheta, PetscScalar *buf)
{
  PetscFunctionBegin;
  l->theta  = theta ? theta + l->poff : NULL;
  l->dtheta = dtheta ? dtheta + l->poff : NULL;
  l->buf    = buf ? buf + l->boff : NULL;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetPointers(l->children[c], theta, dtheta, buf));
  PetscFunctionReturn(0);
}

/* Points every layer (children included) at its slices of the given arrays; NULL clears. */
PetscErrorCode NNSetLayerPointers(NN net, const PetscScalar *theta, PetscScalar *dtheta, PetscScalar *buf)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerSetPointers(net->layers[i], theta, dtheta, buf));
  PetscFunctionReturn(0);
}

/* layer names must be unique over the whole tree: they name checkpoint tensors and options */
static PetscErrorCode NNCheckUniqueNames(NN net, NNLayer l)
{
  NNLayer first = NULL;

  PetscFunctionBegin;
  PetscCall(NNGetLayer(net, ((PetscObject)l)->name, &first));
  PetscCheck(first == l, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Two layers are named %s; layer names must be unique (they name options and checkpoint tensors)", ((PetscObject)l)->name);
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNCheckUniqueNames(net, l->children[c]));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerInitializeAll(NNLayer l)
{
  PetscInt copies = PetscMax(l->ncopies, 1);

  PetscFunctionBegin;
  if (l->part.shard) PetscCall(NNLayerShardInitialize(l)); /* into a whole copy, keeping this rank's piece */
  else PetscTryTypeMethod(l, initialize);
  for (PetscInt k = 0; k < copies; k++) { /* each copy of the children is initialized on its own, as a torch ModuleList */
    for (PetscInt c = 0; c < l->nchildren; c++) {
      if (k) NNLayerShiftPointers(l->children[c], l->pcopy, l->bcopy);
      PetscCall(NNLayerInitializeAll(l->children[c]));
    }
  }
  for (PetscInt c = 0; c < l->nchildren; c++) NNLayerShiftPointers(l->children[c], -(copies - 1) * l->pcopy, -(copies - 1) * l->bcopy);
  PetscFunctionReturn(0);
}

/* pshift, bshift: where this copy of the layer's tensors lies relative to the layer's slice (copies of children);
   global: pass the tensors with their full shapes at their offsets in the full layout (model parallelism) */
static PetscErrorCode NNVisitLayerTensors(NN net, NNLayer l, const char base[], PetscInt pshift, PetscInt bshift, PetscBool global, NNTensorVisitor visit, void *ctx)
{
  char      path[PETSC_MAX_PATH_LEN];
  PetscInt  copies = PetscMax(l->ncopies, 1);
  PetscBool split  = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt t = 0; t < l->ntensors; t++) split = (PetscBool)(split || l->tensors[t].split);
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s%s", base, ((PetscObject)l)->name));
  for (PetscInt t = 0; t < l->ntensors; t++) {
    char     full[PETSC_MAX_PATH_LEN];
    NNTensor shifted = l->tensors[t];
    PetscCall(PetscSNPrintf(full, sizeof(full), "%s.%s", path, l->tensors[t].name));
    shifted.offset += shifted.kind == NN_TENSOR_PARAM ? pshift : bshift;
    if (global) { /* NNTensorOffset(l, &shifted) is then the offset in the full layout */
      shifted.offset += shifted.kind == NN_TENSOR_PARAM ? l->part.gpoff - l->poff : l->part.gboff - l->boff;
      if (split) shifted.offset += shifted.goffset - l->tensors[t].offset; /* a partitioned layer's full slice */
      if (shifted.split) {
        shifted.size = shifted.size / shifted.dim[shifted.axis] * shifted.gdim;
        shifted.dim[shifted.axis] = shifted.gdim;
        shifted.split = PETSC_FALSE;
      }
    }
    PetscCall((*visit)(net, l, full, (pshift || bshift || global) ? &shifted : &l->tensors[t], ctx));
  }
  for (PetscInt k = 0; k < copies; k++) {
    char sub[PETSC_MAX_PATH_LEN];
    if (l->ncopies > 1) PetscCall(PetscSNPrintf(sub, sizeof(sub), "%s.%" PetscInt_FMT ".", path, k));
    else PetscCall(PetscSNPrintf(sub, sizeof(sub), "%s.", path));
    for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNVisitLayerTensors(net, l->children[c], sub, pshift + k * l->pcopy, bshift + k * l->bcopy, global, visit, ctx));
  }
  PetscFunctionReturn(0);
}

/* Calls visit(net, layer, "fc1.weight", tensor, ctx) for every tensor in state_dict order. */
PetscErrorCode NNVisitTensors(NN net, NNTensorVisitor visit, void *ctx)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNVisitLayerTensors(net, net->layers[i], "", 0, 0, PETSC_FALSE, visit, ctx));
  PetscFunctionReturn(0);
}

/* As NNVisitTensors(), with every tensor in its full shape at its offset in the full layout (NNPartitionGather()):
   the same as NNVisitTensors() when no layer is partitioned. */
PetscErrorCode NNVisitTensorsGlobal(NN net, NNTensorVisitor visit, void *ctx)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNVisitLayerTensors(net, net->layers[i], "", 0, 0, PETSC_TRUE, visit, ctx));
  PetscFunctionReturn(0);
}

/* sets up top-level layer l of a sequential network for samples of shape s made by inputname (for its error messages) */
PetscErrorCode NNSetUpTopLayer(NN net, NNLayer l, const NNShape *s, const char inputname[])
{
  PetscFunctionBegin;
  PetscCall(NNLayerSetBatchCapacity(l, net->nbatch));
  PetscCall(NNLayerSetInputShape(l, s));
  l->inputname = inputname;
  PetscCall(NNLayerSetTraining(l, net->training));
  l->part.comm = NNGetPartitionComm(net);
  PetscCall(NNLayerSetUp(l));
  PetscFunctionReturn(0);
}

/* the layers of a sequential network in order, each with its output Vec: whether a layer can take its
   input depends on the input's layout (DMDA or sequential), which the layer before it decides when it
   makes its output Vec; where a layer cannot take a spatial activation a repartition goes in before it
   (src/nn/interface/nnrepartition.c) */
static PetscErrorCode NNSetUpSequential(NN net)
{
  NNShape  s   = net->inshape;
  PetscInt cap = 2 * net->added.n + 1; /* at most one repartition before each layer */

  PetscFunctionBegin;
  PetscCall(NNDestroyActivationVecs(net));
  PetscCall(VecDestroy(&net->spatial.tspatial));
  net->nact = cap; /* until the end, so that a failed set-up frees what it made (the arrays are zeroed) */
  PetscCall(PetscCalloc1(cap, &net->act));
  PetscCall(PetscCalloc1(cap, &net->dact));
  PetscCall(NNCreateInputVec(net, &net->act[0])); /* act[i] is the input of layer i; act[0] only a staging area for NNPredict() */
  PetscCall(VecDuplicate(net->act[0], &net->dact[0]));
  PetscCall(NNRepartitionBegin(net));
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer l;
    DM      dmin = NULL;

    PetscCall(NNRepartitionSetUpLayer(net, i, &s, net->act[i])); /* may insert a repartition at i */
    l = net->layers[i];
    PetscCall(NNSetUpTopLayer(net, l, &s, i ? ((PetscObject)net->layers[i - 1])->name : "the network input"));
    s = l->outshape;
    PetscCall(VecGetDM(net->act[i], &dmin)); /* spatial layers build their DMs to match their input's */
    PetscCall(NNLayerSetInputDM(l, dmin));
    PetscCall(NNLayerCreateOutputVec(l, &net->act[i + 1])); /* each layer decides the layout of its output (sequential, DMDA) */
    PetscCall(VecDuplicate(net->act[i + 1], &net->dact[i + 1]));
  }
  PetscCall(NNRepartitionEnd(net));
  net->nact = net->nlayers + 1;
  PetscFunctionReturn(0);
}

/*@
   NNSetUp - sets up the layers, checks their shapes, lays out and initializes the parameters

   Collective

   Parameters are initialized from the network's seed as PyTorch would initialize the same
   layers (in distribution, not bitwise). After a change of layers, input shape, seed or options
   it initializes again (discarding trained or loaded parameters); after a change of the batch
   size alone it keeps parameters, optimizer state and counters.

   In a sequential network, where a layer cannot take the spatial (DMDA) activation before it
   (a dense layer after a convolution) it inserts a spatial_flatten layer named
   "<layer>_repartition" (`NNSetAutoRepartition()`); the inserted layers have no parameters.

   Level: beginner

.seealso: `NNSetFromOptions()`, `NNView()`, `NNSetAutoRepartition()`
@*/
PetscErrorCode NNSetUp(NN net)
{
  PetscInt     np = 0, nb = 0;
  PetscScalar *theta, *buf;
  MPI_Comm     comm;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (net->setupcalled) PetscFunctionReturn(0);
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  PetscCheck(net->nlayers > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "The network has no layers: give -%snn_layers name1,name2,... or call NNAddLayer()", ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "");
  PetscCheck(net->inshape.ndim > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "The network has no input shape: give -%snn_input_shape or call NNSetInputShape() (a training data set sets it too)", ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "");
  PetscCall(NNLossSetUpOps(net->loss, &net->lossops));
  PetscCall(NNReorderLayers(net));
  if (net->graph.on) PetscCall(NNGraphSetUpLayers(net)); /* src/nn/interface/nngraph.c */
  else {
    PetscCall(NNGraphCheckSequential(net));
    PetscCall(NNSetUpSequential(net)); /* with the activation Vecs */
  }
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNCheckUniqueNames(net, net->layers[i]));
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNGraphCheckChildren(net, net->layers[i]));
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayout(net, net->layers[i], &np, &nb));
  PetscCall(NNPartitionLayout(net, np, nb));

  if (!net->init.reinit && net->theta) { /* only the batch size changed: keep parameters, optimizer state and counters */
    PetscInt np0, nb0;
    PetscCall(VecGetSize(net->theta, &np0));
    PetscCall(VecGetSize(net->buf, &nb0));
    /* a partitioned or sharded layer's piece changed with the process grid (NNSetProcessGrid(), NNSetModelRanks()) or
       its partition after set-up: the trained values are not where the new layout wants them */
    PetscCheck(np0 == np && nb0 == nb, comm, PETSC_ERR_ARG_WRONGSTATE, "The parameter layout on this rank changed since the last NNSetUp() (%" PetscInt_FMT " -> %" PetscInt_FMT " parameters, %" PetscInt_FMT " -> %" PetscInt_FMT " buffer entries): the process grid (NNSetProcessGrid(), NNSetModelRanks(), -nn_data_groups, -nn_model_ranks) or a layer's partition changed after set-up, and split layers cannot keep their trained values in place. Save a checkpoint (NNCheckpointSave()) before the change; after it, call NNSetSeed() (new parameters) and NNCheckpointLoad(), which reads a checkpoint into any layout", np0, np, nb0, nb);
  } else {
    PetscCall(VecDestroy(&net->theta));
    PetscCall(VecDestroy(&net->dtheta));
    PetscCall(VecDestroy(&net->buf));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, np, &net->theta));
    PetscCall(PetscObjectSetName((PetscObject)net->theta, "parameters"));
    PetscCall(VecDuplicate(net->theta, &net->dtheta));
    PetscCall(PetscObjectSetName((PetscObject)net->dtheta, "gradient"));
    net->dthetazero = PETSC_FALSE;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, nb, &net->buf));
    PetscCall(PetscObjectSetName((PetscObject)net->buf, "buffers"));

    /* initialize from a generator seeded by -nn_seed, so the initial network does not depend on call history */
    NNRandomSeed(&net->rng, (uint64_t)net->init.seed);
    PetscCall(VecGetArray(net->theta, &theta));
    PetscCall(VecGetArray(net->buf, &buf));
    PetscCall(NNSetLayerPointers(net, theta, NULL, buf));
    for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerInitializeAll(net->layers[i]));
    PetscCall(NNImportedApply(net, theta)); /* an imported model's parameters (NNLoadONNX()) */
    PetscCall(NNSetLayerPointers(net, NULL, NULL, NULL));
    PetscCall(VecRestoreArray(net->buf, &buf));
    PetscCall(VecRestoreArray(net->theta, &theta));
  }

  if (net->graph.on) { /* the activations of a graph's nodes (those of a sequential network exist already) */
    PetscCall(NNDestroyActivationVecs(net));
    net->nact = net->graph.nnodes;
    PetscCall(PetscCalloc1(net->nact, &net->act)); /* zeroed: NNDestroy() after a failed set-up frees only what exists */
    PetscCall(PetscCalloc1(net->nact, &net->dact));
    PetscCall(VecDestroy(&net->spatial.tspatial));
    PetscCall(NNCreateInputVec(net, &net->act[0]));
    PetscCall(VecDuplicate(net->act[0], &net->dact[0]));
    PetscCall(NNGraphCreateVecs(net));
  }
  if (net->dev.type == NN_DEVICE_CPU) PetscCall(NNPrecisionSetUp(net)); /* float copies of the activations (-nn_precision single) */
  else PetscCall(NNDeviceSetUp(net)); /* their device copies, in either precision (-nn_device cuda, src/nn/interface/nndevice.c) */
  if (net->init.reinit) net->init.count++; /* the trainer's optimizer state and restart cursor start over (NNGetTrainerCursor()) */
  net->init.reinit      = PETSC_FALSE;
  net->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* where a tensor lives in the network's parameter (or a parameter-shaped) array or its buffer array */
PetscInt NNTensorOffset(NNLayer l, const NNTensor *t)
{
  return (t->kind == NN_TENSOR_PARAM ? l->poff : l->boff) + t->offset;
}
