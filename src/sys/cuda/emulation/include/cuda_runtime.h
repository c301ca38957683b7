/* The CUDA emulation (cuda_runtime_api.h): what nvcc gives a .cu file, for the kernels compiled as C++ on the host.
   A kernel launch (NNCUDALaunch(), include/petnn/private/cudalaunch.h) runs the kernel once for every (block, thread)
   in order, so kernels must not rely on threads running together: PetNN's kernels use no shared memory, barriers or
   warp operations, and write each entry from one thread (or add with atomicAdd()). */
#pragma once
#include <cuda_runtime_api.h>
#include <math.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline

#if defined(__cplusplus)
template <typename T>
inline T atomicAdd(T *a, T v)
{
  T old = *a;
  *a    = old + v;
  return old;
}
#endif
