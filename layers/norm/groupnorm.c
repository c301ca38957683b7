/*
   Group and instance normalization, as torch.nn.GroupNorm(num_groups, C, eps, affine) and
   torch.nn.InstanceNorm1d/2d/3d(C, eps, affine, track_running_stats=False):

     y = (x - mean_{s,g}) / sqrt(var_{s,g} + eps) * weight[c] + bias[c]     (c in group g)

   with the mean and the biased variance of sample s over the C/G channels of group g and all
   positions. instance_norm is the case G = C. The statistics are per sample, so they do not depend
   on the batch and the layers have no running statistics: training and evaluation modes compute the
   same (InstanceNorm's track_running_stats=True is not provided).

   Activations (layers/norm/norm.h): sequential batches of any sample shape (C, ...) (flat features:
   (C); instance_norm needs positions, (C,L), (C,H,W), ...) and spatial DMDA activations (C,H,W) or
   (C,D,H,W), whose statistics sum the pixels of all ranks of the layer's communicator.

   Statistics: corrected two passes (the mean, then the sums of d = x - mean and d^2), each pass
   reduced over the ranks (spatial), so |mean| >> std loses no accuracy. Backward, per (sample,
   channel) sums of dy and dy (x - mean) reduced once over the ranks give
     dbias[c] = sum dy,  dweight[c] = sum dy xhat,
     dx = rstd (w dy - sum_g(w dy)/m - xhat sum_g(w dy xhat)/m),   w = weight[c], m = values per group.

   Single precision (-nn_precision single): the same passes (groupnorm_passes.h, compiled in double and in
   float) on float activations with the float parameter copy; the statistics and the sums stay double (and are
   reduced over the ranks in double), each output is rounded to float once.
*/
#include "norm.h"

/* e[s*C + c] = v[s*G + g(c)] */
static void NNGroupExpand(PetscInt n, PetscInt C, PetscInt G, const PetscScalar *v, PetscScalar *e)
{
  PetscInt cg = C / G;

  for (PetscInt s = 0; s < n; s++)
    for (PetscInt c = 0; c < C; c++) e[s * C + c] = v[s * G + c / cg];
}

static PetscErrorCode NNGroupAllreduce(NNLayer l, const NNNormLayout *lay, PetscInt cnt, PetscScalar *a)
{
  PetscMPIInt mcnt;

  PetscFunctionBegin;
  if (!lay->spatial) PetscFunctionReturn(0);
  PetscCall(PetscMPIIntCast(cnt, &mcnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, a, mcnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_GroupNorm(NNLayer l)
{
  NNNorm     *p   = (NNNorm *)l->data;
  const char *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscInt    C   = l->inshape.dim[0];

  PetscFunctionBegin;
  if (p->kind == NN_NORM_INSTANCE) {
    PetscCheck(l->inshape.ndim > 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Instance-norm layer %s normalizes each channel over its positions but %s gives flat features (%" PetscInt_FMT "); it needs (C,L), (C,H,W) or (C,D,H,W) samples (use %s or %s for flat features)", ((PetscObject)l)->name, l->inputname ? l->inputname : "its input", C, NNLAYERLAYERNORM, NNLAYERGROUPNORM);
    p->G = C;
  } else {
    p->G = p->groups > 0 ? p->groups : 1;
    PetscCheck(C % p->G == 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Group-norm layer %s: -%sgroups %" PetscInt_FMT " does not divide the %" PetscInt_FMT " channels of its input; valid: a divisor of %" PetscInt_FMT " (1 normalizes over all channels, %" PetscInt_FMT " is instance norm)", ((PetscObject)l)->name, pre, p->G, C, C, C);
  }
  PetscCall(NNNormSetUpBase(l));
  PetscCall(NNNormEnsureCapacity(p, l->nbatch * p->G));
  p->m = (PetscReal)(C / p->G) * (PetscReal)(NNShapeSize(&l->inshape) / C);
  PetscFunctionReturn(0);
}

/* the statistics and the two passes in double and in float */
#include <petnn/private/nnrealdouble.h>
#include "groupnorm_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "groupnorm_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForwardVec_GroupNorm(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNNormLayout       lay;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNGroupNormForward(l, n, &lay, l->theta, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_GroupNorm(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNNormLayout       lay;
  const PetscScalar *xa, *dya;
  PetscScalar       *dxa = NULL;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(NNGroupNormBackward(l, n, &lay, l->theta, l->dtheta, xa, dya, dxa));
  if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): float arrays in the input's layout, the float parameter copy and gradient
   (src/layer/interface/layersingle.c) */
static PetscErrorCode NNLayerForwardSingle_GroupNorm(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNNormLayout lay;

  PetscFunctionBegin;
  PetscCall(NNNormGetInputLayout(l, &lay));
  PetscCall(NNGroupNormForwardSingle(l, n, &lay, l->stheta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_GroupNorm(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNNormLayout lay;

  PetscFunctionBegin;
  PetscCall(NNNormGetInputLayout(l, &lay));
  PetscCall(NNGroupNormBackwardSingle(l, n, &lay, l->stheta, l->sdtheta, x, dy, dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreate_GroupNormKind(NNLayer l, NNNormKind kind)
{
  PetscFunctionBegin;
  PetscCall(NNNormCreateBase(l, kind));
  if (kind == NN_NORM_GROUP) ((NNNorm *)l->data)->groups = 1;
  l->ops->setup       = NNLayerSetUp_GroupNorm;
  l->ops->forwardvec  = NNLayerForwardVec_GroupNorm;
  l->ops->backwardvec = NNLayerBackwardVec_GroupNorm;
  l->ops->forwardsingle  = NNLayerForwardSingle_GroupNorm;
  l->ops->backwardsingle = NNLayerBackwardSingle_GroupNorm;
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERGROUPNORM - "group_norm": group normalization (torch.nn.GroupNorm(num_groups, C, eps, affine))

   Each sample is normalized separately: the C channels are cut into G groups of C/G consecutive
   channels, and each group is normalized with its mean and biased variance over its channels and
   all positions, then scaled and shifted per channel. No running statistics: training and
   evaluation modes compute the same.

   Takes sequential batches of any sample shape (C, ...) (flat features (C) included) and spatial
   (DMDA) activations of (C,H,W) or (C,D,H,W) samples; there the statistics sum the pixels of all
   ranks of the layer's communicator (two MPI_Allreduce calls forward, one backward), so any
   decomposition computes what one rank would.

   Options Database Keys:
+  -<prefix>groups <G> - number of groups, a divisor of C (default 1)
.  -<prefix>eps <eps> - added to the variance (default 1e-5)
-  -<prefix>affine <bool> - learnable weight and bias (default true)

   Tensors (affine only): weight [C] (1), bias [C] (0), PyTorch's state_dict names.

   Level: beginner

.seealso: `NNLayerGroupNormSetGroups()`, `NNLayerNormSetEpsilon()`, `NNLayerNormSetAffine()`, `NNLAYERINSTANCENORM`, `NNLAYERLAYERNORM`, `NNLAYERBATCHNORM2D`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_GroupNorm(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_GroupNormKind(l, NN_NORM_GROUP));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERINSTANCENORM - "instance_norm": instance normalization (torch.nn.InstanceNorm1d/2d/3d(C, eps,
   affine) with track_running_stats=False)

   Each channel of each sample is normalized with its mean and biased variance over the positions
   (group_norm with one channel per group). Like PyTorch's default there are no running statistics,
   so training and evaluation modes compute the same; track_running_stats=True is not provided.

   Takes sequential batches of (C,L), (C,H,W), ... samples and spatial (DMDA) activations of (C,H,W)
   or (C,D,H,W) samples, whose statistics sum the pixels of all ranks of the layer's communicator.

   Options Database Keys:
+  -<prefix>eps <eps> - added to the variance (default 1e-5)
-  -<prefix>affine <bool> - learnable weight and bias (default false, as PyTorch)

   Tensors (affine only): weight [C] (1), bias [C] (0).

   Level: beginner

.seealso: `NNLayerNormSetEpsilon()`, `NNLayerNormSetAffine()`, `NNLAYERGROUPNORM`, `NNLAYERLAYERNORM`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_InstanceNorm(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerCreate_GroupNormKind(l, NN_NORM_INSTANCE));
  PetscFunctionReturn(0);
}
