/* The pointwise activations' loops, a precision template (include/petnn/private/nnrealdouble.h) that activation.c
   compiles in double and in float. f and df are evaluated in double either way; ReLU keeps its branch-free loop, which
   the compiler vectorizes. */
static PetscErrorCode PetscConcat(NNActivationForward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *x, NN_REAL *y)
{
  NNLayer_Activation *a = (NNLayer_Activation *)l->data;
  PetscInt            N = n * l->localsize;

  PetscFunctionBegin;
  if (a->kinkmode) { /* the linear map of a recorded pattern (a ReLU's slope is 0) */
    unsigned char *m = a->kinkmask;
    if (a->kinkmode == 1)
      for (PetscInt i = 0; i < N; i++) m[i] = x[i] > 0;
    for (PetscInt i = 0; i < N; i++) y[i] = m[i] ? x[i] : (NN_REAL)(a->slope * x[i]);
  } else if (a->f == ReLU) {
    for (PetscInt i = 0; i < N; i++) y[i] = x[i] > 0 ? x[i] : 0;
  } else if (a->f == Tanh) {
    PetscConcat(NNTanhLoop, NN_SUFFIX)(N, x, y);
  } else {
    for (PetscInt i = 0; i < N; i++) y[i] = (NN_REAL)a->f(x[i], a->slope);
  }
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

static PetscErrorCode PetscConcat(NNActivationBackward, NN_SUFFIX)(NNLayer l, PetscInt n, const NN_REAL *x, const NN_REAL *y, const NN_REAL *dy, NN_REAL *dx)
{
  NNLayer_Activation *a = (NNLayer_Activation *)l->data;
  PetscInt            N = n * l->localsize;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  if (a->kinkmode) {
    for (PetscInt i = 0; i < N; i++) dx[i] = a->kinkmask[i] ? dy[i] : (NN_REAL)(a->slope * dy[i]);
  } else if (a->f == ReLU) {
    for (PetscInt i = 0; i < N; i++) dx[i] = x[i] > 0 ? dy[i] : 0;
  } else if (a->f == Tanh) {
    PetscConcat(NNTanhBackwardLoop, NN_SUFFIX)(N, y, dy, dx);
  } else {
    for (PetscInt i = 0; i < N; i++) dx[i] = (NN_REAL)(dy[i] * a->df(x[i], y[i], a->slope));
  }
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}
