/*
   The PETSc API differences PetNN bridges, one macro or type each, so the rest of the code is written once against
   the current release and still builds on Debian's PETSc 3.18 (the oldest supported). Each entry names the release
   that changed the API; delete an entry when the oldest supported PETSc has it.
*/
#pragma once
#include <petscsys.h>
#include <petscversion.h>

/* 3.23: PetscOptionItems became a pointer type (it was the struct, passed as PetscOptionItems *) */
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *NNOptionItems;
#else
typedef PetscOptionItems NNOptionItems;
#endif

/* 3.20: PetscAssertPointer() replaced PetscValidPointer() and its typed variants */
#if PETSC_VERSION_LT(3, 20, 0)
  #define PetscAssertPointer(p, arg) PetscValidPointer(p, arg)
#endif

/* 3.24: PetscBool is C's bool, and MPI_C_BOOL its MPI type (MPIU_BOOL deprecated) */
#if PETSC_VERSION_LT(3, 24, 0)
  #define NN_MPI_BOOL MPIU_BOOL
#else
  #define NN_MPI_BOOL MPI_C_BOOL
#endif

/* 3.23: PetscContainerSetCtxDestroy(), whose destroy function takes the address of the context, replaced
   PetscContainerSetUserDestroy(); a destroy function is written as f(NNContainerDestroyArg a) and reads
   NNContainerCtx(a) */
typedef void *NNContainerDestroyArg;
#if PETSC_VERSION_LT(3, 23, 0)
  #define NNContainerCtx(a)              (a)
  #define NNContainerSetCtxDestroy(c, f) PetscContainerSetUserDestroy(c, f)
#else
  #define NNContainerCtx(a)              (*(void **)(a))
  #define NNContainerSetCtxDestroy(c, f) PetscContainerSetCtxDestroy(c, f)
#endif

/* 3.25: PetscErrorMessage() returns the specific message as const char *; NNErrorMessage() takes a char ** on every
   release (the message is read, never written) */
#if PETSC_VERSION_LT(3, 25, 0)
  #define NNErrorMessage(ierr, text, specific) PetscErrorMessage(ierr, text, specific)
#else
  #define NNErrorMessage(ierr, text, specific) PetscErrorMessage(ierr, text, (const char **)(specific))
#endif

/* 3.22: PetscOptionsCreateViewer() replaced PetscOptionsGetViewer(), and 3.21 added PetscViewerDestroy()'s partner
   PetscOptionsRestoreViewer() */
#if PETSC_VERSION_LT(3, 22, 0)
  #define PetscOptionsCreateViewer(comm, options, pre, name, v, fmt, set) PetscOptionsGetViewer(comm, options, pre, name, v, fmt, set)
#endif
