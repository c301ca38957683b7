/*
   The process grid (trainers x data groups x spatial ranks) and data-parallel training:
   gradient buckets all-reduced during the backward pass, random-number streams that make a
   data-parallel step draw exactly what one rank would, and the step bookkeeping NNTrain() uses.

   Data parallelism, as PyTorch DDP does it: every data group computes the loss and gradient of
   its shard [first,last) of the global minibatch; the gradient of the mean loss over the global
   batch is the sum over groups of (last-first)/n times each group's mean gradient. The parameter
   Vec is laid out layer after layer, so the gradient of the last layers is final first: buckets
   (contiguous slices of about -nn_bucket_size MB, filled from the last layer backwards) are
   scaled and handed to MPI_Iallreduce as soon as their first layer's backward pass is done, and
   MPI_Testall between the layers' backward passes progresses them; NNLossGradient() waits for all
   of them at the end of the backward pass, before the optimizer step. Every rank then takes the
   same optimizer step on the same gradient, so the parameters stay identical on all ranks.
*/
#include <petnn/private/parallelimpl.h>
#include <string.h>

PetscLogEvent NN_AllreduceLaunch, NN_AllreduceWait, NN_Allgather, NN_DataExchange, NN_Broadcast, NN_Tournament;

static PetscBool NNParallelEventsRegistered = PETSC_FALSE;

static PetscErrorCode NNParallelFinalizeEvents(void)
{
  PetscFunctionBegin;
  NNParallelEventsRegistered = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* log events of the parallel machinery (registered on first use) */
PetscErrorCode NNParallelRegisterEvents(void)
{
  PetscFunctionBegin;
  if (NNParallelEventsRegistered) PetscFunctionReturn(0);
  NNParallelEventsRegistered = PETSC_TRUE;
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscLogEventRegister("NNAllreduceLaunch", NN_CLASSID, &NN_AllreduceLaunch));
  PetscCall(PetscLogEventRegister("NNAllreduceWait", NN_CLASSID, &NN_AllreduceWait));
  PetscCall(PetscLogEventRegister("NNAllgather", NN_CLASSID, &NN_Allgather));
  PetscCall(PetscLogEventRegister("NNDataExchange", NNDATA_CLASSID, &NN_DataExchange));
  PetscCall(PetscLogEventRegister("NNBroadcast", NN_CLASSID, &NN_Broadcast));
  PetscCall(PetscLogEventRegister("NNTournament", NN_CLASSID, &NN_Tournament));
  PetscCall(PetscRegisterFinalize(NNParallelFinalizeEvents));
  PetscFunctionReturn(0);
}

/* the shard [first,last) of a batch of n samples that data group g of D computes */
void NNParallelShard(PetscInt n, PetscInt g, PetscInt D, PetscInt *first, PetscInt *last)
{
  *first = (PetscInt)(((PetscInt64)n * g) / D);
  *last  = (PetscInt)(((PetscInt64)n * (g + 1)) / D);
}

/* advances the generator by k draws */
void NNRandomSkip(NNRandom *r, PetscInt64 k)
{
  for (PetscInt64 i = 0; i < k; i++) (void)NNRandomNext(r);
}

/* with one data group and one trainer the layers keep the network's own communicator */
MPI_Comm NNGetLayerComm(NN net)
{
  return net->par && net->par->K * net->par->D > 1 ? net->par->scomm : PetscObjectComm((PetscObject)net);
}

/* every rank raises the error of the first rank where ierr is nonzero, with that rank's message (and,
   with tellrank, the rank that found it if the others did not) */
PetscErrorCode NNCollectiveCheck(MPI_Comm comm, PetscErrorCode ierr, PetscBool tellrank, const char what[], const char message[])
{
  PetscMPIInt rank, size, first, nbad, code = (PetscMPIInt)ierr;
  char        msg[1024] = "";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  first = ierr ? rank : size;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) PetscFunctionReturn(0);
  if (rank == first) PetscCall(PetscStrncpy(msg, message ? message : "unknown error", sizeof(msg)));
  PetscCallMPI(MPI_Bcast(msg, (PetscMPIInt)sizeof(msg), MPI_CHAR, first, comm));
  PetscCallMPI(MPI_Bcast(&code, 1, MPI_INT, first, comm));
  nbad = ierr ? 1 : 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_INT, MPI_SUM, comm));
  if (tellrank && nbad < size) SETERRQ(comm, (PetscErrorCode)code, "%s%s (found on rank %d of %d; every rank stops)", what, msg, first, size);
  SETERRQ(comm, (PetscErrorCode)code, "%s%s", what, msg);
}

/* after a local step that may have failed on some ranks (ierr, caught with PetscReturnErrorHandler):
   every rank raises the first failing rank's error, so no rank waits in a later collective */
PetscErrorCode NNCollectiveError(MPI_Comm comm, PetscErrorCode ierr, PetscBool tellrank, const char what[])
{
  char *specific = NULL;

  PetscFunctionBegin;
  if (ierr) PetscCall(PetscErrorMessage(ierr, NULL, &specific));
  PetscCall(NNCollectiveCheck(comm, ierr, tellrank, what, specific));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the grid */
static PetscErrorCode NNParallelFreeComms(NNParallel p)
{
  PetscFunctionBegin;
  if (p->tcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->tcomm));
  if (p->dcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->dcomm));
  if (p->scomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->scomm));
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelDestroy(NNParallel *p)
{
  PetscFunctionBegin;
  if (!*p) PetscFunctionReturn(0);
  PetscCall(NNParallelFreeComms(*p));
  PetscCall(PetscFree((*p)->buckets));
  PetscCall(PetscFree((*p)->req));
  PetscCall(PetscFree((*p)->draws));
  PetscCall(PetscFree((*p)->probe));
  PetscCall(PetscFree2((*p)->pcount, (*p)->pdispl));
  PetscCall(PetscFree((*p)->rcount));
  PetscCall(PetscFree((*p)->gslice));
  PetscCall(PetscFree((*p)->seg));
  PetscCall(PetscFree((*p)->speed));
  if ((*p)->win != MPI_WIN_NULL) { /* training ended without NNParallelTrainEnd() */
    PetscCallMPI(MPI_Win_unlock_all((*p)->win));
    PetscCallMPI(MPI_Win_free(&(*p)->win));
  }
  if ((*p)->shmcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&(*p)->shmcomm));
  PetscCall(PetscFree(*p));
  PetscFunctionReturn(0);
}

/* moves a layer (and its children) to another communicator; it is set up again before use */
static PetscErrorCode NNLayerRehome(NNLayer l, MPI_Comm comm)
{
  PetscObject o = (PetscObject)l;
  PetscMPIInt cmp;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_compare(o->comm, comm, &cmp));
  if (cmp != MPI_IDENT && cmp != MPI_CONGRUENT) {
    PetscTryTypeMethod(l, reset); /* DMs of the old communicator */
    PetscCall(PetscCommDestroy(&o->comm));
    PetscCall(PetscCommDuplicate(comm, &o->comm, &o->tag));
    l->setupcalled = PETSC_FALSE;
  }
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerRehome(l->children[c], comm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNParallelCreate(NN net, PetscInt K, PetscInt D, NNParallel *par)
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)net);
  NNParallel  p = NULL;
  PetscMPIInt size, rank;
  PetscInt    S, tr;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(K >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-nn_tournament_trainers %" PetscInt_FMT " must be positive", K);
  PetscCheck(D >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-nn_data_groups %" PetscInt_FMT " must be positive", D);
  PetscCheck(size % (K * D) == 0, comm, PETSC_ERR_ARG_INCOMP, "%" PetscInt_FMT " trainers (-nn_tournament_trainers) x %" PetscInt_FMT " data groups (-nn_data_groups) do not divide the %d ranks of the network: the number of ranks must be trainers x data groups x ranks per spatial group", K, D, size);
  PetscCheck(!net->indm || K * D == 1, comm, PETSC_ERR_SUP, "A network with NNSetInputDM() runs on the DMDA's ranks: data groups and trainers are not supported (-nn_data_groups %" PetscInt_FMT ", -nn_tournament_trainers %" PetscInt_FMT ")", D, K);
  PetscCall(NNParallelRegisterEvents());
  PetscCall(PetscNew(&p));
  p->K         = K;
  p->D         = D;
  p->S         = S = size / (K * D);
  p->size      = size;
  p->rank      = rank;
  p->trainer   = (PetscMPIInt)(rank / (D * S));
  tr           = rank % (D * S);
  p->group     = (PetscMPIInt)(tr / S);
  p->srank     = (PetscMPIInt)(tr % S);
  p->bucket_mb = 25; /* PyTorch DDP's default */
  p->shard     = PETSC_FALSE;
  p->interval  = 100;
  p->artype    = NN_ALLREDUCE_AUTO;
  p->balance_max = 1.5;
  p->win       = MPI_WIN_NULL;
  p->tcomm = p->dcomm = p->scomm = p->shmcomm = MPI_COMM_NULL;
  PetscCallMPI(MPI_Comm_split(comm, p->trainer, rank, &p->tcomm));
  PetscCallMPI(MPI_Comm_split(comm, p->trainer * (PetscMPIInt)D + p->group, rank, &p->scomm));
  PetscCallMPI(MPI_Comm_split(comm, p->trainer * (PetscMPIInt)S + p->srank, rank, &p->dcomm));
  *par = p;
  PetscFunctionReturn(0);
}

/* the network's grid, the default one (1 trainer, 1 data group: every rank in one spatial group) if none was set */
PetscErrorCode NNParallelGet(NN net, NNParallel *p)
{
  PetscFunctionBegin;
  if (!net->par) PetscCall(NNParallelCreate(net, 1, 1, &net->par));
  *p = net->par;
  PetscFunctionReturn(0);
}

/*@
   NNSetProcessGrid - splits the network's ranks into trainers x data groups x spatial ranks

   Collective

   Input Parameters:
+  net - the network
.  trainers - independent trainers (tournament training, see NNSetTournament()); 1 otherwise
-  groups - data-parallel groups per trainer: each group computes its shard of every global
            minibatch and the gradients are averaged by all-reduce

   Options Database Keys:
+  -nn_tournament_trainers <K> - trainers (default 1)
-  -nn_data_groups <D> - data groups per trainer (default 1)

   Notes:
   The number of ranks P must be a multiple of K*D; the remaining factor S = P/(K*D) is the size
   of a spatial group, whose ranks split every sample of the group's shard over a DMDA (the rank
   grid of the spatial layers, -<layer>_da_processors_x/y). World ranks are laid out as
   rank = (trainer*D + group)*S + spatial rank, so a spatial group is S consecutive ranks.
   Layers live on their spatial group's communicator (layers added before this call are moved
   there). The minibatch size (-nn_batch_size) stays the GLOBAL batch size of a trainer, so a run
   on any D computes the same trajectory as one rank (up to rounding), except for batch
   normalization, whose statistics are those of the group's shard (as PyTorch DDP without
   SyncBatchNorm).

   Level: intermediate

.seealso: `NNGetProcessGrid()`, `NNGetProcessGridComms()`, `NNSetBucketSize()`, `NNSetTournament()`, `NNTrain()`
@*/
PetscErrorCode NNSetProcessGrid(NN net, PetscInt trainers, PetscInt groups)
{
  NNParallel p = NULL, old = net->par;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (old && old->K == trainers && old->D == groups) PetscFunctionReturn(0);
  PetscCall(NNParallelCreate(net, trainers, groups, &p));
  if (old) { /* keep the settings */
    p->bucket_mb = old->bucket_mb;
    p->shard     = old->shard;
    p->shard_set = old->shard_set;
    p->artype    = old->artype;
    p->balance   = old->balance;
    p->balance_max = old->balance_max;
    p->interval  = old->interval;
    p->tsamples  = old->tsamples;
  }
  PetscCall(NNParallelDestroy(&net->par));
  net->par = p;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerRehome(net->layers[i], NNGetLayerComm(net)));
  net->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNGetProcessGrid - gets the number of trainers, data groups per trainer and ranks per spatial group

   Not Collective

   Level: intermediate

.seealso: `NNSetProcessGrid()`
@*/
PetscErrorCode NNGetProcessGrid(NN net, PetscInt *trainers, PetscInt *groups, PetscInt *spatial)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)net), &size));
  if (trainers) *trainers = net->par ? net->par->K : 1;
  if (groups) *groups = net->par ? net->par->D : 1;
  if (spatial) *spatial = net->par ? net->par->S : size;
  PetscFunctionReturn(0);
}

/*@C
   NNGetProcessGridComms - gets this rank's trainer, data and spatial communicators

   Collective the first time (it creates the default grid if none was set)

   Output Parameters:
+  trainer - the ranks of this rank's trainer
.  data - the ranks of the trainer with the same spatial rank (the gradient all-reduce)
-  spatial - the ranks of this rank's spatial group (the layers' communicator)

   Notes:
   The communicators belong to the network; do not free them.

   Level: advanced

.seealso: `NNSetProcessGrid()`
@*/
PetscErrorCode NNGetProcessGridComms(NN net, MPI_Comm *trainer, MPI_Comm *data, MPI_Comm *spatial)
{
  NNParallel p = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNParallelGet(net, &p));
  if (trainer) *trainer = p->tcomm;
  if (data) *data = p->dcomm;
  if (spatial) *spatial = p->scomm;
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
  NNParallel p = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(mb >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_bucket_size %g must be non-negative (MB; 0: one bucket per layer)", (double)mb);
  PetscCall(NNParallelGet(net, &p));
  p->bucket_mb = mb;
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
  NNParallel p = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNParallelGet(net, &p));
  p->shard     = flg;
  p->shard_set = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNSetTournament - sets the tournament schedule of tournament training (LBANN's LTFB)

   Collective

   Input Parameters:
+  net - the network, with K > 1 trainers (NNSetProcessGrid())
.  interval - optimizer steps between tournaments
-  samples - size of each trainer's tournament set (taken from the end of its part of the training data)

   Options Database Keys:
+  -nn_tournament_interval <M> - steps between tournaments (default 100)
-  -nn_tournament_samples <S> - tournament-set size (required with more than one trainer)

   Notes:
   The training samples are split into K contiguous parts, one per trainer (the union of its
   ranks' rows of the distributed data set); a trainer trains on its part minus its last S
   samples, which are its tournament set, and every trainer trains on the same number of samples
   (the smallest part's). Every M steps the trainers are paired at random (a seeded generator,
   the same on every rank), exchange their models (parameters and buffers; the optimizer state
   stays with its trainer), evaluate both on their own tournament set and keep the one with the
   smaller loss. Trainer t > 0 shuffles and draws dropout masks from its own generator.

   Level: intermediate

.seealso: `NNSetProcessGrid()`, `NNTrain()`
@*/
PetscErrorCode NNSetTournament(NN net, PetscInt interval, PetscInt samples)
{
  NNParallel p = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(interval > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_tournament_interval %" PetscInt_FMT " must be positive", interval);
  PetscCheck(samples >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_tournament_samples %" PetscInt_FMT " must be non-negative", samples);
  PetscCall(NNParallelGet(net, &p));
  p->interval = interval;
  p->tsamples = samples;
  PetscFunctionReturn(0);
}

/*@
   NNSetCheckpointInterval - checkpoints during an epoch, every so many steps or seconds

   Logically Collective

   Input Parameters:
+  net - the network (give the file with -nn_checkpoint)
.  steps - checkpoint after every this many optimizer steps (0: off)
-  seconds - checkpoint when this many seconds have passed since the last checkpoint (0: off)

   Options Database Keys:
+  -nn_checkpoint_steps <n> - step interval
-  -nn_checkpoint_seconds <s> - time interval (the slowest rank's clock decides)

   Notes:
   A checkpoint written during an epoch holds the position in it (the batch index and the
   generator state from which the epoch's permutation is regenerated), so a run killed at any
   point and restarted with -load from its last checkpoint ends bitwise identical to an
   uninterrupted run. The per-epoch checkpoints (-nn_checkpoint_every) continue as before.

   Level: intermediate

.seealso: `NNCheckpointSave()`, `NNCheckpointLoad()`, `NNTrain()`
@*/
PetscErrorCode NNSetCheckpointInterval(NN net, PetscInt steps, PetscReal seconds)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(steps >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_steps %" PetscInt_FMT " must be non-negative (0: off)", steps);
  PetscCheck(seconds >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_seconds %g must be non-negative (0: off)", (double)seconds);
  net->checkpoint_steps   = steps;
  net->checkpoint_seconds = seconds;
  PetscFunctionReturn(0);
}

/*@C
   NNTrainMonitorSet - sets a function NNTrain() calls after every optimizer step

   Logically Collective

   Input Parameters:
+  net - the network
.  monitor - monitor(net, epoch, step, loss, ctx): the 0-based epoch, the steps taken so far and the
             mean loss of the global minibatch just trained on (the same on every rank)
.  ctx - context for the monitor
-  destroy - frees ctx when the network is destroyed (may be NULL)

   Level: intermediate

.seealso: `NNTrain()`
@*/
PetscErrorCode NNTrainMonitorSet(NN net, PetscErrorCode (*monitor)(NN, PetscInt, PetscInt, PetscReal, void *), void *ctx, PetscErrorCode (*destroy)(void **))
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (net->stepmonitordestroy) PetscCall((*net->stepmonitordestroy)(&net->stepmonitorctx));
  net->stepmonitor        = monitor;
  net->stepmonitorctx     = ctx;
  net->stepmonitordestroy = destroy;
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
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (exposed) *exposed = net->par ? net->par->t_exposed : 0;
  if (blocking) *blocking = net->par ? net->par->nreduce * net->par->t_block : 0;
  PetscFunctionReturn(0);
}

/* options of the grid, the buckets, tournaments and restarts; called by NNSetFromOptions() before it adds layers */
PetscErrorCode NNSetFromOptions_Parallel(NN net, PetscOptionItems *PetscOptionsObject)
{
  NNParallel p = NULL;
  PetscInt   K, D, M, S, steps = net->checkpoint_steps;
  PetscReal  mb, secs = net->checkpoint_seconds;
  PetscBool  f1, f2;

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  K = p->K;
  D = p->D;
  PetscCall(PetscOptionsInt("-nn_data_groups", "Data-parallel groups per trainer (the other ranks of a group split samples spatially)", "NNSetProcessGrid", D, &D, &f1));
  PetscCall(PetscOptionsInt("-nn_tournament_trainers", "Independent trainers of tournament training (LTFB)", "NNSetProcessGrid", K, &K, &f2));
  if (f1 || f2) PetscCall(NNSetProcessGrid(net, K, D));
  p  = net->par;
  mb = p->bucket_mb;
  PetscCall(PetscOptionsReal("-nn_bucket_size", "Gradient all-reduce bucket size in MB (0: one bucket per layer)", "NNSetBucketSize", mb, &mb, &f1));
  if (f1) PetscCall(NNSetBucketSize(net, mb));
  PetscCall(PetscOptionsEnum("-nn_allreduce", "Gradient all-reduce of the data groups: auto (shared when they share a node), mpi (bucketed MPI_Iallreduce), shared (MPI shared-memory window)", "NNSetAllreduceType", NNAllreduceTypes, (PetscEnum)p->artype, (PetscEnum *)&p->artype, NULL));
  {
    PetscBool bal = p->balance;
    PetscReal bmax = p->balance_max;
    PetscCall(PetscOptionsBool("-nn_load_balance", "Data groups split each minibatch in proportion to their measured speeds (not bitwise reproducible)", "NNSetLoadBalance", bal, &bal, &f1));
    PetscCall(PetscOptionsReal("-nn_load_balance_max_share", "Largest balanced shard as a multiple of batch/data groups (sets the per-rank batch memory)", "NNSetLoadBalance", bmax, &bmax, &f2));
    if (f1 || f2) PetscCall(NNSetLoadBalance(net, bal, bmax));
  }
  {
    PetscBool sh = p->shard;
    PetscCall(PetscOptionsBool("-nn_shard_optimizer", "Data groups split the optimizer step (reduce-scatter, step on 1/D of the parameters, all-gather); default: with the shared-memory all-reduce", "NNSetOptimizerSharding", sh, &sh, &f1));
    if (f1) PetscCall(NNSetOptimizerSharding(net, sh));
  }
  M = p->interval;
  S = p->tsamples;
  PetscCall(PetscOptionsInt("-nn_tournament_interval", "Optimizer steps between tournaments", "NNSetTournament", M, &M, &f1));
  PetscCall(PetscOptionsInt("-nn_tournament_samples", "Samples in each trainer's tournament set", "NNSetTournament", S, &S, &f2));
  if (f1 || f2) PetscCall(NNSetTournament(net, M, S));
  PetscCall(PetscOptionsInt("-nn_checkpoint_steps", "Also checkpoint every this many steps (0: off)", "NNSetCheckpointInterval", steps, &steps, &f1));
  PetscCall(PetscOptionsReal("-nn_checkpoint_seconds", "Also checkpoint when this many seconds passed since the last checkpoint (0: off)", "NNSetCheckpointInterval", secs, &secs, &f2));
  if (f1 || f2) PetscCall(NNSetCheckpointInterval(net, steps, secs));
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelView(NN net, PetscViewer viewer)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (!p || p->K * p->D == 1) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "process grid: %" PetscInt_FMT " trainer(s) x %" PetscInt_FMT " data group(s) x %" PetscInt_FMT " spatial rank(s); gradient all-reduce %s%s, buckets of %g MB\n", p->K, p->D, p->S, NNAllreduceTypes[p->artype], p->shmused ? " (shared memory in use)" : "", (double)p->bucket_mb));
  if (p->D > 1 && (p->shard_set || p->shmused)) PetscCall(PetscViewerASCIIPrintf(viewer, "optimizer step %s\n", (p->shard_set ? p->shard : p->shmused) ? "sharded over the data groups" : "taken whole on every rank"));
  if (p->balance && p->D > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "load balancing: shards in proportion to the groups' speeds, at most %g x batch/%" PetscInt_FMT "\n", (double)p->balance_max, p->D));
  if (p->K > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "tournament every %" PetscInt_FMT " steps on %" PetscInt_FMT " samples per trainer\n", p->interval, p->tsamples));
  PetscFunctionReturn(0);
}

/* "<base>" for one trainer; "<stem>.trainer<t><ext>" (ext .h5 kept last) for trainer t of several */
PetscErrorCode NNParallelFileName(NN net, const char base[], size_t len, char out[])
{
  NNParallel p = net->par;
  size_t     n;
  PetscBool  h5 = PETSC_FALSE;

  PetscFunctionBegin;
  if (!p || p->K == 1) {
    PetscCall(PetscStrncpy(out, base, len));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscStrlen(base, &n));
  if (n > 3) PetscCall(PetscStrcmp(base + n - 3, ".h5", &h5));
  if (h5) PetscCall(PetscSNPrintf(out, len, "%.*s.trainer%d.h5", (int)(n - 3), base, p->trainer));
  else PetscCall(PetscSNPrintf(out, len, "%s.trainer%d", base, p->trainer));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the layer hook */
static PetscErrorCode NNBucketLaunch(NN net, PetscScalar *g, PetscInt b)
{
  NNParallel     p = net->par;
  NNBucket      *k = &p->buckets[b];
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  if (p->sharded) { /* each group receives the sum over its slice's part of the bucket */
    PetscInt off = PetscMin(PetscMax(k->lo, p->slo), p->shi) - p->slo;
    PetscCallMPI(MPI_Ireduce_scatter(g + k->lo, p->gslice + off, p->rcount + b * p->D, MPIU_SCALAR, MPIU_SUM, p->dcomm, &p->req[b]));
  } else PetscCallMPI(MPI_Iallreduce(MPI_IN_PLACE, g + k->lo, (PetscMPIInt)(k->hi - k->lo), MPIU_SCALAR, MPIU_SUM, p->dcomm, &p->req[b]));
  PetscCall(PetscTime(&t1));
  p->t_exposed += t1 - t0;
  PetscFunctionReturn(0);
}

/* after layer i's backward pass: launch the bucket it completes, progress the ones in flight */
static PetscErrorCode NNBucketsProgress(NN net, PetscInt i)
{
  NNParallel     p = net->par;
  PetscScalar   *g = net->layers[i]->dtheta - net->layers[i]->poff; /* the whole gradient array */
  PetscLogDouble t0, t1;
  int            flag;

  PetscFunctionBegin;
  if (p->useshm) { /* the shared-memory reduction runs at the end, but may start on the gradients already final */
    PetscCall(NNShmBackwardProgress(net, i));
    PetscFunctionReturn(0);
  }
  if (!p->nbuckets) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(NN_AllreduceLaunch, net, 0, 0, 0));
  while (p->nlaunched < p->nbuckets && p->buckets[p->nlaunched].trigger >= i) {
    PetscCall(NNBucketLaunch(net, g, p->nlaunched));
    p->nlaunched++;
  }
  PetscCall(PetscTime(&t0));
  if (p->nlaunched) PetscCallMPI(MPI_Testall((PetscMPIInt)p->nlaunched, p->req, &flag, MPI_STATUSES_IGNORE));
  PetscCall(PetscTime(&t1));
  p->t_exposed += t1 - t0;
  PetscCall(PetscLogEventEnd(NN_AllreduceLaunch, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* end of the backward pass: launch what is left (nothing, normally) and wait for everything */
static PetscErrorCode NNBucketsWait(NN net, PetscScalar *g)
{
  NNParallel     p = net->par;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  if (!p->nbuckets) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(NN_AllreduceWait, net, 0, 0, 0));
  if (p->useshm) {
    PetscLogDouble te;
    PetscCall(NNShmAllreduce(net, &t0, &t1, &te));
    p->t_exposed += t0 + t1;
    p->t_wait += t0;
    p->t_early += te;
  } else {
    for (; p->nlaunched < p->nbuckets; p->nlaunched++) PetscCall(NNBucketLaunch(net, g, p->nlaunched));
    PetscCall(PetscTime(&t0));
    PetscCallMPI(MPI_Waitall((PetscMPIInt)p->nbuckets, p->req, MPI_STATUSES_IGNORE));
    PetscCall(PetscTime(&t1));
    p->t_exposed += t1 - t0;
  }
  p->nreduce++;
  PetscCall(PetscLogEventEnd(NN_AllreduceWait, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNParallelHook(NN net, NNHookStage stage, PetscInt i)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (p->probing) { /* record the generator around every layer */
    if (stage == NN_HOOK_FORWARD_BEGIN) p->probe[2 * i] = net->rng;
    else if (stage == NN_HOOK_FORWARD_END) p->probe[2 * i + 1] = net->rng;
    PetscFunctionReturn(0);
  }
  if (!p->active) PetscFunctionReturn(0);
  switch (stage) {
  case NN_HOOK_BACKWARD_BEGIN: /* the gradient of the global mean: this shard's mean weighted by its share */
    if (p->weight != 1.0) PetscCall(VecScale(net->dact[i], p->weight));
    if (PetscIsInfOrNanReal(net->steploss)) PetscCall(NNShmMarkBadStep(net)); /* training stops after this step: no shared optimizer step */
    break;
  case NN_HOOK_FORWARD_BEGIN: /* draw the random numbers of this group's samples where one rank would */
    if (p->draws[i] && net->training) NNRandomSkip(&net->rng, (PetscInt64)p->first * p->draws[i]);
    break;
  case NN_HOOK_FORWARD_END:
    if (p->draws[i] && net->training) NNRandomSkip(&net->rng, (PetscInt64)(p->n - p->last) * p->draws[i]);
    break;
  case NN_HOOK_BACKWARD_END:
    PetscCall(NNBucketsProgress(net, i));
    break;
  case NN_HOOK_BACKWARD_DONE:
    PetscCall(NNBucketsWait(net, net->layers[0]->dtheta - net->layers[0]->poff));
    break;
  }
  PetscFunctionReturn(0);
}

/* random numbers each top-level layer draws per sample in training mode (dropout: one per entry),
   found by running one zero sample through the network and counting generator steps */
static PetscErrorCode NNParallelProbeDraws(NN net, Vec x)
{
  NNParallel p = net->par;
  NNRandom   saved = net->rng;
  Vec        buf0;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(net->buf, &buf0)); /* batch norm updates its running statistics: restore them */
  PetscCall(VecCopy(net->buf, buf0));
  PetscCall(VecZeroEntries(x));
  p->probing = PETSC_TRUE;
  net->hook  = NNParallelHook;
  PetscCall(NNForward(net, 1, x, NULL));
  p->probing = PETSC_FALSE;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNRandom  r     = p->probe[2 * i];
    PetscInt64 k    = 0, limit = 64 * (PetscInt64)NNShapeSize(&net->layers[i]->inshape) + 1024;
    while (memcmp(r.s, p->probe[2 * i + 1].s, sizeof(r.s))) {
      (void)NNRandomNext(&r);
      PetscCheck(++k <= limit, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "Layer %s draws more random numbers per sample than data-parallel training can replay", ((PetscObject)net->layers[i])->name);
    }
    if (k) {
      DM dm;
      PetscCall(VecGetDM(net->act[i + 1], &dm));
      PetscCheck(!dm || p->D == 1, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "Layer %s (%s) draws random numbers on a spatial (DMDA) activation, which depend on the decomposition: not supported with -nn_data_groups %" PetscInt_FMT "; put it after %s", ((PetscObject)net->layers[i])->name, ((PetscObject)net->layers[i])->type_name, p->D, NNLAYERSPATIALFLATTEN);
    }
    p->draws[i] = (PetscInt)k;
  }
  net->rng = saved;
  PetscCall(VecCopy(buf0, net->buf));
  PetscCall(VecDestroy(&buf0));
  PetscFunctionReturn(0);
}

/* buckets of about bucket_mb MB from the last layer backwards; a layer is never split. Top-level
   layer i owns the parameters [poff_i, poff_{i+1}) (its children and their copies included). With a
   sharded optimizer, also each slice's part of each bucket. */
static PetscErrorCode NNParallelMakeBuckets(NN net)
{
  NNParallel p     = net->par;
  PetscInt   limit = (PetscInt)PetscMin(p->bucket_mb * 1e6 / sizeof(PetscScalar), (PetscReal)PETSC_MPI_INT_MAX);
  PetscInt   nb = 0, hi = -1, lo = 0, trig = -1, end;

  PetscFunctionBegin;
  PetscCall(PetscFree(p->buckets));
  PetscCall(PetscFree(p->req));
  PetscCall(PetscMalloc1(net->nlayers, &p->buckets));
  PetscCall(PetscMalloc1(net->nlayers, &p->req));
  PetscCall(VecGetSize(net->theta, &end));
  for (PetscInt i = net->nlayers - 1; i >= 0; i--) {
    PetscInt l0 = net->layers[i]->poff, l1 = i + 1 < net->nlayers ? net->layers[i + 1]->poff : end;
    if (l1 == l0) continue;
    if (hi < 0) hi = l1;
    lo   = l0;
    trig = i;
    if (hi - lo >= limit) {
      p->buckets[nb++] = (NNBucket){lo, hi, trig};
      hi               = -1;
    }
  }
  if (hi >= 0) p->buckets[nb++] = (NNBucket){lo, hi, trig};
  p->nbuckets = nb;
  for (PetscInt b = 0; b < nb; b++) p->req[b] = MPI_REQUEST_NULL;
  PetscCall(PetscFree(p->rcount));
  PetscCall(PetscFree2(p->pcount, p->pdispl));
  PetscCall(PetscFree(p->gslice));
  if (p->sharded) {
    PetscCall(PetscMalloc1(nb * p->D + 1, &p->rcount));
    PetscCall(PetscMalloc2(p->D, &p->pcount, p->D, &p->pdispl));
    for (PetscInt g = 0; g < p->D; g++) {
      PetscInt a = (PetscInt)(((PetscInt64)end * g) / p->D), z = (PetscInt)(((PetscInt64)end * (g + 1)) / p->D);
      p->pdispl[g] = (PetscMPIInt)a;
      p->pcount[g] = (PetscMPIInt)(z - a);
      for (PetscInt b = 0; b < nb; b++) p->rcount[b * p->D + g] = (PetscMPIInt)PetscMax(0, PetscMin(z, p->buckets[b].hi) - PetscMax(a, p->buckets[b].lo));
    }
    p->slo = p->pdispl[p->group];
    p->shi = p->slo + p->pcount[p->group];
    PetscCall(PetscMalloc1(p->shi - p->slo + 1, &p->gslice));
  }
  PetscFunctionReturn(0);
}

/* start of NNTrain(): parameters broadcast from the trainer's first rank, generator probe,
   buckets, the cost of a blocking all-reduce, and the hook */
PetscErrorCode NNParallelTrainBegin(NN net, Vec x)
{
  NNParallel   p = NULL;
  PetscScalar *a;
  PetscInt     np, nb;

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(VecGetSize(net->buf, &nb));
  PetscCall(PetscLogEventBegin(NN_Broadcast, net, 0, 0, 0));
  PetscCall(VecGetArray(net->theta, &a));
  if (np) PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)np, MPIU_SCALAR, 0, p->tcomm));
  PetscCall(VecRestoreArray(net->theta, &a));
  PetscCall(VecGetArray(net->buf, &a));
  if (nb) PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)nb, MPIU_SCALAR, 0, p->tcomm));
  PetscCall(VecRestoreArray(net->buf, &a));
  PetscCall(PetscLogEventEnd(NN_Broadcast, net, 0, 0, 0));
  p->t_exposed = 0;
  p->t_wait    = 0;
  p->t_early   = 0;
  p->nreduce   = 0;
  p->nbuckets  = 0;
  p->sharded   = PETSC_FALSE;
  if (p->D == 1) PetscFunctionReturn(0); /* one group: nothing to reduce, every draw is the group's own */

  PetscCall(PetscFree(p->draws));
  PetscCall(PetscFree(p->probe));
  PetscCall(PetscCalloc1(net->nlayers, &p->draws));
  PetscCall(PetscCalloc1(2 * net->nlayers, &p->probe));
  p->nhook   = net->nlayers;
  PetscCall(NNShmAllreduceCheck(net));
  p->sharded = p->shard_set ? p->shard : (PetscBool)(p->shmcomm != MPI_COMM_NULL); /* sharding is free with shared memory */
  PetscCall(NNParallelProbeDraws(net, x));
  PetscCall(NNParallelMakeBuckets(net));
  PetscCall(NNShmAllreduceSetUp(net));
  if (np) { /* what the all-reduce would cost if nothing overlapped: the better of two blocking ones */
    PetscScalar   *w;
    PetscLogDouble t0, t1;
    p->t_block = PETSC_MAX_REAL;
    PetscCall(PetscCalloc1(np, &w));
    for (int r = 0; r < 2; r++) {
      PetscCallMPI(MPI_Barrier(p->dcomm));
      PetscCall(PetscTime(&t0));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, w, (PetscMPIInt)np, MPIU_SCALAR, MPIU_SUM, p->dcomm));
      PetscCall(PetscTime(&t1));
      p->t_block = PetscMin(p->t_block, t1 - t0);
    }
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &p->t_block, 1, MPI_DOUBLE, MPI_MAX, p->dcomm));
    PetscCall(PetscFree(w));
  }
  net->hook = NNParallelHook;
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelTrainEnd(NN net)
{
  PetscFunctionBegin;
  net->hook = NULL;
  if (!net->par) PetscFunctionReturn(0);
  net->par->active = PETSC_FALSE;
  PetscCall(NNShmAllreduceDestroy(net));
  PetscCall(NNParallelGatherOptState(net)); /* the whole optimizer state on every rank again */
  net->par->sharded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* the optimizer step: on the whole parameter Vec, or (sharded) on this group's slice followed by an
   all-gather of the parameters over the data groups */
PetscErrorCode NNParallelOptStep(NN net)
{
  NNParallel     p = net->par;
  PetscScalar   *t;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  if (!p || !p->sharded) {
    PetscCall(NNOptStep(net->opt, net->theta, net->dtheta));
    PetscFunctionReturn(0);
  }
  if (p->useshm && p->shmtheta) PetscFunctionReturn(0); /* shared parameters: stepped chunk by chunk with the reduction (src/reducer/impls/shm/shm.c) */
  PetscCall(NNOptStepRange(net->opt, p->slo, p->shi, net->theta, p->gslice));
  PetscCall(PetscLogEventBegin(NN_Allgather, net, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(VecGetArray(net->theta, &t));
  PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t, p->pcount, p->pdispl, MPIU_SCALAR, p->dcomm));
  PetscCall(VecRestoreArray(net->theta, &t));
  PetscCall(PetscTime(&t1));
  p->t_exposed += t1 - t0;
  PetscCall(PetscLogEventEnd(NN_Allgather, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* a sharded optimizer keeps its state current only on each group's slice: gather it (before a
   checkpoint, at the end of training) */
PetscErrorCode NNParallelGatherOptState(NN net)
{
  NNParallel   p = net->par;
  PetscScalar *a;

  PetscFunctionBegin;
  if (!p || !p->sharded || (p->useshm && p->shmtheta)) PetscFunctionReturn(0); /* shared parameters: one optimizer state for all */
  PetscCall(PetscLogEventBegin(NN_Allgather, net, 0, 0, 0));
  for (PetscInt i = 0; i < net->opt->nstate; i++) {
    PetscCall(VecGetArray(net->opt->state[i], &a));
    PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, p->pcount, p->pdispl, MPIU_SCALAR, p->dcomm));
    PetscCall(VecRestoreArray(net->opt->state[i], &a));
  }
  PetscCall(PetscLogEventEnd(NN_Allgather, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* a training step on a global batch of n samples: this group's shard */
PetscErrorCode NNParallelStepBegin(NN net, PetscInt n)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  NNParallelStepShard(p, n);
  p->n         = n;
  p->weight    = (PetscReal)(p->last - p->first) / (PetscReal)n; /* scales dL/dy before the backward pass */
  p->nlaunched = 0;
  p->active    = (PetscBool)(p->D > 1);
  PetscFunctionReturn(0);
}

/* a step in which this group has no samples (n < D): zero gradient into the all-reduce, and the
   random numbers one rank would draw */
PetscErrorCode NNParallelStepEmpty(NN net)
{
  NNParallel   p = net->par;
  PetscScalar *g;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++)
    if (p->draws[i] && net->training) NNRandomSkip(&net->rng, (PetscInt64)p->n * p->draws[i]);
  PetscCall(VecZeroEntries(net->dtheta));
  PetscCall(VecGetArray(net->dtheta, &g));
  PetscCall(NNBucketsWait(net, g));
  PetscCall(VecRestoreArray(net->dtheta, &g));
  PetscFunctionReturn(0);
}

/* end of a step: buffers (batch-norm running statistics) follow the first data group, as DDP broadcasts them */
PetscErrorCode NNParallelStepEnd(NN net)
{
  NNParallel   p = net->par;
  PetscInt     nb;
  PetscScalar *a;

  PetscFunctionBegin;
  p->active = PETSC_FALSE;
  if (p->D == 1) PetscFunctionReturn(0);
  PetscCall(VecGetSize(net->buf, &nb));
  if (!nb) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(NN_Broadcast, net, 0, 0, 0));
  PetscCall(VecGetArray(net->buf, &a));
  PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)nb, MPIU_SCALAR, 0, p->dcomm));
  PetscCall(VecRestoreArray(net->buf, &a));
  PetscCall(PetscLogEventEnd(NN_Broadcast, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* this trainer's training samples and tournament set: trainer t owns the rows of its ranks in the
   distributed data set; every trainer trains on as many samples as the smallest part minus the
   tournament set */
PetscErrorCode NNParallelSetPartition(NN net, NNData d)
{
  NNParallel p = NULL;
  PetscInt   N, lo, hi, nmin;
  MPI_Comm   comm = PetscObjectComm((PetscObject)net);

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNDataGetNumSamples(d, &N));
  if (p->K == 1) {
    p->sample0 = 0;
    p->ntrain  = N;
    p->tour0   = N;
    PetscFunctionReturn(0);
  }
  PetscCheck(p->tsamples > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "Tournament training with %" PetscInt_FMT " trainers needs a tournament set: give -nn_tournament_samples <S> (NNSetTournament())", p->K);
  if (d->distributed) {
    PetscInt r0 = p->trainer * p->D * p->S, r1 = r0 + p->D * p->S;
    PetscMPIInt dsize;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)d), &dsize));
    PetscCheck(dsize == p->size, comm, PETSC_ERR_ARG_INCOMP, "Tournament training needs the training data on the network's communicator (%d ranks), not on %d", p->size, dsize);
    lo = (PetscInt)(((PetscInt64)N * r0) / dsize);
    hi = (PetscInt)(((PetscInt64)N * r1) / dsize);
  } else { /* every rank holds everything: split it the same way */
    lo = (PetscInt)(((PetscInt64)N * p->trainer) / p->K);
    hi = (PetscInt)(((PetscInt64)N * (p->trainer + 1)) / p->K);
  }
  nmin = hi - lo;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nmin, 1, MPIU_INT, MPI_MIN, comm));
  PetscCheck(nmin > p->tsamples, comm, PETSC_ERR_ARG_OUTOFRANGE, "Each of the %" PetscInt_FMT " trainers holds at least %" PetscInt_FMT " training samples, too few for a tournament set of -nn_tournament_samples %" PetscInt_FMT, p->K, nmin, p->tsamples);
  p->sample0 = lo;
  p->ntrain  = nmin - p->tsamples;
  p->tour0   = hi - p->tsamples;
  PetscFunctionReturn(0);
}
