/*
   Sharded layers on the device (-<layer>_partition shard with -nn_device cuda): the device parameter copy holds the
   rank's pieces, as the host's does (src/layer/interface/layershard.c), in the device's precision. Around each device
   pass of the layer
     begin  the pieces are downloaded, all-gathered on the host (MPI need not be CUDA-aware) and the whole parameters
            uploaded into a device array the layer's pointers are moved to; for backward a zeroed whole gradient too;
     end    (backward) the rank's piece of the whole gradient is added into its piece of the device gradient by a
            device kernel per tensor (no host round trip: the activations are replicated on the layer's ranks, so the
            whole gradient is the same on all of them).
   The whole arrays are two device scratch arrays shared by all sharded layers (one layer is whole at a time, as on
   the CPU, where they are freed after each pass), grown to the largest layer and freed at PetscFinalize(): cudaMalloc
   and cudaFree for every pass would synchronize the device.
   NNLayerForwardDevice() and NNLayerBackwardDevice() run a layer's device pass with this around it when it is sharded.
*/
#include <petnn/private/cudaimpl.h>
#include <petnn/private/partitiondevice.h>

static void  *NNShardScratch[2]      = {NULL, NULL}; /* the whole parameters, the whole gradient */
static size_t NNShardScratchBytes[2] = {0, 0};

static PetscErrorCode NNShardScratchFree(void)
{
  PetscFunctionBegin;
  for (int i = 0; i < 2; i++) {
    PetscCall(NNCUDAFree(&NNShardScratch[i]));
    NNShardScratchBytes[i] = 0;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNShardScratchGet(int i, size_t bytes, void **p)
{
  PetscFunctionBegin;
  if (NNShardScratchBytes[i] < bytes) {
    if (!NNShardScratch[0] && !NNShardScratch[1]) PetscCall(PetscRegisterFinalize(NNShardScratchFree));
    PetscCall(NNCUDAFree(&NNShardScratch[i]));
    PetscCall(NNCUDAMalloc(bytes, &NNShardScratch[i]));
    NNShardScratchBytes[i] = bytes;
  }
  *p = NNShardScratch[i];
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerShardBeginDevice(NNLayer l, PetscBool backward)
{
  NNPrecision  p  = l->dev.prec;
  size_t       es = p == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  size_t       np = (size_t)l->part.npieces, gp = (size_t)l->part.gnparam;
  char        *piece, *whole;
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNParallelRegisterEvents());
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(PetscMalloc2(PetscMax(np, 1) * es, &piece, PetscMax(gp, 1) * es, &whole));
  if (np) NNCallCUDA(cudaMemcpyAsync(piece, l->dev.theta, np * es, cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  PetscCall(NNLayerShardGather(l, piece, whole, p == NN_PRECISION_SINGLE ? MPI_FLOAT : MPI_DOUBLE));
  PetscCall(NNShardScratchGet(0, PetscMax(gp, 1) * es, &l->part.devfull));
  if (gp) NNCallCUDA(cudaMemcpyAsync(l->part.devfull, whole, gp * es, cudaMemcpyHostToDevice, s));
  NNCallCUDA(cudaStreamSynchronize(s)); /* the host copies are freed next */
  PetscCall(PetscFree2(piece, whole));
  l->part.devtheta0 = l->dev.theta;
  l->dev.theta      = l->part.devfull;
  if (backward) {
    PetscCall(NNShardScratchGet(1, PetscMax(gp, 1) * es, &l->part.devdfull));
    if (gp) NNCallCUDA(cudaMemsetAsync(l->part.devdfull, 0, gp * es, s));
    l->part.devdtheta0 = l->dev.dtheta;
    l->dev.dtheta      = l->part.devdfull;
  }
  NNLayerShardSwap(l, PETSC_TRUE);
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerShardEndDevice(NNLayer l, PetscBool backward)
{
  int          single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t       es     = single ? sizeof(float) : sizeof(double);
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  NNLayerShardSwap(l, PETSC_FALSE);
  l->dev.theta = l->part.devtheta0;
  if (backward) {
    l->dev.dtheta = l->part.devdtheta0;
    for (PetscInt k = 0; k < l->ntensors; k++) {
      const NNTensor *t   = &l->part.pieces[k];
      const char     *src = (const char *)l->part.devdfull + (size_t)(t->goffset + (t->split ? t->start * NNTensorPost(t) : 0)) * es;
      if (t->kind != NN_TENSOR_PARAM || !t->size) continue;
      NNCallCUDA(NNCUDAAxpy(single, (size_t)t->size, 1.0, src, (char *)l->dev.dtheta + (size_t)t->offset * es, s));
    }
    l->part.devdfull = NULL;
  }
  l->part.devfull = NULL; /* the scratch stays for the next sharded layer */
  PetscFunctionReturn(0);
}

/*
   NNLayerForwardDevice - the layer's device forward pass (ops forwarddevice) on n samples, its whole parameters
   gathered around it when it is sharded; collective on the layer's partition communicator then
*/
PetscErrorCode NNLayerForwardDevice(NNLayer l, PetscInt n, const void *x, void *y)
{
  PetscFunctionBegin;
  if (l->part.shard) PetscCall(NNLayerShardBeginDevice(l, PETSC_FALSE));
  PetscUseTypeMethod(l, forwarddevice, n, x, y);
  if (l->part.shard) PetscCall(NNLayerShardEndDevice(l, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/*
   NNLayerBackwardDevice - the layer's device backward pass (ops backwarddevice); a sharded layer's parameter gradient
   goes to a whole array whose piece is added into the rank's
*/
PetscErrorCode NNLayerBackwardDevice(NNLayer l, PetscInt n, const void *x, const void *y, const void *dy, void *dx)
{
  PetscFunctionBegin;
  if (l->part.shard) PetscCall(NNLayerShardBeginDevice(l, PETSC_TRUE));
  PetscUseTypeMethod(l, backwarddevice, n, x, y, dy, dx);
  if (l->part.shard) PetscCall(NNLayerShardEndDevice(l, PETSC_TRUE));
  PetscFunctionReturn(0);
}
