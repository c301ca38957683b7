/*
   Batch normalization of spatial (DMDA) activations, as torch.nn.BatchNorm2d / BatchNorm3d
   (affine, tracking running statistics): per-channel statistics over the batch and all pixels.

     training:   y = gamma (x - mu_B) / sqrt(var_B + eps) + beta      (biased batch variance var_B)
                 running_mean = (1-momentum) running_mean + momentum mu_B
                 running_var  = (1-momentum) running_var  + momentum var_B m/(m-1)   (unbiased)
                 num_batches_tracked += 1
     evaluation: y = gamma (x - running_mean) / sqrt(running_var + eps) + beta

   m = n * (number of pixels) values per channel. Tensors (names, shapes, order and initial values
   as batchnorm1d and PyTorch): weight [C] (1), bias [C] (0), running_mean [C] (0), running_var [C] (1),
   num_batches_tracked [1] (0).

   Layout (layers/spatial/spatial.c): the rank's local array is [pixel][s][c] with s < nbatch, so the values
   a rank contributes to channel c are x[p][s][c], s < n, of its pixels p; the loops run over the
   contiguous run [0, n*C) of each pixel with per-slot copies of the per-channel coefficients.
   Batch slots s >= n are not counted (whatever the layer before left there) and get zero output
   and zero input gradient. The output has the input's DMDA.

   Parallel statistics (the layer's communicator, which holds the pieces of every sample):
   - forward (training): each rank computes count, mean and centered sum of squares M2 of each
     channel over its own values (two local passes, no cancellation), then ONE MPI_Allreduce with
     a user operation combines the (count, mean, M2) triples pairwise (Chan, Golub and LeVeque):
       mean = (na mean_a + nb mean_b)/n,  M2 = M2_a + M2_b + (mean_b - mean_a)^2 na nb / n.
     The operation is commutative bit for bit (canonical operand order), so every rank gets
     identical statistics and the replicated running statistics stay identical. The two local
     passes (mean, then centered sums) are what PyTorch's CPU kernel does too; one pass of sums
     and sums of squares would lose eps mean^2/var relative accuracy. Evaluation mode needs no
     communication.
   - backward: per-channel sums of dy and dy (x - mean), ONE MPI_Allreduce of 2C values; they give
     the gradients of beta and gamma (already summed over the ranks) and the batch-statistics
     input gradient dx = gamma invstd (dy - sum(dy)/m - xhat sum(dy xhat)/m).
   xhat is recomputed from the forward input x in backward (no activation-sized workspace).
*/
#include "batchnorm.h"

typedef struct {
  NNBatchNormBase p;          /* momentum, epsilon, channels (layers/norm/batchnormbase.c) */
  PetscInt     nd;            /* spatial dimensions: 2 or 3 */
  PetscScalar *mean, *invstd; /* statistics used by the last forward pass, [C] each */
  PetscScalar *s1, *s2;       /* per-channel workspace, [C] each */
  PetscScalar *sums;          /* backward sums [2C]: sum dy, sum dy (x - mean) */
  PetscReal   *stats;         /* [C][3]: count, mean, M2 (forward reduction) */
  /* per-slot arrays [nbatch*C] matching one pixel's run [s][c]: the loops run over whole runs */
  PetscScalar *mue;           /* mean[c] expanded (kept from forward to backward) */
  PetscScalar *acc1, *acc2;   /* accumulators, then coefficients */
  PetscScalar *ae, *be;       /* coefficients */
  PetscBool    batchstats;    /* the last forward pass normalized with batch statistics (training) */
  MPI_Datatype stattype;      /* 3 reals: one channel's (count, mean, M2) */
  MPI_Op       statop;        /* pairwise combination of (count, mean, M2) */
} NNLayer_BatchNormSpatial;

/* ---------------------------------------------------------------- statistics */

/* lexicographic order of (count, mean, M2) triples */
static int NNBatchNormStatsLess(const PetscReal *a, const PetscReal *b)
{
  for (int k = 0; k < 3; k++) {
    if (a[k] < b[k]) return 1;
    if (a[k] > b[k]) return 0;
  }
  return 0;
}

/*
   inout <- in (+) inout for *len channels of (count, mean, M2). The two operands are combined in
   a canonical order (the smaller triple first), so the result does not depend on which one MPI
   passes as in: the operation is commutative bit for bit whatever the compiler contracts into
   FMAs, and every rank gets the same statistics (the running statistics stay replicated).
*/
static void MPIAPI NNBatchNormStatsCombine(void *in, void *inout, int *len, MPI_Datatype *dtype PETSC_UNUSED)
{
  const PetscReal *a = (const PetscReal *)in;
  PetscReal       *b = (PetscReal *)inout;

  for (int i = 0; i < *len; i++, a += 3, b += 3) {
    const PetscReal *lo = a, *hi = b;
    PetscReal        n, d, r[3];
    if (NNBatchNormStatsLess(b, a)) {
      lo = b;
      hi = a;
    }
    n = lo[0] + hi[0];
    if (lo[0] == 0 || hi[0] == 0) {
      const PetscReal *nz = lo[0] == 0 ? hi : lo;
      r[0] = nz[0];
      r[1] = nz[1];
      r[2] = nz[2];
    } else {
      d    = hi[1] - lo[1];
      r[0] = n;
      r[1] = (lo[0] * lo[1] + hi[0] * hi[1]) / n;
      r[2] = lo[2] + hi[2] + d * d * (lo[0] * hi[0]) / n;
    }
    b[0] = r[0];
    b[1] = r[1];
    b[2] = r[2];
  }
}

/* ---------------------------------------------------------------- kernels over the runs [s][c] of the rank's pixels
   x[p*D + i], i < L = n*C: the n used slots of pixel p (D = nbatch*C); per-slot arrays have length L */

/* acc[i] += sum_p x[p][i] */
static void NNBNSumRuns(PetscInt npix, PetscInt D, PetscInt L, const PetscScalar *PETSC_RESTRICT x, PetscScalar *PETSC_RESTRICT acc)
{
  for (PetscInt p = 0; p < npix; p++) {
    const PetscScalar *PETSC_RESTRICT xr = x + p * D;
    for (PetscInt i = 0; i < L; i++) acc[i] += xr[i];
  }
}

/* a1[i] += sum_p d, a2[i] += sum_p d^2 with d = x[p][i] - mu[i] */
static void NNBNCenteredSums(PetscInt npix, PetscInt D, PetscInt L, const PetscScalar *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT mu, PetscScalar *PETSC_RESTRICT a1, PetscScalar *PETSC_RESTRICT a2)
{
  for (PetscInt p = 0; p < npix; p++) {
    const PetscScalar *PETSC_RESTRICT xr = x + p * D;
    for (PetscInt i = 0; i < L; i++) {
      PetscScalar d = xr[i] - mu[i];
      a1[i] += d;
      a2[i] += d * d;
    }
  }
}

/* a1[i] += sum_p g, a2[i] += sum_p g (x - mu[i]) */
static void NNBNGradSums(PetscInt npix, PetscInt D, PetscInt L, const PetscScalar *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT g, const PetscScalar *PETSC_RESTRICT mu, PetscScalar *PETSC_RESTRICT a1, PetscScalar *PETSC_RESTRICT a2)
{
  for (PetscInt p = 0; p < npix; p++) {
    const PetscScalar *PETSC_RESTRICT xr = x + p * D, *PETSC_RESTRICT gr = g + p * D;
    for (PetscInt i = 0; i < L; i++) {
      a1[i] += gr[i];
      a2[i] += gr[i] * (xr[i] - mu[i]);
    }
  }
}

/*
   the per-slot affine maps of the forward and backward passes, slots s >= n set to zero:
     g == NULL:           y[p][i] = a[i] (x[p][i] - mu[i]) + b[i]
     g != NULL:           y[p][i] = u[i] g[p][i] + a[i] (x[p][i] - mu[i]) + b[i]
     g != NULL, a == NULL: y[p][i] = u[i] g[p][i]
*/
static void NNBNApply(PetscInt npix, PetscInt D, PetscInt L, const PetscScalar *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT mu, const PetscScalar *PETSC_RESTRICT a, const PetscScalar *PETSC_RESTRICT b, const PetscScalar *PETSC_RESTRICT g, const PetscScalar *PETSC_RESTRICT u, PetscScalar *PETSC_RESTRICT y)
{
  for (PetscInt p = 0; p < npix; p++) {
    const PetscScalar *PETSC_RESTRICT xr = x + p * D, *PETSC_RESTRICT gr = g ? g + p * D : NULL;
    PetscScalar *PETSC_RESTRICT       yr = y + p * D;
    if (!g)
      for (PetscInt i = 0; i < L; i++) yr[i] = a[i] * (xr[i] - mu[i]) + b[i];
    else if (a)
      for (PetscInt i = 0; i < L; i++) yr[i] = u[i] * gr[i] + a[i] * (xr[i] - mu[i]) + b[i];
    else
      for (PetscInt i = 0; i < L; i++) yr[i] = u[i] * gr[i];
    for (PetscInt i = L; i < D; i++) yr[i] = 0; /* slots s >= n */
  }
}

/* out[c] = sum_s acc[s*C + c] */
static void NNBNFold(PetscInt n, PetscInt C, const PetscScalar *acc, PetscScalar *out)
{
  for (PetscInt c = 0; c < C; c++) out[c] = 0;
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt c = 0; c < C; c++) out[c] += acc[s * C + c];
}

/* e[s*C + c] = v[c] */
static void NNBNExpand(PetscInt n, PetscInt C, const PetscScalar *v, PetscScalar *e)
{
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt c = 0; c < C; c++) e[s * C + c] = v[c];
}

/*
   count, mean and centered sum of squares of each channel over the rank's values (slots s < n of
   its npix pixels) into bn->stats. Corrected two-pass: the mean, then the sums of d = x - mean and
   d^2 (the sum of d corrects the rounding of the first mean).
*/
static PetscErrorCode NNBatchNormSpatialLocalStats(NNLayer_BatchNormSpatial *bn, PetscInt npix, PetscInt nb, PetscInt n, const PetscScalar *x)
{
  PetscInt  C = bn->p.C, D = nb * C, L = n * C;
  PetscReal cnt = (PetscReal)npix * (PetscReal)n;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(bn->acc1, L));
  NNBNSumRuns(npix, D, L, x, bn->acc1);
  NNBNFold(n, C, bn->acc1, bn->s1);
  for (PetscInt c = 0; c < C; c++) bn->mean[c] = cnt > 0 ? bn->s1[c] / cnt : 0.0;
  NNBNExpand(n, C, bn->mean, bn->mue);
  PetscCall(PetscArrayzero(bn->acc1, L));
  PetscCall(PetscArrayzero(bn->acc2, L));
  NNBNCenteredSums(npix, D, L, x, bn->mue, bn->acc1, bn->acc2);
  NNBNFold(n, C, bn->acc1, bn->s1);
  NNBNFold(n, C, bn->acc2, bn->s2);
  for (PetscInt c = 0; c < C; c++) {
    bn->stats[3 * c]     = cnt;
    bn->stats[3 * c + 1] = cnt > 0 ? PetscRealPart(bn->mean[c] + bn->s1[c] / cnt) : 0.0;
    bn->stats[3 * c + 2] = cnt > 0 ? PetscMax(PetscRealPart(bn->s2[c] - bn->s1[c] * bn->s1[c] / cnt), 0.0) : 0.0;
  }
  PetscCall(PetscLogFlops(5.0 * npix * L));
  PetscFunctionReturn(0);
}

/* stats [C][3] (count, mean, M2) of the rank's values combined over the layer's ranks as the forward pass does (the
   device passes on activations split over ranks, layers/norm/norm_cuda.c) */
PetscErrorCode NNBatchNormSpatialCombineStats(NNLayer l, PetscReal *stats)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, stats, (PetscMPIInt)bn->p.C, bn->stattype, bn->statop, PetscObjectComm((PetscObject)l)));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the layer */

static PetscErrorCode NNLayerSetUp_BatchNormSpatial(NNLayer l)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;
  PetscInt                  C;

  PetscFunctionBegin;
  if (l->inshape.ndim != bn->nd + 1) {
    char s[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(s), s));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Batch-norm layer %s (%s) needs %s samples but %s produces shape %s; use %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, bn->nd == 2 ? "(C,H,W)" : "(C,D,H,W)", l->inputname ? l->inputname : "its input", s,
            l->inshape.ndim == 1 ? NNLAYERBATCHNORM1D " for flat features" : (l->inshape.ndim == 3 ? NNLAYERBATCHNORM2D " for (C,H,W) samples" : (l->inshape.ndim == 4 ? NNLAYERBATCHNORM3D " for (C,D,H,W) samples" : "a layer that matches the shape")));
  }
  C = l->inshape.dim[0];
  PetscCall(NNBatchNormSetUpTensors(l, C));
  PetscCall(PetscMalloc6(C, &bn->mean, C, &bn->invstd, C, &bn->s1, C, &bn->s2, 2 * C, &bn->sums, 3 * C, &bn->stats));
  PetscCall(PetscMalloc5(l->nbatch * C, &bn->mue, l->nbatch * C, &bn->acc1, l->nbatch * C, &bn->acc2, l->nbatch * C, &bn->ae, l->nbatch * C, &bn->be));
  PetscCallMPI(MPI_Type_contiguous(3, MPIU_REAL, &bn->stattype));
  PetscCallMPI(MPI_Type_commit(&bn->stattype));
  PetscCallMPI(MPI_Op_create(NNBatchNormStatsCombine, 1, &bn->statop));
  bn->batchstats = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_BatchNormSpatial(NNLayer l)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree6(bn->mean, bn->invstd, bn->s1, bn->s2, bn->sums, bn->stats));
  PetscCall(PetscFree5(bn->mue, bn->acc1, bn->acc2, bn->ae, bn->be));
  if (bn->stattype != MPI_DATATYPE_NULL) PetscCallMPI(MPI_Type_free(&bn->stattype));
  if (bn->statop != MPI_OP_NULL) PetscCallMPI(MPI_Op_free(&bn->statop));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNNormDeviceReset(&bn->p.dev));
#endif
  PetscFunctionReturn(0);
}

/* the output has the input's layout: a global Vec of the input's DMDA */
static PetscErrorCode NNLayerCreateOutputVec_BatchNormSpatial(NNLayer l, Vec *y)
{
  DM da;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &da));
  PetscCall(DMCreateGlobalVector(da, y));
  PetscFunctionReturn(0);
}

/* number of local pixels of a spatial activation Vec */
static PetscErrorCode NNBatchNormSpatialLocalPixels(NNLayer l, Vec x, PetscInt *npix)
{
  PetscInt len, D = l->nbatch * l->inshape.dim[0];

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &len));
  PetscCheck(len % D == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Batch-norm layer %s: local length %" PetscInt_FMT " of its input is not a multiple of nbatch*C = %" PetscInt_FMT "; it needs the spatial (DMDA) activation its output Vec was made for", ((PetscObject)l)->name, len, D);
  *npix = len / D;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_BatchNormSpatial(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;
  MPI_Comm                  comm = PetscObjectComm((PetscObject)l);
  PetscInt                  C = bn->p.C, nb = l->nbatch, D = nb * C, npix;
  PetscReal                 m = (PetscReal)n * (PetscReal)(NNShapeSize(&l->inshape) / C); /* values per channel */
  const PetscScalar        *gamma = l->theta, *beta = l->theta + C, *xa;
  PetscScalar              *rmean = l->buf, *rvar = l->buf + C, *nbt = l->buf + 2 * C, *ya, *a = bn->s1;

  PetscFunctionBegin;
  PetscCall(NNBatchNormSpatialLocalPixels(l, x, &npix));
  PetscCall(VecGetArrayRead(x, &xa));
  bn->batchstats = l->training;
  if (l->training) {
    PetscCheck(m > 1, comm, PETSC_ERR_ARG_SIZ, "Batch-norm layer %s in training mode needs more than 1 value per channel, got %g (batch %" PetscInt_FMT " x pixels); use a larger batch or evaluation mode", ((PetscObject)l)->name, (double)m, n);
    PetscCall(NNBatchNormSpatialLocalStats(bn, npix, nb, n, xa));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bn->stats, (PetscMPIInt)C, bn->stattype, bn->statop, comm));
    PetscCheck(bn->stats[0] == m, comm, PETSC_ERR_PLIB, "Batch-norm layer %s: the ranks hold %g values per channel, expected %g", ((PetscObject)l)->name, (double)bn->stats[0], (double)m);
    for (PetscInt c = 0; c < C; c++) {
      PetscReal var = bn->stats[3 * c + 2] / m; /* biased */
      bn->mean[c]   = bn->stats[3 * c + 1];
      NNBatchNormTrainingStats(&bn->p, c, bn->mean[c], var, m, bn->invstd, rmean, rvar);
    }
    nbt[0] += 1;
  } else NNBatchNormRunningStats(&bn->p, rmean, rvar, bn->mean, bn->invstd);
  for (PetscInt c = 0; c < C; c++) a[c] = gamma[c] * bn->invstd[c];
  NNBNExpand(n, C, a, bn->ae);
  NNBNExpand(n, C, beta, bn->be);
  NNBNExpand(n, C, bn->mean, bn->mue);
  PetscCall(VecGetArrayWrite(y, &ya));
  NNBNApply(npix, D, n * C, xa, bn->mue, bn->ae, bn->be, NULL, NULL, ya);
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscLogFlops(3.0 * npix * n * C));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_BatchNormSpatial(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;
  PetscInt                  C = bn->p.C, nb = l->nbatch, D = nb * C, L = n * C, npix;
  PetscReal                 m     = (PetscReal)n * (PetscReal)(NNShapeSize(&l->inshape) / C);
  const PetscScalar        *gamma = l->theta, *xa, *dya;
  PetscScalar              *dgamma = l->dtheta, *dbeta = l->dtheta + C, *sdy = bn->sums, *sdx = bn->sums + C, *dxa;
  PetscMPIInt               cnt;

  PetscFunctionBegin;
  PetscCall(NNBatchNormSpatialLocalPixels(l, x, &npix));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  /* sum dy and sum dy (x - mean) over the rank's values, then over the ranks */
  PetscCall(PetscArrayzero(bn->acc1, L));
  PetscCall(PetscArrayzero(bn->acc2, L));
  NNBNGradSums(npix, D, L, xa, dya, bn->mue, bn->acc1, bn->acc2);
  NNBNFold(n, C, bn->acc1, sdy);
  NNBNFold(n, C, bn->acc2, sdx);
  PetscCall(PetscMPIIntCast(2 * C, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bn->sums, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt c = 0; c < C; c++) {
    sdx[c] *= bn->invstd[c]; /* sum dy xhat */
    dgamma[c] += sdx[c];
    dbeta[c] += sdy[c];
  }
  PetscCall(PetscLogFlops(4.0 * npix * L));
  if (dx) {
    /* dx = u dy + w (x - mean) + v: u = gamma invstd, v = -u sum(dy)/m, w = -u invstd sum(dy xhat)/m;
       fixed statistics (eval mode): dx = u dy */
    PetscScalar *u = bn->s1, *v = bn->s2, *w = sdy; /* w overwrites sdy[c] after v[c] has used it */
    for (PetscInt c = 0; c < C; c++) {
      u[c] = gamma[c] * bn->invstd[c];
      v[c] = -u[c] * sdy[c] / m;
      w[c] = -u[c] * bn->invstd[c] * sdx[c] / m;
    }
    NNBNExpand(n, C, u, bn->acc1);
    NNBNExpand(n, C, w, bn->ae);
    NNBNExpand(n, C, v, bn->be);
    PetscCall(VecGetArrayWrite(dx, &dxa));
    NNBNApply(npix, D, L, xa, bn->mue, bn->batchstats ? bn->ae : NULL, bn->be, dya, bn->acc1, dxa);
    PetscCall(VecRestoreArrayWrite(dx, &dxa));
    PetscCall(PetscLogFlops((bn->batchstats ? 5.0 : 1.0) * npix * L));
  }
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_BatchNormSpatial(NNLayer l, PetscViewer v)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;
  PetscMPIInt               size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)l), &size));
  PetscCall(PetscViewerASCIIPrintf(v, "momentum %g, epsilon %g, statistics over batch and %s reduced over %d rank%s\n", (double)bn->p.momentum, (double)bn->p.eps, bn->nd == 2 ? "H x W" : "D x H x W", size, size > 1 ? "s" : ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_BatchNormSpatial(NNLayer l, PetscInt nd)
{
  NNLayer_BatchNormSpatial *bn;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bn));
  bn->nd                  = nd;
  bn->stattype            = MPI_DATATYPE_NULL;
  bn->statop              = MPI_OP_NULL;
  l->data                 = bn;
  l->ops->setup           = NNLayerSetUp_BatchNormSpatial;
  l->ops->reset           = NNLayerReset_BatchNormSpatial;
  l->ops->forwardvec      = NNLayerForwardVec_BatchNormSpatial;
  l->ops->backwardvec     = NNLayerBackwardVec_BatchNormSpatial;
  l->ops->createoutputvec = NNLayerCreateOutputVec_BatchNormSpatial;
  l->ops->view            = NNLayerView_BatchNormSpatial;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/norm/norm_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_BatchNorm;
  l->ops->backwarddevice = NNLayerBackwardDevice_BatchNorm;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks (the statistics and sums reduced on the host) */
#endif
  PetscCall(NNBatchNormCreateBase(l));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERBATCHNORM2D - "batchnorm2d": batch normalization of (C,H,W) samples in the spatial (DMDA)
   layout (torch.nn.BatchNorm2d): per-channel statistics over the batch and all pixels

   Training mode normalizes with the batch mean and biased variance and updates the running
   statistics (with the unbiased variance); evaluation mode normalizes with the running statistics.
   The statistics and the parameter gradients are summed over all ranks holding pieces of the
   batch (one MPI_Allreduce in the forward pass, one in the backward pass), so a run on any number
   of ranks computes what one rank would. Only the n samples of a partial batch count.

   Options Database Keys:
+  -<prefix>momentum <m> - running-statistics momentum (default 0.1)
-  -<prefix>epsilon <eps> - added to the variance (default 1e-5)

   Tensors: weight [C], bias [C], running_mean [C], running_var [C], num_batches_tracked [1].

   Level: beginner

.seealso: `NNLAYERBATCHNORM3D`, `NNLAYERBATCHNORM1D`, `NNLayerBatchNormSetMomentum()`, `NNLayerBatchNormSetEpsilon()`, `NNLAYERTOSPATIAL`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm2d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_BatchNormSpatial(l, 2));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERBATCHNORM3D - "batchnorm3d": batch normalization of (C,D,H,W) samples in the 3-d spatial
   (DMDA) layout (torch.nn.BatchNorm3d); see `NNLAYERBATCHNORM2D`

   Options Database Keys:
+  -<prefix>momentum <m> - running-statistics momentum (default 0.1)
-  -<prefix>epsilon <eps> - added to the variance (default 1e-5)

   Tensors: weight [C], bias [C], running_mean [C], running_var [C], num_batches_tracked [1].

   Level: beginner

.seealso: `NNLAYERBATCHNORM2D`, `NNLayerBatchNormSetMomentum()`, `NNLayerBatchNormSetEpsilon()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm3d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_BatchNormSpatial(l, 3));
  PetscFunctionReturn(0);
}
