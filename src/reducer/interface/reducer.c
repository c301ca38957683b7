/*
   The NNReducer class: how the data groups of a trainer sum their gradients and take the optimizer
   step during data-parallel training. The network's process grid owns one, created on first use
   (NNGetReducer()); NNTrain() gives it its type at the start of training (-nn_allreduce: mpi,
   shared, or auto: shm when the data groups share a node). Its options carry the network's prefix
   and are read when it is created (if the network's options were read already) and whenever
   NNSetFromOptions() runs on the network.
*/
#include <petnn/private/reducerimpl.h>

PetscClassId      NNREDUCER_CLASSID;
PetscFunctionList NNReducerList = NULL;
const char *const NNAllreduceTypes[] = {"auto", "mpi", "shared", "nccl", "NNAllreduceType", "NN_ALLREDUCE_", NULL};

static PetscErrorCode NNReducerFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&NNReducerList));
  PetscFunctionReturn(0);
}

/* the reducer types (registered on first use) */
static PetscErrorCode NNReducerRegisterAll(void)
{
  PetscFunctionBegin;
  if (NNReducerList) PetscFunctionReturn(0);
  PetscCall(PetscFunctionListAdd(&NNReducerList, NNREDUCERMPI, NNReducerCreate_MPI));
  PetscCall(PetscFunctionListAdd(&NNReducerList, NNREDUCERSHM, NNReducerCreate_Shm));
#if defined(PETNN_HAVE_NCCL)
  PetscCall(PetscFunctionListAdd(&NNReducerList, NNREDUCERNCCL, NNReducerCreate_NCCL));
#endif
  PetscCall(PetscRegisterFinalize(NNReducerFinalizePackage));
  PetscFunctionReturn(0);
}

/* frees what a type made (the type's own destroy) and the type's ops */
static PetscErrorCode NNReducerResetType(NNReducer r)
{
  PetscFunctionBegin;
  PetscTryTypeMethod(r, reset);
  PetscTryTypeMethod(r, destroy);
  PetscCall(PetscMemzero(r->ops, sizeof(struct _NNReducerOps)));
  r->data = NULL;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerDestroy(NNReducer *r)
{
  PetscFunctionBegin;
  if (!*r) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*r, NNREDUCER_CLASSID, 1);
  if (--((PetscObject)(*r))->refct > 0) {
    *r = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(NNReducerResetType(*r));
  PetscCall(PetscFree((*r)->buckets));
  PetscCall(PetscFree((*r)->req));
  PetscCall(PetscFree((*r)->draws));
  PetscCall(PetscFree2((*r)->pcount, (*r)->pdispl));
  PetscCall(PetscFree((*r)->rcount));
  PetscCall(PetscFree((*r)->gslice));
  PetscCall(PetscFree((*r)->fbuf));
  PetscCall(PetscHeaderDestroy(r));
  PetscFunctionReturn(0);
}

/*@C
   NNReducerSetType - sets how the data groups sum their gradients

   Collective

   Input Parameters:
+  r - the reducer (NNGetReducer())
-  type - "mpi" (bucketed MPI_Iallreduce, or MPI_Ireduce_scatter with a sharded optimizer, launched during
          the backward pass) or "shm" (the gradients in one MPI shared-memory window; all data groups on one node)

   Notes:
   NNTrain() sets the type at the start of training from -nn_allreduce (NNSetAllreduceType()).

   Level: developer

.seealso: `NNGetReducer()`, `NNSetAllreduceType()`
@*/
PetscErrorCode NNReducerSetType(NNReducer r, const char type[])
{
  PetscErrorCode (*create)(NNReducer);
  PetscBool same;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(r, NNREDUCER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)r, type, &same));
  if (same) PetscFunctionReturn(0);
  PetscCall(NNReducerRegisterAll());
  PetscCall(PetscFunctionListFind(NNReducerList, type, &create));
  PetscCheck(create, PetscObjectComm((PetscObject)r), PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown reducer type %s: valid types are mpi, shm and (with -nn_device cuda in a PetNN built with NCCL) nccl", type);
  PetscCall(NNReducerResetType(r));
  PetscCall(PetscObjectChangeTypeName((PetscObject)r, type));
  PetscCall((*create)(r));
  PetscFunctionReturn(0);
}

/* the reducer's options, read in an options block (the reducer's own or the network's) */
static PetscErrorCode NNReducerSetFromOptions_Private(NNReducer r, NNOptionItems PetscOptionsObject)
{
  PetscReal mb = r->bucket_mb;
  PetscBool sh = r->shard, flg;

  PetscFunctionBegin;
  PetscCall(PetscOptionsReal("-nn_bucket_size", "Gradient all-reduce bucket size in MB (0: one bucket per layer)", "NNSetBucketSize", mb, &mb, &flg));
  if (flg) PetscCall(NNSetBucketSize(r->net, mb));
  PetscCall(PetscOptionsEnum("-nn_allreduce", "Gradient all-reduce of the data groups: auto (shared when they share a node), mpi (bucketed MPI_Iallreduce), shared (MPI shared-memory window), nccl (NCCL on the GPUs, -nn_device cuda)", "NNSetAllreduceType", NNAllreduceTypes, (PetscEnum)r->artype, (PetscEnum *)&r->artype, NULL));
  PetscCall(PetscOptionsBool("-nn_shard_optimizer", "Data groups split the optimizer step (reduce-scatter, step on 1/D of the parameters, all-gather); default: with the shared-memory all-reduce", "NNSetOptimizerSharding", sh, &sh, &flg));
  if (flg) PetscCall(NNSetOptimizerSharding(r->net, sh));
  PetscCall(PetscOptionsBool("-nn_allreduce_single", "The mpi all-reduce sums the gradient buckets in float (half the bytes; rounds the gradient to float) instead of double; not with a sharded optimizer", "NNSetAllreduceType", r->fsum, &r->fsum, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerOptionsHandler(PetscObject obj PETSC_UNUSED, NNOptionItems PetscOptionsObject, void *ctx)
{
  PetscFunctionBegin;
  PetscCall(NNReducerSetFromOptions_Private((NNReducer)ctx, PetscOptionsObject));
  PetscFunctionReturn(0);
}

/*@C
   NNReducerView - prints the reducer: its type, buckets and whether the optimizer step is sharded

   Collective

   Level: developer

.seealso: `NNGetReducer()`, `NNView()`
@*/
PetscErrorCode NNReducerView(NNReducer r, PetscViewer viewer)
{
  PetscBool iascii;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(r, NNREDUCER_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)r), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "gradient all-reduce %s%s, buckets of %g MB", NNAllreduceTypes[r->artype], r->shmused ? " (shared memory in use)" : "", (double)r->bucket_mb));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  if (r->nbuckets) PetscCall(PetscViewerASCIIPrintf(viewer, " (%" PetscInt_FMT " in the last training)", r->nbuckets));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s\n", ((PetscObject)r)->type_name ? ", reducer type " : "", ((PetscObject)r)->type_name ? ((PetscObject)r)->type_name : ""));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  if (r->fsum) PetscCall(PetscViewerASCIIPrintf(viewer, "the mpi all-reduce sums in float (-nn_allreduce_single)\n"));
  if (r->shard_set || r->shmused) PetscCall(PetscViewerASCIIPrintf(viewer, "optimizer step %s\n", (r->shard_set ? r->shard : r->shmused) ? "sharded over the data groups" : "taken whole on every rank"));
  PetscTryTypeMethod(r, view, viewer);
  PetscFunctionReturn(0);
}

/*@
   NNGetReducer - gets the reducer of the network's data groups (creating it on first use)

   Collective the first time

   Output Parameter:
.  r - the reducer, owned by the network's process grid

   Level: developer

.seealso: `NNReducerSetType()`, `NNSetAllreduceType()`, `NNSetBucketSize()`, `NNSetOptimizerSharding()`
@*/
PetscErrorCode NNGetReducer(NN net, NNReducer *r)
{
  NNParallel p = NULL;
  NNReducer  red;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNParallelGet(net, &p));
  if (!p->reducer) {
    PetscCall(PetscHeaderCreate(red, NNREDUCER_CLASSID, "NNReducer", "Gradient reducer of data-parallel training", "NN", PetscObjectComm((PetscObject)net), NNReducerDestroy, NNReducerView));
    red->net       = net;
    red->bucket_mb = 25; /* PyTorch DDP's default */
    red->artype    = NN_ALLREDUCE_AUTO;
    p->reducer     = red;
    PetscCall(PetscObjectSetOptionsPrefix((PetscObject)red, ((PetscObject)net)->prefix));
    if (net->setfromoptionscalled) {
      PetscObjectOptionsBegin((PetscObject)red);
      PetscCall(NNReducerSetFromOptions_Private(red, PetscOptionsObject));
      PetscOptionsEnd();
    }
    PetscCall(PetscObjectAddOptionsHandler((PetscObject)net, NNReducerOptionsHandler, NULL, red));
  }
  *r = p->reducer;
  PetscFunctionReturn(0);
}

/*@
   NNSetBucketSize - sets the size of the gradient buckets all-reduced during the backward pass

   Collective

   Input Parameters:
+  net - the network
-  mb - bucket size in megabytes (10^6 bytes) of gradient; 0 gives one bucket per layer with parameters

   Options Database Key:
.  -nn_bucket_size <mb> - bucket size in MB (default 25, as PyTorch DDP)

   Notes:
   Buckets are contiguous slices of the gradient filled from the last layer backwards; a bucket
   closes when it holds at least mb megabytes, so one layer is never split. Small buckets start
   communicating earlier but pay more latency.

   Level: advanced

.seealso: `NNSetProcessGrid()`, `NNGetAllreduceTimes()`
@*/
PetscErrorCode NNSetBucketSize(NN net, PetscReal mb)
{
  NNReducer r = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(mb >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_bucket_size %g must be non-negative (MB; 0: one bucket per layer)", (double)mb);
  PetscCall(NNGetReducer(net, &r));
  r->bucket_mb = mb;
  PetscFunctionReturn(0);
}

/*@
   NNSetOptimizerSharding - whether the data groups split the optimizer step (ZeRO stage 1)

   Collective

   Input Parameters:
+  net - the network
-  flg - PETSC_TRUE: data group g of D takes the optimizer step on its 1/D of the parameters;
         PETSC_FALSE: every rank takes the whole step

   Options Database Key:
.  -nn_shard_optimizer <bool> - split the optimizer step over the data groups (default: true with
   the shared-memory all-reduce, false with the MPI one)

   Notes:
   With the MPI all-reduce the gradient buckets are reduce-scattered instead of all-reduced and the
   parameters all-gathered after the step: the same data move, but every rank does 1/D of the
   optimizer's work; whether that is faster depends on how well the MPI implements
   MPI_Ireduce_scatter against MPI_Iallreduce (bench/dp_bench.sh measures both). With the
   shared-memory all-reduce (NNSetAllreduceType()) the data groups share one copy of the parameters
   and nothing is gathered, so sharding only saves time; it is then the default. The optimizer state outside a rank's slice is stale during training;
   it is gathered before every checkpoint and at the end of NNTrain(), so checkpoints and later
   calls see the whole state. Either way the parameters are identical on all ranks after every step.

   Level: advanced

.seealso: `NNSetProcessGrid()`, `NNSetBucketSize()`
@*/
PetscErrorCode NNSetOptimizerSharding(NN net, PetscBool flg)
{
  NNReducer r = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNGetReducer(net, &r));
  r->shard     = flg;
  r->shard_set = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNGetOptimizerSharding - whether the data groups split the optimizer step

   Collective the first time (it creates the reducer)

   Output Parameters:
+  flg - the setting (NNSetOptimizerSharding(); if it was not set, whether the current or last training sharded)
-  set - whether it was set (may be NULL)

   Level: advanced

.seealso: `NNSetOptimizerSharding()`
@*/
PetscErrorCode NNGetOptimizerSharding(NN net, PetscBool *flg, PetscBool *set)
{
  NNReducer r = NULL;

  PetscFunctionBegin;
  PetscCall(NNGetReducer(net, &r));
  if (flg) *flg = r->shard_set ? r->shard : r->shmused;
  if (set) *set = r->shard_set;
  PetscFunctionReturn(0);
}

/*@
   NNGetBucketSize - gets the size of the gradient buckets in MB

   Collective the first time (it creates the reducer)

   Level: advanced

.seealso: `NNSetBucketSize()`
@*/
PetscErrorCode NNGetBucketSize(NN net, PetscReal *mb)
{
  NNReducer r = NULL;

  PetscFunctionBegin;
  PetscCall(NNGetReducer(net, &r));
  *mb = r->bucket_mb;
  PetscFunctionReturn(0);
}

/*@
   NNGetAllreduceTimes - communication time of data-parallel training since NNTrain() started

   Not Collective

   Output Parameters:
+  exposed - seconds this rank spent inside the gradient all-reduce's MPI calls (launch, progress, wait)
-  blocking - seconds the same all-reduces take as one blocking MPI_Allreduce of the whole gradient per step (measured once at the start of training)

   Notes:
   With the MPI all-reduce, 1 - exposed/blocking is the fraction of the all-reduce hidden behind the
   backward pass; -nn_monitor prints it every epoch. With the shared-memory all-reduce
   (NNSetAllreduceType()) exposed is the time of the reduction after the backward pass, including
   the wait for the slowest data group. Both are 0 without data groups.

   Level: advanced

.seealso: `NNSetBucketSize()`, `NNSetProcessGrid()`
@*/
PetscErrorCode NNGetAllreduceTimes(NN net, PetscLogDouble *exposed, PetscLogDouble *blocking)
{
  NNReducer r;

  PetscFunctionBegin;
  r = net->par ? net->par->reducer : NULL;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (exposed) *exposed = r ? r->t_exposed : 0;
  if (blocking) *blocking = r ? r->nreduce * r->t_block : 0;
  PetscFunctionReturn(0);
}

/*@
   NNSetAllreduceType - chooses how data groups average their gradients

   Logically Collective

   Input Parameters:
+  net - the network
-  type - `NN_ALLREDUCE_MPI`: bucketed MPI_Iallreduce launched during the backward pass;
          `NN_ALLREDUCE_SHARED`: the groups' gradients live in one MPI shared-memory window and every
          rank sums its slice of them after the backward pass (all data groups must share a node);
          `NN_ALLREDUCE_NCCL`: NCCL all-reduces the gradient on the GPUs (`NNSetDevice()` `NN_DEVICE_CUDA`, a PetNN
          built with NCCL), where the parameters and the optimizer step stay;
          `NN_ALLREDUCE_AUTO` (default): shared when the data communicator is on one node, MPI otherwise

   Options Database Key:
.  -nn_allreduce <auto,mpi,shared,nccl> - the all-reduce

   Notes:
   On one node both move data with the cores that compute; the shared-memory reduction reads and
   writes every gradient byte once instead of copying it through MPI's buffers, about ten times
   less time for a 26 MB gradient on two ranks. Across nodes the MPI all-reduce overlaps the
   backward pass as far as the MPI progresses it (NNSetBucketSize()). With shared memory and a
   sharded optimizer (NNSetOptimizerSharding(), the default there) the groups share one copy of the
   parameters and the summing and the optimizer step are done in chunks by whichever group is free,
   so a group that finishes its backward pass early works on the layers every group has finished
   instead of waiting. Either way the gradient is bitwise identical on all data groups.

   With NCCL each data group is one rank with one GPU, and `NNTrain()` keeps the parameters, their gradient and the
   optimizer state on every GPU: the gradient buckets are all-reduced in place on the device as the backward pass
   finishes them, in the precision of the passes, and every rank takes the same optimizer step there (sgd, adam or
   adamw; not sharded, no tournaments or spectral normalization: `NNTrain()` says which is in the way).

   Level: advanced

.seealso: `NNSetProcessGrid()`, `NNSetBucketSize()`, `NNGetAllreduceTimes()`
@*/
PetscErrorCode NNSetAllreduceType(NN net, NNAllreduceType type)
{
  NNReducer r = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(net, type, 2);
  PetscCall(NNGetReducer(net, &r));
  r->artype = type;
  PetscFunctionReturn(0);
}

/*@
   NNGetAllreduceType - gets how data groups average their gradients

   Not Collective

   Output Parameters:
+  type - the type set (NNSetAllreduceType())
-  shared - whether the current or last training used the shared-memory all-reduce (may be NULL)

   Level: advanced

.seealso: `NNSetAllreduceType()`
@*/
PetscErrorCode NNGetAllreduceType(NN net, NNAllreduceType *type, PetscBool *shared)
{
  NNReducer r;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  r = net->par ? net->par->reducer : NULL;
  if (type) *type = r ? r->artype : NN_ALLREDUCE_AUTO;
  if (shared) *shared = r ? r->shmused : PETSC_FALSE;
  PetscFunctionReturn(0);
}

