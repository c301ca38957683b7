/*
   Single precision (-nn_precision single, src/nn/interface/nnprecision.c): the passes of a sequential network on the
   float activations, and the conversions and the float parameter copy the graph passes (nnsinglegraph.c) share.
*/
#include <petnn/private/nnimpl.h>

static inline void NNToFloat(PetscInt m, const PetscScalar *a, float *s)
{
  for (PetscInt k = 0; k < m; k++) s[k] = (float)a[k];
}

static inline void NNToDouble(PetscInt m, const float *s, PetscScalar *a)
{
  for (PetscInt k = 0; k < m; k++) a[k] = s[k];
}

/* rounds a double activation to float in place and keeps the float copy */
PetscErrorCode NNSingleRoundVec(PetscInt m, Vec x, float *s)
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

PetscErrorCode NNSingleVecToFloat(PetscInt m, Vec x, float *s)
{
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(x, &a));
  NNToFloat(m, a, s);
  PetscCall(VecRestoreArrayRead(x, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode NNSingleFloatToVec(PetscInt m, const float *s, Vec x)
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
PetscErrorCode NNSingleLength(NN net, PetscInt i, PetscInt n, Vec x, PetscInt *m)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  *m = dm ? net->prec.len[i] : n * (net->prec.len[i] / net->nbatch);
  PetscFunctionReturn(0);
}

/* the float parameter copy, made anew for every pass: the parameter Vec's state cannot tell when other ranks changed
   the parameters (data-parallel groups share them in an MPI shared-memory window, tournaments swap them) */
PetscErrorCode NNSingleParameters(NN net)
{
  PetscInt np;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(net->theta, &np));
  PetscCall(NNSingleVecToFloat(np, net->theta, net->prec.theta));
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
    PetscCall(NNSingleFloatToVec(m, net->prec.act[i], x));
  }
  PetscCall(NNLayerForward(l, n, x, net->act[i + 1]));
  PetscCall(NNSingleLength(net, i + 1, n, net->act[i + 1], &m));
  PetscCall(NNSingleRoundVec(m, net->act[i + 1], net->prec.act[i + 1]));
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
  PetscCall(NNSingleVecToFloat(m, x0, net->prec.act[0]));
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
    PetscCall(NNSingleFloatToVec(m, net->prec.act[L], net->act[L]));
  }
  PetscFunctionReturn(0);
}

/* adds a float layer's parameter gradient into its slice (children included) of the double gradient */
PetscErrorCode NNSingleAddGradient(NNLayer l, PetscInt np, PetscScalar *dtheta)
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
      PetscCall(NNSingleFloatToVec(m, net->prec.dact[0], dx0));
    }
    PetscFunctionReturn(0);
  }
  if (i + 1 < net->nlayers && NNLayerHasSinglePasses(net->layers[i + 1])) { /* the output gradient exists in float only */
    PetscCall(NNSingleLength(net, i + 1, n, net->dact[i + 1], &m));
    PetscCall(NNSingleFloatToVec(m, net->prec.dact[i + 1], net->dact[i + 1]));
  }
  PetscCall(NNLayerBackward(l, n, x, net->act[i + 1], net->dact[i + 1], dx));
  if (dx && i) {
    PetscCall(NNSingleLength(net, i, n, dx, &m));
    PetscCall(NNSingleRoundVec(m, dx, net->prec.dact[i]));
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
  PetscCall(NNSingleRoundVec(m, net->dact[L], net->prec.dact[L]));
  PetscCall(NNThreadsBegin());
  for (PetscInt i = L - 1; i >= 0; i--) {
    PetscCall(NNSingleBackwardLayer(net, i, n, x0, dx0, need[i], dtheta));
    if (cb->layerdone) PetscCall((*cb->layerdone)(net, i, dtheta, cb->ctx)); /* data parallel: all-reduce the finished gradient buckets */
  }
  PetscCall(NNThreadsEnd());
  PetscFunctionReturn(0);
}
