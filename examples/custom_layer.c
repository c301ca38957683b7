static char help[] = "A layer type written outside the library: swish with a learnable slope per feature,\n"
                     "  y = x sigmoid(beta_f x)   (beta_f = 1 for every feature f is torch.nn.SiLU),\n"
                     "registered with NNLayerRegister() as \"swish\" and trained in a network read from an options file\n"
                     "(examples/custom_layer.opts). The program checks the layer three ways:\n"
                     "  1. against a closed-form reference written out here (outputs, loss, input and beta gradients);\n"
                     "  2. the whole network against central finite differences (NNGradientCheck());\n"
                     "  3. (examples/custom_layer_torch.py, when PyTorch is there) against torch autograd, from -dump <file>.\n"
                     "Then it trains the network (NNTrain()) on a small regression problem. See tutorials/08-custom-layer.md.\n\n"
                     "  -ntrain <n>        training samples (default 256)\n"
                     "  -dump <file>       write the reference problem and PetNN's results as text, for the torch check\n\n";

#include <petnn.h>
#include <petnn/private/layerimpl.h> /* the ops table and the layer struct a layer type fills */

/* ---------------------------------------------------------------- the layer type
   Everything a layer type provides; layers/core/dense.c explains the contract at length. */
typedef struct {
  PetscReal beta0; /* initial beta (-<prefix>beta_init) */
} Swish;

static PetscScalar Sigmoid(PetscScalar z)
{
  return z >= 0 ? 1 / (1 + PetscExpScalar(-z)) : PetscExpScalar(z) / (1 + PetscExpScalar(z));
}

/* shapes and tensors: F features in, F out; one parameter tensor "beta" [F] */
static PetscErrorCode SwishSetUp(NNLayer l)
{
  PetscInt F;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckInputRank(l, 1)); /* flat features: a clear error after a (C,H,W) layer */
  F           = l->inshape.dim[0];
  l->outshape = l->inshape;
  PetscCall(NNLayerAddTensor(l, "beta", NN_TENSOR_PARAM, 1, &F));
  PetscFunctionReturn(0);
}

static PetscErrorCode SwishInitialize(NNLayer l)
{
  PetscScalar *beta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  for (PetscInt f = 0; f < l->nparam; f++) beta[f] = ((Swish *)l->data)->beta0;
  PetscFunctionReturn(0);
}

/* y = x sigmoid(beta x), sample by sample ([n][F], each sample contiguous) */
static PetscErrorCode SwishForward(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  const PetscInt     F    = l->inshape.dim[0];
  const PetscScalar *beta = l->theta;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt f = 0; f < F; f++) y[s * F + f] = x[s * F + f] * Sigmoid(beta[f] * x[s * F + f]);
  PetscCall(PetscLogFlops(5.0 * n * F));
  PetscFunctionReturn(0);
}

/* the backward contract: dx = f'(x)^T dy (dx may be NULL: not wanted), and ADD the parameter gradient
   into l->dtheta (it accumulates over the batch and, in ODE blocks, over time steps):
     dy/dx    = s + beta x s (1 - s),   dy/dbeta = x^2 s (1 - s),   s = sigmoid(beta x) */
static PetscErrorCode SwishBackward(NNLayer l, PetscInt n, const PetscScalar *x, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  const PetscInt     F     = l->inshape.dim[0];
  const PetscScalar *beta  = l->theta;
  PetscScalar       *dbeta = l->dtheta;

  PetscFunctionBegin;
  for (PetscInt s = 0; s < n; s++)
    for (PetscInt f = 0; f < F; f++) {
      const PetscScalar xi = x[s * F + f], g = dy[s * F + f], sg = Sigmoid(beta[f] * xi), ds = sg * (1 - sg);
      if (dx) dx[s * F + f] = g * (sg + beta[f] * xi * ds);
      dbeta[f] += g * xi * xi * ds;
    }
  PetscCall(PetscLogFlops(12.0 * n * F));
  PetscFunctionReturn(0);
}

static PetscErrorCode SwishSetFromOptions(NNLayer l, NNOptionItems PetscOptionsObject)
{
  Swish *sw = (Swish *)l->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Swish layer options");
  PetscCall(PetscOptionsReal("-beta_init", "Initial slope beta of every feature", NULL, sw->beta0, &sw->beta0, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode SwishView(NNLayer l, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "y = x sigmoid(beta x), a learnable beta per feature (initial %g)\n", (double)((Swish *)l->data)->beta0));
  PetscFunctionReturn(0);
}

static PetscErrorCode SwishDestroy(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/* the create routine NNLayerRegister() records: fill the ops table, allocate the type's data */
static PetscErrorCode NNLayerCreate_Swish(NNLayer l)
{
  Swish *sw;

  PetscFunctionBegin;
  PetscCall(PetscNew(&sw));
  sw->beta0              = 1.0;
  l->data                = sw;
  l->ops->setup          = SwishSetUp;
  l->ops->initialize     = SwishInitialize;
  l->ops->forward        = SwishForward;
  l->ops->backward       = SwishBackward;
  l->ops->setfromoptions = SwishSetFromOptions;
  l->ops->view           = SwishView;
  l->ops->destroy        = SwishDestroy;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- 1. the closed-form reference */
#define NF 5 /* features */
#define NS 4 /* samples */

/* splitmix64 in [-1, 1): the same numbers on every machine */
static PetscReal Uniform(uint64_t *st)
{
  uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z          = z ^ (z >> 31);
  return 2 * (PetscReal)(z >> 11) * 0x1.0p-53 - 1;
}

static PetscReal MaxRelError(PetscInt m, const PetscScalar *a, const PetscScalar *ref)
{
  PetscReal d = 0, r = 0;

  for (PetscInt i = 0; i < m; i++) {
    d = PetscMax(d, PetscAbsScalar(a[i] - ref[i]));
    r = PetscMax(r, PetscAbsScalar(ref[i]));
  }
  return d / PetscMax(r, 1e-300);
}

static PetscErrorCode DumpArray(FILE *fp, const char name[], PetscInt m, const PetscScalar *a)
{
  PetscFunctionBegin;
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "%s", name));
  for (PetscInt i = 0; i < m; i++) PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, " %.17g", (double)PetscRealPart(a[i])));
  PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "\n"));
  PetscFunctionReturn(0);
}

/* a network of one swish layer and the MSE loss; PetNN's output, loss and gradients against
   y = x s, L = sum (y - t)^2 / (n F), dL/dy = 2 (y - t) / (n F), dx = dL/dy (s + beta x s (1-s)),
   dbeta_f = sum_s dL/dy x^2 s (1-s), written out here independently of the layer's code */
static PetscErrorCode ReferenceCheck(const char dump[])
{
  NN                 net;
  Vec                x, t, dx, theta, grad, y;
  PetscScalar       *xa, *ta, *pa, xr[NS * NF], tr[NS * NF], br[NF], yr[NS * NF], dxr[NS * NF], dbr[NF] = {0};
  const PetscScalar *ya, *ga, *dxa;
  PetscReal          L, Lr = 0, err[4];
  uint64_t           st = 7;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < NS * NF; i++) xr[i] = 3 * Uniform(&st);
  for (PetscInt i = 0; i < NS * NF; i++) tr[i] = Uniform(&st);
  for (PetscInt f = 0; f < NF; f++) br[f] = 0.5 + Uniform(&st);
  for (PetscInt s = 0; s < NS; s++)
    for (PetscInt f = 0; f < NF; f++) {
      PetscInt    i  = s * NF + f;
      PetscScalar z  = br[f] * xr[i], sg = z >= 0 ? 1 / (1 + PetscExpScalar(-z)) : PetscExpScalar(z) / (1 + PetscExpScalar(z));
      PetscScalar gy = 2 * (sg * xr[i] - tr[i]) / (NS * NF);
      yr[i]          = xr[i] * sg;
      Lr += PetscRealPart((yr[i] - tr[i]) * (yr[i] - tr[i])) / (NS * NF);
      dxr[i] = gy * (sg + z * sg * (1 - sg));
      dbr[f] += gy * xr[i] * xr[i] * sg * (1 - sg);
    }

  PetscCall(NNCreate(PETSC_COMM_SELF, &net));
  PetscCall(NNSetOptionsPrefix(net, "ref_"));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){NF}));
  PetscCall(NNSetBatchSize(net, NS));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, "swish", "act", NULL));
  PetscCall(NNSetUp(net));
  PetscCall(NNGetParameters(net, &theta)); /* the network's only parameters are the layer's beta */
  PetscCall(VecGetArray(theta, &pa));
  for (PetscInt f = 0; f < NF; f++) pa[f] = br[f];
  PetscCall(VecRestoreArray(theta, &pa));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetArrayWrite(x, &xa));
  PetscCall(VecGetArrayWrite(t, &ta));
  for (PetscInt i = 0; i < NS * NF; i++) {
    xa[i] = xr[i];
    ta[i] = tr[i];
  }
  PetscCall(VecRestoreArrayWrite(t, &ta));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(NNLossGradient(net, NS, x, t, &L, dx));
  PetscCall(NNForward(net, NS, x, &y)); /* the output of the same pass (evaluation repeats it exactly) */
  PetscCall(NNGetGradient(net, &grad));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(grad, &ga));
  PetscCall(VecGetArrayRead(dx, &dxa));
  err[0] = MaxRelError(NS * NF, ya, yr);
  err[1] = PetscAbsReal(L - Lr) / Lr;
  err[2] = MaxRelError(NS * NF, dxa, dxr);
  err[3] = MaxRelError(NF, ga, dbr);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Reference check (closed form): output, loss, input gradient, beta gradient agree to 1e-13: %s\n", err[0] < 1e-13 && err[1] < 1e-13 && err[2] < 1e-13 && err[3] < 1e-13 ? "PASSED" : "FAILED"));
  PetscCall(PetscInfo(NULL, "reference errors %g %g %g %g\n", (double)err[0], (double)err[1], (double)err[2], (double)err[3]));
  if (dump[0]) {
    FILE *fp;
    PetscCall(PetscFOpen(PETSC_COMM_SELF, dump, "w", &fp));
    PetscCall(DumpArray(fp, "shape", 0, NULL));
    PetscCall(PetscFPrintf(PETSC_COMM_SELF, fp, "%d %d\n", NS, NF));
    PetscCall(DumpArray(fp, "x", NS * NF, xr));
    PetscCall(DumpArray(fp, "t", NS * NF, tr));
    PetscCall(DumpArray(fp, "beta", NF, br));
    PetscCall(DumpArray(fp, "y", NS * NF, ya));
    PetscCall(DumpArray(fp, "loss", 1, (PetscScalar[]){L}));
    PetscCall(DumpArray(fp, "dx", NS * NF, dxa));
    PetscCall(DumpArray(fp, "dbeta", NF, ga));
    PetscCall(PetscFClose(PETSC_COMM_SELF, fp));
  }
  PetscCall(VecRestoreArrayRead(dx, &dxa));
  PetscCall(VecRestoreArrayRead(grad, &ga));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dx));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- 2. and 4. the network of the options file */
/* n samples (x1, x2) in [-2, 2]^2 with target sin(x1) cos(x2), as a PETSc binary file of two Vecs */
static PetscErrorCode WriteRegressionSet(const char file[], PetscInt n)
{
  Vec          X, T;
  PetscScalar *xa, *ta;
  PetscViewer  viewer;
  uint64_t     st = 11;

  PetscFunctionBegin;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2 * n, &X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &T));
  PetscCall(VecGetArrayWrite(X, &xa));
  PetscCall(VecGetArrayWrite(T, &ta));
  for (PetscInt i = 0; i < n; i++) {
    xa[2 * i]     = 2 * Uniform(&st);
    xa[2 * i + 1] = 2 * Uniform(&st);
    ta[i]         = PetscSinReal(xa[2 * i]) * PetscCosReal(xa[2 * i + 1]);
  }
  PetscCall(VecRestoreArrayWrite(T, &ta));
  PetscCall(VecRestoreArrayWrite(X, &xa));
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_SELF, file, FILE_MODE_WRITE, &viewer));
  PetscCall(VecView(X, viewer));
  PetscCall(VecView(T, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(VecDestroy(&X));
  PetscCall(VecDestroy(&T));
  PetscFunctionReturn(0);
}

/* finite differences on the first batch, then training; the loss must drop */
static PetscErrorCode TrainFromOptions(PetscInt ntrain)
{
  NN        net;
  NNData    train;
  Vec       x, t;
  PetscInt  nb, idx[8];
  PetscReal L0, L1, ep, ex;
  PetscBool passed;

  PetscFunctionBegin;
  PetscCall(WriteRegressionSet("custom_layer_train.bin", ntrain));
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &train));
  PetscCall(NNDataSetType(train, NNDATABINARY));
  PetscCall(NNDataSetFileName(train, "custom_layer_train.bin"));
  PetscCall(NNDataSetOptionsPrefix(train, "train_"));
  PetscCall(NNDataSetFromOptions(train));
  PetscCall(NNDataSetUp(train));

  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){2}));
  PetscCall(NNSetFromOptions(net)); /* -nn_layers fc1,act,fc2 -act_type swish ... (custom_layer.opts) */
  PetscCall(NNSetUp(net));
  PetscCall(NNView(net, PETSC_VIEWER_STDOUT_WORLD));

  PetscCall(NNGetBatchSize(net, &nb));
  nb = PetscMin(nb, 8);
  for (PetscInt i = 0; i < nb; i++) idx[i] = i;
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(NNDataGetBatch(train, nb, idx, x, t));
  PetscCall(NNGradientCheck(net, nb, x, t, 1e-6, &ep, &ex));

  PetscCall(NNEvaluate(net, train, &L0, NULL));
  PetscCall(NNTrain(net, train, NULL));
  PetscCall(NNEvaluate(net, train, &L1, NULL));
  passed = (PetscBool)(L1 < 0.5 * L0);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Training: loss %.3f -> %.3f, at least halved: %s\n", (double)L0, (double)L1, passed ? "PASSED" : "FAILED"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDataDestroy(&train));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt ntrain = 256;
  char     dump[PETSC_MAX_PATH_LEN] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ntrain", &ntrain, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dump", dump, sizeof(dump), NULL));
  /* the new type, known to -<layer>_type and NNAddLayer() from here on, listed by -help */
  PetscCall(NNLayerRegister("swish", NNLayerCreate_Swish));
  PetscCall(ReferenceCheck(dump));
  if (!dump[0]) PetscCall(TrainFromOptions(ntrain));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      args: -options_file custom_layer.opts

   test:
      suffix: torch
      requires: torch
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/examples/custom_layer_torch.py ${exe}

TEST*/
