/*
   Training loops: minibatch training with an NNOpt (on one rank, data-parallel over data groups, or
   as tournament training of several trainers), evaluation, and full-batch training through TAO.
*/
#include <petnn/private/trainerimpl.h>
#include <petnn/private/spectralimpl.h>

/* number of samples whose largest output is the target class */
PetscInt NNCountCorrect(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t)
{
  PetscInt correct = 0;
  for (PetscInt s = 0; s < n; s++) {
    PetscInt best = 0;
    for (PetscInt j = 1; j < k; j++)
      if (y[s * k + j] > y[s * k + best]) best = j;
    correct += (best == (PetscInt)t[s]);
  }
  return correct;
}

static PetscErrorCode NNCheckData(NN net, NNData data)
{
  NNShape s, out;
  char    a[64], b[64];
  PetscInt ntarget;

  PetscFunctionBegin;
  PetscCall(NNDataGetSampleShape(data, &s));
  PetscCall(NNDataGetTargetSize(data, &ntarget));
  if (net->inshape.ndim == 0) PetscCall(NNSetInputShape(net, s.ndim, s.dim));
  PetscCall(NNSetUp(net));
  PetscCall(NNShapeToString(&s, sizeof(a), a));
  PetscCall(NNShapeToString(&net->inshape, sizeof(b), b));
  PetscCheck(NNShapeSize(&s) == NNShapeSize(&net->inshape), PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Data set %s has samples of shape %s but the network takes input of shape %s", ((PetscObject)data)->prefix ? ((PetscObject)data)->prefix : "", a, b);
  PetscCall(NNGetOutputShape(net, &out));
  if (net->lossops.classification) PetscCheck(ntarget == 1, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Loss %s needs one class label per sample but data set %s has %" PetscInt_FMT " target values per sample", net->loss, ((PetscObject)data)->prefix ? ((PetscObject)data)->prefix : "", ntarget);
  else PetscCheck(ntarget == NNShapeSize(&out), PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_SIZ, "Loss %s compares outputs of size %" PetscInt_FMT " with targets, but data set %s has %" PetscInt_FMT " target values per sample", net->loss, NNShapeSize(&out), ((PetscObject)data)->prefix ? ((PetscObject)data)->prefix : "", ntarget);
  PetscFunctionReturn(0);
}

/* mean loss and accuracy of the network over the samples base + [0, N) of a data set, in
   evaluation mode: the data groups of a trainer split every batch of D x (batch capacity) samples,
   the rows come through xcomm (which holds every requested row), sums are reduced over the trainer */
PetscErrorCode NNEvaluateRange(NN net, NNData data, MPI_Comm xcomm, PetscInt base, PetscInt N, PetscReal *loss, PetscReal *accuracy)
{
  NNParallel         p = NULL;
  PetscInt           k, cap, G, *idx;
  PetscReal          sums[2] = {0, 0}, Lb;
  PetscBool          training = net->training;
  Vec                x, t, y;
  const PetscScalar *ya, *ta;
  NNShape            out;
  PetscInt           every = net->trainer ? 4 * net->trainer->mon.steps : 0; /* -nn_monitor_steps: a forward pass costs about a quarter of a step */
  PetscLogDouble     t0    = 0;

  PetscFunctionBegin;
  if (every) PetscCall(PetscTime(&t0));
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNGetOutputShape(net, &out));
  k   = NNShapeSize(&out);
  cap = net->nbatch;
  G   = p->D * cap;
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(cap, &idx));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  for (PetscInt start = 0; start < N; start += G) {
    PetscInt n = PetscMin(G, N - start), first, last, m;
    if (every && start && (start / G) % every == 0) PetscCall(NNEvaluateMonitorProgress(net, start, N, t0));
    NNParallelShard(n, p->group, p->D, &first, &last);
    m = last - first;
    for (PetscInt i = 0; i < m; i++) idx[i] = base + start + first + i;
    PetscCall(NNDataGetBatchOn(data, xcomm, m, idx, x, t));
    if (!m) continue;
    PetscCall(NNForward(net, m, x, &y));
    PetscCall(NNLossEvaluate(net, m, y, t, &Lb, NULL));
    if (p->srank || p->mrank) continue; /* the ranks of a spatial group (and its model ranks) hold the same outputs: count them once */
    sums[0] += Lb * m;
    if (net->lossops.classification) {
      PetscCall(VecGetArrayRead(y, &ya));
      PetscCall(VecGetArrayRead(t, &ta));
      sums[1] += NNCountCorrect(m, k, ya, ta);
      PetscCall(VecRestoreArrayRead(t, &ta));
      PetscCall(VecRestoreArrayRead(y, &ya));
    }
  }
  if (every) PetscCall(NNEvaluateMonitorProgress(net, N, N, t0));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPIU_REAL, MPIU_SUM, p->tcomm));
  PetscCall(NNSetTraining(net, training));
  PetscCall(PetscFree(idx));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  if (loss) *loss = sums[0] / N;
  if (accuracy) *accuracy = net->lossops.classification ? sums[1] / N : -1;
  PetscFunctionReturn(0);
}

/*@
   NNEvaluate - mean loss and accuracy over a data set, in evaluation mode

   Collective

   Output Parameters:
+  loss - mean loss (may be NULL)
-  accuracy - fraction of correctly classified samples, -1 for regression losses (may be NULL)

   Notes:
   With data groups (NNSetProcessGrid()) the groups share the work; with several trainers each
   trainer evaluates its own model on the whole data set.

   Level: beginner

.seealso: `NNTrain()`
@*/
PetscErrorCode NNEvaluate(NN net, NNData data, PetscReal *loss, PetscReal *accuracy)
{
  PetscInt N;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, data));
  PetscCall(NNDataGetNumSamples(data, &N));
  PetscCall(NNEvaluateRange(net, data, PetscObjectComm((PetscObject)data), 0, N, loss, accuracy));
  PetscFunctionReturn(0);
}

/* stops training on every rank: with why (a non-finite loss), or for the first training sample with
   a NaN or infinite value (bad, -1 on ranks that found none) */
PetscErrorCode NNTrainStop(NN net, NNData train, PetscInt bad, const char why[])
{
  MPI_Comm    comm = PetscObjectComm((PetscObject)net);
  PetscInt    s    = bad >= 0 ? bad : PETSC_MAX_INT;
  PetscMPIInt owner;
  char        ck[PETSC_MAX_PATH_LEN + 64] = "";
  NNTrainer   tr;
  NNTrainerCursor *cur;

  PetscFunctionBegin;
  PetscCall(NNGetTrainerCursor(net, &tr, &cur));
  if (tr->checkpoint[0]) PetscCall(PetscSNPrintf(ck, sizeof(ck), " The last checkpoint %s is intact.", tr->checkpoint));
  if (why) SETERRQ(comm, PETSC_ERR_FP, "%s%s", why, ck);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPIU_INT, MPI_MIN, comm));
  PetscCall(NNDataGetOwner(train, s, &owner));
  SETERRQ(comm, PETSC_ERR_FP, "Training stopped at epoch %" PetscInt_FMT ", step %" PetscInt_FMT ": sample %" PetscInt_FMT " of the training data %s(held by rank %d%s) has a NaN or infinite feature or target.%s", cur->epoch + 1, cur->step + 1, s, ((PetscObject)train)->prefix ? ((PetscObject)train)->prefix : "", train->distributed ? (int)owner : 0, train->distributed ? "" : ", every rank reads it", ck);
}

/*@
   NNTrain - trains the network with its optimizer on minibatches

   Collective

   Input Parameters:
+  net - the network (its input shape defaults to the training samples' shape)
.  train - training data
-  test - held-out data evaluated after every epoch (may be NULL)

   Notes:
   Samples are shuffled every epoch by the network's seeded generator. Training resumes from the
   epoch and batch stored by NNCheckpointLoad(), continuing the same trajectory bitwise. A NaN or
   infinite loss, or a training sample with a NaN or infinite value, stops training on every
   rank with the same error; the last checkpoint written is kept.

   With data groups (NNSetProcessGrid(), -nn_data_groups D) the batch size is the global batch:
   group g trains on samples [n g/D, n (g+1)/D) of every batch of n samples, drawn from the same
   permutation as on one rank, and the gradients are averaged by all-reduce during the backward
   pass (NNSetBucketSize()), so the trajectory equals one rank's up to rounding (batch
   normalization aside: its statistics are those of the group's shard, its running statistics
   follow the first group). Dropout masks are drawn where one rank would draw them.

   Options Database Keys:
+  -nn_monitor - per-epoch loss, accuracy, time and throughput (and all-reduce times with data groups)
.  -nn_checkpoint <file> - checkpoint after every -nn_checkpoint_every epochs
.  -nn_checkpoint_steps <n> - and every n steps
-  -nn_checkpoint_seconds <s> - and every s seconds

   Level: beginner

.seealso: `NNSetFromOptions()`, `NNEvaluate()`, `NNCheckpointLoad()`, `NNTrainTao()`, `NNSetProcessGrid()`, `NNTrainMonitorSet()`
@*/
PetscErrorCode NNTrain(NN net, NNData train, NNData test)
{
  NNParallel     p = NULL;
  NNTrainLoop    c;
  PetscInt       cap;
  NNShape        out;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, train));
  if (test) PetscCall(NNCheckData(net, test));
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNParallelSetPartition(net, train));
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.train    = train;
  c.test     = test;
  c.B        = net->nbatch; /* the global batch; every data group holds at most cap samples of it */
  c.N        = p->ntrain;
  c.nbatches = (c.N + c.B - 1) / c.B;
  cap        = NNParallelBatchCapacity(p, c.B);
  if (cap != c.B) PetscCall(NNSetBatchSize(net, cap));
  PetscCall(NNSetUp(net));
  PetscCall(NNGetTrainerCursor(net, &c.tr, &c.cur));
  PetscCall(NNGetOutputShape(net, &out));
  c.k  = NNShapeSize(&out);
  c.nv = 2 * p->K + 2 + NNParallelBalanceSlots(p);
  PetscCall(NNCreateBatchVecs(net, &c.x, &c.t));
  PetscCall(PetscMalloc1(c.N, &c.perm));
  PetscCall(PetscMalloc1(cap, &c.idx));
  PetscCall(PetscMalloc1(c.nv, &c.v)); /* what every step reduces */
  PetscCall(NNParallelBalanceBegin(net, cap));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  if (p->K > 1 && p->trainer > 0 && c.cur->step == 0 && c.cur->epoch == 0 && c.cur->batch == 0) NNRandomSeed(&net->rng, (uint64_t)net->init.seed + 0x9e3779b97f4a7c15ULL * (uint64_t)p->trainer); /* the trainer's own stream */
  ierr = NNParallelTrainBegin(net, c.tr->opt);
  if (!ierr) ierr = NNTrainEpochs(net, &c);
  if (c.devstep) { /* the device's parameters and optimizer state back into their Vecs, also after an error */
    PetscCall(NNDeviceSetResident(net, PETSC_FALSE));
    PetscCall(NNOptDeviceSyncHost(c.tr->opt));
  }
  PetscCall(NNParallelTrainEnd(net));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  if (cap != c.B) PetscCall(NNSetBatchSize(net, c.B));
  PetscCall(PetscFree(c.perm));
  PetscCall(PetscFree(c.idx));
  PetscCall(PetscFree(c.v));
  PetscCall(VecDestroy(&c.x));
  PetscCall(VecDestroy(&c.t));
  PetscCall(ierr);
  PetscCall(NNSpectralViewFromOptions(net, train, test));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- TAO */
typedef struct {
  NN             net;
  NNData         data;
  Vec            x, t;
  PetscInt       N;
  NNPartitionVec pv;    /* partitioned layers: TAO works on pv.g, the parameters as one distributed Vec */
  Vec            glocal; /* and the gradient is summed in a rank's own layout first */
} NNTaoCtx;

/* full-batch loss and gradient over the whole data set, averaged per sample */
static PetscErrorCode NNTaoObjectiveAndGradient(Tao tao PETSC_UNUSED, Vec theta, PetscReal *f, Vec g, void *ctx)
{
  NNTaoCtx *c   = (NNTaoCtx *)ctx;
  NN        net = c->net;
  PetscInt *idx;

  PetscFunctionBegin;
  if (net->part.on) PetscCall(NNPartitionVecToLocal(&c->pv, theta, net->theta));
  else PetscCall(VecCopy(theta, net->theta));
  PetscCall(VecZeroEntries(c->glocal ? c->glocal : g));
  *f = 0;
  PetscCall(PetscMalloc1(net->nbatch, &idx));
  for (PetscInt start = 0; start < c->N; start += net->nbatch) {
    PetscInt  n = PetscMin(net->nbatch, c->N - start);
    PetscReal L;
    for (PetscInt i = 0; i < n; i++) idx[i] = start + i;
    PetscCall(NNDataGetBatch(c->data, n, idx, c->x, c->t));
    PetscCall(NNLossGradient(net, n, c->x, c->t, &L, NULL));
    *f += L * n / c->N;
    PetscCall(VecAXPY(c->glocal ? c->glocal : g, (PetscReal)n / c->N, net->dtheta));
  }
  if (c->glocal) PetscCall(NNPartitionVecFromLocal(&c->pv, c->glocal, g));
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(0);
}

/* Newton-type TAO methods: the full-batch loss Hessian (central differences of gradients) at the point TAO asks for */
static PetscErrorCode NNTaoHessian(Tao tao PETSC_UNUSED, Vec theta, Mat H, Mat Hpre PETSC_UNUSED, void *ctx PETSC_UNUSED)
{
  PetscFunctionBegin;
  PetscCall(NNHessianSetPoint_Private(H, theta));
  PetscFunctionReturn(0);
}

/* with a Newton-type method, the Hessian shell (its products are all TAO gets: no preconditioner matrix) */
static PetscErrorCode NNTaoSetHessian(NN net, NNData data, Tao tao)
{
  TaoType     type;
  PetscBool   newton;
  Mat         H;
  KSP         ksp;
  PC          pc;
  PetscBool   haspc;
  const char *prefix;

  PetscFunctionBegin;
  PetscCall(TaoGetType(tao, &type));
  if (!type) PetscFunctionReturn(0);
  PetscCall(PetscStrInList(type, "nls,ntr,ntl,bnls,bntr,bntl,tron", ',', &newton));
  if (!newton) PetscFunctionReturn(0);
  PetscCheck(!net->part.on, PetscObjectComm((PetscObject)tao), PETSC_ERR_SUP, "-tao_type %s needs Hessian products, which are not available for networks with partitioned layers (-<layer>_partition); use a first-order or quasi-Newton method (lmvm, blmvm, cg, bqnls)", type);
  PetscCall(NNCreateHessianData_Private(net, data, -1, PETSC_COMM_SELF, PETSC_TRUE, &H));
  PetscCall(TaoSetHessian(tao, H, H, NNTaoHessian, NULL));
  PetscCall(TaoGetKSP(tao, &ksp));
  if (ksp) { /* a shell has no entries to precondition with: PC none unless -<prefix>tao_..._pc_type says otherwise */
    PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
    PetscCall(PetscOptionsHasName(NULL, prefix, "-pc_type", &haspc));
    PetscCall(KSPGetPC(ksp, &pc));
    if (!haspc) PetscCall(PCSetType(pc, PCNONE));
  }
  PetscCall(MatDestroy(&H));
  PetscFunctionReturn(0);
}

/*@
   NNCreateTao - creates a TAO solver on the communicator `NNTrainTao()` needs for this network

   Collective

   Input Parameter:
.  net - the network

   Output Parameter:
.  tao - the solver, on `PETSC_COMM_SELF` for a network whose parameters every rank holds whole (each rank
         runs the same iterations; the objective and gradient are reduced over the ranks), or on the
         communicator of the pieces of partitioned layers (`NNLayerSetPartition()`)

   Notes:
   The solver's matrices (quasi-Newton, Hessian) take the parameter Vec's layout, which PETSc after
   3.18 checks against the solver's communicator. Set its type and options as for any `Tao`.

   Level: intermediate

.seealso: `NNTrainTao()`, `TaoCreate()`
@*/
PetscErrorCode NNCreateTao(NN net, Tao *tao)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(tao, 2);
  PetscCall(NNSetUp(net));
  PetscCall(TaoCreate(net->part.on ? NNGetPartitionComm(net) : PETSC_COMM_SELF, tao));
  PetscFunctionReturn(0);
}

/*@
   NNTrainTao - trains on the whole data set (full batch) with a TAO solver: the network's
   loss and gradient become the TAO objective and gradient

   Collective

   Input Parameters:
+  net - the network
.  data - training data
-  tao - a TAO solver from `NNCreateTao()` (type and tolerances from -tao_* options; it is given the network's options
         prefix)

   Notes:
   Use deterministic layers (no dropout) so the objective is a function; batch norm uses batch statistics.
   The network's batch size only limits memory: the objective is the mean over all samples.

   Newton-type methods (-tao_type nls, ntr, bnls, bntr, bntl, tron; ntl is refused, it crashes in PETSc 3.18; the type must be set before
   this call, by TaoSetType() or TaoSetFromOptions()) get the Hessian of the same objective as a
   MATSHELL whose products are central differences of gradients (`NNCreateHessianData()`, training
   mode, -nn_hessian_fd_step); each product costs two full-batch gradients. Its preconditioner is
   PCNONE unless -tao_<type>_pc_type is given (a shell has no entries for ILU or Jacobi). The
   Hessian stays referenced by the Tao: after the solve `TaoGetHessian()` and
   `NNHessianGetNumProducts()` give the number of products.

   With partitioned layers (`NNLayerSetPartition()`) TAO works on the parameters as one distributed
   Vec on the layer communicator, each entry once (rank 0 owns the whole tensors, every rank its
   pieces); Newton-type methods are refused there.

   Level: intermediate

.seealso: `NNCreateTao()`, `NNTrain()`, `TaoSetObjectiveAndGradient()`
@*/
PetscErrorCode NNTrainTao(NN net, NNData data, Tao tao)
{
  NNTaoCtx c;
  Vec      theta0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(tao, TAO_CLASSID, 3);
  {
    TaoType   type;
    PetscBool ntl = PETSC_FALSE;
    PetscCall(TaoGetType(tao, &type));
    if (type) PetscCall(PetscStrcmp(type, TAONTL, &ntl));
    PetscCheck(!ntl, PetscObjectComm((PetscObject)tao), PETSC_ERR_SUP, "-tao_type ntl: PETSc 3.18's ntl calls MatSolve() on a quasi-Newton matrix it never creates (a crash); use bntl (the same trust-region line search), ntr or nls");
  }
  PetscCall(NNCheckData(net, data));
  PetscCall(NNSetUp(net));
  { /* the solver's communicator must be the parameter Vec's (its matrices take that layout) */
    MPI_Comm    vcomm = net->part.on ? NNGetPartitionComm(net) : PetscObjectComm((PetscObject)net->theta), tcomm = PetscObjectComm((PetscObject)tao);
    PetscMPIInt cmp, vsize, tsize;
    PetscCallMPI(MPI_Comm_compare(vcomm, tcomm, &cmp));
    PetscCallMPI(MPI_Comm_size(vcomm, &vsize));
    PetscCallMPI(MPI_Comm_size(tcomm, &tsize));
    PetscCheck(cmp == MPI_IDENT || cmp == MPI_CONGRUENT, tcomm, PETSC_ERR_ARG_NOTSAMECOMM, "The Tao is on a communicator of %d ranks, but the parameters it optimizes are on one of %d (%s): create it with NNCreateTao()", (int)tsize, (int)vsize, net->part.on ? "the ranks holding the pieces of the partitioned layers" : "each rank holds all of them: PETSC_COMM_SELF");
  }
  PetscCall(PetscMemzero(&c, sizeof(c)));
  c.net  = net;
  c.data = data;
  PetscCall(NNDataGetNumSamples(data, &c.N));
  PetscCall(NNCreateBatchVecs(net, &c.x, &c.t));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  if (net->part.on) { /* partitioned layers: TAO sees every parameter once, in one distributed Vec */
    PetscCall(NNPartitionVecCreate(net, &c.pv));
    PetscCall(VecDuplicate(c.pv.g, &theta0));
    PetscCall(NNPartitionVecFromLocal(&c.pv, net->theta, theta0));
    PetscCall(VecDuplicate(net->theta, &c.glocal));
  } else {
    PetscCall(VecDuplicate(net->theta, &theta0));
    PetscCall(VecCopy(net->theta, theta0));
  }
  PetscCall(TaoSetSolution(tao, theta0));
  PetscCall(TaoSetObjectiveAndGradient(tao, NULL, NNTaoObjectiveAndGradient, &c));
  PetscCall(NNTaoSetHessian(net, data, tao));
  PetscCall(TaoSolve(tao));
  if (net->part.on) PetscCall(NNPartitionVecToLocal(&c.pv, theta0, net->theta));
  else PetscCall(VecCopy(theta0, net->theta));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(NNPartitionVecDestroy(&c.pv));
  PetscCall(VecDestroy(&c.glocal));
  PetscCall(VecDestroy(&theta0));
  PetscCall(VecDestroy(&c.x));
  PetscCall(VecDestroy(&c.t));
  PetscFunctionReturn(0);
}
