/* NNLayer options: NNLayerSetFromOptions(), and the type-specific setters of the dropout and residual
   types (the others stand beside their types), dispatched with PetscTryMethod() so they are no-ops on
   layers of other types. */
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
