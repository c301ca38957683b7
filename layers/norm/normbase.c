/*
   What the per-sample normalization layers share (layers/norm/norm.h): the options -<prefix>eps,
   -<prefix>affine and (group_norm) -<prefix>groups with their setters, the affine tensors with
   PyTorch's names and initial values (weight [C] = 1, bias [C] = 0, only when affine), the two
   activation layouts, and the kernels over per-(sample, channel) runs.
*/
#include "norm.h"

static const char *NNLayerPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

/* "Group-norm layer gn1 (group_norm)" style names for messages */
const char *NNNormName(NNLayer l)
{
  switch (((NNNorm *)l->data)->kind) {
  case NN_NORM_GROUP:
    return "Group-norm";
  case NN_NORM_INSTANCE:
    return "Instance-norm";
  default:
    return "Layer-norm";
  }
}

/* ---------------------------------------------------------------- kernels */

/* the kernels in double and in float (layers/norm/normbase_kernels.h) */
#include <petnn/private/nnrealdouble.h>
#include "normbase_kernels.h"
#include <petnn/private/nnrealsingle.h>
#include "normbase_kernels.h"
#include <petnn/private/nnrealundef.h>

/* ---------------------------------------------------------------- layouts and workspace */

/* the layout of x: a DMDA Vec (spatial) or a sequential batch of at least n samples */
PetscErrorCode NNNormGetLayout(NNLayer l, PetscInt n, Vec x, NNNormLayout *lay)
{
  NNNorm  *p = (NNNorm *)l->data;
  DM       dm;
  PetscInt len;

  PetscFunctionBegin;
  PetscCall(VecGetDM(x, &dm));
  PetscCall(VecGetLocalSize(x, &len));
  lay->spatial = dm ? PETSC_TRUE : PETSC_FALSE;
  lay->D       = l->nbatch * p->C;
  if (lay->spatial) {
    PetscCheck(len % lay->D == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%s layer %s: local length %" PetscInt_FMT " of its spatial input is not a multiple of nbatch*C = %" PetscInt_FMT, NNNormName(l), ((PetscObject)l)->name, len, lay->D);
    lay->npos = len / lay->D;
  } else {
    lay->npos = NNShapeSize(&l->inshape) / p->C;
    PetscCheck(len >= n * NNShapeSize(&l->inshape), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "%s layer %s: its input has %" PetscInt_FMT " entries but %" PetscInt_FMT " samples of size %" PetscInt_FMT " need %" PetscInt_FMT, NNNormName(l), ((PetscObject)l)->name, len, n, NNShapeSize(&l->inshape), n * NNShapeSize(&l->inshape));
  }
  PetscFunctionReturn(0);
}

/* the layout of the layer's recorded input (NNLayerGetInputDM()) for the single-precision passes, which get arrays, not
   Vecs: spatial, the pixels of the DMDA's owned box; sequential, any batch */
PetscErrorCode NNNormGetInputLayout(NNLayer l, NNNormLayout *lay)
{
  NNNorm  *p = (NNNorm *)l->data;
  DM       dm;
  PetscInt xm, ym, zm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  lay->spatial = dm ? PETSC_TRUE : PETSC_FALSE;
  lay->D       = l->nbatch * p->C;
  lay->npos    = NNShapeSize(&l->inshape) / p->C;
  if (dm) {
    PetscCall(DMDAGetCorners(dm, NULL, NULL, NULL, &xm, &ym, &zm));
    lay->npos = xm * ym * zm;
  }
  PetscFunctionReturn(0);
}

/* statistics storage for cnt values */
PetscErrorCode NNNormEnsureCapacity(NNNorm *p, PetscInt cnt)
{
  PetscFunctionBegin;
  if (cnt <= p->cap) PetscFunctionReturn(0);
  PetscCall(PetscFree2(p->mean, p->rstd));
  PetscCall(PetscMalloc2(cnt, &p->mean, cnt, &p->rstd));
  p->cap = cnt;
  PetscFunctionReturn(0);
}

/* output shape = input shape; weight [C] and bias [C] when affine; workspace */
PetscErrorCode NNNormSetUpBase(NNLayer l)
{
  NNNorm  *p = (NNNorm *)l->data;
  PetscInt C = l->inshape.dim[0], nb = l->nbatch;

  PetscFunctionBegin;
  p->C        = C;
  l->outshape = l->inshape;
  if (p->affine) {
    PetscCall(NNLayerAddTensor(l, "weight", NN_TENSOR_PARAM, 1, &C));
    PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &C));
  }
  PetscCall(PetscMalloc7(nb * C, &p->mu, nb * C, &p->a, nb * C, &p->b, nb * C, &p->u, nb * C, &p->acc1, nb * C, &p->acc2, 2 * nb * C, &p->gs));
  PetscCall(PetscMalloc1(2 * C, &p->pg));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Norm(NNLayer l)
{
  NNNorm *p = (NNNorm *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree7(p->mu, p->a, p->b, p->u, p->acc1, p->acc2, p->gs));
  PetscCall(PetscFree(p->pg));
  PetscCall(PetscFree2(p->mean, p->rstd));
  p->cap = 0;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNNormDeviceReset(&p->dev));
#endif
  PetscFunctionReturn(0);
}

/* PyTorch's reset_parameters(): weight 1, bias 0 */
static PetscErrorCode NNLayerInitialize_Norm(NNLayer l)
{
  NNNorm      *p     = (NNNorm *)l->data;
  PetscScalar *theta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  if (!p->affine) PetscFunctionReturn(0);
  for (PetscInt c = 0; c < p->C; c++) {
    theta[c]        = 1.0;
    theta[p->C + c] = 0.0;
  }
  PetscFunctionReturn(0);
}

/* the output has the input's layout: a global Vec of the input's DMDA, or a sequential batch */
static PetscErrorCode NNLayerCreateOutputVec_Norm(NNLayer l, Vec *y)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  if (dm) PetscCall(DMCreateGlobalVector(dm, y));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), y));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- options and setters */

static PetscErrorCode NNLayerNormSetEpsilon_Norm(NNLayer l, PetscReal eps)
{
  PetscFunctionBegin;
  PetscCheck(eps >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "%s layer %s: epsilon %g is invalid (-%seps); it must be >= 0 (PyTorch's default 1e-5)", NNNormName(l), ((PetscObject)l)->name, (double)eps, NNLayerPrefix(l));
  ((NNNorm *)l->data)->eps = eps;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerNormSetAffine_Norm(NNLayer l, PetscBool affine)
{
  NNNorm *p = (NNNorm *)l->data;

  PetscFunctionBegin;
  if (p->affine != affine) l->setupcalled = PETSC_FALSE; /* the tensors change */
  p->affine = affine;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerGroupNormSetGroups_Norm(NNLayer l, PetscInt G)
{
  NNNorm *p = (NNNorm *)l->data;

  PetscFunctionBegin;
  PetscCheck(G > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Group-norm layer %s: %" PetscInt_FMT " groups is invalid (-%sgroups); give a positive divisor of the number of channels", ((PetscObject)l)->name, G, NNLayerPrefix(l));
  p->groups      = G;
  l->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Norm(NNLayer l, NNOptionItems PetscOptionsObject)
{
  NNNorm   *p   = (NNNorm *)l->data;
  PetscReal eps = p->eps;
  PetscBool affine = p->affine, flg;
  PetscInt  G = p->groups;
  char      title[64];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(title, sizeof(title), "%s layer options", NNNormName(l)));
  PetscOptionsHeadBegin(PetscOptionsObject, title);
  if (p->kind == NN_NORM_GROUP) {
    PetscCall(PetscOptionsInt("-groups", "Number of channel groups (a divisor of the channels; torch.nn.GroupNorm num_groups)", "NNLayerGroupNormSetGroups", G, &G, &flg));
    if (flg) PetscCall(NNLayerGroupNormSetGroups_Norm(l, G));
  }
  PetscCall(PetscOptionsReal("-eps", "Added to the variance before the square root (>= 0)", "NNLayerNormSetEpsilon", eps, &eps, &flg));
  if (flg) PetscCall(NNLayerNormSetEpsilon_Norm(l, eps));
  PetscCall(PetscOptionsBool("-affine", "Learnable per-channel weight and bias", "NNLayerNormSetAffine", affine, &affine, &flg));
  if (flg) PetscCall(NNLayerNormSetAffine_Norm(l, affine));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_Norm(NNLayer l, PetscViewer v)
{
  NNNorm *p = (NNNorm *)l->data;
  DM      dm;
  char    grp[64] = "";

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  if (p->kind == NN_NORM_GROUP) PetscCall(PetscSNPrintf(grp, sizeof(grp), "%" PetscInt_FMT " groups of %" PetscInt_FMT " channels, ", p->G, p->G ? p->C / p->G : 0));
  PetscCall(PetscViewerASCIIPrintf(v, "%seps %g, affine %s, statistics per sample over %s%s\n", grp, (double)p->eps, p->affine ? "yes" : "no", p->kind == NN_NORM_LAYER ? "the channels of each position" : (p->kind == NN_NORM_GROUP ? "each group's channels and all positions" : "each channel's positions"),
                                   dm && p->kind != NN_NORM_LAYER ? " (pixels of all the layer's ranks)" : ""));
  PetscFunctionReturn(0);
}

static const NNLayerFunction NNNormFunctions[] = {
  {"NNLayerNormSetEpsilon_C",     (PetscVoidFunction)NNLayerNormSetEpsilon_Norm    },
  {"NNLayerNormSetAffine_C",      (PetscVoidFunction)NNLayerNormSetAffine_Norm     },
  {"NNLayerGroupNormSetGroups_C", (PetscVoidFunction)NNLayerGroupNormSetGroups_Norm},
};

static PetscErrorCode NNLayerDestroy_Norm(NNLayer l)
{
  NNNorm *p = (NNNorm *)l->data;
  size_t  n = p->kind == NN_NORM_GROUP ? 3 : 2;

  PetscFunctionBegin;
  PetscCall(NNLayerComposeFunctions(l, n, NNNormFunctions, PETSC_FALSE));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/* PyTorch's defaults: eps 1e-5; affine for group_norm and layer_norm, not for instance_norm */
PetscErrorCode NNNormCreateBase(NNLayer l, NNNormKind kind)
{
  NNNorm *p;

  PetscFunctionBegin;
  PetscCall(PetscNew(&p));
  p->kind                 = kind;
  p->eps                  = 1e-5;
  p->affine               = kind == NN_NORM_INSTANCE ? PETSC_FALSE : PETSC_TRUE;
  l->data                 = p;
  l->forwardstate         = PETSC_TRUE; /* backward reads the statistics of the last forward pass */
  l->ops->initialize      = NNLayerInitialize_Norm;
  l->ops->setfromoptions  = NNLayerSetFromOptions_Norm;
  l->ops->reset           = NNLayerReset_Norm;
  l->ops->createoutputvec = NNLayerCreateOutputVec_Norm;
  l->ops->view            = NNLayerView_Norm;
  l->ops->destroy         = NNLayerDestroy_Norm;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/norm/norm_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_Norm;
  l->ops->backwarddevice = NNLayerBackwardDevice_Norm;
  l->dev.split           = PETSC_TRUE; /* also on spatial activations split over ranks (sums added over the ranks on the host) */
#endif
  PetscCall(NNLayerComposeFunctions(l, kind == NN_NORM_GROUP ? 3 : 2, NNNormFunctions, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*@
   NNLayerNormSetEpsilon - sets the variance regularization (default 1e-5) of a group_norm,
   instance_norm or layer_norm layer

   Logically Collective

   Input Parameters:
+  l - the layer
-  eps - added to the variance before the square root, eps >= 0

   Options Database Key:
.  -<prefix>eps <eps> - epsilon

   Level: intermediate

.seealso: `NNLayerNormSetAffine()`, `NNLayerGroupNormSetGroups()`, `NNLAYERGROUPNORM`, `NNLAYERINSTANCENORM`, `NNLAYERLAYERNORM`
@*/
PetscErrorCode NNLayerNormSetEpsilon(NNLayer l, PetscReal eps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerNormSetEpsilon_C", (NNLayer, PetscReal), (l, eps));
  PetscFunctionReturn(0);
}

/*@
   NNLayerNormSetAffine - gives a group_norm, instance_norm or layer_norm layer (or takes away) its
   learnable per-channel weight and bias

   Logically Collective

   Input Parameters:
+  l - the layer
-  affine - PETSC_TRUE: tensors "weight" [C] (initially 1) and "bias" [C] (initially 0)

   Options Database Key:
.  -<prefix>affine <bool> - default true for group_norm and layer_norm, false for instance_norm (PyTorch's defaults)

   Notes:
   Call before `NNSetUp()`: the parameters of the network change.

   Level: intermediate

.seealso: `NNLayerNormSetEpsilon()`, `NNLAYERGROUPNORM`, `NNLAYERINSTANCENORM`, `NNLAYERLAYERNORM`
@*/
PetscErrorCode NNLayerNormSetAffine(NNLayer l, PetscBool affine)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerNormSetAffine_C", (NNLayer, PetscBool), (l, affine));
  PetscFunctionReturn(0);
}

/*@
   NNLayerGroupNormSetGroups - sets the number of channel groups of a group_norm layer
   (torch.nn.GroupNorm's num_groups)

   Logically Collective

   Input Parameters:
+  l - the layer
-  G - the number of groups, a positive divisor of the number of input channels (checked at set-up)

   Options Database Key:
.  -<prefix>groups <G> - number of groups (default 1: one group of all channels)

   Level: intermediate

.seealso: `NNLayerNormSetEpsilon()`, `NNLayerNormSetAffine()`, `NNLAYERGROUPNORM`
@*/
PetscErrorCode NNLayerGroupNormSetGroups(NNLayer l, PetscInt G)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(l, NNLAYER_CLASSID, 1);
  PetscTryMethod(l, "NNLayerGroupNormSetGroups_C", (NNLayer, PetscInt), (l, G));
  PetscFunctionReturn(0);
}
