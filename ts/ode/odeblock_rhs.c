/*
   The learned vector field of an ODE block as a right-hand side for any TS.

   Once trained, the block's f is a model of the dynamics du/dt = f(u, theta(t), t). A simulation
   integrates it with a TS of its own choosing - adaptive, higher order, forward only (the adjoint
   restrictions of the block's own TS do not apply) - by handing the network to TS as the context:

     TSSetRHSFunction(ts, NULL, NNODERHSFunction, net);

   f's forward pass runs through the block's children and their activation Vecs (sized for the
   network's batch capacity, so larger sets of states go in chunks). The parameters live in the
   network's Vec, so the block is pointed at them for the call and its pointers are restored after
   it; what the block recorded for its own backward pass is left alone (the block re-runs f
   wherever its adjoint needs it).
*/
#include <petnn/private/odeimpl.h>

/* is l the layer or one of its descendants? */
static PetscBool NNODEContains(NNLayer layer, NNLayer l)
{
  if (layer == l) return PETSC_TRUE;
  for (PetscInt c = 0; c < layer->nchildren; c++)
    if (NNODEContains(layer->children[c], l)) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* counts the ODE blocks in a layer tree; *found = the last one */
static PetscErrorCode NNODEFind(NNLayer layer, PetscInt *count, NNLayer *found)
{
  PetscBool isode;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)layer, NNLAYERODE, &isode));
  if (isode) {
    (*count)++;
    *found = layer;
  }
  for (PetscInt c = 0; c < layer->nchildren; c++) PetscCall(NNODEFind(layer->children[c], count, found));
  PetscFunctionReturn(0);
}

/* the block to evaluate (the network's only ODE block when l is NULL), checked */
static PetscErrorCode NNODEGetBlock(NN net, NNLayer l, const char caller[], NNLayer *block)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)net);
  PetscBool isode, inside = PETSC_FALSE;
  PetscInt  count = 0;

  PetscFunctionBegin;
  PetscCheck(net->setupcalled, comm, PETSC_ERR_ARG_WRONGSTATE, "%s: the network is not set up; call NNSetUp() (or train it) first", caller);
  if (!l) {
    for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNODEFind(net->layers[i], &count, &l));
    PetscCheck(count == 1, comm, PETSC_ERR_ARG_WRONG, "%s: the network has %" PetscInt_FMT " ODE blocks (layers of type %s); it needs exactly one, or name the block with NNComputeODEField()", caller, count, NNLAYERODE);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERODE, &isode));
  PetscCheck(isode, comm, PETSC_ERR_ARG_WRONG, "%s: layer %s has type %s; it needs an ODE block (type %s)", caller, ((PetscObject)l)->name, ((PetscObject)l)->type_name ? ((PetscObject)l)->type_name : "(not set)", NNLAYERODE);
  for (PetscInt i = 0; i < net->nlayers && !inside; i++) inside = NNODEContains(net->layers[i], l);
  PetscCheck(inside, comm, PETSC_ERR_ARG_WRONG, "%s: ODE block %s is not a layer of this network", caller, ((PetscObject)l)->name);
  PetscCheck(l->setupcalled && ((NNLayer_ODE *)l->data)->f.nvec, comm, PETSC_ERR_ARG_WRONGSTATE, "%s: ODE block %s is not set up; call NNSetUp() on its network first", caller, ((PetscObject)l)->name);
  PetscCheck(!((NNLayer_ODE *)l->data)->dm, comm, PETSC_ERR_SUP, "%s: ODE block %s has a spatial (DMDA) state; only sequential (dense) states are supported", caller, ((PetscObject)l)->name);
  *block = l;
  PetscFunctionReturn(0);
}

/* F = f(U, theta_k, t) for n <= capacity states in sequential Vecs; the block points at its parameters */
static PetscErrorCode NNODEComputeFieldChunk(NNLayer l, PetscInt n, PetscInt k, PetscReal t, Vec U, Vec F)
{
  NNLayer_ODE *o     = (NNLayer_ODE *)l->data;
  PetscInt     nsave = o->n;

  PetscFunctionBegin;
  o->n = n;
  PetscCall(NNODEEvalField(l, k, t, U, F));
  o->n        = nsave;
  o->fld.fwd.valid = PETSC_FALSE; /* the children now hold this point, not the block's last stage */
  PetscFunctionReturn(0);
}

/* f at the states U at time t with the parameter set for time tsel (per-step parameters: the set of
   step floor(tsel/h), with a relative tolerance so that tsel = fl(k h) selects set k; clipped to [0, N-1]) */
static PetscErrorCode NNODEComputeField(NN net, NNLayer block, PetscReal t, PetscReal tsel, Vec U, Vec F, const char caller[])
{
  NNLayer            l = NULL;
  NNLayer_ODE       *o;
  PetscInt           m, mf, n, nb, k = 0;
  PetscBool          seq;
  const PetscScalar *theta, *ua, *savetheta;
  PetscScalar       *buf, *fa, *savebuf, *savedtheta;

  PetscFunctionBegin;
  PetscCheck(U != F, PETSC_COMM_SELF, PETSC_ERR_ARG_IDN, "%s: U and F must be different Vecs", caller);
  PetscCall(NNODEGetBlock(net, block, caller, &l));
  o = (NNLayer_ODE *)l->data;
  PetscCall(VecGetLocalSize(U, &m));
  PetscCall(VecGetLocalSize(F, &mf));
  PetscCheck(m % o->S == 0 && mf == m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%s: the local parts of U (%" PetscInt_FMT " entries) and F (%" PetscInt_FMT ") must be equal and hold whole states of ODE block %s (%" PetscInt_FMT " entries each)", caller, m, mf, ((PetscObject)l)->name, o->S);
  n  = m / o->S;
  nb = l->nbatch;
  if (o->params == NNODE_PARAMETERS_PER_STEP) {
    k = (PetscInt)PetscFloorReal(tsel / o->h * (1 + 64 * PETSC_MACHINE_EPSILON) + 64 * PETSC_MACHINE_EPSILON);
    k = PetscMax(0, PetscMin(o->N - 1, k));
  }

  /* point the block at the network's parameters and buffers for this call */
  savetheta  = l->theta;
  savebuf    = l->buf;
  savedtheta = l->dtheta;
  PetscCall(VecGetArrayRead(net->theta, &theta));
  PetscCall(VecGetArray(net->buf, &buf));
  l->theta  = theta + l->poff;
  l->buf    = buf ? buf + l->boff : NULL;
  l->dtheta = NULL;
  PetscCall(PetscObjectTypeCompare((PetscObject)U, VECSEQ, &seq));
  if (seq && n <= nb) PetscCall(NNODEComputeFieldChunk(l, n, k, t, U, F));
  else { /* parallel Vecs, or more states than the batch capacity: sequential views of chunks of the local arrays */
    PetscCall(VecGetArrayRead(U, &ua));
    PetscCall(VecGetArrayWrite(F, &fa));
    for (PetscInt s = 0; s < n; s += nb) {
      PetscInt c = PetscMin(nb, n - s);
      Vec      Uc, Fc;
      PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, c * o->S, ua + s * o->S, &Uc));
      PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, c * o->S, fa + s * o->S, &Fc));
      PetscCall(NNODEComputeFieldChunk(l, c, k, t, Uc, Fc));
      PetscCall(VecDestroy(&Uc));
      PetscCall(VecDestroy(&Fc));
    }
    PetscCall(VecRestoreArrayWrite(F, &fa));
    PetscCall(VecRestoreArrayRead(U, &ua));
  }
  l->theta  = savetheta;
  l->buf    = savebuf;
  l->dtheta = savedtheta;
  PetscCall(NNODEPointChildren(l, 0, NULL)); /* the children follow the restored pointers */
  PetscCall(VecRestoreArray(net->buf, &buf));
  PetscCall(VecRestoreArrayRead(net->theta, &theta));
  PetscFunctionReturn(0);
}

/*@
   NNComputeODEField - evaluates the learned vector field f(u, theta(t), t) of an ODE block of a
   network at a set of states

   Not Collective (each rank evaluates the states in its local part)

   Input Parameters:
+  net - the network, set up (NNSetUp()) or trained
.  block - the ODE block (a layer of type NNLAYERODE of net, e.g. from NNGetLayer()); NULL: the network's only ODE block
.  t - the time: with per-step parameters it selects the set of step k = floor(t/h) (clipped to
       [0, N-1]; t = k h in floating point selects set k); with -<prefix>time_input it is f's extra input
-  U - the states: the local part holds whole states of S entries one after the other (S = the
       size of the block's input shape), any number of them (evaluated in chunks of the network's
       batch size)

   Output Parameter:
.  F - f at each state, in the layout of U (F may not be U)

   Notes:
   f is evaluated in the network's current mode (NNSetTraining(); training and evaluation differ
   only for layers such as dropout). Sequential (dense) states only.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNODERHSFunction()`, `NNPredict()`
@*/
PetscErrorCode NNComputeODEField(NN net, NNLayer block, PetscReal t, Vec U, Vec F)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (block) PetscValidHeaderSpecific(block, NNLAYER_CLASSID, 2);
  PetscValidHeaderSpecific(U, VEC_CLASSID, 4);
  PetscValidHeaderSpecific(F, VEC_CLASSID, 5);
  PetscCall(NNODEComputeField(net, block, t, t, U, F, "NNComputeODEField"));
  PetscFunctionReturn(0);
}

/*@C
   NNODERHSFunction - a TSRHSFunction that evaluates the learned vector field of a network's ODE
   block, so that any TS integrates the trained model

   Not Collective (each rank evaluates the states in its local part)

   Input Parameters:
+  ts - the TS (may be NULL; with per-step parameters the start of its current step selects the set)
.  t - the time
.  U - the states (see NNComputeODEField())
-  ctx - the network (an NN with exactly one ODE block, set up or trained)

   Output Parameter:
.  F - f(U, theta(t), t), in the layout of U

   Usage:
.vb
   PetscCall(NNTrain(net, data, NULL));
   PetscCall(TSSetRHSFunction(ts, NULL, NNODERHSFunction, net));
   PetscCall(TSSolve(ts, U));
.ve

   Notes:
   No Jacobian is provided: explicit integrators need none; implicit ones can difference f
   (-snes_mf or -snes_fd). For a network with several ODE blocks write a TSRHSFunction that calls
   NNComputeODEField() with the block. Sequential (dense) states only.

   With per-step parameters (-<prefix>parameters per_step) f depends on the step: every stage of a
   TS step uses the set of the block step in which the TS step starts (TSGetTime()), so a TS with
   the block's own scheme and step h reproduces the block's output; other step sizes see a
   piecewise-constant theta(t) sampled at their step starts.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNComputeODEField()`, `TSSetRHSFunction()`
@*/
PetscErrorCode NNODERHSFunction(TS ts, PetscReal t, Vec U, Vec F, void *ctx)
{
  NN        net = (NN)ctx;
  PetscReal tstep = t;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 5);
  if (ts) PetscCall(TSGetTime(ts, &tstep)); /* during a step: its start, so that all its stages use one parameter set */
  PetscCall(NNODEComputeField(net, NULL, t, tstep, U, F, "NNODERHSFunction"));
  PetscFunctionReturn(0);
}
