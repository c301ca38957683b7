/*
   HDF5 data sets: a features dataset [N, d1, ...] and a targets dataset [N] or [N, k], read whole
   into memory as double (float and integer datasets are converted by HDF5). Files written with
   h5py (x = f.create_dataset("x", data=...)) and Vecs written by PETSc's VecView() to an HDF5
   viewer (a Vec named "x" of block size k is a dataset [N/k, k]) both work.
*/
#include <petnn/private/nnimpl.h>

typedef struct {
  char         features[256], targets[256];
  PetscScalar *x, *y;
} NNData_HDF5;

static PetscErrorCode NNDataSetUp_HDF5_Private(NNData d, int64_t *fid)
{
  NNData_HDF5 *h      = (NNData_HDF5 *)d->data;
  const char  *prefix = ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "";
  PetscInt     fnd, fd[NN_H5_MAX_DIM], tnd, td[NN_H5_MAX_DIM], N, n, sz, ntarget = 1;
  PetscBool    has;
  char         list[512] = "";

  PetscFunctionBegin;
  PetscCall(PetscTestFile(d->filename, 'r', &has));
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open HDF5 data file %s: no such (readable) file (-%sdata_file)", d->filename, prefix);
  PetscCall(NNH5OpenRead(d->filename, "HDF5 data file", fid));
  PetscCall(NNH5IsDataset(*fid, h->features, &has));
  if (!has) PetscCall(NNH5ListRoot(*fid, sizeof(list), list));
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s has no features dataset \"%s\"; name the dataset with -%sdata_features <name>%s%s", d->filename, h->features, prefix, list[0] ? "; the file has: " : "", list);
  PetscCall(NNH5IsDataset(*fid, h->targets, &has));
  if (!has) PetscCall(NNH5ListRoot(*fid, sizeof(list), list));
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s has no targets dataset \"%s\"; name the dataset with -%sdata_targets <name>%s%s", d->filename, h->targets, prefix, list[0] ? "; the file has: " : "", list);

  PetscCall(NNH5GetShape(*fid, h->features, &fnd, fd));
  PetscCheck(fnd >= 1 && fnd <= NN_MAX_DIM + 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Features dataset %s in %s has %" PetscInt_FMT " dimensions; expected [N] or [N, d1, ...] with at most %d dimensions after N", h->features, d->filename, fnd, NN_MAX_DIM);
  PetscCall(NNH5GetShape(*fid, h->targets, &tnd, td));
  PetscCheck(tnd >= 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Targets dataset %s in %s is a scalar; expected [N] or [N, k]", h->targets, d->filename);
  for (PetscInt i = 1; i < tnd; i++) ntarget *= td[i];
  N = fd[0];
  PetscCheck(td[0] == N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s: features %s have %" PetscInt_FMT " samples but targets %s have %" PetscInt_FMT, d->filename, h->features, N, h->targets, td[0]);
  PetscCheck(N > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s: features %s have no samples", d->filename, h->features);
  if (fnd == 1) PetscCall(NNShapeSet(&d->shape, 1, (PetscInt[]){1}));
  else PetscCall(NNShapeSet(&d->shape, fnd - 1, fd + 1));
  PetscCheck(ntarget > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s: targets %s have no values per sample", d->filename, h->targets);

  n  = d->maxsamples > 0 ? PetscMin(N, d->maxsamples) : N; /* read only what is used */
  sz = NNShapeSize(&d->shape);
  PetscCall(PetscMalloc1((size_t)n * sz, &h->x));
  PetscCall(PetscMalloc1((size_t)n * ntarget, &h->y));
  PetscCall(NNH5ReadHyperslab(*fid, h->features, n, h->x));
  PetscCall(NNH5ReadHyperslab(*fid, h->targets, n, h->y));
  PetscCall(NNH5Close(fid));
  d->nsamples = n;
  d->ntarget  = ntarget;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetUp_HDF5(NNData d)
{
  NNData_HDF5   *h   = (NNData_HDF5 *)d->data;
  int64_t        fid = -1;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCheck(d->filename && d->filename[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "HDF5 data set needs a file: give -%sdata_file <file.h5> or call NNDataSetFileName()", ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "");
  PetscCall(PetscFree(h->x));
  PetscCall(PetscFree(h->y));
  PetscCall(NNH5SilenceErrors(PETSC_TRUE));
  ierr = NNDataSetUp_HDF5_Private(d, &fid);
  if (ierr) { /* leave nothing behind: the caller may catch the error and go on */
    (void)NNH5Close(&fid);
    (void)PetscFree(h->x);
    (void)PetscFree(h->y);
  }
  PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataGetBatch_HDF5(NNData d, PetscInt n, const PetscInt ids[], PetscScalar *x, PetscScalar *t)
{
  NNData_HDF5 *h = (NNData_HDF5 *)d->data;

  PetscFunctionBegin;
  PetscCall(NNDataCopySamples(d, h->x, h->y, n, ids, x, t));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetFromOptions_HDF5(NNData d, PetscOptionItems *PetscOptionsObject)
{
  NNData_HDF5 *h = (NNData_HDF5 *)d->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "HDF5 data-set options");
  PetscCall(PetscOptionsString("-data_features", "Name of the features dataset [N, d1, ...]", "NNDATAHDF5", h->features, h->features, sizeof(h->features), NULL));
  PetscCall(PetscOptionsString("-data_targets", "Name of the targets dataset [N] or [N, k]", "NNDATAHDF5", h->targets, h->targets, sizeof(h->targets), NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataView_HDF5(NNData d, PetscViewer v)
{
  NNData_HDF5 *h = (NNData_HDF5 *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "file %s: features \"%s\", targets \"%s\"\n", d->filename ? d->filename : "(none)", h->features, h->targets));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataDestroy_HDF5(NNData d)
{
  NNData_HDF5 *h = (NNData_HDF5 *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(h->x));
  PetscCall(PetscFree(h->y));
  PetscCall(PetscFree(d->data));
  PetscFunctionReturn(0);
}

/*MC
   NNDATAHDF5 - "hdf5": an HDF5 file with a features dataset [N, d1, ...] (samples of shape
   (d1, ...), at most 4 dimensions; [N] means one feature) and a targets dataset [N] (class labels
   or one value) or [N, k]

   Options Database Keys:
+  -data_file <file.h5> - the file
.  -data_features <name> - features dataset (default x)
-  -data_targets <name> - targets dataset (default y)

   Notes:
   The data are read whole into memory as double; float and integer datasets are converted.
   With -data_max_samples only that many leading samples are read. A Vec written by PETSc's
   VecView() to an HDF5 viewer is a dataset named after the Vec ([N] or [N/bs, bs]), so
   PETSc-written files work too.

   Level: beginner

.seealso: `NNDATABINARY`, `NNDATAIDX`, `NNDataSetFileName()`
M*/
PETSC_INTERN PetscErrorCode NNDataCreate_HDF5(NNData d)
{
  NNData_HDF5 *h;

  PetscFunctionBegin;
  PetscCall(PetscNew(&h));
  PetscCall(PetscStrncpy(h->features, "x", sizeof(h->features)));
  PetscCall(PetscStrncpy(h->targets, "y", sizeof(h->targets)));
  d->data                = h;
  d->ops->setup          = NNDataSetUp_HDF5;
  d->ops->getbatch       = NNDataGetBatch_HDF5;
  d->ops->setfromoptions = NNDataSetFromOptions_HDF5;
  d->ops->view           = NNDataView_HDF5;
  d->ops->destroy        = NNDataDestroy_HDF5;
  PetscFunctionReturn(0);
}
