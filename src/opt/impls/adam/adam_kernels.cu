/* Adam's and AdamW's step on the device (launcher declared in include/petnn/private/cudakernels.h): the arithmetic of
   NNOptStep_Adam() (adam.c) entry by entry in double, on the double parameters x, reading the gradient in the precision
   of the passes (float in single precision) and writing the float working copy xf of the parameters when there is one. */
#include <petnn/private/cudalaunch.h>

template <typename G>
__global__ void NNAdamKernel(size_t n, double *x, float *xf, const G *g, double *m, double *v, NNCUDAAdamCoefficients k)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double xi = x[i], gi = (double)g[i];
    if (k.decoupled) xi *= k.shrink;
    else gi = gi + k.wd * xi;
    const double mi = k.b1 * m[i] + (1 - k.b1) * gi;
    const double vi = k.b2 * v[i] + (1 - k.b2) * gi * gi;
    xi -= k.step * mi / (sqrt(vi) / k.sbc2 + k.eps);
    m[i] = mi;
    v[i] = vi;
    x[i] = xi;
    if (xf) xf[i] = (float)xi;
  }
}

extern "C" cudaError_t NNCUDAAdamStep(int single, size_t n, double *x, float *xf, const void *g, double *m, double *v, const NNCUDAAdamCoefficients *k, cudaStream_t st)
{
  if (!n) return cudaSuccess;
  if (single) return NNCUDALaunch(NNAdamKernel<float>, NNCUDABlocks(n), 256, st, n, x, xf, (const float *)g, m, v, *k);
  return NNCUDALaunch(NNAdamKernel<double>, NNCUDABlocks(n), 256, st, n, x, xf, (const double *)g, m, v, *k);
}
