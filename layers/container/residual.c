/*
   Residual layer: y = x + block(x), where the block is the layer's children run in order
   (a ResNet block; torch: x + nn.Sequential(...)(x)).

   The children are ordinary layers: NNLayerResidualAddLayer() or -<prefix>layers a,b,c creates
   them with options prefix "<base><child>_", where <base> is the network's prefix (the residual
   layer's prefix without its own "<name>_"), so a child is configured like a top-level layer
   (-fc3_units 64) and its checkpoint names are "<residual>.<child>.weight". The container code
   (children, -layers, their Vecs and layout checks) is shared with the ODE block: container.c.

   The residual layer has no tensors of its own; the children's slices of the network's
   parameter, gradient and buffer arrays follow it (NNLayerSetChildPointers()).

   Activations of any layout: the block runs its children with NNLayerForward()/NNLayerBackward()
   on Vecs (so -log_view reports them per type) and wires them as NNSetUp() wires a network: each
   child gets the DM of its input (NNLayerSetInputDM(); NULL for sequential activations) and makes
   its own output Vec (NNLayerCreateOutputVec()). On a spatial (DMDA) input the children may be
   conv2d, batchnorm2d, pointwise layers, ...; the last child's output must have the input's shape
   and, for a DMDA, the same grid, dof and decomposition, and the skip connection is one VecWAXPY
   (VecAXPY in the backward pass) over the whole local array. Sequential activations add only the
   first n samples (the caller's Vecs may hold just those). In single precision the block runs its
   children's float passes when they all have them (residual_single.c); on the device their device
   passes (residual_cuda.c).
*/
#include "residual.h"
#include <petnn/private/deviceimpl.h>

#define NN_RESIDUAL "Residual layer" /* starts the container's error messages */

static PetscErrorCode NNLayerResidualAddLayer_Residual(NNLayer l, NNLayerType type, const char name[], NNLayer *inner)
{
  PetscFunctionBegin;
  PetscCall(NNLayerContainerAddLayer(l, NN_RESIDUAL, type, name, inner));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Residual(NNLayer l, NNOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Residual layer options");
  PetscCall(NNLayerContainerSetFromOptions(l, NN_RESIDUAL, "Comma-separated names of the inner layers, each configured by -<name>_type ...", "NNLayerResidualAddLayer", PetscOptionsObject));
  PetscOptionsHeadEnd();
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetFromOptions(l->children[c]));
  PetscFunctionReturn(0);
}

/* frees the device arrays of residual_cuda.c (none without CUDA) */
PetscErrorCode NNResidualDeviceReset(NNLayer l)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < r->ndev; c++) {
    PetscCall(NNDeviceFree(&r->dout[c]));
    PetscCall(NNDeviceFree(&r->ddout[c]));
  }
  PetscCall(PetscFree2(r->dout, r->ddout));
  r->ndev = 0;
  r->des  = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Residual(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNLayerContainerDestroyVecs(&((NNLayer_Residual *)l->data)->v));
  PetscCall(NNResidualDeviceReset(l));
  PetscCall(NNResidualSingleReset(l));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_Residual(NNLayer l)
{
  NNShape s = l->inshape;
  NNLayer last;

  PetscFunctionBegin;
  PetscCheck(l->nchildren > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Residual layer %s has no inner layers: give -%slayers name1,name2,... or call NNLayerResidualAddLayer()", ((PetscObject)l)->name, NNLayerContainerPrefix(l));
  PetscCall(NNLayerContainerSetUpChildren(l, &s));
  last = l->children[l->nchildren - 1];
  if (!NNLayerContainerSameShape(&s, &l->inshape)) {
    char in[64], out[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(in), in));
    PetscCall(NNShapeToString(&s, sizeof(out), out));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Residual layer %s: its last inner layer %s (%s) outputs shape %s but the residual input has shape %s; y = x + block(x) needs equal shapes", ((PetscObject)l)->name, ((PetscObject)last)->name, ((PetscObject)last)->type_name, out, in);
  }
  l->outshape = l->inshape;
  { /* -nn_precision single (residual_single.c): float passes when every child has its own */
    PetscBool single = PETSC_TRUE;
    l->forwardstate  = PETSC_FALSE;
    for (PetscInt c = 0; c < l->nchildren; c++) {
      single          = (PetscBool)(single && NNLayerHasSinglePasses(l->children[c]));
      l->forwardstate = (PetscBool)(l->forwardstate || l->children[c]->forwardstate);
    }
    l->ops->forwardsingle  = single ? NNLayerForwardSingle_Residual : NULL;
    l->ops->backwardsingle = single ? NNLayerBackwardSingle_Residual : NULL;
  }
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda (residual_cuda.c): when every child has device passes */
  {
    PetscBool dev = PETSC_TRUE;
    for (PetscInt c = 0; c < l->nchildren; c++) dev = (PetscBool)(dev && l->children[c]->ops->forwarddevice && l->children[c]->ops->backwarddevice);
    l->ops->forwarddevice  = dev ? NNLayerForwardDevice_Residual : NULL;
    l->ops->backwarddevice = dev ? NNLayerBackwardDevice_Residual : NULL;
  }
#endif
  PetscFunctionReturn(0);
}

/* the children's activation Vecs for an input in the layout of dmin (NULL: sequential), wired as NNSetUp() wires a network */
static PetscErrorCode NNResidualCreateVecs(NNLayer l, DM dmin)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  DM                dm;

  PetscFunctionBegin;
  PetscCall(NNLayerContainerCreateVecs(l, &r->v, dmin, &dm));
  PetscCall(NNLayerContainerCheckLayout(l, NN_RESIDUAL, "y = x + block(x)", dmin, dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_Residual(NNLayer l, Vec *y)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCall(NNResidualCreateVecs(l, dm));
  PetscCall(NNLayerContainerCreateOutputVec(l, dm, y));
#if defined(PETNN_HAVE_CUDA) /* on split spatial activations when every child runs there (known once their Vecs are made) */
  l->dev.split = PETSC_TRUE;
  for (PetscInt c = 0; c < l->nchildren; c++) l->dev.split = (PetscBool)(l->dev.split && l->children[c]->dev.split);
#endif
  PetscFunctionReturn(0);
}

/* the children's Vecs, made on first use when the layer runs outside a network (no NNLayerCreateOutputVec()) */
static PetscErrorCode NNResidualGetVecs(NNLayer l, Vec x, PetscBool *spatial)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  DM                dm;

  PetscFunctionBegin;
  PetscCall(NNLayerContainerGetInputDM(l, x, &dm));
  if (!r->v.nvec) PetscCall(NNResidualCreateVecs(l, dm));
  *spatial = dm ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForwardVec_Residual(NNLayer l, PetscInt n, Vec x, Vec y)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  PetscInt          nc = l->nchildren;
  PetscBool         spatial;

  PetscFunctionBegin;
  PetscCall(NNResidualGetVecs(l, x, &spatial));
  PetscCall(NNLayerSetChildPointers(l));
  for (PetscInt c = 0; c < nc; c++) PetscCall(NNLayerForward(l->children[c], n, c ? r->v.out[c - 1] : x, r->v.out[c]));
  if (spatial) PetscCall(VecWAXPY(y, 1.0, r->v.out[nc - 1], x)); /* the whole local array: slots s >= n included */
  else {
    PetscInt           N = n * NNShapeSize(&l->inshape);
    const PetscScalar *xa, *h;
    PetscScalar       *ya;
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayRead(r->v.out[nc - 1], &h));
    PetscCall(VecGetArrayWrite(y, &ya));
    for (PetscInt i = 0; i < N; i++) ya[i] = xa[i] + h[i];
    PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscCall(VecRestoreArrayRead(r->v.out[nc - 1], &h));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(PetscLogFlops((PetscLogDouble)N));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardVec_Residual(NNLayer l, PetscInt n, Vec x, Vec y PETSC_UNUSED, Vec dy, Vec dx)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  PetscInt          nc = l->nchildren;
  PetscBool         spatial;

  PetscFunctionBegin;
  PetscCall(NNResidualGetVecs(l, x, &spatial));
  PetscCall(NNLayerSetChildPointers(l));
  /* the block's output gradient is dy; the first child writes the block's input gradient into dx */
  for (PetscInt c = nc - 1; c >= 0; c--) {
    Vec in   = c ? r->v.out[c - 1] : x;
    Vec dout = c == nc - 1 ? dy : r->v.dout[c];
    Vec din  = c ? r->v.dout[c - 1] : dx;
    PetscCall(NNLayerBackward(l->children[c], n, in, r->v.out[c], dout, din));
  }
  if (!dx) PetscFunctionReturn(0);
  if (spatial) PetscCall(VecAXPY(dx, 1.0, dy));
  else {
    PetscInt           N = n * NNShapeSize(&l->inshape);
    const PetscScalar *dya;
    PetscScalar       *dxa;
    PetscCall(VecGetArrayRead(dy, &dya));
    PetscCall(VecGetArray(dx, &dxa));
    for (PetscInt i = 0; i < N; i++) dxa[i] += dya[i];
    PetscCall(VecRestoreArray(dx, &dxa));
    PetscCall(VecRestoreArrayRead(dy, &dya));
    PetscCall(PetscLogFlops((PetscLogDouble)N));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Residual(NNLayer l, PetscViewer v)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "y = x + block(x), block of %" PetscInt_FMT " layers:\n", l->nchildren));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerDestroy_Residual(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNResidualDeviceReset(l));
  PetscCall(NNResidualSingleReset(l));
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerResidualAddLayer_C", NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERRESIDUAL - "residual": y = x + block(x), the block being a sequence of inner layers

   The inner layers are named like top-level layers and configured with their own prefixes;
   the last one must output the shape of the residual layer's input, in the same layout: on a
   spatial (DMDA) activation the same grid, channels and decomposition (e.g. stride-1
   same-padding convolutions, batch norm and pointwise layers).

   Options Database Key:
.  -<prefix>layers <a,b,c> - names of the inner layers, each configured by -<name>_type ...

   Example options file:
.vb
   -nn_layers res1,out
   -res1_type residual
   -res1_layers fc1,act1,fc2
   -fc1_type dense -fc1_units 64
   -act1_type tanh
   -fc2_type dense -fc2_units 32
.ve
   A ResNet basic block on a spatial activation with 8 channels:
.vb
   -nn_layers sp,c0,res1,sf,out
   -sp_type to_spatial
   -c0_type conv2d -c0_filters 8
   -res1_type residual
   -res1_layers c1,bn1,relu1,c2
   -c1_type conv2d -c1_filters 8 -c1_kernel 3
   -bn1_type batchnorm2d
   -relu1_type relu
   -c2_type conv2d -c2_filters 8 -c2_kernel 3
   -sf_type spatial_flatten
   -out_type dense -out_units 10
.ve

   Level: beginner

.seealso: `NNLayerResidualAddLayer()`, `NNAddLayer()`, `NNLayerType`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Residual(NNLayer l)
{
  NNLayer_Residual *r;

  PetscFunctionBegin;
  PetscCall(PetscNew(&r));
  l->data                 = r;
  l->ops->setup           = NNLayerSetUp_Residual;
  l->ops->reset           = NNLayerReset_Residual;
  l->ops->forwardvec      = NNLayerForwardVec_Residual;
  l->ops->backwardvec     = NNLayerBackwardVec_Residual;
  l->ops->createoutputvec = NNLayerCreateOutputVec_Residual;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Residual;
  l->ops->view            = NNLayerView_Residual;
  l->ops->destroy         = NNLayerDestroy_Residual;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerResidualAddLayer_C", NNLayerResidualAddLayer_Residual));
  PetscFunctionReturn(0);
}
