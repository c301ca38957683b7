/* General-purpose kernels of the CUDA device (launchers declared in include/petnn/private/cudakernels.h). */
#include <petnn/private/cudalaunch.h>

template <typename T>
__global__ void NNFillKernel(size_t N, T value, T *x)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) x[i] = value;
}

extern "C" cudaError_t NNCUDAFill(int single, size_t N, double value, void *x, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNFillKernel<float>, NNCUDABlocks(N), 256, s, N, (float)value, (float *)x);
  return NNCUDALaunch(NNFillKernel<double>, NNCUDABlocks(N), 256, s, N, value, (double *)x);
}

template <typename T>
__global__ void NNMultiplyKernel(size_t N, const T *x, const T *y, T *z)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) z[i] = x[i] * y[i];
}

extern "C" cudaError_t NNCUDAMultiply(int single, size_t N, const void *x, const void *y, void *z, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNMultiplyKernel<float>, NNCUDABlocks(N), 256, s, N, (const float *)x, (const float *)y, (float *)z);
  return NNCUDALaunch(NNMultiplyKernel<double>, NNCUDABlocks(N), 256, s, N, (const double *)x, (const double *)y, (double *)z);
}

__global__ void NNDoubleToFloatKernel(size_t N, const double *x, float *y)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) y[i] = (float)x[i];
}

extern "C" cudaError_t NNCUDADoubleToFloat(size_t N, const double *x, float *y, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  return NNCUDALaunch(NNDoubleToFloatKernel, NNCUDABlocks(N), 256, s, N, x, y);
}

template <typename T>
__global__ void NNBiasBroadcastKernel(size_t m, size_t N, const T *b, T *y)
{
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < N; k += (size_t)gridDim.x * blockDim.x) y[k] = b[k % m];
}

extern "C" cudaError_t NNCUDABiasBroadcast(int single, size_t m, size_t n, const void *b, void *y, cudaStream_t s)
{
  const size_t N = m * n;

  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNBiasBroadcastKernel<float>, NNCUDABlocks(N), 256, s, m, N, (const float *)b, (float *)y);
  return NNCUDALaunch(NNBiasBroadcastKernel<double>, NNCUDABlocks(N), 256, s, m, N, (const double *)b, (double *)y);
}

/* one thread a row: the threads of a warp read consecutive entries of each column; four sums keep loads in flight */
template <typename T>
__global__ void NNBiasGradientKernel(size_t m, size_t n, const T *dy, T *db)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m; i += (size_t)gridDim.x * blockDim.x) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t j = 0;

    for (; j + 4 <= n; j += 4) {
      s0 += dy[i + m * j];
      s1 += dy[i + m * (j + 1)];
      s2 += dy[i + m * (j + 2)];
      s3 += dy[i + m * (j + 3)];
    }
    for (; j < n; j++) s0 += dy[i + m * j];
    db[i] += (T)((s0 + s1) + (s2 + s3));
  }
}

extern "C" cudaError_t NNCUDABiasGradient(int single, size_t m, size_t n, const void *dy, void *db, cudaStream_t s)
{
  if (!m || !n) return cudaSuccess;
  if (single) return NNCUDALaunch(NNBiasGradientKernel<float>, NNCUDABlocks(m), 256, s, m, n, (const float *)dy, (float *)db);
  return NNCUDALaunch(NNBiasGradientKernel<double>, NNCUDABlocks(m), 256, s, m, n, (const double *)dy, (double *)db);
}

template <typename T>
__global__ void NNAxpyKernel(size_t N, T alpha, const T *x, T *y)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) y[i] += alpha * x[i];
}

extern "C" cudaError_t NNCUDAAxpy(int single, size_t N, double alpha, const void *x, void *y, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNAxpyKernel<float>, NNCUDABlocks(N), 256, s, N, (float)alpha, (const float *)x, (float *)y);
  return NNCUDALaunch(NNAxpyKernel<double>, NNCUDABlocks(N), 256, s, N, alpha, (const double *)x, (double *)y);
}

template <typename T>
__global__ void NNScaleKernel(size_t N, T alpha, T *x)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) x[i] *= alpha;
}

extern "C" cudaError_t NNCUDAScale(int single, size_t N, double alpha, void *x, cudaStream_t s)
{
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNScaleKernel<float>, NNCUDABlocks(N), 256, s, N, (float)alpha, (float *)x);
  return NNCUDALaunch(NNScaleKernel<double>, NNCUDABlocks(N), 256, s, N, alpha, (double *)x);
}

template <typename T>
__global__ void NNCopyBlocksKernel(size_t rows, size_t b, const T *src, size_t lds, T *dst, size_t ldd)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < rows * b; i += (size_t)gridDim.x * blockDim.x) dst[(i / b) * ldd + i % b] = src[(i / b) * lds + i % b];
}

extern "C" cudaError_t NNCUDACopyBlocks(int single, size_t rows, size_t b, const void *src, size_t lds, void *dst, size_t ldd, cudaStream_t s)
{
  size_t N = rows * b;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNCopyBlocksKernel<float>, NNCUDABlocks(N), 256, s, rows, b, (const float *)src, lds, (float *)dst, ldd);
  return NNCUDALaunch(NNCopyBlocksKernel<double>, NNCUDABlocks(N), 256, s, rows, b, (const double *)src, lds, (double *)dst, ldd);
}

/* dst[i b + j] = src[idx[i] b + j], zero where idx[i] < 0 */
template <typename T> __global__ void NNGatherBlocksKernel(size_t n, size_t b, const int *idx, const T *src, T *dst)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n * b; i += (size_t)gridDim.x * blockDim.x) {
    int k  = idx[i / b];
    dst[i] = k < 0 ? T(0) : src[(size_t)k * b + i % b];
  }
}

/* dst[idx[i] b + j] = (add ? dst[..] : 0) + src[i b + j] where idx[i] >= 0 (the idx[i] distinct: no two threads meet) */
template <typename T> __global__ void NNScatterBlocksKernel(int add, size_t n, size_t b, const int *idx, const T *src, T *dst)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n * b; i += (size_t)gridDim.x * blockDim.x) {
    int k = idx[i / b];
    if (k < 0) continue;
    T *d = dst + (size_t)k * b + i % b;
    *d   = add ? *d + src[i] : src[i];
  }
}

extern "C" cudaError_t NNCUDAGatherBlocks(int single, size_t n, size_t b, const int *idx, const void *src, void *dst, cudaStream_t s)
{
  size_t N = n * b;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNGatherBlocksKernel<float>, NNCUDABlocks(N), 256, s, n, b, idx, (const float *)src, (float *)dst);
  return NNCUDALaunch(NNGatherBlocksKernel<double>, NNCUDABlocks(N), 256, s, n, b, idx, (const double *)src, (double *)dst);
}

extern "C" cudaError_t NNCUDAScatterBlocks(int single, int add, size_t n, size_t b, const int *idx, const void *src, void *dst, cudaStream_t s)
{
  size_t N = n * b;
  if (!N) return cudaSuccess;
  if (single) return NNCUDALaunch(NNScatterBlocksKernel<float>, NNCUDABlocks(N), 256, s, add, n, b, idx, (const float *)src, (float *)dst);
  return NNCUDALaunch(NNScatterBlocksKernel<double>, NNCUDABlocks(N), 256, s, add, n, b, idx, (const double *)src, (double *)dst);
}
