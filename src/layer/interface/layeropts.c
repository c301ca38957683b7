/* NNLayer options: NNLayerSetFromOptions(), and the type-specific setters of the dropout and residual
   types (the others stand beside their types), dispatched with PetscTryMethod() so they are no-ops on
   layers of other types. */
#include <petnn/private/nnimpl.h>

/* options of a layer that another part of the library reads (-<prefix>spectral_norm: src/spectral), set by the package registration */
PetscErrorCode (*NNLayerSetFromOptionsHook)(NNLayer, NNOptionItems ) = NULL;

/* the layers being configured, outermost first: a residual or ODE block whose -<name>_layers lists
   the block itself or a block around it would otherwise nest without end */
#define NN_MAX_NESTING 32
static const char *nn_configuring[NN_MAX_NESTING];
static int         nn_nconfiguring = 0;

static PetscErrorCode NNLayerSetFromOptions_Private(NNLayer l)
{
  char      type[256];
  PetscBool flg;

  PetscFunctionBegin;
  PetscObjectOptionsBegin((PetscObject)l);
  PetscCall(PetscOptionsFList("-type", "Layer type", "NNLayerSetType", NNLayerList, ((PetscObject)l)->type_name ? ((PetscObject)l)->type_name : NNLAYERDENSE, type, sizeof(type), &flg));
  if (flg) PetscCall(NNLayerSetType(l, type));
  PetscCheck(((PetscObject)l)->type_name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has no type: give -%stype", ((PetscObject)l)->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  { /* graph networks: where the layer's inputs come from (src/nn/interface/nngraph.c) */
    char    *names[64];
    PetscInt n = 64;
    PetscCall(PetscOptionsStringArray("-inputs", "Graph networks (-nn_type graph): the layer's inputs, each input (the network input), a layer name, or name:k (output k of a split)", "NNLayerSetInputs", names, &n, &flg));
    if (flg) {
      PetscErrorCode ierr = NNLayerSetInputs(l, n, (const char *const *)names);
      for (PetscInt k = 0; k < n; k++) PetscCall(PetscFree(names[k]));
      PetscCall(ierr);
    }
  }
  PetscCall(NNLayerSetFromOptions_Partition(l, PetscOptionsObject));
  PetscTryTypeMethod(l, setfromoptions, PetscOptionsObject);
  if (NNLayerSetFromOptionsHook) PetscCall((*NNLayerSetFromOptionsHook)(l, PetscOptionsObject));
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)l, PetscOptionsObject));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetFromOptions - reads -<prefix>type and the type's options

   Collective

   Options Database Keys:
.  -<prefix>type <dense,relu,...> - layer type

   Level: beginner
@*/
PetscErrorCode NNLayerSetFromOptions(NNLayer l)
{
  const char    *name = ((PetscObject)l)->name;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  for (int i = 0; name && i < nn_nconfiguring; i++) {
    PetscBool same;
    PetscCall(PetscStrcmp(name, nn_configuring[i], &same));
    if (same) {
      char chain[512] = "";
      for (int j = i; j < nn_nconfiguring; j++) {
        PetscCall(PetscStrlcat(chain, nn_configuring[j], sizeof(chain)));
        PetscCall(PetscStrlcat(chain, " -> ", sizeof(chain)));
      }
      PetscCall(PetscStrlcat(chain, name, sizeof(chain)));
      SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Layer %s contains itself (%s): the -<block>_layers list of a residual or ODE block may not name the block or a block around it", name, chain);
    }
  }
  PetscCheck(nn_nconfiguring < NN_MAX_NESTING, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s is nested more than %d blocks deep", name ? name : "(unnamed)", NN_MAX_NESTING);
  nn_configuring[nn_nconfiguring++] = name ? name : "";
  ierr = NNLayerSetFromOptions_Private(l);
  nn_nconfiguring--;
  PetscCall(ierr);
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
