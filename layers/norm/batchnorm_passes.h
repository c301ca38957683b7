/* batchnorm1d's passes, a precision template (include/petnn/private/nnrealdouble.h) that batchnorm.c compiles in double
   and in float. Only the activations, their gradients and the parameters (theta, dtheta: the layer's slices in the
   pass's precision) are NN_REAL: every sum, statistic and xhat is double, and each output entry is computed in double
   and rounded once, so the float passes differ from the double ones by the rounding of their inputs and outputs. */

/*
   per-channel sums of d = x - shift and (optionally) of d^2 over the layout [n][C][inner], reduced over comm.
   shift may be NULL (zero). With shift = the mean from a first pass this is the corrected two-pass variance:
   var = s2/m - (s1/m)^2, accurate even when |mean| >> std.
*/
static PetscErrorCode PetscConcat(NNBatchNormChannelSums, NN_SUFFIX)(MPI_Comm comm, PetscInt n, PetscInt C, PetscInt inner, const NN_REAL *x, const PetscScalar *shift, PetscScalar *sum, PetscScalar *sumsq)
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(sum, C));
  if (sumsq) PetscCall(PetscArrayzero(sumsq, C));
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      const NN_REAL    *xc = x + (s * C + c) * inner;
      const PetscScalar k  = shift ? shift[c] : 0.0;
      PetscScalar       a = 0, b = 0;
      for (PetscInt i = 0; i < inner; i++) {
        PetscScalar d = xc[i] - k;
        a += d;
        b += d * d;
      }
      sum[c] += a;
      if (sumsq) sumsq[c] += b;
    }
  }
  PetscCall(PetscLogFlops((sumsq ? 4.0 : 2.0) * n * C * inner));
  PetscCall(NNBatchNormAllreduce(comm, C, sum, sumsq));
  PetscFunctionReturn(0);
}

/*
   per-channel sums of dy and of dy*xhat over the layout [n][C][inner], reduced over comm: the gradients of beta and
   gamma, and the two terms of the batch-statistics input gradient.
*/
static PetscErrorCode PetscConcat(NNBatchNormGradSums, NN_SUFFIX)(MPI_Comm comm, PetscInt n, PetscInt C, PetscInt inner, const NN_REAL *dy, const PetscScalar *xhat, PetscScalar *sumdy, PetscScalar *sumdyxhat)
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(sumdy, C));
  PetscCall(PetscArrayzero(sumdyxhat, C));
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      const NN_REAL     *g = dy + (s * C + c) * inner;
      const PetscScalar *h = xhat + (s * C + c) * inner;
      PetscScalar        a = 0, b = 0;
      for (PetscInt i = 0; i < inner; i++) {
        a += g[i];
        b += g[i] * h[i];
      }
      sumdy[c] += a;
      sumdyxhat[c] += b;
    }
  }
  PetscCall(PetscLogFlops(3.0 * n * C * inner));
  PetscCall(NNBatchNormAllreduce(comm, C, sumdy, sumdyxhat));
  PetscFunctionReturn(0);
}

/* xhat = (x - mean) invstd and y = gamma xhat + beta, per channel, over the layout [n][C][inner] */
static void PetscConcat(NNBatchNormApply, NN_SUFFIX)(PetscInt n, PetscInt C, PetscInt inner, const NN_REAL *x, const PetscScalar *mean, const PetscScalar *invstd, const NN_REAL *gamma, const NN_REAL *beta, PetscScalar *xhat, NN_REAL *y)
{
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      PetscInt off = (s * C + c) * inner;
      for (PetscInt i = 0; i < inner; i++) {
        xhat[off + i] = (x[off + i] - mean[c]) * invstd[c];
        y[off + i]    = (NN_REAL)(gamma[c] * xhat[off + i] + beta[c]);
      }
    }
  }
}

/*
   dx for the given per-channel sums, m values per channel:
     batch statistics: dx = gamma invstd (dy - sumdy/m - xhat sumdyxhat/m)
     fixed statistics (sumdy = sumdyxhat = NULL): dx = gamma invstd dy
*/
static void PetscConcat(NNBatchNormInputGradient, NN_SUFFIX)(PetscInt n, PetscInt C, PetscInt inner, PetscReal m, const NN_REAL *dy, const PetscScalar *xhat, const NN_REAL *gamma, const PetscScalar *invstd, const PetscScalar *sumdy, const PetscScalar *sumdyxhat, NN_REAL *dx)
{
  for (PetscInt s = 0; s < n; s++) {
    for (PetscInt c = 0; c < C; c++) {
      PetscInt    off = (s * C + c) * inner;
      PetscScalar g   = gamma[c] * invstd[c];
      if (sumdy) {
        PetscScalar a = sumdy[c] / m, b = sumdyxhat[c] / m;
        for (PetscInt i = 0; i < inner; i++) dx[off + i] = (NN_REAL)(g * (dy[off + i] - a - xhat[off + i] * b));
      } else {
        for (PetscInt i = 0; i < inner; i++) dx[off + i] = (NN_REAL)(g * dy[off + i]);
      }
    }
  }
}

/* the forward pass; the running statistics are the double buffers in either precision */
static PetscErrorCode PetscConcat(NNBatchNormForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *theta, const NN_REAL *x, NN_REAL *y)
{
  NNLayer_BatchNorm *bn    = (NNLayer_BatchNorm *)l->data;
  PetscInt           C     = bn->p.C;
  const NN_REAL     *gamma = theta, *beta = theta + C;
  PetscScalar       *rmean = l->buf, *rvar = l->buf + C, *nbt = l->buf + 2 * C;

  PetscFunctionBegin;
  bn->batchstats = l->training;
  if (l->training) {
    PetscReal m = (PetscReal)n; /* values per channel (times inner, and summed over a group, when spatial) */
    PetscCheck(n > 1, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Batch-norm layer %s in training mode needs more than 1 value per channel, got a batch of %" PetscInt_FMT " (use a larger batch or evaluation mode)", ((PetscObject)l)->name, n);
    /* corrected two-pass statistics: the mean, then the centered sums */
    PetscCall(PetscConcat(NNBatchNormChannelSums, NN_SUFFIX)(MPI_COMM_NULL, n, C, 1, x, NULL, bn->s1, NULL));
    for (PetscInt c = 0; c < C; c++) bn->mean[c] = bn->s1[c] / m;
    PetscCall(PetscConcat(NNBatchNormChannelSums, NN_SUFFIX)(MPI_COMM_NULL, n, C, 1, x, bn->mean, bn->s1, bn->s2));
    for (PetscInt c = 0; c < C; c++) {
      PetscScalar d   = bn->s1[c] / m;
      PetscReal   var = PetscMax(PetscRealPart(bn->s2[c] / m - d * d), 0.0); /* biased */
      bn->mean[c] += d;
      NNBatchNormTrainingStats(&bn->p, c, bn->mean[c], var, m, bn->invstd, rmean, rvar);
    }
    nbt[0] += 1;
  } else NNBatchNormRunningStats(&bn->p, rmean, rvar, bn->mean, bn->invstd);
  PetscConcat(NNBatchNormApply, NN_SUFFIX)(n, C, 1, x, bn->mean, bn->invstd, gamma, beta, bn->xhat, y);
  PetscCall(PetscLogFlops(4.0 * n * C));
  PetscFunctionReturn(0);
}

/* the backward pass: the parameter gradient ADDED into dtheta */
static PetscErrorCode PetscConcat(NNBatchNormBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *theta, NN_REAL *dtheta, const NN_REAL *dy, NN_REAL *dx)
{
  NNLayer_BatchNorm *bn     = (NNLayer_BatchNorm *)l->data;
  PetscInt           C      = bn->p.C;
  const NN_REAL     *gamma  = theta;
  NN_REAL           *dgamma = dtheta, *dbeta = dtheta + C;

  PetscFunctionBegin;
  PetscCall(PetscConcat(NNBatchNormGradSums, NN_SUFFIX)(MPI_COMM_NULL, n, C, 1, dy, bn->xhat, bn->s1, bn->s2));
  for (PetscInt c = 0; c < C; c++) {
    dgamma[c] += bn->s2[c];
    dbeta[c] += bn->s1[c];
  }
  if (dx) {
    if (bn->batchstats) PetscConcat(NNBatchNormInputGradient, NN_SUFFIX)(n, C, 1, (PetscReal)n, dy, bn->xhat, gamma, bn->invstd, bn->s1, bn->s2, dx);
    else PetscConcat(NNBatchNormInputGradient, NN_SUFFIX)(n, C, 1, (PetscReal)n, dy, bn->xhat, gamma, bn->invstd, NULL, NULL, dx);
    PetscCall(PetscLogFlops((bn->batchstats ? 5.0 : 2.0) * n * C));
  }
  PetscFunctionReturn(0);
}
