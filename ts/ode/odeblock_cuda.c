/*
   The neural-ODE block on a device (-nn_device cuda): the explicit schemes of odeblock_single.c (an explicit RK tableau
   of the block's TS, or the discrete scheme's forward Euler) with the same stage recursion and exact discrete adjoint,
   on device arrays in the precision of the passes (double or float), through the children's device passes. NNView()
   and the configurations that qualify are those of the float passes (NNODESingleSelect()), checkpointing included
   (NNODESegments()), observation times and time input; the others (implicit integrators, MGRIT) have no device
   passes, and NNSetUp() names the block.

   Arithmetic matches the CPU: in single precision the stage weights h a_ij and h b_i are rounded to float as the float
   passes round them; in double the sums are those of the discrete adjoint (TSAdjoint's, up to the order of additions).
*/
#include <petnn/private/odeimpl.h>
#include <petnn/private/cudaimpl.h>

/* the device arrays for a pass: the states (NNODESegments()), the stage data of 'slots' steps, and the adjoint's work */
static PetscErrorCode NNODEDeviceArrays(NNLayer l, PetscInt slots)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  NNODESingle *sp = &o->single;
  NNODEDevice *d  = &o->device;
  PetscInt     maxc = 0, L, nseg, nstates;
  size_t       es   = l->dev.prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);

  PetscFunctionBegin;
  PetscCall(NNODESingleLayout(l));
  NNODESegments(l, &L, &nseg, &nstates);
  if (d->es != es) PetscCall(NNODEDeviceReset(l)); /* the precision changed */
  d->es = es;
  for (PetscInt c = 0; c < l->nchildren; c++) maxc = PetscMax(maxc, sp->clen[c]);
  if (d->nu < nstates) {
    PetscCall(NNDeviceFree(&d->u));
    PetscCall(NNCUDAMalloc((size_t)nstates * sp->m * es, &d->u));
    d->nu = nstates;
  }
  if (d->nstages < slots * sp->s) {
    PetscCall(NNDeviceFree(&d->stages));
    PetscCall(NNCUDAMalloc((size_t)slots * sp->s * sp->slot * es, &d->stages));
    d->nstages = slots * sp->s;
  }
  if (!d->work) PetscCall(NNCUDAMalloc(((size_t)(sp->s + 2) * sp->m + 2 * maxc + sp->mt) * es, &d->work)); /* dY_0..dY_{s-1}, dK, lambda, two child gradients, d[Y, t] */
  PetscFunctionReturn(0);
}

/* entry offsets into the device arrays */
static inline void *NNODEDevAt(void *base, size_t es, size_t off)
{
  return (char *)base + off * es;
}

static inline void *NNODEDevY(NNLayer_ODE *o, PetscInt q, PetscInt i)
{
  return NNODEDevAt(o->device.stages, o->device.es, (size_t)(q * o->single.s + i) * o->single.slot);
}

/* f's input at stage i: [Y_i, t] with time input, else Y_i */
static inline void *NNODEDevIn(NNLayer_ODE *o, PetscInt q, PetscInt i)
{
  return NNODEDevAt(NNODEDevY(o, q, i), o->device.es, o->single.mt ? (size_t)o->single.m : 0);
}

static inline void *NNODEDevOut(NNLayer_ODE *o, PetscInt q, PetscInt i, PetscInt c)
{
  size_t off = (size_t)(q * o->single.s + i) * o->single.slot + o->single.m + o->single.mt;
  for (PetscInt e = 0; e < c; e++) off += o->single.clen[e];
  return NNODEDevAt(o->device.stages, o->device.es, off);
}

/* the stage weight h w as the passes of this precision round it */
static inline double NNODEDevWeight(NNLayer l, PetscReal h, PetscReal w)
{
  return l->dev.prec == NN_PRECISION_SINGLE ? (double)((float)h * (float)w) : h * w;
}

/* points the children at step k's device parameters and the device gradient (grad: else none) */
static PetscErrorCode NNODEDevicePointChildren(NNLayer l, PetscInt k, PetscBool grad)
{
  NNLayer_ODE   *o   = (NNLayer_ODE *)l->data;
  const PetscInt off = l->nparam + (o->params == NNODE_PARAMETERS_PER_STEP ? k : 0) * o->P;
  const size_t   es  = o->device.es;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch    = l->children[c];
    ch->dev.prec   = l->dev.prec;
    ch->dev.tf32   = l->dev.tf32;
    ch->dev.theta  = (const char *)l->dev.theta + (size_t)(off + o->cpoff[c]) * es;
    ch->dev.dtheta = grad ? (char *)l->dev.dtheta + (size_t)(off + o->cpoff[c]) * es : NULL;
  }
  PetscFunctionReturn(0);
}

/* the stages of step k from u (= u_k) into slot q, and with unew != NULL the next state */
static PetscErrorCode NNODEDeviceStep(NNLayer l, PetscInt n, PetscInt k, const void *u, PetscInt q, void *unew, cudaStream_t st)
{
  NNLayer_ODE   *o  = (NNLayer_ODE *)l->data;
  NNODESingle   *sp = &o->single;
  const PetscInt s = sp->s, nc = l->nchildren, m = sp->mpass;
  const size_t   es = o->device.es;
  const int      single = l->dev.prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  PetscCall(NNODEDevicePointChildren(l, k, PETSC_FALSE));
  for (PetscInt i = 0; i < s; i++) {
    void *Y = NNODEDevY(o, q, i);
    NNCallCUDA(cudaMemcpyAsync(Y, u, (size_t)m * es, cudaMemcpyDeviceToDevice, st));
    for (PetscInt j = 0; j < i; j++)
      if (sp->a[i * s + j] != 0) NNCallCUDA(NNCUDAAxpy(single, (size_t)m, NNODEDevWeight(l, o->h, sp->a[i * s + j]), NNODEDevOut(o, q, j, nc - 1), Y, st));
    if (o->timeinput) { /* f's input [Y_i, t_k + c_i h] per sample: the states' rows, then the time column from the host */
      void        *Yt = NNODEDevIn(o, q, i);
      const double t  = k * o->h + sp->c[i] * o->h;
      char        *col;
      PetscCall(PetscMalloc1((size_t)PetscMax(n, 1) * es, &col));
      for (PetscInt r = 0; r < n; r++) {
        if (single) ((float *)col)[r] = (float)t;
        else ((double *)col)[r] = t;
      }
      NNCallCUDA(cudaMemcpy2DAsync(Yt, (size_t)o->Sin * es, Y, (size_t)o->S * es, (size_t)o->S * es, (size_t)n, cudaMemcpyDeviceToDevice, st));
      NNCallCUDA(cudaMemcpy2DAsync((char *)Yt + (size_t)o->S * es, (size_t)o->Sin * es, col, es, es, (size_t)n, cudaMemcpyHostToDevice, st));
      NNCallCUDA(cudaStreamSynchronize(st)); /* col is freed next */
      PetscCall(PetscFree(col));
    }
    for (PetscInt c = 0; c < nc; c++) PetscCall((*l->children[c]->ops->forwarddevice)(l->children[c], NNLayerDeviceSamples(l->children[c], (PetscBool) !!o->dm, n), c ? NNODEDevOut(o, q, i, c - 1) : NNODEDevIn(o, q, i), NNODEDevOut(o, q, i, c)));
  }
  if (unew) {
    NNCallCUDA(cudaMemcpyAsync(unew, u, (size_t)m * es, cudaMemcpyDeviceToDevice, st));
    for (PetscInt i = 0; i < s; i++)
      if (sp->b[i] != 0) NNCallCUDA(NNCUDAAxpy(single, (size_t)m, NNODEDevWeight(l, o->h, sp->b[i]), NNODEDevOut(o, q, i, nc - 1), unew, st));
  }
  PetscCall(PetscLogFlops(2.0 * m * (s * (s - 1) / 2 + s)));
  PetscFunctionReturn(0);
}

/* the state i of the arrays of NNODESegments() */
static inline void *NNODEDevU(NNLayer_ODE *o, PetscInt i)
{
  return NNODEDevAt(o->device.u, o->device.es, (size_t)i * o->single.m);
}

/* observation times: state u_k into its place of the output [n][nobs][S] (a strided copy), and that place of dy added
   to lambda (odeblock_single.c's, on device arrays) */
static PetscErrorCode NNODEDeviceObserve(NNLayer l, PetscInt n, PetscInt k, const void *u, void *y, cudaStream_t st)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  size_t       es = o->device.es, row = (size_t)o->S * es;
  PetscInt     j;

  PetscFunctionBegin;
  PetscCall(NNODEObservationIndex(l, k, &j));
  if (j < 0 || !n) PetscFunctionReturn(0);
  NNCallCUDA(cudaMemcpy2DAsync((char *)y + (size_t)j * row, (size_t)o->nobs * row, u, row, row, (size_t)n, cudaMemcpyDeviceToDevice, st));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEDeviceAddObservation(NNLayer l, PetscInt n, PetscInt k, const void *dy, void *lam, cudaStream_t st)
{
  NNLayer_ODE *o  = (NNLayer_ODE *)l->data;
  size_t       es = o->device.es;
  PetscInt     j;

  PetscFunctionBegin;
  PetscCall(NNODEObservationIndex(l, k, &j));
  if (j < 0) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) NNCallCUDA(NNCUDAAxpy(l->dev.prec == NN_PRECISION_SINGLE, (size_t)o->S, 1.0, (const char *)dy + (size_t)(i * o->nobs + j) * o->S * es, (char *)lam + (size_t)i * o->S * es, st));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_ODE(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_ODE   *o    = (NNLayer_ODE *)l->data;
  NNODESingle   *sp   = &o->single;
  NNODEDevice   *d    = &o->device;
  PetscBool      keep = NNODESingleKeepsStages(l);
  PetscInt       L, nseg, nstates;
  size_t         bytes;
  cudaStream_t   st;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  PetscCall(NNCUDAGetStream(&st));
  o->n = n;
  NNODESegments(l, &L, &nseg, &nstates);
  if (nseg) keep = PETSC_FALSE; /* checkpointing: the backward pass makes the stages again, a segment at a time */
  PetscCall(NNODEDeviceArrays(l, keep ? o->kend : (nseg && NNODESingleKeepsStages(l) ? L : 1)));
  sp->mpass = o->dm ? sp->m : n * o->S; /* a spatial state: every batch slot */
  bytes     = (size_t)sp->mpass * d->es;
  PetscCall(PetscLogEventBegin(NN_ODEForward, l, 0, 0, 0));
  PetscCall(NNODEDeviceObserve(l, n, 0, x, y, st));
  if (!nseg) {
    NNCallCUDA(cudaMemcpyAsync(d->u, x, bytes, cudaMemcpyDeviceToDevice, st));
    for (PetscInt k = 0; k < o->kend; k++) {
      PetscCall(NNODEDeviceStep(l, n, k, NNODEDevU(o, k), keep ? k : 0, NNODEDevU(o, k + 1), st));
      PetscCall(NNODEDeviceObserve(l, n, k + 1, NNODEDevU(o, k + 1), y, st));
    }
    if (!o->nobs) NNCallCUDA(cudaMemcpyAsync(y, NNODEDevU(o, o->kend), bytes, cudaMemcpyDeviceToDevice, st));
  } else { /* each segment's start kept, its steps through the segment's states */
    NNCallCUDA(cudaMemcpyAsync(NNODEDevU(o, nseg), x, bytes, cudaMemcpyDeviceToDevice, st));
    for (PetscInt g = 0; g < nseg; g++) {
      const PetscInt a = g * L, b = PetscMin(o->kend, a + L);
      NNCallCUDA(cudaMemcpyAsync(NNODEDevU(o, g), NNODEDevU(o, nseg), bytes, cudaMemcpyDeviceToDevice, st));
      for (PetscInt k = a; k < b; k++) {
        PetscCall(NNODEDeviceStep(l, n, k, NNODEDevU(o, nseg + k - a), 0, NNODEDevU(o, nseg + k - a + 1), st));
        PetscCall(NNODEDeviceObserve(l, n, k + 1, NNODEDevU(o, nseg + k - a + 1), y, st));
      }
      NNCallCUDA(cudaMemcpyAsync(NNODEDevU(o, nseg), NNODEDevU(o, nseg + b - a), bytes, cudaMemcpyDeviceToDevice, st));
    }
    if (!o->nobs) NNCallCUDA(cudaMemcpyAsync(y, NNODEDevU(o, nseg), bytes, cudaMemcpyDeviceToDevice, st));
  }
  PetscCall(PetscLogEventEnd(NN_ODEForward, l, 0, 0, 0));
  d->kept            = keep;
  o->recorded        = l->training;
  o->stats.nstored   = l->training ? nstates : 0;
  o->stats.actstored = keep ? o->kend * sp->s : (nseg && NNODESingleKeepsStages(l) ? L * sp->s : 0);
  PetscCall(PetscTime(&t1));
  o->stats.tfwd += t1 - t0;
  PetscFunctionReturn(0);
}

/* the adjoint of step k from the state uk (its stages in slot q, or evaluated again first): lam = dL/du_{k+1} becomes
   dL/du_k, and step k's parameter gradient is added (odeblock_single.c's, on device arrays) */
static PetscErrorCode NNODEDeviceAdjointStep(NNLayer l, PetscInt n, PetscInt k, const void *uk, PetscInt q, PetscBool recompute, cudaStream_t st)
{
  NNLayer_ODE   *o  = (NNLayer_ODE *)l->data;
  NNODESingle   *sp = &o->single;
  NNODEDevice   *d  = &o->device;
  const PetscInt s = sp->s, nc = l->nchildren, m = sp->mpass;
  const size_t   es     = d->es;
  const int      single = l->dev.prec == NN_PRECISION_SINGLE;
  void          *dY = d->work, *dK = NNODEDevAt(d->work, es, (size_t)s * sp->m), *lam = NNODEDevAt(dK, es, sp->m), *g[2], *glast;
  PetscInt       maxc = 0;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < nc; c++) maxc = PetscMax(maxc, sp->clen[c]);
  g[0] = NNODEDevAt(lam, es, sp->m);
  g[1] = NNODEDevAt(g[0], es, maxc);
  if (recompute) {
    PetscCall(PetscLogEventBegin(NN_ODERecompute, l, 0, 0, 0));
    PetscCall(NNODEDeviceStep(l, n, k, uk, q, NULL, st));
    PetscCall(PetscLogEventEnd(NN_ODERecompute, l, 0, 0, 0));
  }
  PetscCall(NNODEDevicePointChildren(l, k, PETSC_TRUE));
  for (PetscInt i = s - 1; i >= 0; i--) {
    PetscBool used = (PetscBool)(sp->b[i] != 0);
    void     *dYi  = NNODEDevAt(dY, es, (size_t)i * sp->m);
    for (PetscInt j = i + 1; j < s; j++) used = (PetscBool)(used || sp->a[j * s + i] != 0);
    if (!used) { /* K_i does not enter the step (a zero weight, read by no later stage) */
      NNCallCUDA(cudaMemsetAsync(dYi, 0, (size_t)m * es, st));
      continue;
    }
    /* dK = h b_i lambda + sum_{j>i} h a_ji dY_j */
    NNCallCUDA(cudaMemsetAsync(dK, 0, (size_t)m * es, st));
    NNCallCUDA(NNCUDAAxpy(single, (size_t)m, NNODEDevWeight(l, o->h, sp->b[i]), lam, dK, st));
    for (PetscInt j = i + 1; j < s; j++)
      if (sp->a[j * s + i] != 0) NNCallCUDA(NNCUDAAxpy(single, (size_t)m, NNODEDevWeight(l, o->h, sp->a[j * s + i]), NNODEDevAt(dY, es, (size_t)j * sp->m), dK, st));
    glast = dK;
    for (PetscInt c = nc - 1; c >= 0; c--) {
      void *gin = c ? g[c % 2] : (o->timeinput ? NNODEDevAt(g[1], es, maxc) : dYi);
      PetscCall((*l->children[c]->ops->backwarddevice)(l->children[c], NNLayerDeviceSamples(l->children[c], (PetscBool) !!o->dm, n), c ? NNODEDevOut(o, q, i, c - 1) : NNODEDevIn(o, q, i), NNODEDevOut(o, q, i, c), glast, gin));
      glast = gin;
    }
    if (o->timeinput) /* the state's part of d[Y_i, t] */
      NNCallCUDA(cudaMemcpy2DAsync(dYi, (size_t)o->S * es, glast, (size_t)o->Sin * es, (size_t)o->S * es, (size_t)n, cudaMemcpyDeviceToDevice, st));
  }
  for (PetscInt i = 0; i < s; i++) NNCallCUDA(NNCUDAAxpy(single, (size_t)m, 1.0, NNODEDevAt(dY, es, (size_t)i * sp->m), lam, st));
  PetscCall(PetscLogFlops(2.0 * m * (s * (s + 1) / 2 + s)));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_ODE(NNLayer l, PetscInt n, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_ODE   *o     = (NNLayer_ODE *)l->data;
  NNODESingle   *sp    = &o->single;
  NNODEDevice   *d     = &o->device;
  void          *lam   = NNODEDevAt(d->work, d->es, (size_t)(sp->s + 1) * sp->m);
  const size_t   bytes = (size_t)sp->mpass * d->es;
  PetscInt       L, nseg, nstates;
  cudaStream_t   st;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCheck(o->recorded && o->n == n, PetscObjectComm((PetscObject)l), PETSC_ERR_ORDER, "ODE block %s: the backward pass needs a forward pass in training mode on the same batch (%" PetscInt_FMT " samples) first", ((PetscObject)l)->name, n);
  PetscCall(PetscTime(&t0));
  PetscCall(NNCUDAGetStream(&st));
  NNODESegments(l, &L, &nseg, &nstates);
  if (o->nobs) NNCallCUDA(cudaMemsetAsync(lam, 0, bytes, st)); /* each observation's part of dy joins at its step */
  else NNCallCUDA(cudaMemcpyAsync(lam, dy, bytes, cudaMemcpyDeviceToDevice, st));
  PetscCall(PetscLogEventBegin(NN_ODEAdjoint, l, 0, 0, 0));
  if (!nseg)
    for (PetscInt k = o->kend - 1; k >= 0; k--) {
      PetscCall(NNODEDeviceAddObservation(l, n, k + 1, dy, lam, st));
      PetscCall(NNODEDeviceAdjointStep(l, n, k, NNODEDevU(o, k), d->kept ? k : 0, (PetscBool)!d->kept, st));
    }
  else {
    const PetscBool keep = NNODESingleKeepsStages(l); /* the segment's stages kept while its states are made again */
    for (PetscInt g = nseg - 1; g >= 0; g--) {
      const PetscInt a = g * L, b = PetscMin(o->kend, a + L);
      PetscCall(PetscLogEventBegin(NN_ODERecompute, l, 0, 0, 0));
      NNCallCUDA(cudaMemcpyAsync(NNODEDevU(o, nseg), NNODEDevU(o, g), bytes, cudaMemcpyDeviceToDevice, st));
      for (PetscInt k = a; k < b; k++) PetscCall(NNODEDeviceStep(l, n, k, NNODEDevU(o, nseg + k - a), keep ? k - a : 0, NNODEDevU(o, nseg + k - a + 1), st));
      PetscCall(PetscLogEventEnd(NN_ODERecompute, l, 0, 0, 0));
      for (PetscInt k = b - 1; k >= a; k--) {
        PetscCall(NNODEDeviceAddObservation(l, n, k + 1, dy, lam, st));
        PetscCall(NNODEDeviceAdjointStep(l, n, k, NNODEDevU(o, nseg + k - a), keep ? k - a : 0, (PetscBool)!keep, st));
      }
    }
  }
  PetscCall(NNODEDeviceAddObservation(l, n, 0, dy, lam, st));
  PetscCall(PetscLogEventEnd(NN_ODEAdjoint, l, 0, 0, 0));
  if (dx) NNCallCUDA(cudaMemcpyAsync(dx, lam, bytes, cudaMemcpyDeviceToDevice, st));
  o->recorded = PETSC_FALSE;
  PetscCall(PetscTime(&t1));
  o->stats.tadj += t1 - t0;
  PetscFunctionReturn(0);
}
