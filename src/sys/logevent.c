/*
   PetNN's -log_view events. They are registered as not collective: a layer's pass, an ODE block's step or an MGRIT
   level runs on a subset of the ranks (a data group, a time chunk, rank 0 writing a checkpoint), so a barrier at the
   event's start would wait for ranks that never reach it. PETSc releases after 3.18 start such barriers under
   -log_sync, which -petsc_ci (the test harness) turns on.
*/
#include <petnn/private/nnimpl.h>

/* PetscLogEventRegister(), then PetscLogEventSetCollective(event, PETSC_FALSE) */
PetscErrorCode NNLogEventRegister(const char name[], PetscClassId classid, PetscLogEvent *event)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventRegister(name, classid, event));
  PetscCall(PetscLogEventSetCollective(*event, PETSC_FALSE));
  PetscFunctionReturn(0);
}
