static char help[] = "The CUDA device (-nn_device cuda) against the CPU for CNNs whose spatial (DMDA) activations are split over\n"
                     "the ranks (the halos exchanged through page-locked host buffers). Each case builds a network on\n"
                     "PETSC_COMM_WORLD from options (the to_spatial layer's DMDA split by -sp_da_processors_x/y, given\n"
                     "to the test), runs one batch (NNLossGradient()) on the CPU and on the device with the same weights\n"
                     "and data, in double and in single precision, and compares the loss, the output, the input\n"
                     "gradient and the parameter gradient (relative 2-norm differences). Then a layer without such\n"
                     "device passes is refused at set-up with a message naming it. Without a GPU (or in a PetNN built\n"
                     "without CUDA) the program says why and exits with code 77 (skipped).\n\n"
                     "  -tol_double <1e-12>  device vs cpu in double\n"
                     "  -tol_single <1e-5>   device vs cpu in single precision\n"
                     "  -spectral            run the spectral_conv cases (PetNN built with FFTW) instead of the others\n"
                     "  -print_errors        print the measured differences (not stable output)\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestdevice.h"

#define NBATCH 5

typedef struct {
  const char *label;
  const char *opts; /* network options, each option name without the case's prefix */
  PetscInt    n;    /* samples of the pass (0: NBATCH) */
} Case;

/* the layers with device passes on split activations: conv2d (GEMM passes) with padding, stride, groups, periodic
   padding and without bias, conv3d, max and average pooling (2-d and 3-d) with and without overlapping windows,
   pointwise activations, dropout, batch norm (training: statistics and sums over the ranks), group, instance and layer
   norm, global average pooling, nearest, bilinear and trilinear upsampling, transposed convolutions (2-d and 3-d,
   halos of 0 and more),
   residual and ODE blocks of these, and a graph network (a U-Net: concat, split and add on split activations) */
static const Case cases[] = {
  {"cnn",                                                                     "-nn_layers sp,c1,r1,p1,c2,fl,fc -sp_type to_spatial -c1_type conv2d -c1_filters 6 -c1_kernel 3 -c1_padding 1 -r1_type relu -p1_type maxpool2d -p1_kernel 2 -c2_type conv2d -c2_filters 8 -c2_kernel 5 -c2_padding 2 -fl_type spatial_flatten -fc_type dense -fc_units 7 -nn_input_shape 2,12,18 -nn_loss cross_entropy",                                                                                                                                                                                                                                                                                                                                                   0},
  {"conv stride 2, avgpool 3 stride 1",                                       "-nn_layers sp,c1,a1,p1,c2,a2,fl,fc -sp_type to_spatial -c1_type conv2d -c1_filters 4 -c1_kernel 3 -c1_stride 2 -c1_padding 1 -a1_type tanh -p1_type avgpool2d -p1_kernel 3 -p1_stride 1 -p1_padding 1 -c2_type conv2d -c2_filters 4 -c2_kernel 3 -c2_groups 2 -c2_bias 0 -a2_type gelu -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,11,13 -nn_loss mse",                                                                                                                                                                                                                                                                                          0},
  {"maxpool 3 stride 2, periodic conv, batch 3 of 5",                         "-nn_layers sp,p1,c1,a1,fl,fc -sp_type to_spatial -p1_type maxpool2d -p1_kernel 3 -p1_stride 2 -p1_padding 1 -c1_type conv2d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -c1_periodic -a1_type sigmoid -fl_type spatial_flatten -fc_type dense -fc_units 4 -nn_input_shape 2,10,14 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                              3},
  {"conv, batchnorm2d, dropout",                                              "-nn_layers sp,c1,bn,r1,d1,c2,fl,fc -sp_type to_spatial -c1_type conv2d -c1_filters 4 -c1_kernel 3 -c1_padding 1 -c1_bias 0 -bn_type batchnorm2d -r1_type relu -d1_type dropout -d1_rate 0.25 -c2_type conv2d -c2_filters 3 -c2_kernel 3 -c2_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,9,10 -nn_loss mse",                                                                                                                                                                                                                                                                                                                            0},
  {"group_norm, instance_norm, layer_norm",                                   "-nn_layers sp,c1,gn,a1,in,ln,c2,fl,fc -sp_type to_spatial -c1_type conv2d -c1_filters 4 -c1_kernel 3 -c1_padding 1 -gn_type group_norm -gn_groups 2 -a1_type tanh -in_type instance_norm -in_affine -ln_type layer_norm -c2_type conv2d -c2_filters 3 -c2_kernel 3 -c2_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,9,10 -nn_loss mse",                                                                                                                                                                                                                                                                                                 0},
  {"upsample nearest 2, conv",                                                "-nn_layers sp,u,c1,fl,fc -sp_type to_spatial -u_type upsample -u_scale 2 -c1_type conv2d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,7 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                                                                 0},
  {"residual (conv, batchnorm2d, relu, conv)",                                "-nn_layers sp,c0,res,fl,fc -sp_type to_spatial -c0_type conv2d -c0_filters 3 -c0_kernel 3 -c0_padding 1 -res_type residual -res_layers ca,ba,ra,cb -ca_type conv2d -ca_filters 4 -ca_kernel 3 -ca_padding 1 -ca_bias 0 -ba_type batchnorm2d -ra_type relu -cb_type conv2d -cb_filters 3 -cb_kernel 3 -cb_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,8,9 -nn_loss mse",                                                                                                                                                                                                                                                                0},
  {"global_avgpool",                                                          "-nn_layers sp,c1,a1,gp,fc -sp_type to_spatial -c1_type conv2d -c1_filters 4 -c1_kernel 3 -c1_padding 1 -a1_type tanh -gp_type global_avgpool -fc_type dense -fc_units 3 -nn_input_shape 2,7,9 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                                                                               0},
  {"maxpool 2, conv_transpose2d kernel 2 stride 2",                           "-nn_layers sp,c1,p1,ct,a1,fl,fc -sp_type to_spatial -c1_type conv2d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -p1_type maxpool2d -p1_kernel 2 -ct_type conv_transpose2d -ct_filters 4 -ct_kernel 2 -ct_stride 2 -a1_type tanh -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,12,16 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                    0},
  {"conv_transpose2d kernel 3 stride 2 padding 1 output padding 1, groups 2", "-nn_layers sp,ct,a1,fl,fc -sp_type to_spatial -ct_type conv_transpose2d -ct_filters 4 -ct_kernel 3 -ct_stride 2 -ct_padding 1 -ct_output_padding 1 -ct_groups 2 -a1_type tanh -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,6,7 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                     0},
  {"conv_transpose3d kernel 3 stride 2, dilation 2, no bias",                 "-nn_layers sp,ct,fl,fc -sp_type to_spatial -ct_type conv_transpose3d -ct_filters 2 -ct_kernel 3 -ct_stride 2 -ct_dilation 2 -ct_bias 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,4,6 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                                                          0},
  {"graph: U-Net (conv2d, maxpool2d, conv_transpose2d, concat, split, add)",  "-nn_type graph -nn_input_shape 2,12,12 -nn_layers sp,e1,r1,p1,e2,r2,up,cat,s,d1,d2,a,t,out -sp_type to_spatial -e1_type conv2d -e1_filters 4 -e1_kernel 3 -e1_padding 1 -r1_type tanh -p1_type maxpool2d -p1_kernel 2 -e2_type conv2d -e2_filters 4 -e2_kernel 3 -e2_padding 1 -r2_type tanh -up_type conv_transpose2d -up_filters 4 -up_kernel 2 -up_stride 2 -cat_type concat -cat_inputs up,r1 -s_type split -s_sizes 3,5 -d1_type conv2d -d1_filters 4 -d1_kernel 3 -d1_padding 1 -d1_inputs s:1 -d2_type conv2d -d2_filters 4 -d2_kernel 1 -d2_inputs s:0 -a_type add -a_inputs d1,d2,r1,up -t_type tanh -out_type conv2d -out_filters 2 -out_kernel 1 -nn_loss mse", 0},
  {"upsample bilinear 2, conv",                                               "-nn_layers sp,u,c1,fl,fc -sp_type to_spatial -u_type upsample -u_scale 2 -u_mode bilinear -c1_type conv2d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,7 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                                                0},
  {"upsample trilinear 3, align_corners",                                     "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_scale 3 -u_mode trilinear -u_align_corners -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,4,5 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                                                                                        0},
  {"ode block (rk4: conv, tanh, conv), 2 steps",                              "-nn_layers sp,c0,blk,fl,fc -sp_type to_spatial -c0_type conv2d -c0_filters 3 -c0_kernel 3 -c0_padding 1 -blk_type ode -blk_layers fa,ta,fb -blk_steps 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type conv2d -fa_filters 4 -fa_kernel 3 -fa_padding 1 -ta_type tanh -fb_type conv2d -fb_filters 3 -fb_kernel 3 -fb_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,8,9 -nn_loss mse",                                                                                                                                                                                                                                                         0},
  {"conv3d, avgpool3d",                                                       "-nn_layers sp,c1,a1,p1,fl,fc -sp_type to_spatial -c1_type conv3d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -a1_type leaky_relu -a1_slope 0.1 -p1_type avgpool3d -p1_kernel 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,6,10 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                                    0},
};

/* the spectral_conv layers (their CPU passes need PetNN built with FFTW: run with -spectral, in the test blocks that
   require petnn_fftw): the kept spectra summed over the ranks; odd and even grids, the Nyquist column, with and without
   the pointwise path, a smaller batch, a spatial output, a small FNO */
static const Case spectral_cases[] = {
  {"spectral_conv2d 7x8 modes 3,5 (the Nyquist column)",                      "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv2d -s_filters 3 -s_modes 3,5 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,7,8 -nn_loss mse",                                                                                                                                                 0},
  {"spectral_conv2d 9x10 modes 4,3 no linear, batch 3 of 5",                  "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv2d -s_filters 2 -s_modes 4,3 -s_linear 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,9,10 -nn_loss mse",                                                                                                                                    3},
  {"fno 2-d (lift, 2 x [spectral_conv2d, gelu], projection; spatial output)", "-nn_layers sp,lift,s1,a1,s2,a2,proj -sp_type to_spatial -lift_type conv2d -lift_filters 4 -lift_kernel 1 -s1_type spectral_conv2d -s1_filters 4 -s1_modes 3,4 -a1_type gelu -s2_type spectral_conv2d -s2_filters 4 -s2_modes 3,4 -a2_type gelu -proj_type conv2d -proj_filters 1 -proj_kernel 1 -nn_input_shape 1,8,6 -nn_loss mse", 0},
  {"spectral_conv3d 5x4x6 modes 2,2,4 (the Nyquist column)",                  "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv3d -s_filters 2 -s_modes 2,2,4 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,4,6 -nn_loss mse",                                                                                                                                             0},
  {"spectral_conv3d 4x6x7 modes 1,2,3 no linear",                             "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv3d -s_filters 3 -s_modes 1,2,3 -s_linear 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,6,7 -nn_loss mse",                                                                                                                                 0},
};

/* inputs in [-1, 1], the same on every rank (the sequential batch is replicated), and targets fitting the loss */
static PetscErrorCode FillBatch(PetscRandom rand, NN net, Vec x, Vec t)
{
  PetscInt     nx, nt, nout;
  PetscScalar *a, u;
  NNShape      out;
  NNLossType   loss;
  PetscBool    ce;

  PetscFunctionBegin;
  PetscCall(NNGetLoss(net, &loss));
  PetscCall(PetscStrcmp(loss, NNLOSSCROSSENTROPY, &ce));
  PetscCall(NNGetOutputShape(net, &out));
  nout = NNShapeSize(&out);
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < nx; i++) {
    PetscCall(PetscRandomGetValue(rand, &u));
    a[i] = 2 * u - 1;
  }
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetArray(t, &a));
  for (PetscInt i = 0; i < nt; i++) {
    PetscCall(PetscRandomGetValue(rand, &u));
    a[i] = ce ? (PetscReal)PetscMin(nout - 1, (PetscInt)(u * nout)) : u - 0.5;
  }
  PetscCall(VecRestoreArray(t, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(PetscRandom rand, const PetscReal tol[2], PetscBool print, const char *pre, PetscInt k, const Case *c)
{
  const char *what[4] = {"loss", "output", "input gradient", "parameter gradient"};
  PetscInt    n       = c->n ? c->n : NBATCH;
  char        prefix[16];
  NN          net;
  Vec         x, t;
  PetscMPIInt size;
  DM          da;
  PetscInt    m, mm;
  const Vec  *act, *dact;
  PetscInt    nact;
  NNRandom    rng0;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s%d_", pre, (int)k));
  PetscCall(NNTestInsertPrefixed(prefix, c->opts));
  PetscCall(NNTestPassCreateNet(PETSC_COMM_WORLD, prefix, NBATCH, &net));
  /* the test is about split activations: the first spatial activation must be split as the test's options say */
  PetscCall(NNGetActivationVecs(net, &nact, &act, &dact));
  PetscCall(VecGetDM(act[1], &da));
  PetscCall(DMDAGetInfo(da, NULL, NULL, NULL, NULL, &m, &mm, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(m * mm == size, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the spatial activations are split over %" PetscInt_FMT " x %" PetscInt_FMT " ranks, not all %d", c->label, m, mm, (int)size);
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(FillBatch(rand, net, x, t));
  rng0 = net->rng;              /* both devices draw the same dropout masks */
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
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: cuda vs cpu, split spatial activations, %s, <= %g PASSED\n", c->label, NNPrecisions[p], (double)tol[p]));
    PetscCall(NNTestPassDestroy(&rc));
    PetscCall(NNTestPassDestroy(&rg));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(NNTestClearPrefixed(prefix, c->opts));
  PetscFunctionReturn(0);
}

/* conv2d through cuDNN (its passes run on one rank) is refused on split activations at set-up, named with the GEMM
   passes that do run there */
static PetscErrorCode CheckRefusal(void)
{
  const char *copts = "-nn_layers sp,c,fl -sp_type to_spatial -c_type conv2d -c_filters 2 -c_kernel 3 -c_device_algorithm cudnn -fl_type spatial_flatten -nn_input_shape 2,6,6";
  char       *msg, *found;

  PetscFunctionBegin;
  PetscCall(NNTestInsertPrefixed("e_", copts));
  PetscCall(NNTestPassExpectSetUpError(PETSC_COMM_WORLD, "e_", NN_DEVICE_CUDA, "conv2d through cuDNN on split spatial activations", "layer c (type conv2d) has no device passes for spatial (DMDA) activations split over ranks", &msg));
  PetscCall(PetscStrstr(msg, "device_algorithm gemm", &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the refusal does not name the GEMM passes: %s", msg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "conv2d with -device_algorithm cudnn on split spatial activations is refused with a message naming it and the GEMM passes: PASSED\n"));
  PetscCall(NNTestClearPrefixed("e_", copts));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscRandom rand;
  PetscReal   tol[2] = {1e-12, 1e-5};
  PetscBool   avail, print = PETSC_FALSE, spectral = PETSC_FALSE;
  char        why[512];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_double", &tol[NN_PRECISION_DOUBLE], NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_single", &tol[NN_PRECISION_SINGLE], NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-print_errors", &print, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-spectral", &spectral, NULL));
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
  if (!avail) { /* exit code 77: the harness reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cuda_spatial_split: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rand)); /* the same numbers on every rank */
  PetscCall(PetscRandomSetSeed(rand, 23));
  PetscCall(PetscRandomSeed(rand));
  if (spectral)
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(spectral_cases); k++) PetscCall(RunCase(rand, tol, print, "f", k, &spectral_cases[k]));
  else {
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(rand, tol, print, "s", k, &cases[k]));
    PetscCall(CheckRefusal());
  }
  PetscCall(PetscRandomDestroy(&rand));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # the spatial activations split along x over 2 and 3 ranks, and 2 x 2; in the CUDA emulation (the device code on
   # the host) and on a GPU
   test:
      requires: cuda_emulation
      suffix: emulation_2
      nsize: 2
      args: -s0_sp_da_processors_x 2 -s1_sp_da_processors_x 2 -s2_sp_da_processors_x 2 -s3_sp_da_processors_x 2 -s4_sp_da_processors_x 2 -s5_sp_da_processors_x 2 -s6_sp_da_processors_x 2 -s7_sp_da_processors_x 2 -s8_sp_da_processors_x 2 -s9_sp_da_processors_x 2 -s10_sp_da_processors_x 2 -s11_sp_da_processors_x 2 -s12_sp_da_processors_x 2 -s13_sp_da_processors_x 2 -s14_sp_da_processors_x 2 -s15_sp_da_processors_x 2 -e_sp_da_processors_x 2
      output_file: output/cuda_spatial_split.out

   test:
      requires: cuda_emulation
      suffix: emulation_3
      nsize: 3
      args: -s0_sp_da_processors_x 3 -s1_sp_da_processors_x 3 -s2_sp_da_processors_x 3 -s3_sp_da_processors_x 3 -s4_sp_da_processors_x 3 -s5_sp_da_processors_x 3 -s6_sp_da_processors_x 3 -s7_sp_da_processors_x 3 -s8_sp_da_processors_x 3 -s9_sp_da_processors_x 3 -s10_sp_da_processors_x 3 -s11_sp_da_processors_x 3 -s12_sp_da_processors_x 3 -s13_sp_da_processors_x 3 -s14_sp_da_processors_x 3 -s15_sp_da_processors_x 3 -e_sp_da_processors_x 3
      output_file: output/cuda_spatial_split.out

   test:
      requires: cuda_emulation
      suffix: emulation_4
      nsize: 4
      args: -s0_sp_da_processors_x 2 -s0_sp_da_processors_y 2 -s1_sp_da_processors_x 2 -s1_sp_da_processors_y 2 -s2_sp_da_processors_x 2 -s2_sp_da_processors_y 2 -s3_sp_da_processors_x 2 -s3_sp_da_processors_y 2 -s4_sp_da_processors_x 2 -s4_sp_da_processors_y 2 -s5_sp_da_processors_x 2 -s5_sp_da_processors_y 2 -s6_sp_da_processors_x 2 -s6_sp_da_processors_y 2 -s7_sp_da_processors_x 2 -s7_sp_da_processors_y 2 -s8_sp_da_processors_x 2 -s8_sp_da_processors_y 2 -s9_sp_da_processors_x 2 -s9_sp_da_processors_y 2 -s10_sp_da_processors_x 2 -s10_sp_da_processors_y 2 -s11_sp_da_processors_x 2 -s11_sp_da_processors_y 2 -s12_sp_da_processors_x 2 -s12_sp_da_processors_y 2 -s13_sp_da_processors_x 2 -s13_sp_da_processors_y 2 -s14_sp_da_processors_x 2 -s14_sp_da_processors_y 2 -s15_sp_da_processors_x 2 -s15_sp_da_processors_y 2 -e_sp_da_processors_x 2 -e_sp_da_processors_y 2
      output_file: output/cuda_spatial_split.out

   test:
      requires: cuda
      suffix: 2
      nsize: 2
      args: -s0_sp_da_processors_x 2 -s1_sp_da_processors_x 2 -s2_sp_da_processors_x 2 -s3_sp_da_processors_x 2 -s4_sp_da_processors_x 2 -s5_sp_da_processors_x 2 -s6_sp_da_processors_x 2 -s7_sp_da_processors_x 2 -s8_sp_da_processors_x 2 -s9_sp_da_processors_x 2 -s10_sp_da_processors_x 2 -s11_sp_da_processors_x 2 -s12_sp_da_processors_x 2 -s13_sp_da_processors_x 2 -s14_sp_da_processors_x 2 -s15_sp_da_processors_x 2 -e_sp_da_processors_x 2
      output_file: output/cuda_spatial_split.out

   # the spectral_conv cases (-spectral): their CPU passes need FFTW
   test:
      requires: cuda_emulation petnn_fftw
      suffix: emulation_spectral_2
      nsize: 2
      args: -spectral -f0_sp_da_processors_x 2 -f1_sp_da_processors_x 2 -f2_sp_da_processors_x 2 -f3_sp_da_processors_x 2 -f4_sp_da_processors_x 2
      output_file: output/cuda_spatial_split_spectral.out

   test:
      requires: cuda_emulation petnn_fftw
      suffix: emulation_spectral_3
      nsize: 3
      args: -spectral -f0_sp_da_processors_x 3 -f1_sp_da_processors_x 3 -f2_sp_da_processors_x 3 -f3_sp_da_processors_x 3 -f4_sp_da_processors_x 3
      output_file: output/cuda_spatial_split_spectral.out

   test:
      requires: cuda_emulation petnn_fftw
      suffix: emulation_spectral_4
      nsize: 4
      args: -spectral -f0_sp_da_processors_x 2 -f0_sp_da_processors_y 2 -f1_sp_da_processors_x 2 -f1_sp_da_processors_y 2 -f2_sp_da_processors_x 2 -f2_sp_da_processors_y 2 -f3_sp_da_processors_x 2 -f3_sp_da_processors_y 2 -f4_sp_da_processors_x 2 -f4_sp_da_processors_y 2
      output_file: output/cuda_spatial_split_spectral.out

   test:
      requires: cuda petnn_fftw
      suffix: spectral_2
      nsize: 2
      args: -spectral -f0_sp_da_processors_x 2 -f1_sp_da_processors_x 2 -f2_sp_da_processors_x 2 -f3_sp_da_processors_x 2 -f4_sp_da_processors_x 2
      output_file: output/cuda_spatial_split_spectral.out

TEST*/
