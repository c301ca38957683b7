/* Graph networks: the forward and backward passes (set-up and the layout of act[]: nngraph.c; in single precision:
   nnprecision.c, with the same order, wiring and layerdone calls). */
#include <petnn/private/nnimpl.h>

/* forward through the layers in topological order, the parameter arrays already distributed; a rank
   computing a shard of a larger batch skips the other samples' random numbers around each layer */
PetscErrorCode NNGraphForward(NN net, PetscInt n, Vec x0)
{
  PetscBool shard = (PetscBool)(net->training && (net->pass.rngshard[0] || net->pass.rngshard[1]));
  Vec      *x = net->graph.work, *y = net->graph.work + net->graph.maxio;

  PetscFunctionBegin;
  if (net->prec.type == NN_PRECISION_SINGLE) { /* on the float activations (src/nn/interface/nnprecision.c) */
    PetscCall(NNSingleGraphForward(net, n, x0));
    PetscFunctionReturn(0);
  }
  for (PetscInt t = 0; t < net->nlayers; t++) {
    PetscInt i = net->graph.order[t], k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0;
    PetscInt p0 = net->graph.outptr[i], nout = net->graph.outptr[i + 1] - p0, draws = 0;
    NNLayer  l  = net->layers[i];
    if (shard) PetscCall(NNLayerGetRandomDraws(l, &draws));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[0] * draws);
    if (l->ops->forwardmulti) {
      for (PetscInt k = 0; k < nin; k++) x[k] = NNGraphAct(net, net->graph.in[k0 + k], x0);
      for (PetscInt p = 0; p < nout; p++) y[p] = net->act[net->graph.out[p0 + p]];
      PetscCall(NNLayerForwardMulti(l, n, nin, x, nout, y));
    } else PetscCall(NNLayerForward(l, n, NNGraphAct(net, net->graph.in[k0], x0), net->act[i + 1]));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[1] * draws);
  }
  PetscFunctionReturn(0);
}

/* need[v]: node v's gradient is wanted (a layer with parameters, or the input gradient, depends on it) */
static PetscErrorCode NNGraphNeed(NN net, PetscBool needdx)
{
  PetscFunctionBegin;
  net->graph.need[0] = needdx;
  for (PetscInt t = 0; t < net->nlayers; t++) {
    PetscInt  i = net->graph.order[t], np;
    PetscBool need;
    PetscCall(NNLayerGetNumParameters(net->layers[i], &np));
    need = (PetscBool)(np > 0);
    for (PetscInt k = net->graph.inptr[i]; k < net->graph.inptr[i + 1]; k++) need = (PetscBool)(need || net->graph.need[net->graph.in[k]]);
    for (PetscInt p = net->graph.outptr[i]; p < net->graph.outptr[i + 1]; p++) net->graph.need[net->graph.out[p]] = need;
  }
  PetscFunctionReturn(0);
}

/* g += s on the entries a pass of n samples uses: the rank's whole array for spatial (DMDA) activations */
PetscErrorCode NNGraphAddGradient(NN net, PetscInt v, PetscInt n, Vec g, Vec s)
{
  DM                 dm;
  PetscInt           len;
  PetscScalar       *ga;
  const PetscScalar *sa;

  PetscFunctionBegin;
  PetscCall(VecGetDM(s, &dm));
  if (dm) {
    PetscCall(VecAXPY(g, 1.0, s));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetLocalSize(s, &len));
  len = PetscMin(len, n * NNShapeSize(&net->graph.shape[v]));
  PetscCall(VecGetArray(g, &ga));
  PetscCall(VecGetArrayRead(s, &sa));
  for (PetscInt j = 0; j < len; j++) ga[j] += sa[j];
  PetscCall(VecRestoreArrayRead(s, &sa));
  PetscCall(VecRestoreArray(g, &ga));
  PetscFunctionReturn(0);
}

/* the layers' parameter slices lie in list order: once layers low .. L-1 are all done, the gradient from
   layer low's first parameter on is final, which is what the layerdone callback (data parallelism) says */
PetscErrorCode NNGraphLayerDone(NN net, PetscInt i, PetscInt *low, PetscScalar *dtheta)
{
  NNBackwardCallbacks *cb = &net->pass.backward;

  PetscFunctionBegin;
  net->graph.done[i] = PETSC_TRUE;
  while (*low > 0 && net->graph.done[*low - 1]) {
    (*low)--;
    if (cb->layerdone) PetscCall((*cb->layerdone)(net, *low, dtheta, cb->ctx));
  }
  PetscFunctionReturn(0);
}

/* backward of layer i: its inputs' gradients go to their nodes (first reader) or to scratch Vecs then added */
static PetscErrorCode NNGraphBackwardLayer(NN net, PetscInt i, PetscInt n, Vec x0, Vec dx0)
{
  PetscInt k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0, p0 = net->graph.outptr[i], nout = net->graph.outptr[i + 1] - p0;
  Vec     *x = net->graph.work, *y = x + net->graph.maxio, *dy = y + net->graph.maxio, *dx = dy + net->graph.maxio;
  NNLayer  l = net->layers[i];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt v = net->graph.in[k0 + k], s = net->graph.slot[k0 + k];
    x[k]       = NNGraphAct(net, v, x0);
    dx[k]      = net->graph.need[v] ? (s >= 0 ? net->graph.scratch[s] : (v ? net->dact[v] : dx0)) : NULL;
  }
  for (PetscInt p = 0; p < nout; p++) {
    y[p]  = net->act[net->graph.out[p0 + p]];
    dy[p] = net->dact[net->graph.out[p0 + p]];
  }
  if (l->ops->backwardmulti) PetscCall(NNLayerBackwardMulti(l, n, nin, x, nout, y, dy, dx));
  else PetscCall(NNLayerBackward(l, n, x[0], y[0], dy[0], dx[0]));
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt v = net->graph.in[k0 + k], s = net->graph.slot[k0 + k];
    if (dx[k] && s >= 0) PetscCall(NNGraphAddGradient(net, v, n, v ? net->dact[v] : dx0, dx[k]));
  }
  PetscFunctionReturn(0);
}

/* backward through the layers in reverse topological order from the loss gradient in dact[nlayers];
   dx0 receives the input gradient (NULL: not wanted) */
PetscErrorCode NNGraphBackward(NN net, PetscInt n, Vec x0, Vec dx0, PetscScalar *dtheta)
{
  PetscInt low = net->nlayers;

  PetscFunctionBegin;
  PetscCall(NNGraphNeed(net, dx0 ? PETSC_TRUE : PETSC_FALSE));
  if (net->dev.type != NN_DEVICE_CPU) { /* the same wiring on device arrays (src/nn/interface/nndevicegraph_cuda.c) */
    PetscCall(NNDeviceBackward(net, n, x0, dx0, dtheta, net->graph.need));
    PetscFunctionReturn(0);
  }
  if (net->prec.type == NN_PRECISION_SINGLE) { /* the same order and sums on the float gradients (src/nn/interface/nnprecision.c) */
    PetscCall(NNSingleGraphBackward(net, n, x0, dx0, dtheta));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < net->nlayers; i++) net->graph.done[i] = PETSC_FALSE;
  for (PetscInt t = net->nlayers - 1; t >= 0; t--) {
    PetscInt i = net->graph.order[t];
    if (net->graph.need[i + 1]) PetscCall(NNGraphBackwardLayer(net, i, n, x0, dx0)); /* else it has no parameters and nothing before it needs a gradient */
    PetscCall(NNGraphLayerDone(net, i, &low, dtheta));
  }
  PetscFunctionReturn(0);
}
