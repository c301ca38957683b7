/* Max and average pooling on the spatial layout (launchers declared in include/petnn/private/cudakernels.h): the input
   array holds the box [gs, gs + gm) of the grid N (the whole grid on one rank, the ghosted box when the activations are
   split over ranks), the output the box [os, os + No) of the output grid; with the CPU passes' semantics (layers/pool/pool_passes.h): windows over the valid taps in order (z, y, x), the
   first maximum wins and NaN propagates, the average divides by the full window. One thread per output entry forward;
   backward one thread per input entry gathers from the windows that hold it (no atomics, a fixed order, so reruns are
   identical), max pooling finding each window's argmax in x again instead of storing it. */
#include <petnn/private/cudalaunch.h>

struct NNPoolG {
  int    max;
  int    N[3], No[3], k[3], s[3], p[3];
  int    gs[3], gm[3], os[3];
  size_t D;
};

/* the maximum (and its pixel in the input box) or the average of window o (of the output grid), entry j */
template <typename T>
__device__ T NNPoolWindow(const NNPoolG &g, const int o[3], size_t j, const T *x, size_t *arg)
{
  T      m     = T(0);
  size_t a     = 0;
  bool   first = true;
  for (int tz = 0; tz < g.k[2]; tz++) {
    int z = o[2] * g.s[2] - g.p[2] + tz;
    if (z < 0 || z >= g.N[2]) continue;
    for (int ty = 0; ty < g.k[1]; ty++) {
      int y = o[1] * g.s[1] - g.p[1] + ty;
      if (y < 0 || y >= g.N[1]) continue;
      for (int tx = 0; tx < g.k[0]; tx++) {
        int xx = o[0] * g.s[0] - g.p[0] + tx;
        if (xx < 0 || xx >= g.N[0]) continue;
        size_t pix = ((size_t)(z - g.gs[2]) * g.gm[1] + (y - g.gs[1])) * g.gm[0] + (xx - g.gs[0]);
        T      v   = x[pix * g.D + j];
        if (first) {
          m     = v;
          a     = pix;
          first = false;
        } else if (g.max) {
          if (v > m || v != v) {
            m = v;
            a = pix;
          }
        } else m += v;
      }
    }
  }
  if (arg) *arg = a;
  return g.max ? m : m / (T)(g.k[0] * g.k[1] * g.k[2]);
}

template <typename T>
__global__ void NNPoolForwardKernel(NNPoolG g, const T *x, T *y)
{
  const size_t N = (size_t)g.No[0] * g.No[1] * g.No[2] * g.D;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % g.D, q = i / g.D;
    int    o[3];
    o[0] = g.os[0] + (int)(q % g.No[0]);
    o[1] = g.os[1] + (int)((q / g.No[0]) % g.No[1]);
    o[2] = g.os[2] + (int)(q / ((size_t)g.No[0] * g.No[1]));
    y[i] = NNPoolWindow(g, o, j, x, (size_t *)NULL);
  }
}

/* the outputs of the box [os, os + No) along one axis whose windows hold input i: [*lo, *hi) */
__device__ void NNPoolRange(int i, int k, int s, int p, int os, int No, int *lo, int *hi)
{
  int a = i + p - k + 1; /* o*s >= a */
  *lo   = a <= 0 ? 0 : (a + s - 1) / s;
  *hi   = (i + p) / s + 1;
  if (*lo < os) *lo = os;
  if (*hi > os + No) *hi = os + No;
}

template <typename T>
__global__ void NNPoolBackwardKernel(NNPoolG g, const T *x, const T *dy, T *dx)
{
  const size_t N = (size_t)g.gm[0] * g.gm[1] * g.gm[2] * g.D;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % g.D, pix = i / g.D;
    int    c[3], lo[3], hi[3], o[3];
    T      sum = T(0);
    c[0]       = g.gs[0] + (int)(pix % g.gm[0]);
    c[1]       = g.gs[1] + (int)((pix / g.gm[0]) % g.gm[1]);
    c[2]       = g.gs[2] + (int)(pix / ((size_t)g.gm[0] * g.gm[1]));
    for (int a = 0; a < 3; a++) NNPoolRange(c[a], g.k[a], g.s[a], g.p[a], g.os[a], g.No[a], &lo[a], &hi[a]);
    for (o[2] = lo[2]; o[2] < hi[2]; o[2]++)
      for (o[1] = lo[1]; o[1] < hi[1]; o[1]++)
        for (o[0] = lo[0]; o[0] < hi[0]; o[0]++) {
          size_t q = ((size_t)(o[2] - g.os[2]) * g.No[1] + (o[1] - g.os[1])) * g.No[0] + (o[0] - g.os[0]);
          if (g.max) {
            size_t arg;
            (void)NNPoolWindow(g, o, j, x, &arg);
            if (arg == pix) sum += dy[q * g.D + j];
          } else sum += dy[q * g.D + j] / (T)(g.k[0] * g.k[1] * g.k[2]);
        }
    dx[i] = sum;
  }
}

static NNPoolG NNPoolGeomOf(const NNCUDAPoolGeom *h)
{
  NNPoolG g;
  g.max = h->max;
  g.D   = h->D;
  for (int a = 0; a < 3; a++) {
    g.N[a]  = h->N[a];
    g.No[a] = h->No[a];
    g.k[a]  = h->k[a];
    g.s[a]  = h->s[a];
    g.p[a]  = h->p[a];
    g.gs[a] = h->gs[a];
    g.gm[a] = h->gm[a];
    g.os[a] = h->os[a];
  }
  return g;
}

extern "C" cudaError_t NNCUDAPoolForward(int single, const NNCUDAPoolGeom *h, const void *x, void *y, cudaStream_t st)
{
  NNPoolG g = NNPoolGeomOf(h);
  size_t  N = (size_t)g.No[0] * g.No[1] * g.No[2] * g.D;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNPoolForwardKernel<float>, NNCUDABlocks(N), 256, st, g, (const float *)x, (float *)y);
  return NNCUDALaunch(NNPoolForwardKernel<double>, NNCUDABlocks(N), 256, st, g, (const double *)x, (double *)y);
}

extern "C" cudaError_t NNCUDAPoolBackward(int single, const NNCUDAPoolGeom *h, const void *x, const void *dy, void *dx, cudaStream_t st)
{
  NNPoolG g = NNPoolGeomOf(h);
  size_t  N = (size_t)g.gm[0] * g.gm[1] * g.gm[2] * g.D;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNPoolBackwardKernel<float>, NNCUDABlocks(N), 256, st, g, (const float *)x, (const float *)dy, (float *)dx);
  return NNCUDALaunch(NNPoolBackwardKernel<double>, NNCUDABlocks(N), 256, st, g, (const double *)x, (const double *)dy, (double *)dx);
}
