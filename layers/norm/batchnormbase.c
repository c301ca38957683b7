/*
   What the batch-norm layer types share (layers/norm/batchnorm.h): the tensors with PyTorch's names,
   shapes and initial values, the momentum and epsilon options with their setters, and the
   running-statistics arithmetic. Each type's data starts with an NNBatchNormBase.
*/
#include "batchnorm.h"

static const char *NNLayerPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

/* output shape = input shape; weight [C], bias [C], running_mean [C], running_var [C], num_batches_tracked [1] */
PetscErrorCode NNBatchNormSetUpTensors(NNLayer l, PetscInt C)
{
  PetscInt one = 1;

  PetscFunctionBegin;
  ((NNBatchNormBase *)l->data)->C = C;
  l->outshape                     = l->inshape;
  PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, 1, &C));
  PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &C));
  PetscCall(NNLayerAddTensor(l, "running_mean", NN_TENSOR_BUFFER, 1, &C));
  PetscCall(NNLayerAddTensor(l, "running_var", NN_TENSOR_BUFFER, 1, &C));
  /* PyTorch stores num_batches_tracked as an int64 scalar (shape []); here it is a count held in a
     double (exact up to 2^53) in a [1] buffer; the checkpoint writer converts it */
  PetscCall(NNLayerAddTensor(l, "num_batches_tracked", NN_TENSOR_BUFFER, 1, &one));
  PetscFunctionReturn(0);
}

/* PyTorch's reset_parameters() and reset_running_stats() */
static PetscErrorCode NNLayerInitialize_BatchNorm(NNLayer l)
{
  PetscInt     C     = ((NNBatchNormBase *)l->data)->C;
  PetscScalar *theta = (PetscScalar *)l->theta, *buf = l->buf;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < C; c++) {
    theta[c]     = 1.0; /* weight */
    theta[C + c] = 0.0; /* bias */
    buf[c]       = 0.0; /* running_mean */
    buf[C + c]   = 1.0; /* running_var */
  }
  buf[2 * C] = 0.0; /* num_batches_tracked */
  PetscFunctionReturn(0);
}

/* channel c after a training pass: invstd from the biased batch variance var of m values; the running
   mean and the running (unbiased) variance move towards the batch's by the momentum */
void NNBatchNormTrainingStats(const NNBatchNormBase *p, PetscInt c, PetscScalar mean, PetscReal var, PetscReal m, PetscScalar *invstd, PetscScalar *rmean, PetscScalar *rvar)
{
  invstd[c] = 1.0 / PetscSqrtReal(var + p->eps);
  rmean[c]  = (1 - p->momentum) * rmean[c] + p->momentum * mean;
  rvar[c]   = (1 - p->momentum) * rvar[c] + p->momentum * var * m / (m - 1);
}

/* evaluation mode: normalize with the running statistics */
void NNBatchNormRunningStats(const NNBatchNormBase *p, const PetscScalar *rmean, const PetscScalar *rvar, PetscScalar *mean, PetscScalar *invstd)
{
  for (PetscInt c = 0; c < p->C; c++) {
    mean[c]   = rmean[c];
    invstd[c] = 1.0 / PetscSqrtScalar(rvar[c] + p->eps);
  }
}

static PetscErrorCode NNLayerBatchNormSetMomentum_BatchNorm(NNLayer l, PetscReal m)
{
  PetscFunctionBegin;
  PetscCheck(m >= 0 && m <= 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch-norm layer %s: momentum %g is invalid (-%smomentum); valid values are 0 <= momentum <= 1", ((PetscObject)l)->name, (double)m, NNLayerPrefix(l));
  ((NNBatchNormBase *)l->data)->momentum = m;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBatchNormSetEpsilon_BatchNorm(NNLayer l, PetscReal eps)
{
  PetscFunctionBegin;
  PetscCheck(eps > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch-norm layer %s: epsilon %g is invalid (-%sepsilon); it must be positive", ((PetscObject)l)->name, (double)eps, NNLayerPrefix(l));
  ((NNBatchNormBase *)l->data)->eps = eps;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBatchNormGetMomentum_BatchNorm(NNLayer l, PetscReal *m)
{
  PetscFunctionBegin;
  *m = ((NNBatchNormBase *)l->data)->momentum;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBatchNormGetEpsilon_BatchNorm(NNLayer l, PetscReal *eps)
{
  PetscFunctionBegin;
  *eps = ((NNBatchNormBase *)l->data)->eps;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_BatchNorm(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNBatchNormBase *p = (NNBatchNormBase *)l->data;
  PetscReal        m = p->momentum, eps = p->eps;
  PetscBool        flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Batch-norm layer options");
  PetscCall(PetscOptionsReal("-momentum", "Running-statistics momentum (PyTorch convention)", "NNLayerBatchNormSetMomentum", m, &m, &flg));
  if (flg) PetscCall(NNLayerBatchNormSetMomentum_BatchNorm(l, m));
  PetscCall(PetscOptionsReal("-epsilon", "Added to the variance before the square root", "NNLayerBatchNormSetEpsilon", eps, &eps, &flg));
  if (flg) PetscCall(NNLayerBatchNormSetEpsilon_BatchNorm(l, eps));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNBatchNormFunctions[] = {
  {"NNLayerBatchNormSetMomentum_C", (PetscVoidFunction)NNLayerBatchNormSetMomentum_BatchNorm},
  {"NNLayerBatchNormSetEpsilon_C",  (PetscVoidFunction)NNLayerBatchNormSetEpsilon_BatchNorm },
  {"NNLayerBatchNormGetMomentum_C", (PetscVoidFunction)NNLayerBatchNormGetMomentum_BatchNorm},
  {"NNLayerBatchNormGetEpsilon_C",  (PetscVoidFunction)NNLayerBatchNormGetEpsilon_BatchNorm },
};

static PetscErrorCode NNLayerDestroy_BatchNorm(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNBatchNormFunctions), NNBatchNormFunctions, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/* PyTorch's defaults (momentum 0.1, eps 1e-5) and the callbacks every batch-norm type shares */
PetscErrorCode NNBatchNormCreateBase(NNLayer l)
{
  NNBatchNormBase *p = (NNBatchNormBase *)l->data;

  PetscFunctionBegin;
  p->momentum            = 0.1;
  p->eps                 = 1e-5;
  l->forwardstate        = PETSC_TRUE; /* backward reads the statistics of the last forward pass */
  l->ops->initialize     = NNLayerInitialize_BatchNorm;
  l->ops->setfromoptions = NNLayerSetFromOptions_BatchNorm;
  l->ops->destroy        = NNLayerDestroy_BatchNorm;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNBatchNormFunctions), NNBatchNormFunctions, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*@
   NNLayerBatchNormSetMomentum - sets the running-statistics momentum (PyTorch convention, default 0.1)
   of a batch-norm layer (batchnorm1d, batchnorm2d, batchnorm3d)

   Logically Collective

   Input Parameters:
+  l - the layer
-  m - the momentum, 0 <= m <= 1: running = (1 - m) running + m batch

   Options Database Key:
.  -<prefix>momentum <m> - momentum

   Level: intermediate

.seealso: `NNLayerBatchNormGetMomentum()`, `NNLayerBatchNormSetEpsilon()`, `NNLAYERBATCHNORM1D`, `NNLAYERBATCHNORM2D`
@*/
PetscErrorCode NNLayerBatchNormSetMomentum(NNLayer l, PetscReal m)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerBatchNormSetMomentum_C", (NNLayer, PetscReal), (l, m));
  PetscFunctionReturn(0);
}


/*@
   NNLayerBatchNormSetEpsilon - sets the variance regularization (default 1e-5) of a batch-norm layer

   Logically Collective

   Input Parameters:
+  l - the layer
-  eps - added to the variance before the square root, positive

   Options Database Key:
.  -<prefix>epsilon <eps> - epsilon

   Level: intermediate

.seealso: `NNLayerBatchNormGetEpsilon()`, `NNLayerBatchNormSetMomentum()`, `NNLAYERBATCHNORM1D`, `NNLAYERBATCHNORM2D`
@*/
PetscErrorCode NNLayerBatchNormSetEpsilon(NNLayer l, PetscReal eps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerBatchNormSetEpsilon_C", (NNLayer, PetscReal), (l, eps));
  PetscFunctionReturn(0);
}


/*@
   NNLayerBatchNormGetMomentum - gets the running-statistics momentum of a batch-norm layer

   Not Collective

   Input Parameter:
.  l - the layer (batchnorm1d, batchnorm2d, batchnorm3d)

   Output Parameter:
.  m - the momentum

   Level: intermediate

.seealso: `NNLayerBatchNormSetMomentum()`
@*/
PetscErrorCode NNLayerBatchNormGetMomentum(NNLayer l, PetscReal *m)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(m, 2);
  PetscUseMethod(l, "NNLayerBatchNormGetMomentum_C", (NNLayer, PetscReal *), (l, m));
  PetscFunctionReturn(0);
}

/*@
   NNLayerBatchNormGetEpsilon - gets the variance regularization of a batch-norm layer

   Not Collective

   Input Parameter:
.  l - the layer (batchnorm1d, batchnorm2d, batchnorm3d)

   Output Parameter:
.  eps - epsilon

   Level: intermediate

.seealso: `NNLayerBatchNormSetEpsilon()`
@*/
PetscErrorCode NNLayerBatchNormGetEpsilon(NNLayer l, PetscReal *eps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(eps, 2);
  PetscUseMethod(l, "NNLayerBatchNormGetEpsilon_C", (NNLayer, PetscReal *), (l, eps));
  PetscFunctionReturn(0);
}
