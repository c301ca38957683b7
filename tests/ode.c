static char help[] = "Neural-ODE blocks (layer type ode): finite-difference checks of input and parameter gradients for\n"
                     "every supported integrator (rk 1fe, 2a, 3, 3bs, 4; beuler, cn) with shared and per-step\n"
                     "parameters, refusal of integrators whose adjoint is wrong or missing in PETSc 3.18, observed\n"
                     "orders of convergence, checkpointing (bitwise identical gradients, stored-state memory),\n"
                     "the discrete residual stack against TS rk 1fe, observation times (trajectory loss) and time input.\n\n"
                     "  -only <gradients,refusals,zeroweights,convergence,checkpoints,discrete,observations>  run only these parts\n"
                     "  -verbose   print the measured errors\n"
                     "  -measure   time 64 steps with 8 stored states against full storage (not a test: noisy)\n"
                     "  -measure_batch <n>, -measure_width <w>  size of the timed problem (default 128, 256)\n\n";

#include <petnn.h>
#include <string.h>

static PetscBool verbose = PETSC_FALSE;

typedef struct {
  const char *name;   /* for messages */
  const char *tstype; /* -<blk>_ts_type */
  const char *rktype; /* -<blk>_ts_rk_type, or NULL */
  PetscInt    order;  /* expected order of convergence */
} Integrator;

static const Integrator integrators[] = {
  {"rk 1fe", "rk", "1fe", 1},
  {"rk 2a",  "rk", "2a",  2},
  {"rk 3",   "rk", "3",   3},
  {"rk 3bs", "rk", "3bs", 3},
  {"rk 4",   "rk", "4",   4},
  {"beuler", "beuler", NULL, 1},
  {"cn",     "cn", NULL,  2},
};

typedef struct {
  PetscInt        N;         /* steps */
  NNODEParameters params;
  NNODEScheme     scheme;
  PetscInt        K;         /* stored states */
  PetscBool       timeinput;
  PetscInt        nobs;
  PetscReal       tobs[4];
  PetscBool       head, tail; /* dense layers before and after the block */
  PetscInt        width;      /* state width (default 4) and hidden width of f (width + 1) */
  PetscInt        nbatch;
  PetscInt64      seed;
  PetscBool       dropout; /* a dropout layer in f (refused) */
} Config;

static PetscErrorCode DefaultConfig(Config *c)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(c, sizeof(*c)));
  c->N      = 4;
  c->params = NNODE_PARAMETERS_SHARED;
  c->scheme = NNODE_SCHEME_TS;
  c->head   = PETSC_TRUE;
  c->tail   = PETSC_TRUE;
  c->width  = 4;
  c->nbatch = 3;
  c->seed   = 3;
  PetscFunctionReturn(0);
}

/* fc0 (3 -> w) -> blk: ode with f = dense(w -> w+1), tanh, dense(w+1 -> w) -> out (w -> 2), mse;
   the block's integrator from options under the network's prefix */
static PetscErrorCode BuildNet(const char prefix[], const Integrator *ig, const Config *c, NN *net, NNLayer *blk)
{
  NNLayer l;
  char    opt[128];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sblk_ts_type", prefix));
  PetscCall(PetscOptionsSetValue(NULL, opt, ig->tstype));
  if (ig->rktype) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sblk_ts_rk_type", prefix));
    PetscCall(PetscOptionsSetValue(NULL, opt, ig->rktype));
  }
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 1, c->head ? (PetscInt[]){3} : (PetscInt[]){c->width}));
  PetscCall(NNSetBatchSize(*net, c->nbatch));
  PetscCall(NNSetSeed(*net, c->seed));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  if (c->head) {
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc0", &l));
    PetscCall(NNLayerDenseSetUnits(l, c->width));
  }
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", blk));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERDENSE, "f1", &l));
  PetscCall(NNLayerDenseSetUnits(l, c->width + 1));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERTANH, "fa", NULL));
  if (c->dropout) PetscCall(NNLayerODEAddLayer(*blk, NNLAYERDROPOUT, "fd", NULL));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERDENSE, "f2", &l));
  PetscCall(NNLayerDenseSetUnits(l, c->width));
  PetscCall(NNLayerODESetSteps(*blk, c->N));
  PetscCall(NNLayerODESetParameters(*blk, c->params));
  PetscCall(NNLayerODESetScheme(*blk, c->scheme));
  PetscCall(NNLayerODESetCheckpoints(*blk, c->K));
  PetscCall(NNLayerODESetTimeInput(*blk, c->timeinput));
  if (c->nobs) PetscCall(NNLayerODESetObservationTimes(*blk, c->nobs, c->tobs));
  if (c->tail) {
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "out", &l));
    PetscCall(NNLayerDenseSetUnits(l, 2));
  }
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* a batch and targets that do not depend on the machine */
static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetLocalSize(*t, &nt));
  PetscCall(VecGetArray(*x, &a));
  for (PetscInt i = 0; i < nx; i++) a[i] = PetscSinReal(1.0 + 2.3 * i);
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetArray(*t, &a));
  for (PetscInt i = 0; i < nt; i++) a[i] = 0.5 * PetscCosReal(0.5 + 1.7 * i);
  PetscCall(VecRestoreArray(*t, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode GradientCheck(const char what[], const Integrator *ig, const Config *c, const char prefix[])
{
  NN        net;
  NNLayer   blk;
  Vec       x, t;
  PetscReal ep, ei, tol = 1e-6;

  PetscFunctionBegin;
  PetscCall(BuildNet(prefix, ig, c, &net, &blk));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(NNGradientCheck(net, c->nbatch - 1, x, t, tol, &ep, &ei)); /* a partial batch: the TS Vecs are made for n samples */
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: parameters %.3e, inputs %.3e\n", what, (double)ep, (double)ei));
  PetscCheck(ep < tol && ei < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: finite-difference check failed: parameters %g, inputs %g", what, (double)ep, (double)ei);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: finite differences agree within %g: PASS\n", what, (double)tol));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestGradients(void)
{
  Config c;
  char   what[128], prefix[32];
  int    id = 0;

  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof(integrators) / sizeof(integrators[0]); i++) {
    for (int p = 0; p < 2; p++) {
      PetscCall(DefaultConfig(&c));
      c.params = p ? NNODE_PARAMETERS_PER_STEP : NNODE_PARAMETERS_SHARED;
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %s parameters", integrators[i].name, p ? "per-step" : "shared"));
      PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "g%d_", id++));
      PetscCall(GradientCheck(what, &integrators[i], &c, prefix));
    }
  }
  /* t as an input of f */
  PetscCall(DefaultConfig(&c));
  c.timeinput = PETSC_TRUE;
  PetscCall(GradientCheck("rk 4, shared parameters, time input", &integrators[4], &c, "gt0_"));
  c.params = NNODE_PARAMETERS_PER_STEP;
  PetscCall(GradientCheck("cn, per-step parameters, time input", &integrators[6], &c, "gt1_"));
  PetscCall(GradientCheck("rk 3bs, per-step parameters, time input", &integrators[3], &c, "gt2_"));
  PetscFunctionReturn(0);
}

/* a bad configuration fails with a message containing expect */
static PetscErrorCode ExpectError(const char name[], const char prefix[], const Integrator *ig, const Config *c, const char expect[])
{
  NN             net = NULL;
  NNLayer        blk;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = BuildNet(prefix, ig, c, &net, &blk);
  PetscCall(PetscPopErrorHandler());
  PetscCall(NNDestroy(&net));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestRefusals(void)
{
  Config           c;
  const Integrator euler = {"euler", "euler", NULL, 1}, ssp = {"ssp", "ssp", NULL, 3};

  PetscFunctionBegin;
  PetscCall(DefaultConfig(&c));
  PetscCall(ExpectError("euler refused", "e3_", &euler, &c, "-e3_blk_ts_type euler is not supported: the block needs a TS with an exact discrete adjoint in PETSc 3.18; valid: rk (-e3_blk_ts_rk_type 1fe, 2a, 3, 3bs, 4), beuler, cn"));
  PetscCall(ExpectError("ssp refused", "e4_", &ssp, &c, "-e4_blk_ts_type ssp is not supported"));
  c.nobs    = 2;
  c.tobs[0] = 0.5;
  c.tobs[1] = 0.6;
  PetscCall(ExpectError("observation time off the grid", "e5_", &integrators[4], &c, "observation time 0.6 is not a multiple of the step h = T/N = 0.25"));
  c.tobs[1] = 0.25;
  PetscCall(ExpectError("observation times not increasing", "e6_", &integrators[4], &c, "observation times must increase (0.25 after 0.5)"));
  PetscCall(DefaultConfig(&c));
  c.dropout = PETSC_TRUE;
  PetscCall(ExpectError("dropout in f refused", "e7_", &integrators[4], &c, "ODE block blk: layer fd of its vector field is a dropout layer; f must be deterministic"));
  PetscFunctionReturn(0);
}

/* RK tableaus with a zero weight b_i on a stage that later stages use (2b, 5f, 5dp): PETSc before 3.21 returns wrong
   parameter gradients for them, so the block refuses them with a clear error; from 3.21 on they are exact and pass
   the same finite-difference checks as the other schemes */
static PetscErrorCode TestZeroWeights(void)
{
  Config           c;
  const Integrator rk[3] = {
    {"rk 2b",  "rk", "2b",  2},
    {"rk 5f",  "rk", "5f",  5},
    {"rk 5dp", "rk", "5dp", 5}
  };

  PetscFunctionBegin;
  PetscCall(DefaultConfig(&c));
#if PETSC_VERSION_LT(3, 21, 0)
  {
    char expect[256];
    PetscCall(PetscSNPrintf(expect, sizeof(expect), "-e0_blk_ts_rk_type 2b has a zero weight b_1 on a stage that later stages use; PETSc %d.%d's TSAdjoint then returns wrong parameter gradients (fixed in PETSc 3.21). Use -e0_blk_ts_rk_type 1fe, 2a, 3, 3bs or 4", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR));
    PetscCall(ExpectError("rk 2b refused", "e0_", &rk[0], &c, expect));
  }
  PetscCall(ExpectError("rk 5f refused", "e1_", &rk[1], &c, "-e1_blk_ts_rk_type 5f has a zero weight b_2"));
  PetscCall(ExpectError("rk 5dp refused", "e2_", &rk[2], &c, "-e2_blk_ts_rk_type 5dp has a zero weight b_2"));
#else
  for (int i = 0; i < 3; i++) {
    for (int p = 0; p < 2; p++) {
      char what[128], prefix[32];
      c.params = p ? NNODE_PARAMETERS_PER_STEP : NNODE_PARAMETERS_SHARED;
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %s parameters", rk[i].name, p ? "per-step" : "shared"));
      PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "z%d_", 2 * i + p));
      PetscCall(GradientCheck(what, &rk[i], &c, prefix));
    }
  }
#endif
  PetscFunctionReturn(0);
}

/* f's output must have the state's shape */
static PetscErrorCode TestShapeError(void)
{
  NN             net;
  NNLayer        blk, l;
  PetscErrorCode ierr;
  const char    *text, *expect = "ODE block blk: its vector field f maps shape (4) to (3) (last layer f2, dense), but du/dt = f(u) needs f's output to have the state's shape (4)";
  char          *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "s0_"));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){4}));
  PetscCall(NNAddLayer(net, NNLAYERODE, "blk", &blk));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "f1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "f2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetFromOptions(net);
  if (!ierr) ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCall(NNDestroy(&net));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "f of the wrong shape: expected an error, got none");
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the error message \"%s\" does not contain \"%s\"", msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "f of the wrong shape: clear error (%s)\n", expect));
  PetscFunctionReturn(0);
}

/* u(T) of the block alone (fixed parameters: the same seed) with N steps */
static PetscErrorCode SolveBlock(const Integrator *ig, PetscInt N, const char prefix[], PetscInt m, PetscScalar *u)
{
  NN                 net;
  NNLayer            blk;
  Config             c;
  Vec                x, t, y;
  const PetscScalar *ya;

  PetscFunctionBegin;
  PetscCall(DefaultConfig(&c));
  c.head = c.tail = PETSC_FALSE;
  c.N             = N;
  PetscCall(BuildNet(prefix, ig, &c, &net, &blk));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(NNForward(net, c.nbatch, x, &y));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(PetscArraycpy(u, ya, m));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestConvergence(void)
{
  const PetscInt m = 12, Ns[] = {8, 16, 32};
  PetscScalar    ref[12], u[12];
  char           prefix[32];
  int            id = 0;

  PetscFunctionBegin;
  PetscCall(SolveBlock(&integrators[4], 1024, "cref_", m, ref));
  for (size_t i = 0; i < sizeof(integrators) / sizeof(integrators[0]); i++) {
    PetscReal e[3], p;
    for (int j = 0; j < 3; j++) {
      PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "c%d_", id++));
      PetscCall(SolveBlock(&integrators[i], Ns[j], prefix, m, u));
      e[j] = 0;
      for (PetscInt k = 0; k < m; k++) e[j] = PetscMax(e[j], PetscAbsScalar(u[k] - ref[k]));
    }
    p = 0.5 * (PetscLog2Real(e[0] / e[1]) + PetscLog2Real(e[1] / e[2]));
    if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: errors %.3e %.3e %.3e (N = 8, 16, 32), ratios %.2f %.2f\n", integrators[i].name, (double)e[0], (double)e[1], (double)e[2], (double)(e[0] / e[1]), (double)(e[1] / e[2])));
    PetscCheck(PetscAbsReal(p - integrators[i].order) < 0.25, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: observed order %g, expected %" PetscInt_FMT, integrators[i].name, (double)p, integrators[i].order);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: observed order %.1f (expected %" PetscInt_FMT "): PASS\n", integrators[i].name, (double)(PetscFloorReal(10 * p + 0.5) / 10), integrators[i].order));
  }
  PetscFunctionReturn(0);
}

/* loss, parameter gradient and input gradient of one batch */
static PetscErrorCode LossGradientN(NN net, PetscInt n, Vec x, Vec t, PetscReal *L, Vec g, Vec dx)
{
  Vec dtheta;

  PetscFunctionBegin;
  PetscCall(NNLossGradient(net, n, x, t, L, dx));
  PetscCall(NNGetGradient(net, &dtheta));
  PetscCall(VecCopy(dtheta, g));
  PetscFunctionReturn(0);
}

static PetscErrorCode LossGradient(NN net, Vec x, Vec t, PetscReal *L, Vec g, Vec dx)
{
  PetscFunctionBegin;
  PetscCall(LossGradientN(net, 2, x, t, L, g, dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode BitwiseEqual(Vec a, Vec b, PetscBool *same)
{
  const PetscScalar *x, *y;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(a, &n));
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  *same = (PetscBool)!memcmp(x, y, n * sizeof(PetscScalar));
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscFunctionReturn(0);
}

/* gradients with K = 1, 2, 3, N stored states are bitwise those of full storage */
static PetscErrorCode TestCheckpoints(void)
{
  const PetscInt Ks[] = {1, 2, 3, 6};
  const int      igs[] = {4, 3, 6};
  char           prefix[32], what[128];
  int            id = 0;

  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof(igs) / sizeof(igs[0]); i++) {
    for (int p = 0; p < 2; p++) {
      NN        net;
      NNLayer   blk;
      Config    c;
      Vec       x, t, g0, dx0, g, dx;
      PetscReal L0, L;
      PetscBool same = PETSC_TRUE, s1, s2;

      PetscCall(DefaultConfig(&c));
      c.N      = 6; /* h = 1/6 is not a binary fraction: the clock must not differ between the paths */
      c.params = p ? NNODE_PARAMETERS_PER_STEP : NNODE_PARAMETERS_SHARED;
      PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "k%d_", id++));
      PetscCall(BuildNet(prefix, &integrators[igs[i]], &c, &net, &blk));
      PetscCall(FillBatch(net, &x, &t));
      PetscCall(NNGetGradient(net, &g));
      PetscCall(VecDuplicate(g, &g0));
      PetscCall(VecDuplicate(g, &g));
      PetscCall(VecDuplicate(x, &dx0));
      PetscCall(VecDuplicate(x, &dx));
      PetscCall(LossGradient(net, x, t, &L0, g0, dx0));
      for (size_t k = 0; k < sizeof(Ks) / sizeof(Ks[0]); k++) {
        PetscCall(NNLayerODESetCheckpoints(blk, Ks[k]));
        PetscCall(LossGradient(net, x, t, &L, g, dx));
        PetscCall(BitwiseEqual(g, g0, &s1));
        PetscCall(BitwiseEqual(dx, dx0, &s2));
        if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s %s K = %" PetscInt_FMT ": loss %s, parameter gradient %s, input gradient %s\n", integrators[igs[i]].name, p ? "per-step" : "shared", Ks[k], L == L0 ? "same" : "differs", s1 ? "same" : "differs", s2 ? "same" : "differs"));
        same = (PetscBool)(same && s1 && s2 && L == L0);
      }
      PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %s parameters, 6 steps", integrators[igs[i]].name, p ? "per-step" : "shared"));
      PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: gradients with checkpointing differ from those with full storage", what);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: gradients with 1, 2, 3 and 6 stored states bitwise identical to full storage: PASS\n", what));
      { /* the same network evaluating f again in the adjoint instead of keeping its activations */
        NN      net2;
        NNLayer blk2;
        char    opt[64];
        PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "k%dr_", id - 1));
        PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sblk_store_activations", prefix));
        PetscCall(PetscOptionsSetValue(NULL, opt, "0"));
        PetscCall(NNLayerODESetCheckpoints(blk, 0));
        PetscCall(BuildNet(prefix, &integrators[igs[i]], &c, &net2, &blk2));
        PetscCall(LossGradient(net2, x, t, &L, g, dx));
        PetscCall(BitwiseEqual(g, g0, &s1));
        PetscCall(BitwiseEqual(dx, dx0, &s2));
        PetscCheck(s1 && s2 && L == L0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: gradients with f evaluated again in the adjoint differ from those with kept activations", what);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: gradients with f's activations kept or evaluated again bitwise identical: PASS\n", what));
        PetscCall(NNDestroy(&net2));
      }
      PetscCall(VecDestroy(&g0));
      PetscCall(VecDestroy(&g));
      PetscCall(VecDestroy(&dx0));
      PetscCall(VecDestroy(&dx));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&t));
      PetscCall(NNDestroy(&net));
    }
  }
  PetscFunctionReturn(0);
}

/* 64 steps, 8 stored states: the memory held for the backward pass against full storage */
static PetscErrorCode TestStorage(PetscBool measure)
{
  NN             net;
  NNLayer        blk;
  Config         c;
  Vec            x, t, g, dx;
  PetscReal      L;
  PetscInt       ns, nf;
  PetscLogDouble b, bf, f0, f1, a0, a1, r0, r1;

  PetscFunctionBegin;
  PetscCall(DefaultConfig(&c));
  c.N      = 64;
  c.K      = 8;
  c.params = NNODE_PARAMETERS_PER_STEP;
  if (measure) {
    c.nbatch = 128;
    c.width  = 256;
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-measure_batch", &c.nbatch, NULL));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-measure_width", &c.width, NULL));
  }
  PetscCall(BuildNet("m0_", &integrators[4], &c, &net, &blk));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(NNGetGradient(net, &g));
  PetscCall(VecDuplicate(g, &g));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(LossGradient(net, x, t, &L, g, dx));
  PetscCall(NNLayerODEGetStorage(blk, &ns, &b, &nf, &bf));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  stored %" PetscInt_FMT " state Vecs (%g bytes), full storage %" PetscInt_FMT " (%g bytes)\n", ns, b, nf, bf));
  PetscCheck(b <= 0.25 * bf, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "checkpointing stores %g bytes, more than a quarter of full storage (%g)", b, bf);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "rk 4, 64 steps, 8 stored states: %" PetscInt_FMT " state Vecs held at the peak against %" PetscInt_FMT " with full storage, ratio %.3f <= 0.25: PASS\n", ns, nf, b / bf));
  if (measure) { /* K = 8 against K = 0, several repetitions; the minimum is the least disturbed */
    PetscLogDouble best[2][3] = {{1e30, 1e30, 1e30}, {1e30, 1e30, 1e30}};
    for (int rep = 0; rep < 5; rep++) {
      for (int k = 0; k < 2; k++) {
        PetscCall(NNLayerODESetCheckpoints(blk, k ? 8 : 0));
        PetscCall(NNLayerODEGetTimes(blk, &f0, &a0, &r0));
        PetscCall(LossGradientN(net, c.nbatch, x, t, &L, g, dx));
        PetscCall(NNLayerODEGetTimes(blk, &f1, &a1, &r1));
        best[k][0] = PetscMin(best[k][0], f1 - f0);
        best[k][1] = PetscMin(best[k][1], a1 - a0);
        best[k][2] = PetscMin(best[k][2], r1 - r0);
      }
    }
    PetscCall(NNLayerODEGetStorage(blk, &ns, &b, &nf, &bf));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "measure: batch %" PetscInt_FMT ", state width %" PetscInt_FMT ", 64 rk4 steps, per-step parameters\n", c.nbatch, c.width));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "measure: stored-state memory with 8 stored states %.2f MB, full storage %.2f MB, ratio %.3f\n", b / 1048576, bf / 1048576, b / bf));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "measure: full storage  forward %.4f s, adjoint %.4f s\n", best[0][0], best[0][1]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "measure: 8 stored states forward %.4f s, adjoint %.4f s, recompute %.4f s = %.2f x the forward time\n", best[1][0], best[1][1], best[1][2], best[1][2] / best[1][0]));
  }
  PetscCall(VecDestroy(&g));
  PetscCall(VecDestroy(&dx));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode Compare(const char what[], Vec a, Vec b, PetscReal tol)
{
  PetscReal e, nb;
  Vec       d;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, b, a));
  PetscCall(VecNorm(d, NORM_2, &e));
  PetscCall(VecNorm(b, NORM_2, &nb));
  PetscCall(VecDestroy(&d));
  e = e / PetscMax(nb, 1e-300);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: rel. error %.3e\n", what, (double)e));
  PetscCheck(nb > 0 && e <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g > %g", what, (double)e, (double)tol);
  PetscFunctionReturn(0);
}

/* per-step parameters in a checkpoint: "<block>.<k>.<layer>.<tensor>", saved and loaded back */
static PetscErrorCode TestCheckpointFile(void)
{
  NN        a, b;
  NNLayer   blk;
  Config    c;
  Vec       ta, tb;
  PetscInt  np;
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(DefaultConfig(&c));
  c.N      = 3;
  c.params = NNODE_PARAMETERS_PER_STEP;
  PetscCall(BuildNet("f0_", &integrators[4], &c, &a, &blk));
  c.seed = 7;
  PetscCall(BuildNet("f1_", &integrators[4], &c, &b, &blk));
  PetscCall(NNGetNumParameters(a, &np));
  PetscCheck(np == 16 + 3 * 49 + 10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%" PetscInt_FMT " parameters, expected fc0 16 + 3 steps x 49 + out 10", np);
  PetscCall(NNGetParameters(a, &ta));
  PetscCall(NNGetParameters(b, &tb));
  PetscCall(VecEqual(ta, tb, &same));
  PetscCheck(!same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "different seeds gave the same parameters");
  PetscCall(NNCheckpointSave(a, "ode_per_step.h5"));
  PetscCall(NNCheckpointLoad(b, "ode_per_step.h5"));
  PetscCall(BitwiseEqual(ta, tb, &same));
  PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the loaded parameters differ from the saved ones");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "per-step parameters (3 steps x 49): checkpoint saved and loaded back bitwise: PASS\n"));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

/* the discrete residual stack against the ODE block with rk 1fe: the same numbers */
static PetscErrorCode TestDiscrete(void)
{
  char prefix[32], what[128];

  PetscFunctionBegin;
  for (int p = 0; p < 2; p++) {
    NN        net;
    NNLayer   blk;
    Config    c;
    Vec       x, t, y, g0, dx0, g, dx, y0;
    PetscReal L0, L;

    PetscCall(DefaultConfig(&c));
    c.N      = 5;
    c.params = p ? NNODE_PARAMETERS_PER_STEP : NNODE_PARAMETERS_SHARED;
    PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "d%d_", p));
    PetscCall(BuildNet(prefix, &integrators[0], &c, &net, &blk));
    PetscCall(FillBatch(net, &x, &t));
    PetscCall(NNGetGradient(net, &g));
    PetscCall(VecDuplicate(g, &g0));
    PetscCall(VecDuplicate(g, &g));
    PetscCall(VecDuplicate(x, &dx0));
    PetscCall(VecDuplicate(x, &dx));
    PetscCall(NNForward(net, 2, x, &y));
    PetscCall(VecDuplicate(y, &y0));
    PetscCall(VecCopy(y, y0));
    PetscCall(LossGradient(net, x, t, &L0, g0, dx0));
    PetscCall(NNLayerODESetScheme(blk, NNODE_SCHEME_DISCRETE));
    PetscCall(NNForward(net, 2, x, &y));
    PetscCall(LossGradient(net, x, t, &L, g, dx));
    PetscCall(PetscSNPrintf(what, sizeof(what), "discrete residual stack vs TS rk 1fe, %s parameters", p ? "per-step" : "shared"));
    PetscCall(Compare("outputs", y, y0, 1e-12));
    PetscCheck(PetscAbsReal(L - L0) <= 1e-12 * PetscAbsReal(L0), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: losses %.17g and %.17g", what, (double)L, (double)L0);
    PetscCall(Compare("parameter gradients", g, g0, 1e-12));
    PetscCall(Compare("input gradients", dx, dx0, 1e-12));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: outputs, loss and gradients agree within 1e-12: PASS\n", what));
    PetscCall(VecDestroy(&g0));
    PetscCall(VecDestroy(&g));
    PetscCall(VecDestroy(&dx0));
    PetscCall(VecDestroy(&dx));
    PetscCall(VecDestroy(&y0));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&t));
    PetscCall(NNDestroy(&net));
  }
  PetscFunctionReturn(0);
}

/* a trajectory loss: the block outputs the states at several times */
static PetscErrorCode TestObservations(void)
{
  Config c;

  PetscFunctionBegin;
  PetscCall(DefaultConfig(&c));
  c.tail    = PETSC_FALSE;
  c.nobs    = 3;
  c.tobs[0] = 0.25;
  c.tobs[1] = 0.5;
  c.tobs[2] = 1.0;
  PetscCall(GradientCheck("observations at 0.25, 0.5, 1 (rk 4, shared parameters)", &integrators[4], &c, "o0_"));
  c.params = NNODE_PARAMETERS_PER_STEP;
  PetscCall(GradientCheck("observations at 0.25, 0.5, 1 (cn, per-step parameters)", &integrators[6], &c, "o1_"));
  c.tobs[0] = 0;
  c.tobs[1] = 0.5;
  c.tobs[2] = 0.75;
  c.K       = 2;
  PetscCall(GradientCheck("observations at 0, 0.5, 0.75 (rk 3bs, per-step parameters, 2 stored states)", &integrators[3], &c, "o2_"));
  c.scheme = NNODE_SCHEME_DISCRETE;
  PetscCall(GradientCheck("observations at 0, 0.5, 0.75 (discrete scheme)", &integrators[0], &c, "o3_"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool measure = PETSC_FALSE;
  char      only[256] = "";

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-measure", &measure, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-only", only, sizeof(only), NULL));
  if (measure) PetscCall(TestStorage(PETSC_TRUE));
  else {
    PetscBool all = only[0] ? PETSC_FALSE : PETSC_TRUE;
    if (all || strstr(only, "gradients")) PetscCall(TestGradients());
    if (all || strstr(only, "refusals")) {
      PetscCall(TestRefusals());
      PetscCall(TestShapeError());
    }
    if (all || strstr(only, "zeroweights")) PetscCall(TestZeroWeights());
    if (all || strstr(only, "convergence")) PetscCall(TestConvergence());
    if (all || strstr(only, "checkpoints")) {
      PetscCall(TestCheckpoints());
      PetscCall(TestStorage(PETSC_FALSE));
      PetscCall(TestCheckpointFile());
    }
    if (all || strstr(only, "discrete")) PetscCall(TestDiscrete());
    if (all || strstr(only, "observations")) PetscCall(TestObservations());
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: gradients
      args: -only gradients

   test:
      suffix: checks
      args: -only refusals,convergence,checkpoints,discrete,observations

   # RK tableaus with zero weights: refused before PETSc 3.21, finite-difference checked from 3.21 on
   test:
      suffix: zero_weights_refused
      requires: !petsc_rk_adjoint_zero_weights
      args: -only zeroweights

   test:
      suffix: zero_weights
      requires: petsc_rk_adjoint_zero_weights
      args: -only zeroweights

TEST*/
