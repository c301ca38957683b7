/* A layer's linear part as an operator on one sample, for SLEPc and for power iterations.

   Spatial layers (conv2d, conv3d, avgpool, upsample) run on DMDA batches whose rank-local array is
   [pixel][slot][channel]; the operator's vectors hold slot 0 only, [pixel][channel] over the rank's
   pixels, so the operator is distributed exactly as the layer's activations are. MatMult is the
   layer's forward pass on a copy of its parameters with the bias zeroed (not forward(x) - forward(0),
   which would carry the round-off of adding and removing the bias); MatMultTranspose is its backward
   input gradient, the parameter gradient going to a scratch array. Dense layers are a MATDENSE on
   their weights (NNLayerCreateWeightMat()). */
#include <petnn/private/spectralimpl.h>

PetscBool NNLayerIsShellOperator(NNLayer l)
{
  const char *t = ((PetscObject)l)->type_name;
  PetscBool   match = PETSC_FALSE;
  const char *types[] = {NNLAYERCONV2D, NNLAYERCONV3D, NNLAYERAVGPOOL2D, NNLAYERAVGPOOL3D, NNLAYERUPSAMPLE};

  for (size_t i = 0; t && i < sizeof(types) / sizeof(types[0]) && !match; i++) PetscCallAbort(PETSC_COMM_SELF, PetscStrcmp(t, types[i], &match));
  return match;
}

PetscErrorCode NNLinearOpCreate(NNLayer l, NNLinearOp **op)
{
  NNLinearOp *o;
  DM          dm;
  PetscInt    m;

  PetscFunctionBegin;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCheck(dm && l->ops->forwardvec, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONG, "Layer %s (%s): no spatial (DMDA) input; set up its network first", ((PetscObject)l)->name, ((PetscObject)l)->type_name);
  PetscCheck(l->nparam == 0 || l->theta, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s: its parameters are not lent (NNBeginLayerCalls())", ((PetscObject)l)->name);
  PetscCall(PetscNew(&o));
  o->l = l;
  PetscCall(DMCreateGlobalVector(dm, &o->X));
  PetscCall(VecDuplicate(o->X, &o->DX));
  PetscCall(NNLayerCreateOutputVec(l, &o->Y));
  PetscCall(VecZeroEntries(o->X));
  PetscCall(VecZeroEntries(o->Y));
  o->nbin  = l->inshape.dim[0];
  o->nbout = l->outshape.dim[0];
  PetscCall(VecGetLocalSize(o->X, &m));
  o->min = m / l->nbatch;
  PetscCall(VecGetLocalSize(o->Y, &m));
  o->mout = m / l->nbatch;
  o->Nin  = NNShapeSize(&l->inshape);
  o->Nout = NNShapeSize(&l->outshape);
  PetscCall(PetscCalloc2(PetscMax(l->nparam, 1), &o->theta, PetscMax(l->nparam, 1), &o->dtheta));
  PetscCall(NNLinearOpUpdate(o));
  *op = o;
  PetscFunctionReturn(0);
}

/* takes the layer's current parameters (lent by NNBeginLayerCalls()), the bias zeroed */
PetscErrorCode NNLinearOpUpdate(NNLinearOp *o)
{
  NNLayer l = o->l;

  PetscFunctionBegin;
  if (l->nparam) PetscCall(PetscArraycpy(o->theta, l->theta, l->nparam));
  for (PetscInt t = 0; t < l->ntensors; t++) {
    PetscBool isbias;
    PetscCall(PetscStrcmp(l->tensors[t].name, "bias", &isbias));
    if (isbias && l->tensors[t].kind == NN_TENSOR_PARAM) PetscCall(PetscArrayzero(o->theta + l->tensors[t].offset, l->tensors[t].size));
  }
  o->forwarded = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLinearOpDestroy(NNLinearOp **op)
{
  PetscFunctionBegin;
  if (!*op) PetscFunctionReturn(0);
  PetscCall(VecDestroy(&(*op)->X));
  PetscCall(VecDestroy(&(*op)->Y));
  PetscCall(VecDestroy(&(*op)->DX));
  PetscCall(PetscFree2((*op)->theta, (*op)->dtheta));
  PetscCall(PetscFree(*op));
  PetscFunctionReturn(0);
}

/* slot 0 of a batch Vec <-> one sample's local vector */
static PetscErrorCode NNLinearOpSlot(Vec B, PetscInt nb, PetscInt C, PetscInt m, PetscScalar *v, PetscBool tobatch)
{
  PetscScalar *b;

  PetscFunctionBegin;
  PetscCall(VecGetArray(B, &b));
  for (PetscInt q = 0; q < m / C; q++)
    for (PetscInt c = 0; c < C; c++) {
      if (tobatch) b[q * nb * C + c] = v[q * C + c];
      else v[q * C + c] = b[q * nb * C + c];
    }
  PetscCall(VecRestoreArray(B, &b));
  PetscFunctionReturn(0);
}

/* runs the layer on the bias-free copy of its parameters, its own arrays restored afterwards */
static PetscErrorCode NNLinearOpRun(NNLinearOp *o, PetscBool forward)
{
  NNLayer            l = o->l;
  const PetscScalar *th = l->theta;
  PetscScalar       *dth = l->dtheta;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  l->theta  = o->theta;
  l->dtheta = o->dtheta;
  if (forward) ierr = NNLayerForward(l, 1, o->X, o->Y);
  else {
    if (l->nparam) ierr = PetscArrayzero(o->dtheta, l->nparam);
    else ierr = 0;
    if (!ierr) ierr = NNLayerBackward(l, 1, o->X, o->Y, o->Y, o->DX);
  }
  l->theta  = th;
  l->dtheta = dth;
  PetscCall(ierr);
  if (forward) o->forwarded = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNLinearOpApply(NNLinearOp *o, const PetscScalar *v, PetscScalar *w)
{
  PetscFunctionBegin;
  PetscCall(NNLinearOpSlot(o->X, o->l->nbatch, o->nbin, o->min, (PetscScalar *)v, PETSC_TRUE));
  PetscCall(NNLinearOpRun(o, PETSC_TRUE));
  PetscCall(NNLinearOpSlot(o->Y, o->l->nbatch, o->nbout, o->mout, w, PETSC_FALSE));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLinearOpApplyTranspose(NNLinearOp *o, const PetscScalar *w, PetscScalar *v)
{
  PetscFunctionBegin;
  if (!o->forwarded) PetscCall(NNLinearOpRun(o, PETSC_TRUE)); /* packs the bias-free weights the backward pass reads */
  PetscCall(VecZeroEntries(o->Y));
  PetscCall(NNLinearOpSlot(o->Y, o->l->nbatch, o->nbout, o->mout, (PetscScalar *)w, PETSC_TRUE));
  PetscCall(NNLinearOpRun(o, PETSC_FALSE));
  PetscCall(NNLinearOpSlot(o->DX, o->l->nbatch, o->nbin, o->min, v, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_NNLinearOp(Mat A, Vec x, Vec y)
{
  NNLinearOp        *o;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &o));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  PetscCall(NNLinearOpApply(o, xa, ya));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMultTranspose_NNLinearOp(Mat A, Vec y, Vec x)
{
  NNLinearOp        *o;
  const PetscScalar *ya;
  PetscScalar       *xa;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(A, &o));
  PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(VecGetArrayWrite(x, &xa));
  PetscCall(NNLinearOpApplyTranspose(o, ya, xa));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscFunctionReturn(0);
}

/* a MATSHELL on the operator (the caller keeps op alive while the Mat lives) */
PetscErrorCode NNLinearOpCreateShell(NNLinearOp *o, Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateShell(PetscObjectComm((PetscObject)o->l), o->mout, o->min, o->Nout, o->Nin, o, A));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT, (void (*)(void))MatMult_NNLinearOp));
  PetscCall(MatShellSetOperation(*A, MATOP_MULT_TRANSPOSE, (void (*)(void))MatMultTranspose_NNLinearOp));
  PetscFunctionReturn(0);
}

/* a MATDENSE on the weight [out, in] of a dense layer (replicated on every rank; each rank sets its rows) */
PetscErrorCode NNLayerCreateWeightMat(NNLayer l, Mat *A)
{
  PetscInt     out = l->outshape.dim[0], in = NNShapeSize(&l->inshape), rs, re;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCheck(l->theta, PetscObjectComm((PetscObject)l), PETSC_ERR_ARG_WRONGSTATE, "Layer %s: its parameters are not lent (NNBeginLayerCalls())", ((PetscObject)l)->name);
  PetscCall(MatCreateDense(PetscObjectComm((PetscObject)l), PETSC_DECIDE, PETSC_DECIDE, out, in, NULL, A));
  PetscCall(MatGetOwnershipRange(*A, &rs, &re));
  PetscCall(MatDenseGetArrayWrite(*A, &a)); /* column-major, leading dimension = local rows */
  for (PetscInt i = rs; i < re; i++)
    for (PetscInt j = 0; j < in; j++) a[j * (re - rs) + (i - rs)] = l->theta[i * in + j];
  PetscCall(MatDenseRestoreArrayWrite(*A, &a));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}
