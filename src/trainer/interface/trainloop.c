/*
   The minibatch training loop of NNTrain(), one named piece per concern:

     NNTrainEpochBegin()    the restart cursor: a fresh epoch draws its permutation, a resumed one
                            regenerates it from the generator state stored at its start
     NNTrainStepCompute()   this data group's shard of the batch: fetch, gradient check, loss and
                            backward pass with the all-reduce (or zeros when it has no samples)
     NNTrainStepReduce()    one reduction over all ranks per step: every trainer's loss and count,
                            bad data anywhere, the checkpoint clock, load-balancing times
     NNTrainStepCheck()     stops every rank on bad data or a non-finite loss
     NNTrainStepFinish()    the epoch sums, the optimizer step, the counters, the step monitor and
                            the tournament
     NNTrainCheckpointStep(), NNTrainEpochEnd()  the checkpoint policy (steps, seconds, epochs)
     NNTrainDeviceResident(), NNTrainDeviceSync()  on a device (-nn_device cuda), on one rank or with data groups
                            summing by NCCL, and an optimizer that has a device step, the parameters, their gradient
                            and the optimizer state stay on the device; they are copied into their Vecs before
                            checkpoints and at the end of every epoch (monitors, tests and NNTrain()'s caller see the
                            Vecs current)

   Everything here is collective on the network's communicator in the same order on every rank.
*/
#include <petnn/private/trainerimpl.h>

/* whether this run keeps the parameters, gradient and optimizer steps on the device: a network on a device, an
   optimizer type with a device step, no spectral normalization (it rescales the parameter Vec every step), and either
   one rank or data groups of one rank each summing on the GPUs (the nccl reducer; the other reducers and tournaments
   exchange host Vecs). The nccl reducer works only this way: otherwise an error names what is missing. */
static PetscErrorCode NNTrainDeviceResident(NN net, NNTrainLoop *c)
{
  NNParallel  p = net->par;
  MPI_Comm    comm = PetscObjectComm((PetscObject)net);
  PetscMPIInt size;
  PetscBool   sn, nccl = PETSC_FALSE;

  PetscFunctionBegin;
  c->devstep = PETSC_FALSE;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNHasSpectralNorm(net, &sn));
  if (p && p->reducer && p->D > 1) PetscCall(PetscObjectTypeCompare((PetscObject)p->reducer, NNREDUCERNCCL, &nccl));
  if (nccl) {
    PetscCheck(NNOptHasDeviceStep(c->tr->opt), comm, PETSC_ERR_ARG_INCOMP, "-nn_allreduce nccl steps the optimizer on the GPUs, and optimizer type %s has no device step: use sgd, adam or adamw, or -nn_allreduce mpi", ((PetscObject)c->tr->opt)->type_name);
    PetscCheck(!sn, comm, PETSC_ERR_ARG_INCOMP, "-nn_allreduce nccl keeps the parameters on the GPUs, which spectral normalization (-<layer>_spectral_norm) cannot rescale there: use -nn_allreduce mpi");
    PetscCheck(p->D == size && p->K == 1, comm, PETSC_ERR_ARG_INCOMP, "-nn_allreduce nccl needs one rank per data group and one trainer (%d ranks, %" PetscInt_FMT " data groups, %" PetscInt_FMT " trainers): set -nn_data_groups %d, or use -nn_allreduce mpi", (int)size, p->D, p->K, (int)size);
    c->devstep = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  if (net->dev.type == NN_DEVICE_CPU || !NNOptHasDeviceStep(c->tr->opt)) PetscFunctionReturn(0);
  c->devstep = (PetscBool)(size == 1 && !sn);
  PetscFunctionReturn(0);
}

/* the device's parameters and optimizer state copied into their Vecs (when newer); a no-op off the device */
static PetscErrorCode NNTrainDeviceSync(NN net, NNTrainLoop *c)
{
  PetscFunctionBegin;
  if (!c->devstep) PetscFunctionReturn(0);
  PetscCall(NNDeviceSyncHost(net));
  PetscCall(NNOptDeviceSyncHost(c->tr->opt));
  PetscFunctionReturn(0);
}

/* the restart cursor at the start of an epoch: perm is the epoch's permutation of the N training samples */
static void NNTrainEpochBegin(NN net, NNTrainLoop *c)
{
  NNRandom r;

  if (c->cur->batch == 0) { /* a fresh epoch; a restarted one regenerates its permutation from the stored state */
    c->cur->rng_epoch     = net->rng;
    c->cur->epoch_loss    = 0;
    c->cur->epoch_correct = 0;
  }
  r = c->cur->rng_epoch;
  for (PetscInt i = 0; i < c->N; i++) c->perm[i] = i;
  if (c->tr->shuffle) NNRandomShuffle(&r, c->N, c->perm);
  if (c->cur->batch == 0) net->rng = r;
}

/* this group's shard of batch b: its loss, correctly classified samples, first bad sample (-1: none)
   and compute time (for load balancing) */
static PetscErrorCode NNTrainStepCompute(NN net, NNTrainLoop *c, PetscInt b, NNTrainStepInfo *st)
{
  NNParallel p = net->par;
  PetscInt   start = b * c->B, m;

  PetscFunctionBegin;
  st->n = PetscMin(c->B, c->N - start);
  NNParallelStepShard(p, st->n);
  m = st->m = p->last - p->first;
  for (PetscInt i = 0; i < m; i++) c->idx[i] = p->sample0 + c->perm[start + p->first + i];
  PetscCall(NNDataGetBatchOn(c->train, p->tcomm, m, c->idx, c->x, c->t));
  st->bad = m ? c->train->badsample : -1;
  if (c->tr->gradcheck && c->cur->epoch == 0 && b == 0) { /* a local check of this group's shard, on parameters of its own, before the step's all-reduce is in place */
    PetscCall(NNDeviceSetResident(net, PETSC_FALSE)); /* it reads the gradient Vec */
    PetscCall(NNParallelDetachParameters(net));
    if (m && st->bad < 0) {
      PetscReal ep, ex;
      PetscCall(NNGradientCheck(net, m, c->x, c->t, c->tr->gradcheck_tol, &ep, &ex));
    }
    PetscCall(NNParallelAttachParameters(net));
    PetscCall(NNDeviceSetResident(net, c->devstep));
  }
  PetscCall(NNParallelStepBegin(net, st->n));
  if (m && st->bad < 0) {
    PetscLogDouble c0, c1, e0 = p->reducer->t_exposed;
    PetscCall(PetscTime(&c0));
    PetscCall(NNLossGradient(net, m, c->x, c->t, &st->L, NULL));
    PetscCall(PetscTime(&c1));
    st->tc = (c1 - c0) - (p->reducer->t_exposed - e0); /* the group's compute time, for load balancing */
    if (net->lossops.classification) {
      const PetscScalar *ya, *ta;
      PetscCall(VecGetArrayRead(net->act[net->nlayers], &ya));
      PetscCall(VecGetArrayRead(c->t, &ta));
      st->correct = NNCountCorrect(m, c->k, ya, ta);
      PetscCall(VecRestoreArrayRead(c->t, &ta));
      PetscCall(VecRestoreArrayRead(net->act[net->nlayers], &ya));
    }
  } else if (p->D > 1) { /* no samples here (or bad ones): zeros into the all-reduce */
    if (st->bad >= 0) PetscCall(NNParallelMarkBadStep(net));
    PetscCall(NNParallelStepEmpty(net));
  }
  PetscCall(NNParallelStepEnd(net));
  PetscFunctionReturn(0);
}

/* the step's one reduction over all ranks, laid out as [loss sum, correct] per trainer, bad data,
   checkpoint due, then the load-balancing slots */
static PetscErrorCode NNTrainStepReduce(NN net, NNTrainLoop *c, NNTrainStepInfo *st)
{
  NNParallel     p = net->par;
  PetscLogDouble now;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(c->v, c->nv));
  NNParallelBalancePut(p, c->v + 2 * p->K + 2, st->tc);
  if (!p->srank && !p->mrank) {
    c->v[2 * p->trainer]     = st->L * st->m;
    c->v[2 * p->trainer + 1] = st->correct;
  }
  c->v[2 * p->K] = st->bad >= 0 ? 1 : 0;
  PetscCall(PetscTime(&now));
  c->v[2 * p->K + 1] = (c->tr->checkpoint_seconds > 0 && now - c->tck >= c->tr->checkpoint_seconds) ? 1 : 0;
  if (p->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, c->v, (PetscMPIInt)c->nv, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)net)));
  NNParallelBalanceUpdate(p, c->v + 2 * p->K + 2, st->n);
  PetscFunctionReturn(0);
}

/* bad data on any rank, or a non-finite loss on any trainer, stops training on every rank */
static PetscErrorCode NNTrainStepCheck(NN net, NNTrainLoop *c, NNTrainStepInfo *st)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (c->v[2 * p->K] > 0) PetscCall(NNTrainStop(net, c->train, st->bad, NULL));
  for (PetscInt tr = 0; tr < p->K; tr++) {
    PetscReal Lg = c->v[2 * tr] / st->n;
    char      why[256];
    if (!PetscIsInfOrNanReal(Lg)) continue;
    PetscCall(PetscSNPrintf(why, sizeof(why), "Training stopped: the loss is %g at epoch %" PetscInt_FMT ", step %" PetscInt_FMT "%s; try a smaller -opt_learning_rate.", (double)Lg, c->cur->epoch + 1, c->cur->step + 1, p->K > 1 ? " on one of the trainers" : ""));
    PetscCall(NNTrainStop(net, c->train, -1, why));
  }
  PetscFunctionReturn(0);
}

/* the epoch sums, the optimizer step and the counters of batch b; the step monitor; the tournament */
static PetscErrorCode NNTrainStepFinish(NN net, NNTrainLoop *c, PetscInt b, NNTrainStepInfo *st)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  c->cur->epoch_loss += c->v[2 * p->trainer];
  c->cur->epoch_correct += (PetscInt)c->v[2 * p->trainer + 1];
  if (c->devstep) PetscCall(NNOptStepDevice(c->tr->opt, net));
  else PetscCall(NNParallelOptStep(net, c->tr->opt));
  PetscCall(NNApplySpectralNorm(net)); /* -<layer>_spectral_norm: a no-op without it */
  c->cur->step++;
  c->cur->batch = b + 1;
  PetscCall(NNTrainerMonitorStep(c->tr, c->cur->epoch, c->cur->step, c->v[2 * p->trainer] / st->n));
  if (c->tr->mon.steps) PetscCall(NNTrainMonitorProgress(net, c, b));
  if (p->K > 1 && c->cur->step % p->interval == 0) { /* the models are swapped on every rank: each needs its own copy */
    PetscCall(NNParallelDetachParameters(net));
    PetscCall(NNTournament(net, c->train));
    PetscCall(NNParallelAttachParameters(net));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNTrainCheckpointWrite(NN net, NNTrainLoop *c)
{
  PetscFunctionBegin;
  PetscCall(NNTrainDeviceSync(net, c));
  PetscCall(NNParallelGatherOptState(net));
  PetscCall(NNCheckpointSave(net, c->tr->checkpoint));
  PetscCall(PetscTime(&c->tck));
  PetscFunctionReturn(0);
}

/* a checkpoint after batch b when -nn_checkpoint_steps or -nn_checkpoint_seconds says so; one due
   after the epoch's last batch is left pending for the epoch's end, which writes it */
static PetscErrorCode NNTrainCheckpointStep(NN net, NNTrainLoop *c, PetscInt b, PetscBool *pending)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (!c->tr->checkpoint[0]) PetscFunctionReturn(0);
  if (!((c->tr->checkpoint_steps > 0 && c->cur->step % c->tr->checkpoint_steps == 0) || c->v[2 * p->K + 1] > 0)) PetscFunctionReturn(0);
  if (b + 1 < c->nbatches) PetscCall(NNTrainCheckpointWrite(net, c));
  else *pending = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* the end of an epoch: the cursor moves to the next epoch, and the checkpoint (which records the
   epochs completed) is written when one is pending or due by -nn_checkpoint_every, and after the last epoch */
static PetscErrorCode NNTrainEpochEnd(NN net, NNTrainLoop *c, PetscBool pending)
{
  PetscFunctionBegin;
  c->cur->batch = 0;
  c->cur->epoch++;
  if (c->tr->checkpoint[0] && (pending || c->cur->epoch % c->tr->checkpoint_every == 0 || c->cur->epoch == c->tr->epochs)) PetscCall(NNTrainCheckpointWrite(net, c));
  PetscFunctionReturn(0);
}

/* the epochs from the restart cursor to the trainer's number of epochs */
PetscErrorCode NNTrainEpochs(NN net, NNTrainLoop *c)
{
  PetscFunctionBegin;
  PetscCall(PetscTime(&c->tck));
  PetscCall(NNTrainDeviceResident(net, c));
  PetscCall(NNDeviceSetResident(net, c->devstep)); /* NNTrain() turns it off, also after an error */
  while (c->cur->epoch < c->tr->epochs) {
    PetscLogDouble t0, t1;
    PetscBool      pending = PETSC_FALSE;
    PetscInt       epoch   = c->cur->epoch;

    PetscCall(PetscTime(&t0));
    c->tepoch = t0;
    c->batch0 = c->cur->batch;
    NNTrainEpochBegin(net, c);
    PetscCall(NNOptSetEpoch(c->tr->opt, c->cur->epoch, c->tr->epochs));
    for (PetscInt b = c->cur->batch; b < c->nbatches; b++) {
      NNTrainStepInfo st = {0, 0, -1, 0, 0, 0};

      PetscCall(NNTrainStepCompute(net, c, b, &st));
      PetscCall(NNTrainStepReduce(net, c, &st));
      PetscCall(NNTrainStepCheck(net, c, &st));
      PetscCall(NNTrainStepFinish(net, c, b, &st));
      PetscCall(NNTrainCheckpointStep(net, c, b, &pending));
    }
    PetscCall(PetscTime(&t1));
    PetscCall(NNTrainDeviceSync(net, c));
    PetscCall(NNTrainEpochEnd(net, c, pending));
    if (c->tr->monitor || NNTrainerHasEpochMonitors(c->tr)) PetscCall(NNTrainMonitorEpoch(net, c, epoch, t1 - t0));
  }
  PetscFunctionReturn(0);
}
