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
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm2d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm3d(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerCreate_ODE(NNLayer);

static PetscBool NNLayerRegisterAllCalled = PETSC_FALSE;

/*@C
   NNLayerRegisterAll - registers the built-in layer types

   Level: advanced

.seealso: `NNLayerRegister()`
@*/
PetscErrorCode NNLayerRegisterAll(void)
{
  PetscFunctionBegin;
  if (NNLayerRegisterAllCalled) PetscFunctionReturn(0);
  NNLayerRegisterAllCalled = PETSC_TRUE;
  PetscCall(NNLayerRegister(NNLAYERDENSE, NNLayerCreate_Dense));
  PetscCall(NNLayerRegister(NNLAYERFLATTEN, NNLayerCreate_Flatten));
  PetscCall(NNLayerRegister(NNLAYERRELU, NNLayerCreate_ReLU));
  PetscCall(NNLayerRegister(NNLAYERLEAKYRELU, NNLayerCreate_LeakyReLU));
  PetscCall(NNLayerRegister(NNLAYERTANH, NNLayerCreate_Tanh));
  PetscCall(NNLayerRegister(NNLAYERSIGMOID, NNLayerCreate_Sigmoid));
  PetscCall(NNLayerRegister(NNLAYERGELU, NNLayerCreate_GELU));
  PetscCall(NNLayerRegister(NNLAYERDROPOUT, NNLayerCreate_Dropout));
  PetscCall(NNLayerRegister(NNLAYERBATCHNORM1D, NNLayerCreate_BatchNorm1d));
  PetscCall(NNLayerRegister(NNLAYERRESIDUAL, NNLayerCreate_Residual));
  PetscCall(NNLayerRegister(NNLAYERTOSPATIAL, NNLayerCreate_ToSpatial));
  PetscCall(NNLayerRegister(NNLAYERCONV2D, NNLayerCreate_Conv2d));
  PetscCall(NNLayerRegister(NNLAYERCONV3D, NNLayerCreate_Conv3d));
  PetscCall(NNLayerRegister(NNLAYERSPATIALFLATTEN, NNLayerCreate_SpatialFlatten));
  PetscCall(NNLayerRegister(NNLAYERMAXPOOL2D, NNLayerCreate_MaxPool2d));
  PetscCall(NNLayerRegister(NNLAYERMAXPOOL3D, NNLayerCreate_MaxPool3d));
  PetscCall(NNLayerRegister(NNLAYERAVGPOOL2D, NNLayerCreate_AvgPool2d));
  PetscCall(NNLayerRegister(NNLAYERAVGPOOL3D, NNLayerCreate_AvgPool3d));
  PetscCall(NNLayerRegister(NNLAYERGLOBALAVGPOOL, NNLayerCreate_GlobalAvgPool));
  PetscCall(NNLayerRegister(NNLAYERUPSAMPLE, NNLayerCreate_Upsample));
  PetscCall(NNLayerRegister(NNLAYERBATCHNORM2D, NNLayerCreate_BatchNorm2d));
  PetscCall(NNLayerRegister(NNLAYERBATCHNORM3D, NNLayerCreate_BatchNorm3d));
  PetscCall(NNLayerRegister(NNLAYERODE, NNLayerCreate_ODE));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerRegisterAllTypes(void)
{
  PetscFunctionBegin;
  NNLayerRegisterAllCalled = PETSC_FALSE;
  PetscCall(NNLayerRegisterAll());
  PetscFunctionReturn(0);
}
