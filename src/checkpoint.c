/* placeholder: being written */
#include <petnn/private/nnimpl.h>
PetscErrorCode NNCheckpointSave(NN net, const char file[]) { SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "not yet implemented"); }
PetscErrorCode NNCheckpointLoad(NN net, const char file[]) { SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "not yet implemented"); }
PetscErrorCode NNSaveGradients(NN net, const char file[], PetscInt n, Vec x, Vec t) { SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "not yet implemented"); }
