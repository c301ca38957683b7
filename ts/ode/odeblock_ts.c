/*
   The neural-ODE block on TS/TSAdjoint: forward by TSSolve, backward by TSAdjointSolve.

   The vector field's derivatives are MATSHELLs: the RHS Jacobian J = df/du and the parameter
   Jacobian Jp = df/dtheta (TSSetRHSJacobian, TSSetRHSJacobianP). Their transposed products are f's
   backward pass at the linearization point TS gives (a stage state): the children first run forward
   there again (layers keep what backward needs from their last forward pass), then one backward
   pass yields both J^T v and Jp^T v; RK adjoints ask for both with the same v, so the second product
   is served from a cache. Implicit methods (beuler, cn) solve their stages by Newton-Krylov with
   J v from matrix-free differencing (MatMFFD on f), and their adjoints solve transposed systems with
   the shell's MatMultTranspose (TS scales and shifts the shells; MatAssemblyBegin/End in the Jacobian
   callbacks resets that, which PETSc 3.18 needs).

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

PetscLogEvent NN_ODEForward, NN_ODEAdjoint, NN_ODERecompute;

PetscErrorCode NNODERegisterEvents(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (done) PetscFunctionReturn(0);
  done = PETSC_TRUE;
  PetscCall(PetscLogEventRegister("NNODEForward", NNLAYER_CLASSID, &NN_ODEForward));
  PetscCall(PetscLogEventRegister("NNODEAdjoint", NNLAYER_CLASSID, &NN_ODEAdjoint));
  PetscCall(PetscLogEventRegister("NNODERecompute", NNLAYER_CLASSID, &NN_ODERecompute));
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

/* the exact time of a stage of step k, from the (rounded) time TS passes: (k + c) h with c the
   nearest stage abscissa, so the same stage sees the same t however TS accumulated its clock */
static PetscReal NNODESnapTime(NNLayer l, PetscInt k, PetscReal t)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  PetscReal    frac = t / o->h - k, best = 0, dist = PETSC_MAX_REAL;

  for (PetscInt i = 0; i < o->nstages; i++) {
    if (PetscAbsReal(frac - o->c[i]) < dist) {
      dist = PetscAbsReal(frac - o->c[i]);
      best = o->c[i];
    }
  }
  if (!o->nstages) best = 0;
  return (k + best) * o->h;
}

static PetscBool NNODESameState(Vec U, PetscObjectId id, PetscObjectState state)
{
  PetscObjectId    uid;
  PetscObjectState ust;

  if (PetscObjectGetId((PetscObject)U, &uid) || PetscObjectStateGet((PetscObject)U, &ust)) return PETSC_FALSE;
  return (PetscBool)(uid == id && ust == state);
}

/* the slot of stored activations for stage state U of step k (an RK stage Vec of the block's TS), or -1 */
static PetscErrorCode NNODEStageSlot(NNLayer l, PetscInt k, Vec U, PetscInt *slot)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     ns;
  Vec         *Y;

  PetscFunctionBegin;
  *slot = -1;
  if (!o->acts || !o->ts || k < o->actk0 || k >= o->actk0 + o->actsteps) PetscFunctionReturn(0);
  PetscCall(TSGetStages(o->ts, &ns, &Y));
  for (PetscInt i = 0; i < ns && i < o->nstages; i++)
    if (Y[i] == U) *slot = (k - o->actk0) * o->nstages + i;
  PetscFunctionReturn(0);
}

/* F = f(U, theta_k, t) for the pass's n samples; the children keep this point for a backward pass */
PetscErrorCode NNODEEvalField(NNLayer l, PetscInt k, PetscReal t, Vec U, Vec F)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren, n = o->n, slot = -1;
  Vec          in = U;

  PetscFunctionBegin;
  PetscCall(NNODEPointChildren(l, k, NULL));
  if (o->storing) PetscCall(NNODEStageSlot(l, k, U, &slot));
  if (o->timeinput) { /* f's input is [u, t] per sample */
    const PetscScalar *ua;
    PetscScalar       *fa;
    PetscCall(VecGetArrayRead(U, &ua));
    PetscCall(VecGetArrayWrite(o->fin, &fa));
    for (PetscInt i = 0; i < n; i++) {
      PetscCall(PetscArraycpy(fa + i * o->Sin, ua + i * o->S, o->S));
      fa[i * o->Sin + o->S] = t;
    }
    PetscCall(VecRestoreArrayWrite(o->fin, &fa));
    PetscCall(VecRestoreArrayRead(U, &ua));
    in = o->fin;
  }
  for (PetscInt c = 0; c < nc; c++) { /* outputs to keep go straight into their slot */
    o->cur[c] = slot >= 0 && o->actneed[c] ? o->acts[slot * nc + c] : o->f.out[c];
    PetscCall(NNLayerForward(l->children[c], n, c ? o->cur[c - 1] : in, o->cur[c]));
  }
  if (slot >= 0) o->actpass[slot] = o->passid;
  if (o->dm) PetscCall(VecCopy(o->cur[nc - 1], F));
  else {
    const PetscScalar *ya;
    PetscScalar       *fa;
    PetscCall(VecGetArrayRead(o->cur[nc - 1], &ya));
    PetscCall(VecGetArrayWrite(F, &fa));
    PetscCall(PetscArraycpy(fa, ya, n * o->S));
    PetscCall(VecRestoreArrayWrite(F, &fa));
    PetscCall(VecRestoreArrayRead(o->cur[nc - 1], &ya));
  }
  PetscCall(PetscObjectGetId((PetscObject)U, &o->fwdid));
  PetscCall(PetscObjectStateGet((PetscObject)U, &o->fwdstate));
  o->fwdk     = k;
  o->fwdt     = t;
  o->fwdvalid = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* one backward pass of f at (U, theta_k, t) with output gradient V: o->gx = (df/du)^T V and
   o->gp = (df/dtheta_k)^T V (one copy's P entries); cached, as both products need the same pass */
PetscErrorCode NNODEBackwardField(NNLayer l, PetscInt k, PetscReal t, Vec U, Vec V)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren, n = o->n;
  Vec          in = o->timeinput ? o->fin : U, dxin = o->timeinput ? o->dfin : o->gx;
  PetscInt     slot = -1;

  PetscFunctionBegin;
  if (o->bwdvalid && o->bwdk == k && o->bwdt == t && NNODESameState(U, o->bwdid, o->bwdstate) && NNODESameState(V, o->bwdvid, o->bwdvstate)) PetscFunctionReturn(0);
  if (o->actsok) PetscCall(NNODEStageSlot(l, k, U, &slot));
  if (slot >= 0 && o->actpass[slot] == o->passid) { /* the forward pass kept f's activations at this stage */
    for (PetscInt c = 0; c < nc; c++) o->cur[c] = o->actneed[c] ? o->acts[slot * nc + c] : o->f.out[c]; /* an output not kept is not read */
    o->fwdvalid = PETSC_FALSE;
  } else if (!(o->fwdvalid && o->fwdk == k && o->fwdt == t && NNODESameState(U, o->fwdid, o->fwdstate))) PetscCall(NNODEEvalField(l, k, t, U, o->F));
  PetscCall(PetscArrayzero(o->gp, o->P));
  PetscCall(NNODEPointChildren(l, k, o->gp));
  for (PetscInt c = nc - 1; c >= 0; c--) PetscCall(NNLayerBackward(l->children[c], n, c ? o->cur[c - 1] : in, o->cur[c], c == nc - 1 ? V : o->f.dout[c], c ? o->f.dout[c - 1] : dxin));
  if (o->timeinput) { /* drop the time component of the input gradient */
    const PetscScalar *da;
    PetscScalar       *ga;
    PetscCall(VecGetArrayRead(o->dfin, &da));
    PetscCall(VecGetArrayWrite(o->gx, &ga));
    for (PetscInt i = 0; i < n; i++) PetscCall(PetscArraycpy(ga + i * o->S, da + i * o->Sin, o->S));
    PetscCall(VecRestoreArrayWrite(o->gx, &ga));
    PetscCall(VecRestoreArrayRead(o->dfin, &da));
  }
  PetscCall(NNODEPointChildren(l, k, NULL));
  PetscCall(PetscObjectGetId((PetscObject)U, &o->bwdid));
  PetscCall(PetscObjectStateGet((PetscObject)U, &o->bwdstate));
  PetscCall(PetscObjectGetId((PetscObject)V, &o->bwdvid));
  PetscCall(PetscObjectStateGet((PetscObject)V, &o->bwdvstate));
  o->bwdk     = k;
  o->bwdt     = t;
  o->bwdvalid = PETSC_TRUE;
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

/* ---------------------------------------------------------------- TS callbacks */

static PetscErrorCode NNODETSRHSFunction(TS ts, PetscReal t, Vec U, Vec F, void *ctx)
{
  NNLayer  l = (NNLayer)ctx;
  PetscInt k;

  PetscFunctionBegin;
  PetscCall(TSGetStepNumber(ts, &k));
  PetscCall(NNODEEvalField(l, k, NNODESnapTime(l, k, t), U, F));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODETSRHSJacobian(TS ts, PetscReal t, Vec U, Mat A, Mat B, void *ctx)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(TSGetStepNumber(ts, &o->jk));
  o->jU = U;
  o->jt = NNODESnapTime(l, o->jk, t);
  if (o->implicit) { /* the base point of the differenced J v; also leaves f's forward pass at U for J^T v */
    PetscCall(NNODEEvalField(l, o->jk, o->jt, U, o->F0));
    PetscCall(MatMFFDSetBase(o->mffd, U, o->F0));
    PetscCall(MatAssemblyBegin(o->mffd, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(o->mffd, MAT_FINAL_ASSEMBLY));
  }
  /* resets the scale and shift TS applied to the shell for the last implicit solve */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  if (B != A) {
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODETSRHSJacobianP(TS ts, PetscReal t, Vec U, Mat A, void *ctx)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(TSGetStepNumber(ts, &o->jpk));
  o->jpU = U;
  o->jpt = NNODESnapTime(l, o->jpk, t);
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* J v by differencing f (Newton-Krylov stages of implicit methods) */
static PetscErrorCode NNODEMFFDFunction(void *ctx, Vec X, Vec F)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEEvalField(l, o->jk, o->jt, X, F));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMatMult_J(Mat A, Vec X, Vec Y)
{
  NNLayer      l;
  NNLayer_ODE *o;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &l));
  o = (NNLayer_ODE *)l->data;
  PetscCall(MatMult(o->mffd, X, Y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMatMultTranspose_J(Mat A, Vec V, Vec Y)
{
  NNLayer      l;
  NNLayer_ODE *o;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &l));
  o = (NNLayer_ODE *)l->data;
  PetscCall(NNODEBackwardField(l, o->jk, o->jt, o->jU, V));
  PetscCall(VecCopy(o->gx, Y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMatMultTranspose_Jp(Mat A, Vec V, Vec Y)
{
  NNLayer      l;
  NNLayer_ODE *o;
  PetscScalar *ya;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &l));
  o = (NNLayer_ODE *)l->data;
  PetscCall(NNODEBackwardField(l, o->jpk, o->jpt, o->jpU, V));
  PetscCall(VecGetArrayWrite(Y, &ya)); /* all P entries live on the TS's rank 0 */
  if (!o->tsrank) PetscCall(PetscArraycpy(ya, o->gp, o->P));
  PetscCall(VecRestoreArrayWrite(Y, &ya));
  PetscFunctionReturn(0);
}

/* step k starts at fl(k h) however the clock was reached, so every path stores the same times */
static PetscErrorCode NNODEPreStep(TS ts)
{
  NNLayer      l;
  NNLayer_ODE *o;
  PetscInt     k;

  PetscFunctionBegin;
  PetscCall(TSGetApplicationContext(ts, &l));
  o = (NNLayer_ODE *)l->data;
  PetscCall(TSGetStepNumber(ts, &k));
  PetscCall(TSSetTime(ts, k * o->h));
  /* an FSAL tableau (3bs) reuses f at the last stage of step k-1 as the first stage of step k. That
     value has step k-1's parameters (wrong with per-step parameters), and a segment re-solve cannot
     reuse it, so its arithmetic would differ from the full solve's: evaluate the first stage anew */
  if (o->fsal) PetscCall(TSRestartStep(ts));
  PetscFunctionReturn(0);
}

/* records observations and, when checkpointing, segment boundaries */
static PetscErrorCode NNODEPostStep(TS ts)
{
  NNLayer      l;
  NNLayer_ODE *o;
  PetscInt     k, j;
  Vec          U;

  PetscFunctionBegin;
  PetscCall(TSGetApplicationContext(ts, &l));
  o = (NNLayer_ODE *)l->data;
  if (o->inrecompute) PetscFunctionReturn(0);
  PetscCall(TSGetStepNumber(ts, &k)); /* the state just computed is u_k */
  PetscCall(TSGetSolution(ts, &U));
  PetscCall(NNODEObservationIndex(l, k, &j));
  if (j >= 0) PetscCall(NNODEObserve(l, o->n, j, U, o->yout));
  if (o->bnd && k % o->L == 0 && k / o->L < o->nseg) PetscCall(VecCopy(U, o->bnd[k / o->L]));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the TS */

/* time of the stored state a in a solve from 0: fl(fl((a-1) h) + h) (the pre-step hook's clock) */
static PetscReal NNODEStateTime(NNLayer_ODE *o, PetscInt a)
{
  volatile PetscReal t;

  if (!a) return 0;
  t = (a - 1) * o->h;
  t = t + o->h;
  return t;
}

/* Can the adjoint skip re-evaluating f at a stage? Only if every layer's backward pass needs no more
   than its input, output and parameters (dense and pointwise layers; convolutions pack their weights
   in the forward pass, so only with shared parameters), and the stage Vecs identify the stages (RK). */
static PetscErrorCode NNODEActivationsAllowed(NNLayer l)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren;
  PetscBool    isrk, ok;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)o->ts, TSRK, &isrk));
  o->actsok = (PetscBool)(o->storeacts && isrk && !o->timeinput && o->f.nvec == nc);
  for (PetscInt c = 0; c < nc && o->actsok; c++) {
    NNLayer   ch = l->children[c];
    PetscBool conv, pointwise;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ch, &pointwise, NNLAYERDENSE, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, NNLAYERFLATTEN, ""));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ch, &conv, NNLAYERCONV2D, NNLAYERCONV3D, ""));
    ok        = (PetscBool)(!ch->nchildren && (pointwise || (conv && o->params == NNODE_PARAMETERS_SHARED)));
    o->actsok = (PetscBool)(o->actsok && ok);
  }
  for (PetscInt c = 0; c < nc; c++) { /* the inputs of the next layers, and the last output if an activation reads it */
    PetscBool act = PETSC_FALSE;
    if (c == nc - 1) PetscCall(PetscObjectTypeCompareAny((PetscObject)l->children[c], &act, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, ""));
    if (o->actneed) o->actneed[c] = (PetscBool)(c < nc - 1 || act);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEDestroyActs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (o->acts)
    for (PetscInt i = 0; i < o->nslots * l->nchildren; i++) PetscCall(VecDestroy(&o->acts[i]));
  PetscCall(PetscFree(o->acts));
  PetscCall(PetscFree(o->actpass));
  o->nslots   = 0;
  o->actsteps = 0;
  PetscFunctionReturn(0);
}

/* a recording solve of steps [k0, k0 + steps) keeps f's activations at every stage (when allowed) */
static PetscErrorCode NNODEActsBegin(NNLayer l, PetscInt k0, PetscInt steps)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren, need = steps * o->nstages, m;

  PetscFunctionBegin;
  o->actstored = 0;
  if (!o->actsok) PetscFunctionReturn(0);
  if (o->nslots < need) {
    PetscCall(NNODEDestroyActs(l));
    PetscCall(PetscCalloc1(need * nc, &o->acts));
    PetscCall(PetscCalloc1(need, &o->actpass));
    o->actbytes = 0;
    for (PetscInt c = 0; c < nc; c++) {
      if (!o->actneed[c]) continue;
      for (PetscInt i = 0; i < need; i++) PetscCall(VecDuplicate(o->f.out[c], &o->acts[i * nc + c]));
      PetscCall(VecGetLocalSize(o->f.out[c], &m));
      o->actbytes += (PetscLogDouble)m * sizeof(PetscScalar);
    }
    o->nslots = need;
  }
  o->actk0     = k0;
  o->actsteps  = steps;
  o->actstored = need;
  o->passid++;
  o->storing = PETSC_TRUE;
  PetscFunctionReturn(0);
}

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

/* the block's TS, on the communicator of the activation layout, configured from its options */
PetscErrorCode NNODECreateTS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  MPI_Comm     comm;
  SNES         snes;
  KSP          ksp;
  PC           pc;
  TSAdapt      adapt;
  PetscBool    isrk, isbe, iscn;
  const char  *prefix = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";

  PetscFunctionBegin;
  if (o->ts) PetscFunctionReturn(0);
  comm = o->dm ? PetscObjectComm((PetscObject)o->dm) : PETSC_COMM_SELF;
  PetscCallMPI(MPI_Comm_rank(comm, &o->tsrank));
  PetscCallMPI(MPI_Comm_size(comm, &o->tssize));
  PetscCall(TSCreate(comm, &o->ts));
  PetscCall(TSSetOptionsPrefix(o->ts, ((PetscObject)l)->prefix));
  PetscCall(TSSetApplicationContext(o->ts, l));
  PetscCall(TSSetProblemType(o->ts, TS_NONLINEAR));
  PetscCall(TSSetType(o->ts, TSRK));
  PetscCall(TSRKSetType(o->ts, TSRK4));
  PetscCall(TSSetMaxSteps(o->ts, o->N));
  PetscCall(TSSetMaxTime(o->ts, o->T));
  PetscCall(TSSetTimeStep(o->ts, o->h));
  PetscCall(TSSetExactFinalTime(o->ts, TS_EXACTFINALTIME_STEPOVER));
  PetscCall(TSSetPreStep(o->ts, NNODEPreStep));
  PetscCall(TSSetPostStep(o->ts, NNODEPostStep));
  /* implicit stages: Newton-Krylov on a matrix-free operator, no preconditioner; tight tolerances,
     since the adjoint is exact for the exactly solved stage equations */
  PetscCall(TSGetSNES(o->ts, &snes));
  PetscCall(SNESSetTolerances(snes, 1e-50, 1e-12, 1e-14, 50, -1));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-50, PETSC_DEFAULT, 500));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(TSSetFromOptions(o->ts));
  /* fixed steps: the step index selects per-step parameters and observations */
  PetscCall(TSGetAdapt(o->ts, &adapt));
  PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
  PetscCall(TSSetExactFinalTime(o->ts, TS_EXACTFINALTIME_STEPOVER));
  PetscCall(TSSetEquationType(o->ts, TS_EQ_ODE_EXPLICIT));

  PetscCall(PetscObjectTypeCompare((PetscObject)o->ts, TSRK, &isrk));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->ts, TSBEULER, &isbe));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->ts, TSCN, &iscn));
  if (isrk) {
    PetscInt         s;
    const PetscReal *A, *b, *c;
    TSRKType         rktype;
    PetscCall(TSRKGetType(o->ts, &rktype));
    PetscCall(TSRKGetTableau(o->ts, &s, &A, &b, &c, NULL, NULL, NULL, &o->fsal));
    PetscCheck(s <= NN_ODE_MAX_STAGES, comm, PETSC_ERR_SUP, "ODE block %s: RK tableau %s has %" PetscInt_FMT " stages; at most %d are supported", ((PetscObject)l)->name, rktype, s, NN_ODE_MAX_STAGES);
    /* PETSc 3.18's RK adjoint drops the parameter sensitivity of a stage whose weight b_i is 0 but
       that later stages use (fixed in 3.21); a zero-weight last stage (3bs's FSAL stage) is harmless */
    for (PetscInt i = 0; i < s; i++) {
      PetscBool used = PETSC_FALSE;
      for (PetscInt j = i + 1; j < s; j++) used = (PetscBool)(used || A[j * s + i] != 0);
      PetscCheck(b[i] != 0 || !used, comm, PETSC_ERR_SUP,
                 "ODE block %s: -%sts_rk_type %s has a zero weight b_%" PetscInt_FMT " on a stage that later stages use; PETSc 3.18's TSAdjoint then returns wrong parameter gradients (fixed in PETSc 3.21). Use -%sts_rk_type 1fe, 2a, 3, 3bs or 4", ((PetscObject)l)->name, prefix, rktype, i + 1, prefix);
    }
    o->nstages = s;
    for (PetscInt i = 0; i < s; i++) o->c[i] = c[i];
    o->implicit = PETSC_FALSE;
  } else if (isbe || iscn) {
    PetscReal theta;
    PetscCall(TSThetaGetTheta(o->ts, &theta));
    o->nstages  = 3;
    o->c[0]     = 0;
    o->c[1]     = theta;
    o->c[2]     = 1;
    o->implicit = PETSC_TRUE;
    o->fsal     = PETSC_FALSE;
  } else {
    TSType type;
    PetscCall(TSGetType(o->ts, &type));
    SETERRQ(comm, PETSC_ERR_SUP, "ODE block %s: -%sts_type %s is not supported: the block needs a TS with an exact discrete adjoint in PETSc 3.18; valid: rk (-%sts_rk_type 1fe, 2a, 3, 3bs, 4), beuler, cn (for forward Euler use rk with -%sts_rk_type 1fe)", ((PetscObject)l)->name, prefix, type, prefix, prefix);
  }
  PetscCall(NNODEActivationsAllowed(l));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEDestroyTSVecs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&o->U));
  PetscCall(VecDestroy(&o->F));
  PetscCall(VecDestroy(&o->F0));
  PetscCall(VecDestroy(&o->gx));
  PetscCall(VecDestroy(&o->lambda));
  PetscCall(VecDestroy(&o->mu));
  PetscCall(MatDestroy(&o->J));
  PetscCall(MatDestroy(&o->Jp));
  PetscCall(MatDestroy(&o->mffd));
  if (o->bnd) PetscCall(VecDestroyVecs(o->nseg, &o->bnd));
  o->nseg = 0;
  o->nU   = -2;
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEDestroyTS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(TSDestroy(&o->ts));
  PetscCall(NNODEDestroyTSVecs(l));
  PetscCall(NNODEDestroyActs(l));
  PetscCall(PetscFree(o->mubuf));
  PetscFunctionReturn(0);
}

/* the state Vecs for a pass of n samples: sequential Vecs of n samples (remade when n changes), or
   the DMDA layout of x; with the TS scheme also the shells, mu and the TS's wiring */
PetscErrorCode NNODEPrepareVecs(NNLayer l, PetscInt n, Vec x, PetscBool withts)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     m, M, nloc = o->dm ? -1 : n;

  PetscFunctionBegin;
  if (withts) PetscCall(NNODECreateTS(l));
  if (o->U && o->nU == nloc && (!withts || o->J)) PetscFunctionReturn(0);
  if (o->ts && o->J) { /* the TS's work Vecs have the old sizes */
    PetscCall(TSAdjointReset(o->ts));
    PetscCall(TSReset(o->ts));
  }
  PetscCall(NNODEDestroyTSVecs(l));
  if (o->dm) PetscCall(VecDuplicate(x, &o->U));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * o->S, &o->U));
  o->nU = nloc;
  PetscCall(VecDuplicate(o->U, &o->F));
  PetscCall(VecDuplicate(o->U, &o->F0));
  PetscCall(VecDuplicate(o->U, &o->gx));
  PetscCall(VecDuplicate(o->U, &o->lambda));
  if (!withts) PetscFunctionReturn(0);

  PetscCall(VecGetLocalSize(o->U, &m));
  PetscCall(VecGetSize(o->U, &M));
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)o->ts), m, m, M, M, l, &o->J));
  PetscCall(MatShellSetOperation(o->J, MATOP_MULT_TRANSPOSE, (void (*)(void))NNODEMatMultTranspose_J));
  if (o->implicit) {
    PetscCall(MatCreateMFFD(PetscObjectComm((PetscObject)o->ts), m, m, M, M, &o->mffd));
    PetscCall(MatMFFDSetFunction(o->mffd, NNODEMFFDFunction, l));
    PetscCall(MatShellSetOperation(o->J, MATOP_MULT, (void (*)(void))NNODEMatMult_J));
  }
  PetscCall(TSSetRHSFunction(o->ts, NULL, NNODETSRHSFunction, l));
  PetscCall(TSSetRHSJacobian(o->ts, o->J, o->J, NNODETSRHSJacobian, l));
  if (o->P) {
    PetscInt pl = o->tsrank ? 0 : o->P;
    PetscCall(VecCreate(PetscObjectComm((PetscObject)o->ts), &o->mu));
    PetscCall(VecSetSizes(o->mu, pl, o->P));
    PetscCall(VecSetType(o->mu, VECSTANDARD));
    PetscCall(MatCreateShell(PetscObjectComm((PetscObject)o->ts), m, pl, M, o->P, l, &o->Jp));
    PetscCall(MatShellSetOperation(o->Jp, MATOP_MULT_TRANSPOSE, (void (*)(void))NNODEMatMultTranspose_Jp));
    PetscCall(TSSetRHSJacobianP(o->ts, o->Jp, NNODETSRHSJacobianP, l));
  }
  PetscCall(TSSetSolution(o->ts, o->U));
  PetscCall(TSSetCostGradients(o->ts, 1, &o->lambda, o->P ? &o->mu : NULL));
  if (!o->mubuf) PetscCall(PetscMalloc1(PetscMax(o->P, 1), &o->mubuf));
  PetscCall(TSSetUp(o->ts));
  { /* the trajectory stores the solution and these stage Vecs per step */
    PetscInt ns;
    Vec     *Y;
    PetscCall(TSGetStages(o->ts, &ns, &Y));
    o->nstagevecs = ns;
  }
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

/* solves steps [a, b) from the state in o->U (a > 0: a segment restart) */
static PetscErrorCode NNODESolve(NNLayer l, PetscInt a, PetscInt b)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  TSConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(TSSetStepNumber(o->ts, a));
  PetscCall(TSSetTime(o->ts, NNODEStateTime(o, a)));
  PetscCall(TSSetTimeStep(o->ts, o->h));
  PetscCall(TSSetMaxSteps(o->ts, b));
  PetscCall(TSSetMaxTime(o->ts, (b + 0.5) * o->h));
  o->fwdvalid = o->bwdvalid = PETSC_FALSE;
  PetscCall(TSSolve(o->ts, o->U));
  PetscCall(TSSetMaxSteps(o->ts, o->N)); /* what -ts_view should show */
  PetscCall(TSSetMaxTime(o->ts, o->T));
  PetscCall(TSGetConvergedReason(o->ts, &reason));
  PetscCheck(reason >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_NOT_CONVERGED, "ODE block %s: the TS diverged (%s) in steps %" PetscInt_FMT " to %" PetscInt_FMT "; for beuler/cn see -%ssnes_converged_reason and -%sksp_converged_reason", ((PetscObject)l)->name, TSConvergedReasons[reason], a, b, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "",
             ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  PetscFunctionReturn(0);
}

/* forward: y = u(T), or the observed states; in training mode record what the backward pass needs */
PetscErrorCode NNODEForwardTS(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE   *o      = (NNLayer_ODE *)l->data;
  PetscBool      record = l->training, hastraj;
  PetscInt       j;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(NNODEPrepareVecs(l, n, x, PETSC_TRUE));
  PetscCall(PetscTime(&t0));
  o->yout        = y;
  o->inrecompute = PETSC_FALSE;
  PetscCall(NNODECopyIn(l, n, x, o->U));
  PetscCall(NNODEObservationIndex(l, 0, &j));
  if (j >= 0) PetscCall(NNODEObserve(l, n, j, o->U, y));
  /* what to keep: the whole trajectory (K = 0), or the segment boundaries (K > 0), or nothing (evaluation) */
  if (o->bnd) PetscCall(VecDestroyVecs(o->nseg, &o->bnd));
  o->nseg = 0;
  {
    TSTrajectory tj;
    PetscCall(TSGetTrajectory(o->ts, &tj));
    hastraj = tj ? PETSC_TRUE : PETSC_FALSE;
  }
  if (record && !o->K) {
    PetscCall(NNODEFreshTrajectory(o->ts));
    o->nstored = o->kend * (1 + o->nstagevecs) + 1;
  } else {
    if (hastraj) PetscCall(TSRemoveTrajectory(o->ts));
    if (record) {
      PetscInt K = PetscMin(o->K, o->kend);
      o->L       = (o->kend + K - 1) / K;
      o->nseg    = (o->kend + o->L - 1) / o->L;
      PetscCall(VecDuplicateVecs(o->U, o->nseg, &o->bnd));
      PetscCall(VecCopy(o->U, o->bnd[0]));
      o->nstored = o->nseg + o->L * (1 + o->nstagevecs) + 1; /* the boundaries and, during the backward pass, one segment's trajectory */
    } else o->nstored = 0;
  }
  o->actstored = 0;
  PetscCall(NNODEActivationsAllowed(l)); /* options may have changed since the TS was made */
  if (record && !o->K) PetscCall(NNODEActsBegin(l, 0, o->kend));
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  PetscCall(NNODESolve(l, 0, o->kend));
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  o->storing = PETSC_FALSE;
  if (!o->nobs) PetscCall(NNODEObserve(l, n, -1, o->U, y));
  o->recorded = record;
  PetscCall(PetscTime(&t1));
  o->tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

/* the adjoint of step k: lambda_k from lambda_{k+1}, and step k's parameter gradient */
static PetscErrorCode NNODEAdjointStep(NNLayer l, PetscInt k)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  TSConvergedReason reason;

  PetscFunctionBegin;
  if (o->mu) PetscCall(VecZeroEntries(o->mu));
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(TSAdjointSetSteps(o->ts, 1));
  PetscCall(TSAdjointSolve(o->ts));
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(TSGetConvergedReason(o->ts, &reason));
  PetscCheck(reason >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_NOT_CONVERGED, "ODE block %s: the adjoint of step %" PetscInt_FMT " failed (%s); for beuler/cn see -%sksp_converged_reason", ((PetscObject)l)->name, k, TSConvergedReasons[reason], ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  if (o->mu) {
    const PetscScalar *mu;
    PetscCall(VecGetArrayRead(o->mu, &mu));
    if (!o->tsrank) PetscCall(PetscArraycpy(o->mubuf, mu, o->P));
    PetscCall(VecRestoreArrayRead(o->mu, &mu));
    if (o->tssize > 1) {
      PetscMPIInt cnt;
      PetscCall(PetscMPIIntCast(o->P, &cnt));
      PetscCallMPI(MPI_Bcast(o->mubuf, cnt, MPIU_SCALAR, 0, PetscObjectComm((PetscObject)o->ts)));
    }
    PetscCall(NNODEAddParameterGradient(l, k, 1.0, o->mubuf));
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
PetscErrorCode NNODEBackwardTS(NNLayer l, PetscInt n, Vec x PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  PetscInt       j;
  PetscLogDouble t0, t1, tr = 0;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  o->fwdvalid = o->bwdvalid = PETSC_FALSE;
  PetscCall(VecZeroEntries(o->lambda));
  PetscCall(NNODEObservationIndex(l, o->kend, &j));
  if (!o->nobs || j >= 0) PetscCall(NNODEAddObservationGradient(l, n, o->nobs ? j : -1, dy, o->lambda));
  if (!o->nseg) PetscCall(NNODEAdjointSteps(l, 0, o->kend, dy));
  else {
    o->inrecompute = PETSC_TRUE;
    for (PetscInt s = o->nseg - 1; s >= 0; s--) {
      PetscInt       a = s * o->L, b = PetscMin(a + o->L, o->kend);
      PetscLogDouble r0, r1;
      /* re-solve the segment from its stored state with the trajectory on, then its adjoint */
      PetscCall(PetscTime(&r0));
      PetscCall(PetscLogEventBegin(NN_ODERecompute, l, 0, 0, 0));
      PetscCall(VecCopy(o->bnd[s], o->U));
      PetscCall(NNODEFreshTrajectory(o->ts));
      PetscCall(NNODEActsBegin(l, a, o->L));
      PetscCall(NNODESolve(l, a, b));
      o->storing = PETSC_FALSE;
      PetscCall(PetscLogEventEnd(NN_ODERecompute, l, 0, 0, 0));
      PetscCall(PetscTime(&r1));
      tr += r1 - r0;
      PetscCall(NNODEAdjointSteps(l, a, b, dy));
    }
    o->inrecompute = PETSC_FALSE;
    PetscCall(TSRemoveTrajectory(o->ts));
  }
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
  o->trec += tr;
  o->tadj += t1 - t0 - tr;
  PetscFunctionReturn(0);
}
