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

static PetscErrorCode NNLayerForwardVec_LayerNorm(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNNorm            *p = (NNNorm *)l->data;
  PetscInt           C = p->C, ss, cs, qs;
  NNNormLayout       lay;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  PetscCall(NNNormEnsureCapacity(p, l->nbatch * lay.npos));
  NNLayerNormStrides(&lay, C, &ss, &cs, &qs);
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt q = 0; q < lay.npos; q++) {
      const PetscScalar *xr = xa + s * ss + q * qs;
      PetscScalar       *yr = ya + s * ss + q * qs, mean = 0, d1 = 0, d2 = 0, r;
      PetscReal          var;
      for (PetscInt c = 0; c < C; c++) mean += xr[c * cs];
      mean /= C;
      for (PetscInt c = 0; c < C; c++) { /* corrected two-pass */
        PetscScalar d = xr[c * cs] - mean;
        d1 += d;
        d2 += d * d;
      }
      d1 /= C;
      var = PetscMax(PetscRealPart(d2 / C - d1 * d1), 0.0);
      mean += d1;
      r                           = 1.0 / PetscSqrtReal(var + p->eps);
      p->mean[s * lay.npos + q] = mean;
      p->rstd[s * lay.npos + q] = r;
      for (PetscInt c = 0; c < C; c++) yr[c * cs] = p->affine ? (xr[c * cs] - mean) * r * l->theta[c] + l->theta[C + c] : (xr[c * cs] - mean) * r;
    }
  if (lay.spatial) /* slots s >= n */
    for (PetscInt q = 0; q < lay.npos; q++) PetscCall(PetscArrayzero(ya + q * lay.D + n * C, lay.D - n * C));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(PetscLogFlops(8.0 * n * C * lay.npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_LayerNorm(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNNorm            *p = (NNNorm *)l->data;
  PetscInt           C = p->C, ss, cs, qs;
  NNNormLayout       lay;
  const PetscScalar *xa, *dya, *w = p->affine ? l->theta : NULL;
  PetscScalar       *dxa = NULL, *dw = p->pg, *db = p->pg + C;

  PetscFunctionBegin;
  PetscCall(NNNormGetLayout(l, n, x, &lay));
  NNLayerNormStrides(&lay, C, &ss, &cs, &qs);
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(dy, &dya));
  if (dx) PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(PetscArrayzero(p->pg, 2 * C));
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt q = 0; q < lay.npos; q++) {
      const PetscScalar *xr = xa + s * ss + q * qs, *gr = dya + s * ss + q * qs;
      const PetscScalar  mean = p->mean[s * lay.npos + q], r = p->rstd[s * lay.npos + q];
      PetscScalar        S1 = 0, S2 = 0;
      for (PetscInt c = 0; c < C; c++) {
        PetscScalar xh = (xr[c * cs] - mean) * r, g = w ? w[c] * gr[c * cs] : gr[c * cs];
        S1 += g;
        S2 += g * xh;
        dw[c] += gr[c * cs] * xh;
        db[c] += gr[c * cs];
      }
      if (dxa) {
        PetscScalar *dr = dxa + s * ss + q * qs;
        S1 /= C;
        S2 /= C;
        for (PetscInt c = 0; c < C; c++) dr[c * cs] = r * ((w ? w[c] * gr[c * cs] : gr[c * cs]) - S1 - (xr[c * cs] - mean) * r * S2);
      }
    }
  if (dxa && lay.spatial)
    for (PetscInt q = 0; q < lay.npos; q++) PetscCall(PetscArrayzero(dxa + q * lay.D + n * C, lay.D - n * C));
  if (dx) PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (p->affine) {
    if (lay.spatial) { /* the pixels of a sample are spread over the ranks */
      PetscMPIInt cnt;
      PetscCall(PetscMPIIntCast(2 * C, &cnt));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, p->pg, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
    }
    for (PetscInt i = 0; i < 2 * C; i++) l->dtheta[i] += p->pg[i];
  }
  PetscCall(PetscLogFlops((dx ? 14.0 : 7.0) * n * C * lay.npos));
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
  PetscFunctionReturn(0);
}
