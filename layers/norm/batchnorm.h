/*
   Private to the batch-norm layers: layers/norm/batchnorm.c (batchnorm1d), layers/norm/batchnormspatial.c
   (batchnorm2d, batchnorm3d) and layers/norm/batchnormbase.c (what they share: tensors, initial values,
   options, setters, the running statistics); their passes in double and in float are the precision templates
   layers/norm/batchnorm_passes.h and layers/norm/batchnormspatial_passes.h.
*/
#pragma once

#include "normdevice.h"

/* the first member of every batch-norm type's data */
typedef struct {
  PetscReal momentum, eps;
  PetscInt     C;   /* channels */
  NNNormDevice dev; /* -nn_device cuda (layers/norm/norm_cuda.c) */
} NNBatchNormBase;

PETSC_INTERN PetscErrorCode NNBatchNormCreateBase(NNLayer);                 /* defaults, shared callbacks and setters (l->data allocated) */
PETSC_INTERN PetscErrorCode NNBatchNormSetUpTensors(NNLayer, PetscInt);     /* C channels: output shape and PyTorch's five tensors */
PETSC_INTERN void           NNBatchNormTrainingStats(const NNBatchNormBase *, PetscInt, PetscScalar, PetscReal, PetscReal, PetscScalar *, PetscScalar *, PetscScalar *);
PETSC_INTERN void           NNBatchNormRunningStats(const NNBatchNormBase *, const PetscScalar *, const PetscScalar *, PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNBatchNormSpatialCombineStats(NNLayer, PetscReal *); /* [C][3] (count, mean, M2) over the layer's ranks */
