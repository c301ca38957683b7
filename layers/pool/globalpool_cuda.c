/* Device passes of global average pooling (-nn_device cuda) on one rank: the kernels of globalpool_kernels.cu (no
   all-reduce: the DMDA has one rank on the device). */
#include <petnn/private/cudaimpl.h>

/* the pixels and the entries per pixel of the layer's input */
static void NNGlobalAvgPoolDeviceSizes(NNLayer l, size_t *P, size_t *D)
{
  *P = (size_t)(NNShapeSize(&l->inshape) / l->inshape.dim[0]);
  *D = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
}

PetscErrorCode NNLayerForwardDevice_GlobalAvgPool(NNLayer l, PetscInt n, const void *x, void *y)
{
  size_t       P, D;
  cudaStream_t s;

  PetscFunctionBegin;
  NNGlobalAvgPoolDeviceSizes(l, &P, &D);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAGlobalAvgPool(l->dev.prec == NN_PRECISION_SINGLE, 1, P, D, (size_t)n * (size_t)l->inshape.dim[0], x, y, s));
  PetscCall(PetscLogFlops((PetscLogDouble)P * n * l->inshape.dim[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_GlobalAvgPool(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  size_t       P, D;
  cudaStream_t s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  NNGlobalAvgPoolDeviceSizes(l, &P, &D);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAGlobalAvgPool(l->dev.prec == NN_PRECISION_SINGLE, 0, P, D, (size_t)n * (size_t)l->inshape.dim[0], dy, dx, s));
  PetscFunctionReturn(0);
}
