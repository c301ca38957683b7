/*
   The process grid of a network: trainers x data groups x spatial ranks, their communicators, and
   the settings of data-parallel and tournament training kept with it (src/reducer and src/trainer
   do the work: src/reducer/interface/dataparallel.c, src/trainer/interface/tournament.c).
*/
#include <petnn/private/gridimpl.h>

/* the shard [first,last) of a batch of n samples that data group g of D computes */
void NNParallelShard(PetscInt n, PetscInt g, PetscInt D, PetscInt *first, PetscInt *last)
{
  *first = (PetscInt)(((PetscInt64)n * g) / D);
  *last  = (PetscInt)(((PetscInt64)n * (g + 1)) / D);
}

/* with one data group, one trainer and one model rank the layers keep the network's own communicator */
MPI_Comm NNGetLayerComm(NN net)
{
  return net->par && net->par->K * net->par->D * net->par->M > 1 ? net->par->scomm : PetscObjectComm((PetscObject)net);
}

/* the ranks over which partitioned layers split their weights: the model ranks, or the layers' own ranks without them */
MPI_Comm NNGetPartitionComm(NN net)
{
  return net->par && net->par->M > 1 ? net->par->mcomm : NNGetLayerComm(net);
}

/* ---------------------------------------------------------------- the grid */
static PetscErrorCode NNParallelFreeComms(NNParallel p)
{
  PetscFunctionBegin;
  if (p->tcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->tcomm));
  if (p->dcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->dcomm));
  if (p->scomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->scomm));
  if (p->mcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->mcomm));
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelDestroy(NNParallel *p)
{
  PetscFunctionBegin;
  if (!*p) PetscFunctionReturn(0);
  PetscCall(NNParallelFreeComms(*p));
  PetscCall(PetscFree((*p)->speed));
  PetscCall(PetscObjectDestroy((PetscObject *)&(*p)->reducer));
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

static PetscErrorCode NNParallelCreate(NN net, PetscInt K, PetscInt D, PetscInt M, NNParallel *par)
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
  PetscCheck(M >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-nn_model_ranks %" PetscInt_FMT " must be positive", M);
  PetscCheck(size % (K * D * M) == 0, comm, PETSC_ERR_ARG_INCOMP, "%" PetscInt_FMT " trainers (-nn_tournament_trainers) x %" PetscInt_FMT " data groups (-nn_data_groups) x %" PetscInt_FMT " model ranks (-nn_model_ranks) do not divide the %d ranks of the network: the number of ranks must be trainers x data groups x ranks per spatial group x model ranks", K, D, M, size);
  PetscCheck(!net->spatial.indm || K * D * M == 1, comm, PETSC_ERR_SUP, "A network with NNSetInputDM() runs on the DMDA's ranks: data groups, trainers and model ranks are not supported (-nn_data_groups %" PetscInt_FMT ", -nn_tournament_trainers %" PetscInt_FMT ", -nn_model_ranks %" PetscInt_FMT ")", D, K, M);
  PetscCall(NNParallelRegisterEvents());
  PetscCall(PetscNew(&p));
  p->K         = K;
  p->D         = D;
  p->M         = M;
  p->S         = S = size / (K * D * M);
  p->size      = size;
  p->rank      = rank;
  /* rank = ((trainer*D + group)*S + srank)*M + mrank */
  p->trainer   = (PetscMPIInt)(rank / (D * S * M));
  tr           = rank % (D * S * M);
  p->group     = (PetscMPIInt)(tr / (S * M));
  p->srank     = (PetscMPIInt)((tr % (S * M)) / M);
  p->mrank     = (PetscMPIInt)(tr % M);
  p->interval  = 100;
  p->balance_max = 1.5;
  p->tcomm = p->dcomm = p->scomm = p->mcomm = MPI_COMM_NULL;
  PetscCallMPI(MPI_Comm_split(comm, p->trainer, rank, &p->tcomm));
  PetscCallMPI(MPI_Comm_split(comm, (p->trainer * (PetscMPIInt)D + p->group) * (PetscMPIInt)M + p->mrank, rank, &p->scomm));
  PetscCallMPI(MPI_Comm_split(comm, (p->trainer * (PetscMPIInt)S + p->srank) * (PetscMPIInt)M + p->mrank, rank, &p->dcomm));
  PetscCallMPI(MPI_Comm_split(comm, (p->trainer * (PetscMPIInt)D + p->group) * (PetscMPIInt)S + p->srank, rank, &p->mcomm));
  *par = p;
  PetscFunctionReturn(0);
}

/* the network's grid, the default one (1 trainer, 1 data group: every rank in one spatial group) if none was set */
PetscErrorCode NNParallelGet(NN net, NNParallel *p)
{
  PetscFunctionBegin;
  if (!net->par) PetscCall(NNParallelCreate(net, 1, 1, 1, &net->par));
  *p = net->par;
  PetscFunctionReturn(0);
}

/* replaces the grid by one of K trainers, D groups and M model ranks, keeping the settings, and moves the layers */
static PetscErrorCode NNParallelRebuild(NN net, PetscInt K, PetscInt D, PetscInt M)
{
  NNParallel p = NULL, old = net->par;
  PetscBool  newm = (PetscBool)((old ? old->M : 1) != M);

  PetscFunctionBegin;
  PetscCall(NNParallelCreate(net, K, D, M, &p));
  if (old) { /* keep the settings */
    p->reducer   = old->reducer; /* with its settings */
    old->reducer = NULL;
    p->balance   = old->balance;
    p->balance_max = old->balance_max;
    p->interval  = old->interval;
    p->tsamples  = old->tsamples;
  }
  PetscCall(NNParallelDestroy(&net->par));
  net->par = p;
  for (PetscInt i = 0; i < net->added.n + net->repart.n; i++) { /* the added layers and the repartitions NNSetUp() inserted */
    NNLayer l = i < net->added.n ? net->added.layers[i] : net->repart.layers[i - net->added.n];
    PetscCall(NNLayerRehome(l, NNGetLayerComm(net)));
    if (newm) l->setupcalled = PETSC_FALSE; /* the partition communicator changed */
  }
  net->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNSetProcessGrid - splits the network's ranks into trainers x data groups x spatial ranks (x model ranks, `NNSetModelRanks()`)

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
   rank = (trainer*D + group)*S + spatial rank, so a spatial group is S consecutive ranks
   (with M model ranks, `NNSetModelRanks()`: P = K*D*S*M and rank = ((trainer*D + group)*S + spatial rank)*M + model rank).
   Layers live on their spatial group's communicator (layers added before this call are moved
   there). The minibatch size (-nn_batch_size) stays the GLOBAL batch size of a trainer, so a run
   on any D computes the same trajectory as one rank (up to rounding), except for batch
   normalization, whose statistics are those of the group's shard (as PyTorch DDP without
   SyncBatchNorm).

   Level: intermediate

.seealso: `NNGetProcessGrid()`, `NNGetProcessGridComms()`, `NNSetModelRanks()`, `NNSetBucketSize()`, `NNSetTournament()`, `NNTrain()`
@*/
PetscErrorCode NNSetProcessGrid(NN net, PetscInt trainers, PetscInt groups)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (net->par && net->par->K == trainers && net->par->D == groups) PetscFunctionReturn(0);
  PetscCall(NNParallelRebuild(net, trainers, groups, net->par ? net->par->M : 1));
  PetscFunctionReturn(0);
}

/*@
   NNSetModelRanks - sets the number of model ranks M: the ranks over which partitioned layers split their weights

   Collective

   Input Parameters:
+  net - the network
-  M - model ranks per spatial rank (default 1)

   Options Database Key:
.  -nn_model_ranks <M> - model ranks (default 1)

   Notes:
   The network's P ranks become K trainers x D data groups x S spatial ranks x M model ranks,
   P = K*D*S*M, in the order rank = ((trainer*D + group)*S + spatial rank)*M + model rank. The M model
   ranks of a group hold the same samples and the same spatial subdomain; a layer partitioned with
   -<layer>_partition (`NNLayerSetPartition()`: dense rows/columns, convolution filters/channels) splits
   its weights over them, and every other layer computes the same values on each of them. Layers and
   their DMDAs live on the S ranks of a spatial group with the same model rank; the data-parallel
   gradient sum pairs the ranks of the D groups with the same spatial and model rank. With M = 1 a
   partitioned layer splits its weights over its own communicator (the spatial group).

   Level: intermediate

.seealso: `NNGetModelRanks()`, `NNSetProcessGrid()`, `NNLayerSetPartition()`
@*/
PetscErrorCode NNSetModelRanks(NN net, PetscInt M)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if ((net->par ? net->par->M : 1) == M && net->par) PetscFunctionReturn(0);
  PetscCall(NNParallelRebuild(net, net->par ? net->par->K : 1, net->par ? net->par->D : 1, M));
  PetscFunctionReturn(0);
}

/*@
   NNGetModelRanks - gets the number of model ranks (`NNSetModelRanks()`)

   Not Collective

   Level: intermediate

.seealso: `NNSetModelRanks()`, `NNGetProcessGrid()`
@*/
PetscErrorCode NNGetModelRanks(NN net, PetscInt *M)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(M, 2);
  *M = net->par ? net->par->M : 1;
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
   NNSetLoadBalance - lets the data groups split each minibatch in proportion to their speeds

   Logically Collective

   Input Parameters:
+  net - the network
.  flg - PETSC_TRUE to balance
-  maxshare - the largest shard, as a multiple of an equal shard (batch/D), at least 1; it sets the
              per-rank batch capacity, hence the memory of the activations (PETSC_DEFAULT: 1.5)

   Options Database Keys:
+  -nn_load_balance <bool> - balance the shards (default false)
-  -nn_load_balance_max_share <f> - the largest shard as a multiple of batch/D (default 1.5)

   Notes:
   Each group's throughput (samples per second of its forward and backward pass, without the
   all-reduce) is averaged over the last steps (weight 1/2 per step) and the next global minibatch
   is split in proportion, every group getting at least one sample when there are enough. The
   training trajectory is the same as with equal shards up to rounding, but depends on the timings,
   so it is not bitwise reproducible, and batch normalization sees shards of varying size. Useful
   when the ranks' cores run at different or varying speeds; -nn_monitor reports the shares.

   Level: intermediate

.seealso: `NNSetProcessGrid()`, `NNTrain()`
@*/
PetscErrorCode NNSetLoadBalance(NN net, PetscBool flg, PetscReal maxshare)
{
  NNParallel p = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveBool(net, flg, 2);
  PetscCall(NNParallelGet(net, &p));
  if (maxshare != (PetscReal)PETSC_DEFAULT) {
    PetscCheck(maxshare >= 1, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_load_balance_max_share %g must be at least 1 (a multiple of the equal shard batch/data groups)", (double)maxshare);
    p->balance_max = maxshare;
  }
  p->balance = flg;
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

/* options of the grid, load balancing and tournaments; called by NNSetFromOptions() before it adds layers */
PetscErrorCode NNSetFromOptions_Parallel(NN net, NNOptionItems PetscOptionsObject)
{
  NNParallel p = NULL;
  PetscInt   K, D, M, S;
  PetscBool  f1, f2;

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  K = p->K;
  D = p->D;
  PetscCall(PetscOptionsInt("-nn_data_groups", "Data-parallel groups per trainer (the other ranks of a group split samples spatially)", "NNSetProcessGrid", D, &D, &f1));
  PetscCall(PetscOptionsInt("-nn_tournament_trainers", "Independent trainers of tournament training (LTFB)", "NNSetProcessGrid", K, &K, &f2));
  if (f1 || f2) PetscCall(NNSetProcessGrid(net, K, D));
  p = net->par;
  M = p->M;
  PetscCall(PetscOptionsInt("-nn_model_ranks", "Model ranks: partitioned layers (-<layer>_partition) split their weights over them", "NNSetModelRanks", M, &M, &f1));
  if (f1) PetscCall(NNSetModelRanks(net, M));
  p = net->par;
  {
    PetscBool bal = p->balance;
    PetscReal bmax = p->balance_max;
    PetscCall(PetscOptionsBool("-nn_load_balance", "Data groups split each minibatch in proportion to their measured speeds (not bitwise reproducible)", "NNSetLoadBalance", bal, &bal, &f1));
    PetscCall(PetscOptionsReal("-nn_load_balance_max_share", "Largest balanced shard as a multiple of batch/data groups (sets the per-rank batch memory)", "NNSetLoadBalance", bmax, &bmax, &f2));
    if (f1 || f2) PetscCall(NNSetLoadBalance(net, bal, bmax));
  }
  M = p->interval;
  S = p->tsamples;
  PetscCall(PetscOptionsInt("-nn_tournament_interval", "Optimizer steps between tournaments", "NNSetTournament", M, &M, &f1));
  PetscCall(PetscOptionsInt("-nn_tournament_samples", "Samples in each trainer's tournament set", "NNSetTournament", S, &S, &f2));
  if (f1 || f2) PetscCall(NNSetTournament(net, M, S));
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelView(NN net, PetscViewer viewer)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (!p || p->K * p->D * p->M == 1) PetscFunctionReturn(0);
  if (p->M > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "process grid: %" PetscInt_FMT " trainer(s) x %" PetscInt_FMT " data group(s) x %" PetscInt_FMT " spatial rank(s) x %" PetscInt_FMT " model ranks\n", p->K, p->D, p->S, p->M));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "process grid: %" PetscInt_FMT " trainer(s) x %" PetscInt_FMT " data group(s) x %" PetscInt_FMT " spatial rank(s)\n", p->K, p->D, p->S));
  if (p->reducer && p->D > 1) PetscCall(PetscObjectView((PetscObject)p->reducer, viewer));
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
