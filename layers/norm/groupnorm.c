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
*/
#include "norm.h"

/* out[s*G + g] = sum over the channels c of group g of acc[s*C + c] (times w[c] when w != NULL) */
static void NNGroupFold(PetscInt n, PetscInt C, PetscInt G, const PetscScalar *acc, const PetscScalar *w, PetscScalar *out)
{
  PetscInt cg = C / G;

  for (PetscInt s = 0; s < n; s++)
    for (PetscInt g = 0; g < G; g++) {
      PetscScalar t = 0;
      for (PetscInt c = g * cg; c < (g + 1) * cg; c++) t += w ? w[c] * acc[s * C + c] : acc[s * C + c];
      out[s * G + g] = t;
    }
}

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

/* mean[s*G+g] and rstd[s*G+g] of the first n samples (corrected two-pass, reduced over the ranks when spatial) */
static PetscErrorCode NNGroupNormStats(NNLayer l, const NNNormLayout *lay, PetscInt n, const PetscScalar *x)
{
  NNNorm   *p = (NNNorm *)l->data;
  PetscInt  C = p->C, G = p->G, L = n * C, nG = n * G;
  PetscReal m = p->m;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(p->acc1, L));
  NNNormSums(lay, L, x, NULL, p->acc1, NULL);
  NNGroupFold(n, C, G, p->acc1, NULL, p->mean);
  PetscCall(NNGroupAllreduce(l, lay, nG, p->mean));
  for (PetscInt i = 0; i < nG; i++) p->mean[i] /= m;
  NNGroupExpand(n, C, G, p->mean, p->mu);
  PetscCall(PetscArrayzero(p->acc1, L));
  PetscCall(PetscArrayzero(p->acc2, L));
  NNNormSums(lay, L, x, p->mu, p->acc1, p->acc2);
  NNGroupFold(n, C, G, p->acc1, NULL, p->gs);
  NNGroupFold(n, C, G, p->acc2, NULL, p->gs + nG);
  PetscCall(NNGroupAllreduce(l, lay, 2 * nG, p->gs));
  for (PetscInt i = 0; i < nG; i++) {
    PetscScalar d   = p->gs[i] / m;
    PetscReal   var = PetscMax(PetscRealPart(p->gs[nG + i] / m - d * d), 0.0);
    p->mean[i] += d;
    p->rstd[i] = 1.0 / PetscSqrtReal(var + p->eps);
  }
  PetscCall(PetscLogFlops(5.0 * L * lay->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_GroupNorm(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNNorm            *p = (NNNorm *)l->data;
  PetscInt           C = p->C, G = p->G, L = n * C;
  NNNormLayout       lay;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(NNGroupNormStats(l, &lay, n, xa));
  NNGroupExpand(n, C, G, p->mean, p->mu);
  NNGroupExpand(n, C, G, p->rstd, p->a);
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt c = 0; c < C; c++) {
      if (p->affine) p->a[s * C + c] *= l->theta[c];
      p->b[s * C + c] = p->affine ? l->theta[C + c] : 0.0;
    }
  PetscCall(VecGetArrayWrite(y, &ya));
  NNNormApply(&lay, L, xa, p->mu, p->a, p->b, NULL, NULL, ya);
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscLogFlops(3.0 * L * lay.npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_GroupNorm(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNNorm            *p = (NNNorm *)l->data;
  PetscInt           C = p->C, G = p->G, L = n * C, nG = n * G;
  PetscReal          m = p->m;
  NNNormLayout       lay;
  const PetscScalar *xa, *dya, *w = p->affine ? l->theta : NULL;
  PetscScalar       *dxa, *S1 = p->gs, *S2 = p->gs + nG;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  NNGroupExpand(n, C, G, p->mean, p->mu);
  PetscCall(PetscArrayzero(p->acc1, L));
  PetscCall(PetscArrayzero(p->acc2, L));
  NNNormGradSums(&lay, L, xa, dya, p->mu, p->acc1, p->acc2);
  PetscCall(PetscArraycpy(p->gs, p->acc1, L)); /* one reduction of both */
  PetscCall(PetscArraycpy(p->gs + L, p->acc2, L));
  PetscCall(NNGroupAllreduce(l, &lay, 2 * L, p->gs));
  PetscCall(PetscArraycpy(p->acc1, p->gs, L));
  PetscCall(PetscArraycpy(p->acc2, p->gs + L, L));
  NNGroupExpand(n, C, G, p->rstd, p->a);
  for (PetscInt i = 0; i < L; i++) p->acc2[i] *= p->a[i]; /* sum dy xhat */
  if (p->affine) {
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt c = 0; c < C; c++) {
        l->dtheta[c] += p->acc2[s * C + c];
        l->dtheta[C + c] += p->acc1[s * C + c];
      }
  }
  PetscCall(PetscLogFlops(4.0 * L * lay.npos));
  if (dx) {
    /* dx = u dy + a (x - mean) + v: u = w rstd, v = -rstd S1/m, a = -rstd^2 S2/m with S1 = sum_g w dy, S2 = sum_g w dy xhat */
    NNGroupFold(n, C, G, p->acc1, w, S1);
    NNGroupFold(n, C, G, p->acc2, w, S2);
    for (PetscInt i = 0; i < nG; i++) {
      S1[i] = -p->rstd[i] * S1[i] / m;
      S2[i] = -p->rstd[i] * p->rstd[i] * S2[i] / m;
    }
    NNGroupExpand(n, C, G, S1, p->acc1);
    NNGroupExpand(n, C, G, S2, p->acc2);
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt c = 0; c < C; c++) p->u[s * C + c] = p->a[s * C + c] * (w ? w[c] : 1.0);
    PetscCall(VecGetArrayWrite(dx, &dxa));
    NNNormApply(&lay, L, xa, p->mu, p->acc2, p->acc1, dya, p->u, dxa);
    PetscCall(VecRestoreArrayWrite(dx, &dxa));
    PetscCall(PetscLogFlops(5.0 * L * lay.npos));
  }
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
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
