/* NNMGRIT: viewing. */
#include <petnn/private/mgritimpl.h>

/*@C
   NNMGRITView - prints the grids, the method, the ownership and the last solves' iteration counts

   Collective

   Level: beginner
@*/
PetscErrorCode NNMGRITView(NNMGRIT mg, PetscViewer viewer)
{
  PetscBool iascii;
  PetscInt  nsteps[2][NN_MGRIT_MAX_LEVELS];

  PetscFunctionBegin;
  PetscValidHeaderSpecific(mg, NNMGRIT_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)mg), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  if (!iascii) PetscFunctionReturn(0);
  PetscCall(PetscObjectPrintClassNamePrefixType((PetscObject)mg, viewer));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " steps on [%g, %g], coarsening factor %" PetscInt_FMT ", %s-relaxation, up to %" PetscInt_FMT " levels\n", mg->N, (double)mg->t0, (double)mg->tf, mg->cf, NNMGRITRelaxTypes[mg->relax], mg->maxlevels));
  if (mg->mode == NNMGRIT_EXACT) PetscCall(PetscViewerASCIIPrintf(viewer, "exact mode: rtol %g, atol %g, at most %" PetscInt_FMT " forward and %" PetscInt_FMT " adjoint iterations%s\n", (double)mg->rtol, (double)mg->atol, mg->max_it, mg->adj_max_it < 0 ? mg->max_it : mg->adj_max_it, mg->warm ? ", warm start" : ""));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "one-shot mode: %" PetscInt_FMT " warm-started iterations per forward and adjoint solve\n", mg->oneshot_it));
  if (!mg->setupcalled) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "not set up\n"));
    PetscCall(PetscViewerASCIIPopTab(viewer));
    PetscFunctionReturn(0);
  }
  for (PetscInt l = 0; l < mg->fwd.nlevels; l++) {
    PetscReal h = (mg->tf - mg->t0) / mg->N;
    PetscCall(PetscViewerASCIIPrintf(viewer, "level %" PetscInt_FMT ": %" PetscInt_FMT " steps of %g%s\n", l, mg->fwd.level[l].N, (double)(h * mg->fwd.level[l].stride), l == mg->fwd.nlevels - 1 ? " (solved sequentially)" : ""));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "steps per rank:"));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
  for (PetscMPIInt r = 0; r < mg->size && r < 16; r++) PetscCall(PetscViewerASCIIPrintf(viewer, " [%" PetscInt_FMT ",%" PetscInt_FMT ")", mg->range[r], mg->range[r + 1]));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", mg->size > 16 ? " ..." : ""));
  PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  if (mg->fwd.valid) PetscCall(PetscViewerASCIIPrintf(viewer, "last forward solve: %" PetscInt_FMT " iterations, residual norm %g (first %g)\n", mg->fwd.it, (double)mg->fwd.rnorm, (double)mg->fwd.rnorm0));
  if (mg->adj.valid) PetscCall(PetscViewerASCIIPrintf(viewer, "last adjoint solve: %" PetscInt_FMT " iterations, residual norm %g (first %g)\n", mg->adj.it, (double)mg->adj.rnorm, (double)mg->adj.rnorm0));
  /* the busiest rank's propagator calls: the work model's per-rank cost */
  for (PetscInt l = 0; l < NN_MGRIT_MAX_LEVELS; l++) {
    nsteps[0][l] = mg->fwd.nsteps[l];
    nsteps[1][l] = mg->adj.nsteps[l];
  }
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, nsteps, 2 * NN_MGRIT_MAX_LEVELS, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)mg)));
  for (PetscInt d = 0; d < 2; d++) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "%s steps per level on the busiest rank:", d ? "adjoint" : "forward"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (PetscInt l = 0; l < mg->fwd.nlevels; l++) PetscCall(PetscViewerASCIIPrintf(viewer, " %" PetscInt_FMT, nsteps[d][l]));
    PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}
