/* placeholder: being written */
#include <petnn/private/nnimpl.h>
PETSC_INTERN PetscErrorCode NNLayerCreate_Residual(NNLayer l)
{
  SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "not yet implemented");
}
