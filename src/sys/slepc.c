/* SLEPc on demand: PetNN programs call PetscInitialize(), but SLEPc's classes refuse to run before
   SlepcInitialize(). The first spectral routine starts SLEPc inside the running PETSc (which SLEPc
   allows) and registers SlepcFinalize() to run from PetscFinalize(). */
#include <petnn/private/spectralimpl.h>

#if defined(PETNN_HAVE_SLEPC)
static PetscErrorCode NNSlepcFinalize(void)
{
  PetscFunctionBegin;
  PetscCall(SlepcFinalize()); /* finalizes SLEPc only: it did not start PETSc */
  PetscFunctionReturn(0);
}
#endif

/* starts SLEPc if no one has; errors when PetNN was built without it */
PetscErrorCode NNSlepcInitialize(void)
{
#if defined(PETNN_HAVE_SLEPC)
  PetscBool started;
#endif

  PetscFunctionBegin;
#if defined(PETNN_HAVE_SLEPC)
  PetscCall(SlepcInitialized(&started));
  if (!started) {
    PetscCall(SlepcInitializeNoArguments());
    PetscCall(PetscRegisterFinalize(NNSlepcFinalize));
  }
#else
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "PetNN was built without SLEPc: spectral analysis needs it (install slepc-dev and configure with -DPETNN_WITH_SLEPC=ON)");
#endif
  PetscFunctionReturn(0);
}
