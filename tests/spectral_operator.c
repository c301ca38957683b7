static char help[] = "Layer operator norms by SLEPc SVD against dense references (the operator formed column by column,\n"
                     "gathered on one rank, LAPACK gesvd): dense layers, conv2d (plain, stride 2, dilation 2, groups 2,\n"
                     "periodic), conv3d, average pooling, spatially decomposed over the ranks; the Lipschitz bound of a\n"
                     "small CNN equals the product of its layers' norms; the table -nn_spectral_view prints.\n\n";

#include <petnn.h>

typedef struct {
  const char *name;
  PetscInt    nd, C, F, in[3]; /* in: (D,) H, W */
  PetscInt    k, s, p, dil, groups;
  PetscBool   periodic, avgpool, upsample;
} Case;

static PetscErrorCode Compare(const char what[], PetscReal sigma, PetscReal ref)
{
  PetscReal err = PetscAbsReal(sigma - ref) / PetscMax(PetscAbsReal(ref), PETSC_SMALL);

  PetscFunctionBegin;
  PetscCheck(err <= 1e-8, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: SLEPc %.16g vs dense reference %.16g (rel. error %g)", what, (double)sigma, (double)ref, (double)err);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-28s sigma_max %.6f, dense reference agrees (rel. error <= 1e-8)\n", what, (double)sigma));
  PetscFunctionReturn(0);
}

/* sp (to_spatial) -> the case's layer "op" -> sf (spatial_flatten) */
static PetscErrorCode CheckSpatial(const Case *c)
{
  NN        net;
  NNLayer   l;
  PetscInt  shape[4] = {c->C, c->in[0], c->in[1], c->in[2]};
  PetscReal sigma, ref;

  PetscFunctionBegin;
  if (c->nd == 2) {
    shape[1] = c->in[1];
    shape[2] = c->in[2];
  }
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, c->nd + 1, shape));
  PetscCall(NNSetBatchSize(net, 3));
  PetscCall(NNSetSeed(net, 5));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, c->nd == 2 ? "sp" : "sp3", NULL));
  if (c->upsample) {
    PetscCall(NNAddLayer(net, NNLAYERUPSAMPLE, "op", &l));
    PetscCall(NNLayerUpsampleSetScale(l, c->k));
  } else if (c->avgpool) {
    PetscCall(NNAddLayer(net, c->nd == 2 ? NNLAYERAVGPOOL2D : NNLAYERAVGPOOL3D, "op", &l));
    PetscCall(NNLayerPoolSetKernelSize(l, c->k));
    PetscCall(NNLayerPoolSetStride(l, c->s));
  } else {
    PetscCall(NNAddLayer(net, c->nd == 2 ? NNLAYERCONV2D : NNLAYERCONV3D, "op", &l));
    PetscCall(NNLayerConvSetFilters(l, c->F));
    PetscCall(NNLayerConvSetKernelSize(l, c->k));
    PetscCall(NNLayerConvSetStride(l, c->s));
    PetscCall(NNLayerConvSetPadding(l, c->p));
    PetscCall(NNLayerConvSetDilation(l, c->dil));
    PetscCall(NNLayerConvSetGroups(l, c->groups));
    PetscCall(NNLayerConvSetPeriodic(l, c->periodic));
  }
  PetscCall(NNAddLayer(net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNLayerComputeOperatorNorm(net, l, &sigma));
  PetscCall(NNLayerComputeOperatorNormReference(net, l, &ref));
  PetscCall(Compare(c->name, sigma, ref));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* an MLP: dense -> tanh -> dense -> sigmoid -> dense */
static PetscErrorCode CheckDense(void)
{
  NN          net;
  PetscInt    in = 13;
  const char *names[3] = {"fc1", "fc2", "fc3"};
  PetscReal   sigma, ref;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, &in));
  PetscCall(NNSetBatchSize(net, 4));
  PetscCall(NNSetSeed(net, 2));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  for (PetscInt i = 0; i < 3; i++) {
    NNLayer l;
    PetscCall(NNAddLayer(net, NNLAYERDENSE, names[i], &l));
    PetscCall(NNLayerDenseSetUnits(l, i == 0 ? 9 : (i == 1 ? 17 : 4)));
    if (i == 0) PetscCall(NNAddLayer(net, NNLAYERTANH, "act1", NULL));
    if (i == 1) PetscCall(NNAddLayer(net, NNLAYERSIGMOID, "act2", NULL));
  }
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  for (PetscInt i = 0; i < 3; i++) {
    NNLayer l;
    char    what[64];
    PetscCall(NNGetLayer(net, names[i], &l));
    PetscCall(NNLayerComputeOperatorNorm(net, l, &sigma));
    PetscCall(NNLayerComputeOperatorNormReference(net, l, &ref));
    PetscCall(PetscSNPrintf(what, sizeof(what), "dense %s", names[i]));
    PetscCall(Compare(what, sigma, ref));
  }
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* a small CNN: the bound is the product of the layers' values, and the table */
static PetscErrorCode CheckNetwork(void)
{
  NN             net;
  NNLayer        l;
  const NNLayer *layers;
  PetscInt       shape[3] = {2, 12, 12}, nl;
  PetscReal      bound, prod = 1, L;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 3, shape));
  PetscCall(NNSetBatchSize(net, 2));
  PetscCall(NNSetSeed(net, 9));
  PetscCall(NNSetLoss(net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(net, NNLAYERTOSPATIAL, "sp", NULL));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 4));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNAddLayer(net, NNLAYERRELU, "r1", NULL));
  PetscCall(NNAddLayer(net, NNLAYERMAXPOOL2D, "p1", &l));
  PetscCall(NNLayerPoolSetKernelSize(l, 2));
  PetscCall(NNAddLayer(net, NNLAYERCONV2D, "c2", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNLayerConvSetKernelSize(l, 3));
  PetscCall(NNLayerConvSetStride(l, 2));
  PetscCall(NNAddLayer(net, NNLAYERLEAKYRELU, "r2", &l));
  PetscCall(NNLayerLeakyReLUSetSlope(l, 0.1));
  PetscCall(NNAddLayer(net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNAddLayer(net, NNLAYERGELU, "g", NULL));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "out", &l));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNComputeLipschitzBound(net, &bound));
  PetscCall(NNGetLayers(net, &nl, &layers));
  for (PetscInt i = 0; i < nl; i++) {
    PetscCall(NNLayerComputeOperatorNorm(net, layers[i], &L));
    prod *= L;
  }
  PetscCheck(PetscAbsReal(bound - prod) <= 1e-12 * prod, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Lipschitz bound %.16g is not the product of the layers' values %.16g", (double)bound, (double)prod);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "Lipschitz bound of the CNN equals the product of its %" PetscInt_FMT " layers' values\n", nl));
  PetscCall(NNOperatorNormView(net, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* blocks: dense -> batchnorm1d -> sigmoid -> residual (dense, tanh) -> ODE block (dense, tanh; forward Euler, shared parameters) -> dense:
   the residual's value is 1 + its inner product and the ODE block's (1 + h L_f)^N */
static PetscErrorCode CheckBlocks(void)
{
  NN        net;
  NNLayer   l, res, ode, in1, in2, bn, sig;
  PetscInt  n = 6;
  PetscReal Lres, Lode, Li, bound, T = 0.5;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, &n));
  PetscCall(NNSetBatchSize(net, 2));
  PetscCall(NNSetSeed(net, 4));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNAddLayer(net, NNLAYERBATCHNORM1D, "bn", &bn));
  PetscCall(NNLayerBatchNormSetEpsilon(bn, 1e-3));
  PetscCall(NNAddLayer(net, NNLAYERSIGMOID, "sig", &sig));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", &res));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERDENSE, "res_fc", &in1));
  PetscCall(NNLayerDenseSetUnits(in1, 5));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERTANH, "res_act", NULL));
  PetscCall(NNAddLayer(net, NNLAYERODE, "ode", &ode));
  PetscCall(NNLayerODEAddLayer(ode, NNLAYERDENSE, "ode_fc", &in2));
  PetscCall(NNLayerDenseSetUnits(in2, 5));
  PetscCall(NNLayerODEAddLayer(ode, NNLAYERTANH, "ode_act", NULL));
  PetscCall(NNLayerODESetTime(ode, T));
  PetscCall(NNLayerODESetSteps(ode, 4));
  PetscCall(NNLayerODESetScheme(ode, NNODE_SCHEME_DISCRETE));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "out", &l));
  PetscCall(NNLayerDenseSetUnits(l, 2));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetUp(net));
  PetscCall(NNLayerComputeOperatorNorm(net, bn, &Li)); /* freshly initialized: gamma 1, running variance 1 */
  PetscCheck(PetscAbsReal(Li - 1 / PetscSqrtReal(1 + 1e-3)) <= 1e-15, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "batch norm: %.17g is not 1/sqrt(1 + eps)", (double)Li);
  PetscCall(NNLayerComputeOperatorNorm(net, sig, &Li));
  PetscCheck(Li == 0.25, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "sigmoid: %g is not 1/4", (double)Li);
  PetscCall(NNLayerComputeOperatorNorm(net, res, &Lres));
  PetscCall(NNLayerComputeOperatorNorm(net, in1, &Li));
  PetscCheck(PetscAbsReal(Lres - (1 + Li)) <= 1e-14 * Lres, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "residual: %g is not 1 + %g", (double)Lres, (double)Li);
  PetscCall(NNLayerComputeOperatorNorm(net, ode, &Lode));
  PetscCall(NNLayerComputeOperatorNorm(net, in2, &Li));
  PetscCheck(PetscAbsReal(Lode - PetscPowRealInt(1 + T / 4 * Li, 4)) <= 1e-14 * Lode, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "ODE block: %g is not (1 + h L)^N with L = %g", (double)Lode, (double)Li);
  PetscCall(NNComputeLipschitzBound(net, &bound));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batch norm (eval) max |gamma|/sqrt(var + eps); sigmoid 1/4; residual block 1 + Lip(inner); ODE block (forward Euler) (1 + h Lip(f))^N\n"));
  PetscCall(NNOperatorNormView(net, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  /* name, nd, C, F, in (D,H,W), k (upsample: scale), s, p, dil, groups, periodic, avgpool, upsample */
  const Case cases[] = {
    {"conv2d 3x3",          2, 2, 3, {1, 8, 6}, 3, 1, 1, 1, 1, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"conv2d stride 2",     2, 2, 3, {1, 9, 7}, 3, 2, 1, 1, 1, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"conv2d dilation 2",   2, 2, 3, {1, 8, 8}, 3, 1, 2, 2, 1, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"conv2d groups 2",     2, 4, 4, {1, 8, 6}, 3, 1, 1, 1, 2, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"conv2d periodic",     2, 2, 2, {1, 8, 6}, 3, 1, 1, 1, 1, PETSC_TRUE,  PETSC_FALSE, PETSC_FALSE},
    {"conv2d 5x5 no pad",   2, 1, 4, {1, 10, 8}, 5, 1, 0, 1, 1, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"conv3d 3x3x3",        3, 2, 2, {4, 5, 4}, 3, 1, 1, 1, 1, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"conv3d stride 2",     3, 1, 2, {5, 6, 6}, 3, 2, 1, 1, 1, PETSC_FALSE, PETSC_FALSE, PETSC_FALSE},
    {"avgpool2d 3 stride 2", 2, 2, 0, {1, 9, 7}, 3, 2, 0, 1, 1, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE},
    {"upsample2d 2",        2, 2, 0, {1, 4, 3}, 2, 1, 0, 1, 1, PETSC_FALSE, PETSC_FALSE, PETSC_TRUE},
  };

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(CheckDense());
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) PetscCall(CheckSpatial(&cases[i]));
  PetscCall(CheckNetwork());
  PetscCall(CheckBlocks());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      requires: slepc
      output_file: output/spectral_operator.out

   test:
      suffix: 2
      nsize: 2
      requires: slepc
      args: -sp_da_processors_x 2 -sp_da_processors_y 1 -sp3_da_processors_x 1 -sp3_da_processors_y 1 -sp3_da_processors_z 2
      output_file: output/spectral_operator.out

   test:
      suffix: 3
      nsize: 3
      requires: slepc
      args: -sp_da_processors_x 1 -sp_da_processors_y 3 -sp3_da_processors_x 1 -sp3_da_processors_y 3 -sp3_da_processors_z 1
      output_file: output/spectral_operator.out

   test:
      suffix: 4
      nsize: 4
      requires: slepc
      args: -sp_da_processors_x 2 -sp_da_processors_y 2 -sp3_da_processors_x 2 -sp3_da_processors_y 1 -sp3_da_processors_z 2
      output_file: output/spectral_operator.out

TEST*/
