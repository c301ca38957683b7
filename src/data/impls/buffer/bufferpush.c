/*
   NNDATABUFFER: pushes into the ring, one sample at a time, by the caller (NNDataBufferPush()) or by a
   TSMonitor that pushes a time stepper's (u_n, u_{n+h}) pairs (NNDataBufferTSMonitor()).
*/
#include <petnn/private/bufferimpl.h>
#include <petscdmda.h>

typedef struct {
  PetscBool dm;
  PetscInt  local, global;
} NNBufferVecLayout;

static PetscErrorCode NNBufferGetLayout(Vec v, NNBufferVecLayout *l)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(v, &dm));
  l->dm = (PetscBool)(dm != NULL);
  PetscCall(VecGetLocalSize(v, &l->local));
  PetscCall(VecGetSize(v, &l->global));
  PetscFunctionReturn(0);
}

/* the first push fixes the layout of inputs and targets, the sample shape and the memory */
static PetscErrorCode NNBufferSetLayout(NNData d, NNData_Buffer *b, Vec x, const NNBufferVecLayout *lx, const NNBufferVecLayout *ly)
{
  DM dm;

  PetscFunctionBegin;
  b->xdm     = lx->dm;
  b->ydm     = ly->dm;
  b->xsize   = lx->local;
  b->ysize   = ly->local;
  b->xglobal = lx->global;
  b->yglobal = ly->global;
  d->ntarget = ly->global;
  d->shape.ndim   = 1;
  d->shape.dim[0] = lx->global;
  PetscCall(VecGetDM(x, &dm));
  if (dm) {
    PetscInt dim, M, N, P, dof;
    PetscBool isda;
    PetscCall(PetscObjectTypeCompare((PetscObject)dm, DMDA, &isda));
    if (isda) PetscCall(DMDAGetInfo(dm, &dim, &M, &N, &P, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
    if (isda && dim == 2) d->shape = (NNShape){3, {dof, N, M}};
    if (isda && dim == 3) d->shape = (NNShape){4, {dof, P, N, M}};
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNBufferCheckLayout(NNData d, const char what[], PetscBool dm, PetscInt local, PetscInt global, const NNBufferVecLayout *l)
{
  const char *prefix = ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "";

  PetscFunctionBegin;
  PetscCheck(l->dm == dm, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "NNDataBufferPush(): the %s is %s, but replay buffer%s%s holds %s (the layout of its first push)", what, l->dm ? "a DMDA Vec" : "a sequential Vec", NNBufferSep(d), prefix, dm ? "pieces of DMDA Vecs" : "whole samples in sequential Vecs");
  PetscCheck(l->local == local && l->global == global, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNDataBufferPush(): the %s has %" PetscInt_FMT " entries (%" PetscInt_FMT " on this rank), but replay buffer%s%s holds samples of %" PetscInt_FMT " (%" PetscInt_FMT " on this rank), the layout of its first push", what, l->global, l->local, NNBufferSep(d), prefix, global, local);
  PetscFunctionReturn(0);
}

/* copies v (n local entries, checked finite) into dst */
static PetscErrorCode NNBufferCopyIn(Vec v, PetscInt n, const char what[], PetscScalar *dst)
{
  const PetscScalar *a;
  PetscReal          s = 0;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt i = 0; i < n; i++) s += 0 * PetscRealPart(a[i]);
  if (!PetscIsInfOrNanReal(s)) PetscCall(PetscArraycpy(dst, a, n));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscCheck(!PetscIsInfOrNanReal(s), PETSC_COMM_SELF, PETSC_ERR_FP, "NNDataBufferPush(): the %s holds a NaN or infinite value on this rank; nothing was pushed", what);
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferPush - pushes one (input, target) sample into the replay buffer

   Logically Collective (the ranks that share a sample push it together)

   Input Parameters:
+  d - the buffer (NNDATABUFFER)
.  x - the input: a sequential Vec holding the whole sample, or a Vec of a DMDA (the simulation's state:
       each rank keeps its own piece)
-  y - the target, likewise (for a network with a spatial output, a Vec on the output's DMDA)

   Notes:
   The first push fixes the layout; later pushes must have the same kind of Vec and the same sizes, or the
   error names what differs. A value that is NaN or infinite is refused. When the buffer is full the oldest
   sample is overwritten. Nothing is communicated.

   Level: beginner

.seealso: `NNDATABUFFER`, `NNTrainStepBuffer()`, `NNDataBufferTSMonitor()`, `NNDataBufferSetCapacity()`
@*/
PetscErrorCode NNDataBufferPush(NNData d, Vec x, Vec y)
{
  NNData_Buffer    *b;
  NNBufferVecLayout lx, ly;
  PetscBool         isbuf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 2);
  PetscValidHeaderSpecific(y, VEC_CLASSID, 3);
  PetscCall(PetscObjectTypeCompare((PetscObject)d, NNDATABUFFER, &isbuf));
  PetscCheck(isbuf, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_WRONG, "NNDataBufferPush() needs a data set of type %s (NNDataSetType()), not %s", NNDATABUFFER, ((PetscObject)d)->type_name ? ((PetscObject)d)->type_name : "(unset)");
  b = (NNData_Buffer *)d->data;
  PetscCall(NNBufferGetLayout(x, &lx));
  PetscCall(NNBufferGetLayout(y, &ly));
  PetscCheck(lx.global > 0 && ly.global > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNDataBufferPush(): empty input or target Vec");
  if (!b->xglobal) PetscCall(NNBufferSetLayout(d, b, x, &lx, &ly));
  PetscCall(NNBufferCheckLayout(d, "input", b->xdm, b->xsize, b->xglobal, &lx));
  PetscCall(NNBufferCheckLayout(d, "target", b->ydm, b->ysize, b->yglobal, &ly));
  if (!b->x) {
    PetscCall(PetscMalloc1(PetscMax((size_t)b->capacity * b->xsize, 1), &b->x));
    PetscCall(PetscMalloc1(PetscMax((size_t)b->capacity * b->ysize, 1), &b->y));
  }
  PetscCall(NNBufferCopyIn(x, b->xsize, "input", b->x + (size_t)b->head * b->xsize));
  PetscCall(NNBufferCopyIn(y, b->ysize, "target", b->y + (size_t)b->head * b->ysize));
  b->head     = (b->head + 1) % b->capacity;
  b->count    = PetscMin(b->count + 1, b->capacity);
  b->pushed++;
  d->nsamples = b->count;
  d->rend     = b->count;
  PetscFunctionReturn(0);
}

/*@
   NNDataBufferSetHorizon - the horizon h of the pairs NNDataBufferTSMonitor() pushes

   Logically Collective

   Input Parameters:
+  d - the buffer
-  h - time steps between input and target (default 1): it pushes (u_{n-h}, u_n) after step n

   Options Database Key:
.  -data_buffer_horizon <h> - the horizon

   Level: intermediate

.seealso: `NNDataBufferTSMonitor()`
@*/
PetscErrorCode NNDataBufferSetHorizon(NNData d, PetscInt h)
{
  NNData_Buffer *b;
  PetscBool      isbuf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)d, NNDATABUFFER, &isbuf));
  PetscCheck(isbuf, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_WRONG, "NNDataBufferSetHorizon() needs a data set of type %s", NNDATABUFFER);
  PetscCheck(h > 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_OUTOFRANGE, "Replay buffer horizon %" PetscInt_FMT " (-data_buffer_horizon): it must be at least 1 time step", h);
  b = (NNData_Buffer *)d->data;
  if (b->hist) PetscCall(VecDestroyVecs(b->horizon, &b->hist));
  b->horizon = h;
  b->nhist   = 0;
  PetscFunctionReturn(0);
}

/*@C
   NNDataBufferTSMonitor - a TSMonitor that pushes the time stepper's (u_{n-h}, u_n) pairs into a replay buffer

   Collective

   Input Parameters:
+  ts - the time stepper
.  step - the step number
.  time - the time (unused)
.  u - the state after the step (a Vec of the simulation's DMDA: each rank keeps its piece)
-  ctx - the replay buffer (an NNData of type NNDATABUFFER)

   Usage:
.vb
   TSMonitorSet(ts, NNDataBufferTSMonitor, buffer, NULL);
.ve

   Notes:
   The monitor keeps the last h states (NNDataBufferSetHorizon()); from step h on, each step pushes the state
   of h steps before as the input and the new state as the target. A step number at or below the last one
   seen (a new TSSolve() from an earlier time) starts the history again; the repeated call of a TSSolve()
   that continues from the last step pushes nothing.

   Level: intermediate

.seealso: `NNDataBufferPush()`, `NNTrainStepBuffer()`, `TSMonitorSet()`
@*/
PetscErrorCode NNDataBufferTSMonitor(TS ts PETSC_UNUSED, PetscInt step, PetscReal time PETSC_UNUSED, Vec u, void *ctx)
{
  NNData         d = (NNData)ctx;
  NNData_Buffer *b;
  PetscInt       h;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 5);
  b = (NNData_Buffer *)d->data;
  h = b->horizon;
  if (!b->hist) {
    PetscCall(VecDuplicateVecs(u, h, &b->hist));
    b->nhist = 0;
  }
  if (b->nhist > 0 && step == b->laststep) PetscFunctionReturn(0); /* TSSolve() again from where the last one stopped */
  if (b->nhist > 0 && step < b->laststep) b->nhist = 0;             /* a new trajectory */
  if (b->nhist >= h) PetscCall(NNDataBufferPush(d, b->hist[step % h], u));
  PetscCall(VecCopy(u, b->hist[step % h]));
  b->nhist++;
  b->laststep = step;
  PetscFunctionReturn(0);
}
