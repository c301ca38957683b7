/*
   Device passes of nearest-neighbour upsampling (-nn_device cuda) on one rank: the kernels of upsample_kernels.cu on
   every batch slot, as the CPU passes do. The linear modes have no device passes (NNLayerSetUp_Upsample() leaves
   them unset, so NNSetUp() refuses such a layer on the device).
*/
#include "upsample.h"
#include <petnn/private/cudaimpl.h>

static void NNUpsampleDeviceGeom(NNLayer l, NNCUDAUpsampleGeom *g)
{
  NNLayer_Upsample *d  = (NNLayer_Upsample *)l->data;
  PetscInt          nd = l->inshape.ndim - 1; /* (C,H,W) or (C,D,H,W); the DMDA's x is W */

  for (PetscInt a = 0; a < 3; a++) {
    g->im[a] = a < nd ? (int)l->inshape.dim[nd - a] : 1;
    g->s[a]  = a < nd ? (int)d->scale : 1;
  }
  g->D = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
}

PetscErrorCode NNLayerForwardDevice_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, const void *x, void *y)
{
  NNCUDAUpsampleGeom g;
  cudaStream_t       s;

  PetscFunctionBegin;
  NNUpsampleDeviceGeom(l, &g);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAUpsampleNearest(l->dev.prec == NN_PRECISION_SINGLE, 1, &g, x, y, s));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNCUDAUpsampleGeom g;
  cudaStream_t       s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  NNUpsampleDeviceGeom(l, &g);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAUpsampleNearest(l->dev.prec == NN_PRECISION_SINGLE, 0, &g, dy, dx, s));
  PetscCall(PetscLogFlops((PetscLogDouble)g.im[0] * g.im[1] * g.im[2] * g.D * g.s[0] * g.s[1] * g.s[2]));
  PetscFunctionReturn(0);
}
