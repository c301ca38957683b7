/* Adam's and AdamW's step on the device: the coefficients of NNOptStep_Adam() (adam.c), one kernel over the parameters
   (adam_kernels.cu) */
#include "adam.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNOptStepDevice_Adam(NNOpt o, PetscReal lr, const NNDeviceParameters *p, void *const state[])
{
  NNOpt_Adam            *a = (NNOpt_Adam *)o->data;
  NNCUDAAdamCoefficients k;
  cudaStream_t           s;

  PetscFunctionBegin;
  k.b1        = a->beta1;
  k.b2        = a->beta2;
  k.eps       = a->eps;
  k.wd        = o->weight_decay;
  k.step      = lr / (1 - PetscPowReal(a->beta1, (PetscReal)o->nsteps));
  k.sbc2      = PetscSqrtReal(1 - PetscPowReal(a->beta2, (PetscReal)o->nsteps));
  k.shrink    = 1 - lr * o->weight_decay;
  k.decoupled = a->decoupled ? 1 : 0;
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAAdamStep(p->single ? 1 : 0, (size_t)p->n, p->master, p->work, p->grad, (double *)state[0], (double *)state[1], &k, s));
  PetscCall(PetscLogFlops(12.0 * p->n));
  PetscFunctionReturn(0);
}
