/*
   Pointwise activation layers: relu, leaky_relu, tanh, sigmoid (gelu has its own loops: gelu.c).

   Each type supplies y = f(x) and dy/dx evaluated from x and y; the forward and backward
   loops are shared. The output shape equals the input shape (dense or spatial).
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/nnsimd.h>
#include <petnn/private/deviceimpl.h>

typedef struct {
  PetscReal (*f)(PetscReal x, PetscReal slope);
  PetscReal (*df)(PetscReal x, PetscReal y, PetscReal slope); /* derivative from input and output */
  PetscReal slope;                                            /* leaky ReLU negative slope */
  PetscInt       kinkmode; /* relu, leaky_relu: 0 normal, 1 record the pattern x > 0 into mask, 2 use mask's pattern */
  unsigned char *kinkmask; /* n*localsize entries (src/spectral/hessian.c owns them) */
} NNLayer_Activation;

static PetscReal ReLU(PetscReal x, PetscReal s PETSC_UNUSED) { return x > 0 ? x : 0; }
static PetscReal DReLU(PetscReal x, PetscReal y PETSC_UNUSED, PetscReal s PETSC_UNUSED) { return x > 0 ? 1 : 0; }
static PetscReal Leaky(PetscReal x, PetscReal s) { return x > 0 ? x : s * x; }
static PetscReal DLeaky(PetscReal x, PetscReal y PETSC_UNUSED, PetscReal s) { return x > 0 ? 1 : s; }
/* tanh in 2-4x less time than glibc's (which took 25-90 ns per element here, half of the time of
   tanh networks): a rational approximation for |x| <= 0.625 (Cephes' coefficients) and
   1 - 2/(e^{2|x|} + 1) above, where no digits cancel. Relative error at most 4e-16 (checked against
   glibc on 8 million points of [-12, 12] and on tiny arguments). */
static PetscReal Tanh(PetscReal x, PetscReal s PETSC_UNUSED)
{
  const PetscReal z = PetscAbsReal(x), q = x * x;
  PetscReal       p, r;

  if (z > 0.625) {
    r = 1 - 2 / (PetscExpReal(2 * z) + 1);
    return x < 0 ? -r : r;
  }
  p = (-9.64399179425052238628e-1 * q - 9.92877231001918586564e1) * q - 1.61468768441708447952e3;
  r = ((q + 1.12811678491632931402e2) * q + 2.23548839060100448583e3) * q + 4.84406305325125486048e3;
  return x + x * q * (p / r);
}
static PetscReal DTanh(PetscReal x PETSC_UNUSED, PetscReal y, PetscReal s PETSC_UNUSED) { return 1 - y * y; }
static PetscReal Sigmoid(PetscReal x, PetscReal s PETSC_UNUSED) { return x >= 0 ? 1 / (1 + PetscExpReal(-x)) : PetscExpReal(x) / (1 + PetscExpReal(x)); }
static PetscReal DSigmoid(PetscReal x PETSC_UNUSED, PetscReal y, PetscReal s PETSC_UNUSED) { return y * (1 - y); }

/* tanh's loops. In double, the scalar Tanh() above. In float, its formulas evaluated in double with an exp the
   compiler vectorizes (exp(2|x|) = (sum_{j<=11} r^j/j!)^32 with r = 2|x|/32 <= 0.57, |x| clamped at 9.1 where float's
   tanh is 1) and one division ((e - 1)/(e + 1) above 0.625), rounded to float: the correctly rounded tanh (checked
   against double tanh on 4e7 points of [-20, 20] and 4e6 tiny ones: no difference), as rounding Tanh() gave, in a
   fraction of the time. Compiled for the machine's vector units (include/petnn/private/nnsimd.h). */
static void NNTanhLoop(PetscInt N, const PetscScalar *x, PetscScalar *y)
{
  for (PetscInt i = 0; i < N; i++) y[i] = Tanh(x[i], 0);
}
static void NNTanhBackwardLoop(PetscInt N, const PetscScalar *y, const PetscScalar *dy, PetscScalar *dx)
{
  for (PetscInt i = 0; i < N; i++) dx[i] = dy[i] * DTanh(0, y[i], 0);
}
NN_SIMD static void NNTanhLoopSingle(PetscInt N, const float *xs, float *y)
{
  for (PetscInt i = 0; i < N; i++) {
    const double x = xs[i], z = x < 0 ? -x : x, q = x * x, r = (z > 9.1 ? 9.1 : z) * (2.0 / 32);
    double       e = 1.0 / 39916800, p, d;
    PetscBool    big;
    e = e * r + 1.0 / 3628800;
    e = e * r + 1.0 / 362880;
    e = e * r + 1.0 / 40320;
    e = e * r + 1.0 / 5040;
    e = e * r + 1.0 / 720;
    e = e * r + 1.0 / 120;
    e = e * r + 1.0 / 24;
    e = e * r + 1.0 / 6;
    e = e * r + 0.5;
    e = e * r + 1;
    e = e * r + 1;
    e *= e;
    e *= e;
    e *= e;
    e *= e;
    e *= e;
    p    = (-9.64399179425052238628e-1 * q - 9.92877231001918586564e1) * q - 1.61468768441708447952e3;
    d    = ((q + 1.12811678491632931402e2) * q + 2.23548839060100448583e3) * q + 4.84406305325125486048e3;
    big  = z > 0.625; /* (e - 1)/(e + 1), or x + x q p/d: one division either way */
    y[i] = (float)((big ? (x < 0 ? 1 - e : e - 1) : x * (d + q * p)) / (big ? e + 1 : d));
  }
}
NN_SIMD static void NNTanhBackwardLoopSingle(PetscInt N, const float *y, const float *dy, float *dx)
{
  for (PetscInt i = 0; i < N; i++) dx[i] = (float)(dy[i] * (1 - (double)y[i] * y[i])); /* 1 - y^2 in float loses digits as y nears 1 */
}

static PetscErrorCode NNLayerSetUp_Activation(NNLayer l)
{
  PetscFunctionBegin;
  l->outshape = l->inshape;
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "activation_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "activation_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerSetFromOptions_LeakyReLU(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_Activation *a = (NNLayer_Activation *)l->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Leaky ReLU options");
  PetscCall(PetscOptionsReal("-slope", "Slope for negative inputs", "NNLayerLeakyReLUSetSlope", a->slope, &a->slope, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_LeakyReLU(NNLayer l, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "negative slope %g\n", (double)((NNLayer_Activation *)l->data)->slope));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerLeakyReLUSetSlope_LeakyReLU(NNLayer l, PetscReal slope)
{
  PetscFunctionBegin;
  ((NNLayer_Activation *)l->data)->slope = slope;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerLeakyReLUGetSlope_LeakyReLU(NNLayer l, PetscReal *slope)
{
  PetscFunctionBegin;
  *slope = ((NNLayer_Activation *)l->data)->slope;
  PetscFunctionReturn(0);
}

/* freezes the kinks at a reference point, so that differences of gradients around it differentiate
   the piecewise-linear map of its pattern, as autograd does (loss-Hessian products,
   src/spectral/hessian.c): mode 1 records the pattern x > 0 of the next forward passes into mask
   (n*localsize entries), mode 2 uses it in forward and backward, mode 0 ends it */
static PetscErrorCode NNLayerSetKinkMask_Activation(NNLayer l, PetscInt mode, unsigned char *mask)
{
  NNLayer_Activation *a = (NNLayer_Activation *)l->data;

  PetscFunctionBegin;
  a->kinkmode = mode;
  a->kinkmask = mode ? mask : NULL;
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNKinkFunctions[] = {
  {"NNLayerSetKinkMask_C", (PetscVoidFunction)NNLayerSetKinkMask_Activation},
};

static const NNLayerFunction NNLeakyReLUFunctions[] = {
  {"NNLayerLeakyReLUSetSlope_C", (PetscVoidFunction)NNLayerLeakyReLUSetSlope_LeakyReLU},
  {"NNLayerLeakyReLUGetSlope_C", (PetscVoidFunction)NNLayerLeakyReLUGetSlope_LeakyReLU},
};

static PetscErrorCode NNLayerDestroy_Activation(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNLeakyReLUFunctions), NNLeakyReLUFunctions, PETSC_FALSE));
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNKinkFunctions), NNKinkFunctions, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_Activation(NNLayer l, PetscReal (*f)(PetscReal, PetscReal), PetscReal (*df)(PetscReal, PetscReal, PetscReal))
{
  NNLayer_Activation *a;

  PetscFunctionBegin;
  PetscCall(PetscNew(&a));
  a->f              = f;
  a->df             = df;
  l->data           = a;
  l->ops->setup          = NNLayerSetUp_Activation;
  l->ops->forward        = NNActivationForward;
  l->ops->backward       = NNActivationBackward;
  l->ops->forwardsingle  = NNActivationForwardSingle;
  l->ops->backwardsingle = NNActivationBackwardSingle;
  l->ops->destroy        = NNLayerDestroy_Activation;
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERRELU - "relu": y = max(x, 0)

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_ReLU(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Activation(l, ReLU, DReLU));
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/activation/activation_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_ReLU;
  l->ops->backwarddevice = NNLayerBackwardDevice_ReLU;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNKinkFunctions), NNKinkFunctions, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERLEAKYRELU - "leaky_relu": y = x for x > 0, slope*x otherwise (torch.nn.LeakyReLU)

   Options Database Key:
.  -<prefix>slope <s> - negative slope (default 0.01)

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_LeakyReLU(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Activation(l, Leaky, DLeaky));
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/activation/activation_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_LeakyReLU;
  l->ops->backwarddevice = NNLayerBackwardDevice_LeakyReLU;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  ((NNLayer_Activation *)l->data)->slope = 0.01;
  l->ops->setfromoptions                 = NNLayerSetFromOptions_LeakyReLU;
  l->ops->view                           = NNLayerView_LeakyReLU;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNLeakyReLUFunctions), NNLeakyReLUFunctions, PETSC_TRUE));
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNKinkFunctions), NNKinkFunctions, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERTANH - "tanh": y = tanh(x)

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Tanh(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Activation(l, Tanh, DTanh));
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/activation/activation_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_Tanh;
  l->ops->backwarddevice = NNLayerBackwardDevice_Tanh;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERSIGMOID - "sigmoid": y = 1/(1+exp(-x))

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Sigmoid(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_Activation(l, Sigmoid, DSigmoid));
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/activation/activation_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_Sigmoid;
  l->ops->backwarddevice = NNLayerBackwardDevice_Sigmoid;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscFunctionReturn(0);
}

/*@
   NNLayerLeakyReLUSetSlope - sets the negative slope of a leaky ReLU

   Options Database Key:
.  -<prefix>slope <s> - negative slope (default 0.01)

   Level: beginner
@*/
PetscErrorCode NNLayerLeakyReLUSetSlope(NNLayer l, PetscReal slope)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerLeakyReLUSetSlope_C", (NNLayer, PetscReal), (l, slope));
  PetscFunctionReturn(0);
}

/*@
   NNLayerLeakyReLUGetSlope - gets the negative slope of a leaky ReLU

   Not Collective

   Input Parameter:
.  l - the layer (leaky_relu)

   Output Parameter:
.  slope - the negative slope

   Level: beginner

.seealso: `NNLayerLeakyReLUSetSlope()`
@*/
PetscErrorCode NNLayerLeakyReLUGetSlope(NNLayer l, PetscReal *slope)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(slope, 2);
  PetscUseMethod(l, "NNLayerLeakyReLUGetSlope_C", (NNLayer, PetscReal *), (l, slope));
  PetscFunctionReturn(0);
}
