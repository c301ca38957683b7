static char help[] = "Checkpoints: save/load round trip, bitwise resume, atomic writes, mismatch errors.\n\n"
                     "  -bn   use a batchnorm1d layer instead of the test's own buffer layer\n\n";

/*
   The network is dense - stats - relu - dropout - dense, where "stats" is a layer type defined
   here with buffers like batch norm's ("running_mean" [C] and the int64 scalar
   "num_batches_tracked"), so buffers are checked whatever other layer types exist. Dropout draws
   from the network's generator, so resuming bitwise needs the generator state too.
*/
#include <petnn/private/nnimpl.h> /* only for the "stats" layer type defined below (ops, tensors); the network is used through petnn.h */
#include "nntest.h"
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- a layer with buffers */
static PetscErrorCode StatsSetUp(NNLayer l)
{
  NNTensor *t;

  PetscFunctionBegin;
  PetscCheck(l->inshape.ndim == 1, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "stats layer takes flat features");
  l->outshape = l->inshape;
  /* NNLayerAddTensor() is internal to the library: declare the two buffers by hand */
  t = &l->tensors[l->ntensors++];
  PetscCall(PetscMemzero(t, sizeof(*t)));
  PetscCall(PetscStrncpy(t->name, "running_mean", sizeof(t->name)));
  t->kind   = NN_TENSOR_BUFFER;
  t->ndim   = 1;
  t->dim[0] = l->inshape.dim[0];
  t->size   = t->dim[0];
  t->offset = l->nbuf;
  l->nbuf += t->size;
  t = &l->tensors[l->ntensors++];
  PetscCall(PetscMemzero(t, sizeof(*t)));
  PetscCall(PetscStrncpy(t->name, "num_batches_tracked", sizeof(t->name)));
  t->kind   = NN_TENSOR_BUFFER;
  t->ndim   = 0;
  t->size   = 1;
  t->offset = l->nbuf;
  l->nbuf += t->size;
  PetscFunctionReturn(0);
}

static PetscErrorCode StatsForward(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  PetscInt c = l->inshape.dim[0];

  PetscFunctionBegin;
  PetscCall(PetscArraycpy(y, x, n * c));
  if (l->training) {
    for (PetscInt j = 0; j < c; j++) {
      PetscScalar m = 0;
      for (PetscInt i = 0; i < n; i++) m += x[i * c + j];
      l->buf[j] = 0.9 * l->buf[j] + 0.1 * m / n;
    }
    l->buf[c] += 1;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode StatsBackward(NNLayer l, PetscInt n, const PetscScalar *x PETSC_UNUSED, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  PetscFunctionBegin;
  if (dx) PetscCall(PetscArraycpy(dx, dy, n * l->inshape.dim[0]));
  PetscFunctionReturn(0);
}

static PetscErrorCode StatsInitialize(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(l->buf, l->nbuf));
  PetscFunctionReturn(0);
}

static PetscErrorCode StatsCreate(NNLayer l)
{
  PetscFunctionBegin;
  l->ops->setup      = StatsSetUp;
  l->ops->forward    = StatsForward;
  l->ops->backward   = StatsBackward;
  l->ops->initialize = StatsInitialize;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- helpers */
#define NSAMPLES  40
#define NFEATURES 5
#define NCLASSES  3

static PetscErrorCode CreateData(const char file[], NNData *d)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, d));
  PetscCall(NNDataSetType(*d, NNDATABINARY));
  PetscCall(NNDataSetFileName(*d, file));
  PetscFunctionReturn(0);
}

/* dense(hidden) - stats or batchnorm1d - relu - dropout - dense(3), Adam with a step schedule */
/* ckpt: NNTrain() writes that checkpoint (-nn_checkpoint) */
static PetscErrorCode CreateNet(PetscInt hidden, PetscInt seed, PetscInt epochs, PetscBool bn, PetscBool extra, const char ckpt[], NN *net)
{
  NNLayer l;
  NNOpt   opt;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
  PetscCall(NNLayerDenseSetUnits(l, hidden));
  PetscCall(NNAddLayer(*net, bn ? NNLAYERBATCHNORM1D : "stats", "bn1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERRELU, "act", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDROPOUT, "drop", &l));
  PetscCall(NNLayerDropoutSetRate(l, 0.25));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
  PetscCall(NNLayerDenseSetUnits(l, NCLASSES));
  if (extra) {
    PetscCall(NNAddLayer(*net, NNLAYERTANH, "act2", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc3", &l));
    PetscCall(NNLayerDenseSetUnits(l, NCLASSES));
  }
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNSetBatchSize(*net, 8));
  PetscCall(NNSetEpochs(*net, epochs));
  PetscCall(NNSetSeed(*net, seed));
  PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){NFEATURES}));
  PetscCall(NNGetOpt(*net, &opt));
  PetscCall(NNOptSetLearningRate(opt, 0.05));
  PetscCall(NNOptSetSchedule(opt, NNOPTSCHEDULESTEP, 1, 0.5));
  if (ckpt) {
    PetscCall(PetscOptionsSetValue(NULL, "-ckpt_nn_checkpoint", ckpt));
    PetscCall(NNSetOptionsPrefix(*net, "ckpt_"));
    PetscCall(NNSetFromOptions(*net));
    PetscCall(PetscOptionsClearValue(NULL, "-ckpt_nn_checkpoint"));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckVecEqual(Vec a, Vec b, const char what[])
{
  PetscBool eq;

  PetscFunctionBegin;
  PetscCall(VecEqual(a, b, &eq));
  PetscCheck(eq, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s differ", what);
  PetscFunctionReturn(0);
}

/* parameters, buffers, optimizer state, generator and counters: all bitwise equal */
static PetscErrorCode CheckSameState(NN a, NN b, const char what[])
{
  NNOpt       oa, ob;
  Vec         va, vb;
  PetscInt    na, nb, ea, eb, sa, sb;
  PetscInt64  ra[NN_RANDOM_STATE_SIZE], rb[NN_RANDOM_STATE_SIZE];
  const char *name;

  PetscFunctionBegin;
  PetscCall(NNGetParameters(a, &va));
  PetscCall(NNGetParameters(b, &vb));
  PetscCall(CheckVecEqual(va, vb, "parameters"));
  PetscCall(NNGetBuffers(a, &va));
  PetscCall(NNGetBuffers(b, &vb));
  PetscCall(CheckVecEqual(va, vb, "buffers"));
  PetscCall(NNGetOpt(a, &oa));
  PetscCall(NNGetOpt(b, &ob));
  PetscCall(NNOptGetNumStates(oa, &na));
  PetscCall(NNOptGetNumStates(ob, &nb));
  PetscCheck(na == nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: optimizer state counts differ", what);
  for (PetscInt i = 0; i < na; i++) {
    PetscCall(NNOptGetState(oa, i, &name, &va));
    PetscCall(NNOptGetState(ob, i, NULL, &vb));
    PetscCall(CheckVecEqual(va, vb, name));
  }
  PetscCall(NNOptGetNumSteps(oa, &na));
  PetscCall(NNOptGetNumSteps(ob, &nb));
  PetscCheck(na == nb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: optimizer steps %" PetscInt_FMT " vs %" PetscInt_FMT, what, na, nb);
  PetscCall(NNGetRandomState(a, ra));
  PetscCall(NNGetRandomState(b, rb));
  PetscCheck(!memcmp(ra, rb, sizeof(ra)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: generator states differ", what);
  PetscCall(NNGetCursor(a, &ea, NULL, &sa));
  PetscCall(NNGetCursor(b, &eb, NULL, &sb));
  PetscCheck(ea == eb && sa == sb, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: counters differ", what);
  PetscFunctionReturn(0);
}

/* reports an error that was expected (caught with PetscReturnErrorHandler) */
static PetscErrorCode Caught(PetscErrorCode ierr, const char what[], PetscBool show)
{
  const char *text;
  char       *msg;

  PetscFunctionBegin;
  PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Expected an error: %s", what);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (show) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "caught: %s: %s\n", what, msg));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "caught: %s\n", what));
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadFile(const char file[], size_t *len, char **bytes)
{
  FILE *f = fopen(file, "rb");

  PetscFunctionBegin;
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", file);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  PetscCall(PetscMalloc1(*len, bytes));
  PetscCheck(fread(*bytes, 1, *len, f) == *len, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read %s", file);
  fclose(f);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN             a, b, c;
  NNData         data;
  PetscBool      bn = PETSC_FALSE, exists;
  PetscErrorCode ierr;
  PetscMPIInt    rank;
  const char    *ck = "ckpt_test.h5", *datafile = "ckpt_train.dat";
  char           tmp[PETSC_MAX_PATH_LEN], *before = NULL, *after = NULL;
  size_t         len0 = 0, len1 = 0;
  Vec            theta0, theta;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-bn", &bn, NULL));
  PetscCall(NNLayerRegister("stats", StatsCreate));
  if (rank == 0) PetscCall(NNTestWriteClassificationData(datafile, NSAMPLES, NFEATURES, NCLASSES, 7));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(CreateData(datafile, &data));

  /* (a) round trip: one trained epoch saved, loaded into a differently seeded network */
  PetscCall(CreateNet(16, 1, 1, bn, PETSC_FALSE, NULL, &a));
  PetscCall(NNTrain(a, data, NULL));
  PetscCall(NNCheckpointSave(a, ck));
  PetscCall(CreateNet(16, 2, 1, bn, PETSC_FALSE, NULL, &b));
  PetscCall(NNCheckpointLoad(b, ck));
  PetscCall(CheckSameState(a, b, "round trip"));
  {
    PetscReal nbt;
    PetscInt  nb;
    Vec       buf;
    PetscCall(NNGetBuffers(a, &buf));
    PetscCall(VecGetSize(buf, &nb));
    PetscCall(VecGetValues(buf, 1, (PetscInt[]){nb - 1}, &nbt));
    PetscCheck(nbt == 5, PETSC_COMM_SELF, PETSC_ERR_PLIB, "num_batches_tracked is %g, expected 5", (double)nbt);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "round trip: parameters, buffers, optimizer state, generator and counters identical\n"));
  PetscCall(NNDestroy(&b));

  /* (b) resume: 3 epochs in one go vs 1 epoch, checkpoint (by NNTrain), new network, load, 2 more */
  PetscCall(CreateNet(16, 3, 3, bn, PETSC_FALSE, NULL, &b));
  PetscCall(NNTrain(b, data, NULL));
  PetscCall(CreateNet(16, 3, 1, bn, PETSC_FALSE, ck, &c));
  PetscCall(NNTrain(c, data, NULL));
  PetscCall(NNDestroy(&c));
  PetscCall(CreateNet(16, 99, 3, bn, PETSC_FALSE, NULL, &c)); /* another seed: everything must come from the file */
  PetscCall(NNCheckpointLoad(c, ck));
  {
    PetscInt epoch, step;
    PetscCall(NNGetCursor(c, &epoch, NULL, &step));
    PetscCheck(epoch == 1 && step == 5, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Loaded counters: epoch %" PetscInt_FMT ", step %" PetscInt_FMT, epoch, step);
  }
  PetscCall(NNTrain(c, data, NULL));
  PetscCall(CheckSameState(b, c, "resume"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "resume: bitwise identical\n"));
  PetscCall(NNDestroy(&c));

  /* (c) atomic writes: failures leave the existing checkpoint as it was and no temporary file */
  PetscCall(NNCheckpointSave(a, ck));
  if (rank == 0) PetscCall(ReadFile(ck, &len0, &before));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointSave(b, "no_such_directory/ckpt_test.h5");
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "save into a missing directory", PETSC_TRUE));
  /* a directory in the way makes the final rename() fail after the whole file was written */
  if (rank == 0) PetscCheck(mkdir("ckpt_dir.h5", 0755) == 0 || errno == EEXIST, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "mkdir failed");
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointSave(b, "ckpt_dir.h5");
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "rename over a directory", PETSC_FALSE));
  if (rank == 0) {
    PetscCall(PetscSNPrintf(tmp, sizeof(tmp), "ckpt_dir.h5.tmp.%d", (int)getpid()));
    PetscCall(PetscTestFile(tmp, 'r', &exists));
    PetscCheck(!exists, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Temporary file %s was left behind", tmp);
    PetscCheck(rmdir("ckpt_dir.h5") == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "rmdir failed");
    PetscCall(ReadFile(ck, &len1, &after));
    PetscCheck(len0 == len1 && !memcmp(before, after, len0), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The existing checkpoint changed");
    PetscCall(PetscFree(before));
    PetscCall(PetscFree(after));
  }
  PetscCall(CreateNet(16, 5, 1, bn, PETSC_FALSE, NULL, &c));
  PetscCall(NNCheckpointLoad(c, ck));
  PetscCall(CheckSameState(a, c, "after failed saves"));
  PetscCall(NNDestroy(&c));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "atomic: existing checkpoint intact, no temporary file left\n"));

  /* (d) loading into a network of another shape; missing, foreign and truncated files */
  PetscCall(CreateNet(12, 1, 1, bn, PETSC_FALSE, NULL, &c));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointLoad(c, ck);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "mismatch", PETSC_TRUE));
  PetscCall(NNDestroy(&c));

  PetscCall(CreateNet(16, 1, 1, bn, PETSC_TRUE, NULL, &c));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointLoad(c, ck);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "missing tensor", PETSC_TRUE));

  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointLoad(c, "no_such_checkpoint.h5");
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "missing file", PETSC_TRUE));

  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointLoad(c, datafile);
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "not HDF5", PETSC_TRUE));

  if (rank == 0) { /* the first half of a real checkpoint */
    FILE *f;
    PetscCall(ReadFile(ck, &len0, &before));
    f = fopen("ckpt_truncated.h5", "wb");
    PetscCheck(f && fwrite(before, 1, len0 / 2, f) == len0 / 2, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write ckpt_truncated.h5");
    fclose(f);
    PetscCall(PetscFree(before));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(NNGetParameters(c, &theta));
  PetscCall(VecDuplicate(theta, &theta0));
  PetscCall(VecCopy(theta, theta0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNCheckpointLoad(c, "ckpt_truncated.h5");
  PetscCall(PetscPopErrorHandler());
  PetscCall(Caught(ierr, "truncated file", PETSC_FALSE));
  PetscCall(CheckVecEqual(theta, theta0, "parameters after a failed load")); /* a failed load changes nothing */
  PetscCall(VecDestroy(&theta0));
  PetscCall(NNDestroy(&c));

  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscCall(NNDataDestroy(&data));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (rank == 0) {
    (void)unlink(ck);
    (void)unlink(datafile);
    (void)unlink("ckpt_train.dat.info");
    (void)unlink("ckpt_truncated.h5");
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      output_file: output/checkpoint.out

   test:
      suffix: 2
      nsize: 2
      output_file: output/checkpoint.out

   test:
      suffix: bn
      args: -bn
      output_file: output/checkpoint.out

TEST*/
