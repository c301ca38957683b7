/* The CUDA device (-nn_device cuda), C side: error checking, the package's CUDA state (src/sys/cuda/device_cuda.c) and a
   network's device arrays (src/nn/interface/nndevice_cuda.c). Included only by the CUDA-only sources (*_cuda.c), which
   CMake builds when PETNN_WITH_CUDA is on; the kernels themselves are in *.cu files behind cudakernels.h. */
#pragma once
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <petnn/private/cudakernels.h>

/* CUDA, cuBLAS errors as PETSc errors with the library's own name and message */
#define NNCallCUDA(...) \
  do { \
    cudaError_t nn_cerr_ = (__VA_ARGS__); \
    PetscCheck(nn_cerr_ == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "CUDA error %d %s: %s (in %s)", (int)nn_cerr_, cudaGetErrorName(nn_cerr_), cudaGetErrorString(nn_cerr_), #__VA_ARGS__); \
  } while (0)
#define NNCallCUBLAS(...) \
  do { \
    cublasStatus_t nn_berr_ = (__VA_ARGS__); \
    PetscCheck(nn_berr_ == CUBLAS_STATUS_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "cuBLAS error %d %s: %s (in %s)", (int)nn_berr_, cublasGetStatusName(nn_berr_), cublasGetStatusString(nn_berr_), #__VA_ARGS__); \
  } while (0)

/* ---------------------------------------------------------------- the package's CUDA state (src/sys/cuda/device_cuda.c) */
/* the GPUs this process sees; 0 with the reason in why[] when none can be used */
PETSC_INTERN PetscErrorCode NNCUDAGetDeviceCount(PetscInt *, size_t, char[]);
/* once per process: the GPU of this rank (its rank on the node modulo the GPUs), a stream and a cuBLAS handle on it */
PETSC_INTERN PetscErrorCode NNCUDAInitialize(MPI_Comm);
PETSC_INTERN PetscErrorCode NNCUDAGetStream(cudaStream_t *);
PETSC_INTERN PetscErrorCode NNCUDAGetBLAS(cublasHandle_t *);
PETSC_INTERN PetscErrorCode NNCUDAGetDeviceName(size_t, char[]);
/* n ones of the precision on the device (bias GEMMs), valid until the next call with a larger n */
PETSC_INTERN PetscErrorCode NNCUDAGetOnes(NNPrecision, PetscInt, const void **);
/* C = alpha op(A) op(B) + beta C, column-major, through cublasGemmEx in double or float (tf32: float may use TF32) */
PETSC_INTERN PetscErrorCode NNCUDAGemm(NNPrecision, PetscBool, cublasOperation_t, cublasOperation_t, PetscInt, PetscInt, PetscInt, PetscReal, const void *, PetscInt, const void *, PetscInt, PetscReal, void *, PetscInt);
PETSC_INTERN PetscErrorCode NNCUDAMalloc(size_t, void **);
PETSC_INTERN PetscErrorCode NNCUDAFree(void **);
PETSC_INTERN PetscErrorCode NNCUDAMallocHost(size_t, const char[], void **); /* page-locked; the string names the use in errors */
/* grow-only page-locked stages, one per use, freed at PetscFinalize() (src/sys/cuda/device_cuda.c) */
typedef enum {
  NN_CUDA_STAGE_ALLREDUCE, /* NNDeviceAllreduceSum() */
  NN_CUDA_STAGE_PARTITION, /* the model-parallel all-gathers (partitionops_cuda.c) */
  NN_CUDA_STAGE_COUNT
} NNCUDAStage;
PETSC_INTERN PetscErrorCode NNCUDAGetHostStage(NNCUDAStage, size_t, const char[], void **);
PETSC_INTERN PetscErrorCode NNCUDAFreeHost(void **);

/* ---------------------------------------------------------------- a network's device arrays (src/nn/interface/nndevice_cuda.c) */
typedef struct {
  NNPrecision  prec;
  size_t       esize;             /* sizeof(double) or sizeof(float) */
  PetscInt     nact, nlayers, np; /* activations, top-level layers, local parameters */
  PetscInt    *len;               /* [nact] entries of act[i] (the local size of the host Vec) */
  PetscBool   *spatial;           /* [nact] act[i] is spatial (a DMDA Vec on one rank: [pixel][slot][channel]) */
  void       **act, **dact;       /* [nact] device activations and their gradients */
  void        *theta, *dtheta;    /* the parameters the passes read (in their precision) and the gradient */
  double      *master;            /* the parameters in double: theta itself in double precision, its own array in single */
  PetscObjectState hoststate;     /* the parameter Vec's object state when the parameters were last copied to or from it */
  PetscBool    synced;            /* they were (at hoststate) */
  PetscBool    newer;             /* an optimizer step on the device changed them since (NNDeviceSyncHost() copies them) */
  void        *hx, *hy, *hg;      /* page-locked host staging: input, output (and its gradient), gradients */
  double      *target, *lossw;    /* the loss on the device: targets of a batch, the loss's work (NNCUDALossWorkSize()) */
  PetscBool    dyready;           /* the loss on the device wrote dact[nlayers] (the backward pass uploads none) */
  PetscInt     ypending;          /* entries of the output whose download to hy a forward pass started (0: none) */
  PetscBool    ywaited;           /* and a wait for the stream since (the loss on the device's) completed it */
  void       **scratch;           /* graph networks: the gradients of a node's extra readers, added after them */
  void       **gargs;             /* graph networks: 4 maxio device array pointers, the arguments of a layer's pass */
  PetscInt     nscratch;
  cudaEvent_t *ev;                /* [4 nlayers]: each layer's forward start, stop, backward start, stop */
  size_t       bytes;             /* device memory held */
} NNDeviceCUDA;

PETSC_INTERN PetscErrorCode NNDeviceSetUp_CUDA(NN);
PETSC_INTERN PetscErrorCode NNDeviceReset_CUDA(NN);
PETSC_INTERN PetscErrorCode NNDeviceView_CUDA(NN, PetscViewer);
PETSC_INTERN PetscErrorCode NNDeviceForwardLayers_CUDA(NN, PetscInt, Vec, PetscBool);
PETSC_INTERN PetscErrorCode NNDeviceForwardLayersEnd_CUDA(NN);
PETSC_INTERN PetscErrorCode NNDeviceBackward_CUDA(NN, PetscInt, Vec, Vec, PetscScalar *, PetscBool[]);
PETSC_INTERN PetscErrorCode NNDeviceGetParameters_CUDA(NN, NNDeviceParameters *);
PETSC_INTERN PetscErrorCode NNDeviceSyncHost_CUDA(NN);
/* graph networks (src/nn/interface/nndevicegraph_cuda.c) */
PETSC_INTERN PetscErrorCode NNDeviceGraphSetUp_CUDA(NN, NNDeviceCUDA *);
PETSC_INTERN PetscErrorCode NNDeviceGraphReset_CUDA(NNDeviceCUDA *);
PETSC_INTERN PetscErrorCode NNDeviceGraphLayerForward_CUDA(NN, NNDeviceCUDA *, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode NNDeviceGraphLayerBackward_CUDA(NN, NNDeviceCUDA *, PetscInt, PetscInt, cudaStream_t);
PETSC_INTERN PetscErrorCode NNDeviceLossEvaluate_CUDA(NN, PetscInt, Vec, PetscReal *, PetscBool *);
PETSC_INTERN PetscErrorCode NNDeviceLossIsOnDevice_CUDA(NN, PetscBool *);
PETSC_INTERN PetscErrorCode NNDeviceScaleOutputGradient_CUDA(NN, PetscInt, PetscReal);
