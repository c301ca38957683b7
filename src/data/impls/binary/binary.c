/*
   PETSc binary data sets: what MatView()/VecView() write to a PETSC_VIEWER_BINARY viewer.

   The features are a Mat (rows = samples, columns = features; dense or AIJ) or a Vec holding the
   samples one after the other (-data_sample_size or -data_shape gives the sample size). The
   targets follow in the same file as a Vec of length N (labels or one value per sample) or N*k,
   or a Mat N x k, or come from -data_targets_file.

   The headers are scanned first so missing, truncated and foreign files give errors that name the
   file and say what is wrong; then each rank reads only its rows [rstart, rend) at their offsets
   (PetscBinarySeek/PetscBinaryRead: dense and AIJ Mats, Vecs), so a rank of a distributed data set
   holds (rend-rstart) * (sample size + target size) doubles.
*/
#include <petnn/private/nnimpl.h>
#include <sys/stat.h>

typedef struct {
  char         targets_file[PETSC_MAX_PATH_LEN];
  PetscInt     sample_size;
  NNShape      shape; /* -data_shape; ndim 0 when not given */
  PetscScalar *x, *y;
} NNData_Binary;

/* one object of a PETSc binary file */
typedef struct {
  PetscInt classid; /* MAT_FILE_CLASSID or VEC_FILE_CLASSID */
  PetscInt rows, cols;
  PetscInt nz;      /* Mat: nonzeros, MATRIX_BINARY_FORMAT_DENSE for dense storage */
  off_t    pos;     /* where the object starts in the file */
} NNBinaryObject;

/* reads the header at the current position and seeks past the object's data, checking the file is long enough */
static PetscErrorCode NNBinaryScanObject(const char file[], int fd, off_t filesize, PetscBool *found, NNBinaryObject *obj)
{
  PetscInt cnt, head[4];
  off_t    pos, need;
  size_t   isz = sizeof(PetscInt), ssz = sizeof(PetscScalar);

  PetscFunctionBegin;
  *found = PETSC_FALSE;
  PetscCall(PetscBinarySeek(fd, 0, PETSC_BINARY_SEEK_CUR, &pos));
  if (pos >= filesize) PetscFunctionReturn(0);
  PetscCall(PetscBinaryRead(fd, head, 1, &cnt, PETSC_INT));
  PetscCheck(cnt == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s is truncated at byte %lld", file, (long long)pos);
  obj->classid = head[0];
  obj->pos     = pos;
  if (head[0] == VEC_FILE_CLASSID) {
    PetscCall(PetscBinaryRead(fd, head + 1, 1, &cnt, PETSC_INT));
    PetscCheck(cnt == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s is truncated in the header of a Vec at byte %lld", file, (long long)pos);
    PetscCheck(head[1] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s: Vec at byte %lld has negative length %" PetscInt_FMT, file, (long long)pos, head[1]);
    obj->rows = head[1];
    obj->cols = 1;
    obj->nz   = head[1];
    need      = (off_t)(2 * isz + (size_t)head[1] * ssz);
    PetscCheck(pos + need <= filesize, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s is truncated: the Vec of length %" PetscInt_FMT " at byte %lld needs %lld bytes but the file has %lld", file, head[1], (long long)pos, (long long)need, (long long)(filesize - pos));
  } else if (head[0] == MAT_FILE_CLASSID) {
    PetscCall(PetscBinaryRead(fd, head + 1, 3, &cnt, PETSC_INT));
    PetscCheck(cnt == 3, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s is truncated in the header of a Mat at byte %lld", file, (long long)pos);
    PetscCheck(head[1] >= 0 && head[2] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s: Mat at byte %lld has negative size", file, (long long)pos);
    obj->rows = head[1];
    obj->cols = head[2];
    obj->nz   = head[3];
    /* rows * cols * 8 can exceed 64 bits: compare with what the file can hold first */
    PetscCheck(head[3] != MATRIX_BINARY_FORMAT_DENSE || !head[1] || (size_t)head[2] <= (size_t)(filesize / (off_t)ssz) / (size_t)head[1], PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s is truncated: the dense %" PetscInt_FMT " x %" PetscInt_FMT " Mat at byte %lld needs more bytes than the file has (%lld)", file, head[1], head[2], (long long)pos, (long long)filesize);
    if (head[3] == MATRIX_BINARY_FORMAT_DENSE) need = (off_t)(4 * isz + (size_t)head[1] * head[2] * ssz);
    else {
      PetscCheck(head[3] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s: Mat at byte %lld has an unknown storage format %" PetscInt_FMT, file, (long long)pos, head[3]);
      need = (off_t)(4 * isz + ((size_t)head[1] + head[3]) * isz + (size_t)head[3] * ssz);
    }
    PetscCheck(pos + need <= filesize, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary file %s is truncated: the %" PetscInt_FMT " x %" PetscInt_FMT " Mat at byte %lld needs %lld bytes but the file has %lld", file, head[1], head[2], (long long)pos, (long long)need, (long long)(filesize - pos));
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s is not a PETSc binary file of Mats and Vecs: found class id %" PetscInt_FMT " at byte %lld (a Mat is %d, a Vec %d)", file, head[0], (long long)pos, MAT_FILE_CLASSID, VEC_FILE_CLASSID);
  PetscCall(PetscBinarySeek(fd, pos + need, PETSC_BINARY_SEEK_SET, &pos));
  *found = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* headers of (at most) the first nmax objects of a file */
static PetscErrorCode NNBinaryScan(const char file[], const char option[], PetscInt nmax, PetscInt *n, NNBinaryObject obj[])
{
  PetscBool      exists, found = PETSC_TRUE;
  struct stat    st;
  int            fd;
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  *n = 0;
  PetscCall(PetscTestFile(file, 'r', &exists));
  PetscCheck(exists, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open PETSc binary data file %s: no such (readable) file (%s)", file, option);
  PetscCheck(stat(file, &st) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot stat PETSc binary data file %s", file);
  PetscCheck(st.st_size > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary data file %s is empty", file);
  PetscCall(PetscBinaryOpen(file, FILE_MODE_READ, &fd));
  while (*n < nmax && found && !ierr) {
    ierr = NNBinaryScanObject(file, fd, (off_t)st.st_size, &found, &obj[*n]);
    if (!ierr && found) (*n)++;
  }
  PetscCall(PetscBinaryClose(fd));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* reads rows [lo,hi) of an object as a row-major [hi-lo][cols] array: a Vec holds rows*cols values
   one row after the other; a Mat is dense ([M,N,-1] header, values by rows) or AIJ (row lengths,
   column indices, values) as MatView() writes them */
static PetscErrorCode NNBinaryReadRows_Private(int fd, const NNBinaryObject *obj, PetscInt cols, PetscInt lo, PetscInt hi, PetscScalar *out)
{
  size_t   isz = sizeof(PetscInt), ssz = sizeof(PetscScalar);
  PetscInt n = (hi - lo) * cols, *len = NULL, *col = NULL, off = 0, nzl = 0;
  off_t    pos;

  PetscFunctionBegin;
  if (hi <= lo) PetscFunctionReturn(0);
  if (obj->classid == VEC_FILE_CLASSID || obj->nz == MATRIX_BINARY_FORMAT_DENSE) {
    off_t head = obj->classid == VEC_FILE_CLASSID ? 2 : 4;
    PetscCall(PetscBinarySeek(fd, obj->pos + head * (off_t)isz + (off_t)lo * cols * (off_t)ssz, PETSC_BINARY_SEEK_SET, &pos));
    PetscCall(PetscBinaryRead(fd, out, n, NULL, PETSC_SCALAR));
    PetscFunctionReturn(0);
  }
  {
    PetscScalar   *v   = NULL;
    PetscErrorCode ierr;
    /* the three buffers are freed on every path: a corrupt file is an error the caller may catch */
    ierr = PetscMalloc1(hi, &len);
    if (!ierr) ierr = PetscBinarySeek(fd, obj->pos + 4 * (off_t)isz, PETSC_BINARY_SEEK_SET, &pos);
    if (!ierr) ierr = PetscBinaryRead(fd, len, hi, NULL, PETSC_INT);
    for (PetscInt i = 0; i < hi && !ierr; i++) {
      if (len[i] < 0 || len[i] > cols || (PetscInt64)(i < lo ? off : nzl) + len[i] > obj->nz) {
        ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "AIJ Mat: row %" PetscInt_FMT " has %" PetscInt_FMT " nonzeros; valid: 0 to %" PetscInt_FMT " columns and %" PetscInt_FMT " nonzeros in all", i, len[i], cols, obj->nz);
        break;
      }
      if (i < lo) off += len[i];
      else nzl += len[i];
    }
    if (!ierr) ierr = PetscMalloc1(nzl + 1, &col);
    if (!ierr) ierr = PetscMalloc1(nzl + 1, &v);
    if (!ierr) ierr = PetscArrayzero(out, n);
    if (!ierr) ierr = PetscBinarySeek(fd, obj->pos + (4 + (off_t)obj->rows + off) * (off_t)isz, PETSC_BINARY_SEEK_SET, &pos);
    if (!ierr) ierr = PetscBinaryRead(fd, col, nzl, NULL, PETSC_INT);
    if (!ierr) ierr = PetscBinarySeek(fd, obj->pos + (4 + (off_t)obj->rows + obj->nz) * (off_t)isz + off * (off_t)ssz, PETSC_BINARY_SEEK_SET, &pos);
    if (!ierr) ierr = PetscBinaryRead(fd, v, nzl, NULL, PETSC_SCALAR);
    for (PetscInt i = lo, k = 0; i < hi && !ierr; i++)
      for (PetscInt j = 0; j < len[i] && !ierr; j++, k++) {
        if (col[k] < 0 || col[k] >= cols) ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_UNEXPECTED, PETSC_ERROR_INITIAL, "Column index %" PetscInt_FMT " of row %" PetscInt_FMT " out of range [0,%" PetscInt_FMT ")", col[k], i, cols);
        else out[(i - lo) * cols + col[k]] = v[k];
      }
    PetscCall(PetscFree(v));
    PetscCall(PetscFree(col));
    PetscCall(PetscFree(len));
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNBinaryReadRows(const char file[], const NNBinaryObject *obj, PetscInt cols, PetscInt lo, PetscInt hi, PetscScalar *out)
{
  int            fd;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscBinaryOpen(file, FILE_MODE_READ, &fd));
  ierr = NNBinaryReadRows_Private(fd, obj, cols, lo, hi, out);
  PetscCall(PetscBinaryClose(fd));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetUp_Binary_Private(NNData d)
{
  NNData_Binary *b      = (NNData_Binary *)d->data;
  const char    *prefix = ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "";
  NNBinaryObject obj[2], tobj;
  PetscInt       nobj, N, sz, ntarget, n, tlen;
  char           opt[128], s[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sdata_file", prefix));
  PetscCall(NNBinaryScan(d->filename, opt, b->targets_file[0] ? 1 : 2, &nobj, obj));
  PetscCheck(nobj >= 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary data file %s holds no Mat or Vec", d->filename);

  /* features and the sample shape */
  if (obj[0].classid == MAT_FILE_CLASSID) {
    N  = obj[0].rows;
    sz = obj[0].cols;
    PetscCheck(!b->sample_size || b->sample_size == sz, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-%sdata_sample_size %" PetscInt_FMT " but the features Mat in %s has %" PetscInt_FMT " columns", prefix, b->sample_size, d->filename, sz);
  } else {
    PetscCheck(b->sample_size > 0 || b->shape.ndim > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "The features in %s are a Vec of length %" PetscInt_FMT ": give the size of one sample with -%sdata_sample_size <k> or its shape with -%sdata_shape <c,h,w>", d->filename, obj[0].rows, prefix, prefix);
    sz = b->shape.ndim ? NNShapeSize(&b->shape) : b->sample_size;
    PetscCheck(!b->sample_size || !b->shape.ndim || b->sample_size == sz, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-%sdata_sample_size %" PetscInt_FMT " and -%sdata_shape (size %" PetscInt_FMT ") disagree", prefix, b->sample_size, prefix, sz);
    PetscCheck(obj[0].rows % sz == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "The features Vec in %s has length %" PetscInt_FMT ", not a multiple of the sample size %" PetscInt_FMT, d->filename, obj[0].rows, sz);
    N = obj[0].rows / sz;
  }
  PetscCheck(N > 0 && sz > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "The features in %s are empty", d->filename);
  if (b->shape.ndim) {
    PetscCall(NNShapeToString(&b->shape, sizeof(s), s));
    PetscCheck(NNShapeSize(&b->shape) == sz, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "-%sdata_shape %s has %" PetscInt_FMT " entries but the samples in %s have %" PetscInt_FMT, prefix, s, NNShapeSize(&b->shape), d->filename, sz);
    d->shape = b->shape;
  } else PetscCall(NNShapeSet(&d->shape, 1, &sz));

  /* targets: the next object, or the first one of -data_targets_file */
  if (b->targets_file[0]) {
    PetscInt nt;
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sdata_targets_file", prefix));
    PetscCall(NNBinaryScan(b->targets_file, opt, 1, &nt, &tobj));
    PetscCheck(nt == 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary targets file %s holds no Mat or Vec", b->targets_file);
  } else {
    PetscCheck(nobj == 2, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "PETSc binary data file %s holds the features but no targets: append the targets Vec (VecView() after MatView()) or give -%sdata_targets_file <file>", d->filename, prefix);
    tobj = obj[1];
  }
  if (tobj.classid == MAT_FILE_CLASSID) {
    PetscCheck(tobj.rows == N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "The targets Mat in %s has %" PetscInt_FMT " rows but there are %" PetscInt_FMT " samples", b->targets_file[0] ? b->targets_file : d->filename, tobj.rows, N);
    ntarget = tobj.cols;
  } else {
    tlen = tobj.rows;
    PetscCheck(tlen > 0 && tlen % N == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "The targets Vec in %s has length %" PetscInt_FMT ", not a positive multiple of the %" PetscInt_FMT " samples", b->targets_file[0] ? b->targets_file : d->filename, tlen, N);
    ntarget = tlen / N;
  }
  PetscCheck(ntarget > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "The targets in %s are empty", b->targets_file[0] ? b->targets_file : d->filename);

  /* read this rank's rows: the files are known to be complete */
  PetscCall(NNDataSetSizes_Private(d, N));
  n = d->rend - d->rstart;
  PetscCall(PetscMalloc1((size_t)n * sz + 1, &b->x));
  PetscCall(PetscMalloc1((size_t)n * ntarget + 1, &b->y));
  PetscCall(NNBinaryReadRows(d->filename, &obj[0], sz, d->rstart, d->rend, b->x));
  PetscCall(NNBinaryReadRows(b->targets_file[0] ? b->targets_file : d->filename, &tobj, ntarget, d->rstart, d->rend, b->y));
  d->ntarget = ntarget;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetUp_Binary(NNData d)
{
  NNData_Binary *b      = (NNData_Binary *)d->data;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCheck(d->filename && d->filename[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "PETSc binary data set needs a file: give -%sdata_file <file> or call NNDataSetFileName()", ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "");
  PetscCall(PetscFree(b->x));
  PetscCall(PetscFree(b->y));
  ierr = NNDataSetUp_Binary_Private(d);
  if (ierr) { /* leave nothing behind: the caller may catch the error and go on */
    (void)PetscFree(b->x);
    (void)PetscFree(b->y);
  }
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataGetBatch_Binary(NNData d, PetscInt n, const PetscInt ids[], PetscScalar *x, PetscScalar *t)
{
  NNData_Binary *b = (NNData_Binary *)d->data;

  PetscFunctionBegin;
  PetscCall(NNDataCopySamples(d, b->x, b->y, n, ids, x, t));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetFromOptions_Binary(NNData d, NNOptionItems PetscOptionsObject)
{
  NNData_Binary *b = (NNData_Binary *)d->data;
  PetscInt       dims[NN_MAX_DIM], nd = NN_MAX_DIM;
  PetscBool      flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "PETSc binary data-set options");
  PetscCall(PetscOptionsString("-data_targets_file", "PETSc binary file with the targets (default: they follow the features in -data_file)", "NNDATABINARY", b->targets_file, b->targets_file, sizeof(b->targets_file), NULL));
  PetscCall(PetscOptionsInt("-data_sample_size", "Entries per sample when the features are a Vec", "NNDATABINARY", b->sample_size, &b->sample_size, NULL));
  PetscCheck(b->sample_size >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-%sdata_sample_size %" PetscInt_FMT " must be positive", ((PetscObject)d)->prefix ? ((PetscObject)d)->prefix : "", b->sample_size);
  PetscCall(PetscOptionsIntArray("-data_shape", "Shape of one sample, e.g. 1,28,28", "NNDATABINARY", dims, &nd, &flg));
  if (flg) PetscCall(NNShapeSet(&b->shape, nd, dims));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataView_Binary(NNData d, PetscViewer v)
{
  NNData_Binary *b = (NNData_Binary *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "file %s%s%s\n", d->filename ? d->filename : "(none)", b->targets_file[0] ? ", targets " : "", b->targets_file));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataDestroy_Binary(NNData d)
{
  NNData_Binary *b = (NNData_Binary *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(b->x));
  PetscCall(PetscFree(b->y));
  PetscCall(PetscFree(d->data));
  PetscFunctionReturn(0);
}

/*MC
   NNDATABINARY - "binary": PETSc binary files as written by MatView() and VecView() to a
   PETSC_VIEWER_BINARY viewer

   Options Database Keys:
+  -data_file <file> - features, then (unless -data_targets_file) targets
.  -data_targets_file <file> - targets in a separate file
.  -data_sample_size <k> - entries per sample when the features are a Vec
-  -data_shape <c,h,w> - shape of one sample (for a Mat, its columns are the flattened sample)

   Notes:
   The features are a Mat with one row per sample (dense or AIJ) or a Vec of N*k entries; the
   targets a Vec of length N (class labels or one value per sample) or N*k, or an N x k Mat.
   Writing a data set from PETSc:
.vb
   PetscViewerBinaryOpen(PETSC_COMM_WORLD, "train.dat", FILE_MODE_WRITE, &viewer);
   MatView(X, viewer);   // N x d features
   VecView(y, viewer);   // N labels
.ve

   Level: beginner

.seealso: `NNDATAHDF5`, `NNDATAIDX`, `NNDataSetFileName()`
M*/
PETSC_INTERN PetscErrorCode NNDataCreate_Binary(NNData d)
{
  NNData_Binary *b;

  PetscFunctionBegin;
  PetscCall(PetscNew(&b));
  d->data                = b;
  d->ops->setup          = NNDataSetUp_Binary;
  d->ops->getbatch       = NNDataGetBatch_Binary;
  d->ops->setfromoptions = NNDataSetFromOptions_Binary;
  d->ops->view           = NNDataView_Binary;
  d->ops->destroy        = NNDataDestroy_Binary;
  PetscFunctionReturn(0);
}
