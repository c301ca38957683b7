/*
   The public setters of the convolution layers (conv2d, conv3d): each dispatches with PetscTryMethod()
   to the implementation composed by layers/conv/conv.c, so it is a no-op on layers of other types.
*/
#include <petnn/private/nnimpl.h>

/*@
   NNLayerConvSetFilters - sets number of output channels (filters) of a convolution layer

   Options Database Key:
.  -<prefix>filters <n> - output channels

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetFilters(NNLayer l, PetscInt filters)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetFilters_C", (NNLayer, PetscInt), (l, filters));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetKernelSize - sets the (square) kernel size of a convolution layer

   Options Database Key:
.  -<prefix>kernel <k> - kernel size

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetKernelSize(NNLayer l, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetKernelSize_C", (NNLayer, PetscInt), (l, k));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetStride - sets the stride (default 1) of a convolution layer

   Options Database Key:
.  -<prefix>stride <s> - stride

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetStride(NNLayer l, PetscInt stride)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetStride_C", (NNLayer, PetscInt), (l, stride));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetPadding - sets the zero padding on each side (default kernel/2) of a convolution layer

   Options Database Key:
.  -<prefix>padding <p> - zero padding

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetPadding(NNLayer l, PetscInt pad)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetPadding_C", (NNLayer, PetscInt), (l, pad));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetBias - sets whether the convolution has a bias (default true) of a convolution layer

   Options Database Key:
.  -<prefix>bias <bool> - add a bias

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetBias(NNLayer l, PetscBool bias)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetBias_C", (NNLayer, PetscBool), (l, bias));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetPeriodic - sets periodic padding (wrap around the domain) instead of zero padding of a convolution layer

   Options Database Key:
.  -<prefix>periodic <bool> - periodic padding

   Level: beginner
@*/
PetscErrorCode NNLayerConvSetPeriodic(NNLayer l, PetscBool periodic)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetPeriodic_C", (NNLayer, PetscBool), (l, periodic));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetDilation - sets the dilation (spacing of the kernel taps, default 1) of a convolution layer, on every axis

   Logically Collective

   Input Parameters:
+  l - the layer
-  dilation - the dilation

   Options Database Key:
.  -<prefix>dilation <d> - dilation (one value or one per axis)

   Level: intermediate

.seealso: `NNLAYERCONV2D`, `NNLAYERCONV3D`, `NNLayerConvSetPadding()`
@*/
PetscErrorCode NNLayerConvSetDilation(NNLayer l, PetscInt dilation)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetDilation_C", (NNLayer, PetscInt), (l, dilation));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetGroups - sets the number of groups (default 1) of a convolution layer: input channel
   group g feeds only filter group g

   Logically Collective

   Input Parameters:
+  l - the layer
-  groups - the number of groups; it must divide the input channels and the filters

   Options Database Key:
.  -<prefix>groups <g> - groups

   Level: intermediate

.seealso: `NNLAYERCONV2D`, `NNLAYERCONV3D`, `NNLayerConvSetFilters()`
@*/
PetscErrorCode NNLayerConvSetGroups(NNLayer l, PetscInt groups)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerConvSetGroups_C", (NNLayer, PetscInt), (l, groups));
  PetscFunctionReturn(0);
}
