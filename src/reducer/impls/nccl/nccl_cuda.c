/*
   The "nccl" reducer (-nn_allreduce nccl): data-parallel training with the parameters, the gradient and the optimizer
   step resident on the GPUs (-nn_device cuda, NNDeviceSetResident()). The buckets of the generic part are
   all-reduced in place on the device gradient with ncclAllReduce() as the backward pass finishes their first layer,
   enqueued on the package's stream behind the layers' kernels, so the optimizer's device step that follows reads the
   sum without the host waiting. Every rank then takes the same step on the same gradient, as with the mpi type. The
   gradient is summed in the precision of the passes (float in single precision, as PyTorch DDP sums float32). One rank
   per data group, one GPU per rank; the optimizer step is not sharded.

   Built with PETNN_HAVE_NCCL (CMake found NCCL beside CUDA; in the CUDA emulation the all-reduce is MPI's).
*/
#include <petnn/private/reducerimpl.h>
#if defined(PETNN_HAVE_NCCL)
  #include <petnn/private/cudaimpl.h>
  #include <nccl.h>

  #define NNCallNCCL(...) \
    do { \
      ncclResult_t nn_nerr_ = (__VA_ARGS__); \
      PetscCheck(nn_nerr_ == ncclSuccess, PETSC_COMM_SELF, PETSC_ERR_LIB, "NCCL error %d: %s (in %s)", (int)nn_nerr_, ncclGetErrorString(nn_nerr_), #__VA_ARGS__); \
    } while (0)

typedef struct {
  ncclComm_t comm;
  void      *dgrad; /* the device gradient of the step in progress (set by the first layer done); NULL between steps */
} NNReducer_NCCL;

static PetscErrorCode NNReducerSetUp_NCCL(NNReducer r)
{
  NNReducer_NCCL *n = (NNReducer_NCCL *)r->data;
  NNParallel      p = r->net->par;
  ncclUniqueId    id;
  PetscMPIInt     rank, size;

  PetscFunctionBegin;
  PetscCheck(r->net->dev.type == NN_DEVICE_CUDA, PetscObjectComm((PetscObject)r), PETSC_ERR_ARG_INCOMP, "-nn_allreduce nccl sums the gradient on the GPUs: it needs -nn_device cuda (or use -nn_allreduce mpi)");
  PetscCheck(!r->sharded, PetscObjectComm((PetscObject)r), PETSC_ERR_ARG_INCOMP, "-nn_allreduce nccl takes the whole optimizer step on every GPU: use -nn_shard_optimizer false (or -nn_allreduce mpi)");
  n->dgrad = NULL;
  if (n->comm) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(p->dcomm, &rank));
  PetscCallMPI(MPI_Comm_size(p->dcomm, &size));
  if (!rank) NNCallNCCL(ncclGetUniqueId(&id));
  PetscCallMPI(MPI_Bcast(&id, (PetscMPIInt)sizeof(id), MPI_BYTE, 0, p->dcomm));
  #if defined(PETNN_CUDA_EMULATION)
  NNEmuNCCLUseComm(p->dcomm); /* the emulation's all-reduce is MPI's on the data communicator */
  #endif
  NNCallNCCL(ncclCommInitRank(&n->comm, size, id, rank));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerLaunch_NCCL(NNReducer r, PetscInt b)
{
  NNReducer_NCCL *n      = (NNReducer_NCCL *)r->data;
  NNBucket       *k      = &r->buckets[b];
  const PetscBool single = (PetscBool)(r->net->prec.type == NN_PRECISION_SINGLE);
  void           *g      = (char *)n->dgrad + (size_t)k->lo * (single ? sizeof(float) : sizeof(double));
  cudaStream_t    s;
  PetscLogDouble  t0, t1;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(PetscTime(&t0));
  NNCallNCCL(ncclAllReduce(g, g, (size_t)(k->hi - k->lo), single ? ncclFloat32 : ncclFloat64, ncclSum, n->comm, s));
  PetscCall(PetscTime(&t1));
  r->t_exposed += t1 - t0;
  PetscFunctionReturn(0);
}

/* after layer i's backward pass: enqueue the buckets it completes */
static PetscErrorCode NNReducerLayerDoneDevice_NCCL(NNReducer r, PetscInt i, void *dgrad)
{
  NNReducer_NCCL *n = (NNReducer_NCCL *)r->data;

  PetscFunctionBegin;
  n->dgrad = dgrad;
  PetscCall(PetscLogEventBegin(NN_AllreduceLaunch, r->net, 0, 0, 0));
  while (r->nlaunched < r->nbuckets && r->buckets[r->nlaunched].trigger >= i) {
    PetscCall(NNReducerLaunch_NCCL(r, r->nlaunched));
    r->nlaunched++;
  }
  PetscCall(PetscLogEventEnd(NN_AllreduceLaunch, r->net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* end of the backward pass: enqueue what is left; a step in which this group had no samples sums zeros. Nothing is
   waited for: the optimizer's device step follows on the same stream. */
static PetscErrorCode NNReducerBackwardDone_NCCL(NNReducer r, PetscScalar *g PETSC_UNUSED)
{
  NNReducer_NCCL *n = (NNReducer_NCCL *)r->data;

  PetscFunctionBegin;
  if (!n->dgrad) {
    NNDeviceParameters p;
    cudaStream_t       s;
    PetscCall(NNDeviceGetParameters(r->net, &p));
    PetscCall(NNCUDAGetStream(&s));
    n->dgrad = (void *)p.grad;
    NNCallCUDA(cudaMemsetAsync(n->dgrad, 0, (size_t)p.n * (p.single ? sizeof(float) : sizeof(double)), s));
  }
  for (; r->nlaunched < r->nbuckets; r->nlaunched++) PetscCall(NNReducerLaunch_NCCL(r, r->nlaunched));
  n->dgrad = NULL;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerReset_NCCL(NNReducer r)
{
  NNReducer_NCCL *n = (NNReducer_NCCL *)r->data;

  PetscFunctionBegin;
  if (n->comm) NNCallNCCL(ncclCommDestroy(n->comm));
  n->comm  = NULL;
  n->dgrad = NULL;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerDestroy_NCCL(NNReducer r)
{
  PetscFunctionBegin;
  PetscCall(NNReducerReset_NCCL(r));
  PetscCall(PetscFree(r->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerView_NCCL(NNReducer r PETSC_UNUSED, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "NCCL all-reduce of the device gradient, in the precision of the passes; optimizer step on every GPU\n"));
  PetscFunctionReturn(0);
}

PetscErrorCode NNReducerCreate_NCCL(NNReducer r)
{
  NNReducer_NCCL *n;

  PetscFunctionBegin;
  PetscCall(PetscNew(&n));
  r->data                 = n;
  r->ops->setup           = NNReducerSetUp_NCCL;
  r->ops->layerdonedevice = NNReducerLayerDoneDevice_NCCL;
  r->ops->backwarddone    = NNReducerBackwardDone_NCCL;
  r->ops->reset           = NNReducerReset_NCCL;
  r->ops->view            = NNReducerView_NCCL;
  r->ops->destroy         = NNReducerDestroy_NCCL;
  PetscFunctionReturn(0);
}
#endif
