/*
   Device passes of the residual layer (-nn_device cuda): y = x + block(x) through the children's device passes, on
   device arrays of the pass's precision for the children's outputs and their gradients (one per child, as the Vecs
   of the CPU passes). The children read their slices of the device parameter copy and add into the device gradient;
   a pointwise child on a spatial activation runs on every batch slot, as in the network's device pass. The skip
   connection adds over the whole local array on spatial activations (slots s >= n included, as VecWAXPY() does on
   the CPU) and over the first n samples on sequential ones. NNLayerSetUp_Residual() sets these passes when every
   child has device passes.
*/
#include "residual.h"
#include <petnn/private/cudaimpl.h>

/* the children's device arrays, made for the pass's precision */
static PetscErrorCode NNResidualDeviceArrays(NNLayer l)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  size_t            es = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  PetscCheck(r->v.nvec == l->nchildren, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Residual layer %s: its children's Vecs are not made; NNSetUp() makes them before the device passes run", ((PetscObject)l)->name);
  if (r->ndev == l->nchildren && r->des == es) PetscFunctionReturn(0);
  PetscCall(NNResidualDeviceReset(l));
  PetscCall(PetscCalloc2(l->nchildren, &r->dout, l->nchildren, &r->ddout));
  r->ndev = l->nchildren;
  r->des  = es;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscInt m;
    PetscCall(VecGetLocalSize(r->v.out[c], &m));
    PetscCall(NNCUDAMalloc((size_t)m * es, &r->dout[c]));
    PetscCall(NNCUDAMalloc((size_t)m * es, &r->ddout[c]));
  }
  PetscFunctionReturn(0);
}

/* the children read their slices of the layer's device parameters and gradient (as NNLayerSetChildPointers() on the
   host arrays) */
static PetscErrorCode NNResidualDevicePointChildren(NNLayer l)
{
  size_t es = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch     = l->children[c];
    ch->dev.prec   = l->dev.prec;
    ch->dev.tf32   = l->dev.tf32;
    ch->dev.theta  = l->dev.theta ? (const char *)l->dev.theta + (size_t)(ch->poff - l->poff) * es : NULL;
    ch->dev.dtheta = l->dev.dtheta ? (char *)l->dev.dtheta + (size_t)(ch->poff - l->poff) * es : NULL;
  }
  PetscFunctionReturn(0);
}

/* whether the activations are spatial, and the entries the skip connection adds */
static PetscErrorCode NNResidualDeviceSizes(NNLayer l, PetscInt n, PetscBool *spatial, size_t *N)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  DM                dm;
  PetscInt          m;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCall(VecGetLocalSize(r->v.out[l->nchildren - 1], &m));
  *spatial = (PetscBool)!!dm;
  *N       = dm ? (size_t)m : (size_t)n * (size_t)NNShapeSize(&l->inshape);
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_Residual(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  PetscInt          nc = l->nchildren;
  PetscBool         spatial;
  size_t            N;
  cudaStream_t      s;
  const int         single = l->dev.prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  PetscCall(NNResidualDeviceArrays(l));
  PetscCall(NNResidualDevicePointChildren(l));
  PetscCall(NNResidualDeviceSizes(l, n, &spatial, &N));
  for (PetscInt c = 0; c < nc; c++) {
    NNLayer ch = l->children[c];
    PetscCall((*ch->ops->forwarddevice)(ch, NNLayerDeviceSamples(ch, spatial, n), c ? r->dout[c - 1] : x, r->dout[c]));
  }
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(cudaMemcpyAsync(y, x, N * r->des, cudaMemcpyDeviceToDevice, s));
  NNCallCUDA(NNCUDAAxpy(single, N, 1.0, r->dout[nc - 1], y, s)); /* x + h, as the CPU adds */
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Residual(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  PetscInt          nc = l->nchildren;
  PetscBool         spatial;
  size_t            N;
  cudaStream_t      s;
  const int         single = l->dev.prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  PetscCall(NNResidualDeviceArrays(l));
  PetscCall(NNResidualDevicePointChildren(l));
  PetscCall(NNResidualDeviceSizes(l, n, &spatial, &N));
  /* the block's output gradient is dy; the first child writes the block's input gradient into dx */
  for (PetscInt c = nc - 1; c >= 0; c--) {
    NNLayer     ch   = l->children[c];
    const void *in   = c ? r->dout[c - 1] : x;
    const void *gout = c == nc - 1 ? dy : r->ddout[c];
    void       *gin  = c ? r->ddout[c - 1] : dx;
    PetscCall((*ch->ops->backwarddevice)(ch, NNLayerDeviceSamples(ch, spatial, n), in, r->dout[c], gout, gin));
  }
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAAxpy(single, N, 1.0, dy, dx, s));
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}
