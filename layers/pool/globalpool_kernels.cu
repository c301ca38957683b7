/*
   Global average pooling on the device (launchers declared in include/petnn/private/cudakernels.h): the rank's spatial
   layout, P pixels of D = nb*C entries, to the sequential [s][C] output of D entries, divided by the grid's npix pixels
   (split over ranks: npix 1, the rank's sums, added over the ranks on the host). A thread per output entry sums the
   pixels in the CPU's order, so double results on one rank are bitwise the CPU's.
*/
#include <petnn/private/cudalaunch.h>

template <typename T>
__global__ void NNGlobalAvgPoolForwardKernel(size_t P, size_t npix, size_t D, size_t nC, const T *x, T *y)
{
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < D; j += (size_t)gridDim.x * blockDim.x) {
    T s = 0;
    if (j < nC)
      for (size_t p = 0; p < P; p++) s += x[p * D + j];
    y[j] = npix == 1 ? s : s / (T)npix;
  }
}

/* dx = dy / npix on every pixel; slots beyond the pass's samples (j >= nC) get zero */
template <typename T>
__global__ void NNGlobalAvgPoolBackwardKernel(size_t P, size_t npix, size_t D, size_t nC, const T *dy, T *dx)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < P * D; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % D;
    dx[i]    = j < nC ? dy[j] / (T)npix : (T)0;
  }
}

extern "C" cudaError_t NNCUDAGlobalAvgPool(int single, int forward, size_t P, size_t npix, size_t D, size_t nC, const void *in, void *out, cudaStream_t s)
{
  size_t N = forward ? D : P * D;
  if (!N) return cudaSuccess;
  if (forward) {
    if (single) return NNCUDALaunch(NNGlobalAvgPoolForwardKernel<float>, NNCUDABlocks(N), 256, s, P, npix, D, nC, (const float *)in, (float *)out);
    return NNCUDALaunch(NNGlobalAvgPoolForwardKernel<double>, NNCUDABlocks(N), 256, s, P, npix, D, nC, (const double *)in, (double *)out);
  }
  if (single) return NNCUDALaunch(NNGlobalAvgPoolBackwardKernel<float>, NNCUDABlocks(N), 256, s, P, npix, D, nC, (const float *)in, (float *)out);
  return NNCUDALaunch(NNGlobalAvgPoolBackwardKernel<double>, NNCUDABlocks(N), 256, s, P, npix, D, nC, (const double *)in, (double *)out);
}
