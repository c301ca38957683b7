/* NNLayer passes: NNLayerForward() and NNLayerBackward() dispatch to the type's array-level or Vec-level callbacks. */
#include <petnn/private/nnimpl.h>

/* Array-level passes on a spatial (DMDA) activation (pointwise layers only) run on the rank's whole
   local array: nbatch slots of l->localsize entries each, laid out at set-up (NNLayerSetUpLocalSize()).
   A layer run outside a network, whose input layout was never recorded, takes x's on first use. */
PetscErrorCode NNLayerArraySamples(NNLayer l, Vec x, PetscInt *n)
{
  DM       dm = NULL;
  PetscInt m;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  if (!dm) PetscFunctionReturn(0);
  PetscCall(NNLayerCheckPointwise(l));
  PetscCall(VecGetLocalSize(x, &m));
  if (m != l->nbatch * l->localsize) PetscCall(NNLayerSetInputDM(l, dm));
  PetscCheck(m == l->nbatch * l->localsize, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Layer %s (%s): its spatial input has %" PetscInt_FMT " local entries, not a multiple of the batch capacity %" PetscInt_FMT, ((PetscObject)l)->name, ((PetscObject)l)->type_name, m, l->nbatch);
  *n = l->nbatch;
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

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCheck(n > 0 && n <= l->nbatch, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Batch of %" PetscInt_FMT " samples exceeds the capacity %" PetscInt_FMT " of layer %s", n, l->nbatch, ((PetscObject)l)->name);
  PetscCall(PetscLogEventBegin(l->evfwd, l, 0, 0, 0));
  if (l->part.shard) PetscCall(NNLayerShardBegin(l, PETSC_FALSE)); /* the whole parameters, just in time */
  if (l->ops->forwardvec) PetscUseTypeMethod(l, forwardvec, n, x, y);
  else {
    PetscCall(NNLayerArraySamples(l, x, &n));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayWrite(y, &ya));
    PetscUseTypeMethod(l, forward, n, xa, ya);
    PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
  }
  if (l->part.shard) PetscCall(NNLayerShardEnd(l, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(l->evfwd, l, 0, 0, 0));
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

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(PetscLogEventBegin(l->evbwd, l, 0, 0, 0));
  if (l->part.shard) PetscCall(NNLayerShardBegin(l, PETSC_TRUE));
  if (l->ops->backwardvec) PetscUseTypeMethod(l, backwardvec, n, x, y, dy, dx);
  else {
    PetscCall(NNLayerArraySamples(l, x, &n));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayRead(dy, &dya));
    if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
    PetscUseTypeMethod(l, backward, n, xa, ya, dya, dxa);
    if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
    PetscCall(VecRestoreArrayRead(dy, &dya));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecRestoreArrayRead(x, &xa));
  }
  if (l->part.shard) PetscCall(NNLayerShardEnd(l, PETSC_TRUE)); /* this rank's piece of the parameter gradient */
  PetscCall(PetscLogEventEnd(l->evbwd, l, 0, 0, 0));
  PetscFunctionReturn(0);
}
