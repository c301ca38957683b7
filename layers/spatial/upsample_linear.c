/*
   Bilinear (2-d) / trilinear (3-d) upsampling by an integer factor s on the spatial (DMDA) layout:
   torch.nn.Upsample(scale_factor=s, mode='bilinear'/'trilinear', align_corners=False or True).

   Along each axis output o interpolates between inputs i0 = floor(src) and i1 = min(i0 + 1, N - 1)
   with weights 1 - l, l (l = src - i0), where src = max((o + 0.5)/s - 0.5, 0) (PyTorch's
   area_pixel_compute_source_index with the scale 1/s it uses for a given scale_factor), or
   src = o (N - 1)/(s N - 1) with align_corners; the d-linear value is the product over the axes.
   The output DMDA is the nearest mode's (the input's ranges times s); an owned output's inputs lie
   at most one pixel outside the rank's inputs (src is within (a - 1, b) for outputs [s a, s b)), so
   the input comes with a halo of 1 (zeros never enter: the clamping above stays in the grid).
   Backward: the same weights scatter-add dy into the ghosted input gradient, summed back with
   DMLocalToGlobal(ADD_VALUES).

   Single precision (-nn_precision single): the same loops (upsample_linear_passes.h) on float arrays, each corner's
   weight rounded to float once; the halo and its adjoint go through the halo DMDA's PetscSF in float
   (src/layer/interface/spatialhalosingle.c), on 1 to N ranks as in double.
*/
#include "upsample.h"

PetscErrorCode NNUpsampleLinearReset(NNUpsampleLinear *u)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialHaloReset(&u->h));
  for (PetscInt a = 0; a < 3; a++) PetscCall(PetscFree4(u->i0[a], u->i1[a], u->w0[a], u->w1[a]));
  PetscCall(NNDeviceFree((void **)&u->didx));
  PetscCall(NNDeviceFree(&u->dw));
  PetscFunctionReturn(0);
}

/* the halo DMDA and its Vecs and the interpolation tables of the owned outputs of daout */
PetscErrorCode NNUpsampleLinearSetUp(NNLayer l, DM daout, PetscInt scale, PetscBool align, NNUpsampleLinear *u)
{
  DM       dain;
  PetscInt nd = l->inshape.ndim - 1, N[3] = {1, 1, 1}, os[3], gs[3];

  PetscFunctionBegin;
  PetscCall(NNUpsampleLinearReset(u));
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(DMDAGetInfo(dain, NULL, &N[0], &N[1], &N[2], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(NNSpatialCreateLike(dain, l->nbatch * l->inshape.dim[0], 1, &u->h.dahalo));
  u->h.halo = 1;
  PetscCall(NNSpatialHaloCreateVecs(&u->h));
  PetscCall(DMDAGetCorners(daout, &os[0], &os[1], &os[2], &u->om[0], &u->om[1], &u->om[2]));
  PetscCall(DMDAGetGhostCorners(u->h.dahalo, &gs[0], &gs[1], &gs[2], &u->gm[0], &u->gm[1], &u->gm[2]));
  if (nd == 2) {
    N[2] = u->om[2] = u->gm[2] = 1;
    os[2] = gs[2] = 0;
  }
  for (PetscInt a = 0; a < 3; a++) {
    PetscInt  s  = a < nd ? scale : 1, No = N[a] * s;
    PetscReal sc = align ? (No > 1 ? (PetscReal)(N[a] - 1) / (PetscReal)(No - 1) : 0) : 1.0 / (PetscReal)s;
    PetscCall(PetscMalloc4(u->om[a], &u->i0[a], u->om[a], &u->i1[a], u->om[a], &u->w0[a], u->om[a], &u->w1[a]));
    for (PetscInt q = 0; q < u->om[a]; q++) {
      PetscInt  o = os[a] + q, i0, i1;
      PetscReal src, lam;
      if (a >= nd) src = 0;
      else if (align) src = sc * o;
      else src = PetscMax(sc * (o + 0.5) - 0.5, 0.0);
      i0  = (PetscInt)src;
      i1  = i0 < N[a] - 1 ? i0 + 1 : i0;
      lam = src - i0;
      PetscCheck(i0 >= gs[a] && i1 < gs[a] + u->gm[a], PETSC_COMM_SELF, PETSC_ERR_PLIB, "Layer %s: output %" PetscInt_FMT " interpolates inputs %" PetscInt_FMT ", %" PetscInt_FMT " outside the ghosted range [%" PetscInt_FMT ", %" PetscInt_FMT ")", ((PetscObject)l)->name, o, i0, i1, gs[a], gs[a] + u->gm[a]);
      u->i0[a][q] = i0 - gs[a];
      u->i1[a][q] = i1 - gs[a];
      u->w0[a][q] = 1.0 - lam;
      u->w1[a][q] = lam;
    }
  }
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "upsample_linear_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "upsample_linear_passes.h"
#include <petnn/private/nnrealundef.h>

/* y = the interpolation of the ghosted x (all nbatch*C entries of each pixel) */
PetscErrorCode NNUpsampleLinearForward(NNLayer l, NNUpsampleLinear *u, Vec x, Vec y)
{
  PetscInt           D = l->nbatch * l->inshape.dim[0], nc = l->inshape.ndim == 4 ? 8 : 4;
  const PetscScalar *xa;
  PetscScalar       *ya;
  Vec                xin;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloGetInput(&u->h, x, &xin));
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNUpsampleLinearInterp(u, D, nc, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNSpatialHaloRestoreInput(&u->h));
  PetscFunctionReturn(0);
}

/* dx = the adjoint of the interpolation applied to dy */
PetscErrorCode NNUpsampleLinearBackward(NNLayer l, NNUpsampleLinear *u, Vec dy, Vec dx)
{
  PetscInt           D = l->nbatch * l->inshape.dim[0], nc = l->inshape.ndim == 4 ? 8 : 4;
  const PetscScalar *dya;
  PetscScalar       *dxa;
  Vec                dxin;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloGetInputGradient(&u->h, dx, &dxin));
  PetscCall(VecZeroEntries(dxin));
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(VecGetArray(dxin, &dxa));
  PetscCall(NNUpsampleLinearInterpAdjoint(u, D, nc, dya, dxa));
  PetscCall(VecRestoreArray(dxin, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(NNSpatialHaloRestoreInputGradient(&u->h, dx));
  PetscFunctionReturn(0);
}

/* the same in single precision: the float input's halo through the halo DMDA's PetscSF (spatialhalosingle.c) */
PetscErrorCode NNUpsampleLinearForwardSingle(NNLayer l, NNUpsampleLinear *u, const float *x, float *y)
{
  PetscInt     D = l->nbatch * l->inshape.dim[0], nc = l->inshape.ndim == 4 ? 8 : 4;
  const float *xin;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloGetInputSingle(&u->h, x, &xin));
  PetscCall(NNUpsampleLinearInterpSingle(u, D, nc, xin, y));
  PetscCall(NNSpatialHaloRestoreInputSingle(&u->h));
  PetscFunctionReturn(0);
}

/* dx = the adjoint applied to dy: the ghosted float gradient summed back over the ranks' halos */
PetscErrorCode NNUpsampleLinearBackwardSingle(NNLayer l, NNUpsampleLinear *u, const float *dy, float *dx)
{
  PetscInt D = l->nbatch * l->inshape.dim[0], nc = l->inshape.ndim == 4 ? 8 : 4;
  float   *dxin;

  PetscFunctionBegin;
  PetscCall(NNSpatialHaloGetInputGradientSingle(&u->h, dx, &dxin)); /* zeroed */
  PetscCall(NNUpsampleLinearInterpAdjointSingle(u, D, nc, dy, dxin));
  PetscCall(NNSpatialHaloRestoreInputGradientSingle(&u->h, dx));
  PetscFunctionReturn(0);
}
