/* The NNOpt interface: optimizers with learning-rate schedules, stepping on the parameter Vec. */
#include <petnn/private/nnimpl.h>

PetscFunctionList NNOptList = NULL;

PETSC_INTERN PetscErrorCode NNOptCreate_SGD(NNOpt);
PETSC_INTERN PetscErrorCode NNOptCreate_Adam(NNOpt);
PETSC_INTERN PetscErrorCode NNOptCreate_AdamW(NNOpt);

PetscErrorCode NNOptRegisterAllTypes(void)
{
  PetscFunctionBegin;
  PetscCall(NNOptRegister(NNOPTSGD, NNOptCreate_SGD));
  PetscCall(NNOptRegister(NNOPTADAM, NNOptCreate_Adam));
  PetscCall(NNOptRegister(NNOPTADAMW, NNOptCreate_AdamW));
  PetscFunctionReturn(0);
}

/*@C
   NNOptRegister - adds an optimizer type

   Level: advanced
@*/
PetscErrorCode NNOptRegister(const char name[], PetscErrorCode (*create)(NNOpt))
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&NNOptList, name, create));
  PetscFunctionReturn(0);
}

/*@C
   NNOptCreate - creates an optimizer (default type adam)

   Level: beginner

.seealso: `NNGetOpt()`, `NNOptSetType()`
@*/
PetscErrorCode NNOptCreate(MPI_Comm comm, NNOpt *opt)
{
  NNOpt o;

  PetscFunctionBegin;
  PetscAssertPointer(opt, 2);
  PetscCall(PetNNInitializePackage());
  PetscCall(PetscHeaderCreate(o, NNOPT_CLASSID, "NNOpt", "Neural network optimizer", "NNOpt", comm, NNOptDestroy, NNOptView));
  o->lr0 = o->lr = 1e-3;
  o->gamma       = 0.1;
  o->step_size   = 10;
  PetscCall(PetscStrncpy(o->schedule, NNOPTSCHEDULENONE, sizeof(o->schedule)));
  *opt = o;
  PetscCall(NNOptSetType(o, NNOPTADAM));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOptReset(NNOpt o)
{
  PetscFunctionBegin;
  PetscCall(NNOptDeviceReset(o));
  for (PetscInt i = 0; i < o->nstate; i++) PetscCall(VecDestroy(&o->state[i]));
  o->nstate      = 0;
  o->nsteps      = 0;
  o->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   NNOptSetType - sets the optimizer type (sgd, adam, adamw)

   Options Database Key:
.  -opt_type <sgd,adam,adamw> - optimizer

   Level: beginner
@*/
PetscErrorCode NNOptSetType(NNOpt o, NNOptType type)
{
  PetscErrorCode (*create)(NNOpt);
  PetscBool match;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)o, type, &match));
  if (match) PetscFunctionReturn(0);
  PetscCall(PetscFunctionListFind(NNOptList, type, &create));
  if (!create) {
    char valid[256] = "";
    PetscCall(NNTypeListString(NNOptList, sizeof(valid), valid));
    SETERRQ(PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown optimizer type \"%s\" (-opt_type); valid types: %s", type, valid);
  }
  PetscCall(NNOptReset(o));
  PetscTryTypeMethod(o, destroy);
  PetscCall(PetscMemzero(o->ops, sizeof(struct _NNOptOps)));
  o->data = NULL;
  PetscCall(PetscObjectChangeTypeName((PetscObject)o, type));
  PetscCall((*create)(o));
  PetscFunctionReturn(0);
}

/*@C
   NNOptGetType - gets the optimizer type

   Level: beginner
@*/
PetscErrorCode NNOptGetType(NNOpt o, NNOptType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  *type = ((PetscObject)o)->type_name;
  PetscFunctionReturn(0);
}

/*@C
   NNOptSetOptionsPrefix - sets the prefix of the optimizer's options

   Level: intermediate
@*/
PetscErrorCode NNOptSetOptionsPrefix(NNOpt o, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)o, prefix));
  PetscFunctionReturn(0);
}

/*@
   NNOptSetFromOptions - configures the optimizer from the options database

   Options Database Keys:
+  -opt_type <sgd,adam,adamw> - optimizer
.  -opt_learning_rate <lr> - initial learning rate
.  -opt_weight_decay <wd> - weight decay (L2 for sgd/adam, decoupled for adamw)
.  -opt_schedule <none,step,cosine> - learning-rate schedule, stepped once per epoch
.  -opt_step_size <k> - step schedule: multiply by gamma every k epochs
.  -opt_gamma <g> - step schedule factor
.  -opt_cosine_epochs <T> - cosine schedule period (default: the training epochs)
-  -opt_min_learning_rate <lr> - cosine schedule floor

   Level: beginner
@*/
PetscErrorCode NNOptSetFromOptions(NNOpt o)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscObjectOptionsBegin((PetscObject)o);
  PetscCall(NNOptSetFromOptions_Private(o, PetscOptionsObject));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

/* the optimizer's options read inside an open options block (its own, or its trainer's, as
   TSAdaptSetFromOptions() reads inside TSSetFromOptions()'s block) */
PetscErrorCode NNOptSetFromOptions_Private(NNOpt o, NNOptionItems PetscOptionsObject)
{
  char      type[64], sched[16];
  PetscBool flg;

  PetscFunctionBegin;
  PetscCall(PetscOptionsFList("-opt_type", "Optimizer", "NNOptSetType", NNOptList, ((PetscObject)o)->type_name, type, sizeof(type), &flg));
  if (flg) PetscCall(NNOptSetType(o, type));
  PetscCall(PetscOptionsReal("-opt_learning_rate", "Initial learning rate", "NNOptSetLearningRate", o->lr0, &o->lr0, &flg));
  PetscCheck(o->lr0 > 0, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "-opt_learning_rate %g must be positive", (double)o->lr0);
  o->lr = o->lr0;
  PetscCall(PetscOptionsReal("-opt_weight_decay", "Weight decay", "NNOptSetWeightDecay", o->weight_decay, &o->weight_decay, NULL));
  PetscCheck(o->weight_decay >= 0, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "-opt_weight_decay %g must be non-negative", (double)o->weight_decay);
  PetscCall(PetscOptionsString("-opt_schedule", "Learning-rate schedule: none, step, cosine", "NNOptSetSchedule", o->schedule, sched, sizeof(sched), &flg));
  if (flg) PetscCall(NNOptSetSchedule(o, sched, o->step_size, o->gamma));
  PetscCall(PetscOptionsInt("-opt_step_size", "Step schedule: epochs between decays", "NNOptSetSchedule", o->step_size, &o->step_size, NULL));
  PetscCheck(o->step_size > 0, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "-opt_step_size %" PetscInt_FMT " must be positive", o->step_size);
  PetscCall(PetscOptionsReal("-opt_gamma", "Step schedule: decay factor", "NNOptSetSchedule", o->gamma, &o->gamma, NULL));
  PetscCall(PetscOptionsInt("-opt_cosine_epochs", "Cosine schedule: period in epochs (0: training epochs)", "NNOptSetSchedule", o->tmax, &o->tmax, NULL));
  PetscCall(PetscOptionsReal("-opt_min_learning_rate", "Cosine schedule: final learning rate", "NNOptSetSchedule", o->lr_min, &o->lr_min, NULL));
  PetscTryTypeMethod(o, setfromoptions, PetscOptionsObject);
  PetscCall(PetscObjectProcessOptionsHandlers((PetscObject)o, PetscOptionsObject));
  PetscFunctionReturn(0);
}

/*@
   NNOptSetLearningRate - sets the initial learning rate

   Level: beginner
@*/
PetscErrorCode NNOptSetLearningRate(NNOpt o, PetscReal lr)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCheck(lr > 0, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_OUTOFRANGE, "Learning rate %g must be positive", (double)lr);
  o->lr0 = o->lr = lr;
  PetscFunctionReturn(0);
}

/*@
   NNOptGetLearningRate - gets the current (scheduled) learning rate

   Level: beginner
@*/
PetscErrorCode NNOptGetLearningRate(NNOpt o, PetscReal *lr)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  *lr = o->lr;
  PetscFunctionReturn(0);
}

/*@
   NNOptSetWeightDecay - sets the weight decay

   Level: beginner
@*/
PetscErrorCode NNOptSetWeightDecay(NNOpt o, PetscReal wd)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  o->weight_decay = wd;
  PetscFunctionReturn(0);
}

/*@C
   NNOptSetSchedule - sets the learning-rate schedule

   Input Parameters:
+  o - the optimizer
.  schedule - none, step (lr0 * gamma^floor(epoch/step_size)) or cosine (torch CosineAnnealingLR)
.  step_size - epochs between decays (step)
-  gamma - decay factor (step)

   Level: beginner
@*/
PetscErrorCode NNOptSetSchedule(NNOpt o, NNOptSchedule schedule, PetscInt step_size, PetscReal gamma)
{
  PetscBool none, step, cosine;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCall(PetscStrcmp(schedule, NNOPTSCHEDULENONE, &none));
  PetscCall(PetscStrcmp(schedule, NNOPTSCHEDULESTEP, &step));
  PetscCall(PetscStrcmp(schedule, NNOPTSCHEDULECOSINE, &cosine));
  PetscCheck(none || step || cosine, PetscObjectComm((PetscObject)o), PETSC_ERR_ARG_UNKNOWN_TYPE, "Unknown learning-rate schedule \"%s\" (-opt_schedule); valid: none step cosine", schedule);
  PetscCall(PetscStrncpy(o->schedule, schedule, sizeof(o->schedule)));
  o->step_size = step_size;
  o->gamma     = gamma;
  PetscFunctionReturn(0);
}

/*@
   NNOptSetEpoch - sets the learning rate for a (0-based) epoch from the schedule

   Input Parameters:
+  o - the optimizer
.  epoch - the epoch about to run
-  epochs - the total number of training epochs (the cosine period unless -opt_cosine_epochs)

   Level: developer
@*/
PetscErrorCode NNOptSetEpoch(NNOpt o, PetscInt epoch, PetscInt epochs)
{
  PetscBool step, cosine;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCall(PetscStrcmp(o->schedule, NNOPTSCHEDULESTEP, &step));
  PetscCall(PetscStrcmp(o->schedule, NNOPTSCHEDULECOSINE, &cosine));
  if (step) o->lr = o->lr0 * PetscPowReal(o->gamma, (PetscReal)(epoch / o->step_size));
  else if (cosine) {
    PetscInt T = o->tmax > 0 ? o->tmax : PetscMax(epochs, 1);
    o->lr      = o->lr_min + 0.5 * (o->lr0 - o->lr_min) * (1 + PetscCosReal(PETSC_PI * (PetscReal)epoch / (PetscReal)T));
  } else o->lr = o->lr0;
  PetscFunctionReturn(0);
}

/* Registers a state vector (e.g. Adam's exp_avg); checkpoints store it under that name. */
PetscErrorCode NNOptAddState(NNOpt o, Vec v, const char name[])
{
  PetscFunctionBegin;
  PetscCheck(o->nstate < NN_OPT_MAX_STATE, PETSC_COMM_SELF, PETSC_ERR_SUP, "Too many optimizer state vectors");
  PetscCall(VecZeroEntries(v));
  o->state[o->nstate] = v;
  PetscCall(PetscStrncpy(o->statename[o->nstate], name, sizeof(o->statename[0])));
  o->nstate++;
  PetscFunctionReturn(0);
}

/*@
   NNOptSetUp - allocates the optimizer state for parameters shaped like theta; resets the step count

   Level: developer
@*/
PetscErrorCode NNOptSetUp(NNOpt o, Vec theta)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCall(NNOptReset(o));
  PetscTryTypeMethod(o, setup, theta);
  for (PetscInt i = 0; i < o->nstate; i++) {
    PetscInt n, m;
    PetscCall(VecGetSize(theta, &n));
    PetscCall(VecGetSize(o->state[i], &m));
    PetscCheck(n == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Optimizer state has the wrong size");
  }
  o->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@
   NNOptStep - takes one optimizer step: updates theta given the gradient g

   Notes:
   An optimizer not set up yet is set up for theta first (NNOptSetUp(): zero state), as PETSc's
   solvers set themselves up on their first solve.

   Level: intermediate
@*/
PetscErrorCode NNOptStep(NNOpt o, Vec theta, Vec g)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  if (!o->setupcalled) PetscCall(NNOptSetUp(o, theta));
  PetscCall(PetscLogEventBegin(NN_OptStep, o, 0, 0, 0));
  o->nsteps++;
  PetscUseTypeMethod(o, step, o->lr, theta, g);
  PetscCall(PetscLogEventEnd(NN_OptStep, o, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* One optimizer step on the entries [lo, hi) of the parameters, given their gradient g[0..hi-lo): the
   step of a sharded optimizer (data-parallel training, src/nn/interface/grid.c). The parameters and every
   state vector are seen through Vecs over their [lo, hi) slices, so any optimizer type works. */
PetscErrorCode NNOptStepRange(NNOpt o, PetscInt lo, PetscInt hi, Vec theta, const PetscScalar g[])
{
  Vec            vt, vg, full[NN_OPT_MAX_STATE], part[NN_OPT_MAX_STATE];
  PetscScalar   *t, *a[NN_OPT_MAX_STATE];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscCall(VecGetArray(theta, &t));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, hi - lo, t + lo, &vt));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, hi - lo, g, &vg));
  for (PetscInt i = 0; i < o->nstate; i++) {
    full[i] = o->state[i];
    PetscCall(VecGetArray(full[i], &a[i]));
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, hi - lo, a[i] + lo, &part[i]));
    o->state[i] = part[i];
  }
  ierr = NNOptStep(o, vt, vg);
  for (PetscInt i = 0; i < o->nstate; i++) {
    o->state[i] = full[i];
    PetscCall(VecRestoreArray(full[i], &a[i]));
    PetscCall(VecDestroy(&part[i]));
  }
  PetscCall(VecDestroy(&vg));
  PetscCall(VecDestroy(&vt));
  PetscCall(VecRestoreArray(theta, &t));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*@C
   NNOptView - prints the optimizer and its settings

   Level: beginner
@*/
PetscErrorCode NNOptView(NNOpt o, PetscViewer viewer)
{
  PetscBool iascii;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)o), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "optimizer %s: learning rate %g, weight decay %g, schedule %s\n", ((PetscObject)o)->type_name, (double)o->lr0, (double)o->weight_decay, o->schedule));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscTryTypeMethod(o, view, viewer);
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@
   NNOptDestroy - destroys an optimizer

   Level: beginner
@*/
PetscErrorCode NNOptDestroy(NNOpt *o)
{
  PetscFunctionBegin;
  if (!*o) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*o, NNOPT_CLASSID, 1);
  if (--((PetscObject)(*o))->refct > 0) {
    *o = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(NNOptReset(*o));
  PetscTryTypeMethod(*o, destroy);
  PetscCall(PetscHeaderDestroy(o));
  PetscFunctionReturn(0);
}

/*@
   NNOptSGDSetMomentum - sets the momentum and Nesterov flag of SGD

   Options Database Keys:
+  -opt_momentum <mu> - momentum (default 0)
-  -opt_nesterov - Nesterov momentum

   Level: beginner
@*/
PetscErrorCode NNOptSGDSetMomentum(NNOpt o, PetscReal mu, PetscBool nesterov)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscTryMethod(o, "NNOptSGDSetMomentum_C", (NNOpt, PetscReal, PetscBool), (o, mu, nesterov));
  PetscFunctionReturn(0);
}

/*@
   NNOptAdamSetBetas - sets beta1, beta2 and epsilon of Adam and AdamW

   Options Database Keys:
+  -opt_beta1 <b1> - first-moment decay (default 0.9)
.  -opt_beta2 <b2> - second-moment decay (default 0.999)
-  -opt_epsilon <eps> - denominator regularization (default 1e-8)

   Level: beginner
@*/
PetscErrorCode NNOptAdamSetBetas(NNOpt o, PetscReal b1, PetscReal b2, PetscReal eps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(o, NNOPT_CLASSID, 1);
  PetscTryMethod(o, "NNOptAdamSetBetas_C", (NNOpt, PetscReal, PetscReal, PetscReal), (o, b1, b2, eps));
  PetscFunctionReturn(0);
}
