/*
   Layer-parallel training of a neural-ODE block (-<block>_parallel mgrit): the block's N steps are solved
   by MGRIT (ts/mgrit*.c) over a "layer" communicator, each rank owning a contiguous chunk of steps, and
   its backward pass is the adjoint MGRIT in reversed time.

   Propagators. The fine propagator is one step of the block's integrator with h = T/N: the explicit RK
   tableau of the block's TS (-<block>_ts_rk_type; 1fe is a ResNet step) or, for the discrete scheme,
   x + h f(x, theta_k, t_k). The coarse propagator on level l is one step of the same tableau with
   m^l h and the parameters of the step at the C-point (injection; shared parameters are the same
   everywhere). The steps are written here with f's forward and backward passes (NNODEEvalField,
   NNODEBackwardField), not with TSSolve: the discrete adjoint of an explicit RK step is
     G_i = dt b_i lambda + dt sum_{j>i} a_ji Z_j,   Z_i = (df/du at Y_i)^T G_i,
     lambda_in = lambda + sum_i Z_i,   grad theta_k += sum_i (df/dtheta at Y_i)^T G_i,
   which is what TSAdjoint computes for the serial block (up to rounding), so an MGRIT solve iterated to
   a tight tolerance gives the serial block's output and gradients. Implicit integrators (beuler, cn),
   observation times, checkpointing and spatial (DMDA) states are refused with -<block>_parallel mgrit.

   Parameters and gradients. The network's parameter Vec stays replicated on every rank, so the optimizer
   (Adam, SGD, TAO) runs unchanged and redundantly. Each rank computes the parameter gradient of its own
   steps only (MGRIT's final adjoint sweep visits every owned step once, at its final lambda_{k+1}); the
   block's gradient slice is then completed over the layer communicator: per-step parameters by an
   all-gather of each rank's contiguous slice (exactly the serial numbers), shared parameters by an
   all-reduce. Layers before and after the block (the opening and closing dense layers) are computed
   redundantly on every rank, so the block's input and the loss gradient dy are the same everywhere.

   Inference (evaluation mode) runs the same fine steps sequentially on every rank (no communication):
   the exact forward map, whatever the training mode.
*/
#include <petnn/private/odeimpl.h>

const char *const NNODEParallelTypes[] = {"none", "mgrit", "NNODEParallel", "NNODE_PARALLEL_", NULL};

static PetscLogEvent NN_ODEGradGather;

static const char *NNODEMGPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

static PetscErrorCode NNODEMGRITRegisterEvents(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (done) PetscFunctionReturn(0);
  done = PETSC_TRUE;
  PetscCall(PetscLogEventRegister("NNODEGradGather", NNLAYER_CLASSID, &NN_ODEGradGather));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the propagators */

/* uout = one step of the block's explicit RK tableau of size dt from t with step k's parameters */
static PetscErrorCode NNODEMGRITStep(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec uin, Vec uout)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     s = o->rks;
  PetscScalar  w[NN_ODE_MAX_STAGES];

  PetscFunctionBegin;
  (void)level;
  o->fwdvalid = o->bwdvalid = PETSC_FALSE;
  if (s == 1) { /* forward Euler: the discrete scheme's arithmetic */
    PetscCall(NNODEEvalField(l, k, t + o->rkc[0] * dt, uin, o->F));
    PetscCall(VecWAXPY(uout, dt * o->rkb[0], o->F, uin));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < s; i++) {
    PetscCall(VecCopy(uin, o->mgY[i]));
    for (PetscInt j = 0; j < i; j++) w[j] = dt * o->rkA[i * s + j];
    if (i) PetscCall(VecMAXPY(o->mgY[i], i, w, o->mgF));
    PetscCall(NNODEEvalField(l, k, t + o->rkc[i] * dt, o->mgY[i], o->mgF[i]));
  }
  for (PetscInt j = 0; j < s; j++) w[j] = dt * o->rkb[j];
  PetscCall(VecCopy(uin, uout));
  PetscCall(VecMAXPY(uout, s, w, o->mgF));
  PetscFunctionReturn(0);
}

/* gx, gp = f's backward pass at (u_k, theta_k, t_k) with output gradient V, from the cached activations of step k
   (evaluated on the first visit of the adjoint solve) */
static PetscErrorCode NNODEMGRITBackwardCached(NNLayer l, PetscInt k, PetscReal t, Vec u, Vec V)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren, n = o->n, i = k - o->mgks;
  Vec         *cur = o->mgacts + i * nc;

  PetscFunctionBegin;
  (void)t; /* no time input: f does not depend on t here */
  if (!o->mgactok[i]) {
    PetscCall(NNODEPointChildren(l, k, NULL));
    for (PetscInt c = 0; c < nc; c++) PetscCall(NNLayerForward(l->children[c], n, c ? cur[c - 1] : u, cur[c]));
    o->mgactok[i] = PETSC_TRUE;
  }
  PetscCall(PetscArrayzero(o->gp, o->P));
  PetscCall(NNODEPointChildren(l, k, o->gp));
  for (PetscInt c = nc - 1; c >= 0; c--) PetscCall(NNLayerBackward(l->children[c], n, c ? cur[c - 1] : u, cur[c], c == nc - 1 ? V : o->f.dout[c], c ? o->f.dout[c - 1] : o->gx));
  PetscCall(NNODEPointChildren(l, k, NULL));
  o->fwdvalid = PETSC_FALSE; /* the children's last forward pass is no longer at the block's last point */
  PetscFunctionReturn(0);
}

/* lout = (dPhi/du)^T lin at u for the step above; with gradient, step k's parameter gradient += (dPhi/dtheta_k)^T lin */
static PetscErrorCode NNODEMGRITAdjointStep(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec u, Vec lin, Vec lout, PetscBool gradient)
{
  NNLayer      l = (NNLayer)ctx;
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     s = o->rks;
  PetscScalar  w[NN_ODE_MAX_STAGES];
  Vec          z[NN_ODE_MAX_STAGES];
  PetscBool    used[NN_ODE_MAX_STAGES];

  PetscFunctionBegin;
  (void)level;
  o->fwdvalid = o->bwdvalid = PETSC_FALSE;
  if (s == 1) { /* f runs forward at u again (layers keep what backward needs), or its activations are cached */
    if (o->mgcache && k >= o->mgks && k < o->mgks + o->mgnact) PetscCall(NNODEMGRITBackwardCached(l, k, t + o->rkc[0] * dt, u, lin));
    else PetscCall(NNODEBackwardField(l, k, t + o->rkc[0] * dt, u, lin));
    PetscCall(VecWAXPY(lout, dt * o->rkb[0], o->gx, lin));
    if (gradient) PetscCall(NNODEAddParameterGradient(l, k, dt * o->rkb[0], o->gp));
    PetscFunctionReturn(0);
  }
  /* the stage states again: only u_k is stored */
  for (PetscInt i = 0; i < s; i++) {
    PetscCall(VecCopy(u, o->mgY[i]));
    for (PetscInt j = 0; j < i; j++) w[j] = dt * o->rkA[i * s + j];
    if (i) PetscCall(VecMAXPY(o->mgY[i], i, w, o->mgF));
    if (i < s - 1) PetscCall(NNODEEvalField(l, k, t + o->rkc[i] * dt, o->mgY[i], o->mgF[i])); /* the last slope feeds no stage */
  }
  PetscCall(VecCopy(lin, lout));
  for (PetscInt i = s - 1; i >= 0; i--) {
    PetscInt  nz   = 0;
    PetscReal bcoef = dt * o->rkb[i];
    for (PetscInt j = i + 1; j < s; j++)
      if (used[j] && o->rkA[j * s + i] != 0) {
        w[nz]   = dt * o->rkA[j * s + i];
        z[nz++] = o->mgZ[j];
      }
    used[i] = (PetscBool)(bcoef != 0 || nz > 0);
    if (!used[i]) continue; /* a stage nothing depends on (3bs's FSAL stage) */
    PetscCall(VecAXPBY(o->mgG, bcoef, 0.0, lin));
    if (nz) PetscCall(VecMAXPY(o->mgG, nz, w, z));
    PetscCall(NNODEBackwardField(l, k, t + o->rkc[i] * dt, o->mgY[i], o->mgG));
    PetscCall(VecCopy(o->gx, o->mgZ[i]));
    PetscCall(VecAXPY(lout, 1.0, o->gx));
    if (gradient) PetscCall(NNODEAddParameterGradient(l, k, 1.0, o->gp));
  }
  PetscFunctionReturn(0);
}

/* the propagator's tableau: the block's TS (explicit RK only) or forward Euler for the discrete scheme */
static PetscErrorCode NNODEMGRITTableau(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  const char  *p = NNODEMGPrefix(l);

  PetscFunctionBegin;
  if (o->scheme == NNODE_SCHEME_DISCRETE) {
    o->rks    = 1;
    o->rkA[0] = 0;
    o->rkb[0] = 1;
    o->rkc[0] = 0;
    PetscFunctionReturn(0);
  }
  {
    PetscBool        isrk;
    PetscInt         s;
    const PetscReal *A, *b, *c;
    TSType           type;

    if (!o->ts) PetscCall(NNODECreateTS(l));
    PetscCall(PetscObjectTypeCompare((PetscObject)o->ts, TSRK, &isrk));
    PetscCall(TSGetType(o->ts, &type));
    PetscCheck(isrk, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%sparallel mgrit needs an explicit Runge-Kutta integrator (-%sts_type rk, e.g. -%sts_rk_type 1fe for a ResNet) or -%sscheme discrete, not -%sts_type %s", ((PetscObject)l)->name, p, p, p, p, p, type);
    PetscCall(TSRKGetTableau(o->ts, &s, &A, &b, &c, NULL, NULL, NULL, NULL));
    PetscCheck(s <= NN_ODE_MAX_STAGES, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: an RK tableau of %" PetscInt_FMT " stages is too long (at most %d)", ((PetscObject)l)->name, s, NN_ODE_MAX_STAGES);
    for (PetscInt i = 0; i < s; i++)
      for (PetscInt j = i; j < s; j++) PetscCheck(A[i * s + j] == 0, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%sparallel mgrit needs an explicit RK tableau", ((PetscObject)l)->name, p);
    o->rks = s;
    PetscCall(PetscArraycpy(o->rkA, A, s * s));
    PetscCall(PetscArraycpy(o->rkb, b, s));
    PetscCall(PetscArraycpy(o->rkc, c, s));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the MGRIT object and its communicator */

static PetscErrorCode NNODEMGRITDestroyObject(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNMGRITDestroy(&o->mg));
  if (o->mgcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&o->mgcomm));
  if (o->mgparent != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&o->mgparent));
  o->mgn = -1;
  PetscFunctionReturn(0);
}

/* the MGRIT solver over the layer communicator (or groups of -mgrit_ranks consecutive ranks of it); kept while
   that communicator stays the same, so its options and warm start survive the block's set-ups */
static PetscErrorCode NNODEMGRITGetObject(NNLayer l, PetscBool fromoptions)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  PetscMPIInt  size, rank, gsize = 0, p;
  const char  *pre  = NNODEMGPrefix(l);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(o->mgranks >= 0 && o->mgranks <= size && (!o->mgranks || size % o->mgranks == 0), comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%smgrit_ranks %" PetscInt_FMT " must divide the %d ranks of the layer communicator (0: all of them)", ((PetscObject)l)->name, pre, o->mgranks, size);
  p = o->mgranks ? (PetscMPIInt)o->mgranks : size;
  if (o->mg) {
    PetscMPIInt cmp;
    PetscCallMPI(MPI_Comm_compare(o->mgparent, comm, &cmp));
    PetscCallMPI(MPI_Comm_size(o->mgcomm, &gsize));
    if ((cmp == MPI_IDENT || cmp == MPI_CONGRUENT) && gsize == p) {
      if (fromoptions) PetscCall(NNMGRITSetFromOptions(o->mg));
      PetscFunctionReturn(0);
    }
    PetscCall(NNODEMGRITDestroyObject(l));
  }
  PetscCallMPI(MPI_Comm_dup(comm, &o->mgparent));
  PetscCallMPI(MPI_Comm_split(comm, rank / p, rank, &o->mgcomm));
  PetscCall(NNMGRITCreate(o->mgcomm, &o->mg));
  PetscCall(NNMGRITSetOptionsPrefix(o->mg, pre));
  PetscCall(NNMGRITSetStep(o->mg, NNODEMGRITStep, l));
  PetscCall(NNMGRITSetAdjointStep(o->mg, NNODEMGRITAdjointStep, l));
  PetscCall(NNMGRITSetFromOptions(o->mg));
  o->mgn = -1;
  PetscFunctionReturn(0);
}

/* the block's options (inside its options section) */
PetscErrorCode NNODESetFromOptions_MGRIT(NNLayer l, PetscOptionItems *PetscOptionsObject)
{
  NNLayer_ODE  *o   = (NNLayer_ODE *)l->data;
  NNODEParallel par = o->parallel;
  PetscBool     flg;

  PetscFunctionBegin;
  PetscCall(PetscOptionsEnum("-parallel", "Layer parallelism: none, or mgrit (MGRIT over the steps, each rank of the layer communicator owning a chunk)", "NNLayerODESetParallel", NNODEParallelTypes, (PetscEnum)par, (PetscEnum *)&par, &flg));
  if (flg) PetscCall(NNLayerODESetParallel(l, par));
  PetscCall(PetscOptionsInt("-mgrit_ranks", "Ranks per MGRIT group (consecutive ranks of the layer communicator; 0: all)", "NNLAYERODE", o->mgranks, &o->mgranks, NULL));
  PetscCall(PetscOptionsInt("-mgrit_one_shot_increase_every", "One-shot mode: one more MGRIT iteration every this many gradients (0: never)", "NNLAYERODE", o->osevery, &o->osevery, NULL));
  PetscCall(PetscOptionsInt("-mgrit_one_shot_max_it", "One-shot mode: the most iterations the schedule raises the count to", "NNLAYERODE", o->osmax, &o->osmax, NULL));
  PetscCheck(o->osevery >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%smgrit_one_shot_increase_every %" PetscInt_FMT " must be non-negative (0: never)", NNODEMGPrefix(l), o->osevery);
  if (o->parallel == NNODE_PARALLEL_MGRIT) { /* -<prefix>mgrit_*; a bad -mgrit_ranks is reported by the set up, outside the options block */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)l), &size));
    if (o->mgranks >= 0 && o->mgranks <= size && (!o->mgranks || size % o->mgranks == 0)) PetscCall(NNODEMGRITGetObject(l, PETSC_TRUE));
  }
  PetscFunctionReturn(0);
}

/* at the block's set up: refuse what MGRIT does not support, make the solver, give it the time grid */
PetscErrorCode NNODESetUp_MGRIT(NNLayer l)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  const char  *p    = NNODEMGPrefix(l), *name = ((PetscObject)l)->name;

  PetscFunctionBegin;
  if (o->parallel != NNODE_PARALLEL_MGRIT) {
    PetscCall(NNODEMGRITDestroyObject(l));
    PetscFunctionReturn(0);
  }
  PetscCall(NNODEMGRITRegisterEvents());
  PetscCheck(!o->nobs, comm, PETSC_ERR_SUP, "ODE block %s: -%sobservation_times are not supported with -%sparallel mgrit (the output must be u(T))", name, p, p);
  PetscCheck(!o->K, comm, PETSC_ERR_SUP, "ODE block %s: -%scheckpoints %" PetscInt_FMT " does not apply with -%sparallel mgrit: each rank stores the states of its own chunk of steps; remove the option", name, p, o->K, p);
  PetscCall(NNODEMGRITGetObject(l, PETSC_FALSE));
  PetscCall(NNMGRITSetTimeSpan(o->mg, 0.0, o->T, o->N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMGRITDestroyVecs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&o->mgu));
  PetscCall(VecDestroy(&o->mgl));
  PetscCall(VecDestroy(&o->mgl0));
  PetscCall(VecDestroy(&o->mgG));
  if (o->mgY) PetscCall(VecDestroyVecs(o->mgnst, &o->mgY));
  if (o->mgF) PetscCall(VecDestroyVecs(o->mgnst, &o->mgF));
  if (o->mgZ) PetscCall(VecDestroyVecs(o->mgnst, &o->mgZ));
  o->mgnvec = o->mgnst = -1;
  if (o->mgacts) {
    for (PetscInt i = 0; i < o->mgnact * l->nchildren; i++) PetscCall(VecDestroy(&o->mgacts[i]));
    PetscCall(PetscFree2(o->mgacts, o->mgactok));
  }
  o->mgnact = 0;
  PetscFunctionReturn(0);
}

/* can f's activations be cached per step? forward Euler, no time input, and layers whose backward pass needs only
   their input, output and parameters (dense, pointwise); -<prefix>store_activations false turns it off */
static PetscErrorCode NNODEMGRITCacheAllowed(NNLayer l, PetscBool *ok)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren;

  PetscFunctionBegin;
  *ok = (PetscBool)(o->storeacts && o->rks == 1 && !o->timeinput && o->f.nvec == nc);
  for (PetscInt c = 0; c < nc && *ok; c++) {
    PetscBool pointwise;
    PetscCall(PetscObjectTypeCompareAny((PetscObject)l->children[c], &pointwise, NNLAYERDENSE, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, ""));
    *ok = (PetscBool)(pointwise && !l->children[c]->nchildren);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEMGRITCacheSetUp(NNLayer l)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  PetscInt     nc = l->nchildren, ks, ke;

  PetscFunctionBegin;
  PetscCall(NNODEMGRITCacheAllowed(l, &o->mgcache));
  if (!o->mgcache) PetscFunctionReturn(0);
  PetscCall(NNMGRITGetOwnershipRange(o->mg, &ks, &ke));
  if (o->mgacts && (o->mgks != ks || o->mgnact != ke - ks)) {
    for (PetscInt i = 0; i < o->mgnact * nc; i++) PetscCall(VecDestroy(&o->mgacts[i]));
    PetscCall(PetscFree2(o->mgacts, o->mgactok));
  }
  if (!o->mgacts) {
    PetscCall(PetscCalloc2((ke - ks) * nc + 1, &o->mgacts, ke - ks + 1, &o->mgactok));
    for (PetscInt i = 0; i < ke - ks; i++)
      for (PetscInt c = 0; c < nc; c++) PetscCall(VecDuplicate(o->f.out[c], &o->mgacts[i * nc + c]));
    o->mgks   = ks;
    o->mgnact = ke - ks;
  }
  PetscFunctionReturn(0);
}

/* frees the work Vecs; the solver (its options, and the warm start while the batch size stays) is kept */
PetscErrorCode NNODEReset_MGRIT(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEMGRITDestroyVecs(l));
  PetscCall(PetscFree(o->mggrad));
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEDestroy_MGRIT(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNODEReset_MGRIT(l));
  PetscCall(NNODEMGRITDestroyObject(l));
  PetscFunctionReturn(0);
}

/* when the block has made its Vecs (and TS) for the activation layout: is the layout and integrator supported? */
PetscErrorCode NNODECheck_MGRIT(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (o->parallel != NNODE_PARALLEL_MGRIT) PetscFunctionReturn(0);
  PetscCheck(!o->dm, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%sparallel mgrit needs a sequential (dense) state, not a spatial (DMDA) one", ((PetscObject)l)->name, NNODEMGPrefix(l));
  PetscCall(NNODEMGRITTableau(l));
  PetscFunctionReturn(0);
}

/* the tableau, the work Vecs of a pass of n samples, and the solver's state layout */
static PetscErrorCode NNODEMGRITPrepare(NNLayer l, PetscInt n, Vec x)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODESetUp_MGRIT(l)); /* cheap when nothing changed; catches a block made layer-parallel after NNSetUp() */
  PetscCall(NNODECheck_MGRIT(l)); /* options may have changed the integrator since */
  PetscCall(NNODEPrepareVecs(l, n, x, PETSC_FALSE)); /* o->F, o->gx for n samples */
  if (o->mgnvec != n || o->mgnst != o->rks) {
    PetscCall(NNODEMGRITDestroyVecs(l));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * o->S, &o->mgu));
    PetscCall(VecDuplicate(o->mgu, &o->mgl));
    PetscCall(VecDuplicate(o->mgu, &o->mgl0));
    if (o->rks > 1) {
      PetscCall(VecDuplicate(o->mgu, &o->mgG));
      PetscCall(VecDuplicateVecs(o->mgu, o->rks, &o->mgY));
      PetscCall(VecDuplicateVecs(o->mgu, o->rks, &o->mgF));
      PetscCall(VecDuplicateVecs(o->mgu, o->rks, &o->mgZ));
    }
    o->mgnvec = n;
    o->mgnst  = o->rks;
  }
  if (o->mgn != n) { /* a new layout: the solver starts over (no warm start across batch sizes) */
    PetscCall(NNMGRITSetStateTemplate(o->mg, o->mgu));
    o->mgn = n;
  }
  if (!o->mggrad) PetscCall(PetscMalloc1(l->nparam + PetscMax(l->ncopies, 1) * o->P + 1, &o->mggrad));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- forward and backward */

PetscErrorCode NNODEForwardMGRIT(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNODEMGRITPrepare(l, n, x));
  PetscCall(NNODECopyIn(l, n, x, o->mgu));
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  if (l->training) {
    PetscInt ks, ke;
    PetscCall(NNODEMGRITCacheSetUp(l));
    if (o->mgcache) PetscCall(PetscArrayzero(o->mgactok, o->mgnact)); /* new states: the adjoint evaluates f anew */
    PetscCall(NNMGRITSolve(o->mg, o->mgu));
    PetscCall(NNMGRITGetFinalState(o->mg, o->mgu));
    PetscCall(NNMGRITGetOwnershipRange(o->mg, &ks, &ke));
    o->nstored = ke - ks + 1 + (o->mgcache ? (ke - ks) * l->nchildren : 0); /* the own chunk's fine states (coarse levels on top) and f's activations */
  } else { /* inference: the fine steps in order on every rank */
    Vec cur = o->mgu, nxt = o->mgl, tmp;
    for (PetscInt k = 0; k < o->N; k++) {
      PetscCall(NNODEMGRITStep(l, 0, k, k * o->h, o->h, cur, nxt));
      tmp = cur;
      cur = nxt;
      nxt = tmp;
    }
    if (cur != o->mgu) PetscCall(VecCopy(cur, o->mgu));
    o->nstored = 0;
  }
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  PetscCall(NNODEObserve(l, n, -1, o->mgu, y));
  o->recorded = l->training;
  PetscCall(PetscTime(&t1));
  o->tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

/* the block's gradient slice from every rank's own steps: an all-gather (per-step) or an all-reduce (shared) */
static PetscErrorCode NNODEMGRITGatherGradient(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNMGRIT      mg = o->mg;
  PetscInt     P = o->P, ncp = PetscMax(l->ncopies, 1);
  PetscScalar *g = o->mggrad + l->nparam, *d = l->dtheta + l->nparam;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_ODEGradGather, l, 0, 0, 0));
  if (o->params == NNODE_PARAMETERS_PER_STEP) {
    PetscMPIInt *cnt, *dsp;
    PetscCall(PetscMalloc2(mg->size, &cnt, mg->size, &dsp));
    for (PetscMPIInt r = 0; r < mg->size; r++) {
      PetscCall(PetscMPIIntCast((mg->range[r + 1] - mg->range[r]) * P, &cnt[r]));
      PetscCall(PetscMPIIntCast(mg->range[r] * P, &dsp[r]));
    }
    PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, cnt, dsp, MPIU_SCALAR, o->mgcomm));
    PetscCall(PetscFree2(cnt, dsp));
  } else {
    PetscMPIInt m;
    PetscCall(PetscMPIIntCast(ncp * P, &m));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, m, MPIU_SCALAR, MPIU_SUM, o->mgcomm));
  }
  for (PetscInt i = 0; i < ncp * P; i++) d[i] += g[i];
  PetscCall(PetscLogEventEnd(NN_ODEGradGather, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode NNODEBackwardMGRIT(NNLayer l, PetscInt n, Vec x, Vec dy, Vec dx)
{
  NNLayer_ODE   *o    = (NNLayer_ODE *)l->data;
  PetscScalar   *save = l->dtheta;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNODEMGRITPrepare(l, n, x));
  PetscCall(VecZeroEntries(o->mgl));
  PetscCall(NNODEAddObservationGradient(l, n, -1, dy, o->mgl));
  /* this rank's steps add their parameter gradients into a zeroed copy of the block's slice */
  if (save) {
    PetscCall(PetscArrayzero(o->mggrad, l->nparam + PetscMax(l->ncopies, 1) * o->P));
    l->dtheta = o->mggrad;
  }
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(NNMGRITAdjointSolve(o->mg, o->mgl, dx ? o->mgl0 : NULL));
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  l->dtheta = save;
  if (save) PetscCall(NNODEMGRITGatherGradient(l));
  if (dx) {
    const PetscScalar *la;
    PetscScalar       *da;
    PetscCall(VecGetArrayRead(o->mgl0, &la));
    PetscCall(VecGetArrayWrite(dx, &da));
    PetscCall(PetscArraycpy(da, la, n * o->S));
    PetscCall(VecRestoreArrayWrite(dx, &da));
    PetscCall(VecRestoreArrayRead(o->mgl0, &la));
  }
  /* one-shot schedule: more iterations as training goes on */
  o->ngrad++;
  if (o->mg->mode == NNMGRIT_ONE_SHOT && o->osevery > 0 && o->ngrad % o->osevery == 0 && o->mg->oneshot_it < o->osmax) {
    PetscCall(NNMGRITSetMode(o->mg, NNMGRIT_ONE_SHOT, o->mg->oneshot_it + 1));
    PetscCall(PetscInfo(l, "ODE block %s: one-shot MGRIT now takes %" PetscInt_FMT " iterations per solve (after %" PetscInt_FMT " gradients)\n", ((PetscObject)l)->name, o->mg->oneshot_it, o->ngrad));
  }
  PetscCall(PetscTime(&t1));
  o->tadj += t1 - t0;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- view */

PetscErrorCode NNODEView_MGRIT(NNLayer l, PetscViewer v)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscMPIInt  size, gsize;
  PetscBool    cache;

  PetscFunctionBegin;
  if (o->parallel != NNODE_PARALLEL_MGRIT) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)l), &size));
  gsize = size;
  if (o->mgcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_size(o->mgcomm, &gsize));
  PetscCall(PetscViewerASCIIPrintf(v, "layer-parallel: MGRIT over %d rank%s%s; fine step: %s with h, coarse step on level l: the same with m^l h and the parameters at the C-point; parameter gradients of each rank's steps %s over the group\n", gsize, gsize > 1 ? "s" : "", gsize < size ? " (one group per consecutive ranks of the layer communicator)" : "",
                                   o->scheme == NNODE_SCHEME_DISCRETE ? "x + h f(x)" : "one explicit RK step of the block's tableau",
                                   o->params == NNODE_PARAMETERS_PER_STEP ? "all-gathered" : "summed"));
  PetscCall(NNODEMGRITCacheAllowed(l, &cache));
  PetscCall(PetscViewerASCIIPrintf(v, "f's activations at the owned steps: %s\n", cache ? "cached during the adjoint solve (f runs forward once per step; -store_activations false: every adjoint step)" : "evaluated again by every adjoint step"));
  if (o->osevery > 0) PetscCall(PetscViewerASCIIPrintf(v, "one-shot schedule: one more iteration every %" PetscInt_FMT " gradients, up to %" PetscInt_FMT "\n", o->osevery, o->osmax));
  if (o->mg) {
    PetscCall(PetscViewerASCIIPushTab(v));
    PetscCall(NNMGRITView(o->mg, v));
    PetscCall(PetscViewerASCIIPopTab(v));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- public setters */

static PetscErrorCode NNLayerODESetParallel_ODE(NNLayer l, NNODEParallel p)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(p == NNODE_PARALLEL_NONE || p == NNODE_PARALLEL_MGRIT, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: unknown parallelism %d (-%sparallel): use none or mgrit", ((PetscObject)l)->name, (int)p, NNODEMGPrefix(l));
  if (p != o->parallel) l->setupcalled = PETSC_FALSE;
  o->parallel = p;
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetMGRIT_ODE(NNLayer l, NNMGRIT *mg)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  *mg = NULL;
  if (o->parallel != NNODE_PARALLEL_MGRIT) PetscFunctionReturn(0);
  PetscCall(NNODESetUp_MGRIT(l));
  *mg = o->mg;
  PetscFunctionReturn(0);
}

/* composed on the block at creation (ts/ode/odeblock*.c calls this) */
PetscErrorCode NNODECompose_MGRIT(NNLayer l, PetscBool add)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (add) {
    o->mgcomm = o->mgparent = MPI_COMM_NULL;
    o->mgn = o->mgnvec = o->mgnst = -1;
    o->osmax                    = 8;
  }
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetParallel_C", add ? NNLayerODESetParallel_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetMGRIT_C", add ? NNLayerODEGetMGRIT_ODE : NULL));
  PetscFunctionReturn(0);
}
