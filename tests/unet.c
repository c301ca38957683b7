static char help[] = "A small 2-d U-Net as a graph network on the DMDA: to_spatial, conv2d, relu, maxpool2d, upsample,\n"
                     "concat (the skip connection), a 1x1 conv2d and the MSE loss on the spatial output; and a network with\n"
                     "split and add on the DMDA. Their losses and gradients on the run's communicator against a serial copy\n"
                     "on PETSC_COMM_SELF; finite-difference checks.\n\n"
                     "  -verbose        print the measured errors\n"
                     "  -layout_error   only the error for a skip connection whose layouts differ (3 ranks along x)\n"
                     "  -torch          only write the files of the PyTorch cross-check (tests/graph_torch.py)\n\n";

#include <petnn.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define C_IN 2
#define H_IN 16
static PetscInt W_IN = 24; /* 8 columns per rank on 3 ranks: pooling by 2 and upsampling give back the encoder's layout */
#define NB   3

static PetscErrorCode Report(const char what[], PetscReal a, PetscReal b)
{
  PetscReal err = PetscAbsReal(a - b) / PetscMax(PetscMax(PetscAbsReal(a), PetscAbsReal(b)), 1e-300);

  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.17g vs %.17g, rel. error %.3e\n", what, (double)a, (double)b, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g (%.17g vs %.17g)", what, (double)err, (double)tol, (double)a, (double)b);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rel. error < 1e-12\n", what));
  PetscFunctionReturn(0);
}

static PetscErrorCode AddConv(NN net, const char name[], PetscInt filters, PetscInt k, const char *input)
{
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, name, &l));
  PetscCall(NNLayerConvSetFilters(l, filters));
  PetscCall(NNLayerConvSetKernelSize(l, k));
  PetscCall(NNLayerConvSetPadding(l, k / 2));
  if (input) PetscCall(NNLayerSetInputs(l, 1, &input));
  PetscFunctionReturn(0);
}

/*
   sp (to_spatial) -> e1 conv 3x3, 4 -> r1 act -> p1 maxpool 2 -> e2 conv 3x3, 4 -> r2 act -> up upsample 2
   -> cat concat(up, r1) (8 channels) -> d1 conv 3x3, 4 -> r3 act -> out conv 1x1, 2 channels (2, 16, 24)
*/
static PetscErrorCode BuildUNet(MPI_Comm comm, const char prefix[], NNLayerType act, NN *net)
{
  NNLayer  l;
  PetscInt shape[] = {C_IN, H_IN, W_IN};

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetType(*net, NNTYPEGRAPH));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(AddConv(*net, "e1", 4, 3, NULL));
  PetscCall(NNAddLayer(*net, act, "r1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p1", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 2));
  PetscCall(AddConv(*net, "e2", 4, 3, NULL));
  PetscCall(NNAddLayer(*net, act, "r2", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERUPSAMPLE, "up", &l));
  PetscCall(NNLayerUpsampleSetScale(l, 2));
  PetscCall(NNAddLayer(*net, NNLAYERCONCAT, "cat", &l));
  PetscCall(NNLayerSetInputs(l, 2, (const char *[]){"up", "r1"}));
  PetscCall(AddConv(*net, "d1", 4, 3, NULL));
  PetscCall(NNAddLayer(*net, act, "r3", NULL));
  PetscCall(AddConv(*net, "out", 2, 1, NULL));
  PetscCall(NNSetFromOptions(*net)); /* -sp_da_processors_x ... of the run's network */
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/*
   split and add on the DMDA: sp -> e1 conv 3x3, 4 -> s split 1,3 -> c3 conv 3x3, 1 <- s:1 -> a add(s:0, c3)
   -> r act -> cat concat(r, s:1) (4 channels) -> out conv 1x1, 2 channels
*/
static PetscErrorCode BuildMix(MPI_Comm comm, const char prefix[], NNLayerType act, NN *net)
{
  NNLayer  l;
  PetscInt shape[] = {C_IN, H_IN, W_IN}, sizes[] = {1, 3};

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetType(*net, NNTYPEGRAPH));
  PetscCall(NNSetInputShape(*net, 3, shape));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 6));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(AddConv(*net, "e1", 4, 3, NULL));
  PetscCall(NNAddLayer(*net, NNLAYERSPLIT, "s", &l));
  PetscCall(NNLayerSplitSetSizes(l, 2, sizes));
  PetscCall(AddConv(*net, "c3", 1, 3, "s:1"));
  PetscCall(NNAddLayer(*net, NNLAYERADD, "a", &l));
  PetscCall(NNLayerSetInputs(l, 2, (const char *[]){"s:0", "c3"}));
  PetscCall(NNAddLayer(*net, act, "r", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONCAT, "cat", &l));
  PetscCall(NNLayerSetInputs(l, 2, (const char *[]){"r", "s:1"}));
  PetscCall(AddConv(*net, "out", 2, 1, NULL));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

typedef PetscErrorCode (*BuildFn)(MPI_Comm, const char[], NNLayerType, NN *);

/* the same random batch and targets on every rank */
static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscRandom r;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 11));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecSetRandom(*x, r));
  PetscCall(VecSetRandom(*t, r));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

/* ||a - b|| / ||b|| reported as (||b|| + ||a - b||) vs ||b||; a is overwritten */
static PetscErrorCode ReportDiff(const char what[], Vec a, Vec b)
{
  PetscReal nrm, e;

  PetscFunctionBegin;
  PetscCall(VecNorm(b, NORM_2, &nrm));
  PetscCall(VecAXPY(a, -1.0, b));
  PetscCall(VecNorm(a, NORM_2, &e));
  PetscCall(Report(what, nrm + e, nrm));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestRankEquivalence(const char what[], BuildFn build)
{
  char      msg[128];
  NN        par, ser;
  Vec       x, t, dxp, dxs, gp, gs, tp, ts;
  PetscReal Lp, Ls;
  PetscInt  n = 2; /* smaller than the batch capacity: unused slots must not leak */
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(build(PETSC_COMM_WORLD, NULL, NNLAYERRELU, &par));
  PetscCall(build(PETSC_COMM_SELF, "serial_", NNLAYERRELU, &ser));
  PetscCall(NNGetParameters(par, &tp));
  PetscCall(NNGetParameters(ser, &ts));
  PetscCall(VecEqual(tp, ts, &same));
  PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the parallel and serial %s networks were initialized differently", what);
  PetscCall(FillBatch(par, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));
  PetscCall(NNLossGradient(par, n, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, n, x, t, &Ls, dxs));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s loss: run's communicator vs serial copy", what));
  PetscCall(Report(msg, Lp, Ls));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s parameter gradient: ||g - g_serial|| / ||g_serial||", what));
  PetscCall(ReportDiff(msg, gp, gs));
  PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s input gradient: ||dx - dx_serial|| / ||dx_serial||", what));
  PetscCall(ReportDiff(msg, dxp, dxs));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscFunctionReturn(0);
}

/* tanh instead of ReLU: no kinks for the finite differences to straddle */
static PetscErrorCode TestGradientCheck(const char what[], BuildFn build)
{
  NN        net;
  Vec       x, t;
  PetscReal ep, ei;

  PetscFunctionBegin;
  PetscCall(build(PETSC_COMM_WORLD, NULL, NNLAYERTANH, &net));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(NNGradientCheck(net, 2, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  finite differences: parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check of the %s network failed: %g %g", what, (double)ep, (double)ei);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* files for tests/graph_torch.py: checkpoint and loss, output and gradients on 2 samples */
static PetscErrorCode WriteTorchFiles(const char name[], BuildFn build)
{
  NN   net;
  Vec  x, t;
  char ckpt[64], grad[64];

  PetscFunctionBegin;
  PetscCall(build(PETSC_COMM_WORLD, NULL, NNLAYERRELU, &net));
  PetscCall(FillBatch(net, &x, &t));
  PetscCall(PetscSNPrintf(ckpt, sizeof(ckpt), "graph_%s.h5", name));
  PetscCall(PetscSNPrintf(grad, sizeof(grad), "graph_%s_grad.h5", name));
  PetscCall(NNCheckpointSave(net, ckpt));
  PetscCall(NNSaveGradients(net, grad, 2, x, t));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* 16 columns over 3 ranks (6,5,5): pooling gives 3,3,2 and upsampling 6,6,4, not the encoder's layout */
static PetscErrorCode TestLayoutError(void)
{
  PetscErrorCode ierr;
  const char    *text, *expect = "Layer cat (concat): its input up (shape (4,16,16)) lies on a DMDA of 16 x 16 points with ownership ranges 6,6,4 / 16 but its input r1 (shape (4,16,16)) on a DMDA of 16 x 16 points with ownership ranges 6,5,5 / 16";
  char          *msg, *found = NULL;
  NN             net = NULL;

  PetscFunctionBegin;
  W_IN = 16;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = BuildUNet(PETSC_COMM_WORLD, NULL, NNLAYERRELU, &net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "expected an error for concatenating different layouts");
  PetscCall(NNErrorMessage(ierr, &text, &msg));
  if (msg) PetscCall(PetscStrstr(msg, expect, &found));
  PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the error message \"%s\" does not contain \"%s\"", msg ? msg : "", expect);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "U-Net on 16 columns over 3 ranks: clear error (%s)\n", expect));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscBool layout = PETSC_FALSE, torch = PETSC_FALSE;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-layout_error", &layout, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-torch", &torch, NULL));
  if (torch) {
    PetscCall(WriteTorchFiles("unet", BuildUNet));
    PetscCall(WriteTorchFiles("mix", BuildMix));
    PetscCall(PetscFinalize());
    return 0;
  }
  if (layout) {
    PetscCall(TestLayoutError());
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(TestRankEquivalence("U-Net", BuildUNet));
  PetscCall(TestGradientCheck("U-Net", BuildUNet));
  PetscCall(TestRankEquivalence("split/add/concat", BuildMix));
  PetscCall(TestGradientCheck("split/add/concat", BuildMix));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      output_file: output/unet.out

   test:
      suffix: 2
      nsize: 2
      args: -sp_da_processors_x 2 -sp_da_processors_y 1
      output_file: output/unet.out

   test:
      suffix: 3
      nsize: 3
      args: -sp_da_processors_x 3 -sp_da_processors_y 1
      output_file: output/unet.out

   test:
      suffix: 4
      nsize: 4
      args: -sp_da_processors_x 2 -sp_da_processors_y 2
      output_file: output/unet.out

   # PyTorch's forward and autograd on the same networks (double precision, <= 1e-10), 1 and 2 ranks
   test:
      suffix: torch_1
      requires: torch
      command: ${exe} -petsc_ci -torch && /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/graph_torch.py unet graph_unet.h5 graph_unet_grad.h5 && /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/graph_torch.py mix graph_mix.h5 graph_mix_grad.h5
      output_file: output/unet_torch.out

   test:
      suffix: torch_2
      nsize: 2
      requires: torch
      args: -sp_da_processors_x 2 -sp_da_processors_y 1
      command: ${mpiexec} -n ${nsize} ${exe} -petsc_ci -torch ${args} && /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/graph_torch.py unet graph_unet.h5 graph_unet_grad.h5 && /usr/bin/python3 ${PETNN_SOURCE_DIR}/tests/graph_torch.py mix graph_mix.h5 graph_mix_grad.h5
      output_file: output/unet_torch.out

   # a skip connection across layouts that pooling and upsampling do not give back
   test:
      suffix: layout_error
      nsize: 3
      args: -layout_error -sp_da_processors_x 3 -sp_da_processors_y 1

TEST*/
