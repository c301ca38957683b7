/*
   Single precision (-nn_precision single): the precision is a property of the activations, not a fork of the
   network. The network keeps a float copy of every activation and activation gradient beside act[] and dact[],
   and a float working copy of the parameters, made at the start of every pass. Layer types with
   single-precision passes (ops forwardsingle/backwardsingle) run on the float arrays; the others run their
   double passes on the double Vecs, converted from float at their input and rounded to float at their output,
   so every activation a layer hands on holds float values either way. The master parameters, the gradient
   Vec, the optimizer state, checkpoints and TAO stay double: a float layer's parameter gradient is added into
   the double gradient as soon as the layer is done (the data-parallel reducers then sum it as before), and
   the loss is evaluated in double on the output converted back.

   Graph networks (-nn_type graph) follow the same design node by node: every node keeps its float copy, a
   single-input layer runs its float passes or its double passes on converted activations as above (a node
   converts to double once, when the first layer that needs it reads it), and the multi-input and multi-output
   layers (add, concat, split) have float passes of their own, being pure data movement and sums. A node read by
   several layers gets their gradients summed in float, in the order and wiring of the double pass (the first
   reader in backward order writes it, the others a float scratch array then added), as the device does in single
   precision (src/nn/interface/nndevicegraph_cuda.c); the network input's gradient is summed in double, since it
   leaves the network in double. The parameters' float copy, the hand-off of a float layer's gradient and the
   layerdone calls are those of the sequential path, the latter where the double graph pass makes them.
*/
#include <petnn/private/nnimpl.h>

const char *const NNPrecisions[] = {"double", "single", "NNPrecision", "NN_PRECISION_", NULL};

/*@
   NNSetPrecision - sets the precision the network computes its activations and their gradients in

   Logically Collective

   Input Parameters:
+  net - the network
-  prec - `NN_PRECISION_DOUBLE` (the default) or `NN_PRECISION_SINGLE`

   Options Database Key:
.  -nn_precision <double,single> - the precision

   Notes:
   In single precision the activations, their gradients and a working copy of the parameters are float;
   GEMMs go through sgemm. The parameters themselves, their gradient (`NNGetGradient()`), the optimizer
   state, checkpoints and TAO stay in the double Vecs, so checkpoints load in either precision and in
   PyTorch. Losses are evaluated in double. Layer types without single-precision passes of their own run
   their double passes on activations converted at their boundaries; `NNView()` lists which layers do.
   Graph networks (`NNTYPEGRAPH`) run in single precision too: `NNLAYERADD`, `NNLAYERCONCAT` and `NNLAYERSPLIT` move and
   sum float activations, and an activation read by several layers gets their gradients summed in float.

   Level: intermediate

.seealso: `NNGetPrecision()`, `NNView()`
@*/
PetscErrorCode NNSetPrecision(NN net, NNPrecision prec)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidLogicalCollectiveEnum(net, prec, 2);
  PetscCheck(prec == NN_PRECISION_DOUBLE || prec == NN_PRECISION_SINGLE, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Unknown precision %d: valid are double and single", (int)prec);
  if (net->prec.type != prec) net->setupcalled = PETSC_FALSE;
  net->prec.type = prec;
  PetscFunctionReturn(0);
}

/*@
   NNGetPrecision - gets the precision set with `NNSetPrecision()`

   Not Collective

   Level: intermediate

.seealso: `NNSetPrecision()`
@*/
PetscErrorCode NNGetPrecision(NN net, NNPrecision *prec)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(prec, 2);
  *prec = net->prec.type;
  PetscFunctionReturn(0);
}

/* frees the float arrays (NNSetUp() remakes them; NNDestroy()) */
PetscErrorCode NNPrecisionReset(NN net)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nact && net->prec.act; i++) {
    PetscCall(PetscFree(net->prec.act[i]));
    PetscCall(PetscFree(net->prec.dact[i]));
  }
  PetscCall(PetscFree(net->prec.act));
  PetscCall(PetscFree(net->prec.dact));
  PetscCall(PetscFree(net->prec.len));
  PetscCall(PetscFree(net->prec.theta));
  PetscCall(PetscFree(net->prec.dtheta));
  for (PetscInt j = 0; j < net->prec.nscratch && net->prec.scratch; j++) PetscCall(PetscFree(net->prec.scratch[j]));
  PetscCall(PetscFree(net->prec.scratch));
  PetscCall(PetscFree(net->prec.dbl));
  PetscCall(PetscFree(net->prec.work));
  net->prec.nscratch = 0;
  PetscFunctionReturn(0);
}

/* after NNSetUp() made the activation Vecs: the float copies beside them */
PetscErrorCode NNPrecisionSetUp(NN net)
{
  PetscInt np, maxp = 0;

  PetscFunctionBegin;
  if (net->prec.type == NN_PRECISION_DOUBLE) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer l = net->layers[i];
    PetscCheck(!l->ops->forwardmulti || NNLayerHasMultiSinglePasses(l), PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "Layer %s (%s) has no single-precision passes: use -nn_precision double", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  }
  PetscCall(PetscCalloc1(net->nact, &net->prec.act));
  PetscCall(PetscCalloc1(net->nact, &net->prec.dact));
  PetscCall(PetscCalloc1(net->nact, &net->prec.len));
  for (PetscInt i = 0; i < net->nact; i++) {
    PetscCall(VecGetLocalSize(net->act[i], &net->prec.len[i]));
    PetscCall(PetscMalloc1(net->prec.len[i], &net->prec.act[i]));
    PetscCall(PetscMalloc1(net->prec.len[i], &net->prec.dact[i]));
  }
  PetscCall(VecGetLocalSize(net->theta, &np));
  PetscCall(PetscMalloc1(np, &net->prec.theta));
  for (PetscInt i = 0; i < net->nlayers; i++) { /* a layer's slice, its children's included (ODE blocks) */
    PetscCall(NNLayerGetNumParameters(net->layers[i], &np));
    maxp = PetscMax(maxp, np);
  }
  PetscCall(PetscMalloc1(maxp, &net->prec.dtheta));
  if (net->graph.on) { /* the float scratch arrays of the nodes read by several layers, as the double pass's Vecs */
    PetscCall(PetscCalloc1(net->graph.nscratch, &net->prec.scratch));
    net->prec.nscratch = net->graph.nscratch;
    for (PetscInt j = 0; j < net->prec.nscratch; j++) PetscCall(PetscMalloc1(net->prec.len[net->graph.scratchnode[j]], &net->prec.scratch[j]));
    PetscCall(PetscCalloc1(net->nact, &net->prec.dbl));
    PetscCall(PetscCalloc1(4 * net->graph.maxio, &net->prec.work));
  }
  PetscFunctionReturn(0);
}

/* one line of NNView(): the precision and, in single, which layers run their own float passes */
PetscErrorCode NNPrecisionView(NN net, PetscViewer v)
{
  char     native[1024] = "", converted[1024] = "";
  PetscInt nn = 0, nc = 0;

  PetscFunctionBegin;
  if (net->prec.type == NN_PRECISION_DOUBLE) {
    PetscCall(PetscViewerASCIIPrintf(v, "precision: double\n"));
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer   l   = net->layers[i];
    PetscBool own = (PetscBool)(NNLayerHasSinglePasses(l) || NNLayerHasMultiSinglePasses(l));
    char     *s   = own ? native : converted;
    if (own ? nn++ : nc++) PetscCall(PetscStrlcat(s, ", ", 1024));
    PetscCall(PetscStrlcat(s, ((PetscObject)l)->name, 1024));
  }
  PetscCall(PetscViewerASCIIPrintf(v, "precision: single (activations, their gradients and a parameter copy in float; parameters, optimizer state, checkpoints in double)\n"));
  PetscCall(PetscViewerASCIIPushTab(v));
  PetscCall(PetscViewerASCIIPrintf(v, "float passes: %s\n", nn ? native : "none"));
  PetscCall(PetscViewerASCIIPrintf(v, "double passes on converted activations: %s\n", nc ? converted : "none"));
  PetscCall(PetscViewerASCIIPopTab(v));
  PetscFunctionReturn(0);
}
