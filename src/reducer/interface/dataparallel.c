/*
   Data-parallel training, as PyTorch DDP does it: every data group computes the loss and gradient
   of its shard [first,last) of the global minibatch; the gradient of the mean loss over the global
   batch is the sum over groups of (last-first)/n times each group's mean gradient. The parameter
   Vec is laid out layer after layer, so the gradient of the last layers is final first: buckets
   (contiguous slices of about -nn_bucket_size MB, filled from the last layer backwards) are
   scaled and handed to MPI_Iallreduce as soon as their first layer's backward pass is done, and
   MPI_Testall between the layers' backward passes progresses them; at the end of the backward pass
   all of them are waited for, before the optimizer step. Every rank then takes the same optimizer
   step on the same gradient, so the parameters stay identical on all ranks.

   How it meets the network: NNParallelStepBegin() registers the backward-pass callbacks
   (NNSetBackwardCallbacks(), called by NNLossGradient() after the loss, after every top-level
   layer's backward pass and at its end) and the random-number shard (NNSetRandomShard(): the
   layers skip the draws of the other groups' samples, so dropout masks are those one rank would
   draw); NNParallelStepEnd() removes both.
*/
#include <petnn/private/reducerimpl.h>

/* the backward-pass callbacks of a data-parallel step (NNSetBackwardCallbacks()); ctx is the reducer */
static PetscErrorCode NNParallelBackwardBegin(NN net PETSC_UNUSED, PetscReal loss, PetscReal *dyscale, void *ctx)
{
  NNReducer r = (NNReducer)ctx;

  PetscFunctionBegin;
  *dyscale = r->weight; /* the gradient of the global mean: this shard's mean weighted by its share */
  if (PetscIsInfOrNanReal(loss)) PetscTryTypeMethod(r, markbad); /* training stops after this step: no shared optimizer step */
  PetscFunctionReturn(0);
}

/* after layer i's backward pass: the type launches what the layer completes (buckets) or publishes it */
static PetscErrorCode NNParallelLayerDone(NN net PETSC_UNUSED, PetscInt i, PetscScalar *g, void *ctx)
{
  NNReducer r = (NNReducer)ctx;

  PetscFunctionBegin;
  PetscTryTypeMethod(r, layerdone, i, g);
  PetscFunctionReturn(0);
}

/* the same with the gradient on the device (the nccl type, training resident on the GPUs) */
static PetscErrorCode NNParallelLayerDoneDevice(NN net PETSC_UNUSED, PetscInt i, void *dgrad, void *ctx)
{
  NNReducer r = (NNReducer)ctx;

  PetscFunctionBegin;
  PetscTryTypeMethod(r, layerdonedevice, i, dgrad);
  PetscFunctionReturn(0);
}

/* end of the backward pass: the gradient summed over the data groups */
static PetscErrorCode NNParallelBackwardDone(NN net, PetscScalar *g, void *ctx)
{
  NNReducer r = (NNReducer)ctx;

  PetscFunctionBegin;
  if (!r->nbuckets) PetscFunctionReturn(0); /* no parameters */
  PetscCall(PetscLogEventBegin(NN_AllreduceWait, net, 0, 0, 0));
  PetscUseTypeMethod(r, backwarddone, g);
  r->nreduce++;
  PetscCall(PetscLogEventEnd(NN_AllreduceWait, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* random numbers each top-level layer draws per sample in training mode (dropout: one per entry) */
static PetscErrorCode NNReducerCountDraws(NNReducer r)
{
  NN         net = r->net;
  NNParallel p   = net->par;

  PetscFunctionBegin;
  PetscCall(PetscFree(r->draws));
  PetscCall(PetscCalloc1(net->nlayers, &r->draws));
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscCall(NNLayerGetRandomDraws(net->layers[i], &r->draws[i]));
    if (r->draws[i]) {
      DM dm;
      PetscCall(VecGetDM(net->act[i + 1], &dm));
      PetscCheck(!dm || p->D == 1, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "Layer %s (%s) draws random numbers on a spatial (DMDA) activation, which depend on the decomposition: not supported with -nn_data_groups %" PetscInt_FMT "; put it after %s", ((PetscObject)net->layers[i])->name, ((PetscObject)net->layers[i])->type_name, p->D, NNLAYERSPATIALFLATTEN);
    }
  }
  PetscFunctionReturn(0);
}

/* buckets of about bucket_mb MB from the last layer backwards; a layer is never split. Top-level
   layer i owns the parameters [poff_i, poff_{i+1}) (its children and their copies included). With a
   sharded optimizer, also each slice's part of each bucket. */
static PetscErrorCode NNReducerMakeBuckets(NNReducer r)
{
  NN         net   = r->net;
  NNParallel p     = net->par;
  PetscInt   limit = (PetscInt)PetscMin(r->bucket_mb * 1e6 / sizeof(PetscScalar), (PetscReal)PETSC_MPI_INT_MAX);
  PetscInt   nb = 0, hi = -1, lo = 0, trig = -1, end;

  PetscFunctionBegin;
  PetscCall(PetscFree(r->buckets));
  PetscCall(PetscFree(r->req));
  PetscCall(PetscMalloc1(net->nlayers, &r->buckets));
  PetscCall(PetscMalloc1(net->nlayers, &r->req));
  PetscCall(VecGetSize(net->theta, &end));
  for (PetscInt i = net->nlayers - 1; i >= 0; i--) {
    PetscInt l0 = net->layers[i]->poff, l1 = i + 1 < net->nlayers ? net->layers[i + 1]->poff : end;
    if (l1 == l0) continue;
    if (hi < 0) hi = l1;
    lo   = l0;
    trig = i;
    if (hi - lo >= limit) {
      r->buckets[nb++] = (NNBucket){lo, hi, trig};
      hi               = -1;
    }
  }
  if (hi >= 0) r->buckets[nb++] = (NNBucket){lo, hi, trig};
  r->nbuckets = nb;
  for (PetscInt b = 0; b < nb; b++) r->req[b] = MPI_REQUEST_NULL;
  PetscCall(PetscFree(r->rcount));
  PetscCall(PetscFree2(r->pcount, r->pdispl));
  PetscCall(PetscFree(r->gslice));
  if (r->sharded) {
    PetscCall(PetscMalloc1(nb * p->D + 1, &r->rcount));
    PetscCall(PetscMalloc2(p->D, &r->pcount, p->D, &r->pdispl));
    for (PetscInt g = 0; g < p->D; g++) {
      PetscInt a = (PetscInt)(((PetscInt64)end * g) / p->D), z = (PetscInt)(((PetscInt64)end * (g + 1)) / p->D);
      r->pdispl[g] = (PetscMPIInt)a;
      r->pcount[g] = (PetscMPIInt)(z - a);
      for (PetscInt b = 0; b < nb; b++) r->rcount[b * p->D + g] = (PetscMPIInt)PetscMax(0, PetscMin(z, r->buckets[b].hi) - PetscMax(a, r->buckets[b].lo));
    }
    r->slo = r->pdispl[p->group];
    r->shi = r->slo + r->pcount[p->group];
    PetscCall(PetscMalloc1(r->shi - r->slo + 1, &r->gslice));
  }
  PetscFunctionReturn(0);
}

/* what the all-reduce would cost if nothing overlapped: the better of two blocking ones */
static PetscErrorCode NNReducerTimeBlocking(NNReducer r, PetscInt np)
{
  NNParallel     p = r->net->par;
  PetscScalar   *w;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  r->t_block = PETSC_MAX_REAL;
  PetscCall(PetscCalloc1(np, &w));
  for (int k = 0; k < 2; k++) {
    PetscCallMPI(MPI_Barrier(p->dcomm));
    PetscCall(PetscTime(&t0));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, w, (PetscMPIInt)np, MPIU_SCALAR, MPIU_SUM, p->dcomm));
    PetscCall(PetscTime(&t1));
    r->t_block = PetscMin(r->t_block, t1 - t0);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &r->t_block, 1, MPI_DOUBLE, MPI_MAX, p->dcomm));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(0);
}

/* start of NNTrain(): parameters broadcast from the trainer's first rank; with data groups the
   reducer's type (-nn_allreduce), the layers' random draws, the buckets, the type's set-up (a
   shared-memory window) and the cost of a blocking all-reduce */
PetscErrorCode NNParallelTrainBegin(NN net, NNOpt opt)
{
  NNParallel   p = NULL;
  NNReducer    r = NULL;
  PetscScalar *a;
  PetscInt     np, nb;
  PetscBool    shm;
  MPI_Comm     bcomm;

  PetscFunctionBegin;
  PetscCall(NNGetReducer(net, &r));
  p = net->par;
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(VecGetSize(net->buf, &nb));
  PetscCall(PetscLogEventBegin(NN_Broadcast, net, 0, 0, 0));
  /* every rank of the trainer starts from rank 0's parameters; with partitioned layers the ranks of a
     group hold different pieces, so each piece comes from the first data group's rank holding it */
  bcomm = net->part.on ? p->dcomm : p->tcomm;
  PetscCall(VecGetArray(net->theta, &a));
  if (np) PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)np, MPIU_SCALAR, 0, bcomm));
  PetscCall(VecRestoreArray(net->theta, &a));
  PetscCall(VecGetArray(net->buf, &a));
  if (nb) PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)nb, MPIU_SCALAR, 0, bcomm));
  PetscCall(VecRestoreArray(net->buf, &a));
  PetscCall(PetscLogEventEnd(NN_Broadcast, net, 0, 0, 0));
  r->t_exposed = 0;
  r->t_wait    = 0;
  r->t_early   = 0;
  r->nreduce   = 0;
  r->nbuckets  = 0;
  r->sharded   = PETSC_FALSE;
  r->opt       = opt;
  if (p->D == 1) PetscFunctionReturn(0); /* one group: nothing to reduce, every draw is the group's own */

  shm = PETSC_FALSE;
  if (r->artype == NN_ALLREDUCE_NCCL) { /* on the GPUs, not sharded (NNReducerSetUp_NCCL() refuses it if asked) */
#if !defined(PETNN_HAVE_NCCL)
    SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_SUP_SYS, "-nn_allreduce nccl: this PetNN was built without NCCL (or without CUDA); valid here: auto, mpi, shared");
#endif
    PetscCall(NNReducerSetType(r, NNREDUCERNCCL));
    r->sharded = r->shard_set ? r->shard : PETSC_FALSE;
  } else {
    PetscCall(NNReducerShmUsable(r, &shm));
    PetscCall(NNReducerSetType(r, shm ? NNREDUCERSHM : NNREDUCERMPI));
    r->sharded = r->shard_set ? r->shard : shm; /* sharding is free with shared memory */
  }
  r->shmused = shm;
  PetscCall(NNReducerCountDraws(r));
  PetscCall(NNReducerMakeBuckets(r));
  PetscTryTypeMethod(r, setup);
  if (np) PetscCall(NNReducerTimeBlocking(r, np));
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelTrainEnd(NN net)
{
  NNReducer r = net->par ? net->par->reducer : NULL;

  PetscFunctionBegin;
  if (!r) PetscFunctionReturn(0);
  PetscCall(NNSetBackwardCallbacks(net, NULL)); /* a step that failed did not end */
  PetscCall(NNSetRandomShard(net, 0, 0));
  PetscTryTypeMethod(r, reset);
  PetscCall(NNParallelGatherOptState(net)); /* the whole optimizer state on every rank again */
  r->sharded = PETSC_FALSE;
  r->opt     = NULL;
  PetscFunctionReturn(0);
}

/* the optimizer step: on the whole parameter Vec, or (sharded) as the reducer's type takes it */
PetscErrorCode NNParallelOptStep(NN net, NNOpt opt)
{
  NNReducer r = net->par ? net->par->reducer : NULL;

  PetscFunctionBegin;
  if (!r || !r->sharded) PetscCall(NNOptStep(opt, net->theta, net->dtheta));
  else PetscTryTypeMethod(r, step);
  PetscFunctionReturn(0);
}

/* a sharded optimizer keeps its state current only on each group's slice: gather it (before a
   checkpoint, at the end of training) */
PetscErrorCode NNParallelGatherOptState(NN net)
{
  NNReducer r = net->par ? net->par->reducer : NULL;

  PetscFunctionBegin;
  if (r && r->sharded) PetscTryTypeMethod(r, gatheroptstate);
  PetscFunctionReturn(0);
}

/* this group's data or loss are bad: training stops after this step, which takes no optimizer step */
PetscErrorCode NNParallelMarkBadStep(NN net)
{
  NNReducer r = net->par ? net->par->reducer : NULL;

  PetscFunctionBegin;
  if (r) PetscTryTypeMethod(r, markbad);
  PetscFunctionReturn(0);
}

/* the parameter Vec gets its own array for a while (a gradient check, a tournament) and shares it again */
PetscErrorCode NNParallelDetachParameters(NN net)
{
  NNReducer r = net->par ? net->par->reducer : NULL;

  PetscFunctionBegin;
  if (r) PetscTryTypeMethod(r, detach);
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelAttachParameters(NN net)
{
  NNReducer r = net->par ? net->par->reducer : NULL;

  PetscFunctionBegin;
  if (r) PetscTryTypeMethod(r, attach);
  PetscFunctionReturn(0);
}

/* a training step on a global batch of n samples, of which this group computes [p->first, p->last)
   (NNParallelStepShard()): with data groups, the backward-pass callbacks that sum the gradient and
   the random-number shard are in place until NNParallelStepEnd() */
PetscErrorCode NNParallelStepBegin(NN net, PetscInt n)
{
  NNParallel          p = net->par;
  NNReducer           r = p->reducer;
  NNBackwardCallbacks cb = {NNParallelBackwardBegin, NNParallelLayerDone, NNParallelBackwardDone, r, NULL};

  PetscFunctionBegin;
  if (p->D == 1) PetscFunctionReturn(0);
  r->n         = n;
  r->weight    = (PetscReal)(p->last - p->first) / (PetscReal)n; /* scales dL/dy before the backward pass */
  r->nlaunched = 0;
  if (r->ops->layerdonedevice) cb.layerdonedevice = NNParallelLayerDoneDevice;
  PetscCall(NNSetBackwardCallbacks(net, &cb));
  PetscCall(NNSetRandomShard(net, p->first, n - p->last));
  PetscFunctionReturn(0);
}

/* a step in which this group has no samples (n < D): zero gradient into the all-reduce, and the
   random numbers one rank would draw */
PetscErrorCode NNParallelStepEmpty(NN net)
{
  NNReducer    r = net->par->reducer;
  PetscScalar *g;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++)
    if (r->draws[i] && net->training) NNRandomSkip(&net->rng, (PetscInt64)r->n * r->draws[i]);
  PetscCall(VecZeroEntries(net->dtheta));
  PetscCall(VecGetArray(net->dtheta, &g));
  PetscCall(NNParallelBackwardDone(net, g, r));
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
  if (p->D == 1) PetscFunctionReturn(0);
  PetscCall(NNSetBackwardCallbacks(net, NULL));
  PetscCall(NNSetRandomShard(net, 0, 0));
  PetscCall(VecGetSize(net->buf, &nb));
  if (!nb) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(NN_Broadcast, net, 0, 0, 0));
  PetscCall(VecGetArray(net->buf, &a));
  PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)nb, MPIU_SCALAR, 0, p->dcomm));
  PetscCall(VecRestoreArray(net->buf, &a));
  PetscCall(PetscLogEventEnd(NN_Broadcast, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

