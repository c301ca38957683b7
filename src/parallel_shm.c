/*
   The gradient all-reduce of data groups that share one node, through an MPI shared-memory window.

   During training the gradient Vec of data group g lives in segment g of a window allocated with
   MPI_Win_allocate_shared over the data communicator (VecPlaceArray), so the layers' backward
   passes write straight into memory every group can read. At the end of the backward pass the
   groups meet at a barrier, group g sums slice g of the D segments (always in the order
   0, 1, ..., D-1) and writes the sum into all D segments, and a second barrier ends the step:
   every element is added once, by one rank, so the gradient is bitwise identical on all ranks.
   With a sharded optimizer (NNSetOptimizerSharding()) one copy of the parameters, in segment 0 of
   the window, is the parameter Vec of every group: group g sums slice g of the gradients, steps
   slice g of the shared parameters, and one barrier ends the step. Nothing is copied (the
   all-gather is free), half of the optimizer's work is saved on 2 groups, and one barrier fewer
   is crossed than without sharding.

   Why: on one node MPI moves a large message through shared-memory buffers in fragments on the
   same cores that compute (Open MPI 4.1 here: a 26 MB MPI_Iallreduce over 2 ranks takes 32 ms,
   a blocking MPI_Allreduce 13-16 ms), and without an asynchronous progress thread nothing of it
   overlaps the backward pass. Reading the D segments directly moves each byte once: 3-4 ms.
*/
#include "parallel.h"

const char *const NNAllreduceTypes[] = {"auto", "mpi", "shared", "NNAllreduceType", "NN_ALLREDUCE_", NULL};

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
   backward pass as far as the MPI progresses it (NNSetBucketSize()). Either way the gradient is
   bitwise identical on all data groups.

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
  nv = (p->sharded && !p->group) ? 2 : 1; /* the shared parameters follow group 0's gradient */
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
  if (p->shmtheta) { /* the parameters are the same on all groups (broadcast): group 0's copy becomes everyone's */
    if (!p->group) {
      PetscCall(VecGetArray(net->theta, &a));
      PetscCall(PetscArraycpy(p->seg[0] + np, a, np));
      PetscCall(VecRestoreArray(net->theta, &a));
    }
    PetscCall(NNShmBarrier(p));
    PetscCall(VecPlaceArray(net->theta, p->seg[0] + np));
  }
  p->thetaown = PETSC_FALSE;
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
  if (p->shmtheta && !p->thetaown) PetscCall(NNShmDetachParameters(net));
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

/* every group's gradient segment becomes the sum of all of them; returns the seconds spent waiting
   for the other groups to finish their backward pass and the seconds spent summing */
PetscErrorCode NNShmAllreduce(NN net, PetscLogDouble *wait, PetscLogDouble *sum)
{
  NNParallel     p = net->par;
  PetscInt       np, lo, hi, D = p->D;
  PetscLogDouble t0, t1, t2;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(VecGetSize(net->dtheta, &np));
  NNParallelShard(np, p->group, D, &lo, &hi); /* = [slo, shi) of a sharded optimizer */
  PetscCall(NNShmBarrier(p)); /* every group's gradient is written and visible */
  PetscCall(PetscTime(&t1));
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
  /* no rank may zero its segment for the next step while another still reads it: a barrier here,
     or, with the shared parameters, the one after the optimizer step (NNShmParametersStepped()) */
  if (!p->shmtheta) PetscCall(NNShmBarrier(p));
  PetscCall(PetscTime(&t2));
  *wait = t1 - t0;
  *sum  = t2 - t1;
  PetscFunctionReturn(0);
}

/* sharded optimizer: every group has stepped its slice of the shared parameters once all have
   passed this barrier. It also ends every rank's reading of the other gradient segments, so the
   next step may zero them. */
PetscErrorCode NNShmParametersStepped(NN net)
{
  PetscFunctionBegin;
  PetscCall(NNShmBarrier(net->par));
  PetscFunctionReturn(0);
}
