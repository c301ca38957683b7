/*
   The residual layer in single precision (-nn_precision single): y = x + block(x) on float activations, the children
   run by their own float passes (NNLayerForwardSingle() / NNLayerBackwardSingle()) on float copies of their outputs
   and output gradients, kept by the layer. The block gets these passes when every child has float passes of its own
   (NNLayerHasSinglePasses(): nested residual blocks too); otherwise the network runs the whole block on its double
   passes on converted activations, as before.

   The skip connection adds in float, over the layout the double passes add: the whole local array of a spatial (DMDA)
   activation, the first n samples of a sequential one. A child's float parameter copy and gradient are its slices of
   the block's (l->stheta, l->sdtheta; the children's parameters follow the block's).
*/
#include "residual.h"

/* the float outputs and output gradients of the children, one pair per child, made for the children's Vecs */
static PetscErrorCode NNResidualSingleArrays(NNLayer l)
{
  NNLayer_Residual *r  = (NNLayer_Residual *)l->data;
  PetscInt          nc = l->nchildren, off = 0;

  PetscFunctionBegin;
  PetscCheck(r->v.nvec == nc, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Residual layer %s: create its output Vec (NNSetUp() does) before its single-precision passes", ((PetscObject)l)->name);
  if (r->single.len) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(nc, &r->single.len));
  for (PetscInt c = 0; c < nc; c++) {
    PetscCall(VecGetLocalSize(r->v.out[c], &r->single.len[c]));
    off += r->single.len[c];
  }
  PetscCall(PetscCalloc1(2 * (size_t)off, &r->single.out)); /* outputs, then output gradients, in child order */
  PetscFunctionReturn(0);
}

PetscErrorCode NNResidualSingleReset(NNLayer l)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(r->single.len));
  PetscCall(PetscFree(r->single.out));
  PetscFunctionReturn(0);
}

/* child c's float output (grad: its output gradient) */
static float *NNResidualSingleOut(NNLayer l, PetscInt c, PetscBool grad)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  float            *p = r->single.out;

  if (grad)
    for (PetscInt d = 0; d < l->nchildren; d++) p += r->single.len[d];
  for (PetscInt d = 0; d < c; d++) p += r->single.len[d];
  return p;
}

/* the children's float parameter copy and gradient: their slices of the block's */
static void NNResidualSinglePointChildren(NNLayer l)
{
  for (PetscInt c = 0; c < l->nchildren; c++) {
    NNLayer ch  = l->children[c];
    ch->stheta  = l->stheta ? l->stheta + (ch->poff - l->poff) : NULL;
    ch->sdtheta = l->sdtheta ? l->sdtheta + (ch->poff - l->poff) : NULL;
  }
}

/* the entries the skip connection adds: the whole local array of a spatial activation, the first n samples else */
static PetscErrorCode NNResidualSingleSkipLength(NNLayer l, PetscInt n, PetscInt *m)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  DM                dm;

  PetscFunctionBegin;
  PetscCall(VecGetDM(r->v.out[l->nchildren - 1], &dm));
  *m = dm ? r->single.len[l->nchildren - 1] : n * NNShapeSize(&l->inshape);
  PetscFunctionReturn(0);
}

/* the Vec whose layout child c's input has (the last child's output has the block input's layout) */
static Vec NNResidualSingleInputLayout(NNLayer l, PetscInt c)
{
  NNLayer_Residual *r = (NNLayer_Residual *)l->data;
  return r->v.out[c ? c - 1 : l->nchildren - 1];
}

PetscErrorCode NNLayerForwardSingle_Residual(NNLayer l, PetscInt n, const float *x, float *y)
{
  PetscInt     nc = l->nchildren, m = 0;
  const float *in = x, *h;

  PetscFunctionBegin;
  PetscCall(NNResidualSingleArrays(l));
  NNResidualSinglePointChildren(l);
  for (PetscInt c = 0; c < nc; c++) {
    float *out = NNResidualSingleOut(l, c, PETSC_FALSE);
    PetscCall(NNLayerForwardSingle(l->children[c], n, NNResidualSingleInputLayout(l, c), in, out));
    in = out;
  }
  h = in;
  PetscCall(NNResidualSingleSkipLength(l, n, &m));
  for (PetscInt i = 0; i < m; i++) y[i] = x[i] + h[i];
  PetscCall(PetscLogFlops((PetscLogDouble)m));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardSingle_Residual(NNLayer l, PetscInt n, const float *x, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  PetscInt nc = l->nchildren, m = 0;

  PetscFunctionBegin;
  PetscCall(NNResidualSingleArrays(l));
  NNResidualSinglePointChildren(l);
  /* the block's output gradient is dy; the first child writes the block's input gradient into dx */
  for (PetscInt c = nc - 1; c >= 0; c--) {
    const float *in   = c ? NNResidualSingleOut(l, c - 1, PETSC_FALSE) : x;
    const float *dout = c == nc - 1 ? dy : NNResidualSingleOut(l, c, PETSC_TRUE);
    float       *din  = c ? NNResidualSingleOut(l, c - 1, PETSC_TRUE) : dx;
    PetscCall(NNLayerBackwardSingle(l->children[c], n, NNResidualSingleInputLayout(l, c), in, NNResidualSingleOut(l, c, PETSC_FALSE), dout, din));
  }
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNResidualSingleSkipLength(l, n, &m));
  for (PetscInt i = 0; i < m; i++) dx[i] += dy[i];
  PetscCall(PetscLogFlops((PetscLogDouble)m));
  PetscFunctionReturn(0);
}
