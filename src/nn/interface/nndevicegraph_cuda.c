/*
   Graph networks on a CUDA GPU (-nn_device cuda): the per-layer steps of the device passes of nndevice_cuda.c for a
   layer of a graph network, with the CPU's wiring (nngraphpass.c): a layer reads its input nodes' device arrays and
   writes its output nodes'; in the backward pass the first reader of a node writes its gradient and every other
   reader writes a device scratch array that is then added (over the first n samples, or the whole array of a spatial
   node), in the CPU's order. Multi-input and multi-output layers (add, concat, split) run their multi device passes.
*/
#include <petnn/private/cudaimpl.h>
#include <petnn/private/partitiondevice.h>

/* the scratch device arrays of the graph's extra readers and the argument arrays of a layer's pass (NNDeviceSetUp_CUDA()) */
PetscErrorCode NNDeviceGraphSetUp_CUDA(NN net, NNDeviceCUDA *c)
{
  PetscFunctionBegin;
  if (!net->graph.on) PetscFunctionReturn(0);
  PetscCall(PetscCalloc1(4 * net->graph.maxio, &c->gargs));
  c->nscratch = net->graph.nscratch;
  PetscCall(PetscCalloc1(c->nscratch, &c->scratch));
  for (PetscInt j = 0; j < c->nscratch; j++) {
    PetscInt v = net->graph.scratchnode[j];
    PetscCall(NNCUDAMalloc(c->len[v] * c->esize, &c->scratch[j]));
    c->bytes += c->len[v] * c->esize;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceGraphReset_CUDA(NNDeviceCUDA *c)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < c->nscratch; j++) PetscCall(NNCUDAFree(&c->scratch[j]));
  PetscCall(PetscFree(c->scratch));
  PetscCall(PetscFree(c->gargs));
  c->nscratch = 0;
  PetscFunctionReturn(0);
}

/* the forward device pass of layer i from its input nodes to its output nodes */
PetscErrorCode NNDeviceGraphLayerForward_CUDA(NN net, NNDeviceCUDA *c, PetscInt i, PetscInt n)
{
  NNLayer        l  = net->layers[i];
  const PetscInt k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0, p0 = net->graph.outptr[i], nout = net->graph.outptr[i + 1] - p0;
  const void   **x = (const void **)c->gargs;
  void         **y = c->gargs + net->graph.maxio;

  PetscFunctionBegin;
  if (!l->ops->forwardmultidevice) {
    PetscInt v = net->graph.in[k0];
    PetscCall(NNLayerForwardDevice(l, NNLayerDeviceSamples(l, c->spatial[v], n), c->act[v], c->act[i + 1]));
    PetscFunctionReturn(0);
  }
  for (PetscInt k = 0; k < nin; k++) x[k] = c->act[net->graph.in[k0 + k]];
  for (PetscInt p = 0; p < nout; p++) y[p] = c->act[net->graph.out[p0 + p]];
  PetscUseTypeMethod(l, forwardmultidevice, n, nin, x, nout, y);
  PetscFunctionReturn(0);
}

/* node v's gradient += the scratch array s on the entries a pass of n samples uses */
static PetscErrorCode NNDeviceGraphAddGradient(NN net, NNDeviceCUDA *c, PetscInt v, PetscInt n, const void *s, cudaStream_t st)
{
  size_t len = c->spatial[v] ? (size_t)c->len[v] : (size_t)PetscMin(c->len[v], n * NNShapeSize(&net->graph.shape[v]));

  PetscFunctionBegin;
  NNCallCUDA(NNCUDAAxpy(c->prec == NN_PRECISION_SINGLE, len, 1.0, s, c->dact[v], st));
  PetscFunctionReturn(0);
}

/* the backward device pass of layer i: its input nodes' gradients (those net->graph.need asks for) written or added */
PetscErrorCode NNDeviceGraphLayerBackward_CUDA(NN net, NNDeviceCUDA *c, PetscInt i, PetscInt n, cudaStream_t st)
{
  NNLayer        l  = net->layers[i];
  const PetscInt k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0, p0 = net->graph.outptr[i], nout = net->graph.outptr[i + 1] - p0;
  const void   **x = (const void **)c->gargs, **y = x + net->graph.maxio, **dy = y + net->graph.maxio;
  void         **dx = c->gargs + 3 * net->graph.maxio;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt v = net->graph.in[k0 + k], s = net->graph.slot[k0 + k];
    x[k]  = c->act[v];
    dx[k] = net->graph.need[v] ? (s >= 0 ? c->scratch[s] : c->dact[v]) : NULL;
  }
  for (PetscInt p = 0; p < nout; p++) {
    y[p]  = c->act[net->graph.out[p0 + p]];
    dy[p] = c->dact[net->graph.out[p0 + p]];
  }
  if (l->ops->backwardmultidevice) PetscUseTypeMethod(l, backwardmultidevice, n, nin, x, nout, y, dy, dx);
  else PetscCall(NNLayerBackwardDevice(l, NNLayerDeviceSamples(l, c->spatial[net->graph.in[k0]], n), x[0], y[0], dy[0], dx[0]));
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt v = net->graph.in[k0 + k], s = net->graph.slot[k0 + k];
    if (dx[k] && s >= 0) PetscCall(NNDeviceGraphAddGradient(net, c, v, n, dx[k], st));
  }
  PetscFunctionReturn(0);
}
