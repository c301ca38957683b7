/* The partitioned dense layer's passes (dense_partition.c), a precision template (include/petnn/private/nnrealdouble.h)
   compiled in double and in float: W is the layer's piece of the parameters (weight rows or columns, then bias), dW its
   gradient; the all-gathers and sums move NN_REAL. */
PetscErrorCode PetscConcat(NNDensePartForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *W, const NN_REAL *x, NN_REAL *y)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units, start = d->pc.dsp[d->pc.rank], cnt = d->pc.cnt[d->pc.rank];
  NN_REAL       *work = PetscConcat(NNDensePartWork, NN_SUFFIX)(d);

  PetscFunctionBegin;
  if (l->part.type == NN_PARTITION_ROWS) {
    const NN_REAL *b = W + cnt * in;
    if (d->bias)
      for (PetscInt s = 0; s < n; s++) PetscCall(PetscArraycpy(work + s * cnt, b, cnt));
    NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasTrans, n, cnt, in, 1.0, x, in, W, in, d->bias ? 1.0 : 0.0, work, cnt);
    PetscCall(PetscConcat(NNPartColumnsAllgather, NN_SUFFIX)(&d->pc, n, work, cnt, y, out));
  } else {
    const NN_REAL *b = W + out * cnt;
    NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasTrans, n, out, cnt, 1.0, x + start, in, W, cnt, 0.0, y, out);
    PetscCall(PetscConcat(NNPartSum, NN_SUFFIX)(d->pc.comm, n * out, y));
    if (d->bias)
      for (PetscInt s = 0; s < n; s++)
        for (PetscInt o = 0; o < out; o++) y[s * out + o] += b[o];
  }
  PetscCall(PetscLogFlops(2.0 * n * cnt * (l->part.type == NN_PARTITION_ROWS ? in : out)));
  PetscFunctionReturn(0);
}

PetscErrorCode PetscConcat(NNDensePartBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *W, NN_REAL *dW, const NN_REAL *x, const NN_REAL *dy, NN_REAL *dx)
{
  NNLayer_Dense *d  = (NNLayer_Dense *)l->data;
  PetscInt       in = l->inshape.dim[0], out = d->units, start = d->pc.dsp[d->pc.rank], cnt = d->pc.cnt[d->pc.rank];
  NN_REAL       *work = PetscConcat(NNDensePartWork, NN_SUFFIX)(d);

  PetscFunctionBegin;
  if (l->part.type == NN_PARTITION_ROWS) { /* this rank's output columns of dy: dy + start, leading dimension out */
    NN_REAL *db = dW + cnt * in;
    if (dx) {
      NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, in, cnt, 1.0, dy + start, out, W, in, 0.0, dx, in);
      PetscCall(PetscConcat(NNPartSum, NN_SUFFIX)(d->pc.comm, n * in, dx));
    }
    NN_GEMM_LAYER(CblasRowMajor, CblasTrans, CblasNoTrans, cnt, in, n, 1.0, dy + start, out, x, in, 1.0, dW, in);
    if (d->bias)
      for (PetscInt s = 0; s < n; s++)
        for (PetscInt o = 0; o < cnt; o++) db[o] += dy[s * out + start + o];
  } else {
    NN_REAL *db = dW + out * cnt;
    if (dx) {
      NN_GEMM_LAYER(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, cnt, out, 1.0, dy, out, W, cnt, 0.0, work, cnt);
      PetscCall(PetscConcat(NNPartColumnsAllgather, NN_SUFFIX)(&d->pc, n, work, cnt, dx, in));
    }
    NN_GEMM_LAYER(CblasRowMajor, CblasTrans, CblasNoTrans, out, cnt, n, 1.0, dy, out, x + start, in, 1.0, dW, cnt);
    if (d->bias)
      for (PetscInt s = 0; s < n; s++)
        for (PetscInt o = 0; o < out; o++) db[o] += dy[s * out + o];
  }
  PetscCall(PetscLogFlops(2.0 * n * cnt * (l->part.type == NN_PARTITION_ROWS ? in : out) * (dx ? 2 : 1)));
  PetscFunctionReturn(0);
}

