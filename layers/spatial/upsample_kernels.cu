/*
   Upsampling on the device (launchers declared in include/petnn/private/cudakernels.h), on the spatial layout of one
   rank; nearest-neighbour first, bilinear / trilinear below.

   Nearest: input grid im (x, y, z), factor s per axis, D = nb*C entries per pixel. Forward: output
   pixel o copies input pixel o/s. Backward: an input pixel's gradient is the sum of its copies' gradients, added in
   the CPU's order (z, y, x), so double results are bitwise the CPU's.
*/
#include <petnn/private/cudalaunch.h>

template <typename T>
__global__ void NNUpsampleNearestForwardKernel(NNCUDAUpsampleGeom g, const T *x, T *y)
{
  size_t Ox = (size_t)g.im[0] * g.s[0], Oy = (size_t)g.im[1] * g.s[1], Oz = (size_t)g.im[2] * g.s[2], N = Ox * Oy * Oz * g.D;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % g.D, o = i / g.D, ox = o % Ox, oy = (o / Ox) % Oy, oz = o / (Ox * Oy);
    y[i]     = x[(((oz / g.s[2]) * g.im[1] + oy / g.s[1]) * g.im[0] + ox / g.s[0]) * g.D + j];
  }
}

template <typename T>
__global__ void NNUpsampleNearestBackwardKernel(NNCUDAUpsampleGeom g, const T *dy, T *dx)
{
  size_t Ox = (size_t)g.im[0] * g.s[0], Oy = (size_t)g.im[1] * g.s[1], N = (size_t)g.im[0] * g.im[1] * g.im[2] * g.D;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % g.D, p = i / g.D, ix = p % g.im[0], iy = (p / g.im[0]) % g.im[1], iz = p / ((size_t)g.im[0] * g.im[1]);
    T      sum = 0;
    for (int tz = 0; tz < g.s[2]; tz++)
      for (int ty = 0; ty < g.s[1]; ty++)
        for (int tx = 0; tx < g.s[0]; tx++) {
          T v = dy[(((iz * g.s[2] + tz) * Oy + iy * g.s[1] + ty) * Ox + ix * g.s[0] + tx) * g.D + j];
          sum = (tz || ty || tx) ? sum + v : v;
        }
    dx[i] = sum;
  }
}

extern "C" cudaError_t NNCUDAUpsampleNearest(int single, int forward, const NNCUDAUpsampleGeom *g, const void *in, void *out, cudaStream_t s)
{
  size_t N = (size_t)g->im[0] * g->im[1] * g->im[2] * g->D * (forward ? (size_t)g->s[0] * g->s[1] * g->s[2] : 1);
  if (!N) return cudaSuccess;
  if (forward) {
    if (single) return NNCUDALaunch(NNUpsampleNearestForwardKernel<float>, NNCUDABlocks(N), 256, s, *g, (const float *)in, (float *)out);
    return NNCUDALaunch(NNUpsampleNearestForwardKernel<double>, NNCUDABlocks(N), 256, s, *g, (const double *)in, (double *)out);
  }
  if (single) return NNCUDALaunch(NNUpsampleNearestBackwardKernel<float>, NNCUDABlocks(N), 256, s, *g, (const float *)in, (float *)out);
  return NNCUDALaunch(NNUpsampleNearestBackwardKernel<double>, NNCUDABlocks(N), 256, s, *g, (const double *)in, (double *)out);
}

/*
   Bilinear / trilinear upsampling (the tables: layers/spatial/upsample_cuda.c, from those of upsample_linear.c). Forward,
   a thread per output entry sums its corners in the CPU's order with the CPU's weights (wz wy) wx. Backward, a thread
   per input entry gathers the same products from the outputs that read it (the transposed tables): no atomics, a fixed
   order, so reruns are identical; the order differs from the CPU's scatter only where an output reads one input twice
   (at the clamped last input), a round-off difference.
*/
template <typename T>
__global__ void NNUpsampleLinearForwardKernel(NNCUDAUpsampleLinearGeom g, const int *idx, const T *w, const T *x, T *y)
{
  size_t N = (size_t)g.om[0] * g.om[1] * g.om[2] * g.D;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % g.D, o = i / g.D;
    int    q[3] = {(int)(o % g.om[0]), (int)((o / g.om[0]) % g.om[1]), (int)(o / ((size_t)g.om[0] * g.om[1]))}, k[3];
    T      sum  = 0;
    for (int a = 0; a < 3; a++) k[a] = g.f[a] + 2 * q[a];
    for (int c = 0; c < g.nc; c++) { /* corner c: bit 0 x, bit 1 y, bit 2 z takes the second input */
      int bz = (c >> 2) & 1, by = (c >> 1) & 1, bx = c & 1, iz = idx[k[2] + bz], iy = idx[k[1] + by], ix = idx[k[0] + bx];
      T   wc = (w[k[2] + bz] * w[k[1] + by]) * w[k[0] + bx];
      T   v  = wc * x[(((size_t)iz * g.im[1] + iy) * g.im[0] + ix) * g.D + j];
      sum    = c ? sum + v : v;
    }
    y[i] = sum;
  }
}

template <typename T>
__global__ void NNUpsampleLinearBackwardKernel(NNCUDAUpsampleLinearGeom g, const int *idx, const T *w, const T *dy, T *dx)
{
  size_t N = (size_t)g.im[0] * g.im[1] * g.im[2] * g.D;

  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % g.D, p = i / g.D;
    int    ix = (int)(p % g.im[0]), iy = (int)((p / g.im[0]) % g.im[1]), iz = (int)(p / ((size_t)g.im[0] * g.im[1]));
    T      sum = 0; /* as the CPU's zeroed gradient, also for an input no output reads */
    for (int kz = idx[g.r[2] + iz]; kz < idx[g.r[2] + iz + 1]; kz++)
      for (int ky = idx[g.r[1] + iy]; ky < idx[g.r[1] + iy + 1]; ky++) {
        T wzy = w[kz] * w[ky];
        for (int kx = idx[g.r[0] + ix]; kx < idx[g.r[0] + ix + 1]; kx++) sum += (wzy * w[kx]) * dy[(((size_t)idx[kz] * g.om[1] + idx[ky]) * g.om[0] + idx[kx]) * g.D + j];
      }
    dx[i] = sum;
  }
}

extern "C" cudaError_t NNCUDAUpsampleLinear(int single, int forward, const NNCUDAUpsampleLinearGeom *g, const int *idx, const void *w, const void *in, void *out, cudaStream_t s)
{
  size_t N = forward ? (size_t)g->om[0] * g->om[1] * g->om[2] * g->D : (size_t)g->im[0] * g->im[1] * g->im[2] * g->D;
  if (!N) return cudaSuccess;
  if (forward) {
    if (single) return NNCUDALaunch(NNUpsampleLinearForwardKernel<float>, NNCUDABlocks(N), 256, s, *g, idx, (const float *)w, (const float *)in, (float *)out);
    return NNCUDALaunch(NNUpsampleLinearForwardKernel<double>, NNCUDABlocks(N), 256, s, *g, idx, (const double *)w, (const double *)in, (double *)out);
  }
  if (single) return NNCUDALaunch(NNUpsampleLinearBackwardKernel<float>, NNCUDABlocks(N), 256, s, *g, idx, (const float *)w, (const float *)in, (float *)out);
  return NNCUDALaunch(NNUpsampleLinearBackwardKernel<double>, NNCUDABlocks(N), 256, s, *g, idx, (const double *)w, (const double *)in, (double *)out);
}
