static char help[] = "Data-parallel and hybrid (data x spatial) training follow the one-rank trajectory.\n\n"
                     "Every rank trains a serial copy of the network on PETSC_COMM_SELF (the reference), then\n"
                     "the same network on PETSC_COMM_WORLD split into data groups of -spatial ranks each, from a\n"
                     "distributed data set. After every step the parameters must be identical (bitwise) on all\n"
                     "ranks and the loss must match the reference within -tol relative error.\n"
                     "  -net mlp|cnn    dense network with dropout, or a small CNN (to_spatial, conv2d, maxpool)\n"
                     "  -spatial S      ranks per spatial group (data groups = ranks / S)\n"
                     "  -steps n        optimizer steps (default 20)\n";

#include <petnn.h>
#include <string.h>

#define NSAMPLES 43 /* batches of 10: 10,10,10,10,3 (the last one smaller than 4 data groups) */
#define NCLASSES 3

typedef struct {
  PetscInt   nsteps;
  PetscReal *loss;      /* reference losses */
  PetscReal  maxrel;    /* largest relative loss difference seen */
  PetscBool  identical; /* parameters identical on all ranks after every step */
  PetscBool  check;     /* compare with the reference */
} Ctx;

static PetscErrorCode WriteData(const char file[], PetscBool cnn)
{
  PetscInt    F = cnn ? 64 : 6;
  Mat         X;
  Vec         y;
  PetscViewer v;
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 11));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, F, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    PetscInt cls = i % NCLASSES;
    for (PetscInt j = 0; j < F; j++) {
      PetscReal u;
      PetscCall(PetscRandomGetValueReal(r, &u));
      PetscCall(MatSetValue(X, i, j, u + (j % NCLASSES == cls ? 0.5 : 0.0), INSERT_VALUES));
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

static PetscErrorCode CreateNet(MPI_Comm comm, PetscBool cnn, PetscInt spatial, NN *net)
{
  NNLayer     l;
  NNOpt       opt;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNCreate(comm, net));
  if (comm != PETSC_COMM_SELF && !cnn) PetscCall(NNSetProcessGrid(*net, 1, size / spatial));
  if (cnn) {
    PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "conv", &l));
    PetscCall(NNLayerConvSetFilters(l, 4));
    PetscCall(NNLayerConvSetKernelSize(l, 3));
    PetscCall(NNLayerConvSetPadding(l, 1));
    PetscCall(NNAddLayer(*net, NNLAYERRELU, "act1", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "pool", &l));
    PetscCall(NNLayerPoolSetKernelSize(l, 2));
    PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "flat", NULL));
    PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){1, 8, 8}));
  } else {
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
    PetscCall(NNLayerDenseSetUnits(l, 16));
    PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){6}));
  }
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "act2", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDROPOUT, "drop", &l));
  PetscCall(NNLayerDropoutSetRate(l, 0.25));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, NCLASSES));
  if (comm != PETSC_COMM_SELF && cnn) PetscCall(NNSetProcessGrid(*net, 1, size / spatial)); /* moves the layers to their spatial groups */
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNSetBatchSize(*net, 10));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.01));
  if (comm != PETSC_COMM_SELF) PetscCall(NNSetFromOptions(*net)); /* -nn_bucket_size, ... */
  PetscFunctionReturn(0);
}

/* after every step: the reference's losses are recorded; the parallel run compares and checks
   that the parameters are the same on every rank */
static PetscErrorCode StepMonitor(NN net, PetscInt epoch PETSC_UNUSED, PetscInt step, PetscReal loss, void *vctx)
{
  Ctx               *c = (Ctx *)vctx;
  MPI_Comm           comm = PetscObjectComm((PetscObject)net);
  Vec                theta;
  PetscInt           n;
  const PetscScalar *a;
  PetscScalar       *mx, *mn;

  PetscFunctionBegin;
  if (step > c->nsteps) PetscFunctionReturn(0);
  if (!c->check) {
    c->loss[step - 1] = loss;
    PetscFunctionReturn(0);
  }
  c->maxrel = PetscMax(c->maxrel, PetscAbsReal(loss - c->loss[step - 1]) / PetscAbsReal(c->loss[step - 1]));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(VecGetLocalSize(theta, &n));
  PetscCall(PetscMalloc2(n, &mx, n, &mn));
  PetscCall(VecGetArrayRead(theta, &a));
  PetscCallMPI(MPI_Allreduce(a, mx, (PetscMPIInt)n, MPIU_SCALAR, MPIU_MAX, comm));
  PetscCallMPI(MPI_Allreduce(a, mn, (PetscMPIInt)n, MPIU_SCALAR, MPIU_MIN, comm));
  if (memcmp(mx, a, n * sizeof(PetscScalar)) || memcmp(mn, a, n * sizeof(PetscScalar))) c->identical = PETSC_FALSE;
  PetscCall(VecRestoreArrayRead(theta, &a));
  PetscCall(PetscFree2(mx, mn));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN          ref, net;
  NNData      dref, data;
  Ctx         ctx;
  char        netname[8] = "mlp", file[] = "dp_data.dat";
  PetscInt    spatial = 1, K, D, S, nsteps = 20, np;
  PetscReal   tol = 1e-10, err = 0;
  PetscBool   cnn;
  PetscMPIInt rank, size;
  Vec         t0, t1;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Data-parallel test options", NULL);
  PetscCall(PetscOptionsString("-net", "mlp or cnn", NULL, netname, netname, sizeof(netname), NULL));
  PetscCall(PetscOptionsInt("-spatial", "Ranks per spatial group", NULL, spatial, &spatial, NULL));
  PetscCall(PetscOptionsInt("-steps", "Optimizer steps", NULL, nsteps, &nsteps, NULL));
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance against one rank", NULL, tol, &tol, NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrcmp(netname, "cnn", &cnn));
  PetscCheck(size % spatial == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "-spatial %" PetscInt_FMT " must divide the %d ranks", spatial, size);
  if (!rank) PetscCall(WriteData(file, cnn));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));

  /* the reference: one rank, the whole data set */
  PetscCall(PetscMemzero(&ctx, sizeof(ctx)));
  ctx.nsteps    = nsteps;
  ctx.identical = PETSC_TRUE;
  PetscCall(PetscCalloc1(nsteps, &ctx.loss));
  PetscCall(CreateNet(PETSC_COMM_SELF, cnn, 1, &ref));
  PetscCall(NNSetEpochs(ref, (nsteps + 4) / 5));
  PetscCall(NNTrainMonitorSet(ref, StepMonitor, &ctx, NULL));
  PetscCall(NNDataCreate(PETSC_COMM_SELF, &dref));
  PetscCall(NNDataSetType(dref, NNDATABINARY));
  PetscCall(NNDataSetFileName(dref, file));
  if (cnn) PetscCall(PetscOptionsSetValue(NULL, "-dref_data_shape", "1,8,8"));
  PetscCall(NNDataSetOptionsPrefix(dref, "dref_"));
  PetscCall(NNDataSetFromOptions(dref));
  PetscCall(NNTrain(ref, dref, NULL));

  /* data parallel (and spatial) on all ranks, every rank holding only its part of the data */
  PetscCall(CreateNet(PETSC_COMM_WORLD, cnn, spatial, &net));
  PetscCall(NNSetEpochs(net, (nsteps + 4) / 5));
  ctx.check = PETSC_TRUE;
  PetscCall(NNTrainMonitorSet(net, StepMonitor, &ctx, NULL));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, file));
  if (cnn) PetscCall(PetscOptionsSetValue(NULL, "-data_data_shape", "1,8,8"));
  PetscCall(NNDataSetOptionsPrefix(data, "data_"));
  PetscCall(NNDataSetFromOptions(data));
  PetscCall(NNTrain(net, data, NULL));
  PetscCall(NNGetProcessGrid(net, &K, &D, &S));
  {
    NNAllreduceType type;
    PetscBool       shared;
    PetscCall(NNGetAllreduceType(net, &type, &shared));
    PetscCheck(shared == (PetscBool)(D > 1 && type != NN_ALLREDUCE_MPI), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "The %s all-reduce with %" PetscInt_FMT " data groups on one node %s shared memory", NNAllreduceTypes[type], D, shared ? "used" : "did not use");
  }

  /* final parameters against the reference */
  PetscCall(NNGetParameters(ref, &t0));
  PetscCall(NNGetParameters(net, &t1));
  PetscCall(VecGetSize(t0, &np));
  {
    const PetscScalar *a, *b;
    PetscReal          num = 0, den = 0;
    PetscCall(VecGetArrayRead(t0, &a));
    PetscCall(VecGetArrayRead(t1, &b));
    for (PetscInt i = 0; i < np; i++) {
      num = PetscMax(num, PetscAbsScalar(a[i] - b[i]));
      den = PetscMax(den, PetscAbsScalar(a[i]));
    }
    err = num / den;
    PetscCall(VecRestoreArrayRead(t1, &b));
    PetscCall(VecRestoreArrayRead(t0, &a));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ctx.maxrel, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCheck(K == 1 && D * S == size && S == spatial, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Wrong process grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, K, D, S);
  PetscCall(PetscInfo(NULL, "%" PetscInt_FMT " data group(s) x %" PetscInt_FMT " spatial rank(s)\n", D, S));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, data groups x spatial ranks as requested, global batch 10, %" PetscInt_FMT " steps\n", cnn ? "CNN" : "MLP", nsteps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "parameters identical on all ranks after every step: %s\n", ctx.identical ? "yes" : "NO"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "losses within %g of one rank at every step: %s\n", (double)tol, ctx.maxrel <= tol ? "yes" : "NO"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "final parameters within %g of one rank: %s\n", (double)tol, err <= tol ? "yes" : "NO"));
  PetscCall(PetscInfo(NULL, "max relative loss difference %g, parameter difference %g\n", (double)ctx.maxrel, (double)err));
  PetscCheck(ctx.identical && ctx.maxrel <= tol && err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Data-parallel run differs: loss %g, parameters %g", (double)ctx.maxrel, (double)err);

  PetscCall(PetscFree(ctx.loss));
  PetscCall(NNDataDestroy(&dref));
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&ref));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: mlp
     nsize: {{1 2 3 4}}
     args: -net mlp -nn_bucket_size 0.0003 -nn_allreduce {{mpi shared}}
     output_file: output/dp_mlp.out

   test:
     suffix: mlp_buckets
     nsize: 3
     args: -net mlp -nn_allreduce mpi -nn_bucket_size {{0 25}} -nn_shard_optimizer {{0 1}}
     output_file: output/dp_mlp.out

   # shards in proportion to the measured speeds (they vary from step to step)
   test:
     suffix: mlp_balance
     nsize: {{2 3}}
     args: -net mlp -nn_load_balance -nn_load_balance_max_share 2 -nn_allreduce {{mpi shared}}
     output_file: output/dp_mlp.out

   # one copy of the parameters shared by the groups; the gradient check perturbs a private copy
   test:
     suffix: mlp_shared_shard
     nsize: {{2 3}}
     args: -net mlp -nn_allreduce shared -nn_shard_optimizer
     output_file: output/dp_mlp.out

   test:
     suffix: mlp_shared_shard_gradcheck
     nsize: 2
     args: -net mlp -nn_allreduce shared -nn_shard_optimizer -nn_gradient_check

   # single precision, the mpi all-reduce summing in float or in double
   test:
     suffix: mlp_single
     nsize: {{2 3}}
     args: -net mlp -nn_precision single -nn_allreduce mpi -nn_allreduce_single {{0 1}} -tol 1e-5
     output_file: output/dp_mlp.out

   # hybrid layouts: data groups x spatial ranks = 1x1, 2x1, 1x2, 4x1, 2x2, 1x4
   test:
     suffix: cnn_1
     args: -net cnn -spatial 1
     output_file: output/dp_cnn.out

   test:
     suffix: cnn_2
     nsize: 2
     args: -net cnn -spatial {{1 2}} -nn_bucket_size 0 -nn_allreduce {{mpi auto}}
     output_file: output/dp_cnn.out

   test:
     suffix: cnn_4
     nsize: 4
     args: -net cnn -spatial {{1 2 4}} -nn_bucket_size 0
     output_file: output/dp_cnn.out

TEST*/
