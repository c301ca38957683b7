/* Per-layer spectral norms and Lipschitz constants, their product (an upper bound on the network's
   Lipschitz constant in the 2-norm, from the input to the logits), and the table -nn_spectral_view
   prints at the end of training. */
#include <petnn/private/spectralimpl.h>
#include <petnn/private/odeimpl.h>

typedef struct {
  PetscBool   reference; /* dense references instead of SLEPc */
  PetscBool   check;     /* also the dense reference of every SVD, compared */
  PetscViewer viewer;    /* print a row per layer (NULL: none) */
  PetscInt    nchecked, nfailed;
} NNLipschitzWalk;

static PetscErrorCode NNLayerLipschitzWalk(NNLayer, NNLipschitzWalk *, PetscInt, PetscReal *);

static PetscErrorCode NNLayerIsType(NNLayer l, const char *const types[], PetscBool *match)
{
  PetscFunctionBegin;
  *match = PETSC_FALSE;
  for (PetscInt i = 0; types[i] && !*match; i++) PetscCall(PetscObjectTypeCompare((PetscObject)l, types[i], match));
  PetscFunctionReturn(0);
}

static const NNTensor *NNLayerFindTensor(NNLayer l, const char name[])
{
  for (PetscInt t = 0; t < l->ntensors; t++) {
    PetscBool same;
    PetscCallAbort(PETSC_COMM_SELF, PetscStrcmp(l->tensors[t].name, name, &same));
    if (same) return &l->tensors[t];
  }
  return NULL;
}

/* closed forms of parameterless layers and nonlinear layers' Lipschitz constants; *found false when the type has none */
static PetscErrorCode NNLayerLipschitzClosedForm(NNLayer l, PetscReal *L, NNOperatorNormInfo *info, PetscBool *found)
{
  const char *const one[]  = {NNLAYERRELU, NNLAYERTANH, NULL};
  const char *const perm[] = {NNLAYERFLATTEN, NNLAYERTOSPATIAL, NNLAYERSPATIALFLATTEN, NULL};
  const char *const maxp[] = {NNLAYERMAXPOOL2D, NNLAYERMAXPOOL3D, NULL};
  const char *const bn[]   = {NNLAYERBATCHNORM1D, NNLAYERBATCHNORM2D, NNLAYERBATCHNORM3D, NULL};
  PetscBool         is;

  PetscFunctionBegin;
  *found = PETSC_TRUE;
  PetscCall(NNLayerIsType(l, one, &is));
  if (is) {
    *L = 1;
    PetscCall(PetscStrncpy(info->how, "Lipschitz constant", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(NNLayerIsType(l, perm, &is));
  if (is) {
    *L = 1;
    PetscCall(PetscStrncpy(info->how, "reshape (a permutation)", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERDROPOUT, &is));
  if (is) {
    *L = 1;
    PetscCall(PetscStrncpy(info->how, "identity in eval mode", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERSIGMOID, &is));
  if (is) {
    *L = 0.25;
    PetscCall(PetscStrncpy(info->how, "Lipschitz constant", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERLEAKYRELU, &is));
  if (is) {
    PetscReal slope;
    PetscCall(NNLayerLeakyReLUGetSlope(l, &slope));
    *L = PetscMax(1.0, PetscAbsReal(slope));
    PetscCall(PetscStrncpy(info->how, "Lipschitz constant", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERGELU, &is));
  if (is) { /* max of (x Phi(x))' = Phi(x) + x phi(x), at x = sqrt(2) */
    *L = 0.5 * (1 + erf(1.0)) + PETSC_SQRT2 * PetscExpReal(-1.0) / PetscSqrtReal(2 * PETSC_PI);
    PetscCall(PetscStrncpy(info->how, "Lipschitz constant", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(NNLayerIsType(l, maxp, &is));
  if (is) { /* ||maxpool(x) - maxpool(x')||^2 <= sum over windows of their max |dx_i|^2 <= (most windows on a pixel) ||dx||^2 */
    PetscInt k, s, nd = l->inshape.ndim - 1, cover;
    PetscCall(NNLayerPoolGetKernelSize(l, &k));
    PetscCall(NNLayerPoolGetStride(l, &s));
    if (s <= 0) s = k;
    cover = (k + s - 1) / s;
    *L    = PetscSqrtReal(PetscPowRealInt((PetscReal)cover, nd));
    PetscCall(PetscStrncpy(info->how, "sqrt(windows per pixel)", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERGLOBALAVGPOOL, &is));
  if (is) {
    *L = 1.0 / PetscSqrtReal((PetscReal)(NNShapeSize(&l->inshape) / l->inshape.dim[0]));
    PetscCall(PetscStrncpy(info->how, "closed form 1/sqrt(pixels)", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  PetscCall(NNLayerIsType(l, bn, &is));
  if (is) { /* eval mode: y_c = gamma_c (x_c - mean_c) / sqrt(var_c + eps) + beta_c, a diagonal */
    const NNTensor *w = NNLayerFindTensor(l, "weight"), *v = NNLayerFindTensor(l, "running_var");
    PetscReal       eps;
    PetscCheck(w && v && l->theta && l->buf, PetscObjectComm((PetscObject)l), PETSC_ERR_PLIB, "Layer %s: batch-norm tensors not found", ((PetscObject)l)->name);
    PetscCall(NNLayerBatchNormGetEpsilon(l, &eps));
    *L = 0;
    for (PetscInt c = 0; c < w->size; c++) *L = PetscMax(*L, PetscAbsScalar(l->theta[w->offset + c]) / PetscSqrtReal(PetscRealPart(l->buf[v->offset + c]) + eps));
    PetscCall(PetscStrncpy(info->how, "closed form (eval mode)", sizeof(info->how)));
    PetscFunctionReturn(0);
  }
  *found = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* residual: 1 + Lip(inner); ODE block (shared parameters): exp(T Lip(f)), or (1 + h Lip(f))^N for forward Euler */
static PetscErrorCode NNLayerLipschitzBlock(NNLayer l, NNLipschitzWalk *w, PetscInt depth, PetscReal *L, NNOperatorNormInfo *info, PetscBool *found)
{
  PetscBool res, ode;
  PetscReal inner = 1, Lc;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERRESIDUAL, &res));
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERODE, &ode));
  *found = (PetscBool)(res || ode);
  if (!*found) PetscFunctionReturn(0);
  for (PetscInt c = 0; c < l->nchildren; c++) {
    PetscCall(NNLayerLipschitzWalk(l->children[c], w, depth + 1, &Lc));
    inner *= Lc;
  }
  if (res) {
    *L = 1 + inner;
    PetscCall(PetscStrncpy(info->how, "1 + inner product", sizeof(info->how)));
  } else {
    NNLayer_ODE *o = (NNLayer_ODE *)l->data;
    if (o->params != NNODE_PARAMETERS_SHARED) {
      *L = PETSC_INFINITY; /* the children show step 0's parameters only */
      PetscCall(PetscStrncpy(info->how, "not computed (per-step parameters)", sizeof(info->how)));
    } else if (o->scheme == NNODE_SCHEME_DISCRETE) {
      *L = PetscPowRealInt(1 + o->h * inner, o->N);
      PetscCall(PetscStrncpy(info->how, "(1 + h Lip f)^N (forward Euler)", sizeof(info->how)));
    } else {
      *L = PetscExpReal(o->T * inner);
      PetscCall(PetscStrncpy(info->how, "exp(T Lip f) (exact flow)", sizeof(info->how)));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerLipschitzRow(NNLayer l, NNLipschitzWalk *w, PetscInt depth, PetscReal L, const NNOperatorNormInfo *info, PetscReal ref)
{
  char name[64], in[64], out[64], op[160], chk[64] = "";

  PetscFunctionBegin;
  if (!w->viewer) PetscFunctionReturn(0);
  PetscCall(PetscSNPrintf(name, sizeof(name), "%*s%s", (int)(2 * depth), "", ((PetscObject)l)->name));
  PetscCall(NNShapeToString(&l->inshape, sizeof(in), in));
  PetscCall(NNShapeToString(&l->outshape, sizeof(out), out));
  PetscCall(PetscSNPrintf(op, sizeof(op), "%s -> %s", in, out));
  if (w->check && info->svd) {
    PetscReal err = PetscAbsReal(L - ref) / PetscMax(PetscAbsReal(ref), PETSC_SMALL);
    PetscCall(PetscSNPrintf(chk, sizeof(chk), "  dense ref: rel. error %.1e %s", (double)err, err <= 1e-8 ? "ok" : "FAILED (> 1e-8)"));
  }
  PetscCall(PetscViewerASCIIPrintf(w->viewer, "  %-16s %-16s %-30s %12.6g  %s%s\n", name, ((PetscObject)l)->type_name, op, (double)L, info->how, chk));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerLipschitzWalk(NNLayer l, NNLipschitzWalk *w, PetscInt depth, PetscReal *L)
{
  NNOperatorNormInfo info;
  PetscBool          found, dense;
  PetscReal          ref = 0;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckWhole(l, "operator norms and Lipschitz bounds"));
  PetscCall(PetscMemzero(&info, sizeof(info)));
  PetscCall(PetscObjectTypeCompare((PetscObject)l, NNLAYERDENSE, &dense));
  if (dense || NNLayerIsShellOperator(l)) {
    PetscCall(NNLayerOperatorSigma_Private(l, w->reference, L, &info.its));
    info.svd = PETSC_TRUE;
    PetscCall(PetscStrncpy(info.how, w->reference ? "dense reference (gesvd)" : (dense ? "SLEPc SVD (weights)" : "SLEPc SVD (shell)"), sizeof(info.how)));
    if (w->check) {
      PetscInt its;
      PetscCall(NNLayerOperatorSigma_Private(l, PETSC_TRUE, &ref, &its));
      w->nchecked++;
      if (PetscAbsReal(*L - ref) > 1e-8 * PetscMax(PetscAbsReal(ref), PETSC_SMALL)) w->nfailed++;
    }
  } else {
    PetscCall(NNLayerLipschitzClosedForm(l, L, &info, &found));
    if (!found) {
      PetscBool block = (PetscBool)(l->nchildren > 0);
      if (block && w->viewer) { /* the block's row, its inner layers' rows, then its total */
        char name[64];
        PetscCall(PetscSNPrintf(name, sizeof(name), "%*s%s", (int)(2 * depth), "", ((PetscObject)l)->name));
        PetscCall(PetscViewerASCIIPrintf(w->viewer, "  %-16s %-16s (block of %" PetscInt_FMT " layers)\n", name, ((PetscObject)l)->type_name, l->nchildren));
      }
      PetscCall(NNLayerLipschitzBlock(l, w, depth, L, &info, &found));
      if (found) {
        if (w->viewer) {
          char total[80];
          PetscCall(PetscSNPrintf(total, sizeof(total), "%*s(%s, total)", (int)(2 * depth), "", ((PetscObject)l)->name));
          PetscCall(PetscViewerASCIIPrintf(w->viewer, "  %-64s %12.6g  %s\n", total, (double)*L, info.how));
        }
        PetscFunctionReturn(0);
      }
      *L = PETSC_INFINITY;
      PetscCall(PetscStrncpy(info.how, "unknown type: no bound", sizeof(info.how)));
    }
  }
  PetscCall(NNLayerLipschitzRow(l, w, depth, *L, &info, ref));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerLipschitz_Private(NNLayer l, PetscBool reference, PetscReal *L, NNOperatorNormInfo *info)
{
  NNLipschitzWalk w = {reference, PETSC_FALSE, NULL, 0, 0};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(info, sizeof(*info)));
  PetscCall(NNLayerLipschitzWalk(l, &w, 0, L));
  PetscFunctionReturn(0);
}

/* the product over the network's layers, rows printed when w->viewer is set */
static PetscErrorCode NNLipschitzProduct(NN net, NNLipschitzWalk *w, PetscReal *bound)
{
  PetscReal      L;
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  PetscCall(NNSpectralSetUp(net));
  PetscCall(NNSlepcInitialize());
  *bound = 1;
  PetscCall(NNBeginLayerCalls(net));
  for (PetscInt i = 0; i < net->nlayers && !ierr; i++) {
    ierr = NNLayerLipschitzWalk(net->layers[i], w, 0, &L);
    *bound *= L;
  }
  PetscCall(NNEndLayerCalls(net));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*@
   NNComputeLipschitzBound - an upper bound on the network's Lipschitz constant (2-norm, input to
   output before the loss): the product of its layers' spectral norms and Lipschitz constants

   Collective

   Input Parameter:
.  net - the network, set up (trained or with loaded parameters)

   Output Parameter:
.  bound - the product (infinity when a layer of unknown type has no bound)

   Notes:
   Each factor is what `NNLayerComputeOperatorNorm()` gives; batch norm and dropout count in eval mode.

   Level: intermediate

.seealso: `NNLayerComputeOperatorNorm()`, `NNOperatorNormView()`
@*/
PetscErrorCode NNComputeLipschitzBound(NN net, PetscReal *bound)
{
  NNLipschitzWalk w = {PETSC_FALSE, PETSC_FALSE, NULL, 0, 0};

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscAssertPointer(bound, 2);
  PetscCall(NNLipschitzProduct(net, &w, bound));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNOperatorNormViewWalk(NN net, PetscViewer viewer, PetscBool check)
{
  NNLipschitzWalk w = {PETSC_FALSE, check, viewer, 0, 0};
  PetscReal       bound;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "Layer operator norms (sigma_max of the linear part, bias excluded; Lipschitz constants of nonlinear layers):\n"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %-16s %-16s %-30s %12s  %s\n", "layer", "type", "operator (one sample)", "sigma/Lip", "computed by"));
  PetscCall(NNLipschitzProduct(net, &w, &bound));
  PetscCall(PetscViewerASCIIPrintf(viewer, "Lipschitz bound of the network (product over layers): %.6g\n", (double)bound));
  if (check) PetscCall(PetscViewerASCIIPrintf(viewer, "Dense-reference check (LAPACK gesvd, rel. error <= 1e-8): %" PetscInt_FMT " of %" PetscInt_FMT " SVDs agree\n", w.nchecked - w.nfailed, w.nchecked));
  PetscFunctionReturn(0);
}

/*@
   NNOperatorNormView - prints every layer's spectral norm (or Lipschitz constant), its operator's size,
   how it was computed, and the network's Lipschitz bound

   Collective

   Input Parameters:
+  net - the network, set up (trained or with loaded parameters)
-  viewer - an ASCII viewer

   Options Database Keys:
+  -nn_spectral_view - print this table when training ends (`NNSpectralViewFromOptions()`)
.  -nn_spectral_view_check - also compare every SVD with a dense reference (LAPACK gesvd; small operators only)
-  -<layer>_svd_* - the SLEPc SVD of a layer

   Level: intermediate

.seealso: `NNLayerComputeOperatorNorm()`, `NNComputeLipschitzBound()`, `NNSpectralViewFromOptions()`
@*/
PetscErrorCode NNOperatorNormView(NN net, PetscViewer viewer)
{
  PetscBool iascii;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)net), &viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &iascii));
  PetscCheck(iascii, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "NNOperatorNormView() needs an ASCII viewer");
  PetscCall(NNOperatorNormViewWalk(net, viewer, PETSC_FALSE));
  PetscFunctionReturn(0);
}

/* -nn_spectral_view [-nn_spectral_view_check] (called by NNSpectralViewFromOptions()) */
PetscErrorCode NNOperatorNormViewFromOptions(NN net)
{
  PetscBool   view = PETSC_FALSE, check = PETSC_FALSE;
  PetscViewer viewer;

  PetscFunctionBegin;
  PetscObjectOptionsBegin((PetscObject)net);
  PetscCall(PetscOptionsBool("-nn_spectral_view", "Print every layer's spectral norm and the Lipschitz bound (SLEPc)", "NNOperatorNormView", view, &view, NULL));
  PetscCall(PetscOptionsBool("-nn_spectral_view_check", "With -nn_spectral_view: compare every SVD with a dense reference (LAPACK)", "NNOperatorNormView", check, &check, NULL));
  PetscOptionsEnd();
  if (!view) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)net), &viewer));
  PetscCall(NNOperatorNormViewWalk(net, viewer, check));
  PetscFunctionReturn(0);
}
