/* placeholder: being written */
#include <petnn/private/nnimpl.h>
PETSC_INTERN PetscErrorCode NNDataCreate_HDF5(NNData d)
{
  SETERRQ(PetscObjectComm((PetscObject)d), PETSC_ERR_SUP, "not yet implemented");
}
