/*
   The CUDA emulation (CMake's PETNN_CUDA_EMULATION): the part of the CUDA runtime API PetNN calls, run on the host, so
   that the CUDA device's code (the *_cuda.c sources and the kernels of the *.cu files, compiled as C++) runs and is
   tested on machines without a GPU. Device memory is host memory that the emulation keeps a table of: copies and
   memsets check their direction against it, and new allocations are filled with NaNs (cudaMalloc() does not clear),
   so the two commonest device bugs, a host pointer passed as a device one and reading memory never written, fail
   here. Streams and events are synchronous; event times are zero. Not a GPU: the emulated device names itself so.
*/
#pragma once
#include <stddef.h>

#if defined(__cplusplus)
extern "C" {
#endif

typedef enum {
  cudaSuccess                = 0,
  cudaErrorInvalidValue      = 1,
  cudaErrorMemoryAllocation  = 2,
  cudaErrorNoDevice          = 100,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorNotReady          = 600
} cudaError_t;

typedef enum {
  cudaMemcpyHostToHost     = 0,
  cudaMemcpyHostToDevice   = 1,
  cudaMemcpyDeviceToHost   = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault        = 4
} cudaMemcpyKind;

typedef struct NNEmuStream *cudaStream_t;
typedef struct NNEmuEvent  *cudaEvent_t;
#define cudaStreamNonBlocking 0x01
#define cudaEventDisableTiming 0x02

struct cudaDeviceProp {
  char   name[256];
  size_t totalGlobalMem;
  int    major, minor, multiProcessorCount;
};

typedef struct uint3 {
  unsigned x, y, z;
} uint3;
#if defined(__cplusplus)
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) { }
};
#endif

cudaError_t cudaGetDeviceCount(int *);
cudaError_t cudaSetDevice(int);
cudaError_t cudaGetDevice(int *);
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *, int);
const char *cudaGetErrorName(cudaError_t);
const char *cudaGetErrorString(cudaError_t);
cudaError_t cudaGetLastError(void);
cudaError_t cudaMalloc(void **, size_t);
cudaError_t cudaFree(void *);
cudaError_t cudaMallocHost(void **, size_t);
cudaError_t cudaFreeHost(void *);
cudaError_t cudaMemcpy(void *, const void *, size_t, cudaMemcpyKind);
cudaError_t cudaMemcpyAsync(void *, const void *, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemcpy2DAsync(void *, size_t, const void *, size_t, size_t, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemsetAsync(void *, int, size_t, cudaStream_t);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *, unsigned);
cudaError_t cudaStreamDestroy(cudaStream_t);
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaEventCreate(cudaEvent_t *);
cudaError_t cudaEventDestroy(cudaEvent_t);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *, unsigned);
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t);
cudaError_t cudaEventQuery(cudaEvent_t);
cudaError_t cudaEventSynchronize(cudaEvent_t);
cudaError_t cudaEventElapsedTime(float *, cudaEvent_t, cudaEvent_t);

/* the emulation's own: whether [p, p + bytes) lies in one emulated device allocation (kernel launchers check their
   arrays with it) */
int NNEmuIsDevice(const void *p, size_t bytes);

/* the operations the emulation has run since the process started, counted as a GPU would see them, so that tests can
   check what a pass or a training step asks of the device (synchronizations and allocations stall a GPU's queue; a GPU
   runs no faster than the launches it is given); PETNN_CUDA_EMULATION_STATS=1 in the environment prints them at exit */
typedef struct {
  unsigned long syncs;          /* cudaStreamSynchronize(), cudaDeviceSynchronize(), cudaEventSynchronize(), every cudaMemcpy() (blocking) */
  unsigned long h2d, d2h, d2d;  /* copies (cudaMemcpy*, cudaMemcpy2DAsync() counting once) */
  unsigned long h2dbytes, d2hbytes;
  unsigned long mallocs, frees; /* cudaMalloc(), cudaFree() (cudaFree() synchronizes a GPU) */
  unsigned long hostallocs;     /* cudaMallocHost() (page-locking synchronizes a GPU too) */
  unsigned long memsets, launches, gemms;
} NNEmuStats;
void NNEmuGetStats(NNEmuStats *);
void NNEmuCountLaunch(void);

/* the kernel coordinates of the thread the emulation is running (cuda_runtime.h) */
extern uint3 blockIdx, threadIdx;
extern uint3 blockDim, gridDim;

#if defined(__cplusplus)
}
#endif
