/* Device passes of dropout (-nn_device cuda): the mask is drawn on the host from the network's generator exactly as the
   CPU pass draws it (layers/core/dropout_passes.h: one draw per entry, in memory order), so the CPU and the GPU drop the
   same entries and a run is reproducible from its seed on either device; it is uploaded and applied by a kernel. */
#include "dropout.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNDropoutResetDevice(NNLayer l)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;

  PetscFunctionBegin;
  PetscCall(NNCUDAFree(&d->dmask));
  PetscCall(PetscFree(d->fmask));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_Dropout(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Dropout *d      = (NNLayer_Dropout *)l->data;
  PetscInt         N      = n * l->localsize, cap = l->nbatch * l->localsize;
  PetscBool        single = (PetscBool)(l->dev.prec == NN_PRECISION_SINGLE);
  size_t           es     = single ? sizeof(float) : sizeof(double);
  const PetscReal  scale  = 1.0 / (1.0 - d->rate);
  cudaStream_t     s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  d->masked = (PetscBool)(l->training && d->rate > 0);
  if (!d->masked) {
    if (y != x) NNCallCUDA(cudaMemcpyAsync(y, x, N * es, cudaMemcpyDeviceToDevice, s));
    PetscFunctionReturn(0);
  }
  PetscCheck(l->rng, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Dropout layer %s has no random number generator: add it to a network", ((PetscObject)l)->name);
  if (!d->dmask) {
    PetscCall(NNCUDAMalloc(cap * sizeof(double), &d->dmask)); /* room for either precision */
    PetscCall(PetscMalloc1(cap, &d->fmask));
  }
  for (PetscInt i = 0; i < N; i++) d->mask[i] = NNRandomUniform(l->rng) >= d->rate ? scale : 0.0;
  /* pageable host memory: the copy returns once the source is staged, so the host arrays may change after it */
  if (single) {
    for (PetscInt i = 0; i < N; i++) d->fmask[i] = (float)d->mask[i];
    NNCallCUDA(cudaMemcpyAsync(d->dmask, d->fmask, N * es, cudaMemcpyHostToDevice, s));
  } else NNCallCUDA(cudaMemcpyAsync(d->dmask, d->mask, N * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(NNCUDAMultiply(single, (size_t)N, x, d->dmask, y, s));
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Dropout(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_Dropout *d      = (NNLayer_Dropout *)l->data;
  PetscInt         N      = n * l->localsize;
  PetscBool        single = (PetscBool)(l->dev.prec == NN_PRECISION_SINGLE);
  cudaStream_t     s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  if (!d->masked) {
    if (dx != dy) NNCallCUDA(cudaMemcpyAsync(dx, dy, N * (single ? sizeof(float) : sizeof(double)), cudaMemcpyDeviceToDevice, s));
    PetscFunctionReturn(0);
  }
  NNCallCUDA(NNCUDAMultiply(single, (size_t)N, dy, d->dmask, dx, s));
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}
