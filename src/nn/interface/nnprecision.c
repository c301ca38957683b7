/*
   Single precision (-nn_precision single): the precision is a property of the activations, not a fork of the
   network. The network keeps a float copy of every activation and activation gradient beside act[] and dact[],
   and a float working copy of the parameters, made at the start of every pass. Layer types with
   single-precision passes (ops forwardsingle/backwardsingle) run on the float arrays; the others run their
   double passes on the double Vecs, converted from float at their input and rounded to float at their output,
   so every activation a layer hands on holds float values either way. The master parameters, the gradient
   Vec, the optimizer state, checkpoints and TAO stay double: a float layer's parameter gradient is added into
   the double gradient as soon as the layer is done (the data-parallel reducers then sum it as before), and
   the loss is evaluated in double on the output converted back.

   Graph networks (-nn_type graph) follow the same design node by node: every node keeps its float copy, a
   single-input layer runs its float passes or its double passes on converted activations as above (a node
   converts to double once, when the first layer that needs it reads it), and the multi-input and multi-output
   layers (add, concat, split) have float passes of their own, being pure data movement and sums. A node read by
   several layers gets their gradients summed in float, in the order and wiring of the double pass (the first
   reader in backward order writes it, the others a float scratch array then added), as the device does in single
   precision (src/nn/interface/nndevicegraph_cuda.c); the network input's gradient is summed in double, since it
   leaves the network in double. The parameters' float copy, the hand-off of a float layer's gradient and the
   layerdone calls are those of the sequential path, the latter where the double graph pass makes them.
*/
#include <petnn/private/nnimpl.h>

const char *const NNPrecisions[] = {"double", "single", "NNPrecision", "NN_PRECISION_", NULL};

/*@
   NNSetPrecision - sets the precision the network computes its activations and their gradients in

   Logically Collective

   Input Parameters:
+  net - the network
-  prec - `NN_PRECISION_DOUBLE` (the default) or `NN_PRECISION_SINGLE`

   Options Database Key:
.  -nn_precision <double,single> - the precision

   Notes:
   In single precision the activations, their gradients and a working copy of the parameters are float;
   GEMMs go through sgemm. The parameters themselves, their gradient (`NNGetGradient()`), the optimizer
   state, checkpoints and TAO stay in the double Vecs, so checkpoints load in either precision and in
   PyTorch. Losses are evaluated in double. Layer types without single-precision passes of their own run
   their double passes on activations converted at their boundaries; `NNView()` lists which layers do.
   Graph networks (`NNTYPEGRAPH`) run in single precision too: `NNLAYERADD`, `NNLAYERCONCAT` and `NNLAYERSPLIT` move and
   sum float activations, and an activation read by several layers gets their gradients summed in float.

   Level: intermediate

.seealso: `NNGetPrecision()`, `NNView()`
@*/
PetscErrorCode NNSetPrecision(NN net, NNPrecision prec)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(net, prec, 2);
  PetscCheck(prec == NN_PRECISION_DOUBLE || prec == NN_PRECISION_SINGLE, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Unknown precision %d: valid are double and single", (int)prec);
  if (net->prec.type != prec) net->setupcalled = PETSC_FALSE;
  net->prec.type = prec;
  PetscFunctionReturn(0);
}

/*@
   NNGetPrecision - gets the precision set with `NNSetPrecision()`

   Not Collective

   Level: intermediate

.seealso: `NNSetPrecision()`
@*/
PetscErrorCode NNGetPrecision(NN net, NNPrecision *prec)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidPointer(prec, 2);
  *prec = net->prec.type;
  PetscFunctionReturn(0);
}

/* frees the float arrays (NNSetUp() remakes them; NNDestroy()) */
PetscErrorCode NNPrecisionReset(NN net)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nact && net->prec.act; i++) {
    PetscCall(PetscFree(net->prec.act[i]));
    PetscCall(PetscFree(net->prec.dact[i]));
  }
  PetscCall(PetscFree(net->prec.act));
  PetscCall(PetscFree(net->prec.dact));
  PetscCall(PetscFree(net->prec.len));
  PetscCall(PetscFree(net->prec.theta));
  PetscCall(PetscFree(net->prec.dtheta));
  for (PetscInt j = 0; j < net->prec.nscratch && net->prec.scratch; j++) PetscCall(PetscFree(net->prec.scratch[j]));
  PetscCall(PetscFree(net->prec.scratch));
  PetscCall(PetscFree(net->prec.dbl));
  PetscCall(PetscFree(net->prec.work));
  net->prec.nscratch = 0;
  PetscFunctionReturn(0);
}

/* after NNSetUp() made the activation Vecs: the float copies beside them */
PetscErrorCode NNPrecisionSetUp(NN net)
{
  PetscInt np, maxp = 0;

  PetscFunctionBegin;
  if (net->prec.type == NN_PRECISION_DOUBLE) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer l = net->layers[i];
    PetscCheck(!l->ops->forwardmulti || NNLayerHasMultiSinglePasses(l), PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "Layer %s (%s) has no single-precision passes: use -nn_precision double", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  }
  PetscCall(PetscCalloc1(net->nact, &net->prec.act));
  PetscCall(PetscCalloc1(net->nact, &net->prec.dact));
  PetscCall(PetscCalloc1(net->nact, &net->prec.len));
  for (PetscInt i = 0; i < net->nact; i++) {
    PetscCall(VecGetLocalSize(net->act[i], &net->prec.len[i]));
    PetscCall(PetscMalloc1(net->prec.len[i], &net->prec.act[i]));
    PetscCall(PetscMalloc1(net->prec.len[i], &net->prec.dact[i]));
  }
  PetscCall(VecGetLocalSize(net->theta, &np));
  PetscCall(PetscMalloc1(np, &net->prec.theta));
  for (PetscInt i = 0; i < net->nlayers; i++) { /* a layer's slice, its children's included (ODE blocks) */
    PetscCall(NNLayerGetNumParameters(net->layers[i], &np));
    maxp = PetscMax(maxp, np);
  }
  PetscCall(PetscMalloc1(maxp, &net->prec.dtheta));
  if (net->graph.on) { /* the float scratch arrays of the nodes read by several layers, as the double pass's Vecs */
    PetscCall(PetscCalloc1(net->graph.nscratch, &net->prec.scratch));
    net->prec.nscratch = net->graph.nscratch;
    for (PetscInt j = 0; j < net->prec.nscratch; j++) PetscCall(PetscMalloc1(net->prec.len[net->graph.scratchnode[j]], &net->prec.scratch[j]));
    PetscCall(PetscCalloc1(net->nact, &net->prec.dbl));
    PetscCall(PetscCalloc1(4 * net->graph.maxio, &net->prec.work));
  }
  PetscFunctionReturn(0);
}

/* one line of NNView(): the precision and, in single, which layers run their own float passes */
PetscErrorCode NNPrecisionView(NN net, PetscViewer v)
{
  char     native[1024] = "", converted[1024] = "";
  PetscInt nn = 0, nc = 0;

  PetscFunctionBegin;
  if (net->prec.type == NN_PRECISION_DOUBLE) {
    PetscCall(PetscViewerASCIIPrintf(v, "precision: double\n"));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer   l   = net->layers[i];
    PetscBool own = (PetscBool)(NNLayerHasSinglePasses(l) || NNLayerHasMultiSinglePasses(l));
    char     *s   = own ? native : converted;
    if (own ? nn++ : nc++) PetscCall(PetscStrlcat(s, ", ", 1024));
    PetscCall(PetscStrlcat(s, ((PetscObject)l)->name, 1024));
  }
  PetscCall(PetscViewerASCIIPrintf(v, "precision: single (activations, their gradients and a parameter copy in float; parameters, optimizer state, checkpoints in double)\n"));
  PetscCall(PetscViewerASCIIPushTab(v));
  PetscCall(PetscViewerASCIIPrintf(v, "float passes: %s\n", nn ? native : "none"));
  PetscCall(PetscViewerASCIIPrintf(v, "double passes on converted activations: %s\n", nc ? converted : "none"));
  PetscCall(PetscViewerASCIIPopTab(v));
  PetscFunctionReturn(0);
}

static inline void NNToFloat(PetscInt m, const PetscScalar *a, float *s)
{
  for (PetscInt k = 0; k < m; k++) s[k] = (float)a[k];
}

static inline void NNToDouble(PetscInt m, const float *s, PetscScalar *a)
{
  for (PetscInt k = 0; k < m; k++) a[k] = s[k];
}

/* rounds a double activation to float in place and keeps the float copy */
static PetscErrorCode NNRoundVec(PetscInt m, Vec x, float *s)
{
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArray(x, &a));
  for (PetscInt k = 0; k < m; k++) {
    s[k] = (float)a[k];
    a[k] = s[k];
  }
  PetscCall(VecRestoreArray(x, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNVecToFloat(PetscInt m, Vec x, float *s)
{
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(x, &a));
  NNToFloat(m, a, s);
  PetscCall(VecRestoreArrayRead(x, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNFloatToVec(PetscInt m, const float *s, Vec x)
{
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArrayWrite(x, &a));
  NNToDouble(m, s, a);
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscFunctionReturn(0);
}

/* the entries of activation i a pass over n samples uses: n samples of a sequential batch, all local
   entries of a spatial (DMDA) one, whose pointwise layers run over every batch slot */
static PetscErrorCode NNSingleLength(NN net, PetscInt i, PetscInt n, Vec x, PetscInt *m)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  *m = dm ? net->prec.len[i] : n * (net->prec.len[i] / net->nbatch);
  PetscFunctionReturn(0);
}

/* the float parameter copy, made anew for every pass: the parameter Vec's state cannot tell when other ranks changed
   the parameters (data-parallel groups share them in an MPI shared-memory window, tournaments swap them) */
static PetscErrorCode NNSingleParameters(NN net)
{
  PetscInt np;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(net->theta, &np));
  PetscCall(NNVecToFloat(np, net->theta, net->prec.theta));
  for (PetscInt i = 0; i < net->nlayers; i++) {
    net->layers[i]->stheta  = net->prec.theta + net->layers[i]->poff;
    net->layers[i]->sdtheta = net->prec.dtheta;
  }
  PetscFunctionReturn(0);
}

/* layer i of a sequential network in single precision; x0 is the (staged, double) network input */
static PetscErrorCode NNSingleForwardLayer(NN net, PetscInt i, PetscInt n, Vec x0)
{
  NNLayer l = net->layers[i];
  Vec     x = i ? net->act[i] : x0;
  PetscInt m = 0;

  PetscFunctionBegin;
  if (NNLayerHasSinglePasses(l)) {
    PetscCall(NNLayerForwardSingle(l, n, x, net->prec.act[i], net->prec.act[i + 1]));
    PetscFunctionReturn(0);
  }
  if (i && NNLayerHasSinglePasses(net->layers[i - 1])) { /* the input exists in float only */
    PetscCall(NNSingleLength(net, i, n, x, &m));
    PetscCall(NNFloatToVec(m, net->prec.act[i], x));
  }
  PetscCall(NNLayerForward(l, n, x, net->act[i + 1]));
  PetscCall(NNSingleLength(net, i + 1, n, net->act[i + 1], &m));
  PetscCall(NNRoundVec(m, net->act[i + 1], net->prec.act[i + 1]));
  PetscFunctionReturn(0);
}

/*
   NNSingleForwardLayers - the forward pass of a sequential network in single precision, the parameter arrays
   distributed; the output is left in act[nlayers] (double, float values) for the loss and the caller
*/
PetscErrorCode NNSingleForwardLayers(NN net, PetscInt n, Vec x0)
{
  PetscBool shard = (PetscBool)(net->training && (net->pass.rngshard[0] || net->pass.rngshard[1]));
  PetscInt  m = 0, L = net->nlayers;

  PetscFunctionBegin;
  PetscCall(NNSingleParameters(net));
  PetscCall(NNSingleLength(net, 0, n, x0, &m));
  PetscCall(NNVecToFloat(m, x0, net->prec.act[0]));
  PetscCall(NNThreadsBegin()); /* OpenBLAS's workers stay asleep: PetNN threads the pass (src/sys/threads.c) */
  for (PetscInt i = 0; i < L; i++) {
    PetscInt draws = 0;
    if (shard) PetscCall(NNLayerGetRandomDraws(net->layers[i], &draws));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[0] * draws);
    PetscCall(NNSingleForwardLayer(net, i, n, x0));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[1] * draws);
  }
  PetscCall(NNThreadsEnd());
  if (NNLayerHasSinglePasses(net->layers[L - 1])) {
    PetscCall(NNSingleLength(net, L, n, net->act[L], &m));
    PetscCall(NNFloatToVec(m, net->prec.act[L], net->act[L]));
  }
  PetscFunctionReturn(0);
}

/* adds a float layer's parameter gradient into its slice (children included) of the double gradient */
static PetscErrorCode NNSingleAddGradient(NNLayer l, PetscInt np, PetscScalar *dtheta)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < np; k++) dtheta[l->poff + k] += l->sdtheta[k];
  PetscFunctionReturn(0);
}

static PetscErrorCode NNSingleBackwardLayer(NN net, PetscInt i, PetscInt n, Vec x0, Vec dx0, PetscBool need, PetscScalar *dtheta)
{
  NNLayer  l = net->layers[i];
  Vec      x = i ? net->act[i] : x0, dx = need ? (i ? net->dact[i] : dx0) : NULL;
  PetscInt m = 0, np;

  PetscFunctionBegin;
  if (NNLayerHasSinglePasses(l)) {
    PetscCall(NNLayerGetNumParameters(l, &np));
    PetscCall(PetscArrayzero(l->sdtheta, np));
    PetscCall(NNLayerBackwardSingle(l, n, x, net->prec.act[i], net->prec.act[i + 1], net->prec.dact[i + 1], need ? net->prec.dact[i] : NULL));
    PetscCall(NNSingleAddGradient(l, np, dtheta));
    if (need && !i) { /* the network input's gradient is double */
      PetscCall(NNSingleLength(net, 0, n, dx0, &m));
      PetscCall(NNFloatToVec(m, net->prec.dact[0], dx0));
    }
    PetscFunctionReturn(0);
  }
  if (i + 1 < net->nlayers && NNLayerHasSinglePasses(net->layers[i + 1])) { /* the output gradient exists in float only */
    PetscCall(NNSingleLength(net, i + 1, n, net->dact[i + 1], &m));
    PetscCall(NNFloatToVec(m, net->prec.dact[i + 1], net->dact[i + 1]));
  }
  PetscCall(NNLayerBackward(l, n, x, net->act[i + 1], net->dact[i + 1], dx));
  if (dx && i) {
    PetscCall(NNSingleLength(net, i, n, dx, &m));
    PetscCall(NNRoundVec(m, dx, net->prec.dact[i]));
  }
  PetscFunctionReturn(0);
}

/*
   NNSingleBackward - the backward pass of a sequential network in single precision from the loss gradient
   dact[nlayers] (double) down to dx0 (NULL: not needed), calling layerdone after each layer as the double pass
   does; need[i]: layer i computes its input gradient
*/
PetscErrorCode NNSingleBackward(NN net, PetscInt n, Vec x0, Vec dx0, PetscScalar *dtheta, PetscBool need[])
{
  NNBackwardCallbacks *cb = &net->pass.backward;
  PetscInt             L  = net->nlayers, m = 0;

  PetscFunctionBegin;
  PetscCall(NNSingleLength(net, L, n, net->dact[L], &m));
  PetscCall(NNRoundVec(m, net->dact[L], net->prec.dact[L]));
  PetscCall(NNThreadsBegin());
  for (PetscInt i = L - 1; i >= 0; i--) {
    PetscCall(NNSingleBackwardLayer(net, i, n, x0, dx0, need[i], dtheta));
    if (cb->layerdone) PetscCall((*cb->layerdone)(net, i, dtheta, cb->ctx)); /* data parallel: all-reduce the finished gradient buckets */
  }
  PetscCall(NNThreadsEnd());
  PetscFunctionReturn(0);
}

/* node v's double Vec x (an activation or its gradient) gets the float values s unless it holds them (prec.dbl[v]) */
static PetscErrorCode NNSingleGraphToDouble(NN net, PetscInt v, PetscInt n, Vec x, const float *s)
{
  PetscInt m = 0;

  PetscFunctionBegin;
  if (net->prec.dbl[v]) PetscFunctionReturn(0);
  PetscCall(NNSingleLength(net, v, n, x, &m));
  PetscCall(NNFloatToVec(m, s, x));
  net->prec.dbl[v] = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* layer i of a graph network in single precision: a multi layer's or the layer's own float passes on the float
   nodes, else its double passes on its input converted (once per node) and its output rounded */
static PetscErrorCode NNSingleGraphForwardLayer(NN net, PetscInt i, PetscInt n, Vec x0)
{
  NNLayer  l  = net->layers[i];
  PetscInt k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0, p0 = net->graph.outptr[i], nout = net->graph.outptr[i + 1] - p0;
  PetscInt v = net->graph.in[k0], m = 0;

  PetscFunctionBegin;
  if (l->ops->forwardmulti) {
    Vec    *x = net->graph.work, *y = x + net->graph.maxio;
    float **xs = net->prec.work, **ys = xs + net->graph.maxio;
    for (PetscInt k = 0; k < nin; k++) {
      x[k]  = NNGraphAct(net, net->graph.in[k0 + k], x0);
      xs[k] = net->prec.act[net->graph.in[k0 + k]];
    }
    for (PetscInt p = 0; p < nout; p++) {
      y[p]                                  = net->act[net->graph.out[p0 + p]];
      ys[p]                                 = net->prec.act[net->graph.out[p0 + p]];
      net->prec.dbl[net->graph.out[p0 + p]] = PETSC_FALSE;
    }
    PetscCall(NNLayerForwardMultiSingle(l, n, nin, x, (const float *const *)xs, nout, y, ys));
  } else if (NNLayerHasSinglePasses(l)) {
    PetscCall(NNLayerForwardSingle(l, n, NNGraphAct(net, v, x0), net->prec.act[v], net->prec.act[i + 1]));
    net->prec.dbl[i + 1] = PETSC_FALSE;
  } else {
    PetscCall(NNSingleGraphToDouble(net, v, n, NNGraphAct(net, v, x0), net->prec.act[v]));
    PetscCall(NNLayerForward(l, n, NNGraphAct(net, v, x0), net->act[i + 1]));
    PetscCall(NNSingleLength(net, i + 1, n, net->act[i + 1], &m));
    PetscCall(NNRoundVec(m, net->act[i + 1], net->prec.act[i + 1]));
    net->prec.dbl[i + 1] = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

/*
   NNSingleGraphForward - NNGraphForward() in single precision: the layers in topological order, the random numbers of
   other shards skipped around each as there; the output is left in act[nlayers] (double, float values)
*/
PetscErrorCode NNSingleGraphForward(NN net, PetscInt n, Vec x0)
{
  PetscBool shard = (PetscBool)(net->training && (net->pass.rngshard[0] || net->pass.rngshard[1]));
  PetscInt  m = 0, L = net->nlayers;

  PetscFunctionBegin;
  PetscCall(NNSingleParameters(net));
  PetscCall(NNSingleLength(net, 0, n, x0, &m));
  PetscCall(NNVecToFloat(m, x0, net->prec.act[0]));
  net->prec.dbl[0] = PETSC_TRUE; /* a double layer reads the input itself, as in a sequential network */
  PetscCall(NNThreadsBegin());
  for (PetscInt t = 0; t < L; t++) {
    PetscInt i = net->graph.order[t], draws = 0;
    if (shard) PetscCall(NNLayerGetRandomDraws(net->layers[i], &draws));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[0] * draws);
    PetscCall(NNSingleGraphForwardLayer(net, i, n, x0));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[1] * draws);
  }
  PetscCall(NNThreadsEnd());
  PetscCall(NNSingleGraphToDouble(net, L, n, net->act[L], net->prec.act[L]));
  PetscFunctionReturn(0);
}

/* backward of layer i in single precision: its inputs' gradients go to their nodes (first reader) or to scratch arrays
   then added, as in NNGraphBackwardLayer(); a float layer's parameter gradient is handed to the double gradient */
static PetscErrorCode NNSingleGraphBackwardLayer(NN net, PetscInt i, PetscInt n, Vec x0, Vec dx0, PetscScalar *dtheta)
{
  NNLayer   l  = net->layers[i];
  PetscInt  k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0, p0 = net->graph.outptr[i], nout = net->graph.outptr[i + 1] - p0;
  PetscInt  np, m = 0;
  Vec      *x = net->graph.work, *y = x + net->graph.maxio, *dx = y + 2 * net->graph.maxio;
  float   **dys = net->prec.work, **dxs = dys + net->graph.maxio;
  PetscBool own = (PetscBool)(l->ops->forwardmulti || NNLayerHasSinglePasses(l));

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt v = net->graph.in[k0 + k], s = net->graph.slot[k0 + k];
    x[k]   = NNGraphAct(net, v, x0);
    dx[k]  = net->graph.need[v] ? (s >= 0 ? net->graph.scratch[s] : (v ? net->dact[v] : dx0)) : NULL;
    dxs[k] = net->graph.need[v] ? (s >= 0 ? net->prec.scratch[s] : net->prec.dact[v]) : NULL;
  }
  for (PetscInt p = 0; p < nout; p++) {
    y[p]   = net->act[net->graph.out[p0 + p]];
    dys[p] = net->prec.dact[net->graph.out[p0 + p]];
  }
  if (own) {
    PetscCall(NNLayerGetNumParameters(l, &np));
    PetscCall(PetscArrayzero(l->sdtheta, np));
    if (l->ops->forwardmulti) PetscCall(NNLayerBackwardMultiSingle(l, n, nin, x, nout, y, (const float *const *)dys, dxs));
    else PetscCall(NNLayerBackwardSingle(l, n, x[0], net->prec.act[net->graph.in[k0]], net->prec.act[i + 1], dys[0], dxs[0]));
    PetscCall(NNSingleAddGradient(l, np, dtheta));
  } else {
    PetscCall(NNSingleGraphToDouble(net, i + 1, n, net->dact[i + 1], net->prec.dact[i + 1])); /* unless a double layer wrote it alone */
    PetscCall(NNLayerBackward(l, n, x[0], y[0], net->dact[i + 1], dx[0]));
  }
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt v = net->graph.in[k0 + k], s = net->graph.slot[k0 + k];
    if (!dx[k]) continue;
    if (!v) { /* the network input's gradient, in double: a float layer's converted, a double layer's as it is (as in a sequential network) */
      if (own) {
        PetscCall(NNSingleLength(net, 0, n, dx[k], &m));
        PetscCall(NNFloatToVec(m, dxs[k], dx[k]));
      }
      if (s >= 0) PetscCall(NNGraphAddGradient(net, 0, n, dx0, dx[k]));
      continue;
    }
    PetscCall(NNSingleLength(net, v, n, net->act[v], &m));
    if (!own) PetscCall(NNRoundVec(m, dx[k], dxs[k])); /* a double layer's input gradient, rounded (in place) to float */
    if (s >= 0)
      for (PetscInt j = 0; j < m; j++) net->prec.dact[v][j] += dxs[k][j];
    net->prec.dbl[v] = (PetscBool)(!own && s < 0); /* dact[v] holds the float values only if a double layer wrote it alone */
  }
  PetscFunctionReturn(0);
}

/*
   NNSingleGraphBackward - NNGraphBackward() in single precision from the loss gradient dact[nlayers] (double) down to
   dx0 (NULL: not needed), the layers in reverse topological order, calling layerdone where the double pass does
   (NNGraphLayerDone()); net->graph.need is set
*/
PetscErrorCode NNSingleGraphBackward(NN net, PetscInt n, Vec x0, Vec dx0, PetscScalar *dtheta)
{
  PetscInt L = net->nlayers, low = L, m = 0;

  PetscFunctionBegin;
  PetscCall(NNSingleLength(net, L, n, net->dact[L], &m));
  PetscCall(NNRoundVec(m, net->dact[L], net->prec.dact[L]));
  net->prec.dbl[L] = PETSC_TRUE;
  for (PetscInt i = 0; i < L; i++) net->graph.done[i] = PETSC_FALSE;
  PetscCall(NNThreadsBegin());
  for (PetscInt t = L - 1; t >= 0; t--) {
    PetscInt i = net->graph.order[t];
    if (net->graph.need[i + 1]) PetscCall(NNSingleGraphBackwardLayer(net, i, n, x0, dx0, dtheta)); /* else it has no parameters and nothing before it needs a gradient */
    PetscCall(NNGraphLayerDone(net, i, &low, dtheta));
  }
  PetscCall(NNThreadsEnd());
  PetscFunctionReturn(0);
}
