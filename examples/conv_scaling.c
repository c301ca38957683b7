static char help[] = "Spatial scaling of a convolutional network on one large sample split over ranks by a DMDA.\n\n"
                     "A 2-d input of -M x -M pixels with -channels channels (default 1024 x 1024 x 8) and batch\n"
                     "-batch (default 4) goes through -layers (default 4) conv2d 3x3 layers with ReLU between them\n"
                     "and an MSE loss on the spatial output. The program times forward+backward (NNLossGradient)\n"
                     "and reports, per rank, the memory the network allocated at set-up (activations, their\n"
                     "gradients, halo buffers; measured with PetscMallocGetCurrentUsage, so run with\n"
                     "-malloc_debug) and the local activation entries.\n\n"
                     "  -M <n> -channels <c> -batch <b> -layers <k> -repeat <r>\n"
                     "  -da_processors_x/-da_processors_y   the rank grid\n"
                     "  -nn_layers ...  other layers instead of the convolutions (output -channels channels), e.g.\n"
                     "                  -options_file examples/fno_scaling.opts: Fourier layers (spectral_conv2d)\n\n";

#include <petnn.h>
#include <petscdmda.h>

/* values that depend on the global pixel, sample and channel only, so every decomposition sees the same data */
static PetscErrorCode FillDeterministic(Vec v, PetscInt dof, PetscReal phase)
{
  DM           da;
  PetscInt     xs, ys, xm, ym;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetDM(v, &da));
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt j = 0; j < ym; j++)
    for (PetscInt i = 0; i < xm; i++)
      for (PetscInt d = 0; d < dof; d++) a[(j * xm + i) * dof + d] = PetscSinReal(0.013 * (i + xs) + 0.029 * (j + ys) + 0.7 * d + phase);
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt       M = 1024, C = 8, nb = 4, nl = 4, repeat = 3;
  DM             da;
  NN             net;
  Vec            x, t;
  PetscLogDouble m0, m1, mpeak, mem[2], memmax[2], t0, t1 = 0, tmin = 1e30;
  PetscReal      L;
  PetscMPIInt    size;
  MPI_Comm       comm;
  char           name[16];
  PetscBool      custom;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscOptionsBegin(comm, NULL, "Spatial scaling options", NULL);
  PetscCall(PetscOptionsInt("-M", "Pixels per direction", NULL, M, &M, NULL));
  PetscCall(PetscOptionsInt("-channels", "Channels of every layer", NULL, C, &C, NULL));
  PetscCall(PetscOptionsInt("-batch", "Samples per batch", NULL, nb, &nb, NULL));
  PetscCall(PetscOptionsInt("-layers", "Convolution layers", NULL, nl, &nl, NULL));
  PetscCall(PetscOptionsInt("-repeat", "Timed forward+backward passes (the fastest is reported)", NULL, repeat, &repeat, NULL));
  PetscOptionsEnd();

  PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M, M, PETSC_DECIDE, PETSC_DECIDE, C, 1, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(PetscMallocGetCurrentUsage(&m0));
  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetInputDM(net, da));
  PetscCall(NNSetBatchSize(net, nb));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-nn_layers", &custom));
  for (PetscInt i = 0; i < (custom ? 0 : nl); i++) {
    NNLayer l;
    PetscCall(PetscSNPrintf(name, sizeof(name), "conv%" PetscInt_FMT, i + 1));
    PetscCall(NNAddLayer(net, NNLAYERCONV2D, name, &l));
    PetscCall(NNLayerConvSetFilters(l, C));
    if (i < nl - 1) {
      PetscCall(PetscSNPrintf(name, sizeof(name), "relu%" PetscInt_FMT, i + 1));
      PetscCall(NNAddLayer(net, NNLAYERRELU, name, NULL));
    }
  }
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNCreateInputVec(net, &x)); /* input and output share the layout: C channels, same decomposition */
  PetscCall(VecDuplicate(x, &t));
  PetscCall(FillDeterministic(x, nb * C, 0.0));
  PetscCall(FillDeterministic(t, nb * C, 1.0));
  PetscCall(NNLossGradient(net, nb, x, t, &L, NULL)); /* warm-up: workspaces allocated on first use */
  PetscCall(PetscMallocGetCurrentUsage(&m1));
  for (PetscInt k = 0; k < repeat; k++) {
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t0));
    PetscCall(NNLossGradient(net, nb, x, t, &L, NULL));
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t1));
    tmin = PetscMin(tmin, t1 - t0);
  }
  PetscCall(PetscMallocGetMaximumUsage(&mpeak));
  mem[0] = m1 - m0;    /* held between passes */
  mem[1] = mpeak - m0; /* the peak, transient buffers included */
  PetscCallMPI(MPI_Allreduce(mem, memmax, 2, MPI_DOUBLE, MPI_MAX, comm));
  if (custom) PetscCall(NNGetLayers(net, &nl, NULL));
  PetscCall(PetscPrintf(comm, "%d ranks: %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " channels, batch %" PetscInt_FMT ", %" PetscInt_FMT " %s layers: forward+backward %.3f s (fastest of %" PetscInt_FMT "), loss %.6e\n", size, M, M, C, nb, nl, custom ? "network" : "conv", repeat > 0 ? tmin : 0.0, repeat, (double)L));
  if (memmax[0] > 0) PetscCall(PetscPrintf(comm, "network memory per rank (max over ranks): %.1f MB held, %.1f MB peak\n", memmax[0] / 1048576.0, memmax[1] / 1048576.0));
  else PetscCall(PetscPrintf(comm, "network memory per rank: run with -malloc_debug to measure it\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
