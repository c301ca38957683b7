/* Private to dropout: layers/core/dropout.c (the layer, its CPU passes) and layers/core/dropout_cuda.c (its device passes). */
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscReal    rate;   /* drop probability p in [0,1) */
  PetscScalar *mask;   /* m_i/(1-p) of the last training forward pass, capacity nbatch*size */
  PetscBool    masked; /* the last forward pass applied the mask (training mode and p > 0) */
  void        *dmask;  /* -nn_device cuda: the mask on the device in the pass's precision (nbatch*size entries) */
  void        *hmask;  /* and its page-locked stage on the host, in the same precision (the upload waits for nothing) */
  void        *upload; /* cudaEvent_t after the last upload from hmask: hmask is rewritten only once that copy is done */
} NNLayer_Dropout;

#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNDropoutResetDevice(NNLayer);
#endif
