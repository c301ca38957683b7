/* A network from an options file in one call, as a simulation (or its Fortran side) creates one from its configuration. */
#include <petnn/private/nnimpl.h>

/*@C
   NNCreateFromOptionsFile - creates a network configured by an options file (PETSc options or YAML) and the options database

   Collective

   Input Parameters:
+  comm - the communicator
.  file - an options file inserted into the database first (".yaml"/".yml": PETSc YAML), or NULL/"" for none
-  prefix - the network's options prefix (NULL or "" for none)

   Output Parameter:
.  net - the network, its layers, loss, optimizer and trainer set from the options (NNSetFromOptions()); give it
         its input with NNSetInputShape() or NNSetInputDM(), then NNSetUp()

   Notes:
   The file's options stay in the database, so data sets (a replay buffer's -data_buffer_capacity) read them too;
   command-line options given before win over the file's, as with -options_file. This is the counterpart of
   TorchFort's torchfort_create_model() with its YAML configuration.

   Level: beginner

.seealso: `NNCreate()`, `NNSetFromOptions()`, `NNSetInputDM()`, `NNTrainStep()`
@*/
PetscErrorCode NNCreateFromOptionsFile(MPI_Comm comm, const char file[], const char prefix[], NN *net)
{
  size_t    len = 0;
  PetscBool yaml = PETSC_FALSE, yml = PETSC_FALSE;

  PetscFunctionBegin;
  PetscAssertPointer(net, 4);
  if (file) PetscCall(PetscStrlen(file, &len));
  if (len) {
    PetscCall(PetscStrendswith(file, ".yaml", &yaml));
    PetscCall(PetscStrendswith(file, ".yml", &yml));
    if (yaml || yml) PetscCall(PetscOptionsInsertFileYAML(comm, NULL, file, PETSC_TRUE));
    else PetscCall(PetscOptionsInsertFile(comm, NULL, file, PETSC_TRUE));
  }
  PetscCall(NNCreate(comm, net));
  if (prefix && prefix[0]) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetFromOptions(*net));
  PetscFunctionReturn(0);
}
