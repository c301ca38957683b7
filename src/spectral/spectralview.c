/* The spectral views a user asks for from the options database, after training (NNTrain() calls
   this at its end, as KSPSolve() ends with -ksp_view): -<block>_spectrum_view and
   -<block>_stability_check (ODE blocks), -nn_spectral_view (layer operator norms, Lipschitz
   bound), -nn_hessian_view (loss-Hessian eigenvalues). */
#include <petnn/private/spectralimpl.h>

/*@C
   NNSpectralViewFromOptions - prints the spectral analyses selected in the options database

   Collective

   Input Parameters:
+  net - a set-up network (trained, or with loaded parameters)
.  train - the training data (the Hessian's samples), or NULL
-  test - the test data (the ODE blocks' states), or NULL (then the training data is used)

   Options Database Keys:
+  -<block>_spectrum_view - eigenvalues of each ODE block's Jacobian
.  -<block>_stability_check - the block's step against its scheme's stability region
.  -nn_spectral_view - spectral norm of every layer and the network's Lipschitz bound
-  -nn_hessian_view - top eigenvalues of the loss Hessian

   Notes:
   `NNTrain()` calls it when training ends; call it after `NNCheckpointLoad()` or a custom training
   loop. Nothing is computed unless an option asks for it, and SLEPc is needed only then.

   Level: intermediate

.seealso: `NNTrain()`, `NNView()`
@*/
PetscErrorCode NNSpectralViewFromOptions(NN net, NNData train, NNData test)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNODESpectrumViewFromOptions(net, test ? test : train));
  PetscCall(NNOperatorNormViewFromOptions(net));
  PetscCall(NNHessianViewFromOptions(net, train));
  PetscFunctionReturn(0);
}
