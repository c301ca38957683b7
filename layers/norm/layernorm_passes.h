/* layer_norm's passes, a precision template (include/petnn/private/nnrealdouble.h) that layernorm.c compiles in double
   and in float. Only the activations, their gradients and the parameters (theta, dtheta: the layer's slices in the
   pass's precision) are NN_REAL: the statistics and every sum are double, the parameter gradient is reduced over the
   ranks in double, and each output entry is computed in double and rounded once. */

static PetscErrorCode PetscConcat(NNLayerNormForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NNNormLayout *lay, const NN_REAL *theta, const NN_REAL *xa, NN_REAL *ya)
{
  NNNorm  *p = (NNNorm *)l->data;
  PetscInt C = p->C, ss, cs, qs;

  PetscFunctionBegin;
  PetscCall(NNNormEnsureCapacity(p, l->nbatch * lay->npos));
  NNLayerNormStrides(lay, C, &ss, &cs, &qs);
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt q = 0; q < lay->npos; q++) {
      const NN_REAL *xr   = xa + s * ss + q * qs;
      NN_REAL       *yr   = ya + s * ss + q * qs;
      PetscScalar    mean = 0, d1 = 0, d2 = 0, r;
      PetscReal      var;
      for (PetscInt c = 0; c < C; c++) mean += xr[c * cs];
      mean /= C;
      for (PetscInt c = 0; c < C; c++) { /* corrected two-pass */
        PetscScalar d = xr[c * cs] - mean;
        d1 += d;
        d2 += d * d;
      }
      d1 /= C;
      var = PetscMax(PetscRealPart(d2 / C - d1 * d1), 0.0);
      mean += d1;
      r                          = 1.0 / PetscSqrtReal(var + p->eps);
      p->mean[s * lay->npos + q] = mean;
      p->rstd[s * lay->npos + q] = r;
      for (PetscInt c = 0; c < C; c++) yr[c * cs] = (NN_REAL)(p->affine ? (xr[c * cs] - mean) * r * theta[c] + theta[C + c] : (xr[c * cs] - mean) * r);
    }
  if (lay->spatial) /* slots s >= n */
    for (PetscInt q = 0; q < lay->npos; q++) PetscCall(PetscArrayzero(ya + q * lay->D + n * C, lay->D - n * C));
  PetscCall(PetscLogFlops(8.0 * n * C * lay->npos));
  PetscFunctionReturn(0);
}

/* the parameter gradient (affine), summed over the ranks, ADDED into dtheta; dxa NULL: no input gradient */
static PetscErrorCode PetscConcat(NNLayerNormBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NNNormLayout *lay, const NN_REAL *theta, NN_REAL *dtheta, const NN_REAL *xa, const NN_REAL *dya, NN_REAL *dxa)
{
  NNNorm        *p  = (NNNorm *)l->data;
  PetscInt       C  = p->C, ss, cs, qs;
  const NN_REAL *w  = p->affine ? theta : NULL; /* w[c] dy: in double (the cast below) also in float */
  PetscScalar   *dw = p->pg, *db = p->pg + C;

  PetscFunctionBegin;
  NNLayerNormStrides(lay, C, &ss, &cs, &qs);
  PetscCall(PetscArrayzero(p->pg, 2 * C));
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt q = 0; q < lay->npos; q++) {
      const NN_REAL    *xr = xa + s * ss + q * qs, *gr = dya + s * ss + q * qs;
      const PetscScalar mean = p->mean[s * lay->npos + q], r = p->rstd[s * lay->npos + q];
      PetscScalar       S1 = 0, S2 = 0;
      for (PetscInt c = 0; c < C; c++) {
        PetscScalar xh = (xr[c * cs] - mean) * r, g = w ? (PetscScalar)w[c] * gr[c * cs] : gr[c * cs];
        S1 += g;
        S2 += g * xh;
        dw[c] += gr[c * cs] * xh;
        db[c] += gr[c * cs];
      }
      if (dxa) {
        NN_REAL *dr = dxa + s * ss + q * qs;
        S1 /= C;
        S2 /= C;
        for (PetscInt c = 0; c < C; c++) dr[c * cs] = (NN_REAL)(r * ((w ? (PetscScalar)w[c] * gr[c * cs] : gr[c * cs]) - S1 - (xr[c * cs] - mean) * r * S2));
      }
    }
  if (dxa && lay->spatial)
    for (PetscInt q = 0; q < lay->npos; q++) PetscCall(PetscArrayzero(dxa + q * lay->D + n * C, lay->D - n * C));
  if (p->affine) {
    if (lay->spatial) { /* the pixels of a sample are spread over the ranks */
      PetscMPIInt cnt;
      PetscCall(PetscMPIIntCast(2 * C, &cnt));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, p->pg, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
    }
    for (PetscInt i = 0; i < 2 * C; i++) dtheta[i] += p->pg[i];
  }
  PetscCall(PetscLogFlops((dxa ? 14.0 : 7.0) * n * C * lay->npos));
  PetscFunctionReturn(0);
}
