/*
   The loss on the device (-nn_device cuda): mse, l1, huber, bce_with_logits and cross_entropy on a sequential output
   are evaluated by the kernels of loss_kernels.cu where the output is, in double, so the backward pass starts from
   the device's dL/dy: no loss gradient goes up. The targets go up instead (class indices: one number a sample), and
   only the loss comes down. The output itself is still downloaded by the forward pass (NNLossGradient()'s callers
   read it: the training accuracy); its copy is enqueued before the loss, and the loss's one wait completes both.
   Other loss types (rel_l2, registered ones) and spatial outputs are evaluated on the host. Targets are checked on
   the host as the host's evaluation checks them, with the same errors.
*/
#include <petnn/private/cudaimpl.h>

/* the kernel of the network's loss, NN_CUDA_LOSS_NONE when its type has none or the output is spatial (host) */
static PetscErrorCode NNDeviceLossKind(NN net, NNCUDALoss *kind)
{
  static const struct {
    const char *name;
    NNCUDALoss  kind;
  } kinds[] = {
    {NNLOSSMSE,           NN_CUDA_LOSS_MSE            },
    {NNLOSSL1,            NN_CUDA_LOSS_L1             },
    {NNLOSSHUBER,         NN_CUDA_LOSS_HUBER          },
    {NNLOSSBCEWITHLOGITS, NN_CUDA_LOSS_BCE_WITH_LOGITS},
    {NNLOSSCROSSENTROPY,  NN_CUDA_LOSS_CROSS_ENTROPY  },
  };
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;
  PetscBool     match;

  PetscFunctionBegin;
  *kind = NN_CUDA_LOSS_NONE;
  if (!c || c->spatial[net->nlayers]) PetscFunctionReturn(0);
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(kinds); i++) {
    PetscCall(PetscStrcmp(net->loss, kinds[i].name, &match));
    if (match) *kind = kinds[i].kind;
  }
  PetscFunctionReturn(0);
}

/* the targets the host's evaluation would refuse: class indices out of range, bce probabilities outside [0,1] */
static PetscErrorCode NNDeviceLossCheckTargets(NN net, NNCUDALoss kind, PetscInt n, PetscInt k, const PetscScalar *t)
{
  PetscFunctionBegin;
  if (kind == NN_CUDA_LOSS_CROSS_ENTROPY) PetscCall(NNLossCheckTargets(net->loss, n, k, t));
  if (kind == NN_CUDA_LOSS_BCE_WITH_LOGITS)
    for (PetscInt i = 0; i < n * k; i++)
      PetscCheck(t[i] >= 0 && t[i] <= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Loss %s: target %g (sample %" PetscInt_FMT ") is not in [0,1]; its targets are probabilities (use -nn_loss %s for class indices)", NNLOSSBCEWITHLOGITS, (double)t[i], i / k, NNLOSSCROSSENTROPY);
  PetscFunctionReturn(0);
}

/* whether NNDeviceLossEvaluate_CUDA() evaluates the network's loss on the device (after NNSetUp()) */
PetscErrorCode NNDeviceLossIsOnDevice_CUDA(NN net, PetscBool *flg)
{
  NNCUDALoss kind;

  PetscFunctionBegin;
  PetscCall(NNDeviceLossKind(net, &kind));
  *flg = (PetscBool)(kind != NN_CUDA_LOSS_NONE);
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceLossEvaluate_CUDA(NN net, PetscInt n, Vec t, PetscReal *loss, PetscBool *done)
{
  NNDeviceCUDA      *c = (NNDeviceCUDA *)net->dev.cuda;
  PetscInt           L = net->nlayers, k, nt;
  NNCUDALoss         kind;
  const PetscScalar *ta;
  cudaStream_t       s;
  double             value;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  PetscCall(NNDeviceLossKind(net, &kind));
  if (kind == NN_CUDA_LOSS_NONE) PetscFunctionReturn(0);
  k  = c->len[L] / net->nbatch;
  nt = kind == NN_CUDA_LOSS_CROSS_ENTROPY ? n : n * k;
  PetscCall(NNCUDAGetStream(&s));
  PetscCall(VecGetArrayRead(t, &ta));
  PetscCall(NNDeviceLossCheckTargets(net, kind, n, k, ta));
  if (nt) NNCallCUDA(cudaMemcpyAsync(c->target, ta, nt * sizeof(double), cudaMemcpyHostToDevice, s)); /* pageable: returns once staged */
  PetscCall(VecRestoreArrayRead(t, &ta));
  NNCallCUDA(NNCUDALossEvaluate(kind, c->prec == NN_PRECISION_SINGLE, net->lossops.param[0], (size_t)n, (size_t)k, c->act[L], c->target, c->dact[L], c->lossw, s));
  NNCallCUDA(cudaMemcpyAsync(&value, c->lossw + NNCUDALossWorkSize() - 1, sizeof(double), cudaMemcpyDeviceToHost, s));
  NNCallCUDA(cudaStreamSynchronize(s));
  c->ywaited = PETSC_TRUE; /* the output's download, enqueued before on the stream, is complete too */
  PetscCall(PetscLogFlops(5.0 * n * k));
  *loss      = value;
  c->dyready = PETSC_TRUE;
  *done      = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode NNDeviceScaleOutputGradient_CUDA(NN net, PetscInt n, PetscReal w)
{
  NNDeviceCUDA *c = (NNDeviceCUDA *)net->dev.cuda;
  PetscInt      L = net->nlayers;
  cudaStream_t  s;

  PetscFunctionBegin;
  PetscCheck(c && c->dyready, PetscObjectComm((PetscObject)net), PETSC_ERR_ORDER, "No loss gradient on the device to scale: the loss was evaluated on the host");
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAScale(c->prec == NN_PRECISION_SINGLE, (size_t)(n * (c->len[L] / net->nbatch)), w, c->dact[L], s));
  PetscFunctionReturn(0);
}
