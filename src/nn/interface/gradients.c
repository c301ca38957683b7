/* Gradient dumps in HDF5 (nnrun -mode grad): loss, outputs, input gradient and parameter gradients with PyTorch's names. */
#include <petnn/private/nnimpl.h>
#include <hdf5.h>

#define NN_GRADIENTS_FORMAT "petnn-gradients-1"

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

static PetscErrorCode NNSaveGradients_Rank0(NN net, const char file[], PetscInt n, PetscReal loss, Vec x, Vec t, Vec y, Vec dx, const PetscScalar *g)
{
  NNAtomicFile       a;
  PetscErrorCode     ierr = 0;
  const PetscScalar *xa = NULL, *ta = NULL, *ya = NULL, *dxa = NULL;
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
  if (!ierr) ierr = NNVisitTensorsGlobal(net, NNSaveGradientTensor, &c);
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
  PetscAssertPointer(file, 2);
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
  { /* the parameter gradient in the full layout (partitioned layers: gathered to rank 0) */
    const PetscScalar *g;
    PetscScalar       *gfull = NULL;
    PetscCall(VecGetArrayRead(net->dtheta, &g));
    if (net->part.on) {
      if (rank == 0) PetscCall(PetscMalloc1(PetscMax(net->part.np, 1), &gfull));
      PetscCall(NNPartitionGather(net, NN_TENSOR_PARAM, g, gfull));
    }
    if (rank == 0) {
      PetscCall(NNH5SilenceErrors(PETSC_TRUE));
      ierr = NNSaveGradients_Rank0(net, file, n, loss, x, t, y, dx, gfull ? gfull : g);
      PetscCall(NNH5SilenceErrors(PETSC_FALSE));
    }
    PetscCall(PetscFree(gfull));
    PetscCall(VecRestoreArrayRead(net->dtheta, &g));
  }
  PetscCall(VecDestroy(&yseq));
  PetscCall(VecDestroy(&dx));
  PetscCallMPI(MPI_Bcast(&ierr, 1, MPI_INT, 0, comm));
  PetscCall(PetscLogEventEnd(NN_Checkpoint, net, 0, 0, 0));
  if (rank == 0) PetscCall(ierr);
  PetscCheck(!ierr, PETSC_COMM_SELF, ierr, "Writing gradient file %s failed on rank 0", file);
  PetscFunctionReturn(0);
}
