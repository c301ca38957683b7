/*
   Device passes of the Fourier neural operator layers spectral_conv2d / spectral_conv3d (-nn_device cuda), in double
   and single precision, on one rank's whole grid or on spatial activations split over ranks.

   The CPU's passes run whole FFTs (FFTW MPI) and then keep only the low modes; here nothing outside the kept modes is
   computed: the transforms are truncated DFTs (layers/spectral/spectralconv_kernels.cu), axis by axis, between the
   DMDA layout [rows][W][slot][channel] and the kept spectrum [corner rows][kw < m_last][slot][channel], with FFTW's
   c2r semantics on the way back. The cost per transform is O(N m) instead of O(N log N), which is what the layer's
   modes make small; no FFT library is needed on the device. With the kept spectra X = R2C(x), G = R2C(dy):
     forward    y  = (1/N) C2R(X W) (+ W_l x + b)
     backward   dW += (c/N) sum_s G conj(X),  dx = (1/N) C2R(G conj(W)) (+ W_l^T dy),  dW_l += x dy^T,  db += sum dy
   (the adjoints of spectralconv_fft.c's header comment). The pointwise path W_l x + b is cuBLAS GEMMs over the pixels
   and slots, as conv_gemm_cuda.c's 1x1 case would be; the spectral path's last kernel adds into it and writes zeros in
   the slots s >= n that the pass leaves out, as the CPU's passes leave them. Parameter gradients are added into
   l->dev.dtheta, as every device pass does (the network sums data-parallel gradients over the ranks).

   Split over ranks, every transform runs on the rank's box only: the forward transforms of the box give its part of
   the kept spectrum, summed over the ranks (MPI_Allreduce on a host copy: the kept spectra are a few modes per slot and
   channel, not the grid); the mode products and the spectral weight gradient are then computed from the whole kept
   spectra on every rank alike (no further sum), and the inverse transforms evaluate them on the box's pixels. The
   pointwise path's gradients (sums over pixels) are summed over the ranks, as the convolutions' are. No halo, no
   repartition: the CPU's passes move the activations into FFTW's slabs, the device's move only the kept modes.

   The layer owns its device workspace: the twiddle tables (cos, sin of 2 pi t/n per axis, made on the host in double
   and uploaded once per precision), the partial transforms' work arrays and the kept spectra; made at the first pass
   for the batch capacity and precision, freed by the layer's reset (NNSpectralConvResetDevice()).
*/
#include "spectralconv.h"
#include <petnn/private/cudaimpl.h>
#include <petnn/private/spatialhalodevice.h>

struct _n_NNSpectralCUDA {
  NNPrecision prec;
  PetscInt    nb;
  size_t      es;           /* bytes of an entry */
  void       *tw;           /* the twiddle tables of the axes, 2 n[a] entries each */
  size_t      twoff[3];     /* their offsets in entries */
  void       *wa, *wb;      /* partial transforms: [rows][m_last][K], 3-d [D][2 m1][m_last][K] (complex) */
  void       *xs, *gs, *zs; /* kept spectra of the input, the output gradient, the mode products (complex) */
  void       *tmp;          /* the bias gradient's per-slot sums (nb*C_out) */
  void       *dpw;          /* split over ranks: the pass's pointwise-path gradient (C_in*C_out + C_out), summed over the ranks */
};

PetscErrorCode NNSpectralConvResetDevice(NNLayer l)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  NNSpectralCUDA        w = d->dev;

  PetscFunctionBegin;
  if (!w) PetscFunctionReturn(0);
  PetscCall(NNCUDAFree(&w->tw));
  PetscCall(NNCUDAFree(&w->wa));
  PetscCall(NNCUDAFree(&w->wb));
  PetscCall(NNCUDAFree(&w->xs));
  PetscCall(NNCUDAFree(&w->gs));
  PetscCall(NNCUDAFree(&w->zs));
  PetscCall(NNCUDAFree(&w->tmp));
  PetscCall(NNCUDAFree(&w->dpw));
  PetscCall(PetscFree(d->dev));
  PetscFunctionReturn(0);
}

/* what a pass needs */
typedef struct {
  NNCUDASpectralGeom g;
  NNSpectralCUDA     w;
  cudaStream_t       s;
  int                single;
  size_t             R, P, KR;       /* the box's rows (pixels / W) and pixels, kept corner rows */
  int                L, mL;          /* the last axis (W) and its modes */
  int                off[3], len[3]; /* the rank's box along the FFT axes (PyTorch order); the grid on one rank */
  PetscBool          split;          /* the activations are split over the ranks of comm */
  MPI_Comm           comm;
} NNSpectralPass;

/* cos(2 pi t/n) and sin(2 pi t/n), exact on the quarter turns */
static void NNSpectralTwiddle(PetscInt t, PetscInt n, double *c, double *s)
{
  if ((4 * t) % n == 0) {
    static const double cq[4] = {1, 0, -1, 0}, sq[4] = {0, 1, 0, -1};
    *c = cq[(4 * t) / n];
    *s = sq[(4 * t) / n];
  } else {
    double a = 2.0 * PETSC_PI * (double)t / (double)n;
    *c       = cos(a);
    *s       = sin(a);
  }
}

/* the twiddle tables on the device, in the pass's precision */
static PetscErrorCode NNSpectralCUDAUploadTwiddles(NNSpectralPass *p)
{
  NNSpectralCUDA w  = p->w;
  size_t         nt = 0;
  double        *h;
  float         *hf = NULL;

  PetscFunctionBegin;
  for (int a = 0; a < p->g.nd; a++) {
    w->twoff[a] = nt;
    nt += 2 * (size_t)p->g.n[a];
  }
  PetscCall(PetscMalloc1(nt, &h));
  for (int a = 0; a < p->g.nd; a++)
    for (PetscInt t = 0; t < p->g.n[a]; t++) NNSpectralTwiddle(t, p->g.n[a], &h[w->twoff[a] + t], &h[w->twoff[a] + p->g.n[a] + t]);
  if (p->single) {
    PetscCall(PetscMalloc1(nt, &hf));
    for (size_t i = 0; i < nt; i++) hf[i] = (float)h[i];
  }
  PetscCall(NNCUDAMalloc(nt * w->es, &w->tw));
  NNCallCUDA(cudaMemcpyAsync(w->tw, p->single ? (const void *)hf : (const void *)h, nt * w->es, cudaMemcpyHostToDevice, p->s));
  NNCallCUDA(cudaStreamSynchronize(p->s)); /* before the host tables go */
  PetscCall(PetscFree(h));
  PetscCall(PetscFree(hf));
  PetscFunctionReturn(0);
}

/* the pass's geometry, and the workspace (made again when the batch capacity or the precision changed) */
static PetscErrorCode NNSpectralCUDABegin(NNLayer l, PetscInt n, NNSpectralPass *p)
{
  NNLayer_SpectralConv *d  = (NNLayer_SpectralConv *)l->data;
  NNCUDASpectralGeom   *g  = &p->g;
  PetscInt              nd = d->nd, s[3], m[3];
  size_t                Kmax, es;
  DM                    da;
  PetscMPIInt           size;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(p, sizeof(*p)));
  PetscCall(NNSpatialGetInputDA(l, &da)); /* the output DMDA has its decomposition */
  p->comm = PetscObjectComm((PetscObject)da);
  PetscCallMPI(MPI_Comm_size(p->comm, &size));
  p->split = (PetscBool)(size > 1);
  PetscCall(DMDAGetCorners(da, &s[0], &s[1], &s[2], &m[0], &m[1], &m[2])); /* x = W, y = H, z = D */
  p->single = l->dev.prec == NN_PRECISION_SINGLE;
  es        = p->single ? sizeof(float) : sizeof(double);
  g->nd     = (int)nd;
  for (PetscInt a = 0; a < nd; a++) {
    g->n[a]   = (int)l->inshape.dim[1 + a];
    g->m[a]   = (int)d->modes[a];
    p->off[a] = (int)s[nd - 1 - a];
    p->len[a] = (int)m[nd - 1 - a];
  }
  g->nb   = (size_t)l->nbatch;
  g->ns   = (size_t)n;
  g->Cin  = (size_t)l->inshape.dim[0];
  g->Cout = (size_t)d->filters;
  p->L    = g->n[nd - 1];
  p->mL   = g->m[nd - 1];
  p->R    = nd == 2 ? (size_t)p->len[0] : (size_t)p->len[0] * p->len[1];
  p->P    = p->R * p->len[nd - 1];
  p->KR   = nd == 2 ? 2 * (size_t)g->m[0] : 4 * (size_t)g->m[0] * g->m[1];
  Kmax    = g->nb * PetscMax(g->Cin, g->Cout);
  PetscCall(NNCUDAGetStream(&p->s));
  if (d->dev && (d->dev->nb != l->nbatch || d->dev->prec != l->dev.prec)) PetscCall(NNSpectralConvResetDevice(l));
  if (!d->dev) {
    NNSpectralCUDA w;
    PetscCall(PetscNew(&d->dev));
    w       = d->dev;
    p->w    = w;
    w->nb   = l->nbatch;
    w->prec = l->dev.prec;
    w->es   = es;
    PetscCall(NNSpectralCUDAUploadTwiddles(p));
    PetscCall(NNCUDAMalloc(2 * p->R * p->mL * Kmax * es, &w->wa));
    if (nd == 3) PetscCall(NNCUDAMalloc(2 * (size_t)p->len[0] * 2 * g->m[1] * p->mL * Kmax * es, &w->wb));
    PetscCall(NNCUDAMalloc(2 * p->KR * p->mL * g->nb * g->Cin * es, &w->xs));
    PetscCall(NNCUDAMalloc(2 * p->KR * p->mL * g->nb * g->Cout * es, &w->gs));
    PetscCall(NNCUDAMalloc(2 * p->KR * p->mL * Kmax * es, &w->zs));
    PetscCall(NNCUDAMalloc(PetscMax(g->nb * g->Cout, 1) * es, &w->tmp));
    if (p->split && d->linear) PetscCall(NNCUDAMalloc((g->Cin + 1) * g->Cout * es, &w->dpw));
  }
  p->w = d->dev;
  PetscFunctionReturn(0);
}

#define NNSpectralTw(p, a) ((const char *)(p)->w->tw + (p)->w->twoff[a] * (p)->w->es)

/* 4 flops a real-complex product and sum, 8 a complex one: the transforms of the rank's box */
static PetscLogDouble NNSpectralCUDAFlops(const NNSpectralPass *p, size_t Q)
{
  const NNCUDASpectralGeom *g = &p->g;
  if (g->nd == 2) return 4.0 * p->P * Q + 16.0 * g->m[0] * p->len[0] * Q;
  return 4.0 * p->P * Q + 16.0 * p->len[0] * g->m[1] * p->len[1] * Q + 32.0 * g->m[0] * g->m[1] * p->len[0] * Q;
}

/* out (the kept spectrum, C channels) = R2C(x) on the kept modes: along W, then H (and D); split over ranks, the box's
   parts summed over the ranks */
static PetscErrorCode NNSpectralCUDAAnalyze(NNSpectralPass *p, size_t C, const void *x, void *out)
{
  const NNCUDASpectralGeom *g = &p->g;
  size_t                    K = g->nb * C, Q = (size_t)p->mL * K;
  const int                *o = p->off, *n = p->len, last = g->nd - 1;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_SpectralFFT, 0, 0, 0, 0));
  NNCallCUDA(NNCUDASpectralR2C(p->single, p->R, p->L, o[last], n[last], p->mL, K, NNSpectralTw(p, last), x, p->w->wa, p->s));
  if (g->nd == 2) NNCallCUDA(NNCUDASpectralDFT(p->single, 0, 1, g->n[0], o[0], n[0], g->m[0], Q, NNSpectralTw(p, 0), p->w->wa, out, p->s));
  else {
    NNCallCUDA(NNCUDASpectralDFT(p->single, 0, (size_t)n[0], g->n[1], o[1], n[1], g->m[1], Q, NNSpectralTw(p, 1), p->w->wa, p->w->wb, p->s));
    NNCallCUDA(NNCUDASpectralDFT(p->single, 0, 1, g->n[0], o[0], n[0], g->m[0], 2 * (size_t)g->m[1] * Q, NNSpectralTw(p, 0), p->w->wb, out, p->s));
  }
  PetscCall(PetscLogFlops(NNSpectralCUDAFlops(p, Q)));
  PetscCall(PetscLogEventEnd(NN_SpectralFFT, 0, 0, 0, 0));
  if (p->split) PetscCall(NNDeviceAllreduceSum(p->comm, p->w->prec, out, 2 * p->KR * Q));
  PetscFunctionReturn(0);
}

/* y (C channels) = C2R(in) from the kept spectrum in (add: y +=) on the rank's box, zero in the slots s >= ns */
static PetscErrorCode NNSpectralCUDASynthesize(NNSpectralPass *p, size_t C, const void *in, PetscBool add, void *y)
{
  const NNCUDASpectralGeom *g = &p->g;
  size_t                    K = g->nb * C, Q = (size_t)p->mL * K;
  const int                *o = p->off, *n = p->len, last = g->nd - 1;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_SpectralFFT, 0, 0, 0, 0));
  if (g->nd == 2) NNCallCUDA(NNCUDASpectralDFT(p->single, 1, 1, g->n[0], o[0], n[0], g->m[0], Q, NNSpectralTw(p, 0), in, p->w->wa, p->s));
  else {
    NNCallCUDA(NNCUDASpectralDFT(p->single, 1, 1, g->n[0], o[0], n[0], g->m[0], 2 * (size_t)g->m[1] * Q, NNSpectralTw(p, 0), in, p->w->wb, p->s));
    NNCallCUDA(NNCUDASpectralDFT(p->single, 1, (size_t)n[0], g->n[1], o[1], n[1], g->m[1], Q, NNSpectralTw(p, 1), p->w->wb, p->w->wa, p->s));
  }
  NNCallCUDA(NNCUDASpectralC2R(p->single, (int)add, p->R, p->L, o[last], n[last], p->mL, g->nb, g->ns, C, NNSpectralTw(p, last), p->w->wa, y, p->s));
  PetscCall(PetscLogFlops(NNSpectralCUDAFlops(p, Q)));
  PetscCall(PetscLogEventEnd(NN_SpectralFFT, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* a parameter tensor of the layer (weights1..4, then w.weight and w.bias) in its slice of the device parameters or gradient */
#define NNSpectralParam(l, base, k, es) ((char *)(base) + (size_t)(l)->tensors[k].offset * (es))

PetscErrorCode NNLayerForwardDevice_SpectralConv(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_SpectralConv *d  = (NNLayer_SpectralConv *)l->data;
  PetscInt              nq = d->nd == 2 ? 2 : 4;
  NNSpectralPass        p;
  size_t                es;

  PetscFunctionBegin;
  PetscCall(NNSpectralCUDABegin(l, n, &p));
  es = p.w->es;
  if (d->linear) { /* y = W_l x + b: Y^T (C_out x pixels*slots) = W_l X^T; the bias on the pass's slots */
    PetscCall(
      NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, (PetscInt)p.g.Cout, (PetscInt)(p.P * p.g.nb), (PetscInt)p.g.Cin, 1.0, NNSpectralParam(l, l->dev.theta, nq, es), (PetscInt)p.g.Cin, x, (PetscInt)p.g.Cin, 0.0, y, (PetscInt)p.g.Cout));
    NNCallCUDA(NNCUDAConvBias(p.single, p.P, p.g.nb, p.g.ns, p.g.Cout, NNSpectralParam(l, l->dev.theta, nq + 1, es), y, p.s));
    PetscCall(PetscLogFlops((PetscLogDouble)p.P * n * p.g.Cout));
  }
  PetscCall(NNSpectralCUDAAnalyze(&p, p.g.Cin, x, p.w->xs));
  NNCallCUDA(NNCUDASpectralModes(p.single, 0, &p.g, NNSpectralParam(l, l->dev.theta, 0, es), p.w->xs, p.w->zs, p.s));
  PetscCall(PetscLogFlops(8.0 * p.KR * p.mL * n * p.g.Cin * p.g.Cout));
  PetscCall(NNSpectralCUDASynthesize(&p, p.g.Cout, p.w->zs, d->linear, y));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_SpectralConv(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_SpectralConv *d  = (NNLayer_SpectralConv *)l->data;
  PetscInt              nq = d->nd == 2 ? 2 : 4;
  NNSpectralPass        p;
  size_t                es;
  PetscInt              Cin, Cout, M;

  PetscFunctionBegin;
  PetscCall(NNSpectralCUDABegin(l, n, &p));
  es   = p.w->es;
  Cin  = (PetscInt)p.g.Cin;
  Cout = (PetscInt)p.g.Cout;
  M    = (PetscInt)(p.P * p.g.nb);
  /* X = R2C(x) again (another pass may have used the workspace since this batch's forward pass), G = R2C(dy) */
  PetscCall(NNSpectralCUDAAnalyze(&p, p.g.Cin, x, p.w->xs));
  PetscCall(NNSpectralCUDAAnalyze(&p, p.g.Cout, dy, p.w->gs));
  NNCallCUDA(NNCUDASpectralWeightGradient(p.single, &p.g, p.w->xs, p.w->gs, NNSpectralParam(l, l->dev.dtheta, 0, es), p.s));
  PetscCall(PetscLogFlops(8.0 * p.KR * p.mL * n * p.g.Cin * p.g.Cout));
  if (d->linear) { /* split over ranks: this rank's pixels' sums into the scratch dpw, then summed over the ranks */
    char       *dWl = p.split ? (char *)p.w->dpw : NNSpectralParam(l, l->dev.dtheta, nq, es), *db = dWl + (size_t)Cin * Cout * es;
    const void *ones;
    if (p.split) NNCallCUDA(cudaMemsetAsync(p.w->dpw, 0, (size_t)(Cin + 1) * Cout * es, p.s));
    /* dW_l (C_in x C_out, column-major: PyTorch's [C_out][C_in]) += X^T Y over the pass's slots */
    if (n == l->nbatch) PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, Cin, Cout, M, 1.0, x, Cin, dy, Cout, 1.0, dWl, Cin));
    else
      for (PetscInt s = 0; s < n; s++)
        PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, Cin, Cout, (PetscInt)p.P, 1.0, (const char *)x + (size_t)s * Cin * es, (PetscInt)p.g.nb * Cin, (const char *)dy + (size_t)s * Cout * es, (PetscInt)p.g.nb * Cout, 1.0, dWl, Cin));
    /* db += the sums of dy over the pixels and the pass's slots: per (slot, channel), then per channel */
    PetscCall(NNCUDAGetOnes(l->dev.prec, PetscMax((PetscInt)p.P, n), &ones));
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, n * Cout, 1, (PetscInt)p.P, 1.0, dy, (PetscInt)p.g.nb * Cout, ones, (PetscInt)p.P, 0.0, p.w->tmp, n * Cout));
    PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, Cout, 1, n, 1.0, p.w->tmp, Cout, ones, n, 1.0, db, Cout));
    if (p.split) {
      PetscCall(NNDeviceAllreduceSum(p.comm, l->dev.prec, p.w->dpw, (size_t)(Cin + 1) * Cout));
      NNCallCUDA(NNCUDAAxpy(p.single, (size_t)(Cin + 1) * Cout, 1.0, p.w->dpw, NNSpectralParam(l, l->dev.dtheta, nq, es), p.s));
    }
  }
  if (!dx) PetscFunctionReturn(0);
  if (d->linear) PetscCall(NNCUDAGemm(l->dev.prec, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, Cin, M, Cout, 1.0, NNSpectralParam(l, l->dev.theta, nq, es), Cin, dy, Cout, 0.0, dx, Cin));
  NNCallCUDA(NNCUDASpectralModes(p.single, 1, &p.g, NNSpectralParam(l, l->dev.theta, 0, es), p.w->gs, p.w->zs, p.s));
  PetscCall(PetscLogFlops(8.0 * p.KR * p.mL * n * p.g.Cin * p.g.Cout));
  PetscCall(NNSpectralCUDASynthesize(&p, p.g.Cin, p.w->zs, d->linear, dx));
  PetscFunctionReturn(0);
}
