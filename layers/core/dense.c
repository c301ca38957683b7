/*
   Dense (fully connected) layer: y = W x + b for every sample.

   Parameters follow torch.nn.Linear: weight [out,in] row-major, then bias [out].
   With samples stored contiguously ([n][in] row-major), the forward pass is one GEMM
   Y = X W^T, and the backward pass two: dX = dY W and dW += dY^T X.

   ------------------------------------------------------------------------------------------------
   This file is also the model of a layer type (as PETSc's jacobi.c is of a PC type). A layer type is
   a create routine that fills the ops table of include/petnn/private/layerimpl.h and allocates the
   type's private data; everything else is callbacks the NNLayer interface (src/layer/interface/)
   and the network (src/nn/) call at the right time. examples/custom_layer.c writes one outside the
   library (a swish with a learnable slope) and tutorials/08-custom-layer.md walks through it.

   Registration. Built-in types are one row of the {name, create} table in layers/register.c, with
   their NNLAYER* name in include/petnn.h (tests/layer_types.c checks the two agree). A program adds
   its own with NNLayerRegister("name", create) after PetscInitialize(); -<layer>_type name and
   NNAddLayer(net, "name", ...) then find it, -help lists it, -log_view shows NNFwd_name/NNBwd_name.

   The create routine (NNLayerCreate_Dense() below) sets l->data and the callbacks:
     setfromoptions  read -<prefix>option values (the prefix is "<layer name>_"), PetscOptionsHeadBegin()
     setup           from l->inshape (one sample, PyTorch order) and l->nbatch (the batch capacity):
                     set l->outshape, declare the tensors with NNLayerAddTensor() in state_dict order and
                     with PyTorch's names and shapes, allocate workspace sized for nbatch samples. A
                     shape the type cannot take is an error naming the layer, its input and the fix
                     (NNLayerCheckInputRank()). NNLayerSetUp() calls reset first, so setup may run again.
     initialize      fill the parameters l->theta (and buffers l->buf), drawing from l->rng as PyTorch's
                     reset_parameters() does, so a seed (-nn_seed) reproduces the network
     forward         y = f(x) for the first n <= nbatch samples, sample after sample ([n][size] each
                     contiguous); keep what backward needs (in l->data); l->training says train or eval
     backward        THE CONTRACT: given the forward pass's x and y and the output gradient dy,
                       - overwrite dx with f'(x)^T dy, the input gradient; dx is NULL when nobody needs
                         it (the first layer): skip that work;
                       - ADD the parameter gradient into l->dtheta (never overwrite it): the network
                         zeroes it once per batch, and ODE blocks call backward once per time step on
                         the same slice and rely on the sum;
                       - change neither theta nor x, y, dy.
     view            one line of the type's settings under NNLayerView()'s line (type, shapes, count)
     reset, destroy  free what setup made; free l->data and remove the composed setters
   Types whose activations are distributed (a DMDA with halos: conv, pool) set forwardvec, backwardvec
   and createoutputvec instead of forward and backward (layers/conv/conv.c). A pointwise array-level
   type (no parameters, as many outputs as inputs: activations, dropout) also runs on DMDA
   activations unchanged when it loops over n * l->localsize entries (layers/activation/activation.c).

   Parameters. The network keeps all parameters in one Vec (and their gradient in another); during a
   pass l->theta and l->dtheta point at this layer's slice, each tensor at its NNTensor offset in
   NNLayerAddTensor() order: here weight [units][in] at 0, then bias [units] at units*in. Buffers
   (NN_TENSOR_BUFFER: running statistics) live in l->buf and are checkpointed, not trained. Names and
   shapes are PyTorch's, so checkpoints load into torch.nn modules (tutorials/load_in_pytorch.py).

   Type-specific setters. NNLayerDenseSetUnits(l, n) (at the end of this file) calls
   PetscTryMethod(l, "NNLayerDenseSetUnits_C", ...), which finds NNLayerDenseSetUnits_Dense() composed
   by the create routine (NNLayerComposeFunctions(), a table of PetscObjectComposeFunction() calls that
   destroy undoes): on a layer of another type it does nothing.
   Getters use PetscUseMethod() (an error on another type). Name the options after their setters.

   Tests a new type needs (each type has them):
     - finite differences of the input and parameter gradients of a small network holding the layer,
       with smooth inputs away from kinks: a case in tests/layers.c (NNGradientCheck(), tolerance 1e-6);
     - the same numbers as PyTorch: a case in tests/torch_crosscheck.py (outputs, loss, input gradient
       and every parameter gradient to 1e-10 relative, state_dict names checked), or a closed-form
       reference where torch has no such module (examples/custom_layer.c);
     - for a type that communicates (halos, reductions over ranks), the dot-product adjoint test
       <F x, y> = <x, F^T y> with global reductions (tests/spatial.c) and 1 rank vs N ranks agreeing
       (tests/conv.c, tests/pool.c, tests/bn_spatial.c);
     - its errors (bad shapes, bad option values) in tests/errors.c, its view in a test's output.
   Checkpoints (NNCheckpointSave/Load) cover the declared tensors without type-specific code.
*/
#include "dense.h"
#include <petnn/private/nngemm.h>
#include <petnn/private/deviceimpl.h>

static PetscErrorCode NNLayerSetUp_Dense(NNLayer l)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;
  PetscInt       in;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckInputRank(l, 1));
  PetscCheck(d->units > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Dense layer %s has %" PetscInt_FMT " units; give a positive -%sunits", ((PetscObject)l)->name, d->units, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  in = l->inshape.dim[0];
  PetscCall(NNShapeSet(&l->outshape, 1, &d->units));
  PetscCall(NNLayerCheckPartition(l, 2, (NNLayerPartition[]){NN_PARTITION_ROWS, NN_PARTITION_COLUMNS}));
  if (l->part.type != NN_PARTITION_REPLICATE) {
    PetscCall(NNDensePartSetUp(l)); /* layers/core/dense_partition.c */
    PetscFunctionReturn(0);
  }
  PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, 2, (PetscInt[]){d->units, in}));
  if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->units));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Dense(NNLayer l)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;

  PetscFunctionBegin;
  PetscCall(NNPartColumnsReset(&d->pc));
  PetscCall(PetscFree(d->work));
  PetscCall(PetscFree(d->swork));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNDensePartResetDevice(l));
#endif
  PetscFunctionReturn(0);
}

/* PyTorch's default: kaiming_uniform(a=sqrt(5)) gives U(-1/sqrt(in), 1/sqrt(in)) for weight and bias */
static PetscErrorCode NNLayerInitialize_Dense(NNLayer l)
{
  PetscInt     in = l->inshape.dim[0];
  PetscReal    bound = 1.0 / PetscSqrtReal((PetscReal)in);
  PetscScalar *theta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) {
    PetscCall(NNDensePartInitialize(l, bound));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < l->nparam; i++) theta[i] = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "dense_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "dense_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForward_Dense(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNDensePartForward(l, n, l->theta, x, y));
  else PetscCall(NNDenseForward(l, n, l->theta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_Dense(NNLayer l, PetscInt n, const PetscScalar *x, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNDensePartBackward(l, n, l->theta, l->dtheta, x, dy, dx));
  else PetscCall(NNDenseBackward(l, n, l->theta, l->dtheta, x, dy, dx));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): the same passes on float activations and the float parameter copy */
static PetscErrorCode NNLayerForwardSingle_Dense(NNLayer l, PetscInt n, const float *x, float *y)
{
  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNDensePartForwardSingle(l, n, l->stheta, x, y));
  else PetscCall(NNDenseForwardSingle(l, n, l->stheta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_Dense(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNDensePartBackwardSingle(l, n, l->stheta, l->sdtheta, x, dy, dx));
  else PetscCall(NNDenseBackwardSingle(l, n, l->stheta, l->sdtheta, x, dy, dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Dense(NNLayer l, NNOptionItems PetscOptionsObject)
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
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNDensePartView(l, v));
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

static PetscErrorCode NNLayerDenseGetUnits_Dense(NNLayer l, PetscInt *units)
{
  PetscFunctionBegin;
  *units = ((NNLayer_Dense *)l->data)->units;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDenseGetBias_Dense(NNLayer l, PetscBool *bias)
{
  PetscFunctionBegin;
  *bias = ((NNLayer_Dense *)l->data)->bias;
  PetscFunctionReturn(0);
}

/* the type-specific functions, composed by the create routine and removed by destroy */
static const NNLayerFunction NNDenseFunctions[] = {
  {"NNLayerDenseSetUnits_C", (PetscVoidFunction)NNLayerDenseSetUnits_Dense},
  {"NNLayerDenseGetUnits_C", (PetscVoidFunction)NNLayerDenseGetUnits_Dense},
  {"NNLayerDenseSetBias_C",  (PetscVoidFunction)NNLayerDenseSetBias_Dense },
  {"NNLayerDenseGetBias_C",  (PetscVoidFunction)NNLayerDenseGetBias_Dense },
};

static PetscErrorCode NNLayerDestroy_Dense(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNDenseFunctions), NNDenseFunctions, PETSC_FALSE));
  PetscCall(NNLayerReset_Dense(l));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERDENSE - "dense": fully connected layer y = W x + b (torch.nn.Linear)

   Options Database Keys:
+  -<prefix>units <n> - number of output features (required)
.  -<prefix>bias <bool> - add a bias (default true)
-  -<prefix>partition <replicate,rows,columns> - model parallelism: the weight's rows (output features) or
   columns (input features) split over the layer's ranks (`NNLayerSetPartition()`)

   Parameters: weight [units, in], bias [units]. Input must be 1-d per sample (flatten first).
   Partitioned, each rank stores its rows (with their bias entries) or its columns (the bias on every
   rank); input and output stay replicated: rows all-gather the output and sum the input gradient,
   columns sum the partial outputs and all-gather the input gradient (layers/core/dense_partition.c).

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
  l->ops->reset           = NNLayerReset_Dense;
  l->ops->initialize      = NNLayerInitialize_Dense;
  l->ops->forward         = NNLayerForward_Dense;
  l->ops->backward        = NNLayerBackward_Dense;
  l->part.floatpasses     = PETSC_TRUE; /* its float passes take rows and columns (dense_partition_passes.h) */
  l->part.devicepasses    = PETSC_TRUE; /* and its device passes (dense_partition_cuda.c) */
  l->ops->forwardsingle   = NNLayerForwardSingle_Dense;
  l->ops->backwardsingle  = NNLayerBackwardSingle_Dense;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/core/dense_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_Dense;
  l->ops->backwarddevice = NNLayerBackwardDevice_Dense;
#endif
  l->ops->setfromoptions  = NNLayerSetFromOptions_Dense;
  l->ops->view            = NNLayerView_Dense;
  l->ops->destroy         = NNLayerDestroy_Dense;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNDenseFunctions), NNDenseFunctions, PETSC_TRUE));
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

/*@
   NNLayerDenseGetUnits - gets the number of output features of a dense layer

   Not Collective

   Input Parameter:
.  l - the layer (dense)

   Output Parameter:
.  units - the number of output features

   Level: beginner

.seealso: `NNLayerDenseSetUnits()`
@*/
PetscErrorCode NNLayerDenseGetUnits(NNLayer l, PetscInt *units)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(units, 2);
  PetscUseMethod(l, "NNLayerDenseGetUnits_C", (NNLayer, PetscInt *), (l, units));
  PetscFunctionReturn(0);
}

/*@
   NNLayerDenseGetBias - gets whether a dense layer has a bias

   Not Collective

   Input Parameter:
.  l - the layer (dense)

   Output Parameter:
.  bias - PETSC_TRUE when it adds a bias

   Level: beginner

.seealso: `NNLayerDenseSetBias()`
@*/
PetscErrorCode NNLayerDenseGetBias(NNLayer l, PetscBool *bias)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(bias, 2);
  PetscUseMethod(l, "NNLayerDenseGetBias_C", (NNLayer, PetscBool *), (l, bias));
  PetscFunctionReturn(0);
}
