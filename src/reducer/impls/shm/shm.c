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
#include <petnn/private/reducerimpl.h>

typedef struct {
  MPI_Comm      shmcomm;  /* the data communicator's ranks, all on one node */
  MPI_Win       win;      /* segment g: data group g's gradient (segment 0: then the shared parameters) */
  PetscScalar **seg;
  PetscBool     shared;   /* the parameters and optimizer state are in the window too, one copy for all groups (sharded optimizer) */
  PetscBool     detached; /* ... but the parameter Vec has its own copy for now (detach op) */
  MPI_Win       cwin;     /* with shared parameters: the control block (chunk counter, each group's progress) */
  PetscInt64   *ctrl;
  PetscInt64    cbase;    /* the chunk counter's value at the start of this step */
  PetscInt64    cstep;    /* steps reduced so far + 1 (progress values) */
  PetscInt      nchunk;   /* chunks of the shared reduction and optimizer step */
  PetscScalar  *gsum;     /* a chunk's summed gradient, for the optimizer step (the segments are zeroed) */
} NNReducer_Shm;

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
static PetscErrorCode NNShmBarrier(NNReducer_Shm *s)
{
  PetscFunctionBegin;
  PetscCallMPI(MPI_Win_sync(s->win));
  PetscCallMPI(MPI_Barrier(s->shmcomm));
  PetscCallMPI(MPI_Win_sync(s->win));
  PetscFunctionReturn(0);
}

/* start of training with D > 1: whether the shm type serves it (-nn_allreduce allows it and all data
   groups of the trainer are on one node) */
PetscErrorCode NNReducerShmUsable(NNReducer r, PetscBool *usable)
{
  NNParallel  p = r->net->par;
  MPI_Comm    shmcomm;
  PetscMPIInt nshm, same;

  PetscFunctionBegin;
  *usable = PETSC_FALSE;
  if (r->artype == NN_ALLREDUCE_MPI) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_split_type(p->dcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shmcomm));
  PetscCallMPI(MPI_Comm_size(shmcomm, &nshm));
  PetscCallMPI(MPI_Comm_free(&shmcomm));
  same = (PetscMPIInt)(nshm == p->D);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, p->dcomm));
  PetscCheck(same || r->artype != NN_ALLREDUCE_SHARED, PetscObjectComm((PetscObject)r), PETSC_ERR_ARG_INCOMP, "-nn_allreduce shared needs all %" PetscInt_FMT " data groups of a trainer on one node; here they span several: use -nn_allreduce mpi (or auto)", p->D);
  *usable = (PetscBool)same;
  PetscFunctionReturn(0);
}

/* start of training: puts the gradient (and, with a sharded optimizer, the parameters) into a shared
   window. Segment g holds group g's gradient; with a sharded optimizer segment 0 also holds the
   parameters that all groups share. */
static PetscErrorCode NNReducerSetUp_Shm(NNReducer r)
{
  NN             net = r->net;
  NNParallel     p   = net->par;
  NNReducer_Shm *s   = (NNReducer_Shm *)r->data;
  PetscInt     np, nv;
  MPI_Aint     sz;
  MPI_Info     info;
  PetscScalar *base, *a;
  int          disp;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_split_type(p->dcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &s->shmcomm)); /* all data groups: NNReducerShmUsable() */
  PetscCall(VecGetSize(net->dtheta, &np));
  nv = (r->sharded && !p->group) ? 2 + r->opt->nstate : 1; /* the shared parameters and optimizer state follow group 0's gradient */
  PetscCallMPI(MPI_Info_create(&info));
  PetscCallMPI(MPI_Info_set(info, "alloc_shared_noncontig", "true")); /* each segment on its owner's NUMA node */
  PetscCallMPI(MPI_Win_allocate_shared((MPI_Aint)PetscMax(nv * np, 1) * (MPI_Aint)sizeof(PetscScalar), sizeof(PetscScalar), info, s->shmcomm, &base, &s->win));
  PetscCallMPI(MPI_Info_free(&info));
  PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->win));
  PetscCall(PetscMalloc1(p->D, &s->seg));
  for (PetscMPIInt r = 0; r < (PetscMPIInt)p->D; r++) PetscCallMPI(MPI_Win_shared_query(s->win, r, &sz, &disp, &s->seg[r]));
  PetscCall(VecGetArray(net->dtheta, &a));
  PetscCall(PetscArraycpy(base, a, np));
  PetscCall(VecRestoreArray(net->dtheta, &a));
  PetscCall(VecPlaceArray(net->dtheta, base));
  s->shared = r->sharded;
  s->detached = PETSC_FALSE;
  if (s->shared) { /* parameters and optimizer state are the same on all groups (broadcast, or loaded): group 0's copy becomes everyone's */
    PetscInt64 *c;
    for (PetscInt k = 0; k < 1 + r->opt->nstate; k++) {
      Vec v = k ? r->opt->state[k - 1] : net->theta;
      if (!p->group) {
        PetscCall(VecGetArray(v, &a));
        PetscCall(PetscArraycpy(s->seg[0] + (k + 1) * np, a, np));
        PetscCall(VecRestoreArray(v, &a));
      }
    }
    PetscCallMPI(MPI_Win_allocate_shared((MPI_Aint)(p->group ? 0 : NN_SHM_LINE * (1 + p->D)) * (MPI_Aint)sizeof(PetscInt64), sizeof(PetscInt64), MPI_INFO_NULL, s->shmcomm, &c, &s->cwin));
    PetscCallMPI(MPI_Win_lock_all(MPI_MODE_NOCHECK, s->cwin));
    PetscCallMPI(MPI_Win_shared_query(s->cwin, 0, &sz, &disp, &s->ctrl));
    if (!p->group) {
      s->ctrl[0] = 0;
      for (PetscInt r = 0; r < p->D; r++) s->ctrl[NN_SHM_LINE * (1 + r)] = s->ctrl[NN_SHM_LINE * (1 + r) + 1] = 0; /* nothing final yet, no bad step */
    }
    s->cbase  = 0;
    s->cstep  = 1;
    PetscCall(PetscMalloc1(NN_SHM_CHUNK, &s->gsum));
    s->nchunk = (np + NN_SHM_CHUNK - 1) / NN_SHM_CHUNK;
    PetscCallMPI(MPI_Win_sync(s->cwin));
    PetscCall(NNShmBarrier(s));
    PetscCallMPI(MPI_Win_sync(s->cwin));
    for (PetscInt k = 0; k < 1 + r->opt->nstate; k++) PetscCall(VecPlaceArray(k ? r->opt->state[k - 1] : net->theta, s->seg[0] + (k + 1) * np));
  }
  PetscFunctionReturn(0);
}

/* the parameter Vec gets its own array again, a copy of the shared parameters, for code that writes
   the parameters on every rank (a gradient check, a tournament) */
static PetscErrorCode NNReducerDetach_Shm(NNReducer r)
{
  NN             net = r->net;
  NNReducer_Shm *s   = (NNReducer_Shm *)r->data;
  PetscInt     np;
  PetscScalar *a;

  PetscFunctionBegin;
  if (!s->shared) PetscFunctionReturn(0);
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(VecResetArray(net->theta));
  PetscCall(VecGetArray(net->theta, &a));
  PetscCall(PetscArraycpy(a, s->seg[0] + np, np));
  PetscCall(VecRestoreArray(net->theta, &a));
  s->detached = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* back to the shared parameters, which become group 0's (all groups' must be equal) */
static PetscErrorCode NNReducerAttach_Shm(NNReducer r)
{
  NN             net = r->net;
  NNParallel     p   = net->par;
  NNReducer_Shm *s   = (NNReducer_Shm *)r->data;
  PetscInt     np;
  PetscScalar *a;

  PetscFunctionBegin;
  if (!s->shared || !s->detached) PetscFunctionReturn(0);
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(NNShmBarrier(s)); /* every group has stopped reading the shared copy */
  if (!p->group) {
    PetscCall(VecGetArray(net->theta, &a));
    PetscCall(PetscArraycpy(s->seg[0] + np, a, np));
    PetscCall(VecRestoreArray(net->theta, &a));
  }
  PetscCall(NNShmBarrier(s));
  PetscCall(VecPlaceArray(net->theta, s->seg[0] + np));
  s->detached = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* end of training: the gradient goes back to the Vec's own array and the window is freed */
static PetscErrorCode NNReducerReset_Shm(NNReducer r)
{
  NN             net = r->net;
  NNParallel     p   = net->par;
  NNReducer_Shm *s   = (NNReducer_Shm *)r->data;
  PetscInt     np;
  PetscScalar *a;

  PetscFunctionBegin;
  if (s->win == MPI_WIN_NULL) PetscFunctionReturn(0);
  if (s->shared) {
    if (!s->detached) PetscCall(NNReducerDetach_Shm(r));
    for (PetscInt k = 0; k < r->opt->nstate; k++) { /* the optimizer state: every rank a private copy */
      Vec v = r->opt->state[k];
      PetscCall(VecGetSize(v, &np));
      PetscCall(VecResetArray(v));
      PetscCall(VecGetArray(v, &a));
      PetscCall(PetscArraycpy(a, s->seg[0] + (k + 2) * np, np));
      PetscCall(VecRestoreArray(v, &a));
    }
    PetscCallMPI(MPI_Win_unlock_all(s->cwin));
    PetscCallMPI(MPI_Win_free(&s->cwin));
    s->ctrl = NULL;
    PetscCall(PetscFree(s->gsum));
  }
  PetscCall(VecGetSize(net->dtheta, &np));
  PetscCall(VecResetArray(net->dtheta));
  PetscCall(VecGetArray(net->dtheta, &a));
  PetscCall(PetscArraycpy(a, s->seg[p->group], np));
  PetscCall(VecRestoreArray(net->dtheta, &a));
  s->shared = s->detached = PETSC_FALSE;
  PetscCall(PetscFree(s->seg));
  PetscCallMPI(MPI_Win_unlock_all(s->win));
  PetscCallMPI(MPI_Win_free(&s->win));
  PetscCallMPI(MPI_Comm_free(&s->shmcomm));
  PetscFunctionReturn(0);
}

/* sums entries [lo, hi) of the D gradient segments, in the order 0, 1, ..., D-1, into all of them */
static void NNShmSum(NNReducer_Shm *sh, PetscInt D, PetscInt lo, PetscInt hi)
{
  if (D == 2) {
    PetscScalar *PETSC_RESTRICT a = sh->seg[0], *PETSC_RESTRICT b = sh->seg[1];
    for (PetscInt i = lo; i < hi; i++) a[i] = b[i] = a[i] + b[i];
  } else {
    for (PetscInt i = lo; i < hi; i++) {
      PetscScalar sum = sh->seg[0][i];
      for (PetscInt r = 1; r < D; r++) sum += sh->seg[r][i];
      for (PetscInt r = 0; r < D; r++) sh->seg[r][i] = sum;
    }
  }
}

/* sums entries [lo, hi) of the D gradient segments, in the order 0, 1, ..., D-1, into g[0, hi - lo)
   and zeroes them there: the next backward pass accumulates into zeros without a separate pass */
static void NNShmSumAndZero(NNReducer_Shm *sh, PetscInt D, PetscInt lo, PetscInt hi, PetscScalar *PETSC_RESTRICT g)
{
  if (D == 2) {
    PetscScalar *PETSC_RESTRICT a = sh->seg[0] + lo, *PETSC_RESTRICT b = sh->seg[1] + lo;
    for (PetscInt i = 0; i < hi - lo; i++) {
      g[i] = a[i] + b[i];
      a[i] = b[i] = 0;
    }
  } else {
    for (PetscInt i = 0; i < hi - lo; i++) {
      PetscScalar sum = sh->seg[0][lo + i];
      for (PetscInt r = 1; r < D; r++) sum += sh->seg[r][lo + i];
      g[i] = sum;
      for (PetscInt r = 0; r < D; r++) sh->seg[r][lo + i] = 0;
    }
  }
}

/* the published progress of group r */
static inline PetscInt64 *NNShmProgress(NNReducer_Shm *s, PetscInt g)
{
  return s->ctrl + NN_SHM_LINE * (1 + g);
}

/* this group's data or loss of this step are bad: training stops after the step, so the groups
   sum the gradient but take no optimizer step (the parameters stay those of the last good step).
   Published before the group's first progress of the step, so every group sees it before it
   steps any chunk. */
static PetscErrorCode NNReducerMarkBad_Shm(NNReducer r)
{
  NNReducer_Shm *s = (NNReducer_Shm *)r->data;

  PetscFunctionBegin;
  if (!s->shared) PetscFunctionReturn(0);
  __atomic_store_n(NNShmProgress(s, r->net->par->group) + 1, s->cstep, __ATOMIC_RELEASE);
  PetscFunctionReturn(0);
}

/* the progress value of this step with the entries [f, np) final */
static inline PetscInt64 NNShmProgressValue(NNReducer_Shm *s, PetscInt64 np, PetscInt64 f)
{
  return s->cstep * (np + 1) + np - f;
}

static PetscErrorCode NNShmPublish(NNReducer r, PetscInt64 f)
{
  NNReducer_Shm *s = (NNReducer_Shm *)r->data;
  PetscInt       np;

  PetscFunctionBegin;
  PetscCall(VecGetSize(r->net->dtheta, &np));
  __atomic_store_n(NNShmProgress(s, r->net->par->group), NNShmProgressValue(s, np, f), __ATOMIC_RELEASE);
  PetscFunctionReturn(0);
}

/* shared parameters: after layer i's backward pass the gradient entries from the layer's first
   parameter on are final in this group's segment (the layers run backwards) */
static PetscErrorCode NNReducerLayerDone_Shm(NNReducer r, PetscInt i, PetscScalar *g PETSC_UNUSED)
{
  NNReducer_Shm *s = (NNReducer_Shm *)r->data;

  PetscFunctionBegin;
  if (!s->shared) PetscFunctionReturn(0);
  PetscCall(NNShmPublish(r, r->net->layers[i]->poff));
  PetscFunctionReturn(0);
}

/* shared parameters: the reduction and the optimizer step, chunk by chunk, shared with the other
   groups (see the top of this file); ends with every chunk stepped by some group */
static PetscErrorCode NNShmReduceAndStep(NNReducer r, PetscLogDouble *wait, PetscLogDouble *work, PetscLogDouble *early)
{
  NN             net = r->net;
  NNParallel     p   = net->par;
  NNReducer_Shm *s   = (NNReducer_Shm *)r->data;
  NNOpt          o = r->opt;
  PetscInt       np, nsteps = o->nsteps, bad = -1;
  PetscInt64     C = s->nchunk;
  PetscLogDouble t0, t1, t2, tw = 0, tk = 0, te = 0;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(VecGetSize(net->dtheta, &np));
  PetscCall(NNShmPublish(r, 0)); /* this group's gradient is complete */
  for (;;) {
    PetscInt64 c = __atomic_fetch_add(s->ctrl, (PetscInt64)1, __ATOMIC_ACQ_REL) - s->cbase;
    PetscInt   hi, lo;
    PetscBool  all = PETSC_TRUE;
    if (c >= C) break; /* every rank overshoots once: the counter moves by C + D per step */
    hi = (PetscInt)(np - c * NN_SHM_CHUNK);
    lo = PetscMax(0, hi - NN_SHM_CHUNK);
    PetscCall(PetscTime(&t1));
    for (PetscInt g = 0; g < p->D; g++) {
      PetscInt64 f;
      while ((f = __atomic_load_n(NNShmProgress(s, g), __ATOMIC_ACQUIRE)) < NNShmProgressValue(s, np, lo)) sched_yield(); /* group g is still computing these entries */
      if (f < NNShmProgressValue(s, np, 0)) all = PETSC_FALSE;
    }
    PetscCall(PetscTime(&t2));
    tw += t2 - t1;
    NNShmSumAndZero(s, p->D, lo, hi, s->gsum);
    if (bad < 0) { /* every group has published its progress in this step, hence its bad-step mark */
      bad = 0;
      for (PetscInt g = 0; g < p->D; g++)
        if (__atomic_load_n(NNShmProgress(s, g) + 1, __ATOMIC_ACQUIRE) == s->cstep) bad = 1;
    }
    o->nsteps = nsteps;
    if (!bad) PetscCall(NNOptStepRange(o, lo, hi, net->theta, s->gsum));
    PetscCall(PetscTime(&t1));
    tk += t1 - t2;
    if (!all) te += t1 - t2; /* done while another group was still in its backward pass */
  }
  PetscCall(PetscTime(&t1));
  PetscCall(NNShmBarrier(s)); /* every chunk stepped and every segment zeroed */
  net->dthetazero = PETSC_TRUE;
  bad = 0;
  for (PetscInt g = 0; g < p->D; g++)
    if (__atomic_load_n(NNShmProgress(s, g) + 1, __ATOMIC_ACQUIRE) == s->cstep) bad = 1;
  o->nsteps = bad ? nsteps : nsteps + 1;
  s->cbase += C + p->D;
  s->cstep++;
  PetscCall(PetscTime(&t2));
  *wait  = tw + (t2 - t1);
  *work  = (t2 - t0) - *wait;
  *early = te;
  PetscFunctionReturn(0);
}

/* end of the backward pass: every group's gradient segment becomes the sum of all of them (with
   shared parameters, also the optimizer step is taken); the time spent waiting for the other groups'
   backward passes, summing (and stepping), and of these the time spent while another group was
   still in its backward pass, go into the reducer's statistics */
static PetscErrorCode NNReducerBackwardDone_Shm(NNReducer r, PetscScalar *g PETSC_UNUSED)
{
  NN             net = r->net;
  NNParallel     p   = net->par;
  NNReducer_Shm *s   = (NNReducer_Shm *)r->data;
  PetscInt       np, lo, hi;
  PetscLogDouble t0, t1, t2, wait = 0, sum = 0, early = 0;

  PetscFunctionBegin;
  if (s->shared) PetscCall(NNShmReduceAndStep(r, &wait, &sum, &early));
  else {
    PetscCall(PetscTime(&t0));
    PetscCall(VecGetSize(net->dtheta, &np));
    NNParallelShard(np, p->group, p->D, &lo, &hi);
    PetscCall(NNShmBarrier(s)); /* every group's gradient is written and visible */
    PetscCall(PetscTime(&t1));
    NNShmSum(s, p->D, lo, hi);
    PetscCall(NNShmBarrier(s)); /* no rank zeroes its segment for the next step while another still reads it */
    PetscCall(PetscTime(&t2));
    wait = t1 - t0;
    sum  = t2 - t1;
  }
  r->t_exposed += wait + sum;
  r->t_wait += wait;
  r->t_early += early;
  PetscFunctionReturn(0);
}

/* with shared parameters the reduction took the step (NNShmReduceAndStep()); else the mpi type's */
static PetscErrorCode NNReducerStep_Shm(NNReducer r)
{
  NNReducer_Shm *s = (NNReducer_Shm *)r->data;

  PetscFunctionBegin;
  if (!s->shared) PetscCall(NNReducerStep_MPI(r));
  PetscFunctionReturn(0);
}

/* with shared parameters there is one optimizer state for all groups */
static PetscErrorCode NNReducerGatherOptState_Shm(NNReducer r)
{
  NNReducer_Shm *s = (NNReducer_Shm *)r->data;

  PetscFunctionBegin;
  if (!s->shared) PetscCall(NNReducerGatherOptState_MPI(r));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNReducerDestroy_Shm(NNReducer r)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(r->data));
  PetscFunctionReturn(0);
}

PetscErrorCode NNReducerCreate_Shm(NNReducer r)
{
  NNReducer_Shm *s;

  PetscFunctionBegin;
  PetscCall(PetscNew(&s));
  s->shmcomm             = MPI_COMM_NULL;
  s->win                 = MPI_WIN_NULL;
  s->cwin                = MPI_WIN_NULL;
  r->data                = s;
  r->ops->setup          = NNReducerSetUp_Shm;
  r->ops->layerdone      = NNReducerLayerDone_Shm;
  r->ops->backwarddone   = NNReducerBackwardDone_Shm;
  r->ops->step           = NNReducerStep_Shm;
  r->ops->gatheroptstate = NNReducerGatherOptState_Shm;
  r->ops->markbad        = NNReducerMarkBad_Shm;
  r->ops->detach         = NNReducerDetach_Shm;
  r->ops->attach         = NNReducerAttach_Shm;
  r->ops->reset          = NNReducerReset_Shm;
  r->ops->destroy        = NNReducerDestroy_Shm;
  PetscFunctionReturn(0);
}
