/* Device passes of to_spatial and spatial_flatten (-nn_device cuda) on one rank: the permutations of
   NNCUDASpatialPermute() (layers/spatial/spatial_kernels.cu) between the sequential [n][C][H][W] and the DMDA layout
   [y][x][slot][c]. The CPU passes' sums over the ranks are not needed: the device runs spatial activations only when
   their DMDA has one rank (NNDeviceSetUp() refuses others). */
#include <petnn/private/cudaimpl.h>

/* pixels of a sample and channels */
static void NNSpatialSizes(NNLayer l, size_t *P, size_t *C)
{
  *C = (size_t)l->inshape.dim[0];
  *P = (size_t)NNShapeSize(&l->inshape) / *C;
}

static PetscErrorCode NNSpatialPermuteDevice(NNLayer l, PetscInt n, PetscBool tospatial, void *seq, void *sp)
{
  cudaStream_t s;
  size_t       P, C;

  PetscFunctionBegin;
  NNSpatialSizes(l, &P, &C);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDASpatialPermute(l->dev.prec == NN_PRECISION_SINGLE, tospatial, P, (size_t)l->nbatch, (size_t)n, C, seq, sp, s));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_ToSpatial(NNLayer l, PetscInt n, const void *x, void *y)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialPermuteDevice(l, n, PETSC_TRUE, (void *)x, y));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_ToSpatial(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  PetscFunctionBegin;
  if (dx) PetscCall(NNSpatialPermuteDevice(l, n, PETSC_FALSE, dx, (void *)dy));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_SpatialFlatten(NNLayer l, PetscInt n, const void *x, void *y)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialPermuteDevice(l, n, PETSC_FALSE, y, (void *)x));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_SpatialFlatten(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  PetscFunctionBegin;
  if (dx) PetscCall(NNSpatialPermuteDevice(l, n, PETSC_TRUE, (void *)dy, dx)); /* slots s >= n get zero gradients */
  PetscFunctionReturn(0);
}
