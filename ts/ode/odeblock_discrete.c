/*
   The neural-ODE block's discrete scheme (-<block>_scheme discrete): the residual stack
   x_{k+1} = x_k + h f(x_k, theta_k, t_k), k = 0..N-1, run with the children's hand-written forward
   and backward passes and no TS. It is forward Euler written out: with -<block>_ts_rk_type 1fe the
   TS scheme computes the same numbers (the same parameter layout, the same f evaluations), so a
   network switches between a ResNet and an ODE block with one option.

   The forward pass keeps every state x_k in training mode; the backward pass runs f forward again at
   x_k (layers keep what backward needs from their last forward pass) and then backward:
     lambda_k = lambda_{k+1} + h (df/dx)^T lambda_{k+1},   dtheta_k += h (df/dtheta)^T lambda_{k+1}.
*/
#include <petnn/private/odeimpl.h>

PetscErrorCode NNODEDestroyDiscrete(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (o->xs) PetscCall(VecDestroyVecs(o->nxs, &o->xs));
  o->nxs = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEForwardDiscrete(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE   *o      = (NNLayer_ODE *)l->data;
  PetscBool      record = l->training;
  PetscInt       j, nloc = o->dm ? -1 : n;
  Vec            cur;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNODEPrepareVecs(l, n, x, PETSC_FALSE));
  o->fwdvalid = o->bwdvalid = PETSC_FALSE;
  if (record && (!o->xs || o->nxs != o->kend + 1 || o->xsn != nloc)) {
    PetscCall(NNODEDestroyDiscrete(l));
    PetscCall(VecDuplicateVecs(o->U, o->kend + 1, &o->xs));
    o->nxs = o->kend + 1;
    o->xsn = nloc;
  }
  cur = record ? o->xs[0] : o->U;
  PetscCall(NNODECopyIn(l, n, x, cur));
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0) PetscCall(NNODEObserve(l, n, j, cur, y));
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  for (PetscInt k = 0; k < o->kend; k++) {
    PetscCall(NNODEEvalField(l, k, k * o->h, cur, o->F));
    if (record) { /* x_{k+1} = x_k + h f: the arithmetic of TS rk 1fe's step */
      PetscCall(VecWAXPY(o->xs[k + 1], o->h, o->F, cur));
      cur = o->xs[k + 1];
    } else PetscCall(VecAXPY(cur, o->h, o->F));
    PetscCall(NNODEObservationIndex(l, k + 1, &j));
    if (j >= 0) PetscCall(NNODEObserve(l, n, j, cur, y));
  }
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  if (!o->nobs) PetscCall(NNODEObserve(l, n, -1, cur, y));
  o->nstored  = record ? o->kend + 1 : 0;
  o->recorded = record;
  PetscCall(PetscTime(&t1));
  o->tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEBackwardDiscrete(NNLayer l, PetscInt n, Vec x PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  PetscInt       j;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  o->fwdvalid = o->bwdvalid = PETSC_FALSE;
  PetscCall(VecZeroEntries(o->lambda));
  PetscCall(NNODEObservationIndex(l, o->kend, &j));
  if (!o->nobs || j >= 0) PetscCall(NNODEAddObservationGradient(l, n, o->nobs ? j : -1, dy, o->lambda));
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  for (PetscInt k = o->kend - 1; k >= 0; k--) {
    if (k + 1 < o->kend) {
      PetscCall(NNODEObservationIndex(l, k + 1, &j));
      if (j >= 0) PetscCall(NNODEAddObservationGradient(l, n, j, dy, o->lambda));
    }
    PetscCall(NNODEBackwardField(l, k, k * o->h, o->xs[k], o->lambda));
    PetscCall(VecAXPY(o->lambda, o->h, o->gx));
    PetscCall(NNODEAddParameterGradient(l, k, o->h, o->gp));
  }
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0 && o->kend > 0) PetscCall(NNODEAddObservationGradient(l, n, j, dy, o->lambda));
  if (dx) {
    if (o->dm) PetscCall(VecCopy(o->lambda, dx));
    else {
      const PetscScalar *la;
      PetscScalar       *da;
      PetscCall(VecGetArrayRead(o->lambda, &la));
      PetscCall(VecGetArrayWrite(dx, &da));
      PetscCall(PetscArraycpy(da, la, n * o->S));
      PetscCall(VecRestoreArrayWrite(dx, &da));
      PetscCall(VecRestoreArrayRead(o->lambda, &la));
    }
  }
  PetscCall(PetscTime(&t1));
  o->tadj += t1 - t0;
  PetscFunctionReturn(0);
}
