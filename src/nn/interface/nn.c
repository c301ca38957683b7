/* The NN object: layers, parameters, forward/backward through the whole network. */
#include <petnn/private/nnimpl.h>
#include <ctype.h>

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
  PetscValidPointer(net, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(nn, NN_CLASSID, "NN", "Neural network", "NN", comm, NNDestroy, NNView));
  nn->nbatch           = 128;
  nn->epochs           = 10;
  nn->seed             = 0;
  nn->training         = PETSC_TRUE;
  nn->shuffle          = PETSC_TRUE;
  nn->checkpoint_every = 1;
  nn->gradcheck_tol    = 1e-6;
  nn->reinit           = PETSC_TRUE;
  nn->poolfirst        = PETSC_TRUE;
  PetscCall(PetscStrncpy(nn->loss, NNLOSSCROSSENTROPY, sizeof(nn->loss)));
  NNRandomSeed(&nn->rng, (uint64_t)nn->seed);
  PetscCall(PetscObjectChangeTypeName((PetscObject)nn, "sequential"));
  PetscCall(NNOptCreate(comm, &nn->opt));
  *net = nn;
  PetscFunctionReturn(0);
}

/*@C
   NNSetOptionsPrefix - sets the prefix of all the network's options (layers and optimizer inherit it)

   Level: intermediate
@*/
PetscErrorCode NNSetOptionsPrefix(NN net, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)net, prefix));
  PetscCall(NNOptSetOptionsPrefix(net->opt, prefix));
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
  net->reinit      = PETSC_TRUE;
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

/* creates a layer named name with options prefix "<base><name>_"; shared with container layers */
PETSC_INTERN PetscErrorCode NNLayerCreateNamed(MPI_Comm comm, const char base[], NNLayerType type, const char name[], NNLayer *layer)
{
  char      prefix[256];
  PetscBool valid = PETSC_TRUE;
  size_t    len;

  PetscFunctionBegin;
  PetscCall(PetscStrlen(name, &len));
  for (size_t i = 0; i < len; i++) valid = (PetscBool)(valid && (isalnum((unsigned char)name[i]) || name[i] == '_'));
  PetscCheck(len > 0 && valid, comm, PETSC_ERR_ARG_WRONG, "Layer name \"%s\" is invalid: use letters, digits and underscores", name);
  if (!type && (!base || !base[0])) { /* configured from options without a prefix: PETSc objects read -<name>_type too (-sf_type, -ksp_type, ...) */
    static const char *reserved[] = {"sf", "ksp", "pc", "snes", "ts", "tao", "mat", "vec", "dm", "da", "is", "sub", "log", "malloc", "options", "info", "viewer", "draw", "random", "ao", "pf", "characteristic", "tssolve", "nn", "opt"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
      PetscBool clash;
      PetscCall(PetscStrcmp(name, reserved[i], &clash));
      PetscCheck(!clash, comm, PETSC_ERR_ARG_WRONG, "Layer name \"%s\" clashes with PETSc's own -%s_ options; choose another name (e.g. \"%s1\")", name, name, name);
    }
  }
  PetscCall(NNLayerCreate(comm, layer));
  PetscCall(PetscObjectSetName((PetscObject)*layer, name));
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s%s_", base ? base : "", name));
  PetscCall(NNLayerSetOptionsPrefix(*layer, prefix));
  if (type) PetscCall(NNLayerSetType(*layer, type));
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
  if (net->nlayers == net->maxlayers) {
    NNLayer *more, *moregiven;
    net->maxlayers = PetscMax(8, 2 * net->maxlayers);
    PetscCall(PetscMalloc2(net->maxlayers, &more, net->maxlayers, &moregiven));
    if (net->nlayers) PetscCall(PetscArraycpy(more, net->layers, net->nlayers));
    if (net->nlayers) PetscCall(PetscArraycpy(moregiven, net->given, net->nlayers));
    PetscCall(PetscFree2(net->layers, net->given));
    net->layers = more;
    net->given  = moregiven;
  }
  PetscCall(NNLayerCreateNamed(NNGetLayerComm(net), ((PetscObject)net)->prefix, type, name, &l)); /* the rank's spatial group */
  l->rng                       = &net->rng;
  net->given[net->nlayers]    = l;
  net->layers[net->nlayers++] = l;
  net->setupcalled            = PETSC_FALSE;
  net->reinit                 = PETSC_TRUE;
  if (layer) *layer = l;
  PetscFunctionReturn(0);
}

/*@C
   NNSetLoss - sets the loss (cross_entropy or mse)

   Options Database Key:
.  -nn_loss <cross_entropy,mse> - the loss

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
   NNSetEpochs - sets the number of training epochs

   Options Database Key:
.  -nn_epochs <n> - epochs (default 10)

   Level: beginner
@*/
PetscErrorCode NNSetEpochs(NN net, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Number of epochs %" PetscInt_FMT " must be non-negative (-nn_epochs)", n);
  net->epochs = n;
  PetscFunctionReturn(0);
}

/*@
   NNGetEpochs - gets the number of training epochs

   Not Collective

   Level: beginner

.seealso: `NNSetEpochs()`
@*/
PetscErrorCode NNGetEpochs(NN net, PetscInt *n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *n = net->epochs;
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
  net->seed = seed;
  NNRandomSeed(&net->rng, (uint64_t)seed);
  net->setupcalled = PETSC_FALSE;
  net->reinit      = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNGetOpt - gets the network's optimizer

   Level: beginner
@*/
PetscErrorCode NNGetOpt(NN net, NNOpt *opt)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *opt = net->opt;
  PetscFunctionReturn(0);
}

/* the i-th name of -nn_layers: a new layer, or the one already at position i under that name */
static PetscErrorCode NNSetFromOptions_Layer(NN net, PetscInt i, const char name[])
{
  PetscBool same = PETSC_FALSE;

  PetscFunctionBegin;
  if (i < net->nlayers) PetscCall(PetscStrcmp(((PetscObject)net->given[i])->name, name, &same));
  PetscCheck(same || i >= net->nlayers, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "-nn_layers names %s at position %" PetscInt_FMT " but the network already has layer %s there", name, i, ((PetscObject)net->given[i])->name);
  if (!same) PetscCall(NNAddLayer(net, NULL, name, NULL));
  PetscFunctionReturn(0);
}

/*@
   NNSetFromOptions - builds and configures the network from the options database

   Collective

   Options Database Keys:
+  -nn_layers <a,b,c> - names of the layers in order; each is configured by -<name>_type and -<name>_<option>
.  -nn_input_shape <d0,d1,..> - shape of one input sample
.  -nn_loss <cross_entropy,mse> - loss
.  -nn_batch_size <n> - minibatch size
.  -nn_epochs <n> - training epochs
.  -nn_seed <s> - random seed
.  -nn_monitor - print loss, accuracy, time and throughput every epoch
.  -nn_shuffle <bool> - shuffle the training samples every epoch
.  -nn_checkpoint <file.h5> - save a checkpoint (atomically) after every -nn_checkpoint_every epochs
.  -nn_checkpoint_every <k> - checkpoint interval in epochs
.  -nn_gradient_check - check the gradient of the first training batch against finite differences
-  -nn_gradient_check_tol <tol> - relative tolerance of that check

   Level: beginner

.seealso: `NNCreate()`, `NNAddLayer()`, `NNLayerSetFromOptions()`, `NNOptSetFromOptions()`
@*/
PetscErrorCode NNSetFromOptions(NN net)
{
  char      *names[256], loss[32];
  PetscInt   nnames = 256, shape[NN_MAX_DIM], nshape = NN_MAX_DIM;
  PetscBool  flg;
  PetscInt   seed = (PetscInt)net->seed;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)net);
  PetscCall(NNSetFromOptions_Parallel(net, PetscOptionsObject)); /* the process grid first: layers live on its spatial groups */
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
  PetscCall(PetscOptionsString("-nn_loss", "Loss: cross_entropy or mse", "NNSetLoss", net->loss, loss, sizeof(loss), &flg));
  if (flg) PetscCall(NNSetLoss(net, loss));
  PetscCall(PetscOptionsInt("-nn_batch_size", "Minibatch size", "NNSetBatchSize", net->nbatch, &net->nbatch, NULL));
  PetscCheck(net->nbatch > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_batch_size %" PetscInt_FMT " must be positive", net->nbatch);
  PetscCall(PetscOptionsInt("-nn_epochs", "Training epochs", "NNSetEpochs", net->epochs, &net->epochs, NULL));
  PetscCheck(net->epochs >= 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_epochs %" PetscInt_FMT " must be non-negative", net->epochs);
  PetscCall(PetscOptionsInt("-nn_seed", "Random seed", "NNSetSeed", seed, &seed, &flg));
  if (flg) PetscCall(NNSetSeed(net, seed));
  PetscCall(PetscOptionsBool("-nn_pool_before_activation", "Run max pooling before the ReLU in front of it (same result, fewer entries)", "NNSetPoolBeforeActivation", net->poolfirst, &net->poolfirst, NULL));
  PetscCall(PetscOptionsBool("-nn_monitor", "Print loss, accuracy, time and throughput every epoch", "NNTrain", net->monitor, &net->monitor, NULL));
  PetscCall(PetscOptionsBool("-nn_shuffle", "Shuffle the training samples every epoch", "NNTrain", net->shuffle, &net->shuffle, NULL));
  PetscCall(PetscOptionsString("-nn_checkpoint", "Checkpoint file (HDF5) written during training", "NNCheckpointSave", net->checkpoint, net->checkpoint, sizeof(net->checkpoint), NULL));
  PetscCall(PetscOptionsInt("-nn_checkpoint_every", "Checkpoint interval in epochs", "NNTrain", net->checkpoint_every, &net->checkpoint_every, NULL));
  PetscCheck(net->checkpoint_every > 0, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_checkpoint_every %" PetscInt_FMT " must be positive", net->checkpoint_every);
  PetscCall(PetscOptionsBool("-nn_gradient_check", "Check the first batch's gradient against finite differences", "NNGradientCheck", net->gradcheck, &net->gradcheck, NULL));
  PetscCall(PetscOptionsReal("-nn_gradient_check_tol", "Relative tolerance of the gradient check", "NNGradientCheck", net->gradcheck_tol, &net->gradcheck_tol, NULL));
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)net, PetscOptionsObject));
  PetscOptionsEnd();
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerSetFromOptions(net->layers[i]));
  PetscCall(NNOptSetFromOptions(net->opt));
  net->setupcalled = PETSC_FALSE;
  net->reinit      = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* assigns each layer's slice, parent before children; children of a layer with ncopies > 1 get copy 0,
   and the further copies follow it (l->pcopy, l->bcopy apart) */
static PetscErrorCode NNLayout(NN net, NNLayer l, PetscInt *poff, PetscInt *boff)
{
  PetscInt p0, b0;

  PetscFunctionBegin;
  l->rng  = &net->rng;
  l->poff = *poff;
  l->boff = *boff;
  *poff += l->nparam;
  *boff += l->nbuf;
  p0 = *poff;
  b0 = *boff;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayout(net, l->children[c], poff, boff));
  l->pcopy = *poff - p0;
  l->bcopy = *boff - b0;
  *poff += (PetscMax(l->ncopies, 1) - 1) * l->pcopy;
  *boff += (PetscMax(l->ncopies, 1) - 1) * l->bcopy;
  PetscFunctionReturn(0);
}

/* moves the pointers of a layer and its descendants by dp parameters and db buffer entries */
static void NNLayerShiftPointers(NNLayer l, PetscInt dp, PetscInt db)
{
  if (l->theta) l->theta += dp;
  if (l->dtheta) l->dtheta += dp;
  if (l->buf) l->buf += db;
  for (PetscInt c = 0; c < l->nchildren; c++) NNLayerShiftPointers(l->children[c], dp, db);
}

static PetscErrorCode NNLayerSetPointers(NNLayer l, const PetscScalar *theta, PetscScalar *dtheta, PetscScalar *buf)
{
  PetscFunctionBegin;
  l->theta  = theta ? theta + l->poff : NULL;
  l->dtheta = dtheta ? dtheta + l->poff : NULL;
  l->buf    = buf ? buf + l->boff : NULL;
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetPointers(l->children[c], theta, dtheta, buf));
  PetscFunctionReturn(0);
}

/* Points every layer (children included) at its slices of the given arrays; NULL clears. */
PetscErrorCode NNSetLayerPointers(NN net, const PetscScalar *theta, PetscScalar *dtheta, PetscScalar *buf)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerSetPointers(net->layers[i], theta, dtheta, buf));
  PetscFunctionReturn(0);
}

/* layer names must be unique over the whole tree: they name checkpoint tensors and options */
static PetscErrorCode NNCheckUniqueNames(NN net, NNLayer l)
{
  NNLayer first = NULL;

  PetscFunctionBegin;
  PetscCall(NNGetLayer(net, ((PetscObject)l)->name, &first));
  PetscCheck(first == l, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "Two layers are named %s; layer names must be unique (they name options and checkpoint tensors)", ((PetscObject)l)->name);
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNCheckUniqueNames(net, l->children[c]));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerInitializeAll(NNLayer l)
{
  PetscInt copies = PetscMax(l->ncopies, 1);

  PetscFunctionBegin;
  PetscTryTypeMethod(l, initialize);
  for (PetscInt k = 0; k < copies; k++) { /* each copy of the children is initialized on its own, as a torch ModuleList */
    for (PetscInt c = 0; c < l->nchildren; c++) {
      if (k) NNLayerShiftPointers(l->children[c], l->pcopy, l->bcopy);
      PetscCall(NNLayerInitializeAll(l->children[c]));
    }
  }
  for (PetscInt c = 0; c < l->nchildren; c++) NNLayerShiftPointers(l->children[c], -(copies - 1) * l->pcopy, -(copies - 1) * l->bcopy);
  PetscFunctionReturn(0);
}

/* pshift, bshift: where this copy of the layer's tensors lies relative to the layer's slice (copies of children) */
static PetscErrorCode NNVisitLayerTensors(NN net, NNLayer l, const char base[], PetscInt pshift, PetscInt bshift, NNTensorVisitor visit, void *ctx)
{
  char     path[PETSC_MAX_PATH_LEN];
  PetscInt copies = PetscMax(l->ncopies, 1);

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s%s", base, ((PetscObject)l)->name));
  for (PetscInt t = 0; t < l->ntensors; t++) {
    char     full[PETSC_MAX_PATH_LEN];
    NNTensor shifted = l->tensors[t];
    PetscCall(PetscSNPrintf(full, sizeof(full), "%s.%s", path, l->tensors[t].name));
    shifted.offset += shifted.kind == NN_TENSOR_PARAM ? pshift : bshift;
    PetscCall((*visit)(net, l, full, (pshift || bshift) ? &shifted : &l->tensors[t], ctx));
  }
  for (PetscInt k = 0; k < copies; k++) {
    char sub[PETSC_MAX_PATH_LEN];
    if (l->ncopies > 1) PetscCall(PetscSNPrintf(sub, sizeof(sub), "%s.%" PetscInt_FMT ".", path, k));
    else PetscCall(PetscSNPrintf(sub, sizeof(sub), "%s.", path));
    for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNVisitLayerTensors(net, l->children[c], sub, pshift + k * l->pcopy, bshift + k * l->bcopy, visit, ctx));
  }
  PetscFunctionReturn(0);
}

/* Calls visit(net, layer, "fc1.weight", tensor, ctx) for every tensor in state_dict order. */
PetscErrorCode NNVisitTensors(NN net, NNTensorVisitor visit, void *ctx)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNVisitLayerTensors(net, net->layers[i], "", 0, 0, visit, ctx));
  PetscFunctionReturn(0);
}

/*@
   NNSetUp - sets up the layers, checks their shapes, lays out and initializes the parameters

   Collective

   Parameters are initialized from the network's seed as PyTorch would initialize the same
   layers (in distribution, not bitwise). After a change of layers, input shape, seed or options
   it initializes again (discarding trained or loaded parameters); after a change of the batch
   size alone it keeps parameters, optimizer state and counters.

   Level: beginner

.seealso: `NNSetFromOptions()`, `NNView()`
@*/
PetscErrorCode NNSetUp(NN net)
{
  NNShape      s;
  PetscInt     np = 0, nb = 0;
  PetscScalar *theta, *buf;
  MPI_Comm     comm;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (net->setupcalled) PetscFunctionReturn(0);
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  PetscCheck(net->nlayers > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "The network has no layers: give -%snn_layers name1,name2,... or call NNAddLayer()", ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "");
  PetscCheck(net->inshape.ndim > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "The network has no input shape: give -%snn_input_shape or call NNSetInputShape() (a training data set sets it too)", ((PetscObject)net)->prefix ? ((PetscObject)net)->prefix : "");
  PetscCall(NNLossGetOps(net->loss, &net->lossops));
  PetscCall(NNReorderLayers(net));
  s = net->inshape;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    NNLayer l = net->layers[i];
    PetscCall(NNLayerSetBatchCapacity(l, net->nbatch));
    PetscCall(NNLayerSetInputShape(l, &s));
    l->inputname = i ? ((PetscObject)net->layers[i - 1])->name : "the network input";
    PetscCall(NNLayerSetTraining(l, net->training));
    PetscCall(NNLayerSetUp(l));
    s = l->outshape;
  }
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNCheckUniqueNames(net, net->layers[i]));
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayout(net, net->layers[i], &np, &nb));

  if (!net->reinit && net->theta) { /* only the batch size changed: keep parameters, optimizer state and counters */
    PetscInt np0, nb0;
    PetscCall(VecGetSize(net->theta, &np0));
    PetscCall(VecGetSize(net->buf, &nb0));
    PetscCheck(np0 == np && nb0 == nb, comm, PETSC_ERR_PLIB, "Parameter layout changed without re-initialization");
  } else {
    PetscCall(VecDestroy(&net->theta));
    PetscCall(VecDestroy(&net->dtheta));
    PetscCall(VecDestroy(&net->buf));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, np, &net->theta));
    PetscCall(PetscObjectSetName((PetscObject)net->theta, "parameters"));
    PetscCall(VecDuplicate(net->theta, &net->dtheta));
    PetscCall(PetscObjectSetName((PetscObject)net->dtheta, "gradient"));
    net->dthetazero = PETSC_FALSE;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, nb, &net->buf));
    PetscCall(PetscObjectSetName((PetscObject)net->buf, "buffers"));

    /* initialize from a generator seeded by -nn_seed, so the initial network does not depend on call history */
    NNRandomSeed(&net->rng, (uint64_t)net->seed);
    PetscCall(VecGetArray(net->theta, &theta));
    PetscCall(VecGetArray(net->buf, &buf));
    PetscCall(NNSetLayerPointers(net, theta, NULL, buf));
    for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerInitializeAll(net->layers[i]));
    PetscCall(NNSetLayerPointers(net, NULL, NULL, NULL));
    PetscCall(VecRestoreArray(net->buf, &buf));
    PetscCall(VecRestoreArray(net->theta, &theta));
  }

  /* activations: act[i] is the input of layer i; act[0] is only a staging area for NNPredict() */
  if (net->act) PetscCall(VecDestroyVecs(net->nact, &net->act));
  if (net->dact) PetscCall(VecDestroyVecs(net->nact, &net->dact));
  net->nact = net->nlayers + 1;
  PetscCall(PetscCalloc1(net->nlayers + 1, &net->act)); /* zeroed: NNDestroy() after a failed set-up frees only what exists */
  PetscCall(PetscCalloc1(net->nlayers + 1, &net->dact));
  PetscCall(VecDestroy(&net->tspatial));
  PetscCall(NNCreateInputVec(net, &net->act[0]));
  PetscCall(VecDuplicate(net->act[0], &net->dact[0]));
  for (PetscInt i = 1; i <= net->nlayers; i++) { /* each layer decides the layout of its output (sequential, DMDA) */
    DM dmin = NULL;
    PetscCall(VecGetDM(net->act[i - 1], &dmin)); /* spatial layers build their DMs to match their input's */
    PetscCall(NNLayerSetInputDM(net->layers[i - 1], dmin));
    PetscCall(NNLayerCreateOutputVec(net->layers[i - 1], &net->act[i]));
    PetscCall(VecDuplicate(net->act[i], &net->dact[i]));
  }
  if (net->reinit) {
    PetscCall(NNOptSetUp(net->opt, net->theta));
    net->epoch         = 0;
    net->step          = 0;
    net->batch         = 0;
    net->epoch_loss    = 0;
    net->epoch_correct = 0;
  }
  net->reinit      = PETSC_FALSE;
  net->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNGetParameters - gets the network's parameter Vec (all layers' parameters in one contiguous Vec)

   Not Collective

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
   NNGetNumParameters - number of trainable parameters

   Level: beginner
@*/
PetscErrorCode NNGetNumParameters(NN net, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(NNSetUp(net));
  PetscCall(VecGetSize(net->theta, n));
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

static PetscErrorCode NNCheckBatch(NN net, PetscInt n, Vec x)
{
  PetscInt len;

  PetscFunctionBegin;
  PetscCheck(n > 0 && n <= net->nbatch, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Batch of %" PetscInt_FMT " samples: valid sizes are 1 to the batch size %" PetscInt_FMT, n, net->nbatch);
  if (net->indm) PetscFunctionReturn(0); /* NNStageInput() checks spatial inputs */
  PetscCall(VecGetLocalSize(x, &len));
  PetscCheck(len >= n * NNShapeSize(&net->inshape), PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Input Vec has %" PetscInt_FMT " entries but %" PetscInt_FMT " samples of size %" PetscInt_FMT " need %" PetscInt_FMT, len, n, NNShapeSize(&net->inshape), n * NNShapeSize(&net->inshape));
  PetscFunctionReturn(0);
}

/* forward through all layers with the parameter arrays already distributed */
static PetscErrorCode NNForwardLayers(NN net, PetscInt n, Vec x)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < net->nlayers; i++) {
    if (net->hook) PetscCall((*net->hook)(net, NN_HOOK_FORWARD_BEGIN, i));
    PetscCall(NNLayerForward(net->layers[i], n, i ? net->act[i] : x, net->act[i + 1]));
    if (net->hook) PetscCall((*net->hook)(net, NN_HOOK_FORWARD_END, i));
  }
  PetscFunctionReturn(0);
}

/*@
   NNForward - runs the network on the first n samples of x

   Collective

   Input Parameters:
+  net - the network
.  n - number of samples, at most the batch size
-  x - input batch

   Output Parameter:
.  y - the output batch (owned by the network, valid until the next forward pass)

   Level: beginner

.seealso: `NNPredict()`, `NNLossGradient()`
@*/
PetscErrorCode NNForward(NN net, PetscInt n, Vec x, Vec *y)
{
  const PetscScalar *theta;
  PetscScalar       *buf;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  PetscCall(NNCheckBatch(net, n, x));
  PetscCall(PetscLogEventBegin(NN_Forward, net, 0, 0, 0));
  PetscCall(VecGetArrayRead(net->theta, &theta));
  PetscCall(VecGetArray(net->buf, &buf));
  PetscCall(NNSetLayerPointers(net, theta, NULL, buf));
  PetscCall(NNStageInput(net, n, x, &x));
  PetscCall(NNForwardLayers(net, n, x));
  PetscCall(NNSetLayerPointers(net, NULL, NULL, NULL));
  PetscCall(VecRestoreArray(net->buf, &buf));
  PetscCall(VecRestoreArrayRead(net->theta, &theta));
  PetscCall(PetscLogEventEnd(NN_Forward, net, 0, 0, 0));
  if (y) *y = net->act[net->nlayers];
  PetscFunctionReturn(0);
}

/*@
   NNLossGradient - forward pass, loss, and backward pass on one batch

   Collective

   Input Parameters:
+  net - the network
.  n - number of samples, at most the batch size
.  x - input batch
-  t - targets (class indices for cross_entropy, outputs for mse)

   Output Parameters:
+  loss - mean loss over the batch (may be NULL)
-  dx - gradient of the loss with respect to x (may be NULL)

   Notes:
   The network's gradient Vec (NNGetGradient()) is overwritten with the gradient of the loss.

   Level: beginner

.seealso: `NNForward()`, `NNGetGradient()`, `NNGradientCheck()`
@*/
PetscErrorCode NNLossGradient(NN net, PetscInt n, Vec x, Vec t, PetscReal *loss, Vec dx)
{
  const PetscScalar *theta;
  PetscScalar       *dtheta, *buf;
  PetscReal          L;
  NNShape            out;
  PetscInt           L_ = 0;
  Vec                x0, dx0;
  PetscBool          needdx, *need;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  PetscCall(NNCheckBatch(net, n, x));
  L_ = net->nlayers;
  PetscCall(NNGetOutputShape(net, &out));
  PetscCall(VecGetArrayRead(net->theta, &theta));
  PetscCall(VecGetArray(net->buf, &buf));
  if (!net->dthetazero) PetscCall(VecZeroEntries(net->dtheta)); /* shared-memory data parallelism zeroes it in the reduction */
  net->dthetazero = PETSC_FALSE;
  PetscCall(VecGetArray(net->dtheta, &dtheta));
  PetscCall(NNSetLayerPointers(net, theta, dtheta, buf));
  PetscCall(PetscMalloc1(L_, &need));

  PetscCall(PetscLogEventBegin(NN_Forward, net, 0, 0, 0));
  PetscCall(NNStageInput(net, n, x, &x0));
  PetscCall(NNForwardLayers(net, n, x0));
  PetscCall(PetscLogEventEnd(NN_Forward, net, 0, 0, 0));

  PetscCall(PetscLogEventBegin(NN_Loss, net, 0, 0, 0));
  PetscCall(NNLossEvaluate(net, n, net->act[L_], t, &L, net->dact[L_]));
  PetscCall(PetscLogEventEnd(NN_Loss, net, 0, 0, 0));

  PetscCall(PetscLogEventBegin(NN_Backward, net, 0, 0, 0));
  net->steploss = L;
  if (net->hook) PetscCall((*net->hook)(net, NN_HOOK_BACKWARD_BEGIN, L_)); /* data parallel: this shard's weight in the mean */
  dx0 = (x0 == x) ? dx : net->dact[0];
  needdx = dx ? PETSC_TRUE : PETSC_FALSE;
  for (PetscInt i = 0; i < L_; i++) { /* layer i needs its input gradient only if something before it does */
    PetscInt np;
    need[i] = needdx;
    PetscCall(NNLayerGetNumParameters(net->layers[i], &np));
    if (np) needdx = PETSC_TRUE;
  }
  for (PetscInt i = L_ - 1; i >= 0; i--) {
    PetscCall(NNLayerBackward(net->layers[i], n, i ? net->act[i] : x0, net->act[i + 1], net->dact[i + 1], need[i] ? (i ? net->dact[i] : dx0) : NULL));
    if (net->hook) PetscCall((*net->hook)(net, NN_HOOK_BACKWARD_END, i)); /* data parallel: all-reduce finished gradient buckets */
  }
  PetscCall(NNUnstageInputGradient(net, n, x0, dx0, dx));
  if (net->hook) PetscCall((*net->hook)(net, NN_HOOK_BACKWARD_DONE, -1));
  PetscCall(PetscLogEventEnd(NN_Backward, net, 0, 0, 0));

  PetscCall(PetscFree(need));
  PetscCall(NNSetLayerPointers(net, NULL, NULL, NULL));
  PetscCall(VecRestoreArray(net->dtheta, &dtheta));
  PetscCall(VecRestoreArray(net->buf, &buf));
  PetscCall(VecRestoreArrayRead(net->theta, &theta));
  if (loss) *loss = L;
  PetscFunctionReturn(0);
}

/*@
   NNPredict - evaluates the network (in evaluation mode) on any number of samples

   Collective

   Input Parameters:
+  net - the network
-  x - inputs, m samples one after the other (m * size(input shape) entries)

   Output Parameter:
.  y - outputs, m * size(output shape) entries

   Notes:
   Meant for use inside a simulation: x and y are ordinary sequential Vecs of any length that is a
   multiple of the sample size (outputs of spatial networks are gathered on every rank), or, for a
   network with NNSetInputDM() and a spatial output, global Vecs of the input DMDA and of a DMDA
   with the output's decomposition and dof = output channels (one sample, nothing gathered). The
   network's training mode is restored afterwards.

   Level: beginner

.seealso: `NNForward()`
@*/
PetscErrorCode NNPredict(NN net, Vec x, Vec y)
{
  PetscInt           nx, ny, m, in, outsz;
  NNShape            out;
  const PetscScalar *xa;
  PetscScalar       *ya;
  PetscBool          training;
  Vec                xb, yb;
  DM                 dmy;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  PetscCall(NNGetOutputShape(net, &out));
  {
    DM dmx;
    PetscCall(VecGetDM(x, &dmx));
    if (dmx && net->indm) {
      PetscCall(PetscLogEventBegin(NN_Predict, net, 0, 0, 0));
      training = net->training;
      PetscCall(NNSetTraining(net, PETSC_FALSE));
      PetscCall(NNPredictSpatial(net, x, y));
      PetscCall(NNSetTraining(net, training));
      PetscCall(PetscLogEventEnd(NN_Predict, net, 0, 0, 0));
      PetscFunctionReturn(0);
    }
  }
  in    = NNShapeSize(&net->inshape);
  outsz = NNShapeSize(&out);
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCheck(nx % in == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Input Vec length %" PetscInt_FMT " is not a multiple of the sample size %" PetscInt_FMT, nx, in);
  m = nx / in;
  PetscCheck(ny == m * outsz, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Output Vec length %" PetscInt_FMT " should be %" PetscInt_FMT " (%" PetscInt_FMT " samples of size %" PetscInt_FMT ")", ny, m * outsz, m, outsz);
  PetscCall(PetscLogEventBegin(NN_Predict, net, 0, 0, 0));
  training = net->training;
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  for (PetscInt start = 0; start < m; start += net->nbatch) {
    PetscInt           n = PetscMin(net->nbatch, m - start);
    const PetscScalar *yo;
    /* a Vec header over the caller's array avoids copying the input */
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n * in, xa + start * in, &xb));
    PetscCall(NNForward(net, n, xb, &yb));
    PetscCall(VecGetArrayRead(yb, &yo));
    PetscCall(VecGetDM(yb, &dmy));
    if (!dmy) PetscCall(PetscArraycpy(ya + start * outsz, yo, n * outsz));
    else { /* spatial output: every rank contributes its subdomain of the full samples */
      PetscMPIInt cnt;
      PetscCall(PetscArrayzero(ya + start * outsz, n * outsz));
      PetscCall(NNSpatialCopy(dmy, net->nbatch, &out, n, ya + start * outsz, (PetscScalar *)yo, PETSC_FALSE));
      PetscCall(PetscMPIIntCast(n * outsz, &cnt));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ya + start * outsz, cnt, MPIU_SCALAR, MPIU_SUM, NNGetLayerComm(net)));
    }
    PetscCall(VecRestoreArrayRead(yb, &yo));
    PetscCall(VecDestroy(&xb));
  }
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(NNSetTraining(net, training));
  PetscCall(PetscLogEventEnd(NN_Predict, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@C
   NNView - prints the architecture, shapes, parameter counts, memory and optimizer

   Collective

   Options Database Key:
.  -nn_view - view after set up (the driver honors it)

   Level: beginner
@*/
PetscErrorCode NNView(NN net, PetscViewer viewer)
{
  PetscBool iascii;
  PetscInt  np = 0, nb = 0, nact = 0;
  char      in[64];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)net), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)net, viewer));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(NNShapeToString(&net->inshape, sizeof(in), in));
  PetscCall(PetscViewerASCIIPrintf(viewer, "input %s, batch size %" PetscInt_FMT ", loss %s, %" PetscInt_FMT " layers\n", in, net->nbatch, net->loss, net->nlayers));
  if (net->indm) {
    PetscInt m, nn, p;
    PetscCall(DMDAGetInfo(net->indm, NULL, NULL, NULL, NULL, &m, &nn, &p, NULL, NULL, NULL, NULL, NULL, NULL));
    PetscCall(PetscViewerASCIIPrintf(viewer, "input on a DMDA, rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT "\n", m, nn, p));
  }
  if (net->setupcalled) {
    PetscCall(VecGetSize(net->theta, &np));
    PetscCall(VecGetSize(net->buf, &nb));
    for (PetscInt i = 0; i <= net->nlayers; i++) {
      PetscInt m;
      PetscCall(VecGetSize(net->act[i], &m));
      nact += 2 * m;
    }
  }
  PetscCall(NNParallelView(net, viewer));
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNLayerView(net->layers[i], viewer));
  PetscCall(NNViewReordering(net, viewer));
  if (net->setupcalled) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "parameters: %" PetscInt_FMT " (%.3g MB, gradient the same), buffers: %" PetscInt_FMT "\n", np, np * sizeof(PetscScalar) / 1e6, nb));
    PetscCall(PetscViewerASCIIPrintf(viewer, "activations and their gradients: %.3g MB\n", nact * sizeof(PetscScalar) / 1e6));
  }
  PetscCall(NNOptView(net->opt, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@
   NNDestroy - destroys a network and its layers and optimizer

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
  for (PetscInt i = 0; i < (*net)->nlayers; i++) PetscCall(NNLayerDestroy(&(*net)->layers[i]));
  PetscCall(PetscFree2((*net)->layers, (*net)->given));
  if ((*net)->act) PetscCall(VecDestroyVecs((*net)->nact, &(*net)->act));
  if ((*net)->dact) PetscCall(VecDestroyVecs((*net)->nact, &(*net)->dact));
  PetscCall(VecDestroy(&(*net)->theta));
  PetscCall(VecDestroy(&(*net)->dtheta));
  PetscCall(VecDestroy(&(*net)->buf));
  PetscCall(VecDestroy(&(*net)->tspatial));
  PetscCall(DMDestroy(&(*net)->indm));
  PetscCall(NNOptDestroy(&(*net)->opt));
  PetscCall(NNParallelDestroy(&(*net)->par));
  if ((*net)->stepmonitordestroy) PetscCall((*(*net)->stepmonitordestroy)(&(*net)->stepmonitorctx));
  PetscCall(PetscHeaderDestroy(net));
  PetscFunctionReturn(0);
}
