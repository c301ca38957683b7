/* Device passes of the layer types that have them (-nn_device cuda; ops forwarddevice/backwarddevice in layerimpl.h).
   They are defined in layers/<family>/<type>_cuda.c, which CMake builds only with PETNN_WITH_CUDA; a type's create
   routine sets them under #if defined(PETNN_HAVE_CUDA). This header needs no CUDA headers. */
#pragma once
#include <petnn/private/layerimpl.h>

/* the types with device passes, for error messages (keep in step with the create routines that set them) */
#define NN_DEVICE_LAYER_TYPES \
  "dense, flatten, relu, leaky_relu, tanh, sigmoid, gelu, dropout, to_spatial, spatial_flatten, conv2d/3d, conv_transpose2d/3d, maxpool2d/3d, avgpool2d/3d, batchnorm1d/2d/3d, group_norm, instance_norm, layer_norm, global_avgpool, upsample, " \
  "spectral_conv2d/3d, add, concat, split (graph networks), residual (children of these types), ode (explicit RK or discrete scheme, with checkpoints, observation times or time input, children of these types)"

/* the types whose device passes take spatial activations split over ranks (l->dev.split) */
#define NN_DEVICE_SPLIT_LAYER_TYPES \
  "to_spatial, spatial_flatten, relu, leaky_relu, tanh, sigmoid, gelu, dropout, conv2d/3d, conv_transpose2d/3d, maxpool2d/3d, avgpool2d/3d, batchnorm2d/3d, group_norm, instance_norm, layer_norm, global_avgpool, upsample, spectral_conv2d/3d, add, " \
  "concat, " \
  "split, residual, ode (of these types)"

/* the samples a layer's device passes get in a pass over n samples: a pointwise layer on a spatial (DMDA) activation
   runs on every batch slot (as NNLayerArraySamples() does on the CPU), every other layer on the n of the pass */
static inline PetscInt NNLayerDeviceSamples(NNLayer l, PetscBool spatial, PetscInt n)
{
  return (spatial && !l->ops->forwardvec) ? l->nbatch : n;
}

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
/* spatial (DMDA) activations, also split over ranks (the layers whose l->dev.split is set; NNDeviceSetUp() checks) */
PETSC_INTERN PetscErrorCode NNToSpatialGetDA(NNLayer, DM *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_ToSpatial(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_ToSpatial(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_SpatialFlatten(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_SpatialFlatten(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Pool(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Pool(NNLayer, PetscInt, const void *, const void *, const void *, void *);
/* the graph layers (layers/graph/graph_cuda.c) */
PETSC_INTERN PetscErrorCode NNLayerForwardMultiDevice_Add(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, void *const[]);
PETSC_INTERN PetscErrorCode NNLayerBackwardMultiDevice_Add(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, const void *const[], const void *const[], void *const[]);
PETSC_INTERN PetscErrorCode NNLayerForwardMultiDevice_Concat(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, void *const[]);
PETSC_INTERN PetscErrorCode NNLayerBackwardMultiDevice_Concat(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, const void *const[], const void *const[], void *const[]);
PETSC_INTERN PetscErrorCode NNLayerForwardMultiDevice_Split(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, void *const[]);
PETSC_INTERN PetscErrorCode NNLayerBackwardMultiDevice_Split(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, const void *const[], const void *const[], void *const[]);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Residual(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Residual(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_GlobalAvgPool(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_GlobalAvgPool(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Upsample(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Upsample(NNLayer, PetscInt, const void *, const void *, const void *, void *);
/* the normalization layers: batchnorm1d/2d/3d; group_norm, instance_norm, layer_norm (layers/norm/norm_cuda.c) */
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_BatchNorm(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_BatchNorm(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Norm(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Norm(NNLayer, PetscInt, const void *, const void *, const void *, void *);
/* conv2d/3d: cuDNN or GEMMs (-<layer>device_algorithm); conv_transpose2d/3d: GEMMs */
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_Conv(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_Conv(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_ConvTranspose(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_ConvTranspose(NNLayer, PetscInt, const void *, const void *, const void *, void *);
#endif
