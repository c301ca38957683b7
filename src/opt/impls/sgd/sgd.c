/*
   SGD with momentum, Nesterov momentum and (L2) weight decay, as torch.optim.SGD with dampening 0:
     g = grad + wd*theta;  b = mu*b + g;  g = nesterov ? g + mu*b : b;  theta -= lr*g
*/
#include "sgd.h"

static PetscErrorCode NNOptSetUp_SGD(NNOpt o, Vec theta)
{
  NNOpt_SGD *s = (NNOpt_SGD *)o->data;
  Vec        b;

  PetscFunctionBegin;
  if (s->momentum == 0) PetscFunctionReturn(0);
  PetscCall(VecDuplicate(theta, &b));
  PetscCall(NNOptAddState(o, b, "momentum_buffer"));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptStep_SGD(NNOpt o, PetscReal lr, Vec theta, Vec grad)
{
  NNOpt_SGD         *s  = (NNOpt_SGD *)o->data;
  PetscReal          wd = o->weight_decay, mu = s->momentum;
  PetscInt           n;
  PetscScalar       *x, *b = NULL;
  const PetscScalar *g;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(theta, &n));
  PetscCall(VecGetArray(theta, &x));
  PetscCall(VecGetArrayRead(grad, &g));
  if (mu != 0) PetscCall(VecGetArray(o->state[0], &b));
  for (PetscInt i = 0; i < n; i++) {
    PetscReal d = g[i] + wd * x[i];
    if (mu != 0) {
      /* torch initializes the buffer with the first gradient */
      b[i] = o->nsteps == 1 ? d : mu * b[i] + d;
      d    = s->nesterov ? d + mu * b[i] : b[i];
    }
    x[i] -= lr * d;
  }
  if (mu != 0) PetscCall(VecRestoreArray(o->state[0], &b));
  PetscCall(VecRestoreArrayRead(grad, &g));
  PetscCall(VecRestoreArray(theta, &x));
  PetscCall(PetscLogFlops(6.0 * n));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptSetFromOptions_SGD(NNOpt o, NNOptionItems PetscOptionsObject)
{
  NNOpt_SGD *s = (NNOpt_SGD *)o->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "SGD options");
  PetscCall(PetscOptionsReal("-opt_momentum", "Momentum", "NNOptSGDSetMomentum", s->momentum, &s->momentum, NULL));
  PetscCall(PetscOptionsBool("-opt_nesterov", "Nesterov momentum", "NNOptSGDSetMomentum", s->nesterov, &s->nesterov, NULL));
  PetscOptionsHeadEnd();
  PetscCheck(s->momentum >= 0 && s->momentum < 1, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "-opt_momentum %g must be in [0,1)", (double)s->momentum);
  PetscCheck(!s->nesterov || s->momentum > 0, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_INCOMP, "-opt_nesterov needs a positive -opt_momentum");
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptView_SGD(NNOpt o, PetscViewer v)
{
  NNOpt_SGD *s = (NNOpt_SGD *)o->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "momentum %g%s\n", (double)s->momentum, s->nesterov ? " (Nesterov)" : ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptSGDSetMomentum_SGD(NNOpt o, PetscReal mu, PetscBool nesterov)
{
  NNOpt_SGD *s = (NNOpt_SGD *)o->data;

  PetscFunctionBegin;
  PetscCheck(mu >= 0 && mu < 1, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "Momentum %g must be in [0,1)", (double)mu);
  PetscCheck(!o->setupcalled, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_WRONGSTATE, "Set the momentum before NNSetUp()");
  s->momentum = mu;
  s->nesterov = nesterov;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptDestroy_SGD(NNOpt o)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)o, "NNOptSGDSetMomentum_C", NULL));
  PetscCall(PetscFree(o->data));
  PetscFunctionReturn(0);
}

/*MC
   NNOPTSGD - "sgd": stochastic gradient descent with optional momentum and Nesterov (torch.optim.SGD)

   Options Database Keys:
+  -opt_momentum <mu> - momentum
-  -opt_nesterov - Nesterov momentum

   Level: beginner
M*/
PETSC_INTERN PetscErrorCode NNOptCreate_SGD(NNOpt o)
{
  NNOpt_SGD *s;

  PetscFunctionBegin;
  PetscCall(PetscNew(&s));
  o->data                = s;
  o->ops->setup          = NNOptSetUp_SGD;
  o->ops->step           = NNOptStep_SGD;
#if defined(PETNN_HAVE_CUDA)
  o->ops->stepdevice = NNOptStepDevice_SGD;
#endif
  o->ops->setfromoptions = NNOptSetFromOptions_SGD;
  o->ops->view           = NNOptView_SGD;
  o->ops->destroy        = NNOptDestroy_SGD;
  PetscCall(PetscObjectComposeFunction((PetscObject)o, "NNOptSGDSetMomentum_C", NNOptSGDSetMomentum_SGD));
  PetscFunctionReturn(0);
}
