static char help[] = "Forward+backward passes of a network built from the options database on a random batch: the\n"
                     "driver of the model-parallel convolution benchmark (examples/wide_cnn_filters.opts: 3x3\n"
                     "convolutions of 256 filters on 32 x 32 inputs, batch 32). The network's ranks split into\n"
                     "spatial x model ranks (-nn_model_ranks M); -<conv>_partition filters|channels splits a\n"
                     "convolution's weights over the M model ranks. -log_view shows the passes (NNForward,\n"
                     "NNBackward) and the model-parallel exchanges (NNPartGather, NNPartReduce).\n\n"
                     "  -options_file examples/wide_cnn_filters.opts [-nn_model_ranks 2]\n"
                     "  -repeat <r>   timed forward+backward passes after a warm-up (the fastest is reported)\n\n";

#include <petnn.h>

int main(int argc, char **argv)
{
  NN             net;
  Vec            x, t;
  PetscInt       repeat = 3, nb, nx, nt, M;
  PetscReal      L = 0;
  PetscLogDouble t0, t1, tmin = 1e30;
  PetscScalar   *a;
  PetscRandom    r;
  MPI_Comm       comm;
  PetscMPIInt    size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscOptionsBegin(comm, NULL, "Wide CNN benchmark options", NULL);
  PetscCall(PetscOptionsInt("-repeat", "Timed forward+backward passes (the fastest is reported)", NULL, repeat, &repeat, NULL));
  PetscOptionsEnd();
  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetFromOptions(net)); /* -nn_layers, -nn_input_shape, -nn_batch_size, -nn_model_ranks, ... */
  PetscCall(NNSetUp(net));
  PetscCall(NNGetBatchSize(net, &nb));
  PetscCall(NNGetModelRanks(net, &M));
  PetscCall(NNCreateBatchVecs(net, &x, &t)); /* the samples, the same on every rank (seeded alike) */
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 7));
  PetscCall(PetscRandomSeed(r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArrayWrite(x, &a));
  for (PetscInt i = 0; i < nx; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(VecRestoreArrayWrite(x, &a));
  PetscCall(VecGetArrayWrite(t, &a));
  for (PetscInt i = 0; i < nt; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(VecRestoreArrayWrite(t, &a));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(NNLossGradient(net, nb, x, t, &L, NULL)); /* warm-up: workspaces allocated on first use */
  for (PetscInt k = 0; k < repeat; k++) {
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t0));
    PetscCall(NNLossGradient(net, nb, x, t, &L, NULL));
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t1));
    tmin = PetscMin(tmin, t1 - t0);
  }
  PetscCall(PetscPrintf(comm, "%d ranks (%" PetscInt_FMT " model ranks), batch %" PetscInt_FMT ": forward+backward %.4f s (fastest of %" PetscInt_FMT "), loss %.6e\n", size, M, nb, repeat > 0 ? tmin : 0.0, repeat, (double)L));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}
