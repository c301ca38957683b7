/*
   Batch normalization over (N,C) inputs, as torch.nn.BatchNorm1d (affine, tracking running stats).

     training:   y = gamma (x - mu_B) / sqrt(var_B + eps) + beta      (biased batch variance var_B)
                 running_mean = (1-momentum) running_mean + momentum mu_B
                 running_var  = (1-momentum) running_var  + momentum var_B m/(m-1)   (unbiased)
                 num_batches_tracked += 1
     evaluation: y = gamma (x - running_mean) / sqrt(running_var + eps) + beta

   Tensors (state_dict order and names of PyTorch): weight [C] (1), bias [C] (0), running_mean [C] (0),
   running_var [C] (1), num_batches_tracked [1] (0).

   The per-channel reductions are written for a layout [n][C][inner] (inner = 1 here) and take an MPI
   communicator over which the partial sums are added (MPI_COMM_NULL: none). The spatial types
   (layers/norm/batchnormspatial.c) run their own kernels over channels-last runs; the tensors,
   options, setters and running statistics of both are layers/norm/batchnormbase.c.
*/
#include "batchnorm.h"

typedef struct {
  NNBatchNormBase p;          /* momentum, epsilon, channels (layers/norm/batchnormbase.c) */
  PetscScalar *xhat;          /* normalized input of the last forward pass, capacity nbatch*C */
  PetscScalar *mean, *invstd; /* statistics used by the last forward pass, [C] each */
  PetscScalar *s1, *s2;       /* reduction workspace, [C] each */
  PetscBool    batchstats;    /* the last forward pass normalized with batch statistics (training) */
} NNLayer_BatchNorm;

/* ---------------------------------------------------------------- reusable per-channel reductions */

/* adds partial per-channel sums over the ranks of comm (no-op for MPI_COMM_NULL) */
static PetscErrorCode NNBatchNormAllreduce(MPI_Comm comm, PetscInt C, PetscScalar *a, PetscScalar *b)
{
  PetscFunctionBegin;
  if (comm == MPI_COMM_NULL) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, a, (PetscMPIInt)C, MPIU_SCALAR, MPIU_SUM, comm));
  if (b) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, b, (PetscMPIInt)C, MPIU_SCALAR, MPIU_SUM, comm));
  PetscFunctionReturn(0);
}

/*
   NNBatchNormChannelSums - per-channel sums of d = x - shift and (optionally) of d^2 over the
   layout [n][C][inner], reduced over comm.  shift may be NULL (zero).  With shift = the mean from
   a first pass this is the corrected two-pass variance: var = s2/m - (s1/m)^2, accurate even when
   |mean| >> std.
*/
static PetscErrorCode NNBatchNormChannelSums(MPI_Comm comm, PetscInt n, PetscInt C, PetscInt inner, const PetscScalar *x, const PetscScalar *shift, PetscScalar *sum, PetscScalar *sumsq)
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(sum, C));
  if (sumsq) PetscCall(PetscArrayzero(sumsq, C));
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      const PetscScalar *xc = x + (s * C + c) * inner;
      const PetscScalar  k  = shift ? shift[c] : 0.0;
      PetscScalar        a = 0, b = 0;
      for (PetscInt i = 0; i < inner; i++) {
        PetscScalar d = xc[i] - k;
        a += d;
        b += d * d;
      }
      sum[c] += a;
      if (sumsq) sumsq[c] += b;
    }
  }
  PetscCall(PetscLogFlops((sumsq ? 4.0 : 2.0) * n * C * inner));
  PetscCall(NNBatchNormAllreduce(comm, C, sum, sumsq));
  PetscFunctionReturn(0);
}

/*
   NNBatchNormGradSums - per-channel sums of dy and of dy*xhat over the layout [n][C][inner],
   reduced over comm: the gradients of beta and gamma, and the two terms of the batch-statistics
   input gradient.
*/
static PetscErrorCode NNBatchNormGradSums(MPI_Comm comm, PetscInt n, PetscInt C, PetscInt inner, const PetscScalar *dy, const PetscScalar *xhat, PetscScalar *sumdy, PetscScalar *sumdyxhat)
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(sumdy, C));
  PetscCall(PetscArrayzero(sumdyxhat, C));
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      const PetscScalar *g = dy + (s * C + c) * inner, *h = xhat + (s * C + c) * inner;
      PetscScalar        a = 0, b = 0;
      for (PetscInt i = 0; i < inner; i++) {
        a += g[i];
        b += g[i] * h[i];
      }
      sumdy[c] += a;
      sumdyxhat[c] += b;
    }
  }
  PetscCall(PetscLogFlops(3.0 * n * C * inner));
  PetscCall(NNBatchNormAllreduce(comm, C, sumdy, sumdyxhat));
  PetscFunctionReturn(0);
}

/* xhat = (x - mean) invstd and y = gamma xhat + beta, per channel, over the layout [n][C][inner] */
static void NNBatchNormApply(PetscInt n, PetscInt C, PetscInt inner, const PetscScalar *x, const PetscScalar *mean, const PetscScalar *invstd, const PetscScalar *gamma, const PetscScalar *beta, PetscScalar *xhat, PetscScalar *y)
{
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      PetscInt off = (s * C + c) * inner;
      for (PetscInt i = 0; i < inner; i++) {
        xhat[off + i] = (x[off + i] - mean[c]) * invstd[c];
        y[off + i]    = gamma[c] * xhat[off + i] + beta[c];
      }
    }
  }
}

/*
   NNBatchNormInputGradient - dx for the given per-channel sums, m values per channel:
     batch statistics: dx = gamma invstd (dy - sumdy/m - xhat sumdyxhat/m)
     fixed statistics (sumdy = sumdyxhat = NULL): dx = gamma invstd dy
*/
static void NNBatchNormInputGradient(PetscInt n, PetscInt C, PetscInt inner, PetscReal m, const PetscScalar *dy, const PetscScalar *xhat, const PetscScalar *gamma, const PetscScalar *invstd, const PetscScalar *sumdy, const PetscScalar *sumdyxhat, PetscScalar *dx)
{
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      PetscInt    off = (s * C + c) * inner;
      PetscScalar g   = gamma[c] * invstd[c];
      if (sumdy) {
        PetscScalar a = sumdy[c] / m, b = sumdyxhat[c] / m;
        for (PetscInt i = 0; i < inner; i++) dx[off + i] = g * (dy[off + i] - a - xhat[off + i] * b);
      } else {
        for (PetscInt i = 0; i < inner; i++) dx[off + i] = g * dy[off + i];
      }
    }
  }
}

/* ---------------------------------------------------------------- the layer */

static PetscErrorCode NNLayerSetUp_BatchNorm1d(NNLayer l)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;
  PetscInt           C;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckInputRank(l, 1));
  C = l->inshape.dim[0];
  PetscCall(NNBatchNormSetUpTensors(l, C));
  PetscCall(PetscMalloc5(l->nbatch * C, &bn->xhat, C, &bn->mean, C, &bn->invstd, C, &bn->s1, C, &bn->s2));
  bn->batchstats = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_BatchNorm1d(NNLayer l)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree5(bn->xhat, bn->mean, bn->invstd, bn->s1, bn->s2));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNNormDeviceReset(&bn->p.dev));
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForward_BatchNorm1d(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;
  PetscInt           C  = bn->p.C;
  const PetscScalar *gamma = l->theta, *beta = l->theta + C;
  PetscScalar       *rmean = l->buf, *rvar = l->buf + C, *nbt = l->buf + 2 * C;

  PetscFunctionBegin;
  bn->batchstats = l->training;
  if (l->training) {
    PetscReal m = (PetscReal)n; /* values per channel (times inner, and summed over a group, when spatial) */
    PetscCheck(n > 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Batch-norm layer %s in training mode needs more than 1 value per channel, got a batch of %" PetscInt_FMT " (use a larger batch or evaluation mode)", ((PetscObject)l)->name, n);
    /* corrected two-pass statistics: the mean, then the centered sums */
    PetscCall(NNBatchNormChannelSums(MPI_COMM_NULL, n, C, 1, x, NULL, bn->s1, NULL));
    for (PetscInt c = 0; c < C; c++) bn->mean[c] = bn->s1[c] / m;
    PetscCall(NNBatchNormChannelSums(MPI_COMM_NULL, n, C, 1, x, bn->mean, bn->s1, bn->s2));
    for (PetscInt c = 0; c < C; c++) {
      PetscScalar d   = bn->s1[c] / m;
      PetscReal   var = PetscMax(PetscRealPart(bn->s2[c] / m - d * d), 0.0); /* biased */
      bn->mean[c] += d;
      NNBatchNormTrainingStats(&bn->p, c, bn->mean[c], var, m, bn->invstd, rmean, rvar);
    }
    nbt[0] += 1;
  } else NNBatchNormRunningStats(&bn->p, rmean, rvar, bn->mean, bn->invstd);
  NNBatchNormApply(n, C, 1, x, bn->mean, bn->invstd, gamma, beta, bn->xhat, y);
  PetscCall(PetscLogFlops(4.0 * n * C));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_BatchNorm1d(NNLayer l, PetscInt n, const PetscScalar *x PETSC_UNUSED, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  NNLayer_BatchNorm *bn    = (NNLayer_BatchNorm *)l->data;
  PetscInt           C     = bn->p.C;
  const PetscScalar *gamma = l->theta;
  PetscScalar       *dgamma = l->dtheta, *dbeta = l->dtheta + C;

  PetscFunctionBegin;
  PetscCall(NNBatchNormGradSums(MPI_COMM_NULL, n, C, 1, dy, bn->xhat, bn->s1, bn->s2));
  for (PetscInt c = 0; c < C; c++) {
    dgamma[c] += bn->s2[c];
    dbeta[c] += bn->s1[c];
  }
  if (dx) {
    if (bn->batchstats) NNBatchNormInputGradient(n, C, 1, (PetscReal)n, dy, bn->xhat, gamma, bn->invstd, bn->s1, bn->s2, dx);
    else NNBatchNormInputGradient(n, C, 1, (PetscReal)n, dy, bn->xhat, gamma, bn->invstd, NULL, NULL, dx);
    PetscCall(PetscLogFlops((bn->batchstats ? 5.0 : 2.0) * n * C));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_BatchNorm1d(NNLayer l, PetscViewer v)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "momentum %g, epsilon %g\n", (double)bn->p.momentum, (double)bn->p.eps));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERBATCHNORM1D - "batchnorm1d": batch normalization of 1-d features (torch.nn.BatchNorm1d on (N,C))

   Training mode normalizes with the batch mean and biased variance and updates the running
   statistics (with the unbiased variance); evaluation mode normalizes with the running statistics.

   Options Database Keys:
+  -<prefix>momentum <m> - running-statistics momentum (default 0.1)
-  -<prefix>epsilon <eps> - added to the variance (default 1e-5)

   Tensors: weight [C], bias [C], running_mean [C], running_var [C], num_batches_tracked [1].

   Level: beginner

.seealso: `NNLayerBatchNormSetMomentum()`, `NNLayerBatchNormSetEpsilon()`, `NNSetTraining()`, `NNLayerType`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm1d(NNLayer l)
{
  NNLayer_BatchNorm *bn;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bn));
  l->data          = bn;
  l->ops->setup    = NNLayerSetUp_BatchNorm1d;
  l->ops->reset    = NNLayerReset_BatchNorm1d;
  l->ops->forward  = NNLayerForward_BatchNorm1d;
  l->ops->backward = NNLayerBackward_BatchNorm1d;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/norm/norm_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_BatchNorm;
  l->ops->backwarddevice = NNLayerBackwardDevice_BatchNorm;
#endif
  l->ops->view     = NNLayerView_BatchNorm1d;
  PetscCall(NNBatchNormCreateBase(l));
  PetscFunctionReturn(0);
}
