/*
   Nearest-neighbour upsampling by an integer factor on the spatial (DMDA) layout
   (torch.nn.Upsample(scale_factor=s, mode='nearest'), 2-d and 3-d samples); -mode bilinear
   (trilinear on 3-d samples) is in layers/spatial/upsample_linear.c and shares the output DMDA.

   Output pixel o copies input pixel floor(o/s) along each axis. The output DMDA has the input's
   rank grid with every ownership range multiplied by s, so each rank's outputs read only its own
   inputs: no halo, no communication. Backward: each input pixel receives the sum of the gradients
   of its s^d copies. Both passes work on contiguous [pixel][s*C] runs of nbatch*C entries.

   Passes: double on the CPU, single (-nn_precision single: the same loops, upsample_passes.h, compiled for float
   arrays; the linear mode's in upsample_linear_passes.h) and the device's (upsample_cuda.c).
*/
#include "upsample.h"
#include <petnn/private/deviceimpl.h>

static const char *const NNUpsampleModes[] = {"nearest", "bilinear", "trilinear", "linear"}; /* the last three are the same */

typedef struct {
  PetscInt D;            /* entries per pixel (nbatch * C) */
  PetscInt is[3], im[3]; /* owned input corners (x, y, z) */
  PetscInt s[3];         /* factor along each axis (1 for z in 2-d) */
} UpGeom;

static PetscErrorCode NNLayerSetUp_Upsample(NNLayer l)
{
  NNLayer_Upsample *d    = (NNLayer_Upsample *)l->data;
  MPI_Comm          comm = PetscObjectComm((PetscObject)l);
  const char       *pre  = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
  PetscInt          nd   = l->inshape.ndim - 1;

  PetscFunctionBegin;
  if (nd != 2 && nd != 3) {
    char sh[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(sh), sh));
    SETERRQ(comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs spatial (C,H,W) or (C,D,H,W) samples but %s produces shape %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->inputname ? l->inputname : "its input", sh);
  }
  PetscCheck(!d->badmode[0], comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "Layer %s (%s): unknown -%smode %s; use nearest or bilinear (trilinear and linear are the same)", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, d->badmode);
  PetscCheck(d->scale > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%sscale %" PetscInt_FMT " must be a positive integer", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, d->scale);
#if defined(PETNN_HAVE_CUDA)
  l->dev.split = PETSC_TRUE; /* each rank upsamples its own box, the linear modes from a halo of 1 (layers/spatial/upsample_cuda.c) */
#endif
  l->outshape = l->inshape;
  for (PetscInt a = 1; a <= nd; a++) {
    PetscCheck(l->inshape.dim[a] <= PETSC_MAX_INT / d->scale, comm, PETSC_ERR_ARG_OUTOFRANGE, "Layer %s (%s): -%sscale %" PetscInt_FMT " makes the output extent overflow", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, d->scale);
    l->outshape.dim[a] = l->inshape.dim[a] * d->scale;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Upsample(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(DMDestroy(&((NNLayer_Upsample *)l->data)->daout));
  PetscCall(NNUpsampleLinearReset(&((NNLayer_Upsample *)l->data)->lin));
  PetscFunctionReturn(0);
}

/* the output DMDA: the input's rank grid with every ownership range times the scale */
static PetscErrorCode NNLayerCreateOutputVec_Upsample(NNLayer l, Vec *y)
{
  NNLayer_Upsample *d = (NNLayer_Upsample *)l->data;
  DM                dain;
  PetscInt          dim, M[3], nr[3], dof, *lo[3] = {NULL, NULL, NULL};
  const PetscInt   *li[3];

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(DMDestroy(&d->daout));
  PetscCall(DMDAGetInfo(dain, &dim, &M[0], &M[1], &M[2], &nr[0], &nr[1], &nr[2], &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetOwnershipRanges(dain, &li[0], &li[1], &li[2]));
  for (PetscInt a = 0; a < dim; a++) {
    PetscCall(PetscMalloc1(nr[a], &lo[a]));
    for (PetscInt r = 0; r < nr[a]; r++) lo[a][r] = li[a][r] * d->scale;
  }
  if (dim == 2) PetscCall(DMDACreate2d(PetscObjectComm((PetscObject)l), DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0] * d->scale, M[1] * d->scale, nr[0], nr[1], dof, 0, lo[0], lo[1], &d->daout));
  else PetscCall(DMDACreate3d(PetscObjectComm((PetscObject)l), DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0] * d->scale, M[1] * d->scale, M[2] * d->scale, nr[0], nr[1], nr[2], dof, 0, lo[0], lo[1], lo[2], &d->daout));
  PetscCall(DMSetUp(d->daout));
  for (PetscInt a = 0; a < dim; a++) PetscCall(PetscFree(lo[a]));
  PetscCall(DMCreateGlobalVector(d->daout, y));
  if (d->mode == NN_UPSAMPLE_LINEAR) PetscCall(NNUpsampleLinearSetUp(l, d->daout, d->scale, d->align, &d->lin));
  else PetscCall(NNUpsampleLinearReset(&d->lin));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNUpsampleGeometry(NNLayer l, UpGeom *g)
{
  NNLayer_Upsample *d = (NNLayer_Upsample *)l->data;
  DM                dain;
  PetscInt          nd = l->inshape.ndim - 1;

  PetscFunctionBegin;
  PetscCheck(d->daout, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(DMDAGetCorners(dain, &g->is[0], &g->is[1], &g->is[2], &g->im[0], &g->im[1], &g->im[2]));
  if (nd == 2) {
    g->is[2] = 0;
    g->im[2] = 1;
  }
  for (PetscInt a = 0; a < 3; a++) g->s[a] = a < nd ? d->scale : 1;
  g->D = l->nbatch * l->inshape.dim[0];
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "upsample_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "upsample_passes.h"
#include <petnn/private/nnrealundef.h>

static PetscErrorCode NNLayerForwardVec_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, Vec x, Vec y)
{
  UpGeom             g;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(NNUpsampleGeometry(l, &g));
  if (((NNLayer_Upsample *)l->data)->mode == NN_UPSAMPLE_LINEAR) {
    PetscCall(NNUpsampleLinearForward(l, &((NNLayer_Upsample *)l->data)->lin, x, y));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNUpsampleNearestForward(&g, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, Vec x PETSC_UNUSED, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  UpGeom             g;
  const PetscScalar *dya;
  PetscScalar       *dxa;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNUpsampleGeometry(l, &g));
  if (((NNLayer_Upsample *)l->data)->mode == NN_UPSAMPLE_LINEAR) {
    PetscCall(NNUpsampleLinearBackward(l, &((NNLayer_Upsample *)l->data)->lin, dy, dx));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(dy, &dya));
  PetscCall(VecGetArrayWrite(dx, &dxa));
  PetscCall(NNUpsampleNearestBackward(&g, dya, dxa));
  PetscCall(VecRestoreArrayWrite(dx, &dxa));
  PetscCall(VecRestoreArrayRead(dy, &dya));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): the same loops on float arrays in the DMDAs' global layouts; the linear
   mode exchanges its halo in float (upsample_linear.c) */
static PetscErrorCode NNLayerForwardSingle_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, const float *x, float *y)
{
  UpGeom g;

  PetscFunctionBegin;
  PetscCall(NNUpsampleGeometry(l, &g));
  if (((NNLayer_Upsample *)l->data)->mode == NN_UPSAMPLE_LINEAR) PetscCall(NNUpsampleLinearForwardSingle(l, &((NNLayer_Upsample *)l->data)->lin, x, y));
  else PetscCall(NNUpsampleNearestForwardSingle(&g, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  UpGeom g;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNUpsampleGeometry(l, &g));
  if (((NNLayer_Upsample *)l->data)->mode == NN_UPSAMPLE_LINEAR) PetscCall(NNUpsampleLinearBackwardSingle(l, &((NNLayer_Upsample *)l->data)->lin, dy, dx));
  else PetscCall(NNUpsampleNearestBackwardSingle(&g, dy, dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Upsample(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNLayer_Upsample *d = (NNLayer_Upsample *)l->data;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Upsample layer options");
  PetscCall(PetscOptionsInt("-scale", "Integer upsampling factor along each spatial axis", "NNLayerUpsampleSetScale", d->scale, &d->scale, NULL));
  { /* a string, checked at set-up: PETSc's list options leak on an unknown value inside the options block */
    char      mode[sizeof(d->badmode)];
    PetscBool set;
    PetscCall(PetscStrncpy(mode, NNUpsampleModes[d->mode == NN_UPSAMPLE_NEAREST ? 0 : 1], sizeof(mode)));
    PetscCall(PetscOptionsString("-mode", "Interpolation: nearest, or bilinear (trilinear on 3-d samples; trilinear and linear are the same)", "NNLayerUpsampleSetMode", mode, mode, sizeof(mode), &set));
    d->badmode[0] = 0;
    if (set) {
      PetscInt m = -1;
      for (PetscInt i = 0; i < 4; i++) {
        PetscBool same;
        PetscCall(PetscStrcmp(mode, NNUpsampleModes[i], &same));
        if (same) m = i;
      }
      if (m < 0) PetscCall(PetscStrncpy(d->badmode, mode, sizeof(d->badmode)));
      else d->mode = m ? NN_UPSAMPLE_LINEAR : NN_UPSAMPLE_NEAREST;
    }
  }
  PetscCall(PetscOptionsBool("-align_corners", "Bilinear mode: align the corner pixels of input and output (PyTorch's align_corners)", "NNLayerUpsampleSetAlignCorners", d->align, &d->align, NULL));
  PetscOptionsHeadEnd();
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Upsample(NNLayer l, PetscViewer v)
{
  NNLayer_Upsample *d = (NNLayer_Upsample *)l->data;

  PetscFunctionBegin;
  if (d->mode == NN_UPSAMPLE_LINEAR) PetscCall(PetscViewerASCIIPrintf(v, "%s upsampling, scale %" PetscInt_FMT ", align_corners %s (halo 1)\n", l->inshape.ndim == 4 ? "trilinear" : "bilinear", d->scale, d->align ? "true" : "false"));
  else PetscCall(PetscViewerASCIIPrintf(v, "nearest-neighbour upsampling, scale %" PetscInt_FMT " (no communication)\n", d->scale));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerUpsampleSetScale_Upsample(NNLayer l, PetscInt s)
{
  PetscFunctionBegin;
  ((NNLayer_Upsample *)l->data)->scale = s;
  l->setupcalled                       = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerUpsampleGetScale_Upsample(NNLayer l, PetscInt *s)
{
  PetscFunctionBegin;
  *s = ((NNLayer_Upsample *)l->data)->scale;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerUpsampleSetMode_Upsample(NNLayer l, const char mode[])
{
  NNLayer_Upsample *d = (NNLayer_Upsample *)l->data;
  PetscBool         nearest, linear[3];

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(mode, "nearest", &nearest));
  PetscCall(PetscStrcmp(mode, "bilinear", &linear[0]));
  PetscCall(PetscStrcmp(mode, "trilinear", &linear[1]));
  PetscCall(PetscStrcmp(mode, "linear", &linear[2]));
  PetscCheck(nearest || linear[0] || linear[1] || linear[2], PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_UNKNOWN_TYPE, "Layer %s (%s): unknown mode \"%s\"; use nearest or bilinear (trilinear and linear are the same)", ((PetscObject)l)->name, ((PetscObject)l)->type_name, mode);
  d->mode        = nearest ? NN_UPSAMPLE_NEAREST : NN_UPSAMPLE_LINEAR;
  d->badmode[0]  = 0;
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerUpsampleSetAlignCorners_Upsample(NNLayer l, PetscBool align)
{
  PetscFunctionBegin;
  ((NNLayer_Upsample *)l->data)->align = align;
  l->setupcalled                       = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNUpsampleFunctions[] = {
  {"NNLayerUpsampleSetMode_C", (PetscVoidFunction)NNLayerUpsampleSetMode_Upsample},
  {"NNLayerUpsampleSetAlignCorners_C", (PetscVoidFunction)NNLayerUpsampleSetAlignCorners_Upsample},
  {"NNLayerUpsampleSetScale_C", (PetscVoidFunction)NNLayerUpsampleSetScale_Upsample},
  {"NNLayerUpsampleGetScale_C", (PetscVoidFunction)NNLayerUpsampleGetScale_Upsample},
};

static PetscErrorCode NNLayerDestroy_Upsample(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNUpsampleFunctions), NNUpsampleFunctions, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERUPSAMPLE - "upsample": nearest-neighbour or bilinear/trilinear upsampling by an integer factor
   (torch.nn.Upsample(scale_factor=s, mode='nearest' or 'bilinear'/'trilinear')) of 2-d (C,H,W) or 3-d (C,D,H,W) spatial DMDA activations

   Options Database Keys:
+  -<prefix>scale <s> - integer factor along every spatial axis (default 2)
.  -<prefix>mode <nearest,bilinear> - interpolation (default nearest); bilinear is trilinear on 3-d samples
-  -<prefix>align_corners <bool> - bilinear mode: PyTorch's align_corners (default false)

   Notes:
   Nearest: output pixel o copies input pixel floor(o/s) (exact integer arithmetic). The output's
   ownership ranges are the input's times s, so no communication is needed. Bilinear: output o
   interpolates inputs floor(src) and floor(src) + 1 (clamped to the grid) at
   src = max((o + 0.5)/s - 0.5, 0), or src = o (N-1)/(sN-1) with align_corners, as PyTorch does; the
   input comes with a halo of one pixel. The input must be spatial (`NNLAYERTOSPATIAL` first).

   Level: beginner

.seealso: `NNLayerUpsampleSetScale()`, `NNLayerUpsampleSetMode()`, `NNLayerUpsampleSetAlignCorners()`, `NNLAYERCONVTRANSPOSE2D`, `NNLAYERMAXPOOL2D`, `NNLAYERTOSPATIAL`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Upsample(NNLayer l)
{
  NNLayer_Upsample *d;

  PetscFunctionBegin;
  PetscCall(PetscNew(&d));
  d->scale                = 2;
  l->data                 = d;
  l->ops->setup           = NNLayerSetUp_Upsample;
  l->ops->forwardvec      = NNLayerForwardVec_Upsample;
  l->ops->backwardvec     = NNLayerBackwardVec_Upsample;
  l->ops->forwardsingle   = NNLayerForwardSingle_Upsample;
  l->ops->backwardsingle  = NNLayerBackwardSingle_Upsample;
  l->ops->createoutputvec = NNLayerCreateOutputVec_Upsample;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Upsample;
  l->ops->view            = NNLayerView_Upsample;
  l->ops->reset           = NNLayerReset_Upsample;
  l->ops->destroy         = NNLayerDestroy_Upsample;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: both modes, on one rank (layers/spatial/upsample_cuda.c) */
  l->ops->forwarddevice  = NNLayerForwardDevice_Upsample;
  l->ops->backwarddevice = NNLayerBackwardDevice_Upsample;
#endif
  PetscCall(NNLayerComposeFunctions(l, PETSC_STATIC_ARRAY_LENGTH(NNUpsampleFunctions), NNUpsampleFunctions, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*@
   NNLayerUpsampleSetScale - sets the integer factor of an upsample layer

   Logically Collective

   Input Parameters:
+  l - the layer
-  s - factor along every spatial axis (default 2)

   Options Database Key:
.  -<prefix>scale <s> - factor

   Level: beginner

.seealso: `NNLAYERUPSAMPLE`
@*/
PetscErrorCode NNLayerUpsampleSetScale(NNLayer l, PetscInt s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerUpsampleSetScale_C", (NNLayer, PetscInt), (l, s));
  PetscFunctionReturn(0);
}

/*@
   NNLayerUpsampleGetScale - gets the integer factor of an upsample layer

   Not Collective

   Input Parameter:
.  l - the layer (upsample)

   Output Parameter:
.  s - the integer factor

   Level: beginner

.seealso: `NNLayerUpsampleSetScale()`
@*/
PetscErrorCode NNLayerUpsampleGetScale(NNLayer l, PetscInt *s)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(s, 2);
  PetscUseMethod(l, "NNLayerUpsampleGetScale_C", (NNLayer, PetscInt *), (l, s));
  PetscFunctionReturn(0);
}

/*@C
   NNLayerUpsampleSetMode - sets the interpolation of an upsample layer

   Logically Collective

   Input Parameters:
+  l - the layer (upsample; a no-op on other types)
-  mode - "nearest" (the default) or "bilinear" (trilinear on 3-d samples; "trilinear" and "linear" are accepted as the same)

   Options Database Key:
.  -<prefix>mode <nearest,bilinear> - interpolation

   Notes:
   Bilinear matches torch.nn.Upsample(scale_factor=s, mode='bilinear' or 'trilinear') with
   align_corners False, or True after `NNLayerUpsampleSetAlignCorners()`.

   Level: beginner

.seealso: `NNLAYERUPSAMPLE`, `NNLayerUpsampleSetScale()`, `NNLayerUpsampleSetAlignCorners()`
@*/
PetscErrorCode NNLayerUpsampleSetMode(NNLayer l, const char mode[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscAssertPointer(mode, 2);
  PetscTryMethod(l, "NNLayerUpsampleSetMode_C", (NNLayer, const char[]), (l, mode));
  PetscFunctionReturn(0);
}

/*@
   NNLayerUpsampleSetAlignCorners - sets PyTorch's align_corners of a bilinear/trilinear upsample layer

   Logically Collective

   Input Parameters:
+  l - the layer (upsample; a no-op on other types)
-  align - PETSC_TRUE: the corner pixels of input and output coincide, src = o (N-1)/(sN-1); PETSC_FALSE (default): src = (o + 0.5)/s - 0.5

   Options Database Key:
.  -<prefix>align_corners <bool> - align corners

   Notes:
   Ignored in nearest mode.

   Level: intermediate

.seealso: `NNLAYERUPSAMPLE`, `NNLayerUpsampleSetMode()`
@*/
PetscErrorCode NNLayerUpsampleSetAlignCorners(NNLayer l, PetscBool align)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscValidLogicalCollectiveBool(l, align, 2);
  PetscTryMethod(l, "NNLayerUpsampleSetAlignCorners_C", (NNLayer, PetscBool), (l, align));
  PetscFunctionReturn(0);
}
