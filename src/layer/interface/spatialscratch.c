/*
   Ghosted (halo) local Vecs whose storage all spatial layers share.

   A layer needs its ghosted input only while a pass runs: the forward pass exchanges the halo,
   computes and is done; the backward pass exchanges it again rather than keeping a ghosted copy
   of every layer's input alive between the passes. Two slots are enough (a backward pass holds
   the ghosted input and the ghosted input gradient at once), so the memory of the halo copies is
   two of the largest layer's instead of two per layer. The slots grow to the largest request and
   are freed at PetscFinalize().
*/
#include <petnn/private/nnimpl.h>

#define NN_HALO_SLOTS 2

static PetscScalar *NNHaloStorage[NN_HALO_SLOTS];
static PetscInt     NNHaloSize[NN_HALO_SLOTS];
static PetscBool    NNHaloInUse[NN_HALO_SLOTS];
static PetscBool    NNHaloFinalizeRegistered = PETSC_FALSE;

static PetscErrorCode NNHaloStorageFree(void)
{
  PetscFunctionBegin;
  for (PetscInt s = 0; s < NN_HALO_SLOTS; s++) {
    PetscCall(PetscFree(NNHaloStorage[s]));
    NNHaloSize[s]  = 0;
    NNHaloInUse[s] = PETSC_FALSE;
  }
  NNHaloFinalizeRegistered = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*
   NNSpatialCreateHaloVec - a local Vec of the halo DMDA's ghosted size without storage of its own;
   NNSpatialHaloVecGet() lends it storage for the duration of one pass
*/
PetscErrorCode NNSpatialCreateHaloVec(DM dahalo, Vec *v)
{
  PetscInt dof, gm[3];

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(DMDAGetGhostCorners(dahalo, NULL, NULL, NULL, &gm[0], &gm[1], &gm[2]));
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, dof, dof * gm[0] * gm[1] * gm[2], NULL, v));
  PetscFunctionReturn(0);
}

/* makes slot `slot` (0 or 1) hold at least n scalars and marks it lent */
static PetscErrorCode NNHaloSlotLend(PetscInt slot, PetscInt n)
{
  PetscFunctionBegin;
  PetscCheck(slot >= 0 && slot < NN_HALO_SLOTS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Halo storage slot %" PetscInt_FMT " does not exist: use 0 to %d", slot, NN_HALO_SLOTS - 1);
  PetscCheck(!NNHaloInUse[slot], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Halo storage slot %" PetscInt_FMT " is already lent out: restore it with NNSpatialHaloVecRestore() first", slot);
  if (n > NNHaloSize[slot]) {
    PetscCall(PetscFree(NNHaloStorage[slot]));
    PetscCall(PetscMalloc1(n, &NNHaloStorage[slot]));
    NNHaloSize[slot] = n;
    if (!NNHaloFinalizeRegistered) {
      PetscCall(PetscRegisterFinalize(NNHaloStorageFree));
      NNHaloFinalizeRegistered = PETSC_TRUE;
    }
  }
  NNHaloInUse[slot] = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* NNSpatialHaloVecGet - places shared storage slot `slot` (0 or 1) into a Vec from NNSpatialCreateHaloVec() */
PetscErrorCode NNSpatialHaloVecGet(Vec v, PetscInt slot)
{
  PetscInt n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(NNHaloSlotLend(slot, n));
  PetscCall(VecPlaceArray(v, NNHaloStorage[slot]));
  PetscFunctionReturn(0);
}

/* NNSpatialHaloSlotGetSingle - lends shared storage slot `slot` as n floats (single-precision halos); give it back
   with NNSpatialHaloSlotRestoreSingle() */
PetscErrorCode NNSpatialHaloSlotGetSingle(PetscInt slot, PetscInt n, float **a)
{
  PetscFunctionBegin;
  PetscCall(NNHaloSlotLend(slot, (n + 1) / 2)); /* a double holds two floats */
  *a = (float *)NNHaloStorage[slot];
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpatialHaloSlotRestoreSingle(PetscInt slot)
{
  PetscFunctionBegin;
  NNHaloInUse[slot] = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* NNSpatialHaloVecRestore - takes the shared storage back from a Vec given it by NNSpatialHaloVecGet() */
PetscErrorCode NNSpatialHaloVecRestore(Vec v, PetscInt slot)
{
  PetscFunctionBegin;
  PetscCall(VecResetArray(v));
  NNHaloInUse[slot] = PETSC_FALSE;
  PetscFunctionReturn(0);
}
