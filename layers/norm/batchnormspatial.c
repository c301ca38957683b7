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

   Single precision (-nn_precision single): the same kernels and passes (batchnormspatial_passes.h, compiled in
   double and in float) on float arrays in the DMDA's global layout with the float parameter copy. The sums,
   the (count, mean, M2) triples, the coefficients and the running statistics stay double, so the reductions
   over the ranks are those of the double passes; each output is rounded to float once.
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

/* the kernels, the local statistics and the two passes in double and in float */
#include <petnn/private/nnrealdouble.h>
#include "batchnormspatial_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "batchnormspatial_passes.h"
#include <petnn/private/nnrealundef.h>

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
  PetscInt           npix;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(NNBatchNormSpatialLocalPixels(l, x, &npix));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNBatchNormSpatialForward(l, n, npix, l->theta, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_BatchNormSpatial(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  PetscInt           npix;
  const PetscScalar *xa, *dya;
  PetscScalar       *dxa = NULL;

  PetscFunctionBegin;
  PetscCall(NNBatchNormSpatialLocalPixels(l, x, &npix));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(NNBatchNormSpatialBackward(l, n, npix, l->theta, l->dtheta, xa, dya, dxa));
  if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): float arrays in the global layout of the input DMDA, whose owned box gives
   the rank's pixels; the float parameter copy and gradient (src/layer/interface/layersingle.c) */
static PetscErrorCode NNBatchNormSpatialOwnedPixels(NNLayer l, PetscInt *npix)
{
  DM       da;
  PetscInt xm, ym, zm;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &da));
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &xm, &ym, &zm));
  *npix = xm * ym * zm;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardSingle_BatchNormSpatial(NNLayer l, PetscInt n, const float *x, float *y)
{
  PetscInt npix = 0;

  PetscFunctionBegin;
  PetscCall(NNBatchNormSpatialOwnedPixels(l, &npix));
  PetscCall(NNBatchNormSpatialForwardSingle(l, n, npix, l->stheta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_BatchNormSpatial(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  PetscInt npix = 0;

  PetscFunctionBegin;
  PetscCall(NNBatchNormSpatialOwnedPixels(l, &npix));
  PetscCall(NNBatchNormSpatialBackwardSingle(l, n, npix, l->stheta, l->sdtheta, x, dy, dx));
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
  l->ops->forwardsingle   = NNLayerForwardSingle_BatchNormSpatial;
  l->ops->backwardsingle  = NNLayerBackwardSingle_BatchNormSpatial;
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
