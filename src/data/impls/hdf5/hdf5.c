/*
   HDF5 data sets: a features dataset [N, d1, ...] and a targets dataset [N] or [N, k], read into
   memory as double (float and integer datasets are converted by HDF5); each rank of a distributed
   data set reads only its rows [rstart, rend) (a hyperslab), (rend-rstart) * (sample size + k) doubles. Files written with
   h5py (x = f.create_dataset("x", data=...)) and Vecs written by PETSc's VecView() to an HDF5
   viewer (a Vec named "x" of block size k is a dataset [N/k, k]) both work.
*/
#include <petnn/private/nnimpl.h>
#include <hdf5.h>

typedef struct {
  char         features[256], targets[256];
  PetscScalar *x, *y;
} NNData_HDF5;

/* rows [lo,hi) of a dataset [N, ...] (any shape after N), converted to double, in C order */
static PetscErrorCode NNH5ReadRows(int64_t fid, const char file[], const char path[], PetscInt lo, PetscInt hi, PetscScalar data[])
{
  hid_t   dset, fspace = -1, mspace = -1;
  hsize_t start[NN_H5_MAX_DIM] = {0}, count[NN_H5_MAX_DIM];
  int     nd;
  herr_t  st = -1;

  PetscFunctionBegin;
  if (hi <= lo) PetscFunctionReturn(0);
  dset = H5Dopen2((hid_t)fid, path, H5P_DEFAULT);
  PetscCheck(dset >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot open dataset %s of HDF5 data file %s", path, file);
  fspace = H5Dget_space(dset);
  nd     = fspace >= 0 ? H5Sget_simple_extent_ndims(fspace) : -1;
  if (nd >= 1 && nd <= NN_H5_MAX_DIM && H5Sget_simple_extent_dims(fspace, count, NULL) >= 0) {
    start[0] = (hsize_t)lo;
    count[0] = (hsize_t)(hi - lo);
    mspace   = H5Screate_simple(nd, count, NULL);
    if (mspace >= 0 && H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0) st = H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, data);
  }
  if (mspace >= 0) H5Sclose(mspace);
  if (fspace >= 0) H5Sclose(fspace);
  H5Dclose(dset);
  PetscCheck(st >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read samples %" PetscInt_FMT " to %" PetscInt_FMT " of dataset %s in HDF5 data file %s (truncated file or a type that does not convert to a number?)", lo, hi - 1, path, file);
  PetscFunctionReturn(0);
}

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
  for (PetscInt i = 1; i < tnd; i++) {
    PetscCheck(td[i] >= 0 && (!td[i] || ntarget <= PETSC_MAX_INT / td[i]), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Targets dataset %s in %s has more than %" PetscInt_FMT " values per sample", h->targets, d->filename, (PetscInt)PETSC_MAX_INT);
    ntarget *= td[i];
  }
  N = fd[0];
  PetscCheck(td[0] == N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s: features %s have %" PetscInt_FMT " samples but targets %s have %" PetscInt_FMT, d->filename, h->features, N, h->targets, td[0]);
  PetscCheck(N > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s: features %s have no samples", d->filename, h->features);
  if (fnd == 1) PetscCall(NNShapeSet(&d->shape, 1, (PetscInt[]){1}));
  else PetscCall(NNShapeSet(&d->shape, fnd - 1, fd + 1));
  PetscCheck(ntarget > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 data file %s: targets %s have no values per sample", d->filename, h->targets);

  PetscCall(NNDataSetSizes_Private(d, N)); /* read only this rank's rows of what is used */
  n  = d->rend - d->rstart;
  sz = NNShapeSize(&d->shape);
  PetscCall(PetscMalloc1((size_t)n * sz + 1, &h->x));
  PetscCall(PetscMalloc1((size_t)n * ntarget + 1, &h->y));
  PetscCall(NNH5ReadRows(*fid, d->filename, h->features, d->rstart, d->rend, h->x));
  PetscCall(NNH5ReadRows(*fid, d->filename, h->targets, d->rstart, d->rend, h->y));
  PetscCall(NNH5Close(fid));
  d->ntarget = ntarget;
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

static PetscErrorCode NNDataSetFromOptions_HDF5(NNData d, NNOptionItems PetscOptionsObject)
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
   The data are read into memory as double; float and integer datasets are converted. With
   -data_max_samples only that many leading samples are read; on more than one rank each rank
   reads only its own rows (NNDataSetDistribute()). A Vec written by PETSc's
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
