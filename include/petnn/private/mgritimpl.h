/* Private implementation of NNMGRIT: multigrid reduction in time (ts/mgrit/mgrit*.c). */
#pragma once

#include <petnn/private/nnimpl.h>
#include <petscts.h>

#define NN_MGRIT_MAX_LEVELS 16

PETSC_EXTERN PetscLogEvent NNMGRIT_Solve, NNMGRIT_AdjointSolve, NNMGRIT_Step, NNMGRIT_AdjointStep, NNMGRIT_Gradient, NNMGRIT_Wait;

/* One level of a time grid: points 0..N, this rank owns points a+1..b (none when a == b).
   Point 0 is the initial value (u_0 forward, lambda_N for the adjoint), known to every rank. */
typedef struct {
  PetscInt    N;           /* steps on this level */
  PetscInt    stride;      /* fine steps per step of this level: m^level */
  PetscInt    a, b;        /* owned points (a, b] */
  PetscMPIInt left, right; /* rank owning point a (-1 when a = 0 or nothing is owned), rank owning point b+1 (-1 when b = N) */
  PetscMPIInt tag;
  Vec        *u;           /* u[p-a-1]: iterate at owned point p */
  Vec        *g;           /* right-hand side at owned points: FAS tau correction on coarse levels, observation
                              forcing on the adjoint's fine level; NULL when zero */
  Vec         ghost;       /* value at point a (the initial value when a = 0) */
  PetscScalar *sendbuf;    /* copy of u_b in flight to the right neighbour */
  MPI_Request sendreq;
} NNMGRITLevel;

/* A hierarchy of time grids: the forward problem, or the adjoint problem in reversed time, where point p
   holds lambda at forward point N - p and the step from p to p+1 is the adjoint of forward step N-p-1. */
typedef struct {
  PetscBool    adjoint;
  PetscInt     nlevels;
  NNMGRITLevel level[NN_MGRIT_MAX_LEVELS];
  PetscInt     it;                               /* coarse-grid corrections done in the last solve */
  PetscReal    rnorm, rnorm0;                    /* last and first residual norms of the last solve */
  PetscBool    valid;                            /* the fine level holds an iterate (warm start) */
  PetscBool    gradient;                         /* adjoint's final sweep: fine steps accumulate the parameter gradient */
  PetscInt     nsteps[NN_MGRIT_MAX_LEVELS];      /* propagator calls on this rank per level, since creation */
} NNMGRITGrid;

struct _p_NNMGRIT {
  PETSCHEADER(int);
  /* the problem: u_{k+1} = Phi_k(u_k), k = 0..N-1, on t_k = t0 + k h, h = (tf - t0)/N */
  PetscReal t0, tf;
  PetscInt  N;
  PetscInt *range; /* steps range[r]..range[r+1]-1 belong to rank r (size+1 entries) */
  PetscBool userrange;
  PetscInt  kstart, kend; /* requested by NNMGRITSetOwnershipRange() */
  Vec       tmpl;         /* layout of a state */
  NNMGRITStepFn        step;
  NNMGRITAdjointStepFn adjstep;
  NNMGRITForcingFn     forcing;
  void                *stepctx, *adjctx, *forcingctx;

  /* the method */
  PetscInt    cf, maxlevels, max_it, adj_max_it, oneshot_it;
  NNMGRITRelaxType relax;
  PetscBool   warm, monitor;
  PetscReal   rtol, atol;
  NNMGRITMode mode;

  /* the state */
  MPI_Comm    comm; /* private duplicate of the object's communicator for the point-to-point traffic */
  PetscMPIInt rank, size;
  PetscInt    nloc; /* local length of a state */
  NNMGRITGrid fwd, adj;
  Vec         work, work2;
  Vec        *pool[NN_MGRIT_MAX_LEVELS]; /* coarse-level u and g, shared by the forward and adjoint grids (never in use at once) */
  PetscInt    npool[NN_MGRIT_MAX_LEVELS];
  PetscBool   setupcalled, fwddone;

  /* TS-based default propagator (ts/mgrit/mgrit_ts.c) */
  struct {
    void *ctx;
    PetscErrorCode (*destroy)(void **);
    PetscErrorCode (*check)(NNMGRIT); /* validates the propagator at the start of each solve, before any message */
  } tsprop;
};

/* ts/mgrit/mgritsetup.c */
PETSC_INTERN PetscErrorCode NNMGRITReset(NNMGRIT);
PETSC_INTERN PetscMPIInt    NNMGRITOwner(NNMGRIT, PetscBool, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode NNMGRITGridSetUp(NNMGRIT, NNMGRITGrid *, PetscBool);
PETSC_INTERN PetscErrorCode NNMGRITGridReset(NNMGRIT, NNMGRITGrid *);
PETSC_INTERN PetscErrorCode NNMGRITPoolSetUp(NNMGRIT, PetscInt);
PETSC_INTERN PetscErrorCode NNMGRITPoolReset(NNMGRIT);
/* ts/mgrit/mgritcycle.c */
PETSC_INTERN PetscErrorCode NNMGRITGridSolve(NNMGRIT, NNMGRITGrid *, Vec, PetscInt, PetscBool);
PETSC_INTERN PetscErrorCode NNMGRITForwardState(NNMGRIT, PetscInt, Vec *);

/* the iterate at point p of a level: the ghost copy at a, else an owned point */
static inline Vec NNMGRITPoint(NNMGRITLevel *lev, PetscInt p)
{
  return p == lev->a ? lev->ghost : lev->u[p - lev->a - 1];
}
