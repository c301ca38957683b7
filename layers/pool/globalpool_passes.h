/* Global average pooling's loops, a precision template (include/petnn/private/nnrealdouble.h) that globalpool.c
   compiles in double and in float. The sums over the pixels and over the ranks are double in both: the double pass
   sums into its output itself (sum is y), the float pass into a double scratch, rounded once after the division. */

/* y[j] = the mean over all pixels of entry j (j < n*C; the slots s >= n zero); sum: D doubles, may be y in double */
static PetscErrorCode PetscConcat(NNGlobalAvgPoolForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *xa, PetscScalar *sum, NN_REAL *ya)
{
  PetscInt    D, nloc, npix, nC = n * l->inshape.dim[0];
  PetscMPIInt cnt;

  PetscFunctionBegin;
  PetscCall(NNGlobalAvgPoolSizes(l, &D, &nloc, &npix));
  PetscCall(PetscArrayzero(sum, D));
  for (PetscInt p = 0; p < nloc; p++) {
    const NN_REAL *restrict xp = xa + p * D;
    PetscScalar *restrict s    = sum;
    for (PetscInt j = 0; j < nC; j++) s[j] += xp[j];
  }
  PetscCall(PetscMPIIntCast(nC, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sum, cnt, MPIU_SCALAR, MPIU_SUM, PetscObjectComm((PetscObject)l)));
  for (PetscInt j = 0; j < nC; j++) ya[j] = (NN_REAL)(sum[j] / (PetscScalar)npix);
  for (PetscInt j = nC; j < D; j++) ya[j] = 0;
  PetscFunctionReturn(0);
}

/* dx (the owned pixels) = dy/npix at every pixel (slots s >= n zero); g: D entries of scratch */
static PetscErrorCode PetscConcat(NNGlobalAvgPoolBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *dya, NN_REAL *g, NN_REAL *dxa)
{
  PetscInt D, nloc, npix, nC = n * l->inshape.dim[0];

  PetscFunctionBegin;
  PetscCall(NNGlobalAvgPoolSizes(l, &D, &nloc, &npix));
  PetscCall(PetscArrayzero(g, D));
  for (PetscInt j = 0; j < nC; j++) g[j] = (NN_REAL)(dya[j] / (PetscScalar)npix);
  for (PetscInt p = 0; p < nloc; p++) PetscCall(PetscArraycpy(dxa + p * D, g, D));
  PetscFunctionReturn(0);
}
