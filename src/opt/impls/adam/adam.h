/* Adam and AdamW: the type's data, shared by its CPU step (adam.c) and its device step (adam_cuda.c) */
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscReal beta1, beta2, eps;
  PetscBool decoupled; /* AdamW */
} NNOpt_Adam;

#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNOptStepDevice_Adam(NNOpt, PetscReal, const NNDeviceParameters *, void *const[]);
#endif
