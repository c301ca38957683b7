/*
   Batch normalization over (N,C) inputs, as torch.nn.BatchNorm1d (affine, tracking running stats).

     training:   y = gamma (x - mu_B) / sqrt(var_B + eps) + beta      (biased batch variance var_B)
                 running_mean = (1-momentum) running_mean + momentum mu_B
                 running_var  = (1-momentum) running_var  + momentum var_B m/(m-1)   (unbiased)
                 num_batches_tracked += 1
     evaluation: y = gamma (x - running_mean) / sqrt(running_var + eps) + beta

   Tensors (state_dict order and names of PyTorch): weight [C] (1), bias [C] (0), running_mean [C] (0),
   running_var [C] (1), num_batches_tracked [1] (0).

   The per-channel reductions are written for a layout [n][C][inner] (inner = 1 here) and take an MPI
   communicator over which the partial sums are added (MPI_COMM_NULL: none). The spatial types
   (layers/norm/batchnormspatial.c) run their own kernels over channels-last runs; the tensors,
   options, setters and running statistics of both are layers/norm/batchnormbase.c.

   Single precision (-nn_precision single): the same passes (batchnorm_passes.h, compiled in double and in
   float) on float activations with the float parameter copy. The sums, the statistics and xhat stay double,
   each output is rounded to float once, and the running statistics are the double buffers, updated as in
   double.
*/
#include "batchnorm.h"

typedef struct {
  NNBatchNormBase p;          /* momentum, epsilon, channels (layers/norm/batchnormbase.c) */
  PetscScalar *xhat;          /* normalized input of the last forward pass, capacity nbatch*C */
  PetscScalar *mean, *invstd; /* statistics used by the last forward pass, [C] each */
  PetscScalar *s1, *s2;       /* reduction workspace, [C] each */
  PetscBool    batchstats;    /* the last forward pass normalized with batch statistics (training) */
} NNLayer_BatchNorm;

/* ---------------------------------------------------------------- reusable per-channel reductions */

/* adds partial per-channel sums over the ranks of comm (no-op for MPI_COMM_NULL) */
static PetscErrorCode NNBatchNormAllreduce(MPI_Comm comm, PetscInt C, PetscScalar *a, PetscScalar *b)
{
  PetscFunctionBegin;
  if (comm == MPI_COMM_NULL) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, a, (PetscMPIInt)C, MPIU_SCALAR, MPIU_SUM, comm));
  if (b) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, b, (PetscMPIInt)C, MPIU_SCALAR, MPIU_SUM, comm));
  PetscFunctionReturn(0);
}

/* the sums, the normalization and the two passes in double and in float */
#include <petnn/private/nnrealdouble.h>
#include "batchnorm_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "batchnorm_passes.h"
#include <petnn/private/nnrealundef.h>

/* ---------------------------------------------------------------- the layer */

static PetscErrorCode NNLayerSetUp_BatchNorm1d(NNLayer l)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;
  PetscInt           C;

  PetscFunctionBegin;
  PetscCall(NNLayerCheckInputRank(l, 1));
  C = l->inshape.dim[0];
  PetscCall(NNBatchNormSetUpTensors(l, C));
  PetscCall(PetscMalloc5(l->nbatch * C, &bn->xhat, C, &bn->mean, C, &bn->invstd, C, &bn->s1, C, &bn->s2));
  bn->batchstats = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerReset_BatchNorm1d(NNLayer l)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscFree5(bn->xhat, bn->mean, bn->invstd, bn->s1, bn->s2));
#if defined(PETNN_HAVE_CUDA)
  PetscCall(NNNormDeviceReset(&bn->p.dev));
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerForward_BatchNorm1d(NNLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y)
{
  PetscFunctionBegin;
  PetscCall(NNBatchNormForward(l, n, l->theta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackward_BatchNorm1d(NNLayer l, PetscInt n, const PetscScalar *x PETSC_UNUSED, const PetscScalar *y PETSC_UNUSED, const PetscScalar *dy, PetscScalar *dx)
{
  PetscFunctionBegin;
  PetscCall(NNBatchNormBackward(l, n, l->theta, l->dtheta, dy, dx));
  PetscFunctionReturn(0);
}

/* single precision (-nn_precision single): the float parameter copy and gradient (src/layer/interface/layersingle.c) */
static PetscErrorCode NNLayerForwardSingle_BatchNorm1d(NNLayer l, PetscInt n, const float *x, float *y)
{
  PetscFunctionBegin;
  PetscCall(NNBatchNormForwardSingle(l, n, l->stheta, x, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerBackwardSingle_BatchNorm1d(NNLayer l, PetscInt n, const float *x PETSC_UNUSED, const float *y PETSC_UNUSED, const float *dy, float *dx)
{
  PetscFunctionBegin;
  PetscCall(NNBatchNormBackwardSingle(l, n, l->stheta, l->sdtheta, dy, dx));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNLayerView_BatchNorm1d(NNLayer l, PetscViewer v)
{
  NNLayer_BatchNorm *bn = (NNLayer_BatchNorm *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "momentum %g, epsilon %g\n", (double)bn->p.momentum, (double)bn->p.eps));
  PetscFunctionReturn(0);
}

/*MC
   NNLAYERBATCHNORM1D - "batchnorm1d": batch normalization of 1-d features (torch.nn.BatchNorm1d on (N,C))

   Training mode normalizes with the batch mean and biased variance and updates the running
   statistics (with the unbiased variance); evaluation mode normalizes with the running statistics.

   Options Database Keys:
+  -<prefix>momentum <m> - running-statistics momentum (default 0.1)
-  -<prefix>epsilon <eps> - added to the variance (default 1e-5)

   Tensors: weight [C], bias [C], running_mean [C], running_var [C], num_batches_tracked [1].

   Level: beginner

.seealso: `NNLayerBatchNormSetMomentum()`, `NNLayerBatchNormSetEpsilon()`, `NNSetTraining()`, `NNLayerType`
M*/
PETSC_INTERN PetscErrorCode NNLayerCreate_BatchNorm1d(NNLayer l)
{
  NNLayer_BatchNorm *bn;

  PetscFunctionBegin;
  PetscCall(PetscNew(&bn));
  l->data          = bn;
  l->ops->setup    = NNLayerSetUp_BatchNorm1d;
  l->ops->reset    = NNLayerReset_BatchNorm1d;
  l->ops->forward  = NNLayerForward_BatchNorm1d;
  l->ops->backward = NNLayerBackward_BatchNorm1d;
  l->ops->forwardsingle  = NNLayerForwardSingle_BatchNorm1d;
  l->ops->backwardsingle = NNLayerBackwardSingle_BatchNorm1d;
#if defined(PETNN_HAVE_CUDA) /* -nn_device cuda: layers/norm/norm_cuda.c */
  l->ops->forwarddevice  = NNLayerForwardDevice_BatchNorm;
  l->ops->backwarddevice = NNLayerBackwardDevice_BatchNorm;
#endif
  l->ops->view     = NNLayerView_BatchNorm1d;
  PetscCall(NNBatchNormCreateBase(l));
  PetscFunctionReturn(0);
}
