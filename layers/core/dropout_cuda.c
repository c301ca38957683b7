/* Device passes of dropout (-nn_device cuda): the mask is drawn on the host from the network's generator exactly as the
   CPU pass draws it (layers/core/dropout_passes.h: one draw per entry, in memory order), so the CPU and the GPU drop the
   same entries and a run is reproducible from its seed on either device; it is uploaded and applied by a kernel.
   The draws go into a page-locked stage, so the upload is asynchronous: the host draws while the GPU runs the layers
   before (a copy from pageable memory would wait for them). An event after the upload guards the stage: the next
   pass waits for it only if that copy is still pending (it is done by then in training, whose loss waits once a step). */
#include "dropout.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNDropoutResetDevice(NNLayer l)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;

  PetscFunctionBegin;
  PetscCall(NNCUDAFree(&d->dmask));
  PetscCall(NNCUDAFreeHost(&d->hmask));
  if (d->upload) NNCallCUDA(cudaEventDestroy((cudaEvent_t)d->upload));
  d->upload = NULL;
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
    cudaEvent_t ev;

    PetscCall(NNCUDAMalloc(cap * sizeof(double), &d->dmask)); /* room for either precision: NNSetPrecision() may switch */
    PetscCall(NNCUDAMallocHost(cap * sizeof(double), "dropout mask", &d->hmask));
    NNCallCUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    d->upload = ev;
  } else {
    cudaError_t done = cudaEventQuery((cudaEvent_t)d->upload); /* the last upload from the stage */

    if (done == cudaErrorNotReady) NNCallCUDA(cudaEventSynchronize((cudaEvent_t)d->upload));
    else NNCallCUDA(done);
  }
  NNRandomMask(l->rng, N, d->rate, scale, single, d->hmask); /* the CPU pass's draws and mask, in the pass's precision */
  NNCallCUDA(cudaMemcpyAsync(d->dmask, d->hmask, N * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(cudaEventRecord((cudaEvent_t)d->upload, s));
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
