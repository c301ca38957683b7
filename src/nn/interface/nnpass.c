/* The passes through a whole network: forward, loss and backward, and prediction in evaluation mode. */
#include <petnn/private/nnimpl.h>

static PetscErrorCode NNCheckBatch(NN net, PetscInt n, Vec x)
{
  PetscInt len;

  PetscFunctionBegin;
  PetscCheck(n > 0 && n <= net->nbatch, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Batch of %" PetscInt_FMT " samples: valid sizes are 1 to the batch size %" PetscInt_FMT, n, net->nbatch);
  if (net->spatial.indm) PetscFunctionReturn(0); /* NNStageInput() checks spatial inputs */
  PetscCall(VecGetLocalSize(x, &len));
  PetscCheck(len >= n * NNShapeSize(&net->inshape), PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Input Vec has %" PetscInt_FMT " entries but %" PetscInt_FMT " samples of size %" PetscInt_FMT " need %" PetscInt_FMT, len, n, NNShapeSize(&net->inshape), n * NNShapeSize(&net->inshape));
  PetscFunctionReturn(0);
}

/*
   NNLayerGetRandomDraws - random numbers one sample's forward pass through a layer draws from the
   network's generator in training mode: the layer type's randomdraws op (dropout), else the sum
   over its children (a residual block runs each child once), else 0
*/
PetscErrorCode NNLayerGetRandomDraws(NNLayer l, PetscInt *count)
{
  PetscFunctionBegin;
  *count = 0;
  if (l->ops->randomdraws) {
    PetscCall((*l->ops->randomdraws)(l, count));
    PetscFunctionReturn(0);
  }
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscInt k;
    PetscCall(NNLayerGetRandomDraws(l->children[c], &k));
    *count += k;
  }
  PetscFunctionReturn(0);
}

/*
   NNSetRandomShard - this rank computes a shard of a larger batch: in training mode every layer
   skips the random numbers of the before samples ahead of the shard and of the after samples behind
   it, so a data-parallel step draws exactly the numbers (dropout masks) one rank would; (0, 0) ends it
*/
PetscErrorCode NNSetRandomShard(NN net, PetscInt before, PetscInt after)
{
  PetscFunctionBegin;
  net->pass.rngshard[0] = before;
  net->pass.rngshard[1] = after;
  PetscFunctionReturn(0);
}

/*
   NNSetBackwardCallbacks - sets the callbacks NNLossGradient() calls during the backward pass
   (NNBackwardCallbacks in nnimpl.h); NULL removes them. Data-parallel training registers the
   gradient all-reduce here for the duration of a step.
*/
PetscErrorCode NNSetBackwardCallbacks(NN net, const NNBackwardCallbacks *cb)
{
  PetscFunctionBegin;
  if (cb) net->pass.backward = *cb;
  else PetscCall(PetscMemzero(&net->pass.backward, sizeof(net->pass.backward)));
  PetscFunctionReturn(0);
}

/* forward through all layers with the parameter arrays already distributed; a rank that computes a
   shard of a larger batch (NNSetRandomShard()) skips the other samples' random numbers around each layer.
   On a device without wait, the output is on its way to act[nlayers]: NNDeviceForwardLayersEnd() */
static PetscErrorCode NNForwardLayers(NN net, PetscInt n, Vec x, PetscBool wait)
{
  PetscBool shard = (PetscBool)(net->training && (net->pass.rngshard[0] || net->pass.rngshard[1]));

  PetscFunctionBegin;
  if (net->dev.type != NN_DEVICE_CPU) { /* the layers' device passes, double or single, graphs too (src/nn/interface/nndevice.c) */
    PetscCall(NNDeviceForwardLayers(net, n, x, wait));
    PetscFunctionReturn(0);
  }
  if (net->graph.on) {
    PetscCall(NNGraphForward(net, n, x));
    PetscFunctionReturn(0);
  }
  if (net->prec.type == NN_PRECISION_SINGLE) {
    PetscCall(NNSingleForwardLayers(net, n, x)); /* src/nn/interface/nnprecision.c */
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscInt draws = 0;
    if (shard) PetscCall(NNLayerGetRandomDraws(net->layers[i], &draws));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[0] * draws);
    PetscCall(NNLayerForward(net->layers[i], n, i ? net->act[i] : x, net->act[i + 1]));
    NNRandomSkip(&net->rng, (PetscInt64)net->pass.rngshard[1] * draws);
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
  PetscCall(NNForwardLayers(net, n, x, PETSC_TRUE));
  PetscCall(NNSetLayerPointers(net, NULL, NULL, NULL));
  PetscCall(VecRestoreArray(net->buf, &buf));
  PetscCall(VecRestoreArrayRead(net->theta, &theta));
  PetscCall(PetscLogEventEnd(NN_Forward, net, 0, 0, 0));
  if (y) *y = net->act[net->nlayers];
  PetscFunctionReturn(0);
}

/* the backward pass of a sequential network from dact[nlayers] down to dx0 (NULL: not needed), calling
   layerdone after each layer; layer i computes its input gradient only if something before it needs it */
static PetscErrorCode NNSequentialBackward(NN net, PetscInt n, Vec x0, Vec dx0, PetscScalar *dtheta)
{
  NNBackwardCallbacks *cb     = &net->pass.backward;
  PetscBool            needdx = dx0 ? PETSC_TRUE : PETSC_FALSE, *need;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(net->nlayers, &need));
  for (PetscInt i = 0; i < net->nlayers; i++) {
    PetscInt np;
    need[i] = needdx;
    PetscCall(NNLayerGetNumParameters(net->layers[i], &np));
    if (np) needdx = PETSC_TRUE;
  }
  if (net->dev.type != NN_DEVICE_CPU) PetscCall(NNDeviceBackward(net, n, x0, dx0, dtheta, need));
  else if (net->prec.type == NN_PRECISION_SINGLE) PetscCall(NNSingleBackward(net, n, x0, dx0, dtheta, need));
  else for (PetscInt i = net->nlayers - 1; i >= 0; i--) {
    PetscCall(NNLayerBackward(net->layers[i], n, i ? net->act[i] : x0, net->act[i + 1], net->dact[i + 1], need[i] ? (i ? net->dact[i] : dx0) : NULL));
    if (cb->layerdone) PetscCall((*cb->layerdone)(net, i, dtheta, cb->ctx)); /* data parallel: all-reduce the finished gradient buckets */
  }
  PetscCall(PetscFree(need));
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
   During data-parallel training the backward pass calls the callbacks set with
   NNSetBackwardCallbacks(), which sum the gradient across data groups while earlier layers still run.

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
  PetscBool          needdx, dyondevice = PETSC_FALSE;
  NNBackwardCallbacks *cb = &net->pass.backward;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  PetscCall(NNCheckBatch(net, n, x));
  L_ = net->nlayers;
  PetscCall(NNGetOutputShape(net, &out));
  PetscCall(VecGetArrayRead(net->theta, &theta));
  PetscCall(VecGetArray(net->buf, &buf));
  /* shared-memory data parallelism zeroes it in the reduction; parameters resident on the device leave it alone */
  if (!net->dthetazero && !net->dev.resident) PetscCall(VecZeroEntries(net->dtheta));
  net->dthetazero = PETSC_FALSE;
  PetscCall(VecGetArray(net->dtheta, &dtheta));
  PetscCall(NNSetLayerPointers(net, theta, dtheta, buf));

  PetscCall(PetscLogEventBegin(NN_Forward, net, 0, 0, 0));
  PetscCall(NNStageInput(net, n, x, &x0));
  PetscCall(NNForwardLayers(net, n, x0, PETSC_FALSE));
  PetscCall(PetscLogEventEnd(NN_Forward, net, 0, 0, 0));

  PetscCall(PetscLogEventBegin(NN_Loss, net, 0, 0, 0));
  if (net->dev.type != NN_DEVICE_CPU) {
    PetscCall(NNDeviceLossEvaluate(net, n, t, &L, &dyondevice)); /* where the output is, for the losses that can */
    PetscCall(NNDeviceForwardLayersEnd(net));                     /* the output into act[nlayers]: the loss waited for it */
  }
  if (!dyondevice) PetscCall(NNLossEvaluate(net, n, net->act[L_], t, &L, net->dact[L_]));
  PetscCall(PetscLogEventEnd(NN_Loss, net, 0, 0, 0));

  PetscCall(PetscLogEventBegin(NN_Backward, net, 0, 0, 0));
  if (cb->begin) { /* data parallel: this shard's weight in the mean */
    PetscReal w = 1.0;
    PetscCall((*cb->begin)(net, L, &w, cb->ctx));
    if (w != 1.0 && dyondevice) PetscCall(NNDeviceScaleOutputGradient(net, n, w));
    else if (w != 1.0) PetscCall(VecScale(net->dact[L_], w));
  }
  dx0 = (x0 == x) ? dx : net->dact[0];
  needdx = dx ? PETSC_TRUE : PETSC_FALSE;
  if (net->graph.on) PetscCall(NNGraphBackward(net, n, x0, needdx ? dx0 : NULL, dtheta)); /* calls layerdone as layers finish */
  else PetscCall(NNSequentialBackward(net, n, x0, needdx ? dx0 : NULL, dtheta));
  PetscCall(NNUnstageInputGradient(net, n, x0, dx0, dx));
  if (cb->done) PetscCall((*cb->done)(net, dtheta, cb->ctx)); /* data parallel: wait for the whole gradient's sum */
  PetscCall(PetscLogEventEnd(NN_Backward, net, 0, 0, 0));

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
   with the output's decomposition and dof = output channels (one sample, nothing gathered). With
   batch size 1 (NNSetBatchSize()) those Vecs are the network's first and last activations themselves:
   the network reads x and writes y in place, without a copy. The network's training mode is
   restored afterwards.

   Level: beginner

.seealso: `NNForward()`
@*/
PetscErrorCode NNPredict(NN net, Vec x, Vec y)
{
  PetscErrorCode     ierr;
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
    if (dmx && net->spatial.indm) {
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
    ierr = NNForward(net, n, xb, &yb);
    if (ierr) { /* a failing layer (one written in Python raises an exception): leave the caller's Vecs usable */
      (void)VecDestroy(&xb);
      (void)VecRestoreArray(y, &ya);
      (void)VecRestoreArrayRead(x, &xa);
      (void)NNSetTraining(net, training);
      PetscCall(ierr);
    }
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

