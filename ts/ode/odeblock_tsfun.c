/*
   The ts scheme's callbacks: f as TS's right-hand side, its derivatives as MATSHELLs, the pre- and
   post-step hooks, and the store of f's activations at every RK stage of a recording solve.

   The vector field's derivatives are MATSHELLs: the RHS Jacobian J = df/du and the parameter
   Jacobian Jp = df/dtheta (TSSetRHSJacobian, TSSetRHSJacobianP). Their transposed products are f's
   backward pass at the linearization point TS gives (a stage state): the children first run forward
   there again (layers keep what backward needs from their last forward pass), then one backward
   pass yields both J^T v and Jp^T v; RK adjoints ask for both with the same v, so the second product
   is served from a cache. Implicit methods (beuler, cn) solve their stages by Newton-Krylov with
   J v from matrix-free differencing (MatMFFD on f), and their adjoints solve transposed systems with
   the shell's MatMultTranspose (TS scales and shifts the shells; MatAssemblyBegin/End in the Jacobian
   callbacks resets that, which PETSc 3.18 needs).
*/
#include <petnn/private/odeimpl.h>

/* the exact time of a stage of step k, from the (rounded) time TS passes: (k + c) h with c the
   nearest stage abscissa, so the same stage sees the same t however TS accumulated its clock */
static PetscReal NNODESnapTime(NNLayer l, PetscInt k, PetscReal t)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  PetscReal    frac = t / o->h - k, best = 0, dist = PETSC_MAX_REAL;

  for (PetscInt i = 0; i < o->integ.nstages; i++) {
    if (PetscAbsReal(frac - o->integ.c[i]) < dist) {
      dist = PetscAbsReal(frac - o->integ.c[i]);
      best = o->integ.c[i];
    }
  }
  if (!o->integ.nstages) best = 0;
  return (k + best) * o->h;
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
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(TSGetStepNumber(ts, &d->jk));
  d->jU = U;
  d->jt = NNODESnapTime(l, d->jk, t);
  if (o->integ.implicit) { /* the base point of the differenced J v; also leaves f's forward pass at U for J^T v */
    PetscCall(NNODEEvalField(l, d->jk, d->jt, U, d->F0));
    PetscCall(MatMFFDSetBase(d->mffd, U, d->F0));
    PetscCall(MatAssemblyBegin(d->mffd, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(d->mffd, MAT_FINAL_ASSEMBLY));
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
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(TSGetStepNumber(ts, &d->jpk));
  d->jpU = U;
  d->jpt = NNODESnapTime(l, d->jpk, t);
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* J v by differencing f (Newton-Krylov stages of implicit methods) */
static PetscErrorCode NNODEMFFDFunction(void *ctx, Vec X, Vec F)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNODEEvalField(l, d->jk, d->jt, X, F));
  PetscFunctionReturn(0);
}

/* the block behind a shell Jacobian, and its ts scheme's data */
static PetscErrorCode NNODEShellBlock(Mat A, NNLayer *l, NNODE_TS **d)
{
  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, l));
  *d = (NNODE_TS *)((NNLayer_ODE *)(*l)->data)->schemedata;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMatMult_J(Mat A, Vec X, Vec Y)
{
  NNLayer   l = NULL;
  NNODE_TS *d = NULL;

  PetscFunctionBegin;
  PetscCall(NNODEShellBlock(A, &l, &d));
  PetscCall(MatMult(d->mffd, X, Y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMatMultTranspose_J(Mat A, Vec V, Vec Y)
{
  NNLayer   l = NULL;
  NNODE_TS *d = NULL;

  PetscFunctionBegin;
  PetscCall(NNODEShellBlock(A, &l, &d));
  PetscCall(NNODEBackwardField(l, d->jk, d->jt, d->jU, V));
  PetscCall(VecCopy(((NNLayer_ODE *)l->data)->fld.gx, Y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMatMultTranspose_Jp(Mat A, Vec V, Vec Y)
{
  NNLayer      l = NULL;
  NNLayer_ODE *o;
  NNODE_TS    *d = NULL;
  PetscScalar *ya;

  PetscFunctionBegin;
  PetscCall(NNODEShellBlock(A, &l, &d));
  o = (NNLayer_ODE *)l->data;
  PetscCall(NNODEBackwardField(l, d->jpk, d->jpt, d->jpU, V));
  PetscCall(VecGetArrayWrite(Y, &ya)); /* all P entries live on the TS's rank 0 */
  if (!o->integ.rank) PetscCall(PetscArraycpy(ya, o->fld.gp, o->P));
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
  if (o->integ.fsal) PetscCall(TSRestartStep(ts));
  PetscFunctionReturn(0);
}

/* records observations and, when checkpointing, segment boundaries */
static PetscErrorCode NNODEPostStep(TS ts)
{
  NNLayer      l;
  NNLayer_ODE *o;
  NNODE_TS    *d;
  PetscInt     k, j;
  Vec          U;

  PetscFunctionBegin;
  PetscCall(TSGetApplicationContext(ts, &l));
  o = (NNLayer_ODE *)l->data;
  d = (NNODE_TS *)o->schemedata;
  if (d->inrecompute) PetscFunctionReturn(0);
  PetscCall(TSGetStepNumber(ts, &k)); /* the state just computed is u_k */
  PetscCall(TSGetSolution(ts, &U));
  PetscCall(NNODEObservationIndex(l, k, &j));
  if (j >= 0) PetscCall(NNODEObserve(l, o->n, j, U, d->yout));
  if (d->bnd && k % d->L == 0 && k / d->L < d->nseg) PetscCall(VecCopy(U, d->bnd[k / d->L]));
  PetscFunctionReturn(0);
}

/* the stageacts op: the Vecs keeping f's activations at stage state U of step k (an RK stage Vec of the
   block's TS), NULL where a child's output is not kept; *keep = NULL when nothing is kept there. A
   recording solve writes them (write), the adjoint reads those the current pass wrote. */
PetscErrorCode NNODEStageActs_TS(NNLayer l, PetscInt k, Vec U, PetscBool write, Vec **keep)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  NNODE_TS    *d    = (NNODE_TS *)o->schemedata;
  PetscInt     slot = -1, ns;
  Vec         *Y;

  PetscFunctionBegin;
  *keep = NULL;
  if (write ? !d->storing : !d->actsok) PetscFunctionReturn(0);
  if (!d->acts || !o->integ.ts || k < d->actk0 || k >= d->actk0 + d->actsteps) PetscFunctionReturn(0);
  PetscCall(TSGetStages(o->integ.ts, &ns, &Y));
  for (PetscInt i = 0; i < ns && i < o->integ.nstages; i++)
    if (Y[i] == U) slot = (k - d->actk0) * o->integ.nstages + i;
  if (slot < 0) PetscFunctionReturn(0);
  if (write) d->actpass[slot] = d->passid;
  else if (d->actpass[slot] != d->passid) PetscFunctionReturn(0);
  *keep = d->acts + slot * l->nchildren;
  PetscFunctionReturn(0);
}

/* Can the adjoint skip re-evaluating f at a stage? Only if every layer's backward pass needs no more
   than its input, output and parameters (dense and pointwise layers; convolutions pack their weights
   in the forward pass, so only with shared parameters), and the stage Vecs identify the stages (RK). */
PetscErrorCode NNODEActivationsAllowed(NNLayer l)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODE_TS    *d  = (NNODE_TS *)o->schemedata;
  PetscInt     nc = l->nchildren;
  PetscBool    isrk, ok;

  PetscFunctionBegin;
  if (!d->actneed) PetscCall(PetscCalloc1(nc, &d->actneed)); /* freed with f's Vecs (the layout op) */
  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSRK, &isrk));
  d->actsok = (PetscBool)(o->storeacts && isrk && !o->timeinput && o->f.nvec == nc);
  for (PetscInt c = 0; c < nc && d->actsok; c++) {
    NNLayer   ch = l->children[c];
    PetscBool conv, pointwise;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ch, &pointwise, NNLAYERDENSE, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, NNLAYERFLATTEN, ""));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)ch, &conv, NNLAYERCONV2D, NNLAYERCONV3D, ""));
    ok        = (PetscBool)(!ch->nchildren && (pointwise || (conv && o->params == NNODE_PARAMETERS_SHARED)));
    d->actsok = (PetscBool)(d->actsok && ok);
  }
  for (PetscInt c = 0; c < nc; c++) { /* the inputs of the next layers, and the last output if an activation reads it */
    PetscBool act = PETSC_FALSE;
    if (c == nc - 1) PetscCall(PetscObjectTypeCompareAny((PetscObject)l->children[c], &act, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, ""));
    d->actneed[c] = (PetscBool)(c < nc - 1 || act);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEDestroyActs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;

  PetscFunctionBegin;
  if (d->acts)
    for (PetscInt i = 0; i < d->nslots * l->nchildren; i++) PetscCall(VecDestroy(&d->acts[i]));
  PetscCall(PetscFree(d->acts));
  PetscCall(PetscFree(d->actpass));
  d->nslots   = 0;
  d->actsteps = 0;
  PetscFunctionReturn(0);
}

/* a recording solve of steps [k0, k0 + steps) keeps f's activations at every stage (when allowed) */
PetscErrorCode NNODEActsBegin(NNLayer l, PetscInt k0, PetscInt steps)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODE_TS    *d  = (NNODE_TS *)o->schemedata;
  PetscInt     nc = l->nchildren, need = steps * o->integ.nstages, m;

  PetscFunctionBegin;
  o->stats.actstored = 0;
  if (!d->actsok) PetscFunctionReturn(0);
  if (d->nslots < need) {
    PetscCall(NNODEDestroyActs(l));
    PetscCall(PetscCalloc1(need * nc, &d->acts));
    PetscCall(PetscCalloc1(need, &d->actpass));
    o->stats.actbytes = 0;
    for (PetscInt c = 0; c < nc; c++) {
      if (!d->actneed[c]) continue;
      for (PetscInt i = 0; i < need; i++) PetscCall(VecDuplicate(o->f.out[c], &d->acts[i * nc + c]));
      PetscCall(VecGetLocalSize(o->f.out[c], &m));
      o->stats.actbytes += (PetscLogDouble)m * sizeof(PetscScalar);
    }
    d->nslots = need;
  }
  d->actk0     = k0;
  d->actsteps  = steps;
  o->stats.actstored = need;
  d->passid++;
  d->storing = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* the TS's right-hand side, Jacobians, cost gradients and hooks, on the state Vecs of the pass */
PetscErrorCode NNODEWireTS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_TS    *d = (NNODE_TS *)o->schemedata;
  PetscInt     m, M;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(o->U, &m));
  PetscCall(VecGetSize(o->U, &M));
  PetscCall(VecDuplicate(o->U, &d->F0));
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)o->integ.ts), m, m, M, M, l, &d->J));
  PetscCall(MatShellSetOperation(d->J, MATOP_MULT_TRANSPOSE, (void (*)(void))NNODEMatMultTranspose_J));
  if (o->integ.implicit) {
    PetscCall(MatCreateMFFD(PetscObjectComm((PetscObject)o->integ.ts), m, m, M, M, &d->mffd));
    PetscCall(MatMFFDSetFunction(d->mffd, NNODEMFFDFunction, l));
    PetscCall(MatShellSetOperation(d->J, MATOP_MULT, (void (*)(void))NNODEMatMult_J));
  }
  PetscCall(TSSetRHSFunction(o->integ.ts, NULL, NNODETSRHSFunction, l));
  PetscCall(TSSetRHSJacobian(o->integ.ts, d->J, d->J, NNODETSRHSJacobian, l));
  if (o->P) {
    PetscInt pl = o->integ.rank ? 0 : o->P;
    PetscCall(VecCreate(PetscObjectComm((PetscObject)o->integ.ts), &d->mu));
    PetscCall(VecSetSizes(d->mu, pl, o->P));
    PetscCall(VecSetType(d->mu, VECSTANDARD));
    PetscCall(MatCreateShell(PetscObjectComm((PetscObject)o->integ.ts), m, pl, M, o->P, l, &d->Jp));
    PetscCall(MatShellSetOperation(d->Jp, MATOP_MULT_TRANSPOSE, (void (*)(void))NNODEMatMultTranspose_Jp));
    PetscCall(TSSetRHSJacobianP(o->integ.ts, d->Jp, NNODETSRHSJacobianP, l));
  }
  PetscCall(TSSetSolution(o->integ.ts, o->U));
  PetscCall(TSSetCostGradients(o->integ.ts, 1, &o->lambda, o->P ? &d->mu : NULL));
  if (!d->mubuf) PetscCall(PetscMalloc1(PetscMax(o->P, 1), &d->mubuf));
  PetscCall(TSSetUp(o->integ.ts));
  { /* the trajectory stores the solution and these stage Vecs per step */
    PetscInt ns;
    Vec     *Y;
    PetscCall(TSGetStages(o->integ.ts, &ns, &Y));
    d->nstagevecs = ns;
  }
  PetscCall(TSSetPreStep(o->integ.ts, NNODEPreStep));
  PetscCall(TSSetPostStep(o->integ.ts, NNODEPostStep));
  PetscFunctionReturn(0);
}

