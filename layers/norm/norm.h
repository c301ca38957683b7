/*
   Private to the per-sample normalization layers: layers/norm/groupnorm.c (group_norm, instance_norm),
   layers/norm/layernorm.c (layer_norm) and layers/norm/normbase.c (what they share: options, setters,
   tensors, layouts and the affine kernels, those in double and in float from layers/norm/normbase_kernels.h;
   groupnorm_passes.h and layernorm_passes.h are the types' passes in both precisions).

   Layouts of the activations these layers read (C channels, nb = batch capacity, n used samples):
   - sequential: [s][c][q], q < npos = size(sample)/C (npos = 1 for flat features);
   - spatial (DMDA, channels-last with the batch in the dof): [p][s][c] over the rank's npos pixels,
     D = nb*C entries per pixel. Statistics over pixels are then summed over the layer's communicator.
   The kernels below work on per-(sample, channel) arrays of length L = n*C, index sc = s*C + c:
   entry (sc, q) lives at x[q*D + sc] (spatial) or x[sc*npos + q] (sequential).
*/
#pragma once

#include "normdevice.h"

typedef enum {
  NN_NORM_GROUP,    /* group_norm: statistics per (sample, group of channels) over the group's channels and all positions */
  NN_NORM_INSTANCE, /* instance_norm: group_norm with one channel per group */
  NN_NORM_LAYER     /* layer_norm: statistics per (sample, position) over the channels */
} NNNormKind;

typedef struct {
  PetscBool spatial; /* DMDA activation: statistics over positions summed over the layer's communicator */
  PetscInt  npos;    /* the rank's positions (pixels, or the trailing extent of a sequential sample) */
  PetscInt  D;       /* spatial: entries per pixel, nbatch*C */
} NNNormLayout;

typedef struct {
  NNNormKind   kind;
  PetscReal    eps;
  PetscBool    affine;
  PetscInt     groups;         /* group_norm: the option (0: not set); G at set-up */
  PetscInt     C, G;           /* channels, groups */
  PetscReal    m;              /* values per statistic over all ranks (group/instance norm) */
  PetscInt     cap;            /* capacity of mean, rstd (entries) */
  PetscScalar *mean, *rstd;    /* statistics of the last forward pass: [n][G], or layer_norm [n][npos] */
  PetscScalar *mu, *a, *b, *u; /* per-(sample, channel) workspace [nbatch*C] each */
  PetscScalar *acc1, *acc2;    /* per-(sample, channel) sums [nbatch*C] each */
  PetscScalar *pg;             /* parameter-gradient partial sums [2C] */
  PetscScalar *gs;             /* per-statistic sums [2 nbatch C] */
  NNNormDevice dev;            /* -nn_device cuda (layers/norm/norm_cuda.c) */
} NNNorm;

PETSC_INTERN PetscErrorCode NNNormCreateBase(NNLayer, NNNormKind);
PETSC_INTERN PetscErrorCode NNNormSetUpBase(NNLayer);
PETSC_INTERN PetscErrorCode NNNormGetLayout(NNLayer, PetscInt, Vec, NNNormLayout *);
PETSC_INTERN PetscErrorCode NNNormGetInputLayout(NNLayer, NNNormLayout *);
PETSC_INTERN PetscErrorCode NNNormEnsureCapacity(NNNorm *, PetscInt);
PETSC_INTERN const char    *NNNormName(NNLayer);
PETSC_INTERN void NNNormSums(const NNNormLayout *, PetscInt, const PetscScalar *, const PetscScalar *, PetscScalar *, PetscScalar *);
PETSC_INTERN void NNNormGradSums(const NNNormLayout *, PetscInt, const PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *, PetscScalar *);
PETSC_INTERN void NNNormApply(const NNNormLayout *, PetscInt, const PetscScalar *, const PetscScalar *, const PetscScalar *, const PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *);
/* the same on float activations and gradients (single precision), sums and coefficients still double */
PETSC_INTERN void NNNormSumsSingle(const NNNormLayout *, PetscInt, const float *, const PetscScalar *, PetscScalar *, PetscScalar *);
PETSC_INTERN void NNNormGradSumsSingle(const NNNormLayout *, PetscInt, const float *, const float *, const PetscScalar *, PetscScalar *, PetscScalar *);
PETSC_INTERN void NNNormApplySingle(const NNNormLayout *, PetscInt, const float *, const PetscScalar *, const PetscScalar *, const PetscScalar *, const float *, const PetscScalar *, float *);
