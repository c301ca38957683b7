/* The NN object: layers, parameters, forward/backward through the whole network. */
#include <petnn/private/gridimpl.h>

PetscErrorCode (*NNTrainerConstructor)(NN) = NULL;

/*@C
   NNCreate - creates an empty network

   Collective

   Input Parameter:
.  comm - communicator; parameters are replicated on every rank

   Output Parameter:
.  net - the network

   Level: beginner

.seealso: `NNAddLayer()`, `NNSetFromOptions()`, `NNSetUp()`, `NNTrain()`
@*/
PetscErrorCode NNCreate(MPI_Comm comm, NN *net)
{
  NN nn;

  PetscFunctionBegin;
  PetscAssertPointer(net, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(nn, NN_CLASSID, "NN", "Neural network", "NN", comm, NNDestroy, NNView));
  nn->nbatch            = 128;
  nn->init.seed         = 0;
  nn->training          = PETSC_TRUE;
  nn->init.reinit       = PETSC_TRUE;
  nn->reorder.poolfirst = PETSC_TRUE;
  nn->repart.on         = PETSC_TRUE;
  PetscCall(PetscStrncpy(nn->loss, NNLOSSCROSSENTROPY, sizeof(nn->loss)));
  NNRandomSeed(&nn->rng, (uint64_t)nn->init.seed);
  PetscCall(PetscObjectChangeTypeName((PetscObject)nn, "sequential"));
  *net = nn;
  PetscFunctionReturn(0);
}

/*@C
   NNSetOptionsPrefix - sets the prefix of all the network's options; its layers, optimizer and trainer inherit it

   Logically Collective

   Input Parameters:
+  net - the network
-  prefix - the prefix (without the leading -), e.g. "surrogate_"

   Notes:
   The network reads -<prefix>nn_layers, -<prefix>nn_batch_size, ...; a layer named fc1 reads
   -<prefix>fc1_type, -<prefix>fc1_units, ... (layers added before this call are given the new
   prefix too; nested layers take theirs from their block when it is configured); the optimizer
   -<prefix>opt_type, ...; the trainer -<prefix>nn_epochs, -<prefix>nn_checkpoint, ...; the
   gradient reducer -<prefix>nn_allreduce, -<prefix>nn_bucket_size, ...

   Level: intermediate

.seealso: `NNSetFromOptions()`, `NNAddLayer()`, `NNGetTrainer()`
@*/
PetscErrorCode NNSetOptionsPrefix(NN net, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)net, prefix));
  if (net->trainer) PetscCall(PetscObjectSetOptionsPrefix((PetscObject)net->trainer, prefix));
  if (net->par && net->par->reducer) PetscCall(PetscObjectSetOptionsPrefix((PetscObject)net->par->reducer, prefix));
  for (PetscInt i = 0; i < net->added.n; i++) {
    NNLayer l = net->added.layers[i];
    char    lp[256];
    PetscCall(PetscSNPrintf(lp, sizeof(lp), "%s%s_", prefix ? prefix : "", ((PetscObject)l)->name));
    PetscCall(NNLayerSetOptionsPrefix(l, lp));
  }
  PetscFunctionReturn(0);
}

/*@C
   NNSetInputShape - sets the shape of one input sample (PyTorch order, no batch dimension)

   Options Database Key:
.  -nn_input_shape <d0,d1,...> - e.g. 784 or 1,28,28

   Level: beginner
@*/
PetscErrorCode NNSetInputShape(NN net, PetscInt ndim, const PetscInt dim[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNShapeSet(&net->inshape, ndim, dim));
  net->setupcalled = PETSC_FALSE;
  net->init.reinit      = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
   NNGetInputShape - gets the shape of one input sample

   Level: beginner
@*/
PetscErrorCode NNGetInputShape(NN net, NNShape *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *s = net->inshape;
  PetscFunctionReturn(0);
}

/*@C
   NNGetOutputShape - gets the shape of one output sample (after NNSetUp())

   Level: beginner
@*/
PetscErrorCode NNGetOutputShape(NN net, NNShape *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(net->setupcalled && net->nlayers, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONGSTATE, "Call NNSetUp() first");
  PetscCall(NNLayerGetOutputShape(net->layers[net->nlayers - 1], s));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNFindLayer(NNLayer l, const char name[], NNLayer *found)
{
  PetscBool match;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(((PetscObject)l)->name, name, &match));
  if (match) *found = l;
  for (PetscInt c = 0; c < l->nchildren && !*found; c++) PetscCall(NNFindLayer(l->children[c], name, found));
  PetscFunctionReturn(0);
}

/*@C
   NNGetLayer - finds a layer (or a layer nested in a residual block) by name

   Output Parameter:
.  layer - the layer, NULL if there is none of that name

   Level: beginner
@*/
PetscErrorCode NNGetLayer(NN net, const char name[], NNLayer *layer)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *layer = NULL;
  for (PetscInt i = 0; i < net->nlayers && !*layer; i++) PetscCall(NNFindLayer(net->layers[i], name, layer));
  PetscFunctionReturn(0);
}

/*@C
   NNAddLayer - appends a layer to the network

   Collective

   Input Parameters:
+  net - the network
.  type - layer type, or NULL to take it from -<name>_type
-  name - layer name: options prefix "<name>_" and checkpoint names "<name>.weight", ...

   Output Parameter:
.  layer - the new layer (borrowed reference), may be NULL

   Level: beginner

.seealso: `NNLayerType`, `NNLayerDenseSetUnits()`
@*/
PetscErrorCode NNAddLayer(NN net, NNLayerType type, const char name[], NNLayer *layer)
{
  NNLayer l, existing;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNGetLayer(net, name, &existing));
  PetscCheck(!existing, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "The network already has a layer named %s; layer names must be unique", name);
  if (net->added.n == net->added.capacity) {
    NNLayer *more, *moregiven;
    net->added.capacity = PetscMax(8, 2 * net->added.capacity);
    /* the running order may hold a repartition before every added layer (NNSetUp()) */
    PetscCall(PetscMalloc2(2 * net->added.capacity, &more, net->added.capacity, &moregiven));
    if (net->added.n) PetscCall(PetscArraycpy(moregiven, net->added.layers, net->added.n));
    PetscCall(PetscFree2(net->layers, net->added.layers));
    net->layers       = more;
    net->added.layers = moregiven;
  }
  PetscCall(NNLayerCreateNamed(NNGetLayerComm(net), ((PetscObject)net)->prefix, type, name, &l)); /* the rank's spatial group */
  l->rng                            = &net->rng;
  net->added.layers[net->added.n++] = l;
  PetscCall(NNResetLayerOrder(net)); /* NNSetUp() decides the running order again */
  net->setupcalled            = PETSC_FALSE;
  net->init.reinit                 = PETSC_TRUE;
  if (layer) *layer = l;
  PetscFunctionReturn(0);
}

/*@C
   NNSetLoss - sets the loss (cross_entropy, mse, l1, huber, rel_l2, bce_with_logits or a type of NNLossRegister())

   Options Database Keys:
+  -nn_loss <cross_entropy,mse,l1,huber,rel_l2,bce_with_logits> - the loss
-  -nn_loss_huber_delta <delta> - huber: quadratic below delta, linear beyond (default 1)

   Level: beginner
@*/
PetscErrorCode NNSetLoss(NN net, NNLossType type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNLossGetOps(type, &net->lossops));
  PetscCall(PetscStrncpy(net->loss, type, sizeof(net->loss)));
  PetscFunctionReturn(0);
}

/*@C
   NNGetLoss - gets the loss type

   Level: beginner
@*/
PetscErrorCode NNGetLoss(NN net, NNLossType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *type = net->loss;
  PetscFunctionReturn(0);
}

/*@
   NNSetBatchSize - sets the minibatch size, which is also the capacity of the activation Vecs

   Options Database Key:
.  -nn_batch_size <n> - minibatch size (default 128)

   Level: beginner
@*/
PetscErrorCode NNSetBatchSize(NN net, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(n > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Batch size %" PetscInt_FMT " must be positive (-nn_batch_size)", n);
  if (n != net->nbatch) net->setupcalled = PETSC_FALSE;
  net->nbatch = n;
  PetscFunctionReturn(0);
}

/*@
   NNGetBatchSize - gets the minibatch size

   Level: beginner
@*/
PetscErrorCode NNGetBatchSize(NN net, PetscInt *n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *n = net->nbatch;
  PetscFunctionReturn(0);
}

/*@
   NNSetSeed - seeds the network's random numbers (initialization, shuffling, dropout)

   Options Database Key:
.  -nn_seed <s> - seed (default 0)

   Level: beginner
@*/
PetscErrorCode NNSetSeed(NN net, PetscInt64 seed)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  net->init.seed = seed;
  NNRandomSeed(&net->rng, (uint64_t)seed);
  net->setupcalled = PETSC_FALSE;
  net->init.reinit      = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* the i-th name of -nn_layers: a new layer, or the one already at position i under that name */
static PetscErrorCode NNSetFromOptions_Layer(NN net, PetscInt i, const char name[])
{
  PetscBool same = PETSC_FALSE;

  PetscFunctionBegin;
  if (i < net->added.n) PetscCall(PetscStrcmp(((PetscObject)net->added.layers[i])->name, name, &same));
  PetscCheck(same || i >= net->added.n, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "-nn_layers names %s at position %" PetscInt_FMT " but the network already has layer %s there", name, i, ((PetscObject)net->added.layers[i])->name);
  if (!same) PetscCall(NNAddLayer(net, NULL, name, NULL));
  PetscFunctionReturn(0);
}

/*@
   NNSetFromOptions - builds and configures the network from the options database

   Collective

   Options Database Keys:
+  -nn_type <sequential,graph> - a chain of layers, or a graph whose layers name their inputs (-<name>_inputs a,b; `NNSetType()`)
.  -nn_layers <a,b,c> - names of the layers in order; each is configured by -<name>_type and -<name>_<option>
.  -nn_input_shape <d0,d1,..> - shape of one input sample
.  -nn_loss <cross_entropy,mse,l1,huber,rel_l2,bce_with_logits> - loss
.  -nn_batch_size <n> - minibatch size
.  -nn_precision <double,single> - precision of the activations and their gradients (`NNSetPrecision()`)
.  -nn_device <cpu,cuda> - where the activations live and the passes run (`NNSetDevice()`)
.  -nn_seed <s> - random seed
-  -nn_onnx <file> - an ONNX model's layers and parameters (`NNLoadONNX()`)

   Notes:
   The options of the network's trainer (-nn_epochs, -nn_monitor, -nn_checkpoint, ...:
   NNTrainerSetFromOptions()) are read too, when it exists, and when it is created later.

   Level: beginner

.seealso: `NNCreate()`, `NNAddLayer()`, `NNLayerSetFromOptions()`, `NNOptSetFromOptions()`, `NNTrainerSetFromOptions()`
@*/
PetscErrorCode NNSetFromOptions(NN net)
{
  char      *names[256], loss[32];
  PetscInt   nnames = 256, shape[NN_MAX_DIM], nshape = NN_MAX_DIM;
  PetscBool  flg;
  PetscInt   seed = (PetscInt)net->init.seed;
  NNPrecision prec;
  char        nntype[32] = "";
  PetscBool   badtype = PETSC_FALSE;
  char        onnx[PETSC_MAX_PATH_LEN] = "";
  PetscBool   onnxflg = PETSC_FALSE;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)net);
  PetscCall(NNSetFromOptions_Parallel(net, PetscOptionsObject)); /* the process grid first: layers live on its spatial groups */
  {
    PetscBool seq, graph;
    PetscCall(PetscOptionsString("-nn_type", "How the layers connect: sequential (a chain) or graph (-<layer>_inputs)", "NNSetType", ((PetscObject)net)->type_name, nntype, sizeof(nntype), &flg));
    PetscCall(PetscStrcmp(nntype, NNTYPESEQUENTIAL, &seq));
    PetscCall(PetscStrcmp(nntype, NNTYPEGRAPH, &graph));
    if (flg && (seq || graph)) PetscCall(NNSetType(net, nntype));
    else if (flg) badtype = PETSC_TRUE; /* refused after PetscOptionsEnd(): an error inside the block leaks its strings */
  }
  PetscCall(PetscOptionsString("-nn_onnx", "An ONNX model file: its layers and parameters (read once)", "NNLoadONNX", onnx, onnx, sizeof(onnx), &onnxflg));
  PetscCall(PetscOptionsStringArray("-nn_layers", "Comma-separated layer names, each configured by -<name>_type ...", "NNAddLayer", names, &nnames, &flg));
  if (flg) {
    /* layers already present under the same names (a second NNSetFromOptions()) are kept */
    PetscErrorCode ierr = 0; /* after an error the remaining names are still freed */
    for (PetscInt i = 0; i < nnames; i++) {
      if (!ierr) ierr = NNSetFromOptions_Layer(net, i, names[i]);
      PetscCall(PetscFree(names[i]));
    }
    PetscCall(ierr);
  }
  PetscCall(PetscOptionsIntArray("-nn_input_shape", "Shape of one input sample, e.g. 784 or 1,28,28", "NNSetInputShape", shape, &nshape, &flg));
  if (flg) PetscCall(NNSetInputShape(net, nshape, shape));
  PetscCall(PetscOptionsFList("-nn_loss", "Loss", "NNSetLoss", NNLossList, net->loss, loss, sizeof(loss), &flg));
  if (flg) PetscCall(NNSetLoss(net, loss));
  else PetscCall(NNLossSetUpOps(net->loss, &net->lossops));
  if (net->lossops.setfromoptions) PetscCall((*net->lossops.setfromoptions)(&net->lossops, PetscOptionsObject)); /* e.g. -nn_loss_huber_delta */
  PetscCall(PetscOptionsInt("-nn_batch_size", "Minibatch size", "NNSetBatchSize", net->nbatch, &net->nbatch, NULL));
  PetscCheck(net->nbatch > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_batch_size %" PetscInt_FMT " must be positive", net->nbatch);
  PetscCall(PetscOptionsInt("-nn_seed", "Random seed", "NNSetSeed", seed, &seed, &flg));
  if (flg) PetscCall(NNSetSeed(net, seed));
  PetscCall(PetscOptionsEnum("-nn_precision", "Precision of the activations and their gradients (parameters stay double)", "NNSetPrecision", NNPrecisions, (PetscEnum)net->prec.type, (PetscEnum *)&prec, &flg));
  if (flg) PetscCall(NNSetPrecision(net, prec));
  PetscCall(NNSetFromOptions_Device(net, PetscOptionsObject)); /* -nn_device, -nn_cuda_tf32 (src/nn/interface/nndevice.c) */
  PetscCall(PetscOptionsBool("-nn_pool_before_activation", "Run max pooling before the ReLU in front of it (same result, fewer entries)", "NNSetPoolBeforeActivation", net->reorder.poolfirst, &net->reorder.poolfirst, NULL));
  {
    PetscBool on = net->repart.on;
    PetscCall(PetscOptionsBool("-nn_auto_repartition", "Insert a spatial_flatten (<layer>_repartition) where a layer cannot take the spatial (DMDA) activation before it", "NNSetAutoRepartition", on, &on, &flg));
    if (flg) PetscCall(NNSetAutoRepartition(net, on));
  }
  { /* listed for -help here; NNSpectralViewFromOptions() reads them after training */
    PetscBool on = PETSC_FALSE;
    PetscCall(PetscOptionsBool("-nn_spectral_view", "After training: spectral norm of every layer and the Lipschitz bound " NN_SLEPC_NOTE, "NNOperatorNormView", on, &on, NULL));
    PetscCall(PetscOptionsBool("-nn_hessian_view", "After training: top eigenvalues of the loss Hessian " NN_SLEPC_NOTE, "NNComputeHessianEigenvalues", on, &on, NULL));
  }
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)net, PetscOptionsObject)); /* the trainer's options (NNGetTrainer()) */
  PetscOptionsEnd();
  if (badtype) PetscCall(NNSetType(net, nntype)); /* its error names the valid types */
  if (onnxflg) {
    PetscBool same = PETSC_FALSE;
    if (net->imported.file) PetscCall(PetscStrcmp(net->imported.file, onnx, &same));
    if (!same) PetscCall(NNLoadONNX(net, onnx)); /* its layers then read their own options below */
  }
  net->setfromoptionscalled = PETSC_TRUE;
  for (PetscInt i = 0; i < net->added.n; i++) PetscCall(NNLayerSetFromOptions(net->added.layers[i])); /* inserted repartitions have no options */
  if (NNTrainerConstructor) PetscCall((*NNTrainerConstructor)(net)); /* the trainer and its optimizer read -nn_epochs, -opt_type, ... (NNGetTrainer()) */
  net->setupcalled = PETSC_FALSE;
  net->init.reinit      = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNGetParameters - gets the network's parameter Vec (all layers' parameters in one contiguous Vec)

   Not Collective

   Notes:
   With layers partitioned over the ranks (`NNLayerSetPartition()`) the Vec holds this rank's pieces
   of their weights besides the whole tensors of the other layers; `NNGetNumParameters()` counts the
   whole network.

   Level: beginner

.seealso: `NNGetGradient()`
@*/
PetscErrorCode NNGetParameters(NN net, Vec *theta)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  *theta = net->theta;
  PetscFunctionReturn(0);
}

/*@
   NNGetGradient - gets the Vec holding the gradient of the loss with respect to the parameters

   Notes:
   It holds the gradient of the last `NNLossGradient()`. After data-parallel training with the
   shared-memory all-reduce and shared parameters (the default on one node) it is zero: the
   reduction consumes the groups' gradients chunk by chunk and zeroes them for the next step.

   Level: beginner
@*/
PetscErrorCode NNGetGradient(NN net, Vec *g)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  *g = net->dtheta;
  PetscFunctionReturn(0);
}

/*@
   NNGetNumParameters - number of trainable parameters of the whole network

   Notes:
   Layers partitioned over the ranks (`NNLayerSetPartition()`) count with all their pieces; the
   parameter Vec of a rank (`NNGetParameters()`) holds fewer entries.

   Level: beginner
@*/
PetscErrorCode NNGetNumParameters(NN net, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(NNSetUp(net));
  *n = net->part.np;
  PetscFunctionReturn(0);
}

/*@
   NNSetTraining - training mode (dropout active, batch-norm batch statistics) or evaluation mode

   Level: beginner
@*/
PetscErrorCode NNSetTraining(NN net, PetscBool training)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  net->training = training;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerSetTraining(net->layers[i], training));
  PetscFunctionReturn(0);
}

/*@
   NNCreateBatchVecs - creates Vecs for one input batch and one target batch (batch-size capacity)

   Output Parameters:
+  x - input batch, batch_size * size(input shape)
-  t - target batch, batch_size * (1 for cross_entropy labels, size(output) for mse)

   Level: intermediate
@*/
PetscErrorCode NNCreateBatchVecs(NN net, Vec *x, Vec *t)
{
  NNShape out;

  PetscFunctionBegin;
  PetscCall(NNSetUp(net));
  PetscCall(NNGetOutputShape(net, &out));
  if (x) PetscCall(VecCreateSeq(PETSC_COMM_SELF, net->nbatch * NNShapeSize(&net->inshape), x)); /* full samples, as NNData fills them */
  if (t) PetscCall(VecCreateSeq(PETSC_COMM_SELF, net->nbatch * (net->lossops.classification ? 1 : NNShapeSize(&out)), t));
  PetscFunctionReturn(0);
}

/*@C
   NNView - prints the architecture, shapes, parameter counts, memory and optimizer, and the trainer and reducer

   Collective

   Options Database Key:
.  -nn_view - view after set up (the driver honors it)

   Notes:
   The trainer (NNTrainerView()) and, with data groups, the gradient reducer (NNReducerView())
   are shown once they exist: after NNGetTrainer(), NNCheckpointLoad() or NNTrain().

   Level: beginner

.seealso: `NNTrainerView()`, `NNReducerView()`
@*/
PetscErrorCode NNView(NN net, PetscViewer viewer)
{
  PetscBool iascii;
  PetscInt  np = 0, nb = 0, nact = 0, ninserted = 0;
  char      in[64];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)net), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)net, viewer));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(NNShapeToString(&net->inshape, sizeof(in), in));
  for (PetscInt i = 0; i < net->nlayers; i++) ninserted += NNIsRepartition(net, net->layers[i]) ? 1 : 0;
  if (ninserted) PetscCall(PetscViewerASCIIPrintf(viewer, "input %s, batch size %" PetscInt_FMT ", loss %s, %" PetscInt_FMT " layers, %" PetscInt_FMT " of them inserted by NNSetUp() (-%snn_auto_repartition)\n", in, net->nbatch, net->loss, net->nlayers, ninserted, ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : ""));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "input %s, batch size %" PetscInt_FMT ", loss %s, %" PetscInt_FMT " layers\n", in, net->nbatch, net->loss, net->nlayers));
  if (net->lossops.view) PetscCall((*net->lossops.view)(&net->lossops, viewer)); /* the loss's parameters */
  if (net->spatial.indm) {
    PetscInt m, nn, p;
    PetscCall(DMDAGetInfo(net->spatial.indm, NULL, NULL, NULL, NULL, &m, &nn, &p, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(PetscViewerASCIIPrintf(viewer, "input on a DMDA, rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT "\n", m, nn, p));
  }
  if (net->setupcalled) {
    PetscCall(VecGetSize(net->theta, &np));
    PetscCall(VecGetSize(net->buf, &nb));
    for (PetscInt i = 0; i < net->nact; i++) {
      PetscInt m;
      PetscCall(VecGetSize(net->act[i], &m));
      nact += 2 * m;
    }
  }
  PetscCall(NNParallelView(net, viewer));
  if (net->dev.type != NN_DEVICE_CPU) PetscCall(NNDeviceView(net, viewer)); /* the device and the precision */
  else if (net->prec.type != NN_PRECISION_DOUBLE) PetscCall(NNPrecisionView(net, viewer)); /* double, the default, goes unsaid */
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscCall(NNLayerView(net->layers[i], viewer));
    PetscCall(NNRepartitionView(net, net->layers[i], viewer)); /* says why NNSetUp() inserted it */
  }
  PetscCall(NNViewReordering(net, viewer));
  PetscCall(NNGraphView(net, viewer));
  if (net->setupcalled) {
    if (net->part.on) { /* model parallelism: the whole network and the largest piece a rank holds */
      PetscInt npmax = np;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &npmax, 1, MPIU_INT, MPI_MAX, NNGetLayerComm(net)));
      PetscCall(PetscViewerASCIIPrintf(viewer, "parameters: %" PetscInt_FMT ", partitioned: at most %" PetscInt_FMT " on a rank (%.3g MB, gradient the same), buffers: %" PetscInt_FMT "\n", net->part.np, npmax, npmax * sizeof(PetscScalar) / 1e6, net->part.nb));
    } else PetscCall(PetscViewerASCIIPrintf(viewer, "parameters: %" PetscInt_FMT " (%.3g MB, gradient the same), buffers: %" PetscInt_FMT "\n", np, np * sizeof(PetscScalar) / 1e6, nb));
    if (net->prec.type == NN_PRECISION_SINGLE) PetscCall(PetscViewerASCIIPrintf(viewer, "activations and their gradients: %.3g MB, their float copies %.3g MB\n", nact * sizeof(PetscScalar) / 1e6, nact * sizeof(float) / 1e6));
    else PetscCall(PetscViewerASCIIPrintf(viewer, "activations and their gradients: %.3g MB\n", nact * sizeof(PetscScalar) / 1e6));
  }
  if (net->trainer) PetscCall(PetscObjectView((PetscObject)net->trainer, viewer)); /* NNTrainerView(): the optimizer, schedule, checkpoints */
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@
   NNDestroy - destroys a network, its layers and its trainer (with the optimizer)

   Collective

   Level: beginner
@*/
PetscErrorCode NNDestroy(NN *net)
{
  PetscFunctionBegin;
  if (!*net) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*net, NN_CLASSID, 1);
  if (--((PetscObject)(*net))->refct > 0) {
    *net = NULL;
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < (*net)->added.n; i++) PetscCall(NNLayerDestroy(&(*net)->added.layers[i]));
  PetscCall(PetscFree2((*net)->layers, (*net)->added.layers));
  PetscCall(NNRepartitionDestroy(*net));
  PetscCall(NNDestroyActivationVecs(*net));
  PetscCall(NNGraphReset(*net));
  PetscCall(VecDestroy(&(*net)->theta));
  PetscCall(VecDestroy(&(*net)->dtheta));
  PetscCall(VecDestroy(&(*net)->buf));
  PetscCall(VecDestroy(&(*net)->spatial.tspatial));
  PetscCall(DMDestroy(&(*net)->spatial.indm));
  PetscCall(PetscObjectDestroy((PetscObject *)&(*net)->trainer));
  PetscCall(NNParallelDestroy(&(*net)->par));
  PetscCall(NNImportedReset(*net));
  PetscCall(PetscHeaderDestroy(net));
  PetscFunctionReturn(0);
}
