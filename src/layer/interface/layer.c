/* The NNLayer interface: creation, type registry, options, set up, forward/backward dispatch. */
#include <petnn/private/nnimpl.h>

PetscFunctionList NNLayerList = NULL;

/* one forward and one backward log event per layer type, so -log_view separates them */
#define NN_MAX_LAYER_TYPES 64
static struct {
  char          name[64];
  PetscLogEvent fwd, bwd;
} NNLayerEvents[NN_MAX_LAYER_TYPES];
static int NNLayerNumEvents = 0;

static PetscErrorCode NNLayerGetEvents(const char type[], PetscLogEvent *fwd, PetscLogEvent *bwd)
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
    PetscCall(PetscLogEventRegister(fname, NNLAYER_CLASSID, &NNLayerEvents[k].fwd));
    PetscCall(PetscLogEventRegister(bname, NNLAYER_CLASSID, &NNLayerEvents[k].bwd));
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
  PetscCall(PetscFunctionListAdd(&NNLayerList, name, create));
  PetscCall(NNLayerGetEvents(name, &fwd, &bwd));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerCreate - creates a layer with no type

   Collective

   Level: beginner

.seealso: `NNLayerSetType()`, `NNAddLayer()`
@*/
PetscErrorCode NNLayerCreate(MPI_Comm comm, NNLayer *layer)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscValidPointer(layer, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(l, NNLAYER_CLASSID, "NNLayer", "Neural network layer", "NNLayer", comm, NNLayerDestroy, NNLayerView));
  l->training = PETSC_TRUE;
  l->nbatch   = 1;
  *layer      = l;
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

/*@C
   NNLayerSetOptionsPrefix - sets the prefix of the layer's options; NNAddLayer() uses "<name>_"

   Level: intermediate
@*/
PetscErrorCode NNLayerSetOptionsPrefix(NNLayer l, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)l, prefix));
  PetscFunctionReturn(0);
}

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
  PetscTryTypeMethod(l, setfromoptions, PetscOptionsObject);
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

/*@C
   NNLayerSetInputShape - sets the shape of one input sample

   Level: intermediate
@*/
PetscErrorCode NNLayerSetInputShape(NNLayer l, const NNShape *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  l->inshape     = *s;
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   NNLayerGetInputShape - gets the shape of one input sample

   Level: intermediate
@*/
PetscErrorCode NNLayerGetInputShape(NNLayer l, NNShape *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  *s = l->inshape;
  PetscFunctionReturn(0);
}

/*@C
   NNLayerGetOutputShape - gets the shape of one output sample (after NNLayerSetUp())

   Level: intermediate
@*/
PetscErrorCode NNLayerGetOutputShape(NNLayer l, NNShape *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Call NNLayerSetUp() first");
  *s = l->outshape;
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetBatchCapacity - sets the largest batch the layer must process

   Level: intermediate
@*/
PetscErrorCode NNLayerSetBatchCapacity(NNLayer l, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(n > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch size %" PetscInt_FMT " must be positive", n);
  if (n != l->nbatch) l->setupcalled = PETSC_FALSE;
  l->nbatch = n;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetBatchCapacity(l->children[c], n));
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetTraining - switches between training (dropout active, batch statistics) and evaluation

   Level: intermediate
@*/
PetscErrorCode NNLayerSetTraining(NNLayer l, PetscBool training)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  l->training = training;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetTraining(l->children[c], training));
  PetscFunctionReturn(0);
}

/* Declares a named tensor of the layer (called from a type's setup); offsets are packed in call order. */
PetscErrorCode NNLayerAddTensor(NNLayer l, const char name[], NNTensorKind kind, PetscInt ndim, const PetscInt dim[])
{
  NNTensor *t;

  PetscFunctionBegin;
  PetscCheck(l->ntensors < NN_MAX_TENSORS, PETSC_COMM_SELF, PETSC_ERR_SUP, "A layer has at most %d tensors", NN_MAX_TENSORS);
  PetscCheck(ndim >= 0 && ndim <= NN_MAX_TENSOR_DIM, PETSC_COMM_SELF, PETSC_ERR_SUP, "Tensor %s of layer %s has %" PetscInt_FMT " dimensions; at most %d are supported", name, ((PetscObject)l)->name, ndim, NN_MAX_TENSOR_DIM);
  t = &l->tensors[l->ntensors++];
  PetscCall(PetscMemzero(t, sizeof(*t)));
  PetscCall(PetscStrncpy(t->name, name, sizeof(t->name)));
  t->kind = kind;
  t->ndim = ndim;
  t->size = 1;
  for (PetscInt i = 0; i < ndim; i++) {
    /* sizes are PetscInts: a huge shape is an error, not an overflow */
    PetscCheck(dim[i] >= 0 && (PetscInt64)t->size * dim[i] + (kind == NN_TENSOR_PARAM ? l->nparam : l->nbuf) <= PETSC_MAX_INT, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Tensor %s of layer %s is too large: dimension %" PetscInt_FMT " = %" PetscInt_FMT " makes more than %d entries, the most a PetscInt counts (PETSc configured --with-64-bit-indices counts more)", name, ((PetscObject)l)->name, i, dim[i], PETSC_MAX_INT);
    t->dim[i] = dim[i];
    t->size *= dim[i];
  }
  if (kind == NN_TENSOR_PARAM) {
    t->offset = l->nparam;
    l->nparam += t->size;
  } else {
    t->offset = l->nbuf;
    l->nbuf += t->size;
  }
  PetscFunctionReturn(0);
}

/* Requires the input to have the given number of dimensions (dense layers take flat features). */
PetscErrorCode NNLayerCheckInputRank(NNLayer l, PetscInt ndim)
{
  char s[64];

  PetscFunctionBegin;
  if (l->inshape.ndim == ndim) PetscFunctionReturn(0);
  PetscCall(NNShapeToString(&l->inshape, sizeof(s), s));
  SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs %" PetscInt_FMT "-d samples but %s produces shape %s; put a flatten layer between them", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ndim, l->inputname ? l->inputname : "its input", s);
}

/*@
   NNLayerSetUp - computes the output shape and declares the layer's tensors

   Collective

   Level: intermediate
@*/
PetscErrorCode NNLayerSetUp(NNLayer l)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (l->setupcalled) PetscFunctionReturn(0);
  PetscCheck(((PetscObject)l)->type_name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has no type", ((PetscObject)l)->name);
  PetscCheck(l->inshape.ndim > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has no input shape", ((PetscObject)l)->name);
  PetscTryTypeMethod(l, reset);
  l->ntensors = 0;
  l->nparam   = 0;
  l->nbuf     = 0;
  l->outshape = l->inshape;
  PetscUseTypeMethod(l, setup);
  l->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNLayerGetNumParameters - number of trainable parameters, children included (all their copies)

   Level: beginner
@*/
PetscErrorCode NNLayerGetNumParameters(NNLayer l, PetscInt *n)
{
  PetscInt m = 0, sum = 0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(NNLayerGetNumParameters(l->children[c], &m));
    sum += m;
  }
  *n = l->nparam + PetscMax(l->ncopies, 1) * sum;
  PetscFunctionReturn(0);
}

/* Points the children's slices into the arrays the parent has. Children are packed after the parent's own slice. */
PetscErrorCode NNLayerSetChildPointers(NNLayer l)
{
  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch = l->children[c];
    ch->theta  = l->theta ? l->theta + (ch->poff - l->poff) : NULL;
    ch->dtheta = l->dtheta ? l->dtheta + (ch->poff - l->poff) : NULL;
    ch->buf    = l->buf ? l->buf + (ch->boff - l->boff) : NULL;
    PetscCall(NNLayerSetChildPointers(ch));
  }
  PetscFunctionReturn(0);
}

/* Array-level layers on a spatial (DMDA) activation: only pointwise layers (no parameters, output
   shape = input shape) qualify. They see the rank's local array as nbatch "samples" of
   localsize/nbatch entries (channels-last with the batch in the dof keeps every slot a valid entry),
   so they work unchanged; the caller restores the shapes afterwards. */
static PetscErrorCode NNLayerSpatialBegin(NNLayer l, Vec x, PetscInt *n, PetscBool *spatial)
{
  DM       dm = NULL;
  PetscInt m;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  *spatial = dm ? PETSC_TRUE : PETSC_FALSE;
  if (!dm) PetscFunctionReturn(0);
  PetscCheck(l->nparam == 0 && l->nchildren == 0 && NNShapeSize(&l->inshape) == NNShapeSize(&l->outshape), PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Layer %s (%s) cannot take the spatial (DMDA) activation of %s: only pointwise layers can; put a %s layer before it", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->inputname ? l->inputname : "its input", NNLAYERSPATIALFLATTEN);
  PetscCall(VecGetLocalSize(x, &m));
  l->inshape.ndim   = 1;
  l->inshape.dim[0] = m / l->nbatch;
  l->outshape       = l->inshape;
  *n                = l->nbatch;
  PetscFunctionReturn(0);
}

/*@
   NNLayerForward - applies the layer to the first n samples of x, writing y

   Collective

   Input Parameters:
+  l - the layer, set up, its parameter slice set by its network
.  n - number of samples (at most the batch capacity)
-  x - input batch

   Output Parameter:
.  y - output batch

   Level: intermediate

.seealso: `NNLayerBackward()`
@*/
PetscErrorCode NNLayerForward(NNLayer l, PetscInt n, Vec x, Vec y)
{
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscLogEvent      fwd, bwd;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(n > 0 && n <= l->nbatch, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch of %" PetscInt_FMT " samples exceeds the capacity %" PetscInt_FMT " of layer %s", n, l->nbatch, ((PetscObject)l)->name);
  PetscCall(NNLayerGetEvents(((PetscObject)l)->type_name, &fwd, &bwd));
  PetscCall(PetscLogEventBegin(fwd, l, 0, 0, 0));
  if (l->ops->forwardvec) PetscUseTypeMethod(l, forwardvec, n, x, y);
  else {
    NNShape in = l->inshape, out = l->outshape;
    PetscBool spatial;
    PetscCall(NNLayerSpatialBegin(l, x, &n, &spatial));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayWrite(y, &ya));
    PetscUseTypeMethod(l, forward, n, xa, ya);
    PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
    if (spatial) {
      l->inshape  = in;
      l->outshape = out;
    }
  }
  PetscCall(PetscLogEventEnd(fwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@
   NNLayerBackward - maps the output gradient to the input gradient and adds the parameter gradient

   Collective

   Input Parameters:
+  l - the layer, after NNLayerForward() on the same batch
.  n - number of samples
.  x - the input of the forward pass
.  y - the output of the forward pass
-  dy - gradient of the loss with respect to y

   Output Parameter:
.  dx - gradient with respect to x (NULL when not needed, e.g. for the first layer)

   Level: intermediate

.seealso: `NNLayerForward()`
@*/
PetscErrorCode NNLayerBackward(NNLayer l, PetscInt n, Vec x, Vec y, Vec dy, Vec dx)
{
  const PetscScalar *xa, *ya, *dya;
  PetscScalar       *dxa = NULL;
  PetscLogEvent      fwd, bwd;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(NNLayerGetEvents(((PetscObject)l)->type_name, &fwd, &bwd));
  PetscCall(PetscLogEventBegin(bwd, l, 0, 0, 0));
  if (l->ops->backwardvec) PetscUseTypeMethod(l, backwardvec, n, x, y, dy, dx);
  else {
    NNShape in = l->inshape, out = l->outshape;
    PetscBool spatial;
    PetscCall(NNLayerSpatialBegin(l, x, &n, &spatial));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayRead(dy, &dya));
    if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
    PetscUseTypeMethod(l, backward, n, xa, ya, dya, dxa);
    if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
    PetscCall(VecRestoreArrayRead(dy, &dya));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
    if (spatial) {
      l->inshape  = in;
      l->outshape = out;
    }
  }
  PetscCall(PetscLogEventEnd(bwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerView - prints the layer type, shapes and parameter count

   Collective

   Level: beginner
@*/
PetscErrorCode NNLayerView(NNLayer l, PetscViewer viewer)
{
  PetscBool iascii;
  char      in[64], out[64];
  PetscInt  np;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)l), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(NNShapeToString(&l->inshape, sizeof(in), in));
  PetscCall(NNShapeToString(&l->outshape, sizeof(out), out));
  PetscCall(NNLayerGetNumParameters(l, &np));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s: %s %s -> %s, %" PetscInt_FMT " parameters\n", ((PetscObject)l)->name, ((PetscObject)l)->type_name, in, out, np));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscTryTypeMethod(l, view, viewer);
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerView(l->children[c], viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@
   NNLayerDestroy - destroys a layer

   Collective

   Level: beginner
@*/
PetscErrorCode NNLayerDestroy(NNLayer *l)
{
  PetscFunctionBegin;
  if (!*l) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*l, NNLAYER_CLASSID, 1);
  if (--((PetscObject)(*l))->refct > 0) {
    *l = NULL;
    PetscFunctionReturn(0);
  }
  PetscTryTypeMethod(*l, reset);
  PetscTryTypeMethod(*l, destroy);
  for (PetscInt c = 0; c < (*l)->nchildren; c++) PetscCall(NNLayerDestroy(&(*l)->children[c]));
  PetscCall(PetscFree((*l)->children));
  PetscCall(PetscHeaderDestroy(l));
  PetscFunctionReturn(0);
}

/*@
   NNLayerCreateOutputVec - creates a Vec for the layer's output batch (capacity nbatch samples)

   Collective

   Notes:
   Layer types with a distributed layout (DMDA) create their DM's global Vec; the default is a
   sequential Vec of nbatch * size(output shape) entries. Gradients of activations use the same layout.

   Level: developer
@*/
PetscErrorCode NNLayerCreateOutputVec(NNLayer l, Vec *y)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Call NNLayerSetUp() first");
  if (l->ops->createoutputvec) PetscUseTypeMethod(l, createoutputvec, y);
  else {
    DM dm;
    PetscCall(NNLayerGetInputDM(l, &dm));
    if (dm && !l->ops->forwardvec) { /* an array-level (pointwise) layer on a spatial activation: its output has the input's layout */
      PetscCheck(l->nparam == 0 && l->nchildren == 0 && NNShapeSize(&l->inshape) == NNShapeSize(&l->outshape), PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Layer %s (%s) cannot take the spatial (DMDA) activation of %s: only pointwise layers can; put a %s layer before it", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->inputname ? l->inputname : "its input", NNLAYERSPATIALFLATTEN);
      PetscCall(DMCreateGlobalVector(dm, y));
    } else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), y));
  }
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetInputDM - records the DM of the layer's input activation (NULL: sequential layout)

   Notes:
   NNSetUp() calls it before NNLayerCreateOutputVec(); spatial layers (conv2d, ...) build their
   halo and output DMDAs with the same decomposition, pointwise layers reuse the DM.

   Level: developer
@*/
PetscErrorCode NNLayerSetInputDM(NNLayer l, DM dm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscObjectCompose((PetscObject)l, "NNLayerInputDM", (PetscObject)dm));
  PetscFunctionReturn(0);
}

/*@
   NNLayerGetInputDM - gets the DM of the layer's input activation (NULL: sequential layout)

   Level: developer
@*/
PetscErrorCode NNLayerGetInputDM(NNLayer l, DM *dm)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscObjectQuery((PetscObject)l, "NNLayerInputDM", (PetscObject *)dm));
  PetscFunctionReturn(0);
}

/* type-specific setters, dispatched by PetscTryMethod so they are no-ops on other types */

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

/*@
   NNLayerConvSetFilters - sets number of output channels (filters) of a convolution layer

   Options Database Key:
.  -<prefix>filters <n> - output channels

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetFilters(NNLayer l, PetscInt filters)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetFilters_C", (NNLayer, PetscInt), (l, filters));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetKernelSize - sets the (square) kernel size of a convolution layer

   Options Database Key:
.  -<prefix>kernel <k> - kernel size

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetKernelSize(NNLayer l, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetKernelSize_C", (NNLayer, PetscInt), (l, k));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetStride - sets the stride (default 1) of a convolution layer

   Options Database Key:
.  -<prefix>stride <s> - stride

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetStride(NNLayer l, PetscInt stride)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetStride_C", (NNLayer, PetscInt), (l, stride));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetPadding - sets the zero padding on each side (default kernel/2) of a convolution layer

   Options Database Key:
.  -<prefix>padding <p> - zero padding

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetPadding(NNLayer l, PetscInt pad)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetPadding_C", (NNLayer, PetscInt), (l, pad));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetBias - sets whether the convolution has a bias (default true) of a convolution layer

   Options Database Key:
.  -<prefix>bias <bool> - add a bias

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetBias(NNLayer l, PetscBool bias)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetBias_C", (NNLayer, PetscBool), (l, bias));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetPeriodic - sets periodic padding (wrap around the domain) instead of zero padding of a convolution layer

   Options Database Key:
.  -<prefix>periodic <bool> - periodic padding

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetPeriodic(NNLayer l, PetscBool periodic)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetPeriodic_C", (NNLayer, PetscBool), (l, periodic));
  PetscFunctionReturn(0);
}
