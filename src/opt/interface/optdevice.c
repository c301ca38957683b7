/*
   An optimizer's step on the device (-nn_device cuda, during NNTrain()): the network's parameters and their gradient
   stay in its device arrays, and the state (Adam's moments, SGD's momentum) has device copies beside the state Vecs.
   The copies are made on the first device step from the Vecs and uploaded again when a Vec changed on the host (its
   PETSc object state moved: a checkpoint loaded); NNOptDeviceSyncHost() copies a newer device state back into the
   Vecs (before a checkpoint is written, at the end of an epoch), so checkpoints and NNOptGetState() see it as on the CPU.
*/
#include <petnn/private/nnimpl.h>

PetscBool NNOptHasDeviceStep(NNOpt o)
{
  return (PetscBool)(o && o->ops->stepdevice);
}

PetscErrorCode NNOptDeviceReset(NNOpt o)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < NN_OPT_MAX_STATE; i++) PetscCall(NNDeviceFree(&o->dev.state[i]));
  o->dev.n     = 0;
  o->dev.newer = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* the device copies of the state made current: made on first use, uploaded where a Vec changed on the host */
static PetscErrorCode NNOptDeviceUploadState(NNOpt o)
{
  PetscInt n = 0;

  PetscFunctionBegin;
  if (!o->nstate) PetscFunctionReturn(0);
  PetscCall(VecGetLocalSize(o->state[0], &n));
  if (o->dev.n != n) {
    PetscCheck(!o->dev.newer, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The optimizer's state changed size while its device copy is newer");
    PetscCall(NNOptDeviceReset(o));
  }
  for (PetscInt i = 0; i < o->nstate; i++) {
    PetscObjectState st;
    PetscBool        fresh = PETSC_FALSE;
    PetscCall(PetscObjectStateGet((PetscObject)o->state[i], &st));
    if (!o->dev.state[i]) {
      PetscCall(NNDeviceMalloc((size_t)n * sizeof(double), &o->dev.state[i]));
      fresh = PETSC_TRUE;
    }
    if (fresh || st != o->dev.hoststate[i]) {
      const PetscScalar *a;
      PetscCheck(!o->dev.newer, PetscObjectComm((PetscObject)o), PETSC_ERR_ORDER, "The optimizer's state %s was changed on the host while its device copy holds newer values: call NNOptDeviceSyncHost() before changing it", o->statename[i]);
      PetscCall(VecGetArrayRead(o->state[i], &a));
      PetscCall(NNDeviceCopyToDevice(o->dev.state[i], a, (size_t)n * sizeof(double)));
      PetscCall(VecRestoreArrayRead(o->state[i], &a));
      o->dev.hoststate[i] = st;
    }
  }
  o->dev.n = n;
  PetscFunctionReturn(0);
}

/* one step on the network's device parameters and gradient (NNDeviceGetParameters()) */
PetscErrorCode NNOptStepDevice(NNOpt o, NN net)
{
  NNDeviceParameters p;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCheck(o->ops->stepdevice, PetscObjectComm((PetscObject)o), PETSC_ERR_SUP, "Optimizer type %s has no device step; the types that have one are sgd, adam and adamw", ((PetscObject)o)->type_name);
  if (!o->setupcalled) PetscCall(NNOptSetUp(o, net->theta));
  PetscCall(NNDeviceGetParameters(net, &p));
  PetscCall(NNOptDeviceUploadState(o));
  PetscCall(PetscLogEventBegin(NN_OptStep, o, 0, 0, 0));
  o->nsteps++;
  o->dev.steps++;
  PetscUseTypeMethod(o, stepdevice, o->lr, &p, o->dev.state);
  PetscCall(PetscLogEventEnd(NN_OptStep, o, 0, 0, 0));
  if (o->nstate) o->dev.newer = PETSC_TRUE;
  PetscCall(NNDeviceParametersUpdated(net));
  PetscFunctionReturn(0);
}

/* the device state, when newer, copied into the state Vecs */
PetscErrorCode NNOptDeviceSyncHost(NNOpt o)
{
  PetscFunctionBegin;
  if (!o || !o->dev.newer) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < o->nstate; i++) {
    PetscScalar *a;
    PetscCall(VecGetArrayWrite(o->state[i], &a));
    PetscCall(NNDeviceCopyToHost(a, o->dev.state[i], (size_t)o->dev.n * sizeof(double)));
    PetscCall(VecRestoreArrayWrite(o->state[i], &a));
    PetscCall(PetscObjectStateGet((PetscObject)o->state[i], &o->dev.hoststate[i]));
  }
  o->dev.newer = PETSC_FALSE;
  PetscFunctionReturn(0);
}
