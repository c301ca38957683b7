/*
   Max and average pooling on the spatial (DMDA) layout: maxpool2d, maxpool3d, avgpool2d, avgpool3d
   (torch.nn.MaxPool2d/3d and AvgPool2d/3d with ceil_mode=False, dilation 1, count_include_pad=True).

   Output o along an axis pools the inputs o*stride - pad + j, j < kernel; padding is -inf for max
   pooling and zeros counted in the divisor (always kernel^d, since windows never pass the padded
   edge with ceil_mode=False) for average pooling. Ties in max pooling go to the first maximum in
   window order (z, then y, then x), NaN propagates, as in PyTorch.

   Decomposition (src/layer/interface/spatiallayout.c, NNSpatialCreateWindowDMs()): each output pixel belongs to
   the rank holding its window centre, so outputs follow the input's split, uneven splits included;
   a halo DMDA gives the windows that reach into neighbours their inputs through DMGlobalToLocal,
   and the backward pass sums the halo back with DMLocalToGlobal(ADD_VALUES). When no window leaves
   its rank's subdomain (halo 0: the stride divides the subdomain starts, the common case) the
   input Vec is read and the input gradient written directly, without any communication.

   Kernels work on whole [pixel][s*C] runs (channels-last with the batch in the dof): for each
   output pixel and each tap of its window one contiguous run of nbatch*C entries. Windows with
   2 x 2 taps (the common 2x2 pooling) are done in one pass over their four runs; larger windows
   tap by tap in blocks that stay in L1. Max pooling stores the argmax (tap number in window order)
   of every output entry in the forward pass; the backward pass routes the gradient there.
   Non-overlapping windows (stride >= kernel) write the input gradient once (a select, no
   accumulation, no zeroing when the windows tile the subdomain); overlapping ones scatter-add.
*/
#include "pool.h"
#include <petnn/private/deviceimpl.h>

#define NN_POOL_BLOCK 512 /* entries of a run processed at a time (max pooling keeps value and argmax in L1) */


/* geometry of one pass: owned outputs, the input box (ghosted or owned) and the window */
typedef struct {
  PetscInt D;             /* entries per pixel (nbatch * C) */
  PetscInt os[3], om[3];  /* owned output corners (x, y, z) */
  PetscInt gs[3], gm[3];  /* input box corners */
  PetscInt N[3], k[3], s[3], p[3];
  PetscInt ntap;          /* taps of a full window */
} PoolGeom;

static const char *NNPoolName(NNLayer l)
{
  return ((PetscObject)l)->type_name;
}

static PetscErrorCode NNLayerSetUp_Pool(NNLayer l)
{
  NNLayer_Pool *d    = (NNLayer_Pool *)l->data;
  MPI_Comm      comm = PetscObjectComm((PetscObject)l);
  const char   *pre  = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscInt      No[3], nd = d->nd, s = d->stride > 0 ? d->stride : d->k;

  PetscFunctionBegin;
  if (l->inshape.ndim != nd + 1) {
    char sh[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(sh), sh));
    SETERRQ(comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs %s samples but %s produces shape %s%s", ((PetscObject)l)->name, NNPoolName(l), nd == 2 ? "(C,H,W)" : "(C,D,H,W)", l->inputname ? l->inputname : "its input", sh, l->inshape.ndim == (nd == 2 ? 4 : 3) ? (nd == 2 ? "; use the 3-d pooling type for (C,D,H,W) samples" : "; use the 2-d pooling type for (C,H,W) samples") : "");
  }
  PetscCheck(d->k > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%skernel %" PetscInt_FMT " must be positive", ((PetscObject)l)->name, NNPoolName(l), pre, d->k);
  PetscCheck(d->stride >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%sstride %" PetscInt_FMT " must be positive (0: the kernel size)", ((PetscObject)l)->name, NNPoolName(l), pre, d->stride);
  PetscCheck(d->pad >= 0 && 2 * d->pad <= d->k, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%spadding %" PetscInt_FMT " must be between 0 and half the kernel size %" PetscInt_FMT " (as in PyTorch)", ((PetscObject)l)->name, NNPoolName(l), pre, d->pad, d->k);
  PetscCall(PetscMemzero(&d->w, sizeof(d->w)));
  d->w.nd = nd;
  for (PetscInt a = 0; a < 3; a++) {
    d->w.N[a]   = a < nd ? l->inshape.dim[nd - a] : 1;
    d->w.k[a]   = a < nd ? d->k : 1;
    d->w.s[a]   = a < nd ? s : 1;
    d->w.p[a]   = a < nd ? d->pad : 0;
    d->w.dil[a] = 1;
  }
  PetscCall(NNSpatialWindowOutputSize(l, &d->w, No));
  if (nd == 2) PetscCall(NNShapeSet(&l->outshape, 3, (PetscInt[]){l->inshape.dim[0], No[1], No[0]}));
  else PetscCall(NNShapeSet(&l->outshape, 4, (PetscInt[]){l->inshape.dim[0], No[2], No[1], No[0]}));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Pool(NNLayer l)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloReset(&d->h));
  PetscCall(PetscFree(d->arg));
  PetscCall(PetscFree(d->toff));
  d->haveforward = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNPoolGeometry(NNLayer l, PoolGeom *g)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;

  PetscFunctionBegin;
  PetscCheck(d->h.daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, NNPoolName(l));
  PetscCall(NNSpatialHaloGetCorners(&d->h, d->nd, g->os, g->om, g->gs, g->gm));
  g->D    = l->nbatch * l->inshape.dim[0];
  g->ntap = 1;
  for (PetscInt a = 0; a < 3; a++) {
    g->N[a] = d->w.N[a];
    g->k[a] = d->w.k[a];
    g->s[a] = d->w.s[a];
    g->p[a] = d->w.p[a];
    g->ntap *= g->k[a];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_Pool(NNLayer l, Vec *y)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;
  DM            dain;
  PoolGeom      g;
  PetscInt      xs[3], xm[3], nout;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(NNLayerReset_Pool(l));
  PetscCall(NNSpatialHaloSetUp(l, &d->w, l->nbatch * l->inshape.dim[0], &d->h));
  if (d->h.halo > 0) PetscCall(NNSpatialHaloCreateVecs(&d->h)); /* storage lent per pass (src/layer/interface/spatialscratch.c) */
  PetscCall(NNPoolGeometry(l, &g));
  PetscCall(DMDAGetCorners(dain, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
  d->tiles = (PetscBool)(d->h.halo == 0);
  for (PetscInt a = 0; a < d->nd; a++)
    if (g.s[a] != g.k[a] || g.p[a] != 0 || g.os[a] * g.k[a] != xs[a] || g.om[a] * g.k[a] != xm[a]) d->tiles = PETSC_FALSE;
  /* taps in window order: offset of input pixel (lo + t) from the window's first pixel lo in the box */
  PetscCall(PetscMalloc1(g.ntap, &d->toff));
  for (PetscInt tz = 0, t = 0; tz < g.k[2]; tz++)
    for (PetscInt ty = 0; ty < g.k[1]; ty++)
      for (PetscInt tx = 0; tx < g.k[0]; tx++) d->toff[t++] = (tz * g.gm[1] + ty) * g.gm[0] + tx;
  nout = g.om[0] * g.om[1] * g.om[2] * g.D;
  if (d->max) PetscCall(PetscMalloc1(nout, &d->arg));
  PetscCall(DMCreateGlobalVector(d->h.daout, y));
  PetscFunctionReturn(0);
}

/* the window of output (ox, oy, oz): first pixel lo (may lie in the padding) and the clipped tap ranges [t0, t1) */
static inline void PoolWindow(const PoolGeom *g, const PetscInt o[3], PetscInt lo[3], PetscInt t0[3], PetscInt t1[3])
{
  for (PetscInt a = 0; a < 3; a++) {
    lo[a] = o[a] * g->s[a] - g->p[a];
    t0[a] = PetscMax(0, -lo[a]);
    t1[a] = PetscMin(g->k[a], g->N[a] - lo[a]);
  }
}

/* index of input pixel lo + (tx, ty, tz) in the input box */
static inline PetscInt PoolPixel(const PoolGeom *g, const PetscInt lo[3], PetscInt tx, PetscInt ty, PetscInt tz)
{
  return ((lo[2] + tz - g->gs[2]) * g->gm[1] + (lo[1] + ty - g->gs[1])) * g->gm[0] + (lo[0] + tx - g->gs[0]);
}

#include <petnn/private/nnrealdouble.h>
#include "pool_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "pool_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForwardVec_Pool(NNLayer l, PetscInt n PETSC_UNUSED, Vec x, Vec y)
{
  NNLayer_Pool      *d = (NNLayer_Pool *)l->data;
  PoolGeom           g;
  const PetscScalar *xa;
  PetscScalar       *ya;
  Vec                xin;

  PetscFunctionBegin;
  PetscCall(NNPoolGeometry(l, &g));
  PetscCall(NNSpatialHaloGetInput(&d->h, x, &xin));
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  if (d->max) PetscCall(NNPoolForwardMax(d, &g, xa, ya));
  else PetscCall(NNPoolForwardAvg(&g, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNSpatialHaloRestoreInput(&d->h));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_Pool(NNLayer l, PetscInt n PETSC_UNUSED, Vec x PETSC_UNUSED, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_Pool      *d = (NNLayer_Pool *)l->data;
  PoolGeom           g;
  const PetscScalar *dya;
  PetscScalar       *dxa;
  Vec                dxin;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCheck(!d->max || d->haveforward, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): run the forward pass before the backward pass (it stores the argmax)", ((PetscObject)l)->name, NNPoolName(l));
  PetscCall(NNPoolGeometry(l, &g));
  PetscCall(NNSpatialHaloGetInputGradient(&d->h, dx, &dxin));
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(VecGetArray(dxin, &dxa));
  if (!d->tiles) { /* on this rank's block only: whether the windows tile it differs between ranks, so no VecZeroEntries() (a
                      collective event, a barrier under -log_sync) */
    PetscInt nloc;
    PetscCall(VecGetLocalSize(dxin, &nloc));
    PetscCall(PetscArrayzero(dxa, nloc));
  }
  if (d->max) PetscCall(NNPoolBackwardMax(d, &g, dya, dxa));
  else PetscCall(NNPoolBackwardAvg(&g, dya, dxa));
  PetscCall(VecRestoreArray(dxin, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(NNSpatialHaloRestoreInputGradient(&d->h, dx));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): the same loops on float arrays, the halo exchanged in float */
static PetscErrorCode NNLayerForwardSingle_Pool(NNLayer l, PetscInt n PETSC_UNUSED, const float *x, float *y)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;
  PoolGeom      g;
  const float  *xin;

  PetscFunctionBegin;
  PetscCall(NNPoolGeometry(l, &g));
  PetscCall(NNSpatialHaloGetInputSingle(&d->h, x, &xin));
  if (d->max) PetscCall(NNPoolForwardMaxSingle(d, &g, xin, y));
  else PetscCall(NNPoolForwardAvgSingle(&g, xin, y));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_Pool(NNLayer l, PetscInt n PETSC_UNUSED, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;
  PoolGeom      g;
  float        *dxin;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCheck(!d->max || d->haveforward, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): run the forward pass before the backward pass (it stores the argmax)", ((PetscObject)l)->name, NNPoolName(l));
  PetscCall(NNPoolGeometry(l, &g));
  PetscCall(NNSpatialHaloGetInputGradientSingle(&d->h, dx, &dxin)); /* zeroed */
  if (d->max) PetscCall(NNPoolBackwardMaxSingle(d, &g, dy, dxin));
  else PetscCall(NNPoolBackwardAvgSingle(&g, dy, dxin));
  PetscCall(NNSpatialHaloRestoreInputGradientSingle(&d->h, dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_Pool(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNPoolComposeFunctions(l, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_Pool(NNLayer l, PetscInt nd, PetscBool max)
{
  NNLayer_Pool *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->nd                   = nd;
  d->max                  = max;
  d->k                    = 2;
  d->stride               = 0;
  d->pad                  = 0;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_Pool;
  l->ops->forwardvec      = NNLayerForwardVec_Pool;
  l->ops->backwardvec     = NNLayerBackwardVec_Pool;
  l->ops->forwardsingle   = NNLayerForwardSingle_Pool;
  l->ops->backwardsingle  = NNLayerBackwardSingle_Pool;
  l->ops->createoutputvec = NNLayerCreateOutputVec_Pool;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Pool;
  l->ops->view            = NNLayerView_Pool;
  l->ops->reset           = NNLayerReset_Pool;
  l->ops->destroy         = NNLayerDestroy_Pool;
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = NNLayerForwardDevice_Pool; /* layers/pool/pool_cuda.c */
  l->ops->backwarddevice = NNLayerBackwardDevice_Pool;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscCall(NNPoolComposeFunctions(l, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERMAXPOOL2D - "maxpool2d": 2-d max pooling (torch.nn.MaxPool2d, ceil_mode=False) on a spatial DMDA activation

   Options Database Keys:
+  -<prefix>kernel <k> - window size (square, default 2)
.  -<prefix>stride <s> - stride (default the kernel size)
-  -<prefix>padding <p> - implicit -inf padding on each side, 0 <= p <= k/2 (default 0)

   Notes:
   (C,H,W) -> (C, (H+2p-k)/s+1, (W+2p-k)/s+1). Ties go to the first maximum in window order and
   NaN propagates, as in PyTorch; the backward pass routes each output gradient to the argmax
   stored by the forward pass. Each output pixel is computed by the rank holding its window
   centre; windows reaching into a neighbour's subdomain get their inputs by a halo exchange,
   which is skipped when the stride divides the subdomain starts. The input must be spatial
   (`NNLAYERTOSPATIAL` first).

   Level: beginner

.seealso: `NNLAYERAVGPOOL2D`, `NNLAYERMAXPOOL3D`, `NNLayerPoolSetKernelSize()`, `NNLayerPoolSetStride()`, `NNLayerPoolSetPadding()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_MaxPool2d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Pool(l, 2, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERMAXPOOL3D - "maxpool3d": 3-d max pooling (torch.nn.MaxPool3d, ceil_mode=False) on a 3-d spatial DMDA activation

   Options Database Keys:
+  -<prefix>kernel <k> - window size (cubic, default 2)
.  -<prefix>stride <s> - stride (default the kernel size)
-  -<prefix>padding <p> - implicit -inf padding on each side, 0 <= p <= k/2 (default 0)

   Notes:
   (C,D,H,W) -> (C, (D+2p-k)/s+1, (H+2p-k)/s+1, (W+2p-k)/s+1); see `NNLAYERMAXPOOL2D`.

   Level: beginner

.seealso: `NNLAYERMAXPOOL2D`, `NNLAYERAVGPOOL3D`, `NNLayerPoolSetKernelSize()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_MaxPool3d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Pool(l, 3, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERAVGPOOL2D - "avgpool2d": 2-d average pooling (torch.nn.AvgPool2d, ceil_mode=False, count_include_pad=True) on a spatial DMDA activation

   Options Database Keys:
+  -<prefix>kernel <k> - window size (square, default 2)
.  -<prefix>stride <s> - stride (default the kernel size)
-  -<prefix>padding <p> - implicit zero padding on each side, counted in the divisor k*k, 0 <= p <= k/2 (default 0)

   Notes:
   The decomposition and halo exchange are those of `NNLAYERMAXPOOL2D`.

   Level: beginner

.seealso: `NNLAYERMAXPOOL2D`, `NNLAYERAVGPOOL3D`, `NNLAYERGLOBALAVGPOOL`, `NNLayerPoolSetKernelSize()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_AvgPool2d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Pool(l, 2, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERAVGPOOL3D - "avgpool3d": 3-d average pooling (torch.nn.AvgPool3d, ceil_mode=False, count_include_pad=True) on a 3-d spatial DMDA activation

   Options Database Keys:
+  -<prefix>kernel <k> - window size (cubic, default 2)
.  -<prefix>stride <s> - stride (default the kernel size)
-  -<prefix>padding <p> - implicit zero padding on each side, counted in the divisor k*k*k, 0 <= p <= k/2 (default 0)

   Level: beginner

.seealso: `NNLAYERAVGPOOL2D`, `NNLAYERMAXPOOL3D`, `NNLayerPoolSetKernelSize()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_AvgPool3d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Pool(l, 3, PETSC_FALSE));
  PetscFunctionReturn(0);
}
