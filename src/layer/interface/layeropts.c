/* NNLayer options: NNLayerSetFromOptions() and the type-specific setters of the core layer types,
   dispatched with PetscTryMethod() so they are no-ops on layers of other types. */
#include <petnn/private/nnimpl.h>

/*@
   NNLayerSetFromOptions - reads -<prefix>type and the type's options

   Collective

   Options Database Keys:
.  -<prefix>type <dense,relu,...> - layer type

   Level: beginner
@*/
PetscErrorCode NNLayerSetFromOptions(NNLayer l)
{
  char      type[256];
  PetscBool flg;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)l);
  PetscCall(PetscOptionsFList("-type", "Layer type", "NNLayerSetType", NNLayerList, ((PetscObject)l)->type_name ? ((PetscObject)l)->type_name : NNLAYERDENSE, type, sizeof(type), &flg));
  if (flg) PetscCall(NNLayerSetType(l, type));
  PetscCheck(((PetscObject)l)->type_name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has no type: give -%stype", ((PetscObject)l)->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  PetscTryTypeMethod(l, setfromoptions, PetscOptionsObject);
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)l, PetscOptionsObject));
  PetscOptionsEnd();
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
   NNLayerDropoutSetRate - sets the probability of zeroing an entry in training mode

   Options Database Key:
.  -<prefix>rate <p> - drop probability in [0,1) (default 0.5)

   Level: beginner
@*/
PetscErrorCode NNLayerDropoutSetRate(NNLayer l, PetscReal p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerDropoutSetRate_C", (NNLayer, PetscReal), (l, p));
  PetscFunctionReturn(0);
}

/*@
   NNLayerBatchNormSetMomentum - sets the running-statistics momentum (PyTorch convention, default 0.1)

   Level: intermediate
@*/
PetscErrorCode NNLayerBatchNormSetMomentum(NNLayer l, PetscReal m)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerBatchNormSetMomentum_C", (NNLayer, PetscReal), (l, m));
  PetscFunctionReturn(0);
}

/*@
   NNLayerBatchNormSetEpsilon - sets the variance regularization (default 1e-5)

   Level: intermediate
@*/
PetscErrorCode NNLayerBatchNormSetEpsilon(NNLayer l, PetscReal eps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerBatchNormSetEpsilon_C", (NNLayer, PetscReal), (l, eps));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerResidualAddLayer - appends a layer to the block inside a residual layer (y = x + block(x))

   Input Parameters:
+  l - the residual layer
.  type - type of the new inner layer
-  name - its name (options prefix "<name>_")

   Output Parameter:
.  inner - the new layer (borrowed reference), may be NULL

   Level: beginner
@*/
PetscErrorCode NNLayerResidualAddLayer(NNLayer l, NNLayerType type, const char name[], NNLayer *inner)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (inner) *inner = NULL;
  PetscTryMethod(l, "NNLayerResidualAddLayer_C", (NNLayer, NNLayerType, const char[], NNLayer *), (l, type, name, inner));
  PetscFunctionReturn(0);
}
