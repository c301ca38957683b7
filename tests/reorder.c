static char help[] = "Max pooling run before the ReLU in front of it (NNSetPoolBeforeActivation()): the loss, the\n"
                     "parameter gradient and the input gradient are bitwise those of the given order, for a CNN\n"
                     "(conv2d-relu-maxpool2d twice), for ReLU and max pooling straight on inputs full of ties and\n"
                     "zeros (2-d and 3-d pooling), on 1 or more ranks (spatially decomposed); leaky ReLU stays in place.\n\n"
                     "  -view   print the reordered networks\n\n";

#include <petnn.h>

typedef struct {
  const char *name;
  PetscInt    ndim, shape[4];
  PetscBool   conv;  /* conv2d-relu-maxpool2d-conv2d-leaky_relu-maxpool2d, else relu-maxpool on the input */
  PetscInt    moved; /* ReLUs expected to move */
} Case;

static PetscErrorCode Build(const Case *c, PetscBool poolfirst, NN *net)
{
  NNLayer l;
  char    prefix[8];

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, net));
  PetscCall(PetscSNPrintf(prefix, sizeof(prefix), "%s_", c->ndim == 3 ? "a" : "b")); /* -a_sp_da_processors_x ... */
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputShape(*net, c->ndim, c->shape));
  PetscCall(NNSetBatchSize(*net, 3));
  PetscCall(NNSetSeed(*net, 5));
  PetscCall(NNSetLoss(*net, NNLOSSCROSSENTROPY));
  PetscCall(NNAddLayer(*net, NNLAYERTOSPATIAL, "sp", NULL));
  if (c->conv) {
    PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
    PetscCall(NNLayerConvSetFilters(l, 4));
    PetscCall(NNAddLayer(*net, NNLAYERRELU, "r1", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p1", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c2", &l));
    PetscCall(NNLayerConvSetFilters(l, 3));
    PetscCall(NNAddLayer(*net, NNLAYERLEAKYRELU, "r2", NULL)); /* not moved: negative values can tie after scaling */
    PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p2", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERRELU, "r3", NULL));
    PetscCall(NNAddLayer(*net, NNLAYERMAXPOOL2D, "p3", NULL));
  } else {
    PetscCall(NNAddLayer(*net, NNLAYERRELU, "r1", NULL));
    PetscCall(NNAddLayer(*net, c->ndim == 3 ? NNLAYERMAXPOOL2D : NNLAYERMAXPOOL3D, "p1", NULL));
  }
  PetscCall(NNAddLayer(*net, NNLAYERSPATIALFLATTEN, "sf", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERDENSE, "fc", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetPoolBeforeActivation(*net, poolfirst));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* inputs from {-1, -0.5, 0, 0.5, 1}, the same on any number of ranks: many pooling windows tie, many are all zero or negative */
static PetscErrorCode Fill(NN net, Vec *x, Vec *t)
{
  PetscScalar *a;
  PetscInt     lo, hi;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(VecGetOwnershipRange(*x, &lo, &hi));
  PetscCall(VecGetArray(*x, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = 0.5 * (PetscReal)((i * 7919 + 13) % 5) - 1.0;
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetOwnershipRange(*t, &lo, &hi));
  PetscCall(VecGetArray(*t, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = (PetscReal)(i % 5);
  PetscCall(VecRestoreArray(*t, &a));
  PetscFunctionReturn(0);
}

static PetscErrorCode Compare(const char what[], const char name[], Vec a, Vec b)
{
  PetscBool same;
  PetscReal nb;

  PetscFunctionBegin;
  PetscCall(VecEqual(a, b, &same));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &same, 1, NN_MPI_BOOL, MPI_LAND, PETSC_COMM_WORLD));
  PetscCall(VecNorm(b, NORM_2, &nb));
  PetscCheck(same, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the %s differs between the two orders", name, what);
  PetscCheck(nb > 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the %s is zero: the test checks nothing", name, what);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %s bitwise identical\n", name, what));
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckCase(const Case *c, PetscBool view)
{
  NN        a, b;
  Vec       x, t, dxa, dxb, ga, gb;
  PetscReal      La, Lb;
  PetscInt       amoved, bmoved, nl;
  const NNLayer *layers;

  PetscFunctionBegin;
  PetscCall(Build(c, PETSC_TRUE, &a));
  PetscCall(Build(c, PETSC_FALSE, &b));
  PetscCall(NNGetNumMovedActivations(a, &amoved));
  PetscCall(NNGetNumMovedActivations(b, &bmoved));
  PetscCheck(amoved == c->moved && bmoved == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: %" PetscInt_FMT " ReLUs moved, expected %" PetscInt_FMT, c->name, amoved, c->moved);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: order", c->name));
  PetscCall(NNGetLayers(a, &nl, &layers)); /* in the order they run */
  for (PetscInt i = 0; i < nl; i++) {
    const char *name;
    PetscCall(PetscObjectGetName((PetscObject)layers[i], &name));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, " %s", name));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
  if (view && !c->conv) PetscCall(NNView(a, NULL)); /* the convolutions' views name their thread counts */
  PetscCall(Fill(a, &x, &t));
  PetscCall(VecDuplicate(x, &dxa));
  PetscCall(VecDuplicate(x, &dxb));
  PetscCall(NNLossGradient(a, 3, x, t, &La, dxa));
  PetscCall(NNLossGradient(b, 3, x, t, &Lb, dxb));
  PetscCheck(La == Lb, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: loss %.17g with max pooling first, %.17g in the given order", c->name, (double)La, (double)Lb);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: loss bitwise identical\n", c->name));
  PetscCall(NNGetGradient(a, &ga));
  PetscCall(NNGetGradient(b, &gb));
  PetscCall(Compare("parameter gradient", c->name, ga, gb));
  PetscCall(Compare("input gradient", c->name, dxa, dxb));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxa));
  PetscCall(VecDestroy(&dxb));
  PetscCall(NNDestroy(&a));
  PetscCall(NNDestroy(&b));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const Case cases[] = {
    {"CNN conv2d-relu-maxpool2d-conv2d-leaky_relu-maxpool2d-relu-maxpool2d", 3, {1, 16, 16}, PETSC_TRUE,  2},
    {"relu-maxpool2d on inputs with ties",                                   3, {2, 8, 12},  PETSC_FALSE, 1},
    {"relu-maxpool3d on inputs with ties",                                   4, {2, 4, 4, 6}, PETSC_FALSE, 1},
  };
  PetscBool view = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-view", &view, NULL));
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) PetscCall(CheckCase(&cases[k], view));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1
      args: -view

   test:
      suffix: 2
      nsize: 2
      args: -a_sp_da_processors_x 2 -a_sp_da_processors_y 1 -b_sp_da_processors_x 1 -b_sp_da_processors_y 1 -b_sp_da_processors_z 2

TEST*/
