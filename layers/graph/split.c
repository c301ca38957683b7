/*
   split: the first (channel or feature) dimension of its input cut into pieces of -<name>_sizes
   c_0,c_1,... channels (summing to the input's), as torch.split(x, [c_0, c_1, ...], dim=1). Piece k
   is the layer's output k; other layers of the graph network read it as name:k (name alone means
   name:0). Every piece must be read by some layer. Sequential activations split per sample,
   spatial (DMDA) ones per batch slot of every pixel, each piece on the input's grid. Backward
   assembles the input gradient from the pieces' gradients. In single precision (-nn_precision
   single) the same copies on the float activations.
*/
#include "graph.h"
#include <petnn/private/deviceimpl.h>

typedef struct {
  PetscInt  n;     /* number of pieces */
  PetscInt *sizes; /* their channels */
  DM       *da;    /* spatial pieces: the input's grid with c_k channels */
} NNLayer_Split;

static PetscErrorCode NNLayerSplitSetSizes_Split(NNLayer l, PetscInt n, const PetscInt sizes[])
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;

  PetscFunctionBegin;
  PetscCheck(n >= 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (split): %" PetscInt_FMT " pieces; give at least one size (-%ssizes 3,5)", ((PetscObject)l)->name, n, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  for (PetscInt k = 0; k < n; k++) PetscCheck(sizes[k] > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (split): size %" PetscInt_FMT " of piece %" PetscInt_FMT " must be positive (-%ssizes)", ((PetscObject)l)->name, sizes[k], k, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  PetscCall(PetscFree(d->sizes));
  PetscCall(PetscMalloc1(n, &d->sizes));
  PetscCall(PetscArraycpy(d->sizes, sizes, n));
  d->n           = n;
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSplitGetSizes_Split(NNLayer l, PetscInt *n, const PetscInt *sizes[])
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;

  PetscFunctionBegin;
  if (n) *n = d->n;
  if (sizes) *sizes = d->sizes;
  PetscFunctionReturn(0);
}

/*@
   NNLayerSplitSetSizes - sets the channels of the pieces a split layer cuts its input into

   Logically Collective

   Input Parameters:
+  l - the layer (`NNLAYERSPLIT`; a no-op on other types)
.  n - the number of pieces
-  sizes - their channels (features), summing to the input's first dimension

   Options Database Key:
.  -<layer>_sizes <c0,c1,...> - the same

   Notes:
   Piece k is the layer's output k; layers of the graph network read it as "<layer>:k" in their inputs.

   Level: intermediate

.seealso: `NNLayerSplitGetSizes()`, `NNLayerSetInputs()`, `NNSetType()`
@*/
PetscErrorCode NNLayerSplitSetSizes(NNLayer l, PetscInt n, const PetscInt sizes[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerSplitSetSizes_C", (NNLayer, PetscInt, const PetscInt[]), (l, n, sizes));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerSplitGetSizes - gets the channels of the pieces of a split layer

   Not Collective

   Input Parameter:
.  l - the layer (`NNLAYERSPLIT`; other types give n = 0)

   Output Parameters:
+  n - the number of pieces (0: not set)
-  sizes - their channels, owned by the layer

   Level: intermediate

.seealso: `NNLayerSplitSetSizes()`
@*/
PetscErrorCode NNLayerSplitGetSizes(NNLayer l, PetscInt *n, const PetscInt *sizes[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (n) *n = 0;
  if (sizes) *sizes = NULL;
  PetscTryMethod(l, "NNLayerSplitGetSizes_C", (NNLayer, PetscInt *, const PetscInt *[]), (l, n, sizes));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Split(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;
  PetscInt       sizes[64], n = 64;
  PetscBool      flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Split layer options");
  PetscCall(PetscOptionsIntArray("-sizes", "Channels of the pieces (read as <layer>:0, <layer>:1, ...)", "NNLayerSplitSetSizes", sizes, &n, &flg));
  if (flg) PetscCall(NNLayerSplitSetSizes(l, n, sizes));
  PetscOptionsHeadEnd();
  (void)d;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_Split(NNLayer l)
{
  NNLayer_Split *d   = (NNLayer_Split *)l->data;
  const char    *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscInt       sum = 0;

  PetscFunctionBegin;
  PetscCheck(d->n > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (split) has no sizes: give -%ssizes c0,c1,... (channels of the pieces)", ((PetscObject)l)->name, pre);
  PetscCheck(l->graph.nin == 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (split) splits one input of a graph network: use -nn_type graph (and at most one name in -%sinputs)", ((PetscObject)l)->name, pre);
  for (PetscInt k = 0; k < d->n; k++) sum += d->sizes[k];
  if (sum != l->inshape.dim[0]) {
    char sh[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(sh), sh));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Layer %s (split): -%ssizes add up to %" PetscInt_FMT " channels but its input %s has shape %s (%" PetscInt_FMT " channels)", ((PetscObject)l)->name, pre, sum, l->inputname ? l->inputname : "", sh, l->inshape.dim[0]);
  }
  PetscCall(PetscFree(l->graph.outshapes));
  PetscCall(PetscMalloc1(d->n, &l->graph.outshapes));
  for (PetscInt k = 0; k < d->n; k++) {
    l->graph.outshapes[k]        = l->inshape;
    l->graph.outshapes[k].dim[0] = d->sizes[k];
  }
  l->graph.nout = d->n;
  l->outshape   = l->graph.outshapes[0];
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Split(NNLayer l)
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;

  PetscFunctionBegin;
  if (d->da)
    for (PetscInt k = 0; k < d->n; k++) PetscCall(DMDestroy(&d->da[k]));
  PetscCall(PetscFree(d->da));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVecs_Split(NNLayer l, Vec y[])
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;

  PetscFunctionBegin;
  PetscCall(NNLayerReset_Split(l));
  if (l->graph.indms[0]) PetscCall(PetscCalloc1(d->n, &d->da));
  for (PetscInt k = 0; k < d->n; k++) {
    if (l->graph.indms[0]) PetscCall(NNGraphCreateSpatialLike(l, l->graph.indms[0], d->sizes[k], &d->da[k], &y[k]));
    else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->graph.outshapes[k]), &y[k]));
  }
  PetscFunctionReturn(0);
}

/* x's rows are the pieces' rows side by side: forward copies them out, backward back in */
static PetscErrorCode NNSplitCopy(NNLayer l, PetscInt n, Vec x, Vec y[], PetscBool forward)
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;
  PetscInt       rows, B, off = 0;
  DM             dm;
  PetscScalar   *xa, *ya;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  PetscCall(NNGraphRows(l, x, &l->inshape, n, &rows, &B));
  PetscCall(VecGetArray(x, &xa));
  for (PetscInt k = 0; k < d->n; k++) {
    PetscInt b = dm ? d->sizes[k] : NNShapeSize(&l->graph.outshapes[k]);
    PetscCall(VecGetArray(y[k], &ya));
    if (forward)
      for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(ya + i * b, xa + i * B + off, b));
    else
      for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(xa + i * B + off, ya + i * b, b));
    PetscCall(VecRestoreArray(y[k], &ya));
    off += b;
  }
  PetscCall(VecRestoreArray(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardMulti_Split(NNLayer l, PetscInt n, PetscInt nin PETSC_UNUSED, Vec x[], PetscInt nout PETSC_UNUSED, Vec y[])
{
  PetscFunctionBegin;
  PetscCall(NNSplitCopy(l, n, x[0], y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardMulti_Split(NNLayer l, PetscInt n, PetscInt nin PETSC_UNUSED, Vec x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, Vec y[] PETSC_UNUSED, Vec dy[], Vec dx[])
{
  PetscFunctionBegin;
  if (dx[0]) PetscCall(NNSplitCopy(l, n, dx[0], dy, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* single precision: the same row blocks moved between float arrays (pure data movement, so no conversions) */
static PetscErrorCode NNLayerForwardMultiSingle_Split(NNLayer l, PetscInt n, PetscInt nin PETSC_UNUSED, Vec x[], const float *const xs[], PetscInt nout PETSC_UNUSED, Vec y[] PETSC_UNUSED, float *const ys[])
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;
  PetscInt       rows, B, off = 0;
  DM             dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x[0], &dm));
  PetscCall(NNGraphRows(l, x[0], &l->inshape, n, &rows, &B));
  for (PetscInt k = 0; k < d->n; k++) {
    PetscInt b = dm ? d->sizes[k] : NNShapeSize(&l->graph.outshapes[k]);
    for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(ys[k] + i * b, xs[0] + i * B + off, b));
    off += b;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardMultiSingle_Split(NNLayer l, PetscInt n, PetscInt nin PETSC_UNUSED, Vec x[], PetscInt nout PETSC_UNUSED, Vec y[] PETSC_UNUSED, const float *const dys[], float *const dxs[])
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;
  PetscInt       rows, B, off = 0;
  DM             dm;

  PetscFunctionBegin;
  if (!dxs[0]) PetscFunctionReturn(0);
  PetscCall(VecGetDM(x[0], &dm));
  PetscCall(NNGraphRows(l, x[0], &l->inshape, n, &rows, &B));
  for (PetscInt k = 0; k < d->n; k++) {
    PetscInt b = dm ? d->sizes[k] : NNShapeSize(&l->graph.outshapes[k]);
    for (PetscInt i = 0; i < rows; i++) PetscCall(PetscArraycpy(dxs[0] + i * B + off, dys[k] + i * b, b));
    off += b;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Split(NNLayer l, PetscViewer viewer)
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "pieces of"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  for (PetscInt k = 0; k < d->n; k++) PetscCall(PetscViewerASCIIPrintf(viewer, " %s:%" PetscInt_FMT " %" PetscInt_FMT, ((PetscObject)l)->name, k, d->sizes[k]));
  PetscCall(PetscViewerASCIIPrintf(viewer, " channels\n"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNLayerSplitFunctions[] = {
  {"NNLayerSplitSetSizes_C", (PetscVoidFunction)NNLayerSplitSetSizes_Split},
  {"NNLayerSplitGetSizes_C", (PetscVoidFunction)NNLayerSplitGetSizes_Split},
};

static PetscErrorCode NNLayerDestroy_Split(NNLayer l)
{
  NNLayer_Split *d = (NNLayer_Split *)l->data;

  PetscFunctionBegin;
  PetscCall(NNLayerReset_Split(l));
  PetscCall(PetscFree(d->sizes));
  PetscCall(PetscFree(l->data));
  PetscCall(NNLayerComposeFunctions(l, sizeof(NNLayerSplitFunctions) / sizeof(NNLayerSplitFunctions[0]), NNLayerSplitFunctions, PETSC_FALSE));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLayerCreate_Split(NNLayer l)
{
  NNLayer_Split *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  l->data                  = d;
  l->ops->setfromoptions   = NNLayerSetFromOptions_Split;
  l->ops->setup            = NNLayerSetUp_Split;
  l->ops->createoutputvecs = NNLayerCreateOutputVecs_Split;
  l->ops->forwardmulti     = NNLayerForwardMulti_Split;
  l->ops->backwardmulti    = NNLayerBackwardMulti_Split;
  l->ops->forwardmultisingle  = NNLayerForwardMultiSingle_Split;
  l->ops->backwardmultisingle = NNLayerBackwardMultiSingle_Split;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/graph/graph_cuda.c */
  l->ops->forwardmultidevice  = NNLayerForwardMultiDevice_Split;
  l->ops->backwardmultidevice = NNLayerBackwardMultiDevice_Split;
#endif
  l->dev.split             = PETSC_TRUE; /* also on spatial activations split over ranks: each rank moves its own pixels' rows */
  l->ops->view             = NNLayerView_Split;
  l->ops->reset            = NNLayerReset_Split;
  l->ops->destroy          = NNLayerDestroy_Split;
  PetscCall(NNLayerComposeFunctions(l, sizeof(NNLayerSplitFunctions) / sizeof(NNLayerSplitFunctions[0]), NNLayerSplitFunctions, PETSC_TRUE));
  PetscFunctionReturn(0);
}
