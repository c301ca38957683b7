static char help[] = "Faults on one rank stop every rank with the same clear error, and the last checkpoint survives.\n\n"
                     "  1. an IDX file truncated inside the last rank's part of the samples (the other ranks read\n"
                     "     their parts without trouble)\n"
                     "  2. a NaN in a training sample held by the last rank, met in the middle of an epoch after\n"
                     "     checkpoints were written; the last checkpoint must load\n"
                     "  3. a diverging loss (learning rate 1e300)\n";

#include <petnn.h>
#include <string.h>

#define NSAMPLES 43
#define BADSAMPLE 37 /* in the last rank's part on 2 or 3 ranks; batch 4 of 10 without shuffling */

/* an IDX image file with n 4x4 images of which only the first keep are complete, and its labels */
static PetscErrorCode WriteIDX(const char images[], const char labels[], PetscInt n, PetscInt keep)
{
  FILE         *f;
  unsigned char head[16] = {0, 0, 8, 3, 0, 0, 0, (unsigned char)n, 0, 0, 0, 4, 0, 0, 0, 4};
  unsigned char lhead[8] = {0, 0, 8, 1, 0, 0, 0, (unsigned char)n};

  PetscFunctionBegin;
  f = fopen(images, "wb");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s", images);
  fwrite(head, 1, 16, f);
  for (PetscInt i = 0; i < keep * 16; i++) fputc((int)(i % 251), f);
  fclose(f);
  f = fopen(labels, "wb");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s", labels);
  fwrite(lhead, 1, 8, f);
  for (PetscInt i = 0; i < n; i++) fputc((int)(i % 3), f);
  fclose(f);
  PetscFunctionReturn(0);
}

static PetscErrorCode WriteBinary(const char file[], PetscInt bad)
{
  Mat         X;
  Vec         y;
  PetscViewer v;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, NSAMPLES, 6, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NSAMPLES, &y));
  for (PetscInt i = 0; i < NSAMPLES; i++) {
    for (PetscInt j = 0; j < 6; j++) PetscCall(MatSetValue(X, i, j, i == bad && j == 2 ? NAN : PetscSinReal(i + 3.0 * j) + (j % 3 == i % 3), INSERT_VALUES));
    PetscCall(VecSetValue(y, i, (PetscScalar)(i % 3), INSERT_VALUES));
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
  PetscFunctionReturn(0);
}

/* ckpt: train with a checkpoint after every step to that file, unshuffled (-nn_checkpoint, -nn_shuffle) */
static PetscErrorCode CreateNet(MPI_Comm comm, PetscInt nin, PetscReal lr, const char ckpt[], NN *net)
{
  NNLayer     l;
  NNOpt       opt;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetProcessGrid(*net, 1, size));
  PetscCall(NNAddLayer(*net, NNLAYERFLATTEN, "flat", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, 8));
  PetscCall(NNAddLayer(*net, lr > 1e100 ? NNLAYERRELU : NNLAYERTANH, "act", NULL)); /* a huge step overflows through ReLU */
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(NNSetBatchSize(*net, 10));
  PetscCall(NNSetEpochs(*net, 3));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){nin}));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetType(opt, NNOPTSGD));
  PetscCall(NNOptSetLearningRate(opt, lr));
  if (ckpt) {
    PetscCall(PetscOptionsSetValue(NULL, "-ckpt_nn_checkpoint", ckpt));
    PetscCall(PetscOptionsSetValue(NULL, "-ckpt_nn_shuffle", "false")); /* the bad sample comes in the 4th batch */
    PetscCall(NNSetOptionsPrefix(*net, "ckpt_"));
    PetscCall(NNSetFromOptions(*net));
    PetscCall(PetscOptionsClearValue(NULL, "-ckpt_nn_checkpoint"));
    PetscCall(PetscOptionsClearValue(NULL, "-ckpt_nn_shuffle"));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* runs f, which must fail on every rank with the same message containing expect */
static PetscErrorCode ExpectSameError(const char name[], PetscErrorCode (*f)(void *), void *ctx, const char expect[])
{
  PetscErrorCode ierr;
  char          *msg = NULL, *found = NULL, mine[1024] = "", *all;
  PetscMPIInt    rank, size, same = 1;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = (*f)(ctx);
  PetscCall(PetscPopErrorHandler());
  if (ierr) PetscCall(NNErrorMessage(ierr, NULL, &msg));
  PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Case %s: rank %d got no error", name, rank);
  if (msg) PetscCall(PetscStrncpy(mine, msg, sizeof(mine)));
  PetscCall(PetscStrstr(mine, expect, &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Case %s: rank %d: the error message \"%s\" does not contain \"%s\"", name, rank, mine, expect);
  PetscCall(PetscMalloc1(sizeof(mine) * size, &all));
  PetscCallMPI(MPI_Allgather(mine, (PetscMPIInt)sizeof(mine), MPI_CHAR, all, (PetscMPIInt)sizeof(mine), MPI_CHAR, PETSC_COMM_WORLD));
  for (PetscMPIInt r = 0; r < size; r++) same = same && !strcmp(all + r * sizeof(mine), mine);
  PetscCall(PetscFree(all));
  PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Case %s: the ranks got different errors", name);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: every rank stopped with the same error:\n  %s\n", name, mine));
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadTruncatedIDX(void *ctx PETSC_UNUSED)
{
  NNData         d;
  PetscInt       n;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &d));
  PetscCall(NNDataSetOptionsPrefix(d, "trunc_"));
  PetscCall(PetscOptionsSetValue(NULL, "-trunc_data_images", "fault-images-idx3-ubyte"));
  PetscCall(PetscOptionsSetValue(NULL, "-trunc_data_labels", "fault-labels-idx1-ubyte"));
  PetscCall(NNDataSetFromOptions(d));
  ierr = NNDataGetNumSamples(d, &n);
  PetscCall(NNDataDestroy(&d)); /* also after the error */
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainOn(const char file[], PetscReal lr, const char ckpt[])
{
  NN             net;
  NNData         d;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_COMM_WORLD, 6, lr, ckpt, &net));
  PetscCall(NNSetCheckpointInterval(net, 1, 0)); /* a checkpoint after every step */
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &d));
  PetscCall(NNDataSetType(d, NNDATABINARY));
  PetscCall(NNDataSetFileName(d, file));
  ierr = NNTrain(net, d, NULL);
  PetscCall(NNDataDestroy(&d)); /* also after the error */
  if (ierr) { /* the failed step was not taken: the parameters in memory are the last checkpoint's */
    NN        last;
    Vec       t0, t1, diff;
    PetscReal dmax;
    PetscCall(CreateNet(PETSC_COMM_WORLD, 6, lr, NULL, &last));
    PetscCall(NNCheckpointLoad(last, ckpt));
    PetscCall(NNGetParameters(net, &t0));
    PetscCall(NNGetParameters(last, &t1));
    PetscCall(VecDuplicate(t0, &diff));
    PetscCall(VecWAXPY(diff, -1.0, t1, t0));
    PetscCall(VecNorm(diff, NORM_INFINITY, &dmax));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "parameters in memory after the error equal the last checkpoint's: %s\n", dmax == 0 ? "yes" : "no"));
    PetscCall(VecDestroy(&diff));
    PetscCall(NNDestroy(&last));
  }
  PetscCall(NNDestroy(&net));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainNaN(void *ctx PETSC_UNUSED)
{
  PetscFunctionBegin;
  PetscCall(TrainOn("fault_nan.dat", 0.1, "fault_nan.h5"));
  PetscFunctionReturn(0);
}

static PetscErrorCode TrainDiverge(void *ctx PETSC_UNUSED)
{
  PetscFunctionBegin;
  PetscCall(TrainOn("fault_clean.dat", 1e300, "fault_diverge.h5"));
  PetscFunctionReturn(0);
}

/* the checkpoint written before the fault loads, holds finite parameters and the step before the fault */
static PetscErrorCode CheckCheckpoint(const char file[], PetscInt expect_step)
{
  NN        net;
  Vec       theta;
  PetscReal norm;
  PetscInt  epoch, batch, step;

  PetscFunctionBegin;
  PetscCall(CreateNet(PETSC_COMM_WORLD, 6, 0.1, NULL, &net));
  PetscCall(NNCheckpointLoad(net, file));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(VecNorm(theta, NORM_2, &norm));
  PetscCheck(!PetscIsInfOrNanReal(norm) && norm > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Checkpoint %s holds parameters of norm %g", file, (double)norm);
  PetscCall(NNGetCursor(net, &epoch, &batch, &step));
  PetscCheck(step == expect_step, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Checkpoint %s holds step %" PetscInt_FMT ", expected %" PetscInt_FMT, file, step, expect_step);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "checkpoint %s loads: finite parameters after step %" PetscInt_FMT " (epoch %" PetscInt_FMT ", batch %" PetscInt_FMT ")\n", file, step, epoch + 1, batch));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) {
    PetscCall(WriteIDX("fault-images-idx3-ubyte", "fault-labels-idx1-ubyte", 20, 17)); /* samples 17-19 are missing */
    PetscCall(WriteBinary("fault_nan.dat", BADSAMPLE));
    PetscCall(WriteBinary("fault_clean.dat", -1));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(ExpectSameError("truncated IDX file in the last rank's part", ReadTruncatedIDX, NULL, "fault-images-idx3-ubyte is truncated"));
  PetscCall(ExpectSameError("NaN in a sample of the last rank's part", TrainNaN, NULL, "sample 37 of the training data"));
  PetscCall(CheckCheckpoint("fault_nan.h5", 3));
  PetscCall(ExpectSameError("diverging loss", TrainDiverge, NULL, "The last checkpoint fault_diverge.h5 is intact"));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: 2
     nsize: 2

   test:
     suffix: 3
     nsize: 3

TEST*/
