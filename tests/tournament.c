static char help[] = "Tournament training (LTFB): trainers train on their own parts of the data and every few steps\n"
                     "swap models in pairs, each keeping the better one on its tournament set. The outcome lines\n"
                     "printed by -nn_monitor are deterministic (the same with 1 or 2 data groups per trainer).\n";

#include <petnn.h>

#define NSAMPLES 96

static PetscErrorCode WriteData(const char file[])
{
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 17));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, 4, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    PetscInt cls = (i * 7) % 3;
    for (PetscInt j = 0; j < 4; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, 2 * u + (j == cls ? 0.8 : 0.0), INSERT_VALUES));
    }
    PetscCall(VecSetValue(y, i, (PetscScalar)cls, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(y));
  PetscCall(VecAssemblyEnd(y));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &v));
  PetscCall(MatView(X, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          net;
  NNData      data;
  NNLayer     l;
  NNOpt       opt;
  PetscMPIInt rank;
  PetscInt    K, D, S;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) PetscCall(WriteData("tournament.dat"));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNAddLayer(net, NNLAYERRELU, "act", NULL));
  PetscCall(NNAddLayer(net, NNLAYERDROPOUT, "drop", &l));
  PetscCall(NNLayerDropoutSetRate(l, 0.1));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){4}));
  PetscCall(NNSetBatchSize(net, 8));
  PetscCall(NNSetEpochs(net, 3));
  PetscCall(NNSetSeed(net, 2));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.05));
  PetscCall(NNSetTournament(net, 3, 8));
  PetscCall(NNSetFromOptions(net)); /* -nn_tournament_trainers, -nn_data_groups, -nn_monitor */
  PetscCall(NNGetProcessGrid(net, &K, &D, &S));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " trainers x %" PetscInt_FMT " data groups x %" PetscInt_FMT " spatial ranks\n", K, D, S));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, "tournament.dat"));
  PetscCall(NNTrain(net, data, NULL));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: 2
     nsize: 2
     args: -nn_tournament_trainers 2 -nn_monitor

   test:
     suffix: 4
     nsize: 4
     args: -nn_tournament_trainers 4 -nn_monitor

   test:
     suffix: 4_dp
     nsize: 4
     args: -nn_tournament_trainers 2 -nn_data_groups 2 -nn_monitor

   # by default the data groups of a trainer share one copy of the parameters, which the tournament
   # swaps; here each has its own
   test:
     suffix: 4_dp_whole
     nsize: 4
     args: -nn_tournament_trainers 2 -nn_data_groups 2 -nn_monitor -nn_shard_optimizer 0

   test:
     suffix: 4_dp_single
     nsize: 4
     args: -nn_tournament_trainers 2 -nn_data_groups 2 -nn_monitor -nn_precision single
     output_file: output/tournament_4_dp.out

TEST*/
