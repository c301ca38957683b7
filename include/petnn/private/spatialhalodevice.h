/* The device passes' side of the halo exchange of windowed spatial layers split over ranks (-nn_device cuda,
   src/layer/interface/spatialhalo_cuda.c): the boxes the kernels index, the ghosted arrays staged through page-locked
   host memory, and a sum over a communicator of a device array. Built with PETNN_HAVE_CUDA. */
#pragma once
#include <petnn/private/layerimpl.h>

/* whether the layer's spatial input is split over ranks */
PETSC_INTERN PetscErrorCode NNSpatialHaloDeviceSplit(NNSpatialHalo *, PetscBool *);
/* the owned output box (os, om) and the ghosted input box (gs, gm) when split, else the whole grids N, No */
PETSC_INTERN PetscErrorCode NNSpatialHaloDeviceCorners(NNSpatialHalo *, PetscInt, const int[3], const int[3], int[3], int[3], int[3], int[3]);
/* the ghosted input (the halo's device array, or x itself when no exchange is needed) */
PETSC_INTERN PetscErrorCode NNSpatialHaloDeviceGetInput(NNSpatialHalo *, NNPrecision, const void *, const void **);
/* where the backward pass writes the ghosted input gradient, then its sum over the halos into dx */
PETSC_INTERN PetscErrorCode NNSpatialHaloDeviceGetInputGradient(NNSpatialHalo *, NNPrecision, void *, void **);
PETSC_INTERN PetscErrorCode NNSpatialHaloDeviceRestoreInputGradient(NNSpatialHalo *, NNPrecision, void *);
/* d[0..n) (device, precision prec) summed over comm in place */
PETSC_INTERN PetscErrorCode NNDeviceAllreduceSum(MPI_Comm, NNPrecision, void *, size_t);
