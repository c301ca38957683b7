/*
   Shared machinery of the spatial (DMDA) layout, used by every spatial layer.

   Layout: a batch of nbatch samples with C channels on a W x H (x D) grid is a global Vec of a 2-d
   (3-d) DMDA with x = W, y = H (, z = D) and dof = nbatch*C; the rank's local array is
   [z][y][x][s][c] over its subdomain (channels-last, batch folded into the dof). Sample shapes are
   (C,H,W) in 2-d and (C,D,H,W) in 3-d, as in PyTorch.

   Windowed operators (convolution, pooling) read, for output index o along an axis, the inputs
   o*stride - pad + j*dilation, j = 0..k-1. Output o is owned by the rank whose input range holds
   the centre of that window (clamped to the grid), so outputs follow the input decomposition,
   uneven splits included; the halo a rank needs is the farthest its windows reach outside its
   range. The halo DMDA has the input's grid, dof and ownership ranges, so the input's global Vec
   fills its local Vec with DMGlobalToLocal and the adjoint is DMLocalToGlobal(ADD_VALUES).
*/
#include <petnn/private/nnimpl.h>

/* output extent along each axis (PyTorch's floor formula) */
PetscErrorCode NNSpatialWindowOutputSize(NNLayer l, const NNSpatialWindow *w, PetscInt No[3])
{
  static const char *axis[3] = {"x (width)", "y (height)", "z (depth)"};

  PetscFunctionBegin;
  for (PetscInt a = 0; a < 3; a++) {
    PetscInt64 span = (PetscInt64)w->dil[a] * (w->k[a] - 1) + 1, extent = (PetscInt64)w->N[a] + 2 * (PetscInt64)w->p[a]; /* 64 bits: huge kernels or paddings are refused, not wrapped */
    if (a >= w->nd) {
      No[a] = 1;
      continue;
    }
    PetscCheck(w->k[a] > 0 && w->s[a] > 0 && w->dil[a] > 0 && w->p[a] >= 0, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_OUTOFRANGE, "Layer %s: kernel %" PetscInt_FMT ", stride %" PetscInt_FMT " and dilation %" PetscInt_FMT " must be positive and padding %" PetscInt_FMT " non-negative", ((PetscObject)l)->name, w->k[a], w->s[a], w->dil[a], w->p[a]);
    PetscCheck(extent >= span && extent <= PETSC_MAX_INT, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_SIZ, "Layer %s: a window spanning %" PetscInt64_FMT " pixels (kernel %" PetscInt_FMT ", dilation %" PetscInt_FMT ") does not fit the input extent %" PetscInt_FMT " along %s with padding %" PetscInt_FMT, ((PetscObject)l)->name, span, w->k[a], w->dil[a], w->N[a], axis[a], w->p[a]);
    No[a] = (PetscInt)((extent - span) / w->s[a] + 1);
  }
  PetscFunctionReturn(0);
}

/*
   NNSpatialGetInputDA - the layer's input DMDA, checked against the layer's input shape

   Errors name the layer that should come first when the input is sequential.
*/
PetscErrorCode NNSpatialGetInputDA(NNLayer l, DM *da)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)l);
  PetscInt dim, M, N, P, dof, nd = l->inshape.ndim - 1;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, da));
  PetscCheck(*da, comm, PETSC_ERR_ARG_WRONG, "Layer %s (%s) needs a spatial (DMDA) input but %s produces a sequential one; put a %s layer before it", ((PetscObject)l)->name, ((PetscObject)l)->type_name, l->inputname ? l->inputname : "its input", NNLAYERTOSPATIAL);
  PetscCall(DMDAGetInfo(*da, &dim, &M, &N, &P, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(dim == nd && dof == l->nbatch * l->inshape.dim[0] && M == l->inshape.dim[nd] && N == l->inshape.dim[nd - 1] && (nd == 2 || P == l->inshape.dim[1]), comm, PETSC_ERR_PLIB, "Layer %s: input DMDA (%" PetscInt_FMT "-d, %" PetscInt_FMT " x %" PetscInt_FMT " x %" PetscInt_FMT ", dof %" PetscInt_FMT ") does not match the input shape", ((PetscObject)l)->name, dim, M, N, P, dof);
  PetscFunctionReturn(0);
}

/* ownership of outputs along one axis (see the top of the file); *halo grows to the reach needed;
   *empty is a rank that gets no outputs (-1: none) */
static void NNSpatialAxisRanges(PetscInt Nin, PetscInt Nout, PetscInt nr, const PetscInt lin[], PetscInt k, PetscInt s, PetscInt p, PetscInt dil, PetscBool periodic, PetscInt lout[], PetscInt *halo, PetscInt *empty)
{
  PetscInt r = 0, a = 0, span = dil * (k - 1);

  *empty = -1;
  for (PetscInt i = 0; i < nr; i++) lout[i] = 0;
  for (PetscInt o = 0; o < Nout; o++) {
    PetscInt lo = o * s - p, hi = lo + span, c = PetscMin(PetscMax(lo + span / 2, 0), Nin - 1);
    while (c >= a + lin[r]) a += lin[r++];
    lout[r]++;
    if (!periodic) { /* zero padding: taps outside the grid read nothing */
      while (lo < 0) lo += dil;
      while (hi > Nin - 1) hi -= dil;
    }
    *halo = PetscMax(*halo, PetscMax(a - lo, hi - (a + lin[r] - 1)));
  }
  for (PetscInt i = nr - 1; i >= 0; i--)
    if (!lout[i]) *empty = i;
}

/*
   NNSpatialCreateWindowDMs - halo and output DMDAs of a windowed layer

   Input Parameters:
+  l      - the layer (for messages and its communicator)
.  dain   - the input DMDA (NNSpatialGetInputDA())
.  w      - the window: input extents, kernel, stride, padding, dilation per axis, periodicity
-  dofout - dof of the output DMDA (nbatch * output channels)

   Output Parameters:
+  dahalo - input grid, dof and ranges with stencil width *halo (periodic boundaries if w->periodic)
.  daout  - output grid (NNSpatialWindowOutputSize()) with the owned outputs' ranges, stencil width 0
-  halo   - the stencil width
*/
PetscErrorCode NNSpatialCreateWindowDMs(NNLayer l, DM dain, const NNSpatialWindow *w, PetscInt dofout, DM *dahalo, DM *daout, PetscInt *halo)
{
  MPI_Comm        comm = PetscObjectComm((PetscObject)l);
  PetscInt        dim, M[3], nr[3], dof, No[3], *lo[3] = {NULL, NULL, NULL};
  const PetscInt *li[3];
  DMBoundaryType  bt = w->periodic ? DM_BOUNDARY_PERIODIC : DM_BOUNDARY_NONE;
  static const char *axis[3] = {"x (width)", "y (height)", "z (depth)"};

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(dain, &dim, &M[0], &M[1], &M[2], &nr[0], &nr[1], &nr[2], &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(dim == w->nd, comm, PETSC_ERR_PLIB, "Layer %s: %" PetscInt_FMT "-d window on a %" PetscInt_FMT "-d DMDA", ((PetscObject)l)->name, w->nd, dim);
  PetscCall(DMDAGetOwnershipRanges(dain, &li[0], &li[1], &li[2]));
  PetscCall(NNSpatialWindowOutputSize(l, w, No));
  *halo = 0;
  for (PetscInt a = 0; a < dim; a++) {
    PetscInt empty;
    PetscCall(PetscMalloc1(nr[a], &lo[a]));
    NNSpatialAxisRanges(M[a], No[a], nr[a], li[a], w->k[a], w->s[a], w->p[a], w->dil[a], w->periodic, lo[a], halo, &empty);
    if (empty >= 0) {
      for (PetscInt b = 0; b <= a; b++) PetscCall(PetscFree(lo[b]));
      SETERRQ(comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s): rank %" PetscInt_FMT " along %s gets no output pixels (input %" PetscInt_FMT ", output %" PetscInt_FMT " pixels over %" PetscInt_FMT " ranks); use at most %" PetscInt_FMT " ranks along %s or -da_processors/-da_ownership_ranges options that leave every rank a window centre", ((PetscObject)l)->name, ((PetscObject)l)->type_name, empty, axis[a], M[a], No[a], nr[a], No[a], axis[a]);
    }
  }
  for (PetscInt a = 0; a < dim; a++) /* PETSc's DMDA needs every rank's piece at least as wide as the halo */
    for (PetscInt i = 0; i < nr[a]; i++)
      if (li[a][i] < *halo) {
        for (PetscInt b = 0; b < dim; b++) PetscCall(PetscFree(lo[b]));
        SETERRQ(comm, PETSC_ERR_ARG_SIZ, "Layer %s (%s) needs a halo of %" PetscInt_FMT " pixels but rank %" PetscInt_FMT " along %s holds only %" PetscInt_FMT " of the %" PetscInt_FMT " input pixels; use fewer ranks along %s (at most %" PetscInt_FMT ")", ((PetscObject)l)->name, ((PetscObject)l)->type_name, *halo, i, axis[a], li[a][i], M[a], axis[a], PetscMax(1, M[a] / PetscMax(1, *halo)));
      }
  if (dim == 2) {
    PetscCall(DMDACreate2d(comm, bt, bt, DMDA_STENCIL_BOX, M[0], M[1], nr[0], nr[1], dof, *halo, li[0], li[1], dahalo));
    PetscCall(DMDACreate2d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, No[0], No[1], nr[0], nr[1], dofout, 0, lo[0], lo[1], daout));
  } else {
    PetscCall(DMDACreate3d(comm, bt, bt, bt, DMDA_STENCIL_BOX, M[0], M[1], M[2], nr[0], nr[1], nr[2], dof, *halo, li[0], li[1], li[2], dahalo));
    PetscCall(DMDACreate3d(comm, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_BOX, No[0], No[1], No[2], nr[0], nr[1], nr[2], dofout, 0, lo[0], lo[1], lo[2], daout));
  }
  PetscCall(DMSetUp(*dahalo));
  PetscCall(DMSetUp(*daout));
  for (PetscInt a = 0; a < dim; a++) PetscCall(PetscFree(lo[a]));
  PetscFunctionReturn(0);
}

/*
   NNSpatialCreateLike - a DMDA with the grid and decomposition of da and a different dof
   (layers whose output has other channels but the same pixels: batch norm never needs it,
   1x1 maps and the loss's target layout do)
*/
PetscErrorCode NNSpatialCreateLike(DM da, PetscInt dof, PetscInt width, DM *out)
{
  PetscInt        dim, M, N, P, m, n, p;
  const PetscInt *lx, *ly, *lz;
  DMBoundaryType  bx, by, bz;

  PetscFunctionBegin;
  PetscCall(DMDAGetInfo(da, &dim, &M, &N, &P, &m, &n, &p, NULL, NULL, &bx, &by, &bz, NULL));
  PetscCall(DMDAGetOwnershipRanges(da, &lx, &ly, &lz));
  if (dim == 2) PetscCall(DMDACreate2d(PetscObjectComm((PetscObject)da), bx, by, DMDA_STENCIL_BOX, M, N, m, n, dof, width, lx, ly, out));
  else PetscCall(DMDACreate3d(PetscObjectComm((PetscObject)da), bx, by, bz, DMDA_STENCIL_BOX, M, N, P, m, n, p, dof, width, lx, ly, lz, out));
  PetscCall(DMSetUp(*out));
  PetscFunctionReturn(0);
}

/*
   NNSpatialCopy - copies between the sequential layout seq[s][c][(z)][y][x] of the first n samples
   and the rank's subdomain sp[z][y][x][s][c] of a DMDA with dof nbatch*C

   tospatial: sp <- seq (slots s >= n set to zero); otherwise seq <- sp on the rank's subdomain
   (other entries of seq untouched).
*/
/* the loops of NNSpatialCopy() for element type T */
#define NN_SPATIAL_COPY(T) \
  do { \
    PetscInt xs, ys, zs, xm, ym, zm, C = shape->dim[0], nd = shape->ndim - 1, D = nbatch * C; \
    PetscInt W = shape->dim[nd], H = shape->dim[nd - 1], Dz = nd == 3 ? shape->dim[1] : 1; \
    PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm)); \
    if (nd == 2) { \
      zs = 0; \
      zm = 1; \
    } \
    for (PetscInt z = zs; z < zs + zm; z++) \
      for (PetscInt y = ys; y < ys + ym; y++) \
        for (PetscInt x = xs; x < xs + xm; x++) { \
          T *p = sp + (((z - zs) * ym + (y - ys)) * xm + (x - xs)) * D; \
          for (PetscInt s = 0; s < n; s++) \
            for (PetscInt c = 0; c < C; c++) { \
              T *q = seq + (((s * C + c) * Dz + z) * H + y) * W + x; \
              if (tospatial) p[s * C + c] = *q; \
              else *q = p[s * C + c]; \
            } \
          if (tospatial) \
            for (PetscInt i = n * C; i < D; i++) p[i] = 0; \
        } \
  } while (0)

PetscErrorCode NNSpatialCopy(DM da, PetscInt nbatch, const NNShape *shape, PetscInt n, PetscScalar *seq, PetscScalar *sp, PetscBool tospatial)
{
  PetscFunctionBegin;
  NN_SPATIAL_COPY(PetscScalar);
  PetscFunctionReturn(0);
}

/* NNSpatialCopy() on float arrays (the float passes of to_spatial and spatial_flatten) */
PetscErrorCode NNSpatialCopySingle(DM da, PetscInt nbatch, const NNShape *shape, PetscInt n, float *seq, float *sp, PetscBool tospatial)
{
  PetscFunctionBegin;
  NN_SPATIAL_COPY(float);
  PetscFunctionReturn(0);
}
