/* The replicated dense layer's passes, a precision template (include/petnn/private/nnrealdouble.h) that dense.c compiles
   in double and in float. W is the layer's parameter slice (weight [out][in], then bias [out]), dW its gradient slice. */
static PetscErrorCode PetscConcat(NNDenseForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *W, const NN_REAL *x, NN_REAL *y)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units;
  const NN_REAL *b  = W + out * in;

  PetscFunctionBegin;
  if (d->bias) {
    for (PetscInt s = 0; s < n; s++) PetscCall(PetscArraycpy(y + s * out, b, out));
  }
  NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, in, 1.0, x, in, W, in, d->bias ? 1.0 : 0.0, y, out);
  PetscCall(PetscLogFlops(2.0 * n * out * in));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscConcat(NNDenseBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *W, NN_REAL *dW, const NN_REAL *x, const NN_REAL *dy, NN_REAL *dx)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units;
  NN_REAL       *db = dW + out * in;

  PetscFunctionBegin;
  if (dx) NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, out, 1.0, dy, out, W, in, 0.0, dx, in);
  NN_GEMM_LAYER(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, n, 1.0, dy, out, x, in, 1.0, dW, in);
  if (d->bias) {
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt o = 0; o < out; o++) db[o] += dy[s * out + o];
  }
  PetscCall(PetscLogFlops(2.0 * n * out * in * (dx ? 2 : 1)));
  PetscFunctionReturn(0);
}
