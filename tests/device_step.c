static char help[] = "What a training step on the CUDA device asks of the device: synchronizations, copies, allocations.\n\n"
                     "A GPU's queue stalls at every synchronization and at every cudaMalloc()/cudaFree() and page-locked\n"
                     "allocation, and what the host reads back each step bounds how far it can run ahead. This test counts\n"
                     "them with the CUDA emulation's counters (NNEmuGetStats()): each network trains one epoch of 2 and one\n"
                     "of 4 steps (same network, data and optimizer, resident on the device), and the difference of the two\n"
                     "epochs' counts over 2 is what one step costs, the epoch's fixed work cancelled. A step must allocate\n"
                     "and free nothing, download at most the output and the loss (the trainer reads them each step: the\n"
                     "training accuracy, the epoch's sums, the stop on a non-finite loss) and wait for the device once, in\n"
                     "the loss, which the output's download precedes on the stream; a batch-norm layer adds one wait for\n"
                     "its batch statistics (the running statistics are updated on the host). Needs the CUDA emulation\n"
                     "(CMake's PETNN_CUDA_EMULATION); elsewhere it exits with code 77 (skipped).\n\n"
                     "  -print_counts   print the counts of a step (not stable output)\n\n";

#include <petnn.h>
#include "nntest.h"
#if defined(PETNN_CUDA_EMULATION)
  #include <cuda_runtime_api.h> /* the emulation's: NNEmuGetStats() */

#define NFEATURES 12
#define NCLASSES  3
#define NBATCH    8

typedef struct {
  const char *label;
  NNPrecision prec;
  const char *net;
  PetscInt    bn; /* channels of a batch-norm layer: its training pass downloads the batch's mean and variance [2][bn] in
                     double and waits for them (the running statistics are updated on the host, as the CPU pass does) */
} Case;

#define NET_MLP "-nn_layers fc1,a,drop,fc2 -fc1_type dense -fc1_units 16 -a_type tanh -drop_type dropout -drop_rate 0.2 -fc2_type dense -fc2_units 3 -nn_input_shape 12"
#define NET_ODE \
  "-nn_layers fc1,a,blk,fc2 -fc1_type dense -fc1_units 16 -a_type tanh -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 8 -ta_type tanh -fb_type dense -fb_units 16 -fc2_type dense -fc2_units 3 -nn_input_shape 12"
#define NET_CNN "-nn_layers sp,c,r,p,fl,fc2 -sp_type to_spatial -c_type conv2d -c_filters 4 -c_kernel 3 -c_padding 1 -r_type relu -p_type maxpool2d -p_kernel 2 -fl_type spatial_flatten -fc2_type dense -fc2_units 3 -nn_input_shape 1,4,3"
#define NET_CNN_BN \
  "-nn_layers sp,c,bn,r,p,fl,fc2 -sp_type to_spatial -c_type conv2d -c_filters 4 -c_kernel 3 -c_padding 1 -bn_type batchnorm2d -r_type relu -p_type maxpool2d -p_kernel 2 -fl_type spatial_flatten -fc2_type dense -fc2_units 3 -nn_input_shape 1,4,3"

static const Case cases[] = {
  {"MLP with dropout",                      NN_PRECISION_DOUBLE, NET_MLP,    0},
  {"MLP with dropout",                      NN_PRECISION_SINGLE, NET_MLP,    0},
  {"ODE block (rk4, dense - tanh - dense)", NN_PRECISION_SINGLE, NET_ODE,    0},
  {"CNN (conv2d, relu, maxpool2d, dense)",  NN_PRECISION_SINGLE, NET_CNN,    0},
  {"CNN (conv2d, relu, maxpool2d, dense)",  NN_PRECISION_DOUBLE, NET_CNN,    0},
  {"CNN with batch norm",                   NN_PRECISION_SINGLE, NET_CNN_BN, 4},
};

/* NNEmuStats holds unsigned longs only: its counters as an array */
#define NSTAT (sizeof(NNEmuStats) / sizeof(unsigned long))

/* what one epoch of `steps` steps of case k costs the device: the counters' difference around NNTrain() */
static PetscErrorCode EpochCounts(PetscInt k, const char datafile[], PetscInt steps, unsigned long d[NSTAT])
{
  NN         net;
  NNData     data;
  NNEmuStats a, b;
  char       prefix[16], opts[1024];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "ds%d_", (int)k));
  PetscCall(PetscSNPrintf(opts, sizeof(opts), "%s -nn_loss cross_entropy -nn_batch_size %d -nn_epochs 1 -nn_seed 3 -opt_type adam -opt_learning_rate 0.01", cases[k].net, NBATCH));
  PetscCall(NNTestInsertPrefixed(prefix, opts));
  PetscCall(NNCreate(PETSC_COMM_SELF, &net));
  PetscCall(NNSetOptionsPrefix(net, prefix));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetPrecision(net, cases[k].prec));
  PetscCall(NNSetDevice(net, NN_DEVICE_CUDA));
  PetscCall(NNSetUp(net));
  PetscCall(NNDataCreate(PETSC_COMM_SELF, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, datafile));
  PetscCall(NNDataSetMaxSamples(data, steps * NBATCH));
  PetscCall(NNDataSetUp(data));
  NNEmuGetStats(&a);
  PetscCall(NNTrain(net, data, NULL));
  NNEmuGetStats(&b);
  for (size_t j = 0; j < NSTAT; j++) d[j] = ((const unsigned long *)&b)[j] - ((const unsigned long *)&a)[j];
  PetscCall(NNDataDestroy(&data));
  PetscCall(NNDestroy(&net));
  PetscCall(NNTestClearPrefixed(prefix, opts));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(PetscInt k, const char datafile[], PetscBool print)
{
  unsigned long e2[NSTAT], e4[NSTAT];
  NNEmuStats    st; /* a step */
  const char   *p   = NNPrecisions[cases[k].prec];
  PetscInt      bn  = cases[k].bn;
  size_t        out = (size_t)NBATCH * NCLASSES * (cases[k].prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double));

  PetscFunctionBegin;
  PetscCall(EpochCounts(k, datafile, 2, e2)); /* a first one: the package's grow-only device arrays (ones, stages) */
  PetscCall(EpochCounts(k, datafile, 2, e2));
  PetscCall(EpochCounts(k, datafile, 4, e4));
  for (size_t j = 0; j < NSTAT; j++) { /* per step: (4-step epoch - 2-step epoch) / 2; an odd difference: the steps differ */
    PetscCheck((e4[j] - e2[j]) % 2 == 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s, %s: counter %zu grew by %lu over 2 steps: the steps of an epoch differ", cases[k].label, p, j, e4[j] - e2[j]);
    ((unsigned long *)&st)[j] = (e4[j] - e2[j]) / 2;
  }
  if (print)
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "  a step: %lu syncs, %lu uploads (%lu bytes), %lu downloads (%lu bytes), %lu device copies, %lu memsets, %lu launches, %lu GEMMs, %lu/%lu/%lu allocations/frees/page-locked\n", st.syncs, st.h2d, st.h2dbytes, st.d2h, st.d2hbytes, st.d2d, st.memsets, st.launches, st.gemms, st.mallocs, st.frees, st.hostallocs));
  PetscCheck(!st.mallocs && !st.frees && !st.hostallocs, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s, %s: a training step allocates on the device (%lu cudaMalloc, %lu cudaFree, %lu cudaMallocHost): each stalls a GPU", cases[k].label, p, st.mallocs, st.frees, st.hostallocs);
  PetscCheck(st.syncs <= (unsigned long)(1 + (bn > 0)), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s, %s: a training step synchronizes %lu times; at most %d (the loss with the output%s)", cases[k].label, p, st.syncs, 1 + (bn > 0), bn ? ", batch norm's statistics" : "");
  PetscCheck(st.d2h <= (unsigned long)(2 + (bn > 0)) && st.d2hbytes <= out + sizeof(double) + 2 * bn * sizeof(double), PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s, %s: a training step downloads %lu arrays, %lu bytes; at most the output (%zu bytes) and the loss%s", cases[k].label, p, st.d2h,
             st.d2hbytes, out, bn ? ", batch norm's statistics" : "");
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s, %s: a training step allocates nothing, downloads the output and the loss only, waits for the device %s\n", cases[k].label, p, bn ? "twice (the loss, batch norm's statistics)" : "once (the loss)"));
  PetscFunctionReturn(0);
}
#endif

int main(int argc, char **argv)
{
  PetscBool avail, print = PETSC_FALSE;
  char      why[512];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-print_counts", &print, NULL));
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
#if !defined(PETNN_CUDA_EMULATION)
  avail = PETSC_FALSE;
  PetscCall(PetscStrncpy(why, "the counters are the CUDA emulation's (CMake's PETNN_CUDA_EMULATION)", sizeof(why)));
#endif
  if (!avail) { /* exit code 77: the harness (config/petnn_runtest.sh) reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device_step: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
#if defined(PETNN_CUDA_EMULATION)
  {
    const char *datafile = "device_step_data.bin";
    PetscCall(NNTestWriteClassificationData(datafile, 4 * NBATCH, NFEATURES, NCLASSES, 11));
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(k, datafile, print));
  }
#endif
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      requires: cuda_emulation
      suffix: emulation
      output_file: output/device_step.out

TEST*/
