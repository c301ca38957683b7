/*
   Nearest-neighbour upsampling on the device (launchers declared in include/petnn/private/cudakernels.h), on the
   spatial layout of one rank: input grid im (x, y, z), factor s per axis, D = nb*C entries per pixel. Forward: output
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
