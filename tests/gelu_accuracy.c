static char help[] = "Accuracy of the gelu layer: y = x Phi(x) and dy/dx = Phi(x) + x phi(x) from its forward and\n"
                     "backward passes against a long double reference (glibc erfcl, expl) on a uniform grid of\n"
                     "[-40, 40], on tiny and near-boundary arguments, and on normal samples; the limits at +-inf,\n"
                     "zero and NaN exactly. The relative error is measured against max(|y|, DBL_MIN) and, for the\n"
                     "derivative, against max(|Phi| + |x phi|, DBL_MIN) (the derivative has a root near -0.75).\n"
                     "The layer's AVX2 and baseline loops (its -avx2 option) must agree bit for bit.\n\n"
                     "  -verbose            print the measured errors, also of the formula 0.5 x (1 + erf(x/sqrt 2))\n"
                     "  -bench_n <n>        instead: forward and backward passes on n normal samples (for callgrind)\n"
                     "  -bench_sigma <s>    their standard deviation (default 1)\n"
                     "  -bench_repeat <r>   how many passes (default 1)\n"
                     "  -bench_avx2 <bool>  the layer's -avx2 option there (default true)\n"
                     "  -verbose with -bench_n: a hash of the bits of y and dy/dx\n\n";

#include <petnn.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

static const PetscReal tol = 1e-14;
static PetscBool       verbose = PETSC_FALSE;

typedef struct {
  PetscReal ey, ed;         /* largest scaled errors of y and dy/dx */
  PetscReal xy, xd;         /* where */
  PetscReal oy, od;         /* the same for the erf formula in double */
} Errors;

/* the exact values: Phi(x) = erfc(-x/sqrt 2)/2 and phi(x) in long double */
static void Reference(PetscReal x, long double *y, long double *d, long double *scale)
{
  const long double xl = x, Phi = 0.5L * erfcl(-xl * 0.707106781186547524400844362104849039L);
  const long double phi = 0.398942280401432677939946059934381868L * expl(-0.5L * xl * xl);

  *y     = xl * Phi;
  *d     = Phi + xl * phi;
  *scale = fabsl(Phi) + fabsl(xl * phi);
}

/* forward and backward (dy = 1) through a gelu layer; avx2: its -avx2 option */
static PetscErrorCode Passes(PetscInt m, const PetscReal *xs, PetscBool avx2, PetscReal *ys, PetscReal *ds)
{
  NNLayer      l;
  NNShape      s;
  Vec          x, y, dy, dx;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(NNLayerCreate(PETSC_COMM_SELF, &l));
  PetscCall(NNLayerSetType(l, NNLAYERGELU));
  PetscCall(NNLayerSetOptionsPrefix(l, "g_"));
  PetscCall(PetscOptionsSetValue(NULL, "-g_avx2", avx2 ? "1" : "0"));
  PetscCall(NNLayerSetFromOptions(l));
  PetscCall(PetscOptionsClearValue(NULL, "-g_avx2"));
  PetscCall(NNShapeSet(&s, 1, &m));
  PetscCall(NNLayerSetInputShape(l, &s));
  PetscCall(NNLayerSetBatchCapacity(l, 1));
  PetscCall(NNLayerSetUp(l));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &x));
  PetscCall(VecDuplicate(x, &y));
  PetscCall(VecDuplicate(x, &dy));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < m; i++) a[i] = xs[i];
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecSet(dy, 1.0));
  PetscCall(NNLayerForward(l, 1, x, y));
  PetscCall(NNLayerBackward(l, 1, x, y, dy, dx));
  PetscCall(VecGetArray(y, &a));
  for (PetscInt i = 0; i < m; i++) ys[i] = PetscRealPart(a[i]);
  PetscCall(VecRestoreArray(y, &a));
  PetscCall(VecGetArray(dx, &a));
  for (PetscInt i = 0; i < m; i++) ds[i] = PetscRealPart(a[i]);
  PetscCall(VecRestoreArray(dx, &a));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&dy));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNLayerDestroy(&l));
  PetscFunctionReturn(0);
}

static void Update(PetscReal x, PetscReal y, PetscReal d, Errors *e)
{
  long double yr, dr, sc;
  PetscReal   ey, ed, yo, dold;

  Reference(x, &yr, &dr, &sc);
  ey = (PetscReal)(fabsl(y - yr) / fmaxl(fabsl(yr), DBL_MIN));
  ed = (PetscReal)(fabsl(d - dr) / fmaxl(sc, DBL_MIN));
  if (ey > e->ey) { e->ey = ey; e->xy = x; }
  if (ed > e->ed) { e->ed = ed; e->xd = x; }
  yo   = 0.5 * x * (1 + erf(x * M_SQRT1_2)); /* the formula the layer used before, for comparison */
  dold = 0.5 * (1 + erf(x * M_SQRT1_2)) + x * exp(-0.5 * x * x) * 0.5 * M_2_SQRTPI * M_SQRT1_2;
  if (PetscIsNormalReal(yo) || yo == 0) e->oy = PetscMax(e->oy, (PetscReal)(fabsl(yo - yr) / fmaxl(fabsl(yr), DBL_MIN)));
  e->od = PetscMax(e->od, (PetscReal)(fabsl(dold - dr) / fmaxl(sc, DBL_MIN)));
}

static PetscErrorCode CheckSet(const char what[], PetscInt m, const PetscReal *xs)
{
  PetscReal *ys, *ds, *ys2, *ds2;
  Errors     e = {0, 0, 0, 0, 0, 0};

  PetscFunctionBegin;
  PetscCall(PetscMalloc4(m, &ys, m, &ds, m, &ys2, m, &ds2));
  PetscCall(Passes(m, xs, PETSC_TRUE, ys, ds));
  PetscCall(Passes(m, xs, PETSC_FALSE, ys2, ds2));
  PetscCheck(!memcmp(ys, ys2, m * sizeof(PetscReal)) && !memcmp(ds, ds2, m * sizeof(PetscReal)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "gelu %s: the AVX2 and the baseline loops differ", what);
  for (PetscInt i = 0; i < m; i++) Update(xs[i], ys[i], ds[i], &e);
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: y %.2e (at %.17g), dy/dx %.2e (at %.17g); erf formula %.2e, %.2e\n", what, (double)e.ey, (double)e.xy, (double)e.ed, (double)e.xd, (double)e.oy, (double)e.od));
  PetscCheck(e.ey <= tol && e.ed <= tol, PETSC_COMM_SELF, PETSC_ERR_PLIB, "gelu %s: error of y %g at x = %.17g, of dy/dx %g at x = %.17g, bar %g", what, (double)e.ey, (double)e.xy, (double)e.ed, (double)e.xd, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gelu %s (%" PetscInt_FMT " points): y and dy/dx within 1e-14, AVX2 and baseline loops bitwise equal\n", what, m));
  PetscCall(PetscFree4(ys, ds, ys2, ds2));
  PetscFunctionReturn(0);
}

/* normal samples by Box-Muller from PETSc's generator */
static PetscErrorCode Normal(PetscInt m, PetscReal sigma, PetscReal *xs)
{
  PetscRandom r;
  PetscReal   u, v;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 20));
  PetscCall(PetscRandomSeed(r));
  for (PetscInt i = 0; i < m; i++) {
    PetscCall(PetscRandomGetValueReal(r, &u));
    PetscCall(PetscRandomGetValueReal(r, &v));
    xs[i] = sigma * PetscSqrtReal(-2 * PetscLogReal(1 - u)) * PetscCosReal(2 * PETSC_PI * v);
  }
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckAll(void)
{
  const PetscInt  ng = 800001, nt = 2 * 620, nn = 200000;
  const PetscReal edges[] = {0.5, 0.75, 0.84375 * M_SQRT2, 1.25 * M_SQRT2, 1.5, 2, 1 / 0.35 * M_SQRT2, 6 * M_SQRT2, 8.3, 9, 37.5, 37.6, 38, 38.5, 40};
  PetscReal      *xs;
  PetscInt        k = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(ng, &xs));
  for (PetscInt i = 0; i < ng; i++) xs[i] = -40 + 80.0 * i / (ng - 1);
  PetscCall(CheckSet("on a uniform grid of [-40, 40]", ng, xs));
  for (PetscInt i = 0; i < nt / 2; i++) { /* |x| from 1e-310 to 1e0 */
    xs[k]     = PetscPowReal(10.0, -310 + i * 0.5);
    xs[k + 1] = -xs[k];
    k += 2;
  }
  PetscCall(CheckSet("on tiny arguments", k, xs));
  k = 0;
  for (size_t j = 0; j < sizeof(edges) / sizeof(edges[0]); j++) { /* the neighbours of range boundaries */
    PetscReal b = edges[j];
    for (PetscInt s = 0; s < 2; s++, b = -b) {
      PetscReal lo = b, hi = b;
      for (PetscInt i = 0; i < 8; i++) {
        xs[k++] = lo = nextafter(lo, -INFINITY);
        xs[k++] = hi = nextafter(hi, INFINITY);
      }
    }
  }
  PetscCall(CheckSet("next to range boundaries", k, xs));
  PetscCall(Normal(nn, 1.0, xs));
  PetscCall(CheckSet("on normal samples", nn, xs));
  PetscCall(PetscFree(xs));
  PetscFunctionReturn(0);
}

/* zero, the limits at +-inf, and NaN exactly */
static PetscErrorCode CheckSpecial(void)
{
  const PetscReal xs[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, DBL_MAX, -DBL_MAX, 4.9406564584124654e-324, -4.9406564584124654e-324};
  const PetscInt  m    = sizeof(xs) / sizeof(xs[0]);
  PetscReal       ys[sizeof(xs) / sizeof(xs[0])], ds[sizeof(xs) / sizeof(xs[0])], ys2[sizeof(xs) / sizeof(xs[0])], ds2[sizeof(xs) / sizeof(xs[0])];
  PetscBool       ok;

  PetscFunctionBegin;
  PetscCall(Passes(m, xs, PETSC_TRUE, ys, ds));
  PetscCall(Passes(m, xs, PETSC_FALSE, ys2, ds2));
  PetscCheck(!memcmp(ys, ys2, sizeof(ys)) && !memcmp(ds, ds2, sizeof(ds)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "gelu: the AVX2 and the baseline loops differ at the special values");
  ok = (PetscBool)(ys[0] == 0 && ds[0] == 0.5 && ys[1] == 0 && ds[1] == 0.5);
  ok = (PetscBool)(ok && ys[2] == INFINITY && ds[2] == 1 && ys[3] == 0 && ds[3] == 0);
  ok = (PetscBool)(ok && PetscIsNanReal(ys[4]) && PetscIsNanReal(ds[4]));
  ok = (PetscBool)(ok && ys[5] == DBL_MAX && ds[5] == 1 && ys[6] == 0 && ds[6] == 0);
  ok = (PetscBool)(ok && ys[7] == 0 && ds[7] == 0.5 && ys[8] == 0 && ds[8] == 0.5);
  for (PetscInt i = 0; i < m && verbose; i++) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  x = %g: y = %g, dy/dx = %g\n", (double)xs[i], (double)ys[i], (double)ds[i]));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_PLIB, "gelu: wrong values at 0, +-inf, NaN, +-DBL_MAX or +-DBL_TRUE_MIN (run with -verbose)");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gelu at 0, +-inf, NaN, +-DBL_MAX, +-DBL_TRUE_MIN: exact limits\n"));
  PetscFunctionReturn(0);
}

/* forward and backward passes only, for counting instructions (valgrind --tool=callgrind) */
static PetscErrorCode Bench(PetscInt n, PetscReal sigma, PetscInt repeat, PetscBool avx2)
{
  PetscReal *xs, *ys, *ds;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(n, &xs, n, &ys, n, &ds));
  PetscCall(Normal(n, sigma, xs));
  for (PetscInt r = 0; r < repeat; r++) PetscCall(Passes(n, xs, avx2, ys, ds));
  if (verbose) { /* a hash of the bits of the results, to compare builds or code paths */
    uint64_t hy = 0, hd = 0, u;
    for (PetscInt i = 0; i < n; i++) {
      memcpy(&u, &ys[i], sizeof(u));
      hy = hy * 1000003 + u;
      memcpy(&u, &ds[i], sizeof(u));
      hd = hd * 1000003 + u;
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  hash of y %016llx, of dy/dx %016llx\n", (unsigned long long)hy, (unsigned long long)hd));
  }
  PetscCall(PetscFree3(xs, ys, ds));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt  bn = 0, repeat = 1;
  PetscReal sigma = 1;
  PetscBool avx2 = PETSC_TRUE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_n", &bn, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-bench_sigma", &sigma, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_repeat", &repeat, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bench_avx2", &avx2, NULL));
  if (bn > 0) PetscCall(Bench(bn, sigma, repeat, avx2));
  else {
    PetscCall(CheckAll());
    PetscCall(CheckSpecial());
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1

TEST*/
