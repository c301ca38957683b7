static char help[] = "The CUDA device (-nn_device cuda) against the CPU for model-parallel networks: dense layers partitioned by\n"
                     "rows or columns, convolutions by filters or channels over model ranks, and sharded layers\n"
                     "(-<layer>_partition shard). Each case builds the partitioned network on PETSC_COMM_WORLD from options,\n"
                     "runs one batch (NNLossGradient()) on the CPU and on the device with the same weights and data, in double\n"
                     "and in single precision, and compares the loss, the output, the input gradient and the parameter\n"
                     "gradient (relative 2-norm differences). Last, the all-gather and take of device arrays are checked against\n"
                     "the host all-gather and with the dot-product test. Without a GPU (or in a PetNN built without CUDA) the program says why and\n"
                     "exits with code 77 (skipped).\n\n"
                     "  -tol_double <1e-12>  device vs cpu in double\n"
                     "  -tol_single <1e-5>   device vs cpu in single precision\n"
                     "  -cases <string>      only the cases whose label contains this string\n"
                     "  -print_errors        print the measured differences (not stable output)\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestdevice.h"

#define NBATCH 5

static char only[64] = ""; /* -cases: only the cases whose label contains this string */

typedef struct {
  const char *label;
  const char *opts;  /* network options, each option name without the case's prefix */
  PetscInt    model; /* -nn_model_ranks: 0 none, -1 all ranks, 2 two (the others split the activations spatially) on an even
                        number of ranks, else all */
  PetscInt    n;     /* samples of the pass (0: NBATCH) */
} Case;

/* at least 4 features, filters, channels and first-axis entries wherever a partition splits them (1 to 4 ranks), and
   fewer elsewhere (the sharded fc's 3 rows: a rank with an empty piece) */
#define MP_CNN \
  "-nn_input_shape 3,6,5 -nn_layers sp,c1,a1,c2,a2,sf,fc -sp_type to_spatial -c1_type conv2d -c1_filters 5 -c1_kernel 3 -c1_padding 1 " \
  "-a1_type tanh -c2_type conv2d -c2_filters 4 -c2_kernel 3 -c2_padding 1 -a2_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 " \
  "-nn_loss mse"

static const Case cases[] = {
  {"dense rows, then columns",                                          "-nn_input_shape 6 -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 7 -fc1_partition rows -act_type tanh -fc2_type dense -fc2_units 4 -fc2_partition columns -nn_loss mse",                                                   0, 0},
  {"dense columns, then rows, no bias, batch 3 of 5",                   "-nn_input_shape 5 -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 6 -fc1_bias 0 -fc1_partition columns -act_type sigmoid -fc2_type dense -fc2_units 4 -fc2_bias 0 -fc2_partition rows -nn_loss mse", 0, 3},
  {"conv2d filters, conv2d channels, dense columns (model ranks)",      MP_CNN " -c1_partition filters -c2_partition channels -fc_partition columns",                                                                                                                                  -1, 0},
  {"conv2d filters and channels on model ranks x spatial ranks",       MP_CNN " -c1_partition filters -c2_partition channels -c2_periodic",                                                                                                                                           2, 0},
  {"conv3d filters and channels, no bias (model ranks)",                "-nn_input_shape 3,4,5,3 -nn_layers sp,c1,a1,c2,sf,fc -sp_type to_spatial -c1_type conv3d -c1_filters 5 -c1_kernel 3 -c1_padding 1 -c1_bias 0 -c1_partition filters -a1_type relu -c2_type conv3d -c2_filters 4 -c2_kernel 3 -c2_padding 1 -c2_bias 0 -c2_partition channels -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse", -1, 0},
  {"shard: dense, layer_norm, dense",                                   "-nn_input_shape 6 -nn_layers fc1,ln,act,fc2 -fc1_type dense -fc1_units 8 -fc1_partition shard -ln_type layer_norm -ln_partition shard -act_type tanh -fc2_type dense -fc2_units 4 -fc2_partition shard -nn_loss mse",         0, 0},
  {"shard: conv2d, batchnorm2d, conv2d, dense on split activations",    MP_CNN " -nn_layers sp,c1,bn,a1,c2,a2,sf,fc -bn_type batchnorm2d -c1_partition shard -bn_partition shard -c2_partition shard -fc_partition shard",                                                           0, 0},
};

/* inputs in [-1, 1], the same on every rank, and targets in [-0.5, 0.5] */
static PetscErrorCode FillBatch(PetscRandom rand, Vec x, Vec t)
{
  PetscInt     n;
  PetscScalar *a, u;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscRandomGetValue(rand, &u));
    a[i] = 2 * u - 1;
  }
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetLocalSize(t, &n));
  PetscCall(VecGetArray(t, &a));
  for (PetscInt i = 0; i < n; i++) {
    PetscCall(PetscRandomGetValue(rand, &u));
    a[i] = u - 0.5;
  }
  PetscCall(VecRestoreArray(t, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(PetscRandom rand, const PetscReal tol[2], PetscBool print, PetscInt k, const Case *c)
{
  const char *what[4] = {"loss", "output", "input gradient", "parameter gradient"};
  PetscInt    n       = c->n ? c->n : NBATCH;
  char        prefix[16], opt[64], val[16];
  NN          net;
  Vec         x, t;
  PetscMPIInt size;
  NNRandom    rng0;

  PetscFunctionBegin;
  if (only[0]) {
    char *found;
    PetscCall(PetscStrstr(c->label, only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "m%d_", (int)k));
  PetscCall(NNTestInsertPrefixed(prefix, c->opts));
  if (c->model) {
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-%snn_model_ranks", prefix));
    PetscCall(PetscSNPrintf(val, sizeof(val), "%d", c->model == 2 && size % 2 == 0 ? 2 : (int)size));
    PetscCall(PetscOptionsSetValue(NULL, opt, val));
  }
  PetscCall(NNTestPassCreateNet(PETSC_COMM_WORLD, prefix, NBATCH, &net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(FillBatch(rand, x, t));
  rng0 = net->rng;
  for (int p = 0; p < 2; p++) { /* NN_PRECISION_DOUBLE, NN_PRECISION_SINGLE */
    NNTestPass rc, rg;
    PetscReal  d[4] = {0, 0, 0, 0};
    PetscCall(NNSetPrecision(net, (NNPrecision)p));
    net->rng = rng0;
    PetscCall(NNTestPassRun(net, NN_DEVICE_CPU, n, x, t, &rc));
    net->rng = rng0;
    PetscCall(NNTestPassRun(net, NN_DEVICE_CUDA, n, x, t, &rg));
    PetscCall(NNTestPassCompare(&rc, &rg, (PetscBool)(n == NBATCH), d));
    if (print)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s, %d ranks: cuda vs cpu: loss %.2e, output %.2e, input gradient %.2e, parameter gradient %.2e\n", c->label, NNPrecisions[p], (int)size, (double)d[0], (double)d[1], (double)d[2], (double)d[3]));
    for (int i = 0; i < 4; i++) PetscCheck(d[i] <= tol[p], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: cuda vs cpu %s differ by %g > %g", c->label, NNPrecisions[p], what[i], (double)d[i], (double)tol[p]);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: cuda vs cpu, %s, <= %g PASSED\n", c->label, NNPrecisions[p], (double)tol[p]));
    PetscCall(NNTestPassDestroy(&rc));
    PetscCall(NNTestPassDestroy(&rg));
  }
  PetscCall(NNSetDevice(net, NN_DEVICE_CPU));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(NNTestClearPrefixed(prefix, c->opts));
  if (c->model) PetscCall(PetscOptionsClearValue(NULL, opt));
  PetscFunctionReturn(0);
}

/* the device all-gather A and take A^T of [rows][ncol] arrays (an uneven split over the ranks), in either precision:
   A moves exactly what the host all-gather moves, and <A u, v> = <u, A^T v> (inner products in double) */
static PetscErrorCode TestPrimitives(PetscBool print)
{
  const PetscInt rows = 3, ncol = 7;
  NNPartColumns  pc;
  PetscMPIInt    rank;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&pc, sizeof(pc)));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(NNPartColumnsSetUp(PETSC_COMM_WORLD, ncol, rows, &pc));
  for (int p = 0; p < 2; p++) {
    const size_t es = p == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
    PetscInt     c  = pc.cnt[rank];
    PetscScalar *u, *v, *f, *w, *fh;
    PetscReal    e, dots[2] = {0, 0};
    void        *du, *dv, *df, *dw;
    char        *stage;
    PetscCall(PetscMalloc5(rows * c, &u, rows * ncol, &v, rows * ncol, &f, rows * c, &w, rows * ncol, &fh));
    PetscCall(PetscMalloc1(rows * ncol * es, &stage));
    for (PetscInt i = 0; i < rows * c; i++) u[i] = (PetscReal)(float)PetscSinReal(1.0 + i + 10.0 * rank);
    for (PetscInt i = 0; i < rows * ncol; i++) v[i] = (PetscReal)(float)PetscCosReal(2.0 + i);
    PetscCall(NNPartColumnsAllgather(&pc, rows, u, c, fh, ncol));
    PetscCall(NNDeviceMalloc(PetscMax(rows * c, 1) * es, &du));
    PetscCall(NNDeviceMalloc(rows * ncol * es, &dv));
    PetscCall(NNDeviceMalloc(rows * ncol * es, &df));
    PetscCall(NNDeviceMalloc(PetscMax(rows * c, 1) * es, &dw));
    for (int which = 0; which < 2; which++) { /* upload u, then v */
      const PetscScalar *a = which ? v : u;
      PetscInt           m = which ? rows * ncol : rows * c;
      for (PetscInt i = 0; i < m; i++) {
        if (p == NN_PRECISION_SINGLE) ((float *)stage)[i] = (float)a[i];
        else ((double *)stage)[i] = a[i];
      }
      PetscCall(NNDeviceCopyToDevice(which ? dv : du, stage, m * es));
    }
    PetscCall(NNDevicePartColumnsAllgather(&pc, (NNPrecision)p, rows, du, c, df, ncol));
    PetscCall(NNDevicePartColumnsTake(&pc, (NNPrecision)p, rows, dv, ncol, dw, c));
    for (int which = 0; which < 2; which++) { /* download A u, then A^T v */
      PetscScalar *a = which ? w : f;
      PetscInt     m = which ? rows * c : rows * ncol;
      PetscCall(NNDeviceCopyToHost(stage, which ? dw : df, m * es));
      for (PetscInt i = 0; i < m; i++) a[i] = p == NN_PRECISION_SINGLE ? (PetscScalar)((float *)stage)[i] : ((double *)stage)[i];
    }
    for (PetscInt i = 0; i < rows * ncol; i++) PetscCheck(f[i] == fh[i], PETSC_COMM_SELF, PETSC_ERR_PLIB, "device all-gather (%s) differs from the host's at %" PetscInt_FMT, NNPrecisions[p], i);
    for (PetscInt i = 0; i < rows * ncol; i++) dots[0] += f[i] * v[i];
    for (PetscInt i = 0; i < rows * c; i++) dots[1] += u[i] * w[i];
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &dots[1], 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
    e = PetscAbsReal(dots[0] - dots[1]) / PetscMax(PetscAbsReal(dots[0]), 1e-300);
    if (print) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  device all-gather and take, %s: adjoint %.2e\n", NNPrecisions[p], (double)e));
    PetscCheck(e <= 1e-12, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "device all-gather and take (%s): <A u, v> and <u, A^T v> differ by %g", NNPrecisions[p], (double)e);
    PetscCall(NNDeviceFree(&du));
    PetscCall(NNDeviceFree(&dv));
    PetscCall(NNDeviceFree(&df));
    PetscCall(NNDeviceFree(&dw));
    PetscCall(PetscFree5(u, v, f, w, fh));
    PetscCall(PetscFree(stage));
  }
  PetscCall(NNPartColumnsReset(&pc));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device all-gather and take: equal to the host all-gather, adjoint test PASSED\n"));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rand;
  PetscReal   tol[2] = {1e-12, 1e-5};
  PetscBool   avail, print = PETSC_FALSE;
  char        why[512];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_double", &tol[NN_PRECISION_DOUBLE], NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_single", &tol[NN_PRECISION_SINGLE], NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-print_errors", &print, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-cases", only, sizeof(only), NULL));
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
  if (!avail) { /* exit code 77: the harness reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cuda_model_parallel: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rand)); /* the same numbers on every rank */
  PetscCall(PetscRandomSetSeed(rand, 29));
  PetscCall(PetscRandomSeed(rand));
  for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(rand, tol, print, k, &cases[k]));
  if (!only[0]) PetscCall(TestPrimitives(print)); /* CUDA initialized by the cases' networks */
  PetscCall(PetscRandomDestroy(&rand));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
      requires: cuda_emulation
      output_file: output/cuda_model_parallel.out
      test:
         suffix: emulation_1
      test:
         suffix: emulation_2
         nsize: 2
      test:
         suffix: emulation_3
         nsize: 3
      test:
         suffix: emulation_4
         nsize: 4

   # 2 data groups of 2 ranks (the conv cases: 2 model ranks, or 1 spatial x 2 model ranks; the sharded conv: its pieces
   # over the 2 spatial ranks of a group), the gradient summed over the groups
   test:
      requires: cuda_emulation
      suffix: emulation_dp_4
      nsize: 4
      args: -m0_nn_data_groups 2 -m1_nn_data_groups 2 -m3_nn_data_groups 2 -m5_nn_data_groups 2 -m6_nn_data_groups 2
      output_file: output/cuda_model_parallel.out

   test:
      requires: cuda
      suffix: 2
      nsize: 2
      output_file: output/cuda_model_parallel.out

TEST*/
