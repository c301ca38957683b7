static char help[] = "The repartition of the spectral_conv (Fourier neural operator) layers between a DMDA's blocks and\n"
                     "FFTW MPI's slabs (layers/spectral/spectralconv_repartition.c): dot-product adjoint test\n"
                     "<F x, s> = <x, F* s> and F* F = I, for 2-d and 3-d grids with odd sizes, any rank grid of the\n"
                     "DMDA (-rp_da_processors_x/y/z) and several slab splits (FFTW's default blocks, uneven rows,\n"
                     "ranks without rows).\n\n"
                     "  -verbose   print the measured errors\n\n";

#include <petnn.h>
#include <petscdmda.h>
#include "../layers/spectral/spectralconv.h"

#define DOF 5 /* values per pixel (a run of nbatch*C) */

/* slab rows [r0, r0 + nr) of rank r out of n0: split 0 as FFTW's default block ceil(n0/P), split 1 uneven (rank r gets
   about (r+1)/sum weights), split 2 all rows on the last rank */
static void SlabRows(PetscInt split, PetscInt n0, PetscMPIInt rank, PetscMPIInt size, PetscInt *r0, PetscInt *nr)
{
  PetscInt b = (n0 + size - 1) / size, tot = size * (size + 1) / 2, s = 0, e = 0;

  if (split == 0) {
    *r0 = PetscMin(rank * b, n0);
    *nr = PetscMin(b, n0 - *r0);
  } else if (split == 1) {
    for (PetscMPIInt r = 0; r <= rank; r++) {
      s = e;
      e = r == size - 1 ? n0 : (n0 * (r + 1) * (r + 2) / 2) / tot;
    }
    *r0 = s;
    *nr = e - s;
  } else {
    *r0 = rank == size - 1 ? 0 : n0;
    *nr = rank == size - 1 ? n0 : 0;
    if (*r0 == n0) *r0 = 0;
  }
}

static PetscErrorCode TestGrid(PetscInt nd, const PetscInt M[3], PetscInt split, PetscBool verbose)
{
  DM               da;
  Vec              x, xb;
  NNFFTRepartition rep;
  PetscInt         r0, nr, npad, nloc;
  PetscMPIInt      rank, size;
  PetscScalar     *slab, *s, *xa, *ba;
  PetscReal        a = 0, b, e = 0, ax, bx;
  MPI_Datatype     unit;
  PetscRandom      rnd;
  const char      *splitname[] = {"FFTW blocks", "uneven rows", "all rows on the last rank"};

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (nd == 2) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], PETSC_DECIDE, PETSC_DECIDE, DOF, 0, NULL, NULL, &da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, M[0], M[1], M[2], PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, DOF, 0, NULL, NULL, NULL, &da));
  PetscCall(DMSetOptionsPrefix(da, "rp_"));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  SlabRows(split, M[nd - 1], rank, size, &r0, &nr);
  PetscCall(NNFFTRepartitionCreate(da, r0, nr, &rep));
  PetscCall(NNFFTRepartitionPaddedSize(&rep, &npad));
  PetscCall(PetscMalloc2(npad * DOF, &slab, npad * DOF, &s));
  PetscCall(DMCreateGlobalVector(da, &x));
  PetscCall(VecDuplicate(x, &xb));
  PetscCall(VecGetLocalSize(x, &nloc));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(PetscRandomSetSeed(rnd, 7 + rank));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt i = 0; i < npad * DOF; i++) PetscCall(PetscRandomGetValue(rnd, &s[i]));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCallMPI(MPI_Type_contiguous(DOF, MPIU_SCALAR, &unit));
  PetscCallMPI(MPI_Type_commit(&unit));

  /* <F x, s> */
  PetscCall(PetscArrayzero(slab, npad * DOF));
  PetscCall(VecGetArrayRead(x, (const PetscScalar **)&xa));
  PetscCall(NNFFTRepartitionForward(&rep, unit, xa, slab));
  for (PetscInt i = 0; i < npad * DOF; i++) a += PetscRealPart(slab[i] * s[i]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &a, 1, MPIU_REAL, MPIU_SUM, PETSC_COMM_WORLD));
  /* F* F x = x exactly (a permutation) */
  PetscCall(VecZeroEntries(xb));
  PetscCall(VecGetArray(xb, &ba));
  PetscCall(NNFFTRepartitionAdjoint(&rep, unit, slab, ba));
  for (PetscInt i = 0; i < nloc; i++) e = PetscMax(e, PetscAbsScalar(ba[i] - xa[i]));
  PetscCall(VecRestoreArrayRead(x, (const PetscScalar **)&xa));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
  /* <x, F* s> */
  PetscCall(PetscArrayzero(ba, nloc));
  PetscCall(NNFFTRepartitionAdjoint(&rep, unit, s, ba));
  PetscCall(VecRestoreArray(xb, &ba));
  PetscCall(VecDot(x, xb, &b));
  ax = PetscAbsReal(a - b) / PetscMax(PetscAbsReal(a), PetscAbsReal(b));
  bx = ax;
  if (verbose) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %" PetscInt_FMT "-d %s: <Fx,s> %.17g <x,F*s> %.17g rel. error %.3e, |F*Fx - x| %.3e\n", nd, splitname[split], (double)a, (double)b, (double)ax, (double)e));
  PetscCheck(bx <= 1e-13 && e == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "repartition %" PetscInt_FMT "-d, %s: adjoint rel. error %g, |F*F x - x| %g", nd, splitname[split], (double)bx, (double)e);
  if (nd == 2) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "2-d %" PetscInt_FMT "x%" PetscInt_FMT " (HxW), %s: adjoint rel. error <= 1e-13, F*F = I exactly\n", M[1], M[0], splitname[split]));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "3-d %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT " (DxHxW), %s: adjoint rel. error <= 1e-13, F*F = I exactly\n", M[2], M[1], M[0], splitname[split]));
  PetscCallMPI(MPI_Type_free(&unit));
  PetscCall(PetscFree2(slab, s));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xb));
  PetscCall(NNFFTRepartitionDestroy(&rep));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const PetscInt g2[3] = {9, 7, 1}, g3[3] = {6, 5, 7}; /* (W, H[, D]): DMDA x, y, z */
  PetscBool      verbose = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose", &verbose, NULL));
  for (PetscInt split = 0; split < 3; split++) {
    PetscCall(TestGrid(2, g2, split, verbose));
    PetscCall(TestGrid(3, g3, split, verbose));
  }
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   testset:
      requires: petnn_fftw
      test:
         suffix: 1
         nsize: 1
      test:
         suffix: 2
         nsize: 2
         args: -rp_da_processors_x 2 -rp_da_processors_y 1 -rp_da_processors_z 1
      test:
         suffix: 3
         nsize: 3
         args: -rp_da_processors_x 1 -rp_da_processors_y 3 -rp_da_processors_z 1
      test:
         suffix: 3z
         nsize: 3
         args: -rp_da_processors_x 3 -rp_da_processors_y 1 -rp_da_processors_z 1
      test:
         suffix: 4
         nsize: 4
         args: -rp_da_processors_x 2 -rp_da_processors_y 2 -rp_da_processors_z 1

TEST*/
