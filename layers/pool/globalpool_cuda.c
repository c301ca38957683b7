/* Device passes of global average pooling (-nn_device cuda): the kernels of globalpool_kernels.cu. On spatial
   activations split over ranks the forward kernel writes the rank's sums, which go down, are added over the layer's
   ranks in double as the CPU pass adds them, divided by the grid's pixels and go up (D = nb*C values); the backward
   pass needs no communication. */
#include <petnn/private/cudaimpl.h>

/* the rank's pixels, the grid's pixels and the entries per pixel of the layer's input, and whether it is split */
static PetscErrorCode NNGlobalAvgPoolDeviceSizes(NNLayer l, size_t *P, size_t *npix, size_t *D, PetscBool *split)
{
  DM          da;
  PetscInt    m[3];
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &da));
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &m[0], &m[1], &m[2]));
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)da), &size));
  *npix  = (size_t)(NNShapeSize(&l->inshape) / l->inshape.dim[0]);
  *P     = (size_t)m[0] * (size_t)m[1] * (size_t)(l->inshape.ndim == 3 ? 1 : m[2]);
  *D     = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
  *split = (PetscBool)(size > 1);
  PetscFunctionReturn(0);
}

/* the rank's sums y [D] (the pass's precision) added over the layer's ranks and divided by npix, on the host */
static PetscErrorCode NNGlobalAvgPoolDeviceReduce(NNLayer l, size_t npix, size_t D, size_t nC, void *y, cudaStream_t s)
{
  PetscBool   single = (PetscBool)(l->dev.prec == NN_PRECISION_SINGLE);
  size_t      es     = single ? sizeof(float) : sizeof(double);
  PetscScalar *h;
  float      *hf = NULL;
  PetscMPIInt cnt;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(D, &h));
  if (single) PetscCall(PetscMalloc1(D, &hf));
  NNCallCUDA(cudaMemcpyAsync(single ? (void *)hf : (void *)h, y, D * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  if (single)
    for (size_t j = 0; j < D; j++) h[j] = hf[j];
  PetscCall(PetscMPIIntCast((PetscInt)nC, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, h, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (size_t j = 0; j < nC; j++) h[j] /= (PetscScalar)npix;
  if (single)
    for (size_t j = 0; j < D; j++) hf[j] = (float)h[j];
  NNCallCUDA(cudaMemcpyAsync(y, single ? (void *)hf : (void *)h, D * es, cudaMemcpyHostToDevice, s)); /* pageable: returns once staged */
  PetscCall(PetscFree(hf));
  PetscCall(PetscFree(h));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_GlobalAvgPool(NNLayer l, PetscInt n, const void *x, void *y)
{
  size_t       P, npix, D, nC = (size_t)n * (size_t)l->inshape.dim[0];
  PetscBool    split;
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNGlobalAvgPoolDeviceSizes(l, &P, &npix, &D, &split));
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAGlobalAvgPool(l->dev.prec == NN_PRECISION_SINGLE, 1, P, split ? 1 : npix, D, nC, x, y, s));
  if (split) PetscCall(NNGlobalAvgPoolDeviceReduce(l, npix, D, nC, y, s));
  PetscCall(PetscLogFlops((PetscLogDouble)P * n * l->inshape.dim[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_GlobalAvgPool(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  size_t       P, npix, D;
  PetscBool    split;
  cudaStream_t s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNGlobalAvgPoolDeviceSizes(l, &P, &npix, &D, &split));
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAGlobalAvgPool(l->dev.prec == NN_PRECISION_SINGLE, 0, P, npix, D, (size_t)n * (size_t)l->inshape.dim[0], dy, dx, s));
  PetscFunctionReturn(0);
}
