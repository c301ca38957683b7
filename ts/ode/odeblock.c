/*
   Neural-ODE block: the layer type "ode" integrates du/dt = f(u, theta(t), t) on [0, T], where the
   vector field f is the block's inner layers run in order (as a residual block runs its children).

   The block's input is u(0); its output is u(T), or with observation times the states at those
   times concatenated ([n][nobs*S] per batch). f's output must have the shape (and, on a DMDA, the
   layout) of its input. Two schemes, one option apart (-<block>_scheme):
     ts        forward by TSSolve (ts/ode/odeblock_ts.c), backward by TSAdjointSolve with MATSHELL
               Jacobians whose transposed products are f's hand-written backward passes: exact
               gradients of the discrete forward map (PNODE's discrete adjoint);
     discrete  the residual stack x_{k+1} = x_k + h f(x_k, theta_k, t_k) with the children's
               forward and backward passes and no TS (ts/ode/odeblock_discrete.c). With rk 1fe both give
               the same numbers.
   Fixed steps h = T/N; parameters shared over time or one set per step (a ResNet written as an
   ODE): the block's slice then holds N copies of f's parameters, step-major, named
   "<block>.<k>.<layer>.<tensor>" in checkpoints (a torch ModuleList of N copies), which the generic
   walks of src/nn/interface/nn.c handle through NNLayer.ncopies.

   This file: the layer type (options, set up, views, the public setters) and the helpers both
   schemes share (copying states in and out, observations).
*/
#include <petnn/private/odeimpl.h>

const char *const NNODEParametersTypes[] = {"shared", "per_step", "NNODEParameters", "NNODE_PARAMETERS_", NULL};
const char *const NNODESchemes[]         = {"ts", "discrete", "NNODEScheme", "NNODE_SCHEME_", NULL};

static const char *NNODEPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

/* ---------------------------------------------------------------- helpers shared by both schemes */

/* U = the first n samples of x (sequential), or the whole DMDA Vec */
PetscErrorCode NNODECopyIn(NNLayer l, PetscInt n, Vec x, Vec U)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  const PetscScalar *xa;
  PetscScalar       *ua;

  PetscFunctionBegin;
  if (o->dm) {
    PetscCall(VecCopy(x, U));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(U, &ua));
  PetscCall(PetscArraycpy(ua, xa, n * o->S));
  PetscCall(VecRestoreArrayWrite(U, &ua));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

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

/* ---------------------------------------------------------------- children */

static PetscErrorCode NNLayerODEAddLayer_ODE(NNLayer l, NNLayerType type, const char name[], NNLayer *inner)
{
  char      base[256] = "", suffix[256];
  size_t    plen, slen;
  NNLayer   child, *more;
  PetscBool match;

  PetscFunctionBegin;
  PetscCheck(name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_NULL, "ODE block %s: a layer of its vector field needs a name", ((PetscObject)l)->name);
  PetscCall(PetscStrcmp(name, ((PetscObject)l)->name, &match));
  PetscCheck(!match, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "ODE block %s cannot contain a layer of the same name; layer names must be unique", name);
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(PetscStrcmp(name, ((PetscObject)l->children[c])->name, &match));
    PetscCheck(!match, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "ODE block %s already has a layer named %s; layer names must be unique", ((PetscObject)l)->name, name);
  }
  /* the children are configured like top-level layers: the network's prefix, without "<block>_" */
  PetscCall(PetscStrncpy(base, NNODEPrefix(l), sizeof(base)));
  PetscCall(PetscSNPrintf(suffix, sizeof(suffix), "%s_", ((PetscObject)l)->name ? ((PetscObject)l)->name : ""));
  PetscCall(PetscStrlen(base, &plen));
  PetscCall(PetscStrlen(suffix, &slen));
  if (slen > 1 && plen >= slen) {
    PetscCall(PetscStrcmp(base + plen - slen, suffix, &match));
    if (match) base[plen - slen] = 0;
  }
  PetscCall(NNLayerCreateNamed(PetscObjectComm((PetscObject)l), base, type, name, &child));
  child->rng      = l->rng;
  child->nbatch   = l->nbatch;
  child->training = l->training;
  PetscCall(PetscMalloc1(l->nchildren + 1, &more));
  if (l->nchildren) PetscCall(PetscArraycpy(more, l->children, l->nchildren));
  more[l->nchildren] = child;
  PetscCall(PetscFree(l->children));
  l->children = more;
  l->nchildren++;
  l->setupcalled = PETSC_FALSE;
  if (inner) *inner = child;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- options */

/* a child named in -layers, unless the block has it already */
static PetscErrorCode NNODEAddNamed(NNLayer l, const char name[])
{
  PetscBool exists = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren && !exists; c++) PetscCall(PetscStrcmp(name, ((PetscObject)l->children[c])->name, &exists));
  if (!exists) PetscCall(NNLayerODEAddLayer_ODE(l, NULL, name, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_ODE(NNLayer l, PetscOptionItems *PetscOptionsObject)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  char        *names[64];
  PetscInt     nnames = 64, N, Nts, nt = 64;
  PetscReal    T, Tts, t[64];
  PetscBool    flg, flgts;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Neural ODE block options");
  PetscCall(PetscOptionsStringArray("-layers", "Comma-separated names of the layers of the vector field f, each configured by -<name>_type ...", "NNLayerODEAddLayer", names, &nnames, &flg));
  if (flg) {
    PetscErrorCode ierr = 0; /* after an error the remaining names are still freed */
    for (PetscInt i = 0; i < nnames; i++) {
      if (!ierr) ierr = NNODEAddNamed(l, names[i]);
      PetscCall(PetscFree(names[i]));
    }
    PetscCall(ierr);
  }
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
  for (PetscInt c = 0; c < o->nvec; c++) {
    PetscCall(VecDestroy(&o->out[c]));
    PetscCall(VecDestroy(&o->dout[c]));
  }
  PetscCall(NNODEDestroyActs(l));
  PetscCall(PetscFree4(o->out, o->dout, o->cur, o->actneed));
  o->nvec = 0;
  PetscCall(VecDestroy(&o->fin));
  PetscCall(VecDestroy(&o->dfin));
  PetscCall(DMDestroy(&o->dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_ODE(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEDestroyTS(l));
  PetscCall(NNODEDestroyDiscrete(l));
  PetscCall(NNODEDestroyVecs(l));
  PetscCall(NNODEReset_MGRIT(l));
  PetscCall(PetscFree(o->gp));
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_ODE(NNLayer l)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  NNShape      s, fin;
  NNLayer      last;
  PetscBool    same;
  PetscInt     np;

  PetscFunctionBegin;
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
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch = l->children[c];
    PetscCall(NNODECheckDeterministic(l, ch));
    if (!ch->rng) ch->rng = l->rng;
    ch->inputname = c ? ((PetscObject)l->children[c - 1])->name : l->inputname;
    PetscCall(NNLayerSetBatchCapacity(ch, l->nbatch));
    PetscCall(NNLayerSetInputShape(ch, &s));
    PetscCall(NNLayerSetTraining(ch, l->training));
    PetscCall(NNLayerSetUp(ch));
    s = ch->outshape;
  }
  last = l->children[l->nchildren - 1];
  same = (PetscBool)(s.ndim == l->inshape.ndim);
  for (PetscInt i = 0; i < s.ndim && same; i++) same = (PetscBool)(s.dim[i] == l->inshape.dim[i]);
  if (!same) {
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
  PetscCall(PetscFree(o->gp));
  PetscCall(PetscCalloc1(PetscMax(o->P, 1), &o->gp));
  /* the output: u(T), or the observations stacked in front of the state's shape */
  l->outshape = l->inshape;
  if (o->nobs) {
    PetscCheck(l->inshape.ndim < NN_MAX_DIM, comm, PETSC_ERR_SUP, "ODE block %s: observation times add a dimension; states of %" PetscInt_FMT " dimensions are too many", ((PetscObject)l)->name, l->inshape.ndim);
    l->outshape.ndim   = l->inshape.ndim + 1;
    l->outshape.dim[0] = o->nobs;
    for (PetscInt i = 0; i < l->inshape.ndim; i++) l->outshape.dim[i + 1] = l->inshape.dim[i];
  }
  PetscCall(NNODESetUp_MGRIT(l)); /* layer-parallel: the MGRIT solver over the layer communicator */
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* the block's output must have the layout of its input (DM din; NULL: sequential) */
static PetscErrorCode NNODECheckLayout(NNLayer l, DM din, DM dout)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)l);
  NNLayer         last = l->children[l->nchildren - 1];
  const char     *name = ((PetscObject)l)->name, *lname = ((PetscObject)last)->name;
  PetscInt        dim[2], M[2][3], r[2][3], dof[2];
  const PetscInt *own[2][3];
  PetscBool       same, isda[2];

  PetscFunctionBegin;
  if (!din && !dout) PetscFunctionReturn(0);
  PetscCheck(din && dout, comm, PETSC_ERR_ARG_WRONG, "ODE block %s: its state is %s but its vector field's last layer %s outputs %s; du/dt = f(u) needs both in the same layout", name, din ? "a spatial (DMDA) activation" : "a sequential activation", lname, dout ? "a spatial (DMDA) one" : "a sequential one");
  PetscCall(PetscObjectTypeCompare((PetscObject)din, DMDA, &isda[0]));
  PetscCall(PetscObjectTypeCompare((PetscObject)dout, DMDA, &isda[1]));
  PetscCheck(isda[0] && isda[1], comm, PETSC_ERR_SUP, "ODE block %s: only DMDA spatial activations are supported", name);
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(DMDAGetInfo(k ? dout : din, &dim[k], &M[k][0], &M[k][1], &M[k][2], &r[k][0], &r[k][1], &r[k][2], &dof[k], NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetOwnershipRanges(k ? dout : din, &own[k][0], &own[k][1], &own[k][2]));
  }
  same = (PetscBool)(dim[0] == dim[1] && dof[0] == dof[1]);
  for (PetscInt a = 0; a < dim[0] && same; a++) {
    same = (PetscBool)(M[0][a] == M[1][a] && r[0][a] == r[1][a]);
    for (PetscInt i = 0; i < r[0][a] && same; i++) same = (PetscBool)(own[0][a][i] == own[1][a][i]);
  }
  PetscCheck(same, comm, PETSC_ERR_ARG_WRONG, "ODE block %s: its vector field's last layer %s outputs a DMDA with another grid, channel count or decomposition than the state's; du/dt = f(u) needs the same (e.g. stride-1 same-padding convolutions)", name, lname);
  PetscFunctionReturn(0);
}

/* f's activation Vecs for a state in the layout of dmin (NULL: sequential) */
static PetscErrorCode NNODECreateVecs(NNLayer l, DM dmin)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  DM           dm = dmin;

  PetscFunctionBegin;
  PetscCall(NNODEDestroyVecs(l));
  PetscCheck(!dmin || !o->nobs, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: observation times need a sequential (dense) state, not a spatial (DMDA) one; put a %s layer before the block", ((PetscObject)l)->name, NNLAYERSPATIALFLATTEN);
  PetscCheck(!dmin || !o->timeinput, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "ODE block %s: -%stime_input needs a sequential (dense) state, not a spatial (DMDA) one", ((PetscObject)l)->name, NNODEPrefix(l));
  if (dmin) PetscCall(PetscObjectReference((PetscObject)dmin));
  o->dm = dmin;
  PetscCall(PetscCalloc4(l->nchildren, &o->out, l->nchildren, &o->dout, l->nchildren, &o->cur, l->nchildren, &o->actneed));
  o->nvec = l->nchildren;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(NNLayerSetInputDM(l->children[c], dm));
    PetscCall(NNLayerCreateOutputVec(l->children[c], &o->out[c]));
    if (c < l->nchildren - 1) PetscCall(VecDuplicate(o->out[c], &o->dout[c]));
    PetscCall(VecGetDM(o->out[c], &dm));
  }
  PetscCall(NNODECheckLayout(l, dmin, dm));
  if (o->timeinput) {
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * o->Sin, &o->fin));
    PetscCall(VecDuplicate(o->fin, &o->dfin));
  }
  if (o->scheme == NNODE_SCHEME_TS) PetscCall(NNODECreateTS(l)); /* configured now, so -help and views show it */
  PetscCall(NNODECheck_MGRIT(l));                                 /* layer-parallel: layout and integrator supported? */
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_ODE(NNLayer l, Vec *y)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCall(NNODECreateVecs(l, dm));
  if (dm) PetscCall(DMCreateGlobalVector(dm, y));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), y));
  PetscFunctionReturn(0);
}

/* f's Vecs, made on first use when the block runs outside a network (no NNLayerCreateOutputVec()) */
static PetscErrorCode NNODEGetVecs(NNLayer l, Vec x)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  DM           dm;

  PetscFunctionBegin;
  if (o->nvec) PetscFunctionReturn(0);
  PetscCall(NNLayerGetInputDM(l, &dm));
  if (!dm) PetscCall(VecGetDM(x, &dm));
  PetscCall(NNODECreateVecs(l, dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_ODE(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEGetVecs(l, x));
  o->n = n;
  if (o->parallel == NNODE_PARALLEL_MGRIT) PetscCall(NNODEForwardMGRIT(l, n, x, y));
  else if (o->scheme == NNODE_SCHEME_TS) PetscCall(NNODEForwardTS(l, n, x, y));
  else PetscCall(NNODEForwardDiscrete(l, n, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_ODE(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(NNODEGetVecs(l, x));
  PetscCheck(o->recorded && o->n == n, PetscObjectComm((PetscObject)l), PETSC_ERR_ORDER, "ODE block %s: the backward pass needs a forward pass in training mode on the same batch (%" PetscInt_FMT " samples) first", ((PetscObject)l)->name, n);
  if (o->parallel == NNODE_PARALLEL_MGRIT) PetscCall(NNODEBackwardMGRIT(l, n, x, dy, dx));
  else if (o->scheme == NNODE_SCHEME_TS) PetscCall(NNODEBackwardTS(l, n, x, dy, dx));
  else PetscCall(NNODEBackwardDiscrete(l, n, x, dy, dx));
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
  PetscCall(PetscViewerASCIIPrintf(v, "du/dt = f(u%s) on [0, %g], %" PetscInt_FMT " steps of h = %g, parameters %s%s, f of %" PetscInt_FMT " layers (%" PetscInt_FMT " parameters per set):\n", o->timeinput ? ", t" : "", (double)o->T, o->N, (double)o->h,
                                   o->params == NNODE_PARAMETERS_PER_STEP ? "per step" : "shared", o->params == NNODE_PARAMETERS_PER_STEP ? " (one set per step)" : "", l->nchildren, o->P));
  if (o->scheme == NNODE_SCHEME_DISCRETE) PetscCall(PetscViewerASCIIPrintf(v, "scheme: discrete residual stack x_{k+1} = x_k + h f(x_k), hand-written passes (no TS)%s\n", o->parallel == NNODE_PARALLEL_MGRIT ? "" : "; stores every step"));
  else if (o->ts) {
    TSType    type;
    TSRKType  rktype;
    PetscBool isrk;
    PetscCall(TSGetType(o->ts, &type));
    PetscCall(PetscObjectTypeCompare((PetscObject)o->ts, TSRK, &isrk));
    if (isrk) PetscCall(TSRKGetType(o->ts, &rktype));
    PetscCall(PetscViewerASCIIPrintf(v, "integrator: TS %s%s%s%s, TSAdjoint backward with MATSHELL Jacobians (f's backward pass)\n", type, isrk ? " " : "", isrk ? rktype : "", o->implicit ? ", matrix-free Newton-Krylov stages" : ""));
  } else PetscCall(PetscViewerASCIIPrintf(v, "integrator: TS (made at set up for the activation layout; -%sts_type, -%sts_rk_type)\n", NNODEPrefix(l), NNODEPrefix(l)));
  if (o->nobs) {
    PetscCall(PetscViewerASCIIPrintf(v, "observation times:"));
    PetscCall(PetscViewerASCIIUseTabs(v, PETSC_FALSE));
    for (PetscInt j = 0; j < o->nobs; j++) PetscCall(PetscViewerASCIIPrintf(v, " %g", (double)o->tobs[j]));
    PetscCall(PetscViewerASCIIPrintf(v, "\n"));
    PetscCall(PetscViewerASCIIUseTabs(v, PETSC_TRUE));
  }
  PetscCall(NNLayerODEGetStorage(l, &nst, &b, &nfull, &bfull));
  if (o->parallel == NNODE_PARALLEL_MGRIT) { /* NNODEView_MGRIT() tells what is stored */
  } else if (o->scheme == NNODE_SCHEME_TS && o->K) PetscCall(PetscViewerASCIIPrintf(v, "checkpointing: %" PetscInt_FMT " stored states (segments of %" PetscInt_FMT " steps, each recomputed once before its adjoint)\n", PetscMin(o->K, o->kend), (o->kend + PetscMin(o->K, o->kend) - 1) / PetscMin(o->K, o->kend)));
  else PetscCall(PetscViewerASCIIPrintf(v, "checkpointing: none, every step stored\n"));
  if (o->scheme == NNODE_SCHEME_TS && o->ts && o->parallel != NNODE_PARALLEL_MGRIT) PetscCall(PetscViewerASCIIPrintf(v, "f's activations at each stage: %s\n", o->actsok ? "kept by the forward pass (the adjoint does not evaluate f again)" : (o->storeacts ? "evaluated again by the adjoint (f's layers or the integrator need it)" : "evaluated again by the adjoint (-store_activations false)")));
  if (b > 0) PetscCall(PetscViewerASCIIPrintf(v, "stored for the backward pass: %" PetscInt_FMT " state-sized Vecs%s, %.4g MB at the peak (full storage: %" PetscInt_FMT " and their activations, %.4g MB)\n", nst, o->actstored ? " and stage activations" : "", b / 1048576.0, nfull, bfull / 1048576.0));
  PetscCall(NNODEView_MGRIT(l, v));
  if (o->ts) {
    PetscCall(PetscViewerASCIIPushTab(v));
    PetscCall(TSView(o->ts, v));
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
  PetscCall(NNODEDestroy_MGRIT(l));
  PetscCall(NNODECompose_MGRIT(l, PETSC_FALSE));
  PetscCall(PetscFree(o->tobs));
  PetscCall(PetscFree(o->kobs));
  PetscCall(PetscFree2(o->cpoff, o->cboff));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEAddLayer_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetTime_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetSteps_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetParameters_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetScheme_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetCheckpoints_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetTimeInput_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetObservationTimes_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetTS_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetStorage_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetTimes_C", NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- type-specific setters */

static PetscErrorCode NNLayerODESetTime_ODE(NNLayer l, PetscReal T)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(T > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: final time -%stime %g must be positive", ((PetscObject)l)->name, NNODEPrefix(l), (double)T);
  if (T != o->T) l->setupcalled = PETSC_FALSE;
  o->T = T;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetSteps_ODE(NNLayer l, PetscInt N)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(N > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%ssteps %" PetscInt_FMT " must be positive", ((PetscObject)l)->name, NNODEPrefix(l), N);
  if (N != o->N) l->setupcalled = PETSC_FALSE;
  o->N = N;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetParameters_ODE(NNLayer l, NNODEParameters p)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (p != o->params) l->setupcalled = PETSC_FALSE;
  o->params = p;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetScheme_ODE(NNLayer l, NNODEScheme s)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  o->scheme   = s;
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetCheckpoints_ODE(NNLayer l, PetscInt K)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(K >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%scheckpoints %" PetscInt_FMT " must be 0 (store every step) or positive", ((PetscObject)l)->name, NNODEPrefix(l), K);
  o->K        = K;
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetTimeInput_ODE(NNLayer l, PetscBool flg)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (flg != o->timeinput) l->setupcalled = PETSC_FALSE;
  o->timeinput = flg;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetObservationTimes_ODE(NNLayer l, PetscInt nobs, const PetscReal t[])
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(nobs >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: %" PetscInt_FMT " observation times", ((PetscObject)l)->name, nobs);
  PetscCall(PetscFree(o->tobs));
  o->nobs = nobs;
  if (nobs) {
    PetscCall(PetscMalloc1(nobs, &o->tobs));
    PetscCall(PetscArraycpy(o->tobs, t, nobs));
  }
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetTS_ODE(NNLayer l, TS *ts)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (!o->ts) {
    PetscCheck(l->setupcalled && o->nvec, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "ODE block %s: its TS is made for the activation layout; call NNSetUp() first", ((PetscObject)l)->name);
    PetscCall(NNODECreateTS(l));
  }
  *ts = o->ts;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetStorage_ODE(NNLayer l, PetscInt *nstates, PetscLogDouble *bytes, PetscInt *nfull, PetscLogDouble *bytesfull)
{
  NNLayer_ODE   *o = (NNLayer_ODE *)l->data;
  PetscLogDouble vb;
  PetscInt       per = 1 + (o->scheme == NNODE_SCHEME_TS ? o->nstagevecs : 0); /* the TS trajectory keeps the stages of every step */

  PetscFunctionBegin;
  PetscCall(NNODEStateBytes(l, &vb));
  if (nstates) *nstates = o->nstored;
  if (bytes) *bytes = o->nstored * vb + o->actstored * o->actbytes;
  if (nfull) *nfull = o->kend * per + 1;
  if (bytesfull) *bytesfull = (o->kend * per + 1) * vb + (o->actsok && o->storeacts ? o->kend * o->nstages * o->actbytes : 0);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetTimes_ODE(NNLayer l, PetscLogDouble *forward, PetscLogDouble *adjoint, PetscLogDouble *recompute)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (forward) *forward = o->tfwd;
  if (adjoint) *adjoint = o->tadj;
  if (recompute) *recompute = o->trec;
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
.  -<prefix>parallel <none,mgrit> - layer-parallel training: MGRIT over the steps, each rank of the layer communicator owning a chunk (ts/ode/odeblock_mgrit.c)
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
  o->nU                   = -2;
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
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetTime_C", NNLayerODESetTime_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetSteps_C", NNLayerODESetSteps_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetParameters_C", NNLayerODESetParameters_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetScheme_C", NNLayerODESetScheme_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetCheckpoints_C", NNLayerODESetCheckpoints_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetTimeInput_C", NNLayerODESetTimeInput_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetObservationTimes_C", NNLayerODESetObservationTimes_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetTS_C", NNLayerODEGetTS_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetStorage_C", NNLayerODEGetStorage_ODE));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetTimes_C", NNLayerODEGetTimes_ODE));
  PetscCall(NNODECompose_MGRIT(l, PETSC_TRUE)); /* NNLayerODESetParallel(), NNLayerODEGetMGRIT() */
  PetscFunctionReturn(0);
}
