/*
   The halo exchange of a windowed spatial layer in single precision (-nn_precision single): the float input moves
   through the halo DMDA's own global-to-local scatter (the PetscSF behind DMGlobalToLocal()), with a unit of dof
   floats instead of dof doubles, into shared storage (spatialscratch.c); its adjoint sums the ghosted float input
   gradient back with the same PetscSF's reduction. PETSc 3.18's PetscSF cannot apply MPI_SUM to a derived datatype
   of floats (MPI_ERR_OP from MPIU_Reduce_local), so the reduction uses an MPI_Op of our own that adds floats.
   NNSpatialHaloGetSF() gives the SF, the unit and the sum for either precision: the device's staging
   (spatialhalo_cuda.c) moves doubles through it the same way. NNGetSumOp() gives the sum alone (the float adjoint of
   the spectral_conv layers' repartition, layers/spectral/spectralconv_repartition.c).
*/
#include <petnn/private/nnimpl.h>
#include <petsc/private/dmdaimpl.h>
#include <petsc/private/sfimpl.h>

static MPI_Op    NNFloatSumOp = MPI_OP_NULL, NNDoubleSumOp = MPI_OP_NULL;
static PetscBool NNSumOpsReg  = PETSC_FALSE;

/* inout += in, for len units of whatever datatype of T */
#define NN_SUM_OP(name, T) \
  static void MPIAPI name(void *in, void *inout, int *len, MPI_Datatype *type) \
  { \
    int      size; \
    const T *a = (const T *)in; \
    T       *b = (T *)inout; \
    size_t   n; \
    MPI_Type_size(*type, &size); \
    n = (size_t)*len * ((size_t)size / sizeof(T)); \
    for (size_t i = 0; i < n; i++) b[i] += a[i]; \
  }
NN_SUM_OP(NNFloatSum, float)
NN_SUM_OP(NNDoubleSum, double)

static PetscErrorCode NNSumOpsFree(void)
{
  PetscFunctionBegin;
  if (NNFloatSumOp != MPI_OP_NULL) PetscCallMPI(MPI_Op_free(&NNFloatSumOp));
  if (NNDoubleSumOp != MPI_OP_NULL) PetscCallMPI(MPI_Op_free(&NNDoubleSumOp));
  NNSumOpsReg = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*
   NNGetSumOp - the MPI_Op that sums units of floats (single) or doubles through a PetscSF's reduction (PETSc 3.18's
   PetscSF cannot apply MPI_SUM to a derived datatype of floats); freed by PetscFinalize()
*/
PetscErrorCode NNGetSumOp(PetscBool single, MPI_Op *sum)
{
  PetscFunctionBegin;
  if (!NNSumOpsReg) {
    PetscCallMPI(MPI_Op_create(NNFloatSum, 1, &NNFloatSumOp));
    PetscCallMPI(MPI_Op_create(NNDoubleSum, 1, &NNDoubleSumOp));
    PetscCall(PetscRegisterFinalize(NNSumOpsFree));
    NNSumOpsReg = PETSC_TRUE;
  }
  *sum = single ? NNFloatSumOp : NNDoubleSumOp;
  PetscFunctionReturn(0);
}

/*
   NNSpatialHaloGetSF - the halo DMDA's global-to-local PetscSF, its unit (dof floats when single, else dof doubles)
   and the MPI_Op that sums such units (the SF's reduction cannot apply MPI_SUM to a derived datatype here)
*/
PetscErrorCode NNSpatialHaloGetSF(NNSpatialHalo *h, PetscBool single, PetscSF *sf, MPI_Datatype *unit, MPI_Op *sum)
{
  MPI_Datatype *u = single ? &h->sunit : &h->dunit;

  PetscFunctionBegin;
  *sf = ((DM_DA *)h->dahalo->data)->gtol;
  if (!*u) {
    PetscMPIInt bs;
    PetscCall(PetscMPIIntCast((*sf)->vscat.bs, &bs));
    PetscCallMPI(MPI_Type_contiguous(bs, single ? MPI_FLOAT : MPI_DOUBLE, u));
    PetscCallMPI(MPI_Type_commit(u));
  }
  *unit = *u;
  if (sum) PetscCall(NNGetSumOp(single, sum));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNSpatialHaloLocalSize(NNSpatialHalo *h, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(h->xl, n));
  PetscFunctionReturn(0);
}

/* *xin: x (the input in its global layout) with its halo, in shared slot 0 until NNSpatialHaloRestoreInputSingle(), or x itself */
PetscErrorCode NNSpatialHaloGetInputSingle(NNSpatialHalo *h, const float *x, const float **xin)
{
  PetscSF      sf;
  MPI_Datatype unit;
  PetscInt     n;
  float       *xl;

  PetscFunctionBegin;
  *xin = x;
  if (!h->xl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloGetSF(h, PETSC_TRUE, &sf, &unit, NULL));
  PetscCall(NNSpatialHaloLocalSize(h, &n));
  PetscCall(NNSpatialHaloSlotGetSingle(0, n, &xl));
  PetscCall(PetscSFBcastBegin(sf, unit, x, xl, MPI_REPLACE));
  PetscCall(PetscSFBcastEnd(sf, unit, x, xl, MPI_REPLACE));
  *xin = xl;
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpatialHaloRestoreInputSingle(NNSpatialHalo *h)
{
  PetscFunctionBegin;
  if (h->xl) PetscCall(NNSpatialHaloSlotRestoreSingle(0));
  PetscFunctionReturn(0);
}

/* *dxin: where the backward pass adds the input gradient, zeroed: the ghosted slot 1, or dx itself */
PetscErrorCode NNSpatialHaloGetInputGradientSingle(NNSpatialHalo *h, float *dx, float **dxin)
{
  PetscInt n;

  PetscFunctionBegin;
  if (!h->dxl) {
    PetscInt xm, ym, zm, dof;
    PetscCall(DMDAGetCorners(h->dahalo, NULL, NULL, NULL, &xm, &ym, &zm));
    PetscCall(DMDAGetInfo(h->dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
    PetscCall(PetscArrayzero(dx, xm * ym * zm * dof));
    *dxin = dx;
    PetscFunctionReturn(0);
  }
  PetscCall(NNSpatialHaloLocalSize(h, &n));
  PetscCall(NNSpatialHaloSlotGetSingle(1, n, dxin));
  PetscCall(PetscArrayzero(*dxin, n));
  h->sdxl = *dxin;
  PetscFunctionReturn(0);
}

/* dx = the ghosted gradient summed over the ranks' halos (the adjoint of NNSpatialHaloGetInputSingle()) */
PetscErrorCode NNSpatialHaloRestoreInputGradientSingle(NNSpatialHalo *h, float *dx)
{
  PetscSF      sf;
  MPI_Datatype unit;
  MPI_Op       sum;
  PetscInt     xm, ym, zm, dof;

  PetscFunctionBegin;
  if (!h->dxl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloGetSF(h, PETSC_TRUE, &sf, &unit, &sum));
  PetscCall(DMDAGetCorners(h->dahalo, NULL, NULL, NULL, &xm, &ym, &zm));
  PetscCall(DMDAGetInfo(h->dahalo, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCall(PetscArrayzero(dx, xm * ym * zm * dof));
  PetscCall(PetscSFReduceBegin(sf, unit, h->sdxl, dx, sum));
  PetscCall(PetscSFReduceEnd(sf, unit, h->sdxl, dx, sum));
  PetscCall(NNSpatialHaloSlotRestoreSingle(1));
  h->sdxl = NULL;
  PetscFunctionReturn(0);
}
