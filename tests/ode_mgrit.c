static char help[] = "Layer-parallel ODE blocks (-<blk>_parallel mgrit): a network dense -> ode block (tanh f) -> dense with\n"
                     "softmax cross-entropy, run with the block layer-serial and layer-parallel (MGRIT over all ranks);\n"
                     "iterated to a tight tolerance, the loss, the input gradient and the parameter gradient must match the\n"
                     "serial block within 1e-10 relative, for 2 and 3 levels, F and FCF, per-step and shared parameters,\n"
                     "forward Euler (rk 1fe and the discrete scheme) and higher-order RK. Also: with F-relaxation and two\n"
                     "levels the block is exact after N/m iterations; one-shot mode converges to the exact gradient when\n"
                     "called repeatedly at fixed parameters (warm start) and its schedule raises the iteration count;\n"
                     "inference equals the serial block; unsupported settings fail with clear errors.\n\n"
                     "  -only <equivalence,exactness,oneshot,inference,refusals>  run only these parts\n"
                     "  -verbose   print the measured errors and iteration counts\n\n";

#include <petnn.h>
#include <string.h>

static PetscBool verbose = PETSC_FALSE;

typedef struct {
  const char     *name;
  const char     *scheme; /* "ts" or "discrete" */
  const char     *rktype; /* with ts */
  NNODEParameters params;
  PetscBool       timeinput;
  PetscInt        N, width, nbatch;
} Config;

static PetscErrorCode SetOption(const char prefix[], const char name[], const char value[])
{
  char opt[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%s%s", prefix, name));
  PetscCall(PetscOptionsSetValue(NULL, opt, value));
  PetscFunctionReturn(0);
}

/* fc0 (3 -> w) -> blk: ode, f = dense(w -> w) + tanh -> out (w -> 3), cross-entropy; extra options "name value ..." under the prefix */
static PetscErrorCode BuildNet(const char prefix[], const Config *c, PetscBool parallel, const char *extra[], NN *net, NNLayer *blk)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(SetOption(prefix, "blk_scheme", c->scheme));
  if (c->rktype) {
    PetscCall(SetOption(prefix, "blk_ts_type", "rk"));
    PetscCall(SetOption(prefix, "blk_ts_rk_type", c->rktype));
  }
  if (parallel) PetscCall(SetOption(prefix, "blk_parallel", "mgrit"));
  for (PetscInt i = 0; extra && extra[i]; i += 2) PetscCall(SetOption(prefix, extra[i], extra[i + 1]));
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){3}));
  PetscCall(NNSetBatchSize(*net, c->nbatch));
  PetscCall(NNSetSeed(*net, 7));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc0", &l));
  PetscCall(NNLayerDenseSetUnits(l, c->width));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", blk));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERDENSE, "f1", &l));
  PetscCall(NNLayerDenseSetUnits(l, c->width));
  PetscCall(NNLayerODEAddLayer(*blk, NNLAYERTANH, "fa", NULL));
  PetscCall(NNLayerODESetSteps(*blk, c->N));
  PetscCall(NNLayerODESetTime(*blk, 2.0));
  PetscCall(NNLayerODESetParameters(*blk, c->params));
  PetscCall(NNLayerODESetTimeInput(*blk, c->timeinput));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "out", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* a batch and class labels that do not depend on the machine */
static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetLocalSize(*t, &nt));
  PetscCall(VecGetArray(*x, &a));
  for (PetscInt i = 0; i < nx; i++) a[i] = 1.5 * PetscSinReal(1.0 + 2.3 * i);
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetArray(*t, &a));
  for (PetscInt i = 0; i < nt; i++) a[i] = (PetscScalar)(i % 3);
  PetscCall(VecRestoreArray(*t, &a));
  PetscFunctionReturn(0);
}

static PetscReal RelErr(Vec a, Vec b)
{
  PetscReal nb, nd;
  Vec       d;

  if (VecDuplicate(a, &d) || VecWAXPY(d, -1.0, a, b) || VecNorm(d, NORM_2, &nd) || VecNorm(b, NORM_2, &nb) || VecDestroy(&d)) return PETSC_MAX_REAL;
  return nd / PetscMax(nb, PETSC_SMALL);
}

/* loss, input gradient and parameter gradient of the serial and the parallel block on the same batch */
typedef struct {
  PetscReal loss, eloss, edx, eg;
  PetscInt  itf, ita;
} Comparison;

static PetscErrorCode Compare(const char prefix[], const Config *c, const char *extra[], PetscInt ncalls, Comparison *r)
{
  char       pser[64], ppar[64];
  NN         ser, par;
  NNLayer    bser, bpar;
  Vec        x, t, dxs, dxp, gs, gp, ths, thp;
  PetscReal  ls, lp = 0;
  NNMGRIT    mg;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(pser, sizeof(pser), "%ss_", prefix));
  PetscCall(PetscSNPrintf(ppar, sizeof(ppar), "%sp_", prefix));
  PetscCall(BuildNet(pser, c, PETSC_FALSE, NULL, &ser, &bser));
  PetscCall(BuildNet(ppar, c, PETSC_TRUE, extra, &par, &bpar));
  PetscCall(NNGetParameters(ser, &ths));
  PetscCall(NNGetParameters(par, &thp));
  PetscCall(VecCopy(ths, thp));
  PetscCall(FillBatch(ser, &x, &t));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(NNLossGradient(ser, c->nbatch, x, t, &ls, dxs));
  for (PetscInt i = 0; i < ncalls; i++) PetscCall(NNLossGradient(par, c->nbatch, x, t, &lp, dxp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(NNGetGradient(par, &gp));
  r->loss  = ls;
  r->eloss = PetscAbsReal(lp - ls) / PetscAbsReal(ls);
  r->edx   = RelErr(dxp, dxs);
  r->eg    = RelErr(gp, gs);
  PetscCall(NNLayerODEGetMGRIT(bpar, &mg));
  PetscCheck(mg, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the parallel block has no MGRIT solver");
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_FALSE, &r->itf));
  PetscCall(NNMGRITGetIterationNumber(mg, PETSC_TRUE, &r->ita));
  {
    NNMGRIT none;
    PetscCall(NNLayerODEGetMGRIT(bser, &none));
    PetscCheck(!none, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the serial block has an MGRIT solver");
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxs));
  PetscCall(VecDestroy(&dxp));
  PetscCall(NNDestroy(&ser));
  PetscCall(NNDestroy(&par));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestEquivalence(void)
{
  const Config cfgs[] = {
    {"rk 1fe, per-step parameters",  "ts",       "1fe", NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 16, 4, 5},
    {"discrete, per-step parameters", "discrete", NULL,  NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 16, 4, 5},
    {"rk 1fe, shared parameters",    "ts",       "1fe", NNODE_PARAMETERS_SHARED,   PETSC_FALSE, 16, 4, 5},
    {"rk 4, shared parameters, time input", "ts", "4",  NNODE_PARAMETERS_SHARED,   PETSC_TRUE,  16, 4, 5},
    {"rk 3bs, per-step parameters",  "ts",       "3bs", NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 16, 4, 5},
  };
  const char *levels[] = {"2", "3"}, *relax[] = {"F", "FCF"};
  PetscReal   tol      = 1e-10;
  int         id       = 0;

  PetscFunctionBegin;
  for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); i++) {
    for (int L = 0; L < 2; L++) {
      for (int rx = 0; rx < 2; rx++) {
        const char *extra[] = {"blk_mgrit_levels", levels[L], "blk_mgrit_relax", relax[rx], "blk_mgrit_rtol", "1e-12", "blk_mgrit_atol", "1e-50", NULL};
        char        prefix[32];
        Comparison  r;
        if (i >= 2 && (L + rx) % 2) continue; /* the other integrators: 2 levels F and 3 levels FCF */
        PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "e%d", id++));
        PetscCall(Compare(prefix, &cfgs[i], extra, 1, &r));
        if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [loss %.6f: errors loss %.2e, input gradient %.2e, parameter gradient %.2e; MGRIT iterations %" PetscInt_FMT " + %" PetscInt_FMT "]\n", (double)r.loss, (double)r.eloss, (double)r.edx, (double)r.eg, r.itf, r.ita));
        PetscCheck(r.eloss < tol && r.edx < tol && r.eg < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s levels, %s: MGRIT differs from the serial block: loss %g, input gradient %g, parameter gradient %g", cfgs[i].name, levels[L], relax[rx], (double)r.eloss, (double)r.edx, (double)r.eg);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s levels, %s-relaxation: loss, input gradient and parameter gradient match the serial block within %g: PASS\n", cfgs[i].name, levels[L], relax[rx], (double)tol));
      }
    }
  }
  { /* MGRIT over groups of consecutive ranks (half of them when their number is even), each group redundant */
    const Config c = cfgs[0];
    PetscMPIInt  size;
    char         p[16];
    Comparison   r;
    PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PetscSNPrintf(p, sizeof(p), "%d", size % 2 ? size : size / 2));
    {
      const char *extra[] = {"blk_mgrit_ranks", p, "blk_mgrit_rtol", "1e-12", NULL};
      PetscCall(Compare("eg", &c, extra, 1, &r));
    }
    PetscCheck(r.eloss < tol && r.edx < tol && r.eg < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MGRIT groups: differs from the serial block: loss %g, input gradient %g, parameter gradient %g", (double)r.eloss, (double)r.edx, (double)r.eg);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, MGRIT over groups of half the ranks (-blk_mgrit_ranks): the serial block within %g: PASS\n", c.name, (double)tol));
  }
  PetscFunctionReturn(0);
}

/* F-relaxation, two levels: after N/m iterations the fine states are the sequential ones (each coarse correction
   makes one more C-point exact) */
static PetscErrorCode TestExactness(void)
{
  const Config c = {"discrete, per-step", "discrete", NULL, NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 16, 4, 5};
  PetscInt     m = 2, K = c.N / m;
  char         its[16], itsm1[16];
  Comparison   r, r1;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(its, sizeof(its), "%" PetscInt_FMT, K));
  PetscCall(PetscSNPrintf(itsm1, sizeof(itsm1), "%" PetscInt_FMT, K - 1));
  {
    const char *extra[] = {"blk_mgrit_levels", "2", "blk_mgrit_relax", "F", "blk_mgrit_cf", "2", "blk_mgrit_rtol", "0", "blk_mgrit_atol", "0", "blk_mgrit_max_it", its, NULL};
    PetscCall(Compare("x0", &c, extra, 1, &r));
  }
  {
    const char *extra[] = {"blk_mgrit_levels", "2", "blk_mgrit_relax", "F", "blk_mgrit_cf", "2", "blk_mgrit_rtol", "0", "blk_mgrit_atol", "0", "blk_mgrit_max_it", itsm1, NULL};
    PetscCall(Compare("x1", &c, extra, 1, &r1));
  }
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [after N/m-1 = %" PetscInt_FMT " iterations: gradient error %.2e; after N/m = %" PetscInt_FMT ": loss %.2e, gradient %.2e]\n", K - 1, (double)r1.eg, K, (double)r.eloss, (double)r.eg));
  PetscCheck(r.itf == K && r.ita == K, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "expected %" PetscInt_FMT " iterations, got %" PetscInt_FMT " + %" PetscInt_FMT, K, r.itf, r.ita);
  PetscCheck(r.eloss < 1e-13 && r.edx < 1e-13 && r.eg < 1e-13, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "after N/m iterations MGRIT should be exact: errors %g %g %g", (double)r.eloss, (double)r.edx, (double)r.eg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "discrete per-step block, N = %" PetscInt_FMT ", F-relaxation, two levels, m = %" PetscInt_FMT ": the serial loss and gradients after N/m = %" PetscInt_FMT " iterations (relative error below 1e-13): PASS\n", c.N, m, K));
  PetscFunctionReturn(0);
}

/* one-shot: one V-cycle per solve, warm-started; at fixed parameters repeated gradients converge to the exact one */
static PetscErrorCode TestOneShot(void)
{
  const Config c = {"rk 1fe, per-step", "ts", "1fe", NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 16, 4, 5};
  Comparison   r1, r20;

  PetscFunctionBegin;
  {
    const char *extra[] = {"blk_mgrit_mode", "one_shot", "blk_mgrit_one_shot_it", "1", NULL};
    PetscCall(Compare("o0", &c, extra, 1, &r1));
  }
  {
    const char *extra[] = {"blk_mgrit_mode", "one_shot", "blk_mgrit_one_shot_it", "1", NULL};
    PetscCall(Compare("o1", &c, extra, 20, &r20));
  }
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [one-shot gradient error after 1 call %.2e, after 20 calls %.2e]\n", (double)r1.eg, (double)r20.eg));
  PetscCheck(r1.eg > 1e-8, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "one iteration should not be exact yet (error %g)", (double)r1.eg);
  PetscCheck(r20.eg < 1e-10 && r20.eloss < 1e-10 && r20.edx < 1e-10, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "warm-started one-shot should converge at fixed parameters: errors %g %g %g", (double)r20.eloss, (double)r20.edx, (double)r20.eg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "one-shot (1 iteration per solve): inexact after one gradient, the serial gradient within 1e-10 after 20 warm-started ones: PASS\n"));
  {
    const char *extra[] = {"blk_mgrit_mode", "one_shot", "blk_mgrit_one_shot_it", "1", "blk_mgrit_one_shot_increase_every", "2", "blk_mgrit_one_shot_max_it", "3", NULL};
    PetscCall(Compare("o2", &c, extra, 7, &r1)); /* 1, 1, 2, 2, 3, 3, 3 */
  }
  PetscCheck(r1.itf == 3 && r1.ita == 3, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the one-shot schedule should have raised the iterations to 3, got %" PetscInt_FMT " + %" PetscInt_FMT, r1.itf, r1.ita);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "one-shot schedule (one more iteration every 2 gradients, at most 3): 3 iterations after 7 gradients: PASS\n"));
  PetscFunctionReturn(0);
}

/* evaluation mode: the fine steps in order on every rank, the serial block's output */
static PetscErrorCode TestInference(void)
{
  const Config c = {"rk 4, per-step", "ts", "4", NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 16, 4, 5};
  NN           ser, par;
  NNLayer      b;
  Vec          ths, thp, x, ys, yp;
  PetscReal    e;

  PetscFunctionBegin;
  PetscCall(BuildNet("is_", &c, PETSC_FALSE, NULL, &ser, &b));
  PetscCall(BuildNet("ip_", &c, PETSC_TRUE, NULL, &par, &b));
  PetscCall(NNGetParameters(ser, &ths));
  PetscCall(NNGetParameters(par, &thp));
  PetscCall(VecCopy(ths, thp));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3 * 7, &x)); /* 7 samples: two batches, the second partial */
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3 * 7, &ys));
  PetscCall(VecDuplicate(ys, &yp));
  {
    PetscScalar *a;
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < 21; i++) a[i] = PetscCosReal(0.3 + 1.1 * i);
    PetscCall(VecRestoreArray(x, &a));
  }
  PetscCall(NNPredict(ser, x, ys));
  PetscCall(NNPredict(par, x, yp));
  e = RelErr(yp, ys);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  [inference error %.2e]\n", (double)e));
  PetscCheck(e < 1e-12, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "inference differs from the serial block: %g", (double)e);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "inference (evaluation mode, rk 4): the serial block's outputs within 1e-12: PASS\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ys));
  PetscCall(VecDestroy(&yp));
  PetscCall(NNDestroy(&ser));
  PetscCall(NNDestroy(&par));
  PetscFunctionReturn(0);
}

/* an unsupported setting fails on every rank with a message containing expect */
static PetscErrorCode ExpectError(const char what[], const char prefix[], const Config *c, const char *extra[], const char expect[])
{
  NN             net = NULL;
  NNLayer        b;
  Vec            x = NULL, t = NULL;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg = NULL, *found = NULL;

  PetscFunctionBegin;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = BuildNet(prefix, c, PETSC_TRUE, extra, &net, &b);
  if (!ierr) ierr = FillBatch(net, &x, &t);
  if (!ierr) ierr = NNLossGradient(net, c->nbatch, x, t, NULL, NULL);
  PetscCall(PetscPopErrorHandler());
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", what);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not contain \"%s\"", what, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", what, expect));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestRefusals(void)
{
  Config      c        = {"cn", "ts", NULL, NNODE_PARAMETERS_PER_STEP, PETSC_FALSE, 8, 4, 5};
  const char *cn[]     = {"blk_ts_type", "cn", NULL};
  const char *ckpt[]   = {"blk_checkpoints", "2", NULL};
  const char *ranks[]  = {"blk_mgrit_ranks", "1000", NULL};

  PetscFunctionBegin;
  PetscCall(ExpectError("MGRIT with cn", "r0_", &c, cn, "needs an explicit Runge-Kutta integrator"));
  c.rktype = "1fe";
  PetscCall(ExpectError("MGRIT with checkpoints", "r1_", &c, ckpt, "does not apply with -r1_blk_parallel mgrit"));
  PetscCall(ExpectError("MGRIT over more ranks than there are", "r2_", &c, ranks, "must divide the"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char      *only[8];
  PetscInt   nonly = 8;
  PetscBool  flg, run[5] = {PETSC_TRUE, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE, PETSC_TRUE};
  const char *parts[5] = {"equivalence", "exactness", "oneshot", "inference", "refusals"};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-only", only, &nonly, &flg));
  if (flg) {
    for (int i = 0; i < 5; i++) {
      run[i] = PETSC_FALSE;
      for (PetscInt j = 0; j < nonly; j++) {
        PetscBool m;
        PetscCall(PetscStrcmp(only[j], parts[i], &m));
        run[i] = (PetscBool)(run[i] || m);
      }
    }
    for (PetscInt j = 0; j < nonly; j++) PetscCall(PetscFree(only[j]));
  }
  if (run[0]) PetscCall(TestEquivalence());
  if (run[1]) PetscCall(TestExactness());
  if (run[2]) PetscCall(TestOneShot());
  if (run[3]) PetscCall(TestInference());
  if (run[4]) PetscCall(TestRefusals());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      output_file: output/ode_mgrit_1.out

   test:
      suffix: 2
      nsize: 2
      output_file: output/ode_mgrit_1.out

   test:
      suffix: 3
      nsize: 3
      output_file: output/ode_mgrit_1.out

   test:
      suffix: 4
      nsize: 4
      output_file: output/ode_mgrit_1.out

   test:
      suffix: 8
      nsize: 8
      output_file: output/ode_mgrit_1.out

TEST*/
