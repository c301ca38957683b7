/*
   Options, view and setters of the pooling layers (maxpool2d/3d, avgpool2d/3d). The public
   NNLayerPoolSet*() dispatch with PetscTryMethod() to the functions composed here, so they are
   no-ops on layers of other types.
*/
#include "pool.h"

PetscErrorCode NNLayerSetFromOptions_Pool(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Pooling layer options");
  PetscCall(PetscOptionsInt("-kernel", "Window size along each axis", "NNLayerPoolSetKernelSize", d->k, &d->k, NULL));
  PetscCall(PetscOptionsInt("-stride", "Stride (0: the kernel size)", "NNLayerPoolSetStride", d->stride, &d->stride, NULL));
  PetscCall(PetscOptionsInt("-padding", "Implicit padding on each side (-inf for max, zeros for average pooling), at most kernel/2", "NNLayerPoolSetPadding", d->pad, &d->pad, NULL));
  PetscOptionsHeadEnd();
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerView_Pool(NNLayer l, PetscViewer v)
{
  NNLayer_Pool *d = (NNLayer_Pool *)l->data;
  char          halo[64] = "";

  PetscFunctionBegin;
  if (d->h.daout) PetscCall(PetscSNPrintf(halo, sizeof(halo), ", halo %" PetscInt_FMT "%s", d->h.halo, d->h.halo ? " (halo exchange)" : " (no communication)"));
  PetscCall(PetscViewerASCIIPrintf(v, "%s pooling, kernel %" PetscInt_FMT ", stride %" PetscInt_FMT ", %s padding %" PetscInt_FMT "%s\n", d->max ? "max" : "average", d->k, d->stride > 0 ? d->stride : d->k, d->max ? "-inf" : "zero", d->pad, halo));
  PetscFunctionReturn(0);
}

#define NN_POOL_SETTER(Name, field) \
  static PetscErrorCode NNLayerPoolSet##Name##_Pool(NNLayer l, PetscInt v) \
  { \
    PetscFunctionBegin; \
    ((NNLayer_Pool *)l->data)->field = v; \
    l->setupcalled                   = PETSC_FALSE; \
    PetscFunctionReturn(0); \
  }
NN_POOL_SETTER(KernelSize, k)
NN_POOL_SETTER(Stride, stride)
NN_POOL_SETTER(Padding, pad)

#define NN_POOL_GETTER(Name, field) \
  static PetscErrorCode NNLayerPoolGet##Name##_Pool(NNLayer l, PetscInt *v) \
  { \
    PetscFunctionBegin; \
    *v = ((NNLayer_Pool *)l->data)->field; \
    PetscFunctionReturn(0); \
  }
NN_POOL_GETTER(KernelSize, k)
NN_POOL_GETTER(Stride, stride)
NN_POOL_GETTER(Padding, pad)

static const NNLayerFunction NNPoolFunctions[] = {
  {"NNLayerPoolSetKernelSize_C", (PetscVoidFunction)NNLayerPoolSetKernelSize_Pool},
  {"NNLayerPoolSetStride_C",     (PetscVoidFunction)NNLayerPoolSetStride_Pool    },
  {"NNLayerPoolSetPadding_C",    (PetscVoidFunction)NNLayerPoolSetPadding_Pool   },
  {"NNLayerPoolGetKernelSize_C", (PetscVoidFunction)NNLayerPoolGetKernelSize_Pool},
  {"NNLayerPoolGetStride_C",     (PetscVoidFunction)NNLayerPoolGetStride_Pool    },
  {"NNLayerPoolGetPadding_C",    (PetscVoidFunction)NNLayerPoolGetPadding_Pool   },
};

PetscErrorCode NNPoolComposeFunctions(NNLayer l, PetscBool add)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNPoolFunctions), NNPoolFunctions, add));
  PetscFunctionReturn(0);
}

/*@
   NNLayerPoolSetKernelSize - sets the window size of a pooling layer (maxpool2d/3d, avgpool2d/3d)

   Logically Collective

   Input Parameters:
+  l - the layer
-  k - window size along each axis (default 2)

   Options Database Key:
.  -<prefix>kernel <k> - window size

   Level: beginner

.seealso: `NNLAYERMAXPOOL2D`, `NNLayerPoolSetStride()`, `NNLayerPoolSetPadding()`
@*/
PetscErrorCode NNLayerPoolSetKernelSize(NNLayer l, PetscInt k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerPoolSetKernelSize_C", (NNLayer, PetscInt), (l, k));
  PetscFunctionReturn(0);
}

/*@
   NNLayerPoolSetStride - sets the stride of a pooling layer

   Logically Collective

   Input Parameters:
+  l - the layer
-  s - stride along each axis (0, the default: the kernel size)

   Options Database Key:
.  -<prefix>stride <s> - stride

   Level: beginner

.seealso: `NNLAYERMAXPOOL2D`, `NNLayerPoolSetKernelSize()`
@*/
PetscErrorCode NNLayerPoolSetStride(NNLayer l, PetscInt s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerPoolSetStride_C", (NNLayer, PetscInt), (l, s));
  PetscFunctionReturn(0);
}

/*@
   NNLayerPoolSetPadding - sets the implicit padding of a pooling layer (-inf for max pooling, zeros for average pooling)

   Logically Collective

   Input Parameters:
+  l - the layer
-  p - padding on each side, 0 <= p <= kernel/2 (default 0)

   Options Database Key:
.  -<prefix>padding <p> - padding

   Level: beginner

.seealso: `NNLAYERMAXPOOL2D`, `NNLayerPoolSetKernelSize()`
@*/
PetscErrorCode NNLayerPoolSetPadding(NNLayer l, PetscInt p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerPoolSetPadding_C", (NNLayer, PetscInt), (l, p));
  PetscFunctionReturn(0);
}

/*@
   NNLayerPoolGetKernelSize - gets the window size of a pooling layer

   Not Collective

   Input Parameter:
.  l - the layer (maxpool2d/3d, avgpool2d/3d)

   Output Parameter:
.  k - the window size

   Level: beginner

.seealso: `NNLayerPoolSetKernelSize()`
@*/
PetscErrorCode NNLayerPoolGetKernelSize(NNLayer l, PetscInt *k)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(k, 2);
  PetscUseMethod(l, "NNLayerPoolGetKernelSize_C", (NNLayer, PetscInt *), (l, k));
  PetscFunctionReturn(0);
}

/*@
   NNLayerPoolGetStride - gets the stride of a pooling layer (0: the kernel size)

   Not Collective

   Input Parameter:
.  l - the layer (maxpool2d/3d, avgpool2d/3d)

   Output Parameter:
.  s - the stride (0: the kernel size)

   Level: beginner

.seealso: `NNLayerPoolSetStride()`
@*/
PetscErrorCode NNLayerPoolGetStride(NNLayer l, PetscInt *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(s, 2);
  PetscUseMethod(l, "NNLayerPoolGetStride_C", (NNLayer, PetscInt *), (l, s));
  PetscFunctionReturn(0);
}

/*@
   NNLayerPoolGetPadding - gets the implicit padding of a pooling layer

   Not Collective

   Input Parameter:
.  l - the layer (maxpool2d/3d, avgpool2d/3d)

   Output Parameter:
.  p - the implicit padding

   Level: beginner

.seealso: `NNLayerPoolSetPadding()`
@*/
PetscErrorCode NNLayerPoolGetPadding(NNLayer l, PetscInt *p)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(p, 2);
  PetscUseMethod(l, "NNLayerPoolGetPadding_C", (NNLayer, PetscInt *), (l, p));
  PetscFunctionReturn(0);
}
