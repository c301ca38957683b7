/*
   Options, view and setters of the spectral_conv layers. The public NNLayerSpectralConvSet*() dispatch
   with PetscTryMethod() (a no-op on layers of other types) to the functions composed here.
*/
#include "spectralconv.h"

static const char *const NNSpectralPlanTypes[] = {"estimate", "measure", "NNSpectralPlan", "NN_SPECTRAL_PLAN_", NULL};

PetscErrorCode NNLayerSetFromOptions_SpectralConv(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  PetscInt              m[4], n = 4, plan = d->plan;
  PetscBool             set;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, d->nd == 2 ? "Spectral conv2d (Fourier neural operator) layer options" : "Spectral conv3d (Fourier neural operator) layer options");
  PetscCall(PetscOptionsInt("-filters", "Number of output channels", "NNLayerSpectralConvSetFilters", d->filters, &d->filters, NULL));
  for (PetscInt a = 0; a < d->nd; a++) m[a] = d->modes[a];
  PetscCall(PetscOptionsIntArray("-modes", d->nd == 2 ? "Fourier modes kept: m1 (along H, <= H/2), m2 (along W, <= W/2+1)" : "Fourier modes kept: m1 (D, <= D/2), m2 (H, <= H/2), m3 (W, <= W/2+1)", "NNLayerSpectralConvSetModes", m, &n, &set));
  if (set) { /* the count is checked at set-up: an error inside the options block would leak it */
    d->nmodes = n;
    for (PetscInt a = 0; a < PetscMin(n, d->nd); a++) d->modes[a] = m[a];
  }
  PetscCall(PetscOptionsBool("-linear", "Add the pointwise path W x + b (the FNO block's 1x1 convolution, tensors w.weight, w.bias)", "NNLayerSpectralConvSetLinear", d->linear, &d->linear, NULL));
  PetscCall(PetscOptionsEList("-fftw_plan", "FFTW planning effort at set-up (measure times trial transforms)", "NNLAYERSPECTRALCONV2D", NNSpectralPlanTypes, 2, NNSpectralPlanTypes[plan], &plan, NULL));
  d->plan = plan;
  PetscCall(PetscOptionsBool("-fftw_transposed", "Keep the spectrum in FFTW's transposed layout between r2c and c2r (one global transpose per transform instead of two)", "NNLAYERSPECTRALCONV2D", d->transposed, &d->transposed, NULL));
  PetscOptionsHeadEnd();
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerView_SpectralConv(NNLayer l, PetscViewer v)
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;
  char                  m[64];

  PetscFunctionBegin;
  if (d->nd == 2) PetscCall(PetscSNPrintf(m, sizeof(m), "%" PetscInt_FMT " x %" PetscInt_FMT, d->modes[0], d->modes[1]));
  else PetscCall(PetscSNPrintf(m, sizeof(m), "%" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT, d->modes[0], d->modes[1], d->modes[2]));
  PetscCall(PetscViewerASCIIPrintf(v, "%" PetscInt_FMT " -> %" PetscInt_FMT " channels, modes %s in each of %d corners, pointwise linear path %s\n", l->setupcalled ? l->inshape.dim[0] : 0, d->filters, m, d->nd == 2 ? 2 : 4, d->linear ? "yes (w.weight, w.bias)" : "no"));
#if defined(PETNN_HAVE_FFTW)
  if (d->tr.fft) PetscCall(NNSpectralFFTView(d->tr.fft, v));
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSpectralConvSetFilters_SpectralConv(NNLayer l, PetscInt n)
{
  PetscFunctionBegin;
  ((NNLayer_SpectralConv *)l->data)->filters = n;
  l->setupcalled                             = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSpectralConvSetModes_SpectralConv(NNLayer l, PetscInt n, const PetscInt m[])
{
  NNLayer_SpectralConv *d = (NNLayer_SpectralConv *)l->data;

  PetscFunctionBegin;
  d->nmodes = n;
  for (PetscInt a = 0; a < PetscMin(n, d->nd); a++) d->modes[a] = m[a];
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSpectralConvSetLinear_SpectralConv(NNLayer l, PetscBool flg)
{
  PetscFunctionBegin;
  ((NNLayer_SpectralConv *)l->data)->linear = flg;
  l->setupcalled                            = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNSpectralConvFunctions[] = {
  {"NNLayerSpectralConvSetFilters_C", (PetscVoidFunction)NNLayerSpectralConvSetFilters_SpectralConv},
  {"NNLayerSpectralConvSetModes_C",   (PetscVoidFunction)NNLayerSpectralConvSetModes_SpectralConv  },
  {"NNLayerSpectralConvSetLinear_C",  (PetscVoidFunction)NNLayerSpectralConvSetLinear_SpectralConv },
};

PetscErrorCode NNSpectralConvComposeFunctions(NNLayer l, PetscBool compose)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNSpectralConvFunctions), NNSpectralConvFunctions, compose));
  PetscFunctionReturn(0);
}

/*@
   NNLayerSpectralConvSetFilters - sets the output channels of a spectral_conv2d/3d layer

   Logically Collective

   Input Parameters:
+  l - the layer
-  n - output channels C_out

   Options Database Key:
.  -<prefix>filters <n> - output channels

   Level: intermediate

.seealso: `NNLAYERSPECTRALCONV2D`, `NNLayerSpectralConvSetModes()`
@*/
PetscErrorCode NNLayerSpectralConvSetFilters(NNLayer l, PetscInt n)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerSpectralConvSetFilters_C", (NNLayer, PetscInt), (l, n));
  PetscFunctionReturn(0);
}

/*@
   NNLayerSpectralConvSetModes - sets the Fourier modes a spectral_conv2d/3d layer keeps

   Logically Collective

   Input Parameters:
+  l - the layer
.  n - number of values: 2 for spectral_conv2d, 3 for spectral_conv3d (checked at set-up)
-  m - the modes in PyTorch's order: m1 (along H, or D in 3-d), m2, (m3); the first axes need
       m <= N/2 (two corners that do not overlap), the last m <= N/2+1 (the half spectrum)

   Options Database Key:
.  -<prefix>modes <m1,m2[,m3]> - the modes

   Level: intermediate

.seealso: `NNLAYERSPECTRALCONV2D`, `NNLAYERSPECTRALCONV3D`
@*/
PetscErrorCode NNLayerSpectralConvSetModes(NNLayer l, PetscInt n, const PetscInt m[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  if (n) PetscAssertPointer(m, 3);
  PetscTryMethod(l, "NNLayerSpectralConvSetModes_C", (NNLayer, PetscInt, const PetscInt[]), (l, n, m));
  PetscFunctionReturn(0);
}

/*@
   NNLayerSpectralConvSetLinear - adds or removes the pointwise path W x + b of a spectral_conv2d/3d layer

   Logically Collective

   Input Parameters:
+  l - the layer
-  flg - PETSC_TRUE (default): y = spectral(x) + W x + b, tensors w.weight [C_out, C_in, 1, 1(, 1)] and w.bias [C_out]

   Options Database Key:
.  -<prefix>linear <bool> - the pointwise path

   Level: intermediate

.seealso: `NNLAYERSPECTRALCONV2D`
@*/
PetscErrorCode NNLayerSpectralConvSetLinear(NNLayer l, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerSpectralConvSetLinear_C", (NNLayer, PetscBool), (l, flg));
  PetscFunctionReturn(0);
}
