static char help[] = "Distributed data sets: each rank holds a contiguous 1/P of the rows and NNDataGetBatch() fetches\n"
                     "the rest; batches equal those of a replicated copy of the data set for IDX (Fashion-MNIST),\n"
                     "PETSc binary (AIJ-stored Mat) and HDF5 files, and arrays in memory (NNDATAARRAY).\n";

#include <petnn.h>
#include <string.h>

#define NB 300 /* rows of the binary and HDF5 files */

static PetscScalar arrayX[NB * 5], arrayY[NB]; /* the in-memory data set: the HDF5 file's values */

static PetscErrorCode WriteFiles(void)
{
  Mat         X;
  Vec         y, x;
  PetscViewer v;

  PetscFunctionBegin;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, NB, 5, 5, NULL, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, NB, &y));
  for (PetscInt i = 0; i < NB; i++) {
    for (PetscInt j = 0; j < 5; j++)
      if ((i + j) % 3) PetscCall(MatSetValue(X, i, j, i + 0.1 * j, INSERT_VALUES));
    PetscCall(VecSetValue(y, i, (PetscScalar)(i % 7), INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(y));
  PetscCall(VecAssemblyEnd(y));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, "dpd.dat", FILE_MODE_WRITE, &v));
  PetscCall(MatView(X, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  /* HDF5: x [NB, 5] (a Vec of block size 5), y [NB] */
  PetscCall(VecCreate(PETSC_COMM_SELF, &x));
  PetscCall(VecSetSizes(x, NB * 5, NB * 5));
  PetscCall(VecSetBlockSize(x, 5));
  PetscCall(VecSetType(x, VECSEQ));
  for (PetscInt i = 0; i < NB * 5; i++) PetscCall(VecSetValue(x, i, 0.5 * i, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(PetscObjectSetName((PetscObject)x, "x"));
  PetscCall(PetscObjectSetName((PetscObject)y, "y"));
  PetscCall(PetscViewerCreate(PETSC_COMM_SELF, &v));
  PetscCall(PetscViewerSetType(v, PETSCVIEWERHDF5));
  PetscCall(PetscViewerFileSetMode(v, FILE_MODE_WRITE));
  PetscCall(PetscViewerFileSetName(v, "dpd.h5"));
  PetscCall(VecView(x, v));
  PetscCall(VecView(y, v));
  PetscCall(PetscViewerDestroy(&v));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&X));
  PetscFunctionReturn(0);
}

static PetscErrorCode Open(NNDataType type, const char file[], PetscInt max, PetscBool distribute, NNData *d)
{
  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, d));
  PetscCall(NNDataSetType(*d, type));
  if (file) PetscCall(NNDataSetFileName(*d, file));
  PetscCall(NNDataArraySetArrays(*d, NB, 1, (PetscInt[]){5}, 1, arrayX, arrayY)); /* ignored by the file types */
  PetscCall(NNDataSetMaxSamples(*d, max));
  PetscCall(NNDataSetDistribute(*d, distribute));
  PetscFunctionReturn(0);
}

/* every rank asks for its own scattered samples from both copies and compares */
static PetscErrorCode Compare(const char what[], NNDataType type, const char file[], PetscInt max)
{
  NNData      dd, dr;
  PetscInt    N, lo, hi, n, *idx, sz, k, held;
  PetscMPIInt rank, size;
  Vec         x1, t1, x2, t2;
  PetscBool   same = PETSC_TRUE, contiguous;
  NNShape     s;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(Open(type, file, max, PETSC_TRUE, &dd));
  PetscCall(Open(type, file, max, PETSC_FALSE, &dr));
  PetscCall(NNDataGetNumSamples(dd, &N));
  PetscCall(NNDataGetOwnershipRange(dd, &lo, &hi));
  PetscCall(NNDataGetSampleShape(dd, &s));
  PetscCall(NNDataGetTargetSize(dd, &k));
  sz = NNShapeSize(&s);
  /* the ranks' rows tile [0, N) in order, 1/P each */
  {
    PetscInt *los, *his;
    PetscCall(PetscMalloc2(size, &los, size, &his));
    PetscCallMPI(MPI_Allgather(&lo, 1, MPIU_INT, los, 1, MPIU_INT, PETSC_COMM_WORLD));
    PetscCallMPI(MPI_Allgather(&hi, 1, MPIU_INT, his, 1, MPIU_INT, PETSC_COMM_WORLD));
    contiguous = (PetscBool)(los[0] == 0 && his[size - 1] == N);
    for (PetscMPIInt r = 0; r + 1 < size; r++) contiguous = (PetscBool)(contiguous && his[r] == los[r + 1]);
    for (PetscMPIInt r = 0; r < size; r++) contiguous = (PetscBool)(contiguous && his[r] - los[r] <= (N + size - 1) / size);
    PetscCall(PetscFree2(los, his));
  }
  held = hi - lo;
  n    = 17 + 5 * rank; /* different requests on every rank, rows of every owner */
  PetscCall(PetscMalloc1(n, &idx));
  for (PetscInt i = 0; i < n; i++) idx[i] = (37 * i + 11 * rank + 3) % N;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * sz, &x1));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * k, &t1));
  PetscCall(VecDuplicate(x1, &x2));
  PetscCall(VecDuplicate(t1, &t2));
  PetscCall(NNDataGetBatch(dd, n, idx, x1, t1));
  PetscCall(NNDataGetBatch(dr, n, idx, x2, t2));
  {
    PetscBool e1, e2;
    PetscCall(VecEqual(x1, x2, &e1));
    PetscCall(VecEqual(t1, t2, &e2));
    same = (PetscBool)(e1 && e2);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, NN_MPI_BOOL, MPI_LAND, PETSC_COMM_WORLD));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rows split contiguously over the ranks: %s; scattered batches equal the replicated copy's: %s\n", what, contiguous ? "yes" : "NO", same ? "yes" : "NO"));
  PetscCall(PetscInfo(NULL, "%s: %" PetscInt_FMT " samples, this rank holds %" PetscInt_FMT "\n", what, N, held));
  PetscCheck(same && contiguous, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: distributed data set differs", what);
  PetscCall(PetscFree(idx));
  PetscCall(VecDestroy(&x1));
  PetscCall(VecDestroy(&t1));
  PetscCall(VecDestroy(&x2));
  PetscCall(VecDestroy(&t2));
  PetscCall(NNDataDestroy(&dd));
  PetscCall(NNDataDestroy(&dr));
  PetscFunctionReturn(0);
}

/* an array data set without arrays, or with none of them, is refused with a message that says what to do */
static PetscErrorCode ArrayErrors(void)
{
  NNData         d;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &d));
  PetscCall(NNDataSetType(d, NNDATAARRAY));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNDataSetUp(d);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "array data set without arrays: %s\n", ierr ? "refused" : "ACCEPTED"));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNDataArraySetArrays(d, 0, 1, (PetscInt[]){5}, 1, arrayX, arrayY);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "array data set of 0 samples: %s\n", ierr ? "refused" : "ACCEPTED"));
  PetscCall(NNDataDestroy(&d));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank;
  PetscBool   idx = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-idx", &idx, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (!rank) PetscCall(WriteFiles());
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(Compare("PETSc binary (AIJ Mat + Vec)", NNDATABINARY, "dpd.dat", 0));
  PetscCall(Compare("PETSc binary, first 101 samples", NNDATABINARY, "dpd.dat", 101));
  PetscCall(Compare("HDF5", NNDATAHDF5, "dpd.h5", 0));
  for (PetscInt i = 0; i < NB * 5; i++) arrayX[i] = 0.5 * i;
  for (PetscInt i = 0; i < NB; i++) arrayY[i] = i % 7;
  PetscCall(Compare("arrays in memory", NNDATAARRAY, NULL, 0));
  PetscCall(Compare("arrays in memory, first 101 samples", NNDATAARRAY, NULL, 101));
  PetscCall(ArrayErrors());
  if (idx) PetscCall(Compare("IDX (Fashion-MNIST t10k, first 3001 samples)", NNDATAIDX, NULL, 3001));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
     suffix: 3
     nsize: 3
     args: -idx -data_split t10k
     requires: fashion_mnist

   test:
     suffix: 4
     nsize: 4
     output_file: output/dp_data_4.out

TEST*/
