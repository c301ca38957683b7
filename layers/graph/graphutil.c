/* Shared helpers of the concat, add and split layers (layers/graph/graph.h). */
#include "graph.h"

PetscErrorCode NNGraphRows(NNLayer l, Vec v, const NNShape *s, PetscInt n, PetscInt *rows, PetscInt *block)
{
  DM       dm;
  PetscInt m;

  PetscFunctionBegin;
  PetscCall(VecGetDM(v, &dm));
  if (!dm) {
    *rows  = n;
    *block = NNShapeSize(s);
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetLocalSize(v, &m));
  *block = s->dim[0];
  *rows  = *block ? m / *block : 0;
  PetscCheck(*rows * *block == m, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Layer %s: a spatial activation of %" PetscInt_FMT " local entries is not made of %" PetscInt_FMT "-channel slots", ((PetscObject)l)->name, m, *block);
  PetscFunctionReturn(0);
}

PetscErrorCode NNGraphShapeError(NNLayer l, PetscInt k, const char what[])
{
  char s0[64], sk[64];

  PetscFunctionBegin;
  PetscCall(NNShapeToString(&l->graph.inshapes[0], sizeof(s0), s0));
  PetscCall(NNShapeToString(&l->graph.inshapes[k], sizeof(sk), sk));
  SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Layer %s (%s): %s produces shape %s but %s produces shape %s; %s", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->graph.innames[0], s0, l->graph.innames[k], sk, what);
}

/* "DMDA 16 x 16, rank grid 2 x 1, x ranges 8,8 y ranges 16" or "sequential" */
static PetscErrorCode NNGraphLayoutString(DM dm, size_t len, char str[])
{
  PetscInt        dim, M[3], r[3];
  const PetscInt *lr[3];
  char            buf[32];

  PetscFunctionBegin;
  if (!dm) {
    PetscCall(PetscStrncpy(str, "the sequential layout", len));
    PetscFunctionReturn(0);
  }
  PetscCall(DMDAGetInfo(dm, &dim, &M[0], &M[1], &M[2], &r[0], &r[1], &r[2], NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetOwnershipRanges(dm, &lr[0], &lr[1], &lr[2]));
  PetscCall(PetscSNPrintf(str, len, "a DMDA of %" PetscInt_FMT " x %" PetscInt_FMT, M[0], M[1]));
  if (dim == 3) PetscCall(PetscSNPrintf(buf, sizeof(buf), " x %" PetscInt_FMT, M[2]));
  if (dim == 3) PetscCall(PetscStrlcat(str, buf, len));
  PetscCall(PetscStrlcat(str, " points with ownership ranges", len));
  for (PetscInt a = 0; a < dim; a++) {
    PetscCall(PetscStrlcat(str, a ? " / " : " ", len));
    for (PetscInt i = 0; i < r[a]; i++) {
      PetscCall(PetscSNPrintf(buf, sizeof(buf), "%s%" PetscInt_FMT, i ? "," : "", lr[a][i]));
      PetscCall(PetscStrlcat(str, buf, len));
    }
  }
  PetscFunctionReturn(0);
}

static PetscBool NNGraphSameGrid(DM a, DM b)
{
  PetscInt        da, db, Ma[3], Mb[3], ra[3], rb[3];
  const PetscInt *la[3], *lb[3];

  if (!a || !b) return (PetscBool)(!a && !b);
  if (DMDAGetInfo(a, &da, &Ma[0], &Ma[1], &Ma[2], &ra[0], &ra[1], &ra[2], NULL, NULL, NULL, NULL, NULL, NULL)) return PETSC_FALSE;
  if (DMDAGetInfo(b, &db, &Mb[0], &Mb[1], &Mb[2], &rb[0], &rb[1], &rb[2], NULL, NULL, NULL, NULL, NULL, NULL)) return PETSC_FALSE;
  if (da != db) return PETSC_FALSE;
  if (DMDAGetOwnershipRanges(a, &la[0], &la[1], &la[2]) || DMDAGetOwnershipRanges(b, &lb[0], &lb[1], &lb[2])) return PETSC_FALSE;
  for (PetscInt d = 0; d < da; d++) {
    if (Ma[d] != Mb[d] || ra[d] != rb[d]) return PETSC_FALSE;
    for (PetscInt i = 0; i < ra[d]; i++)
      if (la[d][i] != lb[d][i]) return PETSC_FALSE;
  }
  return PETSC_TRUE;
}

PetscErrorCode NNGraphCheckLayouts(NNLayer l)
{
  PetscFunctionBegin;
  for (PetscInt k = 1; k < l->graph.nin; k++) {
    char s0[64], sk[64], L0[256], Lk[256];
    if (NNGraphSameGrid(l->graph.indms[0], l->graph.indms[k])) continue;
    PetscCall(NNShapeToString(&l->graph.inshapes[0], sizeof(s0), s0));
    PetscCall(NNShapeToString(&l->graph.inshapes[k], sizeof(sk), sk));
    PetscCall(NNGraphLayoutString(l->graph.indms[0], sizeof(L0), L0));
    PetscCall(NNGraphLayoutString(l->graph.indms[k], sizeof(Lk), Lk));
    SETERRQ(PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_INCOMP, "Layer %s (%s): its input %s (shape %s) lies on %s but its input %s (shape %s) on %s; the inputs need the same layout (the same grid and ownership ranges)", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->graph.innames[0], s0, L0, l->graph.innames[k], sk, Lk);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNGraphCreateSpatialLike(NNLayer l, DM dm, PetscInt C, DM *da, Vec *y)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialCreateLike(dm, l->nbatch * C, 0, da));
  PetscCall(DMCreateGlobalVector(*da, y));
  PetscFunctionReturn(0);
}
