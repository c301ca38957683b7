/* Kernel launches of PetNN's *.cu files: NNCUDALaunch(kernel, blocks, threads, stream, args...) enqueues kernel on the
   stream (kernel<<<blocks, threads, 0, stream>>>(args...)) and returns the launch's error. In the CUDA emulation
   (CMake's PETNN_CUDA_EMULATION: the kernels compiled as C++ on the host, src/sys/cuda/emulation/) it runs the kernel for
   every (block, thread) in turn, after checking that every pointer argument points into emulated device memory.
   NNCUDABlocks(N) is the grid of a grid-stride loop over N entries with 256 threads a block. */
#pragma once
#include <petnn/private/cudakernels.h>

static inline unsigned NNCUDABlocks(size_t N)
{
  size_t b = (N + 255) / 256;
  return (unsigned)(b < 65535 ? (b ? b : 1) : 65535);
}

#if defined(PETNN_CUDA_EMULATION)
  #include <stdio.h>
template <typename T>
static inline bool NNEmuArgOnDevice(T)
{
  return true;
}
template <typename T>
static inline bool NNEmuArgOnDevice(T *p)
{
  return !p || NNEmuIsDevice(p, 0);
}

template <typename... P, typename... A>
static inline cudaError_t NNCUDALaunch(void (*kernel)(P...), unsigned blocks, unsigned threads, cudaStream_t stream, A... args)
{
  (void)stream;
  if (!(NNEmuArgOnDevice(args) && ...)) {
    fprintf(stderr, "[CUDA emulation] a kernel launch with a pointer argument outside device memory\n");
    return cudaErrorInvalidDevicePointer;
  }
  NNEmuCountLaunch();
  gridDim.x  = blocks;
  blockDim.x = threads;
  gridDim.y = gridDim.z = blockDim.y = blockDim.z = 1;
  blockIdx.y = blockIdx.z = threadIdx.y = threadIdx.z = 0;
  for (unsigned b = 0; b < blocks; b++)
    for (unsigned t = 0; t < threads; t++) {
      blockIdx.x  = b;
      threadIdx.x = t;
      kernel(args...);
    }
  return cudaSuccess;
}
#else
template <typename... P, typename... A>
static inline cudaError_t NNCUDALaunch(void (*kernel)(P...), unsigned blocks, unsigned threads, cudaStream_t stream, A... args)
{
  kernel<<<blocks, threads, 0, stream>>>(args...);
  return cudaGetLastError();
}
#endif
