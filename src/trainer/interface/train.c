/*
   Training loops: minibatch training with an NNOpt (on one rank, data-parallel over data groups, or
   as tournament training of several trainers), evaluation, and full-batch training through TAO.
*/
#include <petnn/private/parallelimpl.h>

/* number of samples whose largest output is the target class */
static PetscInt CountCorrect(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t)
{
  PetscInt correct = 0;
  for (PetscInt s = 0; s < n; s++) {
    PetscInt best = 0;
    for (PetscInt j = 1; j < k; j++)
      if (y[s * k + j] > y[s * k + best]) best = j;
    correct += (best == (PetscInt)t[s]);
  }
  return correct;
}

static PetscErrorCode NNCheckData(NN net, NNData data)
{
  NNShape s, out;
  char    a[64], b[64];
  PetscInt ntarget;

  PetscFunctionBegin;
  PetscCall(NNDataGetSampleShape(data, &s));
  PetscCall(NNDataGetTargetSize(data, &ntarget));
  if (net->inshape.ndim == 0) PetscCall(NNSetInputShape(net, s.ndim, s.dim));
  PetscCall(NNSetUp(net));
  PetscCall(NNShapeToString(&s, sizeof(a), a));
  PetscCall(NNShapeToString(&net->inshape, sizeof(b), b));
  PetscCheck(NNShapeSize(&s) == NNShapeSize(&net->inshape), PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Data set %s has samples of shape %s but the network takes input of shape %s", ((PetscObject)data)->prefix ? ((PetscObject)data)->prefix : "", a, b);
  PetscCall(NNGetOutputShape(net, &out));
  if (net->lossops.classification) PetscCheck(ntarget == 1, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Loss %s needs one class label per sample but data set %s has %" PetscInt_FMT " target values per sample", net->loss, ((PetscObject)data)->prefix ? ((PetscObject)data)->prefix : "", ntarget);
  else PetscCheck(ntarget == NNShapeSize(&out), PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Loss %s compares outputs of size %" PetscInt_FMT " with targets, but data set %s has %" PetscInt_FMT " target values per sample", net->loss, NNShapeSize(&out), ((PetscObject)data)->prefix ? ((PetscObject)data)->prefix : "", ntarget);
  PetscFunctionReturn(0);
}

/* mean loss and accuracy of the network over the samples base + [0, N) of a data set, in
   evaluation mode: the data groups of a trainer split every batch of D x (batch capacity) samples,
   the rows come through xcomm (which holds every requested row), sums are reduced over the trainer */
PetscErrorCode NNEvaluateRange(NN net, NNData data, MPI_Comm xcomm, PetscInt base, PetscInt N, PetscReal *loss, PetscReal *accuracy)
{
  NNParallel         p = NULL;
  PetscInt           k, cap, G, *idx;
  PetscReal          sums[2] = {0, 0}, Lb;
  PetscBool          training = net->training;
  Vec                x, t, y;
  const PetscScalar *ya, *ta;
  NNShape            out;

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNGetOutputShape(net, &out));
  k   = NNShapeSize(&out);
  cap = net->nbatch;
  G   = p->D * cap;
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(cap, &idx));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  for (PetscInt start = 0; start < N; start += G) {
    PetscInt n = PetscMin(G, N - start), first, last, m;
    NNParallelShard(n, p->group, p->D, &first, &last);
    m = last - first;
    for (PetscInt i = 0; i < m; i++) idx[i] = base + start + first + i;
    PetscCall(NNDataGetBatchOn(data, xcomm, m, idx, x, t));
    if (!m) continue;
    PetscCall(NNForward(net, m, x, &y));
    PetscCall(NNLossEvaluate(net, m, y, t, &Lb, NULL));
    if (p->srank) continue; /* the ranks of a spatial group hold the same outputs: count them once */
    sums[0] += Lb * m;
    if (net->lossops.classification) {
      PetscCall(VecGetArrayRead(y, &ya));
      PetscCall(VecGetArrayRead(t, &ta));
      sums[1] += CountCorrect(m, k, ya, ta);
      PetscCall(VecRestoreArrayRead(t, &ta));
      PetscCall(VecRestoreArrayRead(y, &ya));
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPIU_REAL, MPIU_SUM, p->tcomm));
  PetscCall(NNSetTraining(net, training));
  PetscCall(PetscFree(idx));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  if (loss) *loss = sums[0] / N;
  if (accuracy) *accuracy = net->lossops.classification ? sums[1] / N : -1;
  PetscFunctionReturn(0);
}

/*@
   NNEvaluate - mean loss and accuracy over a data set, in evaluation mode

   Collective

   Output Parameters:
+  loss - mean loss (may be NULL)
-  accuracy - fraction of correctly classified samples, -1 for regression losses (may be NULL)

   Notes:
   With data groups (NNSetProcessGrid()) the groups share the work; with several trainers each
   trainer evaluates its own model on the whole data set.

   Level: beginner

.seealso: `NNTrain()`
@*/
PetscErrorCode NNEvaluate(NN net, NNData data, PetscReal *loss, PetscReal *accuracy)
{
  PetscInt N;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, data));
  PetscCall(NNDataGetNumSamples(data, &N));
  PetscCall(NNEvaluateRange(net, data, PetscObjectComm((PetscObject)data), 0, N, loss, accuracy));
  PetscFunctionReturn(0);
}

/* stops training on every rank: with why (a non-finite loss), or for the first training sample with
   a NaN or infinite value (bad, -1 on ranks that found none) */
static PetscErrorCode NNTrainStop(NN net, NNData train, PetscInt bad, const char why[])
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)net);
  PetscInt    s    = bad >= 0 ? bad : PETSC_MAX_INT;
  PetscMPIInt owner;
  char        ck[PETSC_MAX_PATH_LEN + 64] = "";

  PetscFunctionBegin;
  if (net->checkpoint[0]) PetscCall(PetscSNPrintf(ck, sizeof(ck), " The last checkpoint %s is intact.", net->checkpoint));
  if (why) SETERRQ(comm, PETSC_ERR_FP, "%s%s", why, ck);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPIU_INT, MPI_MIN, comm));
  PetscCall(NNDataGetOwner(train, s, &owner));
  SETERRQ(comm, PETSC_ERR_FP, "Training stopped at epoch %" PetscInt_FMT ", step %" PetscInt_FMT ": sample %" PetscInt_FMT " of the training data %s(held by rank %d%s) has a NaN or infinite feature or target.%s", net->epoch + 1, net->step + 1, s, ((PetscObject)train)->prefix ? ((PetscObject)train)->prefix : "", train->distributed ? (int)owner : 0, train->distributed ? "" : ", every rank reads it", ck);
}

static PetscErrorCode NNTrainEpochs(NN net, NNData train, NNData test, PetscInt B, Vec x, Vec t, PetscInt *perm, PetscInt *idx, PetscReal *v)
{
  NNParallel     p    = net->par;
  MPI_Comm       comm = PetscObjectComm((PetscObject)net);
  PetscInt       N = p->ntrain, nbatches = (N + B - 1) / B, k;
  NNShape        out;
  PetscLogDouble tck, exposed0 = 0, block0 = 0, wait0 = 0, early0 = 0;

  PetscFunctionBegin;
  PetscCall(NNGetOutputShape(net, &out));
  k = NNShapeSize(&out);
  PetscCall(PetscTime(&tck));
  for (; net->epoch < net->epochs; net->epoch++) {
    PetscLogDouble t0, t1;
    PetscReal      tloss = 0, tacc = -1, lr;
    PetscBool      pending = PETSC_FALSE;

    PetscCall(PetscTime(&t0));
    if (net->batch == 0) { /* a fresh epoch; a restarted one regenerates its permutation from the stored state */
      net->rng_epoch     = net->rng;
      net->epoch_loss    = 0;
      net->epoch_correct = 0;
    }
    {
      NNRandom r = net->rng_epoch;
      for (PetscInt i = 0; i < N; i++) perm[i] = i;
      if (net->shuffle) NNRandomShuffle(&r, N, perm);
      if (net->batch == 0) net->rng = r;
    }
    PetscCall(NNOptSetEpoch(net->opt, net->epoch, net->epochs));
    for (PetscInt b = net->batch; b < nbatches; b++) {
      PetscInt       start = b * B, n = PetscMin(B, N - start), m, bad, nv = 2 * p->K + 2 + NNParallelBalanceSlots(p);
      PetscReal      L = 0, correct = 0, Lg;
      PetscLogDouble tc = 0;

      PetscCall(NNParallelStepBegin(net, n));
      m = p->last - p->first;
      for (PetscInt i = 0; i < m; i++) idx[i] = p->sample0 + perm[start + p->first + i];
      PetscCall(NNDataGetBatchOn(train, p->tcomm, m, idx, x, t));
      bad = m ? train->badsample : -1;
      if (net->gradcheck && net->epoch == 0 && b == 0) { /* a local check of this group's shard, on parameters of its own */
        PetscCall(NNShmDetachParameters(net));
        if (m && bad < 0) {
          PetscReal ep, ex;
          PetscErrorCode (*hook)(NN, NNHookStage, PetscInt) = net->hook;
          net->hook = NULL;
          PetscCall(NNGradientCheck(net, m, x, t, net->gradcheck_tol, &ep, &ex));
          net->hook = hook;
        }
        PetscCall(NNShmAttachParameters(net));
      }
      if (m && bad < 0) {
        PetscLogDouble c0, c1, e0 = p->t_exposed;
        PetscCall(PetscTime(&c0));
        PetscCall(NNLossGradient(net, m, x, t, &L, NULL));
        PetscCall(PetscTime(&c1));
        tc = (c1 - c0) - (p->t_exposed - e0); /* the group's compute time, for load balancing */
        if (net->lossops.classification) {
          const PetscScalar *ya, *ta;
          PetscCall(VecGetArrayRead(net->act[net->nlayers], &ya));
          PetscCall(VecGetArrayRead(t, &ta));
          correct = CountCorrect(m, k, ya, ta);
          PetscCall(VecRestoreArrayRead(t, &ta));
          PetscCall(VecRestoreArrayRead(net->act[net->nlayers], &ya));
        }
      } else if (p->D > 1) { /* no samples here (or bad ones): zeros into the all-reduce */
        if (bad >= 0) PetscCall(NNShmMarkBadStep(net));
        PetscCall(NNParallelStepEmpty(net));
      }
      PetscCall(NNParallelStepEnd(net));

      /* one reduction over all ranks: every trainer's loss and count, bad data anywhere, time for a checkpoint */
      {
        PetscLogDouble now;
        PetscCall(PetscArrayzero(v, nv));
        NNParallelBalancePut(p, v + 2 * p->K + 2, tc);
        if (!p->srank) {
          v[2 * p->trainer]     = L * m;
          v[2 * p->trainer + 1] = correct;
        }
        v[2 * p->K] = bad >= 0 ? 1 : 0;
        PetscCall(PetscTime(&now));
        v[2 * p->K + 1] = (net->checkpoint_seconds > 0 && now - tck >= net->checkpoint_seconds) ? 1 : 0;
        if (p->size > 1) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, (PetscMPIInt)nv, MPIU_REAL, MPIU_SUM, comm));
        NNParallelBalanceUpdate(p, v + 2 * p->K + 2, n);
      }
      if (v[2 * p->K] > 0) PetscCall(NNTrainStop(net, train, bad, NULL));
      for (PetscInt tr = 0; tr < p->K; tr++) {
        char why[256];
        Lg = v[2 * tr] / n;
        if (!PetscIsInfOrNanReal(Lg)) continue;
        PetscCall(PetscSNPrintf(why, sizeof(why), "Training stopped: the loss is %g at epoch %" PetscInt_FMT ", step %" PetscInt_FMT "%s; try a smaller -opt_learning_rate.", (double)Lg, net->epoch + 1, net->step + 1, p->K > 1 ? " on one of the trainers" : ""));
        PetscCall(NNTrainStop(net, train, -1, why));
      }
      Lg = v[2 * p->trainer] / n;
      net->epoch_loss += v[2 * p->trainer];
      net->epoch_correct += (PetscInt)v[2 * p->trainer + 1];
      PetscCall(NNParallelOptStep(net));
      net->step++;
      net->batch = b + 1;
      if (net->stepmonitor) PetscCall((*net->stepmonitor)(net, net->epoch, net->step, Lg, net->stepmonitorctx));
      if (p->K > 1 && net->step % p->interval == 0) { /* the models are swapped on every rank: each needs its own copy */
        PetscCall(NNShmDetachParameters(net));
        PetscCall(NNTournament(net, train));
        PetscCall(NNShmAttachParameters(net));
      }
      if (net->checkpoint[0] && ((net->checkpoint_steps > 0 && net->step % net->checkpoint_steps == 0) || v[2 * p->K + 1] > 0)) {
        if (b + 1 < nbatches) {
          PetscCall(NNParallelGatherOptState(net));
          PetscCall(NNCheckpointSave(net, net->checkpoint));
          PetscCall(PetscTime(&tck));
        } else pending = PETSC_TRUE; /* written with the epoch's end below */
      }
    }
    PetscCall(PetscTime(&t1));
    {
      PetscReal Lsum = net->epoch_loss;
      PetscInt  correct = net->epoch_correct;
      net->batch = 0;
      if (net->checkpoint[0] && (pending || (net->epoch + 1) % net->checkpoint_every == 0 || net->epoch + 1 == net->epochs)) {
        net->epoch++; /* the checkpoint records the epochs completed */
        PetscCall(NNParallelGatherOptState(net));
        PetscCall(NNCheckpointSave(net, net->checkpoint));
        PetscCall(PetscTime(&tck));
        net->epoch--;
      }
      if (net->monitor) {
        char   line[512];
        size_t len;
        if (test) PetscCall(NNEvaluate(net, test, &tloss, &tacc));
        PetscCall(NNOptGetLearningRate(net->opt, &lr));
        if (p->K > 1) PetscCall(PetscSNPrintf(line, sizeof(line), "[trainer %d] ", p->trainer));
        else line[0] = 0;
        PetscCall(PetscStrlen(line, &len));
        if (net->lossops.classification) {
          PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, "Epoch %3" PetscInt_FMT "/%" PetscInt_FMT ": loss %.4f  train acc %.4f", net->epoch + 1, net->epochs, (double)(Lsum / N), (double)correct / N));
          PetscCall(PetscStrlen(line, &len));
          if (test) PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, "  test loss %.4f  test acc %.4f", (double)tloss, (double)tacc));
        } else {
          PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, "Epoch %3" PetscInt_FMT "/%" PetscInt_FMT ": loss %.6e", net->epoch + 1, net->epochs, (double)(Lsum / N)));
          PetscCall(PetscStrlen(line, &len));
          if (test) PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, "  test loss %.6e", (double)tloss));
        }
        PetscCall(PetscStrlen(line, &len));
        PetscCall(PetscSNPrintf(line + len, sizeof(line) - len, "  lr %.3g  time %.2f s  %.1f samples/s\n", (double)lr, t1 - t0, N / (t1 - t0)));
        /* one line per trainer, from its first rank, in trainer order */
        if (!p->srank && !p->group) PetscCall(PetscSynchronizedPrintf(comm, "%s", line));
        if (p->D > 1) {
          PetscLogDouble exposed, block, w[5];
          PetscCall(NNGetAllreduceTimes(net, &exposed, &block));
          /* over the data groups: the longest summing time, the shortest and longest waits at the barrier */
          w[0] = (exposed - exposed0) - (p->t_wait - wait0);
          w[1] = -(p->t_wait - wait0);
          w[2] = p->t_wait - wait0;
          w[3] = p->t_early - early0; /* summed over the groups: the part of the summing and stepping done while another group computed, */
          w[4] = w[0];                /* and all of it */
          PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, w, 3, MPI_DOUBLE, MPI_MAX, p->dcomm));
          PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, w + 3, 2, MPI_DOUBLE, MPI_SUM, p->dcomm));
          if (!p->srank && !p->group) {
            if (p->useshm && p->shmtheta) PetscCall(PetscSynchronizedPrintf(comm, "  all-reduce and optimizer step over %" PetscInt_FMT " data groups in shared memory: %.3f s summing and stepping, %.1f%% of it while another group was still in its backward pass; %.3f-%.3f s waiting for the other groups; blocking MPI all-reduces would take %.3f s\n", p->D, w[0], w[4] > 0 ? 100.0 * w[3] / w[4] : 0.0, -w[1], w[2], block - block0));
            else if (p->useshm) PetscCall(PetscSynchronizedPrintf(comm, "  all-reduce over %" PetscInt_FMT " data groups in shared memory: %.3f s summing after the backward pass, %.3f-%.3f s waiting for the slowest group's backward pass; blocking MPI all-reduces would take %.3f s\n", p->D, w[0], -w[1], w[2], block - block0));
            else PetscCall(PetscSynchronizedPrintf(comm, "  all-reduce over %" PetscInt_FMT " data groups, %" PetscInt_FMT " bucket(s): %.3f s in MPI vs %.3f s for blocking all-reduces (%.1f%% hidden behind the backward pass)\n", p->D, p->nbuckets, exposed - exposed0, block - block0, block > block0 ? 100.0 * PetscMax(0.0, 1.0 - (exposed - exposed0) / (block - block0)) : 0.0));
          }
          if (NNParallelBalanceSlots(p) && !p->srank && !p->group && p->sharemax > 0) PetscCall(PetscSynchronizedPrintf(comm, "  load balance: shards of %.2f to %.2f times an equal shard\n", (double)p->sharemin, (double)p->sharemax));
          p->sharemin = PETSC_MAX_REAL;
          p->sharemax = 0;
          exposed0    = exposed;
          block0      = block;
          wait0       = p->t_wait;
          early0      = p->t_early;
        }
        PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
      }
    }
  }
  PetscFunctionReturn(0);
}

/*@
   NNTrain - trains the network with its optimizer on minibatches

   Collective

   Input Parameters:
+  net - the network (its input shape defaults to the training samples' shape)
.  train - training data
-  test - held-out data evaluated after every epoch (may be NULL)

   Notes:
   Samples are shuffled every epoch by the network's seeded generator. Training resumes from the
   epoch and batch stored by NNCheckpointLoad(), continuing the same trajectory bitwise. A NaN or
   infinite loss, or a training sample with a NaN or infinite value, stops training on every
   rank with the same error; the last checkpoint written is kept.

   With data groups (NNSetProcessGrid(), -nn_data_groups D) the batch size is the global batch:
   group g trains on samples [n g/D, n (g+1)/D) of every batch of n samples, drawn from the same
   permutation as on one rank, and the gradients are averaged by all-reduce during the backward
   pass (NNSetBucketSize()), so the trajectory equals one rank's up to rounding (batch
   normalization aside: its statistics are those of the group's shard, its running statistics
   follow the first group). Dropout masks are drawn where one rank would draw them.

   Options Database Keys:
+  -nn_monitor - per-epoch loss, accuracy, time and throughput (and all-reduce times with data groups)
.  -nn_checkpoint <file> - checkpoint after every -nn_checkpoint_every epochs
.  -nn_checkpoint_steps <n> - and every n steps
-  -nn_checkpoint_seconds <s> - and every s seconds

   Level: beginner

.seealso: `NNSetFromOptions()`, `NNEvaluate()`, `NNCheckpointLoad()`, `NNTrainTao()`, `NNSetProcessGrid()`, `NNTrainMonitorSet()`
@*/
PetscErrorCode NNTrain(NN net, NNData train, NNData test)
{
  NNParallel     p = NULL;
  PetscInt       B, cap, *perm, *idx;
  PetscReal     *v;
  Vec            x, t;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, train));
  if (test) PetscCall(NNCheckData(net, test));
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNParallelSetPartition(net, train));
  B   = net->nbatch; /* the global batch; every data group holds at most cap samples of it */
  cap = NNParallelBatchCapacity(p, B);
  if (cap != B) PetscCall(NNSetBatchSize(net, cap));
  PetscCall(NNSetUp(net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(p->ntrain, &perm));
  PetscCall(PetscMalloc1(cap, &idx));
  PetscCall(PetscMalloc1(2 * p->K + 2 + NNParallelBalanceSlots(p), &v)); /* what every step reduces */
  PetscCall(NNParallelBalanceBegin(net, cap));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  if (p->K > 1 && p->trainer > 0 && net->step == 0 && net->epoch == 0 && net->batch == 0) NNRandomSeed(&net->rng, (uint64_t)net->seed + 0x9e3779b97f4a7c15ULL * (uint64_t)p->trainer); /* the trainer's own stream */
  ierr = NNParallelTrainBegin(net, x);
  if (!ierr) ierr = NNTrainEpochs(net, train, test, B, x, t, perm, idx, v);
  PetscCall(NNParallelTrainEnd(net));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  if (cap != B) PetscCall(NNSetBatchSize(net, B));
  PetscCall(PetscFree(perm));
  PetscCall(PetscFree(idx));
  PetscCall(PetscFree(v));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- TAO */
typedef struct {
  NN       net;
  NNData   data;
  Vec      x, t;
  PetscInt N;
} NNTaoCtx;

/* full-batch loss and gradient over the whole data set, averaged per sample */
static PetscErrorCode NNTaoObjectiveAndGradient(Tao tao PETSC_UNUSED, Vec theta, PetscReal *f, Vec g, void *ctx)
{
  NNTaoCtx *c   = (NNTaoCtx *)ctx;
  NN        net = c->net;
  PetscInt *idx;

  PetscFunctionBegin;
  PetscCall(VecCopy(theta, net->theta));
  PetscCall(VecZeroEntries(g));
  *f = 0;
  PetscCall(PetscMalloc1(net->nbatch, &idx));
  for (PetscInt start = 0; start < c->N; start += net->nbatch) {
    PetscInt  n = PetscMin(net->nbatch, c->N - start);
    PetscReal L;
    for (PetscInt i = 0; i < n; i++) idx[i] = start + i;
    PetscCall(NNDataGetBatch(c->data, n, idx, c->x, c->t));
    PetscCall(NNLossGradient(net, n, c->x, c->t, &L, NULL));
    *f += L * n / c->N;
    PetscCall(VecAXPY(g, (PetscReal)n / c->N, net->dtheta));
  }
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(0);
}

/*@
   NNTrainTao - trains on the whole data set (full batch) with a TAO solver: the network's
   loss and gradient become the TAO objective and gradient

   Collective

   Input Parameters:
+  net - the network
.  data - training data
-  tao - a TAO solver (type and tolerances from -tao_* options; it is given the network's options prefix)

   Notes:
   Use deterministic layers (no dropout) so the objective is a function; batch norm uses batch statistics.
   The network's batch size only limits memory: the objective is the mean over all samples.

   Level: intermediate

.seealso: `NNTrain()`, `TaoSetObjectiveAndGradient()`
@*/
PetscErrorCode NNTrainTao(NN net, NNData data, Tao tao)
{
  NNTaoCtx c;
  Vec      theta0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, data));
  c.net  = net;
  c.data = data;
  PetscCall(NNDataGetNumSamples(data, &c.N));
  PetscCall(NNCreateBatchVecs(net, &c.x, &c.t));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  PetscCall(VecDuplicate(net->theta, &theta0));
  PetscCall(VecCopy(net->theta, theta0));
  PetscCall(TaoSetSolution(tao, theta0));
  PetscCall(TaoSetObjectiveAndGradient(tao, NULL, NNTaoObjectiveAndGradient, &c));
  PetscCall(TaoSolve(tao));
  PetscCall(VecCopy(theta0, net->theta));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(VecDestroy(&theta0));
  PetscCall(VecDestroy(&c.x));
  PetscCall(VecDestroy(&c.t));
  PetscFunctionReturn(0);
}
