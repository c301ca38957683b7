/*
   Device passes of the partitioned dense layer (-<layer>_partition rows|columns with -nn_device cuda): the maths of
   dense_partition_passes.h with cuBLAS GEMMs (column-major, as in dense_cuda.c: a row-major [r][c] array is a c x r
   matrix) and the device partition primitives (src/layer/interface/partitionops_cuda.c). The rank holds
     rows     W_r [cnt][in] (in x cnt) and b_r:  Y_r (cnt x n) = b_r 1^T + W_r^T X, all-gathered into Y (out x n);
              backward dX = W_r dY_r summed over the ranks, dW_r += X dY_r^T, db_r += dY_r 1, with dY_r the rank's
              cnt rows of dY (its columns of the row-major dy: dy + start, leading dimension out)
     columns  W_r [out][cnt] (cnt x out) and b:  Y = W_r^T X_r summed over the ranks, then + b 1^T, X_r the rank's
              rows of X (x + start, leading dimension in); backward dX_r = W_r dY all-gathered into dX,
              dW_r += X_r dY^T, db += dY 1
   The work array [nbatch][cnt] is the layer's, made on the first device pass in the precision of the pass.
*/
#include "dense.h"
#include <petnn/private/cudaimpl.h>
#include <petnn/private/partitiondevice.h>
#include <petnn/private/spatialhalodevice.h>

static PetscErrorCode NNDensePartDeviceWork(NNLayer l, void **work)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;

  PetscFunctionBegin;
  if (!d->devwork) PetscCall(NNCUDAMalloc((size_t)PetscMax(l->nbatch * d->pc.cnt[d->pc.rank], 1) * sizeof(double), &d->devwork)); /* either precision */
  *work = d->devwork;
  PetscFunctionReturn(0);
}

/* frees the device work array (the layer's reset) */
PetscErrorCode NNDensePartResetDevice(NNLayer l)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;

  PetscFunctionBegin;
  PetscCall(NNCUDAFree(&d->devwork));
  PetscFunctionReturn(0);
}

PetscErrorCode NNDensePartForwardDevice(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units, start = d->pc.dsp[d->pc.rank], cnt = d->pc.cnt[d->pc.rank];
  NNPrecision    p  = l->dev.prec;
  const size_t   es = p == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  const char    *W  = (const char *)l->dev.theta;
  const void    *ones;
  void          *work = NULL;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetOnes(p, n, &ones));
  if (l->part.type == NN_PARTITION_ROWS) {
    PetscCall(NNDensePartDeviceWork(l, &work));
    if (d->bias) PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, cnt, n, 1, 1.0, W + (size_t)cnt * in * es, cnt, ones, 1, 0.0, work, cnt));
    PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, cnt, n, in, 1.0, W, in, x, in, d->bias ? 1.0 : 0.0, work, cnt));
    PetscCall(NNDevicePartColumnsAllgather(&d->pc, p, n, work, cnt, y, out));
  } else {
    PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, out, n, cnt, 1.0, W, cnt, (const char *)x + (size_t)start * es, in, 0.0, y, out));
    PetscCall(NNDeviceAllreduceSum(d->pc.comm, p, y, (size_t)n * out));
    if (d->bias) PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, out, n, 1, 1.0, W + (size_t)out * cnt * es, out, ones, 1, 1.0, y, out));
  }
  PetscCall(PetscLogFlops(2.0 * n * cnt * (l->part.type == NN_PARTITION_ROWS ? in : out)));
  PetscFunctionReturn(0);
}

PetscErrorCode NNDensePartBackwardDevice(NNLayer l, PetscInt n, const void *x, const void *dy, void *dx)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units, start = d->pc.dsp[d->pc.rank], cnt = d->pc.cnt[d->pc.rank];
  NNPrecision    p  = l->dev.prec;
  const size_t   es = p == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  const void    *W  = l->dev.theta, *ones;
  char          *dW = (char *)l->dev.dtheta;
  void          *work = NULL;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetOnes(p, n, &ones));
  if (l->part.type == NN_PARTITION_ROWS) {
    const char *dyr = (const char *)dy + (size_t)start * es;
    if (dx) {
      PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, in, n, cnt, 1.0, W, in, dyr, out, 0.0, dx, in));
      PetscCall(NNDeviceAllreduceSum(d->pc.comm, p, dx, (size_t)n * in));
    }
    PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, in, cnt, n, 1.0, x, in, dyr, out, 1.0, dW, in));
    if (d->bias) PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, cnt, 1, n, 1.0, dyr, out, ones, n, 1.0, dW + (size_t)cnt * in * es, cnt));
  } else {
    if (dx) {
      PetscCall(NNDensePartDeviceWork(l, &work));
      PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, cnt, n, out, 1.0, W, cnt, dy, out, 0.0, work, cnt));
      PetscCall(NNDevicePartColumnsAllgather(&d->pc, p, n, work, cnt, dx, in));
    }
    PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, cnt, out, n, 1.0, (const char *)x + (size_t)start * es, in, dy, out, 1.0, dW, cnt));
    if (d->bias) PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, out, 1, n, 1.0, dy, out, ones, n, 1.0, dW + (size_t)out * cnt * es, out));
  }
  PetscCall(PetscLogFlops(2.0 * n * cnt * (l->part.type == NN_PARTITION_ROWS ? in : out) * (dx ? 2 : 1)));
  PetscFunctionReturn(0);
}
