/*
   Networks whose input or output lives on a DMDA (the spatial layout of layers/spatial/spatial.c).

   Spatial input: NNSetInputDM() gives the network a DMDA describing the grid and its decomposition,
   with dof = channels (for example the DMDA of a PETSc simulation). The network's first activation
   is then a DMDA Vec with the same ownership ranges and dof = batch*channels, and callers pass
   either such a Vec (no replicated copy of the sample anywhere: the point for samples that do
   not fit one process) or a sequential batch as NNData fills it, which each rank cuts to its
   subdomain.

   Spatial output: a network that ends on a spatial layer (a fully convolutional surrogate) has
   its loss (any type with partial sums: mse, l1, huber, rel_l2, bce_with_logits) evaluated where
   the output lives: targets given sequentially are cut to the output's subdomains, the loss's
   partial sums are reduced over the ranks.
*/
#include <petnn/private/nnimpl.h>

/*@
   NNSetInputDM - makes the network take its input on a DMDA (spatial layout)

   Collective

   Input Parameters:
+  net - the network
-  da - a 2-d or 3-d DMDA whose dof is the number of input channels; its grid and decomposition
        become those of the network input (the input shape is set to (dof,H,W) or (dof,D,H,W))

   Notes:
   The first layer must then be a spatial layer (conv2d, pooling, ...); no to_spatial layer is
   needed. NNForward() and NNLossGradient() accept either a Vec of the network's input DMDA
   (same decomposition, dof = batch size * channels; for batch size 1 a global Vec of da itself)
   or a sequential batch of full samples. NNPredict() takes and returns Vecs of da and of the
   output's DMDA with dof = channels, one sample at a time, so a simulation can hand its own state
   to the network.

   Level: intermediate

.seealso: `NNGetInputDM()`, `NNSetInputShape()`, `NNPredict()`
@*/
PetscErrorCode NNSetInputDM(NN net, DM da)
{
  PetscInt  dim, M, N, P, dof;
  PetscBool isda;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(da, DM_CLASSID, 2);
  PetscCall(PetscObjectTypeCompare((PetscObject)da, DMDA, &isda));
  PetscCheck(isda, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "NNSetInputDM() needs a DMDA, not a %s", ((PetscObject)da)->type_name);
  PetscCall(DMDAGetInfo(da, &dim, &M, &N, &P, NULL, NULL, NULL, &dof, NULL, NULL, NULL, NULL, NULL));
  PetscCheck(dim == 2 || dim == 3, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_WRONG, "NNSetInputDM() needs a 2-d or 3-d DMDA, not %" PetscInt_FMT "-d", dim);
  if (dim == 2) PetscCall(NNSetInputShape(net, 3, (PetscInt[]){dof, N, M}));
  else PetscCall(NNSetInputShape(net, 4, (PetscInt[]){dof, P, N, M}));
  PetscCall(PetscObjectReference((PetscObject)da));
  PetscCall(DMDestroy(&net->spatial.indm));
  net->spatial.indm = da;
  PetscFunctionReturn(0);
}

/*@
   NNGetInputDM - gets the DMDA given with NNSetInputDM() (NULL for sequential input)

   Not Collective

   Level: intermediate

.seealso: `NNSetInputDM()`
@*/
PetscErrorCode NNGetInputDM(NN net, DM *da)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  *da = net->spatial.indm;
  PetscFunctionReturn(0);
}

/*@
   NNCreateInputVec - creates a Vec in the layout of the network's input activation

   Collective

   Output Parameter:
.  x - a sequential batch (batch size * sample size), or for a network with NNSetInputDM() a global
       Vec of a DMDA with the input's decomposition and dof = batch size * channels, local layout
       [z][y][x][sample][channel]

   Notes:
   NNForward() and NNLossGradient() read spatial batches in this layout without any copy.

   Level: intermediate

.seealso: `NNSetInputDM()`, `NNCreateBatchVecs()`
@*/
PetscErrorCode NNCreateInputVec(NN net, Vec *x)
{
  DM da;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (!net->spatial.indm) PetscCall(VecCreateSeq(PETSC_COMM_SELF, net->nbatch * NNShapeSize(&net->inshape), x));
  else {
    PetscCall(NNSpatialCreateLike(net->spatial.indm, net->nbatch * net->inshape.dim[0], 0, &da));
    PetscCall(DMCreateGlobalVector(da, x));
    PetscCall(DMDestroy(&da));
  }
  PetscFunctionReturn(0);
}

/* the Vec the first layer reads: x itself, or (spatial input given as a sequential batch) act[0] filled from x */
PetscErrorCode NNStageInput(NN net, PetscInt n, Vec x, Vec *x0)
{
  DM                 dm, da0;
  PetscInt           len, len0;
  const PetscScalar *xa;
  PetscScalar       *a0;

  PetscFunctionBegin;
  *x0 = x;
  if (!net->spatial.indm) PetscFunctionReturn(0);
  PetscCall(VecGetDM(x, &dm));
  PetscCall(VecGetLocalSize(x, &len));
  PetscCall(VecGetLocalSize(net->act[0], &len0));
  if (dm) {
    PetscCheck(len == len0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Spatial input Vec has %" PetscInt_FMT " local entries but the network's input DMDA has %" PetscInt_FMT " (same decomposition, dof = batch size %" PetscInt_FMT " x %" PetscInt_FMT " channels); create it with NNCreateBatchVecs()", len, len0, net->nbatch, net->inshape.dim[0]);
    PetscFunctionReturn(0);
  }
  PetscCheck(len >= n * NNShapeSize(&net->inshape), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Input Vec has %" PetscInt_FMT " entries but %" PetscInt_FMT " samples of size %" PetscInt_FMT " need %" PetscInt_FMT, len, n, NNShapeSize(&net->inshape), n * NNShapeSize(&net->inshape));
  PetscCall(VecGetDM(net->act[0], &da0));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(net->act[0], &a0));
  PetscCall(NNSpatialCopy(da0, net->nbatch, &net->inshape, n, (PetscScalar *)xa, a0, PETSC_TRUE));
  PetscCall(VecRestoreArrayWrite(net->act[0], &a0));
  PetscCall(VecRestoreArrayRead(x, &xa));
  *x0 = net->act[0];
  PetscFunctionReturn(0);
}

/* after the backward pass: the input gradient in x's layout (gathered when x was a sequential batch) */
PetscErrorCode NNUnstageInputGradient(NN net, PetscInt n, Vec x0, Vec dx0, Vec dx)
{
  DM                 da0;
  const PetscScalar *g0;
  PetscScalar       *g;
  PetscMPIInt        cnt;

  PetscFunctionBegin;
  if (!dx || x0 != net->act[0] || !net->spatial.indm) PetscFunctionReturn(0);
  PetscCall(VecGetDM(net->act[0], &da0));
  PetscCall(VecZeroEntries(dx));
  PetscCall(VecGetArrayRead(dx0, &g0));
  PetscCall(VecGetArray(dx, &g));
  PetscCall(NNSpatialCopy(da0, net->nbatch, &net->inshape, n, g, (PetscScalar *)g0, PETSC_FALSE));
  PetscCall(PetscMPIIntCast(n * NNShapeSize(&net->inshape), &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, cnt, MPIU_SCALAR, MPIU_SUM, NNGetLayerComm(net)));
  PetscCall(VecRestoreArray(dx, &g));
  PetscCall(VecRestoreArrayRead(dx0, &g0));
  PetscFunctionReturn(0);
}

/* targets in the layout of the spatial output y: t itself, or cut from a sequential batch into net->spatial.tspatial */
static PetscErrorCode NNLossSpatialTargets(NN net, PetscInt n, Vec y, Vec t, Vec *ts)
{
  DM                 dm, tdm;
  NNShape            out;
  PetscInt           tlen, k;
  const PetscScalar *ta;
  PetscScalar       *tsa;

  PetscFunctionBegin;
  *ts = t;
  PetscCall(VecGetDM(t, &tdm));
  if (tdm) PetscFunctionReturn(0);
  PetscCall(VecGetDM(y, &dm));
  PetscCall(NNGetOutputShape(net, &out));
  k = NNShapeSize(&out);
  PetscCall(VecGetLocalSize(t, &tlen));
  PetscCheck(tlen >= n * k, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Target Vec has %" PetscInt_FMT " entries but %" PetscInt_FMT " samples of size %" PetscInt_FMT " need %" PetscInt_FMT, tlen, n, k, n * k);
  if (!net->spatial.tspatial) PetscCall(VecDuplicate(y, &net->spatial.tspatial));
  PetscCall(VecGetArrayRead(t, &ta));
  PetscCall(VecGetArrayWrite(net->spatial.tspatial, &tsa));
  PetscCall(NNSpatialCopy(dm, net->nbatch, &out, n, (PetscScalar *)ta, tsa, PETSC_TRUE));
  PetscCall(VecRestoreArrayWrite(net->spatial.tspatial, &tsa));
  PetscCall(VecRestoreArrayRead(t, &ta));
  *ts = net->spatial.tspatial;
  PetscFunctionReturn(0);
}

/*
   NNLossEvaluate - mean loss of the first n samples of the output y against targets t, and dL/dy
   (dy may be NULL); y sequential or spatial (DMDA), t sequential, or in y's layout when y is spatial.
   A spatial output is evaluated where it lives with the loss's partial sums (NNLossOps.sums), added
   over the layer communicator; entries of unused batch slots are ignored and get zero gradient.
*/
PetscErrorCode NNLossEvaluate(NN net, PetscInt n, Vec y, Vec t, PetscReal *loss, Vec dy)
{
  DM                 dm;
  NNShape            out;
  const PetscScalar *ya, *ta;
  PetscScalar       *dya = NULL;
  PetscInt           k, xs, ys, zs, xm, ym, zm, D, nc;
  Vec                ts;
  NNLossBlock        b;

  PetscFunctionBegin;
  PetscCall(NNGetOutputShape(net, &out));
  k = NNShapeSize(&out);
  PetscCall(VecGetDM(y, &dm));
  if (!dm) {
    PetscCall(VecGetArrayRead(y, &ya));
    PetscCall(VecGetArrayRead(t, &ta));
    if (dy) PetscCall(VecGetArrayWrite(dy, &dya));
    if (net->lossops.classification) PetscCall(NNLossCheckTargets(net->loss, n, k, ta));
    if (net->lossops.eval) PetscCall(net->lossops.eval(n, k, ya, ta, loss, dya));
    else {
      b = (NNLossBlock){1, n * k, k, ya, ta};
      PetscCall(NNLossEvaluateBlock(&net->lossops, MPI_COMM_NULL, n, k, &b, loss, dya));
    }
    if (dy) PetscCall(VecRestoreArrayWrite(dy, &dya));
    PetscCall(VecRestoreArrayRead(t, &ta));
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscFunctionReturn(0);
  }
  PetscCheck(!net->lossops.classification && net->lossops.sums && net->lossops.finish, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "Loss %s on a spatial (DMDA) network output is not supported: use -nn_loss %s, or end the network with %s or %s for classification", net->loss, NNLOSSMSE, NNLAYERSPATIALFLATTEN, NNLAYERGLOBALAVGPOOL);
  PetscCall(NNLossSpatialTargets(net, n, y, t, &ts));
  PetscCall(DMDAGetCorners(dm, &xs, &ys, &zs, &xm, &ym, &zm));
  D  = net->nbatch * out.dim[0];
  nc = n * out.dim[0]; /* slots s < n of every pixel */
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(ts, &ta));
  if (dy) PetscCall(VecGetArrayWrite(dy, &dya));
  b = (NNLossBlock){xm * ym * zm, D, out.dim[0], ya, ta};
  PetscCall(NNLossEvaluateBlock(&net->lossops, NNGetLayerComm(net), n, k, &b, loss, dya));
  if (dya)
    for (PetscInt p = 0; p < xm * ym * zm; p++)
      for (PetscInt i = p * D + nc; i < (p + 1) * D; i++) dya[i] = 0;
  if (dy) PetscCall(VecRestoreArrayWrite(dy, &dya));
  PetscCall(VecRestoreArrayRead(ts, &ta));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscFunctionReturn(0);
}

/* batch size 1: the activations have the layout of the caller's DMDA Vecs, so the first layer reads x itself and
   the last one writes into y's array (placed in the output activation): a simulation's state goes in and the
   prediction comes out without a copy */
static PetscErrorCode NNPredictSpatialInPlace(NN net, Vec x, Vec y)
{
  Vec            out = net->act[net->nlayers], yo = NULL;
  PetscScalar   *ya;
  PetscInt       ly;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(y, &ly));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(VecPlaceArray(out, ya));
  ierr = NNForward(net, 1, x, &yo);
  PetscCall(VecResetArray(out));
  if (!ierr && yo != out) { /* a network whose output is another activation Vec: copied */
    const PetscScalar *oa;
    PetscCall(VecGetArrayRead(yo, &oa));
    PetscCall(PetscArraycpy(ya, oa, ly));
    PetscCall(VecRestoreArrayRead(yo, &oa));
  }
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* NNPredict() for spatial input: one sample at a time between Vecs with dof = channels and the
   network's activations with dof = batch*channels (slot 0) */
PetscErrorCode NNPredictSpatial(NN net, Vec x, Vec y)
{
  DM                 dmy;
  NNShape            out;
  PetscInt           lx, ly, l0, lL, C = net->inshape.dim[0], Co, nb = net->nbatch;
  const PetscScalar *xa, *oa;
  PetscScalar       *a0, *ya;
  Vec                yo;

  PetscFunctionBegin;
  PetscCall(NNGetOutputShape(net, &out));
  PetscCall(VecGetDM(net->act[net->nlayers], &dmy));
  PetscCheck(dmy, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "NNPredict() with a spatial input Vec needs a network with spatial output too; call NNForward() with a batch Vec instead");
  Co = out.dim[0];
  PetscCall(VecGetLocalSize(x, &lx));
  PetscCall(VecGetLocalSize(y, &ly));
  PetscCall(VecGetLocalSize(net->act[0], &l0));
  PetscCall(VecGetLocalSize(net->act[net->nlayers], &lL));
  PetscCheck(lx * nb == l0, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Input Vec has %" PetscInt_FMT " local entries; a Vec of the input DMDA (NNSetInputDM()) has %" PetscInt_FMT, lx, l0 / nb);
  PetscCheck(ly * nb == lL, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Output Vec has %" PetscInt_FMT " local entries; the network output on this rank has %" PetscInt_FMT " (a DMDA Vec with %" PetscInt_FMT " dof on the output decomposition)", ly, lL / nb, Co);
  if (nb == 1) {
    PetscCall(NNPredictSpatialInPlace(net, x, y));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(net->act[0], &a0));
  for (PetscInt p = 0; p < lx / C; p++) {
    PetscCall(PetscArraycpy(a0 + p * nb * C, xa + p * C, C));
    PetscCall(PetscArrayzero(a0 + p * nb * C + C, (nb - 1) * C));
  }
  PetscCall(VecRestoreArrayWrite(net->act[0], &a0));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(NNForward(net, 1, net->act[0], &yo));
  PetscCall(VecGetArrayRead(yo, &oa));
  PetscCall(VecGetArrayWrite(y, &ya));
  for (PetscInt p = 0; p < ly / Co; p++) PetscCall(PetscArraycpy(ya + p * Co, oa + p * nb * Co, Co));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(yo, &oa));
  PetscFunctionReturn(0);
}
