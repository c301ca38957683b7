/* The NNLayer type registry: NNLayerRegister(), NNLayerSetType(), and the per-type log events. */
#include <petnn/private/nnimpl.h>

PetscFunctionList NNLayerList = NULL;

/* one forward and one backward log event per layer type, so -log_view separates them */
#define NN_MAX_LAYER_TYPES 64
static struct {
  char          name[64];
  PetscLogEvent fwd, bwd;
} NNLayerEvents[NN_MAX_LAYER_TYPES];
static int NNLayerNumEvents = 0;

/* the log events of a layer type, registered on first use */
PetscErrorCode NNLayerGetEvents(const char type[], PetscLogEvent *fwd, PetscLogEvent *bwd)
{
  PetscBool match;

  PetscFunctionBegin;
  for (int i = 0; i < NNLayerNumEvents; i++) {
    PetscCall(PetscStrcmp(type, NNLayerEvents[i].name, &match));
    if (match) {
      *fwd = NNLayerEvents[i].fwd;
      *bwd = NNLayerEvents[i].bwd;
      PetscFunctionReturn(0);
    }
  }
  PetscCheck(NNLayerNumEvents < NN_MAX_LAYER_TYPES, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many layer types registered (at most %d)", NN_MAX_LAYER_TYPES);
  {
    char fname[128], bname[128];
    int  k = NNLayerNumEvents++;
    PetscCall(PetscStrncpy(NNLayerEvents[k].name, type, sizeof(NNLayerEvents[k].name)));
    PetscCall(PetscSNPrintf(fname, sizeof(fname), "NNFwd_%s", type));
    PetscCall(PetscSNPrintf(bname, sizeof(bname), "NNBwd_%s", type));
    PetscCall(NNLogEventRegister(fname, NNLAYER_CLASSID, &NNLayerEvents[k].fwd));
    PetscCall(NNLogEventRegister(bname, NNLAYER_CLASSID, &NNLayerEvents[k].bwd));
    *fwd = NNLayerEvents[k].fwd;
    *bwd = NNLayerEvents[k].bwd;
  }
  PetscFunctionReturn(0);
}

/*@C
   NNLayerRegister - adds a layer type

   Not Collective

   Input Parameters:
+  name - name of the type, used with -<prefix>type
-  create - routine that fills the ops table and allocates the type's data

   Level: advanced

.seealso: `NNLayerSetType()`, `NNLayerRegisterAll()`
@*/
PetscErrorCode NNLayerRegister(const char name[], PetscErrorCode (*create)(NNLayer))
{
  PetscLogEvent fwd, bwd;

  PetscFunctionBegin;
  PetscCall(PetNNInitializePackage()); /* a program may register its types before creating any object */
  PetscCall(PetscFunctionListAdd(&NNLayerList, name, create));
  PetscCall(NNLayerGetEvents(name, &fwd, &bwd));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerSetType - sets the layer type (dense, relu, ...)

   Collective

   Level: beginner

.seealso: `NNLayerCreate()`, `NNLayerType`
@*/
PetscErrorCode NNLayerSetType(NNLayer l, NNLayerType type)
{
  PetscErrorCode (*create)(NNLayer);
  PetscBool match;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)l, type, &match));
  if (match) PetscFunctionReturn(0);
  PetscCall(PetscFunctionListFind(NNLayerList, type, &create));
  if (!create) {
    char valid[1024] = "";
    PetscCall(NNTypeListString(NNLayerList, sizeof(valid), valid));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown layer type \"%s\" for layer %s; valid types: %s", type, ((PetscObject)l)->name ? ((PetscObject)l)->name : "(unnamed)", valid);
  }
  PetscCheck(!((PetscObject)l)->type_name, PetscObjectComm((PetscObject)l), PETSC_ERR_ORDER, "Layer type is already set; create a new layer to change it");
  PetscCall(PetscMemzero(l->ops, sizeof(struct _NNLayerOps)));
  PetscCall(PetscObjectChangeTypeName((PetscObject)l, type));
  PetscCall(NNLayerGetEvents(type, &l->evfwd, &l->evbwd));
  PetscCall((*create)(l));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerGetType - gets the layer type

   Not Collective

   Level: beginner
@*/
PetscErrorCode NNLayerGetType(NNLayer l, NNLayerType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  *type = ((PetscObject)l)->type_name;
  PetscFunctionReturn(0);
}
