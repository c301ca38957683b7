/*
   Online training: NNTrainStep() takes one optimizer step on a batch the caller hands over (the
   arrays a running simulation just produced), through the same pieces as NNTrain()'s loop
   (src/trainer/interface/trainloop.c): the trainer's optimizer and schedule, the data groups' gradient
   reducer, the gradient check, the step monitors, spectral normalization and the checkpoint policy, and
   the restart cursor (step, batch, epoch, generator) that checkpoints store. NNTrain() on the same
   batches in the same order (-nn_shuffle false) gives bitwise the same parameters.

     NNTrainStepShard()     this data group's samples [first, last) of the global batch (the groups' counts)
     NNTrainStepCompute()   the gradient check, loss and backward pass with the all-reduce
     NNTrainStepReduce()    one reduction per step: loss, correct samples, bad data, the checkpoint clock
     NNTrainStepFinish()    the optimizer step, the counters, the step monitor
     NNTrainStepCheckpoint(), NNTrainStepEpochEnd()  the checkpoint policy and the online epochs
*/
#include <petnn/private/trainerimpl.h>

/* the data groups' sample counts: the global batch n and this group's [first, last) of it, as NNTrain()
   splits a batch (groups in order) */
static PetscErrorCode NNTrainStepShard(NN net, PetscInt m, PetscInt *n)
{
  NNParallel p = net->par;
  PetscInt  *counts;

  PetscFunctionBegin;
  p->first = 0;
  p->last  = m;
  *n       = m;
  if (p->D == 1) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(p->D, &counts));
  PetscCallMPI(MPI_Allgather(&m, 1, MPIU_INT, counts, 1, MPIU_INT, p->dcomm)); /* rank g of dcomm is data group g */
  *n = 0;
  for (PetscInt g = 0; g < p->D; g++) {
    if (g == p->group) p->first = *n;
    *n += counts[g];
  }
  p->last = p->first + m;
  PetscCall(PetscFree(counts));
  PetscFunctionReturn(0);
}

/* the first step of an epoch: its sums start, the schedule's learning rate; the gradient check on the first batch */
static PetscErrorCode NNTrainStepCompute(NN net, NNTrainer tr, NNTrainerCursor *cur, PetscInt m, PetscInt n, Vec x, Vec t, PetscBool bad, NNTrainStepInfo *st)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (cur->batch == 0) {
    cur->rng_epoch     = net->rng; /* no shuffle: the generator is what it was */
    cur->epoch_loss    = 0;
    cur->epoch_correct = 0;
    tr->online.samples = 0;
    PetscCall(PetscTime(&tr->online.tepoch));
  }
  PetscCall(NNOptSetEpoch(tr->opt, cur->epoch, tr->epochs));
  st->n   = n;
  st->m   = m;
  st->bad = bad ? 0 : -1;
  if (tr->gradcheck && cur->epoch == 0 && cur->batch == 0 && m && !bad) { /* as NNTrain(): the first batch, parameters of its own */
    PetscReal ep, ex;
    PetscCall(NNParallelDetachParameters(net));
    PetscCall(NNGradientCheck(net, m, x, t, tr->gradcheck_tol, &ep, &ex));
    PetscCall(NNParallelAttachParameters(net));
  }
  PetscCall(NNParallelStepBegin(net, n));
  if (m && !bad) {
    PetscCall(NNLossGradient(net, m, x, t, &st->L, NULL));
    if (net->lossops.classification) {
      const PetscScalar *ya, *ta;
      NNShape            out;
      PetscCall(NNGetOutputShape(net, &out));
      PetscCall(VecGetArrayRead(net->act[net->nlayers], &ya));
      PetscCall(VecGetArrayRead(t, &ta));
      st->correct = NNCountCorrect(m, NNShapeSize(&out), ya, ta);
      PetscCall(VecRestoreArrayRead(t, &ta));
      PetscCall(VecRestoreArrayRead(net->act[net->nlayers], &ya));
    }
  } else if (p->D > 1) { /* no samples here (or bad ones): zeros into the all-reduce */
    if (bad) PetscCall(NNParallelMarkBadStep(net));
    PetscCall(NNParallelStepEmpty(net));
  }
  PetscCall(NNParallelStepEnd(net));
  PetscFunctionReturn(0);
}

/* [loss sum, correct, bad data, checkpoint due] summed over every rank (a spatial group's ranks count once) */
static PetscErrorCode NNTrainStepReduce(NN net, NNTrainer tr, NNTrainStepInfo *st, PetscReal v[4])
{
  NNParallel     p = net->par;
  PetscLogDouble now;

  PetscFunctionBegin;
  v[0] = (!p->srank && !p->mrank) ? st->L * st->m : 0;
  v[1] = (!p->srank && !p->mrank) ? st->correct : 0;
  v[2] = st->bad >= 0 ? 1 : 0;
  PetscCall(PetscTime(&now));
  v[3] = (tr->checkpoint_seconds > 0 && now - tr->online.tck >= tr->checkpoint_seconds) ? 1 : 0;
  if (p->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, 4, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)net)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNTrainStepCheckpointWrite(NN net, NNTrainer tr)
{
  PetscFunctionBegin;
  PetscCall(NNParallelGatherOptState(net));
  PetscCall(NNCheckpointSave(net, tr->checkpoint));
  PetscCall(PetscTime(&tr->online.tck));
  PetscFunctionReturn(0);
}

/* the end of an online epoch (-nn_steps_per_epoch): the cursor moves on, the epoch checkpoint, the monitor line
   and the epoch monitors, as at the end of an epoch of NNTrain() */
static PetscErrorCode NNTrainStepEpochEnd(NN net, NNTrainer tr, NNTrainerCursor *cur, PetscBool pending)
{
  PetscInt       epoch = cur->epoch, N = PetscMax(tr->online.samples, 1);
  PetscLogDouble now;
  PetscBool      cls = net->lossops.classification;

  PetscFunctionBegin;
  cur->batch = 0;
  cur->epoch++;
  if (tr->checkpoint[0] && (pending || cur->epoch % tr->checkpoint_every == 0 || cur->epoch == tr->epochs)) PetscCall(NNTrainStepCheckpointWrite(net, tr));
  PetscCall(PetscTime(&now));
  if (tr->monitor) {
    MPI_Comm comm = PetscObjectComm((PetscObject)net);
    if (cls) PetscCall(PetscPrintf(comm, "Online epoch %3" PetscInt_FMT ": %" PetscInt_FMT " steps, loss %.4f  train acc %.4f\n", epoch + 1, tr->online.steps_per_epoch, (double)(cur->epoch_loss / N), (double)cur->epoch_correct / N));
    else PetscCall(PetscPrintf(comm, "Online epoch %3" PetscInt_FMT ": %" PetscInt_FMT " steps, loss %.6e\n", epoch + 1, tr->online.steps_per_epoch, (double)(cur->epoch_loss / N)));
  }
  if (NNTrainerHasEpochMonitors(tr)) PetscCall(NNTrainerMonitorEpochCall(tr, epoch, cur->epoch_loss / N, cls ? (PetscReal)cur->epoch_correct / N : -1, -1, -1, now - tr->online.tepoch));
  PetscFunctionReturn(0);
}

/* stops on bad data or a non-finite loss (every rank, the same error), else the epoch sums, the optimizer
   step, the counters, the step monitor, the checkpoint policy and the epoch's end */
static PetscErrorCode NNTrainStepFinish(NN net, NNTrainer tr, NNTrainerCursor *cur, const PetscReal v[4], PetscInt n)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)net);
  PetscReal Lg   = v[0] / n;
  PetscBool due, last, pending = PETSC_FALSE;
  char      ck[PETSC_MAX_PATH_LEN + 64] = "";

  PetscFunctionBegin;
  if (tr->checkpoint[0]) PetscCall(PetscSNPrintf(ck, sizeof(ck), " The last checkpoint %s is intact.", tr->checkpoint));
  PetscCheck(v[2] == 0, comm, PETSC_ERR_FP, "NNTrainStep() stopped at step %" PetscInt_FMT ": the batch given on %d rank(s) has a NaN or infinite input or target value; no step was taken.%s", cur->step + 1, (int)v[2], ck);
  PetscCheck(!PetscIsInfOrNanReal(Lg), comm, PETSC_ERR_FP, "NNTrainStep() stopped: the loss is %g at step %" PetscInt_FMT "; try a smaller -opt_learning_rate.%s", (double)Lg, cur->step + 1, ck);
  cur->epoch_loss += v[0];
  cur->epoch_correct += (PetscInt)v[1];
  tr->online.samples += n;
  PetscCall(NNParallelOptStep(net, tr->opt));
  PetscCall(NNApplySpectralNorm(net)); /* -<layer>_spectral_norm: a no-op without it */
  cur->step++;
  cur->batch++;
  PetscCall(NNTrainerMonitorStep(tr, cur->epoch, cur->step, Lg));
  last = (PetscBool)(tr->online.steps_per_epoch > 0 && cur->batch == tr->online.steps_per_epoch);
  due  = (PetscBool)(tr->checkpoint[0] && ((tr->checkpoint_steps > 0 && cur->step % tr->checkpoint_steps == 0) || v[3] > 0));
  if (due && !last) PetscCall(NNTrainStepCheckpointWrite(net, tr));
  else if (due) pending = PETSC_TRUE; /* written at the epoch's end, which it then records, as NNTrain() does */
  if (last) PetscCall(NNTrainStepEpochEnd(net, tr, cur, pending));
  PetscFunctionReturn(0);
}

/* one step on m samples of this data group in the network's own batch layout (x, t as NNLossGradient() takes
   them); bad: the caller found a NaN or infinite value in them */
PetscErrorCode NNTrainStepBatch_Private(NN net, PetscInt m, Vec x, Vec t, PetscBool bad, PetscReal *loss)
{
  NNParallel       p;
  NNTrainer        tr;
  NNTrainerCursor *cur;
  NNTrainStepInfo  st       = {0, 0, -1, 0, 0, 0};
  PetscBool        training = net->training;
  PetscReal        v[4]     = {0, 0, 0, 0};
  PetscInt         n;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  PetscCheck(p->K == 1, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "NNTrainStep() with %" PetscInt_FMT " trainers (tournament training): use NNTrain(), or one trainer", p->K);
  PetscCall(NNGetTrainerCursor(net, &tr, &cur));
  PetscCall(NNTrainStepShard(net, m, &n));
  PetscCheck(n > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "NNTrainStep() on a batch of 0 samples (every data group gave none)");
  if (tr->online.tck == 0) PetscCall(PetscTime(&tr->online.tck)); /* the checkpoint clock starts with the first step */
  PetscCall(PetscLogEventBegin(NN_TrainStep, net, 0, 0, 0));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  ierr = NNParallelTrainBegin(net, tr->opt);
  if (!ierr) ierr = NNTrainStepCompute(net, tr, cur, m, n, x, t, bad, &st);
  if (!ierr) ierr = NNTrainStepReduce(net, tr, &st, v);
  if (!ierr && v[2] == 0 && !PetscIsInfOrNanReal(v[0])) ierr = NNTrainStepFinish(net, tr, cur, v, n);
  PetscCall(NNParallelTrainEnd(net));
  PetscCall(NNSetTraining(net, training));
  PetscCall(PetscLogEventEnd(NN_TrainStep, net, 0, 0, 0));
  PetscCall(ierr);
  if (v[2] != 0 || PetscIsInfOrNanReal(v[0])) PetscCall(NNTrainStepFinish(net, tr, cur, v, n)); /* raises the error, outside the reducer */
  if (loss) *loss = v[0] / n;
  PetscFunctionReturn(0);
}
