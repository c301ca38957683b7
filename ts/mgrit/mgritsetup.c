/*
   NNMGRIT set-up: the ownership of the steps, the levels in use, and the time grids (forward and adjoint) with
   the pool of coarse-level Vecs they share. Rank r owns points (a, b] of each level (mgrit.c explains the
   numbering); the adjoint grid is the forward one reversed.
*/
#include <petnn/private/mgritimpl.h>

/* owned points (a, b] of rank r on the level with the given stride */
static void NNMGRITRankRange(NNMGRIT mg, PetscBool adjoint, PetscInt stride, PetscMPIInt r, PetscInt *a, PetscInt *b)
{
  PetscInt fa = mg->range[r], fb = mg->range[r + 1];

  if (adjoint) {
    PetscInt t = fa;
    fa         = mg->N - fb;
    fb         = mg->N - t;
  }
  *a = fa / stride;
  *b = fb / stride;
}

PetscMPIInt NNMGRITOwner(NNMGRIT mg, PetscBool adjoint, PetscInt stride, PetscInt p)
{
  for (PetscMPIInt r = 0; r < mg->size; r++) {
    PetscInt a, b;
    NNMGRITRankRange(mg, adjoint, stride, r, &a, &b);
    if (a < p && p <= b) return r;
  }
  return -1;
}

/* the coarse levels' u and g: enough for this rank's points in either time direction */
PetscErrorCode NNMGRITPoolSetUp(NNMGRIT mg, PetscInt nlevels)
{
  PetscInt stride = mg->cf;

  PetscFunctionBegin;
  for (PetscInt l = 1; l < nlevels; l++, stride *= mg->cf) {
    PetscInt a, b, n;

    NNMGRITRankRange(mg, PETSC_FALSE, stride, mg->rank, &a, &b);
    n = b - a;
    NNMGRITRankRange(mg, PETSC_TRUE, stride, mg->rank, &a, &b);
    n = PetscMax(n, b - a);
    mg->npool[l] = n;
    if (n) PetscCall(VecDuplicateVecs(mg->tmpl, 2 * n, &mg->pool[l]));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNMGRITPoolReset(NNMGRIT mg)
{
  PetscFunctionBegin;
  for (PetscInt l = 0; l < NN_MGRIT_MAX_LEVELS; l++) {
    if (mg->pool[l]) PetscCall(VecDestroyVecs(2 * mg->npool[l], &mg->pool[l]));
    mg->npool[l] = 0;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNMGRITGridSetUp(NNMGRIT mg, NNMGRITGrid *grid, PetscBool adjoint)
{
  PetscInt N = mg->N, stride = 1;

  PetscFunctionBegin;
  grid->adjoint = adjoint;
  grid->valid   = PETSC_FALSE;
  for (PetscInt l = 0; l < grid->nlevels; l++) {
    NNMGRITLevel *lev = &grid->level[l];

    lev->N      = N;
    lev->stride = stride;
    NNMGRITRankRange(mg, adjoint, stride, mg->rank, &lev->a, &lev->b);
    lev->left    = (lev->a < lev->b && lev->a > 0) ? NNMGRITOwner(mg, adjoint, stride, lev->a) : -1;
    lev->right   = (lev->a < lev->b && lev->b < N) ? NNMGRITOwner(mg, adjoint, stride, lev->b + 1) : -1;
    lev->tag     = (PetscMPIInt)((adjoint ? NN_MGRIT_MAX_LEVELS : 0) + l + 1);
    lev->sendreq = MPI_REQUEST_NULL;
    if (lev->a < lev->b) {
      if (l == 0) PetscCall(VecDuplicateVecs(mg->tmpl, lev->b - lev->a, &lev->u));
      else {
        PetscCheck(lev->b - lev->a <= mg->npool[l], PETSC_COMM_SELF, PETSC_ERR_PLIB, "MGRIT level %" PetscInt_FMT " pool too small", l);
        lev->u = mg->pool[l];
        lev->g = mg->pool[l] + mg->npool[l];
      }
      PetscCall(VecDuplicate(mg->tmpl, &lev->ghost));
    }
    if (lev->right >= 0) PetscCall(PetscMalloc1(mg->nloc, &lev->sendbuf));
    N /= mg->cf;
    stride *= mg->cf;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNMGRITGridReset(NNMGRIT mg, NNMGRITGrid *grid)
{
  PetscFunctionBegin;
  (void)mg;
  for (PetscInt l = 0; l < NN_MGRIT_MAX_LEVELS; l++) {
    NNMGRITLevel *lev = &grid->level[l];

    if (lev->sendreq != MPI_REQUEST_NULL && lev->sendbuf) PetscCallMPI(MPI_Wait(&lev->sendreq, MPI_STATUS_IGNORE));
    if (l == 0) { /* coarse levels borrow from the pool */
      if (lev->u) PetscCall(VecDestroyVecs(lev->b - lev->a, &lev->u));
      if (lev->g) PetscCall(VecDestroyVecs(lev->b - lev->a, &lev->g));
    }
    lev->u = lev->g = NULL;
    PetscCall(VecDestroy(&lev->ghost));
    PetscCall(PetscFree(lev->sendbuf));
    lev->N = lev->a = lev->b = 0;
    lev->sendreq            = MPI_REQUEST_NULL;
  }
  grid->valid = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* frees everything NNMGRITSetUp() made; the iterates (and warm start) are lost */
PetscErrorCode NNMGRITReset(NNMGRIT mg)
{
  PetscFunctionBegin;
  PetscCall(NNMGRITGridReset(mg, &mg->fwd));
  PetscCall(NNMGRITGridReset(mg, &mg->adj));
  PetscCall(NNMGRITPoolReset(mg));
  PetscCall(VecDestroy(&mg->work));
  PetscCall(VecDestroy(&mg->work2));
  PetscCall(PetscFree(mg->range));
  mg->setupcalled = PETSC_FALSE;
  mg->fwddone     = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* levels in use: coarsen while a coarse grid keeps at least one step */
static PetscInt NNMGRITNumLevels(NNMGRIT mg)
{
  PetscInt L = 1, N = mg->N;

  while (L < mg->maxlevels && N / mg->cf >= 1) {
    N /= mg->cf;
    L++;
  }
  return L;
}

/*@
   NNMGRITSetUp - splits the steps over the ranks and allocates the time grids

   Collective

   Notes:
   Called by NNMGRITSolve(); needs NNMGRITSetTimeSpan(), a propagator and a state template.

   Level: advanced
@*/
PetscErrorCode NNMGRITSetUp(NNMGRIT mg)
{
  MPI_Comm comm;
  PetscInt L, P;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  if (mg->setupcalled) PetscFunctionReturn(0);
  comm = PetscObjectComm((PetscObject)mg);
  PetscCheck(mg->N > 0, comm, PETSC_ERR_ORDER, "Call NNMGRITSetTimeSpan() before setting MGRIT up");
  PetscCheck(mg->tmpl, comm, PETSC_ERR_ORDER, "MGRIT has no state layout: call NNMGRITSetStateTemplate() (or NNMGRITSolve(), which uses its initial state)");
  PetscCheck(mg->step, comm, PETSC_ERR_ORDER, "MGRIT has no propagator: call NNMGRITSetStep() or NNMGRITSetTS()");
  L = NNMGRITNumLevels(mg);
  P = mg->size;
  PetscCall(PetscMalloc1(P + 1, &mg->range));
  if (mg->userrange) {
    PetscInt *ks, *ke, mine[2] = {mg->kstart, mg->kend};

    PetscCall(PetscMalloc2(P, &ks, P, &ke));
    PetscCallMPI(MPI_Allgather(&mine[0], 1, MPIU_INT, ks, 1, MPIU_INT, comm));
    PetscCallMPI(MPI_Allgather(&mine[1], 1, MPIU_INT, ke, 1, MPIU_INT, comm));
    for (PetscInt r = 0; r < P; r++) {
      PetscCheck(ks[r] == (r ? ke[r - 1] : 0), comm, PETSC_ERR_ARG_INCOMP, "MGRIT ownership ranges must be contiguous in rank order from step 0: rank %" PetscInt_FMT " starts at %" PetscInt_FMT ", expected %" PetscInt_FMT, r, ks[r], r ? ke[r - 1] : 0);
      mg->range[r] = ks[r];
    }
    PetscCheck(ke[P - 1] == mg->N, comm, PETSC_ERR_ARG_INCOMP, "MGRIT ownership ranges end at step %" PetscInt_FMT " but there are N = %" PetscInt_FMT " steps", ke[P - 1], mg->N);
    PetscCall(PetscFree2(ks, ke));
  } else {
    PetscInt align = 1, nb;

    for (PetscInt l = 1; l < L; l++)
      if (mg->N / P >= align * mg->cf) align *= mg->cf;
    nb = mg->N / align;
    for (PetscInt r = 0; r < P; r++) mg->range[r] = align * ((r * nb + P / 2) / P);
  }
  mg->range[P] = mg->N;
  PetscCall(VecGetLocalSize(mg->tmpl, &mg->nloc));
  PetscCall(VecDuplicate(mg->tmpl, &mg->work));
  PetscCall(VecDuplicate(mg->tmpl, &mg->work2));
  mg->fwd.nlevels = mg->adj.nlevels = L;
  PetscCall(NNMGRITPoolSetUp(mg, L));
  PetscCall(NNMGRITGridSetUp(mg, &mg->fwd, PETSC_FALSE));
  mg->setupcalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}
