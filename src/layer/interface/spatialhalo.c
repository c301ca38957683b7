/*
   The halo of a windowed spatial layer (conv, pool): its DMDAs, the exchange before a pass and the
   summing back of the input gradient after the backward pass (the adjoint of the exchange).

   NNSpatialHaloSetUp() builds the halo DMDA (the input's grid, dof and ownership with the stencil
   width the window needs) and the output DMDA (NNSpatialCreateWindowDMs()); a type that needs the
   ghosted arrays then calls NNSpatialHaloCreateVecs(), whose local Vecs borrow storage shared by all
   layers for one pass (spatialscratch.c). Without them the input Vec's own arrays serve. On the device
   (-nn_device cuda, activations split over ranks) spatialhalo_cuda.c runs the same exchange on host copies.
*/
#include <petnn/private/nnimpl.h>

/* destroys the DMDAs and the halo Vecs */
PetscErrorCode NNSpatialHaloReset(NNSpatialHalo *h)
{
  PetscFunctionBegin;
  PetscCall(VecDestroy(&h->xl));
  PetscCall(VecDestroy(&h->dxl));
  PetscCall(DMDestroy(&h->dahalo));
  PetscCall(DMDestroy(&h->daout));
  if (h->sunit) PetscCallMPI(MPI_Type_free(&h->sunit));
  if (h->dunit) PetscCallMPI(MPI_Type_free(&h->dunit));
  h->sunit = h->dunit = NULL;
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNSpatialHaloDeviceReset(h));
#endif
  h->halo  = 0;
  PetscFunctionReturn(0);
}

/* the halo and output DMDAs for window w over the layer's input DMDA, dof values per output pixel */
PetscErrorCode NNSpatialHaloSetUp(NNLayer l, const NNSpatialWindow *w, PetscInt dof, NNSpatialHalo *h)
{
  DM dain;

  PetscFunctionBegin;
  PetscCall(NNSpatialGetInputDA(l, &dain));
  PetscCall(NNSpatialHaloReset(h));
  PetscCall(NNSpatialCreateWindowDMs(l, dain, w, dof, &h->dahalo, &h->daout, &h->halo));
  PetscFunctionReturn(0);
}

/* the ghosted local Vecs of the input and its gradient (storage lent per pass) */
PetscErrorCode NNSpatialHaloCreateVecs(NNSpatialHalo *h)
{
  PetscFunctionBegin;
  PetscCall(NNSpatialCreateHaloVec(h->dahalo, &h->xl));
  PetscCall(NNSpatialCreateHaloVec(h->dahalo, &h->dxl));
  PetscFunctionReturn(0);
}

/* the rank's owned output box (os, om) and ghosted input box (gs, gm), x, y, z; 2-d: z is [0, 1) */
PetscErrorCode NNSpatialHaloGetCorners(const NNSpatialHalo *h, PetscInt nd, PetscInt os[3], PetscInt om[3], PetscInt gs[3], PetscInt gm[3])
{
  PetscFunctionBegin;
  PetscCall(DMDAGetCorners(h->daout, &os[0], &os[1], &os[2], &om[0], &om[1], &om[2]));
  PetscCall(DMDAGetGhostCorners(h->dahalo, &gs[0], &gs[1], &gs[2], &gm[0], &gm[1], &gm[2]));
  if (nd == 2) {
    os[2] = gs[2] = 0;
    om[2] = gm[2] = 1;
  }
  PetscFunctionReturn(0);
}

/* *xin: x with its halo (the exchange into the lent slot 0, until NNSpatialHaloRestoreInput()), or x itself */
PetscErrorCode NNSpatialHaloGetInput(NNSpatialHalo *h, Vec x, Vec *xin)
{
  PetscFunctionBegin;
  *xin = x;
  if (!h->xl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloVecGet(h->xl, 0));
  PetscCall(DMGlobalToLocalBegin(h->dahalo, x, INSERT_VALUES, h->xl));
  PetscCall(DMGlobalToLocalEnd(h->dahalo, x, INSERT_VALUES, h->xl));
  *xin = h->xl;
  PetscFunctionReturn(0);
}

PetscErrorCode NNSpatialHaloRestoreInput(NNSpatialHalo *h)
{
  PetscFunctionBegin;
  if (h->xl) PetscCall(NNSpatialHaloVecRestore(h->xl, 0));
  PetscFunctionReturn(0);
}

/* *dxin: where the backward pass writes the input gradient: the ghosted slot 1, or dx itself */
PetscErrorCode NNSpatialHaloGetInputGradient(NNSpatialHalo *h, Vec dx, Vec *dxin)
{
  PetscFunctionBegin;
  *dxin = dx;
  if (!h->dxl) PetscFunctionReturn(0);
  PetscCall(NNSpatialHaloVecGet(h->dxl, 1));
  *dxin = h->dxl;
  PetscFunctionReturn(0);
}

/* dx = the ghosted gradient summed over the ranks' halos (DMLocalToGlobal with ADD_VALUES) */
PetscErrorCode NNSpatialHaloRestoreInputGradient(NNSpatialHalo *h, Vec dx)
{
  PetscFunctionBegin;
  if (!h->dxl) PetscFunctionReturn(0);
  PetscCall(VecZeroEntries(dx));
  PetscCall(DMLocalToGlobalBegin(h->dahalo, h->dxl, ADD_VALUES, dx));
  PetscCall(DMLocalToGlobalEnd(h->dahalo, h->dxl, ADD_VALUES, dx));
  PetscCall(NNSpatialHaloVecRestore(h->dxl, 1));
  PetscFunctionReturn(0);
}

#if !defined(PETNN_HAVE_CUDA)
/* the device's exchange needs CUDA (spatialhalo_cuda.c); these say so in a PetNN built without it */
PetscErrorCode NNSpatialHaloDeviceScatter(NNSpatialHalo *h, NNPrecision prec, const void *x, void *xg)
{
  PetscFunctionBegin;
  (void)h, (void)prec, (void)x, (void)xg;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "The device's halo exchange: this PetNN was built without CUDA");
}

PetscErrorCode NNSpatialHaloDeviceSum(NNSpatialHalo *h, NNPrecision prec, const void *xg, void *x)
{
  PetscFunctionBegin;
  (void)h, (void)prec, (void)xg, (void)x;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "The device's halo exchange: this PetNN was built without CUDA");
}
#endif
