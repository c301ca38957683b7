/* Spectral normalization during training: after every optimizer step, W <- W min(1, c / sigma) for the
   layers that ask for it (-<layer>_spectral_norm c), sigma from power iterations warm-started from the
   previous step's vector.

   This is the projection of Gouk et al. (2018), "Regularisation of neural networks by enforcing
   Lipschitz continuity": the weights stay the trained ones until their norm exceeds c, and the
   optimizer keeps working on the projected weights. PyTorch's torch.nn.utils.spectral_norm instead
   divides W by sigma in every forward pass (Miyato et al. 2018), which fixes sigma at 1 and changes
   the parameterization the optimizer sees; the projection keeps checkpoints plain weights (the
   network's forward pass is unchanged) and lets the bound be any c.

   The operator is the layer's true linear operator on one sample (for convolutions the convolution
   itself, with its stride, padding and groups, not the reshaped [out, in*k*k] kernel matrix), applied
   as in operatorshell.c. The vector v (unit, input space of one sample) is the layer buffer
   "weight_v", so checkpoints and restarts continue bitwise. One iteration: w = A v, z = A^T w,
   sigma = ||z|| / ||w||, v <- z / ||z||. Since ||A v||^2 = v^T A^T A v <= ||A^T A v|| <= sigma_max ||A v||
   for a unit v, the estimate approaches sigma_max FROM BELOW (the first step starts from a fixed
   pseudo-random vector and runs 15 extra iterations, as torch's spectral_norm does at set-up): after the projection the exact norm
   may exceed c by the power iteration's error (small once the warm start has converged; raise
   -<layer>_spectral_norm_its for a tighter bound, and check with -nn_spectral_view). */
#include <petnn/private/spectralimpl.h>
#include <petnn/private/reducerimpl.h>

static PetscErrorCode NNSpectralNormDestroy(NNContainerDestroyArg ctx)
{
  NNSpectralNorm *sn = (NNSpectralNorm *)NNContainerCtx(ctx);

  PetscFunctionBegin;
  PetscCall(NNLinearOpDestroy(&sn->op));
  PetscCall(PetscFree(sn));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerGetSpectralNorm_Private(NNLayer l, NNSpectralNorm **sn)
{
  PetscContainer c;

  PetscFunctionBegin;
  *sn = NULL;
  PetscCall(PetscObjectQuery((PetscObject)l, "NNSpectralNorm", (PetscObject *)&c));
  if (c) PetscCall(PetscContainerGetPointer(c, (void **)sn));
  PetscFunctionReturn(0);
}

/*@
   NNLayerSetSpectralNorm - bounds the spectral norm of a dense or convolution layer during training

   Logically Collective

   Input Parameters:
+  l - a dense, conv2d or conv3d layer, not yet set up
.  c - the bound (c > 0)
-  its - power iterations per optimizer step (PETSC_DEFAULT: 1)

   Options Database Keys:
+  -<layer>_spectral_norm <c> - the bound (off by default)
-  -<layer>_spectral_norm_its <k> - power iterations per step

   Notes:
   After every optimizer step the weight (not the bias) becomes W min(1, c/sigma), sigma estimated by
   power iterations warm-started from the previous step's vector, kept as the buffer "weight_v" (the
   input-space singular vector of one sample), so checkpoints and restarts are exact. The estimate is
   from below: the exact norm after the projection may exceed c slightly (see src/spectral/spectralnorm.c).
   Not available for layers inside ODE blocks.

   Level: intermediate

.seealso: `NNLayerGetSpectralNorm()`, `NNApplySpectralNorm()`, `NNLayerComputeOperatorNorm()`
@*/
PetscErrorCode NNLayerSetSpectralNorm(NNLayer l, PetscReal c, PetscInt its)
{
  const char    *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  NNSpectralNorm *sn;
  PetscBool       ok = PETSC_FALSE;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (its == PETSC_DEFAULT || its == PETSC_DECIDE) its = 1;
  PetscCheck(((PetscObject)l)->type_name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s: set its type before -%sspectral_norm", ((PetscObject)l)->name, pre);
  PetscCall(PetscObjectTypeCompareAny((PetscObject)l, &ok, NNLAYERDENSE, NNLAYERCONV2D, NNLAYERCONV3D, ""));
  PetscCheck(ok, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Layer %s (%s) has no weights to normalize: -%sspectral_norm applies to dense, conv2d and conv3d layers", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre);
  PetscCheck(c > 0 && c < PETSC_INFINITY, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s: -%sspectral_norm %g must be a positive bound on the spectral norm", ((PetscObject)l)->name, pre, (double)c);
  PetscCheck(its >= 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s: -%sspectral_norm_its %" PetscInt_FMT " must be at least 1", ((PetscObject)l)->name, pre, its);
  PetscCheck(!l->setupcalled, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s: set its spectral norm before NNSetUp() (the layer gets a buffer for the power iteration)", ((PetscObject)l)->name);
  PetscCall(NNLayerGetSpectralNorm_Private(l, &sn));
  if (!sn) {
    PetscContainer cont;
    PetscCall(PetscNew(&sn));
    PetscCall(PetscContainerCreate(PetscObjectComm((PetscObject)l), &cont));
    PetscCall(PetscContainerSetPointer(cont, sn));
    PetscCall(NNContainerSetCtxDestroy(cont, NNSpectralNormDestroy));
    PetscCall(PetscObjectCompose((PetscObject)l, "NNSpectralNorm", (PetscObject)cont));
    PetscCall(PetscContainerDestroy(&cont));
  }
  sn->c   = c;
  sn->its = its;
  PetscFunctionReturn(0);
}

/*@
   NNLayerGetSpectralNorm - the bound and iterations of a layer's spectral normalization

   Not Collective

   Input Parameter:
.  l - the layer

   Output Parameters:
+  c - the bound (0: off)
-  its - power iterations per step

   Level: intermediate

.seealso: `NNLayerSetSpectralNorm()`
@*/
PetscErrorCode NNLayerGetSpectralNorm(NNLayer l, PetscReal *c, PetscInt *its)
{
  NNSpectralNorm *sn;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscCall(NNLayerGetSpectralNorm_Private(l, &sn));
  if (c) *c = sn ? sn->c : 0;
  if (its) *its = sn ? sn->its : 0;
  PetscFunctionReturn(0);
}

/* the layer's -spectral_norm options, inside NNLayerSetFromOptions()'s options block */
PetscErrorCode NNLayerSetFromOptions_SpectralNorm(NNLayer l, NNOptionItems PetscOptionsObject)
{
  PetscReal c   = 0;
  PetscInt  its = 1;
  PetscBool set, iset;

  PetscFunctionBegin;
  PetscCall(NNLayerGetSpectralNorm(l, &c, &its));
  if (!its) its = 1;
  PetscCall(PetscOptionsReal("-spectral_norm", "Bound the layer's spectral norm by this c after every optimizer step (dense, conv2d, conv3d)", "NNLayerSetSpectralNorm", c, &c, &set));
  PetscCall(PetscOptionsInt("-spectral_norm_its", "Power iterations per step of the spectral normalization", "NNLayerSetSpectralNorm", its, &its, &iset));
  if (set || (iset && c > 0)) PetscCall(NNLayerSetSpectralNorm(l, c, its));
  PetscFunctionReturn(0);
}

/* after the type's set-up: the power iteration's vector, a buffer shaped like one input sample */
PetscErrorCode NNLayerSetUp_SpectralNorm(NNLayer l)
{
  NNSpectralNorm *sn;

  PetscFunctionBegin;
  PetscCall(NNLayerGetSpectralNorm_Private(l, &sn));
  if (!sn) PetscFunctionReturn(0);
  PetscCall(NNLayerCheckWhole(l, "spectral normalization (-<layer>_spectral_norm) and its power iteration"));
  PetscCall(NNLinearOpDestroy(&sn->op));
  PetscCall(NNLayerAddTensor(l, "weight_v", NN_TENSOR_BUFFER, l->inshape.ndim, l->inshape.dim));
  PetscFunctionReturn(0);
}
