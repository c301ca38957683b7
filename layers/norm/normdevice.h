/*
   Private to the normalization layers: the state of their device passes (-nn_device cuda, layers/norm/norm_cuda.c)
   every norm type keeps (a member of NNBatchNormBase, batchnorm.h, and of NNNorm, norm.h), freed by the types' reset
   routines. Needs no CUDA headers.
*/
#pragma once
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>

typedef struct {
  double      *work;       /* device: the statistics of the last forward pass [3][groups] (mean, var, rstd), then scratch */
  size_t       cap;        /* doubles in work */
  double      *sums;       /* device, in work: sums added over the ranks (activations split over ranks), 2 max(groups, C) */
  PetscScalar *hs;         /* host: those sums on their way through MPI_Allreduce, and group statistics */
  size_t       hcap;       /* entries of hs */
  PetscScalar *h;          /* host [3C]: batch norm's statistics on their way down (training) or up (evaluation) */
  PetscBool    batchstats; /* the last forward pass normalized with the statistics of its input */
  PetscBool    split;      /* the activation is spatial and split over ranks (set with the geometry) */
} NNNormDevice;

#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNNormDeviceReset(NNNormDevice *);
#endif
