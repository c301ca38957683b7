/*
   Neural-ODE block: the layer type "ode" integrates du/dt = f(u, theta(t), t) on [0, T], where the
   vector field f is the block's inner layers run in order (as a residual block runs its children; the
   container code is shared: layers/container/container.c).

   The block's input is u(0); its output is u(T), or with observation times the states at those
   times concatenated ([n][nobs*S] per batch). f's output must have the shape (and, on a DMDA, the
   layout) of its input. The schemes, behind the NNODESchemeOps table (include/petnn/private/odeimpl.h),
   each with its own data:
     ts        forward by TSSolve (ts/ode/odeblock_ts.c), backward by TSAdjointSolve with MATSHELL
               Jacobians whose transposed products are f's hand-written backward passes: exact
               gradients of the discrete forward map (PNODE's discrete adjoint);
     discrete  the residual stack x_{k+1} = x_k + h f(x_k, theta_k, t_k) with the children's
               forward and backward passes and no TS (ts/ode/odeblock_discrete.c). With rk 1fe both give
               the same numbers;
     mgrit     with -<block>_parallel mgrit: MGRIT over the steps, with one step of the ts scheme's RK
               tableau or of the discrete scheme as propagator (ts/ode/odeblock_mgrit.c).
   Fixed steps h = T/N; parameters shared over time or one set per step (a ResNet written as an
   ODE): the block's slice then holds N copies of f's parameters, step-major, named
   "<block>.<k>.<layer>.<tensor>" in checkpoints (a torch ModuleList of N copies), which the generic
   walks of src/nn/interface/nn.c handle through NNLayer.ncopies.

   This file: the layer type (options, set up, f's Vecs, the passes handed to the scheme, views).
   f's evaluation and the helpers the schemes share: odeblock_field.c; the public setters: odeblock_api.c.
*/
#include <petnn/private/odeimpl.h>

const char *const NNODEParametersTypes[] = {"shared", "per_step", "NNODEParameters", "NNODE_PARAMETERS_", NULL};
const char *const NNODESchemes[]         = {"ts", "discrete", "NNODEScheme", "NNODE_SCHEME_", NULL};

/* ---------------------------------------------------------------- the scheme */

/* the scheme in use follows -scheme and -parallel (set any time): a change destroys the old scheme's data */
PetscErrorCode NNODESchemeSelect(NNLayer l)
{
  NNLayer_ODE          *o    = (NNLayer_ODE *)l->data;
  const NNODESchemeOps *want = o->parallel == NNODE_PARALLEL_MGRIT ? &NNODESchemeOps_MGRIT : (o->scheme == NNODE_SCHEME_TS ? &NNODESchemeOps_TS : &NNODESchemeOps_Discrete);

  PetscFunctionBegin;
  if (o->ops != want) {
    if (o->ops) PetscCall((*o->ops->destroy)(l));
    o->ops = want;
    PetscCall((*o->ops->create)(l));
  }
  PetscCall(NNODESingleSelect(l)); /* float passes for this scheme and integrator? */
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- children */

static PetscErrorCode NNLayerODEAddLayer_ODE(NNLayer l, NNLayerType type, const char name[], NNLayer *inner)
{
  PetscFunctionBegin;
  PetscCall(NNLayerContainerAddLayer(l, NN_ODE_KIND, type, name, inner));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- options */

static PetscErrorCode NNLayerSetFromOptions_ODE(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     N, Nts, nt = 64;
  PetscReal    T, Tts, t[64];
  PetscBool    flg, flgts;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Neural ODE block options");
  PetscCall(NNLayerContainerSetFromOptions(l, NN_ODE_KIND, "Comma-separated names of the layers of the vector field f, each configured by -<name>_type ...", "NNLayerODEAddLayer", PetscOptionsObject));
  /* the TS's own options that fix the time grid are aliases (the TS itself is made at set up, for the activation layout) */
  PetscCall(PetscOptionsGetReal(((PetscObject)l)->options, ((PetscObject)l)->prefix, "-ts_max_time", &Tts, &flgts));
  if (flgts) PetscCall(NNLayerODESetTime(l, Tts));
  T = o->T;
  PetscCall(PetscOptionsReal("-time", "Final time T of the integration on [0,T]; -<prefix>ts_max_time sets it too", "NNLayerODESetTime", T, &T, &flg));
  PetscCheck(!flg || !flgts || T == Tts, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_INCOMP, "ODE block %s: -%stime %g and -%sts_max_time %g disagree; give one", ((PetscObject)l)->name, NNODEPrefix(l), (double)T, NNODEPrefix(l), (double)Tts);
  if (flg) PetscCall(NNLayerODESetTime(l, T));
  PetscCall(PetscOptionsGetInt(((PetscObject)l)->options, ((PetscObject)l)->prefix, "-ts_max_steps", &Nts, &flgts));
  if (flgts) PetscCall(NNLayerODESetSteps(l, Nts));
  N = o->N;
  PetscCall(PetscOptionsInt("-steps", "Number of fixed time steps N (h = T/N); -<prefix>ts_max_steps sets it too", "NNLayerODESetSteps", N, &N, &flg));
  PetscCheck(!flg || !flgts || N == Nts, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_INCOMP, "ODE block %s: -%ssteps %" PetscInt_FMT " and -%sts_max_steps %" PetscInt_FMT " disagree; give one", ((PetscObject)l)->name, NNODEPrefix(l), N, NNODEPrefix(l), Nts);
  if (flg) PetscCall(NNLayerODESetSteps(l, N));
  PetscCall(PetscOptionsEnum("-parameters", "Parameters of f shared over time or one set per time step", "NNLayerODESetParameters", NNODEParametersTypes, (PetscEnum)o->params, (PetscEnum *)&o->params, &flg));
  if (flg) l->setupcalled = PETSC_FALSE;
  PetscCall(PetscOptionsEnum("-scheme", "ts: TSSolve/TSAdjointSolve; discrete: the residual stack x + h f(x) with hand-written passes", "NNLayerODESetScheme", NNODESchemes, (PetscEnum)o->scheme, (PetscEnum *)&o->scheme, NULL));
  PetscCall(PetscOptionsInt("-checkpoints", "States stored for the backward pass (segment boundaries); 0 stores every step", "NNLayerODESetCheckpoints", o->K, &o->K, NULL));
  PetscCall(PetscOptionsBool("-store_activations", "Keep f's activations at every RK stage so the adjoint need not evaluate f again (when f's layers allow it)", "NNLAYERODE", o->storeacts, &o->storeacts, NULL));
  PetscCheck(o->K >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "-%scheckpoints %" PetscInt_FMT " must be 0 (store every step) or positive", NNODEPrefix(l), o->K);
  PetscCall(PetscOptionsBool("-time_input", "Give f the time t as an extra input feature", "NNLayerODESetTimeInput", o->timeinput, &o->timeinput, &flg));
  if (flg) l->setupcalled = PETSC_FALSE;
  PetscCall(PetscOptionsRealArray("-observation_times", "Output the states at these times (multiples of h), concatenated: a trajectory loss", "NNLayerODESetObservationTimes", t, &nt, &flg));
  if (flg) PetscCall(NNLayerODESetObservationTimes(l, nt, t));
  PetscCall(NNODESetFromOptions_MGRIT(l, PetscOptionsObject)); /* -parallel, -mgrit_* */
  PetscCall(NNODESetFromOptions_Spectrum(l, PetscOptionsObject)); /* -spectrum_*, -stability_check */
  PetscCall(NNODESchemeSelect(l));
  if (o->ops->setfromoptions) PetscCall((*o->ops->setfromoptions)(l));
  PetscOptionsHeadEnd();
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetFromOptions(l->children[c]));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- set up */

static PetscInt NNODEBufferSize(NNLayer l)
{
  PetscInt b = 0;

  for (PetscInt c = 0; c < l->nchildren; c++) b += NNODEBufferSize(l->children[c]);
  return l->nbuf + PetscMax(l->ncopies, 1) * b;
}

/* f is evaluated several times per step and again by the adjoint: it must be deterministic */
static PetscErrorCode NNODECheckDeterministic(NNLayer l, NNLayer ch)
{
  PetscBool drop;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)ch, NNLAYERDROPOUT, &drop));
  PetscCheck(!drop, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: layer %s of its vector field is a dropout layer; f must be deterministic (TS evaluates it several times per step and the adjoint evaluates it again), so put dropout outside the block", ((PetscObject)l)->name, ((PetscObject)ch)->name);
  for (PetscInt c = 0; c < ch->nchildren; c++) PetscCall(NNODECheckDeterministic(l, ch->children[c]));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEDestroyVecs(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODESingleReset(l));
  PetscCall(NNODEDeviceReset(l));
  PetscCall(NNLayerContainerDestroyVecs(&o->f));
  PetscCall(PetscFree(o->fld.cur));
  PetscCall(VecDestroy(&o->fld.fin));
  PetscCall(VecDestroy(&o->fld.dfin));
  PetscCall(DMDestroy(&o->dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_ODE(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEDestroyTS(l));
  if (o->ops && o->ops->reset) PetscCall((*o->ops->reset)(l));
  PetscCall(NNODEDestroyStateVecs(l));
  PetscCall(NNODEDestroyVecs(l));
  PetscCall(PetscFree(o->fld.gp));
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_ODE(NNLayer l)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  NNShape      s, fin;
  NNLayer      last;
  PetscInt     np;

  PetscFunctionBegin;
  PetscCall(NNODESpectrumCheckOptions(l)); /* -stability_check */
  PetscCheck(l->nchildren > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "ODE block %s has no vector field: give -%slayers name1,name2,... or call NNLayerODEAddLayer()", ((PetscObject)l)->name, NNODEPrefix(l));
  PetscCheck(o->T > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%stime %g must be positive", ((PetscObject)l)->name, NNODEPrefix(l), (double)o->T);
  PetscCheck(o->N > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%ssteps %" PetscInt_FMT " must be positive", ((PetscObject)l)->name, NNODEPrefix(l), o->N);
  o->h    = o->T / o->N;
  o->S    = NNShapeSize(&l->inshape);
  o->Sin  = o->S + (o->timeinput ? 1 : 0);
  o->kend = o->N;
  /* observation times: multiples of h in [0, T], increasing */
  PetscCall(PetscFree(o->kobs));
  if (o->nobs) {
    PetscCall(PetscMalloc1(o->nobs, &o->kobs));
    for (PetscInt j = 0; j < o->nobs; j++) {
      PetscReal r = o->tobs[j] / o->h;
      o->kobs[j]  = (PetscInt)PetscFloorReal(r + 0.5);
      PetscCheck(PetscAbsReal(r - o->kobs[j]) <= 1e-8 * PetscMax(1.0, PetscAbsReal(r)), comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: observation time %g is not a multiple of the step h = T/N = %g; choose times k*h or change -%ssteps", ((PetscObject)l)->name, (double)o->tobs[j], (double)o->h, NNODEPrefix(l));
      PetscCheck(o->kobs[j] >= 0 && o->kobs[j] <= o->N, comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: observation time %g lies outside [0, T = %g]", ((PetscObject)l)->name, (double)o->tobs[j], (double)o->T);
      PetscCheck(!j || o->kobs[j] > o->kobs[j - 1], comm, PETSC_ERR_ARG_WRONG, "ODE block %s: observation times must increase (%g after %g)", ((PetscObject)l)->name, (double)o->tobs[j], (double)o->tobs[j - 1]);
    }
    o->kend = o->kobs[o->nobs - 1];
  }
  /* f: the children in order, input (u[, t]) -> output of u's shape */
  s = l->inshape;
  if (o->timeinput) {
    PetscCheck(l->inshape.ndim == 1, comm, PETSC_ERR_SUP, "ODE block %s: -%stime_input needs 1-d (feature) states, not shape of %" PetscInt_FMT " dimensions; flatten first", ((PetscObject)l)->name, NNODEPrefix(l), l->inshape.ndim);
    s.dim[0] = o->Sin;
  }
  fin = s;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNODECheckDeterministic(l, l->children[c]));
  PetscCall(NNLayerContainerSetUpChildren(l, &s));
  last = l->children[l->nchildren - 1];
  if (!NNLayerContainerSameShape(&s, &l->inshape)) {
    char in[64], out[64], fi[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(in), in));
    PetscCall(NNShapeToString(&s, sizeof(out), out));
    PetscCall(NNShapeToString(&fin, sizeof(fi), fi));
    SETERRQ(comm, PETSC_ERR_ARG_SIZ, "ODE block %s: its vector field f maps shape %s to %s (last layer %s, %s), but du/dt = f(u) needs f's output to have the state's shape %s", ((PetscObject)l)->name, fi, out, ((PetscObject)last)->name, ((PetscObject)last)->type_name, in);
  }
  /* one copy of f's parameters and buffers; per-step parameters repeat it N times */
  PetscCall(PetscFree2(o->cpoff, o->cboff));
  PetscCall(PetscMalloc2(l->nchildren, &o->cpoff, l->nchildren, &o->cboff));
  o->P = o->B = 0;
  for (PetscInt c = 0; c < l->nchildren; c++) { /* laid out as NNLayout() does: child after child */
    o->cpoff[c] = o->P;
    o->cboff[c] = o->B;
    PetscCall(NNLayerGetNumParameters(l->children[c], &np));
    o->P += np;
    o->B += NNODEBufferSize(l->children[c]);
  }
  l->ncopies = o->params == NNODE_PARAMETERS_PER_STEP ? o->N : 1;
  PetscCall(PetscFree(o->fld.gp));
  PetscCall(PetscCalloc1(PetscMax(o->P, 1), &o->fld.gp));
  /* the output: u(T), or the observations stacked in front of the state's shape */
  l->outshape = l->inshape;
  if (o->nobs) {
    PetscCheck(l->inshape.ndim < NN_MAX_DIM, comm, PETSC_ERR_SUP, "ODE block %s: observation times add a dimension; states of %" PetscInt_FMT " dimensions are too many", ((PetscObject)l)->name, l->inshape.ndim);
    l->outshape.ndim   = l->inshape.ndim + 1;
    l->outshape.dim[0] = o->nobs;
    for (PetscInt i = 0; i < l->inshape.ndim; i++) l->outshape.dim[i + 1] = l->inshape.dim[i];
  }
  PetscCall(NNODESchemeSelect(l));
  if (o->ops->setup) PetscCall((*o->ops->setup)(l)); /* mgrit: the solver over the layer communicator */
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* f's activation Vecs for a state in the layout of dmin (NULL: sequential) */
static PetscErrorCode NNODECreateVecs(NNLayer l, DM dmin)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  DM           dm;

  PetscFunctionBegin;
  PetscCall(NNODEDestroyVecs(l));
  PetscCheck(!dmin || !o->nobs, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: observation times need a sequential (dense) state, not a spatial (DMDA) one; put a %s layer before the block", ((PetscObject)l)->name, NNLAYERSPATIALFLATTEN);
  PetscCheck(!dmin || !o->timeinput, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%stime_input needs a sequential (dense) state, not a spatial (DMDA) one", ((PetscObject)l)->name, NNODEPrefix(l));
  if (dmin) PetscCall(PetscObjectReference((PetscObject)dmin));
  o->dm = dmin;
  PetscCall(PetscCalloc1(l->nchildren, &o->fld.cur));
  PetscCall(NNLayerContainerCreateVecs(l, &o->f, dmin, &dm));
  PetscCall(NNLayerContainerCheckLayout(l, NN_ODE_KIND, "du/dt = f(u)", dmin, dm));
  if (o->timeinput) {
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * o->Sin, &o->fld.fin));
    PetscCall(VecDuplicate(o->fld.fin, &o->fld.dfin));
  }
  PetscCall(NNODESchemeSelect(l));
  if (o->ops->layout) PetscCall((*o->ops->layout)(l)); /* ts: the TS now, so -help and views show it; mgrit: layout and integrator supported? */
  PetscCall(NNODESingleSelect(l));                     /* the TS's integrator is known now */
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_ODE(NNLayer l, Vec *y)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCall(NNODECreateVecs(l, dm));
  PetscCall(NNLayerContainerCreateOutputVec(l, dm, y));
#if defined(PETNN_HAVE_CUDA) /* on split spatial activations when every child runs there: the stage arithmetic is the rank's entries */
  l->dev.split = PETSC_TRUE;
  for (PetscInt c = 0; c < l->nchildren; c++) l->dev.split = (PetscBool)(l->dev.split && l->children[c]->dev.split);
#endif
  PetscFunctionReturn(0);
}

/* f's Vecs, made on first use when the block runs outside a network (no NNLayerCreateOutputVec()) */
static PetscErrorCode NNODEGetVecs(NNLayer l, Vec x)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  DM           dm;

  PetscFunctionBegin;
  if (o->f.nvec) PetscFunctionReturn(0);
  PetscCall(NNLayerContainerGetInputDM(l, x, &dm));
  PetscCall(NNODECreateVecs(l, dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_ODE(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEGetVecs(l, x));
  PetscCall(NNODESchemeSelect(l));
  o->n = n;
  PetscCall((*o->ops->forward)(l, n, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_ODE(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEGetVecs(l, x));
  PetscCheck(o->recorded && o->n == n, PetscObjectComm((PetscObject)l), PETSC_ERR_ORDER, "ODE block %s: the backward pass needs a forward pass in training mode on the same batch (%" PetscInt_FMT " samples) first", ((PetscObject)l)->name, n);
  PetscCall(NNODESchemeSelect(l));
  PetscCall((*o->ops->backward)(l, n, x, dy, dx));
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- view, destroy */

static PetscErrorCode NNLayerView_ODE(NNLayer l, PetscViewer v)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  PetscInt       nst, nfull;
  PetscLogDouble b, bfull;

  PetscFunctionBegin;
  PetscCall(NNODESchemeSelect(l));
  PetscCall(PetscViewerASCIIPrintf(v, "du/dt = f(u%s) on [0, %g], %" PetscInt_FMT " steps of h = %g, parameters %s%s, f of %" PetscInt_FMT " layers (%" PetscInt_FMT " parameters per set):\n", o->timeinput ? ", t" : "", (double)o->T, o->N, (double)o->h,
                                   o->params == NNODE_PARAMETERS_PER_STEP ? "per step" : "shared", o->params == NNODE_PARAMETERS_PER_STEP ? " (one set per step)" : "", l->nchildren, o->P));
  if (o->nobs) {
    PetscCall(PetscViewerASCIIPrintf(v, "observation times:"));
    PetscCall(PetscViewerASCIIUseTabs(v, PETSC_FALSE));
    for (PetscInt j = 0; j < o->nobs; j++) PetscCall(PetscViewerASCIIPrintf(v, " %g", (double)o->tobs[j]));
    PetscCall(PetscViewerASCIIPrintf(v, "\n"));
    PetscCall(PetscViewerASCIIUseTabs(v, PETSC_TRUE));
  }
  PetscCall((*o->ops->view)(l, v)); /* "scheme: ...", what it stores, its solver */
  PetscCall(NNLayerODEGetStorage(l, &nst, &b, &nfull, &bfull));
  if (b > 0) PetscCall(PetscViewerASCIIPrintf(v, "stored for the backward pass: %" PetscInt_FMT " state-sized Vecs%s, %.4g MB at the peak (full storage: %" PetscInt_FMT " and their activations, %.4g MB)\n", nst, o->stats.actstored ? " and stage activations" : "", b / 1048576.0, nfull, bfull / 1048576.0));
  if (o->integ.ts) {
    PetscCall(PetscViewerASCIIPushTab(v));
    PetscCall(TSView(o->integ.ts, v));
    PetscCall(PetscViewerASCIIPopTab(v));
  }
  PetscCall(PetscViewerASCIIPrintf(v, "f:\n"));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_ODE(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNLayerReset_ODE(l));
  if (o->ops) PetscCall((*o->ops->destroy)(l));
  PetscCall(NNODECompose_MGRIT(l, PETSC_FALSE));
  PetscCall(NNODEComposeSetters(l, PETSC_FALSE));
  PetscCall(PetscFree(o->tobs));
  PetscCall(PetscFree(o->kobs));
  PetscCall(PetscFree2(o->cpoff, o->cboff));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEAddLayer_C", NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERODE - "ode": a neural-ODE block, du/dt = f(u, theta(t), t) on [0, T], integrated by PETSc's TS

   The vector field f is the block's inner layers run in order (configured like top-level layers);
   it must map the state to the state's shape (on a spatial state: the same DMDA grid, channels
   and decomposition, e.g. stride-1 same-padding convolutions). Forward is TSSolve, backward
   TSAdjointSolve with MATSHELL Jacobians whose transposed products are f's backward passes, so the
   gradients are those of the discrete forward map. Integrators (-<prefix>ts_type): rk with
   -<prefix>ts_rk_type 1fe, 2a, 3, 3bs or 4 (default 4), beuler, cn (Newton-Krylov with matrix-free
   J v; -<prefix>snes_*, -<prefix>ksp_* configure it). Fixed steps h = T/N, no adaptivity; 3bs
   evaluates its first stage anew in every step (no FSAL reuse). f must be deterministic (no dropout).

   Schemes (-<prefix>scheme, -<prefix>parallel), each with its own data behind the NNODESchemeOps table:
   ts (TSSolve/TSAdjointSolve, ts/ode/odeblock_ts*.c), discrete (the residual stack with hand-written
   passes, ts/ode/odeblock_discrete.c) and, with -<prefix>parallel mgrit, mgrit (MGRIT over the steps,
   ts/ode/odeblock_mgrit*.c). NNView() names the scheme in use.

   Options Database Keys:
+  -<prefix>layers <a,b,c> - the layers of f, each configured by -<name>_type ...
.  -<prefix>time <T> - final time (default 1)
.  -<prefix>steps <N> - number of steps (default 4; -<prefix>ts_max_steps also sets it)
.  -<prefix>parameters <shared,per_step> - one set of f's parameters, or one per step (default shared)
.  -<prefix>scheme <ts,discrete> - TS/TSAdjoint, or the residual stack x + h f(x) with hand-written passes
.  -<prefix>checkpoints <K> - store K segment-boundary states and recompute each segment before its adjoint (0: store every step)
.  -<prefix>store_activations <bool> - keep f's activations at every RK stage so the adjoint does not evaluate f again (default true; used when f's layers are dense, pointwise or, with shared parameters, convolutions)
.  -<prefix>observation_times <t1,t2,...> - output the states at these times (multiples of h), concatenated
.  -<prefix>time_input - give f the time as an extra input feature (dense states)
.  -<prefix>parallel <none,mgrit> - layer-parallel training: MGRIT over the steps, each rank of the layer communicator owning a chunk (ts/ode/odeblock_mgrit*.c)
.  -<prefix>mgrit_ranks <p> - MGRIT over groups of p consecutive ranks of the layer communicator (0: all)
.  -<prefix>mgrit_cf, _levels, _relax, _max_it, _rtol, _mode exact|one_shot, _one_shot_it, _warm_start, _monitor, _view - the MGRIT solver (NNMGRITSetFromOptions())
.  -<prefix>mgrit_one_shot_increase_every <s>, -<prefix>mgrit_one_shot_max_it <M> - one-shot schedule: one more iteration every s gradients, up to M
-  -<prefix>ts_type, -<prefix>ts_rk_type, -<prefix>ts_monitor, ... - the block's TS

   Example options file (an ODE-Net block on a convolutional state):
.vb
   -ode1_type ode
   -ode1_layers f1,fa,f2
   -ode1_ts_type rk -ode1_ts_rk_type 4 -ode1_steps 4
   -f1_type conv2d -f1_filters 16 -f1_kernel 3
   -fa_type tanh
   -f2_type conv2d -f2_filters 16 -f2_kernel 3
.ve

   Level: beginner

.seealso: `NNLayerODEAddLayer()`, `NNLayerODESetSteps()`, `NNLayerODESetTime()`, `NNLayerODESetParameters()`,
          `NNLayerODESetCheckpoints()`, `NNLayerODESetObservationTimes()`, `NNLayerODEGetTS()`, `NNLAYERRESIDUAL`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_ODE(NNLayer l)
{
  NNLayer_ODE *o;

  PetscFunctionBegin;
  PetscCall(NNODERegisterEvents());
  PetscCall(PetscNew(&o));
  o->T                    = 1.0;
  o->N                    = 4;
  o->params               = NNODE_PARAMETERS_SHARED;
  o->scheme               = NNODE_SCHEME_TS;
  o->storeacts            = PETSC_TRUE;
  o->osmax                = 8;
  o->nU                   = -2;
  o->spec.samples         = 1;
  o->spec.nev             = 3;
  o->spec.nsteps          = 1;
  o->spec.stiff           = 1e3;
  o->spec.smallest        = PETSC_TRUE;
  l->data                 = o;
  l->ops->setup           = NNLayerSetUp_ODE;
  l->ops->reset           = NNLayerReset_ODE;
  l->ops->forwardvec      = NNLayerForwardVec_ODE;
  l->ops->backwardvec     = NNLayerBackwardVec_ODE;
  l->ops->createoutputvec = NNLayerCreateOutputVec_ODE;
  l->ops->setfromoptions  = NNLayerSetFromOptions_ODE;
  l->ops->view            = NNLayerView_ODE;
  l->ops->destroy         = NNLayerDestroy_ODE;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEAddLayer_C", NNLayerODEAddLayer_ODE));
  PetscCall(NNODEComposeSetters(l, PETSC_TRUE));   /* NNLayerODESetTime(), ... (odeblock_api.c) */
  PetscCall(NNODECompose_MGRIT(l, PETSC_TRUE)); /* NNLayerODESetParallel(), NNLayerODEGetMGRIT() */
  PetscFunctionReturn(0);
}
