/*
   2-d convolution on the spatial (DMDA) layout (torch.nn.Conv2d, groups = dilation = 1).

   Input and output are DMDA global Vecs, channels-last with the batch in the dof (layers/spatial.c).
   The layer builds two DMDAs from its input's DMDA (NNLayerGetInputDM()):
     - a halo DMDA with the input's grid, dof and ownership ranges and stencil width = the halo
       the kernel needs on this decomposition; its local (ghosted) Vec receives the input through
       DMGlobalToLocal (the global layouts are identical, so the input Vec is used as is);
     - an output DMDA whose ownership ranges give each rank the output pixels whose receptive
       field is centred in its input subdomain.
   Forward is an implicit GEMM over kernel offsets: for each output row and offset (dy,dx) the
   needed input pixels are a contiguous run of the ghosted row, i.e. an (npix*nbatch) x Cin
   row-major matrix, and Y(npix*nbatch x Cout) += X * Wp(dy,dx) with Wp(dy,dx)[c][o] = W[o][c][dy][dx].
   Backward: dX += dY Wp^T into the ghosted local Vec, summed back with DMLocalToGlobal(ADD_VALUES)
   (the adjoint of the halo exchange); dWp += X^T dY accumulated locally, then MPI_Allreduce over the
   ranks and added into the (replicated) gradient. Zero padding at the physical boundary, or
   periodic wrap-around through a periodic halo DMDA.

   Parameters: weight [out,in,k,k], bias [out] (PyTorch order).
*/
#include <petnn/private/nnimpl.h>
#include <cblas.h>

typedef struct {
  PetscInt     filters, k, stride, pad; /* pad < 0: default k/2 */
  PetscBool    bias, periodic;
  PetscInt     p;                       /* the padding in use */
  DM           dahalo, daout;
  Vec          xl, dxl;                 /* ghosted input and input gradient */
  PetscInt     halo;
  PetscScalar *Wp, *dWp, *g;            /* packed weights, their gradient, gradient scratch */
} NNLayer_Conv;

static PetscErrorCode NNLayerSetUp_Conv2d(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  const char   *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscInt      C, H, W, Ho, Wo;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckInputRank(l, 3));
  C = l->inshape.dim[0];
  H = l->inshape.dim[1];
  W = l->inshape.dim[2];
  PetscCheck(d->filters > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Conv2d layer %s has %" PetscInt_FMT " filters; give a positive -%sfilters", ((PetscObject)l)->name, d->filters, pre);
  PetscCheck(d->k > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Conv2d layer %s: kernel size %" PetscInt_FMT " must be positive (-%skernel)", ((PetscObject)l)->name, d->k, pre);
  PetscCheck(d->stride == 1, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Conv2d layer %s: -%sstride %" PetscInt_FMT " is not supported yet; only stride 1 (use pooling to downsample)", ((PetscObject)l)->name, pre, d->stride);
  d->p = d->pad < 0 ? d->k / 2 : d->pad;
  Ho   = H + 2 * d->p - d->k + 1;
  Wo   = W + 2 * d->p - d->k + 1;
  PetscCheck(Ho > 0 && Wo > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Conv2d layer %s: kernel %" PetscInt_FMT " with padding %" PetscInt_FMT " is larger than the %" PetscInt_FMT " x %" PetscInt_FMT " input", ((PetscObject)l)->name, d->k, d->p, H, W);
  PetscCheck(!d->periodic || (Ho == H && Wo == W), PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Conv2d layer %s: periodic padding needs an odd kernel with padding (kernel-1)/2 (got -%skernel %" PetscInt_FMT " -%spadding %" PetscInt_FMT ")", ((PetscObject)l)->name, pre, d->k, pre, d->p);
  PetscCall(NNShapeSet(&l->outshape, 3, (PetscInt[]){d->filters, Ho, Wo}));
  PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, 4, (PetscInt[]){d->filters, C, d->k, d->k}));
  if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->filters));
  PetscCall(PetscMalloc3(d->k * d->k * C * d->filters, &d->Wp, d->k * d->k * C * d->filters, &d->dWp, l->nparam, &d->g));
  PetscFunctionReturn(0);
}

/* PyTorch's default: kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = in*k*k, for weight and bias */
static PetscErrorCode NNLayerInitialize_Conv2d(NNLayer l)
{
  NNLayer_Conv *d     = (NNLayer_Conv *)l->data;
  PetscReal     bound = 1.0 / PetscSqrtReal((PetscReal)(l->inshape.dim[0] * d->k * d->k));
  PetscScalar  *theta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < l->nparam; i++) theta[i] = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  PetscFunctionReturn(0);
}

/* output ownership along one axis: output o belongs to the rank whose input range holds its
   receptive-field centre clamp(o + off); returns the halo that rank needs */
static PetscErrorCode NNConvOutputRanges(NNLayer l, const char axis[], PetscInt Nin, PetscInt Nout, PetscInt nr, const PetscInt lin[], PetscInt p, PetscInt k, PetscBool periodic, PetscInt lout[], PetscInt *halo)
{
  PetscInt off = (k - 1) / 2 - p, r = 0, a = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nr; i++) lout[i] = 0;
  for (PetscInt o = 0; o < Nout; o++) {
    PetscInt c  = PetscMin(PetscMax(o + off, 0), Nin - 1);
    PetscInt lo = o - p, hi = o - p + k - 1;
    while (c >= a + lin[r]) a += lin[r++];
    lout[r]++;
    if (!periodic) {
      lo = PetscMax(lo, 0);
      hi = PetscMin(hi, Nin - 1);
    }
    *halo = PetscMax(*halo, PetscMax(a - lo, hi - (a + lin[r] - 1)));
  }
  for (PetscInt i = 0; i < nr; i++)
    PetscCheck(lout[i] > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Conv2d layer %s: rank column/row %" PetscInt_FMT " gets no output pixels along %s (input %" PetscInt_FMT ", output %" PetscInt_FMT " over %" PetscInt_FMT " ranks); use fewer ranks along %s", ((PetscObject)l)->name, i, axis, Nin, Nout, nr, axis);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Conv2d(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&d->xl));
  PetscCall(VecDestroy(&d->dxl));
  PetscCall(DMDestroy(&d->dahalo));
  PetscCall(DMDestroy(&d->daout));
  PetscCall(PetscFree3(d->Wp, d->dWp, d->g));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_Conv2d(NNLayer l, Vec *y)
{
  NNLayer_Conv   *d = (NNLayer_Conv *)l->data;
  DM              dain;
  MPI_Comm        comm = PetscObjectComm((PetscObject)l);
  PetscInt        M, N, m, n, dof, *lxo, *lyo;
  const PetscInt *lx, *ly;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dain));
  PetscCheck(dain, comm, PETSC_ERR_ARG_WRONG, "Conv2d layer %s needs a spatial (DMDA) input but %s produces a sequential one; put a %s layer before it", ((PetscObject)l)->name, l->inputname ? l->inputname : "its input", NNLAYERTOSPATIAL);
  PetscCall(DMDAGetInfo(dain, NULL, &M, &N, NULL, &m, &n, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(dof == l->nbatch * l->inshape.dim[0] && M == l->inshape.dim[2] && N == l->inshape.dim[1], comm, PETSC_ERR_PLIB, "Conv2d layer %s: input DMDA %" PetscInt_FMT " x %" PetscInt_FMT " with dof %" PetscInt_FMT " does not match the input shape", ((PetscObject)l)->name, M, N, dof);
  PetscCall(DMDAGetOwnershipRanges(dain, &lx, &ly, NULL));
  PetscCall(VecDestroy(&d->xl));
  PetscCall(VecDestroy(&d->dxl));
  PetscCall(DMDestroy(&d->dahalo));
  PetscCall(DMDestroy(&d->daout));
  PetscCall(PetscMalloc2(m, &lxo, n, &lyo));
  d->halo = 0;
  PetscCall(NNConvOutputRanges(l, "x (width)", M, l->outshape.dim[2], m, lx, d->p, d->k, d->periodic, lxo, &d->halo));
  PetscCall(NNConvOutputRanges(l, "y (height)", N, l->outshape.dim[1], n, ly, d->p, d->k, d->periodic, lyo, &d->halo));
  PetscCall(DMDACreate2d(comm, d->periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE, d->periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M, N, m, n, dof, d->halo, lx, ly, &d->dahalo));
  PetscCall(DMSetUp(d->dahalo));
  PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, l->outshape.dim[2], l->outshape.dim[1], m, n, l->nbatch * d->filters, 0, lxo, lyo, &d->daout));
  PetscCall(DMSetUp(d->daout));
  PetscCall(PetscFree2(lxo, lyo));
  PetscCall(DMCreateLocalVector(d->dahalo, &d->xl));
  PetscCall(VecDuplicate(d->xl, &d->dxl));
  PetscCall(DMCreateGlobalVector(d->daout, y));
  PetscFunctionReturn(0);
}

/* geometry of one GEMM block: for output row oy and offset (dy,dx), output pixels [ox0,ox1) read
   input row iy at columns ox - p + dx; returns PETSC_FALSE when the block is all padding */
typedef struct {
  PetscInt xs, ys, xm, ym, gxs, gys, gxm, gym, H, W, Cin, Cout, nb, k, p;
  PetscBool periodic;
} ConvGeom;

static PetscBool ConvBlock(const ConvGeom *g, PetscInt oy, PetscInt dy, PetscInt dx, PetscInt *ox0, PetscInt *ox1, PetscInt *xoff, PetscInt *yoff)
{
  PetscInt iy = oy - g->p + dy;

  *ox0 = g->xs;
  *ox1 = g->xs + g->xm;
  if (!g->periodic) {
    if (iy < 0 || iy >= g->H) return PETSC_FALSE;
    *ox0 = PetscMax(*ox0, g->p - dx);
    *ox1 = PetscMin(*ox1, g->W + g->p - dx);
    if (*ox0 >= *ox1) return PETSC_FALSE;
  }
  *xoff = ((iy - g->gys) * g->gxm + (*ox0 - g->p + dx - g->gxs)) * g->nb * g->Cin;
  *yoff = ((oy - g->ys) * g->xm + (*ox0 - g->xs)) * g->nb * g->Cout;
  return PETSC_TRUE;
}

static PetscErrorCode NNConvGeometry(NNLayer l, ConvGeom *g)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCheck(d->daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Conv2d layer %s: create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name);
  PetscCall(DMDAGetCorners(d->daout, &g->xs, &g->ys, NULL, &g->xm, &g->ym, NULL));
  PetscCall(DMDAGetGhostCorners(d->dahalo, &g->gxs, &g->gys, NULL, &g->gxm, &g->gym, NULL));
  g->H        = l->inshape.dim[1];
  g->W        = l->inshape.dim[2];
  g->Cin      = l->inshape.dim[0];
  g->Cout     = d->filters;
  g->nb       = l->nbatch;
  g->k        = d->k;
  g->p        = d->p;
  g->periodic = d->periodic;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_Conv2d(NNLayer l, PetscInt n PETSC_UNUSED, Vec x, Vec y)
{
  NNLayer_Conv      *d = (NNLayer_Conv *)l->data;
  ConvGeom           g;
  const PetscScalar *xa, *W = l->theta, *b = l->theta + d->filters * l->inshape.dim[0] * d->k * d->k;
  PetscScalar       *ya;
  PetscInt           CC, ox0, ox1, xoff, yoff;
  PetscLogDouble     flops = 0;

  PetscFunctionBegin;
  PetscCall(NNConvGeometry(l, &g));
  CC = g.Cin * g.Cout;
  /* Wp[dy][dx][c][o] = W[o][c][dy][dx] */
  for (PetscInt o = 0; o < g.Cout; o++)
    for (PetscInt c = 0; c < g.Cin; c++)
      for (PetscInt t = 0; t < g.k * g.k; t++) d->Wp[t * CC + c * g.Cout + o] = W[(o * g.Cin + c) * g.k * g.k + t];
  PetscCall(DMGlobalToLocalBegin(d->dahalo, x, INSERT_VALUES, d->xl));
  PetscCall(DMGlobalToLocalEnd(d->dahalo, x, INSERT_VALUES, d->xl));
  PetscCall(VecGetArrayRead(d->xl, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  for (PetscInt i = 0; i < g.xm * g.ym * g.nb; i++) {
    if (d->bias) PetscCall(PetscArraycpy(ya + i * g.Cout, b, g.Cout));
    else PetscCall(PetscArrayzero(ya + i * g.Cout, g.Cout));
  }
  for (PetscInt oy = g.ys; oy < g.ys + g.ym; oy++)
    for (PetscInt dy = 0; dy < g.k; dy++)
      for (PetscInt dx = 0; dx < g.k; dx++) {
        PetscInt mrows;
        if (!ConvBlock(&g, oy, dy, dx, &ox0, &ox1, &xoff, &yoff)) continue;
        mrows = (ox1 - ox0) * g.nb;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, mrows, g.Cout, g.Cin, 1.0, xa + xoff, g.Cin, d->Wp + (dy * g.k + dx) * CC, g.Cout, 1.0, ya + yoff, g.Cout);
        flops += 2.0 * mrows * CC;
      }
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(d->xl, &xa));
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_Conv2d(NNLayer l, PetscInt n PETSC_UNUSED, Vec x PETSC_UNUSED, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_Conv      *d = (NNLayer_Conv *)l->data;
  ConvGeom           g;
  const PetscScalar *xa, *dya;
  PetscScalar       *dxa = NULL, *gW = d->g, *gb;
  PetscInt           CC, KK, ox0, ox1, xoff, yoff;
  PetscMPIInt        cnt;
  PetscLogDouble     flops = 0;

  PetscFunctionBegin;
  PetscCall(NNConvGeometry(l, &g));
  CC = g.Cin * g.Cout;
  KK = g.k * g.k;
  gb = d->g + g.Cout * g.Cin * KK;
  PetscCall(PetscArrayzero(d->dWp, KK * CC));
  PetscCall(PetscArrayzero(d->g, l->nparam));
  PetscCall(VecGetArrayRead(d->xl, &xa)); /* the halo-exchanged input of the forward pass */
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) {
    PetscCall(VecZeroEntries(d->dxl));
    PetscCall(VecGetArray(d->dxl, &dxa));
  }
  for (PetscInt oy = g.ys; oy < g.ys + g.ym; oy++)
    for (PetscInt ky = 0; ky < g.k; ky++)
      for (PetscInt kx = 0; kx < g.k; kx++) {
        PetscInt mrows, t = ky * g.k + kx;
        if (!ConvBlock(&g, oy, ky, kx, &ox0, &ox1, &xoff, &yoff)) continue;
        mrows = (ox1 - ox0) * g.nb;
        if (dx) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, mrows, g.Cin, g.Cout, 1.0, dya + yoff, g.Cout, d->Wp + t * CC, g.Cout, 1.0, dxa + xoff, g.Cin);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g.Cin, g.Cout, mrows, 1.0, xa + xoff, g.Cin, dya + yoff, g.Cout, 1.0, d->dWp + t * CC, g.Cout);
        flops += 2.0 * mrows * CC * (dx ? 2 : 1);
      }
  if (d->bias)
    for (PetscInt i = 0; i < g.xm * g.ym * g.nb; i++)
      for (PetscInt o = 0; o < g.Cout; o++) gb[o] += dya[i * g.Cout + o];
  for (PetscInt o = 0; o < g.Cout; o++)
    for (PetscInt c = 0; c < g.Cin; c++)
      for (PetscInt t = 0; t < KK; t++) gW[(o * g.Cin + c) * KK + t] = d->dWp[t * CC + c * g.Cout + o];
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(d->xl, &xa));
  /* this layer's parameter gradient, summed over the ranks that hold pieces of the samples */
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->g, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt i = 0; i < l->nparam; i++) l->dtheta[i] += d->g[i];
  if (dx) {
    PetscCall(VecRestoreArray(d->dxl, &dxa));
    PetscCall(VecZeroEntries(dx));
    PetscCall(DMLocalToGlobalBegin(d->dahalo, d->dxl, ADD_VALUES, dx));
    PetscCall(DMLocalToGlobalEnd(d->dahalo, d->dxl, ADD_VALUES, dx));
  }
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Conv2d(NNLayer l, PetscOptionItems *PetscOptionsObject)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Conv2d layer options");
  PetscCall(PetscOptionsInt("-filters", "Number of output channels", "NNLayerConvSetFilters", d->filters, &d->filters, NULL));
  PetscCall(PetscOptionsInt("-kernel", "Kernel size (square)", "NNLayerConvSetKernelSize", d->k, &d->k, NULL));
  PetscCall(PetscOptionsInt("-stride", "Stride (only 1 for now)", "NNLayerConvSetStride", d->stride, &d->stride, NULL));
  PetscCall(PetscOptionsInt("-padding", "Zero padding on each side (default kernel/2)", "NNLayerConvSetPadding", d->pad, &d->pad, NULL));
  PetscCall(PetscOptionsBool("-bias", "Add a bias", "NNLayerConvSetBias", d->bias, &d->bias, NULL));
  PetscCall(PetscOptionsBool("-periodic", "Periodic padding (wrap around) instead of zeros", "NNLayerConvSetPeriodic", d->periodic, &d->periodic, NULL));
  PetscOptionsHeadEnd();
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Conv2d(NNLayer l, PetscViewer v)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "%" PetscInt_FMT " filters, kernel %" PetscInt_FMT ", stride %" PetscInt_FMT ", %s padding %" PetscInt_FMT ", bias %s, halo %" PetscInt_FMT "\n", d->filters, d->k, d->stride, d->periodic ? "periodic" : "zero", d->p, d->bias ? "yes" : "no", d->halo));
  PetscFunctionReturn(0);
}

#define NN_CONV_SETTER(Name, T, field) \
  static PetscErrorCode NNLayerConvSet##Name##_Conv2d(NNLayer l, T v) \
  { \
    PetscFunctionBegin; \
    ((NNLayer_Conv *)l->data)->field = v; \
    l->setupcalled                   = PETSC_FALSE; \
    PetscFunctionReturn(0); \
  }
NN_CONV_SETTER(Filters, PetscInt, filters)
NN_CONV_SETTER(KernelSize, PetscInt, k)
NN_CONV_SETTER(Stride, PetscInt, stride)
NN_CONV_SETTER(Padding, PetscInt, pad)
NN_CONV_SETTER(Bias, PetscBool, bias)
NN_CONV_SETTER(Periodic, PetscBool, periodic)

static const char *const NNConvSetterNames[] = {"NNLayerConvSetFilters_C", "NNLayerConvSetKernelSize_C", "NNLayerConvSetStride_C", "NNLayerConvSetPadding_C", "NNLayerConvSetBias_C", "NNLayerConvSetPeriodic_C"};

static PetscErrorCode NNLayerDestroy_Conv2d(NNLayer l)
{
  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof(NNConvSetterNames) / sizeof(NNConvSetterNames[0]); i++) PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[i], NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERCONV2D - "conv2d": 2-d convolution (torch.nn.Conv2d) on a spatial DMDA activation

   Options Database Keys:
+  -<prefix>filters <n> - output channels (required)
.  -<prefix>kernel <k> - kernel size (default 3)
.  -<prefix>stride <s> - stride (only 1 for now)
.  -<prefix>padding <p> - zero padding on each side (default k/2)
.  -<prefix>bias <bool> - add a bias (default true)
-  -<prefix>periodic <bool> - periodic padding (odd k, padding (k-1)/2)

   Parameters: weight [filters, in, k, k], bias [filters]. The input must be spatial (to_spatial first).

   Level: beginner

.seealso: `NNLAYERTOSPATIAL`, `NNLAYERSPATIALFLATTEN`, `NNLayerConvSetFilters()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Conv2d(NNLayer l)
{
  NNLayer_Conv *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->k                    = 3;
  d->stride               = 1;
  d->pad                  = -1;
  d->bias                 = PETSC_TRUE;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_Conv2d;
  l->ops->initialize      = NNLayerInitialize_Conv2d;
  l->ops->forwardvec      = NNLayerForwardVec_Conv2d;
  l->ops->backwardvec     = NNLayerBackwardVec_Conv2d;
  l->ops->createoutputvec = NNLayerCreateOutputVec_Conv2d;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Conv2d;
  l->ops->view            = NNLayerView_Conv2d;
  l->ops->reset           = NNLayerReset_Conv2d;
  l->ops->destroy         = NNLayerDestroy_Conv2d;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[0], NNLayerConvSetFilters_Conv2d));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[1], NNLayerConvSetKernelSize_Conv2d));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[2], NNLayerConvSetStride_Conv2d));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[3], NNLayerConvSetPadding_Conv2d));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[4], NNLayerConvSetBias_Conv2d));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, NNConvSetterNames[5], NNLayerConvSetPeriodic_Conv2d));
  PetscFunctionReturn(0);
}
