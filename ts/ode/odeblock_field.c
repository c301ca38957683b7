/*
   What every scheme of the neural-ODE block shares: the vector field f (the block's children run in
   order) and its backward pass, the state Vecs of a pass, copying states in and out, observations.

   f's backward pass at a point needs the children's forward pass there (layers keep what backward
   needs from their last forward pass): the field remembers where the children last ran forward and
   the last backward pass (J^T v and Jp^T v of the ts scheme both need the same pass). A scheme may keep
   f's activations at a stage (its stageacts op): the forward evaluation then writes them there and
   the backward pass reads them instead of evaluating f again.
*/
#include <petnn/private/odeimpl.h>

PetscLogEvent NN_ODEForward, NN_ODEAdjoint, NN_ODERecompute;

PetscErrorCode NNODERegisterEvents(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (done) PetscFunctionReturn(0);
  done = PETSC_TRUE;
  PetscCall(NNLogEventRegister("NNODEForward", NNLAYER_CLASSID, &NN_ODEForward));
  PetscCall(NNLogEventRegister("NNODEAdjoint", NNLAYER_CLASSID, &NN_ODEAdjoint));
  PetscCall(NNLogEventRegister("NNODERecompute", NNLAYER_CLASSID, &NN_ODERecompute));
  PetscFunctionReturn(0);
}

const char *NNODEPrefix(NNLayer l)
{
  return NNLayerContainerPrefix(l);
}

/* ---------------------------------------------------------------- state Vecs */

PetscErrorCode NNODEDestroyStateVecs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&o->U));
  PetscCall(VecDestroy(&o->fld.F));
  PetscCall(VecDestroy(&o->fld.gx));
  PetscCall(VecDestroy(&o->lambda));
  o->nU = -2;
  PetscFunctionReturn(0);
}

/* the state Vecs for a pass of n samples: sequential Vecs of n samples (remade when n changes), or the DMDA layout of x */
PetscErrorCode NNODEPrepareVecs(NNLayer l, PetscInt n, Vec x)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  PetscInt     nloc = o->dm ? -1 : n;

  PetscFunctionBegin;
  if (o->U && o->nU == nloc) PetscFunctionReturn(0);
  PetscCall(NNODEDestroyStateVecs(l));
  if (o->dm) PetscCall(VecDuplicate(x, &o->U));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * o->S, &o->U));
  o->nU = nloc;
  PetscCall(VecDuplicate(o->U, &o->fld.F));
  PetscCall(VecDuplicate(o->U, &o->fld.gx));
  PetscCall(VecDuplicate(o->U, &o->lambda));
  PetscFunctionReturn(0);
}

/* bytes of one state Vec on this rank */
PetscErrorCode NNODEStateBytes(NNLayer l, PetscLogDouble *bytes)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     m = l->nbatch * o->S;

  PetscFunctionBegin;
  if (o->U) PetscCall(VecGetLocalSize(o->U, &m));
  *bytes = (PetscLogDouble)m * sizeof(PetscScalar);
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- f and its backward pass */

/* points the children at step k's parameters and buffers (copy k with per-step parameters) and
   their parameter gradients into dtheta, an array of one copy's P entries (NULL: none) */
PetscErrorCode NNODEPointChildren(NNLayer l, PetscInt k, PetscScalar *dtheta)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  PetscInt     copy = o->params == NNODE_PARAMETERS_PER_STEP ? k : 0;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch = l->children[c];
    ch->theta  = l->theta ? l->theta + l->nparam + copy * o->P + o->cpoff[c] : NULL;
    ch->buf    = l->buf ? l->buf + l->nbuf + copy * o->B + o->cboff[c] : NULL;
    ch->dtheta = dtheta ? dtheta + o->cpoff[c] : NULL;
    PetscCall(NNLayerSetChildPointers(ch));
  }
  PetscFunctionReturn(0);
}

static PetscBool NNODESameState(Vec U, const NNODEStamp *s)
{
  PetscObjectId    uid;
  PetscObjectState ust;

  if (PetscObjectGetId((PetscObject)U, &uid) || PetscObjectStateGet((PetscObject)U, &ust)) return PETSC_FALSE;
  return (PetscBool)(uid == s->id && ust == s->state);
}

static PetscErrorCode NNODEStampVec(Vec U, NNODEStamp *s)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectGetId((PetscObject)U, &s->id));
  PetscCall(PetscObjectStateGet((PetscObject)U, &s->state));
  PetscFunctionReturn(0);
}

/* y = the first n states of x (sequential Vecs: x and y may have different capacities), or the whole DMDA Vec */
PetscErrorCode NNODECopyState(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  if (o->dm) {
    PetscCall(VecCopy(x, y));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(PetscArraycpy(ya, xa, n * o->S));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

/* F = f(U, theta_k, t) for the pass's n samples; the children keep this point for a backward pass */
PetscErrorCode NNODEEvalField(NNLayer l, PetscInt k, PetscReal t, Vec U, Vec F)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODEField  *fd = &o->fld;
  PetscInt     nc = l->nchildren, n = o->n;
  Vec          in = U, *keep = NULL;

  PetscFunctionBegin;
  PetscCall(NNODEPointChildren(l, k, NULL));
  if (o->ops && o->ops->stageacts) PetscCall((*o->ops->stageacts)(l, k, U, PETSC_TRUE, &keep));
  if (o->timeinput) { /* f's input is [u, t] per sample */
    const PetscScalar *ua;
    PetscScalar       *fa;
    PetscCall(VecGetArrayRead(U, &ua));
    PetscCall(VecGetArrayWrite(fd->fin, &fa));
    for (PetscInt i = 0; i < n; i++) {
      PetscCall(PetscArraycpy(fa + i * o->Sin, ua + i * o->S, o->S));
      fa[i * o->Sin + o->S] = t;
    }
    PetscCall(VecRestoreArrayWrite(fd->fin, &fa));
    PetscCall(VecRestoreArrayRead(U, &ua));
    in = fd->fin;
  }
  for (PetscInt c = 0; c < nc; c++) { /* outputs to keep go straight into their slot */
    fd->cur[c] = keep && keep[c] ? keep[c] : o->f.out[c];
    PetscCall(NNLayerForward(l->children[c], n, c ? fd->cur[c - 1] : in, fd->cur[c]));
  }
  PetscCall(NNODECopyState(l, n, fd->cur[nc - 1], F));
  PetscCall(NNODEStampVec(U, &fd->fwd.u));
  fd->fwd.k     = k;
  fd->fwd.t     = t;
  fd->fwd.valid = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* one backward pass of f at (U, theta_k, t) with output gradient V: fld.gx = (df/du)^T V and
   fld.gp = (df/dtheta_k)^T V (one copy's P entries); cached, as both products need the same pass */
PetscErrorCode NNODEBackwardField(NNLayer l, PetscInt k, PetscReal t, Vec U, Vec V)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODEField  *fd = &o->fld;
  PetscInt     nc = l->nchildren, n = o->n;
  Vec          in = o->timeinput ? fd->fin : U, dxin = o->timeinput ? fd->dfin : fd->gx, *keep = NULL;

  PetscFunctionBegin;
  if (fd->bwd.valid && fd->bwd.k == k && fd->bwd.t == t && NNODESameState(U, &fd->bwd.u) && NNODESameState(V, &fd->bwdv)) PetscFunctionReturn(0);
  if (o->ops && o->ops->stageacts) PetscCall((*o->ops->stageacts)(l, k, U, PETSC_FALSE, &keep));
  if (keep) { /* the forward pass kept f's activations at this stage */
    for (PetscInt c = 0; c < nc; c++) fd->cur[c] = keep[c] ? keep[c] : o->f.out[c]; /* an output not kept is not read */
    fd->fwd.valid = PETSC_FALSE;
  } else if (!(fd->fwd.valid && fd->fwd.k == k && fd->fwd.t == t && NNODESameState(U, &fd->fwd.u))) PetscCall(NNODEEvalField(l, k, t, U, fd->F));
  PetscCall(PetscArrayzero(fd->gp, o->P));
  PetscCall(NNODEPointChildren(l, k, fd->gp));
  for (PetscInt c = nc - 1; c >= 0; c--) PetscCall(NNLayerBackward(l->children[c], n, c ? fd->cur[c - 1] : in, fd->cur[c], c == nc - 1 ? V : o->f.dout[c], c ? o->f.dout[c - 1] : dxin));
  if (o->timeinput) { /* drop the time component of the input gradient */
    const PetscScalar *da;
    PetscScalar       *ga;
    PetscCall(VecGetArrayRead(fd->dfin, &da));
    PetscCall(VecGetArrayWrite(fd->gx, &ga));
    for (PetscInt i = 0; i < n; i++) PetscCall(PetscArraycpy(ga + i * o->S, da + i * o->Sin, o->S));
    PetscCall(VecRestoreArrayWrite(fd->gx, &ga));
    PetscCall(VecRestoreArrayRead(fd->dfin, &da));
  }
  PetscCall(NNODEPointChildren(l, k, NULL));
  PetscCall(NNODEStampVec(U, &fd->bwd.u));
  PetscCall(NNODEStampVec(V, &fd->bwdv));
  fd->bwd.k     = k;
  fd->bwd.t     = t;
  fd->bwd.valid = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* the block's gradient slice for step k's parameters += scale * g (one copy's P entries) */
PetscErrorCode NNODEAddParameterGradient(NNLayer l, PetscInt k, PetscReal scale, const PetscScalar *g)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscScalar *d;

  PetscFunctionBegin;
  if (!l->dtheta || !o->P) PetscFunctionReturn(0);
  d = l->dtheta + l->nparam + (o->params == NNODE_PARAMETERS_PER_STEP ? k : 0) * o->P;
  if (scale == 1.0)
    for (PetscInt i = 0; i < o->P; i++) d[i] += g[i];
  else
    for (PetscInt i = 0; i < o->P; i++) d[i] += scale * g[i];
  PetscCall(PetscLogFlops(2.0 * o->P));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- states in and out, observations */

/* the index of the observation at step k, or -1 */
PetscErrorCode NNODEObservationIndex(NNLayer l, PetscInt k, PetscInt *j)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  *j = -1;
  for (PetscInt i = 0; i < o->nobs; i++)
    if (o->kobs[i] == k) *j = i;
  PetscFunctionReturn(0);
}

/* writes state U as observation j of the output y (j = -1: y = U, no observation times) */
PetscErrorCode NNODEObserve(NNLayer l, PetscInt n, PetscInt j, Vec U, Vec y)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  const PetscScalar *ua;
  PetscScalar       *ya;
  PetscInt           S = o->S, m = PetscMax(o->nobs, 1);

  PetscFunctionBegin;
  if (o->dm) {
    PetscCall(VecCopy(U, y));
    PetscFunctionReturn(0);
  }
  if (j < 0) j = 0;
  PetscCall(VecGetArrayRead(U, &ua));
  PetscCall(VecGetArray(y, &ya));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscArraycpy(ya + (i * m + j) * S, ua + i * S, S));
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(U, &ua));
  PetscFunctionReturn(0);
}

/* lambda += the part of dy that belongs to observation j (j = -1: all of dy, no observation times) */
PetscErrorCode NNODEAddObservationGradient(NNLayer l, PetscInt n, PetscInt j, Vec dy, Vec lambda)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  const PetscScalar *da;
  PetscScalar       *la;
  PetscInt           S = o->S, m = PetscMax(o->nobs, 1);

  PetscFunctionBegin;
  if (o->dm) {
    PetscCall(VecAXPY(lambda, 1.0, dy));
    PetscFunctionReturn(0);
  }
  if (j < 0) j = 0;
  PetscCall(VecGetArrayRead(dy, &da));
  PetscCall(VecGetArray(lambda, &la));
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt e = 0; e < S; e++) la[i * S + e] += da[(i * m + j) * S + e];
  PetscCall(VecRestoreArray(lambda, &la));
  PetscCall(VecRestoreArrayRead(dy, &da));
  PetscFunctionReturn(0);
}
