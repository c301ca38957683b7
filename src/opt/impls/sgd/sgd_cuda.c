/* SGD's step on the device: NNOptStep_SGD() (sgd.c) as one kernel over the parameters (sgd_kernels.cu) */
#include "sgd.h"
#include <petnn/private/cudaimpl.h>

PetscErrorCode NNOptStepDevice_SGD(NNOpt o, PetscReal lr, const NNDeviceParameters *p, void *const state[])
{
  NNOpt_SGD   *sg = (NNOpt_SGD *)o->data;
  cudaStream_t s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDASGDStep(p->single ? 1 : 0, (size_t)p->n, p->master, p->work, p->grad, sg->momentum != 0 ? (double *)state[0] : NULL, lr, o->weight_decay, sg->momentum, o->nsteps == 1, sg->nesterov ? 1 : 0, s));
  PetscCall(PetscLogFlops(6.0 * p->n));
  PetscFunctionReturn(0);
}
