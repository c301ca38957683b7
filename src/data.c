/* The NNData interface: data sets that fill minibatches. */
#include <petnn/private/nnimpl.h>

PetscFunctionList NNDataList = NULL;

PETSC_INTERN PetscErrorCode NNDataCreate_IDX(NNData);
PETSC_INTERN PetscErrorCode NNDataCreate_Binary(NNData);
PETSC_INTERN PetscErrorCode NNDataCreate_HDF5(NNData);

PetscErrorCode NNDataRegisterAllTypes(void)
{
  PetscFunctionBegin;
  PetscCall(NNDataRegister(NNDATAIDX, NNDataCreate_IDX));
  PetscCall(NNDataRegister(NNDATABINARY, NNDataCreate_Binary));
  PetscCall(NNDataRegister(NNDATAHDF5, NNDataCreate_HDF5));
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
  PetscValidPointer(data, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(d, NNDATA_CLASSID, "NNData", "Neural network data set", "NNData", comm, NNDataDestroy, NNDataView));
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
   NNDataSetFromOptions - configures the data set from the options database

   Options Database Keys:
+  -data_type <idx,binary,hdf5> - type
.  -data_file <file> - file for binary and hdf5
-  -data_max_samples <n> - use only the first n samples

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
  PetscTryTypeMethod(d, setfromoptions, PetscOptionsObject);
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)d, PetscOptionsObject));
  PetscOptionsEnd();
  d->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@
   NNDataSetUp - reads the data

   Collective

   Level: beginner
@*/
PetscErrorCode NNDataSetUp(NNData d)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(d, NNDATA_CLASSID, 1);
  if (d->setupcalled) PetscFunctionReturn(0);
  if (!((PetscObject)d)->type_name) PetscCall(NNDataSetType(d, NNDATAIDX));
  PetscCall(PetscLogEventBegin(NN_DataLoad, d, 0, 0, 0));
  PetscUseTypeMethod(d, setup);
  PetscCall(PetscLogEventEnd(NN_DataLoad, d, 0, 0, 0));
  if (d->maxsamples > 0) d->nsamples = PetscMin(d->nsamples, d->maxsamples);
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

/*@
   NNDataGetBatch - copies samples idx[0..n) into a batch

   Input Parameters:
+  d - the data set
.  n - number of samples
-  idx - sample indices

   Output Parameters:
+  x - inputs, n * size(sample shape) leading entries are written
-  t - targets, n * target size leading entries are written (may be NULL)

   Level: intermediate
@*/
PetscErrorCode NNDataGetBatch(NNData d, PetscInt n, const PetscInt idx[], Vec x, Vec t)
{
  PetscScalar *xa, *ta = NULL;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNDataSetUp(d));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCheck(nx >= n * NNShapeSize(&d->shape), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Batch Vec holds %" PetscInt_FMT " entries; %" PetscInt_FMT " samples need %" PetscInt_FMT, nx, n, n * NNShapeSize(&d->shape));
  if (t) {
    PetscCall(VecGetLocalSize(t, &nt));
    PetscCheck(nt >= n * d->ntarget, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Target Vec holds %" PetscInt_FMT " entries; %" PetscInt_FMT " samples need %" PetscInt_FMT, nt, n, n * d->ntarget);
  }
  for (PetscInt i = 0; i < n; i++) PetscCheck(idx[i] >= 0 && idx[i] < d->nsamples, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Sample index %" PetscInt_FMT " out of range [0,%" PetscInt_FMT ")", idx[i], d->nsamples);
  PetscCall(PetscLogEventBegin(NN_DataLoad, d, 0, 0, 0));
  PetscCall(VecGetArrayWrite(x, &xa));
  if (t) PetscCall(VecGetArrayWrite(t, &ta));
  PetscUseTypeMethod(d, getbatch, n, idx, xa, ta);
  if (t) PetscCall(VecRestoreArrayWrite(t, &ta));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscCall(PetscLogEventEnd(NN_DataLoad, d, 0, 0, 0));
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
