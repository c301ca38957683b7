/* Loss-Hessian products and eigenvalues (to be written) */
#include <petnn/private/spectralimpl.h>

PetscErrorCode NNHessianViewFromOptions(NN net, NNData data)
{
  PetscFunctionBegin;
  (void)net;
  (void)data;
  PetscFunctionReturn(0);
}
