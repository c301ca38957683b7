/*
   Finite-difference gradient checks of whole networks and single layers.

   Central differences with step h*max(1,|v|), h = 1e-5 (5e-3 in single precision); the error is ||fd - analytic|| / ||analytic|| (2-norms)
   over the parameters and over the inputs (large Vecs are sampled with a fixed stride). Random state and buffers are restored
   before every evaluation so dropout masks and batch-norm running statistics are the same.
*/
#include <petnn/private/nnimpl.h>

#define NN_GC_MAX_ENTRIES 2000 /* per Vec: larger Vecs are sampled with a fixed stride */

static PetscErrorCode NNLossAt(NN net, PetscInt n, Vec x, Vec t, const NNRandom *rng, Vec buf0, PetscReal *L)
{
  PetscFunctionBegin;
  net->rng = *rng;
  PetscCall(VecCopy(buf0, net->buf));
  PetscCall(NNLossGradient(net, n, x, t, L, NULL));
  PetscFunctionReturn(0);
}

/* compares the analytic derivative ga of L w.r.t. v with central differences, entry by entry; map (NULL: the
   identity) gives the local index of entry g of nv or -1 where another rank holds it (partitioned layers: the
   rank holding a piece perturbs it alone, whole tensors are perturbed alike on every rank) */
static PetscErrorCode CheckVec(NN net, PetscInt n, Vec x, Vec t, const NNRandom *rng, Vec buf0, Vec v, PetscInt nv, const PetscInt *map, const PetscScalar *ga, PetscReal *err)
{
  PetscInt  stride = PetscMax(1, nv / NN_GC_MAX_ENTRIES);
  /* about eps^(1/3) of the precision the network computes in: balances truncation and round-off */
  PetscReal h      = net->prec.type == NN_PRECISION_SINGLE ? 5e-3 : 1e-5, dnorm = 0, gnorm = 0;
  MPI_Comm  comm   = NNGetPartitionComm(net); /* the ranks that hold the pieces of the partitioned layers */

  PetscFunctionBegin;
  for (PetscInt g = 0; g < nv; g += stride) {
    PetscScalar *va, v0 = 0;
    PetscReal    Lp, Lm, fd, hi = 0, gi = 0;
    PetscInt     i = map ? map[g] : g;
    if (i >= 0) {
      PetscCall(VecGetArray(v, &va));
      v0 = va[i];
      hi = h * PetscMax(1.0, PetscAbsReal(v0));
      gi = PetscRealPart(ga[i]);
      va[i] = v0 + hi;
      PetscCall(VecRestoreArray(v, &va));
    }
    if (map) { /* the holders' step and derivative (one holder, or every rank with the same values) */
      PetscReal hg[3] = {hi, gi, i >= 0 ? 1.0 : 0.0};
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hg, 3, MPIU_REAL, MPIU_SUM, comm));
      hi = hg[0] / hg[2];
      gi = hg[1] / hg[2];
    }
    PetscCall(NNLossAt(net, n, x, t, rng, buf0, &Lp));
    if (i >= 0) {
      PetscCall(VecGetArray(v, &va));
      va[i] = v0 - hi;
      PetscCall(VecRestoreArray(v, &va));
    }
    PetscCall(NNLossAt(net, n, x, t, rng, buf0, &Lm));
    if (i >= 0) {
      PetscCall(VecGetArray(v, &va));
      va[i] = v0;
      PetscCall(VecRestoreArray(v, &va));
    }
    fd = (Lp - Lm) / (2 * hi);
    dnorm += (fd - gi) * (fd - gi);
    gnorm += gi * gi;
  }
  *err = PetscSqrtReal(dnorm) / PetscMax(PetscSqrtReal(gnorm), 1e-30);
  PetscFunctionReturn(0);
}

/*@
   NNGradientCheck - compares the gradient of the loss on one batch with central finite differences

   Collective

   Input Parameters:
+  net - the network
.  n - number of samples
.  x - input batch
.  t - targets
-  tol - relative tolerance used to report PASSED/FAILED (the check does not error)

   Output Parameters:
+  errparam - largest relative error over the parameters (sampled when there are many)
-  errinput - largest relative error over the inputs

   Notes:
   Prints one line per check. The network's parameters, buffers and random state are unchanged
   afterwards. Use double precision and smooth activations for tight tolerances; ReLU kinks can
   cause isolated mismatches. In single precision (`NNSetPrecision()`) the step is 5e-3, about the cube
   root of float's epsilon, and the errors to expect are about its 2/3 power (1e-5 to 1e-3), not 1e-9.

   Options Database Key:
.  -nn_gradient_check - run on the first training batch

   Level: intermediate

.seealso: `NNLayerGradientCheck()`, `NNLossGradient()`
@*/
PetscErrorCode NNGradientCheck(NN net, PetscInt n, Vec x, Vec t, PetscReal tol, PetscReal *errparam, PetscReal *errinput)
{
  NNRandom           rng0;
  Vec                buf0, g, dx, xc;
  PetscInt           np, nx, *map = NULL;
  const PetscScalar *ga;
  PetscReal          L, ep = 0, ex = 0;
  MPI_Comm           comm;
  PetscBool          view;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscCall(NNSetUp(net));
  PetscCall(PetscObjectGetComm((PetscObject)net, &comm));
  rng0 = net->rng;
  PetscCall(VecDuplicate(net->buf, &buf0));
  PetscCall(VecCopy(net->buf, buf0));
  PetscCall(VecDuplicate(x, &xc));
  PetscCall(VecCopy(x, xc));
  PetscCall(VecDuplicate(x, &dx));
  PetscCall(VecDuplicate(net->dtheta, &g));
  PetscCall(NNLossAt(net, n, xc, t, &rng0, buf0, &L));
  net->rng = rng0;
  PetscCall(VecCopy(buf0, net->buf));
  PetscCall(NNLossGradient(net, n, xc, t, &L, dx));
  PetscCall(VecCopy(net->dtheta, g));

  PetscCall(VecGetSize(net->theta, &np));
  if (net->part.on) { /* model parallelism: walk the full layout */
    np = net->part.np;
    PetscCall(NNPartitionLocalIndex(net, &map));
  }
  PetscCall(VecGetArrayRead(g, &ga));
  PetscCall(CheckVec(net, n, xc, t, &rng0, buf0, net->theta, np, map, ga, &ep));
  PetscCall(VecRestoreArrayRead(g, &ga));
  PetscCall(PetscFree(map));
  nx = n * NNShapeSize(&net->inshape);
  PetscCall(VecGetArrayRead(dx, &ga));
  PetscCall(CheckVec(net, n, xc, t, &rng0, buf0, xc, nx, NULL, ga, &ex));
  PetscCall(VecRestoreArrayRead(dx, &ga));

  /* leave the network as it was: random state, buffers, gradient */
  net->rng = rng0;
  PetscCall(VecCopy(buf0, net->buf));
  PetscCall(VecCopy(g, net->dtheta));
  PetscCall(PetscPrintf(comm, "Gradient check: parameters rel. error %s %g, inputs rel. error %s %g: %s\n", ep < tol ? "<" : ">=", (double)tol, ex < tol ? "<" : ">=", (double)tol, ep < tol && ex < tol ? "PASSED" : "FAILED"));
  PetscCall(PetscInfo(net, "Gradient check: parameter error %g, input error %g\n", (double)ep, (double)ex));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-nn_gradient_check_view", &view));
  if (view) PetscCall(PetscPrintf(comm, "Gradient check: parameter error %g, input error %g\n", (double)ep, (double)ex));
  if (errparam) *errparam = ep;
  if (errinput) *errinput = ex;
  PetscCall(VecDestroy(&buf0));
  PetscCall(VecDestroy(&g));
  PetscCall(VecDestroy(&dx));
  PetscCall(VecDestroy(&xc));
  PetscFunctionReturn(0);
}
