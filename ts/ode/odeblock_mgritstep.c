/*
   The mgrit scheme's propagators (-<block>_parallel mgrit, ts/ode/odeblock_mgrit.c): one step of the
   block's explicit RK tableau, its discrete adjoint, and the cache of f's activations at the owned steps.

   The fine propagator is one step of the block's integrator with h = T/N: the explicit RK tableau of the
   block's TS (-<block>_ts_rk_type; 1fe is a ResNet step) or, for the discrete scheme, x + h f(x, theta_k,
   t_k). The coarse propagator on level l is one step of the same tableau with m^l h and the parameters of
   the step at the C-point (injection; shared parameters are the same everywhere). The steps are written
   with f's forward and backward passes (NNODEEvalField, NNODEBackwardField), not with TSSolve: the
   discrete adjoint of an explicit RK step is
     G_i = dt b_i lambda + dt sum_{j>i} a_ji Z_j,   Z_i = (df/du at Y_i)^T G_i,
     lambda_in = lambda + sum_i Z_i,   grad theta_k += sum_i (df/dtheta at Y_i)^T G_i,
   which is what TSAdjoint computes for the serial block (up to rounding).
*/
#include <petnn/private/odeimpl.h>

/* uout = one step of the block's explicit RK tableau of size dt from t with step k's parameters */
PetscErrorCode NNODEMGRITStep(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec uin, Vec uout)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;
  PetscInt     s = d->rks;
  PetscScalar  w[NN_ODE_MAX_STAGES];

  PetscFunctionBegin;
  (void)level;
  o->fld.fwd.valid = o->fld.bwd.valid = PETSC_FALSE;
  if (s == 1) { /* forward Euler: the discrete scheme's arithmetic */
    PetscCall(NNODEEvalField(l, k, t + d->rkc[0] * dt, uin, o->fld.F));
    PetscCall(VecWAXPY(uout, dt * d->rkb[0], o->fld.F, uin));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < s; i++) {
    PetscCall(VecCopy(uin, d->mgY[i]));
    for (PetscInt j = 0; j < i; j++) w[j] = dt * d->rkA[i * s + j];
    if (i) PetscCall(VecMAXPY(d->mgY[i], i, w, d->mgF));
    PetscCall(NNODEEvalField(l, k, t + d->rkc[i] * dt, d->mgY[i], d->mgF[i]));
  }
  for (PetscInt j = 0; j < s; j++) w[j] = dt * d->rkb[j];
  PetscCall(VecCopy(uin, uout));
  PetscCall(VecMAXPY(uout, s, w, d->mgF));
  PetscFunctionReturn(0);
}

/* gx, gp = f's backward pass at (u_k, theta_k, t_k) with output gradient V, from the cached activations of step k
   (evaluated on the first visit of the adjoint solve) */
static PetscErrorCode NNODEMGRITBackwardCached(NNLayer l, PetscInt k, PetscReal t, Vec u, Vec V)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d  = (NNODE_MGRIT *)o->schemedata;
  PetscInt     nc = l->nchildren, n = o->n, i = k - d->mgks;
  Vec         *cur = d->mgacts + i * nc;

  PetscFunctionBegin;
  (void)t; /* no time input: f does not depend on t here */
  if (!d->mgactok[i]) {
    PetscCall(NNODEPointChildren(l, k, NULL));
    for (PetscInt c = 0; c < nc; c++) PetscCall(NNLayerForward(l->children[c], n, c ? cur[c - 1] : u, cur[c]));
    d->mgactok[i] = PETSC_TRUE;
  }
  PetscCall(PetscArrayzero(o->fld.gp, o->P));
  PetscCall(NNODEPointChildren(l, k, o->fld.gp));
  for (PetscInt c = nc - 1; c >= 0; c--) PetscCall(NNLayerBackward(l->children[c], n, c ? cur[c - 1] : u, cur[c], c == nc - 1 ? V : o->f.dout[c], c ? o->f.dout[c - 1] : o->fld.gx));
  PetscCall(NNODEPointChildren(l, k, NULL));
  o->fld.fwd.valid = PETSC_FALSE; /* the children's last forward pass is no longer at the block's last point */
  PetscFunctionReturn(0);
}

/* lout = (dPhi/du)^T lin at u for the step above; with gradient, step k's parameter gradient += (dPhi/dtheta_k)^T lin */
PetscErrorCode NNODEMGRITAdjointStep(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec u, Vec lin, Vec lout, PetscBool gradient)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;
  PetscInt     s = d->rks;
  PetscScalar  w[NN_ODE_MAX_STAGES];
  Vec          z[NN_ODE_MAX_STAGES];
  PetscBool    used[NN_ODE_MAX_STAGES];

  PetscFunctionBegin;
  (void)level;
  o->fld.fwd.valid = o->fld.bwd.valid = PETSC_FALSE;
  if (s == 1) { /* f runs forward at u again (layers keep what backward needs), or its activations are cached */
    if (d->mgcache && k >= d->mgks && k < d->mgks + d->mgnact) PetscCall(NNODEMGRITBackwardCached(l, k, t + d->rkc[0] * dt, u, lin));
    else PetscCall(NNODEBackwardField(l, k, t + d->rkc[0] * dt, u, lin));
    PetscCall(VecWAXPY(lout, dt * d->rkb[0], o->fld.gx, lin));
    if (gradient) PetscCall(NNODEAddParameterGradient(l, k, dt * d->rkb[0], o->fld.gp));
    PetscFunctionReturn(0);
  }
  /* the stage states again: only u_k is stored */
  for (PetscInt i = 0; i < s; i++) {
    PetscCall(VecCopy(u, d->mgY[i]));
    for (PetscInt j = 0; j < i; j++) w[j] = dt * d->rkA[i * s + j];
    if (i) PetscCall(VecMAXPY(d->mgY[i], i, w, d->mgF));
    if (i < s - 1) PetscCall(NNODEEvalField(l, k, t + d->rkc[i] * dt, d->mgY[i], d->mgF[i])); /* the last slope feeds no stage */
  }
  PetscCall(VecCopy(lin, lout));
  for (PetscInt i = s - 1; i >= 0; i--) {
    PetscInt  nz   = 0;
    PetscReal bcoef = dt * d->rkb[i];
    for (PetscInt j = i + 1; j < s; j++)
      if (used[j] && d->rkA[j * s + i] != 0) {
        w[nz]   = dt * d->rkA[j * s + i];
        z[nz++] = d->mgZ[j];
      }
    used[i] = (PetscBool)(bcoef != 0 || nz > 0);
    if (!used[i]) continue; /* a stage nothing depends on (3bs's FSAL stage) */
    PetscCall(VecAXPBY(d->mgG, bcoef, 0.0, lin));
    if (nz) PetscCall(VecMAXPY(d->mgG, nz, w, z));
    PetscCall(NNODEBackwardField(l, k, t + d->rkc[i] * dt, d->mgY[i], d->mgG));
    PetscCall(VecCopy(o->fld.gx, d->mgZ[i]));
    PetscCall(VecAXPY(lout, 1.0, o->fld.gx));
    if (gradient) PetscCall(NNODEAddParameterGradient(l, k, 1.0, o->fld.gp));
  }
  PetscFunctionReturn(0);
}

/* the propagator's tableau: the block's TS (explicit RK only) or forward Euler for the discrete scheme */
PetscErrorCode NNODEMGRITTableau(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;
  const char  *p = NNODEPrefix(l);

  PetscFunctionBegin;
  if (o->scheme == NNODE_SCHEME_DISCRETE) {
    d->rks    = 1;
    d->rkA[0] = 0;
    d->rkb[0] = 1;
    d->rkc[0] = 0;
    PetscFunctionReturn(0);
  }
  {
    PetscBool        isrk;
    PetscInt         s;
    const PetscReal *A, *b, *c;
    TSType           type;

    if (!o->integ.ts) PetscCall(NNODECreateTS(l));
    PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSRK, &isrk));
    PetscCall(TSGetType(o->integ.ts, &type));
    PetscCheck(isrk, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%sparallel mgrit needs an explicit Runge-Kutta integrator (-%sts_type rk, e.g. -%sts_rk_type 1fe for a ResNet) or -%sscheme discrete, not -%sts_type %s", ((PetscObject)l)->name, p, p, p, p, p, type);
    PetscCall(TSRKGetTableau(o->integ.ts, &s, &A, &b, &c, NULL, NULL, NULL, NULL));
    PetscCheck(s <= NN_ODE_MAX_STAGES, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: an RK tableau of %" PetscInt_FMT " stages is too long (at most %d)", ((PetscObject)l)->name, s, NN_ODE_MAX_STAGES);
    for (PetscInt i = 0; i < s; i++)
      for (PetscInt j = i; j < s; j++) PetscCheck(A[i * s + j] == 0, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%sparallel mgrit needs an explicit RK tableau", ((PetscObject)l)->name, p);
    d->rks = s;
    PetscCall(PetscArraycpy(d->rkA, A, s * s));
    PetscCall(PetscArraycpy(d->rkb, b, s));
    PetscCall(PetscArraycpy(d->rkc, c, s));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the cache of f's activations */

/* can f's activations be cached per step? forward Euler, no time input, and layers whose backward pass needs only
   their input, output and parameters (dense, pointwise); -<prefix>store_activations false turns it off */
PetscErrorCode NNODEMGRITCacheAllowed(NNLayer l, PetscBool *ok)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d  = (NNODE_MGRIT *)o->schemedata;
  PetscInt     nc = l->nchildren;

  PetscFunctionBegin;
  *ok = (PetscBool)(o->storeacts && d->rks == 1 && !o->timeinput && o->f.nvec == nc);
  for (PetscInt c = 0; c < nc && *ok; c++) {
    PetscBool pointwise;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)l->children[c], &pointwise, NNLAYERDENSE, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, ""));
    *ok = (PetscBool)(pointwise && !l->children[c]->nchildren);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEMGRITCacheSetUp(NNLayer l)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d  = (NNODE_MGRIT *)o->schemedata;
  PetscInt     nc = l->nchildren, ks, ke;

  PetscFunctionBegin;
  PetscCall(NNODEMGRITCacheAllowed(l, &d->mgcache));
  if (!d->mgcache) PetscFunctionReturn(0);
  PetscCall(NNMGRITGetOwnershipRange(d->mg, &ks, &ke));
  if (d->mgacts && (d->mgks != ks || d->mgnact != ke - ks)) {
    for (PetscInt i = 0; i < d->mgnact * nc; i++) PetscCall(VecDestroy(&d->mgacts[i]));
    PetscCall(PetscFree2(d->mgacts, d->mgactok));
  }
  if (!d->mgacts) {
    PetscCall(PetscCalloc2((ke - ks) * nc + 1, &d->mgacts, ke - ks + 1, &d->mgactok));
    for (PetscInt i = 0; i < ke - ks; i++)
      for (PetscInt c = 0; c < nc; c++) PetscCall(VecDuplicate(o->f.out[c], &d->mgacts[i * nc + c]));
    d->mgks   = ks;
    d->mgnact = ke - ks;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEMGRITDestroyVecs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&d->mgu));
  PetscCall(VecDestroy(&d->mgl));
  PetscCall(VecDestroy(&d->mgl0));
  PetscCall(VecDestroy(&d->mgG));
  if (d->mgY) PetscCall(VecDestroyVecs(d->mgnst, &d->mgY));
  if (d->mgF) PetscCall(VecDestroyVecs(d->mgnst, &d->mgF));
  if (d->mgZ) PetscCall(VecDestroyVecs(d->mgnst, &d->mgZ));
  d->mgnvec = d->mgnst = -1;
  if (d->mgacts) {
    for (PetscInt i = 0; i < d->mgnact * l->nchildren; i++) PetscCall(VecDestroy(&d->mgacts[i]));
    PetscCall(PetscFree2(d->mgacts, d->mgactok));
  }
  d->mgnact = 0;
  PetscFunctionReturn(0);
}

