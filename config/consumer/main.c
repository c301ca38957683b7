/* Smallest downstream program: initializes PETSc and PetNN, creates and destroys a network. */
static char help[] = "PetNN install check: create and destroy a network.\n";

#include <petnn.h>

int main(int argc, char **argv)
{
  NN net;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetNNInitializePackage());
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PetNN consumer OK (PetNN %d.%d)\n", PETNN_VERSION_MAJOR, PETNN_VERSION_MINOR));
  PetscCall(PetscFinalize());
  return 0;
}
