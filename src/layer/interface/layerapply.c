/* NNLayer passes: NNLayerForward() and NNLayerBackward() dispatch to the type's array-level or Vec-level callbacks. */
#include <petnn/private/nnimpl.h>

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
