/* Spectral normalization after an optimizer step: the power iterations and the projection
   (the method and why it is a projection: src/spectral/spectralnorm.c). */
#include <petnn/private/spectralimpl.h>
#include <petnn/private/reducerimpl.h>

static PetscLogEvent NN_SpectralNorm = 0;

#define NN_SPECTRAL_NORM_COLD_ITS 15

/* a deterministic start when the buffer is still zero (no random draws: other streams stay as they were) */
static void NNSpectralNormStart(PetscInt n, PetscScalar *v)
{
  PetscReal nrm = 0;

  for (PetscInt i = 0; i < n; i++) {
    uint64_t z = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL;
    z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z          = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    v[i]       = (PetscReal)((z ^ (z >> 31)) >> 11) / 9007199254740992.0 - 0.5;
    nrm += PetscRealPart(v[i] * v[i]);
  }
  nrm = PetscSqrtReal(nrm);
  for (PetscInt i = 0; i < n; i++) v[i] /= nrm;
}

static PetscReal NNDot(PetscInt n, const PetscScalar *a)
{
  PetscReal s = 0;
  for (PetscInt i = 0; i < n; i++) s += PetscRealPart(a[i] * a[i]);
  return s;
}

/* dense: W [out][in]; v (in) unit -> w = W v, z = W^T w, sigma = ||z|| / ||w||, v <- z / ||z|| */
static PetscErrorCode NNPowerIterationDense(NNLayer l, PetscInt its, PetscScalar *v, PetscReal *sigma)
{
  PetscInt           out = l->outshape.dim[0], in = NNShapeSize(&l->inshape);
  const PetscScalar *W   = l->theta;
  PetscScalar       *w, *z;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(out, &w, in, &z));
  *sigma = 0;
  for (PetscInt k = 0; k < its; k++) {
    PetscReal nw, nz;
    for (PetscInt i = 0; i < out; i++) {
      PetscScalar s = 0;
      for (PetscInt j = 0; j < in; j++) s += W[i * in + j] * v[j];
      w[i] = s;
    }
    PetscCall(PetscArrayzero(z, in));
    for (PetscInt i = 0; i < out; i++)
      for (PetscInt j = 0; j < in; j++) z[j] += W[i * in + j] * w[i];
    nw = PetscSqrtReal(NNDot(out, w));
    nz = PetscSqrtReal(NNDot(in, z));
    if (nw == 0 || nz == 0) break; /* W v = 0: keep v */
    *sigma = nz / nw;
    for (PetscInt j = 0; j < in; j++) v[j] = z[j] / nz;
  }
  PetscCall(PetscFree2(w, z));
  PetscFunctionReturn(0);
}

/* convolutions: the same on the operator of one sample, distributed like the layer's activations; v is
   replicated in PyTorch order (C,[D,]H,W) and stays bitwise equal on every rank (a sum with zeros) */
static PetscErrorCode NNPowerIterationShell(NNLayer l, PetscInt its, NNSpectralNorm *sn, PetscScalar *v, PetscReal *sigma)
{
  MPI_Comm     comm = PetscObjectComm((PetscObject)l);
  NNLinearOp  *o;
  DM           dm;
  PetscScalar *vl, *w, *z;
  PetscMPIInt  cnt;

  PetscFunctionBegin;
  if (!sn->op) PetscCall(NNLinearOpCreate(l, &sn->op));
  else PetscCall(NNLinearOpUpdate(sn->op));
  o = sn->op;
  PetscCall(NNLayerGetInputDM(l, &dm));
  PetscCall(PetscMalloc3(o->min, &vl, o->mout, &w, o->min, &z));
  PetscCall(NNSpatialCopy(dm, 1, &l->inshape, 1, v, vl, PETSC_TRUE)); /* [pixel][c] of the rank's pixels */
  *sigma = 0;
  for (PetscInt k = 0; k < its; k++) {
    PetscReal n2[2];
    PetscCall(NNLinearOpApply(o, vl, w));
    PetscCall(NNLinearOpApplyTranspose(o, w, z));
    n2[0] = NNDot(o->mout, w);
    n2[1] = NNDot(o->min, z);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, n2, 2, MPIU_REAL, MPIU_SUM, comm));
    if (n2[0] == 0 || n2[1] == 0) break;
    *sigma = PetscSqrtReal(n2[1]) / PetscSqrtReal(n2[0]);
    for (PetscInt j = 0; j < o->min; j++) vl[j] = z[j] / PetscSqrtReal(n2[1]);
  }
  PetscCall(PetscArrayzero(v, o->Nin));
  PetscCall(NNSpatialCopy(dm, 1, &l->inshape, 1, v, vl, PETSC_FALSE));
  PetscCall(PetscMPIIntCast(o->Nin, &cnt));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, v, cnt, MPIU_SCALAR, MPIU_SUM, comm));
  PetscCall(PetscFree3(vl, w, z));
  PetscFunctionReturn(0);
}

/* one layer: estimate sigma, scale the weight (not the bias) by min(1, c/sigma); parameters lent */
static PetscErrorCode NNLayerApplySpectralNorm(NNLayer l, NNSpectralNorm *sn)
{
  NNTensor    *tv = NULL, *tw = NULL;
  PetscScalar *v, *W;
  PetscBool    dense;
  PetscInt     its = sn->its;

  PetscFunctionBegin;
  for (PetscInt t = 0; t < l->ntensors; t++) {
    PetscBool isv, isw;
    PetscCall(PetscStrcmp(l->tensors[t].name, "weight_v", &isv));
    PetscCall(PetscStrcmp(l->tensors[t].name, "weight", &isw));
    if (isv) tv = &l->tensors[t];
    if (isw) tw = &l->tensors[t];
  }
  PetscCheck(tv && tw, PetscObjectComm((PetscObject)l), PETSC_ERR_PLIB, "Layer %s: spectral normalization without its tensors", ((PetscObject)l)->name);
  v = l->buf + tv->offset;
  if (NNDot(tv->size, v) == 0) { /* a cold start (the first step): 15 more iterations, as torch's spectral_norm does at set-up */
    NNSpectralNormStart(tv->size, v);
    its += NN_SPECTRAL_NORM_COLD_ITS;
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERDENSE, &dense));
  if (dense) PetscCall(NNPowerIterationDense(l, its, v, &sn->sigma));
  else PetscCall(NNPowerIterationShell(l, its, sn, v, &sn->sigma));
  if (sn->sigma > sn->c) {
    PetscReal s = sn->c / sn->sigma;
    W           = (PetscScalar *)l->theta + tw->offset; /* the network's parameter array, lent writable by NNBeginLayerCalls() */
    for (PetscInt i = 0; i < tw->size; i++) W[i] *= s;
  }
  PetscFunctionReturn(0);
}

/* calls fn on every layer with spectral normalization (top level and inside residual blocks) */
static PetscErrorCode NNSpectralNormWalk(NNLayer l, PetscBool apply, PetscBool *any)
{
  NNSpectralNorm *sn;
  PetscBool       ode;

  PetscFunctionBegin;
  PetscCall(NNLayerGetSpectralNorm_Private(l, &sn));
  if (sn) {
    *any = PETSC_TRUE;
    if (apply) PetscCall(NNLayerApplySpectralNorm(l, sn));
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERODE, &ode));
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscBool inner = PETSC_FALSE;
    PetscCall(NNSpectralNormWalk(l->children[c], apply && !ode, &inner));
    PetscCheck(!ode || !inner, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s inside ODE block %s: spectral normalization is not available inside ODE blocks", ((PetscObject)l->children[c])->name, ((PetscObject)l)->name);
    *any = (PetscBool)(*any || inner);
  }
  PetscFunctionReturn(0);
}

/*@
   NNApplySpectralNorm - projects the weights of the layers with spectral normalization onto
   sigma_max <= c (the training loop calls it after every optimizer step)

   Collective

   Input Parameter:
.  net - the network, set up

   Notes:
   Does nothing when no layer has `NNLayerSetSpectralNorm()` (-<layer>_spectral_norm). Every rank
   computes the same projection from the same replicated parameters, so data-parallel replicas stay
   identical; with a shared-memory reducer the parameters are detached for the projection and
   attached back (group 0's copy, equal to all others').

   Level: advanced

.seealso: `NNLayerSetSpectralNorm()`, `NNLayerComputeOperatorNorm()`
@*/
/* whether any layer of the network is spectrally normalized (-<layer>_spectral_norm) */
PetscErrorCode NNHasSpectralNorm(NN net, PetscBool *any)
{
  PetscFunctionBegin;
  *any = PETSC_FALSE;
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNSpectralNormWalk(net->layers[i], PETSC_FALSE, any));
  PetscFunctionReturn(0);
}

PetscErrorCode NNApplySpectralNorm(NN net)
{
  PetscBool      any = PETSC_FALSE;
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  for (PetscInt i = 0; i < net->nlayers; i++) PetscCall(NNSpectralNormWalk(net->layers[i], PETSC_FALSE, &any));
  if (!any) PetscFunctionReturn(0);
  if (!NN_SpectralNorm) PetscCall(NNLogEventRegister("NNSpectralNorm", NN_CLASSID, &NN_SpectralNorm));
  PetscCall(PetscLogEventBegin(NN_SpectralNorm, net, 0, 0, 0));
  PetscCall(NNParallelDetachParameters(net));
  PetscCall(NNBeginLayerCalls(net));
  for (PetscInt i = 0; i < net->nlayers && !ierr; i++) ierr = NNSpectralNormWalk(net->layers[i], PETSC_TRUE, &any);
  PetscCall(NNEndLayerCalls(net));
  PetscCall(ierr);
  PetscCall(NNParallelAttachParameters(net));
  PetscCall(PetscLogEventEnd(NN_SpectralNorm, net, 0, 0, 0));
  PetscFunctionReturn(0);
}
