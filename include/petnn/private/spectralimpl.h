/* Private declarations of PetNN's spectral analysis (src/spectral/, ts/ode/odeblock_spectrum*.c).

   SLEPc is optional: with PETNN_HAVE_SLEPC the EPS/SVD solvers are available and NNSlepcInitialize()
   starts SLEPc on first use; without it every public spectral routine fails with PETSC_ERR_SUP. */
#pragma once

#include <petnn/private/nnimpl.h>
#if defined(PETNN_HAVE_SLEPC)
  #include <slepceps.h>
  #include <slepcsvd.h>
#endif

/* src/sys/slepc.c */
PETSC_INTERN PetscErrorCode NNSlepcInitialize(void);

/* ---- ODE-block Jacobian spectra and stability (ts/ode/odeblock_spectrum*.c) */
PETSC_INTERN PetscErrorCode NNODESpectrumViewFromOptions(NN, NNData);


/* ---- layer operator norms, Lipschitz bounds, spectral normalization (src/spectral/operator*.c, lipschitz.c, spectralnorm.c) */
PETSC_INTERN PetscErrorCode NNOperatorNormViewFromOptions(NN);
/* a layer's linear part as an operator on ONE sample (src/spectral/operatorshell.c): its forward pass
   without bias (the layer runs on a copy of its parameters with the bias zeroed) and, as transpose,
   its backward input gradient; vectors hold the rank's part of one sample, [pixel][channel] */
typedef struct {
  NNLayer      l;
  Vec          X, Y, DX;         /* the layer's input, output and input-gradient batch Vecs (slot 0 used) */
  PetscInt     nbin, nbout;      /* entries of the rank's pixel per batch slot (channels): input, output */
  PetscInt     min, mout;        /* local entries of one sample: input, output */
  PetscInt     Nin, Nout;        /* global entries of one sample */
  PetscScalar *theta, *dtheta;   /* the layer's parameters with the bias zeroed; a gradient sink */
  PetscBool    forwarded;        /* the layer ran forward on theta since it was made (the backward reuses its packed weights) */
} NNLinearOp;
PETSC_INTERN PetscErrorCode NNLinearOpCreate(NNLayer, NNLinearOp **);
PETSC_INTERN PetscErrorCode NNLinearOpDestroy(NNLinearOp **);
PETSC_INTERN PetscErrorCode NNLinearOpUpdate(NNLinearOp *);
PETSC_INTERN PetscErrorCode NNLinearOpApply(NNLinearOp *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNLinearOpApplyTranspose(NNLinearOp *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode NNLinearOpCreateShell(NNLinearOp *, Mat *);
PETSC_INTERN PetscErrorCode NNLayerCreateWeightMat(NNLayer, Mat *);
PETSC_INTERN PetscBool      NNLayerIsShellOperator(NNLayer);
/* the largest singular value of A by SLEPc SVD (prefix given) and its iterations; by a dense reference (gesvd on rank 0) */
PETSC_INTERN PetscErrorCode NNSpectralSetUp(NN); /* set up again where only the batch capacity changed */
PETSC_INTERN PetscErrorCode NNOperatorSVD(Mat, const char[], PetscReal *, PetscInt *);
PETSC_INTERN PetscErrorCode NNOperatorDenseReference(Mat, PetscReal *);
/* how a layer's norm or Lipschitz constant was found (src/spectral/lipschitz.c) */
typedef struct {
  char     how[64]; /* "SLEPc SVD", "closed form", "Lipschitz constant", ... */
  PetscInt its;     /* SVD iterations (0: none) */
  PetscBool svd;    /* computed by an SVD (the dense reference can check it) */
} NNOperatorNormInfo;
PETSC_INTERN PetscErrorCode NNLayerOperatorSigma_Private(NNLayer, PetscBool, PetscReal *, PetscInt *);
PETSC_INTERN PetscErrorCode NNLayerLipschitz_Private(NNLayer, PetscBool, PetscReal *, NNOperatorNormInfo *);
/* spectral normalization during training (src/spectral/spectralnorm*.c) */
typedef struct {
  PetscReal   c;     /* the bound on sigma_max */
  PetscInt    its;   /* power iterations per step */
  PetscReal   sigma; /* the last estimate (before the projection) */
  NNLinearOp *op;    /* convolutions: the operator on one sample, kept between steps */
} NNSpectralNorm;
PETSC_INTERN PetscErrorCode NNLayerGetSpectralNorm_Private(NNLayer, NNSpectralNorm **); /* NULL: off */
PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_SpectralNorm(NNLayer, PetscOptionItems *);
PETSC_INTERN PetscErrorCode NNLayerSetUp_SpectralNorm(NNLayer);


/* ---- loss-Hessian products and eigenvalues, second-order TAO (src/spectral/hessian*.c) */
PETSC_INTERN PetscErrorCode NNHessianViewFromOptions(NN, NNData);

