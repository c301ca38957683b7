/*
   huber: Huber loss, mean over all entries (torch.nn.HuberLoss(reduction='mean', delta)):
     h(r) = r^2/2 for |r| < delta, delta (|r| - delta/2) otherwise;  h'(r) = clamp(r, -delta, delta).
   delta (param[0], default 1) from -nn_loss_huber_delta, positive.
*/
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNLossSums_Huber(const NNLossOps *ops, PetscInt n, PetscInt k PETSC_UNUSED, const NNLossBlock *b, PetscReal sums[])
{
  PetscReal L = 0, delta = ops->param[0];

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal a = PetscAbsReal(PetscRealPart(b->y[i] - b->t[i]));
      L += a < delta ? 0.5 * a * a : delta * (a - 0.5 * delta);
    }
  sums[0] += L;
  PetscCall(PetscLogFlops(4.0 * n * b->c * b->npos));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossFinish_Huber(const NNLossOps *ops PETSC_UNUSED, PetscInt n, PetscInt k, const PetscReal sums[], PetscReal *loss)
{
  PetscFunctionBegin;
  *loss = sums[0] / ((PetscReal)n * k);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossGradient_Huber(const NNLossOps *ops, PetscInt n, PetscInt k, const NNLossBlock *b, const PetscReal sums[] PETSC_UNUSED, PetscScalar dy[])
{
  PetscReal N = (PetscReal)n * k, delta = ops->param[0];

  PetscFunctionBegin;
  for (PetscInt p = 0; p < b->npos; p++)
    for (PetscInt i = p * b->ld; i < p * b->ld + n * b->c; i++) {
      PetscReal r = PetscRealPart(b->y[i] - b->t[i]);
      dy[i]       = PetscMin(PetscMax(r, -delta), delta) / N;
    }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossSetFromOptions_Huber(NNLossOps *ops, NNOptionItems PetscOptionsObject)
{
  PetscReal delta = ops->param[0];
  PetscBool flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Huber loss options");
  PetscCall(PetscOptionsReal("-nn_loss_huber_delta", "Huber loss: quadratic for |y - t| < delta, linear beyond (positive)", "NNSetLoss", delta, &delta, &flg));
  PetscCheck(!flg || delta > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-%snn_loss_huber_delta %g is invalid: delta must be positive (default 1.0)", PetscOptionsObject->prefix ? PetscOptionsObject->prefix : "", (double)delta);
  ops->param[0] = delta;
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossView_Huber(const NNLossOps *ops, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "huber loss: delta %g\n", (double)ops->param[0]));
  PetscFunctionReturn(0);
}

PETSC_INTERN PetscErrorCode NNLossCreate_Huber(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->nsums          = 1;
  ops->sums           = NNLossSums_Huber;
  ops->finish         = NNLossFinish_Huber;
  ops->gradient       = NNLossGradient_Huber;
  ops->setfromoptions = NNLossSetFromOptions_Huber;
  ops->view           = NNLossView_Huber;
  ops->param[0]       = 1.0;
  PetscFunctionReturn(0);
}
