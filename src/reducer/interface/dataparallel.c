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
#include <petnn/private/parallelimpl.h>

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
static PetscErrorCode NNBucketsProgress(NN net, PetscInt i, PetscScalar *g)
{
  NNParallel     p = net->par;
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

/* the backward-pass callbacks of a data-parallel step (NNSetBackwardCallbacks()) */
static PetscErrorCode NNParallelBackwardBegin(NN net, PetscReal loss, Vec dy, void *ctx PETSC_UNUSED)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (p->weight != 1.0) PetscCall(VecScale(dy, p->weight)); /* the gradient of the global mean: this shard's mean weighted by its share */
  if (PetscIsInfOrNanReal(loss)) PetscCall(NNShmMarkBadStep(net)); /* training stops after this step: no shared optimizer step */
  PetscFunctionReturn(0);
}

static PetscErrorCode NNParallelLayerDone(NN net, PetscInt i, PetscScalar *g, void *ctx PETSC_UNUSED)
{
  PetscFunctionBegin;
  PetscCall(NNBucketsProgress(net, i, g));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNParallelBackwardDone(NN net, PetscScalar *g, void *ctx PETSC_UNUSED)
{
  PetscFunctionBegin;
  PetscCall(NNBucketsWait(net, g));
  PetscFunctionReturn(0);
}

/* random numbers each top-level layer draws per sample in training mode (dropout: one per entry) */
static PetscErrorCode NNParallelCountDraws(NN net)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscCall(NNLayerGetRandomDraws(net->layers[i], &p->draws[i]));
    if (p->draws[i]) {
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

/* start of NNTrain(): parameters broadcast from the trainer's first rank, the layers' random
   draws, buckets and the cost of a blocking all-reduce */
PetscErrorCode NNParallelTrainBegin(NN net)
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
  PetscCall(PetscCalloc1(net->nlayers, &p->draws));
  PetscCall(NNShmAllreduceCheck(net));
  p->sharded = p->shard_set ? p->shard : (PetscBool)(p->shmcomm != MPI_COMM_NULL); /* sharding is free with shared memory */
  PetscCall(NNParallelCountDraws(net));
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
  PetscFunctionReturn(0);
}

PetscErrorCode NNParallelTrainEnd(NN net)
{
  PetscFunctionBegin;
  if (!net->par) PetscFunctionReturn(0);
  PetscCall(NNSetBackwardCallbacks(net, NULL)); /* a step that failed did not end */
  PetscCall(NNSetRandomShard(net, 0, 0));
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

/* a training step on a global batch of n samples, of which this group computes [p->first, p->last)
   (NNParallelStepShard()): with data groups, the backward-pass callbacks that sum the gradient and
   the random-number shard are in place until NNParallelStepEnd() */
PetscErrorCode NNParallelStepBegin(NN net, PetscInt n)
{
  NNParallel                p  = net->par;
  const NNBackwardCallbacks cb = {NNParallelBackwardBegin, NNParallelLayerDone, NNParallelBackwardDone, NULL};

  PetscFunctionBegin;
  p->n         = n;
  p->weight    = (PetscReal)(p->last - p->first) / (PetscReal)n; /* scales dL/dy before the backward pass */
  p->nlaunched = 0;
  if (p->D == 1) PetscFunctionReturn(0);
  PetscCall(NNSetBackwardCallbacks(net, &cb));
  PetscCall(NNSetRandomShard(net, p->first, n - p->last));
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

