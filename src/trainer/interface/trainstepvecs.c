/*
   NNTrainStep(): the batch layouts it takes from the caller, checked and (a single spatial sample) staged
   into the network's batch layout before the step of src/trainer/interface/trainstep.c.
*/
#include <petnn/private/trainerimpl.h>

/* whether the first len entries of v hold a NaN or an infinity (local) */
static PetscErrorCode NNVecHasNonFinite(Vec v, PetscInt len, PetscBool *bad)
{
  const PetscScalar *a;
  PetscReal          s = 0;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt i = 0; i < len; i++) s += 0 * PetscRealPart(a[i]); /* NaN or Inf anywhere makes s NaN */
  PetscCall(VecRestoreArrayRead(v, &a));
  *bad = (PetscBool)(*bad || PetscIsInfOrNanReal(s));
  PetscFunctionReturn(0);
}

/* one sample per point, dof c of a DMDA Vec, into slot 0 of a batch-layout Vec with dof nb * c (zeros elsewhere) */
static PetscErrorCode NNStageSlot0(Vec v, PetscInt c, PetscInt nb, Vec b)
{
  const PetscScalar *va;
  PetscScalar       *ba;
  PetscInt           lv;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &lv));
  PetscCall(VecGetArrayRead(v, &va));
  PetscCall(VecGetArrayWrite(b, &ba));
  for (PetscInt p = 0; p < lv / c; p++) {
    PetscCall(PetscArraycpy(ba + p * nb * c, va + p * c, c));
    PetscCall(PetscArrayzero(ba + p * nb * c + c, (nb - 1) * c));
  }
  PetscCall(VecRestoreArrayWrite(b, &ba));
  PetscCall(VecRestoreArrayRead(v, &va));
  PetscFunctionReturn(0);
}

/* x on the network's input DMDA: the whole batch layout (dof = batch size x channels: m = batch size), or one
   sample (dof = channels, a Vec of the simulation's DMDA: m = 1, staged); y likewise on the output's DMDA, or
   sequential */
static PetscErrorCode NNTrainStepSpatialVecs(NN net, Vec x, Vec y, PetscInt *m, Vec *xb, Vec *yb)
{
  NNTrainer tr;
  NNShape   out;
  PetscInt  lx, ly, l0, lL, nb = net->nbatch, C = net->inshape.dim[0];
  DM        dmy, dmL;

  PetscFunctionBegin;
  PetscCall(NNGetTrainer(net, &tr));
  PetscCall(NNGetOutputShape(net, &out));
  PetscCall(VecGetLocalSize(x, &lx));
  PetscCall(VecGetLocalSize(net->act[0], &l0));
  PetscCall(VecGetLocalSize(y, &ly));
  PetscCall(VecGetLocalSize(net->act[net->nlayers], &lL));
  PetscCall(VecGetDM(y, &dmy));
  PetscCall(VecGetDM(net->act[net->nlayers], &dmL));
  PetscCheck(lx == l0 || lx * nb == l0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNTrainStep(): the input Vec has %" PetscInt_FMT " local entries; a Vec of the input DMDA (NNSetInputDM(), dof = %" PetscInt_FMT " channels) has %" PetscInt_FMT ", a batch Vec (NNCreateInputVec(), dof = batch size %" PetscInt_FMT " x channels) %" PetscInt_FMT, lx, C, l0 / nb, nb, l0);
  *m  = lx == l0 ? nb : 1;
  *xb = x;
  *yb = y;
  if (dmy) {
    PetscCheck(dmL, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "NNTrainStep(): the target Vec lives on a DMDA but the network's output is not spatial: give the targets as a sequential Vec");
    PetscCheck(ly * (*m == nb ? 1 : nb) == lL, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNTrainStep(): the target Vec has %" PetscInt_FMT " local entries; for %" PetscInt_FMT " sample(s) the network's output on this rank needs %" PetscInt_FMT " (a DMDA Vec on the output's decomposition with dof = %s%" PetscInt_FMT " channels)", ly, *m, *m == nb ? lL : lL / nb, *m == nb ? "batch size x " : "", out.dim[0]);
  } else {
    PetscInt k = net->lossops.classification ? 1 : NNShapeSize(&out);
    PetscCheck(ly == *m * k, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNTrainStep(): the sequential target Vec has %" PetscInt_FMT " entries; %" PetscInt_FMT " sample(s) need %" PetscInt_FMT, ly, *m, *m * k);
  }
  if (*m == nb) PetscFunctionReturn(0);
  if (!tr->online.xs) PetscCall(VecDuplicate(net->act[0], &tr->online.xs));
  PetscCall(NNStageSlot0(x, C, nb, tr->online.xs));
  *xb = tr->online.xs;
  if (dmy) {
    if (!tr->online.ts) PetscCall(VecDuplicate(net->act[net->nlayers], &tr->online.ts));
    PetscCall(NNStageSlot0(y, out.dim[0], nb, tr->online.ts));
    *yb = tr->online.ts;
  }
  PetscFunctionReturn(0);
}

/* x a sequential batch of m full samples, y its m targets */
static PetscErrorCode NNTrainStepSeqVecs(NN net, Vec x, Vec y, PetscInt *m)
{
  NNShape  out;
  PetscInt nx, ny, in = NNShapeSize(&net->inshape), k;

  PetscFunctionBegin;
  PetscCall(NNGetOutputShape(net, &out));
  k = net->lossops.classification ? 1 : NNShapeSize(&out);
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCheck(nx % in == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNTrainStep(): the input Vec has %" PetscInt_FMT " entries, not a multiple of the sample size %" PetscInt_FMT, nx, in);
  *m = nx / in;
  PetscCheck(*m <= net->nbatch, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNTrainStep(): the input Vec holds %" PetscInt_FMT " samples, more than the batch size %" PetscInt_FMT " (-nn_batch_size)", *m, net->nbatch);
  PetscCheck(ny == *m * k, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "NNTrainStep(): the target Vec has %" PetscInt_FMT " entries; %" PetscInt_FMT " sample(s) with %" PetscInt_FMT " target value(s) each need %" PetscInt_FMT, ny, *m, k, *m * k);
  PetscFunctionReturn(0);
}

/*@
   NNTrainStep - takes one optimizer step on a batch the caller provides (online training inside a simulation)

   Collective

   Input Parameters:
+  net - the network, set up (NNSetUp())
.  x - the inputs: a sequential Vec of m full samples one after the other (1 <= m <= the batch size; 0 on a
       data group without samples this step), or for a network with NNSetInputDM() a global Vec of that DMDA
       (one sample: the simulation's own state) or of the network's input layout (NNCreateInputVec(): a whole batch)
-  y - the targets: sequential (m class labels, or m outputs one after the other), or for a spatial output a Vec
       on the output's DMDA with dof = output channels (one sample) or batch size x output channels

   Output Parameter:
.  loss - the mean loss over the batch before the step (over all data groups; may be NULL)

   Notes:
   The step goes through the trainer as one step of NNTrain() does: the optimizer and its schedule (the learning
   rate of the current epoch), the data groups' gradient all-reduce (each group gives its own samples; the
   gradient is that of the mean over all of them), the gradient check on the first step (-nn_gradient_check),
   the step monitors, spectral normalization, and the checkpoint policy (-nn_checkpoint with -nn_checkpoint_steps,
   -nn_checkpoint_seconds, and -nn_checkpoint_every at the end of an online epoch of -nn_steps_per_epoch steps).
   The restart cursor (step, batch, epoch, generator) moves as in NNTrain(), so NNTrain() on the same batches
   in the same order (-nn_shuffle false) gives bitwise the same parameters, and NNCheckpointLoad() continues
   an interrupted online run bitwise. A batch with a NaN or infinite value, or a non-finite loss, stops with
   the same error on every rank and takes no step. NNPredict() may be called between steps. On a device
   (-nn_device cuda) the optimizer steps on the host Vecs.

   Options Database Keys:
+  -nn_steps_per_epoch <k> - steps that make an epoch (the schedule's epoch, the epoch checkpoints and monitor lines)
-  -nn_checkpoint <file> - checkpoint by the policy above

   Level: beginner

.seealso: `NNTrain()`, `NNPredict()`, `NNTrainStepBuffer()`, `NNDataBufferPush()`, `NNCheckpointLoad()`, `NNTrainerSetStepsPerEpoch()`
@*/
PetscErrorCode NNTrainStep(NN net, Vec x, Vec y, PetscReal *loss)
{
  DM        dmx = NULL;
  PetscInt  m = 0, nx, ny;
  Vec       xb = x, yb = y;
  PetscBool bad = PETSC_FALSE;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 2);
  PetscValidHeaderSpecific(y, VEC_CLASSID, 3);
  PetscCheck(net->setupcalled, PetscObjectComm((PetscObject)net), PETSC_ERR_ORDER, "NNTrainStep() before NNSetUp(): set the network up first (its input shape from NNSetInputShape() or NNSetInputDM()), then create the batch Vecs with NNCreateBatchVecs() or NNCreateInputVec()");
  PetscCall(VecGetDM(x, &dmx));
  if (dmx && net->spatial.indm) PetscCall(NNTrainStepSpatialVecs(net, x, y, &m, &xb, &yb));
  else PetscCall(NNTrainStepSeqVecs(net, x, y, &m));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCall(NNVecHasNonFinite(x, nx, &bad));
  PetscCall(NNVecHasNonFinite(y, ny, &bad));
  PetscCall(NNTrainStepBatch_Private(net, m, xb, yb, bad, loss));
  PetscFunctionReturn(0);
}

/*@
   NNTrainerSetStepsPerEpoch - how many NNTrainStep() calls make an epoch of online training

   Logically Collective

   Input Parameters:
+  tr - the trainer
-  n - steps per epoch (0, the default: one endless epoch)

   Options Database Key:
.  -nn_steps_per_epoch <n> - steps per epoch

   Notes:
   At the end of an online epoch the schedule moves to the next epoch (-opt_schedule), the epoch
   checkpoint is written (-nn_checkpoint_every), and -nn_monitor and the epoch monitors report its mean loss.

   Level: intermediate

.seealso: `NNTrainStep()`, `NNTrainerSetEpochs()`
@*/
PetscErrorCode NNTrainerSetStepsPerEpoch(NNTrainer tr, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  PetscCheck(n >= 0, PetscObjectComm((PetscObject)tr), PETSC_ERR_ARG_OUTOFRANGE, "Steps per epoch %" PetscInt_FMT " must be non-negative (0: one endless epoch)", n);
  tr->online.steps_per_epoch = n;
  PetscFunctionReturn(0);
}

/*@
   NNTrainerGetStepsPerEpoch - how many NNTrainStep() calls make an epoch of online training (0: one endless epoch)

   Not Collective

   Level: intermediate

.seealso: `NNTrainerSetStepsPerEpoch()`
@*/
PetscErrorCode NNTrainerGetStepsPerEpoch(NNTrainer tr, PetscInt *n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(tr, NNTRAINER_CLASSID, 1);
  *n = tr->online.steps_per_epoch;
  PetscFunctionReturn(0);
}
