/*
   The gradient all-reduce of data groups that share one node, through an MPI shared-memory window.

   During training the gradient Vec of data group g lives in segment g of a window allocated with
   MPI_Win_allocate_shared over the data communicator (VecPlaceArray), so the layers' backward
   passes write straight into memory every group can read. At the end of the backward pass the
   groups meet at a barrier, group g sums slice g of the D segments (always in the order
   0, 1, ..., D-1) and writes the sum into all D segments, and a second barrier ends the step:
   every element is added once, by one rank, so the gradient is bitwise identical on all ranks.
   With a sharded optimizer (NNSetOptimizerSharding(), the default here) one copy of the parameters
   and of the optimizer state, in segment 0 of the window, serves all groups, and the reduction and
   the optimizer step are one piece of work shared out dynamically: the gradient is cut into chunks
   of NN_SHM_CHUNK entries, taken from its end (the last layers' gradients are final first). A group
   that has finished its backward pass takes the next chunk from a shared counter, waits until every
   group's backward pass has got past that chunk's layers (each group publishes how far it has got
   after every layer), sums the chunk over the D segments (in the order 0, 1, ..., D-1), writes the
   sum into all of them and takes the optimizer step on the chunk. So the group that finishes first
   sums and steps the dense layers' parameters while the other is still in its convolutions'
   backward pass, instead of waiting idle; one barrier ends the step. Which rank handles a chunk
   does not change the arithmetic, so the parameters are bitwise those of one rank's step.
   Why: on one node MPI moves a large message through shared-memory buffers in fragments on the
   same cores that compute (Open MPI 4.1 here: a 26 MB MPI_Iallreduce over 2 ranks takes 32 ms,
   a blocking MPI_Allreduce 13-16 ms), and without an asynchronous progress thread nothing of it
   overlaps the backward pass. Reading the D segments directly moves each byte once: 3-4 ms.
*/
#include <sched.h>
#include <petnn/private/parallelimpl.h>

/* chunk of the dynamically shared reduction and optimizer step: 1 MB, about 0.5 ms of work */
#define NN_SHM_CHUNK 131072
/* control block (in its own window, on the first rank): the chunk counter, then per group its
   progress and the last step it found bad data or a non-finite loss in, one 64-byte line each.
   The progress of a group in its step s (from 1) with gradient entries [f, np) final is
   s (np + 1) + np - f: it only grows, so a value of an earlier step never passes for this one and
   nothing has to be reset between steps. */
#define NN_SHM_LINE 8

/* a barrier of the groups on the node that also orders their accesses to the window: what this
   rank wrote before it is visible to all after it */
PetscErrorCode NNShmBarrier(NNParallel p)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Win_sync(p->win));
  PetscCallMPI(MPI_Barrier(p->shmcomm));
  PetscCallMPI(MPI_Win_sync(p->win));
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
          `NN_ALLREDUCE_AUTO` (default): shared when the data communicator is on one node, MPI otherwise

   Options Database Key:
.  -nn_allreduce <auto,mpi,shared> - the all-reduce

   Notes:
   On one node both move data with the cores that compute; the shared-memory reduction reads and
   writes every gradient byte once instead of copying it through MPI's buffers, about ten times
   less time for a 26 MB gradient on two ranks. Across nodes the MPI all-reduce overlaps the
   backward pass as far as the MPI progresses it (NNSetBucketSize()). With shared memory and a
   sharded optimizer (NNSetOptimizerSharding(), the default there) the groups share one copy of the
   parameters and the summing and the optimizer step are done in chunks by whichever group is free,
   so a group that finishes its backward pass early works on the layers every group has finished
   instead of waiting. Either way the gradient is bitwise identical on all data groups.

   Level: advanced

.seealso: `NNSetProcessGrid()`, `NNSetBucketSize()`, `NNGetAllreduceTimes()`
@*/
PetscErrorCode NNSetAllreduceType(NN net, NNAllreduceType type)
{
  NNParallel p = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(net, type, 2);
  PetscCall(NNParallelGet(net, &p));
  p->artype = type;
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
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (type) *type = net->par ? net->par->artype : NN_ALLREDUCE_AUTO;
  if (shared) *shared = net->par ? net->par->shmused : PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* start of training with D > 1: whether the shared-memory all-reduce will be used (the type allows
   it and all data groups of the trainer are on one node); if so p->shmcomm is their communicator,
   otherwise MPI_COMM_NULL */
PetscErrorCode NNShmAllreduceCheck(NN net)
{
  NNParallel  p = net->par;
  PetscMPIInt nshm, same;

  PetscFunctionBegin;
  if (p->shmcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&p->shmcomm));
  if (p->artype == NN_ALLREDUCE_MPI) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_split_type(p->dcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &p->shmcomm));
  PetscCallMPI(MPI_Comm_size(p->shmcomm, &nshm));
  same = (PetscMPIInt)(nshm == p->D);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, p->dcomm));
  if (!same) {
    PetscCallMPI(MPI_Comm_free(&p->shmcomm));
    PetscCheck(p->artype != NN_ALLREDUCE_SHARED, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_INCOMP, "-nn_allreduce shared needs all %" PetscInt_FMT " data groups of a trainer on one node; here they span several: use -nn_allreduce mpi (or auto)", p->D);
  }
  PetscFunctionReturn(0);
}

/* after NNShmAllreduceCheck(): puts the gradient (and, with a sharded optimizer, the parameters)
   into a shared window; p->useshm says whether it did. Segment g holds group g's gradient; with a
   sharded optimizer segment 0 also holds the parameters that all groups share. */
PetscErrorCode NNShmAllreduceSetUp(NN net)
{
  NNParallel   p = net->par;
  PetscInt     np, nv;
  MPI_Aint     sz;
  MPI_Info     info;
  PetscScalar *base, *a;
  int          disp;

  PetscFunctionBegin;
  p->useshm = p->shmused = PETSC_FALSE;
  if (p->shmcomm == MPI_COMM_NULL) PetscFunctionReturn(0);
  PetscCall(VecGetSize(net->dtheta, &np));
  nv = (p->sharded && !p->group) ? 2 + net->opt->nstate : 1; /* the shared parameters and optimizer state follow group 0's gradient */
  PetscCallMPI(MPI_Info_create(&info));
  PetscCallMPI(MPI_Info_set(info, "alloc_shared_noncontig", "true")); /* each segment on its owner's NUMA node */
  PetscCallMPI(MPI_Win_allocate_shared((MPI_Aint)PetscMax(nv * np, 1) * (MPI_Aint)sizeof(PetscScalar), sizeof(PetscScalar), info, p->shmcomm, &base, &p->win));
  PetscCallMPI(MPI_Info_free(&info));
  PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, p->win));
  PetscCall(PetscMalloc1(p->D, &p->seg));
  for (PetscMPIInt r = 0; r < (PetscMPIInt)p->D; r++) PetscCallMPI(MPI_Win_shared_query(p->win, r, &sz, &disp, &p->seg[r]));
  PetscCall(VecGetArray(net->dtheta, &a));
  PetscCall(PetscArraycpy(base, a, np));
  PetscCall(VecRestoreArray(net->dtheta, &a));
  PetscCall(VecPlaceArray(net->dtheta, base));
  p->shmtheta = p->sharded;
  p->thetaown = PETSC_FALSE;
  if (p->shmtheta) { /* parameters and optimizer state are the same on all groups (broadcast, or loaded): group 0's copy becomes everyone's */
    PetscInt64 *c;
    for (PetscInt k = 0; k < 1 + net->opt->nstate; k++) {
      Vec v = k ? net->opt->state[k - 1] : net->theta;
      if (!p->group) {
        PetscCall(VecGetArray(v, &a));
        PetscCall(PetscArraycpy(p->seg[0] + (k + 1) * np, a, np));
        PetscCall(VecRestoreArray(v, &a));
      }
    }
    PetscCallMPI(MPI_Win_allocate_shared((MPI_Aint)(p->group ? 0 : NN_SHM_LINE * (1 + p->D)) * (MPI_Aint)sizeof(PetscInt64), sizeof(PetscInt64), MPI_INFO_NULL, p->shmcomm, &c, &p->cwin));
    PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, p->cwin));
    PetscCallMPI(MPI_Win_shared_query(p->cwin, 0, &sz, &disp, &p->ctrl));
    if (!p->group) {
      p->ctrl[0] = 0;
      for (PetscInt r = 0; r < p->D; r++) p->ctrl[NN_SHM_LINE * (1 + r)] = p->ctrl[NN_SHM_LINE * (1 + r) + 1] = 0; /* nothing final yet, no bad step */
    }
    p->cbase  = 0;
    p->cstep  = 1;
    PetscCall(PetscMalloc1(NN_SHM_CHUNK, &p->gsum));
    p->nchunk = (np + NN_SHM_CHUNK - 1) / NN_SHM_CHUNK;
    PetscCallMPI(MPI_Win_sync(p->cwin));
    PetscCall(NNShmBarrier(p));
    PetscCallMPI(MPI_Win_sync(p->cwin));
    for (PetscInt k = 0; k < 1 + net->opt->nstate; k++) PetscCall(VecPlaceArray(k ? net->opt->state[k - 1] : net->theta, p->seg[0] + (k + 1) * np));
  }
  p->useshm = p->shmused = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* the parameter Vec gets its own array again, a copy of the shared parameters, for code that writes
   the parameters on every rank (a gradient check, a tournament) */
PetscErrorCode NNShmDetachParameters(NN net)
{
  NNParallel   p = net->par;
  PetscInt     np;
  PetscScalar *a;

  PetscFunctionBegin;
  if (!p || !p->useshm || !p->shmtheta) PetscFunctionReturn(0);
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(VecResetArray(net->theta));
  PetscCall(VecGetArray(net->theta, &a));
  PetscCall(PetscArraycpy(a, p->seg[0] + np, np));
  PetscCall(VecRestoreArray(net->theta, &a));
  p->thetaown = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* back to the shared parameters, which become group 0's (all groups' must be equal) */
PetscErrorCode NNShmAttachParameters(NN net)
{
  NNParallel   p = net->par;
  PetscInt     np;
  PetscScalar *a;

  PetscFunctionBegin;
  if (!p || !p->useshm || !p->shmtheta || !p->thetaown) PetscFunctionReturn(0);
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(NNShmBarrier(p)); /* every group has stopped reading the shared copy */
  if (!p->group) {
    PetscCall(VecGetArray(net->theta, &a));
    PetscCall(PetscArraycpy(p->seg[0] + np, a, np));
    PetscCall(VecRestoreArray(net->theta, &a));
  }
  PetscCall(NNShmBarrier(p));
  PetscCall(VecPlaceArray(net->theta, p->seg[0] + np));
  p->thetaown = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* end of training: the gradient goes back to the Vec's own array and the window is freed */
PetscErrorCode NNShmAllreduceDestroy(NN net)
{
  NNParallel   p = net->par;
  PetscInt     np;
  PetscScalar *a;

  PetscFunctionBegin;
  if (!p || !p->useshm) PetscFunctionReturn(0);
  if (p->shmtheta) {
    if (!p->thetaown) PetscCall(NNShmDetachParameters(net));
    for (PetscInt k = 0; k < net->opt->nstate; k++) { /* the optimizer state: every rank a private copy */
      Vec v = net->opt->state[k];
      PetscCall(VecGetSize(v, &np));
      PetscCall(VecResetArray(v));
      PetscCall(VecGetArray(v, &a));
      PetscCall(PetscArraycpy(a, p->seg[0] + (k + 2) * np, np));
      PetscCall(VecRestoreArray(v, &a));
    }
    PetscCallMPI(MPI_Win_unlock_all(p->cwin));
    PetscCallMPI(MPI_Win_free(&p->cwin));
    p->ctrl = NULL;
    PetscCall(PetscFree(p->gsum));
  }
  p->useshm = PETSC_FALSE;
  PetscCall(VecGetSize(net->dtheta, &np));
  PetscCall(VecResetArray(net->dtheta));
  PetscCall(VecGetArray(net->dtheta, &a));
  PetscCall(PetscArraycpy(a, p->seg[p->group], np));
  PetscCall(VecRestoreArray(net->dtheta, &a));
  p->shmtheta = p->thetaown = PETSC_FALSE;
  PetscCall(PetscFree(p->seg));
  PetscCallMPI(MPI_Win_unlock_all(p->win));
  PetscCallMPI(MPI_Win_free(&p->win));
  PetscCallMPI(MPI_Comm_free(&p->shmcomm));
  PetscFunctionReturn(0);
}

/* sums entries [lo, hi) of the D gradient segments, in the order 0, 1, ..., D-1, into all of them */
static void NNShmSum(NNParallel p, PetscInt lo, PetscInt hi)
{
  PetscInt D = p->D;

  if (D == 2) {
    PetscScalar *PETSC_RESTRICT a = p->seg[0], *PETSC_RESTRICT b = p->seg[1];
    for (PetscInt i = lo; i < hi; i++) a[i] = b[i] = a[i] + b[i];
  } else {
    for (PetscInt i = lo; i < hi; i++) {
      PetscScalar s = p->seg[0][i];
      for (PetscInt r = 1; r < D; r++) s += p->seg[r][i];
      for (PetscInt r = 0; r < D; r++) p->seg[r][i] = s;
    }
  }
}

/* sums entries [lo, hi) of the D gradient segments, in the order 0, 1, ..., D-1, into g[0, hi - lo)
   and zeroes them there: the next backward pass accumulates into zeros without a separate pass */
static void NNShmSumAndZero(NNParallel p, PetscInt lo, PetscInt hi, PetscScalar *PETSC_RESTRICT g)
{
  PetscInt D = p->D;

  if (D == 2) {
    PetscScalar *PETSC_RESTRICT a = p->seg[0] + lo, *PETSC_RESTRICT b = p->seg[1] + lo;
    for (PetscInt i = 0; i < hi - lo; i++) {
      g[i] = a[i] + b[i];
      a[i] = b[i] = 0;
    }
  } else {
    for (PetscInt i = 0; i < hi - lo; i++) {
      PetscScalar s = p->seg[0][lo + i];
      for (PetscInt r = 1; r < D; r++) s += p->seg[r][lo + i];
      g[i] = s;
      for (PetscInt r = 0; r < D; r++) p->seg[r][lo + i] = 0;
    }
  }
}

/* the published progress of group r */
static inline PetscInt64 *NNShmProgress(NNParallel p, PetscInt r)
{
  return p->ctrl + NN_SHM_LINE * (1 + r);
}

/* this group's data or loss of this step are bad: training stops after the step, so the groups
   sum the gradient but take no optimizer step (the parameters stay those of the last good step).
   Published before the group's first progress of the step, so every group sees it before it
   steps any chunk. */
PetscErrorCode NNShmMarkBadStep(NN net)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (!p || !p->useshm || !p->shmtheta) PetscFunctionReturn(0);
  __atomic_store_n(NNShmProgress(p, p->group) + 1, p->cstep, __ATOMIC_RELEASE);
  PetscFunctionReturn(0);
}

/* the progress value of this step with the entries [f, np) final */
static inline PetscInt64 NNShmProgressValue(NNParallel p, PetscInt64 np, PetscInt64 f)
{
  return p->cstep * (np + 1) + np - f;
}

static PetscErrorCode NNShmPublish(NN net, PetscInt64 f)
{
  NNParallel p = net->par;
  PetscInt   np;

  PetscFunctionBegin;
  PetscCall(VecGetSize(net->dtheta, &np));
  __atomic_store_n(NNShmProgress(p, p->group), NNShmProgressValue(p, np, f), __ATOMIC_RELEASE);
  PetscFunctionReturn(0);
}

/* shared parameters: after layer i's backward pass the gradient entries from the layer's first
   parameter on are final in this group's segment (the layers run backwards) */
PetscErrorCode NNShmBackwardProgress(NN net, PetscInt i)
{
  NNParallel p = net->par;

  PetscFunctionBegin;
  if (!p->useshm || !p->shmtheta) PetscFunctionReturn(0);
  PetscCall(NNShmPublish(net, net->layers[i]->poff));
  PetscFunctionReturn(0);
}

/* shared parameters: the reduction and the optimizer step, chunk by chunk, shared with the other
   groups (see the top of this file); ends with every chunk stepped by some group */
static PetscErrorCode NNShmReduceAndStep(NN net, PetscLogDouble *wait, PetscLogDouble *work, PetscLogDouble *early)
{
  NNParallel     p = net->par;
  NNOpt          o = net->opt;
  PetscInt       np, nsteps = o->nsteps, bad = -1;
  PetscInt64     C = p->nchunk;
  PetscLogDouble t0, t1, t2, tw = 0, tk = 0, te = 0;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(VecGetSize(net->dtheta, &np));
  PetscCall(NNShmPublish(net, 0)); /* this group's gradient is complete */
  for (;;) {
    PetscInt64 c = __atomic_fetch_add(p->ctrl, (PetscInt64)1, __ATOMIC_ACQ_REL) - p->cbase;
    PetscInt   hi, lo;
    PetscBool  all = PETSC_TRUE;
    if (c >= C) break; /* every rank overshoots once: the counter moves by C + D per step */
    hi = (PetscInt)(np - c * NN_SHM_CHUNK);
    lo = PetscMax(0, hi - NN_SHM_CHUNK);
    PetscCall(PetscTime(&t1));
    for (PetscInt r = 0; r < p->D; r++) {
      PetscInt64 f;
      while ((f = __atomic_load_n(NNShmProgress(p, r), __ATOMIC_ACQUIRE)) < NNShmProgressValue(p, np, lo)) sched_yield(); /* group r is still computing these entries */
      if (f < NNShmProgressValue(p, np, 0)) all = PETSC_FALSE;
    }
    PetscCall(PetscTime(&t2));
    tw += t2 - t1;
    NNShmSumAndZero(p, lo, hi, p->gsum);
    if (bad < 0) { /* every group has published its progress in this step, hence its bad-step mark */
      bad = 0;
      for (PetscInt r = 0; r < p->D; r++)
        if (__atomic_load_n(NNShmProgress(p, r) + 1, __ATOMIC_ACQUIRE) == p->cstep) bad = 1;
    }
    o->nsteps = nsteps;
    if (!bad) PetscCall(NNOptStepRange(o, lo, hi, net->theta, p->gsum));
    PetscCall(PetscTime(&t1));
    tk += t1 - t2;
    if (!all) te += t1 - t2; /* done while another group was still in its backward pass */
  }
  PetscCall(PetscTime(&t1));
  PetscCall(NNShmBarrier(p)); /* every chunk stepped and every segment zeroed */
  net->dthetazero = PETSC_TRUE;
  bad = 0;
  for (PetscInt r = 0; r < p->D; r++)
    if (__atomic_load_n(NNShmProgress(p, r) + 1, __ATOMIC_ACQUIRE) == p->cstep) bad = 1;
  o->nsteps = bad ? nsteps : nsteps + 1;
  p->cbase += C + p->D;
  p->cstep++;
  PetscCall(PetscTime(&t2));
  *wait  = tw + (t2 - t1);
  *work  = (t2 - t0) - *wait;
  *early = te;
  PetscFunctionReturn(0);
}

/* every group's gradient segment becomes the sum of all of them (with shared parameters, also the
   optimizer step is taken); returns the seconds spent waiting for the other groups' backward passes,
   the seconds spent summing (and stepping), and of these the seconds spent while another group
   was still in its backward pass */
PetscErrorCode NNShmAllreduce(NN net, PetscLogDouble *wait, PetscLogDouble *sum, PetscLogDouble *early)
{
  NNParallel     p = net->par;
  PetscInt       np, lo, hi;
  PetscLogDouble t0, t1, t2;

  PetscFunctionBegin;
  if (p->shmtheta) {
    PetscCall(NNShmReduceAndStep(net, wait, sum, early));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscTime(&t0));
  PetscCall(VecGetSize(net->dtheta, &np));
  NNParallelShard(np, p->group, p->D, &lo, &hi);
  PetscCall(NNShmBarrier(p)); /* every group's gradient is written and visible */
  PetscCall(PetscTime(&t1));
  NNShmSum(p, lo, hi);
  PetscCall(NNShmBarrier(p)); /* no rank zeroes its segment for the next step while another still reads it */
  PetscCall(PetscTime(&t2));
  *wait  = t1 - t0;
  *sum   = t2 - t1;
  *early = 0;
  PetscFunctionReturn(0);
}

