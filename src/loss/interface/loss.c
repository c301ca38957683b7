/*
   The loss registry: a loss type is a name and a routine that fills an NNLossOps (its evaluation
   routine and whether targets are class indices). Built-in types live in src/loss/impls/<name>/.
*/
#include <petnn/private/nnimpl.h>

PetscFunctionList NNLossList = NULL;

PETSC_INTERN PetscErrorCode NNLossCreate_CrossEntropy(NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossCreate_MSE(NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossCreate_L1(NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossCreate_Huber(NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossCreate_RelL2(NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossCreate_BCEWithLogits(NNLossOps *);

/* called once from PetNNInitializePackage(); the order is the order error messages list them in */
PETSC_INTERN PetscErrorCode NNLossRegisterAllTypes(void)
{
  PetscFunctionBegin;
  PetscCall(NNLossRegister(NNLOSSCROSSENTROPY, NNLossCreate_CrossEntropy));
  PetscCall(NNLossRegister(NNLOSSMSE, NNLossCreate_MSE));
  PetscCall(NNLossRegister(NNLOSSL1, NNLossCreate_L1));
  PetscCall(NNLossRegister(NNLOSSHUBER, NNLossCreate_Huber));
  PetscCall(NNLossRegister(NNLOSSRELL2, NNLossCreate_RelL2));
  PetscCall(NNLossRegister(NNLOSSBCEWITHLOGITS, NNLossCreate_BCEWithLogits));
  PetscFunctionReturn(0);
}

/*@C
   NNLossRegister - adds a loss type, selectable with `NNSetLoss()` or -nn_loss

   Not Collective

   Input Parameters:
+  name - name of the loss, used with -nn_loss
-  create - routine that fills the `NNLossOps`: its eval routine (mean loss over the first n samples and,
            when dy is not NULL, dL/dy) and classification (PETSC_TRUE when targets are class indices);
            optionally the partial-sum routines (sums, finish, gradient) that spatial outputs need

   Notes:
   Registering a name again replaces its routine. The eval routine sees the output y and the targets
   of n samples with nout values each (one class index per sample for classification losses) and must
   return the mean over the batch, so that gradients match the other losses' scaling.

   A loss on a spatial (DMDA) network output is evaluated where the output lives, each rank holding
   some pixels of every sample: the type then needs the partial-sum form. sums() adds the
   contributions of the rank's entries (an `NNLossBlock`) to nsums values (nsums per sample when
   persample is set), these are summed over the ranks, finish() turns them into the mean loss and
   gradient() writes dL/dy at the block's entries. A type with only eval is refused on spatial
   outputs. Options of a type (setfromoptions) keep their values in param[], view() prints them.

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
  PetscCheck(ops->eval || (ops->sums && ops->finish), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Loss \"%s\" was registered with a routine that sets no eval routine (nor sums and finish routines)", type);
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
