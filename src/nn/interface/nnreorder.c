/*
   Running max pooling before the ReLU in front of it.

   ReLU is non-decreasing and maps positive values to themselves, so over any pooling window
   max(relu(x)) = relu(max(x)), and the backward passes agree too: where the window's maximum is
   positive both route the output gradient to the same entry (the first maximum, and positive values
   tie after ReLU only if they tie before it); where it is not, both give zero. So
   conv - relu - maxpool and conv - maxpool - relu compute the same outputs and gradients, bitwise,
   and the second applies ReLU to kernel-volume times fewer entries (4x for a 2x2 pool). ReLU and
   max pooling are memory-bound passes over the largest activations of a CNN, and on a node whose
   cores share the memory bus, fewer bytes moved also means less contention between ranks.
   Only NaN inputs differ: ReLU maps NaN to 0, max pooling propagates it.
   NNSetUp() applies this to the top-level layers; the order the layers were given in is kept
   (net->added.layers) for NNSetFromOptions() and NNView().
*/
#include <petnn/private/nnimpl.h>

/* the running order is the added order again (repartitions are inserted by NNSetUp() after NNReorderLayers()) */
PetscErrorCode NNResetLayerOrder(NN net)
{
  PetscFunctionBegin;
  if (net->added.n) PetscCall(PetscArraycpy(net->layers, net->added.layers, net->added.n));
  net->nlayers = net->added.n;
  PetscFunctionReturn(0);
}

/* the layers in execution order: the given order, with every relu that a max pooling layer follows
   moved behind it */
PetscErrorCode NNReorderLayers(NN net)
{
  PetscFunctionBegin;
  PetscCall(NNResetLayerOrder(net));
  net->reorder.nmoved = 0;
  if (!net->reorder.poolfirst || net->graph.on) PetscFunctionReturn(0); /* a graph's layers do not form a chain to reorder */
  for (PetscInt i = 0; i + 1 < net->nlayers; i++) {
    PetscBool relu, max;
    PetscCall(PetscObjectTypeCompare((PetscObject)net->layers[i], NNLAYERRELU, &relu));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)net->layers[i + 1], &max, NNLAYERMAXPOOL2D, NNLAYERMAXPOOL3D, ""));
    if (relu && max) {
      NNLayer a          = net->layers[i];
      net->layers[i]     = net->layers[i + 1];
      net->layers[i + 1] = a;
      net->reorder.nmoved++;
      i++;
    }
  }
  PetscFunctionReturn(0);
}

/*@
   NNSetPoolBeforeActivation - runs every max pooling layer that directly follows a ReLU before it

   Logically Collective

   Input Parameters:
+  net - the network
-  flg - `PETSC_TRUE` (default) to reorder, `PETSC_FALSE` to run the layers in the given order

   Options Database Key:
.  -nn_pool_before_activation <bool> - the same

   Notes:
   Max pooling commutes with ReLU, forward and backward, bitwise (only NaN inputs differ: ReLU maps
   them to 0, pooling propagates them), so the network computes the same outputs and gradients while
   ReLU touches kernel-volume times fewer entries. In the CNN of examples/fashion_cnn.opts this makes
   ReLU 4x cheaper. Only top-level layers are reordered; `NNView()` lists them in the order they run.

   Level: intermediate

.seealso: `NNSetUp()`, `NNAddLayer()`
@*/
PetscErrorCode NNSetPoolBeforeActivation(NN net, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveBool(net, flg, 2);
  if (net->reorder.poolfirst != flg) net->setupcalled = PETSC_FALSE;
  net->reorder.poolfirst = flg;
  PetscFunctionReturn(0);
}

/* NNView(): which layers run in another order than given */
PetscErrorCode NNViewReordering(NN net, PetscViewer viewer)
{
  NNLayer *run;
  PetscInt n = 0;

  PetscFunctionBegin;
  if (!net->reorder.nmoved) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(net->nlayers, &run)); /* the running order without inserted repartitions lines up with the added one */
  for (PetscInt i = 0; i < net->nlayers; i++)
    if (!NNIsRepartition(net, net->layers[i])) run[n++] = net->layers[i];
  PetscCall(PetscViewerASCIIPrintf(viewer, "max pooling runs before the ReLU in front of it (same result, fewer entries; -nn_pool_before_activation 0 to keep the given order):"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  for (PetscInt i = 0; i + 1 < n && i + 1 < net->added.n; i++)
    if (run[i + 1] == net->added.layers[i] && run[i] == net->added.layers[i + 1]) PetscCall(PetscViewerASCIIPrintf(viewer, " %s after %s", ((PetscObject)run[i + 1])->name, ((PetscObject)run[i])->name));
  PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  PetscCall(PetscFree(run));
  PetscFunctionReturn(0);
}
