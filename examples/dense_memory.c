static char help[] = "Memory per rank of a large dense layer trained with Adam, replicated or partitioned over the ranks.\n\n"
                     "One dense layer of -n inputs and -n outputs (default 16384: 2 GiB of weights in double) learns\n"
                     "random targets from random inputs (batch -batch, MSE, Adam) for -steps steps. The program reports,\n"
                     "as the largest over the ranks, the memory PETSc allocated at its peak (PetscMallocGetMaximumUsage:\n"
                     "run with -malloc_debug) and the process's peak resident size, with the loss of the last step.\n\n"
                     "  -n <features> -batch <b> -steps <s>\n"
                     "  -fc_partition <replicate,rows,columns>   the layer's partition over the ranks\n\n";

#include <petnn.h>
#include <sys/resource.h>

int main(int argc, char **argv)
{
  PetscInt       n = 16384, nb = 8, steps = 3;
  NN             net;
  NNLayer        l;
  NNOpt          opt;
  Vec            x, t, theta, g;
  PetscReal      L = 0;
  PetscLogDouble mpeak = 0, rss = 0, m[2];
  PetscInt       np;
  PetscRandom    r;
  PetscMPIInt    size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Dense memory options", NULL);
  PetscCall(PetscOptionsInt("-n", "Input and output features of the layer", NULL, n, &n, NULL));
  PetscCall(PetscOptionsInt("-batch", "Samples per batch", NULL, nb, &nb, NULL));
  PetscCall(PetscOptionsInt("-steps", "Adam steps", NULL, steps, &steps, NULL));
  PetscOptionsEnd();

  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, &n));
  PetscCall(NNSetBatchSize(net, nb));
  PetscCall(NNSetLoss(net, "mse"));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, n));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNOptSetType(opt, "adam"));
  PetscCall(NNOptSetLearningRate(opt, 1e-4));
  PetscCall(NNSetFromOptions(net)); /* -fc_partition */
  PetscCall(NNSetUp(net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r)); /* the same default seed on every rank: replicated data */
  PetscCall(VecSetRandom(x, r));
  PetscCall(VecSetRandom(t, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(NNGetGradient(net, &g));
  for (PetscInt s = 0; s < steps; s++) {
    PetscCall(NNLossGradient(net, nb, x, t, &L, NULL));
    PetscCall(NNOptStep(opt, theta, g));
  }
  PetscCall(PetscMallocGetMaximumUsage(&mpeak));
  { /* the peak resident size (KiB on Linux) */
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    rss = 1024.0 * (PetscLogDouble)u.ru_maxrss;
  }
  m[0] = mpeak;
  m[1] = rss;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, m, 2, MPIU_PETSCLOGDOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(NNGetNumParameters(net, &np));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dense %" PetscInt_FMT " x %" PetscInt_FMT " (%" PetscInt_FMT " parameters), %d ranks: peak PetscMalloc %.4g GiB per rank, peak resident %.4g GiB per rank, loss after %" PetscInt_FMT " steps %.6g\n", n, n, np, size, m[0] / 1073741824.0, m[1] / 1073741824.0, steps, (double)L));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: small
      nsize: {{1 3}}
      args: -n 48 -fc_partition rows -malloc_debug
      filter: sed -e "s/[0-9] ranks/N ranks/"
      output_file: output/dense_memory_small.out

TEST*/
