/*
   Dense (fully connected) layer: y = W x + b for every sample.

   Parameters follow torch.nn.Linear: weight [out,in] row-major, then bias [out].
   With samples stored contiguously ([n][in] row-major), the forward pass is one GEMM
   Y = X W^T, and the backward pass two: dX = dY W and dW += dY^T X.
*/
#include <petnn/private/nnimpl.h>
#include <cblas.h>

typedef struct {
  PetscInt  units;
  PetscBool bias;
} NNLayer_Dense;

static PetscErrorCode NNLayerSetUp_Dense(NNLayer l)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;
  PetscInt       in;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckInputRank(l, 1));
  PetscCheck(d->units > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Dense layer %s has %" PetscInt_FMT " units; give a positive -%sunits", ((PetscObject)l)->name, d->units, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  in = l->inshape.dim[0];
  PetscCall(NNShapeSet(&l->outshape, 1, &d->units));
  PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, 2, (PetscInt[]){d->units, in}));
  if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->units));
  PetscFunctionReturn(0);
}

/* PyTorch's default: kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(in), 1/sqrt(in)) for weight and bias */
static PetscErrorCode NNLayerInitialize_Dense(NNLayer l)
{
  PetscInt     in = l->inshape.dim[0];
  PetscReal    bound = 1.0 / PetscSqrtReal((PetscReal)in);
  PetscScalar *theta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < l->nparam; i++) theta[i] = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForward_Dense(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  NNLayer_Dense     *d   = (NNLayer_Dense *)l->data;
  PetscInt           in  = l->inshape.dim[0], out = d->units;
  const PetscScalar *W = l->theta, *b = l->theta + out * in;

  PetscFunctionBegin;
  if (d->bias) {
    for (PetscInt s = 0; s < n; s++) PetscCall(PetscArraycpy(y + s * out, b, out));
  }
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0, x, in, W, in, d->bias ? 1.0 : 0.0, y, out);
  PetscCall(PetscLogFlops(2.0 * n * out * in));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_Dense(NNLayer l, PetscInt n, const PetscScalar *x, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  NNLayer_Dense     *d  = (NNLayer_Dense *)l->data;
  PetscInt           in = l->inshape.dim[0], out = d->units;
  const PetscScalar *W  = l->theta;
  PetscScalar       *dW = l->dtheta, *db = l->dtheta + out * in;

  PetscFunctionBegin;
  if (dx) cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, out, 1.0, dy, out, W, in, 0.0, dx, in);
  cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, n, 1.0, dy, out, x, in, 1.0, dW, in);
  if (d->bias) {
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt o = 0; o < out; o++) db[o] += dy[s * out + o];
  }
  PetscCall(PetscLogFlops(2.0 * n * out * in * (dx ? 2 : 1)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Dense(NNLayer l, PetscOptionItems *PetscOptionsObject)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Dense layer options");
  PetscCall(PetscOptionsInt("-units", "Number of output features", "NNLayerDenseSetUnits", d->units, &d->units, NULL));
  PetscCall(PetscOptionsBool("-bias", "Add a bias", "NNLayerDenseSetBias", d->bias, &d->bias, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Dense(NNLayer l, PetscViewer v)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "units %" PetscInt_FMT ", bias %s\n", d->units, d->bias ? "yes" : "no"));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDenseSetUnits_Dense(NNLayer l, PetscInt units)
{
  PetscFunctionBegin;
  PetscCheck(units > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Dense layer %s: units %" PetscInt_FMT " must be positive", ((PetscObject)l)->name, units);
  ((NNLayer_Dense *)l->data)->units = units;
  l->setupcalled                    = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDenseSetBias_Dense(NNLayer l, PetscBool bias)
{
  PetscFunctionBegin;
  ((NNLayer_Dense *)l->data)->bias = bias;
  l->setupcalled                   = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_Dense(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerDenseSetUnits_C", NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerDenseSetBias_C", NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERDENSE - "dense": fully connected layer y = W x + b (torch.nn.Linear)

   Options Database Keys:
+  -<prefix>units <n> - number of output features (required)
-  -<prefix>bias <bool> - add a bias (default true)

   Parameters: weight [units, in], bias [units]. Input must be 1-d per sample (flatten first).

   Level: beginner

.seealso: `NNLayerDenseSetUnits()`, `NNLayerType`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Dense(NNLayer l)
{
  NNLayer_Dense *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->bias                 = PETSC_TRUE;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_Dense;
  l->ops->initialize      = NNLayerInitialize_Dense;
  l->ops->forward         = NNLayerForward_Dense;
  l->ops->backward        = NNLayerBackward_Dense;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Dense;
  l->ops->view            = NNLayerView_Dense;
  l->ops->destroy         = NNLayerDestroy_Dense;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerDenseSetUnits_C", NNLayerDenseSetUnits_Dense));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerDenseSetBias_C", NNLayerDenseSetBias_Dense));
  PetscFunctionReturn(0);
}

/*@
   NNLayerDenseSetUnits - sets the number of output features of a dense layer

   Options Database Key:
.  -<prefix>units <n> - output features

   Level: beginner
@*/
PetscErrorCode NNLayerDenseSetUnits(NNLayer l, PetscInt units)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerDenseSetUnits_C", (NNLayer, PetscInt), (l, units));
  PetscFunctionReturn(0);
}


/*@
   NNLayerDenseSetBias - sets whether a dense layer has a bias

   Options Database Key:
.  -<prefix>bias <bool> - use a bias (default true)

   Level: beginner
@*/
PetscErrorCode NNLayerDenseSetBias(NNLayer l, PetscBool bias)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerDenseSetBias_C", (NNLayer, PetscBool), (l, bias));
  PetscFunctionReturn(0);
}

