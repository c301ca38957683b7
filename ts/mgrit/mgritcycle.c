/*
   The MGRIT algorithm (Falgout et al., SISC 2014; FAS for nonlinear steps as in XBraid) on a hierarchy of time
   grids distributed in contiguous chunks over the ranks.

   Level l solves  u_p = Phi_l(u_{p-1}) + g_p,  p = 1..N_l, u_0 given (g = 0 on the forward fine level).
   One iteration on level l < L-1:
     relax       F (or F, C, F): update the F-points (p % m != 0) interval by interval, then the C-points
     restrict    coarse point J is fine point Jm; inject u, and set the FAS right-hand side
                 g^c_J = g_{Jm} + Phi_l(u_{Jm-1}) - Phi_{l+1}(u_{(J-1)m}), so that an exact coarse solution makes
                 the fine residual at the C-points vanish
     recurse     on level l+1; the coarsest level is solved sequentially (pipelined over the ranks)
     correct     u_{Jm} = coarse solution (injection), then F-relax on coarse levels so that the parent sees
                 corrected values at all of this level's points
   The residual norm is taken at the fine C-points after relaxation (the F-point residuals are zero then).

   Rank r owns points (a, b] of each level and keeps a ghost copy of point a, received from the rank that owns
   it. All messages go from left to right, one per relaxation sweep and level, with one tag per level and grid.

   The adjoint is the same algorithm on the reversed grid (p <-> forward point N - p) with the linear
   propagator lambda_k = (dPhi_k/du)^T lambda_{k+1} linearized at the stored forward fine states; coarse
   adjoint steps are adjoints of the coarse forward steps at the C-point states.
*/
#include <petnn/private/mgritimpl.h>

/*
   NNMGRITForwardState - the forward fine state u_k stored on this rank: kstart <= k <= kend (u_kstart is the
   ghost copy, u_0 on the first rank)
*/
PetscErrorCode NNMGRITForwardState(NNMGRIT mg, PetscInt k, Vec *u)
{
  NNMGRITLevel *lev = &mg->fwd.level[0];

  PetscFunctionBegin;
  PetscCheck(lev->a < lev->b && lev->a <= k && k <= lev->b, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "MGRIT state %" PetscInt_FMT " is not stored on rank %d, which holds states %" PetscInt_FMT "..%" PetscInt_FMT, k, mg->rank, lev->a, lev->b);
  *u = NNMGRITPoint(lev, k);
  PetscFunctionReturn(0);
}

/* out = Phi(in) for the step from point j to j+1 of level l; during the adjoint's final sweep (grid->gradient) the
   fine steps also accumulate the parameter gradient */
static PetscErrorCode NNMGRITGridStep(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l, PetscInt j, Vec in, Vec out)
{
  PetscInt  s = grid->level[l].stride, k;
  PetscReal h = (mg->tf - mg->t0) / mg->N;

  PetscFunctionBegin;
  grid->nsteps[l]++;
  if (!grid->adjoint) {
    k = j * s;
    PetscCall(PetscLogEventBegin(NNMGRIT_Step, mg, 0, 0, 0));
    PetscCall((*mg->step)(mg->stepctx, l, k, mg->t0 + k * h, s * h, in, out));
    PetscCall(PetscLogEventEnd(NNMGRIT_Step, mg, 0, 0, 0));
  } else {
    Vec u;

    k = mg->N - (j + 1) * s;
    PetscCall(NNMGRITForwardState(mg, k, &u));
    PetscCall(PetscLogEventBegin(NNMGRIT_AdjointStep, mg, 0, 0, 0));
    PetscCall((*mg->adjstep)(mg->adjctx, l, k, mg->t0 + k * h, s * h, u, in, out, (PetscBool)(grid->gradient && l == 0)));
    PetscCall(PetscLogEventEnd(NNMGRIT_AdjointStep, mg, 0, 0, 0));
  }
  PetscFunctionReturn(0);
}

/* u_p = Phi(u_{p-1}) + g_p */
static PetscErrorCode NNMGRITUpdate(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l, PetscInt p)
{
  NNMGRITLevel *lev = &grid->level[l];
  Vec           up  = lev->u[p - lev->a - 1];

  PetscFunctionBegin;
  PetscCall(NNMGRITGridStep(mg, grid, l, p - 1, NNMGRITPoint(lev, p - 1), up));
  if (lev->g) PetscCall(VecAXPY(up, 1.0, lev->g[p - lev->a - 1]));
  PetscFunctionReturn(0);
}

/* send u_b to the rank that keeps it as its ghost */
static PetscErrorCode NNMGRITSendLast(NNMGRIT mg, NNMGRITLevel *lev)
{
  const PetscScalar *x;
  PetscMPIInt        n;

  PetscFunctionBegin;
  if (lev->right < 0) PetscFunctionReturn(0);
  PetscCall(PetscMPIIntCast(mg->nloc, &n));
  PetscCallMPI(MPI_Wait(&lev->sendreq, MPI_STATUS_IGNORE));
  PetscCall(VecGetArrayRead(lev->u[lev->b - lev->a - 1], &x));
  PetscCall(PetscArraycpy(lev->sendbuf, x, mg->nloc));
  PetscCall(VecRestoreArrayRead(lev->u[lev->b - lev->a - 1], &x));
  PetscCallMPI(MPI_Isend(lev->sendbuf, n, MPIU_SCALAR, lev->right, lev->tag, mg->comm, &lev->sendreq));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNMGRITRecvGhost(NNMGRIT mg, NNMGRITLevel *lev)
{
  PetscScalar *x;
  PetscMPIInt  n;

  PetscFunctionBegin;
  if (lev->left < 0) PetscFunctionReturn(0);
  PetscCall(PetscMPIIntCast(mg->nloc, &n));
  PetscCall(PetscLogEventBegin(NNMGRIT_Wait, mg, 0, 0, 0));
  PetscCall(VecGetArrayWrite(lev->ghost, &x));
  PetscCallMPI(MPI_Recv(x, n, MPIU_SCALAR, lev->left, lev->tag, mg->comm, MPI_STATUS_IGNORE));
  PetscCall(VecRestoreArrayWrite(lev->ghost, &x));
  PetscCall(PetscLogEventEnd(NNMGRIT_Wait, mg, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*
   F-relaxation (all = PETSC_TRUE: every point is an F-point, the sequential solve). The interval that ends this
   rank's chunk is done first and u_b sent at once (at the very start when b is a C-point), so the right
   neighbour waits as little as possible; the chain before the first owned C-point needs the ghost and comes last.
*/
static PetscErrorCode NNMGRITFRelax(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l, PetscBool all)
{
  NNMGRITLevel *lev = &grid->level[l];
  PetscInt      a = lev->a, b = lev->b, m = mg->cf, cfirst, clast;

  PetscFunctionBegin;
  if (a == b) PetscFunctionReturn(0);
  cfirst = all ? b + 1 : (a / m + 1) * m;
  if (cfirst > b) { /* no C-point here: one chain from the ghost */
    PetscCall(NNMGRITRecvGhost(mg, lev));
    for (PetscInt p = a + 1; p <= b; p++) PetscCall(NNMGRITUpdate(mg, grid, l, p));
    PetscCall(NNMGRITSendLast(mg, lev));
    PetscFunctionReturn(0);
  }
  clast = (b / m) * m;
  if (clast == b) PetscCall(NNMGRITSendLast(mg, lev));
  else {
    for (PetscInt p = clast + 1; p <= b; p++) PetscCall(NNMGRITUpdate(mg, grid, l, p));
    PetscCall(NNMGRITSendLast(mg, lev));
  }
  for (PetscInt c = cfirst; c < clast; c += m)
    for (PetscInt p = c + 1; p < c + m; p++) PetscCall(NNMGRITUpdate(mg, grid, l, p));
  PetscCall(NNMGRITRecvGhost(mg, lev));
  for (PetscInt p = a + 1; p < cfirst; p++) PetscCall(NNMGRITUpdate(mg, grid, l, p));
  PetscFunctionReturn(0);
}

/* C-relaxation: the F-point before each C-point is current (owned, or the ghost received by the F-sweep) */
static PetscErrorCode NNMGRITCRelax(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l)
{
  NNMGRITLevel *lev = &grid->level[l];
  PetscInt      m   = mg->cf;

  PetscFunctionBegin;
  for (PetscInt c = (lev->a / m + 1) * m; c <= lev->b; c += m) PetscCall(NNMGRITUpdate(mg, grid, l, c));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNMGRITRelax(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l)
{
  PetscFunctionBegin;
  PetscCall(NNMGRITFRelax(mg, grid, l, PETSC_FALSE));
  if (mg->relax == NNMGRIT_RELAX_FCF) {
    PetscCall(NNMGRITCRelax(mg, grid, l));
    PetscCall(NNMGRITFRelax(mg, grid, l, PETSC_FALSE));
  }
  PetscFunctionReturn(0);
}

/*
   First half of the restriction: g^c_J = Phi_l(u_{Jm-1}) + g_{Jm} (what C-relaxation would give) and, if
   asked, the residual norm at the C-points, sqrt(sum_J |g^c_J - u_{Jm}|^2) over all ranks.
*/
static PetscErrorCode NNMGRITResidual(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l, PetscReal *rnorm)
{
  NNMGRITLevel *lev = &grid->level[l], *cl = &grid->level[l + 1];
  PetscReal     sum = 0, nrm;

  PetscFunctionBegin;
  for (PetscInt J = cl->a + 1; J <= cl->b; J++) {
    PetscInt p  = J * mg->cf;
    Vec      gc = cl->g[J - cl->a - 1];

    PetscCall(NNMGRITGridStep(mg, grid, l, p - 1, NNMGRITPoint(lev, p - 1), gc));
    if (lev->g) PetscCall(VecAXPY(gc, 1.0, lev->g[p - lev->a - 1]));
    if (rnorm) {
      PetscCall(VecWAXPY(mg->work, -1.0, lev->u[p - lev->a - 1], gc));
      PetscCall(VecNorm(mg->work, NORM_2, &nrm));
      sum += nrm * nrm;
    }
  }
  if (rnorm) {
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPIU_REAL, MPIU_SUM, mg->comm));
    *rnorm = PetscSqrtReal(sum);
  }
  PetscFunctionReturn(0);
}

/* second half: inject u into the coarse grid and subtract the coarse step from the previous C-point */
static PetscErrorCode NNMGRITRestrict(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l)
{
  NNMGRITLevel *lev = &grid->level[l], *cl = &grid->level[l + 1];

  PetscFunctionBegin;
  if (cl->a == cl->b) PetscFunctionReturn(0);
  for (PetscInt J = cl->a + 1; J <= cl->b; J++) PetscCall(VecCopy(lev->u[J * mg->cf - lev->a - 1], cl->u[J - cl->a - 1]));
  PetscCall(NNMGRITSendLast(mg, cl));
  /* the first coarse point needs the left neighbour's last one: do it last */
  for (PetscInt J = cl->a + 2; J <= cl->b + 1; J++) {
    PetscInt Jc = J <= cl->b ? J : cl->a + 1;

    if (Jc == cl->a + 1) PetscCall(NNMGRITRecvGhost(mg, cl));
    PetscCall(NNMGRITGridStep(mg, grid, l + 1, Jc - 1, NNMGRITPoint(cl, Jc - 1), mg->work));
    PetscCall(VecAXPY(cl->g[Jc - cl->a - 1], -1.0, mg->work));
  }
  PetscFunctionReturn(0);
}

/* FAS correction with injection: u_{Jm} += v_J - u_{Jm} = v_J */
static PetscErrorCode NNMGRITCorrect(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l)
{
  NNMGRITLevel *lev = &grid->level[l], *cl = &grid->level[l + 1];

  PetscFunctionBegin;
  for (PetscInt J = cl->a + 1; J <= cl->b; J++) PetscCall(VecCopy(cl->u[J - cl->a - 1], lev->u[J * mg->cf - lev->a - 1]));
  PetscFunctionReturn(0);
}

/* V-cycle on a coarse level l >= 1, whose u and g were set by the restriction from level l-1 */
static PetscErrorCode NNMGRITCycle(NNMGRIT mg, NNMGRITGrid *grid, PetscInt l)
{
  PetscFunctionBegin;
  if (l == grid->nlevels - 1) {
    PetscCall(NNMGRITFRelax(mg, grid, l, PETSC_TRUE));
    PetscFunctionReturn(0);
  }
  PetscCall(NNMGRITRelax(mg, grid, l));
  PetscCall(NNMGRITResidual(mg, grid, l, NULL));
  PetscCall(NNMGRITRestrict(mg, grid, l));
  PetscCall(NNMGRITCycle(mg, grid, l + 1));
  PetscCall(NNMGRITCorrect(mg, grid, l));
  PetscCall(NNMGRITFRelax(mg, grid, l, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNMGRITMonitor(NNMGRIT mg, NNMGRITGrid *grid, PetscInt it, PetscReal rnorm)
{
  PetscViewer viewer = PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)mg));
  const char *prefix;

  PetscFunctionBegin;
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)mg, &prefix));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %3" PetscInt_FMT " MGRIT %s%s%s%sresidual norm %14.12e\n", it, prefix ? "(" : "", prefix ? prefix : "", prefix ? ") " : "", grid->adjoint ? "adjoint " : "", (double)rnorm));
  PetscFunctionReturn(0);
}

/* adjoint: the parameter gradients of the steps into the owned C-points (the final F-sweep did the others) */
static PetscErrorCode NNMGRITCGradient(NNMGRIT mg, NNMGRITGrid *grid)
{
  NNMGRITLevel *lev = &grid->level[0];
  PetscInt      m   = mg->cf;

  PetscFunctionBegin;
  for (PetscInt c = (lev->a / m + 1) * m; c <= lev->b; c += m) PetscCall(NNMGRITGridStep(mg, grid, 0, c - 1, NNMGRITPoint(lev, c - 1), mg->work2));
  PetscFunctionReturn(0);
}

/*
   Solves the grid's problem from the initial value init (u_0, or lambda_N in the adjoint).
   Exact mode: relax and take the residual until it meets the tolerances (or maxit coarse-grid corrections);
   fixed (one-shot) mode: exactly maxit V-cycles, then an F-sweep so that the F-points match the corrected C-points.
   The adjoint ends with an F-sweep that accumulates the parameter gradients, plus the steps into the C-points,
   so every owned step contributes once, at the final lambda (with one level, the sequential sweep does it all).
*/
PetscErrorCode NNMGRITGridSolve(NNMGRIT mg, NNMGRITGrid *grid, Vec init, PetscInt maxit, PetscBool fixed)
{
  NNMGRITLevel *lev  = &grid->level[0];
  PetscBool     warm = (PetscBool)((mg->warm || mg->mode == NNMGRIT_ONE_SHOT) && grid->valid), conv = PETSC_FALSE;
  PetscReal     rnorm = 0;
  PetscInt      it    = 0;

  PetscFunctionBegin;
  for (PetscInt l = 0; l < grid->nlevels; l++)
    if (grid->level[l].a == 0 && grid->level[l].b > 0) PetscCall(VecCopy(init, grid->level[l].ghost));
  if (!warm && grid->nlevels > 1) /* one level: the sequential sweep overwrites every point */
    for (PetscInt p = lev->a + 1; p <= lev->b; p++) PetscCall(VecCopy(init, lev->u[p - lev->a - 1]));
  grid->rnorm0   = 0;
  grid->gradient = PETSC_FALSE;
  if (grid->nlevels == 1) {
    grid->gradient = grid->adjoint;
    PetscCall(NNMGRITFRelax(mg, grid, 0, PETSC_TRUE));
    conv = PETSC_TRUE;
  } else {
    for (it = 0; !fixed || it < maxit; it++) {
      PetscCall(NNMGRITRelax(mg, grid, 0));
      PetscCall(NNMGRITResidual(mg, grid, 0, &rnorm));
      if (it == 0) grid->rnorm0 = rnorm;
      if (mg->monitor) PetscCall(NNMGRITMonitor(mg, grid, it, rnorm));
      if (!fixed) {
        conv = (PetscBool)(rnorm <= PetscMax(mg->atol, mg->rtol * grid->rnorm0));
        if (conv || it >= maxit) break;
      }
      PetscCall(NNMGRITRestrict(mg, grid, 0));
      PetscCall(NNMGRITCycle(mg, grid, 1));
      PetscCall(NNMGRITCorrect(mg, grid, 0));
    }
    if (fixed || grid->adjoint) {
      grid->gradient = grid->adjoint;
      if (grid->adjoint) PetscCall(PetscLogEventBegin(NNMGRIT_Gradient, mg, 0, 0, 0));
      PetscCall(NNMGRITFRelax(mg, grid, 0, PETSC_FALSE));
      if (grid->adjoint) {
        PetscCall(NNMGRITCGradient(mg, grid));
        PetscCall(PetscLogEventEnd(NNMGRIT_Gradient, mg, 0, 0, 0));
      }
    }
  }
  grid->gradient = PETSC_FALSE;
  for (PetscInt l = 0; l < grid->nlevels; l++) PetscCallMPI(MPI_Wait(&grid->level[l].sendreq, MPI_STATUS_IGNORE));
  if (!fixed && !conv) PetscCall(PetscInfo(mg, "MGRIT %s did not converge in %" PetscInt_FMT " iterations: residual norm %g, first %g\n", grid->adjoint ? "adjoint" : "forward", it, (double)rnorm, (double)grid->rnorm0));
  else PetscCall(PetscInfo(mg, "MGRIT %s: %" PetscInt_FMT " iterations, residual norm %g, first %g\n", grid->adjoint ? "adjoint" : "forward", it, (double)rnorm, (double)grid->rnorm0));
  grid->it    = it;
  grid->rnorm = rnorm;
  grid->valid = PETSC_TRUE;
  PetscFunctionReturn(0);
}

