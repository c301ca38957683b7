/*
   The losses on the device (launchers declared in include/petnn/private/cudakernels.h; the driver is
   src/loss/interface/lossdevice_cuda.c). Each loss is evaluated in double from the output y (double or float) and the
   targets t (double), as the host evaluates it on the downloaded output: the gradient dL/dy is written in the pass's
   precision, and the loss is summed in double without atomics, so reruns give bitwise the same value:
     1. the loss kernel: each thread of the grid sums its terms (a grid-stride loop) into part[thread];
     2. one block of 256 threads: thread j sums part[j], part[j + 256], ... into part2[j];
     3. one thread: out = (part2[0] + ... + part2[255]) / (the mean's count).
   Entries are the first n samples of k outputs each ([n][k], sequential).
*/
#include <petnn/private/cudalaunch.h>

#define NN_LOSS_THREADS 256

/* the term of entry (r = y - t or, bce, the logit x with target t) and its derivative */
__device__ static inline double NNLossTerm(NNCUDALoss kind, double param, double y, double t, double *d)
{
  double r = y - t, a = fabs(r);
  switch (kind) {
  case NN_CUDA_LOSS_MSE:
    *d = 2 * r;
    return r * r;
  case NN_CUDA_LOSS_L1:
    *d = r > 0 ? 1.0 : (r < 0 ? -1.0 : 0.0);
    return a;
  case NN_CUDA_LOSS_HUBER:
    *d = fmin(fmax(r, -param), param);
    return a < param ? 0.5 * a * a : param * (a - 0.5 * param);
  case NN_CUDA_LOSS_BCE_WITH_LOGITS: {
    double e = exp(-fabs(y));
    *d       = (y >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e)) - t;
    return fmax(y, 0.0) - y * t + log1p(e);
  }
  default:
    *d = 0;
    return 0;
  }
}

/* the entrywise losses: N = n k entries, dy = term' / N */
template <typename T>
__global__ void NNLossEntrywiseKernel(NNCUDALoss kind, double param, size_t N, const T *y, const double *t, T *dy, double *part)
{
  size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  double L  = 0;

  for (size_t i = i0; i < N; i += stride) {
    double d;
    L += NNLossTerm(kind, param, (double)y[i], t[i], &d);
    if (dy) dy[i] = (T)(d / (double)N);
  }
  part[i0] = L;
}

/* cross_entropy, a sample a thread: log(sum_j exp(y_j - max)) + max - y_c; dy = softmax(y)/n - e_c/n */
template <typename T>
__global__ void NNLossCrossEntropyKernel(size_t n, size_t k, const T *y, const double *t, T *dy, double *part)
{
  size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x, stride = (size_t)gridDim.x * blockDim.x;
  double L  = 0;

  for (size_t s = i0; s < n; s += stride) {
    const T *ys  = y + s * k;
    size_t   c   = (size_t)t[s];
    double   max = (double)ys[0], sum = 0;
    for (size_t j = 1; j < k; j++) max = fmax(max, (double)ys[j]);
    for (size_t j = 0; j < k; j++) sum += exp((double)ys[j] - max);
    L += log(sum) + max - (double)ys[c];
    if (dy) {
      for (size_t j = 0; j < k; j++) dy[s * k + j] = (T)(exp((double)ys[j] - max) / sum / (double)n);
      dy[s * k + c] = (T)(exp((double)ys[c] - max) / sum / (double)n - 1.0 / (double)n);
    }
  }
  part[i0] = L;
}

/* steps 2 and 3 of the sum (one block; then one thread) */
__global__ void NNLossPartialSumKernel(size_t m, const double *part, double *part2)
{
  double L = 0;

  for (size_t i = threadIdx.x; i < m; i += blockDim.x) L += part[i];
  part2[threadIdx.x] = L;
}

__global__ void NNLossFinishKernel(size_t m, const double *part2, double count, double *out)
{
  double L = 0;

  for (size_t i = 0; i < m; i++) L += part2[i];
  out[0] = L / count;
}

/* the threads of the loss kernel for m items (entries or samples): at most 64 blocks, so part has at most 64*256 */
static unsigned NNLossBlocks(size_t m)
{
  unsigned b = NNCUDABlocks(m);
  return b < 64 ? b : 64;
}

extern "C" size_t NNCUDALossWorkSize(void)
{
  return 64 * NN_LOSS_THREADS + NN_LOSS_THREADS + 1;
}

extern "C" cudaError_t NNCUDALossEvaluate(NNCUDALoss kind, int single, double param, size_t n, size_t k, const void *y, const double *t, void *dy, double *work, cudaStream_t s)
{
  double     *part = work, *part2 = work + 64 * NN_LOSS_THREADS, *out = part2 + NN_LOSS_THREADS;
  size_t      m    = kind == NN_CUDA_LOSS_CROSS_ENTROPY ? n : n * k;
  unsigned    b    = NNLossBlocks(m);
  cudaError_t err;

  if (kind == NN_CUDA_LOSS_CROSS_ENTROPY) {
    if (single) err = NNCUDALaunch(NNLossCrossEntropyKernel<float>, b, NN_LOSS_THREADS, s, n, k, (const float *)y, t, (float *)dy, part);
    else err = NNCUDALaunch(NNLossCrossEntropyKernel<double>, b, NN_LOSS_THREADS, s, n, k, (const double *)y, t, (double *)dy, part);
  } else {
    if (single) err = NNCUDALaunch(NNLossEntrywiseKernel<float>, b, NN_LOSS_THREADS, s, kind, param, m, (const float *)y, t, (float *)dy, part);
    else err = NNCUDALaunch(NNLossEntrywiseKernel<double>, b, NN_LOSS_THREADS, s, kind, param, m, (const double *)y, t, (double *)dy, part);
  }
  if (err != cudaSuccess) return err;
  err = NNCUDALaunch(NNLossPartialSumKernel, 1, NN_LOSS_THREADS, s, (size_t)b * NN_LOSS_THREADS, (const double *)part, part2);
  if (err != cudaSuccess) return err;
  return NNCUDALaunch(NNLossFinishKernel, 1, 1, s, (size_t)NN_LOSS_THREADS, (const double *)part2, (double)m, out);
}
