/* batchnorm2d/3d's kernels and passes, a precision template (include/petnn/private/nnrealdouble.h) that
   batchnormspatial.c compiles in double and in float. Only the activations, their gradients and the parameters (theta,
   dtheta: the layer's slices in the pass's precision) are NN_REAL: every sum, statistic and coefficient is double,
   reduced over the ranks in double, and each output entry is computed in double and rounded once. */

/* acc[i] += sum_p x[p][i] */
static void PetscConcat(NNBNSumRuns, NN_SUFFIX)(PetscInt npix, PetscInt D, PetscInt L, const NN_REAL *PETSC_RESTRICT x, PetscScalar *PETSC_RESTRICT acc)
{
  for (PetscInt p = 0; p < npix; p++) {
    const NN_REAL *PETSC_RESTRICT xr = x + p * D;
    for (PetscInt i = 0; i < L; i++) acc[i] += xr[i];
  }
}

/* a1[i] += sum_p d, a2[i] += sum_p d^2 with d = x[p][i] - mu[i] */
static void PetscConcat(NNBNCenteredSums, NN_SUFFIX)(PetscInt npix, PetscInt D, PetscInt L, const NN_REAL *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT mu, PetscScalar *PETSC_RESTRICT a1, PetscScalar *PETSC_RESTRICT a2)
{
  for (PetscInt p = 0; p < npix; p++) {
    const NN_REAL *PETSC_RESTRICT xr = x + p * D;
    for (PetscInt i = 0; i < L; i++) {
      PetscScalar d = xr[i] - mu[i];
      a1[i] += d;
      a2[i] += d * d;
    }
  }
}

/* a1[i] += sum_p g, a2[i] += sum_p g (x - mu[i]) */
static void PetscConcat(NNBNGradSums, NN_SUFFIX)(PetscInt npix, PetscInt D, PetscInt L, const NN_REAL *PETSC_RESTRICT x, const NN_REAL *PETSC_RESTRICT g, const PetscScalar *PETSC_RESTRICT mu, PetscScalar *PETSC_RESTRICT a1, PetscScalar *PETSC_RESTRICT a2)
{
  for (PetscInt p = 0; p < npix; p++) {
    const NN_REAL *PETSC_RESTRICT xr = x + p * D, *PETSC_RESTRICT gr = g + p * D;
    for (PetscInt i = 0; i < L; i++) {
      a1[i] += gr[i];
      a2[i] += gr[i] * (xr[i] - mu[i]);
    }
  }
}

/*
   the per-slot affine maps of the forward and backward passes, slots s >= n set to zero:
     g == NULL:           y[p][i] = a[i] (x[p][i] - mu[i]) + b[i]
     g != NULL:           y[p][i] = u[i] g[p][i] + a[i] (x[p][i] - mu[i]) + b[i]
     g != NULL, a == NULL: y[p][i] = u[i] g[p][i]
*/
static void PetscConcat(NNBNApply, NN_SUFFIX)(PetscInt npix, PetscInt D, PetscInt L, const NN_REAL *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT mu, const PetscScalar *PETSC_RESTRICT a, const PetscScalar *PETSC_RESTRICT b, const NN_REAL *PETSC_RESTRICT g, const PetscScalar *PETSC_RESTRICT u, NN_REAL *PETSC_RESTRICT y)
{
  for (PetscInt p = 0; p < npix; p++) {
    const NN_REAL *PETSC_RESTRICT xr = x + p * D, *PETSC_RESTRICT gr = g ? g + p * D : NULL;
    NN_REAL *PETSC_RESTRICT yr = y + p * D;
    if (!g)
      for (PetscInt i = 0; i < L; i++) yr[i] = (NN_REAL)(a[i] * (xr[i] - mu[i]) + b[i]);
    else if (a)
      for (PetscInt i = 0; i < L; i++) yr[i] = (NN_REAL)(u[i] * gr[i] + a[i] * (xr[i] - mu[i]) + b[i]);
    else
      for (PetscInt i = 0; i < L; i++) yr[i] = (NN_REAL)(u[i] * gr[i]);
    for (PetscInt i = L; i < D; i++) yr[i] = 0; /* slots s >= n */
  }
}

/*
   count, mean and centered sum of squares of each channel over the rank's values (slots s < n of its npix pixels) into
   bn->stats. Corrected two-pass: the mean, then the sums of d = x - mean and d^2 (the sum of d corrects the rounding of
   the first mean).
*/
static PetscErrorCode PetscConcat(NNBatchNormSpatialLocalStats, NN_SUFFIX)(NNLayer_BatchNormSpatial *bn, PetscInt npix, PetscInt nb, PetscInt n, const NN_REAL *x)
{
  PetscInt  C = bn->p.C, D = nb * C, L = n * C;
  PetscReal cnt = (PetscReal)npix * (PetscReal)n;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(bn->acc1, L));
  PetscConcat(NNBNSumRuns, NN_SUFFIX)(npix, D, L, x, bn->acc1);
  NNBNFold(n, C, bn->acc1, bn->s1);
  for (PetscInt c = 0; c < C; c++) bn->mean[c] = cnt > 0 ? bn->s1[c] / cnt : 0.0;
  NNBNExpand(n, C, bn->mean, bn->mue);
  PetscCall(PetscArrayzero(bn->acc1, L));
  PetscCall(PetscArrayzero(bn->acc2, L));
  PetscConcat(NNBNCenteredSums, NN_SUFFIX)(npix, D, L, x, bn->mue, bn->acc1, bn->acc2);
  NNBNFold(n, C, bn->acc1, bn->s1);
  NNBNFold(n, C, bn->acc2, bn->s2);
  for (PetscInt c = 0; c < C; c++) {
    bn->stats[3 * c]     = cnt;
    bn->stats[3 * c + 1] = cnt > 0 ? PetscRealPart(bn->mean[c] + bn->s1[c] / cnt) : 0.0;
    bn->stats[3 * c + 2] = cnt > 0 ? PetscMax(PetscRealPart(bn->s2[c] - bn->s1[c] * bn->s1[c] / cnt), 0.0) : 0.0;
  }
  PetscCall(PetscLogFlops(5.0 * npix * L));
  PetscFunctionReturn(0);
}

/* the forward pass on the rank's npix pixels; the running statistics are the double buffers in either precision */
static PetscErrorCode PetscConcat(NNBatchNormSpatialForward, NN_SUFFIX)(NNLayer l, PetscInt n, PetscInt npix, const NN_REAL *theta, const NN_REAL *xa, NN_REAL *ya)
{
  NNLayer_BatchNormSpatial *bn   = (NNLayer_BatchNormSpatial *)l->data;
  MPI_Comm                  comm = PetscObjectComm((PetscObject)l);
  PetscInt                  C = bn->p.C, nb = l->nbatch, D = nb * C;
  PetscReal                 m     = (PetscReal)n * (PetscReal)(NNShapeSize(&l->inshape) / C); /* values per channel */
  const NN_REAL            *gamma = theta, *beta = theta + C;
  PetscScalar              *rmean = l->buf, *rvar = l->buf + C, *nbt = l->buf + 2 * C, *a = bn->s1;

  PetscFunctionBegin;
  bn->batchstats = l->training;
  if (l->training) {
    PetscCheck(m > 1, comm, PETSC_ERR_ARG_SIZ, "Batch-norm layer %s in training mode needs more than 1 value per channel, got %g (batch %" PetscInt_FMT " x pixels); use a larger batch or evaluation mode", ((PetscObject)l)->name, (double)m, n);
    PetscCall(PetscConcat(NNBatchNormSpatialLocalStats, NN_SUFFIX)(bn, npix, nb, n, xa));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bn->stats, (PetscMPIInt)C, bn->stattype, bn->statop, comm));
    PetscCheck(bn->stats[0] == m, comm, PETSC_ERR_PLIB, "Batch-norm layer %s: the ranks hold %g values per channel, expected %g", ((PetscObject)l)->name, (double)bn->stats[0], (double)m);
    for (PetscInt c = 0; c < C; c++) {
      PetscReal var = bn->stats[3 * c + 2] / m; /* biased */
      bn->mean[c]   = bn->stats[3 * c + 1];
      NNBatchNormTrainingStats(&bn->p, c, bn->mean[c], var, m, bn->invstd, rmean, rvar);
    }
    nbt[0] += 1;
  } else NNBatchNormRunningStats(&bn->p, rmean, rvar, bn->mean, bn->invstd);
  for (PetscInt c = 0; c < C; c++) a[c] = gamma[c] * bn->invstd[c];
  NNBNExpand(n, C, a, bn->ae);
  for (PetscInt s = 0; s < n; s++) /* beta[c] expanded (NNBNExpand()) */
    for (PetscInt c = 0; c < C; c++) bn->be[s * C + c] = beta[c];
  NNBNExpand(n, C, bn->mean, bn->mue);
  PetscConcat(NNBNApply, NN_SUFFIX)(npix, D, n * C, xa, bn->mue, bn->ae, bn->be, NULL, NULL, ya);
  PetscCall(PetscLogFlops(3.0 * npix * n * C));
  PetscFunctionReturn(0);
}

/* the backward pass on the rank's npix pixels: the parameter gradient, summed over the ranks, ADDED into dtheta */
static PetscErrorCode PetscConcat(NNBatchNormSpatialBackward, NN_SUFFIX)(NNLayer l, PetscInt n, PetscInt npix, const NN_REAL *theta, NN_REAL *dtheta, const NN_REAL *xa, const NN_REAL *dya, NN_REAL *dxa)
{
  NNLayer_BatchNormSpatial *bn = (NNLayer_BatchNormSpatial *)l->data;
  PetscInt                  C = bn->p.C, nb = l->nbatch, D = nb * C, L = n * C;
  PetscReal                 m      = (PetscReal)n * (PetscReal)(NNShapeSize(&l->inshape) / C);
  const NN_REAL            *gamma  = theta;
  NN_REAL                  *dgamma = dtheta, *dbeta = dtheta + C;
  PetscScalar              *sdy = bn->sums, *sdx = bn->sums + C;
  PetscMPIInt               cnt;

  PetscFunctionBegin;
  /* sum dy and sum dy (x - mean) over the rank's values, then over the ranks */
  PetscCall(PetscArrayzero(bn->acc1, L));
  PetscCall(PetscArrayzero(bn->acc2, L));
  PetscConcat(NNBNGradSums, NN_SUFFIX)(npix, D, L, xa, dya, bn->mue, bn->acc1, bn->acc2);
  NNBNFold(n, C, bn->acc1, sdy);
  NNBNFold(n, C, bn->acc2, sdx);
  PetscCall(PetscMPIIntCast(2 * C, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, bn->sums, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt c = 0; c < C; c++) {
    sdx[c] *= bn->invstd[c]; /* sum dy xhat */
    dgamma[c] += sdx[c];
    dbeta[c] += sdy[c];
  }
  PetscCall(PetscLogFlops(4.0 * npix * L));
  if (dxa) {
    /* dx = u dy + w (x - mean) + v: u = gamma invstd, v = -u sum(dy)/m, w = -u invstd sum(dy xhat)/m;
       fixed statistics (eval mode): dx = u dy */
    PetscScalar *u = bn->s1, *v = bn->s2, *w = sdy; /* w overwrites sdy[c] after v[c] has used it */
    for (PetscInt c = 0; c < C; c++) {
      u[c] = gamma[c] * bn->invstd[c];
      v[c] = -u[c] * sdy[c] / m;
      w[c] = -u[c] * bn->invstd[c] * sdx[c] / m;
    }
    NNBNExpand(n, C, u, bn->acc1);
    NNBNExpand(n, C, w, bn->ae);
    NNBNExpand(n, C, v, bn->be);
    PetscConcat(NNBNApply, NN_SUFFIX)(npix, D, L, xa, bn->mue, bn->batchstats ? bn->ae : NULL, bn->be, dya, bn->acc1, dxa);
    PetscCall(PetscLogFlops((bn->batchstats ? 5.0 : 1.0) * npix * L));
  }
  PetscFunctionReturn(0);
}
