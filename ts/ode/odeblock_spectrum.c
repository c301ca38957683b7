/* ODE-block Jacobian spectra and stability checks (to be written) */
#include <petnn/private/spectralimpl.h>

PetscErrorCode NNODESpectrumViewFromOptions(NN net, NNData data)
{
  PetscFunctionBegin;
  (void)net;
  (void)data;
  PetscFunctionReturn(0);
}
