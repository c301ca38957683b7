static char help[] = "Layer API behavior: type-specific setters on other types, error messages, dropout and\n"
                     "batch-norm modes, residual blocks built from the API and from options.\n\n"
                     "  -show_errors   print the messages of the expected errors\n\n";

#include <petnn.h>

/* ---------------------------------------------------------------- catching expected errors */
typedef struct {
  char      msg[4096];
  PetscBool set;
} ErrCtx;

static PetscBool show_errors = PETSC_FALSE; /* -show_errors: print the caught messages (not stable output) */

static PetscErrorCode CatchError(MPI_Comm comm PETSC_UNUSED, int line PETSC_UNUSED, const char *fun PETSC_UNUSED, const char *file PETSC_UNUSED, PetscErrorCode n, PetscErrorType p PETSC_UNUSED, const char *mess, void *ctx)
{
  ErrCtx *e = (ErrCtx *)ctx;

  if (!e->set && mess) {
    PetscStrncpy(e->msg, mess, sizeof(e->msg));
    e->set = PETSC_TRUE;
  }
  return n;
}

static PetscErrorCode Catch(ErrCtx *e)
{
  PetscFunctionBegin;
  e->set    = PETSC_FALSE;
  e->msg[0] = 0;
  PetscCall(PetscPushErrorHandler(CatchError, e));
  PetscFunctionReturn(0);
}

/* pops the handler; requires that ierr is an error whose message contains every string in subs */
static PetscErrorCode Expect(PetscErrorCode ierr, ErrCtx *e, const char what[], PetscInt nsub, const char *const subs[])
{
  PetscFunctionBegin;
  PetscCall(PetscPopErrorHandler());
  PetscCheck(ierr, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: expected an error, got none", what);
  for (PetscInt i = 0; i < nsub; i++) {
    char *found;
    PetscCall(PetscStrstr(e->msg, subs[i], &found));
    PetscCheck(found, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: the error message \"%s\" does not mention \"%s\"", what, e->msg, subs[i]);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: caught expected error\n", what));
  if (show_errors) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "  %s\n", e->msg));
  PetscFunctionReturn(0);
}

static PetscErrorCode Near(PetscReal a, PetscReal b, PetscReal tol, const char what[])
{
  PetscFunctionBegin;
  PetscCheck(PetscAbsReal(a - b) <= tol * PetscMax(1.0, PetscAbsReal(b)), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "%s: got %.15g, expected %.15g", what, (double)a, (double)b);
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------- tests */

static PetscErrorCode TestSetters(void)
{
  NNLayer     l, inner = (NNLayer)1;
  NNShape     in, out;
  PetscInt    d[] = {7};
  ErrCtx      e;
  NNLayerType type;
  PetscInt    nchildren;

  PetscFunctionBegin;
  PetscCall(NNLayerCreate(PETSC_COMM_WORLD, &l));
  PetscCall(PetscObjectSetName((PetscObject)l, "act"));
  PetscCall(NNLayerSetType(l, NNLAYERRELU));
  PetscCall(NNLayerDenseSetUnits(l, 3));
  PetscCall(NNLayerDenseSetBias(l, PETSC_FALSE));
  PetscCall(NNLayerDropoutSetRate(l, 0.9));
  PetscCall(NNLayerBatchNormSetMomentum(l, 0.3));
  PetscCall(NNLayerBatchNormSetEpsilon(l, 0.1));
  PetscCall(NNLayerResidualAddLayer(l, NNLAYERDENSE, "x", &inner));
  PetscCheck(!inner, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNLayerResidualAddLayer on a relu layer returned a layer");
  PetscCall(NNLayerGetChildren(l, &nchildren, NULL));
  PetscCheck(nchildren == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNLayerResidualAddLayer on a relu layer added a child");
  PetscCall(NNShapeSet(&in, 1, d));
  PetscCall(NNLayerSetInputShape(l, &in));
  PetscCall(NNLayerSetUp(l));
  PetscCall(NNLayerGetOutputShape(l, &out));
  PetscCheck(out.ndim == 1 && out.dim[0] == 7, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNLayerDenseSetUnits changed a relu layer");
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "setters of other types on a relu layer: no-ops\n"));

  /* changing the type of a typed layer is refused */
  PetscCall(Catch(&e));
  PetscErrorCode ierr = NNLayerSetType(l, NNLAYERDENSE);
  PetscCall(Expect(ierr, &e, "changing the type of a relu layer", 1, (const char *const[]){"already set"}));
  PetscCall(NNLayerGetType(l, &type));
  PetscCheck(type && !strcmp(type, NNLAYERRELU), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "the relu layer changed its type");
  PetscCall(NNLayerDestroy(&l));

  /* unknown type: the message names the type and lists the valid ones */
  PetscCall(NNLayerCreate(PETSC_COMM_WORLD, &l));
  PetscCall(PetscObjectSetName((PetscObject)l, "conv"));
  PetscCall(Catch(&e));
  ierr = NNLayerSetType(l, "conv9d");
  PetscCall(Expect(ierr, &e, "unknown layer type", 11,
                   (const char *const[]){"conv9d", NNLAYERDENSE, NNLAYERFLATTEN, NNLAYERRELU, NNLAYERLEAKYRELU, NNLAYERTANH, NNLAYERSIGMOID, NNLAYERGELU, NNLAYERDROPOUT, NNLAYERBATCHNORM1D, NNLAYERRESIDUAL}));
  PetscCall(NNLayerDestroy(&l));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestDropout(void)
{
  NN                 net;
  NNLayer            drop;
  PetscInt           d[] = {40}, n = 5, N = 200, dropped = 0;
  Vec                x, t, y, yp;
  PetscScalar       *xa;
  const PetscScalar *ya, *xr;
  ErrCtx             e;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, d));
  PetscCall(NNSetBatchSize(net, n));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, NNLAYERDROPOUT, "drop", &drop));

  PetscCall(Catch(&e));
  ierr = NNLayerDropoutSetRate(drop, 1.0);
  PetscCall(Expect(ierr, &e, "dropout rate 1", 2, (const char *const[]){"-drop_rate", "0 <= p < 1"}));
  PetscCall(Catch(&e));
  ierr = NNLayerDropoutSetRate(drop, -0.1);
  PetscCall(Expect(ierr, &e, "dropout rate -0.1", 1, (const char *const[]){"-drop_rate"}));
  PetscCall(PetscOptionsSetValue(NULL, "-drop_rate", "0.5"));
  PetscCall(NNSetFromOptions(net));
  PetscCall(PetscOptionsClearValue(NULL, "-drop_rate"));

  PetscCall(NNCreateBatchVecs(net, &x, &t));
  PetscCall(VecGetArray(x, &xa));
  for (PetscInt i = 0; i < N; i++) xa[i] = 1.0 + 0.01 * i;
  PetscCall(VecRestoreArray(x, &xa));

  /* training: each entry is dropped (0) or scaled by 1/(1-p) = 2 */
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  PetscCall(NNForward(net, n, x, &y));
  PetscCall(VecGetArrayRead(x, &xr));
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt i = 0; i < N; i++) {
    PetscCheck(ya[i] == 0 || ya[i] == 2 * xr[i], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "dropout training output %g is neither 0 nor x/(1-p) = %g", (double)ya[i], (double)(2 * xr[i]));
    if (ya[i] == 0) dropped++;
  }
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCheck(dropped > 0.35 * N && dropped < 0.65 * N, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "dropout with p = 0.5 dropped %" PetscInt_FMT " of %" PetscInt_FMT " entries", dropped, N);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dropout training mode: entries are 0 or x/(1-p), about a fraction p dropped\n"));

  /* evaluation: identity, through NNForward and NNPredict */
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(NNForward(net, n, x, &y));
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt i = 0; i < N; i++) PetscCheck(ya[i] == xr[i], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "dropout in evaluation mode changed entry %" PetscInt_FMT, i);
  PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  PetscCall(VecDuplicate(x, &yp));
  PetscCall(NNPredict(net, x, yp));
  PetscCall(VecGetArrayRead(yp, &ya));
  for (PetscInt i = 0; i < N; i++) PetscCheck(ya[i] == xr[i], PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNPredict through dropout changed entry %" PetscInt_FMT, i);
  PetscCall(VecRestoreArrayRead(yp, &ya));
  PetscCall(VecRestoreArrayRead(x, &xr));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "dropout evaluation mode: identity\n"));
  PetscCall(VecDestroy(&yp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestBatchNorm(void)
{
  NN                 net;
  NNLayer            bn, fc;
  PetscInt           C = 3, n = 4, d[] = {3}, d2[] = {2, 3}, np;
  PetscReal          mom = 0.2, eps = 1e-3, rm[3] = {0, 0, 0}, rv[3] = {1, 1, 1};
  Vec                x, t, y, theta, buf;
  PetscScalar       *xa;
  const PetscScalar *ya, *ba, *ta;
  ErrCtx             e;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, d));
  PetscCall(NNSetBatchSize(net, n));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, NNLAYERBATCHNORM1D, "bn", &bn));
  PetscCall(PetscOptionsSetValue(NULL, "-bn_momentum", "0.2"));
  PetscCall(PetscOptionsSetValue(NULL, "-bn_epsilon", "1e-3"));
  PetscCall(NNSetFromOptions(net));
  PetscCall(PetscOptionsClearValue(NULL, "-bn_momentum"));
  PetscCall(PetscOptionsClearValue(NULL, "-bn_epsilon"));

  PetscCall(Catch(&e));
  ierr = NNLayerBatchNormSetMomentum(bn, 1.5);
  PetscCall(Expect(ierr, &e, "batch-norm momentum 1.5", 1, (const char *const[]){"-bn_momentum"}));
  PetscCall(Catch(&e));
  ierr = NNLayerBatchNormSetEpsilon(bn, 0);
  PetscCall(Expect(ierr, &e, "batch-norm epsilon 0", 1, (const char *const[]){"-bn_epsilon"}));

  /* PyTorch's initialization: weight 1, bias 0, running_mean 0, running_var 1, count 0 */
  PetscCall(NNGetParameters(net, &theta));
  PetscCall(NNGetBuffers(net, &buf));
  PetscCall(VecGetSize(theta, &np));
  PetscCheck(np == 2 * C, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "batchnorm1d has %" PetscInt_FMT " parameters, expected %" PetscInt_FMT, np, 2 * C);
  PetscCall(VecGetArrayRead(theta, &ta));
  PetscCall(VecGetArrayRead(buf, &ba));
  for (PetscInt c = 0; c < C; c++) {
    PetscCheck(ta[c] == 1 && ta[C + c] == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "batchnorm1d weight/bias not initialized to 1/0");
    PetscCheck(ba[c] == 0 && ba[C + c] == 1, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "batchnorm1d running statistics not initialized to 0/1");
  }
  PetscCheck(ba[2 * C] == 0, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "num_batches_tracked not initialized to 0");
  PetscCall(VecRestoreArrayRead(buf, &ba));
  PetscCall(VecRestoreArrayRead(theta, &ta));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batchnorm1d initialization: weight 1, bias 0, running_mean 0, running_var 1\n"));

  PetscCall(NNCreateBatchVecs(net, &x, &t));
  for (PetscInt pass = 0; pass < 2; pass++) {
    PetscCall(VecGetArray(x, &xa));
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt c = 0; c < C; c++) xa[s * C + c] = (c + 1) * PetscSinReal(1.7 * s + c + pass) + 10 * c;
    PetscCall(NNForward(net, n, x, &y));
    PetscCall(VecGetArrayRead(y, &ya));
    for (PetscInt c = 0; c < C; c++) {
      PetscReal mean = 0, var = 0;
      for (PetscInt s = 0; s < n; s++) mean += xa[s * C + c] / n;
      for (PetscInt s = 0; s < n; s++) var += PetscSqr(xa[s * C + c] - mean) / n;
      for (PetscInt s = 0; s < n; s++) PetscCall(Near(ya[s * C + c], (xa[s * C + c] - mean) / PetscSqrtReal(var + eps), 1e-12, "batchnorm1d training output"));
      rm[c] = (1 - mom) * rm[c] + mom * mean;
      rv[c] = (1 - mom) * rv[c] + mom * var * n / (n - 1);
    }
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecRestoreArray(x, &xa));
    PetscCall(VecGetArrayRead(buf, &ba));
    for (PetscInt c = 0; c < C; c++) {
      PetscCall(Near(ba[c], rm[c], 1e-12, "running_mean"));
      PetscCall(Near(ba[C + c], rv[c], 1e-12, "running_var (unbiased)"));
    }
    PetscCall(Near(ba[2 * C], pass + 1, 0, "num_batches_tracked"));
    PetscCall(VecRestoreArrayRead(buf, &ba));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batchnorm1d training mode: batch statistics; running statistics with momentum and unbiased variance; num_batches_tracked counts\n"));

  /* evaluation: normalized with the running statistics, which stay unchanged */
  PetscCall(NNSetTraining(net, PETSC_FALSE));
  PetscCall(NNForward(net, n, x, &y));
  PetscCall(VecGetArrayRead(x, &ya));
  {
    const PetscScalar *yo;
    PetscCall(VecGetArrayRead(y, &yo));
    for (PetscInt s = 0; s < n; s++)
      for (PetscInt c = 0; c < C; c++) PetscCall(Near(yo[s * C + c], (ya[s * C + c] - rm[c]) / PetscSqrtReal(rv[c] + eps), 1e-12, "batchnorm1d evaluation output"));
    PetscCall(VecRestoreArrayRead(y, &yo));
  }
  PetscCall(VecRestoreArrayRead(x, &ya));
  PetscCall(VecGetArrayRead(buf, &ba));
  PetscCall(Near(ba[2 * C], 2, 0, "num_batches_tracked after evaluation"));
  PetscCall(Near(ba[0], rm[0], 1e-12, "running_mean after evaluation"));
  PetscCall(VecRestoreArrayRead(buf, &ba));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "batchnorm1d evaluation mode: running statistics, not updated\n"));

  /* a batch of one sample cannot be normalized in training mode */
  PetscCall(NNSetTraining(net, PETSC_TRUE));
  PetscCall(Catch(&e));
  ierr = NNForward(net, 1, x, &y);
  PetscCall(Expect(ierr, &e, "batchnorm1d training on one sample", 1, (const char *const[]){"bn"}));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&t));
  PetscCall(NNDestroy(&net));

  /* (N,C,L) input is not 1-d features */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 2, d2));
  PetscCall(NNAddLayer(net, NNLAYERBATCHNORM1D, "bn", NULL));
  PetscCall(Catch(&e));
  ierr = NNSetUp(net);
  PetscCall(Expect(ierr, &e, "batchnorm1d on (2,3) samples", 2, (const char *const[]){"bn", "(2,3)"}));
  PetscCall(NNDestroy(&net));

  /* setters of other types are no-ops on batch norm */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNAddLayer(net, NNLAYERDENSE, "fc", &fc));
  PetscCall(NNLayerBatchNormSetMomentum(fc, 0.5));
  PetscCall(NNDestroy(&net));
  PetscFunctionReturn(0);
}

static PetscErrorCode TestResidual(void)
{
  NN             net;
  NNLayer        res, l, fb;
  PetscInt       d[] = {4}, np, nchildren;
  ErrCtx         e;
  PetscErrorCode ierr;
  PetscViewer    v;

  PetscFunctionBegin;
  /* last inner layer with the wrong output shape */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, d));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", &res));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERDENSE, "fa", &l));
  PetscCall(NNLayerDenseSetUnits(l, 6));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERTANH, "ta", NULL));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERDENSE, "fb", &l));
  PetscCall(NNLayerDenseSetUnits(l, 5));
  PetscCall(Catch(&e));
  ierr = NNSetUp(net);
  PetscCall(Expect(ierr, &e, "residual block with output (5) for input (4)", 4, (const char *const[]){"res", "fb", "(5)", "(4)"}));
  /* duplicate inner name */
  PetscCall(Catch(&e));
  ierr = NNLayerResidualAddLayer(res, NNLAYERRELU, "fa", NULL);
  PetscCall(Expect(ierr, &e, "residual inner layers with the same name", 2, (const char *const[]){"res", "fa"}));
  PetscCall(NNDestroy(&net));

  /* forward: y = x + W x + b with one inner dense layer; its slice follows the (empty) residual one */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, d));
  PetscCall(NNSetBatchSize(net, 2));
  PetscCall(NNSetLoss(net, NNLOSSMSE));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", &res));
  PetscCall(NNLayerResidualAddLayer(res, NNLAYERDENSE, "fa", &l));
  PetscCall(NNLayerDenseSetUnits(l, 4));
  {
    Vec                x, y, theta;
    PetscScalar       *xa;
    const PetscScalar *W, *ya;
    PetscCall(NNCreateBatchVecs(net, &x, NULL));
    PetscCall(VecGetArray(x, &xa));
    for (PetscInt i = 0; i < 8; i++) xa[i] = PetscCosReal(0.9 * i);
    PetscCall(VecRestoreArray(x, &xa));
    PetscCall(NNForward(net, 2, x, &y));
    PetscCall(NNGetParameters(net, &theta));
    PetscCall(VecGetArrayRead(theta, &W));
    PetscCall(VecGetArrayRead(x, (const PetscScalar **)&xa));
    PetscCall(VecGetArrayRead(y, &ya));
    for (PetscInt s = 0; s < 2; s++) {
      for (PetscInt o = 0; o < 4; o++) {
        PetscReal ref = xa[4 * s + o] + W[16 + o];
        for (PetscInt i = 0; i < 4; i++) ref += W[4 * o + i] * xa[4 * s + i];
        PetscCall(Near(ya[4 * s + o], ref, 1e-13, "residual forward x + W x + b"));
      }
    }
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(VecRestoreArrayRead(x, (const PetscScalar **)&xa));
    PetscCall(VecRestoreArrayRead(theta, &W));
    PetscCall(VecDestroy(&x));
  }
  PetscCall(NNDestroy(&net));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "residual forward: y = x + block(x)\n"));

  /* empty block */
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetInputShape(net, 1, d));
  PetscCall(NNAddLayer(net, NNLAYERRESIDUAL, "res", NULL));
  PetscCall(Catch(&e));
  ierr = NNSetUp(net);
  PetscCall(Expect(ierr, &e, "residual layer without inner layers", 2, (const char *const[]){"res", "-res_layers"}));
  PetscCall(NNDestroy(&net));

  /* built from the options database under a network prefix: inner layers get "m_<name>_" */
  PetscCall(PetscOptionsInsertString(NULL, "-m_nn_layers blk,out -m_blk_type residual -m_blk_layers fa,ta,fb "
                                           "-m_fa_type dense -m_fa_units 6 -m_ta_type tanh -m_fb_type dense -m_fb_units 4 "
                                           "-m_out_type dense -m_out_units 2 -m_nn_loss mse -m_nn_batch_size 3"));
  PetscCall(NNCreate(PETSC_COMM_WORLD, &net));
  PetscCall(NNSetOptionsPrefix(net, "m_"));
  PetscCall(NNSetInputShape(net, 1, d));
  PetscCall(NNSetFromOptions(net));
  PetscCall(NNGetLayer(net, "blk", &res));
  PetscCall(NNLayerSetFromOptions(res)); /* again: must not add the inner layers twice */
  PetscCall(NNLayerGetChildren(res, &nchildren, NULL));
  PetscCheck(nchildren == 3, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "residual layer has %" PetscInt_FMT " inner layers, expected 3", nchildren);
  PetscCall(NNSetUp(net));
  PetscCall(NNGetLayer(net, "fb", &fb));
  PetscCheck(fb, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "NNGetLayer does not find the inner layer fb");
  {
    PetscBool   match;
    const char *prefix;
    PetscCall(PetscObjectGetOptionsPrefix((PetscObject)fb, &prefix));
    PetscCall(PetscStrcmp(prefix, "m_fb_", &match));
    PetscCheck(match, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "inner layer prefix is %s, expected m_fb_", prefix);
  }
  PetscCall(NNGetNumParameters(net, &np));
  PetscCheck(np == (4 * 6 + 6) + (6 * 4 + 4) + (4 * 2 + 2), PETSC_COMM_WORLD, PETSC_ERR_PLIB, "residual network has %" PetscInt_FMT " parameters", np);
  PetscCall(PetscViewerASCIIGetStdout(PETSC_COMM_WORLD, &v));
  PetscCall(NNLayerView(res, v));
  PetscCall(NNDestroy(&net));
  {
    const char *keys[] = {"-m_nn_layers", "-m_blk_type", "-m_blk_layers", "-m_fa_type", "-m_fa_units", "-m_ta_type", "-m_fb_type", "-m_fb_units", "-m_out_type", "-m_out_units", "-m_nn_loss", "-m_nn_batch_size"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) PetscCall(PetscOptionsClearValue(NULL, keys[k]));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-show_errors", &show_errors, NULL));
  PetscCall(TestSetters());
  PetscCall(TestDropout());
  PetscCall(TestBatchNorm());
  PetscCall(TestResidual());
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:

TEST*/
