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
   and renamed over <file> (src/sys/atomicfile.c), so a crash or a failure (a full disk) leaves the
   previous checkpoint intact. With several trainers
   (tournament training) each trainer's first rank writes its own "<stem>.trainer<t>.h5".
*/
#include <petnn/private/trainerimpl.h>
#include <petnn/private/bufferimpl.h>
#include <hdf5.h>
#include <math.h>
#include <string.h>

#define NN_CHECKPOINT_FORMAT "petnn-checkpoint-1"

static PetscBool NNTensorIsCounter(const NNTensor *t)
{
  return (PetscBool)(t->kind == NN_TENSOR_BUFFER && !strcmp(t->name, "num_batches_tracked"));
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

/* the -info line after a checkpoint was saved or loaded */
static PetscErrorCode NNCheckpointInfo(NN net, const char what[], const char file[], const char more[])
{
  NNTrainerCursor *cur;

  PetscFunctionBegin;
  PetscCall(NNGetTrainerCursor(net, NULL, &cur));
  PetscCall(PetscInfo(net, "%s checkpoint %s: %" PetscInt_FMT " epochs, %" PetscInt_FMT " steps, batch %" PetscInt_FMT "%s\n", what, file, cur->epoch, cur->step, cur->batch, more ? more : ""));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- save */
static PetscErrorCode NNCheckpointWriteContents(NN net, hid_t fid, const char file[], const PetscScalar *theta, const PetscScalar *buf, const PetscScalar *const state[], const NNBufferImage *bimg)
{
  NNCheckpointCtx c;
  NNOpt           opt = net->trainer->opt;
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
  PetscCall(NNVisitTensorsGlobal(net, NNCheckpointSaveTensor, &c));

  PetscCall(NNH5WriteAttributeString(fid, "optimizer", "type", ((PetscObject)opt)->type_name));
  c.params_only = PETSC_TRUE;
  c.prefix      = prefix;
  for (PetscInt i = 0; i < opt->nstate; i++) {
    PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "optimizer/%s/", opt->statename[i]));
    c.theta = state[i];
    PetscCall(NNVisitTensorsGlobal(net, NNCheckpointSaveTensor, &c));
  }
  v = (int64_t)opt->nsteps;
  PetscCall(NNH5WriteInt64(fid, "optimizer/step", 0, NULL, &v));
  PetscCall(NNCheckpointWriteCursor(net, fid));
  if (bimg) PetscCall(NNBufferImageWrite(fid, bimg)); /* the replay buffer (NNSetTrainBuffer()) */
  PetscFunctionReturn(0);
}

/* rank 0: everything that can fail, with the temporary file removed on failure; the arrays in the full layout */
static PetscErrorCode NNCheckpointSave_Rank0(NN net, const char file[], const PetscScalar *theta, const PetscScalar *buf, const PetscScalar *const state[], const NNBufferImage *bimg)
{
  NNAtomicFile   a;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&a, sizeof(a)));
  a.fid = -1;
  PetscCall(NNAtomicCreate(file, "checkpoint", &a));
  ierr = NNCheckpointWriteContents(net, a.fid, file, theta, buf, state, bimg);
  if (!ierr) ierr = NNAtomicCommit(&a, file, "checkpoint");
  if (ierr) NNAtomicAbort(&a);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* the arrays a checkpoint holds, in the full layout: the network's own, or (partitioned layers) gathered to
   rank 0 of each layer communicator (NULL elsewhere) */
typedef struct {
  const PetscScalar *theta, *buf, *state[NN_OPT_MAX_STATE];
  PetscScalar       *gathered[2 + NN_OPT_MAX_STATE];
} NNCheckpointArrays;

static PetscErrorCode NNCheckpointGetArrays(NN net, NNCheckpointArrays *ca)
{
  NNOpt       opt = net->trainer->opt;
  Vec         v[2 + NN_OPT_MAX_STATE];
  PetscInt    nv = 2 + opt->nstate;
  PetscMPIInt srank;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(ca, sizeof(*ca)));
  v[0] = net->theta;
  v[1] = net->buf;
  for (PetscInt i = 0; i < opt->nstate; i++) v[2 + i] = opt->state[i];
  PetscCallMPI(MPI_Comm_rank(NNGetPartitionComm(net), &srank)); /* NNPartitionGather()'s root */
  for (PetscInt i = 0; i < nv; i++) {
    const PetscScalar *a;
    PetscCall(VecGetArrayRead(v[i], &a));
    if (net->part.on) {
      NNTensorKind kind = i == 1 ? NN_TENSOR_BUFFER : NN_TENSOR_PARAM;
      if (!srank) PetscCall(PetscMalloc1(PetscMax(kind == NN_TENSOR_PARAM ? net->part.np : net->part.nb, 1), &ca->gathered[i]));
      PetscCall(NNPartitionGather(net, kind, a, ca->gathered[i]));
      PetscCall(VecRestoreArrayRead(v[i], &a));
      a = ca->gathered[i];
    }
    if (i == 0) ca->theta = a;
    else if (i == 1) ca->buf = a;
    else ca->state[i - 2] = a;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNCheckpointRestoreArrays(NN net, NNCheckpointArrays *ca)
{
  NNOpt opt = net->trainer->opt;

  PetscFunctionBegin;
  if (net->part.on) {
    for (PetscInt i = 0; i < 2 + opt->nstate; i++) PetscCall(PetscFree(ca->gathered[i]));
  } else {
    PetscCall(VecRestoreArrayRead(net->theta, &ca->theta));
    PetscCall(VecRestoreArrayRead(net->buf, &ca->buf));
    for (PetscInt i = 0; i < opt->nstate; i++) PetscCall(VecRestoreArrayRead(opt->state[i], &ca->state[i]));
  }
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
   /buffer/header, /buffer/rng, /buffer/x, /buffer/y  the replay buffer (NNSetTrainBuffer()), every rank's part
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
  PetscErrorCode     ierr = 0;
  char               name[PETSC_MAX_PATH_LEN];
  NNCheckpointArrays ca;
  NNBufferImage      bimg;
  NNData             bufd;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(file, 2);
  PetscCall(NNSetUp(net));
  PetscCall(NNGetTrainerCursor(net, NULL, NULL)); /* the trainer's optimizer, set up on the parameters */
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  if (net->par) PetscCallMPI(MPI_Comm_rank(net->par->tcomm, &rank)); /* the parameters are the same on every rank of a trainer */
  else PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(NNParallelFileName(net, file, sizeof(name), name));
  PetscCall(PetscLogEventBegin(NN_Checkpoint, net, 0, 0, 0));
  PetscCall(NNCheckpointGetArrays(net, &ca));
  bufd = net->trainer->online.buffer;
  if (bufd) PetscCall(NNDataBufferGather_Private(bufd, net->par ? net->par->tcomm : comm, &bimg));
  if (rank == 0) {
    PetscCall(NNH5SilenceErrors(PETSC_TRUE));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* raised on every rank below */
    ierr = NNCheckpointSave_Rank0(net, name, ca.theta, ca.buf, ca.state, bufd ? &bimg : NULL);
    PetscCall(PetscPopErrorHandler());
    PetscCall(NNH5SilenceErrors(PETSC_FALSE));
  }
  PetscCall(NNCheckpointRestoreArrays(net, &ca));
  if (bufd) PetscCall(NNBufferImageFree(&bimg));
  PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
  PetscCall(NNCollectiveError(comm, ierr, PETSC_FALSE, ""));
  PetscCall(NNCheckpointInfo(net, "Saved", name, NULL));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- load */
typedef struct {
  hid_t        fid;
  PetscScalar *theta, *buf, *state; /* read into copies: a failed load leaves the network unchanged */
  PetscBool          hasopt; /* complete optimizer state of the network's type: state and nsteps loaded */
  int64_t            nsteps;
  NNCheckpointCursor cursor;
  NNBufferImage      bimg;    /* the replay buffer's contents (NNSetTrainBuffer()), if the file holds them */
  PetscBool          hasbimg;
} NNCheckpointLoadData;

static PetscErrorCode NNCheckpointRead_Rank0(NN net, const char file[], NNCheckpointLoadData *ld)
{
  NNCheckpointCtx c;
  NNOpt           opt = net->trainer->opt;
  char            format[64], otype[64], name[PETSC_MAX_PATH_LEN];
  PetscBool       found, has;
  PetscInt        np, nb;
  H5G_info_t      ginfo;

  PetscFunctionBegin;
  np = net->part.np; /* the full layout (model parallelism: the pieces are cut out after the broadcast) */
  nb = net->part.nb;
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
  PetscCall(NNVisitTensorsGlobal(net, NNCheckpointLoadTensor, &c));

  /* and no tensor the network lacks (like PyTorch's load_state_dict(strict=True)) */
  if (H5Gget_info(ld->fid, &ginfo) < 0) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot list the datasets of checkpoint %s", file);
  for (hsize_t i = 0; i < ginfo.nlinks; i++) {
    ssize_t len = H5Lget_name_by_idx(ld->fid, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof(name), H5P_DEFAULT);
    PetscCheck(len >= 0 && (size_t)len < sizeof(name), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "Cannot list the datasets of checkpoint %s", file);
    PetscCall(NNH5IsDataset(ld->fid, name, &has));
    if (!has) continue;
    c.find  = name;
    c.found = PETSC_FALSE;
    PetscCall(NNVisitTensorsGlobal(net, NNCheckpointFindTensor, &c));
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
        PetscCall(NNVisitTensorsGlobal(net, NNCheckpointLoadTensor, &c));
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
          PetscCall(NNVisitTensorsGlobal(net, NNCheckpointLoadTensor, &c));
        }
        PetscCall(NNH5ReadInt64(ld->fid, "optimizer/step", 0, NULL, &ld->nsteps));
        ld->hasopt = PETSC_TRUE;
      } else PetscCall(PetscInfo(net, "Checkpoint %s: incomplete %s optimizer state; starting with fresh optimizer state\n", file, otype));
    } else PetscCall(PetscInfo(net, "Checkpoint %s holds %s optimizer state but the network uses %s; starting with fresh optimizer state\n", file, otype, ((PetscObject)opt)->type_name));
  } else PetscCall(PetscInfo(net, "Checkpoint %s has no optimizer state\n", file));

  PetscCall(NNCheckpointReadCursor(net, ld->fid, file, &ld->cursor));
  if (net->trainer->online.buffer) PetscCall(NNBufferImageRead(ld->fid, file, &ld->bimg, &ld->hasbimg));
  PetscCall(NNH5Close(&ld->fid));
  PetscFunctionReturn(0);
}

/* broadcasts a full-layout array from rank 0 (src) into a Vec of this rank's layout: with partitioned
   layers every rank receives the full array and cuts its pieces out (NNPartitionExtract()) */
static PetscErrorCode NNBcastIntoVec(NN net, MPI_Comm comm, PetscMPIInt rank, NNTensorKind kind, const PetscScalar *src, Vec v)
{
  PetscScalar *a, *full = NULL;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetArray(v, &a));
  if (net->part.on) {
    PetscInt nfull = kind == NN_TENSOR_PARAM ? net->part.np : net->part.nb;
    PetscCall(PetscMalloc1(PetscMax(nfull, 1), &full));
    if (rank == 0 && nfull) PetscCall(PetscArraycpy(full, src, nfull));
    if (nfull) PetscCallMPI(MPI_Bcast(full, (PetscMPIInt)nfull, MPIU_SCALAR, 0, comm));
    PetscCall(NNPartitionExtract(net, kind, full, a));
    PetscCall(PetscFree(full));
  } else {
    if (rank == 0 && n) PetscCall(PetscArraycpy(a, src, n));
    if (n) PetscCallMPI(MPI_Bcast(a, (PetscMPIInt)n, MPIU_SCALAR, 0, comm));
  }
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
  PetscAssertPointer(file, 2);
  PetscCall(NNSetUp(net));
  PetscCall(NNGetTrainerCursor(net, NULL, NULL)); /* the trainer's optimizer, set up on the parameters */
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
      PetscCall(NNBufferImageFree(&ld.bimg));
      PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
      PetscCall(NNCollectiveError(comm, ierr, PETSC_FALSE, ""));
    }
  }
  PetscCallMPI(MPI_Bcast(&ld.hasopt, 1, NN_MPI_BOOL, 0, tcomm));
  PetscCallMPI(MPI_Bcast(&ld.nsteps, 1, MPIU_INT64, 0, tcomm));
  PetscCallMPI(MPI_Bcast(&ld.cursor, (PetscMPIInt)sizeof(ld.cursor), MPI_BYTE, 0, tcomm)); /* the same binary layout on every rank */
  np = net->part.np;
  PetscCall(NNBcastIntoVec(net, tcomm, rank, NN_TENSOR_PARAM, ld.theta, net->theta));
  PetscCall(NNBcastIntoVec(net, tcomm, rank, NN_TENSOR_BUFFER, ld.buf, net->buf));
  if (ld.hasopt) {
    for (PetscInt i = 0; i < net->trainer->opt->nstate; i++) PetscCall(NNBcastIntoVec(net, tcomm, rank, NN_TENSOR_PARAM, ld.state ? ld.state + i * np : NULL, net->trainer->opt->state[i]));
    net->trainer->opt->nsteps = (PetscInt)ld.nsteps;
  } else {
    for (PetscInt i = 0; i < net->trainer->opt->nstate; i++) PetscCall(VecZeroEntries(net->trainer->opt->state[i]));
    net->trainer->opt->nsteps = 0;
  }
  PetscCall(NNCheckpointApplyCursor(net, &ld.cursor));
  PetscCallMPI(MPI_Bcast(&ld.hasbimg, 1, NN_MPI_BOOL, 0, tcomm));
  if (net->trainer->online.buffer && ld.hasbimg) PetscCall(NNDataBufferScatter_Private(net->trainer->online.buffer, tcomm, &ld.bimg));
  else if (net->trainer->online.buffer) PetscCall(PetscInfo(net, "Checkpoint %s holds no replay buffer: the network's stays as it is\n", name));
  PetscCall(NNBufferImageFree(&ld.bimg));
  PetscCall(PetscFree(ld.theta));
  PetscCall(PetscFree(ld.buf));
  PetscCall(PetscFree(ld.state));
  PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
  PetscCall(NNCheckpointInfo(net, "Loaded", name, ld.hasopt ? ", optimizer state restored" : ", optimizer state fresh"));
  PetscFunctionReturn(0);
}
