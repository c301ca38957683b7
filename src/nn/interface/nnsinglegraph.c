/*
   Single precision (-nn_precision single, src/nn/interface/nnprecision.c): the passes of a graph network (-nn_type
   graph) on the float activations, the float counterparts of src/nn/interface/nngraphpass.c.
*/
#include <petnn/private/nnimpl.h>

/* node v's double Vec x (an activation or its gradient) gets the float values s unless it holds them (prec.dbl[v]) */
static PetscErrorCode NNSingleGraphToDouble(NN net, PetscInt v, PetscInt n, Vec x, const float *s)
{
  PetscInt m = 0;

  PetscFunctionBegin;
  if (net->prec.dbl[v]) PetscFunctionReturn(0);
  PetscCall(NNSingleLength(net, v, n, x, &m));
  PetscCall(NNSingleFloatToVec(m, s, x));
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
    PetscCall(NNSingleRoundVec(m, net->act[i + 1], net->prec.act[i + 1]));
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
  PetscCall(NNSingleVecToFloat(m, x0, net->prec.act[0]));
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
        PetscCall(NNSingleFloatToVec(m, dxs[k], dx[k]));
      }
      if (s >= 0) PetscCall(NNGraphAddGradient(net, 0, n, dx0, dx[k]));
      continue;
    }
    PetscCall(NNSingleLength(net, v, n, net->act[v], &m));
    if (!own) PetscCall(NNSingleRoundVec(m, dx[k], dxs[k])); /* a double layer's input gradient, rounded (in place) to float */
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
  PetscCall(NNSingleRoundVec(m, net->dact[L], net->prec.dact[L]));
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
