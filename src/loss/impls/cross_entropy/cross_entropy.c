/*
   cross_entropy: softmax + negative log-likelihood of the target class, mean over samples
   (torch.nn.CrossEntropyLoss with reduction='mean'). Targets are class indices, one per sample.
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLossEval_CrossEntropy(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy)
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

PETSC_INTERN PetscErrorCode NNLossCreate_CrossEntropy(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->eval           = NNLossEval_CrossEntropy;
  ops->classification = PETSC_TRUE;
  PetscFunctionReturn(0);
}
