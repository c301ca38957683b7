/*
   l1: absolute error, mean over all entries (torch.nn.L1Loss with reduction='mean'). Its
   gradient is sign(y - t)/N with sign(0) = 0, PyTorch's subgradient.
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLossSums_L1(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k PETSC_UNUSED, const NNLossBlock *b, PetscReal sums[])
{
  PetscReal L = 0;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) L += PetscAbsReal(PetscRealPart(b->y[i] - b->t[i]));
  sums[0] += L;
  PetscCall(PetscLogFlops(2.0 * n * b->c * b->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossFinish_L1(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const PetscReal sums[], PetscReal *loss)
{
  PetscFunctionBegin;
  *loss = sums[0] / ((PetscReal)n * k);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossGradient_L1(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const NNLossBlock *b, const PetscReal sums[] PETSC_UNUSED, PetscScalar dy[])
{
  PetscReal N = (PetscReal)n * k;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal r = PetscRealPart(b->y[i] - b->t[i]);
      dy[i]       = (r > 0 ? 1.0 : (r < 0 ? -1.0 : 0.0)) / N;
    }
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLossCreate_L1(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->nsums    = 1;
  ops->sums     = NNLossSums_L1;
  ops->finish   = NNLossFinish_L1;
  ops->gradient = NNLossGradient_L1;
  PetscFunctionReturn(0);
}
