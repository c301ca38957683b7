/*
   The pointwise activations' CUDA kernels (-nn_device cuda): one grid-stride loop per direction, templated on the
   element type, the activation a compile-time parameter. The math is the CPU passes' (layers/activation/activation.c,
   gelu.c) written with CUDA's own functions in the element type: tanh, exp and erfc of CUDA's math library are within
   a few units in the last place, so double results agree with the CPU's to about 1e-15 relative.
     relu        y = max(x, 0)                       dx = x > 0 ? dy : 0
     leaky_relu  y = x > 0 ? x : s x                 dx = x > 0 ? dy : s dy
     tanh        y = tanh(x)                         dx = (1 - y^2) dy
     sigmoid     y = 1/(1 + e^-x) (e^x/(1 + e^x) below 0, as on the CPU)   dx = y (1 - y) dy
     gelu        y = x Phi(x), Phi(x) = erfc(-x/sqrt 2)/2                  dx = (Phi(x) + x phi(x)) dy, phi(x) = e^(-x^2/2)/sqrt(2 pi)
*/
#include <petnn/private/cudalaunch.h>

template <typename T> __device__ inline T NNTanh(T x);
template <> __device__ inline double NNTanh(double x) { return tanh(x); }
template <> __device__ inline float NNTanh(float x) { return tanhf(x); }
template <typename T> __device__ inline T NNExp(T x);
template <> __device__ inline double NNExp(double x) { return exp(x); }
template <> __device__ inline float NNExp(float x) { return expf(x); }
template <typename T> __device__ inline T NNErfc(T x);
template <> __device__ inline double NNErfc(double x) { return erfc(x); }
template <> __device__ inline float NNErfc(float x) { return erfcf(x); }

#define NN_SQRT1_2   0.70710678118654752440
#define NN_1_SQRT2PI 0.39894228040143267794

template <typename T, NNCUDAActivation A>
__device__ inline T NNActF(T x, T s)
{
  switch (A) {
  case NN_CUDA_RELU:
    return x > 0 ? x : (T)0;
  case NN_CUDA_LEAKY_RELU:
    return x > 0 ? x : s * x;
  case NN_CUDA_TANH:
    return NNTanh(x);
  case NN_CUDA_SIGMOID:
    if (x >= 0) return (T)1 / ((T)1 + NNExp(-x));
    else {
      const T e = NNExp(x);
      return e / ((T)1 + e);
    }
  case NN_CUDA_GELU:
    return x * (T)0.5 * NNErfc(-x * (T)NN_SQRT1_2);
  }
  return 0;
}

/* dy/dx from x and y */
template <typename T, NNCUDAActivation A>
__device__ inline T NNActDF(T x, T y, T s)
{
  switch (A) {
  case NN_CUDA_RELU:
    return x > 0 ? (T)1 : (T)0;
  case NN_CUDA_LEAKY_RELU:
    return x > 0 ? (T)1 : s;
  case NN_CUDA_TANH:
    return (T)1 - y * y;
  case NN_CUDA_SIGMOID:
    return y * ((T)1 - y);
  case NN_CUDA_GELU:
    return (T)0.5 * NNErfc(-x * (T)NN_SQRT1_2) + x * (T)NN_1_SQRT2PI * NNExp((T)-0.5 * x * x);
  }
  return 0;
}

template <typename T, NNCUDAActivation A>
__global__ void NNActForwardKernel(size_t N, T s, const T *__restrict__ x, T *__restrict__ y)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) y[i] = NNActF<T, A>(x[i], s);
}

template <typename T, NNCUDAActivation A>
__global__ void NNActBackwardKernel(size_t N, T s, const T *__restrict__ x, const T *__restrict__ y, const T *__restrict__ dy, T *__restrict__ dx)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    if (A == NN_CUDA_RELU) dx[i] = x[i] > 0 ? dy[i] : (T)0; /* no 0 * inf: as the CPU pass */
    else dx[i] = dy[i] * NNActDF<T, A>(x[i], y[i], s);
  }
}

template <typename T>
static cudaError_t NNActForward(NNCUDAActivation a, T s, size_t N, const T *x, T *y, cudaStream_t st)
{
  const unsigned b = NNCUDABlocks(N);
  switch (a) {
  case NN_CUDA_RELU: return NNCUDALaunch(NNActForwardKernel<T, NN_CUDA_RELU>, b, 256, st, N, s, x, y);
  case NN_CUDA_LEAKY_RELU: return NNCUDALaunch(NNActForwardKernel<T, NN_CUDA_LEAKY_RELU>, b, 256, st, N, s, x, y);
  case NN_CUDA_TANH: return NNCUDALaunch(NNActForwardKernel<T, NN_CUDA_TANH>, b, 256, st, N, s, x, y);
  case NN_CUDA_SIGMOID: return NNCUDALaunch(NNActForwardKernel<T, NN_CUDA_SIGMOID>, b, 256, st, N, s, x, y);
  case NN_CUDA_GELU: return NNCUDALaunch(NNActForwardKernel<T, NN_CUDA_GELU>, b, 256, st, N, s, x, y);
  }
  return cudaErrorInvalidValue;
}

template <typename T>
static cudaError_t NNActBackward(NNCUDAActivation a, T s, size_t N, const T *x, const T *y, const T *dy, T *dx, cudaStream_t st)
{
  const unsigned b = NNCUDABlocks(N);
  switch (a) {
  case NN_CUDA_RELU: return NNCUDALaunch(NNActBackwardKernel<T, NN_CUDA_RELU>, b, 256, st, N, s, x, y, dy, dx);
  case NN_CUDA_LEAKY_RELU: return NNCUDALaunch(NNActBackwardKernel<T, NN_CUDA_LEAKY_RELU>, b, 256, st, N, s, x, y, dy, dx);
  case NN_CUDA_TANH: return NNCUDALaunch(NNActBackwardKernel<T, NN_CUDA_TANH>, b, 256, st, N, s, x, y, dy, dx);
  case NN_CUDA_SIGMOID: return NNCUDALaunch(NNActBackwardKernel<T, NN_CUDA_SIGMOID>, b, 256, st, N, s, x, y, dy, dx);
  case NN_CUDA_GELU: return NNCUDALaunch(NNActBackwardKernel<T, NN_CUDA_GELU>, b, 256, st, N, s, x, y, dy, dx);
  }
  return cudaErrorInvalidValue;
}

extern "C" cudaError_t NNCUDAActivationForward(NNCUDAActivation a, int single, double slope, size_t N, const void *x, void *y, cudaStream_t st)
{
  if (!N) return cudaSuccess;
  if (single) return NNActForward<float>(a, (float)slope, N, (const float *)x, (float *)y, st);
  return NNActForward<double>(a, slope, N, (const double *)x, (double *)y, st);
}

extern "C" cudaError_t NNCUDAActivationBackward(NNCUDAActivation a, int single, double slope, size_t N, const void *x, const void *y, const void *dy, void *dx, cudaStream_t st)
{
  if (!N) return cudaSuccess;
  if (single) return NNActBackward<float>(a, (float)slope, N, (const float *)x, (const float *)y, (const float *)dy, (float *)dx, st);
  return NNActBackward<double>(a, slope, N, (const double *)x, (const double *)y, (const double *)dy, (double *)dx, st);
}
