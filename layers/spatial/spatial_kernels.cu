/* The permutation between the sequential order [s][c][p] and the spatial order [p][s][c] of one rank (launcher declared
   in include/petnn/private/cudakernels.h): to_spatial, spatial_flatten and the NCHW buffers of cuDNN's convolutions.
   Each thread writes one entry of the destination, so the writes are coalesced and every entry is written once. */
#include <petnn/private/cudalaunch.h>

template <typename T>
__global__ void NNToSpatialKernel(size_t P, size_t nb, size_t n, size_t C, const T *seq, T *sp)
{
  const size_t N = P * nb * C;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t c = i % C, s = (i / C) % nb, p = i / (C * nb);
    sp[i]    = s < n ? seq[(s * C + c) * P + p] : T(0);
  }
}

template <typename T>
__global__ void NNToSequentialKernel(size_t P, size_t nb, size_t n, size_t C, const T *sp, T *seq)
{
  const size_t N = n * C * P;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t p = i % P, c = (i / P) % C, s = i / (P * C);
    seq[i]   = sp[(p * nb + s) * C + c];
  }
}

extern "C" cudaError_t NNCUDASpatialPermute(int single, int tospatial, size_t P, size_t nb, size_t n, size_t C, void *seq, void *sp, cudaStream_t st)
{
  size_t N = tospatial ? P * nb * C : n * C * P;
  if (!N) return cudaSuccess;
  if (tospatial) {
    if (single) return NNCUDALaunch(NNToSpatialKernel<float>, NNCUDABlocks(N), 256, st, P, nb, n, C, (const float *)seq, (float *)sp);
    return NNCUDALaunch(NNToSpatialKernel<double>, NNCUDABlocks(N), 256, st, P, nb, n, C, (const double *)seq, (double *)sp);
  }
  if (single) return NNCUDALaunch(NNToSequentialKernel<float>, NNCUDABlocks(N), 256, st, P, nb, n, C, (const float *)sp, (float *)seq);
  return NNCUDALaunch(NNToSequentialKernel<double>, NNCUDABlocks(N), 256, st, P, nb, n, C, (const double *)sp, (double *)seq);
}
