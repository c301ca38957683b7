/*
   spectral_conv2d/3d in single precision (-nn_precision single): the layer's passes on float activations with the float
   parameter copy, through the code of the double passes (spectralconv_passes.h, spectralconv_modes_passes.h) compiled
   in float: float FFTs with FFTW's single-precision library (fftwf_mpi plans, made on the first float pass with the
   double plans' flags, freed with the layer's set-up), the mode products in complex float, the pointwise path through
   sgemm, and the repartition moving runs of floats. The rank's share of the parameter gradient is accumulated in float,
   summed over the ranks in double and added into the float gradient, as conv_single.c does. Without libfftw3f (CMake
   leaves PETNN_HAVE_FFTWF undefined) the layer has no float passes and the network runs its double passes.
*/
#include "spectralconv.h"
#if defined(PETNN_HAVE_FFTWF)
  #include <cblas.h>
  #include <petnn/private/nngemm.h>
  #include <petnn/private/nnrealsingle.h>
  #include "spectralconv_passes.h"
  #include <petnn/private/nnrealundef.h>

/* float plans, buffers and units, and the float gradient, on the first float pass after set-up */
static PetscErrorCode NNSpectralConvSingleSetUp(NNLayer l)
{
  NNLayer_SpectralConv *d  = (NNLayer_SpectralConv *)l->data;
  NNSpectralGeom        gs = d->g;

  PetscFunctionBegin;
  if (d->str.fft) PetscFunctionReturn(0);
  PetscCall(NNSpectralTransformsCreate(PetscObjectComm((PetscObject)d->daout), &gs, d->plan, PETSC_TRUE, &d->str));
  /* the repartition and the mode products follow the double plans' slabs */
  PetscCheck(gs.r0 == d->g.r0 && gs.nr == d->g.nr && gs.t0 == d->g.t0 && gs.nt == d->g.nt && gs.npos == d->g.npos, PETSC_COMM_SELF, PETSC_ERR_LIB, "FFTW's float slabs (rows %" PetscInt_FMT "+%" PetscInt_FMT ") differ from its double slabs (rows %" PetscInt_FMT "+%" PetscInt_FMT ")", gs.r0, gs.nr,
             d->g.r0, d->g.nr);
  PetscCall(PetscMalloc1(l->nparam, &d->sgrad));
  PetscCall(PetscInfo(l, "Layer %s: float FFTW plans made (howmany %" PetscInt_FMT " in, %" PetscInt_FMT " out)\n", ((PetscObject)l)->name, d->g.nb * d->g.Cin, d->g.nb * d->g.Cout));
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpectralConvResetSingle(NNLayer l)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;

  PetscFunctionBegin;
  PetscCall(NNSpectralTransformsDestroy(&d->str));
  PetscCall(PetscFree(d->sgrad));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardSingle_SpectralConv(NNLayer l, PetscInt n, const float *x, float *y)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  NNSpectralRows        r;

  PetscFunctionBegin;
  PetscCall(NNSpectralConvPrepare(l, n, &r));
  PetscCall(NNSpectralConvSingleSetUp(l));
  PetscCall(NNSpectralConvForwardArraysSingle(l, &r, &d->str, l->stheta, x, y));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardSingle_SpectralConv(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  NNSpectralRows        r;
  PetscMPIInt           cnt;

  PetscFunctionBegin;
  PetscCall(NNSpectralConvPrepare(l, n, &r));
  PetscCall(NNSpectralConvSingleSetUp(l));
  PetscCall(PetscArrayzero(d->sgrad, l->nparam));
  PetscCall(NNSpectralConvBackwardArraysSingle(l, &r, &d->str, l->stheta, d->sgrad, x, dy, dx));
  /* parameters are replicated: the ranks' float shares summed in double */
  for (PetscInt i = 0; i < l->nparam; i++) d->grad[i] = d->sgrad[i];
  PetscCall(PetscMPIIntCast(l->nparam, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, d->grad, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)d->daout)));
  for (PetscInt i = 0; i < l->nparam; i++) l->sdtheta[i] += (float)d->grad[i];
  PetscFunctionReturn(0);
}
#endif
