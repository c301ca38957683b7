/* Public setters and getters of the neural-ODE block (type-specific: no-ops on other layer types),
   and their implementations composed on the block. */
#include <petnn/private/odeimpl.h>

/* ---------------------------------------------------------------- implementations */

static PetscErrorCode NNLayerODESetTime_ODE(NNLayer l, PetscReal T)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(T > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: final time -%stime %g must be positive", ((PetscObject)l)->name, NNODEPrefix(l), (double)T);
  if (T != o->T) l->setupcalled = PETSC_FALSE;
  o->T = T;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetSteps_ODE(NNLayer l, PetscInt N)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(N > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%ssteps %" PetscInt_FMT " must be positive", ((PetscObject)l)->name, NNODEPrefix(l), N);
  if (N != o->N) l->setupcalled = PETSC_FALSE;
  o->N = N;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetParameters_ODE(NNLayer l, NNODEParameters p)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (p != o->params) l->setupcalled = PETSC_FALSE;
  o->params = p;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetScheme_ODE(NNLayer l, NNODEScheme s)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  o->scheme   = s;
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetCheckpoints_ODE(NNLayer l, PetscInt K)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(K >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: -%scheckpoints %" PetscInt_FMT " must be 0 (store every step) or positive", ((PetscObject)l)->name, NNODEPrefix(l), K);
  o->K        = K;
  o->recorded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetTimeInput_ODE(NNLayer l, PetscBool flg)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (flg != o->timeinput) l->setupcalled = PETSC_FALSE;
  o->timeinput = flg;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODESetObservationTimes_ODE(NNLayer l, PetscInt nobs, const PetscReal t[])
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCheck(nobs >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: %" PetscInt_FMT " observation times", ((PetscObject)l)->name, nobs);
  PetscCall(PetscFree(o->tobs));
  o->nobs = nobs;
  if (nobs) {
    PetscCall(PetscMalloc1(nobs, &o->tobs));
    PetscCall(PetscArraycpy(o->tobs, t, nobs));
  }
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetTS_ODE(NNLayer l, TS *ts)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (!o->integ.ts) {
    PetscCheck(l->setupcalled && o->f.nvec, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "ODE block %s: its TS is made for the activation layout; call NNSetUp() first", ((PetscObject)l)->name);
    PetscCall(NNODECreateTS(l));
  }
  *ts = o->integ.ts;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetStorage_ODE(NNLayer l, PetscInt *nstates, PetscLogDouble *bytes, PetscInt *nfull, PetscLogDouble *bytesfull)
{
  NNLayer_ODE   *o   = (NNLayer_ODE *)l->data;
  PetscInt       per = 1; /* state Vecs full storage keeps per step (the TS trajectory: the stages too) */
  PetscLogDouble vb, fullacts = 0;

  PetscFunctionBegin;
  PetscCall(NNODESchemeSelect(l));
  if (o->ops->storage) PetscCall((*o->ops->storage)(l, &per, &fullacts));
  PetscCall(NNODEStateBytes(l, &vb));
  if (nstates) *nstates = o->stats.nstored;
  if (bytes) *bytes = o->stats.nstored * vb + o->stats.actstored * o->stats.actbytes;
  if (nfull) *nfull = o->kend * per + 1;
  if (bytesfull) *bytesfull = (o->kend * per + 1) * vb + fullacts;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerODEGetTimes_ODE(NNLayer l, PetscLogDouble *forward, PetscLogDouble *adjoint, PetscLogDouble *recompute)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  if (forward) *forward = o->stats.tfwd;
  if (adjoint) *adjoint = o->stats.tadj;
  if (recompute) *recompute = o->stats.trec;
  PetscFunctionReturn(0);
}

/* composed on the block at creation (PETSC_TRUE) and removed at its destruction */
PetscErrorCode NNODEComposeSetters(NNLayer l, PetscBool add)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetTime_C", add ? NNLayerODESetTime_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetSteps_C", add ? NNLayerODESetSteps_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetParameters_C", add ? NNLayerODESetParameters_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetScheme_C", add ? NNLayerODESetScheme_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetCheckpoints_C", add ? NNLayerODESetCheckpoints_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetTimeInput_C", add ? NNLayerODESetTimeInput_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODESetObservationTimes_C", add ? NNLayerODESetObservationTimes_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetTS_C", add ? NNLayerODEGetTS_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetStorage_C", add ? NNLayerODEGetStorage_ODE : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerODEGetTimes_C", add ? NNLayerODEGetTimes_ODE : NULL));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- the public functions */

/*@C
   NNLayerODEAddLayer - appends a layer to the vector field f of an ODE block

   Input Parameters:
+  l - the ODE block
.  type - type of the new layer (NULL: from -<name>_type)
-  name - its name (options prefix "<name>_", checkpoint names "<block>.<name>.<tensor>", or
          "<block>.<k>.<name>.<tensor>" with per-step parameters)

   Output Parameter:
.  inner - the new layer (borrowed reference), may be NULL

   Options Database Key:
.  -<prefix>layers <a,b,c> - the layers of f

   Level: beginner

.seealso: `NNLAYERODE`, `NNLayerResidualAddLayer()`
@*/
PetscErrorCode NNLayerODEAddLayer(NNLayer l, NNLayerType type, const char name[], NNLayer *inner)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (inner) *inner = NULL;
  PetscTryMethod(l, "NNLayerODEAddLayer_C", (NNLayer, NNLayerType, const char[], NNLayer *), (l, type, name, inner));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetTime - sets the final time T of an ODE block (it integrates on [0, T])

   Options Database Key:
.  -<prefix>time <T> - final time (default 1; -<prefix>ts_max_time sets it too)

   Level: beginner

.seealso: `NNLAYERODE`, `NNLayerODESetSteps()`
@*/
PetscErrorCode NNLayerODESetTime(NNLayer l, PetscReal T)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetTime_C", (NNLayer, PetscReal), (l, T));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetSteps - sets the number N of fixed time steps of an ODE block (h = T/N)

   Options Database Keys:
+  -<prefix>steps <N> - number of steps (default 4)
-  -<prefix>ts_max_steps <N> - the same (takes precedence)

   Notes:
   With per-step parameters N is also the number of parameter sets. TS adaptivity is turned off.

   Level: beginner

.seealso: `NNLAYERODE`, `NNLayerODESetTime()`, `NNLayerODESetParameters()`
@*/
PetscErrorCode NNLayerODESetSteps(NNLayer l, PetscInt N)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetSteps_C", (NNLayer, PetscInt), (l, N));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetParameters - shares f's parameters over time, or gives every time step its own set

   Options Database Key:
.  -<prefix>parameters <shared,per_step> - default shared

   Notes:
   Per-step parameters make the block a ResNet written as an ODE: step k (all of its stages) uses
   set k. The block's parameter slice holds the N sets one after the other, named
   "<block>.<k>.<layer>.<tensor>" in checkpoints (as a torch.nn.ModuleList of N copies of f), each
   initialized on its own.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNODEParameters`
@*/
PetscErrorCode NNLayerODESetParameters(NNLayer l, NNODEParameters p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetParameters_C", (NNLayer, NNODEParameters), (l, p));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetScheme - integrates with PETSc's TS and TSAdjoint, or runs the discrete residual stack

   Options Database Key:
.  -<prefix>scheme <ts,discrete> - default ts

   Notes:
   The discrete scheme is x_{k+1} = x_k + h f(x_k, theta_k, t_k) with the children's hand-written
   forward and backward passes; it computes what TS rk 1fe computes.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNODEScheme`
@*/
PetscErrorCode NNLayerODESetScheme(NNLayer l, NNODEScheme s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetScheme_C", (NNLayer, NNODEScheme), (l, s));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetCheckpoints - bounds the memory of the backward pass to K stored states

   Options Database Key:
.  -<prefix>checkpoints <K> - stored states (default 0: keep every step's solution and stages)

   Notes:
   With K > 0 the forward pass keeps only the states at the starts of K segments of ceil(N/K) steps;
   the backward pass re-solves each segment from its stored state (one extra forward pass in all,
   log event NNODERecompute) before the segment's adjoint. The gradients are bitwise identical to
   those without checkpointing. The discrete scheme always stores every state.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNLayerODEGetStorage()`, `NNLayerODEGetTimes()`
@*/
PetscErrorCode NNLayerODESetCheckpoints(NNLayer l, PetscInt K)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetCheckpoints_C", (NNLayer, PetscInt), (l, K));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetTimeInput - gives the vector field the time t as an extra input feature, f(u, t)

   Options Database Key:
.  -<prefix>time_input - default false

   Notes:
   For 1-d (feature) states: f's first layer sees S+1 features per sample, the last one t.

   Level: intermediate

.seealso: `NNLAYERODE`
@*/
PetscErrorCode NNLayerODESetTimeInput(NNLayer l, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetTimeInput_C", (NNLayer, PetscBool), (l, flg));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetObservationTimes - makes the block output the states at several times (a trajectory)

   Input Parameters:
+  l - the ODE block
.  nobs - number of times (0: output u(T))
-  times - increasing times in [0, T], each a multiple of the step h = T/N

   Options Database Key:
.  -<prefix>observation_times <t1,t2,...> - the times

   Notes:
   The output shape is (nobs, state shape): per sample the observed states one after the other, so
   an MSE loss on the output is a loss on the trajectory. The integration stops at the last time.
   Sequential (dense) states only.

   Level: intermediate

.seealso: `NNLAYERODE`
@*/
PetscErrorCode NNLayerODESetObservationTimes(NNLayer l, PetscInt nobs, const PetscReal times[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetObservationTimes_C", (NNLayer, PetscInt, const PetscReal[]), (l, nobs, times));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODEGetTS - gets the TS of an ODE block (after NNSetUp()), e.g. to add a monitor

   Output Parameter:
.  ts - the TS (NULL for other layer types); do not change its solution, RHS or Jacobians

   Notes:
   The TS is made at set up for the activation layout (PETSC_COMM_SELF for sequential states,
   the DMDA's communicator for spatial ones), with options prefix "<block>_".

   Level: intermediate

.seealso: `NNLAYERODE`
@*/
PetscErrorCode NNLayerODEGetTS(NNLayer l, TS *ts)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  *ts = NULL;
  PetscTryMethod(l, "NNLayerODEGetTS_C", (NNLayer, TS *), (l, ts));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODEGetStorage - memory held for the backward pass by the last training forward pass

   Output Parameters:
+  nstates - state-sized Vecs held at the peak (checkpoints: the stored states plus one segment's trajectory)
.  bytes - bytes held at the peak on this rank: those Vecs and f's kept stage activations (-<prefix>store_activations)
.  nfull - state-sized Vecs full storage holds (every step's solution and stage Vecs)
-  bytesfull - bytes full storage holds on this rank (with every stage's activations when they are kept)

   Level: intermediate

.seealso: `NNLAYERODE`, `NNLayerODESetCheckpoints()`, `NNLayerODEGetTimes()`
@*/
PetscErrorCode NNLayerODEGetStorage(NNLayer l, PetscInt *nstates, PetscLogDouble *bytes, PetscInt *nfull, PetscLogDouble *bytesfull)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (nstates) *nstates = 0;
  if (bytes) *bytes = 0;
  if (nfull) *nfull = 0;
  if (bytesfull) *bytesfull = 0;
  PetscTryMethod(l, "NNLayerODEGetStorage_C", (NNLayer, PetscInt *, PetscLogDouble *, PetscInt *, PetscLogDouble *), (l, nstates, bytes, nfull, bytesfull));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODEGetTimes - wall-clock seconds an ODE block spent, summed over its passes so far

   Output Parameters:
+  forward - forward passes (TSSolve)
.  adjoint - backward passes without the recomputation (TSAdjointSolve)
-  recompute - re-solving segments before their adjoints (checkpointing)

   Notes:
   The same split is in -log_view as the events NNODEForward, NNODEAdjoint and NNODERecompute.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNLayerODEGetStorage()`
@*/
PetscErrorCode NNLayerODEGetTimes(NNLayer l, PetscLogDouble *forward, PetscLogDouble *adjoint, PetscLogDouble *recompute)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (forward) *forward = 0;
  if (adjoint) *adjoint = 0;
  if (recompute) *recompute = 0;
  PetscTryMethod(l, "NNLayerODEGetTimes_C", (NNLayer, PetscLogDouble *, PetscLogDouble *, PetscLogDouble *), (l, forward, adjoint, recompute));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODESetParallel - makes an ODE block layer-parallel: its forward pass an MGRIT solve over the steps and
   its backward pass the adjoint MGRIT, each rank of the layer communicator owning a contiguous chunk of steps

   Logically Collective

   Input Parameters:
+  l - the ODE block
-  p - NNODE_PARALLEL_NONE (default) or NNODE_PARALLEL_MGRIT

   Options Database Keys:
+  -<prefix>parallel <none,mgrit> - the same
.  -<prefix>mgrit_ranks <p> - MGRIT over groups of p consecutive ranks of the layer communicator (default all)
.  -<prefix>mgrit_cf, -<prefix>mgrit_levels, -<prefix>mgrit_relax, -<prefix>mgrit_max_it, -<prefix>mgrit_rtol,
   -<prefix>mgrit_mode <exact,one_shot>, -<prefix>mgrit_one_shot_it, -<prefix>mgrit_warm_start,
   -<prefix>mgrit_monitor, -<prefix>mgrit_view - the solver (see NNMGRITSetFromOptions())
-  -<prefix>mgrit_one_shot_increase_every <s>, -<prefix>mgrit_one_shot_max_it <M> - one-shot mode: one more
   iteration every s gradients (backward passes), up to M

   Notes:
   The fine propagator is one step of the block's explicit RK tableau (rk 1fe: a ResNet step) or of the discrete
   scheme; the coarse propagator on level l is the same step with m^l h and the parameters at the C-point. The
   parameters stay replicated: each rank computes the gradient of its own steps and the block's gradient slice is
   all-gathered (per-step parameters) or summed (shared) over the layer communicator, so SGD, Adam and TAO run
   unchanged on every rank. Layers before and after the block run redundantly on every rank. In evaluation mode
   every rank runs the fine steps sequentially. Exact mode reproduces the serial block's output and gradient to
   the MGRIT tolerance; one-shot mode takes a fixed number of warm-started iterations per pass.
   Not supported with MGRIT: implicit integrators, observation times, checkpointing, spatial (DMDA) states.

   Level: intermediate

.seealso: `NNLAYERODE`, `NNLayerODEGetMGRIT()`, `NNMGRITSetFromOptions()`, `NNMGRITSetMode()`
@*/
PetscErrorCode NNLayerODESetParallel(NNLayer l, NNODEParallel p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerODESetParallel_C", (NNLayer, NNODEParallel), (l, p));
  PetscFunctionReturn(0);
}

/*@
   NNLayerODEGetMGRIT - gets the MGRIT solver of a layer-parallel ODE block (NULL when it is not layer-parallel)

   Collective on the first call

   Output Parameter:
.  mg - the solver (borrowed): NNMGRITSetMode(), NNMGRITGetIterationNumber(), NNMGRITView(), ...

   Level: intermediate

.seealso: `NNLayerODESetParallel()`, `NNMGRITSetMode()`
@*/
PetscErrorCode NNLayerODEGetMGRIT(NNLayer l, NNMGRIT *mg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(mg, 2);
  *mg = NULL;
  PetscTryMethod(l, "NNLayerODEGetMGRIT_C", (NNLayer, NNMGRIT *), (l, mg));
  PetscFunctionReturn(0);
}
