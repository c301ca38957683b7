/*
   conv_transpose2d/3d in single precision (-nn_precision single): the double passes' im2col + GEMM with the transposed
   tap offsets (conv_run.c) on float activations with the float parameter copy, the halo exchanged in float
   (src/layer/interface/spatialhalosingle.c). The weight gradient of the rank's pixels is summed over the ranks in
   double, as conv2d's float passes do.
*/
#include "conv.h"

/* float packed weights, their gradient and workspace, on the first single-precision pass after set-up */
static PetscErrorCode NNConvTransposeSingleSetUp(NNLayer l)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  PetscInt               nscalar, nint;

  PetscFunctionBegin;
  if (d->single.Wp) PetscFunctionReturn(0);
  PetscCheck(d->h.daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscCall(NNConvWorkspaceSize(&d->g, d->nthreads, &nscalar, &nint));
  PetscCall(PetscMalloc3(d->g.Cout * d->g.Ka, &d->single.Wp, d->g.Cout * d->g.Ka, &d->single.dWp, PetscMax(nscalar, 1), &d->single.work));
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvTransposeSingleReset(NNLayer l)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree3(d->single.Wp, d->single.dWp, d->single.work));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardSingle_ConvTranspose(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGeom             g = d->g;
  NNConvPassSingle       pass;
  const float           *xin;
  PetscLogDouble         flops;

  PetscFunctionBegin;
  PetscCall(NNConvTransposeSingleSetUp(l));
  g.ns = n;
  NNConvTransposePackWeights(&g, l->stheta, l->stheta + g.Cout * g.K, d->single.Wp);
  if (n < g.nb) /* the slots not computed are zero */
    for (PetscInt q = 0; q < g.npix; q++) PetscCall(PetscArrayzero(y + (q * g.nb + n) * g.Cout, (g.nb - n) * g.Cout));
  PetscCall(NNSpatialHaloGetInputSingle(&d->h, x, &xin));
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  pass.x  = xin;
  pass.y  = y;
  pass.Wp = d->single.Wp;
  PetscCall(NNConvRunSingle(&g, &pass, d->nthreads, d->single.work, d->iwork, &flops));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardSingle_ConvTranspose(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  NNConvGeom             g = d->g;
  NNConvPassSingle       pass;
  const float           *xin;
  float                 *dxin = NULL;
  PetscMPIInt            cnt;
  PetscLogDouble         flops;

  PetscFunctionBegin;
  PetscCall(NNConvTransposeSingleSetUp(l));
  g.ns = n;
  PetscCall(PetscArrayzero(d->single.dWp, g.Cout * g.Ka));
  PetscCall(NNSpatialHaloGetInputSingle(&d->h, x, &xin)); /* exchanged again, as in double */
  if (dx) PetscCall(NNSpatialHaloGetInputGradientSingle(&d->h, dx, &dxin));
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  pass.x  = xin;
  pass.dy = dy;
  pass.dx = dxin;
  pass.dW = d->single.dWp;
  pass.Wp = d->single.Wp; /* packed by the forward pass */
  PetscCall(NNConvRunSingle(&g, &pass, d->nthreads, d->single.work, d->iwork, &flops));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  if (dx) PetscCall(NNSpatialHaloRestoreInputGradientSingle(&d->h, dx));
  /* the rank's weight gradient in double, summed over the ranks that hold pieces of the samples */
  NNConvTransposeUnpackGradient(&g, d->single.dWp, d->grad, d->grad + g.Cout * g.K);
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt i = 0; i < l->nparam; i++) l->sdtheta[i] += (float)d->grad[i];
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}
