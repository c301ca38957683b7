/*
   The block's TS (NNODEIntegrator): made on the communicator of the activation layout (PETSC_COMM_SELF
   for sequential states, each rank integrating its own samples; the DMDA's communicator for spatial
   states) and configured from -<block>_ts_*. The ts scheme integrates with it, the mgrit scheme takes
   its RK tableau for the propagators, NNLayerODEGetTS() returns it.

   Only integrators with an exact discrete adjoint in PETSc 3.18 are accepted: explicit RK tableaus
   without a zero weight on a stage that later stages use (3.18's RK adjoint drops that stage's
   parameter sensitivity), and the theta methods beuler and cn.
*/
#include <petnn/private/odeimpl.h>

/* the block's TS, on the communicator of the activation layout, configured from its options */
PetscErrorCode NNODECreateTS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;
  MPI_Comm     comm;
  SNES         snes;
  KSP          ksp;
  PC           pc;
  TSAdapt      adapt;
  PetscBool    isrk, isbe, iscn;
  const char  *prefix = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";

  PetscFunctionBegin;
  if (o->integ.ts) PetscFunctionReturn(0);
  comm = o->dm ? PetscObjectComm((PetscObject)o->dm) : PETSC_COMM_SELF;
  PetscCallMPI(MPI_Comm_rank(comm, &o->integ.rank));
  PetscCallMPI(MPI_Comm_size(comm, &o->integ.size));
  PetscCall(TSCreate(comm, &o->integ.ts));
  PetscCall(TSSetOptionsPrefix(o->integ.ts, ((PetscObject)l)->prefix));
  PetscCall(TSSetApplicationContext(o->integ.ts, l));
  PetscCall(TSSetProblemType(o->integ.ts, TS_NONLINEAR));
  PetscCall(TSSetType(o->integ.ts, TSRK));
  PetscCall(TSRKSetType(o->integ.ts, TSRK4));
  PetscCall(TSSetMaxSteps(o->integ.ts, o->N));
  PetscCall(TSSetMaxTime(o->integ.ts, o->T));
  PetscCall(TSSetTimeStep(o->integ.ts, o->h));
  PetscCall(TSSetExactFinalTime(o->integ.ts, TS_EXACTFINALTIME_STEPOVER));
  /* implicit stages: Newton-Krylov on a matrix-free operator, no preconditioner; tight tolerances,
     since the adjoint is exact for the exactly solved stage equations */
  PetscCall(TSGetSNES(o->integ.ts, &snes));
  PetscCall(SNESSetTolerances(snes, 1e-50, 1e-12, 1e-14, 50, -1));
  PetscCall(SNESGetKSP(snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetTolerances(ksp, 1e-12, 1e-50, PETSC_DEFAULT, 500));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(TSSetFromOptions(o->integ.ts));
  /* fixed steps: the step index selects per-step parameters and observations */
  PetscCall(TSGetAdapt(o->integ.ts, &adapt));
  PetscCall(TSAdaptSetType(adapt, TSADAPTNONE));
  PetscCall(TSSetExactFinalTime(o->integ.ts, TS_EXACTFINALTIME_STEPOVER));
  PetscCall(TSSetEquationType(o->integ.ts, TS_EQ_ODE_EXPLICIT));

  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSRK, &isrk));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSBEULER, &isbe));
  PetscCall(PetscObjectTypeCompare((PetscObject)o->integ.ts, TSCN, &iscn));
  if (isrk) {
    PetscInt         s;
    const PetscReal *A, *b, *c;
    TSRKType         rktype;
    PetscCall(TSRKGetType(o->integ.ts, &rktype));
    PetscCall(TSRKGetTableau(o->integ.ts, &s, &A, &b, &c, NULL, NULL, NULL, &o->integ.fsal));
    PetscCheck(s <= NN_ODE_MAX_STAGES, comm, PETSC_ERR_SUP, "ODE block %s: RK tableau %s has %" PetscInt_FMT " stages; at most %d are supported", ((PetscObject)l)->name, rktype, s, NN_ODE_MAX_STAGES);
#if PETSC_VERSION_LT(3, 21, 0)
    /* PETSc before 3.21 has an RK adjoint that drops the parameter sensitivity of a stage whose weight b_i is 0 but
       that later stages use; a zero-weight last stage (3bs's FSAL stage) is harmless. From 3.21 on these tableaus
       (2b, 5f, 5dp, ...) pass the finite-difference checks of tests/ode.c (-only zeroweights) */
    for (PetscInt i = 0; i < s; i++) {
      PetscBool used = PETSC_FALSE;
      for (PetscInt j = i + 1; j < s; j++) used = (PetscBool)(used || A[j * s + i] != 0);
      PetscCheck(b[i] != 0 || !used, comm, PETSC_ERR_SUP,
                 "ODE block %s: -%sts_rk_type %s has a zero weight b_%" PetscInt_FMT " on a stage that later stages use; PETSc %d.%d's TSAdjoint then returns wrong parameter gradients (fixed in PETSc 3.21). Use -%sts_rk_type 1fe, 2a, 3, 3bs or 4", ((PetscObject)l)->name, prefix, rktype, i + 1, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, prefix);
    }
#endif
    o->integ.nstages = s;
    for (PetscInt i = 0; i < s; i++) o->integ.c[i] = c[i];
    o->integ.implicit = PETSC_FALSE;
  } else if (isbe || iscn) {
    PetscReal theta;
    PetscCall(TSThetaGetTheta(o->integ.ts, &theta));
    o->integ.nstages  = 3;
    o->integ.c[0]     = 0;
    o->integ.c[1]     = theta;
    o->integ.c[2]     = 1;
    o->integ.implicit = PETSC_TRUE;
    o->integ.fsal     = PETSC_FALSE;
  } else {
    TSType type;
    PetscCall(TSGetType(o->integ.ts, &type));
    SETERRQ(comm, PETSC_ERR_SUP, "ODE block %s: -%sts_type %s is not supported: the block needs a TS with an exact discrete adjoint in PETSc 3.18; valid: rk (-%sts_rk_type 1fe, 2a, 3, 3bs, 4), beuler, cn (for forward Euler use rk with -%sts_rk_type 1fe)", ((PetscObject)l)->name, prefix, type, prefix, prefix);
  }
  PetscFunctionReturn(0);
}


PetscErrorCode NNODEDestroyTS(NNLayer l)
{
  NNLayer_ODE *o = (NNLayer_ODE *)l->data;

  PetscFunctionBegin;
  PetscCall(TSDestroy(&o->integ.ts));
  PetscFunctionReturn(0);
}
