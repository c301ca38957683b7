/*
   The neural-ODE block in single precision (-nn_precision single): the explicit schemes integrated in float by the
   block itself, with the exact discrete adjoint written out, on the children's float passes.

   The ts scheme with an explicit RK tableau (-<block>_ts_type rk) and the discrete scheme (forward Euler: the tableau
   s = 1, a = 0, b = 1) take the same path. One step from u_k with stages i = 0..s-1:
     Y_i = u_k + h sum_{j<i} a_ij K_j,   K_i = f(Y_i, theta_k, t_k + c_i h),   u_{k+1} = u_k + h sum_i b_i K_i,
   the arithmetic of PETSc's TSRK step. Its adjoint, given lambda = dL/du_{k+1}, stages from the last to the first:
     dK_i = h b_i lambda + h sum_{j>i} a_ji dY_j,   dY_i = (df/du)^T dK_i at Y_i,   dtheta_k += (df/dtheta)^T dK_i,
   then lambda += sum_i dY_i. These are the gradients of the discrete forward map, as TSAdjoint's.

   What the backward pass reads: every state u_k, and with shared parameters (and -<block>_store_activations, the
   default) f's activations at every stage of every step, so the adjoint runs only f's backward passes. With one
   parameter set per step, or without stored activations, each step's stages are evaluated again from u_k before
   its adjoint (convolutions keep their transformed weights of the last forward pass: that must be step k's).

   Checkpointing (-<block>_checkpoints K > 0, NNODESegments()) keeps only the segments' starts and computes each
   segment again before its adjoint.

   Observation times (-<block>_observation_times) write the observed states into the output as they are made and add
   their parts of the output gradient to lambda at their steps.

   With time input (-<block>_time_input) f's input is [Y_i, t_k + c_i h] per sample, kept in the stage's data.

   What stays double (NNView() lists the block under "double passes on converted activations"): implicit
   integrators (beuler, cn: Newton-Krylov through TS/SNES on PetscScalar Vecs), MGRIT, and vector fields with a layer that has no float
   passes of its own or whose backward pass reads state of its last forward pass (l->forwardstate: the
   normalizations' statistics, dropout's mask would be those of the last stage evaluated); on the device
   (odeblock_cuda.c) such vector fields are refused.
*/
#include <petnn/private/odeimpl.h>

/* float passes (and device passes) apply to this configuration: sets the block's ops (and the tableau) accordingly */
PetscErrorCode NNODESingleSelect(NNLayer l)
{
  NNLayer_ODE   *o  = (NNLayer_ODE *)l->data;
  NNODESingle   *sp = &o->single;
  PetscBool      single = (PetscBool)(o->parallel != NNODE_PARALLEL_MGRIT), dev = single, ok;
  const PetscInt s0 = sp->s;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren && single; c++) single = (PetscBool)(NNLayerHasSinglePasses(l->children[c]) && !l->children[c]->nchildren && !l->children[c]->forwardstate);
  /* the device passes (odeblock_cuda.c): the same configurations with children that have device passes */
  for (PetscInt c = 0; c < l->nchildren && dev; c++) dev = (PetscBool)(l->children[c]->ops->forwarddevice && l->children[c]->ops->backwarddevice && !l->children[c]->nchildren && !l->children[c]->forwardstate);
  ok = (PetscBool)(single || dev); /* the tableau serves both */
  if (ok && o->scheme == NNODE_SCHEME_TS) {
    PetscBool        isrk;
    PetscInt         s;
    const PetscReal *A, *b, *c;
    if (!o->integ.ts) ok = PETSC_FALSE; /* made with the activation layout; until then, no float passes */
    else {
      PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSRK, &isrk));
      ok = isrk;
    }
    if (ok) {
      PetscCall(TSRKGetTableau(o->integ.ts, &s, &A, &b, &c, NULL, NULL, NULL, NULL));
      sp->s = s;
      for (PetscInt i = 0; i < s; i++) {
        sp->b[i] = b[i];
        sp->c[i] = c[i];
        for (PetscInt j = 0; j < s; j++) sp->a[i * s + j] = A[i * s + j];
      }
    }
  } else if (ok) { /* the discrete scheme: forward Euler */
    sp->s    = 1;
    sp->a[0] = 0;
    sp->b[0] = 1;
    sp->c[0] = 0;
  }
  if (!ok) sp->s = 0;
  single = (PetscBool)(single && ok);
  dev    = (PetscBool)(dev && ok);
  if (sp->s != s0) { /* the stored stages have another layout */
    PetscCall(NNODESingleReset(l));
    PetscCall(NNODEDeviceReset(l));
  }
  l->ops->forwardsingle  = single ? NNLayerForwardSingle_ODE : NULL;
  l->ops->backwardsingle = single ? NNLayerBackwardSingle_ODE : NULL;
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = dev ? NNLayerForwardDevice_ODE : NULL;
  l->ops->backwarddevice = dev ? NNLayerBackwardDevice_ODE : NULL;
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode NNODESingleReset(NNLayer l)
{
  NNODESingle *sp = &((NNLayer_ODE *)l->data)->single;

  PetscFunctionBegin;
  PetscCall(PetscFree(sp->u));
  PetscCall(PetscFree(sp->stages));
  PetscCall(PetscFree(sp->work));
  PetscCall(PetscFree(sp->clen));
  sp->nu = sp->nstages = 0;
  PetscFunctionReturn(0);
}

/* frees the device arrays of odeblock_cuda.c (a no-op without them) */
PetscErrorCode NNODEDeviceReset(NNLayer l)
{
  NNODEDevice *d = &((NNLayer_ODE *)l->data)->device;

  PetscFunctionBegin;
  PetscCall(NNDeviceFree(&d->u));
  PetscCall(NNDeviceFree(&d->stages));
  PetscCall(NNDeviceFree(&d->work));
  d->nu = d->nstages = 0;
  PetscFunctionReturn(0);
}

/* the layout of the stage data: the entries of every child's output, of a state, of one stage */
PetscErrorCode NNODESingleLayout(NNLayer l)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODESingle *sp = &o->single;
  PetscInt     nc = l->nchildren;

  PetscFunctionBegin;
  if (!sp->clen) {
    PetscCall(PetscMalloc1(nc, &sp->clen));
    for (PetscInt c = 0; c < nc; c++) PetscCall(VecGetLocalSize(o->f.out[c], &sp->clen[c]));
    sp->m    = sp->clen[nc - 1];                      /* f's output has the state's layout */
    sp->mt   = o->timeinput ? l->nbatch * o->Sin : 0; /* f's input [Y_i, t] per sample */
    sp->slot = sp->m + sp->mt;                        /* per stage: Y_i, [Y_i, t], then every child's output */
    for (PetscInt c = 0; c < nc; c++) sp->slot += sp->clen[c];
  }
  PetscFunctionReturn(0);
}

/*
   NNODESegments - checkpointing (-<block>_checkpoints K > 0) in the float and device passes, as the TS scheme does
   (odeblock_ts.c): the states at the starts of nseg segments of L = ceil(kend / min(K, kend)) steps are kept; the
   backward pass computes each segment's states again from its start, with its stages when the block keeps stages,
   before the segment's adjoint. The state arrays: every state u_0..u_kend (K = 0), or the nseg segment starts, then
   the L + 1 states of the segment at hand. Every step does the arithmetic of the pass without checkpoints, so the
   results are the same bitwise.
*/
void NNODESegments(NNLayer l, PetscInt *L, PetscInt *nseg, PetscInt *nstates)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     K = PetscMin(o->K, o->kend);

  *L       = K ? (o->kend + K - 1) / K : o->kend;
  *nseg    = K && *L ? (o->kend + *L - 1) / *L : 0;
  *nstates = K ? *nseg + *L + 1 : o->kend + 1;
}

/* the float arrays for a pass: the states (NNODESegments()), the stage data of 'slots' steps, and the adjoint's work */
static PetscErrorCode NNODESingleArrays(NNLayer l, PetscInt slots)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODESingle *sp = &o->single;
  PetscInt     nc = l->nchildren, s = sp->s, maxc = 0, L, nseg, nstates;

  PetscFunctionBegin;
  PetscCall(NNODESingleLayout(l));
  NNODESegments(l, &L, &nseg, &nstates);
  for (PetscInt c = 0; c < nc; c++) maxc = PetscMax(maxc, sp->clen[c]);
  if (sp->nu < nstates) {
    PetscCall(PetscFree(sp->u));
    PetscCall(PetscCalloc1((size_t)nstates * sp->m, &sp->u));
    sp->nu = nstates;
  }
  if (sp->nstages < slots * s) {
    PetscCall(PetscFree(sp->stages));
    PetscCall(PetscCalloc1((size_t)slots * s * sp->slot, &sp->stages));
    sp->nstages = slots * s;
  }
  if (!sp->work) PetscCall(PetscCalloc1((size_t)(s + 2) * sp->m + 2 * maxc + sp->mt, &sp->work)); /* dY_0..dY_{s-1}, dK, lambda, two child gradients, d[Y, t] */
  PetscFunctionReturn(0);
}

/* the stage data of stage i in slot q: Y_i, and the output of child c */
static inline float *NNODESingleY(NNODESingle *sp, PetscInt q, PetscInt i)
{
  return sp->stages + (size_t)(q * sp->s + i) * sp->slot;
}

/* f's input at stage i: [Y_i, t] with time input, else Y_i */
static inline float *NNODESingleIn(NNODESingle *sp, PetscInt q, PetscInt i)
{
  return NNODESingleY(sp, q, i) + (sp->mt ? sp->m : 0);
}

static inline float *NNODESingleOut(NNODESingle *sp, PetscInt q, PetscInt i, PetscInt c)
{
  float *p = NNODESingleY(sp, q, i) + sp->m + sp->mt;
  for (PetscInt d = 0; d < c; d++) p += sp->clen[d];
  return p;
}

/* points the children at step k's parameters (theta and the float copy stheta) and the float gradient (NULL: none) */
static PetscErrorCode NNODESinglePointChildren(NNLayer l, PetscInt k, PetscBool grad)
{
  NNLayer_ODE   *o    = (NNLayer_ODE *)l->data;
  const PetscInt off  = l->nparam + (o->params == NNODE_PARAMETERS_PER_STEP ? k : 0) * o->P;

  PetscFunctionBegin;
  PetscCall(NNODEPointChildren(l, k, NULL));
  for (PetscInt c = 0; c < l->nchildren; c++) {
    l->children[c]->stheta  = l->stheta + off + o->cpoff[c];
    l->children[c]->sdtheta = grad ? l->sdtheta + off + o->cpoff[c] : NULL;
  }
  PetscFunctionReturn(0);
}

/* the stages of step k from u (= u_k) into slot q, and with unew != NULL the next state */
static PetscErrorCode NNODESingleStep(NNLayer l, PetscInt n, PetscInt k, const float *u, PetscInt q, float *unew)
{
  NNLayer_ODE   *o  = (NNLayer_ODE *)l->data;
  NNODESingle   *sp = &o->single;
  const PetscInt s = sp->s, nc = l->nchildren, m = sp->mpass;
  const float    h = (float)o->h;

  PetscFunctionBegin;
  PetscCall(NNODESinglePointChildren(l, k, PETSC_FALSE));
  for (PetscInt i = 0; i < s; i++) {
    float *Y = NNODESingleY(sp, q, i);
    PetscCall(PetscArraycpy(Y, u, m));
    for (PetscInt j = 0; j < i; j++) {
      const float  w = h * (float)sp->a[i * s + j];
      const float *K = NNODESingleOut(sp, q, j, nc - 1);
      if (w != 0)
        for (PetscInt e = 0; e < m; e++) Y[e] += w * K[e];
    }
    if (o->timeinput) { /* f's input [Y_i, t_k + c_i h] per sample (the time rounded once, as the stage weights) */
      float *Yt = NNODESingleIn(sp, q, i);
      for (PetscInt r = 0; r < n; r++) {
        PetscCall(PetscArraycpy(Yt + r * o->Sin, Y + r * o->S, o->S));
        Yt[r * o->Sin + o->S] = (float)(k * o->h + sp->c[i] * o->h);
      }
    }
    for (PetscInt c = 0; c < nc; c++)
      PetscCall(NNLayerForwardSingle(l->children[c], n, c ? o->f.out[c - 1] : (o->timeinput ? o->fld.fin : o->f.out[nc - 1]), c ? NNODESingleOut(sp, q, i, c - 1) : NNODESingleIn(sp, q, i), NNODESingleOut(sp, q, i, c)));
  }
  if (unew) {
    PetscCall(PetscArraycpy(unew, u, m));
    for (PetscInt i = 0; i < s; i++) {
      const float  w = h * (float)sp->b[i];
      const float *K = NNODESingleOut(sp, q, i, nc - 1);
      if (w != 0)
        for (PetscInt e = 0; e < m; e++) unew[e] += w * K[e];
    }
  }
  PetscCall(PetscLogFlops(2.0 * m * (s * (s - 1) / 2 + s)));
  PetscFunctionReturn(0);
}

/* keep every step's stages for the backward pass (else each step is evaluated again before its adjoint) */
PetscBool NNODESingleKeepsStages(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  return (PetscBool)(l->training && o->storeacts && o->params == NNODE_PARAMETERS_SHARED);
}

/* the state i of the arrays of NNODESegments() */
static inline float *NNODESingleU(NNODESingle *sp, PetscInt i)
{
  return sp->u + (size_t)i * sp->m;
}

/* observation times (-<block>_observation_times, sequential states): the output is [n][nobs][S]; state u_k, if an
   observation is at step k, goes to its place (the forward pass), and that place of dy is added to lambda = dL/du_k
   (the backward pass) */
static PetscErrorCode NNODESingleObserve(NNLayer l, PetscInt n, PetscInt k, const float *u, float *y)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     j;

  PetscFunctionBegin;
  PetscCall(NNODEObservationIndex(l, k, &j));
  if (j < 0) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscArraycpy(y + (i * o->nobs + j) * o->S, u + i * o->S, o->S));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODESingleAddObservation(NNLayer l, PetscInt n, PetscInt k, const float *dy, float *lam)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  PetscInt     j;

  PetscFunctionBegin;
  PetscCall(NNODEObservationIndex(l, k, &j));
  if (j < 0) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt e = 0; e < o->S; e++) lam[i * o->S + e] += dy[(i * o->nobs + j) * o->S + e];
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardSingle_ODE(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNLayer_ODE   *o    = (NNLayer_ODE *)l->data;
  NNODESingle   *sp   = &o->single;
  PetscBool      keep = NNODESingleKeepsStages(l);
  PetscInt       L, nseg, nstates;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  o->n = n;
  NNODESegments(l, &L, &nseg, &nstates);
  if (nseg) keep = PETSC_FALSE; /* checkpointing: the stages are made again, a segment at a time, by the backward pass */
  PetscCall(NNODESingleArrays(l, keep ? o->kend : (nseg && NNODESingleKeepsStages(l) ? L : 1)));
  sp->mpass = o->dm ? sp->m : n * o->S; /* a spatial state: every batch slot of the rank's subdomain */
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  PetscCall(NNODESingleObserve(l, n, 0, x, y));
  if (!nseg) {
    PetscCall(PetscArraycpy(sp->u, x, sp->mpass));
    for (PetscInt k = 0; k < o->kend; k++) {
      PetscCall(NNODESingleStep(l, n, k, NNODESingleU(sp, k), keep ? k : 0, NNODESingleU(sp, k + 1)));
      PetscCall(NNODESingleObserve(l, n, k + 1, NNODESingleU(sp, k + 1), y));
    }
    if (!o->nobs) PetscCall(PetscArraycpy(y, NNODESingleU(sp, o->kend), sp->mpass));
  } else { /* each segment's start kept, its steps through the segment's states */
    PetscCall(PetscArraycpy(NNODESingleU(sp, nseg), x, sp->mpass));
    for (PetscInt g = 0; g < nseg; g++) {
      const PetscInt a = g * L, b = PetscMin(o->kend, a + L);
      PetscCall(PetscArraycpy(NNODESingleU(sp, g), NNODESingleU(sp, nseg), sp->mpass));
      for (PetscInt k = a; k < b; k++) {
        PetscCall(NNODESingleStep(l, n, k, NNODESingleU(sp, nseg + k - a), 0, NNODESingleU(sp, nseg + k - a + 1)));
        PetscCall(NNODESingleObserve(l, n, k + 1, NNODESingleU(sp, nseg + k - a + 1), y));
      }
      PetscCall(PetscArraycpy(NNODESingleU(sp, nseg), NNODESingleU(sp, nseg + b - a), sp->mpass));
    }
    if (!o->nobs) PetscCall(PetscArraycpy(y, NNODESingleU(sp, nseg), sp->mpass));
  }
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  sp->kept           = keep;
  o->recorded        = l->training;
  o->stats.nstored   = l->training ? nstates : 0;
  o->stats.actstored = keep ? o->kend * sp->s : (nseg && NNODESingleKeepsStages(l) ? L * sp->s : 0);
  PetscCall(PetscTime(&t1));
  o->stats.tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

/* the adjoint of step k from the state uk (its stages in slot q, or evaluated again first): lam = dL/du_{k+1} becomes
   dL/du_k, and step k's parameter gradient is added */
static PetscErrorCode NNODESingleAdjointStep(NNLayer l, PetscInt n, PetscInt k, const float *uk, PetscInt q, PetscBool recompute)
{
  NNLayer_ODE   *o  = (NNLayer_ODE *)l->data;
  NNODESingle   *sp = &o->single;
  const PetscInt s = sp->s, nc = l->nchildren, m = sp->mpass;
  const float    h = (float)o->h;
  float         *dY = sp->work, *dK = dY + (size_t)s * sp->m, *lam = dK + sp->m, *g[2], *glast;
  PetscInt       maxc = 0;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < nc; c++) maxc = PetscMax(maxc, sp->clen[c]);
  g[0] = lam + sp->m;
  g[1] = g[0] + maxc;
  if (recompute) {
    PetscCall(PetscLogEventBegin(NN_ODERecompute, l, 0, 0, 0));
    PetscCall(NNODESingleStep(l, n, k, uk, q, NULL));
    PetscCall(PetscLogEventEnd(NN_ODERecompute, l, 0, 0, 0));
  }
  PetscCall(NNODESinglePointChildren(l, k, PETSC_TRUE));
  for (PetscInt i = s - 1; i >= 0; i--) {
    PetscBool used = (PetscBool)(sp->b[i] != 0);
    float    *dYi  = dY + (size_t)i * sp->m;
    for (PetscInt j = i + 1; j < s; j++) used = (PetscBool)(used || sp->a[j * s + i] != 0);
    if (!used) { /* K_i does not enter the step (a zero weight, read by no later stage) */
      PetscCall(PetscArrayzero(dYi, m));
      continue;
    }
    {
      const float wb = h * (float)sp->b[i];
      for (PetscInt e = 0; e < m; e++) dK[e] = wb * lam[e];
      for (PetscInt j = i + 1; j < s; j++) {
        const float  w  = h * (float)sp->a[j * s + i];
        const float *dj = dY + (size_t)j * sp->m;
        if (w != 0)
          for (PetscInt e = 0; e < m; e++) dK[e] += w * dj[e];
      }
    }
    glast = dK;
    for (PetscInt c = nc - 1; c >= 0; c--) {
      float *gin = c ? g[c % 2] : (o->timeinput ? g[1] + maxc : dYi);
      PetscCall(NNLayerBackwardSingle(l->children[c], n, c ? o->f.out[c - 1] : (o->timeinput ? o->fld.fin : o->f.out[nc - 1]), c ? NNODESingleOut(sp, q, i, c - 1) : NNODESingleIn(sp, q, i), NNODESingleOut(sp, q, i, c), glast, gin));
      glast = gin;
    }
    if (o->timeinput) /* the state's part of d[Y_i, t] */
      for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(dYi + r * o->S, glast + r * o->Sin, o->S));
  }
  for (PetscInt i = 0; i < s; i++) {
    const float *dYi = dY + (size_t)i * sp->m;
    for (PetscInt e = 0; e < m; e++) lam[e] += dYi[e];
  }
  PetscCall(PetscLogFlops(2.0 * m * (s * (s + 1) / 2 + s)));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardSingle_ODE(NNLayer l, PetscInt n, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNLayer_ODE   *o   = (NNLayer_ODE *)l->data;
  NNODESingle   *sp  = &o->single;
  float         *lam = sp->work + (size_t)(sp->s + 1) * sp->m;
  PetscInt       L, nseg, nstates;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCheck(o->recorded && o->n == n, PetscObjectComm((PetscObject)l), PETSC_ERR_ORDER, "ODE block %s: the backward pass needs a forward pass in training mode on the same batch (%" PetscInt_FMT " samples) first", ((PetscObject)l)->name, n);
  PetscCall(PetscTime(&t0));
  NNODESegments(l, &L, &nseg, &nstates);
  if (o->nobs) PetscCall(PetscArrayzero(lam, sp->mpass)); /* each observation's part of dy joins at its step */
  else PetscCall(PetscArraycpy(lam, dy, sp->mpass));
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  if (!nseg)
    for (PetscInt k = o->kend - 1; k >= 0; k--) {
      PetscCall(NNODESingleAddObservation(l, n, k + 1, dy, lam));
      PetscCall(NNODESingleAdjointStep(l, n, k, NNODESingleU(sp, k), sp->kept ? k : 0, (PetscBool)!sp->kept));
    }
  else {
    const PetscBool keep = NNODESingleKeepsStages(l); /* the segment's stages kept while its states are made again */
    for (PetscInt g = nseg - 1; g >= 0; g--) {
      const PetscInt a = g * L, b = PetscMin(o->kend, a + L);
      PetscCall(PetscLogEventBegin(NN_ODERecompute, l, 0, 0, 0));
      PetscCall(PetscArraycpy(NNODESingleU(sp, nseg), NNODESingleU(sp, g), sp->mpass));
      for (PetscInt k = a; k < b; k++) PetscCall(NNODESingleStep(l, n, k, NNODESingleU(sp, nseg + k - a), keep ? k - a : 0, NNODESingleU(sp, nseg + k - a + 1)));
      PetscCall(PetscLogEventEnd(NN_ODERecompute, l, 0, 0, 0));
      for (PetscInt k = b - 1; k >= a; k--) {
        PetscCall(NNODESingleAddObservation(l, n, k + 1, dy, lam));
        PetscCall(NNODESingleAdjointStep(l, n, k, NNODESingleU(sp, nseg + k - a), keep ? k - a : 0, (PetscBool)!keep));
      }
    }
  }
  PetscCall(NNODESingleAddObservation(l, n, 0, dy, lam));
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  PetscCall(NNODEPointChildren(l, 0, NULL));
  if (dx) PetscCall(PetscArraycpy(dx, lam, sp->mpass));
  o->recorded = PETSC_FALSE;
  PetscCall(PetscTime(&t1));
  o->stats.tadj += t1 - t0;
  PetscFunctionReturn(0);
}
