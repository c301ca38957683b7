/* The permutation between the sequential order [s][c][p] and the spatial order [p][s][c] (launchers declared in
   include/petnn/private/cudakernels.h): to_spatial, spatial_flatten and the NCHW buffers of cuDNN's convolutions; with
   the spatial activations split over ranks, between all pixels of the sequential order and the rank's box of them.
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

/* the sequential pixel of pixel p of the box */
__device__ inline size_t NNBoxPixel(const NNCUDASpatialBox &b, size_t p)
{
  size_t x = p % b.bm[0], y = (p / b.bm[0]) % b.bm[1], z = p / (b.bm[0] * b.bm[1]);
  return ((b.bs[2] + z) * b.N[1] + b.bs[1] + y) * b.N[0] + b.bs[0] + x;
}

template <typename T>
__global__ void NNToSpatialBoxKernel(NNCUDASpatialBox b, size_t nb, size_t n, size_t C, const T *seq, T *sp)
{
  const size_t P = b.N[0] * b.N[1] * b.N[2], N = b.bm[0] * b.bm[1] * b.bm[2] * nb * C;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t c = i % C, s = (i / C) % nb, p = i / (C * nb);
    sp[i]    = s < n ? seq[(s * C + c) * P + NNBoxPixel(b, p)] : T(0);
  }
}

template <typename T>
__global__ void NNToSequentialBoxKernel(NNCUDASpatialBox b, size_t nb, size_t n, size_t C, const T *sp, T *seq)
{
  const size_t P = b.N[0] * b.N[1] * b.N[2], Pb = b.bm[0] * b.bm[1] * b.bm[2], N = n * C * Pb;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < N; i += (size_t)gridDim.x * blockDim.x) {
    size_t p = i % Pb, c = (i / Pb) % C, s = i / (Pb * C);
    seq[(s * C + c) * P + NNBoxPixel(b, p)] = sp[(p * nb + s) * C + c];
  }
}

extern "C" cudaError_t NNCUDASpatialPermuteBox(int single, int tospatial, const NNCUDASpatialBox *b, size_t nb, size_t n, size_t C, void *seq, void *sp, cudaStream_t st)
{
  size_t Pb = b->bm[0] * b->bm[1] * b->bm[2], N = tospatial ? Pb * nb * C : n * C * Pb;
  if (!N) return cudaSuccess;
  if (tospatial) {
    if (single) return NNCUDALaunch(NNToSpatialBoxKernel<float>, NNCUDABlocks(N), 256, st, *b, nb, n, C, (const float *)seq, (float *)sp);
    return NNCUDALaunch(NNToSpatialBoxKernel<double>, NNCUDABlocks(N), 256, st, *b, nb, n, C, (const double *)seq, (double *)sp);
  }
  if (single) return NNCUDALaunch(NNToSequentialBoxKernel<float>, NNCUDABlocks(N), 256, st, *b, nb, n, C, (const float *)sp, (float *)seq);
  return NNCUDALaunch(NNToSequentialBoxKernel<double>, NNCUDABlocks(N), 256, st, *b, nb, n, C, (const double *)sp, (double *)seq);
}
