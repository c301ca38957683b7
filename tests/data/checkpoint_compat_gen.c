/*
   Generator of the checkpoints tests/checkpoint_compat.c loads: trains the network of
   checkpoint_compat.opts and saves checkpoint_compat_step3.h5 after optimizer step 3 (in the first
   epoch) and checkpoint_compat_step11.h5 after step 11 (in the second epoch), with the public API
   only, so it builds against any PetNN. The committed files come from main 0838809 (the build
   before the network object was split into network, trainer and reducer):

     cd tests/data
     mpicc -O2 checkpoint_compat_gen.c -o /tmp/ckgen -I/work/base/include $(pkg-config --cflags petsc) \
       -L/work/base/build -Wl,-rpath,/work/base/build -lpetnn $(pkg-config --libs petsc) -lm
     /tmp/ckgen -options_file checkpoint_compat.opts
*/
#include <petnn.h>

static PetscErrorCode SaveAt(NN net, PetscInt epoch, PetscInt step, PetscReal loss, void *ctx)
{
  (void)epoch;
  (void)loss;
  (void)ctx;
  PetscFunctionBegin;
  if (step == 3) PetscCall(NNCheckpointSave(net, "checkpoint_compat_step3.h5"));
  if (step == 11) PetscCall(NNCheckpointSave(net, "checkpoint_compat_step11.h5"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN     net;
  NNData train;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &train));
  PetscCall(NNDataSetOptionsPrefix(train, "train_"));
  PetscCall(NNDataSetFromOptions(train));
  PetscCall(NNTrainMonitorSet(net, SaveAt, NULL, NULL));
  PetscCall(NNTrain(net, train, NULL));
  PetscCall(NNDataDestroy(&train));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}
