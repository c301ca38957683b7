/*
   mse: squared error, mean over all entries (torch.nn.MSELoss with reduction='mean').
   The partial-sum form (spatial outputs) adds r^2 in the order of the original single loop, so
   both paths give what they gave before.
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

static PetscErrorCode NNLossSums_MSE(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k PETSC_UNUSED, const NNLossBlock *b, PetscReal sums[])
{
  PetscReal L = 0;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal r = b->y[i] - b->t[i];
      L += r * r;
    }
  sums[0] += L;
  PetscCall(PetscLogFlops(3.0 * n * b->c * b->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossFinish_MSE(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const PetscReal sums[], PetscReal *loss)
{
  PetscFunctionBegin;
  *loss = sums[0] / ((PetscReal)n * k);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossGradient_MSE(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const NNLossBlock *b, const PetscReal sums[] PETSC_UNUSED, PetscScalar dy[])
{
  PetscReal N = (PetscReal)n * k;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal r = b->y[i] - b->t[i];
      dy[i]       = 2 * r / N;
    }
  PetscCall(PetscLogFlops(3.0 * n * b->c * b->npos));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLossCreate_MSE(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->eval           = NNLossEval_MSE;
  ops->classification = PETSC_FALSE;
  ops->nsums          = 1;
  ops->sums           = NNLossSums_MSE;
  ops->finish         = NNLossFinish_MSE;
  ops->gradient       = NNLossGradient_MSE;
  PetscFunctionReturn(0);
}
