/*
   Transitions between the sequential batch layout and the spatial (DMDA) layout.

   Spatial layout: a batch of nbatch samples with C channels on an H x W grid is a global Vec of a
   2-d DMDA (x = W, y = H) with dof = nbatch*C, channels-last with the batch folded into the dof:
   the rank's local array is [y][x][s][c] over its own subdomain. Every batch slot s < nbatch is a
   valid entry; slots s >= n of a smaller batch are zero on entry (to_spatial) and get zero
   gradients (spatial_flatten), so spatial layers may process all nbatch slots.

   to_spatial      - sequential [n][C][H][W], the full batch on every rank (as NNData fills it)
                     -> the rank's subdomain of the DMDA layout. The DMDA's rank grid comes from
                     -<prefix>da_processors_x/y (and -<prefix>da_ownership_ranges_x/y style options
                     read by DMSetFromOptions with the layer's prefix); uneven splits are allowed.
                     Adjoint: each rank writes its subdomain, MPI_Allreduce(SUM) gives every rank
                     the full input gradient.
   spatial_flatten - DMDA layout -> sequential [n][C*H*W] in PyTorch order, replicated on every
                     rank (each rank writes its subdomain, MPI_Allreduce(SUM)). Adjoint: every rank
                     takes its own subdomain of the output gradient. NNSetUp() inserts it where a
                     layer cannot take a spatial activation (src/nn/interface/nnrepartition.c).
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>

/* spatial samples are (C,H,W) or (C,D,H,W) */
static PetscErrorCode NNSpatialCheckSampleRank(NNLayer l)
{
  PetscFunctionBegin;
  if (l->inshape.ndim != 3) PetscCall(NNLayerCheckInputRank(l, 4));
  PetscFunctionReturn(0);
}

typedef struct {
  DM da;
} NNLayer_ToSpatial;

static PetscErrorCode NNLayerSetUp_ToSpatial(NNLayer l)
{
  NNLayer_ToSpatial *d = (NNLayer_ToSpatial *)l->data;
  const char        *prefix;

  PetscFunctionBegin;
  PetscCall(NNSpatialCheckSampleRank(l));
  l->outshape = l->inshape;
  if (l->inshape.ndim == 3) PetscCall(DMDACreate2d(PetscObjectComm((PetscObject)l), DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, l->inshape.dim[2], l->inshape.dim[1], PETSC_DECIDE, PETSC_DECIDE, l->nbatch * l->inshape.dim[0], 0, NULL, NULL, &d->da));
  else PetscCall(DMDACreate3d(PetscObjectComm((PetscObject)l), DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, l->inshape.dim[3], l->inshape.dim[2], l->inshape.dim[1], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, l->nbatch * l->inshape.dim[0], 0, NULL, NULL, NULL, &d->da));
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)l, &prefix));
  PetscCall(DMSetOptionsPrefix(d->da, prefix));
  PetscCall(DMSetFromOptions(d->da));
  PetscCall(DMSetUp(d->da));
  PetscFunctionReturn(0);
}

/* the output DMDA (the device passes, layers/spatial/spatial_cuda.c) */
PetscErrorCode NNToSpatialGetDA(NNLayer l, DM *da)
{
  PetscFunctionBegin;
  *da = ((NNLayer_ToSpatial *)l->data)->da;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_ToSpatial(NNLayer l, Vec *y)
{
  PetscFunctionBegin;
  PetscCall(DMCreateGlobalVector(((NNLayer_ToSpatial *)l->data)->da, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_ToSpatial(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_ToSpatial *d = (NNLayer_ToSpatial *)l->data;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNSpatialCopy(d->da, l->nbatch, &l->inshape, n, (PetscScalar *)xa, ya, PETSC_TRUE));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_ToSpatial(NNLayer l, PetscInt n, Vec x PETSC_UNUSED, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_ToSpatial *d = (NNLayer_ToSpatial *)l->data;
  const PetscScalar *dya;
  PetscScalar       *dxa;
  PetscInt           N = n * NNShapeSize(&l->inshape);
  PetscMPIInt        cnt;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(VecGetArray(dx, &dxa));
  PetscCall(PetscArrayzero(dxa, N));
  PetscCall(NNSpatialCopy(d->da, l->nbatch, &l->inshape, n, dxa, (PetscScalar *)dya, PETSC_FALSE));
  PetscCall(PetscMPIIntCast(N, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, dxa, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  PetscCall(VecRestoreArray(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscFunctionReturn(0);
}

/* single precision: the same copies on float arrays; the input gradient's sum over the ranks adds each entry's one
   owner to zeros, so it is exact in float too */
static PetscErrorCode NNLayerForwardSingle_ToSpatial(NNLayer l, PetscInt n, const float *x, float *y)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialCopySingle(((NNLayer_ToSpatial *)l->data)->da, l->nbatch, &l->inshape, n, (float *)x, y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_ToSpatial(NNLayer l, PetscInt n, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  PetscInt    N = n * NNShapeSize(&l->inshape);
  PetscMPIInt cnt;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(PetscArrayzero(dx, N));
  PetscCall(NNSpatialCopySingle(((NNLayer_ToSpatial *)l->data)->da, l->nbatch, &l->inshape, n, dx, (float *)dy, PETSC_FALSE));
  PetscCall(PetscMPIIntCast(N, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, dx, cnt, MPI_FLOAT, MPI_SUM, PetscObjectComm((PetscObject)l)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_ToSpatial(NNLayer l, PetscViewer v)
{
  NNLayer_ToSpatial *d = (NNLayer_ToSpatial *)l->data;
  PetscInt           dim, m, nn, p;

  PetscFunctionBegin;
  if (!d->da) PetscFunctionReturn(0);
  PetscCall(DMDAGetInfo(d->da, &dim, NULL, NULL, NULL, &m, &nn, &p, NULL, NULL, NULL, NULL, NULL, NULL));
  if (dim == 2) PetscCall(PetscViewerASCIIPrintf(v, "DMDA rank grid %" PetscInt_FMT " x %" PetscInt_FMT " (x by y), channels-last, batch in the dof\n", m, nn));
  else PetscCall(PetscViewerASCIIPrintf(v, "DMDA rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (x by y by z), channels-last, batch in the dof\n", m, nn, p));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_ToSpatial(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(DMDestroy(&((NNLayer_ToSpatial *)l->data)->da));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_ToSpatial(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERTOSPATIAL - "to_spatial": moves a sequential (C,H,W) or (C,D,H,W) batch into the DMDA spatial layout

   Options Database Keys:
+  -<prefix>da_processors_x <m> - ranks along the width
.  -<prefix>da_processors_y <n> - ranks along the height
-  -<prefix>da_processors_z <p> - ranks along the depth of 3-d samples (any DMDA option with the layer's prefix)

   Level: beginner

.seealso: `NNLAYERCONV2D`, `NNLAYERSPATIALFLATTEN`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_ToSpatial(NNLayer l)
{
  NNLayer_ToSpatial *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_ToSpatial;
  l->ops->forwardvec      = NNLayerForwardVec_ToSpatial;
  l->ops->backwardvec     = NNLayerBackwardVec_ToSpatial;
  l->ops->forwardsingle   = NNLayerForwardSingle_ToSpatial;
  l->ops->backwardsingle  = NNLayerBackwardSingle_ToSpatial;
  l->ops->createoutputvec = NNLayerCreateOutputVec_ToSpatial;
  l->ops->view            = NNLayerView_ToSpatial;
  l->ops->reset           = NNLayerReset_ToSpatial;
  l->ops->destroy         = NNLayerDestroy_ToSpatial;
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = NNLayerForwardDevice_ToSpatial;
  l->ops->backwarddevice = NNLayerBackwardDevice_ToSpatial;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- spatial_flatten */

static PetscErrorCode NNLayerSetUp_SpatialFlatten(NNLayer l)
{
  PetscInt size = NNShapeSize(&l->inshape);

  PetscFunctionBegin;
  PetscCall(NNSpatialCheckSampleRank(l));
  PetscCall(NNShapeSet(&l->outshape, 1, &size));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNSpatialFlattenGetDM(NNLayer l, Vec x PETSC_UNUSED, DM *da)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, da));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_SpatialFlatten(NNLayer l, PetscInt n, Vec x, Vec y)
{
  DM                 da;
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscInt           N = n * NNShapeSize(&l->inshape);
  PetscMPIInt        cnt;

  PetscFunctionBegin;
  PetscCall(NNSpatialFlattenGetDM(l, x, &da));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(PetscArrayzero(ya, N));
  PetscCall(NNSpatialCopy(da, l->nbatch, &l->inshape, n, ya, (PetscScalar *)xa, PETSC_FALSE));
  PetscCall(PetscMPIIntCast(N, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ya, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_SpatialFlatten(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  DM                 da;
  const PetscScalar *dya;
  PetscScalar       *dxa;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNSpatialFlattenGetDM(l, x, &da));
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(VecGetArrayWrite(dx, &dxa));
  /* slots s >= n get zero gradients */
  PetscCall(NNSpatialCopy(da, l->nbatch, &l->inshape, n, (PetscScalar *)dya, dxa, PETSC_TRUE));
  PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscFunctionReturn(0);
}

/* single precision: the same copies on float arrays; the output's sum over the ranks adds each entry's one owner to
   zeros, exact in float */
static PetscErrorCode NNLayerForwardSingle_SpatialFlatten(NNLayer l, PetscInt n, const float *x, float *y)
{
  DM          da;
  PetscInt    N = n * NNShapeSize(&l->inshape);
  PetscMPIInt cnt;

  PetscFunctionBegin;
  PetscCall(NNSpatialFlattenGetDM(l, NULL, &da));
  PetscCall(PetscArrayzero(y, N));
  PetscCall(NNSpatialCopySingle(da, l->nbatch, &l->inshape, n, y, (float *)x, PETSC_FALSE));
  PetscCall(PetscMPIIntCast(N, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, y, cnt, MPI_FLOAT, MPI_SUM, PetscObjectComm((PetscObject)l)));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_SpatialFlatten(NNLayer l, PetscInt n, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  DM da;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNSpatialFlattenGetDM(l, NULL, &da));
  PetscCall(NNSpatialCopySingle(da, l->nbatch, &l->inshape, n, (float *)dy, dx, PETSC_TRUE)); /* slots s >= n get zero gradients */
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERSPATIALFLATTEN - "spatial_flatten": DMDA spatial layout -> flat sequential (C*H*W) samples in
   PyTorch order, replicated on every rank

   Notes:
   In a sequential network `NNSetUp()` inserts one, named "<layer>_repartition", before a layer that
   cannot take the spatial activation before it (a dense layer after a convolution or pooling layer),
   unless `NNSetAutoRepartition()` (-nn_auto_repartition) is off.

   Level: beginner

.seealso: `NNLAYERTOSPATIAL`, `NNLAYERFLATTEN`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_SpatialFlatten(NNLayer l)
{
  PetscFunctionBegin;
  l->ops->setup       = NNLayerSetUp_SpatialFlatten;
  l->ops->forwardvec  = NNLayerForwardVec_SpatialFlatten;
  l->ops->backwardvec = NNLayerBackwardVec_SpatialFlatten;
  l->ops->forwardsingle  = NNLayerForwardSingle_SpatialFlatten;
  l->ops->backwardsingle = NNLayerBackwardSingle_SpatialFlatten;
#if defined(PETNN_HAVE_CUDA)
  l->ops->forwarddevice  = NNLayerForwardDevice_SpatialFlatten;
  l->ops->backwarddevice = NNLayerBackwardDevice_SpatialFlatten;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks */
#endif
  PetscFunctionReturn(0);
}
