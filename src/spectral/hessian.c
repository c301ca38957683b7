/* The loss Hessian as a MATSHELL: products H v by central differences of the network's gradient.

   Why differences of gradients: NNLossGradient() already differentiates every layer (dense,
   convolutions on DMDAs, batch norm, ODE blocks through TSAdjoint) and its data-parallel reduction;
   an exact product would need a forward-mode (directional-derivative) pass through each layer's
   backward pass, written and tested layer by layer. Two gradients per product cost what an exact
   Hessian-vector product costs (about two backward passes) and work for every layer there is. */
#include <petnn/private/spectralimpl.h>
#include <petnn/private/gridimpl.h>
#include <petnn/private/layerimpl.h>

PetscLogEvent NN_HessianMult;

typedef struct {
  NN        net;
  NNData    data;     /* the samples [0, N) of data, or */
  PetscInt  N;
  Vec       x, t;     /* one batch of n samples (referenced) */
  PetscInt  n;
  PetscBool training; /* differentiate the training-mode loss (batch statistics, dropout) */
  PetscReal h;        /* relative step: eps = h (1 + |theta|) / |v| */
  PetscInt  nmult;    /* products so far */
  Vec       at;       /* the point the Hessian is taken at (NULL: the network's parameters) */
  Vec       theta0, dtheta0, buf0, gplus, vfull, yfull, bx, bt;
  VecScatter tofull;  /* a parallel v -> a full copy on every rank (NULL for a sequential Mat) */
  struct {             /* kinks of piecewise-linear layers (relu, leaky_relu) frozen at the Hessian's point */
    PetscInt       n;       /* such layers (children included) */
    NNLayer       *layer;
    PetscErrorCode (**set)(NNLayer, PetscInt, unsigned char *);
    size_t        *offset;  /* of each layer's mask in a batch's block */
    size_t         stride;  /* bytes per batch */
    unsigned char *mask;    /* [batches][stride] */
  } kink;
} NNHessianCtx;

/* layer j's pattern for batch b: mode 1 records it in the next forward pass, 2 uses it, 0 ends */
static PetscErrorCode NNHessianSetKinks(NNHessianCtx *c, PetscInt mode, PetscInt b)
{
  PetscFunctionBegin;
  for (PetscInt j = 0; j < c->kink.n; j++) PetscCall((*c->kink.set[j])(c->kink.layer[j], mode, c->kink.mask + b * c->kink.stride + c->kink.offset[j]));
  PetscFunctionReturn(0);
}

/* the gradient of the mean loss at the network's current parameters into g: one batch, or the
   samples [0, N) of the data set split over the data groups like NNEvaluate(), each group's
   gradient weighted by its share m/N and summed over the data groups */
static PetscErrorCode NNHessianGradient(NNHessianCtx *c, Vec g)
{
  NN         net = c->net;
  NNParallel p;
  PetscInt   cap, G, *idx;
  PetscInt   mode = g ? 2 : 1; /* without g: the forward passes that record the kinks */

  PetscFunctionBegin;
  if (!c->data) {
    if (c->kink.n) PetscCall(NNHessianSetKinks(c, mode, 0));
    if (g) PetscCall(NNLossGradient(net, c->n, c->x, c->t, NULL, NULL));
    else PetscCall(NNForward(net, c->n, c->x, NULL));
    if (g) PetscCall(VecCopy(net->dtheta, g));
    if (c->kink.n) PetscCall(NNHessianSetKinks(c, 0, 0));
    PetscFunctionReturn(0);
  }
  PetscCall(NNParallelGet(net, &p));
  cap = net->nbatch;
  G   = p->D * cap;
  if (g) PetscCall(VecZeroEntries(g));
  PetscCall(PetscMalloc1(cap, &idx));
  for (PetscInt start = 0; start < c->N; start += G) {
    PetscInt n = PetscMin(G, c->N - start), first, last, m;
    NNParallelShard(n, p->group, p->D, &first, &last);
    m = last - first;
    for (PetscInt i = 0; i < m; i++) idx[i] = start + first + i;
    PetscCall(NNDataGetBatchOn(c->data, PetscObjectComm((PetscObject)c->data), m, idx, c->bx, c->bt));
    if (!m) continue;
    if (c->kink.n) PetscCall(NNHessianSetKinks(c, mode, start / G));
    if (g) {
      PetscCall(NNLossGradient(net, m, c->bx, c->bt, NULL, NULL));
      PetscCall(VecAXPY(g, (PetscReal)m / c->N, net->dtheta));
    } else PetscCall(NNForward(net, m, c->bx, NULL));
  }
  if (c->kink.n) PetscCall(NNHessianSetKinks(c, 0, 0));
  PetscCall(PetscFree(idx));
  if (g && p->D > 1) { /* every rank of a spatial group holds its group's whole gradient: sum over groups */
    PetscScalar *ga;
    PetscInt     len;
    PetscMPIInt  cnt;
    PetscCall(VecGetLocalSize(g, &len));
    PetscCall(PetscMPIIntCast(len, &cnt));
    PetscCall(VecGetArray(g, &ga));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ga, cnt, MPIU_SCALAR, MPIU_SUM, p->dcomm));
    PetscCall(VecRestoreArray(g, &ga));
  }
  PetscFunctionReturn(0);
}

/* y = (g(theta + eps v) - g(theta - eps v)) / (2 eps) on full (replicated) Vecs; the network's
   parameters, gradient, buffers (batch-norm running statistics), generator state and mode are
   restored exactly, so the product depends on v alone */
static PetscErrorCode NNHessianMultFull(NNHessianCtx *c, Vec v, Vec y)
{
  NN        net      = c->net;
  PetscBool training = net->training;
  NNRandom  rng      = net->rng;
  PetscReal nv, nt, eps;

  PetscFunctionBegin;
  PetscCall(VecNorm(v, NORM_2, &nv));
  if (nv == 0) {
    PetscCall(VecZeroEntries(y));
    PetscFunctionReturn(0);
  }
  PetscCall(VecCopy(net->theta, c->theta0));
  PetscCall(VecCopy(net->dtheta, c->dtheta0));
  PetscCall(VecCopy(net->buf, c->buf0));
  if (c->at) PetscCall(VecCopy(c->at, net->theta));
  PetscCall(VecNorm(net->theta, NORM_2, &nt));
  eps = c->h * (1 + nt) / nv;
  PetscCall(NNSetTraining(net, c->training));
  if (c->kink.n) { /* the pattern of the kinks at theta, which both gradients use */
    PetscCall(NNHessianGradient(c, NULL));
    PetscCall(VecCopy(c->buf0, net->buf));
    net->rng = rng;
  }
  PetscCall(VecAXPY(net->theta, eps, v)); /* theta + eps v */
  PetscCall(NNHessianGradient(c, c->gplus));
  PetscCall(VecCopy(c->buf0, net->buf));
  net->rng = rng; /* the same dropout masks */
  PetscCall(VecCopy(c->at ? c->at : c->theta0, net->theta));
  PetscCall(VecAXPY(net->theta, -eps, v)); /* theta - eps v */
  PetscCall(NNHessianGradient(c, y));
  PetscCall(VecAYPX(y, -1, c->gplus));
  PetscCall(VecScale(y, 1 / (2 * eps)));
  PetscCall(VecCopy(c->theta0, net->theta));
  PetscCall(VecCopy(c->dtheta0, net->dtheta));
  net->dthetazero = PETSC_FALSE;
  PetscCall(VecCopy(c->buf0, net->buf));
  net->rng = rng;
  PetscCall(NNSetTraining(net, training));
  c->nmult++;
  PetscFunctionReturn(0);
}

static PetscErrorCode MatMult_NNHessian(Mat H, Vec v, Vec y)
{
  NNHessianCtx *c;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(H, &c));
  PetscCall(PetscLogEventBegin(NN_HessianMult, H, v, y, 0));
  if (!c->tofull) PetscCall(NNHessianMultFull(c, v, y));
  else { /* the parameters are replicated: gather v on every rank, keep this rank's rows of H v */
    const PetscScalar *yf;
    PetscScalar       *ya;
    PetscInt           lo, hi;
    PetscCall(VecScatterBegin(c->tofull, v, c->vfull, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(c->tofull, v, c->vfull, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(NNHessianMultFull(c, c->vfull, c->yfull));
    PetscCall(VecGetOwnershipRange(y, &lo, &hi));
    PetscCall(VecGetArrayRead(c->yfull, &yf));
    PetscCall(VecGetArray(y, &ya));
    PetscCall(PetscArraycpy(ya, yf + lo, hi - lo));
    PetscCall(VecRestoreArray(y, &ya));
    PetscCall(VecRestoreArrayRead(c->yfull, &yf));
  }
  PetscCall(PetscLogEventEnd(NN_HessianMult, H, v, y, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatDestroy_NNHessian(Mat H)
{
  NNHessianCtx *c;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(H, &c));
  PetscCall(VecDestroy(&c->theta0));
  PetscCall(VecDestroy(&c->dtheta0));
  PetscCall(VecDestroy(&c->buf0));
  PetscCall(VecDestroy(&c->gplus));
  PetscCall(VecDestroy(&c->vfull));
  PetscCall(VecDestroy(&c->yfull));
  PetscCall(VecDestroy(&c->bx));
  PetscCall(VecDestroy(&c->bt));
  PetscCall(VecDestroy(&c->x));
  PetscCall(VecDestroy(&c->t));
  PetscCall(VecDestroy(&c->at));
  PetscCall(VecScatterDestroy(&c->tofull));
  PetscCall(PetscFree3(c->kink.layer, c->kink.set, c->kink.offset));
  PetscCall(PetscFree(c->kink.mask));
  PetscCall(NNDataDestroy(&c->data));
  PetscCall(NNDestroy(&c->net));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(0);
}

static PetscErrorCode MatView_NNHessian(Mat H, PetscViewer viewer)
{
  NNHessianCtx *c;
  PetscBool     ascii;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(H, &c));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(PetscViewerASCIIPrintf(viewer, "loss Hessian of %s (%s mode) over %" PetscInt_FMT " samples%s\n", c->net->loss, c->training ? "training" : "evaluation", c->data ? c->N : c->n, c->data ? " of a data set" : " of one batch"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "central differences of gradients, step eps = %g (1 + |theta|) / |v|; %" PetscInt_FMT " products so far\n", (double)c->h, c->nmult));
  PetscFunctionReturn(0);
}

/* counts (layer NULL) or lists the layers with a kink pattern, children included */
static PetscErrorCode NNHessianFindKinks(PetscInt nl, const NNLayer layers[], NNHessianCtx *c, PetscInt *k)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < nl; i++) {
    PetscErrorCode (*f)(NNLayer, PetscInt, unsigned char *) = NULL;
    PetscInt       nc;
    const NNLayer *ch;
    PetscBool      ode;
    PetscCall(PetscObjectQueryFunction((PetscObject)layers[i], "NNLayerSetKinkMask_C", &f));
    if (f) {
      if (c->kink.layer) {
        c->kink.layer[*k] = layers[i];
        c->kink.set[*k]   = f;
      }
      (*k)++;
    }
    PetscCall(PetscObjectTypeCompare((PetscObject)layers[i], NNLAYERODE, &ode));
    if (ode) continue; /* f runs many times per forward pass (stages, steps, the adjoint's recomputation): one pattern cannot serve them */
    PetscCall(NNLayerGetChildren(layers[i], &nc, &ch));
    PetscCall(NNHessianFindKinks(nc, ch, c, k));
  }
  PetscFunctionReturn(0);
}

/* whether any layer (children included) is an ODE block */
static PetscErrorCode NNHessianHasODE(PetscInt nl, const NNLayer layers[], PetscBool *has)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < nl && !*has; i++) {
    PetscInt       nc;
    const NNLayer *ch;
    PetscCall(PetscObjectTypeCompare((PetscObject)layers[i], NNLAYERODE, has));
    PetscCall(NNLayerGetChildren(layers[i], &nc, &ch));
    if (!*has) PetscCall(NNHessianHasODE(nc, ch, has));
  }
  PetscFunctionReturn(0);
}

/* room for the kink patterns of every batch a gradient runs through */
static PetscErrorCode NNHessianSetUpKinks(NNHessianCtx *c, PetscBool freeze)
{
  NN              net = c->net;
  NNParallel      p;
  PetscInt        nl, k = 0, nb = 1;
  const NNLayer  *layers;

  PetscFunctionBegin;
  if (!freeze) PetscFunctionReturn(0);
  PetscCall(NNGetLayers(net, &nl, &layers));
  PetscCall(NNHessianFindKinks(nl, layers, c, &c->kink.n));
  if (!c->kink.n) PetscFunctionReturn(0);
  PetscCheck(net->dev.type == NN_DEVICE_CPU, PetscObjectComm((PetscObject)net), PETSC_ERR_SUP, "The loss Hessian with frozen kinks (-nn_hessian_freeze_kinks, the default) needs -nn_device cpu: the device passes of relu and leaky_relu record no kink patterns; use -nn_device cpu or -nn_hessian_freeze_kinks 0");
  PetscCall(NNParallelGet(net, &p));
  if (c->data) nb = (c->N + p->D * net->nbatch - 1) / (p->D * net->nbatch);
  PetscCall(PetscMalloc3(c->kink.n, &c->kink.layer, c->kink.n, &c->kink.set, c->kink.n, &c->kink.offset));
  PetscCall(NNHessianFindKinks(nl, layers, c, &k));
  for (PetscInt j = 0; j < c->kink.n; j++) {
    c->kink.offset[j] = c->kink.stride;
    c->kink.stride += (size_t)net->nbatch * c->kink.layer[j]->localsize;
  }
  PetscCall(PetscMalloc1(nb * c->kink.stride, &c->kink.mask));
  PetscFunctionReturn(0);
}

/* the shell on comm (sequential or the trainer's ranks) with its work Vecs and options */
static PetscErrorCode NNHessianCreateShell(NN net, MPI_Comm comm, NNHessianCtx *c, Mat *H)
{
  PetscInt    P;
  PetscMPIInt size;
  const char *prefix;
  PetscBool   freeze = PETSC_TRUE;

  PetscFunctionBegin;
  if (!NN_HessianMult) PetscCall(NNLogEventRegister("NNHessianMult", NN_CLASSID, &NN_HessianMult));
  PetscCall(PetscObjectReference((PetscObject)net));
  c->net = net;
  c->h   = PetscCbrtReal(PETSC_MACHINE_EPSILON);
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)net, &prefix));
  PetscOptionsBegin(PetscObjectComm((PetscObject)net), prefix, "Loss-Hessian products", "NN");
  PetscCall(PetscOptionsReal("-nn_hessian_fd_step", "Relative difference step h: eps = h (1+|theta|)/|v|", "NNCreateHessian", c->h, &c->h, NULL));
  PetscCall(PetscOptionsBool("-nn_hessian_training", "Differentiate the training-mode loss (batch statistics, dropout with fixed masks)", "NNCreateHessian", c->training, &c->training, NULL));
  PetscCall(PetscOptionsBool("-nn_hessian_freeze_kinks", "Differentiate relu/leaky_relu with their pattern at the Hessian's point (as autograd)", "NNCreateHessian", freeze, &freeze, NULL));
  PetscOptionsEnd();
  if (!c->training) { /* an ODE block keeps the trajectory its backward pass needs only in training mode */
    PetscInt       nl;
    const NNLayer *layers;
    PetscBool      ode = PETSC_FALSE;
    PetscCall(NNGetLayers(net, &nl, &layers));
    PetscCall(NNHessianHasODE(nl, layers, &ode));
    if (ode) PetscCall(PetscInfo(net, "The network has ODE blocks: its loss Hessian uses training mode\n"));
    if (ode) c->training = PETSC_TRUE;
  }
  PetscCall(NNHessianSetUpKinks(c, freeze));
  PetscCheck(c->h > 0 && c->h < 1, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "-nn_hessian_fd_step %g: valid steps are in (0, 1), e.g. %g = cbrt(machine epsilon)", (double)c->h, (double)PetscCbrtReal(PETSC_MACHINE_EPSILON));
  PetscCall(NNGetNumParameters(net, &P));
  PetscCall(VecDuplicate(net->theta, &c->theta0));
  PetscCall(VecDuplicate(net->theta, &c->dtheta0));
  PetscCall(VecDuplicate(net->theta, &c->gplus));
  PetscCall(VecDuplicate(net->buf, &c->buf0));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(MatCreateShell(comm, PETSC_DECIDE, PETSC_DECIDE, P, P, c, H));
  PetscCall(MatShellSetOperation(*H, MATOP_MULT, (void (*)(void))MatMult_NNHessian));
  PetscCall(MatShellSetOperation(*H, MATOP_MULT_TRANSPOSE, (void (*)(void))MatMult_NNHessian));
  PetscCall(MatShellSetOperation(*H, MATOP_DESTROY, (void (*)(void))MatDestroy_NNHessian));
  PetscCall(MatShellSetOperation(*H, MATOP_VIEW, (void (*)(void))MatView_NNHessian));
  PetscCall(MatSetOption(*H, MAT_SYMMETRIC, PETSC_TRUE));
  PetscCall(MatSetOption(*H, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  if (size > 1) {
    Vec v;
    PetscCall(MatCreateVecs(*H, &v, NULL));
    PetscCall(VecScatterCreateToAll(v, &c->tofull, &c->vfull));
    PetscCall(VecDuplicate(c->vfull, &c->yfull));
    PetscCall(VecDestroy(&v));
  }
  PetscFunctionReturn(0);
}

/*@
   NNCreateHessian - the Hessian of the mean loss of one batch with respect to the parameters, as
   a MATSHELL whose products are central differences of gradients

   Collective

   Input Parameters:
+  net - a set-up network; the Hessian is taken at its parameters when a product is computed
.  n - number of samples in the batch, at most the batch size
.  x - input batch
-  t - targets

   Output Parameter:
.  H - the Hessian (size: the number of parameters), on the network's trainer communicator, its
   rows split over the ranks (the parameters are replicated; every rank computes the whole product)

   Options Database Keys:
+  -nn_hessian_fd_step <h> - relative step (default cbrt(machine epsilon) = 6.06e-6)
.  -nn_hessian_freeze_kinks <bool> - use the ReLU pattern at theta in both gradients (default true)
-  -nn_hessian_training - differentiate the training-mode loss (default: evaluation mode)

   Notes:
   H v = (g(theta + eps v) - g(theta - eps v)) / (2 eps) with eps = h (1 + |theta|) / |v|, where g is
   the gradient of `NNLossGradient()`. The error is O(eps^2 |v|^2 |D^3 L|) (truncation) plus
   O(macheps |g| / eps) (rounding): with h = cbrt(macheps) the two balance, about 1e-10 relative on a
   smooth loss with O(1) derivatives (measured against torch.autograd.functional.hvp: 2e-11 to 2e-9).
   A kink (ReLU) that a perturbation crosses would make the product a difference quotient that grows
   like 1/eps (O(1) wrong already with a few thousand samples), so relu and leaky_relu layers
   (children included) record their pattern x > 0 in a forward pass at theta and both gradients use
   it: the product is then autograd's, the derivative of the piecewise-linear map of that pattern
   (-nn_hessian_freeze_kinks 0 turns this off; it costs one forward pass per product and a byte per
   activation entry of every batch). Max pooling's argmax and activations inside an ODE block's f
   (evaluated many times per pass) are not frozen. Differences of gradients rather than an exact
   directional derivative: every layer (ODE blocks, spatial layers included) gets its product from
   the backward passes that are already there and tested.

   Each product restores the parameters, the gradient, the buffers (batch-norm running statistics),
   the generator state and the training mode exactly, so it is a function of v only. In evaluation
   mode (the default; training mode for networks with ODE blocks, whose backward pass needs the
   trajectory only a training-mode forward pass keeps) dropout is off and batch norm uses its running statistics; with
   -nn_hessian_training batch norm uses batch statistics and dropout draws the same masks in every
   gradient of every product (the generator state is restored), the Hessian of the loss with those
   masks fixed. The Mat holds references to x and t; they must not change while it is used.
   `NNHessianGetNumProducts()` counts the products (two gradients each). Mult events: NNHessianMult.

   Level: intermediate

.seealso: `NNCreateHessianData()`, `NNComputeHessianEigenvalues()`, `NNLossGradient()`
@*/
PetscErrorCode NNCreateHessian(NN net, PetscInt n, Vec x, Vec t, Mat *H)
{
  NNHessianCtx *c;
  NNParallel    p;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(x, VEC_CLASSID, 3);
  PetscValidHeaderSpecific(t, VEC_CLASSID, 4);
  PetscAssertPointer(H, 5);
  PetscCall(NNSetUp(net));
  PetscCheck(n > 0 && n <= net->nbatch, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Hessian of a batch of %" PetscInt_FMT " samples: valid sizes are 1 to the batch size %" PetscInt_FMT, n, net->nbatch);
  PetscCall(NNParallelGet(net, &p));
  PetscCall(PetscNew(&c));
  c->n = n;
  PetscCall(PetscObjectReference((PetscObject)x));
  PetscCall(PetscObjectReference((PetscObject)t));
  c->x = x;
  c->t = t;
  PetscCall(NNHessianCreateShell(net, p->tcomm, c, H));
  PetscFunctionReturn(0);
}

/* the Hessian over samples [0, N) of data on comm (the trainer's ranks, or PETSC_COMM_SELF for TAO) */
PetscErrorCode NNCreateHessianData_Private(NN net, NNData data, PetscInt N, MPI_Comm comm, PetscBool training, Mat *H)
{
  NNHessianCtx *c;
  PetscInt      total;

  PetscFunctionBegin;
  PetscCall(NNDataGetNumSamples(data, &total));
  if (N < 0) N = total;
  PetscCheck(N > 0 && N <= total, PetscObjectComm((PetscObject)net), PETSC_ERR_ARG_OUTOFRANGE, "Hessian over %" PetscInt_FMT " samples (-nn_hessian_samples): the data set has %" PetscInt_FMT "; valid values are 1 to %" PetscInt_FMT ", or -1 for all", N, total, total);
  PetscCall(PetscNew(&c));
  c->N        = N;
  c->training = training;
  PetscCall(PetscObjectReference((PetscObject)data));
  c->data = data;
  PetscCall(NNCreateBatchVecs(net, &c->bx, &c->bt));
  PetscCall(NNHessianCreateShell(net, comm, c, H));
  PetscFunctionReturn(0);
}

/*@
   NNCreateHessianData - the Hessian of the mean loss over the first samples of a data set with
   respect to the parameters, as a MATSHELL (central differences of gradients)

   Collective

   Input Parameters:
+  net - a set-up network; the Hessian is taken at its parameters when a product is computed
.  data - the data set (the training data)
-  N - number of samples: samples [0, N) of data, or -1 for all

   Output Parameter:
.  H - the Hessian, on the network's trainer communicator, rows split over its ranks

   Notes:
   The step rule, its error and the state restored after each product are those of
   `NNCreateHessian()`. With data groups (-nn_data_groups D) every batch of D x (batch size)
   samples is split over the groups as in `NNEvaluate()`; each group's gradient is weighted by its
   share of the N samples and the groups' gradients are summed by an all-reduce, like the gradient in
   data-parallel training, so every rank computes the same H v, the Hessian of the mean loss over
   the N samples. Only the batch size changes how the samples are grouped (batch statistics in
   training mode).

   Level: intermediate

.seealso: `NNCreateHessian()`, `NNComputeHessianEigenvalues()`, `NNHessianGetNumProducts()`
@*/
PetscErrorCode NNCreateHessianData(NN net, NNData data, PetscInt N, Mat *H)
{
  NNParallel p;
  PetscBool  training = PETSC_FALSE;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(net, NN_CLASSID, 1);
  PetscValidHeaderSpecific(data, NNDATA_CLASSID, 2);
  PetscAssertPointer(H, 4);
  PetscCall(NNSetUp(net));
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNCreateHessianData_Private(net, data, N, p->tcomm, training, H));
  PetscFunctionReturn(0);
}

/* the Hessian's linearization point: x, or NULL for the network's parameters at each product (TAO) */
PetscErrorCode NNHessianSetPoint_Private(Mat H, Vec x)
{
  NNHessianCtx *c;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(H, &c));
  if (x && !c->at) PetscCall(VecDuplicate(x, &c->at));
  if (x) PetscCall(VecCopy(x, c->at));
  else PetscCall(VecDestroy(&c->at));
  PetscFunctionReturn(0);
}

/* the relative difference step h of a Hessian shell (get and set; -nn_hessian_fd_step) */
PetscErrorCode NNHessianGetStep_Private(Mat H, PetscReal *h)
{
  NNHessianCtx *c;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(H, &c));
  *h = c->h;
  PetscFunctionReturn(0);
}

PetscErrorCode NNHessianSetStep_Private(Mat H, PetscReal h)
{
  NNHessianCtx *c;

  PetscFunctionBegin;
  PetscCall(MatShellGetContext(H, &c));
  c->h = h;
  PetscFunctionReturn(0);
}

/*@
   NNHessianGetNumProducts - the number of Hessian-vector products a loss Hessian has computed

   Not Collective

   Input Parameter:
.  H - a Hessian from `NNCreateHessian()` or `NNCreateHessianData()`

   Output Parameter:
.  n - products so far (each costs two gradients)

   Level: intermediate

.seealso: `NNCreateHessian()`, `NNComputeHessianEigenvalues()`
@*/
PetscErrorCode NNHessianGetNumProducts(Mat H, PetscInt *n)
{
  NNHessianCtx *c;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(H, MAT_CLASSID, 1);
  PetscAssertPointer(n, 2);
  PetscCall(MatShellGetContext(H, &c));
  *n = c->nmult;
  PetscFunctionReturn(0);
}
