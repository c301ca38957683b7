/*
   The TS-based default propagator of NNMGRIT: Phi = one step of the user's TS (any RK, or a theta method) of
   size dt from t; its adjoint is TSAdjointSolve() over that single step, recomputed from the stored start state
   with the trajectory kept in memory. The user's TS carries the right-hand side, its Jacobian
   (TSSetRHSJacobian) and, for parameter gradients, TSSetRHSJacobianP; a hook selects the parameters of step k.
*/
#include <petnn/private/mgritimpl.h>

typedef struct {
  TS            ts;
  NNMGRITTSHook hook;
  void         *ctx;
  Vec           w;           /* the forward recomputation of an adjoint step */
  Vec           lam[1], mu[1]; /* TSSetCostGradients() keeps the arrays, not copies */
  PetscBool     ready;
  PetscInt      withmu; /* whether the last adjoint step had a parameter gradient: -1 none yet, 0, 1 */
} NNMGRITTSProp;

static PetscErrorCode NNMGRITTSPropDestroy(void **ctx)
{
  NNMGRITTSProp *p = (NNMGRITTSProp *)*ctx;

  PetscFunctionBegin;
  PetscCall(TSDestroy(&p->ts));
  PetscCall(VecDestroy(&p->w));
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

/* once, after the user configured the TS: exactly one step of the given size, trajectory in memory */
static PetscErrorCode NNMGRITTSPropReady(NNMGRITTSProp *p, Vec u)
{
  TSAdapt      adapt;
  TSTrajectory tj;

  PetscFunctionBegin;
  if (p->ready) PetscFunctionReturn(0);
  PetscCall(TSSetExactFinalTime(p->ts, TS_EXACTFINALTIME_MATCHSTEP));
  PetscCall(TSGetAdapt(p->ts, &adapt));
  PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
  PetscCall(TSSetSaveTrajectory(p->ts));
  PetscCall(TSGetTrajectory(p->ts, &tj));
  PetscCall(TSTrajectorySetType(tj, p->ts, TSTRAJECTORYMEMORY));
  PetscCall(VecDuplicate(u, &p->w));
  p->ready = PETSC_TRUE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNMGRITTSPropOneStep(NNMGRITTSProp *p, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec u)
{
  TSConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(TSSetTime(p->ts, t));
  PetscCall(TSSetTimeStep(p->ts, dt));
  PetscCall(TSSetStepNumber(p->ts, 0));
  PetscCall(TSSetMaxSteps(p->ts, 1));
  PetscCall(TSSetMaxTime(p->ts, t + dt));
  PetscCall(TSSolve(p->ts, u));
  PetscCall(TSGetConvergedReason(p->ts, &reason));
  PetscCheck(reason >= 0, PetscObjectComm((PetscObject)p->ts), PETSC_ERR_NOT_CONVERGED, "MGRIT's TS step %" PetscInt_FMT " on level %" PetscInt_FMT " (t = %g, dt = %g) failed: %s", k, level, (double)t, (double)dt, TSConvergedReasons[reason]);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNMGRITStep_TS(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec uin, Vec uout)
{
  NNMGRITTSProp *p = (NNMGRITTSProp *)ctx;

  PetscFunctionBegin;
  PetscCall(NNMGRITTSPropReady(p, uin));
  if (p->hook) PetscCall((*p->hook)(p->ts, level, k, t, dt, NULL, p->ctx));
  PetscCall(VecCopy(uin, uout));
  PetscCall(NNMGRITTSPropOneStep(p, level, k, t, dt, uout));
  PetscFunctionReturn(0);
}

/* PETSc before 3.21 has an RK adjoint that skips the parameter gradient of stages whose weight b_i is zero, although
   later stages feed on them: 2b, 5f, 5dp, 5bs, 6vr, 7vr, 8vr. Checked by NNMGRITSolve() on every rank before any
   communication when the TS has TSSetRHSJacobianP(), so the error cannot leave a neighbour waiting. From 3.21 on the
   check passes (tests/mgrit_ts.c runs rk 5dp there). */
static PetscErrorCode NNMGRITTSPropCheck(NNMGRIT mg)
{
#if PETSC_VERSION_LT(3, 21, 0)
  NNMGRITTSProp   *p = (NNMGRITTSProp *)mg->tsprop.ctx;
  PetscBool        isrk;
  PetscInt         s;
  const PetscReal *b;
  TSRKType         type;
  Mat              Jp;

  PetscFunctionBegin;
  PetscCall(TSGetRHSJacobianP(p->ts, &Jp, NULL, NULL));
  PetscCall(PetscObjectTypeCompare((PetscObject)p->ts, TSRK, &isrk));
  if (!Jp || !isrk) PetscFunctionReturn(0);
  PetscCall(TSRKGetTableau(p->ts, &s, NULL, &b, NULL, NULL, NULL, NULL, NULL));
  PetscCall(TSRKGetType(p->ts, &type));
  for (PetscInt i = 0; i < s - 1; i++) /* a zero last weight (3bs) is harmless: no later stage feeds on it */
    PetscCheck(b[i] != 0.0, PetscObjectComm((PetscObject)p->ts), PETSC_ERR_SUP, "TS rk type %s has the zero weight b_%" PetscInt_FMT " before its last stage: PETSc %d.%d's TSAdjoint returns wrong parameter gradients (TSSetRHSJacobianP) for it (fixed in PETSc 3.21); use -ts_rk_type 1fe, 2a, 3, 3bs or 4", type, i + 1, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR);
  PetscFunctionReturn(0);
#else
  PetscFunctionBegin;
  (void)mg;
  PetscFunctionReturn(0);
#endif
}

static PetscErrorCode NNMGRITAdjointStep_TS(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec u, Vec lin, Vec lout, PetscBool gradient)
{
  NNMGRITTSProp *p  = (NNMGRITTSProp *)ctx;
  Vec            mu = NULL;

  PetscFunctionBegin;
  PetscCall(NNMGRITTSPropReady(p, u));
  if (p->hook) PetscCall((*p->hook)(p->ts, level, k, t, dt, gradient ? &mu : NULL, p->ctx));
  PetscCall(VecCopy(u, p->w));
  PetscCall(NNMGRITTSPropOneStep(p, level, k, t, dt, p->w));
  PetscCall(VecCopy(lin, lout));
  /* TSAdjointSetUp() sizes its work for the cost gradients it first saw: start over when mu comes or goes */
  if (p->withmu != (mu ? 1 : 0)) {
    if (p->withmu >= 0) PetscCall(TSAdjointReset(p->ts));
    p->withmu = mu ? 1 : 0;
  }
  p->lam[0] = lout;
  p->mu[0]  = mu;
  PetscCall(TSSetCostGradients(p->ts, 1, p->lam, mu ? p->mu : NULL));
  PetscCall(TSAdjointSolve(p->ts));
  PetscFunctionReturn(0);
}

/*@C
   NNMGRITSetTS - makes one step of a TS the propagator (forward and adjoint) on every level

   Logically Collective

   Input Parameters:
+  mg - the solver
.  ts - a TS with its right-hand side (TSSetRHSFunction), for the adjoint its Jacobian (TSSetRHSJacobian) and,
        for parameter gradients, TSSetRHSJacobianP; type rk (1fe, 2a, 3, 3bs, 4) or theta (beuler, cn)
.  hook - optional hook(ts, level, k, t, dt, mu, ctx) called before every step: select the parameters of fine
          step k (coarse steps use the parameters at their first point, k a multiple of m^level); when mu is
          non-NULL, an adjoint step wants the parameter gradient: set *mu to the Vec that TSAdjoint adds the
          gradient of step k into (leave it NULL for none)
-  ctx - the hook's context

   Notes:
   The solver steps the TS one step at a time (TSSetTime, TSSetTimeStep, max steps 1, exact final time
   matchstep, adaptivity off) and keeps its trajectory in memory for the adjoint, so configure everything else
   (type, tableau, nonlinear solver) on the TS itself. The solver keeps a reference to the TS.

   Level: beginner

.seealso: `NNMGRITSetStep()`, `NNMGRITSetAdjointStep()`, `TSAdjointSolve()`
@*/
PetscErrorCode NNMGRITSetTS(NNMGRIT mg, TS ts, NNMGRITTSHook hook, void *ctx)
{
  NNMGRITTSProp *p;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  PetscValidHeaderSpecific(ts, TS_CLASSID, 2);
  PetscCall(PetscObjectReference((PetscObject)ts));
  if (mg->tsprop.destroy) PetscCall((*mg->tsprop.destroy)(&mg->tsprop.ctx));
  PetscCall(PetscNew(&p));
  p->ts             = ts;
  p->hook           = hook;
  p->ctx            = ctx;
  p->withmu         = -1;
  mg->tsprop.ctx     = p;
  mg->tsprop.destroy = NNMGRITTSPropDestroy;
  PetscCall(NNMGRITSetStep(mg, NNMGRITStep_TS, p));
  PetscCall(NNMGRITSetAdjointStep(mg, NNMGRITAdjointStep_TS, p));
  mg->tsprop.check = NNMGRITTSPropCheck; /* after NNMGRITSetStep(), which clears it */
  PetscFunctionReturn(0);
}
