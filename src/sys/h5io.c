/*
   Small helpers over the HDF5 C API for checkpoints, gradient dumps and HDF5 data sets.

   Every helper works on an open file (hid_t, which is int64_t in HDF5 1.10) and turns HDF5
   failures into PETSc errors that name the file and the dataset. Callers that expect failures
   (opening a file that may not be HDF5, probing for optional datasets) silence HDF5's own error
   printing with NNH5SilenceErrors(); the innermost HDF5 message is then available from
   NNH5ErrorMessage() and is appended to our errors.
*/
#include <petnn/private/nnimpl.h>
#include <hdf5.h>

#if defined(PETSC_USE_COMPLEX) || !defined(PETSC_USE_REAL_DOUBLE)
  #error "PetNN's HDF5 I/O stores PetscScalar as IEEE double: configure PETSc with real double precision"
#endif

/* ---------------------------------------------------------------- error reporting */
static H5E_auto2_t nnh5_saved_func  = NULL;
static void       *nnh5_saved_data  = NULL;
static int         nnh5_silence_cnt = 0;

/* Stops HDF5 from printing its error stack (PETSC_TRUE) or restores the previous behaviour (PETSC_FALSE); nests. */
PetscErrorCode NNH5SilenceErrors(PetscBool silence)
{
  PetscFunctionBegin;
  if (silence) {
    if (nnh5_silence_cnt++ == 0) {
      PetscCheck(H5Eget_auto2(H5E_DEFAULT, &nnh5_saved_func, &nnh5_saved_data) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "H5Eget_auto2() failed");
      PetscCheck(H5Eset_auto2(H5E_DEFAULT, NULL, NULL) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "H5Eset_auto2() failed");
    }
  } else {
    PetscCheck(nnh5_silence_cnt > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNH5SilenceErrors(PETSC_FALSE) without a matching PETSC_TRUE");
    if (--nnh5_silence_cnt == 0) PetscCheck(H5Eset_auto2(H5E_DEFAULT, nnh5_saved_func, nnh5_saved_data) >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "H5Eset_auto2() failed");
  }
  PetscFunctionReturn(0);
}

typedef struct {
  char  *buf;
  size_t len;
  int    found;
} NNH5ErrWalk;

static herr_t NNH5ErrWalkFn(unsigned n, const H5E_error2_t *e, void *ctx)
{
  NNH5ErrWalk *w = (NNH5ErrWalk *)ctx;

  (void)n;
  if (!w->found && e->desc && e->desc[0]) {
    snprintf(w->buf, w->len, "%s", e->desc);
    w->found = 1;
  }
  return 0;
}

/* The most specific message on HDF5's error stack (e.g. "truncated file: eof = ..."), "" if none. */
PetscErrorCode NNH5ErrorMessage(size_t len, char buf[])
{
  NNH5ErrWalk w = {buf, len, 0};

  PetscFunctionBegin;
  if (!len) PetscFunctionReturn(0);
  buf[0] = 0;
  (void)H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, NNH5ErrWalkFn, &w);
  PetscFunctionReturn(0);
}

/* the name of the file an object lives in, for error messages */
static void NNH5FileName(hid_t id, size_t len, char name[])
{
  ssize_t n = H5Fget_name(id, name, len);
  if (n < 0) snprintf(name, len, "(unknown HDF5 file)");
}

/* builds an error message "HDF5 file <f>: <what>: <hdf5 message>" and raises it */
#define NNH5Fail(fid, code, ...) \
  do { \
    char nnh5_file_[PETSC_MAX_PATH_LEN], nnh5_msg_[256], nnh5_what_[512]; \
    NNH5FileName(fid, sizeof(nnh5_file_), nnh5_file_); \
    PetscCall(NNH5ErrorMessage(sizeof(nnh5_msg_), nnh5_msg_)); \
    PetscCall(PetscSNPrintf(nnh5_what_, sizeof(nnh5_what_), __VA_ARGS__)); \
    SETERRQ(PETSC_COMM_SELF, code, "HDF5 file %s: %s%s%s", nnh5_file_, nnh5_what_, nnh5_msg_[0] ? ": " : "", nnh5_msg_); \
  } while (0)

/*
   "(256,784)"; "()" for a scalar
*/
PetscErrorCode NNH5ShapeToString(PetscInt ndim, const PetscInt dims[], size_t len, char str[])
{
  size_t used;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(str, len, "("));
  for (PetscInt i = 0; i < ndim; i++) {
    PetscCall(PetscStrlen(str, &used));
    PetscCall(PetscSNPrintf(str + used, len - used, "%s%" PetscInt_FMT, i ? "," : "", dims[i]));
  }
  PetscCall(PetscStrlcat(str, ")", len));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- files */
/*
   Opens an existing HDF5 file read-only with errors that say what is wrong: no such file, not an
   HDF5 file, or an HDF5 file that cannot be opened (truncated, corrupt). what names the file's
   role in messages ("checkpoint", "data file").
*/
PetscErrorCode NNH5OpenRead(const char file[], const char what[], int64_t *fid)
{
  PetscBool exists;
  htri_t    is;
  char      msg[256];

  PetscFunctionBegin;
  *fid = -1;
  PetscCall(PetscTestFile(file, 'r', &exists));
  PetscCheck(exists, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s %s: no such (readable) file", what, file);
  PetscCall(NNH5SilenceErrors(PETSC_TRUE));
  is = H5Fis_hdf5(file);
  if (is > 0) *fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  PetscCall(NNH5ErrorMessage(sizeof(msg), msg));
  PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  PetscCheck(is >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot read %s %s%s%s", what, file, msg[0] ? ": " : "", msg);
  PetscCheck(is > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Cannot read %s %s: it is not an HDF5 file", what, file);
  PetscCheck(*fid >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Cannot open %s %s as HDF5 (truncated or corrupt file?)%s%s", what, file, msg[0] ? ": " : "", msg);
  PetscFunctionReturn(0);
}

/* Closes a file opened by NNH5OpenRead() (or H5Fcreate()); sets *fid to -1. */
PetscErrorCode NNH5Close(int64_t *fid)
{
  PetscFunctionBegin;
  if (*fid >= 0) {
    hid_t f = *fid;
    *fid    = -1;
    if (H5Fclose(f) < 0) NNH5Fail(f, PETSC_ERR_FILE_WRITE, "closing the file failed");
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- links */
/*
   Whether a link exists at path ("optimizer/exp_avg/fc1.weight"); missing intermediate groups
   give PETSC_FALSE, not an error.
*/
PetscErrorCode NNH5Exists(int64_t fid, const char path[], PetscBool *flg)
{
  char   p[PETSC_MAX_PATH_LEN];
  size_t len;

  PetscFunctionBegin;
  *flg = PETSC_FALSE;
  PetscCall(PetscStrncpy(p, path, sizeof(p)));
  PetscCall(PetscStrlen(p, &len));
  if (!len) PetscFunctionReturn(0);
  for (size_t i = 0; i <= len; i++) {
    if (p[i] == '/' || p[i] == 0) {
      char   c = p[i];
      htri_t e;
      if (i == 0) continue; /* absolute path: the root always exists */
      p[i] = 0;
      e    = H5Lexists(fid, p, H5P_DEFAULT);
      p[i] = c;
      if (e < 0) NNH5Fail(fid, PETSC_ERR_LIB, "cannot look up %s", path);
      if (!e) PetscFunctionReturn(0);
    }
  }
  *flg = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Whether path exists and is a dataset. */
PetscErrorCode NNH5IsDataset(int64_t fid, const char path[], PetscBool *flg)
{
  hid_t     obj;
  H5I_type_t type;

  PetscFunctionBegin;
  PetscCall(NNH5Exists(fid, path, flg));
  if (!*flg) PetscFunctionReturn(0);
  obj = H5Oopen(fid, path, H5P_DEFAULT);
  if (obj < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot open %s (a dangling link?)", path);
  type = H5Iget_type(obj);
  H5Oclose(obj);
  *flg = (PetscBool)(type == H5I_DATASET);
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- datasets */
static PetscErrorCode NNH5Write(hid_t fid, const char path[], PetscInt ndim, const PetscInt dims[], hid_t filetype, hid_t memtype, const void *data)
{
  hsize_t   hd[NN_H5_MAX_DIM];
  hid_t     space = -1, lcpl = -1, dset = -1;
  PetscBool exists;
  herr_t    st;

  PetscFunctionBegin;
  PetscCheck(ndim >= 0 && ndim <= NN_H5_MAX_DIM, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Dataset %s: %" PetscInt_FMT " dimensions, at most %d", path, ndim, NN_H5_MAX_DIM);
  for (PetscInt i = 0; i < ndim; i++) {
    PetscCheck(dims[i] >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Dataset %s: negative dimension", path);
    hd[i] = (hsize_t)dims[i];
  }
  PetscCall(NNH5Exists(fid, path, &exists));
  if (exists && H5Ldelete(fid, path, H5P_DEFAULT) < 0) NNH5Fail(fid, PETSC_ERR_FILE_WRITE, "cannot replace %s", path);
  space = ndim ? H5Screate_simple((int)ndim, hd, NULL) : H5Screate(H5S_SCALAR);
  if (space < 0) NNH5Fail(fid, PETSC_ERR_LIB, "cannot create the dataspace of %s", path);
  lcpl = H5Pcreate(H5P_LINK_CREATE);
  if (lcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0) {
    H5Sclose(space);
    NNH5Fail(fid, PETSC_ERR_LIB, "cannot create a link property list");
  }
  dset = H5Dcreate2(fid, path, filetype, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(lcpl);
  if (dset < 0) {
    H5Sclose(space);
    NNH5Fail(fid, PETSC_ERR_FILE_WRITE, "cannot create dataset %s", path);
  }
  st = H5Dwrite(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(dset);
  H5Sclose(space);
  if (st < 0) NNH5Fail(fid, PETSC_ERR_FILE_WRITE, "cannot write dataset %s", path);
  PetscFunctionReturn(0);
}

/* shape of an open dataset */
static PetscErrorCode NNH5DatasetShape(hid_t fid, hid_t dset, const char path[], PetscInt *ndim, PetscInt dims[])
{
  hid_t   space;
  int     nd;
  hsize_t hd[H5S_MAX_RANK];

  PetscFunctionBegin;
  space = H5Dget_space(dset);
  if (space < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot get the dataspace of %s", path);
  nd = H5Sget_simple_extent_ndims(space);
  if (nd >= 0 && nd <= H5S_MAX_RANK) nd = H5Sget_simple_extent_dims(space, hd, NULL);
  H5Sclose(space);
  if (nd < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot get the shape of %s", path);
  PetscCheck(nd <= NN_H5_MAX_DIM, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Dataset %s has %d dimensions; at most %d are supported", path, nd, NN_H5_MAX_DIM);
  for (int i = 0; i < nd; i++) PetscCheck(hd[i] <= (hsize_t)PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Dataset %s has extent %llu in dimension %d, more than a PetscInt counts (%" PetscInt_FMT ")", path, (unsigned long long)hd[i], i, (PetscInt)PETSC_MAX_INT);
  *ndim = nd;
  for (int i = 0; i < nd; i++) dims[i] = (PetscInt)hd[i];
  PetscFunctionReturn(0);
}

static PetscErrorCode NNH5OpenDataset(hid_t fid, const char path[], hid_t *dset)
{
  PetscBool flg;
  char      file[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(NNH5IsDataset(fid, path, &flg));
  NNH5FileName(fid, sizeof(file), file);
  PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 file %s has no dataset %s", file, path);
  *dset = H5Dopen2(fid, path, H5P_DEFAULT);
  if (*dset < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot open dataset %s", path);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNH5Read(hid_t fid, const char path[], PetscInt ndim, const PetscInt dims[], hid_t memtype, void *data)
{
  hid_t    dset;
  PetscInt fnd, fd[NN_H5_MAX_DIM];
  herr_t   st;

  PetscFunctionBegin;
  PetscCall(NNH5OpenDataset(fid, path, &dset));
  {
    PetscErrorCode ierr = NNH5DatasetShape(fid, dset, path, &fnd, fd);
    if (ierr) H5Dclose(dset);
    PetscCall(ierr);
  }
  {
    PetscBool same = (PetscBool)(fnd == ndim);
    for (PetscInt i = 0; same && i < ndim; i++) same = (PetscBool)(fd[i] == dims[i]);
    if (!same) {
      char file[PETSC_MAX_PATH_LEN], a[128], b[128];
      H5Dclose(dset);
      NNH5FileName(fid, sizeof(file), file);
      PetscCall(NNH5ShapeToString(fnd, fd, sizeof(a), a));
      PetscCall(NNH5ShapeToString(ndim, dims, sizeof(b), b));
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 file %s: dataset %s has shape %s, expected %s", file, path, a, b);
    }
  }
  st = H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(dset);
  if (st < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot read dataset %s (truncated file or a type that does not convert to a number?)", path);
  PetscFunctionReturn(0);
}

/*
   NNH5WriteArray - writes a double-precision dataset of the given shape at path (ndim 0: a scalar),
   creating intermediate groups and replacing an existing dataset
*/
PetscErrorCode NNH5WriteArray(int64_t fid, const char path[], PetscInt ndim, const PetscInt dims[], const PetscScalar data[])
{
  PetscFunctionBegin;
  PetscCall(NNH5Write(fid, path, ndim, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data));
  PetscFunctionReturn(0);
}

/*
   NNH5ReadArray - reads the dataset at path, which must have exactly the shape dims, converting
   its values (float, integer) to double
*/
PetscErrorCode NNH5ReadArray(int64_t fid, const char path[], PetscInt ndim, const PetscInt dims[], PetscScalar data[])
{
  PetscFunctionBegin;
  PetscCall(NNH5Read(fid, path, ndim, dims, H5T_NATIVE_DOUBLE, data));
  PetscFunctionReturn(0);
}

/* NNH5WriteInt64 - like NNH5WriteArray() for int64 values (counters, PyTorch's num_batches_tracked) */
PetscErrorCode NNH5WriteInt64(int64_t fid, const char path[], PetscInt ndim, const PetscInt dims[], const int64_t data[])
{
  PetscFunctionBegin;
  PetscCall(NNH5Write(fid, path, ndim, dims, H5T_STD_I64LE, H5T_NATIVE_INT64, data));
  PetscFunctionReturn(0);
}

/* NNH5ReadInt64 - like NNH5ReadArray() into int64 values */
PetscErrorCode NNH5ReadInt64(int64_t fid, const char path[], PetscInt ndim, const PetscInt dims[], int64_t data[])
{
  PetscFunctionBegin;
  PetscCall(NNH5Read(fid, path, ndim, dims, H5T_NATIVE_INT64, data));
  PetscFunctionReturn(0);
}

/* NNH5WriteUInt64 - like NNH5WriteArray() for uint64 values (random-number generator state) */
PetscErrorCode NNH5WriteUInt64(int64_t fid, const char path[], PetscInt ndim, const PetscInt dims[], const uint64_t data[])
{
  PetscFunctionBegin;
  PetscCall(NNH5Write(fid, path, ndim, dims, H5T_STD_U64LE, H5T_NATIVE_UINT64, data));
  PetscFunctionReturn(0);
}

/* NNH5ReadUInt64 - like NNH5ReadArray() into uint64 values */
PetscErrorCode NNH5ReadUInt64(int64_t fid, const char path[], PetscInt ndim, const PetscInt dims[], uint64_t data[])
{
  PetscFunctionBegin;
  PetscCall(NNH5Read(fid, path, ndim, dims, H5T_NATIVE_UINT64, data));
  PetscFunctionReturn(0);
}

/*
   NNH5GetShape - the shape of the dataset at path (dims must hold NN_H5_MAX_DIM entries);
   an error naming the file and the dataset if there is none
*/
PetscErrorCode NNH5GetShape(int64_t fid, const char path[], PetscInt *ndim, PetscInt dims[])
{
  hid_t          dset;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNH5OpenDataset(fid, path, &dset));
  ierr = NNH5DatasetShape(fid, dset, path, ndim, dims);
  H5Dclose(dset);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*
   NNH5ReadHyperslab - reads the first nrows entries along the first dimension of the dataset at
   path (all of them if nrows <= 0 or larger than the dataset), converted to double, in C order
*/
PetscErrorCode NNH5ReadHyperslab(int64_t fid, const char path[], PetscInt nrows, PetscScalar data[])
{
  hid_t    dset, fspace = -1, mspace = -1;
  PetscInt nd, d[NN_H5_MAX_DIM];
  hsize_t  start[NN_H5_MAX_DIM] = {0}, count[NN_H5_MAX_DIM];
  herr_t   st = -1;

  PetscFunctionBegin;
  PetscCall(NNH5OpenDataset(fid, path, &dset));
  {
    PetscErrorCode ierr = NNH5DatasetShape(fid, dset, path, &nd, d);
    if (ierr) H5Dclose(dset);
    PetscCall(ierr);
  }
  if (nd == 0 || nrows <= 0 || nrows >= d[0]) {
    st = H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  } else {
    for (PetscInt i = 0; i < nd; i++) count[i] = (hsize_t)d[i];
    count[0] = (hsize_t)nrows;
    fspace   = H5Dget_space(dset);
    mspace   = H5Screate_simple((int)nd, count, NULL);
    if (fspace >= 0 && mspace >= 0 && H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL) >= 0) st = H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, fspace, H5P_DEFAULT, data);
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
  }
  H5Dclose(dset);
  if (st < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot read dataset %s (truncated file or a type that does not convert to a number?)", path);
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- string attributes */
/*
   NNH5WriteAttributeString - sets the string attribute name of the object at objpath ("/" for the
   root; missing groups are created) to value, as a variable-length UTF-8 string (what h5py writes)
*/
PetscErrorCode NNH5WriteAttributeString(int64_t fid, const char objpath[], const char name[], const char value[])
{
  hid_t     type = -1, space = -1, attr = -1, grp = -1;
  htri_t    ex;
  PetscBool exists = PETSC_TRUE, isroot;
  herr_t    st   = -1;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(objpath, "/", &isroot));
  if (!isroot) PetscCall(NNH5Exists(fid, objpath, &exists));
  if (!exists) {
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    if (lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0) grp = H5Gcreate2(fid, objpath, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (lcpl >= 0) H5Pclose(lcpl);
    if (grp < 0) NNH5Fail(fid, PETSC_ERR_FILE_WRITE, "cannot create group %s", objpath);
    H5Gclose(grp);
  }
  ex = H5Aexists_by_name(fid, objpath, name, H5P_DEFAULT);
  if (ex < 0) NNH5Fail(fid, PETSC_ERR_LIB, "cannot look up attribute %s of %s", name, objpath);
  if (ex > 0 && H5Adelete_by_name(fid, objpath, name, H5P_DEFAULT) < 0) NNH5Fail(fid, PETSC_ERR_FILE_WRITE, "cannot replace attribute %s of %s", name, objpath);
  type = H5Tcopy(H5T_C_S1);
  if (type >= 0 && H5Tset_size(type, H5T_VARIABLE) >= 0 && H5Tset_cset(type, H5T_CSET_UTF8) >= 0) {
    space = H5Screate(H5S_SCALAR);
    if (space >= 0) attr = H5Acreate_by_name(fid, objpath, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0) st = H5Awrite(attr, type, &value);
  }
  if (attr >= 0) H5Aclose(attr);
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  if (st < 0) NNH5Fail(fid, PETSC_ERR_FILE_WRITE, "cannot write attribute %s of %s", name, objpath);
  PetscFunctionReturn(0);
}

/*
   NNH5ReadAttributeString - reads a string attribute (fixed or variable length) of the object at
   objpath; found is PETSC_FALSE (and value "") when the object or the attribute does not exist
*/
PetscErrorCode NNH5ReadAttributeString(int64_t fid, const char objpath[], const char name[], size_t len, char value[], PetscBool *found)
{
  hid_t     attr = -1, ftype = -1, mtype = -1, space = -1;
  PetscBool exists = PETSC_TRUE, isroot;
  htri_t    ex, isvar;
  herr_t    st   = -1;

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  if (len) value[0] = 0;
  PetscCall(PetscStrcmp(objpath, "/", &isroot));
  if (!isroot) PetscCall(NNH5Exists(fid, objpath, &exists));
  if (!exists) PetscFunctionReturn(0);
  ex = H5Aexists_by_name(fid, objpath, name, H5P_DEFAULT);
  if (ex < 0) NNH5Fail(fid, PETSC_ERR_LIB, "cannot look up attribute %s of %s", name, objpath);
  if (!ex) PetscFunctionReturn(0);
  attr = H5Aopen_by_name(fid, objpath, name, H5P_DEFAULT, H5P_DEFAULT);
  if (attr < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot open attribute %s of %s", name, objpath);
  ftype = H5Aget_type(attr);
  space = H5Aget_space(attr);
  if (ftype < 0 || space < 0 || H5Tget_class(ftype) != H5T_STRING || H5Sget_simple_extent_npoints(space) != 1) {
    char file[PETSC_MAX_PATH_LEN];
    if (ftype >= 0) H5Tclose(ftype);
    if (space >= 0) H5Sclose(space);
    H5Aclose(attr);
    NNH5FileName(fid, sizeof(file), file);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "HDF5 file %s: attribute %s of %s is not a single string", file, name, objpath);
  }
  isvar = H5Tis_variable_str(ftype);
  mtype = H5Tcopy(H5T_C_S1);
  if (isvar > 0) {
    char *s = NULL;
    if (H5Tset_size(mtype, H5T_VARIABLE) >= 0 && H5Tset_cset(mtype, H5Tget_cset(ftype)) >= 0) st = H5Aread(attr, mtype, &s);
    if (st >= 0 && s) {
      snprintf(value, len, "%s", s);
      H5free_memory(s);
    }
  } else if (isvar == 0) {
    size_t sz = H5Tget_size(ftype);
    char  *s;
    PetscCall(PetscCalloc1(sz + 1, &s));
    if (H5Tset_size(mtype, sz + 1) >= 0 && H5Tset_strpad(mtype, H5T_STR_NULLTERM) >= 0) st = H5Aread(attr, mtype, s);
    if (st >= 0) snprintf(value, len, "%s", s);
    PetscCall(PetscFree(s));
  }
  H5Tclose(mtype);
  H5Tclose(ftype);
  H5Sclose(space);
  H5Aclose(attr);
  if (st < 0) NNH5Fail(fid, PETSC_ERR_FILE_READ, "cannot read attribute %s of %s", name, objpath);
  *found = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- listing */
/* NNH5ListRoot - "x (100,4), y (100), optimizer/": the top-level objects of a file, for error messages */
PetscErrorCode NNH5ListRoot(int64_t fid, size_t len, char str[])
{
  H5G_info_t info;

  PetscFunctionBegin;
  if (!len) PetscFunctionReturn(0);
  str[0] = 0;
  if (H5Gget_info(fid, &info) < 0) PetscFunctionReturn(0);
  for (hsize_t i = 0; i < info.nlinks; i++) {
    char      name[256], item[400], shape[128];
    PetscBool isdset, exists;
    PetscInt  nd, d[NN_H5_MAX_DIM];
    ssize_t   n = H5Lget_name_by_idx(fid, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof(name), H5P_DEFAULT);
    if (n < 0 || (size_t)n >= sizeof(name)) continue;
    PetscCall(NNH5Exists(fid, name, &exists));
    if (!exists) continue;
    PetscCall(NNH5IsDataset(fid, name, &isdset));
    if (isdset) {
      PetscCall(NNH5GetShape(fid, name, &nd, d));
      PetscCall(NNH5ShapeToString(nd, d, sizeof(shape), shape));
      PetscCall(PetscSNPrintf(item, sizeof(item), "%s%s %s", str[0] ? ", " : "", name, shape));
    } else PetscCall(PetscSNPrintf(item, sizeof(item), "%s%s/", str[0] ? ", " : "", name));
    PetscCall(PetscStrlcat(str, item, len));
  }
  if (!info.nlinks) PetscCall(PetscStrncpy(str, "nothing", len));
  PetscFunctionReturn(0);
}
