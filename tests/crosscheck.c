static char help[] = "Helper of the PyTorch cross-check (tests/torch_crosscheck.py): forward and backward on\n"
                     "-grad_data_* samples, like nnrun -mode grad, but optionally in evaluation mode and\n"
                     "with the network's buffers saved afterwards.\n\n"
                     "  -load <file>               checkpoint to start from\n"
                     "  -grad_output <file>        HDF5 file written by NNSaveGradients() (gradients.h5)\n"
                     "  -eval                      evaluation mode (dropout off, batch-norm running statistics)\n"
                     "  -checkpoint_after <file>   save a checkpoint after the pass (updated running statistics)\n\n";

/*
   nnrun -mode grad always runs in training mode; this program adds what the cross-check needs
   beyond it: NNSetTraining(net, PETSC_FALSE) before the pass, and NNCheckpointSave() after it, so
   that evaluation-mode outputs and gradients and the running statistics updated by one training
   forward pass can be compared with PyTorch. Everything else (the network, the data, the file
   formats) is the same as nnrun's. Without torch and h5py the test prints a skip message.
*/
#include <petnn.h>

int main(int argc, char **argv)
{
  NN        net;
  NNData    data;
  NNShape   s, in;
  Vec       x, t;
  PetscInt  n, *idx;
  PetscBool eval = PETSC_FALSE;
  char      load[PETSC_MAX_PATH_LEN] = "", gout[PETSC_MAX_PATH_LEN] = "gradients.h5", after[PETSC_MAX_PATH_LEN] = "";
  MPI_Comm  comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscOptionsBegin(comm, NULL, "PyTorch cross-check helper options", "NN");
  PetscCall(PetscOptionsString("-load", "Checkpoint to start from", "NNCheckpointLoad", load, load, sizeof(load), NULL));
  PetscCall(PetscOptionsString("-grad_output", "HDF5 file with outputs and gradients", "NNSaveGradients", gout, gout, sizeof(gout), NULL));
  PetscCall(PetscOptionsBool("-eval", "Evaluation mode", "NNSetTraining", eval, &eval, NULL));
  PetscCall(PetscOptionsString("-checkpoint_after", "Checkpoint saved after the pass", "NNCheckpointSave", after, after, sizeof(after), NULL));
  PetscOptionsEnd();

  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNDataCreate(comm, &data));
  PetscCall(NNDataSetOptionsPrefix(data, "grad_"));
  PetscCall(NNDataSetType(data, NNDATAHDF5));
  PetscCall(NNDataSetFromOptions(data));
  PetscCall(NNGetInputShape(net, &in));
  if (!in.ndim) {
    PetscCall(NNDataGetSampleShape(data, &s));
    PetscCall(NNSetInputShape(net, s.ndim, s.dim));
  }
  PetscCall(NNDataGetNumSamples(data, &n));
  PetscCall(NNSetBatchSize(net, n)); /* one batch holding every sample */
  PetscCall(NNSetUp(net));
  if (load[0]) PetscCall(NNCheckpointLoad(net, load));
  PetscCall(NNSetTraining(net, eval ? PETSC_FALSE : PETSC_TRUE));

  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(n, &idx));
  for (PetscInt i = 0; i < n; i++) idx[i] = i;
  PetscCall(NNDataGetBatch(data, n, idx, x, t));
  PetscCall(NNSaveGradients(net, gout, n, x, t));
  if (after[0]) PetscCall(NNCheckpointSave(net, after));

  PetscCall(PetscFree(idx));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: torch
      requires: torch
      timeoutfactor: 0.5
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck.py ${PETNN_BINARY_DIR}/examples/nnrun ${exe}

TEST*/
