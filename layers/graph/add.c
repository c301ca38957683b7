/*
   add: the elementwise sum of its k inputs, which have one shape and one layout (sequential, or
   DMDAs of one grid and decomposition), y = x_0 + x_1 + ... summed in input order. No parameters;
   backward gives every input the output gradient. Graph networks only (-nn_type graph,
   -<name>_inputs a,b,...), e.g. the skip connection of a residual block written as a graph.
   In single precision (-nn_precision single) the sums are in float, in the same order.
*/
#include "graph.h"
#include <petnn/private/deviceimpl.h>

static PetscErrorCode NNLayerSetUp_Add(NNLayer l)
{
  NNShape *s = l->graph.inshapes;

  PetscFunctionBegin;
  PetscCheck(l->graph.nin >= 1 && s, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s) adds the inputs of a graph network: use -nn_type graph and -%sinputs a,b", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  for (PetscInt k = 1; k < l->graph.nin; k++) {
    PetscBool same = (PetscBool)(s[k].ndim == s[0].ndim);
    for (PetscInt d = 0; same && d < s[0].ndim; d++) same = (PetscBool)(s[k].dim[d] == s[0].dim[d]);
    if (!same) PetscCall(NNGraphShapeError(l, k, "add needs inputs of one shape"));
  }
  l->outshape = s[0];
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVecs_Add(NNLayer l, Vec y[])
{
  PetscFunctionBegin;
  PetscCall(NNGraphCheckLayouts(l));
  if (l->graph.indms[0]) PetscCall(DMCreateGlobalVector(l->graph.indms[0], &y[0]));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), &y[0]));
  PetscFunctionReturn(0);
}

/* entries the passes touch: the first n samples (sequential) or the rank's whole local array (spatial) */
static PetscErrorCode NNAddLength(NNLayer l, Vec v, PetscInt n, PetscInt *len)
{
  PetscInt rows, b;

  PetscFunctionBegin;
  PetscCall(NNGraphRows(l, v, &l->outshape, n, &rows, &b));
  *len = rows * b;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardMulti_Add(NNLayer l, PetscInt n, PetscInt nin, Vec x[], PetscInt nout PETSC_UNUSED, Vec y[])
{
  PetscInt           len = 0;
  PetscScalar       *ya;
  const PetscScalar *xa;

  PetscFunctionBegin;
  PetscCall(NNAddLength(l, y[0], n, &len));
  PetscCall(VecGetArray(y[0], &ya));
  for (PetscInt k = 0; k < nin; k++) {
    PetscCall(VecGetArrayRead(x[k], &xa));
    if (!k) PetscCall(PetscArraycpy(ya, xa, len));
    else
      for (PetscInt i = 0; i < len; i++) ya[i] += xa[i];
    PetscCall(VecRestoreArrayRead(x[k], &xa));
  }
  PetscCall(VecRestoreArray(y[0], &ya));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardMulti_Add(NNLayer l, PetscInt n, PetscInt nin, Vec x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, Vec y[] PETSC_UNUSED, Vec dy[], Vec dx[])
{
  PetscInt           len = 0;
  PetscScalar       *dxa;
  const PetscScalar *dya;

  PetscFunctionBegin;
  PetscCall(NNAddLength(l, dy[0], n, &len));
  PetscCall(VecGetArrayRead(dy[0], &dya));
  for (PetscInt k = 0; k < nin; k++) {
    if (!dx[k]) continue;
    PetscCall(VecGetArray(dx[k], &dxa));
    PetscCall(PetscArraycpy(dxa, dya, len));
    PetscCall(VecRestoreArray(dx[k], &dxa));
  }
  PetscCall(VecRestoreArrayRead(dy[0], &dya));
  PetscFunctionReturn(0);
}

/* single precision: the same sums and copies on float arrays (no conversions: add only moves and sums data) */
static PetscErrorCode NNLayerForwardMultiSingle_Add(NNLayer l, PetscInt n, PetscInt nin, Vec x[] PETSC_UNUSED, const float *const xs[], PetscInt nout PETSC_UNUSED, Vec y[], float *const ys[])
{
  PetscInt len = 0;

  PetscFunctionBegin;
  PetscCall(NNAddLength(l, y[0], n, &len));
  PetscCall(PetscArraycpy(ys[0], xs[0], len));
  for (PetscInt k = 1; k < nin; k++)
    for (PetscInt i = 0; i < len; i++) ys[0][i] += xs[k][i];
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardMultiSingle_Add(NNLayer l, PetscInt n, PetscInt nin, Vec x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, Vec y[], const float *const dys[], float *const dxs[])
{
  PetscInt len = 0;

  PetscFunctionBegin;
  PetscCall(NNAddLength(l, y[0], n, &len));
  for (PetscInt k = 0; k < nin; k++)
    if (dxs[k]) PetscCall(PetscArraycpy(dxs[k], dys[0], len));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLayerCreate_Add(NNLayer l)
{
  PetscFunctionBegin;
  l->ops->setup            = NNLayerSetUp_Add;
  l->ops->createoutputvecs = NNLayerCreateOutputVecs_Add;
  l->ops->forwardmulti     = NNLayerForwardMulti_Add;
  l->ops->backwardmulti    = NNLayerBackwardMulti_Add;
  l->ops->forwardmultisingle  = NNLayerForwardMultiSingle_Add;
  l->ops->backwardmultisingle = NNLayerBackwardMultiSingle_Add;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/graph/graph_cuda.c */
  l->ops->forwardmultidevice  = NNLayerForwardMultiDevice_Add;
  l->ops->backwardmultidevice = NNLayerBackwardMultiDevice_Add;
#endif
  l->dev.split = PETSC_TRUE; /* also on spatial activations split over ranks: each rank moves its own pixels' rows */
  PetscFunctionReturn(0);
}
