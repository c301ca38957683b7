/* Private to the residual layer: layers/container/residual.c (the layer) and residual_cuda.c (its device passes). */
#pragma once

#include <petnn/private/containerimpl.h>

typedef struct {
  NNLayerContainer v; /* the children's activation Vecs */
  /* device passes (-nn_device cuda): the children's outputs and their gradients as device arrays of the pass's
     precision, one of each per child, with the entries of the Vecs in v */
  void   **dout, **ddout;
  size_t   des;  /* their entry size (0: none made) */
  PetscInt ndev; /* children they were made for */
  /* single precision (residual_single.c): the children's float outputs, then their float output gradients */
  struct {
    PetscInt *len; /* entries of each child's output (NULL: not made yet) */
    float    *out;
  } single;
} NNLayer_Residual;

PETSC_INTERN PetscErrorCode NNResidualDeviceReset(NNLayer);
PETSC_INTERN PetscErrorCode NNResidualSingleReset(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerForwardSingle_Residual(NNLayer, PetscInt, const float *, float *);
PETSC_INTERN PetscErrorCode NNLayerBackwardSingle_Residual(NNLayer, PetscInt, const float *, const float *, const float *, float *);
