/* Helpers of the multi-input and multi-output layers (concat, add, split) of graph networks. */
#pragma once
#include <petnn/private/nnimpl.h>

/* Channel-major view of an activation: rows of block entries, a row one sample ([n][C*...], sequential
   layout: n rows of size(shape)) or one batch slot of one pixel (DMDA layout [pixel][slot][C]: all the
   rank's pixels times nbatch rows of C), so concatenating or splitting channels moves blocks row by row */
PETSC_INTERN PetscErrorCode NNGraphRows(NNLayer, Vec, const NNShape *, PetscInt, PetscInt *, PetscInt *);
/* the inputs' layouts agree: all sequential, or all DMDAs of one grid and decomposition (error names both producers) */
PETSC_INTERN PetscErrorCode NNGraphCheckLayouts(NNLayer);
/* error: inputs k and 0 of a layer have incompatible shapes (what says how they must agree) */
PETSC_INTERN PetscErrorCode NNGraphShapeError(NNLayer, PetscInt, const char[]);
/* a spatial output Vec with the grid and decomposition of dm and C channels per batch slot (da made, caller keeps it) */
PETSC_INTERN PetscErrorCode NNGraphCreateSpatialLike(NNLayer, DM, PetscInt, DM *, Vec *);
