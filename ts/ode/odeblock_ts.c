/*
   The ts scheme of the neural-ODE block: forward by TSSolve, backward by TSAdjointSolve.

   The vector field's derivatives are MATSHELLs whose transposed products are f's backward passes
   (odeblock_tsfun.c, with the TS callbacks); the TS itself is the block's (odeblock_integrator.c).

   The adjoint runs one step at a time (TSAdjointSetSteps(ts, 1)): TSGetStepNumber() is k during
   the forward step k and during its adjoint, so the callbacks use step k's parameters, and the
   parameter gradient mu of step k goes to step k's copy of the parameters. mu is zeroed before each
   step (TSAdjoint accumulates into it).

   Bounded memory (-<block>_checkpoints K > 0): the forward pass keeps only the states at the starts
   of the ceil(kend/L) segments of L = ceil(kend/K) steps (no trajectory); the backward pass walks
   the segments in reverse, re-solves each from its stored state with the trajectory on, then runs
   the segment's adjoint, carrying lambda across segments. Every step does the same arithmetic with
   and without checkpointing: the same stage computations, the same per-step adjoint calls, and the
   same times in the trajectory (a pre-step hook sets the time of step k to fl(k h), and a re-solve
   from step a starts at fl(fl((a-1) h) + h), the time a full solve reaches), so the gradients are
   bitwise identical.

   The TS lives on PETSC_COMM_SELF for sequential states (each rank integrates its own samples) and
   on the DMDA's communicator for spatial states. Parameters are replicated on every rank: mu holds
   all P entries on the TS's rank 0 (so Jp's column layout is well defined) and is broadcast after
   each step.
*/
#include <petnn/private/odeimpl.h>

/* ---------------------------------------------------------------- the scheme's data */

/* frees what the TS was wired to, after unwiring it (TSSetCostGradients keeps no references) */
static PetscErrorCode NNODEUnwire_TS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  if (o->integ.ts && d->J) { /* the TS's work Vecs have the old sizes */
    PetscCall(TSAdjointReset(o->integ.ts));
    PetscCall(TSReset(o->integ.ts));
  }
  PetscCall(VecDestroy(&d->F0));
  PetscCall(VecDestroy(&d->mu));
  PetscCall(MatDestroy(&d->J));
  PetscCall(MatDestroy(&d->Jp));
  PetscCall(MatDestroy(&d->mffd));
  if (d->bnd) PetscCall(VecDestroyVecs(d->nseg, &d->bnd));
  d->nseg = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEReset_TS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNODEUnwire_TS(l));
  PetscCall(NNODEDestroyActs(l));
  PetscCall(PetscFree(d->actneed));
  PetscCall(PetscFree(d->mubuf));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODECreate_TS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  o->schemedata = d;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEDestroy_TS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEReset_TS(l));
  PetscCall(PetscFree(o->schemedata));
  PetscFunctionReturn(0);
}

/* f's Vecs were made for a layout: the TS now (configured, so -help and views show it); which children's
   activations the forward pass can keep */
static PetscErrorCode NNODELayout_TS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNODEDestroyActs(l));
  PetscCall(PetscFree(d->actneed));
  PetscCall(NNODECreateTS(l));
  PetscCall(NNODEActivationsAllowed(l));
  PetscFunctionReturn(0);
}

/* the state Vecs for a pass of n samples and the TS wired to them (again when n changes) */
static PetscErrorCode NNODEPrepare_TS(NNLayer l, PetscInt n, Vec x)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNODECreateTS(l));
  if (o->U && o->nU == (o->dm ? -1 : n) && d->J) PetscFunctionReturn(0);
  PetscCall(NNODEUnwire_TS(l));
  PetscCall(NNODEPrepareVecs(l, n, x));
  PetscCall(NNODEWireTS(l));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- forward and backward */

/* a fresh in-memory trajectory (TS's default type writes every step to files) that keeps the stages */
static PetscErrorCode NNODEFreshTrajectory(TS ts)
{
  TSTrajectory tj;

  PetscFunctionBegin;
  PetscCall(TSSetSaveTrajectory(ts)); /* no-op when there is one */
  PetscCall(TSResetTrajectory(ts));
  PetscCall(TSGetTrajectory(ts, &tj));
  PetscCall(TSTrajectorySetType(tj, ts, TSTRAJECTORYMEMORY));
  PetscFunctionReturn(0);
}

/* time of the stored state a in a solve from 0: fl(fl((a-1) h) + h) (the pre-step hook's clock) */
static PetscReal NNODEStateTime(NNLayer_ODE *o, PetscInt a)
{
  volatile PetscReal t;

  if (!a) return 0;
  t = (a - 1) * o->h;
  t = t + o->h;
  return t;
}

/* solves steps [a, b) from the state in o->U (a > 0: a segment restart) */
static PetscErrorCode NNODESolve(NNLayer l, PetscInt a, PetscInt b)
{
  NNLayer_ODE      *o = (NNLayer_ODE *)l->data;
  TSConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(TSSetStepNumber(o->integ.ts, a));
  PetscCall(TSSetTime(o->integ.ts, NNODEStateTime(o, a)));
  PetscCall(TSSetTimeStep(o->integ.ts, o->h));
  PetscCall(TSSetMaxSteps(o->integ.ts, b));
  PetscCall(TSSetMaxTime(o->integ.ts, (b + 0.5) * o->h));
  o->fld.fwd.valid = o->fld.bwd.valid = PETSC_FALSE;
  PetscCall(TSSolve(o->integ.ts, o->U));
  PetscCall(TSSetMaxSteps(o->integ.ts, o->N)); /* what -ts_view should show */
  PetscCall(TSSetMaxTime(o->integ.ts, o->T));
  PetscCall(TSGetConvergedReason(o->integ.ts, &reason));
  PetscCheck(reason >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_NOT_CONVERGED, "ODE block %s: the TS diverged (%s) in steps %" PetscInt_FMT " to %" PetscInt_FMT "; for beuler/cn see -%ssnes_converged_reason and -%sksp_converged_reason", ((PetscObject)l)->name, TSConvergedReasons[reason], a, b, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "",
             ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  PetscFunctionReturn(0);
}

/* forward: y = u(T), or the observed states; in training mode record what the backward pass needs */
static PetscErrorCode NNODEForward_TS(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE   *o      = (NNLayer_ODE *)l->data;
  NNODE_TS      *d      = (NNODE_TS *)o->schemedata;
  PetscBool      record = l->training, hastraj;
  PetscInt       j;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(NNODEPrepare_TS(l, n, x));
  PetscCall(PetscTime(&t0));
  d->yout        = y;
  d->inrecompute = PETSC_FALSE;
  PetscCall(NNODECopyState(l, n, x, o->U));
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0) PetscCall(NNODEObserve(l, n, j, o->U, y));
  /* what to keep: the whole trajectory (K = 0), or the segment boundaries (K > 0), or nothing (evaluation) */
  if (d->bnd) PetscCall(VecDestroyVecs(d->nseg, &d->bnd));
  d->nseg = 0;
  {
    TSTrajectory tj;
    PetscCall(TSGetTrajectory(o->integ.ts, &tj));
    hastraj = tj ? PETSC_TRUE : PETSC_FALSE;
  }
  if (record && !o->K) {
    PetscCall(NNODEFreshTrajectory(o->integ.ts));
    o->stats.nstored = o->kend * (1 + d->nstagevecs) + 1;
  } else {
    if (hastraj) PetscCall(TSRemoveTrajectory(o->integ.ts));
    if (record) {
      PetscInt K = PetscMin(o->K, o->kend);
      d->L       = (o->kend + K - 1) / K;
      d->nseg    = (o->kend + d->L - 1) / d->L;
      PetscCall(VecDuplicateVecs(o->U, d->nseg, &d->bnd));
      PetscCall(VecCopy(o->U, d->bnd[0]));
      o->stats.nstored = d->nseg + d->L * (1 + d->nstagevecs) + 1; /* the boundaries and, during the backward pass, one segment's trajectory */
    } else o->stats.nstored = 0;
  }
  o->stats.actstored = 0;
  PetscCall(NNODEActivationsAllowed(l)); /* options may have changed since the TS was made */
  if (record && !o->K) PetscCall(NNODEActsBegin(l, 0, o->kend));
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  PetscCall(NNODESolve(l, 0, o->kend));
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  d->storing = PETSC_FALSE;
  if (!o->nobs) PetscCall(NNODEObserve(l, n, -1, o->U, y));
  o->recorded = record;
  PetscCall(PetscTime(&t1));
  o->stats.tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

/* the adjoint of step k: lambda_k from lambda_{k+1}, and step k's parameter gradient */
static PetscErrorCode NNODEAdjointStep(NNLayer l, PetscInt k)
{
  NNLayer_ODE      *o = (NNLayer_ODE *)l->data;
  NNODE_TS         *d = (NNODE_TS *)o->schemedata;
  TSConvergedReason reason;

  PetscFunctionBegin;
  if (d->mu) PetscCall(VecZeroEntries(d->mu));
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(TSAdjointSetSteps(o->integ.ts, 1));
  PetscCall(TSAdjointSolve(o->integ.ts));
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(TSGetConvergedReason(o->integ.ts, &reason));
  PetscCheck(reason >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_NOT_CONVERGED, "ODE block %s: the adjoint of step %" PetscInt_FMT " failed (%s); for beuler/cn see -%sksp_converged_reason", ((PetscObject)l)->name, k, TSConvergedReasons[reason], ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  if (d->mu) {
    const PetscScalar *mu;
    PetscCall(VecGetArrayRead(d->mu, &mu));
    if (!o->integ.rank) PetscCall(PetscArraycpy(d->mubuf, mu, o->P));
    PetscCall(VecRestoreArrayRead(d->mu, &mu));
    if (o->integ.size > 1) {
      PetscMPIInt cnt;
      PetscCall(PetscMPIIntCast(o->P, &cnt));
      PetscCallMPI(MPI_Bcast(d->mubuf, cnt, MPIU_SCALAR, 0, PetscObjectComm((PetscObject)o->integ.ts)));
    }
    PetscCall(NNODEAddParameterGradient(l, k, 1.0, d->mubuf));
  }
  PetscFunctionReturn(0);
}

/* the adjoints of steps b-1 down to a, with the observations' gradients added on the way */
static PetscErrorCode NNODEAdjointSteps(NNLayer l, PetscInt a, PetscInt b, Vec dy)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     j;

  PetscFunctionBegin;
  for (PetscInt k = b - 1; k >= a; k--) {
    if (k + 1 < o->kend) { /* lambda_{k+1} gets the gradient of an observation of u_{k+1} */
      PetscCall(NNODEObservationIndex(l, k + 1, &j));
      if (j >= 0) PetscCall(NNODEAddObservationGradient(l, o->n, j, dy, o->lambda));
    }
    PetscCall(NNODEAdjointStep(l, k));
  }
  PetscFunctionReturn(0);
}

/* backward: dx = (du(T)/du(0))^T dy (through the observations), parameter gradients added */
static PetscErrorCode NNODEBackward_TS(NNLayer l, PetscInt n, Vec x PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  NNODE_TS      *d = (NNODE_TS *)o->schemedata;
  PetscInt       j;
  PetscLogDouble t0, t1, tr = 0;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  o->fld.fwd.valid = o->fld.bwd.valid = PETSC_FALSE;
  PetscCall(VecZeroEntries(o->lambda));
  PetscCall(NNODEObservationIndex(l, o->kend, &j));
  if (!o->nobs || j >= 0) PetscCall(NNODEAddObservationGradient(l, n, o->nobs ? j : -1, dy, o->lambda));
  if (!d->nseg) PetscCall(NNODEAdjointSteps(l, 0, o->kend, dy));
  else {
    d->inrecompute = PETSC_TRUE;
    for (PetscInt s = d->nseg - 1; s >= 0; s--) {
      PetscInt       a = s * d->L, b = PetscMin(a + d->L, o->kend);
      PetscLogDouble r0, r1;
      /* re-solve the segment from its stored state with the trajectory on, then its adjoint */
      PetscCall(PetscTime(&r0));
      PetscCall(PetscLogEventBegin(NN_ODERecompute, l, 0, 0, 0));
      PetscCall(VecCopy(d->bnd[s], o->U));
      PetscCall(NNODEFreshTrajectory(o->integ.ts));
      PetscCall(NNODEActsBegin(l, a, d->L));
      PetscCall(NNODESolve(l, a, b));
      d->storing = PETSC_FALSE;
      PetscCall(PetscLogEventEnd(NN_ODERecompute, l, 0, 0, 0));
      PetscCall(PetscTime(&r1));
      tr += r1 - r0;
      PetscCall(NNODEAdjointSteps(l, a, b, dy));
    }
    d->inrecompute = PETSC_FALSE;
    PetscCall(TSRemoveTrajectory(o->integ.ts));
  }
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0 && o->kend > 0) PetscCall(NNODEAddObservationGradient(l, n, j, dy, o->lambda));
  if (dx) PetscCall(NNODECopyState(l, n, o->lambda, dx));
  PetscCall(PetscTime(&t1));
  o->stats.trec += tr;
  o->stats.tadj += t1 - t0 - tr;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- storage and view */

static PetscErrorCode NNODEStorage_TS(NNLayer l, PetscInt *per, PetscLogDouble *fullacts)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  *per      = 1 + d->nstagevecs; /* the TS trajectory keeps the stages of every step */
  *fullacts = d->actsok && o->storeacts ? o->kend * o->integ.nstages * o->stats.actbytes : 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEView_TS(NNLayer l, PetscViewer v)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;
  PetscInt     K = PetscMin(o->K, o->kend);

  PetscFunctionBegin;
  if (o->integ.ts) {
    TSType    type;
    TSRKType  rktype;
    PetscBool isrk;
    PetscCall(TSGetType(o->integ.ts, &type));
    PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSRK, &isrk));
    if (isrk) PetscCall(TSRKGetType(o->integ.ts, &rktype));
    PetscCall(PetscViewerASCIIPrintf(v, "scheme: ts, integrator TS %s%s%s%s, TSAdjoint backward with MATSHELL Jacobians (f's backward pass)\n", type, isrk ? " " : "", isrk ? rktype : "", o->integ.implicit ? ", matrix-free Newton-Krylov stages" : ""));
  } else PetscCall(PetscViewerASCIIPrintf(v, "scheme: ts, integrator TS (made at set up for the activation layout; -%sts_type, -%sts_rk_type)\n", NNODEPrefix(l), NNODEPrefix(l)));
  if (o->K) PetscCall(PetscViewerASCIIPrintf(v, "checkpointing: %" PetscInt_FMT " stored states (segments of %" PetscInt_FMT " steps, each recomputed once before its adjoint)\n", K, (o->kend + K - 1) / K));
  else PetscCall(PetscViewerASCIIPrintf(v, "checkpointing: none, every step stored\n"));
  if (o->integ.ts) PetscCall(PetscViewerASCIIPrintf(v, "f's activations at each stage: %s\n", d->actsok ? "kept by the forward pass (the adjoint does not evaluate f again)" : (o->storeacts ? "evaluated again by the adjoint (f's layers or the integrator need it)" : "evaluated again by the adjoint (-store_activations false)")));
  PetscFunctionReturn(0);
}

const NNODESchemeOps NNODESchemeOps_TS = {
  .name      = "ts",
  .create    = NNODECreate_TS,
  .destroy   = NNODEDestroy_TS,
  .layout    = NNODELayout_TS,
  .reset     = NNODEReset_TS,
  .forward   = NNODEForward_TS,
  .backward  = NNODEBackward_TS,
  .stageacts = NNODEStageActs_TS,
  .storage   = NNODEStorage_TS,
  .view      = NNODEView_TS,
};
