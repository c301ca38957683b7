/* The parameters of an imported model (NNLoadONNX()): kept by layer name and written over the initialization of
   every NNSetUp() that initializes, so that options applied after the import (a new batch size, a decomposition,
   the precision) keep the imported values. */
#include <petnn/private/nnimpl.h>

/* keeps a copy of a layer's parameters, in the layer's own order (PyTorch's: weight then bias) */
PetscErrorCode NNImportedAddParameters(NN net, const char layer[], PetscInt len, const PetscScalar val[])
{
  PetscInt n = net->imported.n;

  PetscFunctionBegin;
  PetscCall(PetscRealloc((n + 1) * sizeof(char *), &net->imported.layer));
  PetscCall(PetscRealloc((n + 1) * sizeof(PetscInt), &net->imported.len));
  PetscCall(PetscRealloc((n + 1) * sizeof(PetscScalar *), &net->imported.val));
  PetscCall(PetscStrallocpy(layer, &net->imported.layer[n]));
  net->imported.len[n] = len;
  PetscCall(PetscMalloc1(len, &net->imported.val[n]));
  PetscCall(PetscArraycpy(net->imported.val[n], val, len));
  net->imported.n = n + 1;
  PetscFunctionReturn(0);
}

/* writes the kept parameters into the network's parameter array theta (layer pointers as NNSetUp() sets them) */
PetscErrorCode NNImportedApply(NN net, PetscScalar theta[])
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < net->imported.n; k++) {
    NNLayer l = NULL;
    for (PetscInt i = 0; i < net->nlayers && !l; i++) {
      PetscBool same;
      PetscCall(PetscStrcmp(((PetscObject)net->layers[i])->name, net->imported.layer[k], &same));
      if (same) l = net->layers[i];
    }
    PetscCheck(l, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "The imported model's layer %s is no longer in the network", net->imported.layer[k]);
    PetscCheck(l->nparam == net->imported.len[k] && l->part.gnparam == l->nparam, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Layer %s has %" PetscInt_FMT " parameters on this rank (%" PetscInt_FMT " in all) but the imported model gives it %" PetscInt_FMT ": options changed its size or split it over the ranks (a partitioned layer cannot take imported parameters yet)", net->imported.layer[k], l->nparam, l->part.gnparam, net->imported.len[k]);
    PetscCall(PetscArraycpy(theta + l->poff, net->imported.val[k], l->nparam));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNImportedReset(NN net)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < net->imported.n; k++) {
    PetscCall(PetscFree(net->imported.layer[k]));
    PetscCall(PetscFree(net->imported.val[k]));
  }
  PetscCall(PetscFree(net->imported.layer));
  PetscCall(PetscFree(net->imported.len));
  PetscCall(PetscFree(net->imported.val));
  PetscCall(PetscFree(net->imported.file));
  net->imported.n = 0;
  PetscFunctionReturn(0);
}
