/*
   The -nn_monitor lines of NNTrain(): one line per epoch and trainer (loss, accuracy, test set,
   learning rate, time), and with data groups the all-reduce and load-balancing lines. Each piece
   of a line is appended by its own function.
*/
#include <petnn/private/trainerimpl.h>

typedef struct {
  char   text[512];
  size_t len;
} NNLine;

/* appends printf-style text to a line */
static PetscErrorCode NNLineAppend(NNLine *l, const char fmt[], ...)
{
  va_list ap;
  size_t  len;

  PetscFunctionBegin;
  va_start(ap, fmt);
  PetscCall(PetscVSNPrintf(l->text + l->len, sizeof(l->text) - l->len, fmt, &len, ap));
  va_end(ap);
  PetscCall(PetscStrlen(l->text, &l->len));
  PetscFunctionReturn(0);
}

/* "Epoch  e/E: loss ..  train acc .." (classification) or "Epoch  e/E: loss .." (regression) */
static PetscErrorCode NNLineTrainLoss(NN net, NNTrainLoop *c, PetscInt epoch, NNLine *l)
{
  PetscFunctionBegin;
  if (net->lossops.classification) PetscCall(NNLineAppend(l, "Epoch %3" PetscInt_FMT "/%" PetscInt_FMT ": loss %.4f  train acc %.4f", epoch + 1, c->tr->epochs, (double)(c->cur->epoch_loss / c->N), (double)c->cur->epoch_correct / c->N));
  else PetscCall(NNLineAppend(l, "Epoch %3" PetscInt_FMT "/%" PetscInt_FMT ": loss %.6e", epoch + 1, c->tr->epochs, (double)(c->cur->epoch_loss / c->N)));
  PetscFunctionReturn(0);
}

/* "  test loss ..  test acc .." of the test set's evaluation */
static PetscErrorCode NNLineTestLoss(NN net, NNData test, PetscReal tloss, PetscReal tacc, NNLine *l)
{
  PetscFunctionBegin;
  if (!test) PetscFunctionReturn(0);
  if (net->lossops.classification) PetscCall(NNLineAppend(l, "  test loss %.4f  test acc %.4f", (double)tloss, (double)tacc));
  else PetscCall(NNLineAppend(l, "  test loss %.6e", (double)tloss));
  PetscFunctionReturn(0);
}

/* "  lr ..  time .. s  .. samples/s" */
static PetscErrorCode NNLineRate(NN net, PetscInt N, PetscLogDouble dt, NNLine *l)
{
  PetscReal lr;

  PetscFunctionBegin;
  PetscCall(NNOptGetLearningRate(net->trainer->opt, &lr));
  PetscCall(NNLineAppend(l, "  lr %.3g  time %.2f s  %.1f samples/s\n", (double)lr, dt, N / dt));
  PetscFunctionReturn(0);
}

/* the data groups' communication since the last line: the longest summing time, the shortest and
   longest waits at the barrier, the part of the summing and stepping done while another group computed */
static PetscErrorCode NNTrainMonitorAllreduce(NN net, NNTrainLoop *c)
{
  NNParallel     p    = net->par;
  NNReducer      r    = p->reducer;
  MPI_Comm       comm = PetscObjectComm((PetscObject)net);
  PetscLogDouble exposed, block, w[5], bl;
  PetscBool      first = (PetscBool)(!p->srank && !p->group && !p->mrank), shm;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)r, NNREDUCERSHM, &shm));
  PetscCall(NNGetAllreduceTimes(net, &exposed, &block));
  w[0] = (exposed - c->exposed0) - (r->t_wait - c->wait0);
  w[1] = -(r->t_wait - c->wait0);
  w[2] = r->t_wait - c->wait0;
  w[3] = r->t_early - c->early0; /* summed over the groups: the part done while another group computed, */
  w[4] = w[0];                   /* and all of it */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, w, 3, MPI_DOUBLE, MPI_MAX, p->dcomm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, w + 3, 2, MPI_DOUBLE, MPI_SUM, p->dcomm));
  bl = block - c->block0;
  if (first) {
    if (shm && r->sharded) PetscCall(PetscSynchronizedPrintf(comm, "  all-reduce and optimizer step over %" PetscInt_FMT " data groups in shared memory: %.3f s summing and stepping, %.1f%% of it while another group was still in its backward pass; %.3f-%.3f s waiting for the other groups; blocking MPI all-reduces would take %.3f s\n", p->D, w[0], w[4] > 0 ? 100.0 * w[3] / w[4] : 0.0, -w[1], w[2], bl));
    else if (shm) PetscCall(PetscSynchronizedPrintf(comm, "  all-reduce over %" PetscInt_FMT " data groups in shared memory: %.3f s summing after the backward pass, %.3f-%.3f s waiting for the slowest group's backward pass; blocking MPI all-reduces would take %.3f s\n", p->D, w[0], -w[1], w[2], bl));
    else PetscCall(PetscSynchronizedPrintf(comm, "  all-reduce over %" PetscInt_FMT " data groups, %" PetscInt_FMT " bucket(s): %.3f s in MPI vs %.3f s for blocking all-reduces (%.1f%% hidden behind the backward pass)\n", p->D, r->nbuckets, exposed - c->exposed0, bl, block > c->block0 ? 100.0 * PetscMax(0.0, 1.0 - (exposed - c->exposed0) / bl) : 0.0));
  }
  if (NNParallelBalanceSlots(p) && first && p->sharemax > 0) PetscCall(PetscSynchronizedPrintf(comm, "  load balance: shards of %.2f to %.2f times an equal shard\n", (double)p->sharemin, (double)p->sharemax));
  p->sharemin = PETSC_MAX_REAL;
  p->sharemax = 0;
  c->exposed0 = exposed;
  c->block0   = block;
  c->wait0    = r->t_wait;
  c->early0   = r->t_early;
  PetscFunctionReturn(0);
}

/* the monitor lines of the epoch just done (0-based epoch, dt seconds of training), then the epoch monitors */
PetscErrorCode NNTrainMonitorEpoch(NN net, NNTrainLoop *c, PetscInt epoch, PetscLogDouble dt)
{
  NNParallel p    = net->par;
  MPI_Comm   comm = PetscObjectComm((PetscObject)net);
  NNLine     l    = {"", 0};
  PetscReal  tloss = -1, tacc = -1;

  PetscFunctionBegin;
  if (c->test) PetscCall(NNEvaluate(net, c->test, &tloss, &tacc));
  if (c->tr->monitor) {
    if (p->K > 1) PetscCall(NNLineAppend(&l, "[trainer %d] ", p->trainer));
    PetscCall(NNLineTrainLoss(net, c, epoch, &l));
    PetscCall(NNLineTestLoss(net, c->test, tloss, tacc, &l));
    PetscCall(NNLineRate(net, c->N, dt, &l));
    if (!p->srank && !p->group && !p->mrank) PetscCall(PetscSynchronizedPrintf(comm, "%s", l.text)); /* one line per trainer, from its first rank, in trainer order */
    if (p->D > 1) PetscCall(NNTrainMonitorAllreduce(net, c));
    PetscCall(PetscSynchronizedFlush(comm, PETSC_STDOUT));
  }
  if (NNTrainerHasEpochMonitors(c->tr)) {
    PetscBool cls = net->lossops.classification;
    PetscCall(NNTrainerMonitorEpochCall(c->tr, epoch, c->cur->epoch_loss / c->N, cls ? (PetscReal)c->cur->epoch_correct / c->N : -1, tloss, cls ? tacc : -1, dt));
  }
  PetscFunctionReturn(0);
}
