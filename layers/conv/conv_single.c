/*
   conv2d/conv3d in single precision (-nn_precision single): the layer's passes on float activations with the float
   parameter copy. They run im2col + sgemm whatever algorithm the double passes use (Winograd's transforms lose
   more digits in float than im2col's sums), through the same im2col code as the double passes
   (conv_im2col_passes.h), with the halo exchanged in float (src/layer/interface/spatialhalosingle.c). The weight
   gradient of the rank's pixels is summed over the ranks in double. Partitioned layers take the double passes.
*/
#include "conv.h"

/* the im2col geometry and float workspace, on the first single-precision pass after set-up */
static PetscErrorCode NNConvSingleSetUp(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvGeom   *g = &d->single.g;
  PetscInt      nscalar, nint;

  PetscFunctionBegin;
  if (d->single.Wp) PetscFunctionReturn(0);
  PetscCheck(d->h.daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  *g = d->g;
  PetscCall(PetscMemzero(&g->w, sizeof(g->w))); /* the Winograd tables stay the double passes' */
  g->alg  = NN_CONV_IM2COL;
  g->rows = d->tilerows > 0 ? d->tilerows : NNConvIm2colDefaultRows(g->Ka);
  PetscCall(NNConvWorkspaceSize(g, d->nthreads, &nscalar, &nint));
  PetscCall(PetscMalloc3(g->Cout * g->Ka, &d->single.Wp, g->Cout * g->Ka, &d->single.dWp, nscalar, &d->single.work));
  PetscCall(PetscMalloc1(PetscMax(nint, 1), &d->single.iwork));
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvSingleReset(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree3(d->single.Wp, d->single.dWp, d->single.work));
  PetscCall(PetscFree(d->single.iwork));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardSingle_Conv(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNLayer_Conv    *d = (NNLayer_Conv *)l->data;
  NNConvGeom       g;
  NNConvPassSingle pass;
  const float     *xin;
  PetscLogDouble   flops;

  PetscFunctionBegin;
  PetscCall(NNConvSingleSetUp(l));
  g    = d->single.g;
  g.ns = n;
  NNConvPackWeights(&g, l->stheta, l->stheta + g.Cout * g.K, d->single.Wp);
  if (n < g.nb) /* the slots not computed are zero */
    for (PetscInt q = 0; q < g.npix; q++) PetscCall(PetscArrayzero(y + (q * g.nb + n) * g.Cout, (g.nb - n) * g.Cout));
  PetscCall(NNSpatialHaloGetInputSingle(&d->h, x, &xin));
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  pass.x  = xin;
  pass.y  = y;
  pass.Wp = d->single.Wp;
  PetscCall(NNConvRunSingle(&g, &pass, d->nthreads, d->single.work, d->single.iwork, &flops));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardSingle_Conv(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNLayer_Conv    *d = (NNLayer_Conv *)l->data;
  NNConvGeom       g;
  NNConvPassSingle pass;
  const float     *xin;
  float           *dxin = NULL;
  PetscMPIInt      cnt;
  PetscLogDouble   flops;

  PetscFunctionBegin;
  PetscCall(NNConvSingleSetUp(l));
  g    = d->single.g;
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
  PetscCall(NNConvRunSingle(&g, &pass, d->nthreads, d->single.work, d->single.iwork, &flops));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  if (dx) PetscCall(NNSpatialHaloRestoreInputGradientSingle(&d->h, dx));
  /* the rank's weight gradient, summed over the ranks that hold pieces of the samples in double */
  NNConvUnpackGradient(&g, d->single.dWp, d->grad, d->grad + g.Cout * g.K, PETSC_TRUE);
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt i = 0; i < l->nparam; i++) l->sdtheta[i] += (float)d->grad[i];
  PetscCall(PetscLogFlops(flops));
  PetscFunctionReturn(0);
}
