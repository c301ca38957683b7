/*
   Checkpoints and gradient dumps in HDF5, with PyTorch's state_dict names and shapes.

   Checkpoint layout (format "petnn-checkpoint-1", a root attribute):
     /<layer>.<tensor>                 every tensor in state_dict order: "fc1.weight" [256,784],
                                       "fc1.bias" [256], "bn1.running_mean" [C], ...; double, except
                                       "*.num_batches_tracked", an int64 scalar as in PyTorch
     /optimizer                        group with the string attribute "type" (sgd, adam, adamw)
     /optimizer/<state>/<layer>.<tensor>  optimizer state of each parameter ("exp_avg", "exp_avg_sq",
                                       "momentum_buffer"), shaped like the parameter
     /optimizer/step                   int64 scalar: optimizer steps taken
     /rng/state                        uint64[4]: the network's xoshiro256** state
     /rng/epoch_state                  uint64[4]: its state before the current epoch's shuffle
     /training/epoch, /training/step   int64 scalars: epochs completed, minibatch steps taken
     /training/batch                   int64: minibatches done in the current epoch (mid-epoch checkpoints)
     /training/epoch_loss, /training/epoch_correct  the current epoch's partial sums (monitor output)

   Files are built by rank 0 in memory (HDF5's core driver), written to "<file>.tmp.<pid>", synced
   and renamed over <file>, so a crash or a failure (a full disk) leaves the previous checkpoint
   intact. With several trainers
   (tournament training) each trainer's first rank writes its own "<stem>.trainer<t>.h5".
*/
#include <petnn/private/parallelimpl.h>
#include <hdf5.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define NN_CHECKPOINT_FORMAT "petnn-checkpoint-1"
#define NN_GRADIENTS_FORMAT  "petnn-gradients-1"

static PetscBool NNTensorIsCounter(const NNTensor *t)
{
  return (PetscBool)(t->kind == NN_TENSOR_BUFFER && !strcmp(t->name, "num_batches_tracked"));
}

/* where a tensor lives in the network's parameter (or a parameter-shaped) array or its buffer array */
static PetscInt NNTensorOffset(NNLayer l, const NNTensor *t)
{
  return (t->kind == NN_TENSOR_PARAM ? l->poff : l->boff) + t->offset;
}

/* ---------------------------------------------------------------- atomic files */
typedef struct {
  char  tmp[PETSC_MAX_PATH_LEN + 32];
  hid_t fid;
} NNAtomicFile;

/* creates "<file>.tmp.<pid>" for writing */
static PetscErrorCode NNAtomicCreate(const char file[], const char what[], NNAtomicFile *a)
{
  char      dir[PETSC_MAX_PATH_LEN], msg[256], *slash;
  PetscBool isdir;

  PetscFunctionBegin;
  a->fid = -1;
  PetscCall(PetscSNPrintf(a->tmp, sizeof(a->tmp), "%s.tmp.%d", file, (int)getpid()));
  PetscCall(PetscStrncpy(dir, file, sizeof(dir)));
  PetscCall(PetscStrrchr(dir, '/', &slash));
  if (slash == dir) PetscCall(PetscStrncpy(dir, ".", sizeof(dir))); /* no slash */
  else if (slash == dir + 1) dir[1] = 0;                            /* "/file" */
  else slash[-1] = 0;
  PetscCall(PetscTestDirectory(dir, 'w', &isdir));
  PetscCheck(isdir, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s %s: directory %s does not exist or is not writable", what, file, dir);
  PetscCall(NNH5SilenceErrors(PETSC_TRUE));
  { /* the file is built in memory and written by NNAtomicCommit(): HDF5 1.10 crashes in H5Fclose()
       (and at exit) after a failed write, so a full disk must fail in our write(), not in HDF5's */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fapl_core(fapl, (size_t)1 << 20, 0) >= 0) a->fid = H5Fcreate(a->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (fapl >= 0) H5Pclose(fapl);
  }
  PetscCall(NNH5ErrorMessage(sizeof(msg), msg));
  PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  PetscCheck(a->fid >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s %s: cannot create the temporary file %s%s%s", what, file, a->tmp, msg[0] ? ": " : "", msg);
  PetscFunctionReturn(0);
}

/* closes and removes the temporary file; never fails (it runs on error paths) */
static void NNAtomicAbort(NNAtomicFile *a)
{
  if (a->fid >= 0) {
    H5Fclose(a->fid);
    a->fid = -1;
  }
  if (a->tmp[0]) (void)unlink(a->tmp);
  a->tmp[0] = 0;
}

/* writes n bytes to fd; 0 or an errno */
static int NNWriteAll(int fd, const char *buf, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : ENOSPC;
    buf += w;
    n -= (size_t)w;
  }
  return 0;
}

/* writes the in-memory file to "<file>.tmp.<pid>", syncs it, then renames it over file */
static PetscErrorCode NNAtomicCommit(NNAtomicFile *a, const char file[], const char what[])
{
  char    msg[256], *image = NULL;
  ssize_t size;
  int     fd, err = 0, ok;

  PetscFunctionBegin;
  ok   = H5Fflush(a->fid, H5F_SCOPE_GLOBAL) >= 0;
  size = ok ? H5Fget_file_image(a->fid, NULL, 0) : -1;
  PetscCall(NNH5ErrorMessage(sizeof(msg), msg));
  PetscCheck(size > 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "Cannot write %s %s: HDF5 cannot make the file image%s%s", what, file, msg[0] ? ": " : "", msg);
  PetscCall(PetscMalloc1((size_t)size, &image));
  ok = H5Fget_file_image(a->fid, image, (size_t)size) == size;
  ok = (H5Fclose(a->fid) >= 0) && ok;
  a->fid = -1;
  if (!ok) PetscCall(PetscFree(image));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_LIB, "Cannot write %s %s: HDF5 cannot make the file image", what, file);
  fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) err = errno;
  else {
    err = NNWriteAll(fd, image, (size_t)size);
    if (!err && fsync(fd)) err = errno;
    if (close(fd) && !err) err = errno;
  }
  PetscCall(PetscFree(image));
  PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot write %s %s: cannot create the temporary file %s: %s", what, file, a->tmp, strerror(err));
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: writing %s failed (disk full?): %s", what, file, a->tmp, strerror(err));
  PetscCheck(rename(a->tmp, file) == 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s %s: renaming %s failed: %s", what, file, a->tmp, strerror(errno));
  a->tmp[0] = 0;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- tensor walks */
typedef struct {
  hid_t              fid;
  const char        *file;
  const char        *prefix;      /* "" or "optimizer/exp_avg/" */
  PetscBool          params_only; /* optimizer state: parameters only */
  const PetscScalar *theta, *buf; /* saving: sources */
  PetscScalar       *wtheta, *wbuf; /* loading: destinations */
  PetscBool          probe, ok;   /* loading optional state: check presence and shapes only */
  const char        *find;        /* NNCheckpointFindTensor(): name looked for */
  PetscBool          found;
} NNCheckpointCtx;

static PetscErrorCode NNCheckpointSaveTensor(NN net PETSC_UNUSED, NNLayer l, const char *name, NNTensor *t, void *vctx)
{
  NNCheckpointCtx   *c = (NNCheckpointCtx *)vctx;
  char               path[PETSC_MAX_PATH_LEN];
  const PetscScalar *src;

  PetscFunctionBegin;
  if (c->params_only && t->kind != NN_TENSOR_PARAM) PetscFunctionReturn(0);
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s%s", c->prefix, name));
  src = (t->kind == NN_TENSOR_PARAM ? c->theta : c->buf) + NNTensorOffset(l, t);
  if (NNTensorIsCounter(t)) {
    int64_t v = (int64_t)llround((double)PetscRealPart(src[0]));
    PetscCall(NNH5WriteInt64(c->fid, path, 0, NULL, &v));
  } else PetscCall(NNH5WriteArray(c->fid, path, t->ndim, t->dim, src));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNCheckpointLoadTensor(NN net, NNLayer l, const char *name, NNTensor *t, void *vctx)
{
  NNCheckpointCtx *c = (NNCheckpointCtx *)vctx;
  char             path[PETSC_MAX_PATH_LEN], a[128], b[128];
  PetscInt         nd, d[NN_H5_MAX_DIM];
  PetscBool        has, same;

  PetscFunctionBegin;
  if (c->params_only && t->kind != NN_TENSOR_PARAM) PetscFunctionReturn(0);
  if (c->probe && !c->ok) PetscFunctionReturn(0);
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s%s", c->prefix, name));
  PetscCall(NNH5IsDataset(c->fid, path, &has));
  if (!has && c->probe) {
    PetscCall(PetscInfo(net, "Checkpoint %s has no dataset %s\n", c->file, path));
    c->ok = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  PetscCheck(has, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s does not match the network: it has no dataset %s", c->file, path);
  PetscCall(NNH5GetShape(c->fid, path, &nd, d));
  same = (PetscBool)(nd == t->ndim);
  for (PetscInt i = 0; same && i < nd; i++) same = (PetscBool)(d[i] == t->dim[i]);
  if (NNTensorIsCounter(t) && t->size == 1 && (nd == 0 || (nd == 1 && d[0] == 1))) same = PETSC_TRUE; /* PyTorch stores a 0-d tensor */
  if (!same) {
    PetscCall(NNH5ShapeToString(nd, d, sizeof(a), a));
    PetscCall(NNH5ShapeToString(t->ndim, t->dim, sizeof(b), b));
    if (c->probe) {
      PetscCall(PetscInfo(net, "Checkpoint %s: dataset %s has shape %s, expected %s\n", c->file, path, a, b));
      c->ok = PETSC_FALSE;
      PetscFunctionReturn(0);
    }
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s does not match the network: dataset %s has shape %s, the network expects %s", c->file, path, a, b);
  }
  if (c->probe) PetscFunctionReturn(0);
  PetscCall(NNH5ReadArray(c->fid, path, nd, d, (t->kind == NN_TENSOR_PARAM ? c->wtheta : c->wbuf) + NNTensorOffset(l, t)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNCheckpointFindTensor(NN net PETSC_UNUSED, NNLayer l PETSC_UNUSED, const char *name, NNTensor *t PETSC_UNUSED, void *vctx)
{
  NNCheckpointCtx *c = (NNCheckpointCtx *)vctx;
  PetscBool        match;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(name, c->find, &match));
  if (match) c->found = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- save */
static PetscErrorCode NNCheckpointWriteContents(NN net, hid_t fid, const char file[], const PetscScalar *theta, const PetscScalar *buf, const PetscScalar *const state[])
{
  NNCheckpointCtx c;
  NNOpt           opt = net->opt;
  int64_t         v;
  char            prefix[128];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.fid   = fid;
  c.file  = file;
  c.theta = theta;
  c.buf   = buf;
  c.prefix = "";
  PetscCall(NNH5WriteAttributeString(fid, "/", "format", NN_CHECKPOINT_FORMAT));
  PetscCall(NNH5WriteAttributeString(fid, "/", "loss", net->loss));
  PetscCall(NNVisitTensors(net, NNCheckpointSaveTensor, &c));

  PetscCall(NNH5WriteAttributeString(fid, "optimizer", "type", ((PetscObject)opt)->type_name));
  c.params_only = PETSC_TRUE;
  c.prefix      = prefix;
  for (PetscInt i = 0; i < opt->nstate; i++) {
    PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "optimizer/%s/", opt->statename[i]));
    c.theta = state[i];
    PetscCall(NNVisitTensors(net, NNCheckpointSaveTensor, &c));
  }
  v = (int64_t)opt->nsteps;
  PetscCall(NNH5WriteInt64(fid, "optimizer/step", 0, NULL, &v));
  PetscCall(NNH5WriteUInt64(fid, "rng/state", 1, (PetscInt[]){4}, net->rng.s));
  PetscCall(NNH5WriteUInt64(fid, "rng/epoch_state", 1, (PetscInt[]){4}, net->rng_epoch.s));
  v = (int64_t)net->epoch;
  PetscCall(NNH5WriteInt64(fid, "training/epoch", 0, NULL, &v));
  v = (int64_t)net->step;
  PetscCall(NNH5WriteInt64(fid, "training/step", 0, NULL, &v));
  v = (int64_t)net->batch;
  PetscCall(NNH5WriteInt64(fid, "training/batch", 0, NULL, &v));
  v = (int64_t)net->epoch_correct;
  PetscCall(NNH5WriteInt64(fid, "training/epoch_correct", 0, NULL, &v));
  {
    PetscScalar L = net->epoch_loss;
    PetscCall(NNH5WriteArray(fid, "training/epoch_loss", 0, NULL, &L));
  }
  PetscFunctionReturn(0);
}

/* rank 0: everything that can fail, with the temporary file removed on failure */
static PetscErrorCode NNCheckpointSave_Rank0(NN net, const char file[])
{
  NNAtomicFile       a;
  const PetscScalar *theta, *buf, *state[NN_OPT_MAX_STATE];
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&a, sizeof(a)));
  a.fid = -1;
  PetscCall(NNAtomicCreate(file, "checkpoint", &a));
  PetscCall(VecGetArrayRead(net->theta, &theta));
  PetscCall(VecGetArrayRead(net->buf, &buf));
  for (PetscInt i = 0; i < net->opt->nstate; i++) PetscCall(VecGetArrayRead(net->opt->state[i], &state[i]));
  ierr = NNCheckpointWriteContents(net, a.fid, file, theta, buf, state);
  for (PetscInt i = 0; i < net->opt->nstate; i++) PetscCall(VecRestoreArrayRead(net->opt->state[i], &state[i]));
  PetscCall(VecRestoreArrayRead(net->buf, &buf));
  PetscCall(VecRestoreArrayRead(net->theta, &theta));
  if (!ierr) ierr = NNAtomicCommit(&a, file, "checkpoint");
  if (ierr) NNAtomicAbort(&a);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*@C
   NNCheckpointSave - saves the network's parameters, buffers, optimizer state, random-number
   generator and training counters to an HDF5 file, atomically

   Collective

   Input Parameters:
+  net - the network (set up)
-  file - the file name, conventionally ending in .h5

   Notes:
   Rank 0 writes "<file>.tmp.<pid>", flushes and closes it, and renames it over file: a failure
   (including a crash) leaves an existing checkpoint intact. The datasets are named and shaped
   like PyTorch's state_dict ("fc1.weight" [out,in], "fc1.bias" [out], "bn1.running_mean", ...),
   so h5py and torch load them directly. Besides the tensors the file holds
.vb
   /optimizer            attribute "type" (sgd, adam, adamw)
   /optimizer/<state>/<tensor>  e.g. optimizer/exp_avg/fc1.weight, shaped like the parameter
   /optimizer/step       int64, optimizer steps taken
   /rng/state            uint64[4], the generator state
   /rng/epoch_state      uint64[4], its state before the current epoch's shuffle
   /training/epoch       int64, epochs completed
   /training/step        int64, minibatch steps taken
   /training/batch       int64, minibatches done in the current epoch
   /training/epoch_loss, /training/epoch_correct  partial sums of the current epoch
.ve
   and the root attribute format = "petnn-checkpoint-1". NNTrain() calls this routine when
   -nn_checkpoint is given (every -nn_checkpoint_every epochs, -nn_checkpoint_steps steps or
   -nn_checkpoint_seconds seconds). With several trainers each trainer writes its own file
   "<stem>.trainer<t>.h5". An error on the writing rank is raised on every rank.

   Level: beginner

.seealso: `NNCheckpointLoad()`, `NNTrain()`, `NNSaveGradients()`
@*/
PetscErrorCode NNCheckpointSave(NN net, const char file[])
{
  MPI_Comm       comm;
  PetscMPIInt    rank = 0;
  PetscErrorCode ierr = 0;
  char           name[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidCharPointer(file, 2);
  PetscCall(NNSetUp(net));
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  if (net->par) PetscCallMPI(MPI_Comm_rank(net->par->tcomm, &rank)); /* the parameters are the same on every rank of a trainer */
  else PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(NNParallelFileName(net, file, sizeof(name), name));
  PetscCall(PetscLogEventBegin(NN_Checkpoint, net, 0, 0, 0));
  if (rank == 0) {
    PetscCall(NNH5SilenceErrors(PETSC_TRUE));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* raised on every rank below */
    ierr = NNCheckpointSave_Rank0(net, name);
    PetscCall(PetscPopErrorHandler());
    PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  }
  PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
  PetscCall(NNCollectiveError(comm, ierr, PETSC_FALSE, ""));
  PetscCall(PetscInfo(net, "Saved checkpoint %s: %" PetscInt_FMT " epochs, %" PetscInt_FMT " steps, batch %" PetscInt_FMT "\n", name, net->epoch, net->step, net->batch));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- load */
typedef struct {
  hid_t        fid;
  PetscScalar *theta, *buf, *state; /* read into copies: a failed load leaves the network unchanged */
  /* what was found: [0] optimizer state loaded, [1] nsteps, [2] rng found, [3..6] rng, [7] counters found, [8] epoch, [9] step,
     [10] position in the epoch found, [11] batch, [12..15] rng at the epoch start, [16] epoch_correct */
  int64_t      info[17];
  PetscReal    epoch_loss;
} NNCheckpointLoadData;

static PetscErrorCode NNCheckpointRead_Rank0(NN net, const char file[], NNCheckpointLoadData *ld)
{
  NNCheckpointCtx c;
  NNOpt           opt = net->opt;
  char            format[64], otype[64], name[PETSC_MAX_PATH_LEN];
  PetscBool       found, has;
  PetscInt        np, nb;
  H5G_info_t      ginfo;

  PetscFunctionBegin;
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(VecGetSize(net->buf, &nb));
  PetscCall(NNH5OpenRead(file, "checkpoint", &ld->fid));
  PetscCall(NNH5ReadAttributeString(ld->fid, "/", "format", sizeof(format), format, &found));
  if (found) {
    PetscBool ok;
    PetscCall(PetscStrcmp(format, NN_CHECKPOINT_FORMAT, &ok));
    PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s has format \"%s\"; this PetNN reads \"%s\"", file, format, NN_CHECKPOINT_FORMAT);
  } else PetscCall(PetscInfo(net, "Checkpoint %s has no format attribute: reading it as a plain state_dict\n", file));

  /* every tensor of the network, with its shape */
  PetscCall(PetscMalloc1(np, &ld->theta));
  PetscCall(PetscMalloc1(nb, &ld->buf));
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.fid    = ld->fid;
  c.file   = file;
  c.prefix = "";
  c.wtheta = ld->theta;
  c.wbuf   = ld->buf;
  PetscCall(NNVisitTensors(net, NNCheckpointLoadTensor, &c));

  /* and no tensor the network lacks (like PyTorch's load_state_dict(strict=True)) */
  if (H5Gget_info(ld->fid, &ginfo) < 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot list the datasets of checkpoint %s", file);
  for (hsize_t i = 0; i < ginfo.nlinks; i++) {
    ssize_t len = H5Lget_name_by_idx(ld->fid, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof(name), H5P_DEFAULT);
    PetscCheck(len >= 0 && (size_t)len < sizeof(name), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot list the datasets of checkpoint %s", file);
    PetscCall(NNH5IsDataset(ld->fid, name, &has));
    if (!has) continue;
    c.find  = name;
    c.found = PETSC_FALSE;
    PetscCall(NNVisitTensors(net, NNCheckpointFindTensor, &c));
    PetscCheck(c.found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s does not match the network: it has dataset %s, which the network does not have", file, name);
  }

  /* optimizer state, if it is there and of the network's optimizer type */
  PetscCall(NNH5ReadAttributeString(ld->fid, "optimizer", "type", sizeof(otype), otype, &found));
  if (found) {
    PetscBool same;
    PetscCall(PetscStrcmp(otype, ((PetscObject)opt)->type_name, &same));
    if (same) {
      char prefix[128];
      c.params_only = PETSC_TRUE;
      c.prefix      = prefix;
      c.probe       = PETSC_TRUE;
      c.ok          = PETSC_TRUE;
      for (PetscInt i = 0; i < opt->nstate && c.ok; i++) {
        PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "optimizer/%s/", opt->statename[i]));
        PetscCall(NNVisitTensors(net, NNCheckpointLoadTensor, &c));
      }
      PetscCall(NNH5IsDataset(ld->fid, "optimizer/step", &has));
      if (!has) {
        PetscCall(PetscInfo(net, "Checkpoint %s has no dataset optimizer/step\n", file));
        c.ok = PETSC_FALSE;
      }
      if (c.ok) {
        c.probe = PETSC_FALSE;
        if (opt->nstate) PetscCall(PetscMalloc1(opt->nstate * np, &ld->state));
        for (PetscInt i = 0; i < opt->nstate; i++) {
          PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "optimizer/%s/", opt->statename[i]));
          c.wtheta = ld->state + i * np;
          PetscCall(NNVisitTensors(net, NNCheckpointLoadTensor, &c));
        }
        PetscCall(NNH5ReadInt64(ld->fid, "optimizer/step", 0, NULL, &ld->info[1]));
        ld->info[0] = 1;
      } else PetscCall(PetscInfo(net, "Checkpoint %s: incomplete %s optimizer state; starting with fresh optimizer state\n", file, otype));
    } else PetscCall(PetscInfo(net, "Checkpoint %s holds %s optimizer state but the network uses %s; starting with fresh optimizer state\n", file, otype, ((PetscObject)opt)->type_name));
  } else PetscCall(PetscInfo(net, "Checkpoint %s has no optimizer state\n", file));

  PetscCall(NNH5IsDataset(ld->fid, "rng/state", &has));
  if (has) {
    PetscCall(NNH5ReadUInt64(ld->fid, "rng/state", 1, (PetscInt[]){4}, (uint64_t *)&ld->info[3]));
    ld->info[2] = 1;
  } else PetscCall(PetscInfo(net, "Checkpoint %s has no rng/state: the generator keeps its state\n", file));

  PetscCall(NNH5IsDataset(ld->fid, "training/epoch", &has));
  PetscCall(NNH5IsDataset(ld->fid, "training/step", &found));
  if (has && found) {
    PetscCall(NNH5ReadInt64(ld->fid, "training/epoch", 0, NULL, &ld->info[8]));
    PetscCall(NNH5ReadInt64(ld->fid, "training/step", 0, NULL, &ld->info[9]));
    PetscCheck(ld->info[8] >= 0 && ld->info[9] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s has negative training counters", file);
    ld->info[7] = 1;
  } else PetscCall(PetscInfo(net, "Checkpoint %s has no training/epoch and training/step: training starts at epoch 0\n", file));
  PetscCall(NNH5IsDataset(ld->fid, "training/batch", &has));
  PetscCall(NNH5IsDataset(ld->fid, "rng/epoch_state", &found));
  if (has && found && ld->info[7]) { /* a checkpoint written during an epoch */
    PetscCall(NNH5ReadInt64(ld->fid, "training/batch", 0, NULL, &ld->info[11]));
    PetscCall(NNH5ReadUInt64(ld->fid, "rng/epoch_state", 1, (PetscInt[]){4}, (uint64_t *)&ld->info[12]));
    PetscCheck(ld->info[11] >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "Checkpoint %s has a negative training/batch", file);
    PetscCall(NNH5IsDataset(ld->fid, "training/epoch_correct", &has));
    if (has) PetscCall(NNH5ReadInt64(ld->fid, "training/epoch_correct", 0, NULL, &ld->info[16]));
    PetscCall(NNH5IsDataset(ld->fid, "training/epoch_loss", &has));
    if (has) {
      PetscScalar L;
      PetscCall(NNH5ReadArray(ld->fid, "training/epoch_loss", 0, NULL, &L));
      ld->epoch_loss = PetscRealPart(L);
    }
    ld->info[10] = 1;
  }
  PetscCall(NNH5Close(&ld->fid));
  PetscFunctionReturn(0);
}

/* broadcasts the first n entries of a Vec's array from rank 0, where they are copied from src */
static PetscErrorCode NNBcastIntoVec(MPI_Comm comm, PetscMPIInt rank, const PetscScalar *src, Vec v)
{
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArray(v, &a));
  if (rank == 0 && n) PetscCall(PetscArraycpy(a, src, n));
  if (n) PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)n, MPIU_SCALAR, 0, comm));
  PetscCall(VecRestoreArray(v, &a));
  PetscFunctionReturn(0);
}

/*@C
   NNCheckpointLoad - loads a checkpoint written by NNCheckpointSave() (or a PyTorch state_dict
   saved with h5py) into the network

   Collective

   Input Parameters:
+  net - the network; it is set up first (NNSetUp()) and must have the checkpoint's architecture
-  file - the HDF5 file

   Notes:
   Rank 0 reads the file and broadcasts it. Every tensor of the network must be in the file with
   its shape, and the file may hold no other top-level dataset; otherwise the error names the
   dataset and both shapes, and the network is left unchanged. The optimizer state is restored
   when the file holds complete state of the network's optimizer type (else, with a note under
   -info, the optimizer starts fresh); the random-number generator and the epoch and step counters
   are restored when present, so NNTrain() continues the interrupted run bitwise.

   Level: beginner

.seealso: `NNCheckpointSave()`, `NNTrain()`
@*/
PetscErrorCode NNCheckpointLoad(NN net, const char file[])
{
  MPI_Comm             comm, tcomm;
  PetscMPIInt          rank;
  PetscErrorCode       ierr = 0;
  NNCheckpointLoadData ld;
  PetscInt             np;
  char                 name[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidCharPointer(file, 2);
  PetscCall(NNSetUp(net));
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  tcomm = net->par ? net->par->tcomm : comm; /* each trainer reads its own file */
  PetscCallMPI(MPI_Comm_rank(tcomm, &rank));
  PetscCall(NNParallelFileName(net, file, sizeof(name), name));
  PetscCall(PetscLogEventBegin(NN_Checkpoint, net, 0, 0, 0));
  PetscCall(PetscMemzero(&ld, sizeof(ld)));
  ld.fid = -1;
  if (rank == 0) {
    PetscCall(NNH5SilenceErrors(PETSC_TRUE));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* raised on every rank below */
    ierr = NNCheckpointRead_Rank0(net, name, &ld);
    PetscCall(PetscPopErrorHandler());
    if (ld.fid >= 0) H5Fclose(ld.fid);
    PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  }
  {
    PetscMPIInt any = ierr ? 1 : 0;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, comm));
    if (any) { /* the network is left unchanged */
      PetscCall(PetscFree(ld.theta));
      PetscCall(PetscFree(ld.buf));
      PetscCall(PetscFree(ld.state));
      PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
      PetscCall(NNCollectiveError(comm, ierr, PETSC_FALSE, ""));
    }
  }
  PetscCallMPI(MPI_Bcast(ld.info, 17, MPIU_INT64, 0, tcomm));
  PetscCallMPI(MPI_Bcast(&ld.epoch_loss, 1, MPIU_REAL, 0, tcomm));
  PetscCall(VecGetSize(net->theta, &np));
  PetscCall(NNBcastIntoVec(tcomm, rank, ld.theta, net->theta));
  PetscCall(NNBcastIntoVec(tcomm, rank, ld.buf, net->buf));
  if (ld.info[0]) {
    for (PetscInt i = 0; i < net->opt->nstate; i++) PetscCall(NNBcastIntoVec(tcomm, rank, ld.state ? ld.state + i * np : NULL, net->opt->state[i]));
    net->opt->nsteps = (PetscInt)ld.info[1];
  } else {
    for (PetscInt i = 0; i < net->opt->nstate; i++) PetscCall(VecZeroEntries(net->opt->state[i]));
    net->opt->nsteps = 0;
  }
  if (ld.info[2]) PetscCall(PetscMemcpy(net->rng.s, &ld.info[3], sizeof(net->rng.s)));
  if (ld.info[7]) {
    net->epoch = (PetscInt)ld.info[8];
    net->step  = (PetscInt)ld.info[9];
  }
  net->batch         = 0;
  net->epoch_loss    = 0;
  net->epoch_correct = 0;
  if (ld.info[10]) { /* continue inside the epoch: its permutation comes from the state at its start */
    net->batch         = (PetscInt)ld.info[11];
    net->epoch_correct = (PetscInt)ld.info[16];
    net->epoch_loss    = ld.epoch_loss;
    PetscCall(PetscMemcpy(net->rng_epoch.s, &ld.info[12], sizeof(net->rng_epoch.s)));
  }
  PetscCall(PetscFree(ld.theta));
  PetscCall(PetscFree(ld.buf));
  PetscCall(PetscFree(ld.state));
  PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
  PetscCall(PetscInfo(net, "Loaded checkpoint %s: %" PetscInt_FMT " epochs, %" PetscInt_FMT " steps, batch %" PetscInt_FMT ", optimizer state %s\n", name, net->epoch, net->step, net->batch, ld.info[0] ? "restored" : "fresh"));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- gradients */
typedef struct {
  hid_t              fid;
  const PetscScalar *dtheta;
} NNGradCtx;

static PetscErrorCode NNSaveGradientTensor(NN net PETSC_UNUSED, NNLayer l, const char *name, NNTensor *t, void *vctx)
{
  NNGradCtx *c = (NNGradCtx *)vctx;
  char       path[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  if (t->kind != NN_TENSOR_PARAM) PetscFunctionReturn(0);
  PetscCall(PetscSNPrintf(path, sizeof(path), "grad/%s", name));
  PetscCall(NNH5WriteArray(c->fid, path, t->ndim, t->dim, c->dtheta + NNTensorOffset(l, t)));
  PetscFunctionReturn(0);
}

/* [n, shape...] */
static void NNBatchDims(PetscInt n, const NNShape *s, PetscInt *nd, PetscInt d[])
{
  d[0] = n;
  for (PetscInt i = 0; i < s->ndim; i++) d[i + 1] = s->dim[i];
  *nd = s->ndim + 1;
}

static PetscErrorCode NNSaveGradients_Rank0(NN net, const char file[], PetscInt n, PetscReal loss, Vec x, Vec t, Vec y, Vec dx)
{
  NNAtomicFile       a;
  PetscErrorCode     ierr = 0;
  const PetscScalar *xa = NULL, *ta = NULL, *ya = NULL, *dxa = NULL, *g = NULL;
  NNShape            out, tshape;
  PetscInt           nd, d[NN_MAX_DIM + 1];
  PetscScalar        L = loss;
  NNGradCtx          c;
  hid_t              fid;

  PetscFunctionBegin;
  PetscCall(NNGetOutputShape(net, &out));
  if (net->lossops.classification) PetscCall(NNShapeSet(&tshape, 1, (PetscInt[]){1}));
  else tshape = out;
  PetscCall(PetscMemzero(&a, sizeof(a)));
  a.fid = -1;
  PetscCall(NNAtomicCreate(file, "gradient file", &a));
  fid = a.fid;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(t, &ta));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(dx, &dxa));
  PetscCall(VecGetArrayRead(net->dtheta, &g));
  c.fid    = fid;
  c.dtheta = g;
  /* each step only if the previous ones succeeded; the arrays are restored whatever happens */
  ierr = NNH5WriteAttributeString(fid, "/", "format", NN_GRADIENTS_FORMAT);
  if (!ierr) ierr = NNH5WriteAttributeString(fid, "/", "loss_function", net->loss);
  if (!ierr) ierr = NNH5WriteArray(fid, "loss", 0, NULL, &L);
  NNBatchDims(n, &net->inshape, &nd, d);
  if (!ierr) ierr = NNH5WriteArray(fid, "input", nd, d, xa);
  if (!ierr) ierr = NNH5WriteArray(fid, "input_grad", nd, d, dxa);
  NNBatchDims(n, &out, &nd, d);
  if (!ierr) ierr = NNH5WriteArray(fid, "output", nd, d, ya);
  NNBatchDims(n, &tshape, &nd, d);
  if (net->lossops.classification) nd = 1; /* labels: [n] */
  if (!ierr) ierr = NNH5WriteArray(fid, "target", nd, d, ta);
  if (!ierr) ierr = NNVisitTensors(net, NNSaveGradientTensor, &c);
  PetscCall(VecRestoreArrayRead(net->dtheta, &g));
  PetscCall(VecRestoreArrayRead(dx, &dxa));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(t, &ta));
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (!ierr) ierr = NNAtomicCommit(&a, file, "gradient file");
  if (ierr) NNAtomicAbort(&a);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*@C
   NNSaveGradients - runs the forward and backward pass on one batch and writes the loss, the
   outputs, the input gradient and the parameter gradients to an HDF5 file

   Collective

   Input Parameters:
+  net - the network
.  file - the HDF5 file to write (atomically, by rank 0)
.  n - number of samples, at most the batch size
.  x - input batch
-  t - targets

   Notes:
   The file holds "loss" (scalar), "input" and "input_grad" [n, input shape...], "output"
   [n, output shape...], "target" ([n] class labels or [n, output shape...]), and
   "grad/<layer>.<tensor>" for every parameter with PyTorch's shape, e.g. grad/fc1.weight [out,in];
   the root attribute format is "petnn-gradients-1". The network's current mode (training or
   evaluation) is used. `nnrun -mode grad` calls it; comparing the file with PyTorch's autograd
   checks the whole backward pass.

   Level: intermediate

.seealso: `NNLossGradient()`, `NNCheckpointSave()`, `NNGradientCheck()`
@*/
PetscErrorCode NNSaveGradients(NN net, const char file[], PetscInt n, Vec x, Vec t)
{
  MPI_Comm       comm;
  PetscMPIInt    rank;
  PetscErrorCode ierr = 0;
  PetscReal      loss;
  Vec            dx, y, yseq = NULL;
  DM             dmy;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidCharPointer(file, 2);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 4);
  PetscValidHeaderSpecific(t, VEC_CLASSID, 5);
  PetscCall(NNSetUp(net));
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(NNLossGradient(net, n, x, t, &loss, dx));
  PetscCall(PetscLogEventBegin(NN_Checkpoint, net, 0, 0, 0));
  y = net->act[net->nlayers];
  PetscCall(VecGetDM(y, &dmy));
  if (dmy) { /* a spatial output: gather the samples in PyTorch order on every rank */
    NNShape            out;
    const PetscScalar *ya;
    PetscScalar       *ys;
    PetscMPIInt        cnt;
    PetscCall(NNGetOutputShape(net, &out));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n * NNShapeSize(&out), &yseq));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArray(yseq, &ys));
    PetscCall(NNSpatialCopy(dmy, net->nbatch, &out, n, ys, (PetscScalar *)ya, PETSC_FALSE));
    PetscCall(PetscMPIIntCast(n * NNShapeSize(&out), &cnt));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ys, cnt, MPIU_SCALAR, MPIU_SUM, NNGetLayerComm(net)));
    PetscCall(VecRestoreArray(yseq, &ys));
    PetscCall(VecRestoreArrayRead(y, &ya));
    y = yseq;
  }
  if (rank == 0) {
    PetscCall(NNH5SilenceErrors(PETSC_TRUE));
    ierr = NNSaveGradients_Rank0(net, file, n, loss, x, t, y, dx);
    PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  }
  PetscCall(VecDestroy(&yseq));
  PetscCall(VecDestroy(&dx));
  PetscCallMPI(MPI_Bcast(&ierr, 1, MPI_INT, 0, comm));
  PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
  if (rank == 0) PetscCall(ierr);
  PetscCheck(!ierr, PETSC_COMM_SELF, ierr, "Writing gradient file %s failed on rank 0", file);
  PetscFunctionReturn(0);
}
