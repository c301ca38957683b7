static char help[] = "Neural-ODE block with a convolutional vector field on the spatial (DMDA) layout: a network\n"
                     "to_spatial -> conv2d -> ode (f = conv2d, tanh, conv2d) -> spatial_flatten -> dense gives the same\n"
                     "loss and gradients on the run's communicator as a serial copy on PETSC_COMM_SELF, for several\n"
                     "integrators, shared and per-step parameters and checkpointing; finite differences on one rank.\n\n"
                     "  -equivalence <bool>  compare with the serial copy (default true)\n"
                     "  -fd_cases <0,1>      finite-difference checks of these cases (default none)\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define C_IN 1
#define H_IN 4
#define W_IN 5
#define NB   3

typedef struct {
  const char     *name, *tstype, *rktype;
  NNODEParameters params;
  PetscInt        K;
} Case;

static PetscErrorCode BuildNet(MPI_Comm comm, const char prefix[], const Case *c, NNLossType loss, NN *net)
{
  NNLayer  l, blk;
  PetscInt shape[] = {C_IN, H_IN, W_IN};
  char     opt[128];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sblk_ts_type", prefix));
  PetscCall(PetscOptionsSetValue(NULL, opt, c->tstype));
  if (c->rktype) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sblk_ts_rk_type", prefix));
    PetscCall(PetscOptionsSetValue(NULL, opt, c->rktype));
  }
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, loss));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c0", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERODE, "blk", &blk));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERCONV2D, "f1", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERTANH, "fa", NULL));
  PetscCall(NNLayerODEAddLayer(blk, NNLAYERCONV2D, "f2", &l));
  PetscCall(NNLayerConvSetFilters(l, 2));
  PetscCall(NNLayerODESetSteps(blk, 3));
  PetscCall(NNLayerODESetTime(blk, 0.6));
  PetscCall(NNLayerODESetParameters(blk, c->params));
  PetscCall(NNLayerODESetCheckpoints(blk, c->K));
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 2));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* the same batch on every rank, independent of the decomposition */
static PetscErrorCode FillBatch(NN net, PetscBool labels, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetLocalSize(*t, &nt));
  PetscCall(VecGetArray(*x, &a));
  for (PetscInt i = 0; i < nx; i++) a[i] = PetscSinReal(0.3 + 1.9 * i);
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetArray(*t, &a));
  for (PetscInt i = 0; i < nt; i++) a[i] = labels ? (PetscScalar)((2 * i + 1) % 2) : 0.5 * PetscCosReal(0.7 + 1.3 * i);
  PetscCall(VecRestoreArray(*t, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode Report(const char what[], PetscReal err)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: rel. error %.3e\n", what, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g", what, (double)err, (double)tol);
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| of replicated sequential Vecs */
static PetscErrorCode RelDiff(Vec a, Vec b, PetscReal *err)
{
  PetscReal e, nb;
  Vec       d;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, b, a));
  PetscCall(VecNorm(d, NORM_2, &e));
  PetscCall(VecNorm(b, NORM_2, &nb));
  PetscCall(VecDestroy(&d));
  PetscCheck(nb > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "zero reference gradient");
  *err = e / nb;
  PetscFunctionReturn(0);
}

static PetscErrorCode TestRankEquivalence(const Case *c, int id)
{
  NN          par, ser;
  Vec         x, t, dxp, dxs, gp, gs, tp, ts;
  PetscReal   Lp, Ls, e;
  PetscInt    n = 2; /* smaller than the batch capacity: unused slots must not leak */
  char        pp[32], sp[32], what[160];
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscSNPrintf(pp, sizeof(pp), "p%d_", id));
  PetscCall(PetscSNPrintf(sp, sizeof(sp), "serial%d_", id));
  {
    char opt[64], val[64];
    PetscBool set;
    /* the parallel network's grid of ranks from the run's options */
    for (int a = 0; a < 2; a++) {
      PetscCall(PetscSNPrintf(opt, sizeof(opt), "-sp_da_processors_%c", a ? 'y' : 'x'));
      PetscCall(PetscOptionsGetString(NULL, NULL, opt, val, sizeof(val), &set));
      if (set) {
        PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%ssp_da_processors_%c", pp, a ? 'y' : 'x'));
        PetscCall(PetscOptionsSetValue(NULL, opt, val));
      }
    }
  }
  PetscCall(BuildNet(PETSC_COMM_WORLD, pp, c, NNLOSSCROSSENTROPY, &par));
  PetscCall(BuildNet(PETSC_COMM_SELF, sp, c, NNLOSSCROSSENTROPY, &ser));
  PetscCall(NNGetParameters(par, &tp));
  PetscCall(NNGetParameters(ser, &ts));
  {
    PetscBool same;
    PetscCall(VecEqual(tp, ts, &same));
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the parallel and serial networks were initialized differently");
  }
  PetscCall(FillBatch(par, PETSC_TRUE, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(NNLossGradient(par, n, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, n, x, t, &Ls, dxs));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: loss", c->name));
  PetscCall(Report(what, PetscAbsReal(Lp - Ls) / PetscAbsReal(Ls)));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(RelDiff(gp, gs, &e));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: parameter gradient", c->name));
  PetscCall(Report(what, e));
  PetscCall(RelDiff(dxp, dxs, &e));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s: input gradient", c->name));
  PetscCall(Report(what, e));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: loss and gradients on the run's communicator equal a serial copy's within 1e-12: PASS\n", c->name));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  (%d ranks)\n", size));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

/* the adjoint with f's kept activations and with f evaluated again gives bitwise the same gradients */
static PetscErrorCode TestStoredActivations(const Case *c, int id)
{
  NN        a, b;
  Vec       x, t, dxa, dxb, ga, gb;
  PetscReal La, Lb;
  char      pa[32], pb[32], opt[64];
  PetscBool s1, s2;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(pa, sizeof(pa), "sa%d_", id));
  PetscCall(PetscSNPrintf(pb, sizeof(pb), "sb%d_", id));
  PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%sblk_store_activations", pb));
  PetscCall(PetscOptionsSetValue(NULL, opt, "0"));
  PetscCall(BuildNet(PETSC_COMM_WORLD, pa, c, NNLOSSCROSSENTROPY, &a));
  PetscCall(BuildNet(PETSC_COMM_WORLD, pb, c, NNLOSSCROSSENTROPY, &b));
  PetscCall(FillBatch(a, PETSC_TRUE, &x, &t));
  PetscCall(VecDuplicate(x, &dxa));
  PetscCall(VecDuplicate(x, &dxb));
  PetscCall(NNLossGradient(a, 2, x, t, &La, dxa));
  PetscCall(NNLossGradient(b, 2, x, t, &Lb, dxb));
  PetscCall(NNGetGradient(a, &ga));
  PetscCall(NNGetGradient(b, &gb));
  PetscCall(VecEqual(ga, gb, &s1));
  PetscCall(VecEqual(dxa, dxb, &s2));
  PetscCheck(s1 && s2 && La == Lb, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: gradients with kept activations differ from those with f evaluated again", c->name);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: gradients with f's activations kept or evaluated again bitwise identical: PASS\n", c->name));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxa));
  PetscCall(VecDestroy(&dxb));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestGradientCheck(const Case *c, int id)
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;
  char      prefix[32];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "fd%d_", id));
  PetscCall(BuildNet(PETSC_COMM_WORLD, prefix, c, NNLOSSMSE, &net));
  PetscCall(FillBatch(net, PETSC_FALSE, &x, &t));
  PetscCall(NNGradientCheck(net, 1, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s finite differences: parameters %.3e, inputs %.3e\n", c->name, (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: finite-difference check failed: parameters %g, inputs %g", c->name, (double)ep, (double)ei);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: finite differences agree within 1e-6: PASS\n", c->name));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const Case cases[] = {
    {"conv ODE block, rk 4, shared parameters", "rk", "4", NNODE_PARAMETERS_SHARED, 0},
    {"conv ODE block, rk 3bs, per-step parameters, 2 stored states", "rk", "3bs", NNODE_PARAMETERS_PER_STEP, 2},
    {"conv ODE block, cn, shared parameters", "cn", NULL, NNODE_PARAMETERS_SHARED, 0},
  };
  PetscBool   equiv = PETSC_TRUE;
  PetscInt    fd[2] = {0, 0}, nfd = 2;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-equivalence", &equiv, NULL));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-fd_cases", fd, &nfd, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (equiv) {
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) PetscCall(TestRankEquivalence(&cases[i], (int)i));
    PetscCall(TestStoredActivations(&cases[0], 0));
  }
  /* finite differences of the first two cases; cn's are checked with a dense f in tests/ode.c (its
     Newton-Krylov stages make them slow with convolutions) */
  for (PetscInt i = 0; i < nfd; i++) {
    PetscCheck(fd[i] >= 0 && fd[i] < 2, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-fd_cases takes 0 and 1");
    PetscCall(TestGradientCheck(&cases[fd[i]], (int)fd[i]));
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      args: -fd_cases 0

   test:
      suffix: fd_per_step
      nsize: 1
      args: -equivalence 0 -fd_cases 1

   test:
      suffix: 2
      nsize: 2
      args: -sp_da_processors_x 2 -sp_da_processors_y 1

   test:
      suffix: 3
      nsize: 3
      args: -sp_da_processors_x 1 -sp_da_processors_y 3

TEST*/
