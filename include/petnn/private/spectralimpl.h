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


/* ---- loss-Hessian products and eigenvalues, second-order TAO (src/spectral/hessian*.c) */
PETSC_INTERN PetscErrorCode NNHessianViewFromOptions(NN, NNData);
PETSC_EXTERN PetscLogEvent  NN_HessianMult;
/* the Hessian over samples [0, N) of data on a given communicator (PETSC_COMM_SELF for TAO), in training or evaluation mode */
PETSC_INTERN PetscErrorCode NNCreateHessianData_Private(NN, NNData, PetscInt, MPI_Comm, PetscBool, Mat *);
PETSC_INTERN PetscErrorCode NNHessianSetPoint_Private(Mat, Vec); /* linearization point (NULL: the network's parameters) */
PETSC_INTERN PetscErrorCode NNHessianGetStep_Private(Mat, PetscReal *);
PETSC_INTERN PetscErrorCode NNHessianSetStep_Private(Mat, PetscReal);

