/*
   Global average pooling: a spatial (DMDA) activation (C,H,W) or (C,D,H,W) -> sequential (C) per
   sample, replicated on every rank (torch.nn.AdaptiveAvgPool2d(1) / AdaptiveAvgPool3d(1) followed by
   flatten).

   Forward: each rank sums its subdomain's pixels, one contiguous [s*C] run per pixel, which is the
   output layout [s][C] itself; MPI_Allreduce(SUM) over the layer's communicator and a division
   by the number of pixels give every rank the full result. Backward: each rank spreads dy/npix
   over its own subdomain (slots s >= n get zero gradients), no communication.

   Single precision (-nn_precision single): the same loops (globalpool_passes.h) on float activations; the sums over
   the pixels and the MPI_Allreduce stay double, and each mean is rounded to float once, as the normalizations do.
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/deviceimpl.h>

static PetscErrorCode NNLayerSetUp_GlobalAvgPool(NNLayer l)
{
  PetscFunctionBegin;
  if (l->inshape.ndim != 3 && l->inshape.ndim != 4) {
    char sh[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(sh), sh));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs spatial (C,H,W) or (C,D,H,W) samples but %s produces shape %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->inputname ? l->inputname : "its input", sh);
  }
  PetscCall(NNShapeSet(&l->outshape, 1, &l->inshape.dim[0]));
  PetscFunctionReturn(0);
}

/* a sequential output, replicated; checks that the input is spatial */
static PetscErrorCode NNLayerCreateOutputVec_GlobalAvgPool(NNLayer l, Vec *y)
{
  DM da;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &da));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * l->inshape.dim[0], y));
  PetscFunctionReturn(0);
}

/* entries per pixel, pixels owned by this rank, pixels per sample */
static PetscErrorCode NNGlobalAvgPoolSizes(NNLayer l, PetscInt *D, PetscInt *nloc, PetscInt *npix)
{
  DM       da;
  PetscInt xm, ym, zm;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &da));
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &xm, &ym, &zm));
  if (l->inshape.ndim == 3) zm = 1;
  *D    = l->nbatch * l->inshape.dim[0];
  *nloc = xm * ym * zm;
  *npix = NNShapeSize(&l->inshape) / l->inshape.dim[0];
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "globalpool_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "globalpool_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForwardVec_GlobalAvgPool(NNLayer l, PetscInt n, Vec x, Vec y)
{
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNGlobalAvgPoolForward(l, n, xa, ya, ya)); /* sums in y itself */
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_GlobalAvgPool(NNLayer l, PetscInt n, Vec x PETSC_UNUSED, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  const PetscScalar *dya;
  PetscScalar       *dxa, *g;
  PetscInt           D, nloc, npix;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNGlobalAvgPoolSizes(l, &D, &nloc, &npix));
  PetscCall(PetscMalloc1(D, &g));
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(NNGlobalAvgPoolBackward(l, n, dya, g, dxa));
  PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscCall(PetscFree(g));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): float activations, the sums in a double scratch */
static PetscErrorCode NNLayerForwardSingle_GlobalAvgPool(NNLayer l, PetscInt n, const float *x, float *y)
{
  PetscScalar *sum;
  PetscInt     D, nloc, npix;

  PetscFunctionBegin;
  PetscCall(NNGlobalAvgPoolSizes(l, &D, &nloc, &npix));
  PetscCall(PetscMalloc1(D, &sum));
  PetscCall(NNGlobalAvgPoolForwardSingle(l, n, x, sum, y));
  PetscCall(PetscFree(sum));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_GlobalAvgPool(NNLayer l, PetscInt n, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  float   *g;
  PetscInt D, nloc, npix;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNGlobalAvgPoolSizes(l, &D, &nloc, &npix));
  PetscCall(PetscMalloc1(D, &g));
  PetscCall(NNGlobalAvgPoolBackwardSingle(l, n, dy, g, dx));
  PetscCall(PetscFree(g));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_GlobalAvgPool(NNLayer l PETSC_UNUSED, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "mean over all pixels per channel (subdomain sums, MPI_Allreduce), output replicated\n"));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERGLOBALAVGPOOL - "global_avgpool": global average pooling of a spatial DMDA activation,
   (C,H,W) or (C,D,H,W) -> (C) per sample (torch.nn.AdaptiveAvgPool2d(1) or AdaptiveAvgPool3d(1) followed by flatten)

   Notes:
   The output is sequential and replicated on every rank (like `NNLAYERSPATIALFLATTEN`), so dense
   layers can follow directly. Each rank sums its subdomain and the partial sums are added with
   MPI_Allreduce. The layer has no options. The input must be spatial (`NNLAYERTOSPATIAL` first).

   Level: beginner

.seealso: `NNLAYERAVGPOOL2D`, `NNLAYERSPATIALFLATTEN`, `NNLAYERTOSPATIAL`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_GlobalAvgPool(NNLayer l)
{
  PetscFunctionBegin;
  l->ops->setup           = NNLayerSetUp_GlobalAvgPool;
  l->ops->forwardvec      = NNLayerForwardVec_GlobalAvgPool;
  l->ops->backwardvec     = NNLayerBackwardVec_GlobalAvgPool;
  l->ops->forwardsingle   = NNLayerForwardSingle_GlobalAvgPool;
  l->ops->backwardsingle  = NNLayerBackwardSingle_GlobalAvgPool;
  l->ops->createoutputvec = NNLayerCreateOutputVec_GlobalAvgPool;
  l->ops->view            = NNLayerView_GlobalAvgPool;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/pool/globalpool_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_GlobalAvgPool;
  l->ops->backwarddevice = NNLayerBackwardDevice_GlobalAvgPool;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks (the sums added over the ranks on the host) */
#endif
  PetscFunctionReturn(0);
}
