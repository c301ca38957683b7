/* The dense layer's private data, shared by dense.c and its model-parallel passes (dense_partition.c). */
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt  units;
  PetscBool bias;
  /* model parallelism (-<layer>_partition rows|columns): the split of the output (rows) or input (columns)
     features over the layer's ranks, and a [nbatch][this rank's features] work array of each precision */
  NNPartColumns pc;
  PetscScalar  *work;
  float        *swork;
  void         *devwork; /* the same on the device (-nn_device cuda: dense_partition_cuda.c), either precision */
} NNLayer_Dense;

PETSC_INTERN PetscErrorCode NNDensePartSetUp(NNLayer);
PETSC_INTERN PetscErrorCode NNDensePartInitialize(NNLayer, PetscReal);
/* the passes on the layer's piece W of the parameters and dW of their gradient (dense_partition_passes.h) */
PETSC_INTERN PetscErrorCode NNDensePartForward(NNLayer, PetscInt, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNDensePartBackward(NNLayer, PetscInt, const PetscScalar *, PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNDensePartForwardSingle(NNLayer, PetscInt, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNDensePartBackwardSingle(NNLayer, PetscInt, const float *, float *, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNDensePartView(NNLayer, PetscViewer);
#if defined(PETNN_HAVE_CUDA) /* the device passes of the partition (dense_partition_cuda.c) */
PETSC_INTERN PetscErrorCode NNDensePartForwardDevice(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNDensePartBackwardDevice(NNLayer, PetscInt, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNDensePartResetDevice(NNLayer);
#endif
