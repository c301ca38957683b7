static char help[] = "Model-parallel layers in single precision (-nn_precision single with -<layer>_partition rows, columns,\n"
                     "filters, channels or shard): dot-product adjoint tests of the float all-gather and sum primitives; then\n"
                     "for each case a partitioned network runs its float passes and is compared with itself in double, with\n"
                     "its replicated copy in single precision (same seed: the same weights), against finite differences in\n"
                     "float, and over Adam steps with the replicated copy; going back to double gives the first results\n"
                     "bitwise.\n\n"
                     "  -tol <1e-5>       single vs double tolerance\n"
                     "  -rank_tol <1e-6>  partitioned vs replicated, both in single precision\n"
                     "  -fd_tol <1e-3>    single-precision finite-difference tolerance\n"
                     "  -train_tol <1e-5> Adam steps: partitioned vs replicated losses in single precision\n"
                     "  -cases <string>   only the cases whose label contains this string\n"
                     "  -print_errors     print the measured differences (not stable output)\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestpartition.h"
#include "nntest.h"
#include <float.h>

#define NB 5

typedef struct {
  PetscReal tol, ranktol, fdtol, traintol;
  PetscBool print_errors;
  char      only[64];
} Ctx;

typedef struct {
  const char *label;
  const char *opts;     /* the network, each option name without the case's prefix */
  const char *part;     /* the partitions: only the partitioned network gets them */
  PetscBool   model;    /* the partitions split over model ranks (-nn_model_ranks = all ranks: convolutions) */
  PetscBool   training; /* batch statistics */
} Case;

static PetscErrorCode Fill(PetscInt seed, PetscInt n, PetscScalar a[])
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)(2000 + seed)));
  PetscCall(PetscRandomSeed(r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  for (PetscInt i = 0; i < n; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

static PetscErrorCode Check(Ctx *ctx, const char label[], const char what[], PetscReal err, PetscReal tol)
{
  PetscFunctionBegin;
  if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %s %.2e\n", label, what, (double)err));
  PetscCheck(err <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %s differ by %g > %g", label, what, (double)err, (double)tol);
  PetscFunctionReturn(0);
}

/* the float all-gather and its adjoint (take the rank's columns), the float sum and its adjoint (replication), on
   [rows][ncol] arrays with an uneven split: <A u, v> = <u, A^T v> with the inner products summed in double; the float
   all-gather moves exactly what the double one does */
static PetscErrorCode TestPrimitives(Ctx *ctx)
{
  const PetscInt rows = 3, ncol = 7;
  NNPartColumns  pc;
  PetscMPIInt    rank;
  PetscInt       c;
  PetscScalar   *ud, *vd, *fd;
  float         *u, *v, *f, *w;
  PetscReal      lhs = 0, rhs = 0, e[2];

  PetscFunctionBegin;
  if (ctx->only[0]) {
    char *found;
    PetscCall(PetscStrstr("primitives", ctx->only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  PetscCall(PetscMemzero(&pc, sizeof(pc)));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(NNPartColumnsSetUp(PETSC_COMM_WORLD, ncol, rows, &pc));
  c = pc.cnt[rank];
  PetscCall(PetscMalloc4(rows * c, &ud, rows * ncol, &vd, rows * ncol, &fd, rows * ncol, &f));
  PetscCall(PetscMalloc3(rows * c, &u, rows * ncol, &v, rows * c, &w));
  PetscCall(Fill(rank, rows * c, ud)); /* the pieces differ by rank, the replicated v does not */
  PetscCall(Fill(100, rows * ncol, vd));
  for (PetscInt i = 0; i < rows * c; i++) u[i] = (float)ud[i], ud[i] = u[i];
  for (PetscInt i = 0; i < rows * ncol; i++) v[i] = (float)vd[i];

  PetscCall(NNPartColumnsAllgatherSingle(&pc, rows, u, c, f, ncol));
  PetscCall(NNPartColumnsAllgather(&pc, rows, ud, c, fd, ncol));
  PetscCall(NNPartColumnsTakeSingle(&pc, rows, v, ncol, w, c));
  for (PetscInt i = 0; i < rows * ncol; i++) lhs += (PetscReal)f[i] * v[i];
  for (PetscInt i = 0; i < rows * c; i++) rhs += (PetscReal)u[i] * w[i];
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &rhs, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  e[0] = PetscAbsReal(lhs - rhs) / PetscMax(PetscAbsReal(lhs), 1e-300);
  for (PetscInt i = 0; i < rows * ncol; i++) PetscCheck(f[i] == fd[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "float all-gather differs from the double one at %" PetscInt_FMT, i);

  /* S: every rank's [rows][ncol] summed into the replicated array; S^T: each rank gets the replicated v */
  PetscCall(Fill(200 + rank, rows * ncol, fd));
  for (PetscInt i = 0; i < rows * ncol; i++) f[i] = (float)fd[i];
  lhs = rhs = 0;
  for (PetscInt i = 0; i < rows * ncol; i++) rhs += (PetscReal)f[i] * v[i];
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &rhs, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  PetscCall(NNPartSumSingle(PETSC_COMM_WORLD, rows * ncol, f));
  for (PetscInt i = 0; i < rows * ncol; i++) lhs += (PetscReal)f[i] * v[i];
  e[1] = PetscAbsReal(lhs - rhs) / PetscMax(PetscAbsReal(lhs), 1e-300);
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, e, 2, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCall(Check(ctx, "float primitives", "all-gather adjoint", e[0], 1e-12));  /* the same products, summed in another order */
  PetscCall(Check(ctx, "float primitives", "sum adjoint", e[1], 2 * FLT_EPSILON)); /* the float sum's rounding */
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "float all-gather and sum: adjoint tests PASSED\n"));
  PetscCall(PetscFree4(ud, vd, fd, f));
  PetscCall(PetscFree3(u, v, w));
  PetscCall(NNPartColumnsReset(&pc));
  PetscFunctionReturn(0);
}

/* the network of a case: partitioned (opts and part) or its replicated copy (opts) */
static PetscErrorCode Build(const Case *c, const char prefix[], PetscBool partitioned, NN *net)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(NNTestInsertPrefixed(prefix, c->opts));
  if (partitioned) PetscCall(NNTestInsertPrefixed(prefix, c->part));
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 7));
  if (partitioned && c->model) PetscCall(NNSetModelRanks(*net, size));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscCall(NNSetTraining(*net, c->training));
  PetscFunctionReturn(0);
}

/* every split layer runs its own float passes (not its double passes on converted activations) */
static PetscErrorCode CheckFloatPasses(NN net, const char label[])
{
  const NNLayer *layers;
  PetscInt       nl, nsplit = 0;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, &nl, &layers));
  for (PetscInt i = 0; i < nl; i++) {
    NNLayerPartition part;
    PetscCall(NNLayerGetPartition(layers[i], &part));
    if (part == NN_PARTITION_REPLICATE) continue;
    nsplit++;
    /* NNLayerHasSinglePasses(), which is the library's own */
    PetscCheck(layers[i]->ops->forwardsingle && layers[i]->ops->backwardsingle && (layers[i]->part.type == NN_PARTITION_REPLICATE || layers[i]->part.floatpasses), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: layer %s (%s, -partition %s) has no float passes", label, ((PetscObject)layers[i])->name, ((PetscObject)layers[i])->type_name, NNLayerPartitions[part]);
  }
  PetscCheck(nsplit > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: no partitioned layer", label);
  PetscFunctionReturn(0);
}

/* Adam steps on one batch: the partitioned and the replicated network in single precision */
static PetscErrorCode TrainBoth(NN P, NN R, Vec x, Vec t, PetscReal *worst)
{
  NN       net[2] = {P, R};
  NNOpt    opt[2];
  Vec      theta[2], g;
  PetscReal L[2];

  PetscFunctionBegin;
  *worst = 0;
  for (int p = 0; p < 2; p++) {
    PetscCall(NNGetParameters(net[p], &theta[p]));
    PetscCall(NNOptCreate(PETSC_COMM_WORLD, &opt[p]));
    PetscCall(NNOptSetType(opt[p], "adam"));
    PetscCall(NNOptSetLearningRate(opt[p], 1e-2));
    PetscCall(NNOptSetUp(opt[p], theta[p]));
  }
  for (PetscInt s = 0; s < 5; s++) {
    for (int p = 0; p < 2; p++) {
      PetscCall(NNLossGradient(net[p], NB, x, t, &L[p], NULL));
      PetscCall(NNGetGradient(net[p], &g));
      PetscCall(NNOptStep(opt[p], theta[p], g));
    }
    *worst = PetscMax(*worst, PetscAbsReal(L[0] - L[1]) / PetscMax(PetscAbsReal(L[1]), 1e-300));
  }
  for (int p = 0; p < 2; p++) PetscCall(NNOptDestroy(&opt[p]));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(Ctx *ctx, PetscInt k, const Case *c)
{
  char         pp[16], pr[16];
  NN           P, R;
  Vec          x, t;
  NNTestPass   rd, rs, rr, rd2;
  PetscInt     nx, nt, n1, n2;
  PetscScalar *a;
  PetscReal    e, ep, ex;
  PetscBool    same[3];

  PetscFunctionBegin;
  if (ctx->only[0]) {
    char *found;
    PetscCall(PetscStrstr(c->label, ctx->only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  PetscCall(PetscSNPrintf(pp, sizeof(pp), "p%d_", (int)k));
  PetscCall(PetscSNPrintf(pr, sizeof(pr), "r%d_", (int)k));
  PetscCall(Build(c, pp, PETSC_TRUE, &P));
  PetscCall(Build(c, pr, PETSC_FALSE, &R));
  PetscCall(NNCreateBatchVecs(R, &x, &t)); /* the replicated network's layout, which the partitioned one takes too */
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(x, &a));
  PetscCall(Fill(21, nx, a));
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetArray(t, &a));
  PetscCall(Fill(22, nt, a));
  for (PetscInt i = 0; i < nt; i++) a[i] *= 0.5;
  PetscCall(VecRestoreArray(t, &a));

  /* the partitioned network in double, then in single: float round-off */
  PetscCall(NNTestPassRun(P, NN_DEVICE_CPU, NB, x, t, &rd));
  PetscCall(NNSetPrecision(P, NN_PRECISION_SINGLE));
  PetscCall(NNTestPassRun(P, NN_DEVICE_CPU, NB, x, t, &rs));
  PetscCall(CheckFloatPasses(P, c->label));
  PetscCall(Check(ctx, c->label, "single vs double: loss", PetscAbsReal(rs.L - rd.L) / PetscAbsReal(rd.L), ctx->tol));
  PetscCall(NNTestRelDiff(rd.dx, rs.dx, &e));
  PetscCall(Check(ctx, c->label, "single vs double: input gradient", e, ctx->tol));
  PetscCall(NNTestRelDiff(rd.g, rs.g, &e));
  PetscCall(Check(ctx, c->label, "single vs double: parameter gradient", e, ctx->tol));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: single vs double <= %g PASSED\n", c->label, (double)ctx->tol));

  /* the replicated copy in single precision: the same float maths, the partial products summed in another order */
  PetscCall(NNSetPrecision(R, NN_PRECISION_SINGLE));
  PetscCall(NNTestPassRun(R, NN_DEVICE_CPU, NB, x, t, &rr));
  PetscCall(Check(ctx, c->label, "partitioned vs replicated (single): loss", PetscAbsReal(rs.L - rr.L) / PetscAbsReal(rr.L), ctx->ranktol));
  PetscCall(VecGetLocalSize(rs.y, &n1));
  PetscCall(VecGetLocalSize(rr.y, &n2));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &n1, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &n2, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
  if (n1 == n2) { /* the same output layout */
    PetscCall(NNTestRelDiff(rr.y, rs.y, &e));
    PetscCall(Check(ctx, c->label, "partitioned vs replicated (single): output", e, ctx->ranktol));
  }
  PetscCall(NNTestRelDiff(rr.dx, rs.dx, &e));
  PetscCall(Check(ctx, c->label, "partitioned vs replicated (single): input gradient", e, ctx->ranktol));
  PetscCall(NNTestCompareGathered(P, rs.g, rr.g, &e));
  PetscCall(Check(ctx, c->label, "partitioned vs replicated (single): parameter gradient", e, ctx->ranktol));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: partitioned vs replicated in single precision <= %g PASSED\n", c->label, (double)ctx->ranktol));

  PetscCall(NNGradientCheck(P, NB, x, t, ctx->fdtol, &ep, &ex));
  PetscCall(Check(ctx, c->label, "single-precision finite differences (parameters)", ep, ctx->fdtol));
  PetscCall(Check(ctx, c->label, "single-precision finite differences (inputs)", ex, ctx->fdtol));

  /* back to double: the first results exactly */
  PetscCall(NNSetPrecision(P, NN_PRECISION_DOUBLE));
  PetscCall(NNTestPassRun(P, NN_DEVICE_CPU, NB, x, t, &rd2));
  PetscCall(NNTestVecsEqual(rd.y, rd2.y, &same[0]));
  PetscCall(NNTestVecsEqual(rd.dx, rd2.dx, &same[1]));
  PetscCall(NNTestVecsEqual(rd.g, rd2.g, &same[2]));
  PetscCheck(rd.L == rd2.L && same[0] && same[1] && same[2], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: double after single differs from double before", c->label);

  PetscCall(NNSetPrecision(P, NN_PRECISION_SINGLE));
  PetscCall(TrainBoth(P, R, x, t, &e));
  PetscCall(Check(ctx, c->label, "5 Adam steps: partitioned vs replicated losses (single)", e, ctx->traintol));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: finite differences, double again, Adam steps PASSED\n", c->label));

  PetscCall(NNTestPassDestroy(&rd));
  PetscCall(NNTestPassDestroy(&rs));
  PetscCall(NNTestPassDestroy(&rr));
  PetscCall(NNTestPassDestroy(&rd2));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&P));
  PetscCall(NNDestroy(&R));
  PetscCall(NNTestClearPrefixed(pp, c->opts));
  PetscCall(NNTestClearPrefixed(pp, c->part));
  PetscCall(NNTestClearPrefixed(pr, c->opts));
  PetscFunctionReturn(0);
}

/* at least 4 features, filters and channels wherever a partition splits them (1 to 4 ranks) */
#define MP_CNN(nd, shape) \
  "-nn_input_shape " shape " -nn_layers sp,c1,a1,c2,a2,sf,fc -sp_type to_spatial -c1_type conv" nd " -c1_filters 5 -c1_kernel 3 " \
  "-c1_padding 1 -a1_type tanh -c2_type conv" nd " -c2_filters 4 -c2_kernel 3 -c2_padding 1 -a2_type tanh -sf_type spatial_flatten " \
  "-fc_type dense -fc_units 3 -nn_loss mse"
#define MP_CNN_PART "-c1_partition filters -c2_partition channels -fc_partition columns"

static const Case cases[] = {
  {"dense rows, then columns", "-nn_input_shape 6 -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 7 -act_type tanh -fc2_type dense -fc2_units 4 -nn_loss mse", "-fc1_partition rows -fc2_partition columns", PETSC_FALSE, PETSC_FALSE},
  {"dense columns, then rows, no bias", "-nn_input_shape 5 -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 6 -fc1_bias 0 -act_type sigmoid -fc2_type dense -fc2_units 4 -fc2_bias 0 -nn_loss mse", "-fc1_partition columns -fc2_partition rows", PETSC_FALSE, PETSC_FALSE},
  {"conv2d filters, conv2d channels, dense columns (model ranks)", MP_CNN("2d", "3,6,5"), MP_CNN_PART, PETSC_TRUE, PETSC_FALSE},
  {"conv2d Winograd filters and channels (model ranks)", MP_CNN("2d", "3,6,5") " -c1_winograd 2 -c2_winograd 2", MP_CNN_PART, PETSC_TRUE, PETSC_FALSE},
  {"conv3d filters and channels, no bias (model ranks)", MP_CNN("3d", "3,4,5,3") " -c1_bias 0 -c2_bias 0", MP_CNN_PART, PETSC_TRUE, PETSC_FALSE},
  {"shard: dense, layer_norm, dense", "-nn_input_shape 6 -nn_layers fc1,ln,act,fc2 -fc1_type dense -fc1_units 8 -ln_type layer_norm -act_type tanh -fc2_type dense -fc2_units 4 -nn_loss mse", "-fc1_partition shard -ln_partition shard -fc2_partition shard", PETSC_FALSE, PETSC_FALSE},
  {"shard: conv2d, batchnorm2d (training), conv2d, dense on spatial ranks", MP_CNN("2d", "3,6,5") " -nn_layers sp,c1,bn,a1,c2,a2,sf,fc -bn_type batchnorm2d", "-c1_partition shard -bn_partition shard -c2_partition shard -fc_partition shard", PETSC_FALSE, PETSC_TRUE},
};

int main(int argc, char **argv)
{
  Ctx ctx;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  ctx.tol          = 1e-5;
  ctx.ranktol      = 1e-6;
  ctx.fdtol        = 1e-3;
  ctx.traintol     = 1e-5;
  ctx.print_errors = PETSC_FALSE;
  ctx.only[0]      = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Model-parallel layers in single precision", NULL);
  PetscCall(PetscOptionsReal("-tol", "Single vs double tolerance", NULL, ctx.tol, &ctx.tol, NULL));
  PetscCall(PetscOptionsReal("-rank_tol", "Partitioned vs replicated in single precision", NULL, ctx.ranktol, &ctx.ranktol, NULL));
  PetscCall(PetscOptionsReal("-fd_tol", "Finite-difference tolerance in single precision", NULL, ctx.fdtol, &ctx.fdtol, NULL));
  PetscCall(PetscOptionsReal("-train_tol", "Adam steps: partitioned vs replicated losses", NULL, ctx.traintol, &ctx.traintol, NULL));
  PetscCall(PetscOptionsBool("-print_errors", "Print the measured differences", NULL, ctx.print_errors, &ctx.print_errors, NULL));
  PetscCall(PetscOptionsString("-cases", "Only the cases whose label contains this string", NULL, ctx.only, ctx.only, sizeof(ctx.only), NULL));
  PetscOptionsEnd();
  PetscCall(TestPrimitives(&ctx));
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(&ctx, (PetscInt)k, &cases[k]));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
      output_file: output/precision_model_parallel.out
      test:
         suffix: 1
      test:
         suffix: 2
         nsize: 2
      test:
         suffix: 3
         nsize: 3
      test:
         suffix: 4
         nsize: 4
      # 2 data groups of 2 ranks for the dense and sharded cases (the partitioned and the replicated network alike)
      test:
         suffix: dp_4
         nsize: 4
         args: -p0_nn_data_groups 2 -r0_nn_data_groups 2 -p5_nn_data_groups 2 -r5_nn_data_groups 2 -p6_nn_data_groups 2 -r6_nn_data_groups 2

TEST*/
