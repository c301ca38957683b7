static char help[] = "Helper of the PyTorch cross-check of the spatial (DMDA) layers (tests/torch_crosscheck_spatial.py):\n"
                     "forward and backward of -grad_data_* samples on any number of ranks, like nnrun -mode grad,\n"
                     "plus what the spatial cross-check needs beyond it.\n\n"
                     "  -load <file>               checkpoint to start from (a PyTorch state_dict written with h5py)\n"
                     "  -grad_output <file>        HDF5 file written by NNSaveGradients() (gradients.h5)\n"
                     "  -eval                      evaluation mode (batch-norm running statistics)\n"
                     "  -passes <k>                forward/backward passes over the batch (default 1; the file holds\n"
                     "                             the last; training-mode batch norm updates its statistics k times)\n"
                     "  -batch_capacity <m>        batch capacity m >= number of samples n: the slots s >= n of the\n"
                     "                             spatial activations are padding that must not change any result\n"
                     "  -checkpoint_after <file>   save a checkpoint after the passes (updated running statistics)\n"
                     "  -decomposition <file>      write, for every layer with a DMDA output, its grid and the\n"
                     "                             ownership ranges along each axis (one line per layer)\n\n";

/*
   The spatial layers distribute every sample over the ranks of a DMDA (to_spatial's
   -<name>_da_processors_x/y/z). tests/torch_crosscheck_spatial.py runs this program under mpiexec
   on 1, 3 and 4 ranks and compares what NNSaveGradients() writes (output, loss, input gradient,
   parameter gradients; all sequential and replicated, written by rank 0) with PyTorch's forward
   and autograd. The decomposition file lets the script confirm that the run really was
   distributed as asked (rank grid and uneven ownership ranges), and -batch_capacity checks that
   a partial batch gives the same numbers as a full one (batch statistics over the n samples only).
*/
#include <petnn.h>
#include <petscdmda.h>

/* one line per layer whose output is a DMDA global Vec:
   <layer> <dim> <M> <N> <P> <dof> <m> <n> <p> x:<l0>,<l1>,... y:... [z:...] */
static PetscErrorCode WriteDecomposition(NN net, const char file[])
{
  FILE       *fp;
  MPI_Comm    comm = PetscObjectComm((PetscObject)net);
  PetscMPIInt    rank;
  PetscInt       nl;
  const NNLayer *layers;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(NNGetLayers(net, &nl, &layers));
  PetscCall(PetscFOpen(comm, file, "w", &fp));
  for (PetscInt i = 0; i < nl; i++) {
    DM              da;
    PetscInt        dim, M[3], r[3], dof;
    const PetscInt *lr[3];
    const char     *name;
    PetscBool       isda;
    Vec             y;

    PetscCall(PetscObjectGetName((PetscObject)layers[i], &name));
    PetscCall(NNGetActivations(net, name, NULL, &y));
    PetscCall(VecGetDM(y, &da));
    if (!da) continue;
    PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
    if (!isda) continue;
    PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], &r[0], &r[1], &r[2], &dof, NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetOwnershipRanges(da, &lr[0], &lr[1], &lr[2]));
    PetscCall(PetscFPrintf(comm, fp, "%s %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT " %" PetscInt_FMT, name, dim, M[0], M[1], dim == 3 ? M[2] : 1, dof, r[0], r[1], dim == 3 ? r[2] : 1));
    for (PetscInt a = 0; a < dim; a++) {
      PetscCall(PetscFPrintf(comm, fp, " %c:", "xyz"[a]));
      for (PetscInt j = 0; j < r[a]; j++) PetscCall(PetscFPrintf(comm, fp, j ? ",%" PetscInt_FMT : "%" PetscInt_FMT, lr[a][j]));
    }
    PetscCall(PetscFPrintf(comm, fp, "\n"));
  }
  PetscCall(PetscFClose(comm, fp));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN        net;
  NNData    data;
  NNShape   s, in;
  Vec       x, t;
  PetscInt  n, cap = 0, passes = 1, *idx;
  PetscBool eval = PETSC_FALSE;
  char      load[PETSC_MAX_PATH_LEN] = "", gout[PETSC_MAX_PATH_LEN] = "gradients.h5", after[PETSC_MAX_PATH_LEN] = "", dec[PETSC_MAX_PATH_LEN] = "";
  MPI_Comm  comm;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscOptionsBegin(comm, NULL, "Spatial PyTorch cross-check helper options", "NN");
  PetscCall(PetscOptionsString("-load", "Checkpoint to start from", "NNCheckpointLoad", load, load, sizeof(load), NULL));
  PetscCall(PetscOptionsString("-grad_output", "HDF5 file with outputs and gradients", "NNSaveGradients", gout, gout, sizeof(gout), NULL));
  PetscCall(PetscOptionsBool("-eval", "Evaluation mode", "NNSetTraining", eval, &eval, NULL));
  PetscCall(PetscOptionsInt("-passes", "Forward/backward passes over the batch", "NNSaveGradients", passes, &passes, NULL));
  PetscCall(PetscOptionsInt("-batch_capacity", "Batch capacity (default: the number of samples)", "NNSetBatchSize", cap, &cap, NULL));
  PetscCall(PetscOptionsString("-checkpoint_after", "Checkpoint saved after the passes", "NNCheckpointSave", after, after, sizeof(after), NULL));
  PetscCall(PetscOptionsString("-decomposition", "File with the DMDA decomposition of every spatial activation", NULL, dec, dec, sizeof(dec), NULL));
  PetscOptionsEnd();
  PetscCheck(passes >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-passes %" PetscInt_FMT " must be at least 1", passes);

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
  if (!cap) cap = n;
  PetscCheck(cap >= n, comm, PETSC_ERR_ARG_OUTOFRANGE, "-batch_capacity %" PetscInt_FMT " must be at least the number of samples %" PetscInt_FMT, cap, n);
  PetscCall(NNSetBatchSize(net, cap));
  PetscCall(NNSetUp(net));
  if (load[0]) PetscCall(NNCheckpointLoad(net, load));
  PetscCall(NNSetTraining(net, eval ? PETSC_FALSE : PETSC_TRUE));
  if (dec[0]) PetscCall(WriteDecomposition(net, dec));

  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(n, &idx));
  for (PetscInt i = 0; i < n; i++) idx[i] = i;
  PetscCall(NNDataGetBatch(data, n, idx, x, t));
  for (PetscInt k = 0; k < passes; k++) PetscCall(NNSaveGradients(net, gout, n, x, t));
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

   testset:
      requires: torch
      timeoutfactor: 2
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_spatial.py ${PETNN_BINARY_DIR}/examples/nnrun ${exe} --nsize ${nsize} --mpiexec "${mpiexec}"
      test:
         suffix: torch_1
         nsize: 1
      test:
         suffix: torch_3
         nsize: 3
      test:
         suffix: torch_4
         nsize: 4

   # the comparison can fail: PetNN gets the inputs scaled by 1 + 1e-8 and every case must notice
   test:
      suffix: torch_perturbed
      requires: torch
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_spatial.py ${PETNN_BINARY_DIR}/examples/nnrun ${exe} --perturb 1e-8 --only "conv2d k3 s2 d2,maxpool3d k3,upsample x2 3-d,batchnorm2d (training,cnn training"

   # examples/fashion_cnn.opts on a few hundred samples for one epoch, on 1 rank and spatially
   # decomposed over 2 ranks (the full run is the tutorial's, tutorials/02-fashion-cnn.md); the
   # filter keeps the architecture (layer shapes, parameter counts) and the epoch lines
   testset:
      requires: fashion_mnist
      args: -train_data_max_samples 384 -test_data_max_samples 256 -nn_epochs 1 -nn_view
      filter: grep -E "^  [a-z0-9_]+: |^Epoch|^Final"
      test:
         suffix: fashion_cnn
         nsize: 1
         command: ${PETNN_BINARY_DIR}/examples/nnrun -options_file ${PETNN_SOURCE_DIR}/examples/fashion_cnn.opts ${args}
      test:
         suffix: fashion_cnn_2
         nsize: 2
         output_file: output/crosscheck_spatial_fashion_cnn.out
         command: ${mpiexec} -n 2 ${PETNN_BINARY_DIR}/examples/nnrun -options_file ${PETNN_SOURCE_DIR}/examples/fashion_cnn.opts ${args} -sp_da_processors_x 2 -sp_da_processors_y 1
      test:
         suffix: fashion_cnn_yaml
         requires: yaml
         output_file: output/crosscheck_spatial_fashion_cnn.out
         command: ${PETNN_BINARY_DIR}/examples/nnrun -options_file_yaml ${PETNN_SOURCE_DIR}/examples/fashion_cnn.yaml ${args} -options_left

TEST*/
