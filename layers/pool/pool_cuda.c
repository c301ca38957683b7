/* Device passes of max and average pooling (-nn_device cuda): the kernels of layers/pool/pool_kernels.cu on every batch
   slot, as the CPU passes do. On one rank they index the whole grids (no halo: the padding taps are skipped); with the
   spatial activations split over ranks, the rank's owned outputs (the output DMDA) from the ghosted input that the
   halo exchange staged through page-locked host memory (src/layer/interface/spatialhalo_cuda.c), and the ghosted
   input gradient summed back over the ranks' halos, as the CPU passes do with DMGlobalToLocal and DMLocalToGlobal. */
#include "pool.h"
#include <petnn/private/cudaimpl.h>
#include <petnn/private/spatialhalodevice.h>

static PetscErrorCode NNPoolDeviceGeom(NNLayer l, NNCUDAPoolGeom *g)
{
  NNLayer_Pool *d  = (NNLayer_Pool *)l->data;
  PetscInt      nd = d->nd;

  PetscFunctionBegin;
  g->max = (int)d->max;
  g->D   = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
  for (PetscInt a = 0; a < 3; a++) {
    g->N[a]  = (int)d->w.N[a];
    g->No[a] = a < nd ? (int)l->outshape.dim[nd - a] : 1;
    g->k[a]  = (int)d->w.k[a];
    g->s[a]  = (int)d->w.s[a];
    g->p[a]  = (int)d->w.p[a];
  }
  PetscCall(NNSpatialHaloDeviceCorners(&d->h, nd, g->N, g->No, g->os, g->No, g->gs, g->gm));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_Pool(NNLayer l, PetscInt n PETSC_UNUSED, const void *x, void *y)
{
  NNLayer_Pool  *d = (NNLayer_Pool *)l->data;
  NNCUDAPoolGeom g;
  cudaStream_t   s;
  const void    *xg;

  PetscFunctionBegin;
  PetscCall(NNPoolDeviceGeom(l, &g));
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNSpatialHaloDeviceGetInput(&d->h, l->dev.prec, x, &xg));
  NNCallCUDA(NNCUDAPoolForward(l->dev.prec == NN_PRECISION_SINGLE, &g, xg, y, s));
  PetscCall(PetscLogFlops((PetscLogDouble)g.No[0] * g.No[1] * g.No[2] * g.D * g.k[0] * g.k[1] * g.k[2]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Pool(NNLayer l, PetscInt n PETSC_UNUSED, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_Pool  *d = (NNLayer_Pool *)l->data;
  NNCUDAPoolGeom g;
  cudaStream_t   s;
  const void    *xg = x;
  void          *dxg;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNPoolDeviceGeom(l, &g));
  PetscCall(NNCUDAGetStream(&s));
  if (d->max) PetscCall(NNSpatialHaloDeviceGetInput(&d->h, l->dev.prec, x, &xg)); /* the argmax is found in x again */
  PetscCall(NNSpatialHaloDeviceGetInputGradient(&d->h, l->dev.prec, dx, &dxg));
  NNCallCUDA(NNCUDAPoolBackward(l->dev.prec == NN_PRECISION_SINGLE, &g, xg, dy, dxg, s));
  PetscCall(NNSpatialHaloDeviceRestoreInputGradient(&d->h, l->dev.prec, dx));
  PetscFunctionReturn(0);
}
