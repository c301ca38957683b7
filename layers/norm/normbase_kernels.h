/* The kernels over per-(sample, channel) runs that group_norm and instance_norm use (layers/norm/norm.h), a precision
   template (include/petnn/private/nnrealdouble.h) that normbase.c compiles in double and in float. Only the activations
   and their gradients (x, g, y) are NN_REAL: the per-run coefficients and the sums are double, and each output entry is
   computed in double and rounded once. */

/* a1[sc] += sum_q d, a2[sc] += sum_q d^2 (a2 may be NULL), d = x(sc, q) - mu[sc] (mu NULL: 0), sc < L */
void PetscConcat(NNNormSums, NN_SUFFIX)(const NNNormLayout *lay, PetscInt L, const NN_REAL *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT mu, PetscScalar *PETSC_RESTRICT a1, PetscScalar *PETSC_RESTRICT a2)
{
  if (lay->spatial) {
    for (PetscInt q = 0; q < lay->npos; q++) {
      const NN_REAL *PETSC_RESTRICT xr = x + q * lay->D;
      for (PetscInt i = 0; i < L; i++) {
        PetscScalar d = xr[i] - (mu ? mu[i] : 0.0);
        a1[i] += d;
        if (a2) a2[i] += d * d;
      }
    }
  } else {
    for (PetscInt i = 0; i < L; i++) {
      const NN_REAL *PETSC_RESTRICT xr = x + i * lay->npos;
      PetscScalar                   k = mu ? mu[i] : 0.0, s1 = 0, s2 = 0;
      for (PetscInt q = 0; q < lay->npos; q++) {
        PetscScalar d = xr[q] - k;
        s1 += d;
        s2 += d * d;
      }
      a1[i] += s1;
      if (a2) a2[i] += s2;
    }
  }
}

/* a1[sc] += sum_q g, a2[sc] += sum_q g (x - mu[sc]) with g = dy(sc, q) */
void PetscConcat(NNNormGradSums, NN_SUFFIX)(const NNNormLayout *lay, PetscInt L, const NN_REAL *PETSC_RESTRICT x, const NN_REAL *PETSC_RESTRICT g, const PetscScalar *PETSC_RESTRICT mu, PetscScalar *PETSC_RESTRICT a1, PetscScalar *PETSC_RESTRICT a2)
{
  if (lay->spatial) {
    for (PetscInt q = 0; q < lay->npos; q++) {
      const NN_REAL *PETSC_RESTRICT xr = x + q * lay->D, *PETSC_RESTRICT gr = g + q * lay->D;
      for (PetscInt i = 0; i < L; i++) {
        a1[i] += gr[i];
        a2[i] += gr[i] * (xr[i] - mu[i]);
      }
    }
  } else {
    for (PetscInt i = 0; i < L; i++) {
      const NN_REAL *PETSC_RESTRICT xr = x + i * lay->npos, *PETSC_RESTRICT gr = g + i * lay->npos;
      PetscScalar s1 = 0, s2 = 0;
      for (PetscInt q = 0; q < lay->npos; q++) {
        s1 += gr[q];
        s2 += gr[q] * (xr[q] - mu[i]);
      }
      a1[i] += s1;
      a2[i] += s2;
    }
  }
}

/*
   per-(sample, channel) affine maps, sc < L (spatial: slots s >= n of every pixel set to zero):
     g == NULL:            y = a[sc] (x - mu[sc]) + b[sc]
     g != NULL:            y = u[sc] g + a[sc] (x - mu[sc]) + b[sc]
*/
void PetscConcat(NNNormApply, NN_SUFFIX)(const NNNormLayout *lay, PetscInt L, const NN_REAL *PETSC_RESTRICT x, const PetscScalar *PETSC_RESTRICT mu, const PetscScalar *PETSC_RESTRICT a, const PetscScalar *PETSC_RESTRICT b, const NN_REAL *PETSC_RESTRICT g, const PetscScalar *PETSC_RESTRICT u, NN_REAL *PETSC_RESTRICT y)
{
  if (lay->spatial) {
    for (PetscInt q = 0; q < lay->npos; q++) {
      const NN_REAL *PETSC_RESTRICT xr = x + q * lay->D, *PETSC_RESTRICT gr = g ? g + q * lay->D : NULL;
      NN_REAL *PETSC_RESTRICT yr = y + q * lay->D;
      if (gr)
        for (PetscInt i = 0; i < L; i++) yr[i] = (NN_REAL)(u[i] * gr[i] + a[i] * (xr[i] - mu[i]) + b[i]);
      else
        for (PetscInt i = 0; i < L; i++) yr[i] = (NN_REAL)(a[i] * (xr[i] - mu[i]) + b[i]);
      for (PetscInt i = L; i < lay->D; i++) yr[i] = 0; /* slots s >= n */
    }
  } else {
    for (PetscInt i = 0; i < L; i++) {
      const NN_REAL *PETSC_RESTRICT xr = x + i * lay->npos, *PETSC_RESTRICT gr = g ? g + i * lay->npos : NULL;
      NN_REAL *PETSC_RESTRICT yr = y + i * lay->npos;
      if (gr)
        for (PetscInt q = 0; q < lay->npos; q++) yr[q] = (NN_REAL)(u[i] * gr[q] + a[i] * (xr[q] - mu[i]) + b[i]);
      else
        for (PetscInt q = 0; q < lay->npos; q++) yr[q] = (NN_REAL)(a[i] * (xr[q] - mu[i]) + b[i]);
    }
  }
}
