/* Layer operator norms and the network's Lipschitz bound (to be written) */
#include <petnn/private/spectralimpl.h>

PetscErrorCode NNOperatorNormViewFromOptions(NN net)
{
  PetscFunctionBegin;
  (void)net;
  PetscFunctionReturn(0);
}
