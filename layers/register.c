/* Registers the built-in layer types. */
#include <petnn/private/nnimpl.h>

PETSC_INTERN PetscErrorCode NNLayerCreate_Dense(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Flatten(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_ReLU(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_LeakyReLU(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Tanh(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Sigmoid(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_GELU(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Dropout(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm1d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Residual(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_ToSpatial(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Conv2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Conv3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_SpatialFlatten(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_MaxPool2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_MaxPool3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_AvgPool2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_AvgPool3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_GlobalAvgPool(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Upsample(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_ConvTranspose2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_ConvTranspose3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_SpectralConv2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_SpectralConv3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_GroupNorm(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_InstanceNorm(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_LayerNorm(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_ODE(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Concat(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Add(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_Split(NNLayer);

/* The built-in layer types, one row each: the NNLAYER* name of include/petnn.h and its create routine.
   tests/layer_types.c checks that this table and the header's NNLAYER* names are the same set. */
static const struct {
  const char *name;
  PetscErrorCode (*create)(NNLayer);
} NNLayerTypes[] = {
  {NNLAYERDENSE,          NNLayerCreate_Dense},
  {NNLAYERFLATTEN,        NNLayerCreate_Flatten},
  {NNLAYERRELU,           NNLayerCreate_ReLU},
  {NNLAYERLEAKYRELU,      NNLayerCreate_LeakyReLU},
  {NNLAYERTANH,           NNLayerCreate_Tanh},
  {NNLAYERSIGMOID,        NNLayerCreate_Sigmoid},
  {NNLAYERGELU,           NNLayerCreate_GELU},
  {NNLAYERDROPOUT,        NNLayerCreate_Dropout},
  {NNLAYERBATCHNORM1D,    NNLayerCreate_BatchNorm1d},
  {NNLAYERRESIDUAL,       NNLayerCreate_Residual},
  {NNLAYERTOSPATIAL,      NNLayerCreate_ToSpatial},
  {NNLAYERCONV2D,         NNLayerCreate_Conv2d},
  {NNLAYERCONV3D,         NNLayerCreate_Conv3d},
  {NNLAYERSPATIALFLATTEN, NNLayerCreate_SpatialFlatten},
  {NNLAYERMAXPOOL2D,      NNLayerCreate_MaxPool2d},
  {NNLAYERMAXPOOL3D,      NNLayerCreate_MaxPool3d},
  {NNLAYERAVGPOOL2D,      NNLayerCreate_AvgPool2d},
  {NNLAYERAVGPOOL3D,      NNLayerCreate_AvgPool3d},
  {NNLAYERGLOBALAVGPOOL,  NNLayerCreate_GlobalAvgPool},
  {NNLAYERUPSAMPLE,       NNLayerCreate_Upsample},
  {NNLAYERCONVTRANSPOSE2D, NNLayerCreate_ConvTranspose2d},
  {NNLAYERCONVTRANSPOSE3D, NNLayerCreate_ConvTranspose3d},
  {NNLAYERBATCHNORM2D,    NNLayerCreate_BatchNorm2d},
  {NNLAYERBATCHNORM3D,    NNLayerCreate_BatchNorm3d},
  {NNLAYERSPECTRALCONV2D, NNLayerCreate_SpectralConv2d},
  {NNLAYERSPECTRALCONV3D, NNLayerCreate_SpectralConv3d},
  {NNLAYERGROUPNORM,      NNLayerCreate_GroupNorm},
  {NNLAYERINSTANCENORM,   NNLayerCreate_InstanceNorm},
  {NNLAYERLAYERNORM,      NNLayerCreate_LayerNorm},
  {NNLAYERODE,            NNLayerCreate_ODE},
  {NNLAYERCONCAT,         NNLayerCreate_Concat},
  {NNLAYERADD,            NNLayerCreate_Add},
  {NNLAYERSPLIT,          NNLayerCreate_Split},
};

static PetscBool NNLayerRegisterAllCalled = PETSC_FALSE;

/*@C
   NNLayerRegisterAll - registers the built-in layer types

   Not Collective

   Level: advanced

.seealso: `NNLayerRegister()`, `NNLayerSetType()`
@*/
PetscErrorCode NNLayerRegisterAll(void)
{
  PetscFunctionBegin;
  if (NNLayerRegisterAllCalled) PetscFunctionReturn(0);
  NNLayerRegisterAllCalled = PETSC_TRUE;
  for (size_t i = 0; i < sizeof(NNLayerTypes) / sizeof(NNLayerTypes[0]); i++) PetscCall(NNLayerRegister(NNLayerTypes[i].name, NNLayerTypes[i].create));
  PetscFunctionReturn(0);
}

/* PetNNInitializePackage() registers the types again after PetNNFinalizePackage() emptied the list */
PetscErrorCode NNLayerRegisterAllTypes(void)
{
  PetscFunctionBegin;
  NNLayerRegisterAllCalled = PETSC_FALSE;
  PetscCall(NNLayerRegisterAll());
  PetscFunctionReturn(0);
}
