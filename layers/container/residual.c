/*
   Residual layer: y = x + block(x), where the block is the layer's children run in order
   (a ResNet block; torch: x + nn.Sequential(...)(x)).

   The children are ordinary layers: NNLayerResidualAddLayer() or -<prefix>layers a,b,c creates
   them with options prefix "<base><child>_", where <base> is the network's prefix (the residual
   layer's prefix without its own "<name>_"), so a child is configured like a top-level layer
   (-fc3_units 64) and its checkpoint names are "<residual>.<child>.weight".

   The residual layer has no tensors of its own; the children's slices of the network's
   parameter, gradient and buffer arrays follow it (NNLayerSetChildPointers()).

   Activations of any layout: the block runs its children with NNLayerForward()/NNLayerBackward()
   on Vecs (so -log_view reports them per type) and wires them as NNSetUp() wires a network: each
   child gets the DM of its input (NNLayerSetInputDM(); NULL for sequential activations) and makes
   its own output Vec (NNLayerCreateOutputVec()). On a spatial (DMDA) input the children may be
   conv2d, batchnorm2d, pointwise layers, ...; the last child's output must have the input's shape
   and, for a DMDA, the same grid, dof and decomposition, and the skip connection is one VecWAXPY
   (VecAXPY in the backward pass) over the whole local array. Sequential activations add only the
   first n samples (the caller's Vecs may hold just those).
*/
#include <petnn/private/nnimpl.h>

typedef struct {
  Vec     *out;  /* out[c]: output of child c, capacity nbatch, in the layout child c makes */
  Vec     *dout; /* dout[c]: gradient w.r.t. out[c] (the last one is NULL: dy itself) */
  PetscInt nvec; /* number of children the Vecs were made for (0: not made yet) */
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

/* a child named in -layers, unless the block has it already */
static PetscErrorCode NNResidualAddNamed(NNLayer l, const char name[])
{
  PetscBool exists = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren && !exists; c++) PetscCall(PetscStrcmp(name, ((PetscObject)l->children[c])->name, &exists));
  if (!exists) PetscCall(NNLayerResidualAddLayer_Residual(l, NULL, name, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetFromOptions_Residual(NNLayer l, PetscOptionItems *PetscOptionsObject)
{
  char     *names[64];
  PetscInt  nnames = 64;
  PetscBool flg;

  PetscFunctionBegin;
  PetscOptionsHeadBegin(PetscOptionsObject, "Residual layer options");
  PetscCall(PetscOptionsStringArray("-layers", "Comma-separated names of the inner layers, each configured by -<name>_type ...", "NNLayerResidualAddLayer", names, &nnames, &flg));
  if (flg) {
    PetscErrorCode ierr = 0; /* after an error the remaining names are still freed */
    for (PetscInt i = 0; i < nnames; i++) {
      if (!ierr) ierr = NNResidualAddNamed(l, names[i]);
      PetscCall(PetscFree(names[i]));
    }
    PetscCall(ierr);
  }
  PetscOptionsHeadEnd();
  for (PetscInt c = 0; c < l->nchildren; c++) PetscCall(NNLayerSetFromOptions(l->children[c]));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNResidualDestroyVecs(NNLayer_Residual *r)
{
  PetscFunctionBegin;
  for (PetscInt c = 0; c < r->nvec; c++) {
    PetscCall(VecDestroy(&r->out[c]));
    PetscCall(VecDestroy(&r->dout[c]));
  }
  PetscCall(PetscFree2(r->out, r->dout));
  r->nvec = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_Residual(NNLayer l)
{
  PetscFunctionBegin;
  PetscCall(NNResidualDestroyVecs((NNLayer_Residual *)l->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerSetUp_Residual(NNLayer l)
{
  NNShape   s = l->inshape;
  NNLayer   last;
  PetscBool same;

  PetscFunctionBegin;
  PetscCheck(l->nchildren > 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Residual layer %s has no inner layers: give -%slayers name1,name2,... or call NNLayerResidualAddLayer()", ((PetscObject)l)->name, NNLayerPrefix(l));
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch = l->children[c];
    if (!ch->rng) ch->rng = l->rng;
    ch->inputname = c ? ((PetscObject)l->children[c - 1])->name : l->inputname;
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
  PetscFunctionReturn(0);
}

/* the block's output (last child's DM dout) must have the layout of its input (DM din; NULL: sequential) */
static PetscErrorCode NNResidualCheckLayout(NNLayer l, DM din, DM dout)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)l);
  NNLayer         last = l->children[l->nchildren - 1];
  const char     *name = ((PetscObject)l)->name, *lname = ((PetscObject)last)->name, *ltype = ((PetscObject)last)->type_name;
  PetscInt        dim[2], M[2][3], r[2][3], dof[2];
  const PetscInt *o[2][3];
  PetscBool       same, isda[2];

  PetscFunctionBegin;
  if (!din && !dout) PetscFunctionReturn(0);
  PetscCheck(din && dout, comm, PETSC_ERR_ARG_WRONG, "Residual layer %s: its input%s%s is %s but its last inner layer %s (%s) outputs %s; y = x + block(x) needs both in the same layout", name, l->inputname ? " from " : "", l->inputname ? l->inputname : "", din ? "a spatial (DMDA) activation" : "a sequential activation", lname, ltype, dout ? "a spatial (DMDA) one" : "a sequential one");
  PetscCall(PetscObjectTypeCompare((PetscObject)din, DMDA, &isda[0]));
  PetscCall(PetscObjectTypeCompare((PetscObject)dout, DMDA, &isda[1]));
  PetscCheck(isda[0] && isda[1], comm, PETSC_ERR_SUP, "Residual layer %s: only DMDA spatial activations are supported (input DM %s, output DM of %s %s)", name, ((PetscObject)din)->type_name, lname, ((PetscObject)dout)->type_name);
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(DMDAGetInfo(k ? dout : din, &dim[k], &M[k][0], &M[k][1], &M[k][2], &r[k][0], &r[k][1], &r[k][2], &dof[k], NULL, NULL, NULL, NULL, NULL));
    PetscCall(DMDAGetOwnershipRanges(k ? dout : din, &o[k][0], &o[k][1], &o[k][2]));
  }
  same = (PetscBool)(dim[0] == dim[1] && dof[0] == dof[1]);
  for (PetscInt a = 0; a < dim[0] && same; a++) {
    same = (PetscBool)(M[0][a] == M[1][a] && r[0][a] == r[1][a]);
    for (PetscInt i = 0; i < r[0][a] && same; i++) same = (PetscBool)(o[0][a][i] == o[1][a][i]);
  }
  PetscCheck(same, comm, PETSC_ERR_ARG_WRONG,
             "Residual layer %s: its last inner layer %s (%s) outputs a %" PetscInt_FMT "-d DMDA %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (dof %" PetscInt_FMT ", rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ") but the residual input is a %" PetscInt_FMT "-d DMDA %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (dof %" PetscInt_FMT ", rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT "), or their ownership ranges differ; y = x + block(x) needs the same grid, channels and decomposition",
             name, lname, ltype, dim[1], M[1][0], M[1][1], M[1][2], dof[1], r[1][0], r[1][1], r[1][2], dim[0], M[0][0], M[0][1], M[0][2], dof[0], r[0][0], r[0][1], r[0][2]);
  PetscFunctionReturn(0);
}

/* the children's activation Vecs for an input in the layout of dmin (NULL: sequential), wired as NNSetUp() wires a network */
static PetscErrorCode NNResidualCreateVecs(NNLayer l, DM dmin)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  DM                dm = dmin;

  PetscFunctionBegin;
  PetscCall(NNResidualDestroyVecs(r));
  PetscCall(PetscCalloc2(l->nchildren, &r->out, l->nchildren, &r->dout));
  r->nvec = l->nchildren;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(NNLayerSetInputDM(l->children[c], dm));
    PetscCall(NNLayerCreateOutputVec(l->children[c], &r->out[c]));
    if (c < l->nchildren - 1) PetscCall(VecDuplicate(r->out[c], &r->dout[c])); /* the last child's output gradient is dy itself */
    PetscCall(VecGetDM(r->out[c], &dm));
  }
  PetscCall(NNResidualCheckLayout(l, dmin, dm));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerCreateOutputVec_Residual(NNLayer l, Vec *y)
{
  DM dm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCall(NNResidualCreateVecs(l, dm));
  if (dm) PetscCall(DMCreateGlobalVector(dm, y));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), y));
  PetscFunctionReturn(0);
}

/* the children's Vecs, made on first use when the layer runs outside a network (no NNLayerCreateOutputVec()) */
static PetscErrorCode NNResidualGetVecs(NNLayer l, Vec x, PetscBool *spatial)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  DM                dm;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  if (!dm) PetscCall(VecGetDM(x, &dm));
  if (!r->nvec) PetscCall(NNResidualCreateVecs(l, dm));
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
  for (PetscInt c = 0; c < nc; c++) PetscCall(NNLayerForward(l->children[c], n, c ? r->out[c - 1] : x, r->out[c]));
  if (spatial) PetscCall(VecWAXPY(y, 1.0, r->out[nc - 1], x)); /* the whole local array: slots s >= n included */
  else {
    PetscInt           N = n * NNShapeSize(&l->inshape);
    const PetscScalar *xa, *h;
    PetscScalar       *ya;
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayRead(r->out[nc - 1], &h));
    PetscCall(VecGetArrayWrite(y, &ya));
    for (PetscInt i = 0; i < N; i++) ya[i] = xa[i] + h[i];
    PetscCall(VecRestoreArrayWrite(y, &ya));
    PetscCall(VecRestoreArrayRead(r->out[nc - 1], &h));
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
    Vec in   = c ? r->out[c - 1] : x;
    Vec dout = c == nc - 1 ? dy : r->dout[c];
    Vec din  = c ? r->dout[c - 1] : dx;
    PetscCall(NNLayerBackward(l->children[c], n, in, r->out[c], dout, din));
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
