/*
   Options, view, setters and getters of the convolution layers (conv2d, conv3d). The public
   NNLayerConvSet*() dispatch with PetscTryMethod() (a no-op on layers of other types), the
   NNLayerConvGet*() with PetscUseMethod() (an error on them), to the functions composed here.
*/
#include "conv.h"

/* "a x b (x c)" in PyTorch order (depth, height, width) */
PetscErrorCode NNConvTupleString(PetscInt nd, const PetscInt v[3], size_t len, char str[])
{
  PetscFunctionBegin;
  if (nd == 2) PetscCall(PetscSNPrintf(str, len, "%" PetscInt_FMT "x%" PetscInt_FMT, v[1], v[0]));
  else PetscCall(PetscSNPrintf(str, len, "%" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT, v[2], v[1], v[0]));
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvOptionsTuple(NNLayer l, NNOptionItems PetscOptionsObject, PetscInt nd, const char opt[], const char text[], const char man[], PetscInt v[3], char badopt[32], PetscInt *badcount)
{
  PetscInt  a[3], b[4], n = nd, m = 4;
  PetscBool set;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nd; i++) a[i] = v[nd - 1 - i];
  PetscCall(PetscOptionsIntArray(opt, text, man, a, &n, &set));
  if (!set) PetscFunctionReturn(0);
  /* PetscOptionsIntArray() reads at most nd values: count them all to refuse extra ones */
  PetscCall(PetscOptionsGetIntArray(((PetscObject)l)->options, ((PetscObject)l)->prefix, opt, b, &m, NULL));
  n = PetscMax(n, m);
  if (n != 1 && n != nd) {
    PetscCall(PetscStrncpy(badopt, opt + 1, 32));
    *badcount = n;
    PetscFunctionReturn(0);
  }
  for (PetscInt i = 0; i < nd; i++) v[i] = n == 1 ? a[0] : a[nd - 1 - i];
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerSetFromOptions_Conv(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  d->badcount = 0;
  PetscOptionsHeadBegin(PetscOptionsObject, d->nd == 2 ? "Conv2d layer options" : "Conv3d layer options");
  PetscCall(PetscOptionsInt("-filters", "Number of output channels", "NNLayerConvSetFilters", d->filters, &d->filters, NULL));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-kernel", "Kernel size: one value or one per axis ((depth,)height,width)", "NNLayerConvSetKernelSize", d->k, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-stride", "Stride: one value or one per axis", "NNLayerConvSetStride", d->s, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-padding", "Zero padding on each side, one value or one per axis (default dilation*(kernel/2); -1: default)", "NNLayerConvSetPadding", d->pad, d->badopt, &d->badcount));
  PetscCall(NNConvOptionsTuple(l, PetscOptionsObject, d->nd, "-dilation", "Spacing of the kernel taps: one value or one per axis", "NNLayerConvSetDilation", d->dil, d->badopt, &d->badcount));
  PetscCall(PetscOptionsInt("-groups", "Groups: in/groups input channels feed out/groups filters", "NNLayerConvSetGroups", d->groups, &d->groups, NULL));
  PetscCall(PetscOptionsBool("-bias", "Add a bias", "NNLayerConvSetBias", d->bias, &d->bias, NULL));
  PetscCall(PetscOptionsBool("-periodic", "Periodic padding (wrap around) instead of zeros: stride 1, odd kernel, padding dilation*(kernel-1)/2", "NNLayerConvSetPeriodic", d->periodic, &d->periodic, NULL));
  PetscCall(PetscOptionsInt("-threads", "Threads splitting the pixels or batch slots (0: OpenBLAS's thread count; 1: OpenBLAS threads each GEMM)", "NNLayerConvSetThreads", d->threads, &d->threads, NULL));
  PetscCall(PetscOptionsInt("-winograd", "Winograd output tile per axis (-1: automatic, 0: im2col + GEMM)", "NNLayerConvSetWinograd", d->winograd, &d->winograd, NULL));
  PetscCall(PetscOptionsInt("-tile_rows", "Rows (pixels or tiles times batch slots) of a GEMM block (0: automatic)", "NNLayerConvSetTileRows", d->tilerows, &d->tilerows, NULL));
  {
    PetscInt  alg = NNConvGetDeviceAlgorithm(l);
    PetscBool set;
    PetscCall(PetscOptionsEList("-device_algorithm", "Convolution algorithm on the device (-nn_device cuda): gemm (im2col kernels and cuBLAS) or cudnn (conv2d, a PetNN built with cuDNN)", "NNLAYERCONV2D", NNConvDeviceAlgorithms, 2, NNConvDeviceAlgorithms[alg], &alg, &set));
    if (set) d->devalg = alg;
  }
  PetscOptionsHeadEnd();
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

const char *const NNConvDeviceAlgorithms[] = {"cudnn", "gemm"};

/* -device_algorithm, or its default: the GEMM passes (im2col kernels and cuBLAS). They run every convolution (periodic
   padding, split activations, partitions, conv3d), and on an H200 they trained the Fashion-MNIST CNN faster than the
   cuDNN passes (bench/RESULTS.md, stop 32: 1.02 vs 1.38 s an epoch in single, 1.08 vs 1.81 s in double; the ODE-Net
   3.38 vs 4.98 s and 3.42 vs 6.43 s): cuDNN's legacy API with FMA math and a deterministic algorithm, and the NCHW
   permutations around it, cost more than they save at these sizes. cuDNN stays a choice for conv2d (-device_algorithm
   cudnn in a PetNN built with cuDNN). */
NNConvDeviceAlgorithm NNConvGetDeviceAlgorithm(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  if (d->devalg >= 0) return (NNConvDeviceAlgorithm)d->devalg;
  return NN_CONV_DEVICE_GEMM;
}

PetscErrorCode NNLayerView_Conv(NNLayer l, PetscViewer v)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  char          k[64], s[64], p[64], dl[64];
  PetscInt      pad[3];

  PetscFunctionBegin;
  for (PetscInt a = 0; a < 3; a++) pad[a] = d->pad[a] < 0 ? d->dil[a] * (d->k[a] / 2) : d->pad[a];
  PetscCall(NNConvTupleString(d->nd, d->k, sizeof(k), k));
  PetscCall(NNConvTupleString(d->nd, d->s, sizeof(s), s));
  PetscCall(NNConvTupleString(d->nd, pad, sizeof(p), p));
  PetscCall(NNConvTupleString(d->nd, d->dil, sizeof(dl), dl));
  PetscCall(PetscViewerASCIIPrintf(v, "%" PetscInt_FMT " filters, kernel %s, stride %s, %s padding %s, dilation %s, groups %" PetscInt_FMT ", bias %s\n", d->filters, k, s, d->periodic ? "periodic" : "zero", p, dl, d->groups, d->bias ? "yes" : "no"));
  if (d->h.daout && d->g.alg == NN_CONV_WINOGRAD) {
    PetscInt mt[3], rt[3];
    for (PetscInt a = 0; a < 3; a++) {
      mt[a] = d->g.w.m[a];
      rt[a] = d->g.w.r[a];
    }
    PetscCall(NNConvTupleString(d->nd, mt, sizeof(k), k));
    PetscCall(NNConvTupleString(d->nd, rt, sizeof(s), s));
    PetscCall(PetscViewerASCIIPrintf(v, "halo %" PetscInt_FMT ", Winograd F(%s,%s): %" PetscInt_FMT " tiles, %" PetscInt_FMT " GEMMs of depth %" PetscInt_FMT " per block of %" PetscInt_FMT " rows, %" PetscInt_FMT " thread%s\n", d->h.halo, k, s, d->g.w.ntiles, d->g.w.npos * d->g.G, d->g.Cg, d->g.rows, d->nthreads, d->nthreads > 1 ? "s" : ""));
  } else if (d->h.daout) PetscCall(PetscViewerASCIIPrintf(v, "halo %" PetscInt_FMT ", im2col + GEMM of depth %" PetscInt_FMT "%s on blocks of about %" PetscInt_FMT " rows, %" PetscInt_FMT " thread%s\n", d->h.halo, d->g.K, d->g.bias ? " (+1: the bias)" : "", d->g.rows, d->nthreads, d->nthreads > 1 ? "s" : ""));
  if (d->devalg >= 0) PetscCall(PetscViewerASCIIPrintf(v, "device algorithm %s (-nn_device cuda)\n", NNConvDeviceAlgorithms[d->devalg]));
  if (l->part.type != NN_PARTITION_REPLICATE) PetscCall(NNConvPartView(l, v));
  PetscFunctionReturn(0);
}

#define NN_CONV_SETTER(Name, T, field) \
  static PetscErrorCode NNLayerConvSet##Name##_Conv(NNLayer l, T v) \
  { \
    PetscFunctionBegin; \
    ((NNLayer_Conv *)l->data)->field = v; \
    l->setupcalled                   = PETSC_FALSE; \
    PetscFunctionReturn(0); \
  }
#define NN_CONV_SETTER_AXES(Name, field) \
  static PetscErrorCode NNLayerConvSet##Name##_Conv(NNLayer l, PetscInt v) \
  { \
    PetscFunctionBegin; \
    for (PetscInt a = 0; a < 3; a++) ((NNLayer_Conv *)l->data)->field[a] = v; \
    l->setupcalled = PETSC_FALSE; \
    PetscFunctionReturn(0); \
  }
NN_CONV_SETTER(Filters, PetscInt, filters)
NN_CONV_SETTER(Groups, PetscInt, groups)
NN_CONV_SETTER(Bias, PetscBool, bias)
NN_CONV_SETTER(Periodic, PetscBool, periodic)
NN_CONV_SETTER_AXES(KernelSize, k)
NN_CONV_SETTER_AXES(Stride, s)
NN_CONV_SETTER_AXES(Padding, pad)
NN_CONV_SETTER_AXES(Dilation, dil)
NN_CONV_SETTER(Threads, PetscInt, threads)
NN_CONV_SETTER(Winograd, PetscInt, winograd)
NN_CONV_SETTER(TileRows, PetscInt, tilerows)

#define NN_CONV_GETTER(Name, field) \
  static PetscErrorCode NNLayerConvGet##Name##_Conv(NNLayer l, PetscInt *v) \
  { \
    PetscFunctionBegin; \
    *v = ((NNLayer_Conv *)l->data)->field; \
    PetscFunctionReturn(0); \
  }
NN_CONV_GETTER(Threads, threads)
NN_CONV_GETTER(Winograd, winograd)
NN_CONV_GETTER(TileRows, tilerows)

/* the type-specific functions the public NNLayerConvSet/Get*() find with PetscTryMethod()/PetscUseMethod() */
static const NNLayerFunction NNConvFunctions[] = {
  {"NNLayerConvSetFilters_C", (PetscVoidFunction)NNLayerConvSetFilters_Conv},
  {"NNLayerConvSetKernelSize_C", (PetscVoidFunction)NNLayerConvSetKernelSize_Conv},
  {"NNLayerConvSetStride_C", (PetscVoidFunction)NNLayerConvSetStride_Conv},
  {"NNLayerConvSetPadding_C", (PetscVoidFunction)NNLayerConvSetPadding_Conv},
  {"NNLayerConvSetBias_C", (PetscVoidFunction)NNLayerConvSetBias_Conv},
  {"NNLayerConvSetPeriodic_C", (PetscVoidFunction)NNLayerConvSetPeriodic_Conv},
  {"NNLayerConvSetDilation_C", (PetscVoidFunction)NNLayerConvSetDilation_Conv},
  {"NNLayerConvSetGroups_C", (PetscVoidFunction)NNLayerConvSetGroups_Conv},
  {"NNLayerConvSetThreads_C", (PetscVoidFunction)NNLayerConvSetThreads_Conv},
  {"NNLayerConvGetThreads_C", (PetscVoidFunction)NNLayerConvGetThreads_Conv},
  {"NNLayerConvSetWinograd_C", (PetscVoidFunction)NNLayerConvSetWinograd_Conv},
  {"NNLayerConvGetWinograd_C", (PetscVoidFunction)NNLayerConvGetWinograd_Conv},
  {"NNLayerConvSetTileRows_C", (PetscVoidFunction)NNLayerConvSetTileRows_Conv},
  {"NNLayerConvGetTileRows_C", (PetscVoidFunction)NNLayerConvGetTileRows_Conv},
};

PetscErrorCode NNConvComposeFunctions(NNLayer l, PetscBool add)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNConvFunctions), NNConvFunctions, add));
  PetscFunctionReturn(0);
}

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

/*@
   NNLayerConvSetThreads - sets the number of threads that split a convolution's output pixels (im2col) or tiles (Winograd) and batch slots

   Logically Collective

   Input Parameters:
+  l - the layer (conv2d or conv3d; a no-op on other types)
-  t - threads (0, the default: OpenBLAS's thread count; 1: one thread, OpenBLAS threads each GEMM)

   Options Database Key:
.  -<prefix>threads <t> - threads splitting a pass

   Level: advanced

.seealso: `NNLayerConvGetThreads()`, `NNLAYERCONV2D`, `NNLAYERCONV3D`
@*/
PetscErrorCode NNLayerConvSetThreads(NNLayer l, PetscInt t)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscValidLogicalCollectiveInt(l, t, 2);
  PetscTryMethod(l, "NNLayerConvSetThreads_C", (NNLayer, PetscInt), (l, t));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvGetThreads - gets the number of threads that split a convolution's output pixels (im2col) or tiles (Winograd) and batch slots

   Not Collective

   Input Parameter:
.  l - the layer (conv2d or conv3d)

   Output Parameter:
.  t - threads (0, the default: OpenBLAS's thread count; 1: one thread, OpenBLAS threads each GEMM)

   Level: advanced

.seealso: `NNLayerConvSetThreads()`, `NNLAYERCONV2D`, `NNLAYERCONV3D`
@*/
PetscErrorCode NNLayerConvGetThreads(NNLayer l, PetscInt *t)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(t, 2);
  PetscUseMethod(l, "NNLayerConvGetThreads_C", (NNLayer, PetscInt *), (l, t));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetWinograd - sets the algorithm of a convolution layer: the Winograd output tile per axis, or im2col + GEMM

   Logically Collective

   Input Parameters:
+  l - the layer (conv2d or conv3d; a no-op on other types)
-  m - -1 (the default): chosen from the shape; 0: im2col + GEMM; m > 0: Winograd F(m,r), which needs stride 1, dilation 1 and kernels of at most 7

   Options Database Key:
.  -<prefix>winograd <m> - Winograd output tile

   Level: advanced

.seealso: `NNLayerConvGetWinograd()`, `NNLAYERCONV2D`, `NNLAYERCONV3D`
@*/
PetscErrorCode NNLayerConvSetWinograd(NNLayer l, PetscInt m)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscValidLogicalCollectiveInt(l, m, 2);
  PetscTryMethod(l, "NNLayerConvSetWinograd_C", (NNLayer, PetscInt), (l, m));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvGetWinograd - gets the algorithm of a convolution layer: the Winograd output tile per axis, or im2col + GEMM

   Not Collective

   Input Parameter:
.  l - the layer (conv2d or conv3d)

   Output Parameter:
.  m - -1 (the default): chosen from the shape; 0: im2col + GEMM; m > 0: Winograd F(m,r), which needs stride 1, dilation 1 and kernels of at most 7

   Level: advanced

.seealso: `NNLayerConvSetWinograd()`, `NNLAYERCONV2D`, `NNLAYERCONV3D`
@*/
PetscErrorCode NNLayerConvGetWinograd(NNLayer l, PetscInt *m)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(m, 2);
  PetscUseMethod(l, "NNLayerConvGetWinograd_C", (NNLayer, PetscInt *), (l, m));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvSetTileRows - sets the rows (output pixels or tiles times batch slots) of one GEMM block of a convolution layer

   Logically Collective

   Input Parameters:
+  l - the layer (conv2d or conv3d; a no-op on other types)
-  r - rows of a block (0, the default: chosen by the algorithm)

   Options Database Key:
.  -<prefix>tile_rows <r> - rows of a GEMM block

   Level: advanced

.seealso: `NNLayerConvGetTileRows()`, `NNLAYERCONV2D`, `NNLAYERCONV3D`
@*/
PetscErrorCode NNLayerConvSetTileRows(NNLayer l, PetscInt r)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscValidLogicalCollectiveInt(l, r, 2);
  PetscTryMethod(l, "NNLayerConvSetTileRows_C", (NNLayer, PetscInt), (l, r));
  PetscFunctionReturn(0);
}

/*@
   NNLayerConvGetTileRows - gets the rows (output pixels or tiles times batch slots) of one GEMM block of a convolution layer

   Not Collective

   Input Parameter:
.  l - the layer (conv2d or conv3d)

   Output Parameter:
.  r - rows of a block (0, the default: chosen by the algorithm)

   Level: advanced

.seealso: `NNLayerConvSetTileRows()`, `NNLAYERCONV2D`, `NNLAYERCONV3D`
@*/
PetscErrorCode NNLayerConvGetTileRows(NNLayer l, PetscInt *r)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(r, 2);
  PetscUseMethod(l, "NNLayerConvGetTileRows_C", (NNLayer, PetscInt *), (l, r));
  PetscFunctionReturn(0);
}
