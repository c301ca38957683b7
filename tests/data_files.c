static char help[] = "Data sets from PETSc binary (MatView/VecView) and HDF5 files: values, shapes and errors.\n\n";

#include <petnn.h>
#include <unistd.h>

#define N 12 /* samples */
#define D 6  /* features per sample */
#define K 2  /* regression targets per sample */

/* the value of feature j of sample i, and of target k; exactly representable */
static PetscScalar Xval(PetscInt i, PetscInt j) { return i + 0.125 * j; }
static PetscScalar Yval(PetscInt i, PetscInt k) { return -i - 0.5 * k; }

/* N x D features as a dense or AIJ Mat */
static PetscErrorCode MakeMat(PetscBool aij, PetscInt rows, PetscInt cols, PetscBool targets, Mat *A)
{
  PetscFunctionBegin;
  if (aij) PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, rows, cols, cols, NULL, A));
  else PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, rows, cols, NULL, A));
  for (PetscInt i = 0; i < rows; i++)
    for (PetscInt j = 0; j < cols; j++) {
      PetscScalar v = targets ? Yval(i, j) : Xval(i, j);
      if (v != 0) PetscCall(MatSetValue(*A, i, j, v, INSERT_VALUES)); /* AIJ: zeros are not stored */
    }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* samples one after the other (features) or labels / targets, as a Vec of block size bs */
static PetscErrorCode MakeVec(const char name[], PetscInt n, PetscInt bs, PetscBool targets, PetscBool labels, Vec *v)
{
  PetscFunctionBegin;
  PetscCall(VecCreate(PETSC_COMM_SELF, v));
  PetscCall(VecSetSizes(*v, n * bs, n * bs));
  PetscCall(VecSetBlockSize(*v, bs));
  PetscCall(VecSetType(*v, VECSEQ));
  PetscCall(PetscObjectSetName((PetscObject)*v, name));
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt j = 0; j < bs; j++) PetscCall(VecSetValue(*v, i * bs + j, labels ? (PetscScalar)(i % 3) : (targets ? Yval(i, j) : Xval(i, j)), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(*v));
  PetscCall(VecAssemblyEnd(*v));
  PetscFunctionReturn(0);
}

static PetscErrorCode BinaryViewer(const char file[], PetscViewer *v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerCreate(PETSC_COMM_SELF, v));
  PetscCall(PetscViewerSetType(*v, PETSCVIEWERBINARY));
  PetscCall(PetscViewerBinarySetSkipInfo(*v, PETSC_TRUE)); /* no .info file */
  PetscCall(PetscViewerFileSetMode(*v, FILE_MODE_WRITE));
  PetscCall(PetscViewerFileSetName(*v, file));
  PetscFunctionReturn(0);
}

static PetscErrorCode WriteFiles(void)
{
  PetscViewer v;
  Mat         X, Y;
  Vec         x, y;

  PetscFunctionBegin;
  /* dense Mat (stored dense: PETSC_VIEWER_NATIVE) + label Vec in one file */
  PetscCall(BinaryViewer("df_dense.dat", &v));
  PetscCall(MakeMat(PETSC_FALSE, N, D, PETSC_FALSE, &X));
  PetscCall(MakeVec("y", N, 1, PETSC_FALSE, PETSC_TRUE, &y));
  PetscCall(PetscViewerPushFormat(v, PETSC_VIEWER_NATIVE));
  PetscCall(MatView(X, v));
  PetscCall(PetscViewerPopFormat(v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  /* a dense Mat in the default (sparse) storage, without targets */
  PetscCall(BinaryViewer("df_nolabels.dat", &v));
  PetscCall(MatView(X, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatDestroy(&X));
  PetscCall(VecDestroy(&y));
  /* AIJ Mat features; targets an N x K Mat in another file */
  PetscCall(BinaryViewer("df_aij.dat", &v));
  PetscCall(MakeMat(PETSC_TRUE, N, D, PETSC_FALSE, &X));
  PetscCall(MatView(X, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(BinaryViewer("df_aij_targets.dat", &v));
  PetscCall(MakeMat(PETSC_FALSE, N, K, PETSC_TRUE, &Y));
  PetscCall(MatView(Y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(MatDestroy(&X));
  PetscCall(MatDestroy(&Y));
  /* Vec features (samples of shape (2,3)) + Vec of N*K targets */
  PetscCall(BinaryViewer("df_vec.dat", &v));
  PetscCall(MakeVec("x", N, D, PETSC_FALSE, PETSC_FALSE, &x));
  PetscCall(MakeVec("y", N, K, PETSC_TRUE, PETSC_FALSE, &y));
  PetscCall(VecView(x, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  /* the same Vecs through PETSc's HDF5 viewer: datasets x [N, D] (block size D) and y [N, K] */
  PetscCall(PetscViewerCreate(PETSC_COMM_SELF, &v)); /* PetscViewerHDF5Open() without petscviewerhdf5.h, which needs hdf5.h */
  PetscCall(PetscViewerSetType(v, PETSCVIEWERHDF5));
  PetscCall(PetscViewerFileSetMode(v, FILE_MODE_WRITE));
  PetscCall(PetscViewerFileSetName(v, "df_petsc.h5"));
  PetscCall(VecView(x, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* loads a data set and compares every value with Xval/Yval (or labels) */
static PetscErrorCode Check(const char what[], NNDataType type, const char prefix[], const char file[], PetscInt nexpect, PetscInt ntexpect, PetscBool labels)
{
  NNData   d;
  NNShape  s;
  PetscInt n, nt, idx[N];
  Vec      x, t;
  char     str[64];
  const PetscScalar *xa, *ta;

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &d));
  PetscCall(NNDataSetOptionsPrefix(d, prefix));
  PetscCall(NNDataSetType(d, type));
  PetscCall(NNDataSetFileName(d, file));
  PetscCall(NNDataSetFromOptions(d));
  PetscCall(NNDataGetNumSamples(d, &n));
  PetscCall(NNDataGetSampleShape(d, &s));
  PetscCall(NNDataGetTargetSize(d, &nt));
  PetscCheck(n == nexpect && nt == ntexpect && NNShapeSize(&s) == D, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " samples of size %" PetscInt_FMT ", %" PetscInt_FMT " targets", what, n, NNShapeSize(&s), nt);
  for (PetscInt i = 0; i < n; i++) idx[i] = n - 1 - i; /* reversed: indices are honoured */
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * D, &x));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * nt, &t));
  PetscCall(NNDataGetBatch(d, n, idx, x, t));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(t, &ta));
  for (PetscInt i = 0; i < n; i++) {
    for (PetscInt j = 0; j < D; j++) PetscCheck(xa[i * D + j] == Xval(idx[i], j), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: feature %" PetscInt_FMT " of sample %" PetscInt_FMT " is %g", what, j, idx[i], (double)xa[i * D + j]);
    for (PetscInt k = 0; k < nt; k++) PetscCheck(ta[i * nt + k] == (labels ? (PetscScalar)(idx[i] % 3) : Yval(idx[i], k)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: target %" PetscInt_FMT " of sample %" PetscInt_FMT " is %g", what, k, idx[i], (double)ta[i * nt + k]);
  }
  PetscCall(VecRestoreArrayRead(t, &ta));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(NNShapeToString(&s, sizeof(str), str));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %" PetscInt_FMT " samples of shape %s, %" PetscInt_FMT " target(s) each: values match\n", what, n, str, nt));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDataDestroy(&d));
  PetscFunctionReturn(0);
}

/* expects setting up the data set to fail; prints the message */
static PetscErrorCode CheckError(const char what[], NNDataType type, const char prefix[], const char file[])
{
  NNData         d;
  PetscInt       n;
  PetscErrorCode ierr;
  const char    *text;
  char          *msg;

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &d));
  PetscCall(NNDataSetOptionsPrefix(d, prefix));
  PetscCall(NNDataSetType(d, type));
  PetscCall(NNDataSetFileName(d, file));
  PetscCall(NNDataSetFromOptions(d));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNDataGetNumSamples(d, &n);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: expected an error", what);
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "caught: %s: %s\n", what, msg));
  PetscCall(NNDataDestroy(&d));
  PetscFunctionReturn(0);
}

static PetscErrorCode Truncate(const char in[], const char out[], long keep)
{
  FILE *f = fopen(in, "rb"), *g;
  char  buf[4096];
  long  len;

  PetscFunctionBegin;
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", in);
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  fseek(f, 0, SEEK_SET);
  if (keep < 0) keep = len + keep;
  g = fopen(out, "wb");
  PetscCheck(g, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", out);
  while (keep > 0) {
    size_t r = fread(buf, 1, (size_t)PetscMin(keep, (long)sizeof(buf)), f);
    if (!r) break;
    PetscCheck(fwrite(buf, 1, r, g) == r, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s", out);
    keep -= (long)r;
  }
  fclose(f);
  fclose(g);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) {
    PetscCall(WriteFiles());
    PetscCall(Truncate("df_dense.dat", "df_truncated.dat", -8)); /* the labels Vec loses its last entry */
    PetscCall(Truncate("df_petsc.h5", "df_truncated.h5", 1000));
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(PetscOptionsSetValue(NULL, "-aij_data_targets_file", "df_aij_targets.dat"));
  PetscCall(PetscOptionsSetValue(NULL, "-vec_data_shape", "2,3"));
  PetscCall(PetscOptionsSetValue(NULL, "-few_data_max_samples", "5"));
  PetscCall(PetscOptionsSetValue(NULL, "-renamed_data_features", "features"));

  PetscCall(Check("binary dense Mat + label Vec", NNDATABINARY, "dense_", "df_dense.dat", N, 1, PETSC_TRUE));
  PetscCall(Check("binary AIJ Mat + targets Mat file", NNDATABINARY, "aij_", "df_aij.dat", N, K, PETSC_FALSE));
  PetscCall(Check("binary Vec + target Vec", NNDATABINARY, "vec_", "df_vec.dat", N, K, PETSC_FALSE));
  PetscCall(Check("HDF5 from PETSc VecView", NNDATAHDF5, "h5_", "df_petsc.h5", N, K, PETSC_FALSE));
  PetscCall(Check("HDF5 first samples", NNDATAHDF5, "few_", "df_petsc.h5", 5, K, PETSC_FALSE));

  PetscCall(CheckError("binary missing file", NNDATABINARY, "train_", "df_missing.dat"));
  PetscCall(CheckError("binary truncated", NNDATABINARY, "train_", "df_truncated.dat"));
  PetscCall(CheckError("binary without targets", NNDATABINARY, "train_", "df_nolabels.dat"));
  PetscCall(CheckError("binary Vec without sample size", NNDATABINARY, "train_", "df_vec.dat"));
  PetscCall(CheckError("binary not PETSc", NNDATABINARY, "train_", "df_petsc.h5"));
  PetscCall(CheckError("HDF5 missing file", NNDATAHDF5, "train_", "df_missing.h5"));
  PetscCall(CheckError("HDF5 missing dataset", NNDATAHDF5, "renamed_", "df_petsc.h5"));
  PetscCall(CheckError("HDF5 not HDF5", NNDATAHDF5, "train_", "df_dense.dat"));
  PetscCall(CheckError("HDF5 truncated", NNDATAHDF5, "train_", "df_truncated.h5"));

  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (rank == 0) {
    const char *files[] = {"df_dense.dat", "df_aij.dat", "df_aij_targets.dat", "df_vec.dat", "df_petsc.h5", "df_truncated.dat", "df_nolabels.dat", "df_truncated.h5"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) (void)unlink(files[i]);
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # HDF5's message on the truncated file names the size the file claims, which depends on the PETSc that wrote it
   testset:
      requires: !int64
      output_file: output/data_files.out
      filter: sed -E "s/stored_eof = [0-9]+/stored_eof = N/"
      test:
         suffix: 1
      test:
         suffix: 2
         nsize: 2

   # with 64-bit indices PETSc's binary headers hold 8-byte integers: other offsets in the messages
   testset:
      requires: int64
      output_file: output/data_files_int64.out
      filter: sed -E "s/stored_eof = [0-9]+/stored_eof = N/"
      test:
         suffix: 1_int64
      test:
         suffix: 2_int64
         nsize: 2

TEST*/
