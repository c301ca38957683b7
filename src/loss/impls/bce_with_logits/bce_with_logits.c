/*
   bce_with_logits: sigmoid and binary cross entropy in one, mean over all entries
   (torch.nn.BCEWithLogitsLoss(reduction='mean')), in the stable form
     l(x, t) = max(x, 0) - x t + log(1 + exp(-|x|)),   dl/dx = sigmoid(x) - t.
   Targets are probabilities in [0, 1]; others are an error.
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLossSums_BCE(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k PETSC_UNUSED, const NNLossBlock *b, PetscReal sums[])
{
  PetscReal L = 0;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal x = PetscRealPart(b->y[i]), t = PetscRealPart(b->t[i]);
      PetscCheck(t >= 0 && t <= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Loss %s: target %g (sample %" PetscInt_FMT ") is not in [0,1]; its targets are probabilities (use -nn_loss %s for class indices)", NNLOSSBCEWITHLOGITS, (double)t, (i - p * b->ld) / b->c, NNLOSSCROSSENTROPY);
      L += PetscMax(x, 0.0) - x * t + log1p(PetscExpReal(-PetscAbsReal(x)));
    }
  sums[0] += L;
  PetscCall(PetscLogFlops(6.0 * n * b->c * b->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossFinish_BCE(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const PetscReal sums[], PetscReal *loss)
{
  PetscFunctionBegin;
  *loss = sums[0] / ((PetscReal)n * k);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossGradient_BCE(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const NNLossBlock *b, const PetscReal sums[] PETSC_UNUSED, PetscScalar dy[])
{
  PetscReal N = (PetscReal)n * k;

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal x = PetscRealPart(b->y[i]), e = PetscExpReal(-PetscAbsReal(x));
      PetscReal sig = x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
      dy[i]         = (sig - PetscRealPart(b->t[i])) / N;
    }
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLossCreate_BCEWithLogits(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->nsums    = 1;
  ops->sums     = NNLossSums_BCE;
  ops->finish   = NNLossFinish_BCE;
  ops->gradient = NNLossGradient_BCE;
  PetscFunctionReturn(0);
}
