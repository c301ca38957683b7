/* Device passes of the layer types that have them (-nn_device cuda; ops forwarddevice/backwarddevice in layerimpl.h).
   They are defined in layers/<family>/<type>_cuda.c, which CMake builds only with PETNN_WITH_CUDA; a type's create
   routine sets them under #if defined(PETNN_HAVE_CUDA). This header needs no CUDA headers. */
#pragma once
#include <petnn/private/layerimpl.h>

/* the types with device passes, for error messages (keep in step with the create routines that set them) */
#define NN_DEVICE_LAYER_TYPES "dense, flatten, relu, leaky_relu, tanh, sigmoid, gelu, dropout, to_spatial, spatial_flatten, conv2d/3d, conv_transpose2d/3d, maxpool2d/3d, avgpool2d/3d, ode (explicit RK or discrete scheme, no checkpoints, observations or time input, children of these types)"

#if defined(PETNN_HAVE_CUDA)
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Dense(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Dense(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Flatten(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Flatten(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_ReLU(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_ReLU(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_LeakyReLU(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_LeakyReLU(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Tanh(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Tanh(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Sigmoid(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Sigmoid(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_GELU(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_GELU(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Dropout(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Dropout(NNLayer, PetscInt, const void *, const void *, const void *, void *);
/* spatial (DMDA) activations: on one rank only (NNDeviceSetUp() checks) */
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_ToSpatial(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_ToSpatial(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_SpatialFlatten(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_SpatialFlatten(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Pool(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Pool(NNLayer, PetscInt, const void *, const void *, const void *, void *);
/* conv2d/3d: cuDNN or GEMMs (-<layer>device_algorithm); conv_transpose2d/3d: GEMMs */
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Conv(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Conv(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_ConvTranspose(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_ConvTranspose(NNLayer, PetscInt, const void *, const void *, const void *, void *);
#endif
