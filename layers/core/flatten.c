/*
   Flatten: reshapes each sample to 1-d (torch.nn.Flatten). Samples are already contiguous in
   PyTorch order, so forward and backward are copies. Spatial DMDA layouts provide their own
   transition layer.
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLayerSetUp_Flatten(NNLayer l)
{
  PetscInt size = NNShapeSize(&l->inshape);

  PetscFunctionBegin;
  PetscCall(NNShapeSet(&l->outshape, 1, &size));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForward_Flatten(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  PetscFunctionBegin;
  PetscCall(PetscArraycpy(y, x, n * l->localsize));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_Flatten(NNLayer l, PetscInt n, const PetscScalar *x PETSC_UNUSED, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  PetscFunctionBegin;
  if (dx) PetscCall(PetscArraycpy(dx, dy, n * l->localsize));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERFLATTEN - "flatten": turns (C,H,W) samples into 1-d feature vectors

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Flatten(NNLayer l)
{
  PetscFunctionBegin;
  l->ops->setup    = NNLayerSetUp_Flatten;
  l->ops->forward  = NNLayerForward_Flatten;
  l->ops->backward = NNLayerBackward_Flatten;
  PetscFunctionReturn(0);
}
