/* Private to dropout: layers/core/dropout.c (the layer, its CPU passes) and layers/core/dropout_cuda.c (its device passes). */
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscReal    rate;   /* drop probability p in [0,1) */
  PetscScalar *mask;   /* m_i/(1-p) of the last training forward pass, capacity nbatch*size */
  PetscBool    masked; /* the last forward pass applied the mask (training mode and p > 0) */
  void        *dmask;  /* -nn_device cuda: the mask on the device in the pass's precision (nbatch*size entries) */
  float       *fmask;  /* and its float conversion on the host (single precision) */
} NNLayer_Dropout;

#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNDropoutResetDevice(NNLayer);
#endif
