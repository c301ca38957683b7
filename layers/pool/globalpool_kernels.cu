/*
   Global average pooling on the device (launchers declared in include/petnn/private/cudakernels.h): the rank's spatial
   layout, P pixels of D = nb*C entries, to the sequential [s][C] output of D entries, divided by the grid's npix pixels
   (split over ranks: npix 1, the rank's sums, added over the ranks on the host). A thread per output entry sums the
   pixels in the CPU's order, in double in both precisions as the CPU's passes do, so the results on one rank are
   bitwise the CPU's (split over ranks in single precision, the rank's sums are rounded to float before the host adds
   them in double).
*/
#include <petnn/private/cudalaunch.h>

template <typename T>
__global__ void NNGlobalAvgPoolForwardKernel(size_t P, size_t npix, size_t D, size_t nC, const T *x, T *y)
{
  for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < D; j += (size_t)gridDim.x * blockDim.x) {
    double s = 0; /* in double in both precisions, as the CPU's passes sum */
    if (j < nC)
      for (size_t p = 0; p < P; p++) s += (double)x[p * D + j];
    y[j] = (T)(npix == 1 ? s : s / (double)npix);
  }
}

/* dx = dy / npix on every pixel; slots beyond the pass's samples (j >= nC) get zero */
template <typename T>
__global__ void NNGlobalAvgPoolBackwardKernel(size_t P, size_t npix, size_t D, size_t nC, const T *dy, T *dx)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < P * D; i += (size_t)gridDim.x * blockDim.x) {
    size_t j = i % D;
    dx[i]    = j < nC ? (T)((double)dy[j] / (double)npix) : (T)0;
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
