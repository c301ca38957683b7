/*
   Private to the Fourier neural operator layers spectral_conv2d / spectral_conv3d:
   layers/spectral/spectralconv.c (the layer types: set-up, double passes), spectralconv_single.c (the float
   passes, -nn_precision single, with FFTW's single-precision library), spectralconv_passes.h (the passes on
   arrays, a precision template both compile), spectralconvopts.c (options, view, setters), spectralconv_fft.c
   (FFTW MPI plans and the mode products, spectralconv_modes_passes.h), spectralconv_repartition.c (the DMDA
   block <-> FFTW slab repartition), spectralconv_cuda.c and spectralconv_kernels.cu (the device passes,
   -nn_device cuda: truncated DFTs of the kept modes of the rank's box instead of FFTs, no FFT library).

   Axes: a sample is (C,H,W) or (C,D,H,W); the DMDA's x is W, y is H, z is D. The FFT runs on the
   row-major grid n[] = (H,W) or (D,H,W) (W last, as torch.fft.rfftn's last axis), FFTW MPI slabs split
   n[0] (DMDA y in 2-d, z in 3-d). A slab rank holds rows [r0, r0 + nr) of n[0], every other index, the
   last real axis padded to 2*(W/2+1) (FFTW's in-place layout), each position holding a run of
   howmany = nbatch*C values [slot][channel]: exactly a DMDA pixel.
*/
#pragma once

#include <petnn/private/nnimpl.h>
#include <petscsf.h>

/* the repartition between a DMDA's block layout and FFTW's slab layout: a PetscSF whose roots are the
   DMDA's owned pixels and whose leaves are the slab's pixels (in the padded array), moved as runs of
   D values; its adjoint (slab -> block, summed) is the reverse scatter */
typedef struct {
  PetscSF  sf;
  PetscInt nd;     /* 2 or 3 */
  PetscInt n[3];   /* FFT grid, slowest first: (H,W) or (D,H,W) */
  PetscInt r0, nr; /* the rank's rows of n[0] */
  PetscInt nslab;  /* pixels of the rank's slab (nr * n[1] (* n[2])) */
} NNFFTRepartition;

PETSC_EXTERN PetscErrorCode NNFFTRepartitionCreate(DM, PetscInt, PetscInt, NNFFTRepartition *);
PETSC_EXTERN PetscErrorCode NNFFTRepartitionDestroy(NNFFTRepartition *);
PETSC_EXTERN PetscErrorCode NNFFTRepartitionPaddedSize(const NNFFTRepartition *, PetscInt *);
PETSC_EXTERN PetscErrorCode NNFFTRepartitionForward(NNFFTRepartition *, MPI_Datatype, const PetscScalar *, PetscScalar *);
PETSC_EXTERN PetscErrorCode NNFFTRepartitionAdjoint(NNFFTRepartition *, MPI_Datatype, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNFFTRepartitionForwardSingle(NNFFTRepartition *, MPI_Datatype, const float *, float *);
PETSC_INTERN PetscErrorCode NNFFTRepartitionAdjointSingle(NNFFTRepartition *, MPI_Datatype, const float *, float *);
PETSC_INTERN PetscLogEvent NN_SpectralFFT, NN_SpectralRepartition;

typedef struct _n_NNSpectralFFT *NNSpectralFFT;   /* plans and buffers (spectralconv_fft.c) */
typedef struct _n_NNSpectralCUDA *NNSpectralCUDA; /* the device passes' workspace (spectralconv_cuda.c) */

/* the spectral path's geometry: what the mode products need */
typedef struct {
  PetscInt nd, n[3], nr, r0, inner, wc; /* grid, rows, product of the middle axes, W/2+1 */
  PetscBool trans;                      /* the spectrum in FFTW's transposed layout (FFTW_MPI_TRANSPOSED_OUT/IN) */
  PetscInt  nt, t0;                     /* transposed: the rank's rows of the second axis of the half spectrum */
  PetscInt  npos;                       /* half-spectrum positions of the rank */
  PetscInt nb, ns, Cin, Cout;           /* batch capacity, slots used, channels */
  PetscInt m[3], M;                     /* modes per axis and their product (one corner's modes) */
} NNSpectralGeom;

/* one precision's transforms: FFTW plans and slab buffers, and the repartition's units (runs of nbatch*C_in and
   nbatch*C_out values) */
typedef struct {
  NNSpectralFFT fft;
  MPI_Datatype  unitin, unitout;
} NNSpectralTransforms;

/* a pass's rows for the pointwise path's GEMMs: the rank's pixels, batch capacity and slots used, channels */
typedef struct {
  PetscInt npix, nb, ns, Cin, Cout;
} NNSpectralRows;

typedef struct {
  PetscInt         nd;        /* 2 or 3 */
  PetscInt         filters;   /* C_out */
  PetscInt         modes[3];  /* m1, m2 (, m3) in PyTorch order (first FFT axis first); 0: not set */
  PetscInt         nmodes;    /* values given to -modes (checked at set-up) */
  PetscBool        linear;    /* the pointwise path W x + b (the FNO block's 1x1 convolution) */
  PetscInt         plan;      /* 0: FFTW_ESTIMATE, 1: FFTW_MEASURE */
  PetscBool        transposed; /* keep the spectrum transposed between the transforms (one global transpose less per transform) */
  DM               daout;     /* the input's grid and decomposition with dof nbatch*C_out */
  NNFFTRepartition rep;
  NNSpectralGeom   g;
  NNSpectralTransforms tr;    /* double: made with the output Vec */
  NNSpectralTransforms str;   /* single precision: made on the first float pass (spectralconv_single.c) */
  PetscScalar     *grad;      /* the layer's parameter gradient, summed over the ranks */
  float           *sgrad;     /* single precision: the rank's share of the parameter gradient in float */
  NNSpectralCUDA   dev;       /* -nn_device cuda: twiddles, work arrays, kept spectra on the device (NULL until a pass) */
} NNLayer_SpectralConv;


/* spectralconv.c */
PETSC_INTERN PetscErrorCode NNSpectralConvPrepare(NNLayer, PetscInt, NNSpectralRows *);
PETSC_INTERN PetscErrorCode NNSpectralTransformsCreate(MPI_Comm, NNSpectralGeom *, PetscInt, PetscBool, NNSpectralTransforms *);
PETSC_INTERN PetscErrorCode NNSpectralTransformsDestroy(NNSpectralTransforms *);

/* spectralconv_single.c: the float passes (PETNN_HAVE_FFTWF: FFTW's single-precision library found) */
PETSC_INTERN PetscErrorCode NNLayerForwardSingle_SpectralConv(NNLayer, PetscInt, const float *, float *);
PETSC_INTERN PetscErrorCode NNLayerBackwardSingle_SpectralConv(NNLayer, PetscInt, const float *, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNSpectralConvResetSingle(NNLayer);

/* spectralconv_fft.c */
PETSC_INTERN PetscErrorCode NNSpectralFFTInitializePackage(void);
PETSC_INTERN PetscErrorCode NNSpectralFFTCreate(MPI_Comm, NNSpectralGeom *, PetscInt, PetscBool, NNSpectralFFT *);
PETSC_INTERN PetscErrorCode NNSpectralFFTDestroy(NNSpectralFFT *);
PETSC_INTERN PetscErrorCode NNSpectralFFTGetBuffers(NNSpectralFFT, PetscScalar **, PetscScalar **);
PETSC_INTERN PetscErrorCode NNSpectralFFTGetBuffersSingle(NNSpectralFFT, float **, float **);
PETSC_INTERN PetscErrorCode NNSpectralFFTExecute(NNSpectralFFT, PetscInt);
PETSC_INTERN PetscErrorCode NNSpectralModesForward(const NNSpectralGeom *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNSpectralModesBackward(const NNSpectralGeom *, const PetscScalar *, const PetscScalar *, PetscScalar *, PetscScalar *, PetscBool);
PETSC_INTERN PetscErrorCode NNSpectralModesForwardSingle(const NNSpectralGeom *, const float *, const float *, float *);
PETSC_INTERN PetscErrorCode NNSpectralModesBackwardSingle(const NNSpectralGeom *, const float *, const float *, float *, float *, PetscBool);
PETSC_INTERN PetscErrorCode NNSpectralFFTView(NNSpectralFFT, PetscViewer);
enum { NN_FFT_R2C_IN, NN_FFT_C2R_OUT, NN_FFT_R2C_OUT, NN_FFT_C2R_IN };

/* spectralconvopts.c */
PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_SpectralConv(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerView_SpectralConv(NNLayer, PetscViewer);
PETSC_INTERN PetscErrorCode NNSpectralConvComposeFunctions(NNLayer, PetscBool);

#if defined(PETNN_HAVE_CUDA)
/* spectralconv_cuda.c: the device passes (truncated DFTs of the kept modes instead of FFTs, also split over ranks) */
PETSC_INTERN PetscErrorCode NNLayerForwardDevice_SpectralConv(NNLayer, PetscInt, const void *, void *);
PETSC_INTERN PetscErrorCode NNLayerBackwardDevice_SpectralConv(NNLayer, PetscInt, const void *, const void *, const void *, void *);
PETSC_INTERN PetscErrorCode NNSpectralConvResetDevice(NNLayer);
#endif
