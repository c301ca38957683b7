static char help[] = "The device's halo exchange of split spatial activations (-nn_device cuda; staged through page-locked host\n"
                     "buffers, src/layer/interface/spatialhalo_cuda.c): the scatter to the ghosts F (NNSpatialHaloDeviceScatter())\n"
                     "and the sum from the ghosts (NNSpatialHaloDeviceSum()) must be adjoint, <F x, y> = <x, F^T y> over all ranks\n"
                     "(within 1e-14 ||F x|| ||y|| in double, 1e-6 in single) for random x (owned) and y (ghosted), in double and\n"
                     "in single precision, on a 2-d DMDA with a box stencil,\n"
                     "non-periodic and periodic; F must also be DMGlobalToLocal() and F^T DMLocalToGlobal(ADD_VALUES) (double).\n"
                     "Without a GPU (or in a PetNN built without CUDA) the program says why and exits with code 77 (skipped).\n\n"
                     "  -M <13>, -N <9>      the grid\n"
                     "  -dof <5>             entries per pixel\n"
                     "  -sw <2>              stencil width\n"
                     "  -print_errors        print the measured differences (not stable output)\n\n";

#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt  M, N, dof, sw;
  PetscBool print;
} Ctx;

/* n random numbers in [-1, 1], rounded to the precision (es bytes) and stored both as doubles (a) and in the precision (raw) */
static PetscErrorCode Draw(PetscRandom r, PetscInt n, size_t es, PetscScalar *a, void *raw)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < n; i++) {
    PetscScalar u;
    PetscCall(PetscRandomGetValue(r, &u));
    u = 2 * u - 1;
    if (es == sizeof(float)) {
      ((float *)raw)[i] = (float)u;
      a[i]              = ((float *)raw)[i];
    } else ((double *)raw)[i] = a[i] = u;
  }
  PetscFunctionReturn(0);
}

static void ToDouble(PetscInt n, size_t es, const void *raw, PetscScalar *a)
{
  for (PetscInt i = 0; i < n; i++) a[i] = es == sizeof(float) ? ((const float *)raw)[i] : ((const double *)raw)[i];
}

static PetscErrorCode Check(Ctx *ctx, PetscRandom r, NNPrecision prec, DMBoundaryType bt)
{
  NNSpatialHalo h;
  DM            da;
  PetscInt      xm, ym, gxm, gym, nown, ng;
  size_t        es = prec == NN_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  PetscScalar  *x, *y, *Fx, *FTy, dots[4], dot[4];
  void         *hraw, *dx, *dxg, *dyg, *dy;
  PetscReal     rel, tol = prec == NN_PRECISION_SINGLE ? 1e-6 : 1e-14;
  PetscMPIInt   size;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&h, sizeof(h)));
  PetscCall(DMDACreate2d(PETSC_COMM_WORLD, bt, bt, DMDA_STENCIL_BOX, ctx->M, ctx->N, PETSC_DECIDE, PETSC_DECIDE, ctx->dof, ctx->sw, NULL, NULL, &da));
  PetscCall(DMSetUp(da));
  h.dahalo = da; /* NNSpatialHaloReset() destroys it */
  PetscCall(DMDAGetCorners(da, NULL, NULL, NULL, &xm, &ym, NULL));
  PetscCall(DMDAGetGhostCorners(da, NULL, NULL, NULL, &gxm, &gym, NULL));
  nown = xm * ym * ctx->dof;
  ng   = gxm * gym * ctx->dof;
  PetscCall(PetscMalloc5(nown, &x, ng, &y, ng, &Fx, nown, &FTy, PetscMax(nown, ng) * es, &hraw));
  PetscCall(NNDeviceMalloc(nown * es, &dx));
  PetscCall(NNDeviceMalloc(ng * es, &dxg));
  PetscCall(NNDeviceMalloc(ng * es, &dyg));
  PetscCall(NNDeviceMalloc(nown * es, &dy));

  PetscCall(Draw(r, nown, es, x, hraw));
  PetscCall(NNDeviceCopyToDevice(dx, hraw, nown * es));
  PetscCall(Draw(r, ng, es, y, hraw));
  PetscCall(NNDeviceCopyToDevice(dyg, hraw, ng * es));
  PetscCall(NNSpatialHaloDeviceScatter(&h, prec, dx, dxg));
  PetscCall(NNSpatialHaloDeviceSum(&h, prec, dyg, dy));
  PetscCall(NNDeviceCopyToHost(hraw, dxg, ng * es));
  ToDouble(ng, es, hraw, Fx);
  PetscCall(NNDeviceCopyToHost(hraw, dy, nown * es));
  ToDouble(nown, es, hraw, FTy);

  dots[0] = dots[1] = dots[2] = dots[3] = 0;
  for (PetscInt i = 0; i < ng; i++) {
    dots[0] += Fx[i] * y[i];
    dots[2] += Fx[i] * Fx[i];
    dots[3] += y[i] * y[i];
  }
  for (PetscInt i = 0; i < nown; i++) dots[1] += x[i] * FTy[i];
  PetscCall(MPIU_Allreduce(dots, dot, 4, MPIU_SCALAR, MPIU_SUM, PETSC_COMM_WORLD));
  rel = PetscAbsScalar(dot[0] - dot[1]) / PetscSqrtReal(PetscRealPart(dot[2] * dot[3])); /* relative to ||F x|| ||y|| (the dot products may cancel) */
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (ctx->print) {
    size_t st[2], sts[2];
    PetscCall(NNSpatialHaloDeviceGetStaging(&h, prec, &st[0], &st[1]));
    PetscCallMPI(MPI_Allreduce(st, sts, 2, MPIU_SIZE_T, MPI_SUM, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s, %s, %d ranks: <F x, y> %.17g, <x, F^T y> %.17g, difference / (||F x|| ||y||) %.2e; an exchange stages %zu entries (the whole arrays: %zu)\n", NNPrecisions[prec], DMBoundaryTypes[bt], (int)size, (double)dot[0], (double)dot[1], (double)rel, sts[0], sts[1]));
  }
  PetscCheck(rel <= tol, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s, %s: <F x, y> = %.17g and <x, F^T y> = %.17g differ by %g ||F x|| ||y|| > %g", NNPrecisions[prec], DMBoundaryTypes[bt], (double)dot[0], (double)dot[1], (double)rel, (double)tol);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %s boundary: <F x, y> = <x, F^T y> within %g ||F x|| ||y||: PASSED\n", NNPrecisions[prec], DMBoundaryTypes[bt], (double)tol));

  if (prec == NN_PRECISION_DOUBLE) { /* the CPU's exchange on the same data */
    Vec          g, l;
    PetscScalar *a;
    PetscReal    e[2] = {0, 0}, n2 = 0, ea[2];
    PetscCall(DMGetGlobalVector(da, &g));
    PetscCall(DMGetLocalVector(da, &l));
    PetscCall(VecGetArray(g, &a));
    PetscCall(PetscArraycpy(a, x, nown));
    PetscCall(VecRestoreArray(g, &a));
    PetscCall(DMGlobalToLocal(da, g, INSERT_VALUES, l));
    PetscCall(VecGetArray(l, &a));
    for (PetscInt i = 0; i < ng; i++) e[0] = PetscMax(e[0], PetscAbsScalar(a[i] - Fx[i]));
    PetscCall(PetscArraycpy(a, y, ng));
    PetscCall(VecRestoreArray(l, &a));
    PetscCall(VecZeroEntries(g));
    PetscCall(DMLocalToGlobal(da, l, ADD_VALUES, g));
    PetscCall(VecGetArray(g, &a));
    for (PetscInt i = 0; i < nown; i++) {
      e[1] = PetscMax(e[1], PetscAbsScalar(a[i] - FTy[i]));
      n2   = PetscMax(n2, PetscAbsScalar(a[i]));
    }
    PetscCall(VecRestoreArray(g, &a));
    PetscCall(DMRestoreLocalVector(da, &l));
    PetscCall(DMRestoreGlobalVector(da, &g));
    PetscCall(MPIU_Allreduce(e, ea, 2, MPIU_REAL, MPIU_MAX, PETSC_COMM_WORLD));
    if (ctx->print) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  vs DMGlobalToLocal: max difference %.2e; vs DMLocalToGlobal(ADD_VALUES): %.2e\n", (double)ea[0], (double)ea[1]));
    PetscCheck(ea[0] == 0 && ea[1] <= 1e-15 * PetscMax(n2, 1), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the device's exchange differs from the CPU's: scatter by %g, sum by %g", DMBoundaryTypes[bt], (double)ea[0], (double)ea[1]);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "double, %s boundary: the scatter is DMGlobalToLocal, the sum DMLocalToGlobal(ADD_VALUES): PASSED\n", DMBoundaryTypes[bt]));
  }

  PetscCall(NNDeviceFree(&dx));
  PetscCall(NNDeviceFree(&dxg));
  PetscCall(NNDeviceFree(&dyg));
  PetscCall(NNDeviceFree(&dy));
  PetscCall(PetscFree5(x, y, Fx, FTy, hraw));
  PetscCall(NNSpatialHaloReset(&h));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Ctx         ctx = {13, 9, 5, 2, PETSC_FALSE};
  PetscBool   avail;
  char        why[512];
  NN          net;
  PetscRandom r;
  PetscMPIInt rank;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-M", &ctx.M, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-N", &ctx.N, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dof", &ctx.dof, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-sw", &ctx.sw, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-print_errors", &ctx.print, NULL));
  PetscCall(NNDeviceIsAvailable(NN_DEVICE_CUDA, &avail, sizeof(why), why));
  if (!avail) { /* exit code 77: the harness reports the test as skipped */
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cuda_halo_adjoint: SKIPPED: %s\n", why));
    PetscCall(PetscFinalize());
    return 77;
  }
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net)); /* NNSetDevice() starts CUDA on this rank's GPU */
  PetscCall(NNSetDevice(net, NN_DEVICE_CUDA));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, 31 + 7 * (unsigned long)rank));
  PetscCall(PetscRandomSeed(r));
  for (int p = 0; p < 2; p++) {
    PetscCall(Check(&ctx, r, (NNPrecision)p, DM_BOUNDARY_NONE));
    PetscCall(Check(&ctx, r, (NNPrecision)p, DM_BOUNDARY_PERIODIC));
  }
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(NNDestroy(&net));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      requires: cuda_emulation
      suffix: emulation_1
      output_file: output/cuda_halo_adjoint.out

   test:
      requires: cuda_emulation
      suffix: emulation_2
      nsize: 2
      output_file: output/cuda_halo_adjoint.out

   test:
      requires: cuda_emulation
      suffix: emulation_3
      nsize: 3
      output_file: output/cuda_halo_adjoint.out

   test:
      requires: cuda_emulation
      suffix: emulation_4
      nsize: 4
      output_file: output/cuda_halo_adjoint.out

   test:
      requires: cuda
      suffix: 2
      nsize: 2
      output_file: output/cuda_halo_adjoint.out

TEST*/
