/*
   Residual layer: y = x + block(x), where the block is the layer's children run in order
   (a ResNet block; torch: x + nn.Sequential(...)(x)).

   The children are ordinary layers: NNLayerResidualAddLayer() or -<prefix>layers a,b,c creates
   them with options prefix "<base><child>_", where <base> is the network's prefix (the residual
   layer's prefix without its own "<name>_"), so a child is configured like a top-level layer
   (-fc3_units 64) and its checkpoint names are "<residual>.<child>.weight".

   The residual layer has no tensors of its own; the children's slices of the network's
   parameter, gradient and buffer arrays follow it (NNLayerSetChildPointers()).
   The children run through NNLayerForward()/NNLayerBackward() on Vecs wrapping this layer's
   intermediate buffers, so -log_view reports them per type.
*/
#include <petnn/private/nnimpl.h>

typedef struct {
  Vec     *out;  /* out[c]: output of child c, capacity nbatch */
  Vec     *dout; /* dout[c]: gradient w.r.t. out[c] (the last one is NULL: dy itself) */
  Vec      xw;   /* header over the caller's x */
  Vec      dyw;  /* header over the caller's dy (the gradient of the last child's output) */
  Vec      dxw;  /* header over the caller's dx */
  PetscInt nvec; /* number of children the Vecs were made for */
} NNLayer_Residual;

static const char *NNLayerPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

static PetscErrorCode NNLayerResidualAddLayer_Residual(NNLayer l, NNLayerType type, const char name[], NNLayer *inner)
{
  char      base[256] = "", suffix[256];
  size_t    plen, slen;
  NNLayer   child, *more;
  PetscBool match;

  PetscFunctionBegin;
  PetscCheck(name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_NULL, "Residual layer %s: the inner layer needs a name", ((PetscObject)l)->name);
  PetscCall(PetscStrcmp(name, ((PetscObject)l)->name, &match));
  PetscCheck(!match, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Residual layer %s cannot contain a layer of the same name; layer names must be unique", name);
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(PetscStrcmp(name, ((PetscObject)l->children[c])->name, &match));
    PetscCheck(!match, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Residual layer %s already has an inner layer named %s; layer names must be unique", ((PetscObject)l)->name, name);
  }
  /* the network-level prefix: our own prefix without the trailing "<name>_" */
  PetscCall(PetscStrncpy(base, NNLayerPrefix(l), sizeof(base)));
  PetscCall(PetscSNPrintf(suffix, sizeof(suffix), "%s_", ((PetscObject)l)->name ? ((PetscObject)l)->name : ""));
  PetscCall(PetscStrlen(base, &plen));
  PetscCall(PetscStrlen(suffix, &slen));
  if (slen > 1 && plen >= slen) {
    PetscCall(PetscStrcmp(base + plen - slen, suffix, &match));
    if (match) base[plen - slen] = 0;
  }
  PetscCall(NNLayerCreateNamed(PetscObjectComm((PetscObject)l), base, type, name, &child));
  child->rng      = l->rng;
  child->nbatch   = l->nbatch;
  child->training = l->training;
  PetscCall(PetscMalloc1(l->nchildren + 1, &more));
  if (l->nchildren) PetscCall(PetscArraycpy(more, l->children, l->nchildren));
  more[l->nchildren] = child;
  PetscCall(PetscFree(l->children));
  l->children = more;
  l->nchildren++;
  l->setupcalled = PETSC_FALSE;
  if (inner) *inner = child;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Residual(NNLayer l, PetscOptionItems *PetscOptionsObject)
{
  char     *names[64];
  PetscInt  nnames = 64;
  PetscBool flg, exists;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Residual layer options");
  PetscCall(PetscOptionsStringArray("-layers", "Comma-separated names of the inner layers, each configured by -<name>_type ...", "NNLayerResidualAddLayer", names, &nnames, &flg));
  if (flg) {
    for (PetscInt i = 0; i < nnames; i++) {
      exists = PETSC_FALSE;
      for (PetscInt c = 0; c < l->nchildren && !exists; c++) PetscCall(PetscStrcmp(names[i], ((PetscObject)l->children[c])->name, &exists));
      if (!exists) PetscCall(NNLayerResidualAddLayer_Residual(l, NULL, names[i], NULL));
      PetscCall(PetscFree(names[i]));
    }
  }
  PetscOptionsHeadEnd();
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetFromOptions(l->children[c]));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Residual(NNLayer l)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < r->nvec; c++) {
    PetscCall(VecDestroy(&r->out[c]));
    PetscCall(VecDestroy(&r->dout[c]));
  }
  PetscCall(PetscFree2(r->out, r->dout));
  r->nvec = 0;
  PetscCall(VecDestroy(&r->xw));
  PetscCall(VecDestroy(&r->dyw));
  PetscCall(VecDestroy(&r->dxw));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_Residual(NNLayer l)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  NNShape           s = l->inshape;
  PetscInt          N = l->nbatch * NNShapeSize(&l->inshape);
  NNLayer           last;
  PetscBool         same;

  PetscFunctionBegin;
  PetscCheck(l->nchildren > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Residual layer %s has no inner layers: give -%slayers name1,name2,... or call NNLayerResidualAddLayer()", ((PetscObject)l)->name, NNLayerPrefix(l));
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch = l->children[c];
    if (!ch->rng) ch->rng = l->rng;
    PetscCall(NNLayerSetBatchCapacity(ch, l->nbatch));
    PetscCall(NNLayerSetInputShape(ch, &s));
    PetscCall(NNLayerSetTraining(ch, l->training));
    PetscCall(NNLayerSetUp(ch));
    s = ch->outshape;
  }
  last = l->children[l->nchildren - 1];
  same = (PetscBool)(s.ndim == l->inshape.ndim);
  for (PetscInt i = 0; i < s.ndim && same; i++) same = (PetscBool)(s.dim[i] == l->inshape.dim[i]);
  if (!same) {
    char in[64], out[64];
    PetscCall(NNShapeToString(&l->inshape, sizeof(in), in));
    PetscCall(NNShapeToString(&s, sizeof(out), out));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Residual layer %s: its last inner layer %s (%s) outputs shape %s but the residual input has shape %s; y = x + block(x) needs equal shapes", ((PetscObject)l)->name, ((PetscObject)last)->name, ((PetscObject)last)->type_name, out, in);
  }
  l->outshape = l->inshape;

  PetscCall(PetscCalloc2(l->nchildren, &r->out, l->nchildren, &r->dout));
  r->nvec = l->nchildren;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscInt m = l->nbatch * NNShapeSize(&l->children[c]->outshape);
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &r->out[c]));
    if (c < l->nchildren - 1) PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &r->dout[c]));
    else r->dout[c] = NULL; /* the last child's output gradient is dy itself */
  }
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, N, NULL, &r->xw));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, N, NULL, &r->dyw));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, N, NULL, &r->dxw));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForward_Residual(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  NNLayer_Residual  *r  = (NNLayer_Residual *)l->data;
  PetscInt           N  = n * NNShapeSize(&l->inshape), nc = l->nchildren;
  const PetscScalar *h;

  PetscFunctionBegin;
  PetscCall(NNLayerSetChildPointers(l));
  PetscCall(VecPlaceArray(r->xw, (PetscScalar *)x)); /* read only */
  for (PetscInt c = 0; c < nc; c++) PetscCall(NNLayerForward(l->children[c], n, c ? r->out[c - 1] : r->xw, r->out[c]));
  PetscCall(VecResetArray(r->xw));
  PetscCall(VecGetArrayRead(r->out[nc - 1], &h));
  for (PetscInt i = 0; i < N; i++) y[i] = x[i] + h[i];
  PetscCall(VecRestoreArrayRead(r->out[nc - 1], &h));
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_Residual(NNLayer l, PetscInt n, const PetscScalar *x, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  PetscInt          N = n * NNShapeSize(&l->inshape), nc = l->nchildren;

  PetscFunctionBegin;
  PetscCall(NNLayerSetChildPointers(l));
  PetscCall(VecPlaceArray(r->xw, (PetscScalar *)x));
  PetscCall(VecPlaceArray(r->dyw, (PetscScalar *)dy));
  if (dx) PetscCall(VecPlaceArray(r->dxw, dx));
  /* the block's output gradient is dy; the first child writes the block's input gradient into dx */
  for (PetscInt c = nc - 1; c >= 0; c--) {
    Vec in   = c ? r->out[c - 1] : r->xw;
    Vec dout = c == nc - 1 ? r->dyw : r->dout[c];
    Vec din  = c ? r->dout[c - 1] : (dx ? r->dxw : NULL);
    PetscCall(NNLayerBackward(l->children[c], n, in, r->out[c], dout, din));
  }
  if (dx) PetscCall(VecResetArray(r->dxw));
  PetscCall(VecResetArray(r->dyw));
  PetscCall(VecResetArray(r->xw));
  if (dx) {
    for (PetscInt i = 0; i < N; i++) dx[i] += dy[i];
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
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerResidualAddLayer_C", NULL));
  PetscCall(PetscFree(l->data));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERRESIDUAL - "residual": y = x + block(x), the block being a sequence of inner layers

   The inner layers are named like top-level layers and configured with their own prefixes;
   the last one must output the shape of the residual layer's input.

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

   Level: beginner

.seealso: `NNLayerResidualAddLayer()`, `NNAddLayer()`, `NNLayerType`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_Residual(NNLayer l)
{
  NNLayer_Residual *r;

  PetscFunctionBegin;
  PetscCall(PetscNew(&r));
  l->data                = r;
  l->ops->setup          = NNLayerSetUp_Residual;
  l->ops->reset          = NNLayerReset_Residual;
  l->ops->forward        = NNLayerForward_Residual;
  l->ops->backward       = NNLayerBackward_Residual;
  l->ops->setfromoptions = NNLayerSetFromOptions_Residual;
  l->ops->view           = NNLayerView_Residual;
  l->ops->destroy        = NNLayerDestroy_Residual;
  PetscCall(PetscObjectComposeFunction((PetscObject)l, "NNLayerResidualAddLayer_C", NNLayerResidualAddLayer_Residual));
  PetscFunctionReturn(0);
}
