/*
   Private to the upsample layer: layers/spatial/upsample.c (the layer, nearest mode, options) and
   layers/spatial/upsample_linear.c (bilinear / trilinear mode).
*/
#pragma once

#include <petnn/private/nnimpl.h>

/* the interpolation of the linear mode along the rank's owned outputs: output o (local index q along axis a) is
   w0[a][q] x[i0[a][q]] + w1[a][q] x[i1[a][q]], indices local to the ghosted input box */
typedef struct {
  NNSpatialHalo h; /* dahalo: the input's grid and ranges with stencil width 1; h.daout unused */
  PetscInt     *i0[3], *i1[3];
  PetscReal    *w0[3], *w1[3];
  PetscInt      om[3], gm[3]; /* owned output extents, ghosted input extents (2-d: z is 1) */
} NNUpsampleLinear;

PETSC_INTERN PetscErrorCode NNUpsampleLinearSetUp(NNLayer, DM, PetscInt, PetscBool, NNUpsampleLinear *);
PETSC_INTERN PetscErrorCode NNUpsampleLinearReset(NNUpsampleLinear *);
PETSC_INTERN PetscErrorCode NNUpsampleLinearForward(NNLayer, NNUpsampleLinear *, Vec, Vec);
PETSC_INTERN PetscErrorCode NNUpsampleLinearBackward(NNLayer, NNUpsampleLinear *, Vec, Vec);
