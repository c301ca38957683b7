static char help[] = "Full-batch training of a small regression network with TAO.\n\n"
                     "A stand-in for a simulation writes snapshots (features as a dense Mat, one row per sample,\n"
                     "and targets as a Vec) to a PETSc binary file with MatView()/VecView(); the network is read\n"
                     "from the options database and trained with any TAO solver (-tao_type lmvm, bqnls, cg, ...).\n"
                     "Then NNPredict() evaluates it on new inputs, as a simulation would.\n\n"
                     "  -samples <n>   number of snapshots (default 256)\n"
                     "  -tolerance <r> required reduction of the training loss (default 1e-2)\n\n";

#include <petnn.h>

/* the function a simulation would tabulate: f(a,b) = sin(2a) cos(b) */
static PetscReal Target(PetscReal a, PetscReal b)
{
  return PetscSinReal(2 * a) * PetscCosReal(b);
}

/* radical inverse of i in the given base: a Halton sequence covers the square evenly */
static PetscReal Halton(PetscInt i, PetscInt base)
{
  PetscReal f = 1, r = 0;
  for (i = i + 1; i > 0; i /= base) {
    f /= base;
    r += f * (i % base);
  }
  return r;
}

/* writes n snapshots (a,b) -> f(a,b) at Halton points of [-1.5,1.5]^2 to a PETSc binary file */
static PetscErrorCode WriteSnapshots(const char file[], PetscInt n)
{
  Mat         X;
  Vec         T;
  PetscViewer viewer;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, n, 2, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &T));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal a = -1.5 + 3.0 * Halton(i, 2), b = -1.5 + 3.0 * Halton(i, 3);
    PetscCall(MatSetValue(X, i, 0, a, INSERT_VALUES));
    PetscCall(MatSetValue(X, i, 1, b, INSERT_VALUES));
    PetscCall(VecSetValue(T, i, Target(a, b), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(T));
  PetscCall(VecAssemblyEnd(T));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &viewer));
  PetscCall(MatView(X, viewer));
  PetscCall(VecView(T, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&T));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          net;
  NNData      data;
  Tao         tao;
  PetscInt    n = 256;
  PetscReal   loss0, loss1, tol = 1e-2;
  PetscMPIInt rank;
  Vec         xin, yout;
  TaoType     taotype;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-samples", &n, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tolerance", &tol, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) PetscCall(WriteSnapshots("snapshots.bin", n));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));

  /* the data set reads what the simulation wrote */
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, "snapshots.bin"));
  PetscCall(NNDataSetOptionsPrefix(data, "train_"));
  PetscCall(NNDataSetFromOptions(data));

  /* 2-32-32-1 tanh network, built with the C API; options may override every choice */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  {
    NNLayer l;
    PetscCall(NNSetInputShape(net, 1, (PetscInt[]){2}));
    PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc1", &l));
    PetscCall(NNLayerDenseSetUnits(l, 32));
    PetscCall(NNAddLayer(net, NNLAYERTANH, "act1", NULL));
    PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc2", &l));
    PetscCall(NNLayerDenseSetUnits(l, 32));
    PetscCall(NNAddLayer(net, NNLAYERTANH, "act2", NULL));
    PetscCall(NNAddLayer(net, NNLAYERDENSE, "out", &l));
    PetscCall(NNLayerDenseSetUnits(l, 1));
  }
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(net, 128));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNEvaluate(net, data, &loss0, NULL));

  PetscCall(NNCreateTao(net, &tao)); /* PETSC_COMM_SELF here: every rank holds all parameters */
  PetscCall(TaoSetType(tao, TAOLMVM));
  PetscCall(TaoSetMaximumIterations(tao, 500));
  PetscCall(TaoSetFromOptions(tao));
  PetscCall(NNTrainTao(net, data, tao));
  PetscCall(NNEvaluate(net, data, &loss1, NULL));
  PetscCall(TaoGetType(tao, &taotype));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "TAO %s: training loss reduced by a factor %s %g\n", taotype, loss1 < tol * loss0 ? "of at least" : "of less than", (double)(1 / tol)));
  PetscCall(PetscInfo(NULL, "Loss before %g after %g\n", (double)loss0, (double)loss1));
  PetscCheck(loss1 < tol * loss0, PETSC_COMM_WORLD, PETSC_ERR_NOT_CONVERGED, "TAO reduced the loss only from %g to %g", (double)loss0, (double)loss1);

  /* inference inside a "simulation": any number of inputs in one Vec */
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * 3, &xin));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 3, &yout));
  {
    PetscScalar       *x;
    const PetscScalar *y;
    PetscReal          err = 0;
    PetscCall(VecGetArrayWrite(xin, &x));
    for (PetscInt i = 0; i < 3; i++) {
      x[2 * i]     = 0.3 * i - 0.4;
      x[2 * i + 1] = 0.5 - 0.2 * i;
    }
    PetscCall(VecRestoreArrayWrite(xin, &x));
    PetscCall(NNPredict(net, xin, yout));
    PetscCall(VecGetArrayRead(xin, (const PetscScalar **)&x));
    PetscCall(VecGetArrayRead(yout, &y));
    for (PetscInt i = 0; i < 3; i++) err = PetscMax(err, PetscAbsReal(y[i] - Target(x[2 * i], x[2 * i + 1])));
    PetscCall(VecRestoreArrayRead(yout, &y));
    PetscCall(VecRestoreArrayRead(xin, (const PetscScalar **)&x));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNPredict on new inputs: max error %s 0.05\n", err < 0.05 ? "<" : ">="));
  }
  PetscCall(VecDestroy(&xin));
  PetscCall(VecDestroy(&yout));
  PetscCall(TaoDestroy(&tao));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: lmvm
     args: -tao_type lmvm

   test:
     suffix: cg
     args: -tao_type cg -tao_max_it 2000 -tolerance 5e-2

TEST*/
