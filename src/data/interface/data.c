/*
   The NNData interface: data sets that fill minibatches.

   Distributed data sets (the default on more than one rank, -data_distribute): rank r of the data
   set's communicator reads and keeps only the contiguous rows [N r/P, N (r+1)/P) (IDX files are
   stream-decompressed and the other rows skipped, binary and HDF5 files read at offsets), so a
   rank holds 1/P of the data set in memory. NNDataGetBatch() is then collective: every rank
   says which samples it needs, and one exchange (MPI_Alltoall of the counts, MPI_Alltoallv of
   the requested row numbers and of the rows) brings them from their owners, like LBANN's data
   store. Set-up errors (a missing or truncated file on some rank) are raised on every rank.
*/
#include <petnn/private/nnimpl.h>

PetscFunctionList NNDataList = NULL;

PETSC_INTERN PetscErrorCode NNDataCreate_IDX(NNData);
PETSC_INTERN PetscErrorCode NNDataCreate_Binary(NNData);
PETSC_INTERN PetscErrorCode NNDataCreate_HDF5(NNData);
PETSC_INTERN PetscErrorCode NNDataCreate_Array(NNData);
PETSC_INTERN PetscErrorCode NNDataCreate_Buffer(NNData);

PetscErrorCode NNDataRegisterAllTypes(void)
{
  PetscFunctionBegin;
  PetscCall(NNDataRegister(NNDATAIDX, NNDataCreate_IDX));
  PetscCall(NNDataRegister(NNDATABINARY, NNDataCreate_Binary));
  PetscCall(NNDataRegister(NNDATAHDF5, NNDataCreate_HDF5));
  PetscCall(NNDataRegister(NNDATAARRAY, NNDataCreate_Array));
  PetscCall(NNDataRegister(NNDATABUFFER, NNDataCreate_Buffer));
  PetscFunctionReturn(0);
}

/*@C
   NNDataRegister - adds a data-set type

   Level: advanced
@*/
PetscErrorCode NNDataRegister(const char name[], PetscErrorCode (*create)(NNData))
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&NNDataList, name, create));
  PetscFunctionReturn(0);
}

/*@C
   NNDataCreate - creates a data set (default type idx)

   Level: beginner

.seealso: `NNDataSetType()`, `NNTrain()`
@*/
PetscErrorCode NNDataCreate(MPI_Comm comm, NNData *data)
{
  NNData d;

  PetscFunctionBegin;
  PetscAssertPointer(data, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(d, NNDATA_CLASSID, "NNData", "Neural network data set", "NNData", comm, NNDataDestroy, NNDataView));
  d->distribute = PETSC_TRUE;
  d->badsample  = -1;
  *data = d;
  PetscFunctionReturn(0);
}

/*@C
   NNDataSetType - sets the data-set type (idx, binary, hdf5)

   Options Database Key:
.  -data_type <idx,binary,hdf5> - data-set type

   Level: beginner
@*/
PetscErrorCode NNDataSetType(NNData d, NNDataType type)
{
  PetscErrorCode (*create)(NNData);
  PetscBool match;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)d, type, &match));
  if (match) PetscFunctionReturn(0);
  PetscCall(PetscFunctionListFind(NNDataList, type, &create));
  if (!create) {
    char valid[256] = "";
    PetscCall(NNTypeListString(NNDataList, sizeof(valid), valid));
    SETERRQ(PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown data-set type \"%s\" (-%sdata_type); valid types: %s", type, ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "", valid);
  }
  PetscTryTypeMethod(d, destroy);
  PetscCall(PetscMemzero(d->ops, sizeof(struct _NNDataOps)));
  d->data        = NULL;
  d->setupcalled = PETSC_FALSE;
  PetscCall(PetscObjectChangeTypeName((PetscObject)d, type));
  PetscCall((*create)(d));
  PetscFunctionReturn(0);
}

/*@C
   NNDataGetType - gets the data-set type

   Level: beginner
@*/
PetscErrorCode NNDataGetType(NNData d, NNDataType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  *type = ((PetscObject)d)->type_name;
  PetscFunctionReturn(0);
}

/*@C
   NNDataSetOptionsPrefix - sets the options prefix (the generic driver uses train_ and test_)

   Level: intermediate
@*/
PetscErrorCode NNDataSetOptionsPrefix(NNData d, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)d, prefix));
  PetscFunctionReturn(0);
}

/*@C
   NNDataSetFileName - sets the file a binary or HDF5 data set reads

   Options Database Key:
.  -data_file <file> - the file

   Level: beginner
@*/
PetscErrorCode NNDataSetFileName(NNData d, const char file[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscFree(d->filename));
  PetscCall(PetscStrallocpy(file, &d->filename));
  d->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNDataSetMaxSamples - uses only the first n samples (0: all)

   Options Database Key:
.  -data_max_samples <n> - sample limit

   Level: beginner
@*/
PetscErrorCode NNDataSetMaxSamples(NNData d, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_OUTOFRANGE, "Sample limit %" PetscInt_FMT " must be non-negative", n);
  d->maxsamples  = n;
  d->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNDataSetDistribute - whether each rank keeps only its own contiguous part of the samples

   Logically Collective

   Input Parameters:
+  d - the data set
-  flg - PETSC_TRUE (default): rank r of P holds the rows [N r/P, N (r+1)/P) and NNDataGetBatch()
         fetches other rows from their owners (collective); PETSC_FALSE: every rank reads everything

   Options Database Key:
.  -data_distribute <bool> - distribute the rows (default true; no effect on one rank)

   Level: intermediate

.seealso: `NNDataGetOwnershipRange()`, `NNDataGetBatch()`
@*/
PetscErrorCode NNDataSetDistribute(NNData d, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  if (d->distribute != flg) d->setupcalled = PETSC_FALSE;
  d->distribute = flg;
  PetscFunctionReturn(0);
}

/*@
   NNDataGetOwnershipRange - the rows [lo, hi) this rank holds in memory

   Collective the first time (it sets the data set up)

   Level: intermediate

.seealso: `NNDataSetDistribute()`
@*/
PetscErrorCode NNDataGetOwnershipRange(NNData d, PetscInt *lo, PetscInt *hi)
{
  PetscFunctionBegin;
  PetscCall(NNDataSetUp(d));
  if (lo) *lo = d->rstart;
  if (hi) *hi = d->rend;
  PetscFunctionReturn(0);
}

/* Called by the types' setup once the number of samples in the file is known: applies the sample
   limit and decides the rows this rank reads. */
PetscErrorCode NNDataSetSizes_Private(NNData d, PetscInt N)
{
  PetscMPIInt size, rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)d), &size));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)d), &rank));
  d->nsamples    = d->maxsamples > 0 ? PetscMin(N, d->maxsamples) : N;
  d->distributed = (PetscBool)(d->distribute && size > 1);
  d->rstart      = d->distributed ? (PetscInt)(((PetscInt64)d->nsamples * rank) / size) : 0;
  d->rend        = d->distributed ? (PetscInt)(((PetscInt64)d->nsamples * (rank + 1)) / size) : d->nsamples;
  PetscFunctionReturn(0);
}

/* the rank (of the data set's communicator) holding global row i */
PetscErrorCode NNDataGetOwner(NNData d, PetscInt i, PetscMPIInt *owner)
{
  PetscMPIInt size;
  PetscInt64  N = d->nsamples, r;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)d), &size));
  if (!d->distributed) {
    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)d), owner));
    PetscFunctionReturn(0);
  }
  r = ((PetscInt64)i * size) / N;
  while (r + 1 < size && (N * (r + 1)) / size <= i) r++;
  while (r > 0 && (N * r) / size > i) r--;
  *owner = (PetscMPIInt)r;
  PetscFunctionReturn(0);
}

/*@
   NNDataSetFromOptions - configures the data set from the options database

   Options Database Keys:
+  -data_type <idx,binary,hdf5> - type
.  -data_file <file> - file for binary and hdf5
.  -data_max_samples <n> - use only the first n samples
-  -data_distribute <bool> - each rank keeps only its part of the rows (default true)

   Level: beginner
@*/
PetscErrorCode NNDataSetFromOptions(NNData d)
{
  char      type[64], file[PETSC_MAX_PATH_LEN];
  PetscBool flg;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(PetscStrncpy(type, ((PetscObject)d)->type_name ? ((PetscObject)d)->type_name : NNDATAIDX, sizeof(type)));
  PetscObjectOptionsBegin((PetscObject)d);
  PetscCall(PetscOptionsFList("-data_type", "Data-set type", "NNDataSetType", NNDataList, ((PetscObject)d)->type_name ? ((PetscObject)d)->type_name : NNDATAIDX, type, sizeof(type), &flg));
  if (flg || !((PetscObject)d)->type_name) PetscCall(NNDataSetType(d, type));
  PetscCall(PetscOptionsString("-data_file", "Data file (binary, hdf5)", "NNDataSetFileName", d->filename ? d->filename : "", file, sizeof(file), &flg));
  if (flg) PetscCall(NNDataSetFileName(d, file));
  PetscCall(PetscOptionsInt("-data_max_samples", "Use only the first n samples (0: all)", "NNDataSetMaxSamples", d->maxsamples, &d->maxsamples, NULL));
  PetscCheck(d->maxsamples >= 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_OUTOFRANGE, "-%sdata_max_samples %" PetscInt_FMT " must be non-negative", ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "", d->maxsamples);
  PetscCall(PetscOptionsBool("-data_distribute", "Each rank keeps only its contiguous part of the samples", "NNDataSetDistribute", d->distribute, &d->distribute, NULL));
  PetscTryTypeMethod(d, setfromoptions, PetscOptionsObject);
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)d, PetscOptionsObject));
  PetscOptionsEnd();
  d->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNDataSetUp - reads the data (on more than one rank, each rank its own part: NNDataSetDistribute())

   Collective

   Notes:
   A rank that cannot read its part (a missing or truncated file, a bad header) makes every rank
   raise the same error, with the rank that found it.

   Level: beginner
@*/
PetscErrorCode NNDataSetUp(NNData d)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  if (d->setupcalled) PetscFunctionReturn(0);
  if (!((PetscObject)d)->type_name) PetscCall(NNDataSetType(d, NNDATAIDX));
  PetscCall(NNParallelRegisterEvents());
  PetscCheck(d->ops->setup, PetscObjectComm((PetscObject)d), PETSC_ERR_SUP, "Data-set type %s cannot be set up", ((PetscObject)d)->type_name);
  d->rend        = -1; /* types that know NNDataSetSizes_Private() read only their rows */
  d->distributed = PETSC_FALSE;
  PetscCall(PetscLogEventBegin(NN_DataLoad, d, 0, 0, 0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* local reading: re-raised on every rank below */
  ierr = (*d->ops->setup)(d);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscLogEventEnd(NN_DataLoad, d, 0, 0, 0));
  PetscCall(NNCollectiveError(PetscObjectComm((PetscObject)d), ierr, PETSC_TRUE, ""));
  if (d->rend < 0) { /* a type that reads everything */
    if (d->maxsamples > 0) d->nsamples = PetscMin(d->nsamples, d->maxsamples);
    d->rstart = 0;
    d->rend   = d->nsamples;
  }
  PetscCheck(d->nsamples > 0, PetscObjectComm((PetscObject)d), PETSC_ERR_FILE_UNEXPECTED, "Data set %s has no samples", ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "");
  d->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNDataGetNumSamples - number of samples

   Level: beginner
@*/
PetscErrorCode NNDataGetNumSamples(NNData d, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(NNDataSetUp(d));
  *n = d->nsamples;
  PetscFunctionReturn(0);
}

/*@C
   NNDataGetSampleShape - shape of one input sample

   Level: beginner
@*/
PetscErrorCode NNDataGetSampleShape(NNData d, NNShape *s)
{
  PetscFunctionBegin;
  PetscCall(NNDataSetUp(d));
  *s = d->shape;
  PetscFunctionReturn(0);
}

/*@
   NNDataGetTargetSize - number of target values per sample (1 for class labels)

   Level: beginner
@*/
PetscErrorCode NNDataGetTargetSize(NNData d, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(NNDataSetUp(d));
  *n = d->ntarget;
  PetscFunctionReturn(0);
}

/* Gathers samples ids[0..n) from data sets held in memory as [N][sample] features X and [N][ntarget] targets Y */
PetscErrorCode NNDataCopySamples(NNData d, const PetscScalar *X, const PetscScalar *Y, PetscInt n, const PetscInt ids[], PetscScalar *x, PetscScalar *t)
{
  PetscInt sz = NNShapeSize(&d->shape), k = d->ntarget;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscArraycpy(x + i * sz, X + (size_t)ids[i] * sz, sz));
    if (t) PetscCall(PetscArraycpy(t + i * k, Y + (size_t)ids[i] * k, k));
  }
  PetscFunctionReturn(0);
}

/* first sample (in idx order) of a filled batch with a NaN or infinite feature or target, -1 if none */
static PetscInt NNDataFindNonFinite(PetscInt n, PetscInt sz, PetscInt k, const PetscInt idx[], const PetscScalar *x, const PetscScalar *t)
{
  for (PetscInt i = 0; i < n; i++) {
    PetscReal s = 0; /* a NaN or Inf anywhere makes the sum non-finite (0*Inf, Inf-Inf are NaN too) */
    for (PetscInt j = 0; j < sz; j++) s += 0 * PetscRealPart(x[i * sz + j]);
    if (t)
      for (PetscInt j = 0; j < k; j++) s += 0 * PetscRealPart(t[i * k + j]);
    if (PetscIsInfOrNanReal(s)) return idx[i];
  }
  return -1;
}

PetscErrorCode NNDataGetBatchOn(NNData d, MPI_Comm xcomm, PetscInt n, const PetscInt idx[], Vec x, Vec t)
{
  PetscScalar *xa, *ta = NULL, *tt = NULL;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNDataSetUp(d));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCheck(n >= 0 && nx >= n * NNShapeSize(&d->shape), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Batch Vec holds %" PetscInt_FMT " entries; %" PetscInt_FMT " samples need %" PetscInt_FMT, nx, n, n * NNShapeSize(&d->shape));
  if (t) {
    PetscCall(VecGetLocalSize(t, &nt));
    PetscCheck(nt >= n * d->ntarget, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Target Vec holds %" PetscInt_FMT " entries; %" PetscInt_FMT " samples need %" PetscInt_FMT, nt, n, n * d->ntarget);
  }
  PetscCall(PetscLogEventBegin(NN_DataLoad, d, 0, 0, 0));
  PetscCall(VecGetArrayWrite(x, &xa));
  if (t) PetscCall(VecGetArrayWrite(t, &ta));
  if (d->distributed) PetscCall(NNDataExchange(d, xcomm, n, idx, xa, ta));
  else {
    for (PetscInt i = 0; i < n; i++) PetscCheck(idx[i] >= 0 && idx[i] < d->nsamples, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Sample index %" PetscInt_FMT " out of range [0,%" PetscInt_FMT ")", idx[i], d->nsamples);
    if (!t && n) PetscCall(PetscMalloc1(n * d->ntarget, &tt)); /* the targets are checked too */
    if (n) PetscUseTypeMethod(d, getbatch, n, idx, xa, t ? ta : tt);
  }
  d->badsample = NNDataFindNonFinite(n, NNShapeSize(&d->shape), d->ntarget, idx, xa, t ? ta : tt);
  PetscCall(PetscFree(tt));
  if (t) PetscCall(VecRestoreArrayWrite(t, &ta));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscCall(PetscLogEventEnd(NN_DataLoad, d, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@
   NNDataGetBatch - copies samples idx[0..n) into a batch

   Collective when the data set is distributed (NNDataSetDistribute()), else not collective

   Input Parameters:
+  d - the data set
.  n - number of samples (may be 0 on some ranks of a distributed data set)
-  idx - sample indices (each rank its own)

   Output Parameters:
+  x - inputs, n * size(sample shape) leading entries are written
-  t - targets, n * target size leading entries are written (may be NULL)

   Notes:
   On a distributed data set every rank of its communicator must call this routine together; the
   samples are fetched from the ranks that hold them in one exchange.

   Level: intermediate
@*/
PetscErrorCode NNDataGetBatch(NNData d, PetscInt n, const PetscInt idx[], Vec x, Vec t)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscCall(NNDataGetBatchOn(d, PetscObjectComm((PetscObject)d), n, idx, x, t));
  PetscFunctionReturn(0);
}

/*@C
   NNDataView - prints the data set's type, size and sample shape

   Level: beginner
@*/
PetscErrorCode NNDataView(NNData d, PetscViewer viewer)
{
  PetscBool iascii;
  char      s[64];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)d), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(NNShapeToString(&d->shape, sizeof(s), s));
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)d, viewer));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " samples of shape %s, %" PetscInt_FMT " target value(s) each\n", d->nsamples, s, d->ntarget));
  if (d->distributed) {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)d), &size));
    PetscCall(PetscViewerASCIIPrintf(viewer, "distributed: each of %d ranks holds %" PetscInt_FMT " to %" PetscInt_FMT " consecutive samples\n", size, d->nsamples / size, (d->nsamples + size - 1) / size));
  }
  PetscTryTypeMethod(d, view, viewer);
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@
   NNDataDestroy - destroys a data set

   Level: beginner
@*/
PetscErrorCode NNDataDestroy(NNData *d)
{
  PetscFunctionBegin;
  if (!*d) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*d, NNDATA_CLASSID, 1);
  if (--((PetscObject)(*d))->refct > 0) {
    *d = NULL;
    PetscFunctionReturn(0);
  }
  PetscTryTypeMethod(*d, destroy);
  PetscCall(PetscFree((*d)->filename));
  PetscCall(PetscHeaderDestroy(d));
  PetscFunctionReturn(0);
}

/*@C
   NNDataIDXSetSplit - chooses the IDX files "<dir>/<split>-images-idx3-ubyte.gz" and labels (train or t10k)

   Options Database Key:
.  -data_split <train,t10k> - which split

   Level: beginner
@*/
PetscErrorCode NNDataIDXSetSplit(NNData d, const char split[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  PetscTryMethod(d, "NNDataIDXSetSplit_C", (NNData, const char[]), (d, split));
  PetscFunctionReturn(0);
}
