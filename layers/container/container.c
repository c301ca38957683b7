/*
   What the container layers share: a layer whose children run in order as one block, wired as
   NNSetUp() wires a network. Used by "residual" (y = x + block(x), layers/container/residual.c) and
   "ode" (du/dt = f(u), f being the block; ts/ode).

   The children are ordinary layers: -<prefix>layers a,b,c (or the type's AddLayer function) creates
   them with options prefix "<base><child>_", where <base> is the network's prefix (the container's
   prefix without its own "<name>_"), so a child is configured like a top-level layer (-fc3_units 64).
   Each child gets the DM of its input (NNLayerSetInputDM(); NULL for sequential activations) and makes
   its own output Vec (NNLayerCreateOutputVec()); the last child's output must have the layout of the
   container's input. Error messages start with the container's kind ("Residual layer", "ODE block").
*/
#include <petnn/private/containerimpl.h>

const char *NNLayerContainerPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

/* appends a child named name of type type (NULL: from -<name>_type); kind names the container in errors */
PetscErrorCode NNLayerContainerAddLayer(NNLayer l, const char kind[], NNLayerType type, const char name[], NNLayer *inner)
{
  char      base[256] = "", suffix[256];
  size_t    plen, slen;
  NNLayer   child, *more;
  PetscBool match;

  PetscFunctionBegin;
  PetscCheck(name, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_NULL, "%s %s: the inner layer needs a name", kind, ((PetscObject)l)->name);
  PetscCall(PetscStrcmp(name, ((PetscObject)l)->name, &match));
  PetscCheck(!match, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "%s %s cannot contain a layer of the same name; layer names must be unique", kind, name);
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(PetscStrcmp(name, ((PetscObject)l->children[c])->name, &match));
    PetscCheck(!match, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "%s %s already has an inner layer named %s; layer names must be unique", kind, ((PetscObject)l)->name, name);
  }
  /* the network-level prefix: our own prefix without the trailing "<name>_" */
  PetscCall(PetscStrncpy(base, NNLayerContainerPrefix(l), sizeof(base)));
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

/* -<prefix>layers a,b,c inside the container's options section: creates the children not made yet */
/* adds the child named name unless the container has it already */
static PetscErrorCode NNLayerContainerAddNamed(NNLayer l, const char kind[], const char name[])
{
  PetscBool exists = PETSC_FALSE;

  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren && !exists; c++) PetscCall(PetscStrcmp(name, ((PetscObject)l->children[c])->name, &exists));
  if (!exists) PetscCall(NNLayerContainerAddLayer(l, kind, NULL, name, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerContainerSetFromOptions(NNLayer l, const char kind[], const char help[], const char man[], NNOptionItems PetscOptionsObject)
{
  char          *names[64];
  PetscInt       nnames = 64;
  PetscBool      flg;
  PetscErrorCode ierr = 0; /* after an error the remaining names are still freed */

  PetscFunctionBegin;
  PetscCall(PetscOptionsStringArray("-layers", help, man, names, &nnames, &flg));
  if (!flg) PetscFunctionReturn(0);
  for (PetscInt i = 0; i < nnames; i++) {
    if (!ierr) ierr = NNLayerContainerAddNamed(l, kind, names[i]);
    PetscCall(PetscFree(names[i]));
  }
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* sets the children up in order from input shape *s; on return *s is the last child's output shape */
PetscErrorCode NNLayerContainerSetUpChildren(NNLayer l, NNShape *s)
{
  PetscFunctionBegin;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch = l->children[c];
    if (!ch->rng) ch->rng = l->rng;
    ch->inputname = c ? ((PetscObject)l->children[c - 1])->name : l->inputname;
    PetscCall(NNLayerSetBatchCapacity(ch, l->nbatch));
    PetscCall(NNLayerSetInputShape(ch, s));
    PetscCall(NNLayerSetTraining(ch, l->training));
    PetscCall(NNLayerSetUp(ch));
    *s = ch->outshape;
  }
  PetscFunctionReturn(0);
}

PetscBool NNLayerContainerSameShape(const NNShape *a, const NNShape *b)
{
  PetscBool same = (PetscBool)(a->ndim == b->ndim);

  for (PetscInt i = 0; i < a->ndim && same; i++) same = (PetscBool)(a->dim[i] == b->dim[i]);
  return same;
}

/* the last child's output (DM dout) must have the layout of the container's input (DM din; NULL: sequential);
   eq names the equation that needs it in errors ("y = x + block(x)") */
PetscErrorCode NNLayerContainerCheckLayout(NNLayer l, const char kind[], const char eq[], DM din, DM dout)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)l);
  NNLayer         last = l->children[l->nchildren - 1];
  const char     *name = ((PetscObject)l)->name, *lname = ((PetscObject)last)->name, *ltype = ((PetscObject)last)->type_name;
  PetscInt        dim[2], M[2][3], r[2][3], dof[2];
  const PetscInt *o[2][3];
  PetscBool       same, isda[2];

  PetscFunctionBegin;
  if (!din && !dout) PetscFunctionReturn(0);
  PetscCheck(din && dout, comm, PETSC_ERR_ARG_WRONG, "%s %s: its input%s%s is %s but its last inner layer %s (%s) outputs %s; %s needs both in the same layout", kind, name, l->inputname ? " from " : "", l->inputname ? l->inputname : "", din ? "a spatial (DMDA) activation" : "a sequential activation", lname, ltype, dout ? "a spatial (DMDA) one" : "a sequential one", eq);
  PetscCall(PetscObjectTypeCompare((PetscObject)din, DMDA, &isda[0]));
  PetscCall(PetscObjectTypeCompare((PetscObject)dout, DMDA, &isda[1]));
  PetscCheck(isda[0] && isda[1], comm, PETSC_ERR_SUP, "%s %s: only DMDA spatial activations are supported (input DM %s, output DM of %s %s)", kind, name, ((PetscObject)din)->type_name, lname, ((PetscObject)dout)->type_name);
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
             "%s %s: its last inner layer %s (%s) outputs a %" PetscInt_FMT "-d DMDA %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (dof %" PetscInt_FMT ", rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ") but the input is a %" PetscInt_FMT "-d DMDA %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT " (dof %" PetscInt_FMT ", rank grid %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT "), or their ownership ranges differ; %s needs the same grid, channels and decomposition",
             kind, name, lname, ltype, dim[1], M[1][0], M[1][1], M[1][2], dof[1], r[1][0], r[1][1], r[1][2], dim[0], M[0][0], M[0][1], M[0][2], dof[0], r[0][0], r[0][1], r[0][2], eq);
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerContainerDestroyVecs(NNLayerContainer *v)
{
  PetscFunctionBegin;
  for (PetscInt c = 0; c < v->nvec; c++) {
    PetscCall(VecDestroy(&v->out[c]));
    PetscCall(VecDestroy(&v->dout[c]));
  }
  PetscCall(PetscFree2(v->out, v->dout));
  v->nvec = 0;
  PetscFunctionReturn(0);
}

/* the children's activation Vecs for an input in the layout of dmin (NULL: sequential); *dmout: the last child's DM */
PetscErrorCode NNLayerContainerCreateVecs(NNLayer l, NNLayerContainer *v, DM dmin, DM *dmout)
{
  DM dm = dmin;

  PetscFunctionBegin;
  PetscCall(NNLayerContainerDestroyVecs(v));
  PetscCall(PetscCalloc2(l->nchildren, &v->out, l->nchildren, &v->dout));
  v->nvec = l->nchildren;
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(NNLayerSetInputDM(l->children[c], dm));
    PetscCall(NNLayerCreateOutputVec(l->children[c], &v->out[c]));
    if (c < l->nchildren - 1) PetscCall(VecDuplicate(v->out[c], &v->dout[c])); /* the last child's output gradient is the block's */
    PetscCall(VecGetDM(v->out[c], &dm));
  }
  *dmout = dm;
  PetscFunctionReturn(0);
}

/* the DM of the container's input: the one set up for it, else x's (a container run outside a network) */
PetscErrorCode NNLayerContainerGetInputDM(NNLayer l, Vec x, DM *dm)
{
  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, dm));
  if (!*dm && x) PetscCall(VecGetDM(x, dm));
  PetscFunctionReturn(0);
}

/* the container's output Vec: on the input's DMDA, or sequential with nbatch samples of the output shape */
PetscErrorCode NNLayerContainerCreateOutputVec(NNLayer l, DM dm, Vec *y)
{
  PetscFunctionBegin;
  if (dm) PetscCall(DMCreateGlobalVector(dm, y));
  else PetscCall(VecCreateSeq(PETSC_COMM_SELF, l->nbatch * NNShapeSize(&l->outshape), y));
  PetscFunctionReturn(0);
}
