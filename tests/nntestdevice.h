/* Helpers shared by the test programs that compare a device with the CPU (tests/cuda_layers.c,
   tests/cuda_spatial_split.c): one NNLossGradient() on a device, kept, and the four relative differences between two
   such passes. Header-only, static inline, as tests/nntest.h. */
#pragma once
#include <petnn.h>
#include "nntest.h"

/* a network on comm from the options with the prefix, for batches of nbatch samples, set up; the test option
   -<prefix>test_input_dm C,H,W gives it a spatial input (a DMDA on comm, NNSetInputDM()) */
static inline PetscErrorCode NNTestPassCreateNet(MPI_Comm comm, const char prefix[], PetscInt nbatch, NN *net)
{
  PetscInt  chw[3], nchw = 3;
  PetscBool indm = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(NNCreate(comm, net));
  PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(PetscOptionsGetIntArray(NULL, prefix, "-test_input_dm", chw, &nchw, &indm));
  if (indm) {
    DM da;
    PetscCheck(nchw == 3, comm, PETSC_ERR_ARG_SIZ, "-%stest_input_dm needs C,H,W", prefix);
    PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, chw[2], chw[1], PETSC_DECIDE, PETSC_DECIDE, chw[0], 1, NULL, NULL, &da));
    PetscCall(DMSetUp(da));
    PetscCall(NNSetInputDM(*net, da));
    PetscCall(DMDestroy(&da));
  }
  PetscCall(NNSetBatchSize(*net, nbatch));
  PetscCall(NNSetFromOptions(*net));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

/* a network on comm from the options with the prefix must be refused by NNSetUp() on the device dev: *msg, the error's
   message (PETSc's storage), must hold expect; what names what was accepted otherwise */
static inline PetscErrorCode NNTestPassExpectSetUpError(MPI_Comm comm, const char prefix[], NNDevice dev, const char what[], const char expect[], char **msg)
{
  NN             net;
  PetscErrorCode ierr;
  const char    *etext;
  char          *found;

  PetscFunctionBegin;
  *msg = NULL;
  PetscCall(NNCreate(comm, &net));
  PetscCall(NNSetOptionsPrefix(net, prefix));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNSetDevice(net, dev));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = NNSetUp(net);
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNSetUp() accepted %s on the device", what);
  PetscCall(NNErrorMessage(ierr, &etext, msg));
  PetscCheck(*msg, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNSetUp() failed without a message");
  PetscCall(PetscStrstr(*msg, expect, &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNSetUp()'s error does not say \"%s\": %s", expect, *msg);
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

/* d[] = the relative differences of r from the reference rc: loss, output, input gradient, parameter gradient (full
   false: a smaller batch than the capacity, whose other samples' outputs and input gradients are unspecified: 0) */
static inline PetscErrorCode NNTestPassCompare(const NNTestPass *rc, const NNTestPass *r, PetscBool full, PetscReal d[4])
{
  PetscFunctionBegin;
  d[0] = PetscAbsReal(r->L - rc->L) / PetscMax(PetscAbsReal(rc->L), 1e-300);
  d[1] = d[2] = 0;
  if (full) {
    PetscCall(NNTestRelDiff(rc->y, r->y, &d[1]));
    PetscCall(NNTestRelDiff(rc->dx, r->dx, &d[2]));
  }
  PetscCall(NNTestRelDiff(rc->g, r->g, &d[3]));
  PetscFunctionReturn(0);
}
