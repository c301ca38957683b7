/* Device passes of max and average pooling (-nn_device cuda) on one rank: the kernels of layers/pool/pool_kernels.cu on
   every batch slot, as the CPU passes do (no halo: the padding taps are skipped, the DMDA has one rank). */
#include "pool.h"
#include <petnn/private/cudaimpl.h>

static void NNPoolDeviceGeom(NNLayer l, NNCUDAPoolGeom *g)
{
  NNLayer_Pool *d  = (NNLayer_Pool *)l->data;
  PetscInt      nd = d->nd;

  g->max = (int)d->max;
  g->D   = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
  for (PetscInt a = 0; a < 3; a++) {
    g->N[a]  = (int)d->w.N[a];
    g->No[a] = a < nd ? (int)l->outshape.dim[nd - a] : 1;
    g->k[a]  = (int)d->w.k[a];
    g->s[a]  = (int)d->w.s[a];
    g->p[a]  = (int)d->w.p[a];
  }
}

PetscErrorCode NNLayerForwardDevice_Pool(NNLayer l, PetscInt n PETSC_UNUSED, const void *x, void *y)
{
  NNCUDAPoolGeom g;
  cudaStream_t   s;

  PetscFunctionBegin;
  NNPoolDeviceGeom(l, &g);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAPoolForward(l->dev.prec == NN_PRECISION_SINGLE, &g, x, y, s));
  PetscCall(PetscLogFlops((PetscLogDouble)g.No[0] * g.No[1] * g.No[2] * g.D * g.k[0] * g.k[1] * g.k[2]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Pool(NNLayer l, PetscInt n PETSC_UNUSED, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNCUDAPoolGeom g;
  cudaStream_t   s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  NNPoolDeviceGeom(l, &g);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAPoolBackward(l->dev.prec == NN_PRECISION_SINGLE, &g, x, dy, dx, s));
  PetscFunctionReturn(0);
}
