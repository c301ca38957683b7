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


/* ---- loss-Hessian products and eigenvalues, second-order TAO (src/spectral/hessian*.c) */
PETSC_INTERN PetscErrorCode NNHessianViewFromOptions(NN, NNData);
PETSC_EXTERN PetscLogEvent  NN_HessianMult;
/* the Hessian over samples [0, N) of data on a given communicator (PETSC_COMM_SELF for TAO), in training or evaluation mode */
PETSC_INTERN PetscErrorCode NNCreateHessianData_Private(NN, NNData, PetscInt, MPI_Comm, PetscBool, Mat *);
PETSC_INTERN PetscErrorCode NNHessianSetPoint_Private(Mat, Vec); /* linearization point (NULL: the network's parameters) */
PETSC_INTERN PetscErrorCode NNHessianGetStep_Private(Mat, PetscReal *);
PETSC_INTERN PetscErrorCode NNHessianSetStep_Private(Mat, PetscReal);

