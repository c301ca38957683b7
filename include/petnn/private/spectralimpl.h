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
PETSC_INTERN PetscLogEvent  NN_ODESpectrum;
/* the context of NNODECreateJacobian()'s MATSHELL: one sample's df/du at the state u_k, applied
   transposed (its MatMult is f's backward pass) on a compact Vec of that sample's entries */
typedef struct {
  NN        net;
  NNLayer   blk;
  PetscInt  k;     /* step: f's parameters theta_k and time t = k h */
  PetscReal t;
  Vec       uk;    /* the state u_k in the block's layout, the sample in slot 0 (one-sample passes) */
  Vec       V;     /* the output gradient in the block's layout (zero outside slot 0) */
  PetscInt  S;     /* sequential state: entries of a sample; spatial state: 0 */
  PetscInt  C, D;  /* spatial state: channels, and dof per grid point (batch capacity x channels) */
  PetscInt  cs[3], cm[3], gm[2]; /* spatial state: this rank's corner and widths, the grid's x and y sizes */
  PetscInt  nprod; /* products so far */
} NNODEJacobianCtx;
PETSC_INTERN PetscErrorCode NNODEGetBlock(NN, const char[], NNLayer *, PetscInt *);
PETSC_INTERN PetscErrorCode NNODEBlockInput(NN, PetscInt, PetscInt, Vec, Vec *);
PETSC_INTERN PetscErrorCode NNODEJacobianCreate(NN, NNLayer, PetscInt, Vec, PetscInt, PetscInt, Mat *);
PETSC_INTERN PetscErrorCode NNODESpectrumSolve(Mat, NNODESpectrumWhich, PetscInt, PetscReal, PetscInt, PetscInt *, PetscReal[], PetscReal[]);
/* the block's stability function R(z): an explicit RK tableau or a theta method (odeblock_stability.c) */
typedef struct {
  PetscBool theta_method; /* R(z) = (1 + (1 - theta) z) / (1 - theta z); else R(z) = 1 + z b^T (I - z A)^{-1} 1 */
  PetscReal theta;
  PetscInt  s;
  PetscReal A[16 * 16], b[16];
  char      name[64]; /* "rk 4", "discrete (forward Euler)", "cn", ... */
} NNODEStabilityFn;
PETSC_INTERN PetscErrorCode NNODEGetStabilityFn(NNLayer, NNODEStabilityFn *);
PETSC_INTERN void           NNODEStabilityEval(const NNODEStabilityFn *, PetscReal, PetscReal, PetscReal *, PetscReal *);
PETSC_INTERN PetscErrorCode NNODEStabilityCompute(NNLayer, const NNODEStabilityFn *, PetscInt, const PetscReal[], const PetscReal[], NNODEStability *);
PETSC_INTERN PetscErrorCode NNODEFormatEig(PetscReal, PetscReal, size_t, char[]);
PETSC_INTERN PetscErrorCode NNODEStabilityReport(NNLayer, const NNODEStabilityFn *, const NNODEStability *, NNODEStabilityCheck);


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
PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_SpectralNorm(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerSetUp_SpectralNorm(NNLayer);


/* ---- loss-Hessian products and eigenvalues, second-order TAO (src/spectral/hessian*.c) */
PETSC_INTERN PetscErrorCode NNHessianViewFromOptions(NN, NNData);
PETSC_EXTERN PetscLogEvent  NN_HessianMult;
/* the Hessian over samples [0, N) of data on a given communicator (PETSC_COMM_SELF for TAO), in training or evaluation mode */
PETSC_INTERN PetscErrorCode NNCreateHessianData_Private(NN, NNData, PetscInt, MPI_Comm, PetscBool, Mat *);
PETSC_INTERN PetscErrorCode NNHessianSetPoint_Private(Mat, Vec); /* linearization point (NULL: the network's parameters) */
PETSC_INTERN PetscErrorCode NNHessianGetStep_Private(Mat, PetscReal *);
PETSC_INTERN PetscErrorCode NNHessianSetStep_Private(Mat, PetscReal);

