/*
   The loss registry: a loss type is a name and a routine that fills an NNLossOps (its evaluation
   routine and whether targets are class indices). Built-in types live in src/loss/impls/<name>/.
*/
#include <petnn/private/nnimpl.h>

PetscFunctionList NNLossList = NULL;

PETSC_INTERN PetscErrorCode NNLossCreate_CrossEntropy(NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossCreate_MSE(NNLossOps *);

/* called once from PetNNInitializePackage(); the order is the order error messages list them in */
PETSC_INTERN PetscErrorCode NNLossRegisterAllTypes(void)
{
  PetscFunctionBegin;
  PetscCall(NNLossRegister(NNLOSSCROSSENTROPY, NNLossCreate_CrossEntropy));
  PetscCall(NNLossRegister(NNLOSSMSE, NNLossCreate_MSE));
  PetscFunctionReturn(0);
}

/*@C
   NNLossRegister - adds a loss type, selectable with `NNSetLoss()` or -nn_loss

   Not Collective

   Input Parameters:
+  name - name of the loss, used with -nn_loss
-  create - routine that fills the `NNLossOps`: its eval routine (mean loss over the first n samples and,
            when dy is not NULL, dL/dy) and classification (PETSC_TRUE when targets are class indices)

   Notes:
   Registering a name again replaces its routine. The eval routine sees the output y and the targets
   of n samples with nout values each (one class index per sample for classification losses) and must
   return the mean over the batch, so that gradients match the other losses' scaling.

   Example:
.vb
   static PetscErrorCode L1(PetscInt n, PetscInt k, const PetscScalar y[], const PetscScalar t[], PetscReal *loss, PetscScalar dy[]) {...}
   static PetscErrorCode NNLossCreate_L1(NNLossOps *ops) { ops->eval = L1; ops->classification = PETSC_FALSE; return 0; }
   NNLossRegister("l1", NNLossCreate_L1);    then -nn_loss l1
.ve

   Level: advanced

.seealso: `NNSetLoss()`, `NNGetLoss()`, `NNLossOps`, `NNLayerRegister()`, `NNOptRegister()`
@*/
PetscErrorCode NNLossRegister(const char name[], PetscErrorCode (*create)(NNLossOps *))
{
  PetscFunctionBegin;
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscFunctionListAdd(&NNLossList, name, create));
  PetscFunctionReturn(0);
}

/* the ops of a registered loss; an unknown name is an error that lists the registered ones */
PetscErrorCode NNLossGetOps(NNLossType type, NNLossOps *ops)
{
  PetscErrorCode (*create)(NNLossOps *);

  PetscFunctionBegin;
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscFunctionListFind(NNLossList, type, &create));
  if (!create) {
    char valid[1024] = "";
    PetscCall(NNTypeListString(NNLossList, sizeof(valid), valid));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown loss \"%s\" (-nn_loss); valid losses: %s", type, valid);
  }
  PetscCall(PetscMemzero(ops, sizeof(*ops)));
  PetscCall((*create)(ops));
  PetscCheck(ops->eval, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Loss \"%s\" was registered with a routine that sets no eval routine", type);
  PetscFunctionReturn(0);
}

/* Class labels must be integers in [0, nclasses); catches label files that do not match the network. */
PetscErrorCode NNLossCheckTargets(NNLossType type, PetscInt n, PetscInt nclasses, const PetscScalar *t)
{
  NNLossOps ops;

  PetscFunctionBegin;
  PetscCall(NNLossGetOps(type, &ops));
  if (!ops.classification) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < n; i++) {
    PetscCheck(t[i] >= 0 && t[i] < nclasses && t[i] == (PetscInt)t[i], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Target %g of sample %" PetscInt_FMT " is not a class index in [0,%" PetscInt_FMT "): the network's output layer has %" PetscInt_FMT " units", (double)t[i], i, nclasses, nclasses);
  }
  PetscFunctionReturn(0);
}
