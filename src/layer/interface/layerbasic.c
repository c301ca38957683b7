/* NNLayer basics: create, destroy, shapes, batch capacity, mode, tensors and parameter slices. */
#include <petnn/private/nnimpl.h>

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
  PetscAssertPointer(layer, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(l, NNLAYER_CLASSID, "NNLayer", "Neural network layer", "NNLayer", comm, NNLayerDestroy, NNLayerView));
  l->training = PETSC_TRUE;
  l->nbatch   = 1;
  *layer      = l;
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
  PetscCall(NNLayerShardReset(*l));
  PetscCall(NNLayerGraphDestroy(*l));
  for (PetscInt c = 0; c < (*l)->nchildren; c++) PetscCall(NNLayerDestroy(&(*l)->children[c]));
  PetscCall(PetscFree((*l)->children));
  PetscCall(PetscHeaderDestroy(l));
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

/* declares a tensor of full shape dim[] whose entries [start, start + count) along axis live on this rank (axis -1: all) */
static PetscErrorCode NNLayerAddTensor_Private(NNLayer l, const char name[], NNTensorKind kind, PetscInt ndim, const PetscInt dim[], PetscInt axis, PetscInt start, PetscInt count)
{
  NNTensor *t;
  PetscInt  gsize = 1;

  PetscFunctionBegin;
  PetscCheck(l->ntensors < NN_MAX_TENSORS, PETSC_COMM_SELF, PETSC_ERR_SUP, "A layer has at most %d tensors", NN_MAX_TENSORS);
  PetscCheck(ndim >= 0 && ndim <= NN_MAX_TENSOR_DIM, PETSC_COMM_SELF, PETSC_ERR_SUP, "Tensor %s of layer %s has %" PetscInt_FMT " dimensions; at most %d are supported", name, ((PetscObject)l)->name, ndim, NN_MAX_TENSOR_DIM);
  PetscCheck(axis < ndim && (axis < 0 || (start >= 0 && count >= 0 && start + count <= dim[axis])), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Tensor %s of layer %s: piece [%" PetscInt_FMT ", %" PetscInt_FMT ") of axis %" PetscInt_FMT " is not inside its shape", name, ((PetscObject)l)->name, start, start + count, axis);
  t = &l->tensors[l->ntensors++];
  PetscCall(PetscMemzero(t, sizeof(*t)));
  PetscCall(PetscStrncpy(t->name, name, sizeof(t->name)));
  t->kind  = kind;
  t->ndim  = ndim;
  t->size  = 1;
  t->split = (PetscBool)(axis >= 0);
  t->axis  = PetscMax(axis, 0);
  for (PetscInt i = 0; i < ndim; i++) {
    /* sizes are PetscInts: a huge shape is an error, not an overflow (checked by division: with 64-bit PetscInt no
       wider type holds the product) */
    PetscCheck(dim[i] >= 0 && (!dim[i] || gsize <= (PETSC_MAX_INT - (kind == NN_TENSOR_PARAM ? l->part.gnparam : l->part.gnbuf)) / dim[i]), PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Tensor %s of layer %s is too large: dimension %" PetscInt_FMT " = %" PetscInt_FMT " makes more than %" PetscInt_FMT " entries, the most a PetscInt counts (PETSc configured --with-64-bit-indices counts more)", name, ((PetscObject)l)->name, i, dim[i], (PetscInt)PETSC_MAX_INT);
    t->dim[i] = i == axis ? count : dim[i];
    t->size *= t->dim[i];
    gsize *= dim[i];
  }
  if (axis >= 0) {
    t->gdim  = dim[axis];
    t->start = start;
  }
  if (kind == NN_TENSOR_PARAM) {
    t->offset  = l->nparam;
    t->goffset = l->part.gnparam;
    l->nparam += t->size;
    l->part.gnparam += gsize;
  } else {
    t->offset  = l->nbuf;
    t->goffset = l->part.gnbuf;
    l->nbuf += t->size;
    l->part.gnbuf += gsize;
  }
  PetscFunctionReturn(0);
}

/* Declares a named tensor of the layer (called from a type's setup); offsets are packed in call order. */
PetscErrorCode NNLayerAddTensor(NNLayer l, const char name[], NNTensorKind kind, PetscInt ndim, const PetscInt dim[])
{
  PetscFunctionBegin;
  PetscCall(NNLayerAddTensor_Private(l, name, kind, ndim, dim, -1, 0, 0));
  PetscFunctionReturn(0);
}

/* Declares a tensor of full shape dim[] of which this rank holds the entries [start, start + count) along
   axis (model parallelism: the layer's partition); dim[] is the shape checkpoints and views show. */
PetscErrorCode NNLayerAddTensorSplit(NNLayer l, const char name[], NNTensorKind kind, PetscInt ndim, const PetscInt dim[], PetscInt axis, PetscInt start, PetscInt count)
{
  PetscFunctionBegin;
  PetscCheck(axis >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Tensor %s of layer %s: split axis %" PetscInt_FMT " must be nonnegative", name, ((PetscObject)l)->name, axis);
  PetscCall(NNLayerAddTensor_Private(l, name, kind, ndim, dim, axis, start, count));
  PetscFunctionReturn(0);
}

/* Requires the input to have the given number of dimensions (dense layers take flat features). */
PetscErrorCode NNLayerCheckInputRank(NNLayer l, PetscInt ndim)
{
  char s[64];

  PetscFunctionBegin;
  if (l->inshape.ndim == ndim) PetscFunctionReturn(0);
  PetscCall(NNShapeToString(&l->inshape, sizeof(s), s));
  SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs %" PetscInt_FMT "-d samples but %s produces shape %s; put a flatten layer between them (after spatial layers a %s, which sequential networks insert themselves: -nn_auto_repartition)", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ndim, l->inputname ? l->inputname : "its input", s, NNLAYERSPATIALFLATTEN);
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

/* Composes (add) or removes the type-specific functions of a table on a layer: a type's create routine
   and destroy routine call it with the same table, so the two cannot drift apart. */
PetscErrorCode NNLayerComposeFunctions(NNLayer l, size_t n, const NNLayerFunction fns[], PetscBool add)
{
  PetscFunctionBegin;
  for (size_t i = 0; i < n; i++) PetscCall(PetscObjectComposeFunction((PetscObject)l, fns[i].name, add ? fns[i].fn : NULL));
  PetscFunctionReturn(0);
}
