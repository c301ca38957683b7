/* Model parallelism on the device (-nn_device cuda): the sharded layers' gather of their parameters
   (src/layer/interface/layershard_cuda.c); the partition primitives on device arrays are in layerimpl.h.
   Built with PETNN_HAVE_CUDA. */
#pragma once
#include <petnn/private/layerimpl.h>

/* a sharded layer's whole parameters (and for backward a zeroed whole gradient) on the device around its device pass */
PETSC_INTERN PetscErrorCode NNLayerShardBeginDevice(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNLayerShardEndDevice(NNLayer, PetscBool);
/* a layer's device passes (ops forwarddevice, backwarddevice), a sharded layer's parameters gathered around them */
PETSC_INTERN PetscErrorCode NNLayerForwardDevice(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice(NNLayer, PetscInt, const void *, const void *, const void *, void *);
