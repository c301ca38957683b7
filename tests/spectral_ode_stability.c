static char help[] = "The stability check of an ODE block's step (NNODECheckStability()) on a linear test ODE du/dt = W u\n"
                     "(f = a dense layer without bias, W upper triangular with known eigenvalues) with h = 1/4: RK4 just\n"
                     "inside and just outside its real stability boundary -2.7853, forward Euler (discrete scheme and rk 1fe)\n"
                     "around -2, the theta methods cn and beuler; the spectrum view; bad input.\n\n";

#include <petnn.h>

#define S 4
static const PetscReal RK4_BOUNDARY = 2.785293563405282; /* |z| where R(z) = 1 on the negative real axis */

typedef struct {
  const char *name, *tstype, *rktype;
  NNODEScheme scheme;
  PetscReal   lambda1; /* the eigenvalue of largest magnitude; the others are -3, -1, -0.5 */
  PetscBool   stable;
  PetscReal   boundary; /* |h lambda| at the real stability boundary (0: none) */
} Case;

static PetscErrorCode BuildLinear(const char prefix[], const Case *c, NN *net, Vec *x)
{
  NNLayer      l, blk;
  PetscInt     shape[] = {S}, np;
  PetscScalar *w, *xa;
  char         opt[128];
  PetscReal    diag[S] = {c->lambda1, -3, -1, -0.5};

  PetscFunctionBegin;
  if (c->tstype) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%slin_ts_type", prefix));
    PetscCall(PetscOptionsSetValue(NULL, opt, c->tstype));
  }
  if (c->rktype) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%slin_ts_rk_type", prefix));
    PetscCall(PetscOptionsSetValue(NULL, opt, c->rktype));
  }
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 1, shape));
  PetscCall(NNSetBatchSize(*net, 2));
  PetscCall(NNSetLoss(*net, "mse"));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "lin", &blk));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERDENSE, "fl", &l));
  PetscCall(NNLayerDenseSetUnits(l, S));
  PetscCall(NNLayerDenseSetBias(l, PETSC_FALSE));
  PetscCall(NNLayerODESetSteps(blk, 4));
  PetscCall(NNLayerODESetTime(blk, 1.0));
  PetscCall(NNLayerODESetScheme(blk, c->scheme));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "out", &l));
  PetscCall(NNLayerDenseSetUnits(l, 1));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  /* W upper triangular (in either storage order): its eigenvalues are its diagonal */
  PetscCall(NNGetLayerParameters(*net, "fl", &np, &w));
  PetscCheck(np == S * S, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "fl has %" PetscInt_FMT " parameters", np);
  for (PetscInt i = 0; i < S; i++)
    for (PetscInt j = 0; j < S; j++) w[i * S + j] = i == j ? diag[i] : (j > i ? 0.3 + 0.1 * (i + j) : 0);
  PetscCall(NNRestoreLayerParameters(*net, "fl", &w));
  PetscCall(NNCreateBatchVecs(*net, x, NULL));
  PetscCall(VecGetArray(*x, &xa));
  for (PetscInt i = 0; i < 2 * S; i++) xa[i] = PetscSinReal(1.0 + i);
  PetscCall(VecRestoreArray(*x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(const char prefix[], const Case *c)
{
  NN             net;
  Vec            x;
  PetscInt       nc, ns;
  PetscReal      re[2 * S], im[2 * S], err;
  NNODEStability st;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(BuildLinear(prefix, c, &net, &x));
  PetscCall(NNODEComputeSpectrum(net, "lin", 2, x, 1, 0, NNODE_SPECTRUM_LARGEST_MAGNITUDE, 1, &nc, re, im));
  PetscCall(NNODEComputeSpectrum(net, "lin", 2, x, 1, 0, NNODE_SPECTRUM_SMALLEST_MAGNITUDE, 3, &ns, re + 1, im + 1));
  PetscCheck(nc == 1 && ns == 3, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "%s: %" PetscInt_FMT " and %" PetscInt_FMT " eigenvalues converged", c->name, nc, ns);
  err = PetscAbsReal(re[0] - c->lambda1) / PetscAbsReal(c->lambda1) + PetscAbsReal(im[0]);
  err = PetscMax(err, PetscAbsReal(re[1] + 0.5) / 0.5 + PetscAbsReal(re[2] + 1) + PetscAbsReal(re[3] + 3) / 3);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: lambda = %g and smallest -0.5, -1, -3: %s\n", c->name, (double)c->lambda1, err <= 1e-8 ? "pass" : "FAIL"));
  PetscCall(NNODECheckStability(net, "lin", 4, re, im, NNODE_STABILITY_WARN, &st));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: h lambda = %g, |R(h lambda)| %s 1, %s as expected: %s\n", c->name, (double)(0.25 * c->lambda1), st.Rmax > 1 ? ">" : "<=", st.stable ? "stable" : "unstable", st.stable == c->stable ? "pass" : "FAIL"));
  if (c->boundary > 0) { /* the largest stable step along the negative real axis */
    PetscReal e = PetscAbsReal(st.hmax * PetscAbsReal(c->lambda1) - c->boundary) / c->boundary;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: largest stable h |lambda| = %.6f: %s\n", c->name, (double)(st.hmax * PetscAbsReal(c->lambda1)), e <= 1e-8 ? "pass" : "FAIL"));
  } else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: every step stable on the negative real axis: %s\n", c->name, st.hmax == PETSC_INFINITY ? "pass" : "FAIL"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: stiffness ratio %g: %s\n", c->name, (double)st.stiffness, PetscAbsReal(st.stiffness - PetscAbsReal(c->lambda1) / 0.5) <= 1e-8 * st.stiffness ? "pass" : "FAIL"));
  if (!c->stable) { /* refused with -stability_check error */
    const char *text;
    char       *msg, *found = NULL;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = NNODECheckStability(net, "lin", 4, re, im, NNODE_STABILITY_ERROR, NULL);
    PetscCall(PetscPopErrorHandler());
    PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no error", c->name);
    PetscCall(NNErrorMessage(ierr, &text, &msg));
    if (msg) PetscCall(PetscStrstr(msg, "ODE block lin: the step h = 0.25", &found));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: refused with an error naming the block and h: %s\n", c->name, found ? "pass" : "FAIL"));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* R(z) of each scheme at a point */
static PetscErrorCode CheckR(const char prefix[], const Case *c, PetscReal zr, PetscReal zi, PetscReal Rr, PetscReal Ri)
{
  NN        net;
  Vec       x;
  PetscReal gr, gi;

  PetscFunctionBegin;
  PetscCall(BuildLinear(prefix, c, &net, &x));
  PetscCall(NNODEStabilityFunction(net, "lin", zr, zi, &gr, &gi));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "R(%g%+gi) of %s: %s\n", (double)zr, (double)zi, c->name, PetscAbsReal(gr - Rr) + PetscAbsReal(gi - Ri) <= 1e-14 ? "pass" : "FAIL"));
  PetscCall(VecDestroy(&x));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectError(const char name[], PetscErrorCode ierr, const char expect[])
{
  const char *text;
  char       *msg, *found = NULL;

  PetscFunctionBegin;
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: expected an error, got none", name);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Case %s: the error message \"%s\" does not contain \"%s\"", name, msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: clear error (%s)\n", name, expect));
  PetscFunctionReturn(0);
}

static PetscErrorCode BadInput(void)
{
  const Case     c = {"bad", "rk", "4", NNODE_SCHEME_TS, -11.0, PETSC_TRUE, 0};
  NN             net;
  Vec            x;
  Mat            J = NULL;
  PetscInt       nc;
  PetscReal      re[8], im[8];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(BuildLinear("bad_", &c, &net, &x));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNODEComputeSpectrum(net, "nope", 2, x, 0, 0, NNODE_SPECTRUM_LARGEST_MAGNITUDE, 1, &nc, re, im);
  PetscCall(ExpectError("unknown block", ierr, "no layer named nope; its ODE blocks: lin"));
  ierr = NNODEComputeSpectrum(net, "out", 2, x, 0, 0, NNODE_SPECTRUM_LARGEST_MAGNITUDE, 1, &nc, re, im);
  PetscCall(ExpectError("not an ODE block", ierr, "Layer out is of type dense, not an ODE block"));
  ierr = NNODEComputeSpectrum(net, "lin", 2, x, 0, 0, NNODE_SPECTRUM_LARGEST_MAGNITUDE, S + 1, &nc, re, im);
  PetscCall(ExpectError("nev too large", ierr, "5 eigenvalues asked for; give 1 to 4"));
  ierr = NNODEComputeSpectrum(net, "lin", 2, x, 2, 0, NNODE_SPECTRUM_LARGEST_MAGNITUDE, 1, &nc, re, im);
  PetscCall(ExpectError("sample outside the batch", ierr, "sample 2 is not in the batch of 2 samples"));
  ierr = NNODEComputeSpectrum(net, "lin", 2, x, 0, 4, NNODE_SPECTRUM_LARGEST_MAGNITUDE, 1, &nc, re, im);
  PetscCall(ExpectError("step outside the trajectory", ierr, "step 4 is not a step of the block; give 0 to 3"));
  ierr = NNODECreateJacobian(net, "lin", 3, x, 0, 0, &J);
  PetscCall(ExpectError("too many samples", ierr, "3 samples: give 1 to 2"));
  PetscCall(PetscOptionsSetValue(NULL, "-bad_lin_stability_check", "often"));
  PetscCall(NNSetFromOptions(net)); /* read there, refused at set up and by the spectral routines */
  ierr = NNODEComputeSpectrum(net, "lin", 2, x, 0, 0, NNODE_SPECTRUM_LARGEST_MAGNITUDE, 1, &nc, re, im);
  PetscCall(ExpectError("bad -stability_check", ierr, "-bad_lin_stability_check often: valid are none, warn, error"));
  PetscCall(PetscOptionsSetValue(NULL, "-bad_lin_stability_check", "none"));
  PetscCall(NNSetFromOptions(net));
  PetscCall(PetscPopErrorHandler());
  PetscCall(MatDestroy(&J));
  PetscCall(VecDestroy(&x));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* the view of the unstable RK4 case, with the check as an option */
static PetscErrorCode View(void)
{
  const Case c = {"view", "rk", "4", NNODE_SCHEME_TS, -11.3, PETSC_FALSE, 0};
  NN         net;
  Vec        x;

  PetscFunctionBegin;
  PetscCall(PetscOptionsSetValue(NULL, "-view_lin_stability_check", "warn"));
  PetscCall(PetscOptionsSetValue(NULL, "-view_lin_spectrum_steps", "0,2"));
  PetscCall(PetscOptionsSetValue(NULL, "-view_lin_spectrum_nev", "2"));
  PetscCall(BuildLinear("view_", &c, &net, &x));
  PetscCall(NNODESpectrumView(net, "lin", 2, x, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(VecDestroy(&x));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const Case cases[] = {
    {"rk4 inside",            "rk",     "4",   NNODE_SCHEME_TS,       -11.0,  PETSC_TRUE,  RK4_BOUNDARY},
    {"rk4 outside",           "rk",     "4",   NNODE_SCHEME_TS,       -11.3,  PETSC_FALSE, RK4_BOUNDARY},
    {"forward Euler inside",  NULL,     NULL,  NNODE_SCHEME_DISCRETE, -7.9,   PETSC_TRUE,  2},
    {"forward Euler outside", NULL,     NULL,  NNODE_SCHEME_DISCRETE, -8.1,   PETSC_FALSE, 2},
    {"rk 1fe outside",        "rk",     "1fe", NNODE_SCHEME_TS,       -8.1,   PETSC_FALSE, 2},
    {"cn",                    "cn",     NULL,  NNODE_SCHEME_TS,       -100.0, PETSC_TRUE,  0},
    {"beuler",                "beuler", NULL,  NNODE_SCHEME_TS,       -100.0, PETSC_TRUE,  0},
  };
  char prefix[16];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  for (PetscInt i = 0; i < (PetscInt)(sizeof(cases) / sizeof(cases[0])); i++) {
    PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "c%d_", (int)i));
    PetscCall(RunCase(prefix, &cases[i]));
  }
  PetscCall(CheckR("r0_", &cases[0], -1, 0, 0.375, 0));                  /* 1 + z + z^2/2 + z^3/6 + z^4/24 */
  PetscCall(CheckR("r1_", &cases[0], 0, 1, 1 - 0.5 + 1.0 / 24, 1 - 1.0 / 6)); /* at z = i */
  PetscCall(CheckR("r2_", &cases[2], -1.5, 0.5, -0.5, 0.5));              /* 1 + z */
  PetscCall(CheckR("r3_", &cases[5], -2, 0, 0, 0));                      /* (1 + z/2)/(1 - z/2) */
  PetscCall(CheckR("r4_", &cases[6], -1, 0, 0.5, 0));                    /* 1/(1 - z) */
  PetscCall(View());
  PetscCall(BadInput());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   build:
      requires: slepc

   test:
      suffix: 1
      nsize: 1
      requires: slepc
      filter: grep -v "time:"
      output_file: output/spectral_ode_stability.out

   test:
      suffix: 2
      nsize: 2
      requires: slepc
      filter: grep -v "time:"
      output_file: output/spectral_ode_stability.out

   test:
      suffix: 3
      nsize: 3
      requires: slepc
      filter: grep -v "time:"
      output_file: output/spectral_ode_stability.out

   test:
      suffix: 4
      nsize: 4
      requires: slepc
      filter: grep -v "time:"
      output_file: output/spectral_ode_stability.out

TEST*/
