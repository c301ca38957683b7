/*
   Device passes of upsampling (-nn_device cuda), by the kernels of upsample_kernels.cu on every batch slot, as the CPU
   passes do. Nearest: the kernels index the grid directly. Bilinear / trilinear (align_corners false or
   true): the per-axis interpolation tables of the CPU (NNUpsampleLinear, upsample_linear.c) are copied to the device
   with their transposes in CSR form (for each input index, the outputs that read it and their weights), so the backward
   pass gathers instead of scattering. They are built at the first device pass after set-up (NNUpsampleLinearSetUp()
   frees them) or a change of precision. Both modes run on spatial activations split over ranks: the nearest mode
   upsamples the rank's own box; the linear modes read the ghosted input (halo 1, exchanged through page-locked host
   memory as the convolutions' halos are) and write the ghosted input gradient, summed back over the halos, since the
   CPU's tables index the ghosted input box and the owned outputs.
*/
#include "upsample.h"
#include <petnn/private/cudaimpl.h>
#include <petnn/private/spatialhalodevice.h>

/* the nearest mode's geometry: the rank's input box (the whole grid on one rank); split over ranks the output DMDA owns
   that box times the scale (NNLayerCreateOutputVec_Upsample()), so no pixel of another rank is read */
static PetscErrorCode NNUpsampleDeviceGeom(NNLayer l, NNCUDAUpsampleGeom *g)
{
  NNLayer_Upsample *d  = (NNLayer_Upsample *)l->data;
  PetscInt          nd = l->inshape.ndim - 1, m[3]; /* (C,H,W) or (C,D,H,W); the DMDA's x is W */
  DM                dain;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(DMDAGetCorners(dain, NULL, NULL, NULL, &m[0], &m[1], &m[2]));
  for (PetscInt a = 0; a < 3; a++) {
    g->im[a] = a < nd ? (int)m[a] : 1;
    g->s[a]  = a < nd ? (int)d->scale : 1;
  }
  g->D = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
  PetscFunctionReturn(0);
}

/* the geometry of the linear mode's kernels and, when missing or in another precision, the device tables (the layout
   of NNCUDAUpsampleLinearGeom in cudakernels.h): forward pairs of every axis, then the row pointers, then the entries */
static PetscErrorCode NNUpsampleLinearDeviceSetUp(NNLayer l, NNCUDAUpsampleLinearGeom *g)
{
  NNLayer_Upsample *d  = (NNLayer_Upsample *)l->data;
  NNUpsampleLinear *u  = &d->lin;
  PetscInt          nd = l->inshape.ndim - 1, n = 0, ne, mx = 1, *cur;
  PetscBool         single = (PetscBool)(l->dev.prec == NN_PRECISION_SINGLE);
  int              *hi;
  double           *hw;

  PetscFunctionBegin;
  PetscCheck(u->i0[0], PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s (%s): create its output Vec (NNSetUp() does) before running it", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  for (PetscInt a = 0; a < 3; a++) { /* the tables index the ghosted input box and the owned outputs (the grids on one rank) */
    g->im[a] = (int)u->gm[a];
    g->om[a] = (int)u->om[a];
    mx       = PetscMax(mx, u->gm[a]);
  }
  g->nc = nd == 3 ? 8 : 4;
  g->D  = (size_t)l->nbatch * (size_t)l->inshape.dim[0];
  for (PetscInt a = 0; a < 3; a++) {
    g->f[a] = (int)n;
    n += 2 * u->om[a];
  }
  for (PetscInt a = 0; a < 3; a++) {
    g->r[a] = (int)n;
    n += u->gm[a] + 1;
  }
  ne = n;
  for (PetscInt a = 0; a < 3; a++) n += (a < nd ? 2 : 1) * u->om[a]; /* an axis beyond the sample's reads only i0 (weight 1) */
  PetscCheck(n <= PETSC_MPI_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "Layer %s (%s): %" PetscInt_FMT " table entries overflow the device passes' int indices", ((PetscObject)l)->name, ((PetscObject)l)->type_name, n);
  if (u->didx && u->dprec == l->dev.prec) PetscFunctionReturn(0);

  PetscCall(PetscMalloc3(n, &hi, n, &hw, mx, &cur));
  PetscCall(PetscArrayzero(hi, n));
  PetscCall(PetscArrayzero(hw, n));
  for (PetscInt a = 0; a < 3; a++)
    for (PetscInt q = 0; q < u->om[a]; q++) {
      hi[g->f[a] + 2 * q]     = (int)u->i0[a][q];
      hi[g->f[a] + 2 * q + 1] = (int)u->i1[a][q];
      hw[g->f[a] + 2 * q]     = u->w0[a][q];
      hw[g->f[a] + 2 * q + 1] = u->w1[a][q];
    }
  for (PetscInt a = 0, e = ne; a < 3; a++) { /* the transpose by a counting sort: each row in increasing output q, w0 before w1 */
    int *row = hi + g->r[a];
    for (PetscInt q = 0; q < u->om[a]; q++) {
      row[u->i0[a][q] + 1]++;
      if (a < nd) row[u->i1[a][q] + 1]++;
    }
    row[0] = (int)e;
    for (PetscInt p = 0; p < u->gm[a]; p++) {
      row[p + 1] += row[p];
      cur[p] = row[p];
    }
    for (PetscInt q = 0; q < u->om[a]; q++) {
      hi[cur[u->i0[a][q]]]   = (int)q;
      hw[cur[u->i0[a][q]]++] = u->w0[a][q];
      if (a < nd) {
        hi[cur[u->i1[a][q]]]   = (int)q;
        hw[cur[u->i1[a][q]]++] = u->w1[a][q];
      }
    }
    e = row[u->gm[a]];
  }

  PetscCall(NNCUDAFree((void **)&u->didx));
  PetscCall(NNCUDAFree(&u->dw));
  PetscCall(NNCUDAMalloc((size_t)n * sizeof(int), (void **)&u->didx));
  PetscCall(NNCUDAMalloc((size_t)n * (single ? sizeof(float) : sizeof(double)), &u->dw));
  u->dprec = l->dev.prec;
  /* once per set-up: synchronous copies, so the host tables can go */
  NNCallCUDA(cudaMemcpy(u->didx, hi, (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
  if (single) {
    float *hf;
    PetscCall(PetscMalloc1(n, &hf));
    for (PetscInt k = 0; k < n; k++) hf[k] = (float)hw[k];
    NNCallCUDA(cudaMemcpy(u->dw, hf, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
    PetscCall(PetscFree(hf));
  } else NNCallCUDA(cudaMemcpy(u->dw, hw, (size_t)n * sizeof(double), cudaMemcpyHostToDevice));
  PetscCall(PetscFree3(hi, hw, cur));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, const void *x, void *y)
{
  NNLayer_Upsample *d      = (NNLayer_Upsample *)l->data;
  int               single = l->dev.prec == NN_PRECISION_SINGLE;
  cudaStream_t      s;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  if (d->mode == NN_UPSAMPLE_LINEAR) {
    NNCUDAUpsampleLinearGeom g;
    const void              *xg;
    PetscCall(NNUpsampleLinearDeviceSetUp(l, &g));
    PetscCall(NNSpatialHaloDeviceGetInput(&d->lin.h, l->dev.prec, x, &xg));
    NNCallCUDA(NNCUDAUpsampleLinear(single, 1, &g, d->lin.didx, d->lin.dw, xg, y, s));
    PetscCall(PetscLogFlops(2.0 * g.nc * g.D * g.om[0] * g.om[1] * g.om[2]));
  } else {
    NNCUDAUpsampleGeom g;
    PetscCall(NNUpsampleDeviceGeom(l, &g));
    NNCallCUDA(NNCUDAUpsampleNearest(single, 1, &g, x, y, s));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Upsample(NNLayer l, PetscInt n PETSC_UNUSED, const void *x PETSC_UNUSED, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNLayer_Upsample *d      = (NNLayer_Upsample *)l->data;
  int               single = l->dev.prec == NN_PRECISION_SINGLE;
  cudaStream_t      s;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  if (d->mode == NN_UPSAMPLE_LINEAR) {
    NNCUDAUpsampleLinearGeom g;
    void                    *dxg;
    PetscCall(NNUpsampleLinearDeviceSetUp(l, &g));
    PetscCall(NNSpatialHaloDeviceGetInputGradient(&d->lin.h, l->dev.prec, dx, &dxg));
    NNCallCUDA(NNCUDAUpsampleLinear(single, 0, &g, d->lin.didx, d->lin.dw, dy, dxg, s)); /* every ghosted entry written */
    PetscCall(NNSpatialHaloDeviceRestoreInputGradient(&d->lin.h, l->dev.prec, dx));
    PetscCall(PetscLogFlops(2.0 * g.nc * g.D * g.om[0] * g.om[1] * g.om[2]));
  } else {
    NNCUDAUpsampleGeom g;
    PetscCall(NNUpsampleDeviceGeom(l, &g));
    NNCallCUDA(NNCUDAUpsampleNearest(single, 0, &g, dy, dx, s));
    PetscCall(PetscLogFlops((PetscLogDouble)g.im[0] * g.im[1] * g.im[2] * g.D * g.s[0] * g.s[1] * g.s[2]));
  }
  PetscFunctionReturn(0);
}
