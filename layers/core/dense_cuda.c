/*
   Device passes of the dense layer (-nn_device cuda): the GEMMs of dense_passes.h through cublasGemmEx() in double or
   float (TF32 only with -nn_cuda_tf32), the bias by two small kernels (a GEMM with a vector of ones costs a cuBLAS call,
   several times a kernel launch on the small shapes of a batch, and rounds the bias to TF32 with -nn_cuda_tf32).
   cuBLAS is column-major: a row-major [r][c] array is its c x r matrix, so with x [n][in], W [out][in], y [n][out]
   (column-major: X in x n, W in x out, Y out x n)
     forward   Y = b 1^T (every column b: NNCUDABiasBroadcast()), then Y += W^T X        (Y = X W^T + b)
     backward  dX = W dY (in x n), dW += X dY^T (in x out), db += dY 1 (NNCUDABiasGradient())  (dx = dy W, dW += dy^T x)
*/
#include "dense.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNLayerForwardDevice_Dense(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units;
  NNPrecision    p  = l->dev.prec;
  const size_t   es = p == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  const char    *W  = (const char *)l->dev.theta;
  cudaStream_t   s;

  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) {
    PetscCall(NNDensePartForwardDevice(l, n, x, y)); /* dense_partition_cuda.c */
    PetscFunctionReturn(0);
  }
  if (d->bias) {
    PetscCall(NNCUDAGetStream(&s));
    NNCallCUDA(NNCUDABiasBroadcast(p == NN_PRECISION_SINGLE, (size_t)out, (size_t)n, W + (size_t)out * in * es, y, s));
  }
  PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_T, CUBLAS_OP_N, out, n, in, 1.0, W, in, x, in, d->bias ? 1.0 : 0.0, y, out));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Dense(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units;
  NNPrecision    p  = l->dev.prec;
  const size_t   es = p == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  const void    *W  = l->dev.theta;
  char          *dW = (char *)l->dev.dtheta;
  cudaStream_t   s;

  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_REPLICATE) {
    PetscCall(NNDensePartBackwardDevice(l, n, x, dy, dx));
    PetscFunctionReturn(0);
  }
  if (dx) PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_N, in, n, out, 1.0, W, in, dy, out, 0.0, dx, in));
  PetscCall(NNCUDAGemm(p, l->dev.tf32, CUBLAS_OP_N, CUBLAS_OP_T, in, out, n, 1.0, x, in, dy, out, 1.0, dW, in));
  if (d->bias) {
    PetscCall(NNCUDAGetStream(&s));
    NNCallCUDA(NNCUDABiasGradient(p == NN_PRECISION_SINGLE, (size_t)out, (size_t)n, dy, dW + (size_t)out * in * es, s));
  }
  PetscFunctionReturn(0);
}
