/*
   The CUDA emulation's NCCL (include/nccl.h beside this file; built only with CMake's PETNN_CUDA_EMULATION): a
   communicator is an MPI communicator (a duplicate of the one named by NNEmuNCCLUseComm()), an all-reduce is
   MPI_Allreduce() on the emulated device memory (host memory), checked to lie in device allocations.
*/
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct NNEmuNCCL {
  MPI_Comm comm;
};

static MPI_Comm NNEmuNCCLComm = MPI_COMM_NULL;

void NNEmuNCCLUseComm(MPI_Comm comm)
{
  NNEmuNCCLComm = comm;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
  memset(id, 0, sizeof(*id));
  snprintf(id->internal, sizeof(id->internal), "PetNN CUDA emulation");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
  int size, me;

  (void)id;
  *comm = NULL;
  if (NNEmuNCCLComm == MPI_COMM_NULL) {
    fprintf(stderr, "[CUDA emulation] ncclCommInitRank(): no MPI communicator named (NNEmuNCCLUseComm())\n");
    return ncclInvalidUsage;
  }
  MPI_Comm_size(NNEmuNCCLComm, &size);
  MPI_Comm_rank(NNEmuNCCLComm, &me);
  if (size != nranks || me != rank) {
    fprintf(stderr, "[CUDA emulation] ncclCommInitRank(): rank %d of %d, but the MPI communicator has rank %d of %d\n", rank, nranks, me, size);
    return ncclInvalidArgument;
  }
  *comm = (ncclComm_t)calloc(1, sizeof(struct NNEmuNCCL));
  if (!*comm) return ncclSystemError;
  MPI_Comm_dup(NNEmuNCCLComm, &(*comm)->comm);
  NNEmuNCCLComm = MPI_COMM_NULL;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
  if (!comm) return ncclSuccess;
  MPI_Comm_free(&comm->comm);
  free(comm);
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm, cudaStream_t s)
{
  size_t es = type == ncclFloat64 ? sizeof(double) : sizeof(float);

  (void)s;
  if (!comm || op != ncclSum || (type != ncclFloat64 && type != ncclFloat32) || count > 0x7fffffff) return ncclInvalidArgument;
  if (!count) return ncclSuccess;
  if (!NNEmuIsDevice(send, count * es) || !NNEmuIsDevice(recv, count * es)) {
    fprintf(stderr, "[CUDA emulation] ncclAllReduce() of %zu entries: %p or %p is not (all) device memory\n", count, send, recv);
    return ncclInvalidArgument;
  }
  if (MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, type == ncclFloat64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, comm->comm) != MPI_SUCCESS) return ncclSystemError;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
  switch (r) {
  case ncclSuccess:
    return "no error";
  case ncclInvalidArgument:
    return "invalid argument (CUDA emulation; details on stderr)";
  case ncclInvalidUsage:
    return "invalid usage (CUDA emulation; details on stderr)";
  default:
    return "NCCL error (CUDA emulation)";
  }
}
