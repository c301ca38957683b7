/*
   Private to the pooling layers: layers/pool/pool.c (the types and their passes) and layers/pool/poolopts.c
   (options, view, setters).
*/
#pragma once

#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt  nd;                 /* 2 or 3 */
  PetscBool max;                /* max pooling (else average) */
  PetscInt  k, stride, pad;     /* options; stride 0: the kernel size */
  NNSpatialWindow w;            /* the window in use (x, y, z) */
  NNSpatialHalo h;              /* halo and output DMDAs; the ghosted input and its gradient (halo > 0 only) */
  PetscInt *arg;                /* max pooling: argmax tap of every local output entry */
  PetscInt *toff;               /* pixel offset of every tap of a window inside the input box */
  PetscBool tiles;              /* the owned windows cover the rank's input box exactly once */
  PetscBool haveforward;        /* arg holds the argmax of a forward pass */
} NNLayer_Pool;

PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_Pool(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerView_Pool(NNLayer, PetscViewer);
PETSC_INTERN PetscErrorCode NNPoolComposeFunctions(NNLayer, PetscBool); /* compose (PETSC_TRUE) or remove the type-specific setters */
