/*
   Layer-parallel training of a neural-ODE block (-<block>_parallel mgrit): the block's N steps are solved
   by MGRIT (ts/mgrit*.c) over a "layer" communicator, each rank owning a contiguous chunk of steps, and
   its backward pass is the adjoint MGRIT in reversed time.

   Propagators (ts/ode/odeblock_mgritstep.c): one step of the block's explicit RK tableau (the ts
   scheme's) or of the discrete scheme's x + h f(x), coarse steps with m^l h, and their discrete
   adjoints, which TSAdjoint computes for the serial block (up to rounding), so an MGRIT solve iterated
   to a tight tolerance gives the serial block's output and gradients. Implicit integrators (beuler, cn),
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

static PetscErrorCode NNODEMGRITRegisterEvents(void)
{
  static PetscBool done = PETSC_FALSE;

  PetscFunctionBegin;
  if (done) PetscFunctionReturn(0);
  done = PETSC_TRUE;
  PetscCall(NNLogEventRegister("NNODEGradGather", NNLAYER_CLASSID, &NN_ODEGradGather));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the MGRIT object and its communicator */

static PetscErrorCode NNODEMGRITDestroyObject(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNMGRITDestroy(&d->mg));
  if (d->mgcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&d->mgcomm));
  if (d->mgparent != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_free(&d->mgparent));
  d->mgn = -1;
  PetscFunctionReturn(0);
}

/* the MGRIT solver over the layer communicator (or groups of -mgrit_ranks consecutive ranks of it); kept while
   that communicator stays the same, so its options and warm start survive the block's set-ups */
static PetscErrorCode NNODEMGRITGetObject(NNLayer l, PetscBool fromoptions)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d    = (NNODE_MGRIT *)o->schemedata;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  PetscMPIInt  size, rank, gsize = 0, p;
  const char  *pre  = NNODEPrefix(l);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(o->mgranks >= 0 && o->mgranks <= size && (!o->mgranks || size % o->mgranks == 0), comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%smgrit_ranks %" PetscInt_FMT " must divide the %d ranks of the layer communicator (0: all of them)", ((PetscObject)l)->name, pre, o->mgranks, size);
  p = o->mgranks ? (PetscMPIInt)o->mgranks : size;
  if (d->mg) {
    PetscMPIInt cmp;
    PetscCallMPI(MPI_Comm_compare(d->mgparent, comm, &cmp));
    PetscCallMPI(MPI_Comm_size(d->mgcomm, &gsize));
    if ((cmp == MPI_IDENT || cmp == MPI_CONGRUENT) && gsize == p) {
      if (fromoptions) PetscCall(NNMGRITSetFromOptions(d->mg));
      PetscFunctionReturn(0);
    }
    PetscCall(NNODEMGRITDestroyObject(l));
  }
  PetscCallMPI(MPI_Comm_dup(comm, &d->mgparent));
  PetscCallMPI(MPI_Comm_split(comm, rank / p, rank, &d->mgcomm));
  PetscCall(NNMGRITCreate(d->mgcomm, &d->mg));
  PetscCall(NNMGRITSetOptionsPrefix(d->mg, pre));
  PetscCall(NNMGRITSetStep(d->mg, NNODEMGRITStep, l));
  PetscCall(NNMGRITSetAdjointStep(d->mg, NNODEMGRITAdjointStep, l));
  PetscCall(NNMGRITSetFromOptions(d->mg));
  d->mgn = -1;
  PetscFunctionReturn(0);
}

/* the block's layer-parallel options, whatever the scheme (inside its options section) */
PetscErrorCode NNODESetFromOptions_MGRIT(NNLayer l, NNOptionItems PetscOptionsObject)
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
  PetscCheck(o->osevery >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%smgrit_one_shot_increase_every %" PetscInt_FMT " must be non-negative (0: never)", NNODEPrefix(l), o->osevery);
  PetscFunctionReturn(0);
}

/* the solver's options -<prefix>mgrit_*; a bad -mgrit_ranks is reported by the set up, outside the options block */
static PetscErrorCode NNODESetFromOptions_MGRITScheme(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscMPIInt  size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)l), &size));
  if (o->mgranks >= 0 && o->mgranks <= size && (!o->mgranks || size % o->mgranks == 0)) PetscCall(NNODEMGRITGetObject(l, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* at the block's set up: refuse what MGRIT does not support, make the solver, give it the time grid */
static PetscErrorCode NNODESetUp_MGRIT(NNLayer l)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d    = (NNODE_MGRIT *)o->schemedata;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  const char  *p    = NNODEPrefix(l), *name = ((PetscObject)l)->name;

  PetscFunctionBegin;
  PetscCall(NNODEMGRITRegisterEvents());
  PetscCheck(!o->nobs, comm, PETSC_ERR_SUP, "ODE block %s: -%sobservation_times are not supported with -%sparallel mgrit (the output must be u(T))", name, p, p);
  PetscCheck(!o->K, comm, PETSC_ERR_SUP, "ODE block %s: -%scheckpoints %" PetscInt_FMT " does not apply with -%sparallel mgrit: each rank stores the states of its own chunk of steps; remove the option", name, p, o->K, p);
  PetscCall(NNODEMGRITGetObject(l, PETSC_FALSE));
  PetscCall(NNMGRITSetTimeSpan(d->mg, 0.0, o->T, o->N));
  PetscFunctionReturn(0);
}

/* frees the work Vecs; the solver (its options, and the warm start while the batch size stays) is kept */
static PetscErrorCode NNODEReset_MGRIT(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNODEMGRITDestroyVecs(l));
  PetscCall(PetscFree(d->mggrad));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEDestroy_MGRIT(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNODEReset_MGRIT(l));
  PetscCall(NNODEMGRITDestroyObject(l));
  PetscCall(PetscFree(((NNLayer_ODE *)l->data)->schemedata));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODECreate_MGRIT(NNLayer l)
{
  NNODE_MGRIT *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->mgcomm = d->mgparent = MPI_COMM_NULL;
  d->mgn = d->mgnvec = d->mgnst = -1;
  ((NNLayer_ODE *)l->data)->schemedata = d;
  PetscFunctionReturn(0);
}

/* when the block has made its Vecs (and TS) for the activation layout: is the layout and integrator supported? */
static PetscErrorCode NNODELayout_MGRIT(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (o->scheme == NNODE_SCHEME_TS) PetscCall(NNODECreateTS(l)); /* configured now, so -help and views show it */
  PetscCheck(!o->dm, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%sparallel mgrit needs a sequential (dense) state, not a spatial (DMDA) one", ((PetscObject)l)->name, NNODEPrefix(l));
  PetscCall(NNODEMGRITTableau(l));
  PetscFunctionReturn(0);
}

/* the tableau, the work Vecs of a pass of n samples, and the solver's state layout */
static PetscErrorCode NNODEMGRITPrepare(NNLayer l, PetscInt n, Vec x)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;

  PetscFunctionBegin;
  PetscCall(NNODESetUp_MGRIT(l)); /* cheap when nothing changed; catches a block made layer-parallel after NNSetUp() */
  PetscCall(NNODELayout_MGRIT(l)); /* options may have changed the integrator since */
  PetscCall(NNODEPrepareVecs(l, n, x)); /* o->fld.F, o->fld.gx for n samples */
  if (d->mgnvec != n || d->mgnst != d->rks) {
    PetscCall(NNODEMGRITDestroyVecs(l));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * o->S, &d->mgu));
    PetscCall(VecDuplicate(d->mgu, &d->mgl));
    PetscCall(VecDuplicate(d->mgu, &d->mgl0));
    if (d->rks > 1) {
      PetscCall(VecDuplicate(d->mgu, &d->mgG));
      PetscCall(VecDuplicateVecs(d->mgu, d->rks, &d->mgY));
      PetscCall(VecDuplicateVecs(d->mgu, d->rks, &d->mgF));
      PetscCall(VecDuplicateVecs(d->mgu, d->rks, &d->mgZ));
    }
    d->mgnvec = n;
    d->mgnst  = d->rks;
  }
  if (d->mgn != n) { /* a new layout: the solver starts over (no warm start across batch sizes) */
    PetscCall(NNMGRITSetStateTemplate(d->mg, d->mgu));
    d->mgn = n;
  }
  if (!d->mggrad) PetscCall(PetscMalloc1(l->nparam + PetscMax(l->ncopies, 1) * o->P + 1, &d->mggrad));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- forward and backward */

static PetscErrorCode NNODEForward_MGRIT(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT   *d = (NNODE_MGRIT *)o->schemedata;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNODEMGRITPrepare(l, n, x));
  PetscCall(NNODECopyState(l, n, x, d->mgu));
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  if (l->training) {
    PetscInt ks, ke;
    PetscCall(NNODEMGRITCacheSetUp(l));
    if (d->mgcache) PetscCall(PetscArrayzero(d->mgactok, d->mgnact)); /* new states: the adjoint evaluates f anew */
    PetscCall(NNMGRITSolve(d->mg, d->mgu));
    PetscCall(NNMGRITGetFinalState(d->mg, d->mgu));
    PetscCall(NNMGRITGetOwnershipRange(d->mg, &ks, &ke));
    o->stats.nstored = ke - ks + 1 + (d->mgcache ? (ke - ks) * l->nchildren : 0); /* the own chunk's fine states (coarse levels on top) and f's activations */
  } else { /* inference: the fine steps in order on every rank */
    Vec cur = d->mgu, nxt = d->mgl, tmp;
    for (PetscInt k = 0; k < o->N; k++) {
      PetscCall(NNODEMGRITStep(l, 0, k, k * o->h, o->h, cur, nxt));
      tmp = cur;
      cur = nxt;
      nxt = tmp;
    }
    if (cur != d->mgu) PetscCall(VecCopy(cur, d->mgu));
    o->stats.nstored = 0;
  }
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  PetscCall(NNODEObserve(l, n, -1, d->mgu, y));
  o->recorded = l->training;
  PetscCall(PetscTime(&t1));
  o->stats.tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

/* the block's gradient slice from every rank's own steps: an all-gather (per-step) or an all-reduce (shared) */
static PetscErrorCode NNODEMGRITGatherGradient(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;
  NNMGRIT      mg = d->mg;
  PetscInt     P = o->P, ncp = PetscMax(l->ncopies, 1);
  PetscScalar *g = d->mggrad + l->nparam, *dst = l->dtheta + l->nparam;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_ODEGradGather, l, 0, 0, 0));
  if (o->params == NNODE_PARAMETERS_PER_STEP) {
    PetscMPIInt *cnt, *dsp;
    PetscCall(PetscMalloc2(mg->size, &cnt, mg->size, &dsp));
    for (PetscMPIInt r = 0; r < mg->size; r++) {
      PetscCall(PetscMPIIntCast((mg->range[r + 1] - mg->range[r]) * P, &cnt[r]));
      PetscCall(PetscMPIIntCast(mg->range[r] * P, &dsp[r]));
    }
    PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g, cnt, dsp, MPIU_SCALAR, d->mgcomm));
    PetscCall(PetscFree2(cnt, dsp));
  } else {
    PetscMPIInt m;
    PetscCall(PetscMPIIntCast(ncp * P, &m));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, m, MPIU_SCALAR, MPIU_SUM, d->mgcomm));
  }
  for (PetscInt i = 0; i < ncp * P; i++) dst[i] += g[i];
  PetscCall(PetscLogEventEnd(NN_ODEGradGather, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEBackward_MGRIT(NNLayer l, PetscInt n, Vec x, Vec dy, Vec dx)
{
  NNLayer_ODE   *o    = (NNLayer_ODE *)l->data;
  NNODE_MGRIT   *d    = (NNODE_MGRIT *)o->schemedata;
  PetscScalar   *save = l->dtheta;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNODEMGRITPrepare(l, n, x));
  PetscCall(VecZeroEntries(d->mgl));
  PetscCall(NNODEAddObservationGradient(l, n, -1, dy, d->mgl));
  /* this rank's steps add their parameter gradients into a zeroed copy of the block's slice */
  if (save) {
    PetscCall(PetscArrayzero(d->mggrad, l->nparam + PetscMax(l->ncopies, 1) * o->P));
    l->dtheta = d->mggrad;
  }
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(NNMGRITAdjointSolve(d->mg, d->mgl, dx ? d->mgl0 : NULL));
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  l->dtheta = save;
  if (save) PetscCall(NNODEMGRITGatherGradient(l));
  if (dx) PetscCall(NNODECopyState(l, n, d->mgl0, dx));
  /* one-shot schedule: more iterations as training goes on */
  d->ngrad++;
  if (d->mg->mode == NNMGRIT_ONE_SHOT && o->osevery > 0 && d->ngrad % o->osevery == 0 && d->mg->oneshot_it < o->osmax) {
    PetscCall(NNMGRITSetMode(d->mg, NNMGRIT_ONE_SHOT, d->mg->oneshot_it + 1));
    PetscCall(PetscInfo(l, "ODE block %s: one-shot MGRIT now takes %" PetscInt_FMT " iterations per solve (after %" PetscInt_FMT " gradients)\n", ((PetscObject)l)->name, d->mg->oneshot_it, d->ngrad));
  }
  PetscCall(PetscTime(&t1));
  o->stats.tadj += t1 - t0;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- view */

static PetscErrorCode NNODEView_MGRIT(NNLayer l, PetscViewer v)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  NNODE_MGRIT *d = (NNODE_MGRIT *)o->schemedata;
  PetscMPIInt  size, gsize;
  PetscBool    cache;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)l), &size));
  gsize = size;
  if (d->mgcomm != MPI_COMM_NULL) PetscCallMPI(MPI_Comm_size(d->mgcomm, &gsize));
  PetscCall(PetscViewerASCIIPrintf(v, "scheme: mgrit (-%sparallel mgrit), layer-parallel: MGRIT over %d rank%s%s; fine step: %s with h, coarse step on level l: the same with m^l h and the parameters at the C-point; parameter gradients of each rank's steps %s over the group\n", NNODEPrefix(l), gsize, gsize > 1 ? "s" : "", gsize < size ? " (one group per consecutive ranks of the layer communicator)" : "",
                                   o->scheme == NNODE_SCHEME_DISCRETE ? "x + h f(x)" : "one explicit RK step of the block's tableau",
                                   o->params == NNODE_PARAMETERS_PER_STEP ? "all-gathered" : "summed"));
  PetscCall(NNODEMGRITCacheAllowed(l, &cache));
  PetscCall(PetscViewerASCIIPrintf(v, "f's activations at the owned steps: %s\n", cache ? "cached during the adjoint solve (f runs forward once per step; -store_activations false: every adjoint step)" : "evaluated again by every adjoint step"));
  if (o->osevery > 0) PetscCall(PetscViewerASCIIPrintf(v, "one-shot schedule: one more iteration every %" PetscInt_FMT " gradients, up to %" PetscInt_FMT "\n", o->osevery, o->osmax));
  if (d->mg) {
    PetscCall(PetscViewerASCIIPushTab(v));
    PetscCall(NNMGRITView(d->mg, v));
    PetscCall(PetscViewerASCIIPopTab(v));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- public setters */

static PetscErrorCode NNLayerODESetParallel_ODE(NNLayer l, NNODEParallel p)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(p == NNODE_PARALLEL_NONE || p == NNODE_PARALLEL_MGRIT, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: unknown parallelism %d (-%sparallel): use none or mgrit", ((PetscObject)l)->name, (int)p, NNODEPrefix(l));
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
  PetscCall(NNODESchemeSelect(l));
  PetscCall(NNODESetUp_MGRIT(l));
  *mg = ((NNODE_MGRIT *)o->schemedata)->mg;
  PetscFunctionReturn(0);
}

/* composed on the block at creation (ts/ode/odeblock*.c calls this) */
PetscErrorCode NNODECompose_MGRIT(NNLayer l, PetscBool add)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetParallel_C", add ? NNLayerODESetParallel_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetMGRIT_C", add ? NNLayerODEGetMGRIT_ODE : NULL));
  PetscFunctionReturn(0);
}

const NNODESchemeOps NNODESchemeOps_MGRIT = {
  .name           = "mgrit",
  .create         = NNODECreate_MGRIT,
  .destroy        = NNODEDestroy_MGRIT,
  .setfromoptions = NNODESetFromOptions_MGRITScheme,
  .setup          = NNODESetUp_MGRIT,
  .layout         = NNODELayout_MGRIT,
  .reset          = NNODEReset_MGRIT,
  .forward        = NNODEForward_MGRIT,
  .backward       = NNODEBackward_MGRIT,
  .view           = NNODEView_MGRIT,
};
