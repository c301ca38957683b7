/* SGD's step on the device (launcher declared in include/petnn/private/cudakernels.h): the arithmetic of
   NNOptStep_SGD() (sgd.c) entry by entry in double, on the double parameters x, reading the gradient in the precision
   of the passes and writing the float working copy xf of the parameters when there is one. b: the momentum buffer
   (NULL without momentum); first: the first step, which sets the buffer to the gradient as PyTorch does. */
#include <petnn/private/cudalaunch.h>

template <typename G>
__global__ void NNSGDKernel(size_t n, double *x, float *xf, const G *g, double *b, double lr, double wd, double mu, int first, int nesterov)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double d = (double)g[i] + wd * x[i];
    if (b) {
      b[i] = first ? d : mu * b[i] + d;
      d    = nesterov ? d + mu * b[i] : b[i];
    }
    x[i] -= lr * d;
    if (xf) xf[i] = (float)x[i];
  }
}

extern "C" cudaError_t NNCUDASGDStep(int single, size_t n, double *x, float *xf, const void *g, double *b, double lr, double wd, double mu, int first, int nesterov, cudaStream_t st)
{
  if (!n) return cudaSuccess;
  if (single) return NNCUDALaunch(NNSGDKernel<float>, NNCUDABlocks(n), 256, st, n, x, xf, (const float *)g, b, lr, wd, mu, first, nesterov);
  return NNCUDALaunch(NNSGDKernel<double>, NNCUDABlocks(n), 256, st, n, x, xf, (const double *)g, b, lr, wd, mu, first, nesterov);
}
