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

static PetscErrorCode NNODEReset_Discrete(NNLayer l)
{
  NNODE_Discrete *d = (NNODE_Discrete *)((NNLayer_ODE *)l->data)->schemedata;

  PetscFunctionBegin;
  if (d->xs) PetscCall(VecDestroyVecs(d->nxs, &d->xs));
  d->nxs = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODECreate_Discrete(NNLayer l)
{
  NNODE_Discrete *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  ((NNLayer_ODE *)l->data)->schemedata = d;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEDestroy_Discrete(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNODEReset_Discrete(l));
  PetscCall(PetscFree(((NNLayer_ODE *)l->data)->schemedata));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEForward_Discrete(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE    *o      = (NNLayer_ODE *)l->data;
  NNODE_Discrete *d      = (NNODE_Discrete *)o->schemedata;
  PetscBool       record = l->training;
  PetscInt       j, nloc = o->dm ? -1 : n;
  Vec            cur;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNODEPrepareVecs(l, n, x));
  o->fld.fwd.valid = o->fld.bwd.valid = PETSC_FALSE;
  if (record && (!d->xs || d->nxs != o->kend + 1 || d->xsn != nloc)) {
    PetscCall(NNODEReset_Discrete(l));
    PetscCall(VecDuplicateVecs(o->U, o->kend + 1, &d->xs));
    d->nxs = o->kend + 1;
    d->xsn = nloc;
  }
  cur = record ? d->xs[0] : o->U;
  PetscCall(NNODECopyState(l, n, x, cur));
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0) PetscCall(NNODEObserve(l, n, j, cur, y));
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  for (PetscInt k = 0; k < o->kend; k++) {
    PetscCall(NNODEEvalField(l, k, k * o->h, cur, o->fld.F));
    if (record) { /* x_{k+1} = x_k + h f: the arithmetic of TS rk 1fe's step */
      PetscCall(VecWAXPY(d->xs[k + 1], o->h, o->fld.F, cur));
      cur = d->xs[k + 1];
    } else PetscCall(VecAXPY(cur, o->h, o->fld.F));
    PetscCall(NNODEObservationIndex(l, k + 1, &j));
    if (j >= 0) PetscCall(NNODEObserve(l, n, j, cur, y));
  }
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  if (!o->nobs) PetscCall(NNODEObserve(l, n, -1, cur, y));
  o->stats.nstored  = record ? o->kend + 1 : 0;
  o->recorded = record;
  PetscCall(PetscTime(&t1));
  o->stats.tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEBackward_Discrete(NNLayer l, PetscInt n, Vec x PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ODE    *o = (NNLayer_ODE *)l->data;
  NNODE_Discrete *d = (NNODE_Discrete *)o->schemedata;
  PetscInt        j;
  PetscLogDouble  t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  o->fld.fwd.valid = o->fld.bwd.valid = PETSC_FALSE;
  PetscCall(VecZeroEntries(o->lambda));
  PetscCall(NNODEObservationIndex(l, o->kend, &j));
  if (!o->nobs || j >= 0) PetscCall(NNODEAddObservationGradient(l, n, o->nobs ? j : -1, dy, o->lambda));
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  for (PetscInt k = o->kend - 1; k >= 0; k--) {
    if (k + 1 < o->kend) {
      PetscCall(NNODEObservationIndex(l, k + 1, &j));
      if (j >= 0) PetscCall(NNODEAddObservationGradient(l, n, j, dy, o->lambda));
    }
    PetscCall(NNODEBackwardField(l, k, k * o->h, d->xs[k], o->lambda));
    PetscCall(VecAXPY(o->lambda, o->h, o->fld.gx));
    PetscCall(NNODEAddParameterGradient(l, k, o->h, o->fld.gp));
  }
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0 && o->kend > 0) PetscCall(NNODEAddObservationGradient(l, n, j, dy, o->lambda));
  if (dx) PetscCall(NNODECopyState(l, n, o->lambda, dx));
  PetscCall(PetscTime(&t1));
  o->stats.tadj += t1 - t0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEView_Discrete(NNLayer l PETSC_UNUSED, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "scheme: discrete residual stack x_{k+1} = x_k + h f(x_k), hand-written passes (no TS); stores every step\n"));
  PetscCall(PetscViewerASCIIPrintf(v, "checkpointing: none, every step stored\n"));
  PetscFunctionReturn(0);
}

const NNODESchemeOps NNODESchemeOps_Discrete = {
  .name     = "discrete",
  .create   = NNODECreate_Discrete,
  .destroy  = NNODEDestroy_Discrete,
  .reset    = NNODEReset_Discrete,
  .forward  = NNODEForward_Discrete,
  .backward = NNODEBackward_Discrete,
  .view     = NNODEView_Discrete,
};
