/* The dense layer's private data, shared by dense.c and its model-parallel passes (dense_partition.c). */
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt  units;
  PetscBool bias;
  /* model parallelism (-<layer>_partition rows|columns): the split of the output (rows) or input (columns)
     features over the layer's ranks, and a [nbatch][this rank's features] work array */
  NNPartColumns pc;
  PetscScalar  *work;
} NNLayer_Dense;

PETSC_INTERN PetscErrorCode NNDensePartSetUp(NNLayer);
PETSC_INTERN PetscErrorCode NNDensePartInitialize(NNLayer, PetscReal);
PETSC_INTERN PetscErrorCode NNDensePartForward(NNLayer, PetscInt, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNDensePartBackward(NNLayer, PetscInt, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNDensePartView(NNLayer, PetscViewer);
