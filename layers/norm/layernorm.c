/*
   Layer normalization over the channels: every (sample, position) is normalized with the mean and
   biased variance of its C channel values, then scaled and shifted per channel:

     y[s,c,q] = (x[s,c,q] - mean_{s,q}) / sqrt(var_{s,q} + eps) * weight[c] + bias[c]

   - flat features (N, C): exactly torch.nn.LayerNorm(C, eps, elementwise_affine);
   - spatial (C,H,W) / (C,D,H,W) samples: the channel-wise LayerNorm of ConvNeXt and of the
     ConvNeXt-style U-Nets and neural operators of the PDE-surrogate literature, which equals
     torch.nn.LayerNorm(C) applied to the channels-last tensor:
         ln(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)        (2-d; 3-d: permute(0,2,3,4,1))
     Its weight and bias are [C], independent of the grid, so a model trained on one resolution runs
     on another (nn.LayerNorm([C,H,W]) would tie them to one H x W); normalizing over the whole
     sample with per-channel affine is group_norm with 1 group.
   Sequential samples (C, ...) with positions are treated like the spatial ones. The statistics are
   per sample and position, so training and evaluation modes compute the same, and on a spatial
   activation each pixel's channels sit on one rank (channels-last): the forward pass needs no
   communication; backward sums the weight and bias gradients over the layer's communicator.

   Backward per (sample, position), m = C:  dx = rstd (w dy - mean_c(w dy) - xhat mean_c(w dy xhat)).

   Single precision (-nn_precision single): the same passes (layernorm_passes.h, compiled in double and in
   float) on float activations with the float parameter copy; the statistics and the sums stay double (the
   parameter gradient is reduced over the ranks in double), each output is rounded to float once.
*/
#include "norm.h"

/* strides of (sample, channel, position) in the layout */
static void NNLayerNormStrides(const NNNormLayout *lay, PetscInt C, PetscInt *ss, PetscInt *cs, PetscInt *qs)
{
  if (lay->spatial) {
    *ss = C;
    *cs = 1;
    *qs = lay->D;
  } else {
    *ss = C * lay->npos;
    *cs = lay->npos;
    *qs = 1;
  }
}

static PetscErrorCode NNLayerSetUp_LayerNorm(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNNormSetUpBase(l));
  PetscFunctionReturn(0);
}

/* the two passes in double and in float */
#include <petnn/private/nnrealdouble.h>
#include "layernorm_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "layernorm_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForwardVec_LayerNorm(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNNormLayout       lay;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNLayerNormForward(l, n, &lay, l->theta, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_LayerNorm(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNNormLayout       lay;
  const PetscScalar *xa, *dya;
  PetscScalar       *dxa = NULL;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(NNLayerNormBackward(l, n, &lay, l->theta, l->dtheta, xa, dya, dxa));
  if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): float arrays in the input's layout, the float parameter copy and gradient
   (src/layer/interface/layersingle.c) */
static PetscErrorCode NNLayerForwardSingle_LayerNorm(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNNormLayout lay;

  PetscFunctionBegin;
  PetscCall(NNNormGetInputLayout(l, &lay));
  PetscCall(NNLayerNormForwardSingle(l, n, &lay, l->stheta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_LayerNorm(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNNormLayout lay;

  PetscFunctionBegin;
  PetscCall(NNNormGetInputLayout(l, &lay));
  PetscCall(NNLayerNormBackwardSingle(l, n, &lay, l->stheta, l->sdtheta, x, dy, dx));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERLAYERNORM - "layer_norm": layer normalization over the channels (torch.nn.LayerNorm)

   Each (sample, position) is normalized with the mean and biased variance of its C channel values,
   then scaled and shifted per channel. On flat features (N, C) it is torch.nn.LayerNorm(C); on
   spatial (C,H,W) or (C,D,H,W) samples it is the channel-wise LayerNorm of ConvNeXt-style U-Nets and
   neural operators, torch.nn.LayerNorm(C) applied to the channels-last tensor
   (x.permute(0,2,3,1) in 2-d), whose parameters do not depend on the grid. For
   torch.nn.LayerNorm([C,H,W])-like normalization over the whole sample use `NNLAYERGROUPNORM` with
   one group (per-channel instead of per-entry affine).

   No running statistics: training and evaluation modes compute the same. On spatial (DMDA)
   activations the forward pass needs no communication; the weight and bias gradients are summed
   over the layer's communicator.

   Options Database Keys:
+  -<prefix>eps <eps> - added to the variance (default 1e-5)
-  -<prefix>affine <bool> - learnable weight and bias, elementwise_affine (default true)

   Tensors (affine only): weight [C] (1), bias [C] (0), PyTorch's state_dict names.

   Level: beginner

.seealso: `NNLayerNormSetEpsilon()`, `NNLayerNormSetAffine()`, `NNLAYERGROUPNORM`, `NNLAYERINSTANCENORM`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_LayerNorm(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNNormCreateBase(l, NN_NORM_LAYER));
  l->ops->setup       = NNLayerSetUp_LayerNorm;
  l->ops->forwardvec  = NNLayerForwardVec_LayerNorm;
  l->ops->backwardvec = NNLayerBackwardVec_LayerNorm;
  l->ops->forwardsingle  = NNLayerForwardSingle_LayerNorm;
  l->ops->backwardsingle = NNLayerBackwardSingle_LayerNorm;
  PetscFunctionReturn(0);
}
