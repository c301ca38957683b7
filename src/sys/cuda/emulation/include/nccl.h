/* The CUDA emulation (cuda_runtime_api.h): the part of NCCL PetNN calls. Emulated device memory is host memory, so an
   all-reduce is MPI_Allreduce() on the communicator the caller named with NNEmuNCCLUseComm() before
   ncclCommInitRank() (the emulation cannot recover it from a unique id). */
#pragma once
#include <cuda_runtime_api.h>
#include <mpi.h>

#if defined(__cplusplus)
extern "C" {
#endif

typedef enum {
  ncclSuccess         = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError     = 2,
  ncclInternalError   = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage    = 5
} ncclResult_t;
typedef enum {
  ncclFloat32 = 7,
  ncclFloat64 = 9
} ncclDataType_t;
typedef enum {
  ncclSum = 0
} ncclRedOp_t;
typedef struct {
  char internal[128];
} ncclUniqueId;
typedef struct NNEmuNCCL *ncclComm_t;

ncclResult_t ncclGetUniqueId(ncclUniqueId *);
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclCommDestroy(ncclComm_t);
ncclResult_t ncclAllReduce(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
const char  *ncclGetErrorString(ncclResult_t);

/* the emulation's own: the MPI communicator the next ncclCommInitRank() all-reduces over */
void NNEmuNCCLUseComm(MPI_Comm);

#if defined(__cplusplus)
}
#endif
