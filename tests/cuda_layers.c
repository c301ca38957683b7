static char help[] = "The CUDA device (-nn_device cuda) against the CPU, layer type by layer type, then whole MLP training steps.\n\n"
                     "Each case builds a small network from options and runs one batch (NNLossGradient()) on the CPU\n"
                     "and on the GPU with the same weights and data, in double and in single precision, and compares\n"
                     "the loss, the output, the input gradient and the parameter gradient (relative 2-norm\n"
                     "differences). Spatial (DMDA) cases run a network of one rank on every rank (the device takes\n"
                     "spatial activations on one rank only); a case with a smaller batch compares the loss and the\n"
                     "parameter gradient. Then an MLP takes Adam steps on both devices and the parameters are compared.\n"
                     "Without a GPU (or in a PetNN built without CUDA) the program says why and exits with code 77,\n"
                     "which the test harness reports as skipped.\n\n"
                     "  -tol_double <1e-12>  cuda vs cpu in double\n"
                     "  -tol_single <1e-5>   cuda vs cpu in single precision\n"
                     "  -cases <string>      only the cases whose label contains this string\n"
                     "  -print_errors        print the measured differences (not stable output)\n"
                     "  -cpu_vs_cpu          run the cases on the CPU twice (checks the cases themselves where there is no GPU)\n"
                     "  -spectral            run the spectral_conv cases (PetNN built with FFTW) instead of the others\n"
                     "  -cudnn               run conv2d cases through cuDNN (-device_algorithm cudnn) instead of the others\n\n"
                     "A case's options may give the network a spatial input: -test_input_dm C,H,W (a DMDA on the case's\n"
                     "communicator, NNSetInputDM()).\n"
                     "A network with buffers (batch norm's running statistics) must have the same buffers after the pass on both\n"
                     "devices (1e-12 in double, 1e-6 in single). A case's options may hold test options: -test_eval (evaluation mode,\n"
                     "buffers drawn in [0.5, 1.5]) and -test_perturb <a> (a uniform number in [-a, a] added to every parameter).\n\n";

#include <petnn/private/nnimpl.h>
#include "nntestdevice.h"

#define NBATCH 6

typedef struct {
  PetscRandom rand;
  PetscReal   tol[2];    /* [NNPrecision] */
  PetscReal   buftol[2]; /* buffers (running statistics) after the pass */
  PetscBool   print_errors;
  NNDevice    dev; /* the device compared with the CPU (NN_DEVICE_CPU with -cpu_vs_cpu) */
  char        only[64];
} Ctx;

typedef struct {
  const char *label;
  const char *opts;     /* network options, each option name without the case's prefix */
  PetscBool   kinkfree; /* inputs at least 0.2 away from 0 (ReLU kinks at the input) */
  PetscBool   self;     /* a network on PETSC_COMM_SELF: spatial activations run on the device on one rank only */
  PetscInt    n;        /* samples of the pass (0: the batch size NBATCH) */
} Case;

/* every layer type with device passes (NN_DEVICE_LAYER_TYPES), each with a dense layer for parameter gradients, and the
   losses the device evaluates (src/loss/interface/loss_kernels.cu) */
static const Case cases[] = {
  {"dense",                                                                                    "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_FALSE, 0},
  {"dense without bias",                                                                       "-nn_layers fc -fc_type dense -fc_units 5 -fc_bias 0 -nn_input_shape 7 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                               PETSC_FALSE, PETSC_FALSE, 0},
  {"flatten",                                                                                  "-nn_layers f,fc -f_type flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,4 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                    PETSC_FALSE, PETSC_FALSE, 0},
  {"relu",                                                                                     "-nn_layers a,fc -a_type relu -fc_type dense -fc_units 4 -nn_input_shape 9 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, 0},
  {"leaky_relu",                                                                               "-nn_layers a,fc -a_type leaky_relu -a_slope 0.1 -fc_type dense -fc_units 4 -nn_input_shape 9 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, 0},
  {"tanh",                                                                                     "-nn_layers a,fc -a_type tanh -fc_type dense -fc_units 4 -nn_input_shape 9 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                           PETSC_FALSE, PETSC_FALSE, 0},
  {"sigmoid",                                                                                  "-nn_layers a,fc -a_type sigmoid -fc_type dense -fc_units 4 -nn_input_shape 9 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                        PETSC_FALSE, PETSC_FALSE, 0},
  {"gelu",                                                                                     "-nn_layers a,fc -a_type gelu -fc_type dense -fc_units 4 -nn_input_shape 9 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                           PETSC_FALSE, PETSC_FALSE, 0},
  {"loss cross_entropy",                                                                       "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss cross_entropy",                                                                                                                                                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_FALSE, 0},
  {"loss mse, batch 4 of 6",                                                                   "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_FALSE, 4},
  {"loss l1",                                                                                  "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss l1",                                                                                                                                                                                                                                                                                                                                                                                           PETSC_FALSE, PETSC_FALSE, 0},
  {"loss huber",                                                                               "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss huber -nn_loss_huber_delta 0.3",                                                                                                                                                                                                                                                                                                                                                               PETSC_FALSE, PETSC_FALSE, 0},
  {"loss bce_with_logits",                                                                     "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss bce_with_logits",                                                                                                                                                                                                                                                                                                                                                                              PETSC_FALSE, PETSC_FALSE, 0},
  {"loss cross_entropy, batch 4 of 6",                                                         "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss cross_entropy",                                                                                                                                                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_FALSE, 4},
  {"loss rel_l2 (on the host)",                                                                "-nn_layers fc -fc_type dense -fc_units 5 -nn_input_shape 7 -nn_loss rel_l2",                                                                                                                                                                                                                                                                                                                                                                                       PETSC_FALSE, PETSC_FALSE, 0},
  {"mlp",                                                                                      "-nn_layers f,fc1,a1,fc2,a2,fc3 -f_type flatten -fc1_type dense -fc1_units 32 -a1_type tanh -fc2_type dense -fc2_units 16 -a2_type gelu -fc3_type dense -fc3_units 10 -nn_input_shape 1,6,6 -nn_loss cross_entropy",                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_FALSE, 0},
  {"dropout",                                                                                  "-nn_layers fc0,drop,fc -fc0_type dense -fc0_units 8 -drop_type dropout -drop_rate 0.3 -fc_type dense -fc_units 4 -nn_input_shape 5 -nn_loss mse",                                                                                                                                                                                                                                                                                                                  PETSC_FALSE, PETSC_TRUE,  0},
  {"to_spatial, spatial_flatten",                                                              "-nn_layers sp,fl,fc -sp_type to_spatial -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,4 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                   PETSC_FALSE, PETSC_TRUE,  0},
  {"maxpool2d 2x2",                                                                            "-nn_layers sp,p,fl,fc -sp_type to_spatial -p_type maxpool2d -p_kernel 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,7,6 -nn_loss mse",                                                                                                                                                                                                                                                                                                   PETSC_FALSE, PETSC_TRUE,  0},
  {"maxpool2d 3x3 stride 2 padding 1",                                                         "-nn_layers sp,p,fl,fc -sp_type to_spatial -p_type maxpool2d -p_kernel 3 -p_stride 2 -p_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,7,6 -nn_loss mse",                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_TRUE,  0},
  {"avgpool2d 3x3 stride 2 padding 1",                                                         "-nn_layers sp,p,fl,fc -sp_type to_spatial -p_type avgpool2d -p_kernel 3 -p_stride 2 -p_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,7,6 -nn_loss mse",                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_TRUE,  0},
  {"global_avgpool",                                                                           "-nn_layers sp,g,fc -sp_type to_spatial -g_type global_avgpool -fc_type dense -fc_units 3 -nn_input_shape 3,5,4 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                      PETSC_FALSE, PETSC_TRUE,  0},
  {"global_avgpool 3d, batch 4 of 6",                                                          "-nn_layers sp,g,fc -sp_type to_spatial -g_type global_avgpool -fc_type dense -fc_units 3 -nn_input_shape 2,3,4,3 -nn_loss cross_entropy",                                                                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_TRUE,  4},
  {"upsample nearest 2d",                                                                      "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_scale 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,4 -nn_loss mse",                                                                                                                                                                                                                                                                                                     PETSC_FALSE, PETSC_TRUE,  0},
  {"upsample nearest 3d scale 3",                                                              "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_scale 3 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,2,3,2 -nn_loss mse",                                                                                                                                                                                                                                                                                                   PETSC_FALSE, PETSC_TRUE,  0},
  {"upsample bilinear 2d",                                                                     "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_mode bilinear -u_scale 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,4 -nn_loss mse",                                                                                                                                                                                                                                                                                    PETSC_FALSE, PETSC_TRUE,  0},
  {"upsample bilinear 2d scale 3 align_corners, one row",                                      "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_mode bilinear -u_scale 3 -u_align_corners -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,1,5 -nn_loss mse",                                                                                                                                                                                                                                                                   PETSC_FALSE, PETSC_TRUE,  0},
  {"upsample trilinear 3d scale 3",                                                            "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_mode trilinear -u_scale 3 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,2,3,4 -nn_loss mse",                                                                                                                                                                                                                                                                                 PETSC_FALSE, PETSC_TRUE,  0},
  {"upsample trilinear 3d align_corners, batch 4 of 6",                                        "-nn_layers sp,u,fl,fc -sp_type to_spatial -u_type upsample -u_mode trilinear -u_scale 2 -u_align_corners -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,2,3 -nn_loss mse",                                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_TRUE,  4},
  {"residual (dense, tanh, dense)",                                                            "-nn_layers fc0,res,fc -fc0_type dense -fc0_units 6 -res_type residual -res_layers fa,ta,fb -fa_type dense -fa_units 8 -ta_type tanh -fb_type dense -fb_units 6 -fc_type dense -fc_units 3 -nn_input_shape 5 -nn_loss mse",                                                                                                                                                                                                                                         PETSC_FALSE, PETSC_FALSE, 0},
  {"residual on a spatial state (avgpool2d 3x3 same, tanh)",                                   "-nn_layers sp,res,fl,fc -sp_type to_spatial -res_type residual -res_layers pa,ta -pa_type avgpool2d -pa_kernel 3 -pa_stride 1 -pa_padding 1 -ta_type tanh -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,4 -nn_loss mse",                                                                                                                                                                                                                 PETSC_FALSE, PETSC_TRUE,  0},
  {"residual on a spatial state (avgpool2d 3x3 same, tanh), batch 4 of 6",                     "-nn_layers sp,res,fl,fc -sp_type to_spatial -res_type residual -res_layers pa,ta -pa_type avgpool2d -pa_kernel 3 -pa_stride 1 -pa_padding 1 -ta_type tanh -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,4 -nn_loss mse",                                                                                                                                                                                                                 PETSC_FALSE, PETSC_TRUE,  4},
  {"graph: fan-out, split, add, concat",                                                       "-nn_type graph -nn_input_shape 5 -nn_layers d1,t1,s,d2,d3,a,g,c,out -d1_type dense -d1_units 6 -t1_type tanh -s_type split -s_sizes 2,4 -d2_type dense -d2_units 4 -d2_inputs s:0 -d3_type dense -d3_units 4 -d3_inputs input -a_type add -a_inputs d2,s:1,d3 -g_type tanh -c_type concat -c_inputs g,t1 -out_type dense -out_units 3 -nn_loss mse",                                                                                                               PETSC_FALSE, PETSC_FALSE, 0},
  {"graph on a spatial state: split, avgpool2d, concat, add, batch 4 of 6",                    "-nn_type graph -nn_input_shape 4,6,5 -nn_layers sp,s,p,a,c,r,fl,fc -sp_type to_spatial -s_type split -s_sizes 1,3 -p_type avgpool2d -p_kernel 3 -p_stride 1 -p_padding 1 -p_inputs s:1 -a_type tanh -a_inputs s:0 -c_type concat -c_inputs a,p -r_type add -r_inputs c,sp -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                       PETSC_FALSE, PETSC_TRUE,  4},
  {"graph on a spatial state: split, avgpool2d, concat, add",                                  "-nn_type graph -nn_input_shape 4,6,5 -nn_layers sp,s,p,a,c,r,fl,fc -sp_type to_spatial -s_type split -s_sizes 1,3 -p_type avgpool2d -p_kernel 3 -p_stride 1 -p_padding 1 -p_inputs s:1 -a_type tanh -a_inputs s:0 -c_type concat -c_inputs a,p -r_type add -r_inputs c,sp -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                       PETSC_FALSE, PETSC_TRUE,  0},
  {"spatial output (conv2d, mse on the DMDA layout)",                                          "-nn_layers sp,c -sp_type to_spatial -c_type conv2d -c_filters 2 -c_kernel 3 -c_padding 1 -nn_input_shape 2,5,4 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                      PETSC_FALSE, PETSC_TRUE,  0},
  {"spatial output (conv2d, mse on the DMDA layout), batch 4 of 6",                            "-nn_layers sp,c -sp_type to_spatial -c_type conv2d -c_filters 2 -c_kernel 3 -c_padding 1 -nn_input_shape 2,5,4 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                      PETSC_FALSE, PETSC_TRUE,  4},
  {"spatial input (NNSetInputDM): conv2d, relu, conv2d, mse on the DMDA layout",               "-test_input_dm 2,5,4 -nn_layers c1,r,c2 -c1_type conv2d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -r_type relu -c2_type conv2d -c2_filters 2 -c2_kernel 3 -c2_padding 1 -nn_loss mse",                                                                                                                                                                                                                                                                              PETSC_FALSE, PETSC_TRUE,  0},
  {"spatial input (NNSetInputDM), batch 4 of 6",                                               "-test_input_dm 2,5,4 -nn_layers c1,r,c2 -c1_type conv2d -c1_filters 3 -c1_kernel 3 -c1_padding 1 -r_type relu -c2_type conv2d -c2_filters 2 -c2_kernel 3 -c2_padding 1 -nn_loss mse",                                                                                                                                                                                                                                                                              PETSC_FALSE, PETSC_TRUE,  4},
  {"u-net (graph, spatial input, periodic conv2d, maxpool2d, conv_transpose2d, concat, gelu)", "-test_input_dm 1,8,8 -nn_type graph -nn_layers e1,a1,p1,b,ab,u1,c1,d1,ad1,out -e1_type conv2d -e1_filters 4 -e1_kernel 3 -e1_periodic -a1_type gelu -p1_type maxpool2d -p1_kernel 2 -b_type conv2d -b_filters 8 -b_kernel 3 -b_periodic -ab_type gelu -u1_type conv_transpose2d -u1_filters 4 -c1_type concat -c1_inputs u1,a1 -d1_type conv2d -d1_filters 4 -d1_kernel 3 -d1_periodic -ad1_type gelu -out_type conv2d -out_filters 1 -out_kernel 1 -nn_loss mse", PETSC_FALSE, PETSC_TRUE,  0},
  {"conv2d stride 2 dilation 2 groups 2",                                                      "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv2d -c_filters 4 -c_kernel 3 -c_stride 2 -c_dilation 2 -c_groups 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,9,8 -nn_loss mse",                                                                                                                                                                                                                                                   PETSC_FALSE, PETSC_TRUE,  0},
  {"conv2d 1x3 no bias",                                                                       "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv2d -c_filters 3 -c_kernel 1,3 -c_bias 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,6 -nn_loss mse",                                                                                                                                                                                                                                                                             PETSC_FALSE, PETSC_TRUE,  0},
  {"conv2d 3x3 stride 2 padding 1, gemm",                                                      "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv2d -c_filters 5 -c_kernel 3 -c_stride 2 -c_padding 1 -c_device_algorithm gemm -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,7,8 -nn_loss mse",                                                                                                                                                                                                                                       PETSC_FALSE, PETSC_TRUE,  0},
  {"conv2d periodic dilation 2 groups 3, gemm",                                                "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv2d -c_filters 6 -c_kernel 3 -c_dilation 2 -c_groups 3 -c_periodic -c_device_algorithm gemm -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,5,6 -nn_loss mse",                                                                                                                                                                                                                          PETSC_FALSE, PETSC_TRUE,  0},
  {"conv3d 3x2x3 stride 2,1,2 padding 1,0,1 groups 2",                                         "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv3d -c_filters 4 -c_kernel 3,2,3 -c_stride 2,1,2 -c_padding 1,0,1 -c_groups 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,4,6 -nn_loss mse",                                                                                                                                                                                                                                      PETSC_FALSE, PETSC_TRUE,  0},
  {"conv3d no bias, relu, maxpool3d",                                                          "-nn_layers sp,c,r,p,fl,fc -sp_type to_spatial -c_type conv3d -c_filters 3 -c_kernel 3 -c_bias 0 -r_type relu -p_type maxpool3d -p_kernel 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,5,4 -nn_loss mse",                                                                                                                                                                                                                              PETSC_FALSE, PETSC_TRUE,  0},
  {"conv_transpose2d 3x3 stride 2 padding 1 output padding 1 groups 2",                        "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv_transpose2d -c_filters 4 -c_kernel 3 -c_stride 2 -c_padding 1 -c_output_padding 1 -c_groups 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,5 -nn_loss mse",                                                                                                                                                                                                                      PETSC_FALSE, PETSC_TRUE,  0},
  {"conv_transpose2d 2x3 stride 1,2 dilation 2 output padding 1 no bias",                      "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv_transpose2d -c_filters 3 -c_kernel 2,3 -c_stride 1,2 -c_dilation 2 -c_output_padding 1 -c_bias 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,3 -nn_loss mse",                                                                                                                                                                                                                   PETSC_FALSE, PETSC_TRUE,  0},
  {"conv_transpose3d 3x3x3 stride 2 padding 1 output padding 1 groups 2",                      "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv_transpose3d -c_filters 2 -c_kernel 3 -c_stride 2 -c_padding 1 -c_output_padding 1 -c_groups 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 4,3,2,3 -nn_loss mse",                                                                                                                                                                                                                    PETSC_FALSE, PETSC_TRUE,  0},
  {"conv3d, sigmoid, conv_transpose3d 2x2x2 stride 2 no bias, batch 3 of 6",                   "-nn_layers sp,c,a,u,fl,fc -sp_type to_spatial -c_type conv3d -c_filters 3 -c_kernel 3 -c_stride 2 -a_type sigmoid -u_type conv_transpose3d -u_filters 2 -u_bias 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,4,5 -nn_loss mse",                                                                                                                                                                                                       PETSC_FALSE, PETSC_TRUE,  3},
  {"ode (rk4)",                                                                                "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (rk4, 5 steps, 2 checkpoints)",                                                        "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 5 -blk_checkpoints 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                             PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (rk4, parameters per step, 3 checkpoints)",                                            "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_checkpoints 3 -blk_parameters per_step -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                    PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (rk4, observation times 0, 0.5, 1)",                                                   "-nn_input_shape 4 -nn_layers fc1,blk,fl,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_observation_times 0,0.5,1 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fl_type flatten -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                             PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (rk4, observation times 0.25, 0.75, parameters per step, 2 checkpoints)",              "-nn_input_shape 4 -nn_layers fc1,blk,fl,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_observation_times 0.25,0.75 -blk_parameters per_step -blk_checkpoints 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fl_type flatten -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                               PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (rk4, time input, parameters per step)",                                               "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_time_input -blk_parameters per_step -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                       PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (discrete scheme, time input, observation times 0.5, 1, 2 checkpoints)",               "-nn_input_shape 4 -nn_layers fc1,blk,fl,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_time_input -blk_observation_times 0.5,1 -blk_checkpoints 2 -blk_scheme discrete -blk_parameters per_step -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fl_type flatten -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (discrete scheme, parameters per step)",                                               "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_scheme discrete -blk_parameters per_step -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                    PETSC_FALSE, PETSC_FALSE, 0},
  {"ode (rk 3bs, stages evaluated again)",                                                     "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 3bs -blk_store_activations 0 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                     PETSC_FALSE, PETSC_FALSE, 0},
  {"ode on a spatial state (f = tanh)",                                                        "-nn_layers sp,blk,fl,fc -sp_type to_spatial -blk_type ode -blk_layers ta -blk_time 1 -blk_steps 2 -blk_ts_type rk -blk_ts_rk_type 4 -ta_type tanh -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,3 -nn_loss mse",                                                                                                                                                                                                                         PETSC_FALSE, PETSC_TRUE,  0},
  {"ode on a spatial state (conv2d - tanh - conv2d)",                                          "-nn_layers sp,c0,blk,fl,fc -sp_type to_spatial -c0_type conv2d -c0_filters 4 -c0_kernel 3 -c0_padding 1 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type conv2d -fa_filters 4 -fa_kernel 3 -fa_padding 1 -ta_type tanh -fb_type conv2d -fb_filters 4 -fb_kernel 3 -fb_padding 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 1,6,5 -nn_loss mse",                                     PETSC_FALSE, PETSC_TRUE,  0},
  {"cnn",                                                                                      "-nn_layers sp,c1,r1,p1,c2,fl,fc -sp_type to_spatial -c1_type conv2d -c1_filters 16 -c1_kernel 3 -c1_padding 1 -r1_type relu -p1_type maxpool2d -p1_kernel 2 -c2_type conv2d -c2_filters 32 -c2_kernel 5 -c2_padding 2 -fl_type spatial_flatten -fc_type dense -fc_units 10 -nn_input_shape 1,12,12 -nn_loss cross_entropy",                                                                                                                                        PETSC_FALSE, PETSC_TRUE,  0},
  {"cnn with dropout, batch 4 of 6",                                                           "-nn_layers sp,c1,r1,p1,c2,r2,p2,fl,fc1,r3,drop,fc2 -sp_type to_spatial -c1_type conv2d -c1_filters 8 -c1_kernel 5 -c1_padding 2 -r1_type relu -p1_type maxpool2d -p1_kernel 2 -c2_type conv2d -c2_filters 16 -c2_kernel 5 -c2_padding 2 -r2_type relu -p2_type maxpool2d -p2_kernel 2 -fl_type spatial_flatten -fc1_type dense -fc1_units 32 -r3_type relu -drop_type dropout -fc2_type dense -fc2_units 10 -nn_input_shape 1,12,12 -nn_loss cross_entropy",       PETSC_FALSE, PETSC_TRUE,  4},
  {"batchnorm1d",                                                                              "-nn_layers fc0,bn,fc -fc0_type dense -fc0_units 5 -bn_type batchnorm1d -fc_type dense -fc_units 3 -nn_input_shape 4 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                                               PETSC_FALSE, PETSC_FALSE, 0},
  {"batchnorm1d, evaluation mode",                                                             "-nn_layers fc0,bn,fc -fc0_type dense -fc0_units 5 -bn_type batchnorm1d -fc_type dense -fc_units 3 -nn_input_shape 4 -nn_loss mse -test_perturb 0.5 -test_eval",                                                                                                                                                                                                                                                                                                    PETSC_FALSE, PETSC_FALSE, 0},
  {"batchnorm2d",                                                                              "-nn_layers sp,bn,fl,fc -sp_type to_spatial -bn_type batchnorm2d -bn_momentum 0.3 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,8,6 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                        PETSC_FALSE, PETSC_TRUE,  0},
  {"batchnorm2d, evaluation mode",                                                             "-nn_layers sp,bn,fl,fc -sp_type to_spatial -bn_type batchnorm2d -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,8,6 -nn_loss mse -test_perturb 0.5 -test_eval",                                                                                                                                                                                                                                                                              PETSC_FALSE, PETSC_TRUE,  0},
  {"batchnorm2d, batch 4 of 6",                                                                "-nn_layers sp,bn,fl,fc -sp_type to_spatial -bn_type batchnorm2d -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,8,6 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                         PETSC_FALSE, PETSC_TRUE,  4},
  {"batchnorm3d",                                                                              "-nn_layers sp,bn,fl,fc -sp_type to_spatial -bn_type batchnorm3d -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,3,4,3 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                       PETSC_FALSE, PETSC_TRUE,  0},
  {"layer_norm",                                                                               "-nn_layers ln,fc -ln_type layer_norm -fc_type dense -fc_units 3 -nn_input_shape 7 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                                                                                 PETSC_FALSE, PETSC_FALSE, 0},
  {"layer_norm without affine, (C,L) samples",                                                 "-nn_layers ln,f,fc -ln_type layer_norm -ln_affine 0 -f_type flatten -fc_type dense -fc_units 3 -nn_input_shape 4,5 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_FALSE, 0},
  {"layer_norm spatial",                                                                       "-nn_layers sp,ln,fl,fc -sp_type to_spatial -ln_type layer_norm -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 4,3,5 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_TRUE,  0},
  {"group_norm, (C,L) samples",                                                                "-nn_layers gn,f,fc -gn_type group_norm -gn_groups 2 -f_type flatten -fc_type dense -fc_units 3 -nn_input_shape 6,4 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_FALSE, 0},
  {"group_norm spatial",                                                                       "-nn_layers sp,gn,fl,fc -sp_type to_spatial -gn_type group_norm -gn_groups 2 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 4,8,8 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                             PETSC_FALSE, PETSC_TRUE,  0},
  {"group_norm spatial without affine, batch 4 of 6",                                          "-nn_layers sp,gn,fl,fc -sp_type to_spatial -gn_type group_norm -gn_groups 3 -gn_affine 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 6,3,4 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                PETSC_FALSE, PETSC_TRUE,  4},
  {"instance_norm spatial, affine",                                                            "-nn_layers sp,in,fl,fc -sp_type to_spatial -in_type instance_norm -in_affine 1 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,4,4 -nn_loss mse -test_perturb 0.5",                                                                                                                                                                                                                                                                          PETSC_FALSE, PETSC_TRUE,  0},
};

/* conv2d through cuDNN (-device_algorithm cudnn; the default is the GEMM passes): run with -cudnn, in the test blocks of a
   PetNN built with CUDA (a GPU); the emulation has no cuDNN */
static const Case cudnn_cases[] = {
  {"conv2d stride 2 dilation 2 groups 2, cudnn", "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv2d -c_filters 4 -c_kernel 3 -c_stride 2 -c_dilation 2 -c_groups 2 -c_device_algorithm cudnn -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,9,8 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
  {"conv2d 1x3 no bias, cudnn", "-nn_layers sp,c,fl,fc -sp_type to_spatial -c_type conv2d -c_filters 3 -c_kernel 1,3 -c_bias 0 -c_device_algorithm cudnn -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,6 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
  {"cnn with dropout, batch 4 of 6, cudnn", "-nn_layers sp,c1,r1,p1,c2,r2,p2,fl,fc1,r3,drop,fc2 -sp_type to_spatial -c1_type conv2d -c1_filters 8 -c1_kernel 5 -c1_padding 2 -c1_device_algorithm cudnn -r1_type relu -p1_type maxpool2d -p1_kernel 2 -c2_type conv2d -c2_filters 16 -c2_kernel 5 -c2_padding 2 -c2_device_algorithm cudnn -r2_type relu -p2_type maxpool2d -p2_kernel 2 -fl_type spatial_flatten -fc1_type dense -fc1_units 32 -r3_type relu -drop_type dropout -fc2_type dense -fc2_units 10 -nn_input_shape 1,12,12 -nn_loss cross_entropy", PETSC_FALSE, PETSC_TRUE, 4},
};

/* the spectral_conv layers (their CPU passes need PetNN built with FFTW: run with -spectral, in the test blocks that
   require petnn_fftw): odd and even grids, the Nyquist column (m_last = W/2+1 with even W), with and without the
   pointwise path, partial batches, a spatial output and a small FNO */
static const Case spectral_cases[] = {
  {"spectral_conv2d 7x8 modes 3,5 (the Nyquist column)", "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv2d -s_filters 3 -s_modes 3,5 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,7,8 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
  {"spectral_conv2d 6x5 modes 2,2 no linear", "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv2d -s_filters 3 -s_modes 2,2 -s_linear 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,6,5 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
  {"spectral_conv2d 9x10 modes 4,3, batch 4 of 6", "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv2d -s_filters 2 -s_modes 4,3 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,9,10 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 4},
  {"spectral_conv2d 5x7 modes 2,4 no linear (spatial output), batch 4 of 6", "-nn_layers sp,s -sp_type to_spatial -s_type spectral_conv2d -s_filters 2 -s_modes 2,4 -s_linear 0 -nn_input_shape 2,5,7 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 4},
  {"fno 2-d (lift, 2 x [spectral_conv2d, gelu], projection; spatial output)", "-nn_layers sp,lift,s1,a1,s2,a2,proj -sp_type to_spatial -lift_type conv2d -lift_filters 4 -lift_kernel 1 -s1_type spectral_conv2d -s1_filters 4 -s1_modes 3,4 -a1_type gelu -s2_type spectral_conv2d -s2_filters 4 -s2_modes 3,4 -a2_type gelu -proj_type conv2d -proj_filters 1 -proj_kernel 1 -nn_input_shape 1,8,6 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
  {"spectral_conv3d 5x4x6 modes 2,2,4 (the Nyquist column)", "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv3d -s_filters 2 -s_modes 2,2,4 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,5,4,6 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
  {"spectral_conv3d 4x5x5 modes 1,2,2 no linear, batch 3 of 6", "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv3d -s_filters 3 -s_modes 1,2,2 -s_linear 0 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 2,4,5,5 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 3},
  {"spectral_conv3d 6x5x7 modes 3,2,3", "-nn_layers sp,s,fl,fc -sp_type to_spatial -s_type spectral_conv3d -s_filters 2 -s_modes 3,2,3 -fl_type spatial_flatten -fc_type dense -fc_units 3 -nn_input_shape 3,6,5,7 -nn_loss mse", PETSC_FALSE, PETSC_TRUE, 0},
};

static PetscErrorCode Uniform(Ctx *ctx, PetscReal *v)
{
  PetscScalar u;

  PetscFunctionBegin;
  PetscCall(PetscRandomGetValue(ctx->rand, &u));
  *v = 2 * PetscRealPart(u) - 1;
  PetscFunctionReturn(0);
}

/* a batch of inputs in [-1, 1] (kinkfree: |x| >= 0.2) and targets fitting the loss */
static PetscErrorCode FillBatch(Ctx *ctx, NN net, PetscBool kinkfree, Vec x, Vec t)
{
  PetscInt     nx, nt, nout;
  PetscScalar *a;
  PetscReal    u = 0;
  NNShape      out;
  NNLossType   loss;
  PetscBool    ce, bce;

  PetscFunctionBegin;
  PetscCall(NNGetLoss(net, &loss));
  PetscCall(PetscStrcmp(loss, NNLOSSCROSSENTROPY, &ce));
  PetscCall(PetscStrcmp(loss, NNLOSSBCEWITHLOGITS, &bce));
  PetscCall(NNGetOutputShape(net, &out));
  nout = NNShapeSize(&out);
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < nx; i++) {
    PetscCall(Uniform(ctx, &u));
    a[i] = kinkfree ? (u >= 0 ? 0.2 + 0.8 * u : -0.2 + 0.8 * u) : u;
  }
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetArray(t, &a));
  for (PetscInt i = 0; i < nt; i++) {
    PetscCall(Uniform(ctx, &u));
    a[i] = ce ? (PetscReal)PetscMin(nout - 1, (PetscInt)(0.5 * (u + 1) * nout)) : (bce ? 0.5 * (u + 1) : 0.5 * u);
  }
  PetscCall(VecRestoreArray(t, &a));
  PetscFunctionReturn(0);
}

/* the case's test options: -test_eval (evaluation mode, buffers in [0.5, 1.5]), -test_perturb a (parameters + [-a, a]) */
static PetscErrorCode CaseSetUp(Ctx *ctx, NN net, const char prefix[])
{
  PetscBool    eval = PETSC_FALSE;
  PetscReal    a = 0, u = 0;
  PetscInt     m;
  Vec          v;
  PetscScalar *p;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetBool(NULL, prefix, "-test_eval", &eval, NULL));
  PetscCall(PetscOptionsGetReal(NULL, prefix, "-test_perturb", &a, NULL));
  for (int b = 0; b < 2; b++) {
    if (b ? !eval : !a) continue;
    if (b) PetscCall(NNGetBuffers(net, &v));
    else PetscCall(NNGetParameters(net, &v));
    PetscCall(VecGetLocalSize(v, &m));
    PetscCall(VecGetArray(v, &p));
    for (PetscInt i = 0; i < m; i++) {
      PetscCall(Uniform(ctx, &u));
      p[i] = b ? 1 + 0.5 * u : p[i] + a * u;
    }
    PetscCall(VecRestoreArray(v, &p));
  }
  if (eval) PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* the buffers (batch norm's running statistics) before the CPU's pass in b0 (NULL: the network has none) */
static PetscErrorCode BuffersSave(NN net, Vec *b0)
{
  Vec      buf;
  PetscInt n;

  PetscFunctionBegin;
  *b0 = NULL;
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(VecGetSize(buf, &n));
  if (!n) PetscFunctionReturn(0);
  PetscCall(VecDuplicate(buf, b0));
  PetscCall(VecCopy(buf, *b0));
  PetscFunctionReturn(0);
}

/* after the CPU's pass: its buffers into bc, and the buffers back to b0 for the other device's pass */
static PetscErrorCode BuffersSwap(NN net, Vec b0, Vec *bc)
{
  Vec buf;

  PetscFunctionBegin;
  *bc = NULL;
  if (!b0) PetscFunctionReturn(0);
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(VecDuplicate(buf, bc));
  PetscCall(VecCopy(buf, *bc));
  PetscCall(VecCopy(b0, buf));
  PetscFunctionReturn(0);
}

/* after the other device's pass: its buffers against the CPU's bc; the buffers back to b0 (the next precision's start) */
static PetscErrorCode BuffersCheck(Ctx *ctx, NN net, const char label[], NNPrecision p, Vec *b0, Vec *bc)
{
  Vec       buf;
  PetscReal d;

  PetscFunctionBegin;
  if (!*b0) PetscFunctionReturn(0);
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(NNTestRelDiff(*bc, buf, &d));
  if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s: %s vs cpu: running statistics %.2e\n", label, NNPrecisions[p], NNDevices[ctx->dev], (double)d));
  PetscCheck(d <= ctx->buftol[p], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: %s vs cpu running statistics differ by %g > %g", label, NNPrecisions[p], NNDevices[ctx->dev], (double)d, (double)ctx->buftol[p]);
  PetscCall(VecCopy(*b0, buf));
  PetscCall(VecDestroy(b0));
  PetscCall(VecDestroy(bc));
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(Ctx *ctx, PetscInt k, const Case *c)
{
  char        prefix[16];
  NN          net;
  Vec         x, t;
  const char *what[4] = {"loss", "output", "input gradient", "parameter gradient"};
  PetscInt    n       = c->n ? c->n : NBATCH;
  NNRandom    rng0;

  PetscFunctionBegin;
  if (ctx->only[0]) {
    char *found;
    PetscCall(PetscStrstr(c->label, ctx->only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "c%d_", (int)k));
  PetscCall(NNTestInsertPrefixed(prefix, c->opts));
  PetscCall(NNTestPassCreateNet(c->self ? PETSC_COMM_SELF : PETSC_COMM_WORLD, prefix, NBATCH, &net));
  PetscCall(CaseSetUp(ctx, net, prefix));
  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(FillBatch(ctx, net, c->kinkfree, x, t));
  rng0 = net->rng; /* both devices draw the same dropout masks */
  for (int p = 0; p < 2; p++) { /* NN_PRECISION_DOUBLE, NN_PRECISION_SINGLE */
    NNTestPass rc, rg;
    PetscReal  d[4] = {0, 0, 0, 0};
    Vec        b0, bc;
    PetscCall(NNSetPrecision(net, (NNPrecision)p));
    PetscCall(BuffersSave(net, &b0)); /* both devices start from the same buffers */
    net->rng = rng0;
    PetscCall(NNTestPassRun(net, NN_DEVICE_CPU, n, x, t, &rc));
    PetscCall(BuffersSwap(net, b0, &bc));
    PetscCall(NNSetPrecision(net, (NNPrecision)p));
    net->rng = rng0;
    PetscCall(NNTestPassRun(net, ctx->dev, n, x, t, &rg));
    PetscCall(BuffersCheck(ctx, net, c->label, (NNPrecision)p, &b0, &bc));
    PetscCall(NNTestPassCompare(&rc, &rg, (PetscBool)(n == NBATCH), d));
    if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s: %s vs cpu: loss %.2e, output %.2e, input gradient %.2e, parameter gradient %.2e\n", c->label, NNPrecisions[p], NNDevices[ctx->dev], (double)d[0], (double)d[1], (double)d[2], (double)d[3]));
    for (int i = 0; i < 4; i++) PetscCheck(d[i] <= ctx->tol[p], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: %s vs cpu %s differ by %g > %g", c->label, NNPrecisions[p], NNDevices[ctx->dev], what[i], (double)d[i], (double)ctx->tol[p]);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s vs cpu, %s, <= %g PASSED\n", c->label, NNDevices[ctx->dev], NNPrecisions[p], (double)ctx->tol[p]));
    PetscCall(NNTestPassDestroy(&rc));
    PetscCall(NNTestPassDestroy(&rg));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(NNTestClearPrefixed(prefix, c->opts));
  PetscFunctionReturn(0);
}

/* an MLP takes Adam steps on the CPU and on the GPU from the same parameters; losses and parameters must agree */
static PetscErrorCode TrainSteps(Ctx *ctx, NNPrecision prec)
{
  const char *opts = "-nn_layers f,fc1,a1,fc2,a2,fc3 -f_type flatten -fc1_type dense -fc1_units 32 -a1_type relu -fc2_type dense -fc2_units 16 -a2_type tanh -fc3_type dense -fc3_units 10 -nn_input_shape 1,8,8 -nn_loss cross_entropy";
  NN          net[2];
  NNOpt       opt[2];
  Vec         x, t, theta[2], g;
  PetscReal   L[2], dL = 0, dp;
  const int   nsteps = 4;

  PetscFunctionBegin;
  PetscCall(NNTestInsertPrefixed("mlp_", opts));
  for (int d = 0; d < 2; d++) {
    PetscCall(NNTestPassCreateNet(PETSC_COMM_WORLD, "mlp_", NBATCH, &net[d])); /* same options, same seed: the same initial parameters */
    PetscCall(NNSetPrecision(net[d], prec));
    PetscCall(NNSetDevice(net[d], d ? NN_DEVICE_CUDA : NN_DEVICE_CPU));
    PetscCall(NNGetParameters(net[d], &theta[d]));
    PetscCall(NNOptCreate(PETSC_COMM_WORLD, &opt[d]));
    PetscCall(NNOptSetType(opt[d], "adam"));
    PetscCall(NNOptSetLearningRate(opt[d], 1e-2));
    PetscCall(NNOptSetUp(opt[d], theta[d]));
  }
  PetscCall(VecCopy(theta[0], theta[1]));
  PetscCall(NNCreateBatchVecs(net[0], &x, &t));
  for (int s = 0; s < nsteps; s++) {
    PetscCall(FillBatch(ctx, net[0], PETSC_FALSE, x, t));
    for (int d = 0; d < 2; d++) {
      PetscCall(NNLossGradient(net[d], NBATCH, x, t, &L[d], NULL));
      PetscCall(NNGetGradient(net[d], &g));
      PetscCall(NNOptStep(opt[d], theta[d], g));
    }
    dL = PetscMax(dL, PetscAbsReal(L[1] - L[0]) / PetscMax(PetscAbsReal(L[0]), 1e-300));
  }
  PetscCall(NNTestRelDiff(theta[0], theta[1], &dp));
  if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  MLP, %s, %d Adam steps: cuda vs cpu: losses %.2e, parameters %.2e\n", NNPrecisions[prec], nsteps, (double)dL, (double)dp));
  PetscCheck(dL <= ctx->tol[prec] && dp <= ctx->tol[prec], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "MLP training, %s: cuda vs cpu differ: losses %g, parameters %g > %g", NNPrecisions[prec], (double)dL, (double)dp, (double)ctx->tol[prec]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "MLP training, %d Adam steps: cuda vs cpu, %s, <= %g PASSED\n", nsteps, NNPrecisions[prec], (double)ctx->tol[prec]));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  for (int d = 0; d < 2; d++) {
    PetscCall(NNOptDestroy(&opt[d]));
    PetscCall(NNDestroy(&net[d]));
  }
  PetscFunctionReturn(0);
}

/* NNView() names the device; a layer type without device passes is refused at set-up with a message naming it */
static PetscErrorCode CheckViewAndErrors(void)
{
  NN             net;
  PetscViewer    v;
  char           text[4096], *found;
  const char    *etext;
  char          *msg = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(NNTestInsertPrefixed("v_", "-nn_layers fc,a -fc_type dense -fc_units 3 -a_type relu -nn_input_shape 4 -nn_device cuda"));
  PetscCall(NNTestPassCreateNet(PETSC_COMM_WORLD, "v_", NBATCH, &net));
  { /* NNView() prints to ASCII viewers only: one on a temporary file, read back */
    FILE  *f = tmpfile();
    size_t len;
    PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "tmpfile() failed");
    PetscCall(PetscViewerASCIIOpenWithFILE(PETSC_COMM_SELF, f, &v));
    PetscCall(NNView(net, v));
    PetscCall(PetscViewerFlush(v));
    rewind(f);
    len       = fread(text, 1, sizeof(text) - 1, f);
    text[len] = 0;
    PetscCall(PetscViewerDestroy(&v));
    fclose(f);
  }
  PetscCall(PetscStrstr(text, "device: cuda (", &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNView() does not name the device:\n%s", text);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "NNView() names the device: PASSED\n"));
  PetscCall(NNDestroy(&net));

  /* an ODE block with an implicit integrator (implicit schemes have no device passes) */
  PetscCall(NNTestInsertPrefixed("e_", "-nn_layers blk -blk_type ode -blk_layers fa -fa_type dense -fa_units 3 -blk_ts_type beuler -nn_input_shape 3"));
  PetscCall(NNTestPassExpectSetUpError(PETSC_COMM_WORLD, "e_", NN_DEVICE_CUDA, "an ODE block with an implicit integrator", "layer blk (type ode) has no device passes", &msg));
  PetscCall(PetscStrstr(msg, "dense, flatten", &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNSetUp()'s error does not list the types with device passes: %s", msg);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "a layer without device passes is refused with a message naming it and the valid types: PASSED\n"));

  /* an ODE block whose vector field has a normalization: the adjoint runs every stage's backward pass after all
     forward passes, when the layer's statistics are the last stage's */
  PetscCall(NNTestInsertPrefixed("e4_", "-nn_layers blk -blk_type ode -blk_layers fa,ln -fa_type dense -fa_units 3 -ln_type layer_norm -blk_ts_type rk -blk_ts_rk_type 4 -nn_input_shape 3"));
  PetscCall(NNTestPassExpectSetUpError(PETSC_COMM_WORLD, "e4_", NN_DEVICE_CUDA, "an ODE block with a normalization in its vector field", "layer blk (type ode) has no device passes", &msg));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "an ODE block with a normalization in its vector field is refused on the device: PASSED\n"));

  /* cuDNN's passes are for conv2d only (and need a PetNN built with cuDNN): the first pass refuses them for conv3d */
  PetscCall(NNTestInsertPrefixed("e3_", "-nn_layers sp,c,fl -sp_type to_spatial -c_type conv3d -c_filters 2 -c_device_algorithm cudnn -fl_type spatial_flatten -nn_input_shape 1,3,3,3 -nn_loss mse -nn_device cuda"));
  PetscCall(NNTestPassCreateNet(PETSC_COMM_SELF, "e3_", NBATCH, &net));
  {
    Vec       x, t;
    PetscReal L;
    PetscCall(NNCreateBatchVecs(net, &x, &t));
    PetscCall(VecSet(x, 1.0));
    PetscCall(VecSet(t, 0.0));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = NNLossGradient(net, NBATCH, x, t, &L, NULL);
    PetscCall(PetscPopErrorHandler());
    PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "a conv3d layer ran with -device_algorithm cudnn");
    PetscCall(NNErrorMessage(ierr, &etext, &msg));
    PetscCall(PetscStrstr(msg, "-e3_c_device_algorithm cudnn", &found));
    PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the refusal does not name the option: %s", msg);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&t));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "conv3d with -device_algorithm cudnn is refused with a message naming the option: PASSED\n"));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Ctx       ctx;
  PetscBool avail, cpu = PETSC_FALSE, spectral = PETSC_FALSE, cudnn = PETSC_FALSE;
  char      why[512];

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  ctx.tol[NN_PRECISION_DOUBLE] = 1e-12;
  ctx.tol[NN_PRECISION_SINGLE] = 1e-5;
  ctx.buftol[NN_PRECISION_DOUBLE] = 1e-12;
  ctx.buftol[NN_PRECISION_SINGLE] = 1e-6;
  ctx.print_errors             = PETSC_FALSE;
  ctx.only[0]                  = 0;
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_double", &ctx.tol[NN_PRECISION_DOUBLE], NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol_single", &ctx.tol[NN_PRECISION_SINGLE], NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-print_errors", &ctx.print_errors, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-cases", ctx.only, sizeof(ctx.only), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cpu_vs_cpu", &cpu, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-spectral", &spectral, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-cudnn", &cudnn, NULL));
  ctx.dev = cpu ? NN_DEVICE_CPU : NN_DEVICE_CUDA;
  PetscCall(NNDeviceIsAvailable(ctx.dev, &avail, sizeof(why), why));
  if (!avail) { /* exit code 77: the harness (config/petnn_runtest.sh) reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cuda_layers: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &ctx.rand));
  PetscCall(PetscRandomSetSeed(ctx.rand, 17));
  PetscCall(PetscRandomSeed(ctx.rand));
  if (spectral) {
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(spectral_cases); k++) PetscCall(RunCase(&ctx, k, &spectral_cases[k]));
  } else if (cudnn) {
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cudnn_cases); k++) PetscCall(RunCase(&ctx, k, &cudnn_cases[k]));
  } else {
    for (PetscInt k = 0; k < (PetscInt)PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(&ctx, k, &cases[k]));
  }
  if (!ctx.only[0] && !cpu && !spectral && !cudnn) {
    PetscCall(TrainSteps(&ctx, NN_PRECISION_DOUBLE));
    PetscCall(TrainSteps(&ctx, NN_PRECISION_SINGLE));
    PetscCall(CheckViewAndErrors());
  }
  PetscCall(PetscRandomDestroy(&ctx.rand));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      requires: cuda
      suffix: 1
      output_file: output/cuda_layers.out

   test:
      requires: cuda
      suffix: 2
      nsize: 2
      output_file: output/cuda_layers.out

   # conv2d through cuDNN (a PetNN built with CUDA finds cuDNN on these machines)
   test:
      requires: cuda
      suffix: cudnn
      args: -cudnn
      output_file: output/cuda_layers_cudnn.out
   # the device code on the host (CMake's PETNN_CUDA_EMULATION, make sanitize): no GPU, no cuDNN
   test:
      requires: cuda_emulation
      suffix: emulation
      output_file: output/cuda_layers.out

   test:
      requires: cuda_emulation
      suffix: emulation_2
      nsize: 2
      output_file: output/cuda_layers.out

   test:
      suffix: cpu
      args: -cpu_vs_cpu
      output_file: output/cuda_layers_cpu.out

   # the spectral_conv layers: their CPU passes need FFTW
   test:
      requires: cuda petnn_fftw
      suffix: spectral
      args: -spectral
      output_file: output/cuda_layers_spectral.out

   test:
      requires: cuda petnn_fftw
      suffix: spectral_2
      nsize: 2
      args: -spectral
      output_file: output/cuda_layers_spectral_2.out

   test:
      requires: cuda_emulation petnn_fftw
      suffix: emulation_spectral
      args: -spectral
      output_file: output/cuda_layers_spectral.out

   test:
      requires: cuda_emulation petnn_fftw
      suffix: emulation_spectral_2
      nsize: 2
      args: -spectral
      output_file: output/cuda_layers_spectral_2.out

   test:
      requires: petnn_fftw
      suffix: cpu_spectral
      args: -cpu_vs_cpu -spectral
      output_file: output/cuda_layers_spectral_cpu.out

TEST*/
