/* cuDNN for the device passes (conv2d, layers/conv/conv_cuda.c): the package's handle on its stream
   (src/sys/cuda/cudnn_cuda.c) and cuDNN errors as PETSc errors. Only with PETNN_HAVE_CUDNN (CMake found cuDNN). */
#pragma once
#include <petnn/private/cudaimpl.h>
#include <cudnn.h>

#define NNCallCUDNN(...) \
  do { \
    cudnnStatus_t nn_derr_ = (__VA_ARGS__); \
    PetscCheck(nn_derr_ == CUDNN_STATUS_SUCCESS, PETSC_COMM_SELF, PETSC_ERR_LIB, "cuDNN error %d %s (in %s)", (int)nn_derr_, cudnnGetErrorString(nn_derr_), #__VA_ARGS__); \
  } while (0)

/* the cuDNN handle on the package's stream, made on first use (after NNCUDAInitialize()), destroyed by PetscFinalize() */
PETSC_INTERN PetscErrorCode NNCUDAGetDNN(cudnnHandle_t *);
