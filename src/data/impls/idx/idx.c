/*
   IDX data sets (MNIST, Fashion-MNIST), gzipped or plain, read through zlib.
   Pixels stay uint8 in memory and are scaled to [0,1] when a batch is filled (torchvision's ToTensor).
   A rank of a distributed data set decompresses the files only up to the end of its rows and keeps
   its rows: (rend-rstart) * (H*W + 1) bytes.
*/
#include <petnn/private/nnimpl.h>
#include <zlib.h>

#define NN_IDX_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

typedef struct {
  char           dir[PETSC_MAX_PATH_LEN], split[32];
  char           images[PETSC_MAX_PATH_LEN], labels[PETSC_MAX_PATH_LEN]; /* explicit files override dir/split */
  unsigned char *pixels, *classes; /* this rank's rows [rstart, rend) */
} NNData_IDX;

/* opens an IDX file and reads its header: magic 0x0000 0x08 ndim, then ndim big-endian uint32 sizes */
static PetscErrorCode OpenIDX(const char file[], PetscInt expect_ndim, gzFile *f, PetscInt dims[])
{
  unsigned char head[4], sz[4];
  PetscBool     exists;

  PetscFunctionBegin;
  PetscCall(PetscTestFile(file, 'r', &exists));
  PetscCheck(exists, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot read IDX file %s: install Debian's dataset-fashion-mnist package (files in %s) or point -data_dir / -data_images / -data_labels at the files", file, NN_IDX_DEFAULT_DIR);
  *f = gzopen(file, "rb");
  PetscCheck(*f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open IDX file %s", file);
  if (gzread(*f, head, 4) != 4 || head[0] || head[1] || head[2] != 0x08 || head[3] != expect_ndim) {
    gzclose(*f);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s is not an IDX file of unsigned bytes with %" PetscInt_FMT " dimensions (bad magic number)", file, expect_ndim);
  }
  for (PetscInt i = 0; i < expect_ndim; i++) {
    uint32_t dim;
    if (gzread(*f, sz, 4) != 4) {
      gzclose(*f);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "IDX file %s is truncated in its header", file);
    }
    dim = ((uint32_t)sz[0] << 24) | ((uint32_t)sz[1] << 16) | ((uint32_t)sz[2] << 8) | (uint32_t)sz[3];
    if (dim > (uint32_t)PETSC_MAX_INT) {
      gzclose(*f);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "IDX file %s: dimension %" PetscInt_FMT " is %u, more than this PETSc's PetscInt holds (%" PetscInt_FMT "); a corrupt header?", file, i, (unsigned)dim, (PetscInt)PETSC_MAX_INT);
    }
    dims[i] = (PetscInt)dim;
  }
  PetscFunctionReturn(0);
}

/* ReadIDXRows() without the checks: *got counts the bytes found up to the end of row hi */
static PetscErrorCode ReadIDXRows_Private(gzFile f, size_t rowsize, PetscInt lo, PetscInt hi, unsigned char **data, size_t *got)
{
  size_t         total = rowsize * (size_t)(hi - lo), cap = 0;
  unsigned char *skip;

  PetscFunctionBegin;
  *got = 0;
  PetscCall(PetscMalloc1(1 << 16, &skip));
  for (size_t left = rowsize * (size_t)lo; left > 0;) {
    int r = gzread(f, skip, (unsigned)PetscMin(left, (size_t)1 << 16));
    if (r <= 0) break;
    left -= (size_t)r;
    *got += (size_t)r;
  }
  PetscCall(PetscFree(skip));
  if (*got != rowsize * (size_t)lo) PetscFunctionReturn(0);
  /* the buffer grows with the data actually found, so a header promising more than the file holds
     is reported as truncated instead of allocating what it promises */
  *got = 0;
  PetscCall(PetscMalloc1(PetscMin(total, (size_t)1 << 20) + 1, data));
  cap = PetscMin(total, (size_t)1 << 20);
  while (*got < total) {
    int r;
    if (*got == cap) {
      cap = PetscMin(2 * cap, total);
      PetscCall(PetscRealloc(cap + 1, data));
    }
    r = gzread(f, *data + *got, (unsigned)PetscMin(cap - *got, (size_t)1 << 30));
    if (r <= 0) break;
    *got += (size_t)r;
  }
  *got += rowsize * (size_t)lo;
  PetscFunctionReturn(0);
}

/* decompresses the file up to the end of row hi (rows of rowsize bytes), keeping rows [lo,hi): the
   rows before lo are decompressed and dropped, the rows after hi are never read; closes f */
static PetscErrorCode ReadIDXRows(const char file[], gzFile f, size_t rowsize, PetscInt lo, PetscInt hi, unsigned char **data)
{
  size_t         got = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *data = NULL;
  if (rowsize > ((size_t)1 << 40) / ((size_t)hi + 1)) {
    gzclose(f);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "IDX file %s: %" PetscInt_FMT " samples of %zu bytes are more than a TiB; a corrupt header?", file, hi, rowsize);
  }
  ierr = ReadIDXRows_Private(f, rowsize, lo, hi, data, &got);
  gzclose(f);
  if (!ierr && got != rowsize * (size_t)hi) {
    PetscCall(PetscFree(*data));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "IDX file %s is truncated: expected %zu bytes of data up to sample %" PetscInt_FMT ", found %zu", file, rowsize * (size_t)hi, hi, got);
  }
  if (ierr) PetscCall(PetscFree(*data));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetUp_IDX(NNData d)
{
  NNData_IDX *idx = (NNData_IDX *)d->data;
  char        images[PETSC_MAX_PATH_LEN], labels[PETSC_MAX_PATH_LEN];
  PetscInt    di[3] = {0, 0, 0}, dl[1] = {0};
  gzFile      fi = NULL, fl = NULL;

  PetscFunctionBegin;
  PetscCall(PetscFree(idx->pixels));
  PetscCall(PetscFree(idx->classes));
  if (idx->images[0]) PetscCall(PetscStrncpy(images, idx->images, sizeof(images)));
  else PetscCall(PetscSNPrintf(images, sizeof(images), "%s/%s-images-idx3-ubyte.gz", idx->dir, idx->split));
  if (idx->labels[0]) PetscCall(PetscStrncpy(labels, idx->labels, sizeof(labels)));
  else PetscCall(PetscSNPrintf(labels, sizeof(labels), "%s/%s-labels-idx1-ubyte.gz", idx->dir, idx->split));
  PetscCall(OpenIDX(images, 3, &fi, di));
  {
    PetscErrorCode ierr = OpenIDX(labels, 1, &fl, dl);
    if (ierr) gzclose(fi);
    PetscCall(ierr);
  }
  if (di[0] != dl[0]) {
    gzclose(fi);
    gzclose(fl);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s has %" PetscInt_FMT " images but %s has %" PetscInt_FMT " labels", images, di[0], labels, dl[0]);
  }
  PetscCall(NNDataSetSizes_Private(d, di[0])); /* this rank's rows [rstart, rend) */
  {
    PetscErrorCode ierr = ReadIDXRows(images, fi, (size_t)di[1] * (size_t)di[2], d->rstart, d->rend, &idx->pixels);
    if (ierr) gzclose(fl);
    PetscCall(ierr);
  }
  PetscCall(ReadIDXRows(labels, fl, 1, d->rstart, d->rend, &idx->classes));
  d->ntarget = 1;
  PetscCall(NNShapeSet(&d->shape, 3, (PetscInt[]){1, di[1], di[2]}));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataGetBatch_IDX(NNData d, PetscInt n, const PetscInt ids[], PetscScalar *x, PetscScalar *t)
{
  NNData_IDX *idx = (NNData_IDX *)d->data;
  PetscInt    sz  = NNShapeSize(&d->shape);
  PetscScalar scale[256]; /* exact p/255.0 without a division per pixel */

  PetscFunctionBegin;
  for (int v = 0; v < 256; v++) scale[v] = v / 255.0;
  for (PetscInt i = 0; i < n; i++) {
    const unsigned char *p = idx->pixels + (size_t)ids[i] * sz;
    for (PetscInt j = 0; j < sz; j++) x[i * sz + j] = scale[p[j]];
    if (t) t[i] = idx->classes[ids[i]];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataSetFromOptions_IDX(NNData d, NNOptionItems PetscOptionsObject)
{
  NNData_IDX *idx = (NNData_IDX *)d->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "IDX data-set options");
  PetscCall(PetscOptionsString("-data_dir", "Directory of the IDX files", "NNDataIDXSetSplit", idx->dir, idx->dir, sizeof(idx->dir), NULL));
  PetscCall(PetscOptionsString("-data_split", "Split: train or t10k", "NNDataIDXSetSplit", idx->split, idx->split, sizeof(idx->split), NULL));
  PetscCall(PetscOptionsString("-data_images", "Images file (overrides dir and split)", "NNDataSetFromOptions", idx->images, idx->images, sizeof(idx->images), NULL));
  PetscCall(PetscOptionsString("-data_labels", "Labels file (overrides dir and split)", "NNDataSetFromOptions", idx->labels, idx->labels, sizeof(idx->labels), NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataView_IDX(NNData d, PetscViewer v)
{
  NNData_IDX *idx = (NNData_IDX *)d->data;

  PetscFunctionBegin;
  if (idx->images[0]) PetscCall(PetscViewerASCIIPrintf(v, "images %s, labels %s\n", idx->images, idx->labels));
  else PetscCall(PetscViewerASCIIPrintf(v, "split %s in %s\n", idx->split, idx->dir));
  { /* the labels are spread over the ranks */
    PetscInt nclasses = 0;
    for (PetscInt i = 0; i < d->rend - d->rstart; i++) nclasses = PetscMax(nclasses, (PetscInt)idx->classes[i] + 1);
    if (d->distributed) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nclasses, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)d)));
    PetscCall(PetscViewerASCIIPrintf(v, "%" PetscInt_FMT " classes\n", nclasses));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataIDXSetSplit_IDX(NNData d, const char split[])
{
  NNData_IDX *idx = (NNData_IDX *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(idx->split, split, sizeof(idx->split)));
  d->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataDestroy_IDX(NNData d)
{
  NNData_IDX *idx = (NNData_IDX *)d->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(idx->pixels));
  PetscCall(PetscFree(idx->classes));
  PetscCall(PetscObjectComposeFunction((PetscObject)d, "NNDataIDXSetSplit_C", NULL));
  PetscCall(PetscFree(d->data));
  PetscFunctionReturn(0);
}

/*MC
   NNDATAIDX - "idx": IDX image/label files such as Fashion-MNIST; samples have shape (1,H,W), targets are class labels

   Options Database Keys:
+  -data_dir <dir> - directory (default /usr/share/datasets/fashion-mnist, Debian's dataset-fashion-mnist)
.  -data_split <train,t10k> - file pair <split>-images-idx3-ubyte.gz and <split>-labels-idx1-ubyte.gz
.  -data_images <file> - images file, overrides dir and split
-  -data_labels <file> - labels file, overrides dir and split

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNDataCreate_IDX(NNData d)
{
  NNData_IDX *idx;

  PetscFunctionBegin;
  PetscCall(PetscNew(&idx));
  PetscCall(PetscStrncpy(idx->dir, NN_IDX_DEFAULT_DIR, sizeof(idx->dir)));
  PetscCall(PetscStrncpy(idx->split, "train", sizeof(idx->split)));
  d->data                = idx;
  d->ops->setup          = NNDataSetUp_IDX;
  d->ops->getbatch       = NNDataGetBatch_IDX;
  d->ops->setfromoptions = NNDataSetFromOptions_IDX;
  d->ops->view           = NNDataView_IDX;
  d->ops->destroy        = NNDataDestroy_IDX;
  PetscCall(PetscObjectComposeFunction((PetscObject)d, "NNDataIDXSetSplit_C", NNDataIDXSetSplit_IDX));
  PetscFunctionReturn(0);
}
