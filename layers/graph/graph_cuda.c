/*
   Device passes of the graph layers (-nn_device cuda): add, concat and split on device arrays, with the CPU passes'
   layout (graph.h): rows of blocks, a row one sample (sequential) or one batch slot of one pixel (spatial, the rank's
   whole array: every slot). concat and split move blocks of rows (NNCUDACopyBlocks()), add copies and adds in input
   order as the CPU does.
*/
#include "graph.h"
#include <petnn/private/deviceimpl.h>
#include <petnn/private/cudaimpl.h>

/* the rows of a pass over n samples and the block of shape s per row (NNGraphRows() on the device: the layout is that
   of the layer's first input) */
static PetscErrorCode NNGraphDeviceRows(NNLayer l, const NNShape *s, PetscInt n, PetscInt *rows, PetscInt *block)
{
  DM       dm = l->graph.indms ? l->graph.indms[0] : NULL;
  PetscInt xm, ym, zm;

  PetscFunctionBegin;
  if (!dm) {
    *rows  = n;
    *block = NNShapeSize(s);
    PetscFunctionReturn(0);
  }
  PetscCall(DMDAGetCorners(dm, NULL, NULL, NULL, &xm, &ym, &zm));
  *rows  = xm * ym * zm * l->nbatch;
  *block = s->dim[0];
  PetscFunctionReturn(0);
}

/* the whole's rows are the parts' rows side by side; toparts: copy them out, else in (parts NULL are skipped) */
static PetscErrorCode NNGraphDeviceCopyParts(NNLayer l, PetscInt n, const NNShape *whole, PetscInt nparts, const NNShape parts[], void *w, void *const p[], PetscBool toparts)
{
  PetscInt     rows = 0, B = 0, off = 0;
  const int    single = l->dev.prec == NN_PRECISION_SINGLE;
  size_t       es     = single ? sizeof(float) : sizeof(double);
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(NNGraphDeviceRows(l, whole, n, &rows, &B));
  for (PetscInt k = 0; k < nparts; k++) {
    PetscInt r = 0, b = 0;
    PetscCall(NNGraphDeviceRows(l, &parts[k], n, &r, &b));
    if (p[k] && toparts) NNCallCUDA(NNCUDACopyBlocks(single, (size_t)rows, (size_t)b, (char *)w + off * es, (size_t)B, p[k], (size_t)b, s));
    else if (p[k]) NNCallCUDA(NNCUDACopyBlocks(single, (size_t)rows, (size_t)b, p[k], (size_t)b, (char *)w + off * es, (size_t)B, s));
    off += b;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardMultiDevice_Concat(NNLayer l, PetscInt n, PetscInt nin, const void *const x[], PetscInt nout PETSC_UNUSED, void *const y[])
{
  PetscFunctionBegin;
  PetscCall(NNGraphDeviceCopyParts(l, n, &l->outshape, nin, l->graph.inshapes, y[0], (void *const *)x, PETSC_FALSE));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardMultiDevice_Concat(NNLayer l, PetscInt n, PetscInt nin, const void *const x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, const void *const y[] PETSC_UNUSED, const void *const dy[], void *const dx[])
{
  PetscFunctionBegin;
  PetscCall(NNGraphDeviceCopyParts(l, n, &l->outshape, nin, l->graph.inshapes, (void *)dy[0], dx, PETSC_TRUE));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardMultiDevice_Split(NNLayer l, PetscInt n, PetscInt nin PETSC_UNUSED, const void *const x[], PetscInt nout, void *const y[])
{
  PetscFunctionBegin;
  PetscCall(NNGraphDeviceCopyParts(l, n, &l->inshape, nout, l->graph.outshapes, (void *)x[0], y, PETSC_TRUE));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardMultiDevice_Split(NNLayer l, PetscInt n, PetscInt nin PETSC_UNUSED, const void *const x[] PETSC_UNUSED, PetscInt nout, const void *const y[] PETSC_UNUSED, const void *const dy[], void *const dx[])
{
  PetscFunctionBegin;
  if (dx[0]) PetscCall(NNGraphDeviceCopyParts(l, n, &l->inshape, nout, l->graph.outshapes, dx[0], (void *const *)dy, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* the entries add touches: the first n samples, or the rank's whole array */
static PetscErrorCode NNAddDeviceLength(NNLayer l, PetscInt n, size_t *len)
{
  PetscInt rows = 0, b = 0;

  PetscFunctionBegin;
  PetscCall(NNGraphDeviceRows(l, &l->outshape, n, &rows, &b));
  *len = (size_t)rows * (size_t)b;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardMultiDevice_Add(NNLayer l, PetscInt n, PetscInt nin, const void *const x[], PetscInt nout PETSC_UNUSED, void *const y[])
{
  size_t       len    = 0;
  const int    single = l->dev.prec == NN_PRECISION_SINGLE;
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNAddDeviceLength(l, n, &len));
  PetscCall(NNCUDAGetStream(&s));
  if (len) NNCallCUDA(cudaMemcpyAsync(y[0], x[0], len * (single ? sizeof(float) : sizeof(double)), cudaMemcpyDeviceToDevice, s));
  for (PetscInt k = 1; k < nin; k++) NNCallCUDA(NNCUDAAxpy(single, len, 1.0, x[k], y[0], s));
  PetscCall(PetscLogFlops((PetscLogDouble)(nin - 1) * len));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardMultiDevice_Add(NNLayer l, PetscInt n, PetscInt nin, const void *const x[] PETSC_UNUSED, PetscInt nout PETSC_UNUSED, const void *const y[] PETSC_UNUSED, const void *const dy[], void *const dx[])
{
  size_t       len    = 0;
  const int    single = l->dev.prec == NN_PRECISION_SINGLE;
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNAddDeviceLength(l, n, &len));
  PetscCall(NNCUDAGetStream(&s));
  for (PetscInt k = 0; k < nin; k++)
    if (dx[k] && len) NNCallCUDA(cudaMemcpyAsync(dx[k], dy[0], len * (single ? sizeof(float) : sizeof(double)), cudaMemcpyDeviceToDevice, s));
  PetscFunctionReturn(0);
}
