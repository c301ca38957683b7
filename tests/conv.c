static char help[] = "Convolutions on the spatial (DMDA) layout (conv2d, conv3d): stride, padding, dilation, groups,\n"
                     "periodic padding, non-square kernels. For each configuration: forward, input gradient and\n"
                     "parameter gradient against a naive reference in PyTorch layout and against a serial copy on\n"
                     "PETSC_COMM_SELF (with 1, 2 and 3 threads, several tile sizes, full and partial batches),\n"
                     "dot-product adjoint tests in the input and parameter directions on the DMDA Vecs, central\n"
                     "finite differences of networks, and clear errors for bad configurations.\n\n"
                     "  -verbose   print the measured errors\n"
                     "  -fd <bool> run the finite-difference checks (default true)\n"
                     "  -bench     time the Fashion-MNIST CNN's two conv2d layers (batch 128) against dgemm\n"
                     "  -bench_reps <n>  repetitions (default 10)\n"
                     "  -bench_layer <c1|c2>  only one of the two layers\n"
                     "  -bench_cold   evict the caches before every pass (as the other layers of a network do)\n"
                     "  -bench_peak <bool>  measure dgemm 2048^3 (default true)\n\n";

#include <petnn.h>
#include <petscdmda.h>
#include <time.h>

static PetscBool       verbose = PETSC_FALSE, fdcheck = PETSC_TRUE;
static const PetscReal tol     = 1e-12;

#define NB 3 /* batch capacity */

/* one configuration; per-axis values in PyTorch order (depth, height, width); 2-d cases ignore depth */
typedef struct {
  const char *name;
  PetscInt    nd, C, F, in[3];
  PetscInt    k[3], s[3], p[3], dil[3]; /* p < 0: the default dilation*(kernel/2) */
  PetscInt    groups;
  PetscBool   periodic, bias, fd;
} Case;

static PetscErrorCode Report(const char what[], PetscReal a, PetscReal b)
{
  PetscReal err = PetscAbsReal(a - b) / PetscMax(PetscMax(PetscAbsReal(a), PetscAbsReal(b)), 1e-300);

  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.17g vs %.17g, rel. error %.3e\n", what, (double)a, (double)b, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g (%.17g vs %.17g)", what, (double)err, (double)tol, (double)a, (double)b);
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| over m entries of replicated arrays */
static PetscErrorCode CompareArrays(const char ctx[], const char what[], PetscInt m, const PetscScalar *a, const PetscScalar *b)
{
  PetscReal e = 0, nb = 0, err;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < m; i++) {
    e += PetscSqr(PetscRealPart(a[i] - b[i]));
    nb += PetscSqr(PetscRealPart(b[i]));
  }
  err = PetscSqrtReal(e) / PetscMax(PetscSqrtReal(nb), 1e-300);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s: ||a - b|| / ||b|| = %.3e (||b|| = %.3e)\n", ctx, what, (double)err, (double)PetscSqrtReal(nb)));
  PetscCheck(nb > 0 && err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: rel. error %g >= %g (||b|| = %g)", ctx, what, (double)err, (double)tol, (double)PetscSqrtReal(nb));
  PetscFunctionReturn(0);
}

/* the same random numbers on every rank */
static PetscErrorCode FillReplicated(unsigned long seed, PetscInt n, PetscScalar *a)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, seed));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* global random values that do not depend on the decomposition */
static PetscErrorCode FillGlobal(Vec v, unsigned long seed)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)v), &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, seed));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(v, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- naive reference in PyTorch layout */

typedef struct {
  PetscInt C, F, G, Cg, Og, N[3], No[3], k[3], s[3], p[3], dil[3]; /* axes in (depth, height, width) order */
  PetscBool periodic, bias;
} Ref;

static void RefSetUp(const Case *c, Ref *r)
{
  r->C        = c->C;
  r->F        = c->F;
  r->G        = c->groups;
  r->Cg       = c->C / c->groups;
  r->Og       = c->F / c->groups;
  r->periodic = c->periodic;
  r->bias     = c->bias;
  for (PetscInt a = 0; a < 3; a++) {
    PetscBool flat = (PetscBool)(c->nd == 2 && a == 0);
    r->N[a]        = flat ? 1 : c->in[a];
    r->k[a]        = flat ? 1 : c->k[a];
    r->s[a]        = flat ? 1 : c->s[a];
    r->dil[a]      = flat ? 1 : c->dil[a];
    r->p[a]        = flat ? 0 : (c->p[a] < 0 ? c->dil[a] * (c->k[a] / 2) : c->p[a]);
    r->No[a]       = (r->N[a] + 2 * r->p[a] - r->dil[a] * (r->k[a] - 1) - 1) / r->s[a] + 1;
  }
}

/* input index along axis a of output o and tap t, or -1 in the zero padding */
static PetscInt RefIndex(const Ref *r, PetscInt a, PetscInt o, PetscInt t)
{
  PetscInt i = o * r->s[a] - r->p[a] + t * r->dil[a];

  if (r->periodic) return ((i % r->N[a]) + r->N[a]) % r->N[a];
  return (i < 0 || i >= r->N[a]) ? -1 : i;
}

/* forward (y set) or backward (dx, dW, db added into) over n samples, straight from the definition */
static void RefConv(const Ref *r, PetscInt n, const PetscScalar *x, const PetscScalar *W, const PetscScalar *b, PetscScalar *y, const PetscScalar *dy, PetscScalar *dx, PetscScalar *dW, PetscScalar *db)
{
  PetscInt nin = r->N[0] * r->N[1] * r->N[2], nout = r->No[0] * r->No[1] * r->No[2], ntap = r->k[0] * r->k[1] * r->k[2];

  for (PetscInt s = 0; s < n; s++)
    for (PetscInt o = 0; o < r->F; o++)
      for (PetscInt oz = 0; oz < r->No[0]; oz++)
        for (PetscInt oy = 0; oy < r->No[1]; oy++)
          for (PetscInt ox = 0; ox < r->No[2]; ox++) {
            PetscInt    q   = (s * r->F + o) * nout + (oz * r->No[1] + oy) * r->No[2] + ox, grp = o / r->Og;
            PetscScalar acc = (y && r->bias) ? b[o] : 0;
            if (!y && db) db[o] += dy[q];
            for (PetscInt c = 0; c < r->Cg; c++)
              for (PetscInt tz = 0; tz < r->k[0]; tz++)
                for (PetscInt ty = 0; ty < r->k[1]; ty++)
                  for (PetscInt tx = 0; tx < r->k[2]; tx++) {
                    PetscInt iz = RefIndex(r, 0, oz, tz), iy = RefIndex(r, 1, oy, ty), ix = RefIndex(r, 2, ox, tx), w, i;
                    if (iz < 0 || iy < 0 || ix < 0) continue;
                    w = (o * r->Cg + c) * ntap + (tz * r->k[1] + ty) * r->k[2] + tx;
                    i = (s * r->C + grp * r->Cg + c) * nin + (iz * r->N[1] + iy) * r->N[2] + ix;
                    if (y) acc += W[w] * x[i];
                    else {
                      if (dx) dx[i] += W[w] * dy[q];
                      dW[w] += x[i] * dy[q];
                    }
                  }
            if (y) y[q] = acc;
          }
}

/* ---------------------------------------------------------------- networks */

/* how the conv layer runs: threads, rows of a GEMM block (0: default), samples of the batch used,
   Winograd tile (-1: automatic, 0: im2col + GEMM) */
typedef struct {
  PetscInt threads, tilerows, n, winograd;
} Variant;

/* Winograd applies: stride 1 and dilation 1 along every axis */
static PetscBool WinogradApplies(const Case *c)
{
  for (PetscInt a = 3 - c->nd; a < 3; a++)
    if (c->s[a] != 1 || c->dil[a] != 1) return PETSC_FALSE;
  return PETSC_TRUE;
}

/* the options of the case's conv layer "cv" under the network prefix */
static PetscErrorCode SetCaseOptions(const Case *c, const char prefix[], const Variant *v, PetscBool set)
{
  const char *names[4] = {"kernel", "stride", "padding", "dilation"};
  const PetscInt *vals[4] = {c->k, c->s, c->p, c->dil};
  const PetscInt *v2;
  char        opt[128], val[64];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 4; i++) {
    v2 = vals[i];
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%scv_%s", prefix ? prefix : "", names[i]));
    if (!set) {
      PetscCall(PetscOptionsClearValue(NULL, opt));
      continue;
    }
    if (c->nd == 2) PetscCall(PetscSNPrintf(val, sizeof(val), "%" PetscInt_FMT ",%" PetscInt_FMT, v2[1], v2[2]));
    else PetscCall(PetscSNPrintf(val, sizeof(val), "%" PetscInt_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT, v2[0], v2[1], v2[2]));
    if (i == 2 && v2[0] < 0) continue; /* default padding */
    PetscCall(PetscOptionsSetValue(NULL, opt, val));
  }
  {
    const char    *knobs[3] = {"threads", "tile_rows", "winograd"};
    const PetscInt kv[3]    = {v->threads, v->tilerows, v->winograd};
    for (PetscInt i = 0; i < 3; i++) {
      PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%scv_%s", prefix ? prefix : "", knobs[i]));
      PetscCall(PetscSNPrintf(val, sizeof(val), "%" PetscInt_FMT, kv[i]));
      if (set) PetscCall(PetscOptionsSetValue(NULL, opt, val));
      else PetscCall(PetscOptionsClearValue(NULL, opt));
    }
  }
  PetscFunctionReturn(0);
}

/* sp (to_spatial) -> cv (the case's convolution) -> [tanh] -> sf (spatial_flatten) */
static PetscErrorCode BuildNet(MPI_Comm comm, const Case *c, const char prefix[], const Variant *v, PetscBool head, NN *net)
{
  NNLayer  l;
  PetscInt shape[4] = {c->C, c->in[0], c->in[1], c->in[2]}, nshape = c->nd + 1;

  PetscFunctionBegin;
  if (c->nd == 2) {
    shape[1] = c->in[1];
    shape[2] = c->in[2];
  }
  PetscCall(SetCaseOptions(c, prefix, v, PETSC_TRUE));
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, nshape, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, c->nd == 2 ? "sp" : "sp3", NULL));
  PetscCall(NNAddLayer(*net, c->nd == 2 ? NNLAYERCONV2D : NNLAYERCONV3D, "cv", &l));
  PetscCall(NNLayerConvSetFilters(l, c->F));
  PetscCall(NNLayerConvSetGroups(l, c->groups));
  PetscCall(NNLayerConvSetBias(l, c->bias));
  PetscCall(NNLayerConvSetPeriodic(l, c->periodic));
  if (head) PetscCall(NNAddLayer(*net, NNLAYERTANH, "act", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscCall(SetCaseOptions(c, prefix, v, PETSC_FALSE));
  if (verbose) PetscCall(NNView(*net, PETSC_VIEWER_STDOUT_(comm)));
  PetscFunctionReturn(0);
}

/* lend the layers the network's parameter and gradient arrays (NNLayerForward/Backward use them) and
   get the conv layer's slices of them; set false gives them back */
static PetscErrorCode SetPointers(NN net, PetscScalar **th, PetscScalar **dth, PetscBool set)
{
  PetscFunctionBegin;
  if (set) {
    PetscCall(NNBeginLayerCalls(net));
    PetscCall(NNGetLayerParameters(net, "cv", NULL, th));
    PetscCall(NNGetLayerGradient(net, "cv", NULL, dth));
  } else {
    PetscCall(NNRestoreLayerGradient(net, "cv", dth));
    PetscCall(NNRestoreLayerParameters(net, "cv", th));
    PetscCall(NNEndLayerCalls(net));
  }
  PetscFunctionReturn(0);
}

/* sp -> cv -> sf forward on n samples of the replicated x, backward from the replicated dy: y, dx and
   the conv's parameter gradient (replicated) */
static PetscErrorCode RunNet(NN net, PetscInt n, const PetscScalar *x, const PetscScalar *dy, PetscScalar *y, PetscScalar *dx, PetscScalar *g)
{
  PetscScalar   *th, *dth, *a;
  const NNLayer *layers;
  const Vec     *act, *dact;
  PetscInt       nx, ny, np;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, NULL, &layers));
  PetscCall(NNGetActivationVecs(net, NULL, &act, &dact));
  PetscCall(NNLayerGetNumParameters(layers[1], &np));
  PetscCall(SetPointers(net, &th, &dth, PETSC_TRUE));
  PetscCall(PetscArrayzero(dth, np));
  PetscCall(VecGetLocalSize(act[0], &nx));
  PetscCall(VecGetLocalSize(act[3], &ny));
  PetscCall(VecGetArrayWrite(act[0], &a));
  PetscCall(PetscArraycpy(a, x, nx));
  PetscCall(VecRestoreArrayWrite(act[0], &a));
  for (PetscInt i = 0; i < 3; i++) PetscCall(NNLayerForward(layers[i], n, act[i], act[i + 1]));
  PetscCall(VecGetArrayWrite(dact[3], &a));
  PetscCall(PetscArraycpy(a, dy, ny));
  PetscCall(VecRestoreArrayWrite(dact[3], &a));
  for (PetscInt i = 2; i >= 0; i--) PetscCall(NNLayerBackward(layers[i], n, act[i], act[i + 1], dact[i + 1], dact[i]));
  PetscCall(VecGetArrayRead(act[3], (const PetscScalar **)&a));
  PetscCall(PetscArraycpy(y, a, ny));
  PetscCall(VecRestoreArrayRead(act[3], (const PetscScalar **)&a));
  PetscCall(VecGetArrayRead(dact[0], (const PetscScalar **)&a));
  PetscCall(PetscArraycpy(dx, a, nx));
  PetscCall(VecRestoreArrayRead(dact[0], (const PetscScalar **)&a));
  PetscCall(PetscArraycpy(g, dth, np));
  PetscCall(SetPointers(net, &th, &dth, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* the case against the naive reference and the N-rank network against a serial copy, for several
   thread counts, tile sizes and batch fills */
static PetscErrorCode TestReference(const Case *c)
{
  static const Variant variants[] = {
    {1, 0, NB, 0}, /* im2col */
    {2, 4, 2,  0},
    {3, 1, NB, 0},
    {2, 0, 1,  0},
    {1, 0, NB, 2 }, /* Winograd */
    {2, 5, 2,  3 },
    {3, 1, NB, 4 },
    {2, 0, 1,  6 },
    {2, 0, 2,  -1}, /* automatic: Winograd from 16 input channels per group */
  };
  PetscInt     nv = 0;
  Ref          r;
  PetscInt     nin, nout, ntap, nw, np, npar;
  PetscScalar *x, *dy, *W, *y, *dx, *g, *ys, *dxs, *gs, *yr, *dxr, *gr, *th;
  NNLayer      cv;
  char         what[256];

  PetscFunctionBegin;
  RefSetUp(c, &r);
  nin  = NB * r.C * r.N[0] * r.N[1] * r.N[2];
  nout = NB * r.F * r.No[0] * r.No[1] * r.No[2];
  ntap = r.k[0] * r.k[1] * r.k[2];
  nw   = r.F * r.Cg * ntap;
  np   = nw + (c->bias ? r.F : 0);
  PetscCall(PetscMalloc5(nin, &x, nout, &dy, np, &W, nout, &y, nin, &dx));
  PetscCall(PetscMalloc5(np, &g, nout, &ys, nin, &dxs, np, &gs, nout, &yr));
  PetscCall(PetscMalloc2(nin, &dxr, np, &gr));
  PetscCall(FillReplicated(11, np, W));
  for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
    NN       par, ser;
    PetscInt n = variants[v].n;

    if (variants[v].winograd > 0 && !WinogradApplies(c)) continue;
    if (variants[v].winograd > 0 && variants[v].winograd + PetscMax(c->k[1], c->k[2]) - 1 > 8) continue; /* F(m,r) with more than 8 points is less accurate */
    nv++;
    PetscCall(BuildNet(PETSC_COMM_WORLD, c, NULL, &variants[v], PETSC_FALSE, &par));
    PetscCall(BuildNet(PETSC_COMM_SELF, c, "serial_", &variants[v], PETSC_FALSE, &ser));
    PetscCall(NNGetLayer(par, "cv", &cv));
    PetscCall(NNLayerGetNumParameters(cv, &npar));
    PetscCheck(npar == np, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " parameters, expected %" PetscInt_FMT, c->name, npar, np);
    for (PetscInt k = 0; k < 2; k++) {
      NN net = k ? ser : par;
      PetscCall(NNGetLayerParameters(net, "cv", NULL, &th));
      PetscCall(PetscArraycpy(th, W, np));
      PetscCall(NNRestoreLayerParameters(net, "cv", &th));
    }
    PetscCall(FillReplicated(12 + v, nin, x));
    PetscCall(FillReplicated(20 + v, nout, dy));
    for (PetscInt i = n * nin / NB; i < nin; i++) x[i] = 0; /* slots beyond n are zero on entry */
    for (PetscInt i = n * nout / NB; i < nout; i++) dy[i] = 0;
    PetscCall(RunNet(par, n, x, dy, y, dx, g));
    PetscCall(RunNet(ser, n, x, dy, ys, dxs, gs));
    PetscCall(PetscArrayzero(yr, nout));
    PetscCall(PetscArrayzero(dxr, nin));
    PetscCall(PetscArrayzero(gr, np));
    RefConv(&r, n, x, W, W + nw, yr, NULL, NULL, NULL, NULL);
    RefConv(&r, n, x, W, NULL, NULL, dy, dxr, gr, c->bias ? gr + nw : NULL);
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s (%" PetscInt_FMT " threads, tile rows %" PetscInt_FMT ", %" PetscInt_FMT " of %d samples, winograd %" PetscInt_FMT ")", c->name, variants[v].threads, variants[v].tilerows, n, NB, variants[v].winograd));
    PetscCall(CompareArrays(what, "output vs reference", nout, y, yr));
    PetscCall(CompareArrays(what, "input gradient vs reference", nin, dx, dxr));
    PetscCall(CompareArrays(what, "parameter gradient vs reference", np, g, gr));
    PetscCall(CompareArrays(what, "output vs serial copy", nout, y, ys));
    PetscCall(CompareArrays(what, "input gradient vs serial copy", nin, dx, dxs));
    PetscCall(CompareArrays(what, "parameter gradient vs serial copy", np, g, gs));
    PetscCall(NNDestroy(&par));
    PetscCall(NNDestroy(&ser));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: output, input and parameter gradients equal the reference and the serial copy (%" PetscInt_FMT " variants%s): rel. error < 1e-12\n", c->name, nv, WinogradApplies(c) ? ", im2col and Winograd" : ""));
  PetscCall(PetscFree5(x, dy, W, y, dx));
  PetscCall(PetscFree5(g, ys, dxs, gs, yr));
  PetscCall(PetscFree2(dxr, gr));
  PetscFunctionReturn(0);
}

/* <F x, dy> = <x, F* dy> on the DMDA Vecs: in the input direction (bias zeroed: F is then linear
   in x) and in the parameter direction (F is linear in weight and bias for a fixed x) */
static PetscErrorCode TestAdjoint(const Case *c, PetscInt winograd)
{
  Variant      v = {2, 0, NB, winograd};
  NN           net;
  NNLayer      cv;
  PetscScalar *th, *dth;
  Vec          x, y, dy, dx;
  PetscReal    a, b;
  PetscInt     nw, np;
  char         what[256];

  PetscFunctionBegin;
  PetscCall(BuildNet(PETSC_COMM_WORLD, c, NULL, &v, PETSC_FALSE, &net));
  PetscCall(NNGetLayer(net, "cv", &cv));
  PetscCall(NNLayerGetNumParameters(cv, &np));
  nw = np - (c->bias ? c->F : 0);
  PetscCall(NNGetActivations(net, "cv", &x, &y));
  PetscCall(VecDuplicate(y, &dy));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(SetPointers(net, &th, &dth, PETSC_TRUE));
  PetscCall(FillReplicated(31, np, th));

  /* input direction */
  PetscCall(PetscArrayzero(th + nw, np - nw));
  PetscCall(FillGlobal(x, 32));
  PetscCall(FillGlobal(dy, 33));
  PetscCall(NNLayerForward(cv, NB, x, y));
  PetscCall(VecDot(y, dy, &a));
  PetscCall(NNLayerBackward(cv, NB, x, y, dy, dx));
  PetscCall(VecDot(x, dx, &b));
  PetscCall(PetscSNPrintf(what, sizeof(what), "adjoint %s (%s), input direction", c->name, winograd ? "Winograd" : "im2col"));
  PetscCall(Report(what, a, b));

  /* parameter direction */
  PetscCall(FillReplicated(34, np, th));
  PetscCall(PetscArrayzero(dth, np));
  PetscCall(NNLayerForward(cv, NB, x, y));
  PetscCall(VecDot(y, dy, &a));
  PetscCall(NNLayerBackward(cv, NB, x, y, dy, NULL));
  b = 0;
  for (PetscInt i = 0; i < np; i++) b += PetscRealPart(th[i] * dth[i]);
  PetscCall(PetscSNPrintf(what, sizeof(what), "adjoint %s (%s), parameter direction", c->name, winograd ? "Winograd" : "im2col"));
  PetscCall(Report(what, a, b));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s: adjoint tests in the input and parameter directions: rel. error < 1e-12\n", c->name, winograd ? "Winograd" : "im2col"));

  PetscCall(SetPointers(net, &th, &dth, PETSC_FALSE));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* central finite differences of a network's loss: sp -> cv -> tanh -> sf, mse */
static PetscErrorCode TestFiniteDifferences(const Case *c)
{
  Variant      v = {2, 0, NB, WinogradApplies(c) ? 2 : 0};
  NN           net;
  Vec          x, t;
  PetscScalar *a;
  PetscInt     nx, nt;
  PetscReal    ep, ei;

  PetscFunctionBegin;
  PetscCall(BuildNet(PETSC_COMM_WORLD, c, NULL, &v, PETSC_TRUE, &net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(x, &a));
  PetscCall(FillReplicated(41, nx, a));
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetArray(t, &a));
  PetscCall(FillReplicated(42, nt, a));
  PetscCall(VecRestoreArray(t, &a));
  PetscCall(NNGradientCheck(net, 2, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s finite differences: parameters %.3e, inputs %.3e\n", c->name, (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: finite-difference check failed: parameters %g, inputs %g", c->name, (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* a bad configuration fails at set up with a message containing expect (and does not leak) */
static PetscErrorCode ExpectError(const char name[], const Case *c, const char opts[], const char expect[])
{
  NN             net;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL, **args;
  int            nargs;
  PetscInt       shape[4] = {c->C, c->in[c->nd == 2 ? 1 : 0], c->in[c->nd == 2 ? 2 : 1], c->in[2]};

  PetscFunctionBegin;
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "bad_"));
  PetscCall(NNSetInputShape(net, c->nd + 1, shape));
  PetscCall(NNSetBatchSize(net, NB));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, c->nd == 2 ? NNLAYERCONV2D : NNLAYERCONV3D, "cv", NULL));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetFromOptions(net);
  if (!ierr) ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCall(NNDestroy(&net));
  PetscCall(PetscStrToArray(opts, ' ', &nargs, &args));
  for (int i = 0; i < nargs; i++)
    if (args[i][0] == '-' && !(args[i][1] >= '0' && args[i][1] <= '9')) PetscCall(PetscOptionsClearValue(NULL, args[i]));
  PetscCall(PetscStrToArrayDestroy(nargs, args));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- benchmark */

/* GFLOP/s of an n x n x n dgemm (the roofline of the conv GEMMs): a MATSEQDENSE product is one BLAS dgemm */
static PetscErrorCode BenchDgemm(PetscInt n, PetscReal *gflops)
{
  Mat            A, B, C;
  PetscScalar   *a;
  PetscLogDouble t0, t1, best = 1e30;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, n, NULL, &A));
  PetscCall(MatDenseGetArrayWrite(A, &a));
  for (PetscInt i = 0; i < n * n; i++) a[i] = 1.0 / (1 + i % 7);
  PetscCall(MatDenseRestoreArrayWrite(A, &a));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(MatMatMult(A, B, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &C));
  for (PetscInt r = 0; r < 3; r++) {
    PetscCall(PetscTime(&t0));
    PetscCall(MatMatMult(A, B, MAT_REUSE_MATRIX, PETSC_DEFAULT, &C));
    PetscCall(PetscTime(&t1));
    best = PetscMin(best, t1 - t0);
  }
  *gflops = 2.0 * n * n * n / best * 1e-9;
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscFunctionReturn(0);
}

/* CPU time of the process (all its threads) */
static PetscLogDouble CPUTime(void)
{
  struct timespec t;

  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int CompareDouble(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* forward and backward of one conv2d (same padding) on a batch of 128: best and median times */
static PetscErrorCode BenchConv(const char name[], PetscInt C, PetscInt H, PetscInt W, PetscInt F, PetscInt k, PetscBool needdx, PetscInt reps, PetscReal peak, PetscReal *total)
{
  NN             net;
  NNLayer        cv;
  PetscInt       shape[3] = {C, H, W}, nb = 128;
  Vec            x, y, dy, dx = NULL;
  PetscLogDouble t0, t1, t2, c0, c1, c2, *tf, *tb, *cf, *cb, f0, f1, f2, ef = 0, eb = 0;
  PetscReal      ff, fb;
  PetscScalar   *flush  = NULL;
  PetscInt       nflush = 0;
  PetscBool      cold   = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape));
  PetscCall(NNSetBatchSize(net, nb));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, name, &cv));
  PetscCall(NNLayerConvSetFilters(cv, F));
  PetscCall(NNLayerConvSetKernelSize(cv, k));
  PetscCall(NNLayerConvSetPadding(cv, k / 2));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  if (verbose) PetscCall(NNView(net, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNBeginLayerCalls(net));
  PetscCall(NNGetActivations(net, name, &x, &y));
  PetscCall(FillGlobal(x, 1));
  PetscCall(VecDuplicate(y, &dy));
  PetscCall(FillGlobal(dy, 2));
  if (needdx) PetscCall(VecDuplicate(x, &dx));
  PetscCall(PetscMalloc4(reps, &tf, reps, &tb, reps, &cf, reps, &cb));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bench_cold", &cold, NULL));
  if (cold) {
    nflush = 8 << 20; /* 64 MiB */
    PetscCall(PetscMalloc1(nflush, &flush));
  }
  PetscCall(NNLayerForward(cv, nb, x, y)); /* warm up */
  PetscCall(NNLayerBackward(cv, nb, x, y, dy, dx));
  for (PetscInt r = 0; r < reps; r++) {
    if (flush) PetscCall(PetscArrayzero(flush, nflush)); /* evict the layer's data from the caches, as the other layers of a network do */
    c0 = CPUTime();
    PetscCall(PetscGetFlops(&f0));
    PetscCall(PetscTime(&t0));
    PetscCall(NNLayerForward(cv, nb, x, y));
    PetscCall(PetscTime(&t1));
    PetscCall(PetscGetFlops(&f1));
    c1    = CPUTime();
    tf[r] = t1 - t0;
    cf[r] = c1 - c0;
    if (flush) PetscCall(PetscArrayzero(flush, nflush));
    c1 = CPUTime();
    PetscCall(PetscTime(&t1));
    PetscCall(PetscGetFlops(&f1));
    PetscCall(NNLayerBackward(cv, nb, x, y, dy, dx));
    PetscCall(PetscTime(&t2));
    PetscCall(PetscGetFlops(&f2));
    c2    = CPUTime();
    ef    = f1 - f0;
    eb    = f2 - f1;
    tb[r] = t2 - t1;
    cb[r] = c2 - c1;
  }
  qsort(tf, reps, sizeof(*tf), CompareDouble);
  qsort(tb, reps, sizeof(*tb), CompareDouble);
  qsort(cf, reps, sizeof(*cf), CompareDouble);
  qsort(cb, reps, sizeof(*cb), CompareDouble);
  ff = 2.0 * nb * H * W * F * C * k * k * 1e-9;
  fb = ff * (needdx ? 2 : 1);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %" PetscInt_FMT "->%" PetscInt_FMT " k%" PetscInt_FMT " on %" PetscInt_FMT "x%" PetscInt_FMT ": forward %.4f s (median %.4f, %5.1f nominal GFLOP/s = %3.0f%% of dgemm), backward%s %.4f s (median %.4f, %5.1f nominal GFLOP/s = %3.0f%%)\n", name, C, F, k, H, W, (double)tf[0], (double)tf[reps / 2],
                        (double)(ff / tf[0]), (double)(100 * ff / tf[0] / peak), needdx ? "" : " (no dx)", (double)tb[0], (double)tb[reps / 2], (double)(fb / tb[0]), (double)(100 * fb / tb[0] / peak)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s CPU time (all threads): forward %.4f s (median %.4f), backward %.4f s (median %.4f)\n", name, (double)cf[0], (double)cf[reps / 2], (double)cb[0], (double)cb[reps / 2]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s flops done (PetscLogFlops, this rank): forward %.3f GFLOP (%.1f GFLOP/s = %.0f%% of dgemm), backward %.3f GFLOP (%.1f GFLOP/s = %.0f%%); nominal direct-convolution flops %.3f and %.3f GFLOP\n", name, ef * 1e-9, ef * 1e-9 / tf[0], 100 * ef * 1e-9 / tf[0] / peak, eb * 1e-9, eb * 1e-9 / tb[0], 100 * eb * 1e-9 / tb[0] / peak, (double)ff, (double)fb));
  *total += tf[reps / 2] + tb[reps / 2];
  PetscCall(PetscFree4(tf, tb, cf, cb));
  PetscCall(PetscFree(flush));
  PetscCall(NNEndLayerCalls(net));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode Bench(void)
{
  PetscInt  reps = 10;
  PetscReal peak = 1, total = 0;
  char      only[8] = "";
  PetscBool measure = PETSC_TRUE;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_reps", &reps, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bench_peak", &measure, NULL));
  if (measure) PetscCall(BenchDgemm(2048, &peak));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dgemm 2048^3: %.1f GFLOP/s\n", (double)peak));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-bench_layer", only, sizeof(only), NULL));
  if (!only[0] || !strcmp(only, "c1")) PetscCall(BenchConv("c1", 1, 28, 28, 32, 5, PETSC_FALSE, reps, peak, &total));
  if (!only[0] || !strcmp(only, "c2")) PetscCall(BenchConv("c2", 32, 14, 14, 64, 5, PETSC_TRUE, reps, peak, &total));
  if (measure) PetscCall(BenchDgemm(2048, &peak));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dgemm 2048^3: %.1f GFLOP/s\n", (double)peak));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "both conv layers, forward + backward (medians): %.4f s per batch of 128\n", (double)total));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  /*              name                          nd  C  F  in (D,H,W)   kernel     stride     padding       dilation   groups periodic bias fd */
  const Case cases[] = {
    {"conv2d k3 stride 2",                       2, 1, 3, {1, 6, 7},  {1, 3, 3}, {1, 2, 2}, {-1, -1, -1}, {1, 1, 1}, 1, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE},
    {"conv2d k3 dilation 2",                     2, 2, 3, {1, 6, 7},  {1, 3, 3}, {1, 1, 1}, {-1, -1, -1}, {1, 2, 2}, 1, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"conv2d k3 groups 2",                       2, 4, 6, {1, 6, 7},  {1, 3, 3}, {1, 1, 1}, {-1, -1, -1}, {1, 1, 1}, 2, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE},
    {"conv2d k3 periodic",                       2, 2, 3, {1, 6, 7},  {1, 3, 3}, {1, 1, 1}, {-1, -1, -1}, {1, 1, 1}, 1, PETSC_TRUE, PETSC_TRUE, PETSC_FALSE},
    {"conv2d k3 periodic dilation 2, no bias",   2, 2, 2, {1, 6, 7},  {1, 3, 3}, {1, 1, 1}, {-1, -1, -1}, {1, 2, 2}, 1, PETSC_TRUE, PETSC_FALSE, PETSC_FALSE},
    {"conv2d k3x5 stride 1x2 padding 0x2 depthwise", 2, 2, 4, {1, 6, 7}, {1, 3, 5}, {1, 1, 2}, {0, 0, 2}, {1, 1, 1}, 2, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"conv2d k2 (even, padding 1)",              2, 2, 3, {1, 6, 7},  {1, 2, 2}, {1, 1, 1}, {-1, -1, -1}, {1, 1, 1}, 1, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"conv2d k5 16->4 (Winograd by default)",    2, 16, 4, {1, 6, 7}, {1, 5, 5}, {1, 1, 1}, {-1, -1, -1}, {1, 1, 1}, 1, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"conv3d k3",                                3, 2, 3, {5, 4, 6},  {3, 3, 3}, {1, 1, 1}, {-1, -1, -1}, {1, 1, 1}, 1, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"conv3d k3 stride 2 groups 2 dilation 1x2x1", 3, 2, 4, {5, 4, 6}, {3, 3, 3}, {2, 2, 2}, {1, 2, 1}, {1, 2, 1}, 2, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"conv3d k3 periodic",                       3, 2, 2, {5, 4, 6},  {3, 3, 3}, {1, 1, 1}, {-1, -1, -1}, {1, 1, 1}, 1, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE},
  };
  PetscBool bench = PETSC_FALSE, only3d = PETSC_FALSE, only2d = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-fd", &fdcheck, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bench", &bench, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-only_3d", &only3d, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-only_2d", &only2d, NULL));
  if (bench) {
    PetscCall(Bench());
  } else {
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
      if ((only3d && cases[i].nd != 3) || (only2d && cases[i].nd != 2)) continue;
      PetscCall(TestReference(&cases[i]));
      PetscCall(TestAdjoint(&cases[i], 0));
      if (WinogradApplies(&cases[i])) PetscCall(TestAdjoint(&cases[i], 2));
      if (fdcheck && cases[i].fd) PetscCall(TestFiniteDifferences(&cases[i]));
    }
    if (!only3d) {
      PetscCall(ExpectError("groups not dividing the channels", &cases[2], "-bad_cv_filters 6 -bad_cv_groups 3", "must divide both the 4 input channels and the 6 filters"));
      PetscCall(ExpectError("periodic with stride 2", &cases[0], "-bad_cv_filters 2 -bad_cv_periodic -bad_cv_stride 2", "periodic padding keeps the input's size"));
      PetscCall(ExpectError("periodic with an even kernel", &cases[0], "-bad_cv_filters 2 -bad_cv_periodic -bad_cv_kernel 2", "needs stride 1, an odd kernel and padding dilation*(kernel-1)/2"));
      PetscCall(ExpectError("three kernel sizes for conv2d", &cases[0], "-bad_cv_filters 2 -bad_cv_kernel 3,3,3", "-bad_cv_kernel takes 1 or 2 values (height,width)"));
      PetscCall(ExpectError("no filters", &cases[0], "-bad_cv_kernel 3", "give a positive -bad_cv_filters"));
      PetscCall(ExpectError("Winograd with stride 2", &cases[0], "-bad_cv_filters 2 -bad_cv_stride 2 -bad_cv_winograd 2", "-bad_cv_winograd 2 needs stride 1, dilation 1"));
    }
    if (!only2d) PetscCall(ExpectError("window larger than the padded input", &cases[8], "-bad_cv_filters 2 -bad_cv_kernel 7 -bad_cv_padding 0", "does not fit the input extent"));
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
      args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sp3_da_processors_x 1 -sp3_da_processors_y 1 -sp3_da_processors_z 2

   test:
      suffix: 3
      nsize: 3
      args: -sp_da_processors_x 3 -sp_da_processors_y 1 -sp3_da_processors_x 3 -sp3_da_processors_y 1 -sp3_da_processors_z 1

   test:
      suffix: 3z
      nsize: 3
      args: -sp_da_processors_x 1 -sp_da_processors_y 3 -sp3_da_processors_x 1 -sp3_da_processors_y 1 -sp3_da_processors_z 3 -fd 0

   test:
      suffix: 4
      nsize: 4
      args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sp3_da_processors_x 2 -sp3_da_processors_y 1 -sp3_da_processors_z 2

TEST*/
