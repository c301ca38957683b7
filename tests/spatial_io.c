static char help[] = "Networks with spatial input (NNSetInputDM) and spatial output (loss on the DMDA): a fully\n"
                     "convolutional network's loss and gradients on the run's communicator against a serial copy,\n"
                     "sequential and DMDA input batches, NNPredict on the input DMDA, finite differences.\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>
#include <petscdmda.h>

static PetscBool       verbose = PETSC_FALSE;
static const PetscReal tol     = 1e-12;

#define C_IN 2
#define H_IN 6
#define W_IN 7
#define NB   3

static PetscErrorCode Report(const char what[], PetscReal err)
{
  PetscFunctionBegin;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s: %.3e\n", what, (double)err));
  PetscCheck(err < tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: rel. error %g >= %g", what, (double)err, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: rel. error < 1e-12\n", what));
  PetscFunctionReturn(0);
}

/* the first n samples of a sequential batch seq[s][c][y][x] into the rank's subdomain sp[y][x][s][c] of a
   2-d DMDA whose dof folds nbatch samples of C_IN channels (the other slots zero): the input DMDA layout */
static PetscErrorCode ToSpatial(DM da, PetscInt nbatch, PetscInt n, const PetscScalar *seq, PetscScalar *sp)
{
  PetscInt xs, ys, xm, ym, D = nbatch * C_IN;

  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(da, &xs, &ys, NULL, &xm, &ym, NULL));
  for (PetscInt y = ys; y < ys + ym; y++)
    for (PetscInt x = xs; x < xs + xm; x++) {
      PetscScalar *p = sp + ((y - ys) * xm + (x - xs)) * D;
      for (PetscInt s = 0; s < n; s++)
        for (PetscInt c = 0; c < C_IN; c++) p[s * C_IN + c] = seq[((s * C_IN + c) * H_IN + y) * W_IN + x];
      for (PetscInt i = n * C_IN; i < D; i++) p[i] = 0;
    }
  PetscFunctionReturn(0);
}

static PetscErrorCode RelDiff(Vec a, Vec b, PetscReal *e)
{
  PetscReal nb;
  Vec       d;

  PetscFunctionBegin;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, b, a));
  PetscCall(VecNorm(d, NORM_2, e));
  PetscCall(VecNorm(b, NORM_2, &nb));
  *e /= PetscMax(nb, 1e-300);
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

/* conv2d 3x3 (2->3) -> tanh -> conv2d 3x3 (3->2) on the input DMDA, mse on the spatial output */
static PetscErrorCode BuildFCN(MPI_Comm comm, const char prefix[], NN *net)
{
  DM      da;
  NNLayer l;

  PetscFunctionBegin;
  PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, W_IN, H_IN, PETSC_DECIDE, PETSC_DECIDE, C_IN, 1, NULL, NULL, &da));
  if (prefix) PetscCall(DMSetOptionsPrefix(da, prefix));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(NNCreate(comm, net));
  if (prefix) PetscCall(NNSetOptionsPrefix(*net, prefix));
  PetscCall(NNSetInputDM(*net, da));
  PetscCall(DMDestroy(&da));
  PetscCall(NNSetBatchSize(*net, NB));
  PetscCall(NNSetSeed(*net, 3));
  PetscCall(NNSetLoss(*net, NNLOSSMSE));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c1", &l));
  PetscCall(NNLayerConvSetFilters(l, 3));
  PetscCall(NNAddLayer(*net, NNLAYERTANH, "a1", NULL));
  PetscCall(NNAddLayer(*net, NNLAYERCONV2D, "c2", &l));
  PetscCall(NNLayerConvSetFilters(l, C_IN));
  PetscCall(NNSetUp(*net));
  PetscFunctionReturn(0);
}

static PetscErrorCode FillBatch(NN net, Vec *x, Vec *t)
{
  PetscRandom  r;
  PetscScalar *a;
  PetscInt     nx, nt;

  PetscFunctionBegin;
  PetscCall(NNCreateBatchVecs(net, x, t));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetInterval(r, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(r, 7));
  PetscCall(PetscRandomSeed(r));
  PetscCall(VecGetLocalSize(*x, &nx));
  PetscCall(VecGetLocalSize(*t, &nt));
  PetscCall(VecGetArray(*x, &a));
  for (PetscInt i = 0; i < nx; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(VecRestoreArray(*x, &a));
  PetscCall(VecGetArray(*t, &a));
  for (PetscInt i = 0; i < nt; i++) PetscCall(PetscRandomGetValue(r, &a[i]));
  PetscCall(VecRestoreArray(*t, &a));
  PetscCall(PetscRandomDestroy(&r));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  NN                 par, ser;
  Vec                x, t, xs, dxp, dxs, gp, gs, g2;
  PetscReal          Lp, Ls, L2, e, ep, ei;
  PetscInt           n = 2; /* fewer samples than the batch capacity */
  DM                 da0;
  PetscScalar       *a;
  const PetscScalar *xa;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  PetscCall(BuildFCN(PETSC_COMM_WORLD, NULL, &par));
  PetscCall(BuildFCN(PETSC_COMM_SELF, "serial_", &ser));
  PetscCall(FillBatch(par, &x, &t));
  PetscCall(VecDuplicate(x, &dxp));
  PetscCall(VecDuplicate(x, &dxs));

  /* sequential batches on both: the distributed network equals the serial one */
  PetscCall(NNLossGradient(par, n, x, t, &Lp, dxp));
  PetscCall(NNLossGradient(ser, n, x, t, &Ls, dxs));
  PetscCall(Report("FCN loss: run's communicator vs serial copy", PetscAbsReal(Lp - Ls) / PetscAbsReal(Ls)));
  PetscCall(NNGetGradient(par, &gp));
  PetscCall(NNGetGradient(ser, &gs));
  PetscCall(RelDiff(gp, gs, &e));
  PetscCall(Report("FCN parameter gradient vs serial copy", e));
  PetscCall(RelDiff(dxp, dxs, &e));
  PetscCall(Report("FCN input gradient vs serial copy", e));

  /* the same batch handed over in the input DMDA's layout gives the same loss and gradient */
  PetscCall(VecDuplicate(gp, &g2));
  PetscCall(VecCopy(gp, g2));
  PetscCall(NNCreateInputVec(par, &xs));
  PetscCall(VecGetDM(xs, &da0));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(xs, &a));
  PetscCall(ToSpatial(da0, NB, n, xa, a));
  PetscCall(VecRestoreArrayWrite(xs, &a));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(NNLossGradient(par, n, xs, t, &L2, NULL));
  PetscCall(Report("FCN loss: DMDA input vs sequential input", PetscAbsReal(L2 - Lp) / PetscAbsReal(Lp)));
  PetscCall(RelDiff(gp, g2, &e));
  PetscCall(Report("FCN parameter gradient: DMDA input vs sequential input", e));

  /* NNPredict between Vecs of the input DMDA (dof = channels) and of the output layout */
  {
    DM                 din, dout;
    Vec                xin, yout, yser, xser;
    PetscReal          n1, n2;

    PetscCall(NNGetInputDM(par, &din));
    PetscCall(DMCreateGlobalVector(din, &xin));
    PetscCall(DMDACreateCompatibleDMDA(din, C_IN, &dout)); /* same-padded convolutions keep the decomposition */
    PetscCall(DMCreateGlobalVector(dout, &yout));
    PetscCall(VecGetArrayWrite(xin, &a));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(ToSpatial(din, 1, 1, xa, a));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(VecRestoreArrayWrite(xin, &a));
    PetscCall(NNPredict(par, xin, yout));
    PetscCall(VecNorm(yout, NORM_2, &n1));
    /* serial reference: the first sample through the serial network */
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, C_IN * H_IN * W_IN, &xser));
    PetscCall(VecDuplicate(xser, &yser));
    PetscCall(VecGetArrayRead(x, &xa));
    PetscCall(VecGetArrayWrite(xser, &a));
    PetscCall(PetscArraycpy(a, xa, C_IN * H_IN * W_IN));
    PetscCall(VecRestoreArrayWrite(xser, &a));
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(NNPredict(ser, xser, yser));
    PetscCall(VecNorm(yser, NORM_2, &n2));
    PetscCall(Report("NNPredict on the input DMDA: output norm vs serial", PetscAbsReal(n1 - n2) / n2));
    PetscCall(VecDestroy(&xin));
    PetscCall(VecDestroy(&yout));
    PetscCall(VecDestroy(&xser));
    PetscCall(VecDestroy(&yser));
    PetscCall(DMDestroy(&dout));
  }

  /* finite differences through the spatial input staging and the spatial loss */
  PetscCall(NNGradientCheck(par, n, x, t, 1e-6, &ep, &ei));
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  finite differences: parameters %.3e, inputs %.3e\n", (double)ep, (double)ei));
  PetscCheck(ep < 1e-6 && ei < 1e-6, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "finite-difference check failed: %g %g", (double)ep, (double)ei);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FCN finite differences: parameters and inputs < 1e-6\n"));

  PetscCall(VecDestroy(&xs));
  PetscCall(VecDestroy(&g2));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(VecDestroy(&dxp));
  PetscCall(VecDestroy(&dxs));
  PetscCall(NNDestroy(&par));
  PetscCall(NNDestroy(&ser));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: 1
      nsize: 1

   test:
      suffix: 2
      nsize: 2
      args: -da_processors_x 2 -da_processors_y 1

   test:
      suffix: 3
      nsize: 3
      args: -da_processors_x 3 -da_processors_y 1

   test:
      suffix: 4
      nsize: 4
      args: -da_processors_x 2 -da_processors_y 2

TEST*/
