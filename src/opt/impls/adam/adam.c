/*
   Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight decay), with the
   arithmetic of torch.optim.Adam/AdamW (foreach=False):
     m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
     theta -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
*/
#include "adam.h"

static PetscErrorCode NNOptSetUp_Adam(NNOpt o, Vec theta)
{
  Vec m, v;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(theta, &m));
  PetscCall(VecDuplicate(theta, &v));
  PetscCall(NNOptAddState(o, m, "exp_avg"));
  PetscCall(NNOptAddState(o, v, "exp_avg_sq"));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptStep_Adam(NNOpt o, PetscReal lr, Vec theta, Vec grad)
{
  NNOpt_Adam        *a  = (NNOpt_Adam *)o->data;
  PetscReal          b1 = a->beta1, b2 = a->beta2, eps = a->eps, wd = o->weight_decay;
  PetscReal          bc1 = 1 - PetscPowReal(b1, (PetscReal)o->nsteps), bc2 = 1 - PetscPowReal(b2, (PetscReal)o->nsteps);
  PetscReal          step_size = lr / bc1, sbc2 = PetscSqrtReal(bc2), shrink = 1 - lr * wd;
  PetscInt           n;
  PetscScalar       *xa, *ma, *va;
  const PetscScalar *ga;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(theta, &n));
  PetscCall(VecGetArray(theta, &xa));
  PetscCall(VecGetArrayRead(grad, &ga));
  PetscCall(VecGetArray(o->state[0], &ma));
  PetscCall(VecGetArray(o->state[1], &va));
  {
    PetscScalar *restrict x = xa, *restrict m = ma, *restrict v = va;
    const PetscScalar *restrict g = ga;
    /* branch-free loops so the compiler vectorizes them; same operation order as PyTorch */
    if (a->decoupled) {
      for (PetscInt i = 0; i < n; i++) x[i] *= shrink;
      for (PetscInt i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
        x[i] -= step_size * m[i] / (PetscSqrtReal(v[i]) / sbc2 + eps);
      }
    } else {
      for (PetscInt i = 0; i < n; i++) {
        PetscReal gi = g[i] + wd * x[i];
        m[i]         = b1 * m[i] + (1 - b1) * gi;
        v[i]         = b2 * v[i] + (1 - b2) * gi * gi;
        x[i] -= step_size * m[i] / (PetscSqrtReal(v[i]) / sbc2 + eps);
      }
    }
  }
  PetscCall(VecRestoreArray(o->state[1], &va));
  PetscCall(VecRestoreArray(o->state[0], &ma));
  PetscCall(VecRestoreArrayRead(grad, &ga));
  PetscCall(VecRestoreArray(theta, &xa));
  PetscCall(PetscLogFlops(12.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptSetFromOptions_Adam(NNOpt o, NNOptionItems PetscOptionsObject)
{
  NNOpt_Adam *a = (NNOpt_Adam *)o->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Adam options");
  PetscCall(PetscOptionsReal("-opt_beta1", "First-moment decay", "NNOptAdamSetBetas", a->beta1, &a->beta1, NULL));
  PetscCall(PetscOptionsReal("-opt_beta2", "Second-moment decay", "NNOptAdamSetBetas", a->beta2, &a->beta2, NULL));
  PetscCall(PetscOptionsReal("-opt_epsilon", "Denominator regularization", "NNOptAdamSetBetas", a->eps, &a->eps, NULL));
  PetscOptionsHeadEnd();
  PetscCheck(a->beta1 >= 0 && a->beta1 < 1 && a->beta2 >= 0 && a->beta2 < 1, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "-opt_beta1 %g and -opt_beta2 %g must be in [0,1)", (double)a->beta1, (double)a->beta2);
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptView_Adam(NNOpt o, PetscViewer v)
{
  NNOpt_Adam *a = (NNOpt_Adam *)o->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "betas (%g, %g), epsilon %g, %s weight decay\n", (double)a->beta1, (double)a->beta2, (double)a->eps, a->decoupled ? "decoupled" : "L2"));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptAdamSetBetas_Adam(NNOpt o, PetscReal b1, PetscReal b2, PetscReal eps)
{
  NNOpt_Adam *a = (NNOpt_Adam *)o->data;

  PetscFunctionBegin;
  PetscCheck(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "Betas %g, %g must be in [0,1)", (double)b1, (double)b2);
  a->beta1 = b1;
  a->beta2 = b2;
  a->eps   = eps;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptDestroy_Adam(NNOpt o)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)o, "NNOptAdamSetBetas_C", NULL));
  PetscCall(PetscFree(o->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptCreate_AdamCommon(NNOpt o, PetscBool decoupled)
{
  NNOpt_Adam *a;

  PetscFunctionBegin;
  PetscCall(PetscNew(&a));
  a->beta1               = 0.9;
  a->beta2               = 0.999;
  a->eps                 = 1e-8;
  a->decoupled           = decoupled;
  o->data                = a;
  o->weight_decay        = decoupled ? 1e-2 : 0;
  o->ops->setup          = NNOptSetUp_Adam;
  o->ops->step           = NNOptStep_Adam;
#if defined(PETNN_HAVE_CUDA)
  o->ops->stepdevice = NNOptStepDevice_Adam;
#endif
  o->ops->setfromoptions = NNOptSetFromOptions_Adam;
  o->ops->view           = NNOptView_Adam;
  o->ops->destroy        = NNOptDestroy_Adam;
  PetscCall(PetscObjectComposeFunction((PetscObject)o, "NNOptAdamSetBetas_C", NNOptAdamSetBetas_Adam));
  PetscFunctionReturn(0);
}

/*MC
   NNOPTADAM - "adam": Adam with L2 weight decay (torch.optim.Adam)

   Options Database Keys:
+  -opt_beta1, -opt_beta2, -opt_epsilon - see NNOptAdamSetBetas()
-  -opt_weight_decay <wd> - L2 penalty added to the gradient (default 0)

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNOptCreate_Adam(NNOpt o)
{
  PetscFunctionBegin;
  PetscCall(NNOptCreate_AdamCommon(o, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/*MC
   NNOPTADAMW - "adamw": Adam with decoupled weight decay (torch.optim.AdamW; default decay 0.01)

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNOptCreate_AdamW(NNOpt o)
{
  PetscFunctionBegin;
  PetscCall(NNOptCreate_AdamCommon(o, PETSC_TRUE));
  PetscFunctionReturn(0);
}
