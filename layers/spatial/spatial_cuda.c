/* Device passes of to_spatial and spatial_flatten (-nn_device cuda): the permutations of NNCUDASpatialPermute()
   (layers/spatial/spatial_kernels.cu) between the sequential [n][C][H][W] and the DMDA layout [y][x][slot][c]. With the
   spatial activations split over ranks they permute the rank's box only (NNCUDASpatialPermuteBox()), and the CPU
   passes' sums over the ranks (to_spatial's input gradient, spatial_flatten's output: each entry's one owner added to
   zeros, so exact in either precision) run on a page-locked host copy (NNDeviceAllreduceSum()). */
#include <petnn/private/cudaimpl.h>
#include <petnn/private/spatialhalodevice.h>

/* pixels of a sample and channels */
static void NNSpatialSizes(NNLayer l, size_t *P, size_t *C)
{
  *C = (size_t)l->inshape.dim[0];
  *P = (size_t)NNShapeSize(&l->inshape) / *C;
}

/* the spatial side's DMDA (to_spatial's output, spatial_flatten's input) when it is split over ranks, else NULL */
static PetscErrorCode NNSpatialSplitDA(NNLayer l, PetscBool tospatiallayer, DM *da)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  *da = NULL;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)l), &size));
  if (size == 1) PetscFunctionReturn(0);
  if (tospatiallayer) PetscCall(NNToSpatialGetDA(l, da));
  else PetscCall(NNSpatialGetInputDA(l, da));
  if (*da) {
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)*da), &size));
    if (size == 1) *da = NULL;
  }
  PetscFunctionReturn(0);
}

/* seq <-> sp; split: sp is the rank's box, and seq from sp is zero outside it (the caller sums over the ranks) */
static PetscErrorCode NNSpatialPermuteDevice(NNLayer l, PetscInt n, PetscBool tospatiallayer, PetscBool tospatial, void *seq, void *sp)
{
  cudaStream_t s;
  size_t       P, C;
  DM           da;

  PetscFunctionBegin;
  NNSpatialSizes(l, &P, &C);
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNSpatialSplitDA(l, tospatiallayer, &da));
  if (!da) {
    NNCallCUDA(NNCUDASpatialPermute(l->dev.prec == NN_PRECISION_SINGLE, tospatial, P, (size_t)l->nbatch, (size_t)n, C, seq, sp, s));
    PetscFunctionReturn(0);
  }
  {
    NNCUDASpatialBox b;
    PetscInt         xs[3], xm[3], M[3], dim;
    size_t           es = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
    PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetCorners(da, &xs[0], &xs[1], &xs[2], &xm[0], &xm[1], &xm[2]));
    for (int a = 0; a < 3; a++) {
      b.N[a]  = (size_t)(a < dim ? M[a] : 1);
      b.bs[a] = (size_t)(a < dim ? xs[a] : 0);
      b.bm[a] = (size_t)(a < dim ? xm[a] : 1);
    }
    if (!tospatial) NNCallCUDA(cudaMemsetAsync(seq, 0, (size_t)n * C * P * es, s));
    NNCallCUDA(NNCUDASpatialPermuteBox(l->dev.prec == NN_PRECISION_SINGLE, tospatial, &b, (size_t)l->nbatch, (size_t)n, C, seq, sp, s));
    if (!tospatial) PetscCall(NNDeviceAllreduceSum(PetscObjectComm((PetscObject)l), l->dev.prec, seq, (size_t)n * C * P));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_ToSpatial(NNLayer l, PetscInt n, const void *x, void *y)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialPermuteDevice(l, n, PETSC_TRUE, PETSC_TRUE, (void *)x, y));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_ToSpatial(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  PetscFunctionBegin;
  if (dx) PetscCall(NNSpatialPermuteDevice(l, n, PETSC_TRUE, PETSC_FALSE, dx, (void *)dy));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_SpatialFlatten(NNLayer l, PetscInt n, const void *x, void *y)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialPermuteDevice(l, n, PETSC_FALSE, PETSC_FALSE, y, (void *)x));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_SpatialFlatten(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  PetscFunctionBegin;
  if (dx) PetscCall(NNSpatialPermuteDevice(l, n, PETSC_FALSE, PETSC_TRUE, (void *)dy, dx)); /* slots s >= n get zero gradients */
  PetscFunctionReturn(0);
}
