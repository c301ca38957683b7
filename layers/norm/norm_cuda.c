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

   batchnorm2d/3d also run on spatial activations split over ranks: the rank's mean and variance come down as now and
   are combined over the layer's ranks as (count, mean, M2) triples by the CPU pass's own reduction, the batch's
   statistics go up (3C doubles); backward, the rank's channel sums of dy and dy xhat come down, are added over the
   ranks and go up before the parameter gradients and dx (one more small round trip per layer and pass).
*/
#include "batchnorm.h"
#include "norm.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNNormDeviceReset(NNNormDevice *d)
{
  PetscFunctionBegin;
  PetscCall(NNCUDAFree((void **)&d->work));
  PetscCall(PetscFree(d->h));
  PetscCall(PetscFree(d->hs));
  d->cap = d->hcap = 0;
  PetscFunctionReturn(0);
}

/* the geometry of the layer's input for n samples, statistic groups of the given kind (cg channels a group), and the
   device work array made large enough for the batch capacity (and batch norm's channel sums, d->sums). A spatial
   activation split over ranks (batch norm only: the other types refuse it) has the rank's pixels in g->npos and the
   values of a channel over all ranks in g->mall. */
static PetscErrorCode NNNormDeviceGeom(NNLayer l, NNNormDevice *d, NNCUDANormKind kind, PetscInt C, PetscInt cg, PetscReal eps, PetscInt n, NNCUDANormGeom *g)
{
  DM             dm;
  NNCUDANormGeom full;
  size_t         need, ns;
  PetscMPIInt    size = 1;

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
  g->mall    = 0;
  if (dm) PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)dm), &size));
  if (size > 1) { /* a group's values over all ranks: a channel's over the batch, a sample's group of channels' (layer norm: local) */
    PetscInt xm, ym, zm;
    if (kind == NN_CUDA_NORM_CHANNEL) g->mall = (double)n * (double)g->npos;
    else if (kind == NN_CUDA_NORM_GROUP) g->mall = (double)cg * (double)g->npos;
    PetscCall(DMDAGetCorners(dm, NULL, NULL, NULL, &xm, &ym, &zm));
    g->npos = (size_t)xm * (size_t)ym * (size_t)zm;
  }
  full   = *g;
  full.n = (size_t)l->nbatch;
  ns     = 2 * PetscMax(NNCUDANormGroups(&full), (size_t)C);
  need   = 3 * NNCUDANormGroups(&full) + NNCUDANormWorkSize(&full) + ns;
  if (need > d->cap) {
    PetscCall(NNCUDAFree((void **)&d->work));
    PetscCall(NNCUDAMalloc(need * sizeof(double), (void **)&d->work));
    d->cap = need;
  }
  d->sums = d->work + need - ns;
  if (size > 1 && 3 * ns > d->hcap) {
    PetscCall(PetscFree(d->hs));
    PetscCall(PetscMalloc1(3 * ns, &d->hs));
    d->hcap = 3 * ns;
  }
  d->split = (PetscBool)(size > 1);
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

/* cnt sums in d->sums added over the layer's ranks: down, MPI_Allreduce, up (activations split over ranks) */
static PetscErrorCode NNNormDeviceAllreduce(NNLayer l, NNNormDevice *d, size_t cnt, cudaStream_t s)
{
  PetscMPIInt mcnt;

  PetscFunctionBegin;
  PetscCall(PetscMPIIntCast((PetscInt)cnt, &mcnt));
  NNCallCUDA(cudaMemcpyAsync(d->hs, d->sums, cnt * sizeof(double), cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->hs, mcnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  NNCallCUDA(cudaMemcpyAsync(d->sums, d->hs, cnt * sizeof(double), cudaMemcpyHostToDevice, s)); /* pageable: returns once staged */
  PetscFunctionReturn(0);
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
  if (!d->h) PetscCall(PetscMalloc1(6 * C, &d->h)); /* statistics [3C], split over ranks also the (count, mean, M2) triples [3C] */
  d->batchstats = l->training;
  if (l->training) {
    PetscReal m = g.mall > 0 ? g.mall : (PetscReal)n * (PetscReal)g.npos; /* values per channel */
    PetscCheck(m > 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Batch-norm layer %s in training mode needs more than 1 value per channel, got %g (batch %" PetscInt_FMT " x positions %g); use a larger batch or evaluation mode",
               ((PetscObject)l)->name, (double)m, n, (double)(m / n));
    NNCallCUDA(NNCUDANormStats(single, &g, x, d->work, NNNormDeviceScratch(d, &g), s));
    /* the batch mean and variance down, the running statistics updated on the host as the CPU pass does */
    NNCallCUDA(cudaMemcpyAsync(d->h, d->work, 2 * C * sizeof(double), cudaMemcpyDeviceToHost, s));
    NNCallCUDA(cudaStreamSynchronize(s));
    if (d->split) { /* split over ranks: the rank's (count, mean, M2) combined as the CPU pass combines them, then up */
      PetscReal *stats = d->h + 3 * C, ml = (PetscReal)n * (PetscReal)g.npos;
      for (PetscInt c = 0; c < C; c++) {
        stats[3 * c]     = ml;
        stats[3 * c + 1] = ml > 0 ? d->h[c] : 0.0;
        stats[3 * c + 2] = ml > 0 ? d->h[C + c] * ml : 0.0;
      }
      PetscCall(NNBatchNormSpatialCombineStats(l, stats));
      PetscCheck(stats[0] == m, PetscObjectComm((PetscObject)l), PETSC_ERR_PLIB, "Batch-norm layer %s: the ranks hold %g values per channel, expected %g", ((PetscObject)l)->name, (double)stats[0], (double)m);
      for (PetscInt c = 0; c < C; c++) { /* the batch's mean and biased variance */
        d->h[c]     = stats[3 * c + 1];
        d->h[C + c] = stats[3 * c + 2] / m;
      }
    }
    for (PetscInt c = 0; c < C; c++) NNBatchNormTrainingStats(p, c, d->h[c], PetscRealPart(d->h[C + c]), m, d->h + 2 * C, rmean, rvar);
    if (d->split) NNCallCUDA(cudaMemcpyAsync(d->work, d->h, 3 * C * sizeof(double), cudaMemcpyHostToDevice, s)); /* the batch's mean, variance, rstd */
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
  if (d->split) { /* the channel sums of dy and dy xhat added over the layer's ranks, then dw and dx from them */
    int single = l->dev.prec == NN_PRECISION_SINGLE;
    NNCallCUDA(NNCUDANormSums(single, &g, 1, NN_CUDA_NORM_SUM_GRAD, x, dy, d->work, NULL, NNNormDeviceScratch(d, &g), d->sums, s));
    PetscCall(NNNormDeviceAllreduce(l, d, 2 * (size_t)p->C, s));
    NNCallCUDA(NNCUDANormAddParamSums(single, (size_t)p->C, d->sums, l->dev.dtheta, s));
    if (dx) NNCallCUDA(NNCUDANormBackwardFromSums(single, &g, d->batchstats, x, dy, d->work, d->sums, l->dev.theta, dx, s));
  } else NNCallCUDA(NNCUDANormBackward(l->dev.prec == NN_PRECISION_SINGLE, &g, d->batchstats, x, dy, d->work, l->dev.theta, NNNormDeviceScratch(d, &g), l->dev.dtheta, dx, s));
  PetscCall(PetscLogFlops((dx ? (d->batchstats ? 8.0 : 5.0) : 3.0) * n * p->C * g.npos));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- group_norm, instance_norm, layer_norm */

/* group statistics of activations split over ranks, as the CPU pass: the sums of x added over the ranks give the mean,
   then the sums of d = x - mean and d^2 added over the ranks correct it and give the variance; [mean, var, rstd] up */
static PetscErrorCode NNNormDeviceSplitStats(NNLayer l, NNNormDevice *d, const NNCUDANormGeom *g, int single, const void *x, cudaStream_t s)
{
  const size_t G = NNCUDANormGroups(g);
  PetscScalar *st;

  PetscFunctionBegin;
  NNCallCUDA(NNCUDANormSums(single, g, 0, NN_CUDA_NORM_SUM_X, x, NULL, NULL, NULL, NNNormDeviceScratch(d, g), d->sums, s));
  PetscCall(NNNormDeviceAllreduce(l, d, G, s));
  st = d->hs + 2 * G; /* [3G] after the sums' [2G] */
  for (size_t i = 0; i < G; i++) st[i] = d->hs[i] / g->mall;
  NNCallCUDA(cudaMemcpyAsync(d->work, st, G * sizeof(double), cudaMemcpyHostToDevice, s));
  NNCallCUDA(NNCUDANormSums(single, g, 0, NN_CUDA_NORM_SUM_CENTERED, x, NULL, d->work, NULL, NNNormDeviceScratch(d, g), d->sums, s));
  PetscCall(NNNormDeviceAllreduce(l, d, 2 * G, s));
  for (size_t i = 0; i < G; i++) {
    PetscScalar dm  = d->hs[i] / g->mall;
    PetscReal   var = PetscMax(PetscRealPart(d->hs[G + i] / g->mall - dm * dm), 0.0);
    st[i] += dm;
    st[G + i]     = var;
    st[2 * G + i] = 1.0 / PetscSqrtReal(var + g->eps);
  }
  NNCallCUDA(cudaMemcpyAsync(d->work, st, 3 * G * sizeof(double), cudaMemcpyHostToDevice, s));
  PetscCall(PetscLogFlops(5.0 * g->n * g->C * g->npos));
  PetscFunctionReturn(0);
}

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
  if (p->dev.split && kind == NN_CUDA_NORM_GROUP) PetscCall(NNNormDeviceSplitStats(l, &p->dev, &g, single, x, s));
  else NNCallCUDA(NNCUDANormStats(single, &g, x, p->dev.work, NNNormDeviceScratch(&p->dev, &g), s));
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
  if (p->dev.split) { /* the parameter sums (and group norm's group sums) added over the layer's ranks */
    int         single = l->dev.prec == NN_PRECISION_SINGLE;
    const void *w      = p->affine ? l->dev.theta : NULL;
    if (p->affine) {
      NNCallCUDA(NNCUDANormSums(single, &g, 1, NN_CUDA_NORM_SUM_GRAD, x, dy, p->dev.work, NULL, NNNormDeviceScratch(&p->dev, &g), p->dev.sums, s));
      PetscCall(NNNormDeviceAllreduce(l, &p->dev, 2 * (size_t)p->C, s));
      NNCallCUDA(NNCUDANormAddParamSums(single, (size_t)p->C, p->dev.sums, l->dev.dtheta, s));
    }
    if (dx && kind == NN_CUDA_NORM_GROUP) {
      NNCallCUDA(NNCUDANormSums(single, &g, 0, NN_CUDA_NORM_SUM_GRAD, x, dy, p->dev.work, w, NNNormDeviceScratch(&p->dev, &g), p->dev.sums, s));
      PetscCall(NNNormDeviceAllreduce(l, &p->dev, 2 * NNCUDANormGroups(&g), s));
      NNCallCUDA(NNCUDANormBackwardFromSums(single, &g, 1, x, dy, p->dev.work, p->dev.sums, w, dx, s));
    } else if (dx) NNCallCUDA(NNCUDANormBackward(single, &g, 1, x, dy, p->dev.work, w, NNNormDeviceScratch(&p->dev, &g), NULL, dx, s)); /* layer norm: a pixel's channels are on one rank */
  } else NNCallCUDA(NNCUDANormBackward(l->dev.prec == NN_PRECISION_SINGLE, &g, 1, x, dy, p->dev.work, p->affine ? l->dev.theta : NULL, NNNormDeviceScratch(&p->dev, &g), p->affine ? l->dev.dtheta : NULL, dx, s));
  PetscCall(PetscLogFlops(((dx ? 10.0 : 0.0) + (p->affine ? 4.0 : 0.0)) * n * p->C * g.npos));
  PetscFunctionReturn(0);
}
