/*
   Losses, matching PyTorch's defaults (reduction='mean'):
     cross_entropy - softmax + negative log-likelihood of the target class, mean over samples
     mse           - squared error, mean over all entries
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode CrossEntropy(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy)
{
  PetscReal L = 0;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < n; s++) {
    const PetscScalar *ys  = y + s * k;
    PetscInt           c   = (PetscInt)t[s];
    PetscReal          max = ys[0], sum = 0;
    for (PetscInt j = 1; j < k; j++) max = PetscMax(max, ys[j]);
    for (PetscInt j = 0; j < k; j++) sum += PetscExpReal(ys[j] - max);
    L += PetscLogReal(sum) + max - ys[c];
    if (dy) {
      for (PetscInt j = 0; j < k; j++) dy[s * k + j] = PetscExpReal(ys[j] - max) / sum / n;
      dy[s * k + c] -= 1.0 / n;
    }
  }
  *loss = L / n;
  PetscCall(PetscLogFlops(5.0 * n * k));
  PetscFunctionReturn(0);
}

static PetscErrorCode MeanSquaredError(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy)
{
  PetscReal L = 0, N = (PetscReal)n * k;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n * k; i++) {
    PetscReal r = y[i] - t[i];
    L += r * r;
    if (dy) dy[i] = 2 * r / N;
  }
  *loss = L / N;
  PetscCall(PetscLogFlops(4.0 * n * k));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLossGetOps(NNLossType type, NNLossOps *ops)
{
  PetscBool ce, mse;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(type, NNLOSSCROSSENTROPY, &ce));
  PetscCall(PetscStrcmp(type, NNLOSSMSE, &mse));
  PetscCheck(ce || mse, PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown loss \"%s\" (-nn_loss); valid losses: %s %s", type, NNLOSSCROSSENTROPY, NNLOSSMSE);
  ops->eval           = ce ? CrossEntropy : MeanSquaredError;
  ops->classification = ce;
  PetscFunctionReturn(0);
}

/* Class labels must be integers in [0, nclasses); catches label files that do not match the network. */
PetscErrorCode NNLossCheckTargets(NNLossType type, PetscInt n, PetscInt nclasses, const PetscScalar *t)
{
  NNLossOps ops;

  PetscFunctionBegin;
  PetscCall(NNLossGetOps(type, &ops));
  if (!ops.classification) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) {
    PetscCheck(t[i] >= 0 && t[i] < nclasses && t[i] == (PetscInt)t[i], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Target %g of sample %" PetscInt_FMT " is not a class index in [0,%" PetscInt_FMT "): the network's output layer has %" PetscInt_FMT " units", (double)t[i], i, nclasses, nclasses);
  }
  PetscFunctionReturn(0);
}
