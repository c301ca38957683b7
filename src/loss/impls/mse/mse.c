/*
   mse: squared error, mean over all entries (torch.nn.MSELoss with reduction='mean').
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLossEval_MSE(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy)
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

PETSC_INTERN PetscErrorCode NNLossCreate_MSE(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->eval           = NNLossEval_MSE;
  ops->classification = PETSC_FALSE;
  PetscFunctionReturn(0);
}
