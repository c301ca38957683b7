/* group_norm's and instance_norm's passes, a precision template (include/petnn/private/nnrealdouble.h) that groupnorm.c
   compiles in double and in float. Only the activations, their gradients and the parameters (theta, dtheta: the
   layer's slices in the pass's precision) are NN_REAL: the statistics and every sum are double, reduced over the ranks
   in double, and each output entry is computed in double and rounded once (layers/norm/normbase_kernels.h). */

/* out[s*G + g] = sum over the channels c of group g of acc[s*C + c] (times w[c] when w != NULL) */
static void PetscConcat(NNGroupFold, NN_SUFFIX)(PetscInt n, PetscInt C, PetscInt G, const PetscScalar *acc, const NN_REAL *w, PetscScalar *out)
{
  PetscInt cg = C / G;

  for (PetscInt s = 0; s < n; s++)
    for (PetscInt g = 0; g < G; g++) {
      PetscScalar t = 0;
      for (PetscInt c = g * cg; c < (g + 1) * cg; c++) t += w ? w[c] * acc[s * C + c] : acc[s * C + c];
      out[s * G + g] = t;
    }
}

/* mean[s*G+g] and rstd[s*G+g] of the first n samples (corrected two-pass, reduced over the ranks when spatial) */
static PetscErrorCode PetscConcat(NNGroupNormStats, NN_SUFFIX)(NNLayer l, const NNNormLayout *lay, PetscInt n, const NN_REAL *x)
{
  NNNorm   *p = (NNNorm *)l->data;
  PetscInt  C = p->C, G = p->G, L = n * C, nG = n * G;
  PetscReal m = p->m;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(p->acc1, L));
  PetscConcat(NNNormSums, NN_SUFFIX)(lay, L, x, NULL, p->acc1, NULL);
  PetscConcat(NNGroupFold, NN_SUFFIX)(n, C, G, p->acc1, NULL, p->mean);
  PetscCall(NNGroupAllreduce(l, lay, nG, p->mean));
  for (PetscInt i = 0; i < nG; i++) p->mean[i] /= m;
  NNGroupExpand(n, C, G, p->mean, p->mu);
  PetscCall(PetscArrayzero(p->acc1, L));
  PetscCall(PetscArrayzero(p->acc2, L));
  PetscConcat(NNNormSums, NN_SUFFIX)(lay, L, x, p->mu, p->acc1, p->acc2);
  PetscConcat(NNGroupFold, NN_SUFFIX)(n, C, G, p->acc1, NULL, p->gs);
  PetscConcat(NNGroupFold, NN_SUFFIX)(n, C, G, p->acc2, NULL, p->gs + nG);
  PetscCall(NNGroupAllreduce(l, lay, 2 * nG, p->gs));
  for (PetscInt i = 0; i < nG; i++) {
    PetscScalar d   = p->gs[i] / m;
    PetscReal   var = PetscMax(PetscRealPart(p->gs[nG + i] / m - d * d), 0.0);
    p->mean[i] += d;
    p->rstd[i] = 1.0 / PetscSqrtReal(var + p->eps);
  }
  PetscCall(PetscLogFlops(5.0 * L * lay->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscConcat(NNGroupNormForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NNNormLayout *lay, const NN_REAL *theta, const NN_REAL *xa, NN_REAL *ya)
{
  NNNorm  *p = (NNNorm *)l->data;
  PetscInt C = p->C, G = p->G, L = n * C;

  PetscFunctionBegin;
  PetscCall(PetscConcat(NNGroupNormStats, NN_SUFFIX)(l, lay, n, xa));
  NNGroupExpand(n, C, G, p->mean, p->mu);
  NNGroupExpand(n, C, G, p->rstd, p->a);
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt c = 0; c < C; c++) {
      if (p->affine) p->a[s * C + c] *= theta[c];
      p->b[s * C + c] = p->affine ? theta[C + c] : 0.0;
    }
  PetscConcat(NNNormApply, NN_SUFFIX)(lay, L, xa, p->mu, p->a, p->b, NULL, NULL, ya);
  PetscCall(PetscLogFlops(3.0 * L * lay->npos));
  PetscFunctionReturn(0);
}

/* the parameter gradient (affine), summed over the ranks, ADDED into dtheta; dxa NULL: no input gradient */
static PetscErrorCode PetscConcat(NNGroupNormBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NNNormLayout *lay, const NN_REAL *theta, NN_REAL *dtheta, const NN_REAL *xa, const NN_REAL *dya, NN_REAL *dxa)
{
  NNNorm        *p = (NNNorm *)l->data;
  PetscInt       C = p->C, G = p->G, L = n * C, nG = n * G;
  PetscReal      m  = p->m;
  const NN_REAL *w  = p->affine ? theta : NULL;
  PetscScalar   *S1 = p->gs, *S2 = p->gs + nG;

  PetscFunctionBegin;
  NNGroupExpand(n, C, G, p->mean, p->mu);
  PetscCall(PetscArrayzero(p->acc1, L));
  PetscCall(PetscArrayzero(p->acc2, L));
  PetscConcat(NNNormGradSums, NN_SUFFIX)(lay, L, xa, dya, p->mu, p->acc1, p->acc2);
  PetscCall(PetscArraycpy(p->gs, p->acc1, L)); /* one reduction of both */
  PetscCall(PetscArraycpy(p->gs + L, p->acc2, L));
  PetscCall(NNGroupAllreduce(l, lay, 2 * L, p->gs));
  PetscCall(PetscArraycpy(p->acc1, p->gs, L));
  PetscCall(PetscArraycpy(p->acc2, p->gs + L, L));
  NNGroupExpand(n, C, G, p->rstd, p->a);
  for (PetscInt i = 0; i < L; i++) p->acc2[i] *= p->a[i]; /* sum dy xhat */
  if (p->affine) {
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt c = 0; c < C; c++) {
        dtheta[c] += p->acc2[s * C + c];
        dtheta[C + c] += p->acc1[s * C + c];
      }
  }
  PetscCall(PetscLogFlops(4.0 * L * lay->npos));
  if (dxa) {
    /* dx = u dy + a (x - mean) + v: u = w rstd, v = -rstd S1/m, a = -rstd^2 S2/m with S1 = sum_g w dy, S2 = sum_g w dy xhat */
    PetscConcat(NNGroupFold, NN_SUFFIX)(n, C, G, p->acc1, w, S1);
    PetscConcat(NNGroupFold, NN_SUFFIX)(n, C, G, p->acc2, w, S2);
    for (PetscInt i = 0; i < nG; i++) {
      S1[i] = -p->rstd[i] * S1[i] / m;
      S2[i] = -p->rstd[i] * p->rstd[i] * S2[i] / m;
    }
    NNGroupExpand(n, C, G, S1, p->acc1);
    NNGroupExpand(n, C, G, S2, p->acc2);
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt c = 0; c < C; c++) p->u[s * C + c] = p->a[s * C + c] * (w ? w[c] : 1.0);
    PetscConcat(NNNormApply, NN_SUFFIX)(lay, L, xa, p->mu, p->acc2, p->acc1, dya, p->u, dxa);
    PetscCall(PetscLogFlops(5.0 * L * lay->npos));
  }
  PetscFunctionReturn(0);
}
