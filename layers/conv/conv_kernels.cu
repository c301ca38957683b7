/* im2col and col2im on the spatial layout, for the GEMM device passes of the convolutions
   (layers/conv/conv_gemm_cuda.c; launchers declared in include/petnn/private/cudakernels.h).

   The image is a DMDA array [z][y][x][slot][channel] (nb slots of C channels per pixel) of the box [gs, gs + gm) of
   the grid N: the whole grid on one rank, split over ranks the ghosted input of a convolution or the owned output
   of a transposed one; the column matrix has a row per (pixel of the box [os, os + No) of the column grid, slot) and a column per (channel, tap), taps
   in PyTorch's (kz, ky, kx) order, so a row of one group is the weight's [c][kz][ky][kx] order and the GEMMs read the
   PyTorch weight as it is. Tap t of column pixel q reads image pixel q*s - p + t*dil per axis (zero outside the grid;
   with periodic padding the box's periodic halo, or on one rank the grid wrapped around).
   Slots r >= n (the batch slots a pass leaves out) are zero in both directions, so the GEMMs can run over every slot
   and the images' unused slots come out zero, as on the CPU.

   col2im is a gather, one thread per image entry summing the (pixel, tap) pairs that read it in a fixed order: no
   atomics, and reruns are bitwise identical. */
#include <petnn/private/cudalaunch.h>

struct NNConvG {
  int    N[3], No[3], k[3], s[3], p[3], dil[3], periodic;
  int    gs[3], gm[3], os[3];
  size_t nb, n, C;
  int    ntap;
};

static NNConvG NNConvGeomOf(const NNCUDAConvGeom *h)
{
  NNConvG g;
  g.periodic = h->periodic;
  g.nb       = h->nb;
  g.n        = h->n;
  g.C        = h->C;
  g.ntap     = 1;
  for (int a = 0; a < 3; a++) {
    g.N[a]   = h->N[a];
    g.No[a]  = h->No[a];
    g.k[a]   = h->k[a];
    g.s[a]   = h->s[a];
    g.p[a]   = h->p[a];
    g.dil[a] = h->dil[a];
    g.gs[a]  = h->gs[a];
    g.gm[a]  = h->gm[a];
    g.os[a]  = h->os[a];
    g.ntap *= h->k[a];
  }
  return g;
}

/* the index in the image box along axis a that tap t of column pixel os + q reads; -1 outside the grid (zero padding)
   or outside the box (a transposed convolution's input gradient split over ranks: the column grid is the ghosted
   input, and its taps into outputs another rank owns count there) */
__device__ inline int NNConvTapIndex(const NNConvG &g, int a, int q, int t)
{
  int i = (g.os[a] + q) * g.s[a] - g.p[a] + t * g.dil[a];
  if (g.periodic) {
    if (i < g.gs[a] || i >= g.gs[a] + g.gm[a]) i = ((i % g.N[a]) + g.N[a]) % g.N[a]; /* no periodic halo: wrap */
    return i - g.gs[a];
  }
  return i >= 0 && i < g.N[a] && i >= g.gs[a] && i < g.gs[a] + g.gm[a] ? i - g.gs[a] : -1;
}

/* col[((q*nb + r)*C + c)*ntap + t] = x[(pixel of tap t of q)*nb + r][c], one thread per column entry */
template <typename T>
__global__ void NNConvIm2colKernel(NNConvG g, const T *x, T *col)
{
  const size_t M = (size_t)g.No[0] * g.No[1] * g.No[2] * g.nb * g.C * g.ntap;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < M; i += (size_t)gridDim.x * blockDim.x) {
    int    t = (int)(i % g.ntap), tap[3], q[3], pix[3];
    size_t e = i / g.ntap, c = e % g.C, r = (e / g.C) % g.nb, qq = e / (g.C * g.nb);
    T      v = T(0);
    tap[0]   = t % g.k[0];
    tap[1]   = (t / g.k[0]) % g.k[1];
    tap[2]   = t / (g.k[0] * g.k[1]);
    q[0]     = (int)(qq % g.No[0]);
    q[1]     = (int)((qq / g.No[0]) % g.No[1]);
    q[2]     = (int)(qq / ((size_t)g.No[0] * g.No[1]));
    if (r < g.n) {
      bool in = true;
      for (int a = 0; a < 3; a++) {
        pix[a] = NNConvTapIndex(g, a, q[a], tap[a]);
        in     = in && pix[a] >= 0;
      }
      if (in) v = x[((((size_t)pix[2] * g.gm[1] + pix[1]) * g.gm[0] + pix[0]) * g.nb + r) * g.C + c];
    }
    col[i] = v;
  }
}

/* the column pixel (in the box, along axis a) whose tap t reads index i of the image box; -1 when none does */
__device__ inline int NNConvTapSource(const NNConvG &g, int a, int i, int t)
{
  int num = g.gs[a] + i + g.p[a] - t * g.dil[a], q;
  if (g.periodic && g.gs[a] == 0 && g.gm[a] == g.N[a]) return ((num % g.No[a]) + g.No[a]) % g.No[a]; /* the grid wrapped (one rank, stride 1, the layer checks): every tap lands once */
  if (num < 0 || num % g.s[a]) return -1;
  q = num / g.s[a] - g.os[a];
  return q >= 0 && q < g.No[a] ? q : -1;
}

/* x[(i*nb + r)*C + c] = the sum of the column entries that read it (zero for r >= n), one thread per image entry */
template <typename T>
__global__ void NNConvCol2imKernel(NNConvG g, const T *col, T *x)
{
  const size_t N = (size_t)g.gm[0] * g.gm[1] * g.gm[2] * g.nb * g.C;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t c = i % g.C, r = (i / g.C) % g.nb, pp = i / (g.C * g.nb);
    int    pix[3], tap[3], q[3];
    T      sum = T(0);
    pix[0]     = (int)(pp % g.gm[0]);
    pix[1]     = (int)((pp / g.gm[0]) % g.gm[1]);
    pix[2]     = (int)(pp / ((size_t)g.gm[0] * g.gm[1]));
    if (r < g.n)
      for (tap[2] = 0; tap[2] < g.k[2]; tap[2]++) {
        if ((q[2] = NNConvTapSource(g, 2, pix[2], tap[2])) < 0) continue;
        for (tap[1] = 0; tap[1] < g.k[1]; tap[1]++) {
          if ((q[1] = NNConvTapSource(g, 1, pix[1], tap[1])) < 0) continue;
          for (tap[0] = 0; tap[0] < g.k[0]; tap[0]++) {
            size_t qq;
            int    t;
            if ((q[0] = NNConvTapSource(g, 0, pix[0], tap[0])) < 0) continue;
            qq = ((size_t)q[2] * g.No[1] + q[1]) * g.No[0] + q[0];
            t  = (tap[2] * g.k[1] + tap[1]) * g.k[0] + tap[0];
            sum += col[((qq * g.nb + r) * g.C + c) * g.ntap + t];
          }
        }
      }
    x[i] = sum;
  }
}

/* y[(pixel*nb + r)*C + c] += b[c] for the slots r < n */
template <typename T>
__global__ void NNConvBiasKernel(size_t P, size_t nb, size_t n, size_t C, const T *b, T *y)
{
  const size_t N = P * nb * C;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x)
    if ((i / C) % nb < n) y[i] += b[i % C];
}

extern "C" cudaError_t NNCUDAIm2col(int single, const NNCUDAConvGeom *h, const void *x, void *col, cudaStream_t st)
{
  NNConvG g = NNConvGeomOf(h);
  size_t  M = (size_t)g.No[0] * g.No[1] * g.No[2] * g.nb * g.C * g.ntap;
  if (!M) return cudaSuccess;
  if (single) return NNCUDALaunch(NNConvIm2colKernel<float>, NNCUDABlocks(M), 256, st, g, (const float *)x, (float *)col);
  return NNCUDALaunch(NNConvIm2colKernel<double>, NNCUDABlocks(M), 256, st, g, (const double *)x, (double *)col);
}

extern "C" cudaError_t NNCUDACol2im(int single, const NNCUDAConvGeom *h, const void *col, void *x, cudaStream_t st)
{
  NNConvG g = NNConvGeomOf(h);
  size_t  N = (size_t)g.gm[0] * g.gm[1] * g.gm[2] * g.nb * g.C;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNConvCol2imKernel<float>, NNCUDABlocks(N), 256, st, g, (const float *)col, (float *)x);
  return NNCUDALaunch(NNConvCol2imKernel<double>, NNCUDABlocks(N), 256, st, g, (const double *)col, (double *)x);
}

extern "C" cudaError_t NNCUDAConvBias(int single, size_t P, size_t nb, size_t n, size_t C, const void *b, void *y, cudaStream_t st)
{
  size_t N = P * nb * C;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNConvBiasKernel<float>, NNCUDABlocks(N), 256, st, P, nb, n, C, (const float *)b, (float *)y);
  return NNCUDALaunch(NNConvBiasKernel<double>, NNCUDABlocks(N), 256, st, P, nb, n, C, (const double *)b, (double *)y);
}
