/*
   2-d and 3-d convolution on the spatial (DMDA) layout: torch.nn.Conv2d / Conv3d with stride,
   zero padding, dilation and groups, or periodic padding.

   Input and output are DMDA global Vecs, channels-last with the batch in the dof
   (src/layer/interface/spatiallayout.c); 2-d is handled as 3-d with depth 1. From the input's DMDA the layer
   builds (NNSpatialCreateWindowDMs()):
     - a halo DMDA with the input's grid, dof and ownership ranges and the stencil width this
       decomposition needs (periodic boundaries for periodic padding); its local Vec receives the
       input through DMGlobalToLocal (the global layouts are identical, so the input Vec is used as is)
       in each pass, forward and backward, into storage all layers share (src/layer/interface/spatialscratch.c);
     - an output DMDA whose ranks own the output pixels whose windows are centred in their input.
   The arithmetic runs on the rank's owned outputs, split between threads (layers/conv/conv_run.c), by
   one of two algorithms chosen per layer from its shape (NNConvChooseAlgorithm()):
     - Winograd minimal filtering (layers/conv/conv_winograd.c) for stride 1 and dilation 1 with at
       least 16 input channels per group: F(4x4,5x5) does 4 GEMM products per output and channel
       pair instead of 25;
     - im2col + GEMM (layers/conv/conv_im2col.c) otherwise, with GEMM depth (in/groups)*kh*kw (+1: the
       bias rides along as a column of ones).
   Backward: the weight and bias gradients of the rank's pixels are summed over the ranks with
   MPI_Allreduce and added into the (replicated) gradient; the input gradient is scattered into
   the ghosted local Vec and summed back with DMLocalToGlobal(ADD_VALUES), the adjoint of the
   halo exchange; it is not computed when the caller passes dx = NULL. Only the first n batch
   slots are computed; the output's other slots are zero.

   Parameters (PyTorch order): weight [out, in/groups, (kd,) kh, kw], bias [out]. With -<layer>_partition
   filters|channels the weight is split over the model ranks (layers/conv/conv_partition.c). The device passes
   (-nn_device cuda) are cuDNN's or im2col kernels and cuBLAS GEMMs (layers/conv/conv_device_cuda.c chooses).
*/
#include "conv.h"
#include <petnn/private/deviceimpl.h>
#include <cblas.h>


static const char *const NNConvAxisName[3] = {"width", "height", "depth"};

static PetscErrorCode NNLayerSetUp_Conv(NNLayer l)
{
  NNLayer_Conv *d    = (NNLayer_Conv *)l->data;
  MPI_Comm      comm = PetscObjectComm((PetscObject)l);
  const char   *pre  = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  const char   *name = ((PetscObject)l)->name, *type = ((PetscObject)l)->type_name;
  PetscInt      nd = d->nd, C, No[3], wdim[5];
  PetscInt64    ntap = 1; /* kernel taps, counted in 64 bits: huge kernels must not overflow before they are refused */
  NNShape      *in = &l->inshape;

  PetscFunctionBegin;
#if defined(PETNN_HAVE_CUDA)
  l->dev.split = (PetscBool)(NNConvGetDeviceAlgorithm(l) == NN_CONV_DEVICE_GEMM); /* cuDNN's passes run on one rank */
#endif
  PetscCheck(!d->badcount, comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s): -%s%s takes 1 or %" PetscInt_FMT " values (%s), got %" PetscInt_FMT, name, type, pre, d->badopt, nd, nd == 2 ? "height,width" : "depth,height,width", d->badcount);
  PetscCall(NNLayerCheckInputRank(l, nd + 1));
  C = in->dim[0];
  PetscCheck(d->filters > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s) has %" PetscInt_FMT " filters; give a positive -%sfilters", name, type, d->filters, pre);
  PetscCheck(d->groups > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%sgroups %" PetscInt_FMT " must be positive", name, type, pre, d->groups);
  PetscCheck(C % d->groups == 0 && d->filters % d->groups == 0, comm, PETSC_ERR_ARG_INCOMP, "Layer %s (%s): -%sgroups %" PetscInt_FMT " must divide both the %" PetscInt_FMT " input channels and the %" PetscInt_FMT " filters", name, type, pre, d->groups, C, d->filters);
  PetscCall(PetscMemzero(&d->w, sizeof(d->w)));
  d->w.nd       = nd;
  d->w.periodic = d->periodic;
  for (PetscInt a = 0; a < 3; a++) {
    if (a >= nd) {
      d->w.N[a] = d->w.k[a] = d->w.s[a] = d->w.dil[a] = 1;
      d->w.p[a]                                       = 0;
      continue;
    }
    PetscCheck(d->k[a] > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): kernel size %" PetscInt_FMT " along the %s must be positive (-%skernel)", name, type, d->k[a], NNConvAxisName[a], pre);
    PetscCheck(d->s[a] > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): stride %" PetscInt_FMT " along the %s must be positive (-%sstride)", name, type, d->s[a], NNConvAxisName[a], pre);
    PetscCheck(d->dil[a] > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): dilation %" PetscInt_FMT " along the %s must be positive (-%sdilation)", name, type, d->dil[a], NNConvAxisName[a], pre);
    PetscCheck((PetscInt64)d->dil[a] * (d->k[a] - 1) + 1 <= PETSC_MAX_INT / 4, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): kernel %" PetscInt_FMT " with dilation %" PetscInt_FMT " along the %s spans more pixels than a PetscInt counts (-%skernel, -%sdilation)", name, type, d->k[a], d->dil[a], NNConvAxisName[a], pre, pre);
    d->w.N[a]   = in->dim[nd - a];
    d->w.k[a]   = d->k[a];
    d->w.s[a]   = d->s[a];
    d->w.dil[a] = d->dil[a];
    d->w.p[a]   = d->pad[a] < 0 ? d->dil[a] * (d->k[a] / 2) : d->pad[a];
    if (d->periodic)
      PetscCheck(d->s[a] == 1 && d->k[a] % 2 == 1 && d->w.p[a] == d->dil[a] * (d->k[a] - 1) / 2, comm, PETSC_ERR_SUP,
                 "Layer %s (%s): periodic padding keeps the input's size, so it needs stride 1, an odd kernel and padding dilation*(kernel-1)/2 along every axis; along the %s got kernel %" PetscInt_FMT ", stride %" PetscInt_FMT ", dilation %" PetscInt_FMT ", padding %" PetscInt_FMT " (-%skernel, -%sstride, -%sdilation, -%spadding; leave -%spadding unset for the default)",
                 name, type, NNConvAxisName[a], d->k[a], d->s[a], d->dil[a], d->w.p[a], pre, pre, pre, pre, pre);
    ntap *= d->k[a];
    PetscCheck(ntap * (C / d->groups) <= PETSC_MAX_INT / d->filters - 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): %" PetscInt_FMT " filters of %" PetscInt_FMT " channels and kernel %" PetscInt_FMT " along the %s make more weights than a PetscInt counts (-%sfilters, -%skernel)", name, type, d->filters, C / d->groups, d->k[a], NNConvAxisName[a], pre, pre);
  }
  PetscCall(NNSpatialWindowOutputSize(l, &d->w, No));
  wdim[0] = d->filters;
  wdim[1] = C / d->groups;
  for (PetscInt a = 0; a < nd; a++) wdim[2 + a] = d->k[nd - 1 - a];
  if (nd == 2) PetscCall(NNShapeSet(&l->outshape, 3, (PetscInt[]){d->filters, No[1], No[0]}));
  else PetscCall(NNShapeSet(&l->outshape, 4, (PetscInt[]){d->filters, No[2], No[1], No[0]}));
  PetscCall(NNLayerCheckPartition(l, 2, (NNLayerPartition[]){NN_PARTITION_FILTERS, NN_PARTITION_CHANNELS}));
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNConvPartSetUp(l, wdim)); /* layers/conv/conv_partition.c */
  else {
    PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, nd + 2, wdim));
    if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->filters));
  }
  PetscCall(PetscMalloc3(d->filters * (wdim[1] * ntap + 1), &d->Wp, d->filters * (wdim[1] * ntap + 1), &d->dWp, l->nparam, &d->grad));
  PetscFunctionReturn(0);
}

/* PyTorch's default: kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in/groups * prod(kernel), for weight and bias */
static PetscErrorCode NNLayerInitialize_Conv(NNLayer l)
{
  NNLayer_Conv *d     = (NNLayer_Conv *)l->data;
  PetscInt      fanin = l->inshape.dim[0] / d->groups;
  PetscScalar  *theta = (PetscScalar *)l->theta;
  PetscReal     bound;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < d->nd; a++) fanin *= d->k[a];
  bound = 1.0 / PetscSqrtReal((PetscReal)fanin);
  if (l->part.type != NN_PARTITION_REPLICATE) {
    PetscCall(NNConvPartInitialize(l, bound));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < l->nparam; i++) theta[i] = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Conv(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloReset(&d->h));
  PetscCall(PetscFree3(d->Wp, d->dWp, d->grad));
  PetscCall(PetscFree2(d->work, d->iwork));
  PetscCall(PetscFree3(d->U, d->dU, d->wwork));
  PetscCall(NNConvWinogradDestroy(&d->g));
  PetscCall(NNConvPartReset(l));
  PetscCall(NNConvSingleReset(l));
#if defined(PETNN_HAVE_CUDNN)
  PetscCall(NNConvResetDevice(l));
#endif
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNConvGemmResetDevice(&d->gemm));
#endif
  PetscFunctionReturn(0);
}

/*
   The algorithm: Winograd for stride 1, dilation 1 and GEMMs deep enough (in/groups at least 16),
   with tiles that make input tiles of 8 (2-d) or 4 to 6 (3-d) pixels per axis; otherwise im2col.
   Rows of a GEMM block: im2col tiles of at most 1024 rows and about 512 KiB (at least one pixel
   of the batch; OpenBLAS's small-matrix kernels take such GEMMs without packing); Winograd blocks
   of 32 rows (the transformed block stays in cache).
*/
static PetscErrorCode NNConvChooseAlgorithm(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvGeom   *g = &d->g;
  const char   *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscBool     able = PETSC_TRUE, big = PETSC_FALSE;
  PetscInt      m[3];

  PetscFunctionBegin;
  for (PetscInt a = 0; a < d->nd; a++) {
    if (g->s[a] != 1 || g->dil[a] != 1 || g->k[a] > 7) able = PETSC_FALSE;
    if (g->k[a] > 1) big = PETSC_TRUE;
  }
  able = (PetscBool)(able && big);
  PetscCheck(d->winograd <= 0 || able, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s): -%swinograd %" PetscInt_FMT " needs stride 1, dilation 1, a kernel larger than 1 and at most 7 along every axis; use -%swinograd 0 (im2col) or leave it unset", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, d->winograd, pre);
  if (d->winograd > 0 || (d->winograd < 0 && able && g->Cg >= 16)) {
    for (PetscInt a = 0; a < 3; a++) {
      if (d->winograd > 0) m[a] = d->winograd;
      else m[a] = PetscMax(2, (d->nd == 2 ? 9 : 5) - g->k[a]);
      m[a] = PetscMin(m[a], PetscMax(2, g->om[a])); /* no tile much larger than the owned outputs */
    }
    g->alg = NN_CONV_WINOGRAD;
    PetscCall(NNConvWinogradSetUp(g, m));
    g->rows = d->tilerows > 0 ? d->tilerows : 32;
  } else {
    g->alg  = NN_CONV_IM2COL;
    g->rows = d->tilerows > 0 ? d->tilerows : NNConvIm2colDefaultRows(g->Ka);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_Conv(NNLayer l, Vec *y)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvGeom   *g = &d->g;
  PetscInt      nscalar, nint;

  PetscFunctionBegin;
  PetscCall(PetscFree2(d->work, d->iwork));
  PetscCall(PetscFree3(d->U, d->dU, d->wwork));
  PetscCall(NNConvWinogradDestroy(g));
  PetscCall(NNSpatialHaloSetUp(l, &d->w, l->nbatch * d->filters, &d->h));
  PetscCall(DMCreateGlobalVector(d->h.daout, y));
#if defined(PETNN_HAVE_CUDA)
  l->dev.split = (PetscBool)(NNConvGetDeviceAlgorithm(l) == NN_CONV_DEVICE_GEMM); /* NNDeviceSetUp() checks it next */
#endif

  PetscCall(PetscMemzero(g, sizeof(*g))); /* the Winograd matrices were freed above */
  PetscCall(NNSpatialHaloGetCorners(&d->h, d->nd, g->os, g->om, g->gs, g->gm));
  { /* a halo of nothing (one rank along every axis, zero padding): the input's own array is the ghosted array */
    PetscInt  xs[3], xm[3];
    PetscBool same = PETSC_TRUE;
    PetscCall(DMDAGetCorners(d->h.dahalo, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
    for (PetscInt a = 0; a < d->nd; a++) same = (PetscBool)(same && xs[a] == g->gs[a] && xm[a] == g->gm[a]);
    if (!same) PetscCall(NNSpatialHaloCreateVecs(&d->h));
  }
  g->ntap = 1;
  for (PetscInt a = 0; a < 3; a++) {
    g->N[a]   = d->w.N[a];
    g->k[a]   = d->w.k[a];
    g->s[a]   = d->w.s[a];
    g->p[a]   = d->w.p[a];
    g->dil[a] = d->w.dil[a];
    g->ntap *= g->k[a];
  }
  g->periodic = d->periodic;
  g->nb       = l->nbatch;
  g->ns       = l->nbatch;
  g->Cin      = l->inshape.dim[0];
  g->Cout     = d->filters;
  g->G        = d->groups;
  g->Cg       = g->Cin / g->G;
  g->Og       = g->Cout / g->G;
  g->K        = g->ntap * g->Cg;
  g->bias     = d->bias;
  g->Ka       = g->K + (d->bias ? 1 : 0);
  g->npix     = g->om[0] * g->om[1] * g->om[2];
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNConvPartGeometry(l)); /* this rank's filters or channels */
  PetscCall(NNConvChooseAlgorithm(l));
  d->nthreads = d->threads > 0 ? d->threads : (PetscInt)openblas_get_num_threads();
  d->nthreads = PetscMax(1, PetscMin(d->nthreads, NN_CONV_MAX_THREADS));
  PetscCall(NNConvWorkspaceSize(g, d->nthreads, &nscalar, &nint));
  PetscCall(PetscMalloc2(PetscMax(nscalar, g->nb * g->Cout), &d->work, PetscMax(nint, 1), &d->iwork)); /* the forward pass also builds a pixel of biases in work */
  if (g->alg == NN_CONV_WINOGRAD) {
    PetscInt nu = NNConvWinogradTransformedSize(g);
    PetscCall(PetscMalloc3(nu, &d->U, nu, &d->dU, 3 * PetscMax(g->w.npos, g->ntap) * g->Cg * g->Cout, &d->wwork));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNConvCheckReady(NNLayer l)
{
  PetscFunctionBegin;
  PetscCheck(((NNLayer_Conv *)l->data)->h.daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_Conv(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_Conv      *d = (NNLayer_Conv *)l->data;
  NNConvGeom         g = d->g;
  NNConvPass         pass;
  const PetscScalar *xa, *W = l->theta, *b;
  PetscScalar       *ya, *yfull;
  Vec                xin;
  PetscLogDouble     flops, wflops = 0;

  PetscFunctionBegin;
  PetscCall(NNConvCheckReady(l));
  g.ns = n;
  b    = l->theta + g.Cout * g.K;
  NNConvPackWeights(&g, W, b, d->Wp);
  if (g.alg == NN_CONV_WINOGRAD) PetscCall(NNConvWinogradWeights(&g, d->Wp, d->U, d->wwork, &wflops));
  PetscCall(NNSpatialHaloGetInput(&d->h, x, &xin));
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArrayWrite(y, &yfull));
  ya = l->part.type == NN_PARTITION_FILTERS ? d->pbuf : yfull; /* filters: this rank's channels, gathered below */
  /* the slots computed: im2col writes them (its GEMM adds the bias), Winograd adds into the bias; the others are zero */
  if (g.alg == NN_CONV_WINOGRAD) {
    PetscScalar *pattern = d->work; /* the first pixel's values, copied to the others */
    for (PetscInt s = 0; s < n; s++) {
      if (g.bias) PetscCall(PetscArraycpy(pattern + s * g.Cout, b, g.Cout));
      else PetscCall(PetscArrayzero(pattern + s * g.Cout, g.Cout));
    }
    PetscCall(PetscArrayzero(pattern + n * g.Cout, (g.nb - n) * g.Cout));
    for (PetscInt q = 0; q < g.npix; q++) PetscCall(PetscArraycpy(ya + q * g.nb * g.Cout, pattern, g.nb * g.Cout));
  } else if (n < g.nb)
    for (PetscInt q = 0; q < g.npix; q++) PetscCall(PetscArrayzero(ya + (q * g.nb + n) * g.Cout, (g.nb - n) * g.Cout));
  PetscCall(NNConvPartInput(l, xa, &pass.x));
  pass.y  = ya;
  pass.dy = NULL;
  pass.dx = NULL;
  pass.dW = NULL;
  pass.db = NULL;
  pass.Wp = d->Wp;
  pass.U  = d->U;
  PetscCall(NNConvRun(&g, &pass, d->nthreads, d->work, d->iwork, &flops));
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNConvPartOutput(l, n, yfull));
  PetscCall(VecRestoreArrayWrite(y, &yfull));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNSpatialHaloRestoreInput(&d->h));
  PetscCall(PetscLogFlops(flops + wflops));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_Conv(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_Conv      *d = (NNLayer_Conv *)l->data;
  NNConvGeom         g = d->g;
  NNConvPass         pass;
  const PetscScalar *xa, *dya;
  PetscScalar       *dxa = NULL;
  Vec                xin, dxin = NULL;
  PetscMPIInt        cnt;
  PetscLogDouble     flops, wflops = 0;

  PetscFunctionBegin;
  PetscCall(NNConvCheckReady(l));
  g.ns = n;
  PetscCall(PetscArrayzero(d->dWp, g.Cout * g.Ka));
  if (g.alg == NN_CONV_WINOGRAD) PetscCall(PetscArrayzero(d->dU, NNConvWinogradTransformedSize(&g)));
  PetscCall(PetscArrayzero(d->grad, l->nparam));
  PetscCall(NNSpatialHaloGetInput(&d->h, x, &xin)); /* again: keeping every layer's ghosted input between the passes costs more memory than an exchange costs time */
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) {
    PetscCall(NNSpatialHaloGetInputGradient(&d->h, dx, &dxin));
    PetscCall(VecZeroEntries(dxin));
    PetscCall(VecGetArray(dxin, &dxa));
  }
  PetscCall(NNConvPartInput(l, xa, &pass.x));
  pass.y = NULL;
  PetscCall(NNConvPartOutputGradient(l, n, dya, &pass.dy, d->grad));
  PetscCall(NNConvPartInputGradient(l, dxa, &pass.dx));
  pass.dW = g.alg == NN_CONV_WINOGRAD ? d->dU : d->dWp;
  pass.db = g.bias && g.alg == NN_CONV_WINOGRAD ? d->grad + g.Cout * g.K : NULL; /* im2col: the last row of dWp */
  pass.Wp = d->Wp; /* packed (and transformed) by the forward pass */
  pass.U  = d->U;
  PetscCall(NNConvRun(&g, &pass, d->nthreads, d->work, d->iwork, &flops));
  if (dxa) PetscCall(NNConvPartGatherInputGradient(l, dxa));
  if (g.alg == NN_CONV_WINOGRAD) PetscCall(NNConvWinogradWeightGradient(&g, d->dU, d->dWp, d->wwork, &wflops));
  NNConvUnpackGradient(&g, d->dWp, d->grad, d->grad + g.Cout * g.K, g.alg == NN_CONV_IM2COL);
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNSpatialHaloRestoreInput(&d->h));
  /* this layer's parameter gradient, summed over the ranks that hold pieces of the samples */
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt i = 0; i < l->nparam; i++) l->dtheta[i] += d->grad[i];
  if (dx) {
    PetscCall(VecRestoreArray(dxin, &dxa));
    PetscCall(NNSpatialHaloRestoreInputGradient(&d->h, dx));
    PetscCall(NNConvPartSumInputGradient(l, dx));
  }
  PetscCall(PetscLogFlops(flops + wflops));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_Conv(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNConvComposeFunctions(l, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_Conv(NNLayer l, PetscInt nd)
{
  NNLayer_Conv *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->nd       = nd;
  d->groups   = 1;
  d->winograd = -1;
  d->devalg   = -1;
  for (PetscInt a = 0; a < 3; a++) {
    d->k[a]   = 3;
    d->s[a]   = 1;
    d->pad[a] = -1;
    d->dil[a] = 1;
  }
  d->bias                 = PETSC_TRUE;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_Conv;
  l->ops->initialize      = NNLayerInitialize_Conv;
  l->ops->forwardvec      = NNLayerForwardVec_Conv;
  l->ops->backwardvec     = NNLayerBackwardVec_Conv;
  l->part.floatpasses     = PETSC_TRUE; /* its float passes take filters and channels (conv_partition_passes.h) */
  l->part.devicepasses    = PETSC_TRUE; /* and its device passes: the GEMM ones (conv_gemm_cuda.c) */
  l->ops->forwardsingle   = NNLayerForwardSingle_Conv;
  l->ops->backwardsingle  = NNLayerBackwardSingle_Conv;
  l->ops->createoutputvec = NNLayerCreateOutputVec_Conv;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Conv;
  l->ops->view            = NNLayerView_Conv;
  l->ops->reset           = NNLayerReset_Conv;
  l->ops->destroy         = NNLayerDestroy_Conv;
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = NNLayerForwardDevice_Conv; /* cuDNN or GEMMs (layers/conv/conv_device_cuda.c) */
  l->ops->backwarddevice = NNLayerBackwardDevice_Conv;
  l->dev.split           = PETSC_TRUE; /* the GEMM passes, also on spatial activations split over ranks (set-up checks) */
#endif
  PetscCall(NNConvComposeFunctions(l, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERCONV2D - "conv2d": 2-d convolution (torch.nn.Conv2d) on a spatial DMDA activation

   Options Database Keys:
+  -<prefix>filters <n> - output channels (required)
.  -<prefix>kernel <k[,k]> - kernel size, one value or (height,width) (default 3)
.  -<prefix>stride <s[,s]> - stride (default 1)
.  -<prefix>padding <p[,p]> - zero padding on each side (default dilation*(kernel/2): "same" for odd kernels)
.  -<prefix>dilation <d[,d]> - spacing of the kernel taps (default 1)
.  -<prefix>groups <g> - groups; must divide the input channels and the filters (default 1)
.  -<prefix>bias <bool> - add a bias (default true)
.  -<prefix>periodic <bool> - periodic padding: needs stride 1, odd kernels and padding dilation*(kernel-1)/2
.  -<prefix>winograd <m> - Winograd output tile per axis: -1 automatic (default), 0 im2col + GEMM; m > 0 needs stride 1 and dilation 1
.  -<prefix>threads <t> - threads splitting the outputs or the batch (default OpenBLAS's thread count)
.  -<prefix>tile_rows <r> - rows (pixels or tiles times batch slots) of a GEMM block (default chosen by the algorithm)
.  -<prefix>device_algorithm <gemm,cudnn> - on the device (-nn_device cuda): PetNN's im2col kernels and cuBLAS GEMMs
   (default: faster than cuDNN's passes on the networks measured, bench/RESULTS.md) or cuDNN (conv2d on one rank's
   activations, a PetNN built with cuDNN)
-  -<prefix>partition <replicate,filters,channels> - model parallelism: output channels (with their bias) or input
   channels split over the model ranks (-nn_model_ranks, `NNLayerSetPartition()`; groups 1)

   Notes:
   Parameters are weight [filters, in/groups, kh, kw] and bias [filters], as in PyTorch. The input
   must be spatial (a to_spatial layer first); the output has PyTorch's size
   floor((in + 2 padding - dilation (kernel - 1) - 1) / stride) + 1 along each axis.

   Stride 1 and dilation 1 with at least 16 input channels per group use Winograd minimal filtering
   (F(4x4,5x5) for 5x5 kernels, F(6x6,3x3) for 3x3; accurate to about 1e-14 relative), everything else
   im2col + GEMM with GEMM depth in/groups*kh*kw. -log_view counts the flops done; -nn_view shows the
   algorithm. The input gradient is not computed for the first layer with parameters (dx = NULL).

   Level: beginner

.seealso: `NNLAYERCONV3D`, `NNLAYERTOSPATIAL`, `NNLAYERSPATIALFLATTEN`, `NNLayerConvSetFilters()`, `NNLayerConvSetDilation()`, `NNLayerConvSetGroups()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Conv2d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Conv(l, 2));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERCONV3D - "conv3d": 3-d convolution (torch.nn.Conv3d) on a 3-d spatial DMDA activation

   Options Database Keys:
+  -<prefix>filters <n> - output channels (required)
.  -<prefix>kernel <k[,k,k]> - kernel size, one value or (depth,height,width) (default 3)
.  -<prefix>stride <s[,s,s]> - stride (default 1)
.  -<prefix>padding <p[,p,p]> - zero padding on each side (default dilation*(kernel/2))
.  -<prefix>dilation <d[,d,d]> - spacing of the kernel taps (default 1)
.  -<prefix>groups <g> - groups (default 1)
.  -<prefix>bias <bool> - add a bias (default true)
.  -<prefix>periodic <bool> - periodic padding: needs stride 1, odd kernels and padding dilation*(kernel-1)/2
.  -<prefix>winograd <m> - Winograd output tile per axis: -1 automatic (default), 0 im2col + GEMM
.  -<prefix>threads <t> - threads splitting the outputs or the batch (default OpenBLAS's thread count)
.  -<prefix>tile_rows <r> - rows of a GEMM block
.  -<prefix>device_algorithm <gemm> - on the device (-nn_device cuda): PetNN's im2col kernels and cuBLAS GEMMs (cuDNN is for conv2d)
-  -<prefix>partition <replicate,filters,channels> - model parallelism, as for conv2d

   Notes:
   Parameters are weight [filters, in/groups, kd, kh, kw] and bias [filters], as in PyTorch; samples
   are (C,D,H,W) on a 3-d DMDA (x = W, y = H, z = D). The implementation is conv2d's (Winograd
   F(2x2x2,3x3x3) for 3x3x3 kernels with at least 16 input channels per group).

   Level: beginner

.seealso: `NNLAYERCONV2D`, `NNLAYERTOSPATIAL`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Conv3d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Conv(l, 3));
  PetscFunctionReturn(0);
}
