/*
   The gelu layer: y = x Phi(x) with the exact Gaussian CDF Phi (torch.nn.GELU()), and
   dy/dx = Phi(x) + x phi(x).

   glibc's erf and exp, called per value through a function pointer, took most of an FNO
   surrogate's call (57% of its instructions and 87% of its mispredicted branches: erf branches on
   the range of each value). Here the loops have no branches and the compiler vectorizes them, with
   Phi and exp of their own:

   - |x| < 1.25 sqrt 2: Phi(x) = 1/2 + x P(x^2), P a degree-12 Chebyshev fit of (Phi(x) - 1/2)/x
     (error below 1.3e-17); for x < 0, 1/2 + x P is exact in round-off (Sterbenz), so the smaller
     Phi(x) there keeps its relative accuracy (to 5e-15 at the boundary);
   - beyond: 1 - Phi(|x|) = erfc(a)/2, a = |x|/sqrt 2, with fdlibm's (Sun's) erfc: exp(-a^2 - 0.5625
     + R(1/a^2)/S(1/a^2))/a, R/S one of its two coefficient sets for a in [1.25, 1/0.35) and
     [1/0.35, 28] (selected per value by a bit mask), -a^2 = -x^2/2 taken from x as an exact head
     and a small tail, so the exponential of a large argument loses nothing. The forward pass
     evaluates the polynomial on every value, then gathers the values beyond it (a fifth of an
     FNO's), evaluates erfc on them and scatters the results back;
   - exp: k = round(t/ln 2), r = t - k ln 2 with ln 2 in two parts (exact for these arguments), a
     degree-13 Taylor polynomial on |r| <= 0.35 (truncation 4e-18) and 2^k built in the exponent
     bits. The result is scaled by 2^600 and the caller's factors multiply it before the final
     2^-600, so values in the subnormal range are rounded once.

   The backward pass takes Phi(x) = y/x from the forward output (2 roundings) and needs one exp for
   phi(x) = exp(-x^2/2)/sqrt(2 pi). Against a long double reference (tests/gelu_accuracy.c) y is
   within 5e-15 relative and dy/dx within 1.1e-15 (relative to |Phi| + |x phi|: dy/dx has a root
   near x = -0.75); 0.5 x (1 + erf(x/sqrt 2)), as before, lost all digits for x < -8 (1 + erf
   cancels). The loops are compiled twice, for the build's target and for AVX2 (without FMA: the
   same bits), the second used where the CPU has it.
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
  #define GELU_LOOP static inline __attribute__((always_inline))
#else
  #define GELU_LOOP static inline
#endif

#define GELU_LIMIT 40.0                /* beyond: y = x or 0, dy/dx = 1 or 0 (the values round to these) */
#define GELU_CORE  1.7677669529663689 /* 1.25 sqrt 2: Phi by the polynomial below, by erfc above */

static inline double GeluBits(uint64_t u)
{
  double d;
  memcpy(&d, &u, sizeof(d));
  return d;
}

static inline uint64_t GeluUint(double d)
{
  uint64_t u;
  memcpy(&u, &d, sizeof(u));
  return u;
}

/* exp(hi + lo) 2^600 for hi + lo in [-1000, 0] and hi = -xh^2/2 (GeluHalfSquare()): then hi - k ln2hi
   is exact (ln2hi has 32 bits, k 11); NaN propagates */
static inline double GeluExp600(double hi, double lo)
{
  const double ln2hi = 6.93147180369123816490e-01, ln2lo = 1.90821492927058770002e-10, shift = 0x1.8p52;
  const double kd = (hi + lo) * 1.44269504088896338700e+00 + shift; /* k in the low mantissa bits */
  const double k = kd - shift, r = (hi - k * ln2hi) + (lo - k * ln2lo);
  double       p = 1.0 / 6227020800.0; /* 1/13! */

  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  return p * GeluBits((GeluUint(kd) + 1623) << 52); /* 2^(k + 600): the exponent field is k + 1023 + 600 */
}

/* Phi(x) - 1/2 = x P(x^2) for |x| <= GELU_CORE */
static inline double GeluCore(double x)
{
  const double w = x * x;
  double       p = 3.988472966025683e-15;

  p = p * w - 1.7948532333039852e-13;
  p = p * w + 4.952317282847622e-12;
  p = p * w - 1.1249214169393794e-10;
  p = p * w + 2.2723763166570626e-09;
  p = p * w - 4.1224902762539765e-08;
  p = p * w + 6.659674811096371e-07;
  p = p * w - 9.4446549318593e-06;
  p = p * w + 0.00011543468700995727;
  p = p * w - 0.0011873282153154507;
  p = p * w + 0.009973557010012448;
  p = p * w - 0.06649038006690415;
  p = p * w + 0.39894228040143265;
  return 0.5 + x * p;
}

/* -x^2/2 = hi + lo with hi exact and |lo| < 2^-25 hi: x = xh + xl, xh with 26 bits, xh^2 exact */
static inline void GeluHalfSquare(double x, double *hi, double *lo)
{
  const double xh = GeluBits(GeluUint(x) & 0xfffffffff8000000ULL), xl = x - xh;

  *hi = -0.5 * xh * xh;
  *lo = -0.5 * xl * (x + xh);
}

/* fdlibm's erfc coefficients for a in [1.25, 1/0.35) (row 0) and [1/0.35, 28] (row 1), lowest degree first */
static const double GeluR[2][9] = { /* degree 7: the last column is unused */
  {-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01, -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02, -8.12874355063065934246e+01, -9.81432934416914548592e+00, 0},
  {-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01, -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03, -4.83519191608651397019e+02, 0, 0}};
static const double GeluS[2][9] = {
  {1, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02, 6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02, 6.57024977031928170135e+00, -6.04244152148580987438e-02},
  {1, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03, 3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02, -2.24409524465858183362e+01, 0}};

/* one coefficient of the row selected by the mask m (all ones: row 1), by bit operations: a select
   between two constants lets the compiler evaluate both rows in full */
static inline double GeluCoef(const double c[2][9], int j, uint64_t m)
{
  return GeluBits(GeluUint(c[0][j]) ^ (m & (GeluUint(c[0][j]) ^ GeluUint(c[1][j]))));
}

/* a erfc(a) 2^600 = exp(-a^2 - 0.5625 + R(v)/S(v)) 2^600 for a = |x|/sqrt 2 in [1.25, 28.3], v = 1/a^2
   (fdlibm's R/S, set m), with -a^2 = -x^2/2 from x itself, not from the rounded a */
static inline double GeluTail600(double x, double v, uint64_t m)
{
  double R = GeluCoef(GeluR, 7, m), S = GeluCoef(GeluS, 8, m), h, l;

  for (int j = 6; j >= 0; j--) R = R * v + GeluCoef(GeluR, j, m);
  for (int j = 7; j >= 0; j--) S = S * v + GeluCoef(GeluS, j, m);
  GeluHalfSquare(x, &h, &l);
  return GeluExp600(h, l + (R / S - 0.5625));
}

static inline double GeluClamp(double x)
{
  return x < -GELU_LIMIT ? -GELU_LIMIT : (x > GELU_LIMIT ? GELU_LIMIT : x); /* NaN stays */
}

/* y where |x| < GELU_CORE (garbage elsewhere) */
static inline double GeluCoreY(double xi)
{
  return xi * GeluCore(GeluClamp(xi));
}

/* y where |x| >= GELU_CORE or x is NaN (garbage elsewhere); fdlibm's coefficient set chosen per value */
static inline double GeluTailY(double xi)
{
  const double   xc = GeluClamp(xi), a = PetscAbsReal(xc) * M_SQRT1_2, v = 1 / (a * a);
  const uint64_t m  = (uint64_t)0 - (uint64_t)(a >= 1 / 0.35);
  const double   q  = (0.5 * a * v) * GeluTail600(xc, v, m); /* (1 - Phi(|x|)) 2^600 */
  const double   yn = (xc * q) * 0x1p-600, yp = xi * (1 - q * 0x1p-600);

  return xi < 0 ? yn : yp; /* both computed: a select, no branch */
}

#define GELU_BLOCK 256

/* The passes' loops, compiled twice (below): for the build's target and for AVX2. The forward pass
   evaluates the core polynomial on every value, then gathers the values beyond it (a fifth of an
   FNO's), evaluates the tail on them and scatters the results back, all without branches */
GELU_LOOP void GeluForwardLoop(PetscInt N, const PetscScalar *x, PetscScalar *y)
{
  PetscInt64 tail[GELU_BLOCK], idx[GELU_BLOCK];
  double     t[GELU_BLOCK];

  for (PetscInt b = 0; b < N; b += GELU_BLOCK) {
    const PetscScalar *xb = x + b;
    PetscScalar       *yb = y + b;
    const PetscInt64   nb = PetscMin(GELU_BLOCK, N - b);
    PetscInt64         n  = 0;

    for (PetscInt64 i = 0; i < nb; i++) {
      yb[i]   = GeluCoreY(xb[i]);
      tail[i] = !(PetscAbsReal(xb[i]) < GELU_CORE); /* NaN too */
    }
    for (PetscInt64 i = 0; i < nb; i++) { /* the indices of the tail values, in order */
      idx[n] = i;
      n += tail[i];
    }
    for (PetscInt64 j = 0; j < n; j++) t[j] = xb[idx[j]];
    for (PetscInt64 j = 0; j < n; j++) t[j] = GeluTailY(t[j]);
    for (PetscInt64 j = 0; j < n; j++) yb[idx[j]] = t[j];
  }
}

GELU_LOOP void GeluBackwardLoop(PetscInt N, const PetscScalar *x, const PetscScalar *y, const PetscScalar *dy, PetscScalar *dx)
{
  for (PetscInt i = 0; i < N; i++) {
    const double xi = x[i], ax = PetscAbsReal(xi), xc = GeluClamp(xi);
    double       h, lo, xphi, Phi, ratio = y[i] / xi;

    GeluHalfSquare(xc, &h, &lo);
    xphi = (xc * 0.398942280401432677940) * GeluExp600(h, lo) * 0x1p-600;
    Phi  = ax < 1e-300 ? 0.5 : (ax <= GELU_LIMIT ? ratio : (xi > 0 ? 1 : 0));
    dx[i] = dy[i] * (Phi + xphi);
  }
}

static void GeluForward(PetscInt N, const PetscScalar *x, PetscScalar *y) { GeluForwardLoop(N, x, y); }
static void GeluBackward(PetscInt N, const PetscScalar *x, const PetscScalar *y, const PetscScalar *dy, PetscScalar *dx) { GeluBackwardLoop(N, x, y, dy, dx); }

/* AVX2 without FMA: the same operations, rounded the same way, so the results are bitwise those of
   the code above (tests/gelu_accuracy.c checks), at twice the vector width where the CPU has it */
#if defined(__GNUC__) && defined(__x86_64__)
  #define GELU_HAVE_AVX2
__attribute__((target("avx2"))) static void GeluForwardAVX2(PetscInt N, const PetscScalar *x, PetscScalar *y) { GeluForwardLoop(N, x, y); }
__attribute__((target("avx2"))) static void GeluBackwardAVX2(PetscInt N, const PetscScalar *x, const PetscScalar *y, const PetscScalar *dy, PetscScalar *dx) { GeluBackwardLoop(N, x, y, dy, dx); }
#endif

typedef struct {
  PetscBool avx2; /* use the AVX2 loops (when the CPU has AVX2) */
} NNLayer_GELU;

static PetscErrorCode NNLayerSetUp_GELU(NNLayer l)
{
  PetscFunctionBegin;
  l->outshape = l->inshape;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForward_GELU(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  const PetscInt N = n * l->localsize;

  PetscFunctionBegin;
#if defined(GELU_HAVE_AVX2)
  if (((NNLayer_GELU *)l->data)->avx2) GeluForwardAVX2(N, x, y);
  else
#endif
    GeluForward(N, x, y);
  PetscCall(PetscLogFlops(100.0 * N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_GELU(NNLayer l, PetscInt n, const PetscScalar *x, const PetscScalar *y, const PetscScalar *dy, PetscScalar *dx)
{
  const PetscInt N = n * l->localsize;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
#if defined(GELU_HAVE_AVX2)
  if (((NNLayer_GELU *)l->data)->avx2) GeluBackwardAVX2(N, x, y, dy, dx);
  else
#endif
    GeluBackward(N, x, y, dy, dx);
  PetscCall(PetscLogFlops(40.0 * N));
  PetscFunctionReturn(0);
}

/* single precision: the double loops on blocks widened from float and rounded back, so the results are exactly those
   of the double pass on converted activations (the correctly rounded float of the double result), without whole
   double copies of the activations */
static PetscErrorCode NNLayerForwardSingle_GELU(NNLayer l, PetscInt n, const float *x, float *y)
{
  const PetscInt N = n * l->localsize;
  PetscScalar    xb[GELU_BLOCK], yb[GELU_BLOCK];

  PetscFunctionBegin;
  for (PetscInt b = 0; b < N; b += GELU_BLOCK) {
    const PetscInt nb = PetscMin(GELU_BLOCK, N - b);
    for (PetscInt i = 0; i < nb; i++) xb[i] = x[b + i];
#if defined(GELU_HAVE_AVX2)
    if (((NNLayer_GELU *)l->data)->avx2) GeluForwardAVX2(nb, xb, yb);
    else
#endif
      GeluForward(nb, xb, yb);
    for (PetscInt i = 0; i < nb; i++) y[b + i] = (float)yb[i];
  }
  PetscCall(PetscLogFlops(100.0 * N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_GELU(NNLayer l, PetscInt n, const float *x, const float *y, const float *dy, float *dx)
{
  const PetscInt N = n * l->localsize;
  PetscScalar    xb[GELU_BLOCK], yb[GELU_BLOCK], gb[GELU_BLOCK], db[GELU_BLOCK];

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  for (PetscInt b = 0; b < N; b += GELU_BLOCK) {
    const PetscInt nb = PetscMin(GELU_BLOCK, N - b);
    for (PetscInt i = 0; i < nb; i++) {
      xb[i] = x[b + i];
      yb[i] = y[b + i];
      gb[i] = dy[b + i];
    }
#if defined(GELU_HAVE_AVX2)
    if (((NNLayer_GELU *)l->data)->avx2) GeluBackwardAVX2(nb, xb, yb, gb, db);
    else
#endif
      GeluBackward(nb, xb, yb, gb, db);
    for (PetscInt i = 0; i < nb; i++) dx[b + i] = (float)db[i];
  }
  PetscCall(PetscLogFlops(40.0 * N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_GELU(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_GELU *g = (NNLayer_GELU *)l->data;
  PetscBool     avx2 = g->avx2;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "GELU options");
  PetscCall(PetscOptionsBool("-avx2", "Use the AVX2 loops where the CPU has AVX2 (the same results, bit for bit)", NULL, avx2, &avx2, NULL));
  PetscOptionsHeadEnd();
#if defined(GELU_HAVE_AVX2)
  g->avx2 = (PetscBool)(avx2 && __builtin_cpu_supports("avx2"));
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_GELU(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERGELU - "gelu": y = x Phi(x) with the exact Gaussian CDF (torch.nn.GELU())

   Options Database Key:
.  -<prefix>avx2 <bool> - use the AVX2 loops where the CPU has AVX2 (default true; the same results, bit for bit)

   Notes:
   Phi and the exponential are evaluated by vectorized code of the layer's own; the relative error
   of y and dy/dx is below 5e-15 (tests/gelu_accuracy.c). The backward pass takes Phi(x) = y/x
   from the forward pass's output.

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_GELU(NNLayer l)
{
  NNLayer_GELU *g;

  PetscFunctionBegin;
  PetscCall(PetscNew(&g));
#if defined(GELU_HAVE_AVX2)
  __builtin_cpu_init();
  g->avx2 = (PetscBool)(__builtin_cpu_supports("avx2") != 0);
#endif
  l->data                = g;
  l->ops->setup          = NNLayerSetUp_GELU;
  l->ops->forward        = NNLayerForward_GELU;
  l->ops->backward       = NNLayerBackward_GELU;
  l->ops->forwardsingle  = NNLayerForwardSingle_GELU;
  l->ops->backwardsingle = NNLayerBackwardSingle_GELU;
  l->ops->setfromoptions = NNLayerSetFromOptions_GELU;
  l->ops->destroy        = NNLayerDestroy_GELU;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/activation/activation_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_GELU;
  l->ops->backwarddevice = NNLayerBackwardDevice_GELU;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscFunctionReturn(0);
}
