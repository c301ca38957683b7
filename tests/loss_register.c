static char help[] = "A loss registered from outside the library (NNLossRegister()): an L1 loss selected with -nn_loss,\n"
                     "its value against a hand computation, its gradient against central differences, a few\n"
                     "optimizer steps that lower it, and the unknown-loss error listing it among the valid ones.\n\n";

#include <petnn.h>

/* mean absolute error over all entries; d|r|/dr taken as sign(r) (0 at r = 0, never hit here) */
static PetscErrorCode L1(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy)
{
  PetscReal L = 0, N = (PetscReal)n * k;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < n * k; i++) {
    PetscReal r = PetscRealPart(y[i] - t[i]);
    L += PetscAbsReal(r);
    if (dy) dy[i] = (r > 0 ? 1.0 : (r < 0 ? -1.0 : 0.0)) / N;
  }
  *loss = L / N;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossCreate_L1(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->eval           = L1;
  ops->classification = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode CatchError(MPI_Comm comm PETSC_UNUSED, int line PETSC_UNUSED, const char *fun PETSC_UNUSED, const char *file PETSC_UNUSED, PetscErrorCode n, PetscErrorType p PETSC_UNUSED, const char *mess, void *ctx)
{
  char *msg = (char *)ctx;

  if (!msg[0] && mess) PetscStrncpy(msg, mess, 1024);
  return n;
}

int main(int argc, char **argv)
{
  NN                 net;
  NNOpt              opt;
  NNLossType         type;
  Vec                x, t, y, theta, grad;
  PetscInt           n = 4, k;
  PetscScalar       *xa, *ta;
  const PetscScalar *ya, *tr;
  PetscReal          loss, ref = 0, first, errp, erri;
  char               msg[1024] = "", *found;
  PetscErrorCode     ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(NNLossRegister("l1", NNLossCreate_L1));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetBatchSize(net, n));
  PetscCall(NNSetSeed(net, 3));
  PetscCall(NNSetFromOptions(net)); /* -nn_loss l1 and the layers */
  PetscCall(NNGetLoss(net, &type));
  PetscCheck(!strcmp(type, "l1"), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "-nn_loss l1 gave loss %s", type);
  PetscCall(NNSetUp(net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetArray(x, &xa));
  PetscCall(VecGetArray(t, &ta));
  PetscCall(VecGetLocalSize(t, &k));
  for (PetscInt i = 0; i < 3 * n; i++) xa[i] = PetscSinReal(1.0 + i);
  for (PetscInt i = 0; i < k; i++) ta[i] = 2.0 + PetscCosReal(0.5 * i); /* far from the initial outputs: no kink */
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(VecRestoreArray(t, &ta));

  /* the value: the mean of |y - t| over the batch */
  PetscCall(NNForward(net, n, x, &y));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(t, &tr));
  for (PetscInt i = 0; i < k; i++) ref += PetscAbsReal(PetscRealPart(ya[i] - tr[i]));
  ref /= k;
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecRestoreArrayRead(t, &tr));
  PetscCall(NNLossGradient(net, n, x, t, &first, NULL));
  PetscCheck(PetscAbsReal(first - ref) <= 1e-14 * ref, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "L1 loss %g, by hand %g", (double)first, (double)ref);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "registered loss l1: value matches the hand computation\n"));

  /* the gradient: central differences over parameters and inputs */
  PetscCall(NNGradientCheck(net, n, x, t, 1e-6, &errp, &erri));
  PetscCheck(errp < 1e-6 && erri < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "L1 gradient check: relative errors %g (parameters), %g (inputs)", (double)errp, (double)erri);

  /* training with it: a few plain SGD steps lower the loss */
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(NNGetGradient(net, &grad));
  PetscCall(NNOptSetUp(opt, theta));
  for (PetscInt s = 0; s < 20; s++) {
    PetscCall(NNLossGradient(net, n, x, t, &loss, NULL));
    PetscCall(NNOptStep(opt, theta, grad));
  }
  PetscCall(NNLossGradient(net, n, x, t, &loss, NULL));
  PetscCheck(loss < 0.9 * first, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "20 SGD steps on the L1 loss: %g -> %g", (double)first, (double)loss);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "20 SGD steps lower the l1 loss\n"));

  /* an unknown name lists the registered losses, the user's included */
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = NNSetLoss(net, "hinge");
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNSetLoss(hinge) did not fail");
  PetscCall(PetscStrstr(msg, "valid losses: bce_with_logits cross_entropy huber l1 mse rel_l2", &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the unknown-loss message \"%s\" does not list the registered losses", msg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "unknown loss: the error lists bce_with_logits cross_entropy huber l1 mse rel_l2\n"));

  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      args: -nn_loss l1 -nn_input_shape 3 -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 5 -act_type tanh -fc2_type dense -fc2_units 2 -opt_type sgd -opt_learning_rate 0.05

TEST*/
