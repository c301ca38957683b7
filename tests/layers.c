static char help[] = "Finite-difference gradient checks of every layer type and both losses.\n\n"
                     "Each check builds a small network through the C API, draws a random batch of 5\n"
                     "samples and compares the analytic gradients (parameters and inputs) with central\n"
                     "differences (NNGradientCheck()). The program fails if any check exceeds -tol.\n\n"
                     "  -tol <1e-6>     relative tolerance\n"
                     "  -print_errors   also print the measured relative errors (not stable output)\n"
                     "  -seed <s>       seed of the random test data\n\n";

#include <petnn.h>

#define NBATCH 5

typedef struct {
  PetscRandom rand;
  PetscReal   tol;
  PetscBool   print_errors;
} Ctx;

/* uniform in [-1,1) */
static PetscErrorCode Uniform(Ctx *ctx, PetscReal *v)
{
  PetscScalar u;

  PetscFunctionBegin;
  PetscCall(PetscRandomGetValue(ctx->rand, &u));
  *v = 2 * PetscRealPart(u) - 1;
  PetscFunctionReturn(0);
}

/*
   Sets up net (MSE or cross-entropy loss, batch 5), moves the parameters away from their
   initialization (so batch-norm weight 1 / bias 0 are not special), draws inputs and targets and
   runs the gradient check. kinkfree: inputs are kept at least 0.2 away from 0 (ReLU kinks).
   warmup: number of training-mode forward passes before the check (fills running statistics).
*/
static PetscErrorCode Check(Ctx *ctx, NN net, const char label[], PetscBool kinkfree, PetscBool training, PetscInt warmup)
{
  Vec          x, t, theta;
  PetscScalar *a;
  PetscInt     nx, nt, np, nout;
  PetscReal    ep, ex, u = 0;
  NNShape      out;
  NNLossType   loss;
  PetscBool    ce;

  PetscFunctionBegin;
  PetscCall(NNSetBatchSize(net, NBATCH));
  PetscCall(NNSetUp(net));
  PetscCall(NNGetLoss(net, &loss));
  PetscCall(PetscStrcmp(loss, NNLOSSCROSSENTROPY, &ce));
  PetscCall(NNGetOutputShape(net, &out));
  nout = NNShapeSize(&out);

  PetscCall(NNGetParameters(net, &theta));
  PetscCall(VecGetLocalSize(theta, &np));
  PetscCall(VecGetArray(theta, &a));
  for (PetscInt i = 0; i < np; i++) {
    PetscCall(Uniform(ctx, &u));
    a[i] += 0.2 * u;
  }
  PetscCall(VecRestoreArray(theta, &a));

  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));

  /* training-mode passes on other batches, e.g. to move batch-norm running statistics */
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  for (PetscInt w = 0; w < warmup; w++) {
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < nx; i++) {
      PetscCall(Uniform(ctx, &u));
      a[i] = 1.5 * u + 0.3;
    }
    PetscCall(VecRestoreArray(x, &a));
    PetscCall(NNForward(net, NBATCH, x, NULL));
  }
  PetscCall(NNSetTraining(net, training));

  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < nx; i++) {
    PetscCall(Uniform(ctx, &u));
    a[i] = kinkfree ? (u >= 0 ? 0.2 + 0.8 * u : -0.2 + 0.8 * u) : u;
  }
  PetscCall(VecRestoreArray(x, &a));
  /* MSE targets near the outputs: a small loss keeps the round-off of the finite differences
     (about 1e-16 |L| / h) well below the tolerance relative to the gradient (about |L|^(1/2)) */
  if (!ce) {
    Vec                y;
    const PetscScalar *ya;
    PetscCall(NNForward(net, NBATCH, x, &y));
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArray(t, &a));
    for (PetscInt i = 0; i < nt; i++) {
      PetscCall(Uniform(ctx, &u));
      a[i] = ya[i] + 0.1 * u;
    }
    PetscCall(VecRestoreArray(t, &a));
    PetscCall(VecRestoreArrayRead(y, &ya));
  } else {
    PetscCall(VecGetArray(t, &a));
    for (PetscInt i = 0; i < nt; i++) {
      PetscCall(Uniform(ctx, &u));
      a[i] = (PetscReal)PetscMin(nout - 1, (PetscInt)(0.5 * (u + 1) * nout));
    }
    PetscCall(VecRestoreArray(t, &a));
  }

  PetscCall(NNGradientCheck(net, NBATCH, x, t, ctx->tol, &ep, &ex));
  if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: max rel. error parameters %.3e, inputs %.3e\n", label, (double)ep, (double)ex));
  PetscCheck(ep < ctx->tol && ex < ctx->tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: gradient check FAILED: parameter error %g, input error %g, tolerance %g", label, (double)ep, (double)ex, (double)ctx->tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: gradient check PASSED\n", label));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

static PetscErrorCode NewNet(PetscInt ndim, const PetscInt dim[], NN *net)
{
  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetInputShape(*net, ndim, dim));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNSetBatchSize(*net, NBATCH));
  PetscFunctionReturn(0);
}

static PetscErrorCode AddDense(NN net, const char name[], PetscInt units, PetscBool bias, NNLayer *l)
{
  NNLayer d;

  PetscFunctionBegin;
  PetscCall(NNAddLayer(net, NNLAYERDENSE, name, &d));
  PetscCall(NNLayerDenseSetUnits(d, units));
  PetscCall(NNLayerDenseSetBias(d, bias));
  if (l) *l = d;
  PetscFunctionReturn(0);
}

static PetscErrorCode InnerDense(NNLayer res, const char name[], PetscInt units, PetscBool bias)
{
  NNLayer d;

  PetscFunctionBegin;
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERDENSE, name, &d));
  PetscCall(NNLayerDenseSetUnits(d, units));
  PetscCall(NNLayerDenseSetBias(d, bias));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Ctx         ctx;
  NN          net;
  NNLayer     l, res;
  PetscInt    d4[] = {4}, d6[] = {6}, d234[] = {2, 3, 4};
  const char *smooth[] = {NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU};
  PetscInt    seed     = 20240611;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  ctx.tol          = 1e-6;
  ctx.print_errors = PETSC_FALSE;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Layer gradient checks", NULL);
  PetscCall(PetscOptionsReal("-tol", "Relative tolerance", NULL, ctx.tol, &ctx.tol, NULL));
  PetscCall(PetscOptionsBool("-print_errors", "Print the measured errors", NULL, ctx.print_errors, &ctx.print_errors, NULL));
  PetscCall(PetscOptionsInt("-seed", "Seed of the test data and parameter perturbations", NULL, seed, &seed, NULL));
  PetscOptionsEnd();
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &ctx.rand));
  PetscCall(PetscRandomSetType(ctx.rand, PETSCRAND48));
  PetscCall(PetscRandomSetSeed(ctx.rand, (unsigned long)seed));
  PetscCall(PetscRandomSeed(ctx.rand));

  /* dense */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(AddDense(net, "fc", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer dense", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* flatten on (2,3,4) samples, followed by dense so the flattened order matters */
  PetscCall(NewNet(3, d234, &net));
  PetscCall(NNAddLayer(net, NNLAYERFLATTEN, "flat", NULL));
  PetscCall(AddDense(net, "fc", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer flatten", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* relu and leaky_relu directly on inputs away from the kink at 0 */
  PetscCall(NewNet(1, d6, &net));
  PetscCall(NNAddLayer(net, NNLAYERRELU, "act", NULL));
  PetscCall(AddDense(net, "fc", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer relu", PETSC_TRUE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  PetscCall(NewNet(1, d6, &net));
  PetscCall(NNAddLayer(net, NNLAYERLEAKYRELU, "act", &l));
  PetscCall(NNLayerLeakyReLUSetSlope(l, 0.1));
  PetscCall(AddDense(net, "fc", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer leaky_relu", PETSC_TRUE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* smooth activations between two dense layers */
  for (int k = 0; k < 3; k++) {
    char label[64];
    PetscCall(NewNet(1, d4, &net));
    PetscCall(AddDense(net, "fc1", 6, PETSC_TRUE, NULL));
    PetscCall(NNAddLayer(net, smooth[k], "act", NULL));
    PetscCall(AddDense(net, "fc2", 3, PETSC_TRUE, NULL));
    PetscCall(PetscSNPrintf(label, sizeof(label), "layer %s", smooth[k]));
    PetscCall(Check(&ctx, net, label, PETSC_FALSE, PETSC_TRUE, 0));
    PetscCall(NNDestroy(&net));
  }

  /* dropout in training mode: the check restores the generator, so every evaluation uses one mask */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(AddDense(net, "fc1", 8, PETSC_TRUE, NULL));
  PetscCall(NNAddLayer(net, NNLAYERDROPOUT, "drop", &l));
  PetscCall(NNLayerDropoutSetRate(l, 0.3));
  PetscCall(AddDense(net, "fc2", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer dropout (training mode)", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* batch norm: full batch-statistics gradient (training) and the affine map (evaluation, after
     three training passes have moved the running statistics). The dense layer in front has no
     bias: batch norm removes it, and its exactly-zero gradient is a poor finite-difference target. */
  for (int training = 1; training >= 0; training--) {
    PetscCall(NewNet(1, d4, &net));
    PetscCall(AddDense(net, "fc1", 6, PETSC_FALSE, NULL));
    PetscCall(NNAddLayer(net, NNLAYERBATCHNORM1D, "bn", NULL));
    PetscCall(NNAddLayer(net, NNLAYERTANH, "act", NULL));
    PetscCall(AddDense(net, "fc2", 3, PETSC_TRUE, NULL));
    PetscCall(Check(&ctx, net, training ? "layer batchnorm1d (training mode)" : "layer batchnorm1d (eval mode)", PETSC_FALSE, (PetscBool)training, training ? 0 : 3));
    PetscCall(NNDestroy(&net));
  }
  /* batch norm directly on the inputs: checks its input gradient alone */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(NNAddLayer(net, NNLAYERBATCHNORM1D, "bn", NULL));
  PetscCall(NNAddLayer(net, NNLAYERSIGMOID, "act", NULL));
  PetscCall(Check(&ctx, net, "layer batchnorm1d (training mode, on the inputs)", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* residual: x + dense(tanh(dense(x))) between dense layers */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(AddDense(net, "fc1", 5, PETSC_TRUE, NULL));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", &res));
  PetscCall(InnerDense(res, "fa", 6, PETSC_TRUE));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERTANH, "ta", NULL));
  PetscCall(InnerDense(res, "fb", 5, PETSC_TRUE));
  PetscCall(AddDense(net, "fc2", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer residual", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* residual alone on the inputs (its input gradient dx = dy + block'(x)^T dy) */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", &res));
  PetscCall(InnerDense(res, "fa", 6, PETSC_TRUE));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERTANH, "ta", NULL));
  PetscCall(InnerDense(res, "fb", 4, PETSC_TRUE));
  PetscCall(Check(&ctx, net, "layer residual (on the inputs)", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* residual whose block has parameters, buffers and random state: slices and masks of children */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(AddDense(net, "fc1", 5, PETSC_TRUE, NULL));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", &res));
  PetscCall(InnerDense(res, "fa", 6, PETSC_FALSE));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERBATCHNORM1D, "bn", NULL));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERGELU, "ga", NULL));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERDROPOUT, "drop", &l));
  PetscCall(NNLayerDropoutSetRate(l, 0.25));
  PetscCall(InnerDense(res, "fb", 5, PETSC_TRUE));
  PetscCall(AddDense(net, "fc2", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "layer residual (batchnorm1d, gelu, dropout inside)", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  /* cross-entropy loss with integer class targets */
  PetscCall(NewNet(1, d4, &net));
  PetscCall(NNSetLoss(net, NNLOSSCROSSENTROPY));
  PetscCall(AddDense(net, "fc", 3, PETSC_TRUE, NULL));
  PetscCall(Check(&ctx, net, "loss cross_entropy", PETSC_FALSE, PETSC_TRUE, 0));
  PetscCall(NNDestroy(&net));

  PetscCall(PetscRandomDestroy(&ctx.rand));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:

TEST*/
