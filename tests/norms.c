static char help[] = "Per-sample normalization layers (group_norm, instance_norm, layer_norm) on dense, sequential\n"
                     "(C,L) and spatial 2-d and 3-d (DMDA) activations: outputs, losses, parameter and input gradients\n"
                     "of a partial batch on the run's communicator against a serial copy on PETSC_COMM_SELF, training\n"
                     "and evaluation modes alike, finite-difference checks, the layers' View, and the errors for bad input.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define NB 3 /* batch capacity */
#define NP 2 /* samples in the partial batch */

typedef enum {
  DENSE,  /* (6) -> dense 8 -> norm -> tanh -> dense 3 */
  SEQ,    /* (4,5) -> norm -> flatten -> dense 3 */
  SPAT2D, /* (3,6,7) -> to_spatial -> conv2d 4 -> norm -> tanh -> spatial_flatten */
  SPAT3D  /* (2,5,4,3) -> to_spatial -> conv3d 4 -> norm -> tanh -> spatial_flatten */
} Arch;

typedef struct {
  NNLayerType type;
  Arch        arch;
  PetscInt    groups; /* group_norm */
  PetscBool   affine;
} Case;

static const char *ArchName[] = {"dense (6)->(8)", "sequential (4,5)", "spatial 2-d (4,6,7)", "spatial 3-d (4,5,4,3)"};

static PetscErrorCode ReportErr(const char what[], PetscReal err)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: rel. error %.3e\n", what, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g", what, (double)err, (double)tol);
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| over the first N entries of two Vecs (replicated: the same on every rank) */
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

static PetscErrorCode SeededRandom(unsigned long seed, PetscRandom *r)
{
  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, r));
  PetscCall(PetscRandomSetSeed(*r, seed));
  PetscCall(PetscRandomSeed(*r));
  PetscFunctionReturn(0);
}

static PetscErrorCode Build(MPI_Comm comm, const char prefix[], const Case *c, NN *net)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 7));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  switch (c->arch) {
  case DENSE:
    PetscCall(NNSetInputShape(*net, 1, (PetscInt[]){6}));
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc1", &l));
    PetscCall(NNLayerDenseSetUnits(l, 8));
    break;
  case SEQ:
    PetscCall(NNSetInputShape(*net, 2, (PetscInt[]){4, 5}));
    break;
  case SPAT2D:
    PetscCall(NNSetInputShape(*net, 3, (PetscInt[]){3, 6, 7}));
    PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "cv", &l));
    PetscCall(NNLayerConvSetFilters(l, 4));
    break;
  case SPAT3D:
    PetscCall(NNSetInputShape(*net, 4, (PetscInt[]){2, 5, 4, 3}));
    PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sq", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERCONV3D, "cv", &l));
    PetscCall(NNLayerConvSetFilters(l, 4));
    break;
  }
  PetscCall(NNAddLayer(*net, c->type, "nm", &l));
  PetscCall(NNLayerGroupNormSetGroups(l, c->groups));
  PetscCall(NNLayerNormSetAffine(l, c->affine));
  PetscCall(NNLayerNormSetEpsilon(l, 1e-3));
  switch (c->arch) {
  case DENSE:
    PetscCall(NNAddLayer(*net, NNLAYERTANH, "th", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
    PetscCall(NNLayerDenseSetUnits(l, 3));
    break;
  case SEQ:
    PetscCall(NNAddLayer(*net, NNLAYERFLATTEN, "fl", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc2", &l));
    PetscCall(NNLayerDenseSetUnits(l, 3));
    break;
  default:
    PetscCall(NNAddLayer(*net, NNLAYERTANH, "th", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  }
  PetscCall(NNSetUp(*net));
  if (c->affine) { /* weight and bias away from their initial 1 and 0 */
    PetscScalar *th;
    PetscInt     np;
    PetscRandom  r;
    PetscCall(SeededRandom(17, &r));
    PetscCall(NNGetLayerParameters(*net, "nm", &np, &th));
    PetscCall(FillReplicated(r, np / 2, 0.5, 1.5, th));
    PetscCall(FillReplicated(r, np / 2, -0.5, 0.5, th + np / 2));
    PetscCall(NNRestoreLayerParameters(*net, "nm", &th));
    PetscCall(PetscRandomDestroy(&r));
  }
  PetscFunctionReturn(0);
}

/* input and target batches of capacity NB, the same on every rank */
static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscRandom  r;
  PetscScalar *a;
  PetscInt     n;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(SeededRandom(11, &r));
  PetscCall(VecGetLocalSize(*x, &n));
  PetscCall(VecGetArray(*x, &a));
  PetscCall(FillReplicated(r, n, -0.5, 1.5, a));
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetLocalSize(*t, &n));
  PetscCall(VecGetArray(*t, &a));
  PetscCall(FillReplicated(r, n, -1.0, 1.0, a));
  PetscCall(VecRestoreArray(*t, &a));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* a sequential head of the batch Vecs (the first N entries) */
static PetscErrorCode CopyHead(Vec v, PetscInt N, Vec *w)
{
  const PetscScalar *a;
  PetscScalar       *b;

  PetscFunctionBegin;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, N, w));
  PetscCall(VecGetArrayRead(v, &a));
  PetscCall(VecGetArrayWrite(*w, &b));
  PetscCall(PetscArraycpy(b, a, N));
  PetscCall(VecRestoreArrayWrite(*w, &b));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(0);
}

/* the norm as the first layer, given input and target Vecs of exactly the n samples (not the capacity) */
static PetscErrorCode TestShortBatch(NN net, PetscInt nx, PetscInt nt, Vec x, Vec t, PetscReal L, Vec dx, const char name[])
{
  Vec       xs, ts, dxs, dxh;
  PetscReal Ls;
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(CopyHead(x, nx, &xs));
  PetscCall(CopyHead(t, nt, &ts));
  PetscCall(CopyHead(dx, nx, &dxh));
  PetscCall(VecDuplicate(xs, &dxs));
  PetscCall(NNLossGradient(net, NP, xs, ts, &Ls, dxs));
  PetscCall(VecEqual(dxs, dxh, &same));
  PetscCheck(same && Ls == L, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: input Vecs of n samples give another loss or input gradient", name);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: input Vecs of just the n samples give the same loss and input gradient\n", name));
  PetscCall(VecDestroy(&xs));
  PetscCall(VecDestroy(&ts));
  PetscCall(VecDestroy(&dxs));
  PetscCall(VecDestroy(&dxh));
  PetscFunctionReturn(0);
}

/* a partial batch through the network on the run's communicator and through its serial copy */
static PetscErrorCode TestCase(const Case *c)
{
  NN          net[2];
  Vec         x, t, dx[2], y[2], g[2], ye;
  PetscReal   L[2], ep, ei;
  PetscInt    insz, outsz, np;
  NNShape     s;
  char        name[128], what[192];
  const char *last = c->arch == DENSE || c->arch == SEQ ? "fc2" : "sf";
  PetscBool   same;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s%s%s on %s", c->type, strcmp(c->type, NNLAYERGROUPNORM) ? "" : " (2 groups)", c->affine ? "" : " without affine", ArchName[c->arch]));
  PetscCall(Build(PETSC_COMM_WORLD, NULL, c, &net[0]));
  PetscCall(Build(PETSC_COMM_SELF, "serial_", c, &net[1]));
  PetscCall(NNGetInputShape(net[0], &s));
  insz = NNShapeSize(&s);
  PetscCall(NNGetOutputShape(net[0], &s));
  outsz = NNShapeSize(&s);
  PetscCall(NNGetNumParameters(net[0], &np));
  PetscCall(FillBatch(net[0], &x, &t));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(VecDuplicate(x, &dx[k]));
    PetscCall(NNLossGradient(net[k], NP, x, t, &L[k], dx[k]));
    PetscCall(NNGetActivations(net[k], last, NULL, &y[k]));
    PetscCall(NNGetGradient(net[k], &g[k]));
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: output, loss, parameter and input gradients equal the serial copy's", name));
  PetscCall(CompareVecs("output", NP * outsz, y[0], y[1]));
  PetscCall(ReportErr("loss", PetscAbsReal(L[0] - L[1]) / PetscAbsReal(L[1])));
  PetscCall(CompareVecs("parameter gradient", np, g[0], g[1]));
  PetscCall(CompareVecs("input gradient", NP * insz, dx[0], dx[1]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s (rel. error < %g)\n", what, (double)tol));
  if (c->arch == SEQ) PetscCall(TestShortBatch(net[1], NP * insz, NP * outsz, x, t, L[1], dx[1], name));
  /* no running statistics: evaluation mode computes what training mode did */
  PetscCall(VecDuplicate(y[0], &ye));
  PetscCall(VecCopy(y[0], ye));
  PetscCall(NNSetTraining(net[0], PETSC_FALSE));
  PetscCall(NNForward(net[0], NP, x, &y[0]));
  PetscCall(NNSetTraining(net[0], PETSC_TRUE));
  PetscCall(VecEqual(y[0], ye, &same));
  PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: evaluation mode changed the output", name);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: evaluation mode gives the same output\n", name));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, finite differences:\n", name));
  PetscCall(NNGradientCheck(net[0], NP, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: %g %g", (double)ep, (double)ei);
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(VecDestroy(&dx[k]));
    PetscCall(NNDestroy(&net[k]));
  }
  PetscCall(VecDestroy(&ye));
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

/* the layers' View, and clear errors for bad input */
static PetscErrorCode TestViewAndErrors(void)
{
  NN             net;
  NNLayer        l;
  Case           c   = {NNLAYERGROUPNORM, SPAT2D, 2, PETSC_TRUE};
  char           msg[1024];
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(Build(PETSC_COMM_WORLD, NULL, &c, &net));
  PetscCall(NNGetLayer(net, "nm", &l));
  PetscCall(NNLayerView(l, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNDestroy(&net));
  c.type = NNLAYERLAYERNORM;
  PetscCall(Build(PETSC_COMM_WORLD, NULL, &c, &net));
  PetscCall(NNGetLayer(net, "nm", &l));
  PetscCall(NNLayerView(l, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNDestroy(&net));

  /* 3 groups of 4 channels */
  c.type   = NNLAYERGROUPNORM;
  c.groups = 3;
  msg[0]   = 0;
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = Build(PETSC_COMM_WORLD, NULL, &c, &net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "3 groups of 4 channels were accepted");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error: %s\n", msg));
  PetscCall(NNDestroy(&net));

  /* instance norm of flat features */
  c.type = NNLAYERINSTANCENORM;
  c.arch = DENSE;
  msg[0] = 0;
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = Build(PETSC_COMM_WORLD, NULL, &c, &net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "instance_norm of flat features was accepted");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error: %s\n", msg));
  PetscCall(NNDestroy(&net));

  /* negative eps, zero groups */
  PetscCall(NNLayerCreate(PETSC_COMM_WORLD, &l));
  PetscCall(PetscObjectSetName((PetscObject)l, "gn"));
  PetscCall(NNLayerSetOptionsPrefix(l, "gn_"));
  PetscCall(NNLayerSetType(l, NNLAYERGROUPNORM));
  msg[0] = 0;
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = NNLayerNormSetEpsilon(l, -1e-5);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "a negative epsilon was accepted");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error: %s\n", msg));
  msg[0] = 0;
  PetscCall(PetscPushErrorHandler(CatchError, msg));
  ierr = NNLayerGroupNormSetGroups(l, 0);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "0 groups were accepted");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error: %s\n", msg));
  PetscCall(NNLayerDestroy(&l));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const Case cases[] = {
    {NNLAYERGROUPNORM,    DENSE,  2, PETSC_TRUE },
    {NNLAYERLAYERNORM,    DENSE,  1, PETSC_TRUE },
    {NNLAYERGROUPNORM,    SEQ,    2, PETSC_TRUE },
    {NNLAYERINSTANCENORM, SEQ,    1, PETSC_TRUE },
    {NNLAYERLAYERNORM,    SEQ,    1, PETSC_TRUE },
    {NNLAYERGROUPNORM,    SPAT2D, 2, PETSC_TRUE },
    {NNLAYERGROUPNORM,    SPAT2D, 2, PETSC_FALSE},
    {NNLAYERINSTANCENORM, SPAT2D, 1, PETSC_TRUE },
    {NNLAYERINSTANCENORM, SPAT2D, 1, PETSC_FALSE},
    {NNLAYERLAYERNORM,    SPAT2D, 1, PETSC_TRUE },
    {NNLAYERGROUPNORM,    SPAT3D, 2, PETSC_TRUE },
    {NNLAYERINSTANCENORM, SPAT3D, 1, PETSC_TRUE },
    {NNLAYERLAYERNORM,    SPAT3D, 1, PETSC_TRUE },
  };

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) PetscCall(TestCase(&cases[i]));
  PetscCall(TestViewAndErrors());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

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

   # PyTorch cross-check of the layers and of the losses (tests/losses.c) on sequential and spatial outputs
   testset:
      requires: torch
      timeoutfactor: 2
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_norms.py ${PETNN_BINARY_DIR}/examples/nnrun ${PETNN_BINARY_DIR}/tests/crosscheck_spatial --nsize ${nsize} --mpiexec "${mpiexec}"
      test:
         suffix: torch_1
         nsize: 1
      test:
         suffix: torch_3
         nsize: 3
      test:
         suffix: torch_4
         nsize: 4

   # the comparison can fail: PetNN gets the inputs scaled by 1 + 1e-8 and every case must notice
   test:
      suffix: torch_perturbed
      requires: torch
      command: /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/torch_crosscheck_norms.py ${PETNN_BINARY_DIR}/examples/nnrun ${PETNN_BINARY_DIR}/tests/crosscheck_spatial --perturb 1e-8 --only "group_norm 2 groups,instance_norm affine,layer_norm over channels 3-d,layer_norm on dense,l1 loss,huber loss,rel_l2 loss,bce_with_logits loss"

TEST*/
