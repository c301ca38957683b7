/* SGD: the type's data, shared by its CPU step (sgd.c) and its device step (sgd_cuda.c) */
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscReal momentum;
  PetscBool nesterov;
} NNOpt_SGD;

#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNOptStepDevice_SGD(NNOpt, PetscReal, const NNDeviceParameters *, void *const[]);
#endif
