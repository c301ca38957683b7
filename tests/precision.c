static char help[] = "Single precision (-nn_precision single) against double, layer type by layer type.\n\n"
                     "Each case builds a small network from options, runs one batch in double, then the same\n"
                     "weights, data, dropout masks and buffers in single precision, and compares the loss, the\n"
                     "output, the input gradient and the parameter gradient (relative 2-norm differences), then\n"
                     "checks the single-precision gradient against finite differences, on N ranks compares with a\n"
                     "serial copy in single precision, and checks that going back to double gives the first\n"
                     "results bitwise. Graph networks (-nn_type graph) are among the cases; then a graph U-Net takes\n"
                     "Adam steps in single and in double precision from the same parameters and their losses are compared.\n\n"
                     "  -tol <1e-5>      single vs double tolerance\n"
                     "  -fd_tol <2e-3>   single-precision finite-difference tolerance\n"
                     "  -rank_tol <1e-6> single precision on N ranks vs a serial copy (N > 1)\n"
                     "  -train_tol <1e-5> graph training: single vs double losses\n"
                     "  -cases <regex>   only the cases whose label contains this string\n"
                     "  -spectral <bool> run the spectral_conv cases (default true; they need PetNN built with FFTW\n"
                     "                   and its single-precision library)\n"
                     "  -print_errors    print the measured differences (not stable output)\n\n";

#include <float.h>
#include <petnn/private/nnimpl.h>
#include "nntest.h"

#define NBATCH 5

typedef struct {
  PetscRandom rand;
  PetscReal   tol, fdtol, ranktol, traintol;
  PetscBool   print_errors, spectral;
  char        only[64];
} Ctx;

typedef struct {
  const char *label;
  const char *opts;     /* network options, each option name without the case's prefix */
  PetscBool   training; /* dropout masks, batch statistics */
  PetscBool   kinkfree; /* inputs at least 0.2 away from 0 (ReLU kinks at the input) */
  PetscBool   fd;       /* finite-difference check in single precision */
  /* tolerances other than -fd_tol and -rank_tol (0: those). Winograd's float transforms round off about 1e-6 of the
     output (im2col 1e-7): central differences of step 5e-3 see that as about 1e-3, and since its tiles follow each
     rank's owned block, N ranks and one round differently by about 1e-6 (-<layer>_winograd 0: im2col, <= 2.4e-7) */
  PetscReal   fdtol, ranktol;
} Case;

static PetscErrorCode Uniform(Ctx *ctx, PetscReal *v)
{
  PetscScalar u;

  PetscFunctionBegin;
  PetscCall(PetscRandomGetValue(ctx->rand, &u));
  *v = 2 * PetscRealPart(u) - 1;
  PetscFunctionReturn(0);
}

typedef NNTestPass Result; /* tests/nntest.h */

/* one NNLossGradient() from the given generator state and buffers; the result's Vecs are copies */
static PetscErrorCode Run(NN net, Vec x, Vec t, const NNRandom *rng, Vec buf0, Result *r)
{
  Vec buf;

  PetscFunctionBegin;
  net->rng = *rng;
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(VecCopy(buf0, buf));
  PetscCall(NNTestPassRun(net, NN_DEVICE_CPU, NBATCH, x, t, r));
  PetscFunctionReturn(0);
}

/* the layer types that must run float passes of their own (not their double passes on converted activations) */
static PetscErrorCode CheckFloatPasses(NN net, const char label[])
{
  const char *const types[] = {NNLAYERBATCHNORM1D, NNLAYERBATCHNORM2D, NNLAYERBATCHNORM3D, NNLAYERGROUPNORM, NNLAYERINSTANCENORM, NNLAYERLAYERNORM, NNLAYERUPSAMPLE, NNLAYERGLOBALAVGPOOL, NNLAYERRESIDUAL, NNLAYERSPECTRALCONV2D, NNLAYERSPECTRALCONV3D};
  const NNLayer    *layers;
  PetscInt          nl;

  PetscFunctionBegin;
  PetscCall(NNGetLayers(net, &nl, &layers));
  for (PetscInt i = 0; i < nl; i++)
    for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(types); k++) {
      PetscBool same;
      PetscCall(PetscObjectTypeCompare((PetscObject)layers[i], types[k], &same));
      PetscCheck(!same || (layers[i]->ops->forwardsingle && layers[i]->ops->backwardsingle), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: layer %s (%s) has no float passes", label, ((PetscObject)layers[i])->name, types[k]);
    }
  PetscFunctionReturn(0);
}

static PetscErrorCode RunCase(Ctx *ctx, PetscInt k, const Case *c)
{
  char       prefix[16];
  NN         net;
  Vec        x, t, buf, buf0;
  PetscInt   nx, nt, nout;
  PetscReal  u = 0, d[4], ep, ex;
  NNShape    out;
  NNLossType loss;
  PetscBool  ce, bce, same[3];
  NNRandom   rng0;
  Result     rd, rs, rd2;
  const char *what[4] = {"loss", "output", "input gradient", "parameter gradient"};

  PetscFunctionBegin;
  if (ctx->only[0]) {
    char *found;
    PetscCall(PetscStrstr(c->label, ctx->only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  if (!ctx->spectral) {
    char *found;
    PetscCall(PetscStrstr(c->opts, "spectral_conv", &found));
    if (found) PetscFunctionReturn(0);
  }
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "c%d_", (int)k));
  PetscCall(NNTestInsertPrefixed(prefix, c->opts));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, prefix));
  PetscCall(NNSetBatchSize(net, NBATCH));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNGetLoss(net, &loss));
  PetscCall(PetscStrcmp(loss, NNLOSSCROSSENTROPY, &ce));
  PetscCall(PetscStrcmp(loss, NNLOSSBCEWITHLOGITS, &bce));
  PetscCall(NNGetOutputShape(net, &out));
  nout = NNShapeSize(&out);
  PetscCall(NNSetTraining(net, c->training));

  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  {
    PetscScalar *a;
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < nx; i++) {
      PetscCall(Uniform(ctx, &u));
      a[i] = c->kinkfree ? (u >= 0 ? 0.2 + 0.8 * u : -0.2 + 0.8 * u) : u;
    }
    PetscCall(VecRestoreArray(x, &a));
    PetscCall(VecGetArray(t, &a));
    for (PetscInt i = 0; i < nt; i++) {
      PetscCall(Uniform(ctx, &u));
      if (ce) a[i] = (PetscReal)PetscMin(nout - 1, (PetscInt)(0.5 * (u + 1) * nout));
      else if (bce) a[i] = 0.5 * (u + 1);
      else a[i] = 0.5 * u;
    }
    PetscCall(VecRestoreArray(t, &a));
  }
  rng0 = net->rng;
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(VecDuplicate(buf, &buf0));
  PetscCall(VecCopy(buf, buf0));

  PetscCall(Run(net, x, t, &rng0, buf0, &rd));
  PetscCall(NNSetPrecision(net, NN_PRECISION_SINGLE));
  PetscCall(Run(net, x, t, &rng0, buf0, &rs));
  PetscCall(CheckFloatPasses(net, c->label));
  d[0] = PetscAbsReal(rs.L - rd.L) / PetscMax(PetscAbsReal(rd.L), 1e-300);
  PetscCall(NNTestRelDiff(rd.y, rs.y, &d[1]));
  PetscCall(NNTestRelDiff(rd.dx, rs.dx, &d[2]));
  PetscCall(NNTestRelDiff(rd.g, rs.g, &d[3]));
  if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: single vs double: loss %.2e, output %.2e, input gradient %.2e, parameter gradient %.2e\n", c->label, (double)d[0], (double)d[1], (double)d[2], (double)d[3]));
  for (int i = 0; i < 4; i++) PetscCheck(d[i] <= ctx->tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: single vs double %s differ by %g > %g", c->label, what[i], (double)d[i], (double)ctx->tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: single vs double <= %g PASSED\n", c->label, (double)ctx->tol));

  if (c->fd) {
    PetscReal fdtol = c->fdtol > 0 ? c->fdtol : ctx->fdtol;
    net->rng = rng0;
    PetscCall(VecCopy(buf0, buf));
    PetscCall(NNGradientCheck(net, NBATCH, x, t, fdtol, &ep, &ex));
    if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: single-precision finite differences: parameters %.2e, inputs %.2e\n", c->label, (double)ep, (double)ex));
    PetscCheck(ep < fdtol && ex < fdtol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: single-precision gradient check FAILED: parameters %g, inputs %g, tolerance %g", c->label, (double)ep, (double)ex, (double)fdtol);
  }

  /* the same network on this rank alone (a serial copy: same seed, same parameters) in single precision: on N ranks the
     results agree with it up to float round-off of differently ordered sums */
  {
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    if (size > 1) {
      NN        serial;
      Result    r1;
      PetscReal e[3] = {0, 0, 0};
      Vec       sbuf;
      PetscCall(NNCreate(PETSC_COMM_SELF, &serial));
      PetscCall(NNSetOptionsPrefix(serial, prefix));
      PetscCall(NNSetBatchSize(serial, NBATCH));
      PetscCall(NNSetFromOptions(serial));
      PetscCall(NNSetPrecision(serial, NN_PRECISION_SINGLE));
      PetscCall(NNSetUp(serial));
      PetscCall(NNSetTraining(serial, c->training));
      PetscCall(NNGetBuffers(serial, &sbuf));
      PetscCall(Run(serial, x, t, &rng0, sbuf, &r1)); /* the serial buffers start as initialized, as the network's did */
      e[0] = PetscAbsReal(r1.L - rs.L) / PetscMax(PetscAbsReal(r1.L), 1e-300);
      PetscCall(NNTestRelDiff(r1.g, rs.g, &e[1]));
      {
        PetscInt n1, n2;
        PetscCall(VecGetLocalSize(r1.dx, &n1));
        PetscCall(VecGetLocalSize(rs.dx, &n2));
        if (n1 == n2) PetscCall(NNTestRelDiff(r1.dx, rs.dx, &e[2]));
      }
      PetscCall(MPIU_Allreduce(MPI_IN_PLACE, e, 3, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
      if (ctx->print_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: single on %d ranks vs a serial copy: loss %.2e, parameter gradient %.2e, input gradient %.2e\n", c->label, (int)size, (double)e[0], (double)e[1], (double)e[2]));
      PetscReal ranktol = c->ranktol > 0 ? c->ranktol : ctx->ranktol;
      PetscCheck(e[0] <= ranktol && e[1] <= ranktol && e[2] <= ranktol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: single precision on %d ranks differs from a serial copy: loss %g, parameter gradient %g, input gradient %g > %g", c->label, (int)size, (double)e[0], (double)e[1], (double)e[2], (double)ranktol);
      PetscCall(NNTestPassDestroy(&r1));
      PetscCall(NNDestroy(&serial));
    }
  }

  /* back to double: the first results exactly (the switch kept the parameters and touched nothing else) */
  PetscCall(NNSetPrecision(net, NN_PRECISION_DOUBLE));
  PetscCall(Run(net, x, t, &rng0, buf0, &rd2));
  PetscCall(NNTestVecsEqual(rd.y, rd2.y, &same[0]));
  PetscCall(NNTestVecsEqual(rd.dx, rd2.dx, &same[1]));
  PetscCall(NNTestVecsEqual(rd.g, rd2.g, &same[2]));
  PetscCheck(rd.L == rd2.L && same[0] && same[1] && same[2], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: double after single differs from double before", c->label);

  PetscCall(NNTestPassDestroy(&rd));
  PetscCall(NNTestPassDestroy(&rs));
  PetscCall(NNTestPassDestroy(&rd2));
  PetscCall(VecDestroy(&buf0));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscCall(NNTestClearPrefixed(prefix, c->opts)); /* the options database holds at most 512 */
  PetscFunctionReturn(0);
}

#define MLP(act) "-nn_input_shape 4 -nn_layers fc1,act,fc2 -fc1_type dense -fc1_units 6 -act_type " act " -fc2_type dense -fc2_units 3 -nn_loss mse"
#define CNN_IN   "-nn_input_shape 2,8,8 -sp_type to_spatial "
/* a conv2d / conv3d (3 filters) on odd extents in front of the layer under test, and the dense head behind it */
#define CNN_CONV  "-nn_input_shape 2,5,7 -sp_type to_spatial -cv_type conv2d -cv_filters 3 -cv_kernel 3 -cv_padding 1 "
#define CNN3_CONV "-nn_input_shape 2,3,4,5 -sp_type to_spatial -cv_type conv3d -cv_filters 3 -cv_kernel 3 -cv_padding 1 "
#define CNN_OUT   "-sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse"

/* graph networks (-nn_type graph): the input read by d1 and d3, t1 by s and c */
#define GRAPH_DENSE \
  "-nn_type graph -nn_input_shape 5 -nn_layers d1,t1,s,d2,d3,a,g,c,out -d1_type dense -d1_units 6 -t1_type tanh -s_type split -s_sizes 2,4 " \
  "-d2_type dense -d2_units 4 -d2_inputs s:0 -d3_type dense -d3_units 4 -d3_inputs input -a_type add -a_inputs d2,s:1,d3 -g_type tanh " \
  "-c_type concat -c_inputs g,t1 -out_type dense -out_units 3 -nn_loss mse"
/* a residual block reads the input beside fc and is read by a and c (float passes of a container in a graph); with
   GRAPH_ODE_CN an ODE block with an implicit scheme (double passes) in its place: gradients of float and double layers
   summed into the input (in double) and into res (in float) */
#define GRAPH_RESIDUAL \
  "-nn_type graph -nn_input_shape 4 -nn_layers res,fc,a,t,c,out -res_type residual -res_layers fa,ta -fa_type dense -fa_units 4 -ta_type tanh " \
  "-fc_type dense -fc_units 4 -fc_inputs input -a_type add -a_inputs res,fc -t_type tanh -c_type concat -c_inputs t,res -out_type dense -out_units 3 -nn_loss mse"
/* the encoder's r1 read by p1, cat and a, the decoder's up (conv_transpose2d) by cat and a; 12 x 12 pools and
   grows back to the encoder's layout on 1 to 4 ranks */
#define GRAPH_UNET \
  "-nn_type graph -nn_input_shape 2,12,12 -nn_layers sp,e1,r1,p1,e2,r2,up,cat,s,d1,d2,a,t,out -sp_type to_spatial " \
  "-e1_type conv2d -e1_filters 4 -e1_kernel 3 -e1_padding 1 -r1_type tanh -p1_type maxpool2d -p1_kernel 2 -e2_type conv2d -e2_filters 4 " \
  "-e2_kernel 3 -e2_padding 1 -r2_type tanh -up_type conv_transpose2d -up_filters 4 -up_kernel 2 -up_stride 2 -cat_type concat " \
  "-cat_inputs up,r1 -s_type split -s_sizes 3,5 -d1_type conv2d -d1_filters 4 -d1_kernel 3 -d1_padding 1 -d1_inputs s:1 -d2_type conv2d " \
  "-d2_filters 4 -d2_kernel 1 -d2_inputs s:0 -a_type add -a_inputs d1,d2,r1,up -t_type tanh -out_type conv2d -out_filters 2 -out_kernel 1 " \
  "-nn_loss mse"
#define GRAPH_ODE_CN \
  "-nn_type graph -nn_input_shape 4 -nn_layers res,fc,a,t,c,out -res_type ode -res_layers fa,ta -res_steps 2 -res_ts_type cn -fa_type dense -fa_units 4 -ta_type tanh " \
  "-fc_type dense -fc_units 4 -fc_inputs input -a_type add -a_inputs res,fc -t_type tanh -c_type concat -c_inputs t,res -out_type dense -out_units 3 -nn_loss mse"

static const Case cases[] = {
  {"dense",                                                                              "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                                          PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"dense without bias",                                                                 "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -fc_bias 0 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                               PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"flatten",                                                                            "-nn_input_shape 2,3,4 -nn_layers fl,fc -fl_type flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                  PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"relu",                                                                               "-nn_input_shape 6 -nn_layers act,fc -act_type relu -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                       PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  0,    0   },
  {"leaky_relu",                                                                         "-nn_input_shape 6 -nn_layers act,fc -act_type leaky_relu -act_slope 0.1 -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                                  PETSC_TRUE,  PETSC_TRUE,  PETSC_TRUE,  0,    0   },
  {"tanh",                                                                               MLP("tanh"),                                                                                                                                                                                                                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"sigmoid",                                                                            MLP("sigmoid"),                                                                                                                                                                                                                                                                                                                                                                                                                     PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"gelu",                                                                               MLP("gelu"),                                                                                                                                                                                                                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"dropout (training mode)",                                                            "-nn_input_shape 4 -nn_layers fc1,drop,fc2 -fc1_type dense -fc1_units 8 -drop_type dropout -drop_rate 0.3 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                               PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"batchnorm1d (training mode)",                                                        "-nn_input_shape 4 -nn_layers fc1,bn,act,fc2 -fc1_type dense -fc1_units 6 -fc1_bias 0 -bn_type batchnorm1d -act_type tanh -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                                                                               PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"batchnorm1d (eval mode)",                                                            "-nn_input_shape 4 -nn_layers fc1,bn,act,fc2 -fc1_type dense -fc1_units 6 -fc1_bias 0 -bn_type batchnorm1d -act_type tanh -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                                                                               PETSC_FALSE, PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"residual",                                                                           "-nn_input_shape 4 -nn_layers fc1,res,fc2 -fc1_type dense -fc1_units 5 -res_type residual -res_layers fa,ta,fb -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                      PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4)",                                                                          "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (discrete scheme)",                                                              "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_scheme discrete -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                             PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4, parameters per step)",                                                     "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 4 -blk_parameters per_step -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk 3bs, stages evaluated again)",                                               "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 3bs -blk_store_activations 0 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                     PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (cn: double passes)",                                                            "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type cn -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                  PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode on the DMDA (rk4, conv 3x3 - tanh - conv 1x1)",                                  "-nn_input_shape 16,4,4 -sp_type to_spatial -nn_layers sp,blk,sf,fc -blk_type ode -blk_layers fa,ta,fb -blk_steps 1 -fa_type conv2d -fa_filters 16 -fa_kernel 3 -fa_padding 1 -ta_type tanh -fb_type conv2d -fb_filters 16 -fb_kernel 1 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                          PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  3e-3, 3e-6},
  {"loss cross_entropy",                                                                 "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -nn_loss cross_entropy",                                                                                                                                                                                                                                                                                                                                                PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"loss l1",                                                                            "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -nn_loss l1",                                                                                                                                                                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0,    0   },
  {"loss huber",                                                                         "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -nn_loss huber",                                                                                                                                                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"loss rel_l2",                                                                        "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -nn_loss rel_l2",                                                                                                                                                                                                                                                                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"loss bce_with_logits",                                                               "-nn_input_shape 4 -nn_layers fc -fc_type dense -fc_units 3 -nn_loss bce_with_logits",                                                                                                                                                                                                                                                                                                                                              PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d",                                                                             CNN_IN "-nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 3 -cv_kernel 3 -cv_padding 1 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d stride 2, relu on the DMDA",                                                  CNN_IN "-nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 3 -cv_kernel 3 -cv_stride 2 -cv_padding 1 -act_type relu -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                          PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0,    0   },
  {"maxpool2d",                                                                          CNN_IN "-nn_layers sp,cv,pool,sf,fc -cv_type conv2d -cv_filters 3 -cv_kernel 3 -cv_padding 1 -pool_type maxpool2d -pool_kernel 2 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                 PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0,    0   },
  {"avgpool2d",                                                                          CNN_IN "-nn_layers sp,pool,sf,fc -pool_type avgpool2d -pool_kernel 2 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                             PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"global_avgpool",                                                                     CNN_IN "-nn_layers sp,cv,gp,fc -cv_type conv2d -cv_filters 3 -cv_kernel 3 -gp_type global_avgpool -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                         PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"batchnorm2d",                                                                        CNN_IN "-nn_layers sp,bn,act,sf,fc -bn_type batchnorm2d -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"upsample",                                                                           CNN_IN "-nn_layers sp,up,sf,fc -up_type upsample -up_scale 2 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                     PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv_transpose2d",                                                                   CNN_IN "-nn_layers sp,ct,sf,fc -ct_type conv_transpose2d -ct_filters 2 -ct_kernel 3 -ct_stride 2 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                 PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"group_norm",                                                                         CNN_IN "-nn_layers sp,gn,sf,fc -gn_type group_norm -gn_groups 1 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                  PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
 /* the normalization layers' float passes (statistics and sums in double); -nn_batch_size 8 with the 5 samples of a
     run: a partial batch, whose unused slots must not count */
  {"batchnorm1d, partial batch (training mode)",                                         "-nn_input_shape 4 -nn_batch_size 8 -nn_layers fc1,bn,act,fc2 -fc1_type dense -fc1_units 6 -fc1_bias 0 -bn_type batchnorm1d -act_type tanh -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                                                              PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"batchnorm2d (eval mode)",                                                            CNN_IN "-nn_layers sp,bn,act,sf,fc -bn_type batchnorm2d -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                           PETSC_FALSE, PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"batchnorm2d, partial batch",                                                         CNN_IN "-nn_batch_size 8 -nn_layers sp,bn,act,sf,fc -bn_type batchnorm2d -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                          PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"batchnorm3d",                                                                        "-nn_input_shape 2,4,4,4 -sp_type to_spatial -nn_layers sp,bn,act,sf,fc -bn_type batchnorm3d -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                      PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"group_norm 2 groups, partial batch",                                                 "-nn_input_shape 4,8,8 -sp_type to_spatial -nn_batch_size 8 -nn_layers sp,gn,act,sf,fc -gn_type group_norm -gn_groups 2 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"group_norm on (C,L) samples",                                                        "-nn_input_shape 4,6 -nn_layers gn,fl,fc -gn_type group_norm -gn_groups 2 -fl_type flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"instance_norm (affine)",                                                             CNN_IN "-nn_layers sp,in,act,sf,fc -in_type instance_norm -in_affine -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                              PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"instance_norm on (C,L) samples, partial batch",                                      "-nn_input_shape 3,7 -nn_batch_size 8 -nn_layers in,fl,fc -in_type instance_norm -fl_type flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                         PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"layer_norm",                                                                         "-nn_input_shape 4 -nn_layers fc1,ln,act,fc2 -fc1_type dense -fc1_units 6 -ln_type layer_norm -act_type tanh -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                            PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"layer_norm on the DMDA, partial batch",                                              "-nn_input_shape 4,8,8 -sp_type to_spatial -nn_batch_size 8 -nn_layers sp,ln,act,sf,fc -ln_type layer_norm -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"layer_norm without affine on (C,L) samples",                                         "-nn_input_shape 4,5 -nn_layers ln,fl,fc -ln_type layer_norm -ln_affine 0 -fl_type flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
 /* a normalization's backward reads its last forward pass's statistics, so an ODE block with one in f takes its double
     passes (the float block runs all stages forward before their backward passes) */
  {"ode (rk4) with layer_norm in f: double passes",                                      "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ln,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ln_type layer_norm -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                         PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4) with batchnorm1d in f: double passes",                                     "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,bn,ta,fb -blk_time 1 -blk_steps 3 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -bn_type batchnorm1d -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"residual (dense, tanh, dense)",                                                      "-nn_input_shape 4 -nn_layers fc1,res,fc2 -fc1_type dense -fc1_units 5 -res_type residual -res_layers ra,ta,rb -ra_type dense -ra_units 6 -ta_type tanh -rb_type dense -rb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                                                                                                      PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
 /* batch norm in training mode: a perturbed input moves the batch statistics, float differences see 7e-4 (the float
     gradient is within 3e-7 of the double one) */
  {"residual on the DMDA (conv2d, batchnorm2d, tanh, residual (conv2d)), partial batch", CNN_IN "-nn_batch_size 8 -nn_layers sp,c0,res,sf,fc -c0_type conv2d -c0_filters 3 -c0_kernel 3 -c0_padding 1 -res_type residual -res_layers ca,ba,ta,inner -ca_type conv2d -ca_filters 3 -ca_kernel 3 -ca_padding 1 -ca_bias 0 -ba_type batchnorm2d -ta_type tanh -inner_type residual -inner_layers cb -cb_type conv2d -cb_filters 3 -cb_kernel 3 -cb_padding 1 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse", PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  3e-3, 0   },
  {"conv2d 3x3, 16 channels (Winograd)",                                                 "-nn_input_shape 16,8,8 -sp_type to_spatial -nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 4 -cv_kernel 3 -cv_padding 1 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                   PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  3e-3, 3e-6},
  {"conv2d 5x5, 32 channels (Winograd)",                                                 "-nn_input_shape 32,8,8 -sp_type to_spatial -nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 4 -cv_kernel 5 -cv_padding 2 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                   PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  3e-3, 3e-6},
  {"conv2d 5x5, 32 channels, -winograd 0",                                               "-nn_input_shape 32,8,8 -sp_type to_spatial -nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 4 -cv_kernel 5 -cv_padding 2 -cv_winograd 0 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                    PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d 3x3, 16 -> 16 channels (direct)",                                             "-nn_input_shape 16,7,7 -sp_type to_spatial -nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 16 -cv_kernel 3 -cv_padding 1 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                  PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d 3x3 stride 2, 32 -> 16 channels (direct)",                                    "-nn_input_shape 32,7,7 -sp_type to_spatial -nn_layers sp,cv,act,sf,fc -cv_type conv2d -cv_filters 16 -cv_kernel 3 -cv_stride 2 -cv_padding 1 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                     PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d dilation 2, periodic, no bias, 16 -> 32 channels (direct)",                   "-nn_input_shape 16,6,6 -sp_type to_spatial -nn_layers sp,cv,sf,fc -cv_type conv2d -cv_filters 32 -cv_kernel 3 -cv_dilation 2 -cv_periodic -cv_bias 0 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                            PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv3d 16 -> 16 channels (direct)",                                                  "-nn_input_shape 16,4,4,4 -sp_type to_spatial -nn_layers sp,cv,sf,fc -cv_type conv3d -cv_filters 16 -cv_kernel 3 -cv_padding 1 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                   PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d groups 2, dilation 2",                                                        "-nn_input_shape 4,8,8 -sp_type to_spatial -nn_layers sp,cv,sf,fc -cv_type conv2d -cv_filters 4 -cv_kernel 3 -cv_groups 2 -cv_dilation 2 -cv_padding 2 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d periodic",                                                                    CNN_IN "-nn_layers sp,cv,sf,fc -cv_type conv2d -cv_filters 3 -cv_kernel 3 -cv_periodic -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv3d",                                                                             "-nn_input_shape 2,4,4,4 -sp_type to_spatial -nn_layers sp,cv,sf,fc -cv_type conv3d -cv_filters 3 -cv_kernel 3 -cv_padding 1 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                     PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv_transpose3d groups 2, stride 2 padding 1 output padding 1",                     "-nn_input_shape 2,3,2,3 -sp_type to_spatial -nn_layers sp,ct,sf,fc -ct_type conv_transpose3d -ct_filters 4 -ct_kernel 3 -ct_stride 2 -ct_padding 1 -ct_output_padding 1 -ct_groups 2 -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                            PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0,    0   },
  {"conv_transpose2d kernel 2 stride 2, no bias, dilation 2",                            "-nn_input_shape 2,4,5 -sp_type to_spatial -nn_layers sp,ct,act,sf,fc -ct_type conv_transpose2d -ct_filters 3 -ct_kernel 2 -ct_stride 2 -ct_dilation 2 -ct_bias 0 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                 PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"conv2d on a fully convolutional network (spatial loss)",                             CNN_IN "-nn_layers sp,cv -cv_type conv2d -cv_filters 2 -cv_kernel 3 -cv_padding 1 -nn_loss mse",                                                                                                                                                                                                                                                                                                                                    PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
 /* upsampling and global average pooling in float (the latter's sums over pixels and ranks in double), behind a conv so the
     parameter gradient passes through them; odd extents split unevenly over the ranks, where linear modes need their halo.
     Few pixels for global_avgpool 3-d: its input gradient is the output's divided by them, and the float loss's round-off
     over the step (all a finite difference of this quadratic loss sees) is not; 60 pixels measured up to 7e-4 */
  {"upsample nearest 2-d, scale 3, partial batch",                                       CNN_CONV "-nn_batch_size 8 -nn_layers sp,cv,up,sf,fc -up_type upsample -up_scale 3 " CNN_OUT,                                                                                                                                                                                                                                                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"upsample nearest 3-d",                                                               CNN3_CONV "-nn_layers sp,cv,up,sf,fc -up_type upsample -up_scale 2 " CNN_OUT,                                                                                                                                                                                                                                                                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"upsample bilinear",                                                                  CNN_CONV "-nn_layers sp,cv,up,sf,fc -up_type upsample -up_mode bilinear -up_scale 2 " CNN_OUT,                                                                                                                                                                                                                                                                                                                                      PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"upsample bilinear align_corners, scale 3, partial batch",                            CNN_CONV "-nn_batch_size 8 -nn_layers sp,cv,up,sf,fc -up_type upsample -up_mode bilinear -up_align_corners -up_scale 3 " CNN_OUT,                                                                                                                                                                                                                                                                                                   PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"upsample trilinear",                                                                 CNN3_CONV "-nn_layers sp,cv,up,sf,fc -up_type upsample -up_mode trilinear -up_scale 2 " CNN_OUT,                                                                                                                                                                                                                                                                                                                                    PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"upsample trilinear align_corners",                                                   CNN3_CONV "-nn_layers sp,cv,up,sf,fc -up_type upsample -up_mode trilinear -up_align_corners -up_scale 2 " CNN_OUT,                                                                                                                                                                                                                                                                                                                  PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"global_avgpool 2-d, partial batch",                                                  CNN_CONV "-nn_batch_size 8 -nn_layers sp,cv,gp,fc -gp_type global_avgpool -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                                                                                                 PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"global_avgpool 3-d",                                                                 "-nn_input_shape 3,2,3,3 -sp_type to_spatial -cv_type conv3d -cv_filters 3 -cv_kernel 3 -cv_padding 1 -nn_layers sp,cv,gp,fc -gp_type global_avgpool -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                                      PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"graph: dense with fan-out, split, add, concat",                                      GRAPH_DENSE,                                                                                                                                                                                                                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"graph: the input and a residual block read by several layers",                       GRAPH_RESIDUAL,                                                                                                                                                                                                                                                                                                                                                                                                                     PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"graph: the input and an ODE block (cn: double passes) read by several layers",       GRAPH_ODE_CN,                                                                                                                                                                                                                                                                                                                                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"graph: U-Net (conv2d, maxpool2d, conv_transpose2d, concat, split, add) on the DMDA", GRAPH_UNET,                                                                                                                                                                                                                                                                                                                                                                                                                         PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE, 0,    3e-6},
 /* the Fourier neural operator layers' float passes (float FFTs: fftwf_mpi), on grids split over the ranks into FFTW's
     slabs: even widths keep the Nyquist column (m_last = W/2+1), odd ones do not have one; with and without the
     pointwise path, a partial batch, the spectrum in the slab layout (-fftw_transposed 0) and a small FNO. Every case
     label names spectral_conv (the test without FFTW filters them out of the output) and runs the finite differences.
     The FNO's spatial loss makes its input gradient small (|dL/dx| = 1.75e-3 at L = 0.33 over 360 entries) while a
     perturbed input pixel re-rounds all M = 360 outputs through the global FFT: each central difference carries about
     (u/sqrt(3)) |(2/M) (y - t) .* y| sqrt(2) / (2h) of float round-off (u = 2^-24, h = 5e-3), 1.7e-3 relative to the
     input gradient; measured 8.4e-4 on 1 to 4 ranks, so 3e-3 (the other cases <= 5.5e-4). The float FFTs give the
     same results on any slab split (the same 1-d transforms, moved between ranks), so N ranks match a serial copy
     but for the pointwise path's parameter gradient, summed over the ranks (measured <= 1.7e-7; checked within
     -rank_tol). */
  {"spectral_conv2d 7x8 modes 3,5 (the Nyquist column)",                                 "-nn_input_shape 2,7,8 -sp_type to_spatial -nn_layers sp,sc,act,sf,fc -sc_type spectral_conv2d -sc_filters 3 -sc_modes 3,5 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                        PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"spectral_conv2d 6x5 modes 2,3 without the pointwise path",                           "-nn_input_shape 2,6,5 -sp_type to_spatial -nn_layers sp,sc,act,sf,fc -sc_type spectral_conv2d -sc_filters 3 -sc_modes 2,3 -sc_linear 0 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                           PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"spectral_conv2d 8x6 modes 4,4, partial batch, spectrum in the slab layout",          "-nn_input_shape 3,8,6 -sp_type to_spatial -nn_batch_size 8 -nn_layers sp,sc,act,sf,fc -sc_type spectral_conv2d -sc_filters 2 -sc_modes 4,4 -sc_fftw_transposed 0 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                 PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"spectral_conv3d 5x4x6 modes 2,2,4 (the Nyquist column)",                             "-nn_input_shape 2,5,4,6 -sp_type to_spatial -nn_layers sp,sc,act,sf,fc -sc_type spectral_conv3d -sc_filters 2 -sc_modes 2,2,4 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                                                    PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"spectral_conv3d 4x5x5 modes 1,2,3 without the pointwise path, partial batch",        "-nn_input_shape 2,4,5,5 -sp_type to_spatial -nn_batch_size 7 -nn_layers sp,sc,act,sf,fc -sc_type spectral_conv3d -sc_filters 3 -sc_modes 1,2,3 -sc_linear 0 -act_type tanh -sf_type spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",                                                                                                                                                                                      PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"fno (lift, 2 x [spectral_conv2d 9x8, gelu], projection; spatial loss)",              "-nn_input_shape 1,9,8 -sp_type to_spatial -nn_layers sp,lift,f0,g0,f1,g1,proj -lift_type conv2d -lift_filters 2 -lift_kernel 1 -f0_type spectral_conv2d -f0_filters 2 -f0_modes 2,3 -g0_type gelu -f1_type spectral_conv2d -f1_filters 2 -f1_modes 3,5 -g1_type gelu -proj_type conv2d -proj_filters 1 -proj_kernel 1 -nn_loss mse",                                                                                               PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  3e-3, 0   },
 /* ODE blocks with checkpointing, observation times and time input in float (appended: the cases above keep their random data) */
  {"ode (rk4, 5 steps, 2 checkpoints)",                                                  "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 5 -blk_checkpoints 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                                             PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4, parameters per step, 3 checkpoints)",                                      "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_checkpoints 3 -blk_ts_type rk -blk_ts_rk_type 4 -blk_parameters per_step -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                    PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4, observation times 0, 0.5, 1)",                                             "-nn_input_shape 4 -nn_layers fc1,blk,fl,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_observation_times 0,0.5,1 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fl_type flatten -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                             PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4, observation times 0.25, 0.75, parameters per step, 2 checkpoints)",        "-nn_input_shape 4 -nn_layers fc1,blk,fl,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_observation_times 0.25,0.75 -blk_parameters per_step -blk_checkpoints 2 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fl_type flatten -fc2_type dense -fc2_units 3 -nn_loss mse",                                               PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (rk4, time input, parameters per step)",                                         "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_time_input -blk_parameters per_step -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                                                       PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
  {"ode (discrete scheme, time input, observation times 0.5, 1, 2 checkpoints)",         "-nn_input_shape 4 -nn_layers fc1,blk,fl,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_time_input -blk_observation_times 0.5,1 -blk_checkpoints 2 -blk_scheme discrete -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fl_type flatten -fc2_type dense -fc2_units 3 -nn_loss mse",                                                                         PETSC_TRUE,  PETSC_FALSE, PETSC_TRUE,  0,    0   },
};

/* checkpointing in float (-<block>_checkpoints K): the float passes keep the segments' starts and compute each segment
   again before its adjoint, by the same arithmetic, so loss and gradients equal those without checkpoints bitwise (and
   the block runs float passes either way: the double passes would differ) */
static const char *const ode_checkpoints[] = {
  "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 5 -blk_ts_type rk -blk_ts_rk_type 4 -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type "
  "dense -fc2_units 3 -nn_loss mse",
  "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 4 -blk_ts_type rk -blk_ts_rk_type 4 -blk_parameters per_step -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense "
  "-fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",
  "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 3 -blk_scheme discrete -fa_type dense -fa_units 6 -ta_type tanh -fb_type dense -fb_units 5 -fc2_type dense -fc2_units "
  "3 -nn_loss mse",
  "-nn_input_shape 4 -nn_layers fc1,blk,fc2 -fc1_type dense -fc1_units 5 -blk_type ode -blk_layers fa,ta,fb -blk_time 1 -blk_steps 5 -blk_ts_type rk -blk_ts_rk_type 3bs -blk_store_activations 0 -fa_type dense -fa_units 6 -ta_type tanh -fb_type "
  "dense -fb_units 5 -fc2_type dense -fc2_units 3 -nn_loss mse",
  "-nn_input_shape 16,4,4 -sp_type to_spatial -nn_layers sp,blk,sf,fc -blk_type ode -blk_layers fa,ta,fb -blk_steps 3 -fa_type conv2d -fa_filters 16 -fa_kernel 3 -fa_padding 1 -ta_type tanh -fb_type conv2d -fb_filters 16 -fb_kernel 1 -sf_type "
  "spatial_flatten -fc_type dense -fc_units 3 -nn_loss mse",
};
static const PetscInt ode_checkpoints_K[] = {2, 3, 3, 2, 2};

static PetscErrorCode CheckpointsBitwise(Ctx *ctx)
{
  PetscFunctionBegin;
  if (ctx->only[0]) {
    char *found;
    PetscCall(PetscStrstr("checkpoints", ctx->only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(ode_checkpoints); k++) {
    NN           net[2];
    Vec          x, t, buf0;
    Result       r[2];
    NNRandom     rng0;
    PetscBool    same[3];
    PetscInt     nx, nt;
    PetscReal    u = 0;
    char         opt[32], val[16];
    PetscScalar *a;
    PetscCall(NNTestInsertPrefixed("ck_", ode_checkpoints[k]));
    for (int p = 0; p < 2; p++) { /* without, then with checkpoints */
      PetscCall(PetscSNPrintf(val, sizeof(val), "%d", p ? (int)ode_checkpoints_K[k] : 0));
      PetscCall(PetscSNPrintf(opt, sizeof(opt), "-ck_blk_checkpoints"));
      PetscCall(PetscOptionsSetValue(NULL, opt, val));
      PetscCall(NNCreate(PETSC_COMM_WORLD, &net[p]));
      PetscCall(NNSetOptionsPrefix(net[p], "ck_"));
      PetscCall(NNSetBatchSize(net[p], NBATCH));
      PetscCall(NNSetFromOptions(net[p]));
      PetscCall(NNSetPrecision(net[p], NN_PRECISION_SINGLE));
      PetscCall(NNSetUp(net[p]));
      PetscCall(NNSetTraining(net[p], PETSC_TRUE));
    }
    PetscCall(NNCreateBatchVecs(net[0], &x, &t));
    PetscCall(VecGetLocalSize(x, &nx));
    PetscCall(VecGetLocalSize(t, &nt));
    PetscCall(VecGetArray(x, &a));
    for (PetscInt i = 0; i < nx; i++) {
      PetscCall(Uniform(ctx, &u));
      a[i] = u;
    }
    PetscCall(VecRestoreArray(x, &a));
    PetscCall(VecGetArray(t, &a));
    for (PetscInt i = 0; i < nt; i++) {
      PetscCall(Uniform(ctx, &u));
      a[i] = 0.5 * u;
    }
    PetscCall(VecRestoreArray(t, &a));
    rng0 = net[0]->rng;
    {
      Vec buf;
      PetscCall(NNGetBuffers(net[0], &buf));
      PetscCall(VecDuplicate(buf, &buf0));
      PetscCall(VecCopy(buf, buf0));
    }
    for (int p = 0; p < 2; p++) { /* the block runs its float passes */
      NNLayer blk;
      PetscCall(NNGetLayer(net[p], "blk", &blk));
      PetscCheck(blk->ops->forwardsingle && blk->ops->backwardsingle, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "ode checkpoints case %d: the block has no float passes", (int)k);
      PetscCall(Run(net[p], x, t, &rng0, buf0, &r[p]));
    }
    PetscCall(NNTestVecsEqual(r[0].y, r[1].y, &same[0]));
    PetscCall(NNTestVecsEqual(r[0].dx, r[1].dx, &same[1]));
    PetscCall(NNTestVecsEqual(r[0].g, r[1].g, &same[2]));
    PetscCheck(r[0].L == r[1].L && same[0] && same[1] && same[2], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "ode checkpoints case %d: float passes with %" PetscInt_FMT " checkpoints differ from those without (loss %g vs %g)", (int)k, ode_checkpoints_K[k],
               (double)r[1].L, (double)r[0].L);
    for (int p = 0; p < 2; p++) {
      PetscCall(NNTestPassDestroy(&r[p]));
      PetscCall(NNDestroy(&net[p]));
    }
    PetscCall(VecDestroy(&buf0));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&t));
    PetscCall(PetscOptionsClearValue(NULL, "-ck_blk_checkpoints"));
    PetscCall(NNTestClearPrefixed("ck_", ode_checkpoints[k]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ode checkpoints in float (rk4, per-step parameters, discrete, 3bs evaluated again, DMDA conv, observation times, time input): bitwise equal to no checkpoints PASSED\n"));
  PetscFunctionReturn(0);
}

/* the U-Net graph takes Adam steps on one batch in double and in single precision from the same parameters: the losses
   agree to float round-off amplified by the steps, and both fall */
static PetscErrorCode TrainGraph(Ctx *ctx)
{
  const PetscInt nsteps = 5;
  NN             net[2];
  NNOpt          opt[2];
  Vec            x, t, theta[2], g;
  PetscReal      L[2], L0[2] = {0, 0}, dL = 0, u = 0;
  PetscInt       nx, nt;
  PetscScalar   *a;

  PetscFunctionBegin;
  if (ctx->only[0]) {
    char *found;
    PetscCall(PetscStrstr("graph training", ctx->only, &found));
    if (!found) PetscFunctionReturn(0);
  }
  PetscCall(NNTestInsertPrefixed("tr_", GRAPH_UNET));
  for (int p = 0; p < 2; p++) { /* same options, same seed: the same initial parameters */
    PetscCall(NNCreate(PETSC_COMM_WORLD, &net[p]));
    PetscCall(NNSetOptionsPrefix(net[p], "tr_"));
    PetscCall(NNSetBatchSize(net[p], NBATCH));
    PetscCall(NNSetFromOptions(net[p]));
    PetscCall(NNSetPrecision(net[p], (NNPrecision)p));
    PetscCall(NNSetUp(net[p]));
    PetscCall(NNGetParameters(net[p], &theta[p]));
    PetscCall(NNOptCreate(PETSC_COMM_WORLD, &opt[p]));
    PetscCall(NNOptSetType(opt[p], "adam"));
    PetscCall(NNOptSetLearningRate(opt[p], 1e-2));
    PetscCall(NNOptSetUp(opt[p], theta[p]));
  }
  PetscCall(NNCreateBatchVecs(net[0], &x, &t));
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(t, &nt));
  PetscCall(VecGetArray(x, &a));
  for (PetscInt i = 0; i < nx; i++) {
    PetscCall(Uniform(ctx, &u));
    a[i] = u;
  }
  PetscCall(VecRestoreArray(x, &a));
  PetscCall(VecGetArray(t, &a));
  for (PetscInt i = 0; i < nt; i++) {
    PetscCall(Uniform(ctx, &u));
    a[i] = 0.5 * u;
  }
  PetscCall(VecRestoreArray(t, &a));
  for (PetscInt s = 0; s < nsteps; s++) {
    for (int p = 0; p < 2; p++) {
      PetscCall(NNLossGradient(net[p], NBATCH, x, t, &L[p], NULL));
      PetscCall(NNGetGradient(net[p], &g));
      PetscCall(NNOptStep(opt[p], theta[p], g));
      if (!s) L0[p] = L[p];
    }
    dL = PetscMax(dL, PetscAbsReal(L[1] - L[0]) / PetscMax(PetscAbsReal(L[0]), 1e-300));
  }
  if (ctx->print_errors)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  graph training, %" PetscInt_FMT " Adam steps: losses double %.6e -> %.6e, single %.6e -> %.6e, largest difference %.2e\n", nsteps, (double)L0[0], (double)L[0], (double)L0[1], (double)L[1], (double)dL));
  PetscCheck(dL <= ctx->traintol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "graph training: single vs double losses differ by %g > %g", (double)dL, (double)ctx->traintol);
  PetscCheck(L[0] < L0[0] && L[1] < L0[1], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "graph training: the loss did not fall (double %g -> %g, single %g -> %g)", (double)L0[0], (double)L[0], (double)L0[1], (double)L[1]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "graph training (U-Net, %" PetscInt_FMT " Adam steps): single vs double losses <= %g PASSED\n", nsteps, (double)ctx->traintol));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  for (int p = 0; p < 2; p++) {
    PetscCall(NNOptDestroy(&opt[p]));
    PetscCall(NNDestroy(&net[p]));
  }
  PetscCall(NNTestClearPrefixed("tr_", GRAPH_UNET));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Ctx      ctx;
  PetscInt seed = 20261126;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  ctx.tol          = 1e-5;
  /* central differences in float with step h = 5e-3: truncation h^2 = 2.5e-5 times the third derivative, and the loss's
     round-off over the step, eps_L/h. The float loss sums dot products of at most K = 800 terms (the 5x5 convolutions
     over 32 channels); another summation order (another CPU's BLAS kernels, FMA or not) moves such a sum by about
     lambda sqrt(K) u (u = 2^-24; lambda = 6 bounds it but with probability 2 exp(-18), Higham and Mary 2019), so
     tol = lambda sqrt(K) u / h = 2.0e-3. Measured: <= 1.03e-3 over OpenBLAS's Haswell, SkylakeX and Sandybridge kernels */
  ctx.fdtol        = 6 * PetscSqrtReal(800) * (FLT_EPSILON / 2) / 5e-3;
  ctx.ranktol      = 1e-6;
  ctx.traintol     = 1e-5;
  ctx.print_errors = PETSC_FALSE;
  ctx.spectral     = PETSC_TRUE;
  ctx.only[0]      = 0;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Single vs double precision", NULL);
  PetscCall(PetscOptionsReal("-tol", "Single vs double tolerance", NULL, ctx.tol, &ctx.tol, NULL));
  PetscCall(PetscOptionsReal("-rank_tol", "Single precision on N ranks vs a serial copy", NULL, ctx.ranktol, &ctx.ranktol, NULL));
  PetscCall(PetscOptionsReal("-train_tol", "Graph training: single vs double losses", NULL, ctx.traintol, &ctx.traintol, NULL));
  PetscCall(PetscOptionsReal("-fd_tol", "Finite-difference tolerance in single precision", NULL, ctx.fdtol, &ctx.fdtol, NULL));
  PetscCall(PetscOptionsBool("-print_errors", "Print the measured differences", NULL, ctx.print_errors, &ctx.print_errors, NULL));
  PetscCall(PetscOptionsBool("-spectral", "Run the spectral_conv cases (PetNN built with FFTW and libfftw3f)", NULL, ctx.spectral, &ctx.spectral, NULL));
  PetscCall(PetscOptionsString("-cases", "Only the cases whose label contains this string", NULL, ctx.only, ctx.only, sizeof(ctx.only), NULL));
  PetscOptionsEnd();
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &ctx.rand));
  PetscCall(PetscRandomSetType(ctx.rand, PETSCRAND48));
  PetscCall(PetscRandomSetSeed(ctx.rand, (unsigned long)seed));
  PetscCall(PetscRandomSeed(ctx.rand));
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(cases); k++) PetscCall(RunCase(&ctx, (PetscInt)k, &cases[k]));
  PetscCall(TrainGraph(&ctx));
  PetscCall(CheckpointsBitwise(&ctx));
  PetscCall(PetscRandomDestroy(&ctx.rand));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   # the spectral_conv cases need PetNN built with FFTW and its single-precision library (CI has both)
   testset:
      requires: petnn_fftwf
      output_file: output/precision.out
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

   # without them: the other cases, against the output less the spectral_conv cases' two lines each
   test:
      requires: !petnn_fftwf
      suffix: nofftwf
      nsize: 2
      args: -spectral 0
      output_file: output/precision.out
      filter_output: sed -e '/spectral_conv/,+1d'

TEST*/
