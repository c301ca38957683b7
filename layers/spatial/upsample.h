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
  /* the device passes' copies of these tables (upsample_cuda.c), made by the first device pass after set-up */
  int        *didx; /* device: indices of the tables and of their transposes */
  void       *dw;   /* device: the weights, in the precision dprec */
  NNPrecision dprec;
} NNUpsampleLinear;

PETSC_INTERN PetscErrorCode NNUpsampleLinearSetUp(NNLayer, DM, PetscInt, PetscBool, NNUpsampleLinear *);
PETSC_INTERN PetscErrorCode NNUpsampleLinearReset(NNUpsampleLinear *);
PETSC_INTERN PetscErrorCode NNUpsampleLinearForward(NNLayer, NNUpsampleLinear *, Vec, Vec);
PETSC_INTERN PetscErrorCode NNUpsampleLinearBackward(NNLayer, NNUpsampleLinear *, Vec, Vec);
/* the same on float arrays in the DMDAs' global layouts (-nn_precision single), the halo exchanged in float */
PETSC_INTERN PetscErrorCode NNUpsampleLinearForwardSingle(NNLayer, NNUpsampleLinear *, const float *, float *);
PETSC_INTERN PetscErrorCode NNUpsampleLinearBackwardSingle(NNLayer, NNUpsampleLinear *, const float *, float *);

/* the layer's data (upsample.c; the device passes read it in upsample_cuda.c) */
typedef enum {
  NN_UPSAMPLE_NEAREST,
  NN_UPSAMPLE_LINEAR
} NNUpsampleMode;

typedef struct {
  PetscInt         scale;
  NNUpsampleMode   mode;
  PetscBool        align;       /* align_corners (linear mode) */
  char             badmode[32]; /* an unknown -mode, refused by set-up */
  DM               daout;
  NNUpsampleLinear lin;
} NNLayer_Upsample;
