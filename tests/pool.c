static char help[] = "Pooling and upsampling on the spatial (DMDA) layout: maxpool2d/3d, avgpool2d/3d, global_avgpool,\n"
                     "upsample. For each configuration: forward and backward against a naive serial reference in\n"
                     "PyTorch layout (ties included), the dot-product adjoint test on the DMDA Vecs, a network's\n"
                     "loss and gradients on the run's communicator against a serial copy on PETSC_COMM_SELF, and\n"
                     "central finite differences; a CNN (conv2d, relu, maxpool2d, conv2d, avgpool2d) and a 3-d\n"
                     "network on N ranks against 1; clear errors for bad input.\n\n"
                     "  -verbose   print the measured errors\n"
                     "  -fd <bool> run the finite-difference checks (default true)\n"
                     "  -bench     time maxpool2d/avgpool2d on the CNN's shapes (batch 128) against VecCopy\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool       verbose = PETSC_FALSE, fdcheck = PETSC_TRUE;
static const PetscReal tol     = 1e-12;

#define NB 3 /* batch capacity; most checks use n = 2 so unused slots must not leak */

typedef struct {
  NNLayerType type;
  PetscInt    k, s, p; /* pooling (s = 0: the kernel size) */
  PetscInt    scale;   /* upsample */
  PetscInt    ndim;    /* sample rank: 3 (C,H,W) or 4 (C,D,H,W) */
  PetscInt    shape[4];
  PetscBool   fd; /* finite-difference check */
} Case;

static PetscErrorCode CaseName(const Case *c, size_t len, char name[])
{
  NNShape s;
  char    sh[64];

  PetscFunctionBegin;
  PetscCall(NNShapeSet(&s, c->ndim, c->shape));
  PetscCall(NNShapeToString(&s, sizeof(sh), sh));
  if (c->scale) PetscCall(PetscSNPrintf(name, len, "%s scale %" PetscInt_FMT " on %s", c->type, c->scale, sh));
  else if (c->k) PetscCall(PetscSNPrintf(name, len, "%s k%" PetscInt_FMT " s%" PetscInt_FMT " p%" PetscInt_FMT " on %s", c->type, c->k, c->s ? c->s : c->k, c->p, sh));
  else PetscCall(PetscSNPrintf(name, len, "%s on %s", c->type, sh));
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char what[], PetscReal a, PetscReal b)
{
  PetscReal err = PetscAbsReal(a - b) / PetscMax(PetscMax(PetscAbsReal(a), PetscAbsReal(b)), 1e-300);

  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.17g vs %.17g, rel. error %.3e\n", what, (double)a, (double)b, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g (%.17g vs %.17g)", what, (double)err, (double)tol, (double)a, (double)b);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rel. error < 1e-12\n", what));
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| over m entries of replicated arrays */
static PetscErrorCode ReportArrays(const char what[], PetscInt m, const PetscScalar *a, const PetscScalar *b)
{
  PetscReal e = 0, nb = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < m; i++) {
    e += PetscSqr(PetscRealPart(a[i] - b[i]));
    nb += PetscSqr(PetscRealPart(b[i]));
  }
  e  = PetscSqrtReal(e);
  nb = PetscSqrtReal(nb);
  PetscCall(Report(what, nb + e, nb));
  PetscFunctionReturn(0);
}

static PetscErrorCode NewRandom(MPI_Comm comm, unsigned long seed, PetscRandom *r)
{
  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(comm, r));
  PetscCall(PetscRandomSetInterval(*r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(*r, seed));
  PetscCall(PetscRandomSeed(*r));
  PetscFunctionReturn(0);
}

/* the same random numbers on every rank (replicated Vecs) */
static PetscErrorCode FillReplicated(Vec v, unsigned long seed)
{
  PetscRandom  r;
  PetscScalar *a;
  PetscInt     m;

  PetscFunctionBegin;
  PetscCall(NewRandom(PETSC_COMM_SELF, seed, &r));
  PetscCall(VecGetLocalSize(v, &m));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < m; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(VecRestoreArray(v, &a));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* replicated values in {-1, 0, 1}: many ties in every window */
static PetscErrorCode FillTies(Vec v, unsigned long seed)
{
  PetscScalar *a;
  PetscInt     m;

  PetscFunctionBegin;
  PetscCall(FillReplicated(v, seed));
  PetscCall(VecGetLocalSize(v, &m));
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < m; i++) a[i] = PetscMin(PetscFloorReal(1.5 * (PetscRealPart(a[i]) + 1.0)), 2.0) - 1.0;
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

/* replicated, pairwise at least 2/m apart (a permutation of a uniform grid): no near-ties for finite differences */
static PetscErrorCode FillSeparated(Vec v)
{
  PetscScalar *a;
  PetscInt     m;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &m));
  PetscCheck(m % 7919, PETSC_COMM_SELF, PETSC_ERR_SUP, "size must not be a multiple of 7919");
  PetscCall(VecGetArray(v, &a));
  for (PetscInt i = 0; i < m; i++) a[i] = -1.0 + 2.0 * ((PetscReal)((PetscInt64)i * 7919 % m) + 0.5) / m;
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

/* global random values */
static PetscErrorCode FillGlobal(Vec v)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetFromOptions(r));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* <a, b>: the global dot product of DMDA Vecs, the (identical) local one of replicated sequential Vecs */
static PetscErrorCode Dot(Vec a, Vec b, PetscReal *d)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(a, &dm));
  if (dm) {
    PetscScalar s;
    PetscCall(VecDot(a, b, &s));
    *d = PetscRealPart(s);
  } else {
    const PetscScalar *x, *y;
    PetscInt           n;
    PetscCall(VecGetLocalSize(a, &n));
    PetscCall(VecGetArrayRead(a, &x));
    PetscCall(VecGetArrayRead(b, &y));
    *d = 0;
    for (PetscInt i = 0; i < n; i++) *d += PetscRealPart(x[i] * y[i]);
    PetscCall(VecRestoreArrayRead(b, &y));
    PetscCall(VecRestoreArrayRead(a, &x));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- naive reference in PyTorch layout */

typedef struct {
  PetscInt C, N[3], No[3], k, s, p, scale; /* N, No: x, y, z extents (z = 1 in 2-d) */
  PetscInt kz;                             /* window depth: k in 3-d, 1 in 2-d */
} RefGeom;

static void RefSetUp(const Case *c, const NNShape *out, RefGeom *g)
{
  PetscInt nd = c->ndim - 1;

  g->C     = c->shape[0];
  g->k     = c->k;
  g->s     = c->s ? c->s : c->k;
  g->p     = c->p;
  g->scale = c->scale;
  g->kz    = nd == 3 ? c->k : 1;
  for (PetscInt a = 0; a < 3; a++) {
    g->N[a]  = a < nd ? c->shape[nd - a] : 1;
    g->No[a] = a < nd && out->ndim > 1 ? out->dim[nd - a] : 1;
  }
}

/* index of (s, c, z, y, x) in [s][c][z][y][x] with extents n */
static inline PetscInt RefIdx(const RefGeom *g, const PetscInt n[3], PetscInt s, PetscInt c, PetscInt z, PetscInt y, PetscInt x)
{
  return (((s * g->C + c) * n[2] + z) * n[1] + y) * n[0] + x;
}

/* y = F(x), dx = F'(x)^T dy for the first n samples (dx zeroed here) */
static PetscErrorCode RefApply(const Case *c, const RefGeom *g, PetscInt n, const PetscScalar *x, const PetscScalar *dy, PetscScalar *y, PetscScalar *dx)
{
  PetscBool max = PETSC_FALSE, avg = PETSC_FALSE, up = PETSC_FALSE, glob = PETSC_FALSE;
  PetscInt  npix = g->N[0] * g->N[1] * g->N[2];

  PetscFunctionBegin;
  PetscCall(PetscStrbeginswith(c->type, "maxpool", &max));
  PetscCall(PetscStrbeginswith(c->type, "avgpool", &avg));
  PetscCall(PetscStrcmp(c->type, NNLAYERUPSAMPLE, &up));
  PetscCall(PetscStrcmp(c->type, NNLAYERGLOBALAVGPOOL, &glob));
  PetscCall(PetscArrayzero(dx, n * g->C * npix));
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt ch = 0; ch < g->C; ch++) {
      if (glob) {
        PetscScalar sum = 0;
        for (PetscInt i = 0; i < npix; i++) sum += x[(s * g->C + ch) * npix + i];
        y[s * g->C + ch] = sum / npix;
        for (PetscInt i = 0; i < npix; i++) dx[(s * g->C + ch) * npix + i] = dy[s * g->C + ch] / npix;
        continue;
      }
      for (PetscInt oz = 0; oz < g->No[2]; oz++)
        for (PetscInt oy = 0; oy < g->No[1]; oy++)
          for (PetscInt ox = 0; ox < g->No[0]; ox++) {
            PetscInt o = RefIdx(g, g->No, s, ch, oz, oy, ox);
            if (up) {
              PetscInt i = RefIdx(g, g->N, s, ch, oz / g->scale, oy / g->scale, ox / g->scale);
              y[o]       = x[i];
              dx[i] += dy[o];
            } else if (max) { /* PyTorch: maxval = -inf, index = first valid tap; replace if val > maxval or isnan(val) */
              PetscScalar m  = -PETSC_INFINITY;
              PetscInt    am = -1;
              for (PetscInt tz = 0; tz < g->kz; tz++)
                for (PetscInt ty = 0; ty < g->k; ty++)
                  for (PetscInt tx = 0; tx < g->k; tx++) {
                    PetscInt iz = g->kz > 1 ? oz * g->s - g->p + tz : 0, iy = oy * g->s - g->p + ty, ix = ox * g->s - g->p + tx, i;
                    if (iz < 0 || iz >= g->N[2] || iy < 0 || iy >= g->N[1] || ix < 0 || ix >= g->N[0]) continue;
                    i = RefIdx(g, g->N, s, ch, iz, iy, ix);
                    if (am < 0) am = i;
                    if (x[i] > m || x[i] != x[i]) {
                      m  = x[i];
                      am = i;
                    }
                  }
              y[o] = m;
              dx[am] += dy[o];
            } else if (avg) { /* count_include_pad: divide by the full window */
              PetscScalar sum = 0;
              PetscInt    K   = g->kz * g->k * g->k;
              for (PetscInt pass = 0; pass < 2; pass++)
                for (PetscInt tz = 0; tz < g->kz; tz++)
                  for (PetscInt ty = 0; ty < g->k; ty++)
                    for (PetscInt tx = 0; tx < g->k; tx++) {
                      PetscInt iz = g->kz > 1 ? oz * g->s - g->p + tz : 0, iy = oy * g->s - g->p + ty, ix = ox * g->s - g->p + tx, i;
                      if (iz < 0 || iz >= g->N[2] || iy < 0 || iy >= g->N[1] || ix < 0 || ix >= g->N[0]) continue;
                      i = RefIdx(g, g->N, s, ch, iz, iy, ix);
                      if (pass == 0) sum += x[i];
                      else dx[i] += dy[o] / K;
                    }
              y[o] = sum / K;
            }
          }
    }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- networks */

static PetscErrorCode AddCaseLayer(NN net, const Case *c)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNAddLayer(net, c->type, "L", &l));
  if (c->k) PetscCall(NNLayerPoolSetKernelSize(l, c->k));
  if (c->s) PetscCall(NNLayerPoolSetStride(l, c->s));
  PetscCall(NNLayerPoolSetPadding(l, c->p));
  if (c->scale) PetscCall(NNLayerUpsampleSetScale(l, c->scale));
  PetscFunctionReturn(0);
}

/* to_spatial (sp in 2-d, sq in 3-d, so each has its own rank-grid options) -> the case's layer ->
   spatial_flatten (when the output is spatial) [-> dense with that many units] */
static PetscErrorCode BuildNet(MPI_Comm comm, const char prefix[], const Case *c, PetscInt dense, NNLossType loss, NN *net)
{
  PetscBool glob;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(c->type, NNLAYERGLOBALAVGPOOL, &glob));
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, c->ndim, c->shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, loss));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, c->ndim == 3 ? "sp" : "sq", NULL));
  PetscCall(AddCaseLayer(*net, c));
  if (!glob) PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  if (dense) {
    NNLayer l;
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
    PetscCall(NNLayerDenseSetUnits(l, dense));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* runs layers [0, nl) forward on the first n samples of x */
static PetscErrorCode ChainForward(NN net, PetscInt nl, PetscInt n, Vec x)
{
  const NNLayer *layers;
  const Vec     *act;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, NULL, &layers));
  PetscCall(NNGetActivationVecs(net, NULL, &act, NULL));
  for (PetscInt i = 0; i < nl; i++) PetscCall(NNLayerForward(layers[i], n, i ? act[i] : x, act[i + 1]));
  PetscFunctionReturn(0);
}

/* and backward from dy (the gradient of act[nl]) to dx */
static PetscErrorCode ChainBackward(NN net, PetscInt nl, PetscInt n, Vec x, Vec dy, Vec dx)
{
  const NNLayer *layers;
  const Vec     *act, *dact;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, NULL, &layers));
  PetscCall(NNGetActivationVecs(net, NULL, &act, &dact));
  for (PetscInt i = nl - 1; i >= 0; i--) PetscCall(NNLayerBackward(layers[i], n, i ? act[i] : x, act[i + 1], i == nl - 1 ? dy : dact[i + 1], i ? dact[i] : dx));
  PetscFunctionReturn(0);
}

/* forward and backward through to_spatial -> layer -> spatial_flatten against the naive reference */
static PetscErrorCode CheckReference(NN net, const Case *c, const char name[], PetscBool ties)
{
  PetscInt           nl, n = 2, insize, outsize;
  NNShape            in, out, lout;
  const NNLayer     *layers;
  const Vec         *act;
  RefGeom            g;
  Vec                x, dx, dy;
  const PetscScalar *xa, *ya, *dya, *dxa;
  PetscScalar       *yr, *dxr;
  char               what[256];

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, &nl, &layers));
  PetscCall(NNGetActivationVecs(net, NULL, &act, NULL));
  PetscCall(NNGetInputShape(net, &in));
  insize = NNShapeSize(&in);
  PetscCall(NNGetOutputShape(net, &out));
  outsize = NNShapeSize(&out);
  PetscCall(NNLayerGetOutputShape(layers[1], &lout));
  RefSetUp(c, &lout, &g);
  PetscCall(VecDuplicate(act[0], &x));
  PetscCall(VecDuplicate(act[0], &dx));
  PetscCall(VecDuplicate(act[nl], &dy));
  if (ties) PetscCall(FillTies(x, 3));
  else PetscCall(FillReplicated(x, 3));
  PetscCall(FillReplicated(dy, 4));
  PetscCall(ChainForward(net, nl, n, x));
  PetscCall(ChainBackward(net, nl, n, x, dy, dx));
  PetscCall(PetscMalloc2(n * outsize, &yr, n * insize, &dxr));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(RefApply(c, &g, n, xa, dya, yr, dxr));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(act[nl], &ya));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: output vs reference%s", name, ties ? " (ties)" : ""));
  PetscCall(ReportArrays(what, n * outsize, ya, yr));
  PetscCall(VecRestoreArrayRead(act[nl], &ya));
  PetscCall(VecGetArrayRead(dx, &dxa));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: input gradient vs reference%s", name, ties ? " (ties)" : ""));
  PetscCall(ReportArrays(what, n * insize, dxa, dxr));
  PetscCall(VecRestoreArrayRead(dx, &dxa));
  PetscCall(PetscFree2(yr, dxr));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&dx));
  PetscCall(VecDestroy(&dy));
  PetscFunctionReturn(0);
}

/* <F x, w> = <x, F'(x)^T w> on the layer's own (DMDA) Vecs, all NB slots; F is linear except max
   pooling, which is linear in x for a fixed argmax pattern (distinct random values) */
static PetscErrorCode CheckAdjoint(NN net, const char name[])
{
  NNLayer        L;
  const NNLayer *layers;
  const Vec     *act;
  Vec            w, dxs;
  DM             dm;
  PetscReal      a, b;
  char           what[256];

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, NULL, &layers));
  PetscCall(NNGetActivationVecs(net, NULL, &act, NULL));
  L = layers[1];
  PetscCall(FillGlobal(act[1]));
  PetscCall(VecDuplicate(act[2], &w));
  PetscCall(VecGetDM(w, &dm));
  if (dm) PetscCall(FillGlobal(w));
  else PetscCall(FillReplicated(w, 9));
  PetscCall(VecDuplicate(act[1], &dxs));
  PetscCall(NNLayerForward(L, NB, act[1], act[2]));
  PetscCall(Dot(act[2], w, &a));
  PetscCall(NNLayerBackward(L, NB, act[1], act[2], w, dxs));
  PetscCall(Dot(act[1], dxs, &b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: adjoint <F x, w> = <x, F* w>", name));
  PetscCall(Report(what, a, b));
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&dxs));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillBatch(NN net, PetscBool labels, PetscBool separated, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  if (separated) PetscCall(FillSeparated(*x));
  else PetscCall(FillReplicated(*x, 11));
  PetscCall(FillReplicated(*t, 12));
  if (labels) {
    PetscCall(VecGetLocalSize(*t, &nt));
    PetscCall(VecGetArray(*t, &a));
    for (PetscInt i = 0; i < nt; i++) a[i] = (PetscInt)(2.5 * (a[i] + 1.0)) % 5;
    PetscCall(VecRestoreArray(*t, &a));
  }
  PetscFunctionReturn(0);
}

/* loss, parameter and input gradients of par (run's communicator) and ser (PETSC_COMM_SELF) agree */
static PetscErrorCode CompareNets(NN par, NN ser, const char name[])
{
  Vec       x, t, dxp, dxs, gp, gs;
  PetscReal Lp, Ls, e, nrm;
  PetscInt  n = 2;
  char      what[256];

  PetscFunctionBegin;
  PetscCall(NNGetParameters(par, &gp));
  PetscCall(NNGetParameters(ser, &gs));
  {
    PetscBool same;
    PetscCall(VecEqual(gp, gs, &same)); /* VecEqual of SEQ Vecs is local */
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the parallel and serial networks were initialized differently");
  }
  PetscCall(FillBatch(par, PETSC_TRUE, PETSC_FALSE, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(NNLossGradient(par, n, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, n, x, t, &Ls, dxs));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: loss, run's communicator vs serial copy", name));
  PetscCall(Report(what, Lp, Ls));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(VecNorm(gs, NORM_2, &nrm));
  PetscCall(VecAXPY(gp, -1.0, gs));
  PetscCall(VecNorm(gp, NORM_2, &e));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: parameter gradient vs serial copy", name));
  PetscCall(Report(what, nrm + e, nrm));
  PetscCall(VecNorm(dxs, NORM_2, &nrm));
  PetscCall(VecAXPY(dxp, -1.0, dxs));
  PetscCall(VecNorm(dxp, NORM_2, &e));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: input gradient vs serial copy", name));
  PetscCall(Report(what, nrm + e, nrm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckFiniteDifferences(const Case *c, const char name[])
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildNet(PETSC_COMM_WORLD, NULL, c, 0, NNLOSSMSE, &net)); /* MSE on the layer's output: every input entry is checked */
  PetscCall(FillBatch(net, PETSC_FALSE, PETSC_TRUE, &x, &t));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: finite differences\n", name));
  PetscCall(NNGradientCheck(net, 1, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  finite differences: parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: finite-difference check failed: %g %g", name, (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckCase(const Case *c)
{
  NN        net, par, ser;
  PetscBool max;
  char      name[128];

  PetscFunctionBegin;
  PetscCall(CaseName(c, sizeof(name), name));
  PetscCall(PetscStrbeginswith(c->type, "maxpool", &max));
  PetscCall(BuildNet(PETSC_COMM_WORLD, NULL, c, 0, NNLOSSMSE, &net));
  if (verbose) {
    const NNLayer *layers;
    PetscCall(NNGetLayers(net, NULL, &layers));
    PetscCall(NNLayerView(layers[1], PETSC_VIEWER_STDOUT_WORLD));
  }
  PetscCall(CheckReference(net, c, name, PETSC_FALSE));
  if (max) PetscCall(CheckReference(net, c, name, PETSC_TRUE));
  PetscCall(CheckAdjoint(net, name));
  PetscCall(NNDestroy(&net));
  PetscCall(BuildNet(PETSC_COMM_WORLD, NULL, c, 5, NNLOSSCROSSENTROPY, &par));
  PetscCall(BuildNet(PETSC_COMM_SELF, "serial_", c, 5, NNLOSSCROSSENTROPY, &ser));
  PetscCall(CompareNets(par, ser, name));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  if (c->fd && fdcheck) PetscCall(CheckFiniteDifferences(c, name));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- networks of several layers */

/* to_spatial -> conv2d k3 -> relu -> maxpool2d -> conv2d k3 -> avgpool2d -> spatial_flatten -> dense on
   (1,12,28): 28 -> 14 -> 7 wide, split 10/9/9 -> 5/5/4 -> 3/2/2 over three ranks */
static PetscErrorCode BuildCNN(MPI_Comm comm, const char prefix[], NN *net)
{
  NNLayer  l;
  PetscInt shape[] = {1, 12, 28};

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 7));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 4));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "a1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "mp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c2", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNAddLayer(*net, NNLAYERAVGPOOL2D, "ap", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* to_spatial -> maxpool3d k3 s2 p1 -> upsample 2 -> avgpool3d k3 s1 p1 -> global_avgpool -> dense on (2,4,6,6) */
static PetscErrorCode Build3d(MPI_Comm comm, const char prefix[], NN *net)
{
  NNLayer  l;
  PetscInt shape[] = {2, 4, 6, 6};

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 4, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 8));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sq", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL3D, "mp", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 3));
  PetscCall(NNLayerPoolSetStride(l, 2));
  PetscCall(NNLayerPoolSetPadding(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERUPSAMPLE, "up", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERAVGPOOL3D, "ap", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 3));
  PetscCall(NNLayerPoolSetStride(l, 1));
  PetscCall(NNLayerPoolSetPadding(l, 1));
  PetscCall(NNAddLayer(*net, NNLAYERGLOBALAVGPOOL, "gp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the views of the named layers (the pooling layers' own; other layers' views are not this test's business) */
static PetscErrorCode ViewLayers(NN net, const char names[])
{
  char   **list;
  int      n;

  PetscFunctionBegin;
  PetscCall(PetscStrToArray(names, ',', &n, &list));
  for (int i = 0; i < n; i++) {
    NNLayer l;
    PetscCall(NNGetLayer(net, list[i], &l));
    PetscCall(NNLayerView(l, PETSC_VIEWER_STDOUT_WORLD));
  }
  PetscCall(PetscStrToArrayDestroy(n, list));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckNetworks(void)
{
  NN par, ser;

  PetscFunctionBegin;
  PetscCall(BuildCNN(PETSC_COMM_WORLD, NULL, &par));
  PetscCall(BuildCNN(PETSC_COMM_SELF, "serial_", &ser));
  PetscCall(ViewLayers(par, "mp,ap"));
  PetscCall(CompareNets(par, ser, "CNN conv2d-relu-maxpool2d-conv2d-avgpool2d-dense"));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscCall(Build3d(PETSC_COMM_WORLD, NULL, &par));
  PetscCall(Build3d(PETSC_COMM_SELF, "serial_", &ser));
  PetscCall(ViewLayers(par, "mp,up,ap,gp"));
  PetscCall(CompareNets(par, ser, "3-d net maxpool3d-upsample-avgpool3d-global_avgpool-dense"));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- bad input */

/* a stand-alone layer of the given type on a (sequential or spatial) input: set up, then its output Vec */
static PetscErrorCode SetUpLayer(const Case *c, PetscBool spatial, NNLayer *l, Vec *y)
{
  NNShape s;
  DM      da = NULL;

  PetscFunctionBegin;
  PetscCall(NNLayerCreate(PETSC_COMM_WORLD, l));
  PetscCall(PetscObjectSetName((PetscObject)*l, "bad"));
  PetscCall(NNLayerSetOptionsPrefix(*l, "bad_"));
  PetscCall(NNLayerSetType(*l, c->type));
  if (c->k) PetscCall(NNLayerPoolSetKernelSize(*l, c->k));
  if (c->s) PetscCall(NNLayerPoolSetStride(*l, c->s));
  PetscCall(NNLayerPoolSetPadding(*l, c->p));
  PetscCall(NNLayerUpsampleSetScale(*l, c->scale));
  PetscCall(NNShapeSet(&s, c->ndim, c->shape));
  PetscCall(NNLayerSetInputShape(*l, &s));
  PetscCall(NNLayerSetBatchCapacity(*l, NB));
  PetscCall(NNLayerSetUp(*l));
  if (spatial) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, c->shape[2], c->shape[1], PETSC_DECIDE, PETSC_DECIDE, NB * c->shape[0], 0, NULL, NULL, &da));
  if (da) PetscCall(DMSetUp(da));
  PetscCall(NNLayerSetInputDM(*l, da));
  PetscCall(DMDestroy(&da)); /* the layer keeps a reference */
  PetscCall(NNLayerCreateOutputVec(*l, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectError(const char name[], const Case *c, PetscBool spatial, const char expect[])
{
  PetscErrorCode ierr;
  NNLayer        l = NULL;
  Vec            y = NULL;
  const char    *text;
  char          *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = SetUpLayer(c, spatial, &l, &y);
  PetscCall(PetscPopErrorHandler());
  PetscCall(VecDestroy(&y));
  PetscCall(NNLayerDestroy(&l));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s\n", msg));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckErrors(void)
{
  Case seq2  = {NNLAYERMAXPOOL2D, 2, 0, 0, 0, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case big   = {NNLAYERAVGPOOL2D, 7, 0, 0, 0, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case pad   = {NNLAYERMAXPOOL2D, 3, 0, 2, 0, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case str   = {NNLAYERMAXPOOL2D, 2, -1, 0, 0, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case rank3 = {NNLAYERMAXPOOL3D, 2, 0, 0, 0, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case rank2 = {NNLAYERAVGPOOL2D, 2, 0, 0, 0, 4, {2, 4, 6, 6}, PETSC_FALSE};
  Case up0   = {NNLAYERUPSAMPLE, 0, 0, 0, -2, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case upseq = {NNLAYERUPSAMPLE, 0, 0, 0, 2, 3, {2, 6, 6, 0}, PETSC_FALSE};
  Case glob1 = {NNLAYERGLOBALAVGPOOL, 0, 0, 0, 0, 1, {72, 0, 0, 0}, PETSC_FALSE};
  Case globs = {NNLAYERGLOBALAVGPOOL, 0, 0, 0, 0, 3, {2, 6, 6, 0}, PETSC_FALSE};

  PetscFunctionBegin;
  PetscCall(ExpectError("maxpool2d on a sequential input", &seq2, PETSC_FALSE, "needs a spatial (DMDA) input"));
  PetscCall(ExpectError("avgpool2d kernel 7 on 6 x 6", &big, PETSC_TRUE, "does not fit the input extent 6"));
  PetscCall(ExpectError("maxpool2d padding 2 with kernel 3", &pad, PETSC_TRUE, "-bad_padding 2 must be between 0 and half the kernel size"));
  PetscCall(ExpectError("maxpool2d negative stride", &str, PETSC_TRUE, "-bad_stride -1 must be positive"));
  PetscCall(ExpectError("maxpool3d on (C,H,W) samples", &rank3, PETSC_TRUE, "use the 2-d pooling type"));
  PetscCall(ExpectError("avgpool2d on (C,D,H,W) samples", &rank2, PETSC_TRUE, "use the 3-d pooling type"));
  PetscCall(ExpectError("upsample scale -2", &up0, PETSC_TRUE, "-bad_scale -2 must be a positive integer"));
  PetscCall(ExpectError("upsample on a sequential input", &upseq, PETSC_FALSE, "needs a spatial (DMDA) input"));
  PetscCall(ExpectError("global_avgpool on flat samples", &glob1, PETSC_FALSE, "needs spatial (C,H,W) or (C,D,H,W) samples"));
  PetscCall(ExpectError("global_avgpool on a sequential input", &globs, PETSC_FALSE, "needs a spatial (DMDA) input"));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- timing (not part of the tests) */

static PetscErrorCode Bench(NNLayerType type, PetscInt C, PetscInt H, PetscInt W, PetscInt nb, PetscInt reps)
{
  NN             net;
  NNLayer        l;
  PetscInt       shape[] = {C, H, W};
  Vec            x, y, dy, dx, tmp;
  PetscLogDouble t0, t1, tf = PETSC_MAX_REAL, tb = PETSC_MAX_REAL, tc = PETSC_MAX_REAL; /* best of reps: robust on a shared machine */
  PetscInt       nx;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape));
  PetscCall(NNSetBatchSize(net, nb));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, type, "L", &l));
  PetscCall(NNSetUp(net));
  PetscCall(NNGetActivations(net, "L", &x, &y));
  PetscCall(NNGetActivationGradients(net, "L", &dx, &dy));
  PetscCall(FillGlobal(x));
  PetscCall(FillGlobal(dy));
  PetscCall(VecDuplicate(x, &tmp));
  PetscCall(VecGetSize(x, &nx));
  for (PetscInt r = 0; r <= reps; r++) { /* the first round warms up */
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t0));
    PetscCall(VecCopy(x, tmp));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    if (r) tc = PetscMin(tc, t1 - t0);
    PetscCall(PetscTime(&t0));
    PetscCall(NNLayerForward(l, nb, x, y));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    if (r) tf = PetscMin(tf, t1 - t0);
    PetscCall(PetscTime(&t0));
    PetscCall(NNLayerBackward(l, nb, x, y, dy, dx));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    PetscCall(PetscTime(&t1));
    if (r) tb = PetscMin(tb, t1 - t0);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s on %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " (%" PetscInt_FMT " entries): best of %" PetscInt_FMT ": forward %.3f ms, backward %.3f ms, VecCopy of the input %.3f ms (forward %.2fx, backward %.2fx the copy)\n", type, nb, C, H, W, nx, reps, 1e3 * tf, 1e3 * tb, 1e3 * tc, tf / tc, tb / tc));
  PetscCall(VecDestroy(&tmp));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool  bench = PETSC_FALSE;
  /* type, k, s, p, scale, ndim, shape, fd; 2-d shapes split evenly (12 = 4+4+4) and unevenly (7 = 4+3)
     over the ranks; k3 s2 p1 and k3 s1 p1 windows need halos, k2 s3 p1 leaves gaps, k2 on 14 = 7+7 or
     5+5+4 (and 3-d on 10 = 4+3+3) puts windows across subdomain boundaries (halo without overlap) */
  const Case cases[] = {
    {NNLAYERMAXPOOL2D,     2, 0, 0, 0, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERMAXPOOL2D,     3, 2, 1, 0, 3, {2, 7, 12, 0}, PETSC_TRUE },
    {NNLAYERMAXPOOL2D,     3, 1, 1, 0, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERMAXPOOL2D,     2, 3, 1, 0, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERMAXPOOL2D,     2, 0, 0, 0, 3, {2, 7, 14, 0}, PETSC_FALSE},
    {NNLAYERAVGPOOL2D,     2, 0, 0, 0, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERAVGPOOL2D,     3, 2, 1, 0, 3, {2, 7, 12, 0}, PETSC_TRUE },
    {NNLAYERAVGPOOL2D,     3, 1, 1, 0, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERUPSAMPLE,      0, 0, 0, 2, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERUPSAMPLE,      0, 0, 0, 3, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERGLOBALAVGPOOL, 0, 0, 0, 0, 3, {2, 7, 12, 0}, PETSC_FALSE},
    {NNLAYERMAXPOOL3D,     2, 0, 0, 0, 4, {2, 4, 6, 6},  PETSC_TRUE },
    {NNLAYERMAXPOOL3D,     3, 2, 1, 0, 4, {2, 4, 6, 6},  PETSC_FALSE},
    {NNLAYERMAXPOOL3D,     2, 0, 0, 0, 4, {2, 4, 6, 10}, PETSC_FALSE},
    {NNLAYERAVGPOOL3D,     2, 0, 0, 0, 4, {2, 4, 6, 6},  PETSC_FALSE},
    {NNLAYERAVGPOOL3D,     3, 1, 1, 0, 4, {2, 4, 6, 6},  PETSC_TRUE },
    {NNLAYERUPSAMPLE,      0, 0, 0, 2, 4, {2, 4, 6, 6},  PETSC_TRUE },
    {NNLAYERGLOBALAVGPOOL, 0, 0, 0, 0, 4, {2, 4, 6, 6},  PETSC_TRUE },
  };

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bench", &bench, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-fd", &fdcheck, NULL));
  if (bench) {
    PetscInt reps = 20;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_reps", &reps, NULL));
    PetscCall(Bench(NNLAYERMAXPOOL2D, 32, 28, 28, 128, reps));
    PetscCall(Bench(NNLAYERMAXPOOL2D, 64, 14, 14, 128, reps));
    PetscCall(Bench(NNLAYERAVGPOOL2D, 32, 28, 28, 128, reps));
    PetscCall(Bench(NNLAYERAVGPOOL2D, 64, 14, 14, 128, reps));
    PetscCall(Bench(NNLAYERUPSAMPLE, 32, 14, 14, 128, reps));
    PetscCall(Bench(NNLAYERGLOBALAVGPOOL, 64, 14, 14, 128, reps));
  } else {
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) PetscCall(CheckCase(&cases[i]));
    PetscCall(CheckNetworks());
    PetscCall(CheckErrors());
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1

   test:
      suffix: 2
      nsize: 2
      args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sq_da_processors_x 1 -sq_da_processors_y 1 -sq_da_processors_z 2

   test:
      suffix: 3
      nsize: 3
      args: -sp_da_processors_x 3 -sp_da_processors_y 1 -sq_da_processors_x 3 -sq_da_processors_y 1 -sq_da_processors_z 1

   test:
      suffix: 4
      nsize: 4
      args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sq_da_processors_x 1 -sq_da_processors_y 2 -sq_da_processors_z 2

TEST*/
