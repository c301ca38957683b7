/*
   Repartitions NNSetUp() inserts between layers whose layouts differ.

   A spatial activation is a DMDA global Vec: each rank holds its subdomain of every sample,
   channels-last with the batch in the dof. Layers with passes of their own (conv, pool, norms,
   residual and ode blocks: ops forwardvec/createoutputvec) take it; array-level layers take it only
   when they are pointwise (activations, dropout), since then the rank's local entries are as good as
   whole samples. A dense layer needs whole samples in PyTorch order on every rank: the layout of a
   spatial_flatten layer's output. That layer is the repartition DMDA-decomposed -> replicated flat
   samples (each rank writes its subdomain, a sum over the ranks; adjoint: each rank takes its
   subdomain of the output gradient), adjoint-tested in tests/spatial.c and
   tests/model_parallel_repartition.c.

   So where a sequential network's layer cannot take the spatial activation before it, NNSetUp()
   inserts a spatial_flatten named "<layer>_repartition" before it: a real layer of the running order
   (NNView(), NNGetLayers(), NNGetLayer(), the layer indices of the backward callbacks, its own
   NNFwd_spatial_flatten/NNBwd_spatial_flatten events), with no parameters, so the parameter layout,
   checkpoints and exported state_dicts do not change. The network owns the inserted layers here,
   apart from the layers it was given (net->added), and reuses each for the same consumer when it is
   set up again, so set-ups never insert twice.

   Which layers cannot take it is found by setting the layer up on flat samples (what it gets after a
   repartition, and what every array-level layer accepts): one with parameters, children or another
   output size is not pointwise; a pointwise one that changes the sample's shape on the spatial shape
   (flatten) would leave channels-last entries under a PyTorch-order shape, so it gets one too.
*/
#include <petnn/private/nnimpl.h>

/*@
   NNSetAutoRepartition - inserts a spatial_flatten layer wherever a layer cannot take the spatial (DMDA)
   activation before it

   Logically Collective

   Input Parameters:
+  net - the network
-  flg - `PETSC_TRUE` (default) to insert, `PETSC_FALSE` to refuse such networks with an error

   Options Database Key:
.  -nn_auto_repartition <bool> - the same

   Notes:
   Convolutions and pooling split each sample over the ranks (a `DMDA`); a dense layer needs whole
   samples in PyTorch order, replicated on the ranks. Between the two, `NNSetUp()` inserts the
   repartition a `NNLAYERSPATIALFLATTEN` layer does, named "<layer>_repartition" after the layer it
   feeds: "fc1_repartition" before "fc1". It is an ordinary layer of the running order: `NNView()` lists
   it with a note that it was inserted, `NNGetLayers()` and `NNGetLayer()` return it, `-log_view` shows
   its `NNFwd_spatial_flatten` and `NNBwd_spatial_flatten` events. It has no parameters, so parameters,
   checkpoints and the PyTorch state_dict are those of the network without it, and the network computes
   exactly what it computes with the spatial_flatten layer written in that place.

   A layer gets one when it has no passes of its own on `DMDA` Vecs and is not pointwise (it has
   parameters or changes the number of entries, as dense and batchnorm1d), or reshapes the sample (flatten).
   Pointwise layers (activations, dropout) run on the spatial activation as they are. Only the top-level
   layers of a sequential network get one; in graph networks (`NNSetType()`) and inside residual and ode
   blocks, write the spatial_flatten layer.

   Level: intermediate

.seealso: `NNSetUp()`, `NNView()`, `NNLAYERSPATIALFLATTEN`, `NNGetAutoRepartition()`
@*/
PetscErrorCode NNSetAutoRepartition(NN net, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveBool(net, flg, 2);
  if (net->repart.on != flg) net->setupcalled = PETSC_FALSE; /* the parameters stay: inserted layers have none */
  net->repart.on = flg;
  PetscFunctionReturn(0);
}

/*@
   NNGetAutoRepartition - whether `NNSetUp()` inserts repartitions (`NNSetAutoRepartition()`)

   Not Collective

   Input Parameter:
.  net - the network

   Output Parameter:
.  flg - `PETSC_TRUE` if it does

   Level: intermediate

.seealso: `NNSetAutoRepartition()`
@*/
PetscErrorCode NNGetAutoRepartition(NN net, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(flg, 2);
  *flg = net->repart.on;
  PetscFunctionReturn(0);
}

/* whether l is a repartition NNSetUp() inserted */
PetscBool NNIsRepartition(NN net, NNLayer l)
{
  for (PetscInt k = 0; k < net->repart.n; k++)
    if (net->repart.layers[k] == l) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* a set-up starts: no inserted layer is used yet */
PetscErrorCode NNRepartitionBegin(NN net)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < net->repart.n; k++) net->repart.used[k] = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* a set-up ends: the layers it did not insert again go (their consumers now get a layout they take) */
PetscErrorCode NNRepartitionEnd(NN net)
{
  PetscInt m = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < net->repart.n; k++) {
    if (!net->repart.used[k]) {
      PetscCall(NNLayerDestroy(&net->repart.layers[k]));
      continue;
    }
    net->repart.layers[m]   = net->repart.layers[k];
    net->repart.consumer[m] = net->repart.consumer[k];
    net->repart.used[m]     = PETSC_TRUE;
    m++;
  }
  net->repart.n = m;
  PetscFunctionReturn(0);
}

PetscErrorCode NNRepartitionDestroy(NN net)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < net->repart.n; k++) PetscCall(NNLayerDestroy(&net->repart.layers[k]));
  PetscCall(PetscFree3(net->repart.layers, net->repart.consumer, net->repart.used));
  net->repart.n        = 0;
  net->repart.capacity = 0;
  PetscFunctionReturn(0);
}

/* puts the repartition of consumer net->layers[i] at position i of the running order: the one an earlier set-up made, or a new one */
static PetscErrorCode NNRepartitionInsert(NN net, PetscInt i)
{
  NNLayer     consumer = net->layers[i], r = NULL, other = NULL;
  const char *pre      = ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "";
  char        name[256], prefix[512];
  PetscInt    k;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s_repartition", ((PetscObject)consumer)->name));
  /* the running order holds the given layers and the repartitions inserted so far: a layer of that name there is another one */
  PetscCall(NNGetLayer(net, name, &other));
  PetscCheck(!other, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s (%s) cannot take the spatial (DMDA) activation before it, and the %s layer NNSetUp() would insert before it is named %s, which another layer of the network is: rename that layer, or put a %s layer before %s yourself (-%snn_auto_repartition)", ((PetscObject)consumer)->name, ((PetscObject)consumer)->type_name, NNLAYERSPATIALFLATTEN, name, NNLAYERSPATIALFLATTEN, ((PetscObject)consumer)->name, pre);
  for (k = 0; k < net->repart.n; k++)
    if (net->repart.consumer[k] == consumer) {
      r = net->repart.layers[k];
      break;
    }
  if (!r) {
    if (net->repart.n == net->repart.capacity) {
      NNLayer   *layers, *consumers;
      PetscBool *used;
      PetscInt   cap = PetscMax(4, 2 * net->repart.capacity);
      PetscCall(PetscMalloc3(cap, &layers, cap, &consumers, cap, &used));
      if (net->repart.n) {
        PetscCall(PetscArraycpy(layers, net->repart.layers, net->repart.n));
        PetscCall(PetscArraycpy(consumers, net->repart.consumer, net->repart.n));
        PetscCall(PetscArraycpy(used, net->repart.used, net->repart.n));
      }
      PetscCall(PetscFree3(net->repart.layers, net->repart.consumer, net->repart.used));
      net->repart.layers   = layers;
      net->repart.consumer = consumers;
      net->repart.used     = used;
      net->repart.capacity = cap;
    }
    PetscCall(NNLayerCreateNamed(NNGetLayerComm(net), pre, NNLAYERSPATIALFLATTEN, name, &r));
    r->rng                  = &net->rng;
    net->repart.layers[k]   = r;
    net->repart.consumer[k] = consumer;
    net->repart.n++;
  }
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s%s_", pre, name)); /* the network's prefix may have changed; it reads no options */
  PetscCall(NNLayerSetOptionsPrefix(r, prefix));
  net->repart.used[k] = PETSC_TRUE;
  PetscCall(PetscArraymove(net->layers + i + 1, net->layers + i, net->nlayers - i)); /* NNAddLayer() left room for one before each layer */
  net->layers[i] = r;
  net->nlayers++;
  PetscFunctionReturn(0);
}

/*
   Before NNSetUp() sets up layer i of a sequential network for samples of shape s in the layout of x:
   if x is spatial (a DMDA Vec) and the layer cannot take it, inserts a repartition at i, or, with
   -nn_auto_repartition false, refuses with the error that names the option. May set the layer up on
   the way (NNSetUp() sets it up again for its true input).
*/
PetscErrorCode NNRepartitionSetUpLayer(NN net, PetscInt i, const NNShape *s, Vec x)
{
  NNLayer     l = net->layers[i];
  const char *from = i ? ((PetscObject)net->layers[i - 1])->name : "the network input";
  DM          dm;
  PetscBool   isda, need;
  NNShape     flat;
  PetscInt    size = NNShapeSize(s);

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  if (!dm) PetscFunctionReturn(0);
  PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
  if (!isda || l->ops->forwardvec || l->ops->createoutputvec || l->ops->forwardmulti) PetscFunctionReturn(0); /* its own passes take the layouts they know */
  /* on flat samples, what a repartition would give it: parameters, children or another output size show it is not pointwise */
  PetscCall(NNShapeSet(&flat, 1, &size));
  PetscCall(NNSetUpTopLayer(net, l, &flat, "a repartition to flat samples (-nn_auto_repartition)"));
  need = (PetscBool)!NNLayerIsPointwise(l);
  if (!need && net->repart.on) { /* pointwise: a reshape (flatten) would put a PyTorch-order shape on channels-last entries */
    PetscCall(NNSetUpTopLayer(net, l, s, from));
    need = (PetscBool)(l->outshape.ndim != s->ndim);
    for (PetscInt d = 0; d < s->ndim && !need; d++) need = (PetscBool)(l->outshape.dim[d] != s->dim[d]);
  }
  if (!need) PetscFunctionReturn(0);
  PetscCheck(net->repart.on, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s (%s) cannot take the spatial (DMDA) activation of %s: only pointwise layers (no parameters, as many outputs as inputs) can; put a %s layer before it, or let the network insert one (-%snn_auto_repartition true, NNSetAutoRepartition())", ((PetscObject)l)->name, ((PetscObject)l)->type_name, from, NNLAYERSPATIALFLATTEN, ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "");
  PetscCall(NNRepartitionInsert(net, i));
  PetscFunctionReturn(0);
}

/* NNView(): why an inserted layer is there */
PetscErrorCode NNRepartitionView(NN net, NNLayer l, PetscViewer viewer)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < net->repart.n; k++) {
    NNLayer c = net->repart.consumer[k];
    if (net->repart.layers[k] != l) continue;
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PetscViewerASCIIPrintf(viewer, "inserted automatically: %s (%s) cannot take the spatial (DMDA) activation before it (-%snn_auto_repartition)\n", ((PetscObject)c)->name, ((PetscObject)c)->type_name, ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : ""));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  }
  PetscFunctionReturn(0);
}
