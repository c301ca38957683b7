/*
   Options, view and setters of the transposed convolutions (conv_transpose2d, conv_transpose3d).
   The convolution's public setters (NNLayerConvSetFilters(), ...KernelSize, ...Stride, ...Padding,
   ...Dilation, ...Groups, ...Bias, ...Threads, NNLayerConvGetThreads()) work on them too: the same
   names are composed here.
   NNLayerConvTransposeSetOutputPadding() is their own.
*/
#include "conv.h"

/* "a x b (x c)" in PyTorch order (depth, height, width) */
PetscErrorCode NNLayerSetFromOptions_ConvTranspose(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;

  PetscFunctionBegin;
  d->badcount = 0;
  PetscOptionsHeadBegin(PetscOptionsObject, d->nd == 2 ? "ConvTranspose2d layer options" : "ConvTranspose3d layer options");
  PetscCall(PetscOptionsInt("-filters", "Number of output channels", "NNLayerConvSetFilters", d->filters, &d->filters, NULL));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-kernel", "Kernel size: one value or one per axis ((depth,)height,width)", "NNLayerConvSetKernelSize", d->k, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-stride", "Stride: one value or one per axis", "NNLayerConvSetStride", d->s, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-padding", "PyTorch's padding: pixels dropped from each side of the full output (default 0): one value or one per axis", "NNLayerConvSetPadding", d->pad, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-output_padding", "Extra output pixels on the far side, smaller than the stride or the dilation: one value or one per axis", "NNLayerConvTransposeSetOutputPadding", d->opad, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-dilation", "Spacing of the kernel taps: one value or one per axis", "NNLayerConvSetDilation", d->dil, d->badopt, &d->badcount));
  PetscCall(PetscOptionsInt("-groups", "Groups: in/groups input channels feed out/groups filters", "NNLayerConvSetGroups", d->groups, &d->groups, NULL));
  PetscCall(PetscOptionsBool("-bias", "Add a bias", "NNLayerConvSetBias", d->bias, &d->bias, NULL));
  PetscCall(PetscOptionsInt("-threads", "Threads splitting the pixels or batch slots (0: OpenBLAS's thread count)", "NNLayerConvSetThreads", d->threads, &d->threads, NULL));
  PetscOptionsHeadEnd();
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerView_ConvTranspose(NNLayer l, PetscViewer v)
{
  NNLayer_ConvTranspose *d = (NNLayer_ConvTranspose *)l->data;
  char                   k[64], s[64], p[64], op[64], dl[64];

  PetscFunctionBegin;
  PetscCall(NNConvTupleString(d->nd, d->k, sizeof(k), k));
  PetscCall(NNConvTupleString(d->nd, d->s, sizeof(s), s));
  PetscCall(NNConvTupleString(d->nd, d->pad, sizeof(p), p));
  PetscCall(NNConvTupleString(d->nd, d->opad, sizeof(op), op));
  PetscCall(NNConvTupleString(d->nd, d->dil, sizeof(dl), dl));
  PetscCall(PetscViewerASCIIPrintf(v, "transposed: %" PetscInt_FMT " filters, kernel %s, stride %s, padding %s, output padding %s, dilation %s, groups %" PetscInt_FMT ", bias %s\n", d->filters, k, s, p, op, dl, d->groups, d->bias ? "yes" : "no"));
  if (d->h.daout) PetscCall(PetscViewerASCIIPrintf(v, "halo %" PetscInt_FMT ", gathered im2col + GEMM of depth %" PetscInt_FMT "%s on blocks of about %" PetscInt_FMT " rows, %" PetscInt_FMT " thread%s\n", d->h.halo, d->g.K, d->g.bias ? " (+1: the bias)" : "", d->g.rows, d->nthreads, d->nthreads > 1 ? "s" : ""));
  PetscFunctionReturn(0);
}

#define NN_CONVT_SETTER(Name, T, field) \
  static PetscErrorCode NNLayerConvSet##Name##_ConvTranspose(NNLayer l, T v) \
  { \
    PetscFunctionBegin; \
    ((NNLayer_ConvTranspose *)l->data)->field = v; \
    l->setupcalled                            = PETSC_FALSE; \
    PetscFunctionReturn(0); \
  }
#define NN_CONVT_SETTER_AXES(Name, field) \
  static PetscErrorCode NNLayerConvSet##Name##_ConvTranspose(NNLayer l, PetscInt v) \
  { \
    PetscFunctionBegin; \
    for (PetscInt a = 0; a < 3; a++) ((NNLayer_ConvTranspose *)l->data)->field[a] = v; \
    l->setupcalled = PETSC_FALSE; \
    PetscFunctionReturn(0); \
  }
NN_CONVT_SETTER(Filters, PetscInt, filters)
NN_CONVT_SETTER(Groups, PetscInt, groups)
NN_CONVT_SETTER(Bias, PetscBool, bias)
NN_CONVT_SETTER(Threads, PetscInt, threads)
NN_CONVT_SETTER_AXES(KernelSize, k)
NN_CONVT_SETTER_AXES(Stride, s)
NN_CONVT_SETTER_AXES(Padding, pad)
NN_CONVT_SETTER_AXES(Dilation, dil)
NN_CONVT_SETTER_AXES(OutputPadding, opad)

static PetscErrorCode NNLayerConvGetThreads_ConvTranspose(NNLayer l, PetscInt *t)
{
  PetscFunctionBegin;
  *t = ((NNLayer_ConvTranspose *)l->data)->threads;
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNConvTransposeFunctions[] = {
  {"NNLayerConvSetFilters_C", (PetscVoidFunction)NNLayerConvSetFilters_ConvTranspose},
  {"NNLayerConvSetKernelSize_C", (PetscVoidFunction)NNLayerConvSetKernelSize_ConvTranspose},
  {"NNLayerConvSetStride_C", (PetscVoidFunction)NNLayerConvSetStride_ConvTranspose},
  {"NNLayerConvSetPadding_C", (PetscVoidFunction)NNLayerConvSetPadding_ConvTranspose},
  {"NNLayerConvSetBias_C", (PetscVoidFunction)NNLayerConvSetBias_ConvTranspose},
  {"NNLayerConvSetDilation_C", (PetscVoidFunction)NNLayerConvSetDilation_ConvTranspose},
  {"NNLayerConvSetGroups_C", (PetscVoidFunction)NNLayerConvSetGroups_ConvTranspose},
  {"NNLayerConvSetThreads_C", (PetscVoidFunction)NNLayerConvSetThreads_ConvTranspose},
  {"NNLayerConvGetThreads_C", (PetscVoidFunction)NNLayerConvGetThreads_ConvTranspose},
  {"NNLayerConvTransposeSetOutputPadding_C", (PetscVoidFunction)NNLayerConvSetOutputPadding_ConvTranspose},
};

PetscErrorCode NNConvTransposeComposeFunctions(NNLayer l, PetscBool add)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNConvTransposeFunctions), NNConvTransposeFunctions, add));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvTransposeSetOutputPadding - sets the output padding of a transposed convolution
   (torch.nn.ConvTranspose2d's output_padding), on every axis

   Logically Collective

   Input Parameters:
+  l - the layer (conv_transpose2d or conv_transpose3d; a no-op on other types)
-  p - extra output pixels on the far side of each axis; smaller than the stride or the dilation (default 0)

   Options Database Key:
.  -<prefix>output_padding <p> - output padding (one value or one per axis)

   Notes:
   A stride s > 1 maps s input sizes to the same output size of a convolution; the output padding
   selects which one a transposed convolution produces:
   (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1. The other settings
   (filters, kernel, stride, padding, dilation, groups, bias) use the convolution's setters,
   `NNLayerConvSetFilters()` and so on.

   Level: intermediate

.seealso: `NNLAYERCONVTRANSPOSE2D`, `NNLAYERCONVTRANSPOSE3D`, `NNLayerConvSetStride()`, `NNLayerConvSetPadding()`
@*/
PetscErrorCode NNLayerConvTransposeSetOutputPadding(NNLayer l, PetscInt p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscValidLogicalCollectiveInt(l, p, 2);
  PetscTryMethod(l, "NNLayerConvTransposeSetOutputPadding_C", (NNLayer, PetscInt), (l, p));
  PetscFunctionReturn(0);
}
