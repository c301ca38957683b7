/*
   Eigenvalues of an ODE block's Jacobian df/du at a state, by SLEPc's EPS on a MATSHELL.

   The shell's product is f's exact backward pass (NNODEBackwardField(), the one TSAdjoint uses):
   it applies J^T, whose eigenvalues are those of J, so the spectrum needs no finite differences.
   J is taken per sample: the state u_k of one sample (the block's input integrated k steps by the
   block's own scheme, in evaluation mode) is run through one-sample passes, and the shell acts on a
   compact Vec of that sample's entries (sequential on PETSC_COMM_SELF for dense states, distributed
   like the DMDA for spatial ones). In evaluation mode batch normalization uses its running
   statistics, so samples do not couple and J of a batch is block diagonal: its spectrum is the union
   of the per-sample spectra.
*/
#include <petnn/private/odeimpl.h>
#include <petnn/private/spectralimpl.h>

const char *const NNODESpectrumWhichs[]  = {"largest_magnitude", "largest_real", "smallest_magnitude", "NNODESpectrumWhich", "NNODE_SPECTRUM_", NULL};
const char *const NNODEStabilityChecks[] = {"none", "warn", "error", "NNODEStabilityCheck", "NNODE_STABILITY_", NULL};
PetscLogEvent     NN_ODESpectrum         = 0;

/* the top-level ODE block called name and its position in the network (net->act[pos] is its input) */
PetscErrorCode NNODEGetBlock(NN net, const char name[], NNLayer *blk, PetscInt *pos)
{
  MPI_Comm  comm = PetscObjectComm((PetscObject)net);
  NNLayer   l    = NULL;
  PetscBool isode;

  PetscFunctionBegin;
  PetscCheck(name, comm, PETSC_ERR_ARG_NULL, "Give the name of an ODE block (a layer of type %s)", NNLAYERODE);
  PetscCall(NNSetUp(net));
  if (!NN_ODESpectrum) PetscCall(NNLogEventRegister("NNODESpectrum", NNLAYER_CLASSID, &NN_ODESpectrum));
  PetscCall(NNGetLayer(net, name, &l));
  if (!l) {
    char   list[256] = "";
    size_t len;
    for (PetscInt i = 0; i < net->nlayers; i++) {
      PetscCall(PetscObjectTypeCompare((PetscObject)net->layers[i], NNLAYERODE, &isode));
      if (!isode) continue;
      PetscCall(PetscStrlen(list, &len));
      PetscCall(PetscSNPrintf(list + len, sizeof(list) - len, "%s%s", len ? ", " : "", ((PetscObject)net->layers[i])->name));
    }
    SETERRQ(comm, PETSC_ERR_ARG_WRONG, "The network has no layer named %s; its ODE blocks: %s", name, list[0] ? list : "none");
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERODE, &isode));
  PetscCheck(isode, comm, PETSC_ERR_ARG_WRONG, "Layer %s is of type %s, not an ODE block (type %s): the Jacobian spectrum needs du/dt = f(u)", name, ((PetscObject)l)->type_name, NNLAYERODE);
  PetscCall(NNODESpectrumCheckOptions(l));
  *pos = -1;
  for (PetscInt i = 0; i < net->nlayers; i++)
    if (net->layers[i] == l) *pos = i;
  PetscCheck(*pos >= 0, comm, PETSC_ERR_SUP, "ODE block %s lies inside another layer; the Jacobian spectrum is available for top-level ODE blocks", name);
  *blk = l;
  PetscFunctionReturn(0);
}

/* the block's input for the network input batch x of n samples: a forward pass in evaluation mode */
PetscErrorCode NNODEBlockInput(NN net, PetscInt pos, PetscInt n, Vec x, Vec *xin)
{
  PetscBool training = net->training;

  PetscFunctionBegin;
  PetscCheck(n >= 1 && n <= net->nbatch, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " samples: give 1 to %" PetscInt_FMT " (the batch size)", n, net->nbatch);
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(NNForward(net, n, x, NULL));
  PetscCall(NNSetTraining(net, training));
  *xin = net->graph.on ? net->act[net->graph.in[net->graph.inptr[pos]]] : net->act[pos]; /* a graph network: the block's input node */
  PetscFunctionReturn(0);
}

/* moves sample s of the state a (block layout) to slot 0 of b, or (to = FALSE) back */
static PetscErrorCode NNODEPackSample(NNLayer l, PetscInt s, PetscInt S, PetscInt C, PetscInt D, const PetscScalar *a, PetscScalar *b, PetscInt m)
{
  PetscFunctionBegin;
  (void)l;
  if (S) PetscCall(PetscArraycpy(b, a + s * S, S));
  else
    for (PetscInt p = 0; p < m / D; p++) PetscCall(PetscArraycpy(b + p * D, a + p * D + s * C, C));
  PetscFunctionReturn(0);
}

/* the theta/buffer pointers of the network's layers for f's passes outside a network pass */
static PetscErrorCode NNODEJacobianPointers(NNODEJacobianCtx *ctx, PetscBool set, const PetscScalar **th, PetscScalar **bf)
{
  PetscFunctionBegin;
  if (set) {
    PetscCall(VecGetArrayRead(ctx->net->theta, th));
    PetscCall(VecGetArray(ctx->net->buf, bf));
    PetscCall(NNSetLayerPointers(ctx->net, *th, NULL, *bf));
    ((NNLayer_ODE *)ctx->blk->data)->n = 1;
  } else {
    PetscCall(NNSetLayerPointers(ctx->net, NULL, NULL, NULL));
    PetscCall(VecRestoreArray(ctx->net->buf, bf));
    PetscCall(VecRestoreArrayRead(ctx->net->theta, th));
  }
  PetscFunctionReturn(0);
}

/* y = J^T v: f's backward pass at u_k with output gradient v in slot 0 (exact) */
static PetscErrorCode NNODEJacobianMult(Mat A, Vec v, Vec y)
{
  NNODEJacobianCtx  *ctx;
  NNLayer_ODE       *o;
  const PetscScalar *va, *ga, *th;
  PetscScalar       *Va, *ya, *bf;
  PetscInt           m;
  PetscBool          training;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  o        = (NNLayer_ODE *)ctx->blk->data;
  training = ctx->blk->training;
  PetscCall(NNLayerSetTraining(ctx->blk, PETSC_FALSE));
  PetscCall(NNODEJacobianPointers(ctx, PETSC_TRUE, &th, &bf));
  PetscCall(VecGetArrayRead(v, &va));
  PetscCall(VecGetArray(ctx->V, &Va));
  PetscCall(VecGetLocalSize(v, &m));
  if (ctx->S) PetscCall(PetscArraycpy(Va, va, ctx->S));
  else
    for (PetscInt p = 0; p < m / ctx->C; p++) PetscCall(PetscArraycpy(Va + p * ctx->D, va + p * ctx->C, ctx->C));
  PetscCall(VecRestoreArray(ctx->V, &Va));
  PetscCall(VecRestoreArrayRead(v, &va));
  PetscCall(NNODEBackwardField(ctx->blk, ctx->k, ctx->t, ctx->uk, ctx->V));
  PetscCall(VecGetArrayRead(o->fld.gx, &ga));
  PetscCall(VecGetArrayWrite(y, &ya));
  if (ctx->S) PetscCall(PetscArraycpy(ya, ga, ctx->S));
  else
    for (PetscInt p = 0; p < m / ctx->C; p++) PetscCall(PetscArraycpy(ya + p * ctx->C, ga + p * ctx->D, ctx->C));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(o->fld.gx, &ga));
  PetscCall(NNODEJacobianPointers(ctx, PETSC_FALSE, &th, &bf));
  PetscCall(NNLayerSetTraining(ctx->blk, training));
  ctx->nprod++;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNODEJacobianDestroy(Mat A)
{
  NNODEJacobianCtx *ctx;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &ctx));
  PetscCall(VecDestroy(&ctx->uk));
  PetscCall(VecDestroy(&ctx->V));
  PetscCall(PetscObjectDereference((PetscObject)ctx->net));
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(0);
}

/* u_k of one sample: x1 (the sample in slot 0) integrated k steps by the block's scheme, in evaluation mode */
static PetscErrorCode NNODEIntegrateSample(NNODEJacobianCtx *ctx, Vec x1)
{
  NNLayer            l = ctx->blk;
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  PetscInt           kend = o->kend, nobs = o->nobs;
  const PetscScalar *th;
  PetscScalar       *bf;
  PetscBool          training = l->training;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(x1, &ctx->uk));
  PetscCall(NNLayerSetTraining(l, PETSC_FALSE));
  PetscCall(NNODEJacobianPointers(ctx, PETSC_TRUE, &th, &bf));
  if (o->parallel == NNODE_PARALLEL_MGRIT) { /* MGRIT solves all N steps: only the input state */
    PetscCall(NNODEPrepareVecs(l, 1, x1));
    PetscCall(VecCopy(x1, ctx->uk));
  } else { /* the scheme's own forward pass, stopped after k steps */
    o->kend = ctx->k;
    o->nobs = 0;
    PetscCall((*o->ops->forward)(l, 1, x1, ctx->uk));
    o->kend = kend;
    o->nobs = nobs;
  }
  PetscCall(NNODEJacobianPointers(ctx, PETSC_FALSE, &th, &bf));
  PetscCall(NNLayerSetTraining(l, training));
  PetscCall(VecDuplicate(o->fld.gx, &ctx->V));
  PetscCall(VecZeroEntries(ctx->V));
  PetscFunctionReturn(0);
}

/* sample s of n and the state u_k exist */
static PetscErrorCode NNODECheckSampleStep(NNLayer l, PetscInt n, PetscInt s, PetscInt k)
{
  NNLayer_ODE *o    = (NNLayer_ODE *)l->data;
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);

  PetscFunctionBegin;
  PetscCheck(s >= 0 && s < n, comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: sample %" PetscInt_FMT " is not in the batch of %" PetscInt_FMT " samples", ((PetscObject)l)->name, s, n);
  PetscCheck(k >= 0 && k < o->N, comm, PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: step %" PetscInt_FMT " is not a step of the block; give 0 to %" PetscInt_FMT " (the states u_k the steps start from)", ((PetscObject)l)->name, k, o->N - 1);
  PetscCheck(k == 0 || o->parallel != NNODE_PARALLEL_MGRIT, comm, PETSC_ERR_SUP, "ODE block %s: with -%sparallel mgrit only the input state (step 0) is available; use -%sparallel none for states along the trajectory", ((PetscObject)l)->name, NNODEPrefix(l), NNODEPrefix(l));
  PetscFunctionReturn(0);
}

/* the MATSHELL J^T of sample s of the block input xin (n samples, block layout) at the state after k steps */
PetscErrorCode NNODEJacobianCreate(NN net, NNLayer l, PetscInt n, Vec xin, PetscInt s, PetscInt k, Mat *J)
{
  NNLayer_ODE       *o = (NNLayer_ODE *)l->data;
  MPI_Comm           jcomm;
  NNODEJacobianCtx  *ctx;
  Vec                x1;
  const PetscScalar *xa;
  PetscScalar       *x1a;
  PetscInt           m, mc;

  PetscFunctionBegin;
  PetscCall(NNODECheckSampleStep(l, n, s, k));
  PetscCall(PetscNew(&ctx));
  ctx->net = net;
  PetscCall(PetscObjectReference((PetscObject)net));
  ctx->blk = l;
  ctx->k   = k;
  ctx->t   = k * o->h;
  /* the sample in slot 0 of a one-sample state */
  PetscCall(VecGetLocalSize(xin, &m));
  if (o->dm) {
    PetscInt xm, ym, zm;
    PetscCall(DMDAGetCorners(o->dm, &ctx->cs[0], &ctx->cs[1], &ctx->cs[2], &xm, &ym, &zm));
    PetscCall(DMDAGetInfo(o->dm, NULL, &ctx->gm[0], &ctx->gm[1], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    ctx->cm[0] = xm;
    ctx->cm[1] = ym;
    ctx->cm[2] = zm;
    ctx->C = l->inshape.dim[0];
    ctx->D = (xm * ym * zm > 0) ? m / (xm * ym * zm) : 1;
    PetscCall(VecDuplicate(xin, &x1));
    PetscCall(VecZeroEntries(x1));
    mc    = xm * ym * zm * ctx->C;
    jcomm = PetscObjectComm((PetscObject)o->dm);
  } else {
    ctx->S = o->S;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, o->S, &x1));
    mc    = o->S;
    jcomm = PETSC_COMM_SELF;
  }
  PetscCall(VecGetArrayRead(xin, &xa));
  PetscCall(VecGetArray(x1, &x1a));
  PetscCall(NNODEPackSample(l, s, ctx->S, ctx->C, ctx->D, xa, x1a, m));
  PetscCall(VecRestoreArray(x1, &x1a));
  PetscCall(VecRestoreArrayRead(xin, &xa));
  PetscCall(NNODEIntegrateSample(ctx, x1));
  PetscCall(VecDestroy(&x1));
  PetscCall(MatCreateShell(jcomm, mc, mc, PETSC_DETERMINE, PETSC_DETERMINE, ctx, J));
  PetscCall(MatShellSetOperation(*J, MATOP_MULT, (void (*)(void))NNODEJacobianMult));
  PetscCall(MatShellSetOperation(*J, MATOP_DESTROY, (void (*)(void))NNODEJacobianDestroy));
  PetscCall(MatSetUp(*J));
  PetscFunctionReturn(0);
}

#if defined(PETNN_HAVE_SLEPC)
/* EPS's initial vector, a function of each entry's index in the natural (decomposition-independent)
   order, so the Krylov iteration and the eigenvalues it finds are those of one rank on any number of ranks */
static PetscErrorCode NNODEJacobianInitialVector(Mat J, Vec v)
{
  NNODEJacobianCtx *ctx;
  PetscScalar      *a;
  PetscInt          m;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(J, &ctx));
  PetscCall(VecGetLocalSize(v, &m));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = 0; i < m; i++) {
    PetscInt g = i;
    if (!ctx->S) { /* local point p = ((z - zs) ym + (y - ys)) xm + (x - xs), channel c */
      PetscInt p = i / ctx->C, c = i % ctx->C, x = ctx->cs[0] + p % ctx->cm[0], y = ctx->cs[1] + (p / ctx->cm[0]) % ctx->cm[1], z = ctx->cs[2] + p / (ctx->cm[0] * ctx->cm[1]);
      g = ((z * ctx->gm[1] + y) * ctx->gm[0] + x) * ctx->C + c;
    }
    a[i] = 1.0 + PetscSinReal(1.3 + 0.77 * g);
  }
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(0);
}
#endif

/* the nev eigenvalues of kind which of the shell J (its prefix set), by Krylov-Schur to relative residual tol in maxit restarts (PETSC_DEFAULT: SLEPc's) */
PetscErrorCode NNODESpectrumSolve(Mat J, NNODESpectrumWhich which, PetscInt nev, PetscReal tol, PetscInt maxit, PetscInt *nconv, PetscReal re[], PetscReal im[])
{
#if defined(PETNN_HAVE_SLEPC)
  EPS         eps;
  const char *prefix;
  PetscInt    M, nc;
  const EPSWhich w[] = {EPS_LARGEST_MAGNITUDE, EPS_LARGEST_REAL, EPS_SMALLEST_MAGNITUDE};
#endif

  PetscFunctionBegin;
#if defined(PETNN_HAVE_SLEPC)
  PetscCall(MatGetSize(J, &M, NULL));
  PetscCall(MatGetOptionsPrefix(J, &prefix));
  PetscCheck(nev >= 1 && nev <= M, PetscObjectComm((PetscObject)J), PETSC_ERR_ARG_OUTOFRANGE, "%" PetscInt_FMT " eigenvalues asked for (-%snev): give 1 to %" PetscInt_FMT ", the size of one sample's state", nev, prefix ? prefix : "", M);
  PetscCall(EPSCreate(PetscObjectComm((PetscObject)J), &eps));
  PetscCall(EPSSetOptionsPrefix(eps, prefix));
  PetscCall(EPSSetOperators(eps, J, NULL));
  PetscCall(EPSSetProblemType(eps, EPS_NHEP));
  PetscCall(EPSSetType(eps, EPSKRYLOVSCHUR));
  PetscCall(EPSSetWhichEigenpairs(eps, w[which]));
  PetscCall(EPSSetDimensions(eps, nev, PETSC_DEFAULT, PETSC_DEFAULT));
  PetscCall(EPSSetTolerances(eps, tol, maxit));
  PetscCall(EPSSetFromOptions(eps));
  {
    Vec v0;
    PetscCall(MatCreateVecs(J, &v0, NULL));
    PetscCall(NNODEJacobianInitialVector(J, v0));
    PetscCall(EPSSetInitialSpace(eps, 1, &v0));
    PetscCall(VecDestroy(&v0));
  }
  PetscCall(EPSSolve(eps));
  PetscCall(EPSGetConverged(eps, &nc));
  *nconv = PetscMin(nc, nev);
  for (PetscInt i = 0; i < *nconv; i++) {
    PetscScalar kr, ki;
    PetscCall(EPSGetEigenvalue(eps, i, &kr, &ki));
    re[i] = PetscRealPart(kr);
    im[i] = PetscRealPart(ki);
  }
  PetscCall(EPSDestroy(&eps));
#else
  (void)J; (void)which; (void)nev; (void)tol; (void)maxit; (void)nconv; (void)re; (void)im;
#endif
  PetscFunctionReturn(0);
}

/*@C
   NNODECreateJacobian - the Jacobian df/du of an ODE block's vector field for one sample at a state
   of its trajectory, as a MATSHELL whose product is f's exact backward pass, i.e. it applies J^T

   Collective

   Input Parameters:
+  net - a set-up network (trained, or with loaded parameters)
.  block - name of a top-level ODE block (layer type `NNLAYERODE`)
.  n - samples in x (1 to the batch size)
.  x - a network input batch (as `NNForward()` takes it)
.  sample - the sample, 0 to n-1
-  step - the state u_k the step k starts from: 0 is the block's input, k < N integrates k steps with the block's scheme

   Output Parameter:
.  J - the MATSHELL (the transpose of df/du at u_k with f's parameters of step k and t = k h), on
       PETSC_COMM_SELF for dense states and on the DMDA's communicator for spatial ones, sized like one
       sample's state (for a spatial state: channels-last, the DMDA's ownership)

   Notes:
   The network runs forward in evaluation mode (batch normalization with running statistics, so samples
   do not couple). The eigenvalues of J^T are those of J, so `EPS` on this shell gives df/du's spectrum
   without finite differences; `MatComputeOperator()` forms J^T densely for small cases. The products read
   the network's current parameters; the shell is valid until the network's batch size or layout changes.
   The mgrit scheme (-<block>_parallel mgrit) gives the input state only (step 0).

   Level: advanced

.seealso: `NNODEComputeSpectrum()`, `NNODECheckStability()`, `NNLAYERODE`
@*/
PetscErrorCode NNODECreateJacobian(NN net, const char block[], PetscInt n, Vec x, PetscInt sample, PetscInt step, Mat *J)
{
  NNLayer  l;
  PetscInt pos;
  Vec      xin = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 4);
  PetscAssertPointer(J, 7);
  PetscCall(NNODEGetBlock(net, block, &l, &pos));
  PetscCall(NNODEBlockInput(net, pos, n, x, &xin));
  PetscCall(NNODEJacobianCreate(net, l, n, xin, sample, step, J));
  PetscFunctionReturn(0);
}

/*@C
   NNODEComputeSpectrum - eigenvalues of df/du of an ODE block for one sample at a state of its
   trajectory, by SLEPc's EPS on the shell of `NNODECreateJacobian()`

   Collective

   Input Parameters:
+  net - a set-up network
.  block - name of a top-level ODE block
.  n - samples in x
.  x - a network input batch
.  sample - the sample, 0 to n-1
.  step - the state u_k: 0 is the block's input
.  which - `NNODE_SPECTRUM_LARGEST_MAGNITUDE`, `NNODE_SPECTRUM_LARGEST_REAL` (rightmost) or `NNODE_SPECTRUM_SMALLEST_MAGNITUDE`
-  nev - how many (1 to the size of one sample's state)

   Output Parameters:
+  nconv - how many converged (at most nev)
.  re - their real parts, in the order of which (array of nev)
-  im - their imaginary parts

   Options Database Keys:
.  -<block>_spectrum_eps_* - the EPS (Krylov-Schur, relative residual 1e-12 and at most 10000 restarts by default); e.g. -<block>_spectrum_eps_ncv

   Notes:
   The products are f's exact backward passes (J^T v, whose eigenvalues are J's): no finite differences.
   Fails with PETSC_ERR_SUP when PetNN was built without SLEPc. Logged as the event NNODESpectrum.

   Level: intermediate

.seealso: `NNODECreateJacobian()`, `NNODECheckStability()`, `NNODESpectrumView()`, `NNSpectralViewFromOptions()`
@*/
PetscErrorCode NNODEComputeSpectrum(NN net, const char block[], PetscInt n, Vec x, PetscInt sample, PetscInt step, NNODESpectrumWhich which, PetscInt nev, PetscInt *nconv, PetscReal re[], PetscReal im[])
{
  NNLayer  l;
  PetscInt pos;
  Vec      xin = NULL;
  Mat      J;
  char     prefix[256];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 4);
  PetscCall(NNSlepcInitialize());
  PetscCall(NNODEGetBlock(net, block, &l, &pos));
  PetscCheck((int)which >= 0 && which <= NNODE_SPECTRUM_SMALLEST_MAGNITUDE, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Unknown NNODESpectrumWhich %d", (int)which);
  PetscCall(NNODECheckSampleStep(l, n, sample, step));
  PetscCheck(nev >= 1 && nev <= ((NNLayer_ODE *)l->data)->S, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "ODE block %s: %" PetscInt_FMT " eigenvalues asked for; give 1 to %" PetscInt_FMT ", the size of one sample's state", block, nev, ((NNLayer_ODE *)l->data)->S);
  PetscCall(PetscLogEventBegin(NN_ODESpectrum, l, 0, 0, 0));
  PetscCall(NNODEBlockInput(net, pos, n, x, &xin));
  PetscCall(NNODEJacobianCreate(net, l, n, xin, sample, step, &J));
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%sspectrum_", NNODEPrefix(l)));
  PetscCall(MatSetOptionsPrefix(J, prefix));
  PetscCall(NNODESpectrumSolve(J, which, nev, 1e-12, 10000, nconv, re, im));
  PetscCall(MatDestroy(&J));
  PetscCall(PetscLogEventEnd(NN_ODESpectrum, l, 0, 0, 0));
  PetscFunctionReturn(0);
}
