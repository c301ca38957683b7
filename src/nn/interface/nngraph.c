/*
   Graph networks (NNSetType(net, NNTYPEGRAPH), -nn_type graph): the set-up.

   Each layer reads the activations it names with NNLayerSetInputs() or -<layer>_inputs a,b: "input"
   is the network input, "name" output 0 of another top-level layer, "name:k" output k of a layer
   with several outputs (split). A layer that names none reads the layer before it in the network's
   list (the first one the network input), so a graph network without named inputs is the sequential
   network. The network output is output 0 of the last layer of the list. Layers run in a
   topological order (among the layers ready to run, the earliest in the list first); every output
   must be read by some layer (the network output aside), so no work is computed for nothing.
   Parameters stay laid out in list order, so checkpoints and exports do not see the graph.

   Activations are nodes: act[0] the input, act[i + 1] output 0 of layer i, then the further outputs.
   The backward pass runs the layers in reverse order; a node read by several layers gets the sum of
   their gradients: the first reader (in backward order) writes it, the others write a scratch Vec
   of their own that is then added (layer backward passes overwrite their input gradients).
*/
#include <petnn/private/nnimpl.h>

static const char *NNGraphLayerName(NN net, PetscInt i)
{
  return i < 0 ? "input" : ((PetscObject)net->layers[i])->name;
}

PetscErrorCode NNGraphReset(NN net)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < net->graph.nscratch && net->graph.scratch; j++) PetscCall(VecDestroy(&net->graph.scratch[j])); /* none after a failed set-up */
  PetscCall(PetscFree(net->graph.scratch));
  PetscCall(PetscFree3(net->graph.inptr, net->graph.in, net->graph.outptr));
  PetscCall(PetscFree2(net->graph.order, net->graph.slot));
  PetscCall(PetscFree(net->graph.out));
  PetscCall(PetscFree(net->graph.scratchnode));
  PetscCall(PetscFree3(net->graph.shape, net->graph.need, net->graph.done));
  PetscCall(PetscFree(net->graph.work));
  net->graph.nscratch = 0;
  net->graph.nnodes   = 0;
  PetscFunctionReturn(0);
}

/* layers inside blocks (residual, ode) run as a chain: none of them may name inputs */
PetscErrorCode NNGraphCheckChildren(NN net, NNLayer l)
{
  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer k = l->children[c];
    PetscCheck(!k->graph.ninputs, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s inside block %s names its inputs (-%sinputs): only the top-level layers of a graph network can", ((PetscObject)k)->name, ((PetscObject)l)->name, ((PetscObject)k)->prefix ? ((PetscObject)k)->prefix : "");
    PetscCall(NNGraphCheckChildren(net, k));
  }
  PetscFunctionReturn(0);
}

/* a sequential network: no layer names inputs or combines several */
PetscErrorCode NNGraphCheckSequential(NN net)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer     l   = net->layers[i];
    const char *pre = ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "";
    PetscCheck(!l->graph.ninputs, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Layer %s names its inputs (-%sinputs) but the network is sequential: use -%snn_type graph (NNSetType(net, NNTYPEGRAPH))", ((PetscObject)l)->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", pre);
    PetscCheck(!l->ops->forwardmulti, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s) combines or splits activations of a graph network but the network is sequential: use -%snn_type graph (NNSetType(net, NNTYPEGRAPH))", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre);
  }
  PetscFunctionReturn(0);
}

/* "input, a, b, c": what a layer may name */
static PetscErrorCode NNGraphValidNames(NN net, size_t len, char str[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(str, "input", len));
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscCall(PetscStrlcat(str, ", ", len));
    PetscCall(PetscStrlcat(str, NNGraphLayerName(net, i), len));
  }
  PetscFunctionReturn(0);
}

/* the producer (layer index, -1 for the network input) and output port of name in layer i's -<layer>_inputs */
static PetscErrorCode NNGraphResolve(NN net, PetscInt i, const char name[], PetscInt *src, PetscInt *port)
{
  NNLayer   l = net->layers[i];
  char      base[256], *colon, valid[1024];
  PetscBool match;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(base, name, sizeof(base)));
  PetscCall(PetscStrchr(base, ':', &colon));
  *port = 0;
  if (colon) {
    char *end;
    *colon = 0;
    *port  = (PetscInt)strtol(colon + 1, &end, 10);
    PetscCheck(colon[1] && !*end && *port >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s: input \"%s\" (-%sinputs): write name:k with k = 0, 1, ... the output of a split layer", ((PetscObject)l)->name, name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "");
  }
  PetscCall(PetscStrcmp(base, "input", &match));
  if (match) {
    PetscCheck(*port == 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s: input \"%s\": the network input has one output (input or input:0)", ((PetscObject)l)->name, name);
    *src = -1;
    PetscFunctionReturn(0);
  }
  for (PetscInt j = 0; j < net->nlayers; j++) {
    PetscCall(PetscStrcmp(base, NNGraphLayerName(net, j), &match));
    if (!match) continue;
    PetscCheck(j != i, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s names itself as an input (-%sinputs %s): a layer cannot read its own output", ((PetscObject)l)->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", name);
    *src = j;
    PetscFunctionReturn(0);
  }
  PetscCall(NNGraphValidNames(net, sizeof(valid), valid));
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s: input \"%s\" (-%sinputs) is no layer of the network; valid inputs: %s (name:k for output k of a split)", ((PetscObject)l)->name, name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", valid);
}

/* error naming a cycle among the layers not sorted (sorted[i] false): follow unsorted producers until one repeats */
static PetscErrorCode NNGraphCycleError(NN net, const PetscInt src[], const PetscBool sorted[])
{
  PetscInt *seen, *path, len = 0, u = -1;
  char      chain[1024] = "";

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(net->nlayers, &seen, net->nlayers + 1, &path));
  for (PetscInt i = 0; i < net->nlayers && u < 0; i++)
    if (!sorted[i]) u = i;
  while (!seen[u]) { /* an unsorted layer waits for an unsorted producer */
    PetscInt next = -1;
    seen[u]       = len + 1;
    path[len++]   = u;
    for (PetscInt k = net->graph.inptr[u]; k < net->graph.inptr[u + 1] && next < 0; k++)
      if (src[k] >= 0 && !sorted[src[k]]) next = src[k];
    u = next;
  }
  /* path[seen[u]-1 .. len) is the cycle walked against the data flow: print it along the flow */
  for (PetscInt t = len - 1; t >= seen[u] - 1; t--) {
    PetscCall(PetscStrlcat(chain, NNGraphLayerName(net, path[t]), sizeof(chain)));
    PetscCall(PetscStrlcat(chain, " -> ", sizeof(chain)));
  }
  PetscCall(PetscStrlcat(chain, NNGraphLayerName(net, path[len - 1]), sizeof(chain)));
  PetscCall(PetscFree2(seen, path));
  SETERRQ(PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "The graph network has a cycle: %s (each arrow: a layer's output read by the next, -<layer>_inputs)", chain);
}

/* Kahn's algorithm, the earliest ready layer of the list first (so a chain runs in list order) */
static PetscErrorCode NNGraphSort(NN net, const PetscInt src[])
{
  PetscBool *sorted;
  PetscInt   count = 0;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(net->nlayers, &sorted));
  while (count < net->nlayers) {
    PetscInt next = -1;
    for (PetscInt i = 0; i < net->nlayers && next < 0; i++) {
      PetscBool ready = (PetscBool)!sorted[i];
      for (PetscInt k = net->graph.inptr[i]; ready && k < net->graph.inptr[i + 1]; k++) ready = (PetscBool)(src[k] < 0 || sorted[src[k]]);
      if (ready) next = i;
    }
    if (next < 0) {
      PetscErrorCode ierr = NNGraphCycleError(net, src, sorted);
      PetscCall(PetscFree(sorted));
      PetscCall(ierr);
    }
    sorted[next]                = PETSC_TRUE;
    net->graph.order[count++] = next;
  }
  PetscCall(PetscFree(sorted));
  PetscFunctionReturn(0);
}

/* the layers' inputs as (producer, port) pairs in src[], port[] (allocated here) and net->graph.inptr */
static PetscErrorCode NNGraphConnect(NN net, PetscInt **src, PetscInt **port)
{
  PetscInt L = net->nlayers, total = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < L; i++) {
    PetscBool reserved;
    PetscCall(PetscStrcmp(NNGraphLayerName(net, i), "input", &reserved));
    PetscCheck(!reserved, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "A layer of a graph network may not be named input: that name means the network input");
    total += PetscMax(net->layers[i]->graph.ninputs, 1);
  }
  PetscCall(PetscMalloc3(L + 1, &net->graph.inptr, total, &net->graph.in, L + 1, &net->graph.outptr));
  PetscCall(PetscMalloc2(L, &net->graph.order, total, &net->graph.slot));
  PetscCall(PetscMalloc2(total, src, total, port));
  net->graph.inptr[0] = 0;
  for (PetscInt i = 0; i < L; i++) {
    NNLayer  l = net->layers[i];
    PetscInt k = net->graph.inptr[i];
    if (!l->graph.ninputs) { /* the layer before it, or the network input */
      (*src)[k]  = i - 1;
      (*port)[k] = 0;
    }
    for (PetscInt j = 0; j < l->graph.ninputs; j++) PetscCall(NNGraphResolve(net, i, l->graph.inputs[j], &(*src)[k + j], &(*port)[k + j]));
    net->graph.inptr[i + 1] = k + PetscMax(l->graph.ninputs, 1);
    PetscCheck(l->ops->forwardmulti || net->graph.inptr[i + 1] - k == 1, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s (%s) takes one input but -%sinputs names %" PetscInt_FMT "; combine them with a %s or %s layer first", ((PetscObject)l)->name, ((PetscObject)l)->type_name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", l->graph.ninputs, NNLAYERCONCAT, NNLAYERADD);
  }
  PetscFunctionReturn(0);
}

/* sets up layer i from the shapes of its inputs (producers set up before it) */
static PetscErrorCode NNGraphSetUpLayer(NN net, PetscInt i, const PetscInt src[], const PetscInt port[])
{
  NNLayer      l = net->layers[i];
  PetscInt     k0 = net->graph.inptr[i], nin = net->graph.inptr[i + 1] - k0;
  NNShape     *shapes;
  const char **from;
  char       (*names)[280];
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc3(nin, &shapes, nin, &from, nin, &names));
  for (PetscInt k = 0; k < nin; k++) {
    PetscInt j = src[k0 + k], p = port[k0 + k];
    if (j < 0) {
      shapes[k] = net->inshape;
      PetscCall(PetscStrncpy(names[k], "the network input", sizeof(names[k])));
    } else {
      NNLayer  pl   = net->layers[j];
      PetscInt nout = pl->graph.nout > 1 ? pl->graph.nout : 1;
      if (p >= nout) PetscCall(PetscFree3(shapes, from, names));
      PetscCheck(p < nout, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Layer %s reads %s:%" PetscInt_FMT " (-%sinputs) but layer %s (%s) has %" PetscInt_FMT " output%s (%s:0 .. %s:%" PetscInt_FMT ")", ((PetscObject)l)->name, ((PetscObject)pl)->name, p, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", ((PetscObject)pl)->name, ((PetscObject)pl)->type_name, nout, nout > 1 ? "s" : "", ((PetscObject)pl)->name, ((PetscObject)pl)->name, nout - 1);
      shapes[k] = p ? pl->graph.outshapes[p] : pl->outshape;
      if (nout > 1) PetscCall(PetscSNPrintf(names[k], sizeof(names[k]), "%s:%" PetscInt_FMT, ((PetscObject)pl)->name, p));
      else PetscCall(PetscStrncpy(names[k], ((PetscObject)pl)->name, sizeof(names[k])));
    }
    from[k] = names[k];
  }
  PetscCall(NNLayerSetBatchCapacity(l, net->nbatch));
  PetscCall(NNLayerSetTraining(l, net->training));
  l->part.comm = NNGetPartitionComm(net);
  l->inputname = src[k0] < 0 ? "the network input" : NNGraphLayerName(net, src[k0]); /* for the layer's error messages */
  if (l->ops->forwardmulti) ierr = NNLayerSetUpMulti(l, nin, shapes, from);
  else {
    ierr = NNLayerSetInputShape(l, &shapes[0]);
    if (!ierr) ierr = NNLayerSetUp(l);
  }
  PetscCall(PetscFree3(shapes, from, names));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* nodes of the outputs (out[], outptr[]) and inputs (in[]), their shapes; every output read */
static PetscErrorCode NNGraphNodes(NN net, const PetscInt src[], const PetscInt port[])
{
  PetscInt  L = net->nlayers, nnodes = L + 1, nout = 0, *uses;
  MPI_Comm  comm = PetscObjectComm((PetscObject)net);

  PetscFunctionBegin;
  for (PetscInt i = 0; i < L; i++) {
    net->graph.outptr[i] = nout;
    nout += PetscMax(net->layers[i]->graph.nout, 1);
  }
  net->graph.outptr[L] = nout;
  PetscCall(PetscMalloc1(nout, &net->graph.out));
  for (PetscInt i = 0; i < L; i++)
    for (PetscInt p = net->graph.outptr[i]; p < net->graph.outptr[i + 1]; p++) net->graph.out[p] = p == net->graph.outptr[i] ? i + 1 : nnodes++;
  net->graph.nnodes = nnodes;
  PetscCall(PetscMalloc3(nnodes, &net->graph.shape, nnodes, &net->graph.need, L, &net->graph.done));
  net->graph.shape[0] = net->inshape;
  for (PetscInt i = 0; i < L; i++)
    for (PetscInt p = net->graph.outptr[i]; p < net->graph.outptr[i + 1]; p++) net->graph.shape[net->graph.out[p]] = p > net->graph.outptr[i] ? net->layers[i]->graph.outshapes[p - net->graph.outptr[i]] : net->layers[i]->outshape;
  PetscCall(PetscCalloc1(nnodes, &uses));
  for (PetscInt k = 0; k < net->graph.inptr[L]; k++) {
    net->graph.in[k] = src[k] < 0 ? 0 : net->graph.out[net->graph.outptr[src[k]] + port[k]];
    uses[net->graph.in[k]]++;
  }
  PetscCheck(net->graph.outptr[L] - net->graph.outptr[L - 1] == 1, comm, PETSC_ERR_ARG_WRONG, "The last layer of a graph network, %s (%s), is its output and must have one output", NNGraphLayerName(net, L - 1), ((PetscObject)net->layers[L - 1])->type_name);
  for (PetscInt i = 0; i < L; i++)
    for (PetscInt p = net->graph.outptr[i]; p < net->graph.outptr[i + 1]; p++) {
      PetscInt v = net->graph.out[p], k = p - net->graph.outptr[i];
      if (uses[v] || v == L) continue;
      PetscCall(PetscFree(uses));
      if (net->graph.outptr[i + 1] - net->graph.outptr[i] > 1) SETERRQ(comm, PETSC_ERR_ARG_WRONG, "Output %s:%" PetscInt_FMT " of layer %s is read by no layer: every output of a graph network must be (only the last layer, %s, is the network output)", NNGraphLayerName(net, i), k, NNGraphLayerName(net, i), NNGraphLayerName(net, L - 1));
      SETERRQ(comm, PETSC_ERR_ARG_WRONG, "The output of layer %s is read by no layer: every layer of a graph network must feed another (only the last layer, %s, is the network output; name %s in some -<layer>_inputs or remove it)", NNGraphLayerName(net, i), NNGraphLayerName(net, L - 1), NNGraphLayerName(net, i));
    }
  PetscCall(PetscFree(uses));
  PetscFunctionReturn(0);
}

/* which inputs' gradients are written straight into their node's gradient Vec and which are summed through a scratch Vec */
static PetscErrorCode NNGraphSlots(NN net)
{
  PetscBool *seen;
  PetscInt   L = net->nlayers, nscratch = 0;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(net->graph.nnodes, &seen));
  PetscCall(PetscMalloc1(net->graph.inptr[L], &net->graph.scratchnode));
  seen[L]          = PETSC_TRUE; /* the loss writes the output's gradient (no layer reads it: that would be a cycle) */
  net->graph.maxio = 1;
  for (PetscInt t = L - 1; t >= 0; t--) {
    PetscInt i = net->graph.order[t];
    net->graph.maxio = PetscMax(net->graph.maxio, PetscMax(net->graph.inptr[i + 1] - net->graph.inptr[i], net->graph.outptr[i + 1] - net->graph.outptr[i]));
    for (PetscInt k = net->graph.inptr[i]; k < net->graph.inptr[i + 1]; k++) {
      PetscInt v = net->graph.in[k];
      if (!seen[v]) net->graph.slot[k] = -1;
      else {
        net->graph.scratchnode[nscratch] = v;
        net->graph.slot[k]               = nscratch++;
      }
      seen[v] = PETSC_TRUE;
    }
  }
  net->graph.nscratch = nscratch;
  PetscCall(PetscFree(seen));
  PetscCall(PetscCalloc1(4 * net->graph.maxio, &net->graph.work));
  PetscFunctionReturn(0);
}

/* NNSetUp() of a graph network: connect, sort and set up the layers (activation Vecs: NNGraphCreateVecs()) */
PetscErrorCode NNGraphSetUpLayers(NN net)
{
  PetscInt      *src = NULL, *port = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNGraphReset(net));
  ierr = NNGraphConnect(net, &src, &port); /* on errors src and port are still freed */
  if (!ierr) ierr = NNGraphSort(net, src);
  for (PetscInt t = 0; t < net->nlayers && !ierr; t++) ierr = NNGraphSetUpLayer(net, net->graph.order[t], src, port);
  if (!ierr) ierr = NNGraphNodes(net, src, port);
  if (!ierr) ierr = NNGraphSlots(net);
  PetscCall(PetscFree2(src, port));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* the activation Vecs of nodes 1 .. nnodes-1 (act[0], dact[0] exist), in the order the layers run, and the scratch Vecs */
PetscErrorCode NNGraphCreateVecs(NN net)
{
  DM *dms;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(net->graph.maxio, &dms));
  for (PetscInt t = 0; t < net->nlayers; t++) {
    PetscInt i = net->graph.order[t], k0 = net->graph.inptr[i], p0 = net->graph.outptr[i];
    NNLayer  l = net->layers[i];
    for (PetscInt k = k0; k < net->graph.inptr[i + 1]; k++) PetscCall(VecGetDM(net->act[net->graph.in[k]], &dms[k - k0]));
    if (l->ops->forwardmulti) {
      Vec *y = net->graph.work;
      PetscErrorCode ierr = NNLayerCreateOutputVecsMulti(l, dms, y); /* fails on inputs of different layouts */
      if (ierr) PetscCall(PetscFree(dms));
      PetscCall(ierr);
      for (PetscInt p = p0; p < net->graph.outptr[i + 1]; p++) net->act[net->graph.out[p]] = y[p - p0];
    } else {
      PetscCall(NNLayerSetInputDM(l, dms[0]));
      PetscCall(NNLayerCreateOutputVec(l, &net->act[i + 1]));
    }
    for (PetscInt p = p0; p < net->graph.outptr[i + 1]; p++) PetscCall(VecDuplicate(net->act[net->graph.out[p]], &net->dact[net->graph.out[p]]));
  }
  PetscCall(PetscFree(dms));
  PetscCall(PetscCalloc1(net->graph.nscratch, &net->graph.scratch));
  for (PetscInt j = 0; j < net->graph.nscratch; j++) PetscCall(VecDuplicate(net->act[net->graph.scratchnode[j]], &net->graph.scratch[j]));
  PetscFunctionReturn(0);
}

/* "input", "a" or "s:1" */
static PetscErrorCode NNGraphNodeName(NN net, PetscInt v, size_t len, char str[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(str, "input", len));
  for (PetscInt i = 0; i < net->nlayers; i++)
    for (PetscInt p = net->graph.outptr[i]; p < net->graph.outptr[i + 1]; p++) {
      if (net->graph.out[p] != v) continue;
      if (net->graph.outptr[i + 1] - net->graph.outptr[i] > 1) PetscCall(PetscSNPrintf(str, len, "%s:%" PetscInt_FMT, NNGraphLayerName(net, i), p - net->graph.outptr[i]));
      else PetscCall(PetscStrncpy(str, NNGraphLayerName(net, i), len));
    }
  PetscFunctionReturn(0);
}

/* NNView(): each layer with its inputs, in the order they run */
PetscErrorCode NNGraphView(NN net, PetscViewer viewer)
{
  PetscFunctionBegin;
  if (!net->graph.on) PetscFunctionReturn(0);
  if (!net->setupcalled || !net->graph.order) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "graph: set up the network to see how its layers connect\n"));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "graph, in the order the layers run (layer <- its inputs; output: %s):\n", NNGraphLayerName(net, net->nlayers - 1)));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  for (PetscInt t = 0; t < net->nlayers; t++) {
    PetscInt i = net->graph.order[t];
    PetscCall(PetscViewerASCIIPrintf(viewer, "%s <-", NNGraphLayerName(net, i)));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (PetscInt k = net->graph.inptr[i]; k < net->graph.inptr[i + 1]; k++) {
      char name[280];
      PetscCall(NNGraphNodeName(net, net->graph.in[k], sizeof(name), name));
      PetscCall(PetscViewerASCIIPrintf(viewer, "%s %s", k > net->graph.inptr[i] ? "," : "", name));
    }
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@C
   NNSetType - sets how the network's layers connect: a chain or a graph

   Logically Collective

   Input Parameters:
+  net - the network
-  type - `NNTYPESEQUENTIAL` (default: each layer reads the one before it) or `NNTYPEGRAPH`

   Options Database Key:
.  -nn_type <sequential,graph> - the same

   Notes:
   In a graph network each layer reads the activations it names with `NNLayerSetInputs()` or
   -<layer>_inputs a,b: "input" is the network input, "name" another layer's output, "name:k" output k
   of a `NNLAYERSPLIT` layer. A layer that names none reads the layer before it in the list (the first
   one reads the network input), so without named inputs a graph network computes what the sequential
   one does, bitwise. Layers of type `NNLAYERCONCAT` and `NNLAYERADD` combine several inputs; all other
   types take one. The network output is the last layer of the list. Layers run in a topological order;
   where several layers read one activation, their gradients are summed. Every output must be read by
   some layer (else `NNSetUp()` fails naming it), cycles and unknown names are refused. Parameters keep the
   order of the list (checkpoints and PyTorch exports are unchanged), and max pooling is never moved
   before a ReLU (`NNSetPoolBeforeActivation()` applies to sequential networks only).

   Level: intermediate

.seealso: `NNGetType()`, `NNLayerSetInputs()`, `NNLAYERCONCAT`, `NNLAYERADD`, `NNLAYERSPLIT`
@*/
PetscErrorCode NNSetType(NN net, NNType type)
{
  PetscBool seq, graph;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(PetscStrcmp(type, NNTYPESEQUENTIAL, &seq));
  PetscCall(PetscStrcmp(type, NNTYPEGRAPH, &graph));
  PetscCheck(seq || graph, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_UNKNOWN_TYPE, "Network type %s is unknown (-nn_type): valid types are %s and %s", type ? type : "(null)", NNTYPESEQUENTIAL, NNTYPEGRAPH);
  if (graph != net->graph.on) {
    net->setupcalled = PETSC_FALSE;
    net->init.reinit = PETSC_TRUE;
  }
  net->graph.on = graph;
  PetscCall(PetscObjectChangeTypeName((PetscObject)net, graph ? NNTYPEGRAPH : NNTYPESEQUENTIAL));
  PetscFunctionReturn(0);
}

/*@C
   NNGetType - gets how the network's layers connect

   Not Collective

   Input Parameter:
.  net - the network

   Output Parameter:
.  type - `NNTYPESEQUENTIAL` or `NNTYPEGRAPH`

   Level: intermediate

.seealso: `NNSetType()`
@*/
PetscErrorCode NNGetType(NN net, NNType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(type, 2);
  *type = ((PetscObject)net)->type_name;
  PetscFunctionReturn(0);
}
