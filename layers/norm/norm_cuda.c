/*
   Device passes of the normalization layers (-nn_device cuda): batchnorm1d/2d/3d, group_norm, instance_norm and
   layer_norm through the kernels of layers/norm/norm_kernels.cu, on sequential activations ([s][c][q]) and on spatial
   ones (the DMDA layout of one rank, [pixel][slot][c]; only the n samples of the pass count, slots s >= n get zeros as
   on the CPU). The statistics of a forward pass stay on the device, in the layer's work array, for its backward pass.

   Batch norm's running statistics are buffers of the network on the host, in double, updated by the CPU's own
   arithmetic (NNBatchNormTrainingStats()). A training forward pass computes the batch mean and variance on the device,
   downloads those 2C doubles and updates the running statistics on the host; an evaluation pass uploads the running
   mean, variance and 1/sqrt(var + eps) (3C doubles). Cost: one small download and a wait for the stream per batch-norm
   layer per training forward pass. Keeping the running statistics on the device would save the wait, but they would
   then be a second copy of buffers that checkpoints, NNGetBuffers() and the CPU read on the host, to be kept in step.
*/
#include "batchnorm.h"
#include "norm.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNNormDeviceReset(NNNormDevice *d)
{
  PetscFunctionBegin;
  PetscCall(NNCUDAFree((void **)&d->work));
  PetscCall(PetscFree(d->h));
  d->cap = 0;
  PetscFunctionReturn(0);
}

/* the geometry of the layer's input for n samples, statistic groups of the given kind (cg channels a group), and the
   device work array made large enough for the batch capacity */
static PetscErrorCode NNNormDeviceGeom(NNLayer l, NNNormDevice *d, NNCUDANormKind kind, PetscInt C, PetscInt cg, PetscReal eps, PetscInt n, NNCUDANormGeom *g)
{
  DM             dm;
  NNCUDANormGeom full;
  size_t         need;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  g->kind    = kind;
  g->spatial = dm ? 1 : 0;
  g->n       = (size_t)n;
  g->C       = (size_t)C;
  g->npos    = (size_t)(NNShapeSize(&l->inshape) / C);
  g->D       = (size_t)l->nbatch * (size_t)C;
  g->cg      = (size_t)cg;
  g->eps     = eps;
  full       = *g;
  full.n     = (size_t)l->nbatch;
  need       = 3 * NNCUDANormGroups(&full) + NNCUDANormWorkSize(&full);
  if (need > d->cap) {
    PetscCall(NNCUDAFree((void **)&d->work));
    PetscCall(NNCUDAMalloc(need * sizeof(double), (void **)&d->work));
    d->cap = need;
  }
  PetscFunctionReturn(0);
}

/* the scratch after the statistics [3][groups] */
static double *NNNormDeviceScratch(NNNormDevice *d, const NNCUDANormGeom *g)
{
  return d->work + 3 * NNCUDANormGroups(g);
}

/* the parameters of an affine layer on the device: w [C] then b [C] */
static const void *NNNormDeviceBias(NNLayer l, PetscInt C)
{
  return (const char *)l->dev.theta + (size_t)C * (l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double));
}

/* ---------------------------------------------------------------- batch norm */

PetscErrorCode NNLayerForwardDevice_BatchNorm(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNBatchNormBase *p      = (NNBatchNormBase *)l->data;
  NNNormDevice    *d      = &p->dev;
  PetscInt         C      = p->C;
  int              single = l->dev.prec == NN_PRECISION_SINGLE;
  PetscScalar     *rmean = l->buf, *rvar = l->buf + C, *nbt = l->buf + 2 * C;
  NNCUDANormGeom   g;
  cudaStream_t     s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNNormDeviceGeom(l, d, NN_CUDA_NORM_CHANNEL, C, 1, p->eps, n, &g));
  if (!d->h) PetscCall(PetscMalloc1(3 * C, &d->h));
  d->batchstats = l->training;
  if (l->training) {
    PetscReal m = (PetscReal)n * (PetscReal)g.npos; /* values per channel */
    PetscCheck(m > 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ,
               "Batch-norm layer %s in training mode needs more than 1 value per channel, got %g (batch %" PetscInt_FMT " x positions %" PetscInt_FMT "); use a larger batch or evaluation mode", ((PetscObject)l)->name, (double)m, n, (PetscInt)g.npos);
    NNCallCUDA(NNCUDANormStats(single, &g, x, d->work, NNNormDeviceScratch(d, &g), s));
    /* the batch mean and variance down, the running statistics updated on the host as the CPU pass does */
    NNCallCUDA(cudaMemcpyAsync(d->h, d->work, 2 * C * sizeof(double), cudaMemcpyDeviceToHost, s));
    NNCallCUDA(cudaStreamSynchronize(s));
    for (PetscInt c = 0; c < C; c++) NNBatchNormTrainingStats(p, c, d->h[c], PetscRealPart(d->h[C + c]), m, d->h + 2 * C, rmean, rvar);
    nbt[0] += 1;
    PetscCall(PetscLogFlops(5.0 * n * C * g.npos));
  } else {
    /* mean, variance and 1/sqrt(var + eps) up: the layout of the statistics the kernels compute */
    NNBatchNormRunningStats(p, rmean, rvar, d->h, d->h + 2 * C);
    PetscCall(PetscArraycpy(d->h + C, rvar, C));
    NNCallCUDA(cudaMemcpyAsync(d->work, d->h, 3 * C * sizeof(double), cudaMemcpyHostToDevice, s)); /* pageable: returns once staged */
  }
  NNCallCUDA(NNCUDANormForward(single, &g, x, d->work, l->dev.theta, NNNormDeviceBias(l, C), y, s));
  PetscCall(PetscLogFlops(4.0 * n * C * g.npos));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_BatchNorm(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNBatchNormBase *p = (NNBatchNormBase *)l->data;
  NNNormDevice    *d = &p->dev;
  NNCUDANormGeom   g;
  cudaStream_t     s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNNormDeviceGeom(l, d, NN_CUDA_NORM_CHANNEL, p->C, 1, p->eps, n, &g));
  NNCallCUDA(NNCUDANormBackward(l->dev.prec == NN_PRECISION_SINGLE, &g, d->batchstats, x, dy, d->work, l->dev.theta, NNNormDeviceScratch(d, &g), l->dev.dtheta, dx, s));
  PetscCall(PetscLogFlops((dx ? (d->batchstats ? 8.0 : 5.0) : 3.0) * n * p->C * g.npos));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- group_norm, instance_norm, layer_norm */

/* the statistic groups of the type: a sample's position over the channels (layer_norm) or a sample's group of C/G
   channels over the positions */
static NNCUDANormKind NNNormDeviceKind(NNNorm *p, PetscInt *cg)
{
  *cg = p->kind == NN_NORM_LAYER ? p->C : p->C / p->G;
  return p->kind == NN_NORM_LAYER ? NN_CUDA_NORM_POSITION : NN_CUDA_NORM_GROUP;
}

PetscErrorCode NNLayerForwardDevice_Norm(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNNorm        *p = (NNNorm *)l->data;
  PetscInt       cg;
  NNCUDANormKind kind = NNNormDeviceKind(p, &cg);
  NNCUDANormGeom g;
  cudaStream_t   s;
  int            single = l->dev.prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNNormDeviceGeom(l, &p->dev, kind, p->C, cg, p->eps, n, &g));
  p->dev.batchstats = PETSC_TRUE;
  NNCallCUDA(NNCUDANormStats(single, &g, x, p->dev.work, NNNormDeviceScratch(&p->dev, &g), s));
  NNCallCUDA(NNCUDANormForward(single, &g, x, p->dev.work, p->affine ? l->dev.theta : NULL, p->affine ? NNNormDeviceBias(l, p->C) : NULL, y, s));
  PetscCall(PetscLogFlops(8.0 * n * p->C * g.npos));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Norm(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNNorm        *p = (NNNorm *)l->data;
  PetscInt       cg;
  NNCUDANormKind kind = NNNormDeviceKind(p, &cg);
  NNCUDANormGeom g;
  cudaStream_t   s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNNormDeviceGeom(l, &p->dev, kind, p->C, cg, p->eps, n, &g));
  NNCallCUDA(NNCUDANormBackward(l->dev.prec == NN_PRECISION_SINGLE, &g, 1, x, dy, p->dev.work, p->affine ? l->dev.theta : NULL, NNNormDeviceScratch(&p->dev, &g), p->affine ? l->dev.dtheta : NULL, dx, s));
  PetscCall(PetscLogFlops(((dx ? 10.0 : 0.0) + (p->affine ? 4.0 : 0.0)) * n * p->C * g.npos));
  PetscFunctionReturn(0);
}
