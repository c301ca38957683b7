/*
   The repartition between a DMDA's block layout and FFTW MPI's slab layout (layers/spectral/spectralconv.h).

   A linear operator with an exact adjoint, in DistDL's sense: a PetscSF built once whose roots are the
   DMDA's owned pixels (the rank's block, x fastest) and whose leaves are the pixels of the rank's slab
   in FFTW's padded in-place array (rows [r0, r0 + nr) of the slowest FFT axis, the last axis padded to
   2*(W/2+1)). Every pixel is one leaf of exactly one root, so the forward map (block -> slab,
   PetscSFBcast) is a permutation and its adjoint (slab -> block, PetscSFReduce with MPI_SUM) is its
   inverse. A pixel moves as one run of D values (an MPI contiguous type), so the same graph serves
   activations of any channel count, and of either precision: the float passes (-nn_precision single,
   spectralconv_single.c) move runs of floats through NNFFTRepartitionForwardSingle() and
   NNFFTRepartitionAdjointSingle(), whose sum is an MPI_Op of our own (PETSc 3.18's PetscSF cannot apply MPI_SUM
   to a derived datatype of floats).
*/
#include "spectralconv.h"

PetscLogEvent    NN_SpectralFFT, NN_SpectralRepartition;
static PetscBool NNSpectralEventsRegistered = PETSC_FALSE;

static PetscErrorCode NNSpectralEventsFinalize(void)
{
  PetscFunctionBegin;
  NNSpectralEventsRegistered = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* -log_view: "NNSpectralFFT" (the transforms) and "NNSpectralRepart" (block <-> slab moves) */
static PetscErrorCode NNSpectralRegisterEvents(void)
{
  PetscFunctionBegin;
  if (NNSpectralEventsRegistered) PetscFunctionReturn(0);
  NNSpectralEventsRegistered = PETSC_TRUE;
  PetscCall(NNLogEventRegister("NNSpectralFFT", NNLAYER_CLASSID, &NN_SpectralFFT));
  PetscCall(NNLogEventRegister("NNSpectralRepart", NNLAYER_CLASSID, &NN_SpectralRepartition));
  PetscCall(PetscRegisterFinalize(NNSpectralEventsFinalize));
  PetscFunctionReturn(0);
}

/* owner index and start of every coordinate along one DMDA axis */
static PetscErrorCode NNFFTAxisOwners(PetscInt N, PetscInt nr, const PetscInt l[], PetscInt **owner, PetscInt **start)
{
  PetscInt c = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(N, owner, N, start));
  for (PetscInt r = 0, s = 0; r < nr; s += l[r], r++)
    for (PetscInt i = 0; i < l[r]; i++, c++) {
      (*owner)[c] = r;
      (*start)[c] = s;
    }
  PetscFunctionReturn(0);
}

/*@C
   NNFFTRepartitionCreate - builds the repartition between a DMDA's blocks and FFTW MPI's slabs

   Collective

   Input Parameters:
+  da - a 2-d or 3-d DMDA (its dof does not matter: pixels move as runs given to each call)
.  r0 - first row of the slowest FFT axis (y in 2-d, z in 3-d) that this rank's slab holds
-  nr - rows of the slab (may be 0)

   Output Parameter:
.  rep - the repartition

   Level: developer

.seealso: `NNFFTRepartitionForward()`, `NNFFTRepartitionAdjoint()`, `NNLAYERSPECTRALCONV2D`
@*/
PetscErrorCode NNFFTRepartitionCreate(DM da, PetscInt r0, PetscInt nr, NNFFTRepartition *rep)
{
  PetscInt        dim, M[3], pr[3], xs, ys, zs, xm, ym, zm, nroots, *ilocal, *own[3], *st[3], wp;
  const PetscInt *lr[3];
  PetscSFNode    *iremote;

  PetscFunctionBegin;
  PetscCall(NNSpectralRegisterEvents());
  PetscCall(PetscMemzero(rep, sizeof(*rep)));
  PetscCall(DMDAGetInfo(da, &dim, &M[0], &M[1], &M[2], &pr[0], &pr[1], &pr[2], NULL, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetOwnershipRanges(da, &lr[0], &lr[1], &lr[2]));
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  if (dim == 2) {
    M[2] = pr[2] = 1;
    lr[2]        = NULL;
  }
  rep->nd = dim;
  for (PetscInt a = 0; a < dim; a++) rep->n[a] = M[dim - 1 - a];
  PetscCheck(r0 >= 0 && nr >= 0 && r0 + nr <= rep->n[0], PetscObjectComm((PetscObject)da), PETSC_ERR_ARG_OUTOFRANGE, "Slab rows [%" PetscInt_FMT ", %" PetscInt_FMT ") outside the grid's %" PetscInt_FMT, r0, r0 + nr, rep->n[0]);
  rep->r0    = r0;
  rep->nr    = nr;
  rep->nslab = nr * M[0] * M[1] * M[2] / rep->n[0];
  nroots     = xm * ym * (dim == 2 ? 1 : zm);
  wp         = 2 * (M[0] / 2 + 1);
  for (PetscInt a = 0; a < 3; a++) {
    PetscInt one = 1;
    PetscCall(NNFFTAxisOwners(M[a], pr[a], a < dim ? lr[a] : &one, &own[a], &st[a]));
  }
  PetscCall(PetscMalloc1(rep->nslab, &ilocal));
  PetscCall(PetscMalloc1(rep->nslab, &iremote));
  /* slab pixel (row, [h,] w): in 2-d row = y; in 3-d row = z and h = y */
  for (PetscInt q = 0, k = 0; q < rep->nslab / M[0]; q++) {
    PetscInt y = dim == 2 ? r0 + q : q % M[1], z = dim == 2 ? 0 : r0 + q / M[1];
    for (PetscInt x = 0; x < M[0]; x++, k++) {
      PetscInt px = own[0][x], py = own[1][y], pz = own[2][z];
      PetscInt bx = lr[0][px], by = lr[1][py];
      ilocal[k]        = q * wp + x;
      iremote[k].rank  = px + pr[0] * (py + pr[1] * pz);
      iremote[k].index = (x - st[0][x]) + bx * ((y - st[1][y]) + by * (z - st[2][z]));
    }
  }
  for (PetscInt a = 0; a < 3; a++) PetscCall(PetscFree2(own[a], st[a]));
  PetscCall(PetscSFCreate(PetscObjectComm((PetscObject)da), &rep->sf));
  PetscCall(PetscSFSetGraph(rep->sf, nroots, rep->nslab, ilocal, PETSC_OWN_POINTER, iremote, PETSC_OWN_POINTER));
  PetscCall(PetscSFSetUp(rep->sf));
  PetscFunctionReturn(0);
}

/*@C
   NNFFTRepartitionDestroy - frees a repartition

   Level: developer

.seealso: `NNFFTRepartitionCreate()`
@*/
PetscErrorCode NNFFTRepartitionDestroy(NNFFTRepartition *rep)
{
  PetscFunctionBegin;
  PetscCall(PetscSFDestroy(&rep->sf));
  PetscCall(PetscMemzero(rep, sizeof(*rep)));
  PetscFunctionReturn(0);
}

/*@C
   NNFFTRepartitionPaddedSize - pixels of the rank's padded slab array (rows times the middle axes times 2*(W/2+1))

   Level: developer

.seealso: `NNFFTRepartitionCreate()`
@*/
PetscErrorCode NNFFTRepartitionPaddedSize(const NNFFTRepartition *rep, PetscInt *n)
{
  PetscInt W = rep->n[rep->nd - 1];

  PetscFunctionBegin;
  *n = rep->nslab / W * 2 * (W / 2 + 1);
  PetscFunctionReturn(0);
}

/*@C
   NNFFTRepartitionForward - block -> slab: copies the rank's DMDA pixels (runs of unit) to the slab array of their FFTW owner

   Collective

   Input Parameters:
+  rep - the repartition
.  unit - one pixel's values (an MPI contiguous type of D PetscScalars)
-  blk - the DMDA global Vec's local array

   Output Parameter:
.  slab - the padded slab array (the padding is not written)

   Level: developer

.seealso: `NNFFTRepartitionAdjoint()`
@*/
PetscErrorCode NNFFTRepartitionForward(NNFFTRepartition *rep, MPI_Datatype unit, const PetscScalar *blk, PetscScalar *slab)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscCall(PetscSFBcastBegin(rep->sf, unit, blk, slab, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(rep->sf, unit, blk, slab, MPI_REPLACE));
  PetscCall(PetscLogEventEnd(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@C
   NNFFTRepartitionAdjoint - slab -> block, the adjoint (and inverse) of `NNFFTRepartitionForward()`: ADDS every slab pixel into its DMDA pixel

   Collective

   Input Parameters:
+  rep - the repartition
.  unit - one pixel's values
-  slab - the padded slab array

   Output Parameter:
.  blk - the DMDA local array, added into

   Level: developer

.seealso: `NNFFTRepartitionForward()`
@*/
PetscErrorCode NNFFTRepartitionAdjoint(NNFFTRepartition *rep, MPI_Datatype unit, const PetscScalar *slab, PetscScalar *blk)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscCall(PetscSFReduceBegin(rep->sf, unit, slab, blk, MPI_SUM));
  PetscCall(PetscSFReduceEnd(rep->sf, unit, slab, blk, MPI_SUM));
  PetscCall(PetscLogEventEnd(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNFFTRepartitionForwardSingle - `NNFFTRepartitionForward()` on float arrays: unit is a contiguous type of D MPI_FLOATs
*/
PetscErrorCode NNFFTRepartitionForwardSingle(NNFFTRepartition *rep, MPI_Datatype unit, const float *blk, float *slab)
{
  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscCall(PetscSFBcastBegin(rep->sf, unit, blk, slab, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(rep->sf, unit, blk, slab, MPI_REPLACE));
  PetscCall(PetscLogEventEnd(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   NNFFTRepartitionAdjointSingle - `NNFFTRepartitionAdjoint()` on float arrays: ADDS every slab pixel into its DMDA pixel
*/
PetscErrorCode NNFFTRepartitionAdjointSingle(NNFFTRepartition *rep, MPI_Datatype unit, const float *slab, float *blk)
{
  MPI_Op sum;

  PetscFunctionBegin;
  PetscCall(NNGetSumOp(PETSC_TRUE, &sum));
  PetscCall(PetscLogEventBegin(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscCall(PetscSFReduceBegin(rep->sf, unit, slab, blk, sum));
  PetscCall(PetscSFReduceEnd(rep->sf, unit, slab, blk, sum));
  PetscCall(PetscLogEventEnd(NN_SpectralRepartition, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
