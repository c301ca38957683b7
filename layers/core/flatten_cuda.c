/* Device passes of flatten (-nn_device cuda): device-to-device copies on the network's stream, as the CPU passes copy. */
#include <petnn/private/cudaimpl.h>

static size_t NNFlattenBytes(NNLayer l, PetscInt n)
{
  return (size_t)n * (size_t)l->localsize * (l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double));
}

PetscErrorCode NNLayerForwardDevice_Flatten(NNLayer l, PetscInt n, const void *x, void *y)
{
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(cudaMemcpyAsync(y, x, NNFlattenBytes(l, n), cudaMemcpyDeviceToDevice, s));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Flatten(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  cudaStream_t s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(cudaMemcpyAsync(dx, dy, NNFlattenBytes(l, n), cudaMemcpyDeviceToDevice, s));
  PetscFunctionReturn(0);
}
