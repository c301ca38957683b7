/*
   concat: its k inputs concatenated along the first (channel or feature) dimension, as
   torch.cat(dim=1). The inputs agree in every other dimension and in their layout: sequential
   activations [n][C_j*...] concatenate per sample, spatial (DMDA) activations [pixel][slot][C_j]
   per batch slot of every pixel, so the inputs must lie on one grid with one decomposition. The
   output has no parameters; backward hands each input its block of the output gradient.
   Graph networks only (-nn_type graph, -<name>_inputs a,b,...); in single precision
   (-nn_precision single) the same copies on the float activations.
*/
#include "graph.h"
#include <petnn/private/deviceimpl.h>

typedef struct {
  DM da; /* spatial output: the inputs' grid with C = sum of their channels */
} NNLayer_Concat;

static PetscErrorCode NNLayerSetUp_Concat(NNLayer l)
{
  NNShape *s = l->graph.inshapes;

  PetscFunctionBegin;
  PetscCheck(l->graph.nin >= 1 && s, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s) concatenates the inputs of a graph network: use -nn_type graph and -%sinputs a,b", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  l->outshape = s[0];
  for (PetscInt k = 1; k < l->graph.nin; k++) {
    PetscBool same = (PetscBool)(s[k].ndim == s[0].ndim);
    for (PetscInt d = 1; same && d < s[0].ndim; d++) same = (PetscBool)(s[k].dim[d] == s[0].dim[d]);
    if (!same) PetscCall(NNGraphShapeError(l, k, "concat needs the same shape in all but the first (channel) dimension"));
    l->outshape.dim[0] += s[k].dim[0];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVecs_Concat(NNLayer l, Vec y[])
{
  NNLayer_Concat *d = (NNLayer_Concat *)l->data;

  PetscFunctionBegin;
  PetscCall(NNGraphCheckLayouts(l));
  PetscCall(DMDestroy(&d->da));
  if (l->graph.indms[0]) PetscCall(NNGraphCreateSpatialLike(l, l->graph.indms[0], l->outshape.dim[0], &d->da, &y[0]));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), &y[0]));
  PetscFunctionReturn(0);
}

/* y's rows are the inputs' rows side by side; forward copies x_k into them, backward copies them into
   the x_k that are not NULL (gradients not wanted are skipped) */
static PetscErrorCode NNConcatCopy(NNLayer l, PetscInt n, PetscInt nin, Vec x[], Vec y, PetscBool forward)
{
  PetscInt     rows, B, off = 0;
  DM           dm;
  PetscScalar *ya;

  PetscFunctionBegin;
  PetscCall(VecGetDM(y, &dm));
  PetscCall(NNGraphRows(l, y, &l->outshape, n, &rows, &B));
  if (forward) PetscCall(VecGetArray(y, &ya));
  else PetscCall(VecGetArrayRead(y, (const PetscScalar **)&ya));
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt     b = dm ? l->graph.inshapes[k].dim[0] : NNShapeSize(&l->graph.inshapes[k]);
    PetscScalar *xa;
    if (x[k]) {
      PetscCall(VecGetArray(x[k], &xa));
      if (forward)
        for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(ya + i * B + off, xa + i * b, b));
      else
        for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(xa + i * b, ya + i * B + off, b));
      PetscCall(VecRestoreArray(x[k], &xa));
    }
    off += b;
  }
  if (forward) PetscCall(VecRestoreArray(y, &ya));
  else PetscCall(VecRestoreArrayRead(y, (const PetscScalar **)&ya));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardMulti_Concat(NNLayer l, PetscInt n, PetscInt nin, Vec x[], PetscInt nout PETSC_UNUSED, Vec y[])
{
  PetscFunctionBegin;
  PetscCall(NNConcatCopy(l, n, nin, x, y[0], PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardMulti_Concat(NNLayer l, PetscInt n, PetscInt nin, Vec x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, Vec y[] PETSC_UNUSED, Vec dy[], Vec dx[])
{
  PetscFunctionBegin;
  PetscCall(NNConcatCopy(l, n, nin, dx, dy[0], PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* single precision: the same row blocks moved between float arrays (pure data movement, so no conversions) */
static PetscErrorCode NNLayerForwardMultiSingle_Concat(NNLayer l, PetscInt n, PetscInt nin, Vec x[] PETSC_UNUSED, const float *const xs[], PetscInt nout PETSC_UNUSED, Vec y[], float *const ys[])
{
  PetscInt rows, B, off = 0;
  DM       dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(y[0], &dm));
  PetscCall(NNGraphRows(l, y[0], &l->outshape, n, &rows, &B));
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt b = dm ? l->graph.inshapes[k].dim[0] : NNShapeSize(&l->graph.inshapes[k]);
    for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(ys[0] + i * B + off, xs[k] + i * b, b));
    off += b;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardMultiSingle_Concat(NNLayer l, PetscInt n, PetscInt nin, Vec x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, Vec y[], const float *const dys[], float *const dxs[])
{
  PetscInt rows, B, off = 0;
  DM       dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(y[0], &dm));
  PetscCall(NNGraphRows(l, y[0], &l->outshape, n, &rows, &B));
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt b = dm ? l->graph.inshapes[k].dim[0] : NNShapeSize(&l->graph.inshapes[k]);
    if (dxs[k])
      for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(dxs[k] + i * b, dys[0] + i * B + off, b));
    off += b;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Concat(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(DMDestroy(&((NNLayer_Concat *)l->data)->da));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_Concat(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLayerCreate_Concat(NNLayer l)
{
  NNLayer_Concat *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  l->data                   = d;
  l->ops->setup             = NNLayerSetUp_Concat;
  l->ops->createoutputvecs  = NNLayerCreateOutputVecs_Concat;
  l->ops->forwardmulti      = NNLayerForwardMulti_Concat;
  l->ops->backwardmulti     = NNLayerBackwardMulti_Concat;
  l->ops->forwardmultisingle  = NNLayerForwardMultiSingle_Concat;
  l->ops->backwardmultisingle = NNLayerBackwardMultiSingle_Concat;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/graph/graph_cuda.c */
  l->ops->forwardmultidevice  = NNLayerForwardMultiDevice_Concat;
  l->ops->backwardmultidevice = NNLayerBackwardMultiDevice_Concat;
#endif
  l->dev.split              = PETSC_TRUE; /* also on spatial activations split over ranks: each rank moves its own pixels' rows */
  l->ops->reset             = NNLayerReset_Concat;
  l->ops->destroy           = NNLayerDestroy_Concat;
  PetscFunctionReturn(0);
}
