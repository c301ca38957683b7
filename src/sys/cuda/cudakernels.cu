/* General-purpose kernels of the CUDA device (launchers declared in include/petnn/private/cudakernels.h). */
#include <petnn/private/cudakernels.h>

template <typename T>
__global__ void NNFillKernel(size_t N, T value, T *x)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) x[i] = value;
}

static unsigned NNBlocks(size_t N)
{
  size_t b = (N + 255) / 256;
  return (unsigned)(b < 65535 ? (b ? b : 1) : 65535);
}

extern "C" cudaError_t NNCUDAFill(int single, size_t N, double value, void *x, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  if (single) NNFillKernel<float><<<NNBlocks(N), 256, 0, s>>>(N, (float)value, (float *)x);
  else NNFillKernel<double><<<NNBlocks(N), 256, 0, s>>>(N, value, (double *)x);
  return cudaGetLastError();
}

template <typename T>
__global__ void NNMultiplyKernel(size_t N, const T *x, const T *y, T *z)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) z[i] = x[i] * y[i];
}

extern "C" cudaError_t NNCUDAMultiply(int single, size_t N, const void *x, const void *y, void *z, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  if (single) NNMultiplyKernel<float><<<NNBlocks(N), 256, 0, s>>>(N, (const float *)x, (const float *)y, (float *)z);
  else NNMultiplyKernel<double><<<NNBlocks(N), 256, 0, s>>>(N, (const double *)x, (const double *)y, (double *)z);
  return cudaGetLastError();
}
