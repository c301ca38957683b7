/*
   Pointwise activation layers: relu, leaky_relu, tanh, sigmoid (gelu has its own loops: gelu.c).

   Each type supplies y = f(x) and dy/dx evaluated from x and y; the forward and backward
   loops are shared. The output shape equals the input shape (dense or spatial).
*/
#include <petnn/private/nnimpl.h>
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

static PetscErrorCode NNLayerSetFromOptions_LeakyReLU(NNLayer l, PetscOptionItems *PetscOptionsObject)
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
  PetscValidRealPointer(slope, 2);
  PetscUseMethod(l, "NNLayerLeakyReLUGetSlope_C", (NNLayer, PetscReal *), (l, slope));
  PetscFunctionReturn(0);
}
