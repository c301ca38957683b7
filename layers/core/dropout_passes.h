/* Dropout's passes, a precision template (include/petnn/private/nnrealdouble.h) that dropout.c compiles in double and
   in float; the mask is drawn and kept in double either way, so both precisions drop the same entries. */
static PetscErrorCode PetscConcat(NNDropoutForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *x, NN_REAL *y)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;
  PetscInt         N = n * l->localsize;

  PetscFunctionBegin;
  d->masked = (PetscBool)(l->training && d->rate > 0);
  if (!d->masked) {
    if (y != x) PetscCall(PetscArraycpy(y, x, N));
    PetscFunctionReturn(0);
  }
  PetscCheck(l->rng, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Dropout layer %s has no random number generator: add it to a network", ((PetscObject)l)->name);
  NNRandomMask(l->rng, N, d->rate, 1.0 / (1.0 - d->rate), PETSC_FALSE, d->mask); /* a draw an entry, in memory order */
  for (PetscInt i = 0; i < N; i++) y[i] = (NN_REAL)(x[i] * d->mask[i]);
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscConcat(NNDropoutBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *x PETSC_UNUSED, const NN_REAL *y PETSC_UNUSED, const NN_REAL *dy, NN_REAL *dx)
{
  NNLayer_Dropout *d = (NNLayer_Dropout *)l->data;
  PetscInt         N = n * l->localsize;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  if (!d->masked) {
    if (dx != dy) PetscCall(PetscArraycpy(dx, dy, N));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < N; i++) dx[i] = (NN_REAL)(dy[i] * d->mask[i]);
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}
