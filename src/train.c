/* Training loops: minibatch training with an NNOpt, evaluation, and full-batch training through TAO. */
#include <petnn/private/nnimpl.h>

/* number of samples whose largest output is the target class */
static PetscInt CountCorrect(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t)
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

/*@
   NNEvaluate - mean loss and accuracy over a data set, in evaluation mode

   Collective

   Output Parameters:
+  loss - mean loss (may be NULL)
-  accuracy - fraction of correctly classified samples, -1 for regression losses (may be NULL)

   Level: beginner

.seealso: `NNTrain()`
@*/
PetscErrorCode NNEvaluate(NN net, NNData data, PetscReal *loss, PetscReal *accuracy)
{
  PetscInt           N, correct = 0, k;
  PetscInt          *idx;
  PetscReal          L = 0, Lb;
  PetscBool          training = net->training;
  Vec                x, t, y;
  const PetscScalar *ya, *ta;
  NNShape            out;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, data));
  PetscCall(NNDataGetNumSamples(data, &N));
  PetscCall(NNGetOutputShape(net, &out));
  k = NNShapeSize(&out);
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(net->nbatch, &idx));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  for (PetscInt start = 0; start < N; start += net->nbatch) {
    PetscInt n = PetscMin(net->nbatch, N - start);
    for (PetscInt i = 0; i < n; i++) idx[i] = start + i;
    PetscCall(NNDataGetBatch(data, n, idx, x, t));
    PetscCall(NNForward(net, n, x, &y));
    PetscCall(NNLossEvaluate(net, n, y, t, &Lb, NULL));
    if (net->lossops.classification) {
      PetscCall(VecGetArrayRead(y, &ya));
      PetscCall(VecGetArrayRead(t, &ta));
      correct += CountCorrect(n, k, ya, ta);
      PetscCall(VecRestoreArrayRead(t, &ta));
      PetscCall(VecRestoreArrayRead(y, &ya));
    }
    L += Lb * n;
  }
  PetscCall(NNSetTraining(net, training));
  PetscCall(PetscFree(idx));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  if (loss) *loss = L / N;
  if (accuracy) *accuracy = net->lossops.classification ? (PetscReal)correct / N : -1;
  PetscFunctionReturn(0);
}

/*@
   NNTrain - trains the network with its optimizer on minibatches

   Collective

   Input Parameters:
+  net - the network (its input shape defaults to the training samples' shape)
.  train - training data
-  test - held-out data evaluated after every epoch (may be NULL)

   Notes:
   Samples are shuffled every epoch by the network's seeded generator. Training resumes from
   the epoch stored by NNCheckpointLoad(), continuing the same trajectory bitwise. A NaN or
   infinite loss stops training with an error; the last checkpoint written is kept.

   Options Database Keys:
+  -nn_monitor - per-epoch loss, accuracy, time and throughput
-  -nn_checkpoint <file> - checkpoint after every -nn_checkpoint_every epochs

   Level: beginner

.seealso: `NNSetFromOptions()`, `NNEvaluate()`, `NNCheckpointLoad()`, `NNTrainTao()`
@*/
PetscErrorCode NNTrain(NN net, NNData train, NNData test)
{
  PetscInt           N, k, *perm;
  Vec                x, t;
  NNShape            out;
  MPI_Comm           comm;
  PetscViewer        viewer;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  PetscCall(PetscViewerASCIIGetStdout(comm, &viewer));
  PetscCall(NNCheckData(net, train));
  if (test) PetscCall(NNCheckData(net, test));
  PetscCall(NNDataGetNumSamples(train, &N));
  PetscCall(NNGetOutputShape(net, &out));
  k = NNShapeSize(&out);
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(PetscMalloc1(N, &perm));
  PetscCall(NNSetTraining(net, PETSC_TRUE));

  for (; net->epoch < net->epochs; net->epoch++) {
    PetscLogDouble t0, t1;
    PetscReal      Lsum = 0, tloss = 0, tacc = -1, lr;
    PetscInt       correct = 0;

    PetscCall(PetscTime(&t0));
    PetscCall(NNOptSetEpoch(net->opt, net->epoch, net->epochs));
    for (PetscInt i = 0; i < N; i++) perm[i] = i;
    if (net->shuffle) NNRandomShuffle(&net->rng, N, perm);
    for (PetscInt start = 0; start < N; start += net->nbatch) {
      PetscInt           n = PetscMin(net->nbatch, N - start);
      PetscReal          L;
      const PetscScalar *ya, *ta;

      PetscCall(NNDataGetBatch(train, n, perm + start, x, t));
      if (net->gradcheck && net->epoch == 0 && start == 0) {
        PetscReal ep, ex;
        PetscCall(NNGradientCheck(net, n, x, t, net->gradcheck_tol, &ep, &ex));
      }
      PetscCall(NNLossGradient(net, n, x, t, &L, NULL));
      PetscCheck(!PetscIsInfOrNanReal(L), comm, PETSC_ERR_FP, "Training stopped: the loss is %g at epoch %" PetscInt_FMT ", step %" PetscInt_FMT "%s%s%s; try a smaller -opt_learning_rate", (double)L, net->epoch + 1, net->step, net->checkpoint[0] ? ". The last checkpoint " : "", net->checkpoint, net->checkpoint[0] ? " is intact" : "");
      Lsum += L * n;
      if (net->lossops.classification) {
        PetscCall(VecGetArrayRead(net->act[net->nlayers], &ya));
        PetscCall(VecGetArrayRead(t, &ta));
        correct += CountCorrect(n, k, ya, ta);
        PetscCall(VecRestoreArrayRead(t, &ta));
        PetscCall(VecRestoreArrayRead(net->act[net->nlayers], &ya));
      }
      PetscCall(NNOptStep(net->opt, net->theta, net->dtheta));
      net->step++;
    }
    PetscCall(PetscTime(&t1));
    if (net->checkpoint[0] && ((net->epoch + 1) % net->checkpoint_every == 0 || net->epoch + 1 == net->epochs)) {
      net->epoch++; /* the checkpoint records the epochs completed */
      PetscCall(NNCheckpointSave(net, net->checkpoint));
      net->epoch--;
    }
    if (net->monitor) {
      if (test) PetscCall(NNEvaluate(net, test, &tloss, &tacc));
      PetscCall(NNOptGetLearningRate(net->opt, &lr));
      if (net->lossops.classification) {
        PetscCall(PetscViewerASCIIPrintf(viewer, "Epoch %3" PetscInt_FMT "/%" PetscInt_FMT ": loss %.4f  train acc %.4f", net->epoch + 1, net->epochs, (double)(Lsum / N), (double)correct / N));
        if (test) PetscCall(PetscViewerASCIIPrintf(viewer, "  test loss %.4f  test acc %.4f", (double)tloss, (double)tacc));
      } else {
        PetscCall(PetscViewerASCIIPrintf(viewer, "Epoch %3" PetscInt_FMT "/%" PetscInt_FMT ": loss %.6e", net->epoch + 1, net->epochs, (double)(Lsum / N)));
        if (test) PetscCall(PetscViewerASCIIPrintf(viewer, "  test loss %.6e", (double)tloss));
      }
      PetscCall(PetscViewerASCIIPrintf(viewer, "  lr %.3g  time %.2f s  %.1f samples/s\n", (double)lr, t1 - t0, N / (t1 - t0)));
    }
  }
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(PetscFree(perm));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- TAO */
typedef struct {
  NN       net;
  NNData   data;
  Vec      x, t;
  PetscInt N;
} NNTaoCtx;

/* full-batch loss and gradient over the whole data set, averaged per sample */
static PetscErrorCode NNTaoObjectiveAndGradient(Tao tao PETSC_UNUSED, Vec theta, PetscReal *f, Vec g, void *ctx)
{
  NNTaoCtx *c   = (NNTaoCtx *)ctx;
  NN        net = c->net;
  PetscInt *idx;

  PetscFunctionBegin;
  PetscCall(VecCopy(theta, net->theta));
  PetscCall(VecZeroEntries(g));
  *f = 0;
  PetscCall(PetscMalloc1(net->nbatch, &idx));
  for (PetscInt start = 0; start < c->N; start += net->nbatch) {
    PetscInt  n = PetscMin(net->nbatch, c->N - start);
    PetscReal L;
    for (PetscInt i = 0; i < n; i++) idx[i] = start + i;
    PetscCall(NNDataGetBatch(c->data, n, idx, c->x, c->t));
    PetscCall(NNLossGradient(net, n, c->x, c->t, &L, NULL));
    *f += L * n / c->N;
    PetscCall(VecAXPY(g, (PetscReal)n / c->N, net->dtheta));
  }
  PetscCall(PetscFree(idx));
  PetscFunctionReturn(0);
}

/*@
   NNTrainTao - trains on the whole data set (full batch) with a TAO solver: the network's
   loss and gradient become the TAO objective and gradient

   Collective

   Input Parameters:
+  net - the network
.  data - training data
-  tao - a TAO solver (type and tolerances from -tao_* options; it is given the network's options prefix)

   Notes:
   Use deterministic layers (no dropout) so the objective is a function; batch norm uses batch statistics.
   The network's batch size only limits memory: the objective is the mean over all samples.

   Level: intermediate

.seealso: `NNTrain()`, `TaoSetObjectiveAndGradient()`
@*/
PetscErrorCode NNTrainTao(NN net, NNData data, Tao tao)
{
  NNTaoCtx c;
  Vec      theta0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNCheckData(net, data));
  c.net  = net;
  c.data = data;
  PetscCall(NNDataGetNumSamples(data, &c.N));
  PetscCall(NNCreateBatchVecs(net, &c.x, &c.t));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  PetscCall(VecDuplicate(net->theta, &theta0));
  PetscCall(VecCopy(net->theta, theta0));
  PetscCall(TaoSetSolution(tao, theta0));
  PetscCall(TaoSetObjectiveAndGradient(tao, NULL, NNTaoObjectiveAndGradient, &c));
  PetscCall(TaoSolve(tao));
  PetscCall(VecCopy(theta0, net->theta));
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(VecDestroy(&theta0));
  PetscCall(VecDestroy(&c.x));
  PetscCall(VecDestroy(&c.t));
  PetscFunctionReturn(0);
}
