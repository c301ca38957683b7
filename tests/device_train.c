static char help[] = "NNTrain() on the CUDA device against the CPU: parameters, gradient and optimizer steps resident on the device.\n\n"
                     "A network (an MLP, an ODE-Net, a CNN with batch norm) trains for a few epochs on the CPU and on the\n"
                     "device from the same initial parameters and data, for each optimizer type with a device step, in double\n"
                     "and single precision. The final parameters (and buffers) and optimizer state must agree (relative 2-norm\n"
                     "differences), the optimizer must have\n"
                     "stepped on the device, and a checkpoint written during device training must hold the device's\n"
                     "newest parameters and state. A parameter Vec changed on the host while the device holds newer\n"
                     "parameters is an error. On several ranks: data groups of one rank each summing the gradient with\n"
                     "NCCL (-nn_allreduce nccl) against one CPU rank. Without a GPU (or CUDA) the program exits with\n"
                     "code 77 (skipped).\n\n"
                     "  -tol_double <1e-12>  device vs cpu in double\n"
                     "  -tol_single <1e-5>   device vs cpu in single precision\n"
                     "  -print_errors        print the measured differences (not stable output)\n\n";

#include <petnn/private/nnimpl.h> /* the optimizer's device state, to check that it stepped there */
#include "nntest.h"

#define NSAMPLES  40
#define NFEATURES 12
#define NCLASSES  3

/* the networks (NFEATURES inputs, NCLASSES outputs): an MLP with dropout, one with an ODE block (rk4, dense - tanh -
   dense), and a CNN with batch norm on the features as a 1x4x3 image (its conv2d without bias: a bias before batch norm
   has a gradient of zero up to round-off, which Adam's normalization turns into steps of lr*noise/eps that differ
   between any two implementations) */
#define NET_DROPOUT "-nn_layers fc1,a,drop,fc2 -fc1_type dense -fc1_units 16 -a_type tanh -drop_type dropout -drop_rate 0.2 -fc2_type dense -fc2_units 3 -nn_input_shape 12"
#define NET_ODE \
  "-nn_layers fc1,a,blk,fc2 -fc1_type dense -fc1_units 16 -a_type tanh -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 8 -ta_type tanh -fb_type dense -fb_units 16 -fc2_type dense -fc2_units 3 -nn_input_shape 12"
#define NET_CNN \
  "-nn_layers sp,c,bn,r,p,fl,fc2 -sp_type to_spatial -c_type conv2d -c_filters 4 -c_kernel 3 -c_padding 1 -c_bias 0 -bn_type batchnorm2d -r_type relu -p_type maxpool2d -p_kernel 2 -fl_type spatial_flatten -fc2_type dense -fc2_units 3 -nn_input_shape 1,4,3"

typedef struct {
  const char *label;
  const char *opt; /* -opt_type and its options */
  NNPrecision prec;
  const char *net;
  PetscBool   batchstats; /* batch norm: data groups see other batch statistics than one rank (no data-parallel run) */
} Case;

static const Case cases[] = {
  {"adam",                        "-opt_type adam -opt_learning_rate 0.01",                                                       NN_PRECISION_DOUBLE, NET_DROPOUT, PETSC_FALSE},
  {"adam",                        "-opt_type adam -opt_learning_rate 0.01",                                                       NN_PRECISION_SINGLE, NET_DROPOUT, PETSC_FALSE},
  {"adamw, cosine schedule",      "-opt_type adamw -opt_learning_rate 0.01 -opt_schedule cosine",                                 NN_PRECISION_DOUBLE, NET_DROPOUT, PETSC_FALSE},
  {"adamw, cosine schedule",      "-opt_type adamw -opt_learning_rate 0.01 -opt_schedule cosine",                                 NN_PRECISION_SINGLE, NET_DROPOUT, PETSC_FALSE},
  {"sgd, nesterov, weight decay", "-opt_type sgd -opt_learning_rate 0.05 -opt_momentum 0.9 -opt_nesterov -opt_weight_decay 1e-3", NN_PRECISION_DOUBLE, NET_DROPOUT, PETSC_FALSE},
  {"sgd",                         "-opt_type sgd -opt_learning_rate 0.05",                                                        NN_PRECISION_SINGLE, NET_DROPOUT, PETSC_FALSE},
  {"adam, ODE block (rk4)",       "-opt_type adam -opt_learning_rate 0.01",                                                       NN_PRECISION_DOUBLE, NET_ODE,     PETSC_FALSE},
  {"adam, ODE block (rk4)",       "-opt_type adam -opt_learning_rate 0.01",                                                       NN_PRECISION_SINGLE, NET_ODE,     PETSC_FALSE},
  {"adam, CNN with batch norm",   "-opt_type adam -opt_learning_rate 0.01",                                                       NN_PRECISION_DOUBLE, NET_CNN,     PETSC_TRUE},
  {"adam, CNN with batch norm",   "-opt_type adam -opt_learning_rate 0.01",                                                       NN_PRECISION_SINGLE, NET_CNN,     PETSC_TRUE},
};

/* the options prefix of case k's network (tag: which run) and its options: the case's network, cross entropy, batch 8,
   seed 3, the case's optimizer */
static PetscErrorCode NetOptions(PetscInt k, const char tag[], char prefix[16], char opts[1024])
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(prefix, 16, "dt%d%s_", (int)k, tag));
  PetscCall(PetscSNPrintf(opts, 1024, "%s -nn_loss cross_entropy -nn_batch_size 8 -nn_epochs 3 -nn_seed 3 %s", cases[k].net, cases[k].opt));
  PetscFunctionReturn(0);
}

/* case k's network (NetOptions()); ckpt: checkpoint file */
static PetscErrorCode CreateNet(PetscInt k, MPI_Comm comm, NNDevice dev, const char ckpt[], const char tag[], const char extra[], NN *net)
{
  char prefix[16], opts[1024];

  PetscFunctionBegin;
  PetscCall(NetOptions(k, tag, prefix, opts));
  PetscCall(NNTestInsertPrefixed(prefix, opts));
  if (extra) PetscCall(NNTestInsertPrefixed(prefix, extra));
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetPrecision(*net, cases[k].prec));
  PetscCall(NNSetDevice(*net, dev));
  if (ckpt) {
    NNTrainer tr;
    PetscCall(NNGetTrainer(*net, &tr));
    PetscCall(NNTrainerSetCheckpoint(tr, ckpt));
  }
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* removes the options CreateNet(k, ..., tag, extra, ...) inserted (the options database holds at most 512) */
static PetscErrorCode ClearNet(PetscInt k, const char tag[], const char extra[])
{
  char prefix[16], opts[1024];

  PetscFunctionBegin;
  PetscCall(NetOptions(k, tag, prefix, opts));
  PetscCall(NNTestClearPrefixed(prefix, opts));
  if (extra) PetscCall(NNTestClearPrefixed(prefix, extra));
  PetscFunctionReturn(0);
}

/* the largest difference of the parameters (and buffers) and of every optimizer state Vec between a and b */
static PetscErrorCode CompareNets(NN a, NN b, PetscReal *dp, PetscReal *ds)
{
  Vec      va, vb;
  NNOpt    oa, ob;
  PetscInt ns;

  PetscFunctionBegin;
  PetscCall(NNGetParameters(a, &va));
  PetscCall(NNGetParameters(b, &vb));
  PetscCall(NNTestRelDiff(va, vb, dp));
  PetscCall(NNGetBuffers(a, &va)); /* batch norm's running statistics, counted with the parameters */
  PetscCall(NNGetBuffers(b, &vb));
  PetscCall(VecGetSize(va, &ns));
  if (ns) {
    PetscReal d = 0;
    PetscCall(NNTestRelDiff(va, vb, &d));
    *dp = PetscMax(*dp, d);
  }
  PetscCall(NNGetOpt(a, &oa));
  PetscCall(NNGetOpt(b, &ob));
  PetscCall(NNOptGetNumStates(oa, &ns));
  *ds = 0;
  for (PetscInt i = 0; i < ns; i++) {
    const char *name;
    PetscReal   d = 0;
    PetscCall(NNOptGetState(oa, i, &name, &va));
    PetscCall(NNOptGetState(ob, i, &name, &vb));
    PetscCall(NNTestRelDiff(va, vb, &d));
    *ds = PetscMax(*ds, d);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(PetscInt k, const char datafile[], const PetscReal tol[], PetscBool print)
{
  NN        net[2], loaded;
  NNData    data;
  NNOpt     opt;
  PetscReal dp, ds, lp, ls;
  const char *ckpt = "device_train_ckpt.h5";
  const Case *c    = &cases[k];

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, datafile));
  for (int d = 0; d < 2; d++) {
    PetscCall(CreateNet(k, PETSC_COMM_WORLD, d ? NN_DEVICE_CUDA : NN_DEVICE_CPU, d ? ckpt : NULL, "", NULL, &net[d]));
    PetscCall(NNTrain(net[d], data, NULL));
  }
  PetscCall(NNGetOpt(net[1], &opt));
  PetscCheck(opt->dev.steps > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the optimizer did not step on the device", c->label);
  PetscCall(CompareNets(net[0], net[1], &dp, &ds));
  /* the checkpoint of the last epoch, loaded on the CPU, holds the device's final parameters and state */
  PetscCall(CreateNet(k, PETSC_COMM_WORLD, NN_DEVICE_CPU, NULL, "", NULL, &loaded));
  PetscCall(NNCheckpointLoad(loaded, ckpt));
  PetscCall(CompareNets(net[1], loaded, &lp, &ls));
  if (print) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s: cuda vs cpu: parameters %.2e, optimizer state %.2e; checkpoint vs device: %.2e, %.2e\n", c->label, NNPrecisions[c->prec], (double)dp, (double)ds, (double)lp, (double)ls));
  PetscCheck(dp <= tol[c->prec] && ds <= tol[c->prec], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: cuda vs cpu differ: parameters %g, optimizer state %g > %g", c->label, NNPrecisions[c->prec], (double)dp, (double)ds, (double)tol[c->prec]);
  PetscCheck(lp == 0 && ls == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: the checkpoint differs from the device's final state: parameters %g, optimizer state %g", c->label, NNPrecisions[c->prec], (double)lp, (double)ls);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s: 3 epochs, optimizer on the device: cuda vs cpu <= %g, checkpoint = device: PASSED\n", c->label, NNPrecisions[c->prec], (double)tol[c->prec]));
  for (int d = 0; d < 2; d++) PetscCall(NNDestroy(&net[d]));
  PetscCall(NNDestroy(&loaded));
  PetscCall(ClearNet(k, "", NULL));
  PetscCall(NNDataDestroy(&data));
  PetscFunctionReturn(0);
}

/* data groups of one rank each summing on the GPUs (-nn_allreduce nccl) against one rank on the CPU: the same
   trajectory up to the order of the sums; the optimizer must have stepped on the device on every rank */
static PetscErrorCode RunDataParallelCase(PetscInt k, const char datafile[], const PetscReal tol[], PetscBool print)
{
  NN          net[2];
  NNData      data[2];
  NNOpt       opt;
  PetscReal   dp, ds;
  PetscMPIInt size;
  char        extra[128];
  const Case *c = &cases[k];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  /* batches of 19 of the 40 samples: the last one has 2, so with 3 groups one group has none and sums zeros */
  PetscCall(PetscSNPrintf(extra, sizeof(extra), "-nn_batch_size 19 -nn_data_groups %d -nn_allreduce nccl -nn_bucket_size 0", (int)size));
  for (int d = 0; d < 2; d++) {
    MPI_Comm comm = d ? PETSC_COMM_WORLD : PETSC_COMM_SELF;
    PetscCall(NNDataCreate(comm, &data[d]));
    PetscCall(NNDataSetType(data[d], NNDATABINARY));
    PetscCall(NNDataSetFileName(data[d], datafile));
    PetscCall(CreateNet(k, comm, d ? NN_DEVICE_CUDA : NN_DEVICE_CPU, NULL, d ? "dp" : "cpu", d ? extra : "-nn_batch_size 19", &net[d]));
    PetscCall(NNTrain(net[d], data[d], NULL));
  }
  PetscCall(NNGetOpt(net[1], &opt));
  PetscCheck(opt->dev.steps > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: the optimizer did not step on the device", c->label);
  PetscCall(CompareNets(net[0], net[1], &dp, &ds));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &dp, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ds, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  if (print) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s, %d data groups (nccl): cuda vs one cpu rank: parameters %.2e, optimizer state %.2e\n", c->label, NNPrecisions[c->prec], (int)size, (double)dp, (double)ds));
  PetscCheck(dp <= tol[c->prec] && ds <= tol[c->prec], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s, data groups: cuda vs cpu differ: parameters %g, optimizer state %g > %g", c->label, NNPrecisions[c->prec], (double)dp, (double)ds, (double)tol[c->prec]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s: data groups summing with nccl, optimizer on the device: cuda vs one cpu rank <= %g: PASSED\n", c->label, NNPrecisions[c->prec], (double)tol[c->prec]));
  for (int d = 0; d < 2; d++) {
    PetscCall(NNDestroy(&net[d]));
    PetscCall(NNDataDestroy(&data[d]));
  }
  PetscCall(ClearNet(k, "cpu", "-nn_batch_size 19"));
  PetscCall(ClearNet(k, "dp", extra));
  PetscFunctionReturn(0);
}

/* a parameter Vec written on the host while the device holds newer parameters is refused, naming the way out */
static PetscErrorCode CheckStaleHostError(const char datafile[])
{
  NN             net;
  NNData         data;
  NNOpt          opt;
  Vec            x, t, theta;
  PetscReal      L;
  PetscInt       idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  PetscErrorCode ierr;
  const char    *etext;
  char          *msg = NULL, *found;

  PetscFunctionBegin;
  PetscCall(NNDataCreate(PETSC_COMM_WORLD, &data));
  PetscCall(NNDataSetType(data, NNDATABINARY));
  PetscCall(NNDataSetFileName(data, datafile));
  PetscCall(NNDataSetUp(data));
  PetscCall(CreateNet(0, PETSC_COMM_WORLD, NN_DEVICE_CUDA, NULL, "", NULL, &net));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(NNDataGetBatch(data, 8, idx, x, t));
  PetscCall(NNGetOpt(net, &opt));
  PetscCall(NNDeviceSetResident(net, PETSC_TRUE));
  PetscCall(NNLossGradient(net, 8, x, t, &L, NULL));
  PetscCall(NNOptStepDevice(opt, net));
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(VecScale(theta, 0.5));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNLossGradient(net, 8, x, t, &L, NULL);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr == PETSC_ERR_ORDER, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a stale parameter Vec was not refused (error %d)", (int)ierr);
  PetscCall(NNErrorMessage(ierr, &etext, &msg));
  PetscCall(PetscStrstr(msg, "changed on the host while optimizer steps on the device made newer parameters", &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the error does not say what happened: %s", msg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "a parameter Vec changed on the host while the device holds newer parameters: refused: PASSED\n"));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(NNDataDestroy(&data));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscReal   tol[2] = {1e-12, 1e-5};
  PetscBool   avail, print = PETSC_FALSE;
  char        why[512];
  const char *datafile = "device_train_data.bin";
  PetscMPIInt rank, size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_double", &tol[NN_PRECISION_DOUBLE], NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_single", &tol[NN_PRECISION_SINGLE], NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-print_errors", &print, NULL));
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
  if (!avail) { /* exit code 77: the harness (config/petnn_runtest.sh) reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "device_train: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (rank == 0) PetscCall(NNTestWriteClassificationData(datafile, NSAMPLES, NFEATURES, NCLASSES, 11));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (size == 1) {
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(k, datafile, tol, print));
    PetscCall(CheckStaleHostError(datafile));
  } else
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cases); k++)
      if (!cases[k].batchstats) PetscCall(RunDataParallelCase(k, datafile, tol, print));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      requires: cuda
      suffix: 1
      output_file: output/device_train.out

   test:
      requires: cuda_emulation
      suffix: emulation
      output_file: output/device_train.out

   # data groups summing with NCCL (in the emulation: MPI on the host; on a GPU machine, one GPU per rank)
   test:
      requires: cuda_emulation
      suffix: emulation_nccl
      nsize: {{2 3}}
      output_file: output/device_train_nccl.out

TEST*/
