/*
   Flatten: reshapes each sample to 1-d (torch.nn.Flatten). Samples are already contiguous in
   PyTorch order, so forward and backward are copies. Spatial DMDA layouts provide their own
   transition layer.
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>

static PetscErrorCode NNLayerSetUp_Flatten(NNLayer l)
{
  PetscInt size = NNShapeSize(&l->inshape);

  PetscFunctionBegin;
  PetscCall(NNShapeSet(&l->outshape, 1, &size));
  PetscFunctionReturn(0);
}

/* the copies serve both precisions: PetscArraycpy() copies sizeof(*x) bytes an entry */
#define NN_FLATTEN_PASSES(suffix, real) \
  static PetscErrorCode NNFlattenForward##suffix(NNLayer l, PetscInt n, const real *x, real *y) \
  { \
    PetscFunctionBegin; \
    PetscCall(PetscArraycpy(y, x, n * l->localsize)); \
    PetscFunctionReturn(0); \
  } \
  static PetscErrorCode NNFlattenBackward##suffix(NNLayer l, PetscInt n, const real *x PETSC_UNUSED, const real *y PETSC_UNUSED, const real *dy, real *dx) \
  { \
    PetscFunctionBegin; \
    if (dx) PetscCall(PetscArraycpy(dx, dy, n * l->localsize)); \
    PetscFunctionReturn(0); \
  }
NN_FLATTEN_PASSES(Double, PetscScalar)
NN_FLATTEN_PASSES(Single, float)

/*MC
   NNLAYERFLATTEN - "flatten": turns (C,H,W) samples into 1-d feature vectors

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Flatten(NNLayer l)
{
  PetscFunctionBegin;
  l->ops->setup          = NNLayerSetUp_Flatten;
  l->ops->forward        = NNFlattenForwardDouble;
  l->ops->backward       = NNFlattenBackwardDouble;
  l->ops->forwardsingle  = NNFlattenForwardSingle;
  l->ops->backwardsingle = NNFlattenBackwardSingle;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/core/flatten_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_Flatten;
  l->ops->backwarddevice = NNLayerBackwardDevice_Flatten;
#endif
  PetscFunctionReturn(0);
}
