/*
   rel_l2: the relative L2 error of the FNO paper (neuraloperator's LpLoss(d, p=2) with reduction):
     L = (1/n) sum_i ||y_i - t_i||_2 / ||t_i||_2,   dL/dy_i = (y_i - t_i) / (n ||y_i - t_i|| ||t_i||)
   with the norms over all entries of sample i (its pixels on every rank: two sums per sample).
   A target of norm zero has no relative error: an error. At y_i = t_i the gradient is 0.
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLossSums_RelL2(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k PETSC_UNUSED, const NNLossBlock *b, PetscReal sums[])
{
  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt s = 0; s < n; s++) {
      const PetscScalar *y = b->y + p * b->ld + s * b->c, *t = b->t + p * b->ld + s * b->c;
      PetscReal          e = 0, tt = 0;
      for (PetscInt j = 0; j < b->c; j++) {
        PetscReal r = PetscRealPart(y[j] - t[j]);
        e += r * r;
        tt += PetscRealPart(t[j] * t[j]);
      }
      sums[2 * s] += e;
      sums[2 * s + 1] += tt;
    }
  PetscCall(PetscLogFlops(5.0 * n * b->c * b->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossFinish_RelL2(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k PETSC_UNUSED, const PetscReal sums[], PetscReal *loss)
{
  PetscReal L = 0;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < n; s++) {
    PetscCheck(sums[2 * s + 1] > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Loss %s: the target of sample %" PetscInt_FMT " of the batch is zero, so its relative L2 error is undefined; use -nn_loss %s or %s for data with zero targets", NNLOSSRELL2, s, NNLOSSMSE, NNLOSSL1);
    L += PetscSqrtReal(sums[2 * s]) / PetscSqrtReal(sums[2 * s + 1]);
  }
  *loss = L / n;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossGradient_RelL2(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k PETSC_UNUSED, const NNLossBlock *b, const PetscReal sums[], PetscScalar dy[])
{
  PetscFunctionBegin;
  for (PetscInt s = 0; s < n; s++) {
    PetscReal en = PetscSqrtReal(sums[2 * s]), f = en > 0 ? 1.0 / (n * en * PetscSqrtReal(sums[2 * s + 1])) : 0.0;
    for (PetscInt p = 0; p < b->npos; p++) {
      PetscInt o = p * b->ld + s * b->c;
      for (PetscInt j = 0; j < b->c; j++) dy[o + j] = f * (b->y[o + j] - b->t[o + j]);
    }
  }
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLossCreate_RelL2(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->nsums     = 2;
  ops->persample = PETSC_TRUE;
  ops->sums      = NNLossSums_RelL2;
  ops->finish    = NNLossFinish_RelL2;
  ops->gradient  = NNLossGradient_RelL2;
  PetscFunctionReturn(0);
}
