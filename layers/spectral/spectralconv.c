/*
   The Fourier neural operator layer (Li et al., FNO; neuraloperator's SpectralConv2d/3d plus the FNO
   block's pointwise path) on the spatial (DMDA) layout, distributed with FFTW's MPI transforms:

     X = rfftn(x) over the whole grid (per sample and channel)
     Z[:, :, corner] = einsum("bi...,io...->bo...", X[:, :, corner], weights_q)  on the kept corners
                       (2-d: :m1 and -m1: along H, :m2 along W; 3-d: four corners over D and H, :m3 on W)
     y = irfftn(Z, s=grid) + (linear: W x + b, a 1x1 convolution)

   Data path of a forward pass: the linear part on the DMDA blocks (one GEMM); the input moved from
   the DMDA's blocks to FFTW's slabs (layers/spectral/spectralconv_repartition.c), r2c, mode products on
   the rank's rows of the spectrum, c2r (layers/spectral/spectralconv_fft.c), and the slabs added back
   into the output's blocks. The output DMDA is the input's grid and decomposition with nbatch*C_out
   dof. Backward is the exact adjoint of that linear map (see spectralconv_fft.c for the half-spectrum
   weights); the parameter gradients of the rank's share are summed over the layer's communicator,
   since the parameters are replicated. The passes on the block's arrays are a precision template
   (spectralconv_passes.h): here in double on the Vecs, in spectralconv_single.c in float
   (-nn_precision single, with FFTW's single-precision library when PetNN found it).

   Parameters (PyTorch names and layouts, complex as a trailing dimension of 2, i.e.
   torch.view_as_real of the reference's cfloat weights): weights1, weights2 (, weights3, weights4)
   [C_in, C_out, m1, m2 (, m3), 2]; with the linear path w.weight [C_out, C_in, 1, 1 (, 1)] and
   w.bias [C_out] (nn.Conv2d/Conv3d(C_in, C_out, 1) named w: the reference FNO's conv<k>/w<k> pair
   is one spectral_conv layer whose weights are conv<k>.weights* and whose w is w<k>).
*/
#include "spectralconv.h"
#include <cblas.h>

static PetscErrorCode NNSpectralConvCheckShape(NNLayer l)
{
  NNLayer_SpectralConv *d    = (NNLayer_SpectralConv *)l->data;
  MPI_Comm              comm = PetscObjectComm((PetscObject)l);
  const char           *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", *name = ((PetscObject)l)->name, *type = ((PetscObject)l)->type_name;
  static const char    *ax2[] = {"height H", "width W"}, *ax3[] = {"depth D", "height H", "width W"};
  char                  sh[64];

  PetscFunctionBegin;
  if (l->inshape.ndim != d->nd + 1) {
    PetscCall(NNShapeToString(&l->inshape, sizeof(sh), sh));
    SETERRQ(comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs spatial %s samples but %s produces shape %s%s", name, type, d->nd == 2 ? "(C,H,W)" : "(C,D,H,W)", l->inputname ? l->inputname : "its input", sh,
            l->inshape.ndim == 4 ? "; use spectral_conv3d for (C,D,H,W) samples" : (l->inshape.ndim == 3 && d->nd == 3 ? "; use spectral_conv2d for (C,H,W) samples" : ""));
  }
  PetscCheck(d->filters > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s) has %" PetscInt_FMT " filters; give a positive -%sfilters (output channels)", name, type, d->filters, pre);
  PetscCheck(d->nmodes == d->nd, comm, PETSC_ERR_ARG_WRONG, "Layer %s (%s) needs -%smodes with %" PetscInt_FMT " values (%s), got %" PetscInt_FMT, name, type, pre, d->nd, d->nd == 2 ? "m1,m2" : "m1,m2,m3", d->nmodes);
  for (PetscInt a = 0; a < d->nd; a++) {
    PetscInt N = l->inshape.dim[1 + a], top = a == d->nd - 1 ? N / 2 + 1 : N / 2;
    PetscCheck(d->modes[a] >= 1 && d->modes[a] <= top, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%smodes value %" PetscInt_FMT " (m%" PetscInt_FMT ", along the %s of %" PetscInt_FMT ") must be in [1, %" PetscInt_FMT "] (%s)", name, type, pre, d->modes[a], a + 1,
               d->nd == 2 ? ax2[a] : ax3[a], N, top, a == d->nd - 1 ? "at most N/2+1, the half spectrum" : "at most N/2, so the two corners do not overlap");
  }
  {
    PetscReal nw = 8.0 * d->filters * l->inshape.dim[0]; /* four corners of complex weights (in floating point: no overflow) */
    for (PetscInt a = 0; a < d->nd; a++) nw *= d->modes[a];
    PetscCheck(nw < (PetscReal)PETSC_MAX_INT, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): %" PetscInt_FMT " filters, %" PetscInt_FMT " channels and the -%smodes make more weights than a PetscInt counts", name, type, d->filters, l->inshape.dim[0], pre);
  }
  PetscCheck((PetscReal)d->filters * l->inshape.dim[0] * l->nbatch < PETSC_MAX_INT / 4, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): %" PetscInt_FMT " filters, %" PetscInt_FMT " channels and batch %" PetscInt_FMT " are too many for a PetscInt", name, type, d->filters, l->inshape.dim[0], l->nbatch);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_SpectralConv(NNLayer l)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  PetscInt              nd = d->nd, C, wdim[NN_MAX_TENSOR_DIM], ldim[5];
  char                  tname[16];

  PetscFunctionBegin;
#if !defined(PETNN_HAVE_FFTW)
  SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s) needs FFTW with its MPI transforms: rebuild PetNN with -DPETNN_WITH_FFTW=ON (Debian: libfftw3-dev libfftw3-mpi-dev)", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
#endif
  PetscCall(NNSpectralConvCheckShape(l));
  C       = l->inshape.dim[0];
  wdim[0] = C;
  wdim[1] = d->filters;
  for (PetscInt a = 0; a < nd; a++) wdim[2 + a] = d->modes[a];
  wdim[2 + nd] = 2;
  l->outshape  = l->inshape;
  l->outshape.dim[0] = d->filters;
  for (PetscInt q = 0; q < (nd == 2 ? 2 : 4); q++) {
    PetscCall(PetscSNPrintf(tname, sizeof(tname), "weights%" PetscInt_FMT, q + 1));
    PetscCall(NNLayerAddTensor(l, tname, NN_TENSOR_PARAM, nd + 3, wdim));
  }
  if (d->linear) {
    ldim[0] = d->filters;
    ldim[1] = C;
    ldim[2] = ldim[3] = ldim[4] = 1;
    PetscCall(NNLayerAddTensor(l, "w.weight", NN_TENSOR_PARAM, nd + 2, ldim));
    PetscCall(NNLayerAddTensor(l, "w.bias", NN_TENSOR_PARAM, 1, &d->filters));
  }
  PetscCall(PetscMalloc1(l->nparam, &d->grad));
  PetscFunctionReturn(0);
}

/* the reference's initialization: weights_q = scale * rand (real and imaginary parts in [0, scale)),
   scale = 1/(C_in C_out); the pointwise path as nn.Conv2d(C_in, C_out, 1): U(-1/sqrt(C_in), 1/sqrt(C_in)) */
static PetscErrorCode NNLayerInitialize_SpectralConv(NNLayer l)
{
  NNLayer_SpectralConv *d     = (NNLayer_SpectralConv *)l->data;
  PetscInt              C     = l->inshape.dim[0], nq = d->nd == 2 ? 2 : 4, nw = 0;
  PetscScalar          *theta = (PetscScalar *)l->theta;
  PetscReal             scale = 1.0 / ((PetscReal)C * d->filters), bound = 1.0 / PetscSqrtReal((PetscReal)C);

  PetscFunctionBegin;
  for (PetscInt q = 0; q < nq; q++) nw += l->tensors[q].size;
  for (PetscInt i = 0; i < nw; i++) theta[i] = scale * NNRandomUniform(l->rng);
  for (PetscInt i = nw; i < l->nparam; i++) theta[i] = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  PetscFunctionReturn(0);
}

/* one precision's FFTW plans and buffers (for g, whose slab rows they set) and repartition units */
PetscErrorCode NNSpectralTransformsCreate(MPI_Comm comm, NNSpectralGeom *g, PetscInt plan, PetscBool single, NNSpectralTransforms *tr)
{
  PetscMPIInt  cin, cout;
  MPI_Datatype base = single ? MPI_FLOAT : MPIU_SCALAR;

  PetscFunctionBegin;
#if defined(PETNN_HAVE_FFTW)
  PetscCall(NNSpectralFFTCreate(comm, g, plan, single, &tr->fft));
#else
  (void)comm; /* without FFTW set-up refuses the layer before */
  (void)plan;
#endif
  PetscCall(PetscMPIIntCast(g->nb * g->Cin, &cin));
  PetscCall(PetscMPIIntCast(g->nb * g->Cout, &cout));
  PetscCallMPI(MPI_Type_contiguous(cin, base, &tr->unitin));
  PetscCallMPI(MPI_Type_commit(&tr->unitin));
  PetscCallMPI(MPI_Type_contiguous(cout, base, &tr->unitout));
  PetscCallMPI(MPI_Type_commit(&tr->unitout));
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpectralTransformsDestroy(NNSpectralTransforms *tr)
{
  PetscFunctionBegin;
#if defined(PETNN_HAVE_FFTW)
  PetscCall(NNSpectralFFTDestroy(&tr->fft));
#endif
  if (tr->unitin != MPI_DATATYPE_NULL) PetscCallMPI(MPI_Type_free(&tr->unitin));
  if (tr->unitout != MPI_DATATYPE_NULL) PetscCallMPI(MPI_Type_free(&tr->unitout));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_SpectralConv(NNLayer l)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;

  PetscFunctionBegin;
  PetscCall(DMDestroy(&d->daout));
  PetscCall(NNFFTRepartitionDestroy(&d->rep));
  PetscCall(NNSpectralTransformsDestroy(&d->tr));
#if defined(PETNN_HAVE_FFTWF)
  PetscCall(NNSpectralConvResetSingle(l));
#endif
  PetscCall(PetscFree(d->grad));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNSpectralConvResetDevice(l));
#endif
  PetscFunctionReturn(0);
}

/* the output DMDA (the input's decomposition, nbatch*C_out dof), the FFTW plans and the repartition */
static PetscErrorCode NNLayerCreateOutputVec_SpectralConv(NNLayer l, Vec *y)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  NNSpectralGeom       *g = &d->g;
  DM                    dain;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(DMDestroy(&d->daout));
  PetscCall(NNFFTRepartitionDestroy(&d->rep));
  PetscCall(NNSpectralTransformsDestroy(&d->tr));
#if defined(PETNN_HAVE_FFTWF)
  PetscCall(NNSpectralConvResetSingle(l)); /* the float transforms follow on the next float pass */
#endif
  PetscCall(NNSpatialCreateLike(dain, l->nbatch * d->filters, 0, &d->daout));
  PetscCall(DMCreateGlobalVector(d->daout, y));
  PetscCall(PetscMemzero(g, sizeof(*g)));
  g->nd    = d->nd;
  g->inner = 1;
  g->M     = 1;
  for (PetscInt a = 0; a < d->nd; a++) {
    g->n[a] = l->inshape.dim[1 + a];
    g->m[a] = d->modes[a];
    g->M *= d->modes[a];
    if (a > 0 && a < d->nd - 1) g->inner *= g->n[a];
  }
  g->wc   = g->n[d->nd - 1] / 2 + 1;
  g->nb   = l->nbatch;
  g->ns   = l->nbatch;
  g->Cin  = l->inshape.dim[0];
  g->Cout  = d->filters;
  g->trans = d->transposed;
  PetscCall(NNSpectralTransformsCreate(PetscObjectComm((PetscObject)dain), g, d->plan, PETSC_FALSE, &d->tr));
  PetscCall(NNFFTRepartitionCreate(dain, g->r0, g->nr, &d->rep));
  PetscFunctionReturn(0);
}

/* the pass's rows: the rank's pixels, the slots used (also the mode products' d->g.ns) */
PetscErrorCode NNSpectralConvPrepare(NNLayer l, PetscInt n, NNSpectralRows *r)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  PetscInt              xm, ym, zm;

  PetscFunctionBegin;
  PetscCheck(d->daout && d->rep.sf, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscCall(DMDAGetCorners(d->daout, NULL, NULL, NULL, &xm, &ym, &zm));
  d->g.ns = n;
  r->nb   = l->nbatch;
  r->ns   = n;
  r->Cin  = d->g.Cin;
  r->Cout = d->g.Cout;
  r->npix = xm * ym * zm;
  PetscFunctionReturn(0);
}

#if defined(PETNN_HAVE_FFTW)
  #include <petnn/private/nnrealdouble.h>
  #include "spectralconv_passes.h"
  #include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForwardVec_SpectralConv(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  NNSpectralRows        r;
  const PetscScalar    *xa;
  PetscScalar          *ya;

  PetscFunctionBegin;
  PetscCall(NNSpectralConvPrepare(l, n, &r));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNSpectralConvForwardArrays(l, &r, &d->tr, l->theta, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_SpectralConv(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  NNSpectralRows        r;
  const PetscScalar    *xa, *dya;
  PetscScalar          *dxa = NULL;
  PetscMPIInt           cnt;

  PetscFunctionBegin;
  PetscCall(NNSpectralConvPrepare(l, n, &r));
  PetscCall(PetscArrayzero(d->grad, l->nparam));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(NNSpectralConvBackwardArrays(l, &r, &d->tr, l->theta, d->grad, xa, dya, dxa));
  if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  /* parameters are replicated: sum the ranks' shares */
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)d->daout)));
  for (PetscInt i = 0; i < l->nparam; i++) l->dtheta[i] += d->grad[i];
  PetscFunctionReturn(0);
}
#endif

static PetscErrorCode NNLayerDestroy_SpectralConv(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNSpectralConvComposeFunctions(l, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_SpectralConv(NNLayer l, PetscInt nd)
{
  NNLayer_SpectralConv *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->nd                   = nd;
  d->linear               = PETSC_TRUE;
  d->transposed           = PETSC_TRUE;
  d->tr.unitin            = MPI_DATATYPE_NULL;
  d->tr.unitout           = MPI_DATATYPE_NULL;
  d->str.unitin           = MPI_DATATYPE_NULL;
  d->str.unitout          = MPI_DATATYPE_NULL;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_SpectralConv;
  l->ops->initialize      = NNLayerInitialize_SpectralConv;
#if defined(PETNN_HAVE_FFTW)
  l->ops->forwardvec  = NNLayerForwardVec_SpectralConv;
  l->ops->backwardvec = NNLayerBackwardVec_SpectralConv;
#endif
#if defined(PETNN_HAVE_FFTWF) /* -nn_precision single: float FFTs (layers/spectral/spectralconv_single.c) */
  l->ops->forwardsingle  = NNLayerForwardSingle_SpectralConv;
  l->ops->backwardsingle = NNLayerBackwardSingle_SpectralConv;
#endif
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda (layers/spectral/spectralconv_cuda.c) */
  l->ops->forwarddevice  = NNLayerForwardDevice_SpectralConv;
  l->ops->backwarddevice = NNLayerBackwardDevice_SpectralConv;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks: the kept spectra summed over them */
#endif
  l->ops->createoutputvec = NNLayerCreateOutputVec_SpectralConv;
  l->ops->setfromoptions  = NNLayerSetFromOptions_SpectralConv;
  l->ops->view            = NNLayerView_SpectralConv;
  l->ops->reset           = NNLayerReset_SpectralConv;
  l->ops->destroy         = NNLayerDestroy_SpectralConv;
  PetscCall(NNSpectralConvComposeFunctions(l, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERSPECTRALCONV2D - "spectral_conv2d": the Fourier neural operator layer (neuraloperator's
   SpectralConv2d plus the FNO block's pointwise 1x1 convolution) on a 2-d spatial DMDA activation,
   with FFTW's MPI transforms

   Options Database Keys:
+  -<prefix>filters <n> - output channels C_out (required)
.  -<prefix>modes <m1,m2> - Fourier modes kept along H (corners :m1 and -m1:, m1 <= H/2) and W (:m2, m2 <= W/2+1) (required)
.  -<prefix>linear <bool> - add the pointwise path W x + b, a 1x1 convolution (default true)
.  -<prefix>fftw_plan <estimate,measure> - FFTW planning effort, at set-up (default estimate)
-  -<prefix>fftw_transposed <bool> - keep the spectrum in FFTW's transposed layout between r2c and c2r (FFTW_MPI_TRANSPOSED_OUT/IN: one global transpose per transform instead of two; default true)

   Notes:
   y = irfft2(Z, s=(H,W)) + W x + b, where Z is zero except on the kept corners of the half spectrum of
   rfft2(x): Z[:, :, :m1, :m2] = einsum("bixy,ioxy->boxy", X[:, :, :m1, :m2], weights1) and
   Z[:, :, -m1:, :m2] the same with weights2 (torch.fft's normalization: 1/(H W) on the inverse).
   Parameters: weights1, weights2 [C_in, C_out, m1, m2, 2] (complex as a trailing dimension of 2:
   torch.view_as_real of the reference's cfloat weights), initialized as the reference does
   (scale * rand, scale = 1/(C_in C_out), for real and imaginary parts); with -<prefix>linear, w.weight
   [C_out, C_in, 1, 1] and w.bias [C_out], PyTorch's nn.Conv2d(C_in, C_out, 1) named w. The reference
   FNO2d's conv<k> (SpectralConv2d) and w<k> (its 1x1 Conv2d) are one layer here: load
   conv<k>.weights1/2 into weights1/2 and w<k>.weight/bias into w.weight/bias.

   The input must be spatial (a to_spatial layer first). The FFT runs over the whole H x W grid of each
   sample: the DMDA's blocks are repartitioned into FFTW's slabs of rows of H (a PetscSF built at
   set-up, whose adjoint is its reverse), transformed with howmany = nbatch*C, multiplied on the rank's
   share of the spectrum (by default left in FFTW's transposed layout, rows of W/2+1, so each transform
   makes one global transpose) and moved back; the parameter gradients are summed over the ranks.
   -log_view shows NNSpectralFFT (the transforms) and NNSpectralRepart (the repartition); -nn_view
   shows the modes, channels, FFT grid and the slab rows of each rank. Needs PetNN built with FFTW
   (PETNN_WITH_FFTW); otherwise set-up fails with PETSC_ERR_SUP. On a GPU (-nn_device cuda) the layer
   computes only the kept modes, as truncated DFTs (layers/spectral/spectralconv_cuda.c), in double or
   single precision, on one rank or split over ranks (each rank transforms its box, the kept spectra
   are summed over the ranks). In single precision on the CPU (-nn_precision single) it runs float
   passes with FFTW's single-precision transforms (layers/spectral/spectralconv_single.c) when PetNN
   found libfftw3f and libfftw3f_mpi, else its double passes on converted activations.

   Level: intermediate

.seealso: `NNLAYERSPECTRALCONV3D`, `NNLayerSpectralConvSetModes()`, `NNLayerSpectralConvSetFilters()`, `NNLayerSpectralConvSetLinear()`, `NNLAYERTOSPATIAL`, `NNLAYERCONV2D`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_SpectralConv2d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_SpectralConv(l, 2));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERSPECTRALCONV3D - "spectral_conv3d": the Fourier neural operator layer (neuraloperator's
   SpectralConv3d plus a pointwise 1x1x1 convolution) on a 3-d spatial DMDA activation, with FFTW's MPI transforms

   Options Database Keys:
+  -<prefix>filters <n> - output channels C_out (required)
.  -<prefix>modes <m1,m2,m3> - modes kept along D (m1 <= D/2), H (m2 <= H/2) and W (m3 <= W/2+1) (required)
.  -<prefix>linear <bool> - add the pointwise path W x + b (default true)
.  -<prefix>fftw_plan <estimate,measure> - FFTW planning effort (default estimate)
-  -<prefix>fftw_transposed <bool> - keep the spectrum transposed between the transforms (default true)

   Notes:
   Samples are (C,D,H,W); y = irfftn(Z, s=(D,H,W)) + W x + b with Z nonzero on four corners over D and H
   (weights1: :m1,:m2; weights2: -m1:,:m2; weights3: :m1,-m2:; weights4: -m1:,-m2:) and :m3 along W.
   Parameters weights1..4 [C_in, C_out, m1, m2, m3, 2], w.weight [C_out, C_in, 1, 1, 1], w.bias [C_out].
   FFTW's slabs split D. Otherwise as `NNLAYERSPECTRALCONV2D`.

   Level: intermediate

.seealso: `NNLAYERSPECTRALCONV2D`, `NNLayerSpectralConvSetModes()`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_SpectralConv3d(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_SpectralConv(l, 3));
  PetscFunctionReturn(0);
}
