/*
   conv2d/conv3d in single precision (-nn_precision single): the layer's passes on float activations with the float
   parameter copy, by the algorithm the double passes use, through the same code (conv_im2col_passes.h,
   conv_winograd_passes.h, conv_run_passes.h) with float GEMMs, and with the halo exchanged in float
   (src/layer/interface/spatialhalosingle.c). Where they apply (one group, channels multiples of 16, at most 64 x 64
   input x output channels) and -<layer>_winograd is not given, the direct loops of conv_direct.c replace both. Winograd uses smaller tiles in float (input tiles of at most 6 pixels
   per axis in 2-d: F(4,3), F(2,5)), since the transforms' round-off grows with the tile: F(6,3) gave 1.7e-3
   finite-difference errors in float, F(4,3) stays near float's own. Its weight transforms (small: one per step) run
   in double on the double parameters and are rounded to float once. The weight gradient of the rank's pixels is
   summed over the ranks in double. Partitioned layers (-<layer>_partition filters|channels) take the replicated
   passes on their piece's geometry with the steps of conv_partition_passes.h around them, moving floats.
*/
#include "conv.h"

/* float workspace, on the first single-precision pass after set-up */
static PetscErrorCode NNConvSingleSetUp(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvGeom   *g = &d->single.g;
  PetscInt      nscalar, nint, nu = 0;

  PetscFunctionBegin;
  if (d->single.Wp) PetscFunctionReturn(0);
  PetscCheck(d->h.daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  *g = d->g;
  PetscCall(PetscMemzero(&g->w, sizeof(g->w))); /* the double passes' tables stay theirs */
  if (g->alg == NN_CONV_WINOGRAD) {
    PetscInt m[3];
    for (PetscInt a = 0; a < 3; a++) m[a] = d->winograd > 0 ? d->winograd : PetscMin(PetscMax(2, (d->nd == 2 ? 7 : 5) - g->k[a]), PetscMax(2, g->om[a]));
    PetscCall(NNConvWinogradSetUp(g, m));
    nu = NNConvWinogradTransformedSize(g); /* at most the double passes' (their U, dU and wwork serve) */
  }
  /* automatic: the direct loops where they apply and the layer is narrow. Measured in float on 2 threads (wide_cnn):
     direct loops beat F(4,3) Winograd up to 64 x 64 channels (16->32 3x3 at 28 x 28: 0.022 vs 0.029 s; 64->64 5x5
     at 14 x 14: 0.035 vs 0.040 s; 64->64 3x3 at 32 x 32: 0.048 vs 0.042 s), Winograd wins beyond (128->128:
     0.10 vs 0.17 s; 256->256 on 1 thread: 1.6 vs 3.9 s) */
  if (d->winograd < 0 && NNConvDirectApplies(g) && g->Cin * g->Cout <= 64 * 64) {
    PetscCall(NNConvWinogradDestroy(g));
    g->alg = NN_CONV_DIRECT;
    nu     = 0;
  }
  PetscCall(NNConvWorkspaceSize(g, d->nthreads, &nscalar, &nint));
  PetscCall(PetscMalloc3(g->Cout * g->Ka, &d->single.Wp, g->Cout * g->Ka, &d->single.dWp, PetscMax(nscalar, 1), &d->single.work));
  PetscCall(PetscMalloc3(PetscMax(nu, 1), &d->single.U, PetscMax(nu, 1), &d->single.dU, g->Cout, &d->single.db));
  PetscCall(PetscMalloc1(PetscMax(nint, 1), &d->single.iwork));
  if (g->alg == NN_CONV_DIRECT) PetscCall(PetscMalloc1(g->Cout * g->K, &d->single.WT));
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvSingleReset(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree3(d->single.Wp, d->single.dWp, d->single.work));
  PetscCall(PetscFree3(d->single.U, d->single.dU, d->single.db));
  PetscCall(PetscFree(d->single.iwork));
  PetscCall(PetscFree(d->single.WT));
  PetscCall(NNConvWinogradDestroy(&d->single.g));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardSingle_Conv(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNLayer_Conv    *d = (NNLayer_Conv *)l->data;
  NNConvGeom       g;
  NNConvPassSingle pass;
  const float     *xin, *b;
  float           *ya = l->part.type == NN_PARTITION_FILTERS ? d->spbuf : y; /* filters: this rank's channels, gathered below */
  PetscLogDouble   flops, wflops = 0;

  PetscFunctionBegin;
  PetscCall(NNConvSingleSetUp(l));
  g    = d->single.g;
  g.ns = n;
  b    = l->stheta + g.Cout * g.K;
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  if (g.alg == NN_CONV_WINOGRAD) { /* U from the double weights, rounded once */
    const PetscInt nu = NNConvWinogradTransformedSize(&g);
    NNConvPackWeights(&g, l->theta, l->theta + g.Cout * g.K, d->Wp);
    PetscCall(NNConvWinogradWeights(&g, d->Wp, d->U, d->wwork, &wflops));
    for (PetscInt i = 0; i < nu; i++) d->single.U[i] = (float)d->U[i];
    pass.U = d->single.U;
    /* Winograd adds into the output: every computed slot starts as the bias */
    for (PetscInt q = 0; q < g.npix; q++)
      for (PetscInt s = 0; s < n; s++) {
        if (g.bias) PetscCall(PetscArraycpy(ya + (q * g.nb + s) * g.Cout, b, g.Cout));
        else PetscCall(PetscArrayzero(ya + (q * g.nb + s) * g.Cout, g.Cout));
      }
  } else {
    NNConvPackWeights(&g, l->stheta, b, d->single.Wp);
    pass.Wp = d->single.Wp;
  }
  if (n < g.nb) /* the slots not computed are zero */
    for (PetscInt q = 0; q < g.npix; q++) PetscCall(PetscArrayzero(ya + (q * g.nb + n) * g.Cout, (g.nb - n) * g.Cout));
  PetscCall(NNSpatialHaloGetInputSingle(&d->h, x, &xin));
  PetscCall(NNConvPartInputSingle(l, xin, &pass.x));
  pass.y = ya;
  PetscCall(NNConvRunSingle(&g, &pass, d->nthreads, d->single.work, d->single.iwork, &flops));
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNConvPartOutputSingle(l, n, y));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  PetscCall(PetscLogFlops(flops + wflops));
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
  PetscLogDouble   flops, wflops = 0;
  PetscBool        wino;
  PetscInt         nu;

  PetscFunctionBegin;
  PetscCall(NNConvSingleSetUp(l));
  g    = d->single.g;
  g.ns = n;
  wino = (PetscBool)(g.alg == NN_CONV_WINOGRAD);
  nu   = wino ? NNConvWinogradTransformedSize(&g) : 0;
  PetscCall(PetscMemzero(&pass, sizeof(pass)));
  if (wino) {
    PetscCall(PetscArrayzero(d->single.dU, nu));
    PetscCall(PetscArrayzero(d->single.db, g.Cout));
    pass.U  = d->single.U; /* transformed by the forward pass */
    pass.dW = d->single.dU;
    pass.db = g.bias ? d->single.db : NULL;
  } else {
    PetscCall(PetscArrayzero(d->single.dWp, g.Cout * g.Ka));
    pass.Wp = d->single.Wp; /* packed by the forward pass */
    pass.dW = d->single.dWp;
    if (g.alg == NN_CONV_DIRECT && dx) { /* WT[t][o][c] = W_t[c][o] */
      for (PetscInt t = 0; t < g.ntap; t++)
        for (PetscInt c = 0; c < g.Cin; c++)
          for (PetscInt o = 0; o < g.Cout; o++) d->single.WT[(t * g.Cout + o) * g.Cin + c] = d->single.Wp[(t * g.Cin + c) * g.Cout + o];
      pass.U = d->single.WT;
    }
  }
  PetscCall(PetscArrayzero(d->grad, l->nparam));          /* channels: the bias gradient from dy below */
  PetscCall(NNSpatialHaloGetInputSingle(&d->h, x, &xin)); /* exchanged again, as in double */
  if (dx) PetscCall(NNSpatialHaloGetInputGradientSingle(&d->h, dx, &dxin));
  PetscCall(NNConvPartInputSingle(l, xin, &pass.x));
  PetscCall(NNConvPartOutputGradientSingle(l, n, dy, &pass.dy, d->grad));
  PetscCall(NNConvPartInputGradientSingle(l, dxin, &pass.dx));
  PetscCall(NNConvRunSingle(&g, &pass, d->nthreads, d->single.work, d->single.iwork, &flops));
  if (dxin) PetscCall(NNConvPartGatherInputGradientSingle(l, dxin));
  PetscCall(NNSpatialHaloRestoreInputSingle(&d->h));
  if (dx) PetscCall(NNSpatialHaloRestoreInputGradientSingle(&d->h, dx));
  if (dx && l->part.type == NN_PARTITION_FILTERS) { /* the partial input gradients summed over the model ranks */
    PetscInt xm, ym, zm, dof;
    PetscCall(DMDAGetCorners(d->h.dahalo, NULL, NULL, NULL, &xm, &ym, &zm));
    PetscCall(DMDAGetInfo(d->h.dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
    PetscCall(NNPartSumSingle(d->pc.comm, xm * ym * zm * dof, dx));
  }
  /* the rank's weight gradient in double (Winograd: transformed back in double), summed over the ranks that hold
     pieces of the samples */
  if (wino) {
    PetscCall(PetscArrayzero(d->dWp, g.Cout * g.Ka));
    for (PetscInt i = 0; i < nu; i++) d->dU[i] = d->single.dU[i];
    PetscCall(NNConvWinogradWeightGradient(&g, d->dU, d->dWp, d->wwork, &wflops));
    NNConvUnpackGradient(&g, d->dWp, d->grad, d->grad + g.Cout * g.K, PETSC_FALSE);
    if (g.bias)
      for (PetscInt o = 0; o < g.Cout; o++) d->grad[g.Cout * g.K + o] = d->single.db[o];
  } else NNConvUnpackGradient(&g, d->single.dWp, d->grad, d->grad + g.Cout * g.K, PETSC_TRUE);
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt i = 0; i < l->nparam; i++) l->sdtheta[i] += (float)d->grad[i];
  PetscCall(PetscLogFlops(flops + wflops));
  PetscFunctionReturn(0);
}
