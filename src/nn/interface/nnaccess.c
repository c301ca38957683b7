/*
   Read access to a network's parts through the public API: its layers in the order they run, the
   activation Vecs around each layer, per-layer slices of the parameter, gradient and buffer arrays,
   the restart cursor and the generator state. Programs and tests use these instead of the structs,
   so the structs can change without touching them.
*/
#include <petnn/private/nnimpl.h>

/*@C
   NNGetLayers - gets the network's top-level layers in the order they run

   Not Collective

   Input Parameter:
.  net - the network

   Output Parameters:
+  n - number of layers (may be NULL)
-  layers - the layers, owned by the network (may be NULL)

   Notes:
   After `NNSetUp()` the order is the one the layers run in, which differs from the order they
   were added when `NNSetPoolBeforeActivation()` moved activations, and holds the repartitions
   `NNSetUp()` inserted (`NNSetAutoRepartition()`). Nested layers (of residual and ode blocks) are
   reached with `NNLayerGetChildren()` or by name with `NNGetLayer()`.

   Level: intermediate

.seealso: `NNGetLayer()`, `NNAddLayer()`, `NNLayerGetChildren()`, `NNGetNumMovedActivations()`, `NNSetAutoRepartition()`
@*/
PetscErrorCode NNGetLayers(NN net, PetscInt *n, const NNLayer *layers[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (n) *n = net->nlayers;
  if (layers) *layers = net->layers;
  PetscFunctionReturn(0);
}

/*@C
   NNGetNumMovedActivations - gets how many activations `NNSetUp()` moved behind the max pooling after them

   Not Collective

   Input Parameter:
.  net - the network, set up

   Output Parameter:
.  nmoved - the number of moved activation layers (0 unless `NNSetPoolBeforeActivation()` is on)

   Level: advanced

.seealso: `NNSetPoolBeforeActivation()`, `NNGetLayers()`
@*/
PetscErrorCode NNGetNumMovedActivations(NN net, PetscInt *nmoved)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(nmoved, 2);
  *nmoved = net->reorder.nmoved;
  PetscFunctionReturn(0);
}

/* the index of a top-level layer in the running order; an error names the layer otherwise */
static PetscErrorCode NNGetLayerIndex(NN net, const char name[], PetscInt *index)
{
  PetscFunctionBegin;
  PetscCheck(net->setupcalled && net->act, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Call NNSetUp() before asking for the activations of layer %s", name);
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscBool match;

    PetscCall(PetscStrcmp(((PetscObject)net->layers[i])->name, name, &match));
    if (match) {
      *index = i;
      PetscFunctionReturn(0);
    }
  }
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "The network has no top-level layer named %s", name);
}

/*@C
   NNGetActivations - gets the input and output activation Vecs of a top-level layer

   Not Collective

   Input Parameters:
+  net - the network, set up
-  layer - the layer's name

   Output Parameters:
+  x - the layer's input batch (the network input for the first layer; may be NULL)
-  y - the layer's output batch (may be NULL)

   Notes:
   The Vecs are owned by the network and hold the last forward pass (`NNForward()`, `NNLossGradient()`).
   With `NNBeginLayerCalls()` they are the arguments of `NNLayerForward()` for that layer.

   Level: advanced

.seealso: `NNGetActivationGradients()`, `NNForward()`, `NNBeginLayerCalls()`, `NNGetLayers()`
@*/
PetscErrorCode NNGetActivations(NN net, const char layer[], Vec *x, Vec *y)
{
  PetscInt i;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNGetLayerIndex(net, layer, &i));
  if (x) *x = net->graph.on ? net->act[net->graph.in[net->graph.inptr[i]]] : net->act[i]; /* a graph layer's first input */
  if (y) *y = net->act[i + 1];
  PetscFunctionReturn(0);
}

/*@C
   NNGetActivationGradients - gets the Vecs of the loss gradient with respect to a top-level layer's input and output

   Not Collective

   Input Parameters:
+  net - the network, set up
-  layer - the layer's name

   Output Parameters:
+  dx - dL/dx for the layer's input (may be NULL)
-  dy - dL/dy for the layer's output (may be NULL)

   Notes:
   Owned by the network; they hold the last backward pass (`NNLossGradient()`). With `NNBeginLayerCalls()`
   they are the arguments of `NNLayerBackward()` for that layer.

   Level: advanced

.seealso: `NNGetActivations()`, `NNLossGradient()`, `NNBeginLayerCalls()`
@*/
PetscErrorCode NNGetActivationGradients(NN net, const char layer[], Vec *dx, Vec *dy)
{
  PetscInt i;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNGetLayerIndex(net, layer, &i));
  if (dx) *dx = net->graph.on ? net->dact[net->graph.in[net->graph.inptr[i]]] : net->dact[i];
  if (dy) *dy = net->dact[i + 1];
  PetscFunctionReturn(0);
}

/*@C
   NNGetActivationVecs - gets all activation Vecs and their gradients, in the order the layers run

   Not Collective

   Input Parameter:
.  net - the network, set up

   Output Parameters:
+  n - the number of Vecs: the number of top-level layers + 1 (may be NULL)
.  act - act[0] is the network input, act[i+1] the output of layer i of `NNGetLayers()` (may be NULL)
-  dact - the gradients of the loss with respect to them (may be NULL)

   Notes:
   The index form of `NNGetActivations()` and `NNGetActivationGradients()`, for loops over all layers.
   The arrays are owned by the network.

   Level: advanced

.seealso: `NNGetActivations()`, `NNGetLayers()`, `NNBeginLayerCalls()`
@*/
PetscErrorCode NNGetActivationVecs(NN net, PetscInt *n, const Vec *act[], const Vec *dact[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(net->setupcalled && net->act, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Call NNSetUp() before NNGetActivationVecs()");
  if (n) *n = net->nlayers + 1;
  if (act) *act = net->act;
  if (dact) *dact = net->dact;
  PetscFunctionReturn(0);
}

/*@C
   NNGetBuffers - gets the network's buffer Vec (running statistics and counters such as batch norm's)

   Not Collective

   Input Parameter:
.  net - the network, set up

   Output Parameter:
.  buf - the buffers, owned by the network, in the order of the checkpoint tensors

   Level: intermediate

.seealso: `NNGetParameters()`, `NNGetGradient()`, `NNGetLayerBuffers()`
@*/
PetscErrorCode NNGetBuffers(NN net, Vec *buf)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(buf, 2);
  *buf = net->buf;
  PetscFunctionReturn(0);
}

typedef enum {
  NN_SLICE_PARAMETERS,
  NN_SLICE_GRADIENT,
  NN_SLICE_BUFFERS
} NNSliceKind;

/* the Vec of one kind, a layer's offset and length in it (its own slice, children excluded) */
static PetscErrorCode NNGetLayerSlice(NN net, const char name[], NNSliceKind kind, Vec *v, PetscInt *off, PetscInt *n)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(net->setupcalled, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Call NNSetUp() before asking for the arrays of layer %s", name);
  PetscCall(NNGetLayer(net, name, &l));
  PetscCheck(l, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "The network has no layer named %s", name);
  *v   = kind == NN_SLICE_PARAMETERS ? net->theta : (kind == NN_SLICE_GRADIENT ? net->dtheta : net->buf);
  *off = kind == NN_SLICE_BUFFERS ? l->boff : l->poff;
  *n   = kind == NN_SLICE_BUFFERS ? l->nbuf : l->nparam;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNGetLayerArray(NN net, const char name[], NNSliceKind kind, PetscInt *n, PetscScalar *a[])
{
  Vec          v   = NULL;
  PetscInt     off = 0, len = 0;
  PetscScalar *base;

  PetscFunctionBegin;
  PetscCall(NNGetLayerSlice(net, name, kind, &v, &off, &len));
  PetscCall(VecGetArray(v, &base));
  if (n) *n = len;
  *a = base + off;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNRestoreLayerArray(NN net, const char name[], NNSliceKind kind, PetscScalar *a[])
{
  Vec          v   = NULL;
  PetscInt     off = 0, len = 0;
  PetscScalar *base;

  PetscFunctionBegin;
  PetscCall(NNGetLayerSlice(net, name, kind, &v, &off, &len));
  base = *a - off;
  PetscCall(VecRestoreArray(v, &base));
  *a = NULL;
  PetscFunctionReturn(0);
}

/*@C
   NNGetLayerParameters - gets a layer's slice of the network's parameter array

   Not Collective

   Input Parameters:
+  net - the network, set up
-  layer - the layer's name (top-level or nested)

   Output Parameters:
+  n - the length of the slice (may be NULL)
-  a - the layer's parameters, its tensors one after the other in PyTorch order and shapes

   Notes:
   The slice is the layer's own tensors (a residual or ode block's inner layers have their own).
   Return it with `NNRestoreLayerParameters()`; writes change the network's parameters.

   Level: intermediate

.seealso: `NNRestoreLayerParameters()`, `NNGetLayerGradient()`, `NNGetLayerBuffers()`, `NNGetParameters()`
@*/
PetscErrorCode NNGetLayerParameters(NN net, const char layer[], PetscInt *n, PetscScalar *a[])
{
  PetscFunctionBegin;
  PetscCall(NNGetLayerArray(net, layer, NN_SLICE_PARAMETERS, n, a));
  PetscFunctionReturn(0);
}

/*@C
   NNRestoreLayerParameters - returns the slice from `NNGetLayerParameters()`

   Not Collective

   Input Parameters:
+  net - the network
.  layer - the layer's name
-  a - the slice; set to NULL

   Level: intermediate

.seealso: `NNGetLayerParameters()`
@*/
PetscErrorCode NNRestoreLayerParameters(NN net, const char layer[], PetscScalar *a[])
{
  PetscFunctionBegin;
  PetscCall(NNRestoreLayerArray(net, layer, NN_SLICE_PARAMETERS, a));
  PetscFunctionReturn(0);
}

/*@C
   NNGetLayerGradient - gets a layer's slice of the network's parameter-gradient array

   Not Collective

   Input Parameters:
+  net - the network, set up
-  layer - the layer's name (top-level or nested)

   Output Parameters:
+  n - the length of the slice (may be NULL)
-  a - the gradient of the loss with respect to the layer's parameters, laid out as `NNGetLayerParameters()`

   Level: intermediate

.seealso: `NNRestoreLayerGradient()`, `NNGetLayerParameters()`, `NNGetGradient()`
@*/
PetscErrorCode NNGetLayerGradient(NN net, const char layer[], PetscInt *n, PetscScalar *a[])
{
  PetscFunctionBegin;
  PetscCall(NNGetLayerArray(net, layer, NN_SLICE_GRADIENT, n, a));
  PetscFunctionReturn(0);
}

/*@C
   NNRestoreLayerGradient - returns the slice from `NNGetLayerGradient()`

   Not Collective

   Input Parameters:
+  net - the network
.  layer - the layer's name
-  a - the slice; set to NULL

   Level: intermediate

.seealso: `NNGetLayerGradient()`
@*/
PetscErrorCode NNRestoreLayerGradient(NN net, const char layer[], PetscScalar *a[])
{
  PetscFunctionBegin;
  PetscCall(NNRestoreLayerArray(net, layer, NN_SLICE_GRADIENT, a));
  PetscFunctionReturn(0);
}

/*@C
   NNGetLayerBuffers - gets a layer's slice of the network's buffer array (running statistics, counters)

   Not Collective

   Input Parameters:
+  net - the network, set up
-  layer - the layer's name (top-level or nested)

   Output Parameters:
+  n - the length of the slice (may be NULL)
-  a - the layer's buffers, its buffer tensors one after the other (batch norm: running_mean, running_var, num_batches_tracked)

   Level: intermediate

.seealso: `NNRestoreLayerBuffers()`, `NNGetBuffers()`, `NNGetLayerParameters()`
@*/
PetscErrorCode NNGetLayerBuffers(NN net, const char layer[], PetscInt *n, PetscScalar *a[])
{
  PetscFunctionBegin;
  PetscCall(NNGetLayerArray(net, layer, NN_SLICE_BUFFERS, n, a));
  PetscFunctionReturn(0);
}

/*@C
   NNRestoreLayerBuffers - returns the slice from `NNGetLayerBuffers()`

   Not Collective

   Input Parameters:
+  net - the network
.  layer - the layer's name
-  a - the slice; set to NULL

   Level: intermediate

.seealso: `NNGetLayerBuffers()`
@*/
PetscErrorCode NNRestoreLayerBuffers(NN net, const char layer[], PetscScalar *a[])
{
  PetscFunctionBegin;
  PetscCall(NNRestoreLayerArray(net, layer, NN_SLICE_BUFFERS, a));
  PetscFunctionReturn(0);
}

/*@C
   NNBeginLayerCalls - lends the network's parameter, gradient and buffer arrays to its layers, so that
   `NNLayerForward()` and `NNLayerBackward()` can be called one layer at a time

   Not Collective

   Input Parameter:
.  net - the network, set up

   Notes:
   `NNForward()` and `NNLossGradient()` do this themselves; this pair is for programs that drive single
   layers (layer tests, finite-difference and adjoint checks), with the Vecs of `NNGetActivations()` and
   `NNGetActivationGradients()`. `NNLayerBackward()` adds into the gradient: zero it first where needed.
   Call `NNEndLayerCalls()` before any other use of the network.

   Level: advanced

.seealso: `NNEndLayerCalls()`, `NNGetActivations()`, `NNLayerForward()`, `NNLayerBackward()`
@*/
PetscErrorCode NNBeginLayerCalls(NN net)
{
  PetscScalar *th, *dth, *buf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(net->setupcalled, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Call NNSetUp() before NNBeginLayerCalls()");
  PetscCall(VecGetArray(net->theta, &th));
  PetscCall(VecGetArray(net->dtheta, &dth));
  PetscCall(VecGetArray(net->buf, &buf));
  PetscCall(NNSetLayerPointers(net, th, dth, buf));
  PetscFunctionReturn(0);
}

/*@C
   NNEndLayerCalls - takes back the arrays lent by `NNBeginLayerCalls()`

   Not Collective

   Input Parameter:
.  net - the network

   Level: advanced

.seealso: `NNBeginLayerCalls()`
@*/
PetscErrorCode NNEndLayerCalls(NN net)
{
  PetscScalar *th, *dth, *buf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetLayerPointers(net, NULL, NULL, NULL));
  PetscCall(VecRestoreArray(net->buf, &buf));
  PetscCall(VecRestoreArray(net->dtheta, &dth));
  PetscCall(VecRestoreArray(net->theta, &th));
  PetscFunctionReturn(0);
}

/*@C
   NNGetRandomState - gets the state of the network's random-number generator

   Not Collective

   Input Parameter:
.  net - the network

   Output Parameter:
.  state - the NN_RANDOM_STATE_SIZE words of the xoshiro256** state (bit for bit; checkpoints store them)

   Notes:
   Two networks whose states are equal draw the same dropout masks and shuffles from here on.

   Level: advanced

.seealso: `NNSetSeed()`, `NNGetCursor()`, `NNCheckpointSave()`
@*/
PetscErrorCode NNGetRandomState(NN net, PetscInt64 state[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(sizeof(net->rng.s) == NN_RANDOM_STATE_SIZE * sizeof(PetscInt64), PETSC_COMM_SELF, PETSC_ERR_PLIB, "NN_RANDOM_STATE_SIZE does not match the generator");
  PetscCall(PetscMemcpy(state, net->rng.s, sizeof(net->rng.s)));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerGetChildren - gets the layers nested in a layer (the inner layers of a residual or ode block)

   Not Collective

   Input Parameter:
.  layer - the layer

   Output Parameters:
+  n - the number of nested layers, 0 for plain layers (may be NULL)
-  children - the nested layers, owned by the layer (may be NULL)

   Level: intermediate

.seealso: `NNLayerResidualAddLayer()`, `NNGetLayers()`
@*/
PetscErrorCode NNLayerGetChildren(NNLayer layer, PetscInt *n, const NNLayer *children[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(layer, NNLAYER_CLASSID, 1);
  if (n) *n = layer->nchildren;
  if (children) *children = layer->children;
  PetscFunctionReturn(0);
}
