static char help[] = "Losses on spatial (DMDA) network outputs (mse, l1, huber, rel_l2, bce_with_logits): loss, parameter\n"
                     "and input gradients of a partial batch on the run's communicator against a serial copy, against a\n"
                     "serial network of capacity n and against the same network ending on spatial_flatten (sequential\n"
                     "evaluation); unused batch slots of the output gradient are zero; finite-difference checks; the\n"
                     "errors for bad targets and options; the loss in NNView().\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define NB 3 /* batch capacity */
#define NP 2 /* samples in the partial batch */

static PetscErrorCode ReportErr(const char what[], PetscReal err)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: rel. error %.3e\n", what, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g", what, (double)err, (double)tol);
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| over the first N entries of two Vecs (replicated) */
static PetscErrorCode CompareVecs(const char what[], PetscInt N, Vec a, Vec b)
{
  const PetscScalar *x, *y;
  PetscReal          e = 0, nb = 0;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(a, &x));
  PetscCall(VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < N; i++) {
    e += PetscSqr(PetscRealPart(x[i] - y[i]));
    nb += PetscSqr(PetscRealPart(y[i]));
  }
  PetscCall(VecRestoreArrayRead(b, &y));
  PetscCall(VecRestoreArrayRead(a, &x));
  PetscCall(ReportErr(what, PetscSqrtReal(e) / PetscMax(PetscSqrtReal(nb), 1e-300)));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillReplicated(PetscRandom r, PetscInt n, PetscReal lo, PetscReal hi, PetscScalar *a)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar v;
    PetscCall(PetscRandomGetValue(r, &v));
    a[i] = lo + (hi - lo) * v;
  }
  PetscFunctionReturn(0);
}

/* (3,6,7) or (2,5,4,3) -> to_spatial -> conv 2 filters [-> spatial_flatten] */
static PetscErrorCode Build(MPI_Comm comm, const char prefix[], NNLossType loss, PetscInt nd, PetscInt nbatch, PetscBool flat, NN *net)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetBatchSize(*net, nbatch));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, loss));
  if (nd == 2) PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){3, 6, 7}));
  else PetscCall(NNSetInputShape(*net, 4, (PetscInt[]){2, 5, 4, 3}));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, nd == 2 ? "sp" : "sq", NULL));
  PetscCall(NNAddLayer(*net, nd == 2 ? NNLAYERCONV2D : NNLAYERCONV3D, "cv", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  if (flat) PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNSetFromOptions(*net)); /* -nn_loss_huber_delta */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* inputs and targets (capacity NB, sequential, the same on every rank); bce_with_logits: targets in [0,1] */
static PetscErrorCode FillBatch(NN net, NNLossType loss, Vec *x, Vec *t)
{
  PetscRandom  r;
  PetscScalar *a;
  PetscInt     n;
  PetscBool    bce;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(loss, NNLOSSBCEWITHLOGITS, &bce));
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 23));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecGetLocalSize(*x, &n));
  PetscCall(VecGetArray(*x, &a));
  PetscCall(FillReplicated(r, n, -2.0, 2.0, a));
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetLocalSize(*t, &n));
  PetscCall(VecGetArray(*t, &a));
  PetscCall(FillReplicated(r, n, bce ? 0.0 : -1.0, 1.0, a));
  PetscCall(VecRestoreArray(*t, &a));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* max |v| over the batch slots s >= NP of a spatial activation with C channels, over all ranks */
static PetscErrorCode MaxUnusedSlots(Vec v, PetscInt C, PetscReal *mx)
{
  const PetscScalar *a;
  PetscInt           len, D = NB * C;

  PetscFunctionBegin;
  *mx = 0;
  PetscCall(VecGetLocalSize(v, &len));
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt p = 0; p < len / D; p++)
    for (PetscInt i = NP * C; i < D; i++) *mx = PetscMax(*mx, PetscAbsScalar(a[p * D + i]));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mx, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)v)));
  PetscFunctionReturn(0);
}

/* nets: 0 on the run's communicator, 1 its serial copy, 2 serial of capacity NP, 3 serial ending on spatial_flatten */
static PetscErrorCode TestLoss(NNLossType loss, PetscInt nd)
{
  NN          net[4];
  const char *other[4] = {NULL, "serial copy", "serial network of capacity n", "sequential evaluation (spatial_flatten)"};
  Vec         x, t, dx[4], g[4], dyo;
  PetscReal   L[4], ep, ei, mx;
  PetscInt    insz, np;
  NNShape     s;
  char        what[192];

  PetscFunctionBegin;
  PetscCall(Build(PETSC_COMM_WORLD, NULL, loss, nd, NB, PETSC_FALSE, &net[0]));
  PetscCall(Build(PETSC_COMM_SELF, "serial_", loss, nd, NB, PETSC_FALSE, &net[1]));
  PetscCall(Build(PETSC_COMM_SELF, "serial_", loss, nd, NP, PETSC_FALSE, &net[2]));
  PetscCall(Build(PETSC_COMM_SELF, "serial_", loss, nd, NB, PETSC_TRUE, &net[3]));
  PetscCall(NNGetInputShape(net[0], &s));
  insz = NNShapeSize(&s);
  PetscCall(NNGetNumParameters(net[0], &np));
  PetscCall(FillBatch(net[0], loss, &x, &t));
  for (PetscInt k = 0; k < 4; k++) {
    PetscCall(VecDuplicate(x, &dx[k]));
    PetscCall(NNLossGradient(net[k], NP, x, t, &L[k], dx[k]));
    PetscCall(NNGetGradient(net[k], &g[k]));
  }
  for (PetscInt k = 1; k < 4; k++) {
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s loss on a %" PetscInt_FMT "-d spatial output, n=%d of %d: loss, parameter and input gradients equal the %s's", loss, nd, NP, NB, other[k]));
    PetscCall(ReportErr("loss", PetscAbsReal(L[0] - L[k]) / PetscAbsReal(L[k])));
    PetscCall(CompareVecs("parameter gradient", np, g[0], g[k]));
    PetscCall(CompareVecs("input gradient", NP * insz, dx[0], dx[k]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s (rel. error < %g)\n", what, (double)tol));
  }
  PetscCall(NNGetActivationGradients(net[0], "cv", NULL, &dyo));
  PetscCall(MaxUnusedSlots(dyo, 2, &mx));
  PetscCheck(mx == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the output gradient is %g in slots s >= n", loss, (double)mx);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s loss on a %" PetscInt_FMT "-d spatial output: zero gradient in the unused batch slots; finite differences:\n", loss, nd));
  PetscCall(NNGradientCheck(net[0], NP, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: %g %g", (double)ep, (double)ei);
  for (PetscInt k = 0; k < 4; k++) {
    PetscCall(VecDestroy(&dx[k]));
    PetscCall(NNDestroy(&net[k]));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscFunctionReturn(0);
}

static PetscErrorCode CatchError(MPI_Comm comm PETSC_UNUSED, int line PETSC_UNUSED, const char *fun PETSC_UNUSED, const char *file PETSC_UNUSED, PetscErrorCode n, PetscErrorType p PETSC_UNUSED, const char *mess, void *ctx)
{
  char *msg = (char *)ctx;

  if (!msg[0] && mess) PetscStrncpy(msg, mess, 1024);
  return n;
}

/* the error message up to the rank that found it (which depends on the decomposition) */
static PetscErrorCode PrintError(const char what[], PetscErrorCode ierr, char msg[])
{
  char *r;

  PetscFunctionBegin;
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s was accepted", what);
  PetscCall(PetscStrstr(msg, " (found on rank", &r));
  if (r) *r = 0;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s\n", what, msg));
  PetscFunctionReturn(0);
}

/* a loss with only the sequential eval routine */
static PetscErrorCode EvalOnly(PetscInt n, PetscInt k, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy)
{
  PetscFunctionBegin;
  *loss = 0;
  for (PetscInt i = 0; i < n * k; i++) {
    *loss += PetscRealPart(y[i] - t[i]);
    if (dy) dy[i] = 1;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLossCreate_EvalOnly(NNLossOps *ops)
{
  PetscFunctionBegin;
  ops->eval = EvalOnly;
  PetscFunctionReturn(0);
}

/* the loss error a batch gives on the network "loss" (spatial 2-d output), with target entry i set to v (i < 0: sample 1 zero) */
static PetscErrorCode BadTarget(NNLossType loss, PetscInt i, PetscScalar v, const char what[])
{
  NN             net;
  Vec            x, t;
  PetscScalar   *a;
  PetscReal      L;
  PetscInt       nt;
  char           msg[1024] = "";
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(Build(PETSC_COMM_WORLD, NULL, loss, 2, NB, PETSC_FALSE, &net));
  PetscCall(FillBatch(net, loss, &x, &t));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(t, &a));
  if (i >= 0) a[i] = v;
  else
    for (PetscInt j = nt / NB; j < 2 * nt / NB; j++) a[j] = 0;
  PetscCall(VecRestoreArray(t, &a));
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = NNLossGradient(net, NP, x, t, &L, NULL);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PrintError(what, ierr, msg));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestErrorsAndView(void)
{
  NN             net;
  NNLayer        l;
  char           msg[1024] = "";
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(BadTarget(NNLOSSBCEWITHLOGITS, 40, 1.5, "bce_with_logits target 1.5"));
  PetscCall(BadTarget(NNLOSSBCEWITHLOGITS, 3, -0.25, "bce_with_logits target -0.25"));
  PetscCall(BadTarget(NNLOSSRELL2, -1, 0, "rel_l2 with a zero target"));
  PetscCall(NNLossRegister("eval_only", NNLossCreate_EvalOnly));
  PetscCall(BadTarget("eval_only", 0, 0, "a loss without partial sums on a spatial output"));

  /* huber delta <= 0 */
  PetscCall(PetscOptionsSetValue(NULL, "-bad_nn_loss", NNLOSSHUBER));
  PetscCall(PetscOptionsSetValue(NULL, "-bad_nn_loss_huber_delta", "-1"));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "bad_"));
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = NNSetFromOptions(net);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PrintError("-nn_loss_huber_delta -1", ierr, msg));
  PetscCall(NNDestroy(&net));

  /* the loss and its parameter in NNView() */
  PetscCall(PetscOptionsSetValue(NULL, "-view_nn_loss", NNLOSSHUBER));
  PetscCall(PetscOptionsSetValue(NULL, "-view_nn_loss_huber_delta", "0.5"));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "view_"));
  PetscCall(NNSetInputShape(net, 1, (PetscInt[]){3}));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 2));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNView(net, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const NNLossType losses[] = {NNLOSSMSE, NNLOSSL1, NNLOSSHUBER, NNLOSSRELL2, NNLOSSBCEWITHLOGITS};

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  for (size_t i = 0; i < sizeof(losses) / sizeof(losses[0]); i++) PetscCall(TestLoss(losses[i], 2));
  PetscCall(TestLoss(NNLOSSRELL2, 3));
  PetscCall(TestLoss(NNLOSSHUBER, 3));
  PetscCall(TestErrorsAndView());
  /* objects abandoned by an error (an options block, NNLossGradient()'s workspace) are not freed: skip the leak report */
  PetscCall(PetscOptionsSetValue(NULL, "-malloc_dump", "0"));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
      args: -nn_loss_huber_delta 0.3 -serial_nn_loss_huber_delta 0.3
      test:
         suffix: 1
         nsize: 1
      test:
         suffix: 2
         nsize: 2
         args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sq_da_processors_x 1 -sq_da_processors_y 1 -sq_da_processors_z 2
      test:
         suffix: 3
         nsize: 3
         args: -sp_da_processors_x 3 -sp_da_processors_y 1 -sq_da_processors_x 1 -sq_da_processors_y 1 -sq_da_processors_z 3
      test:
         suffix: 4
         nsize: 4
         args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sq_da_processors_x 2 -sq_da_processors_y 1 -sq_da_processors_z 2

   # the losses and the Huber parameter in -help; the values in <> and the order of the list are PETSc's to format
   # (3.18 lists the types in registration order, later releases in a hash table's), so the filter drops them
   test:
      suffix: help
      args: -help -nn_loss_huber_delta 0.3 -serial_nn_loss_huber_delta 0.3
      filter: grep -E "nn_loss" | sed -E -e "s/:? <[^>]*>:/:/" -e "s/[(]one of[)] .* [(]NNSetLoss[)]/(one of) ... (NNSetLoss)/"

TEST*/
