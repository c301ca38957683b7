/*
   The device passes of conv2d and conv3d (-nn_device cuda): the algorithm of -<layer>device_algorithm, im2col + cuBLAS
   GEMMs (layers/conv/conv_gemm_cuda.c, the default, every build, so also the CUDA emulation) or cuDNN
   (layers/conv/conv_cuda.c, conv2d in a PetNN built with cuDNN). cuDNN's passes run on one rank, the GEMM passes also on
   spatial activations split over ranks (NNDeviceSetUp() checks l->dev.split, which the output Vec's creation sets for
   gemm); periodic padding and partitioned weights (-<layer>_partition filters|channels) run on the GEMM path only.
*/
#include "conv.h"
#include <petnn/private/cudaimpl.h>

/* the layer's device algorithm, refused where it cannot run */
static PetscErrorCode NNConvDeviceAlgorithmCheck(NNLayer l, NNConvDeviceAlgorithm *alg)
{
  NNLayer_Conv *d   = (NNLayer_Conv *)l->data;
  const char   *pre = ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";

  PetscFunctionBegin;
  *alg = NNConvGetDeviceAlgorithm(l);
#if !defined(PETNN_HAVE_CUDNN)
  PetscCheck(*alg != NN_CONV_DEVICE_CUDNN, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s): -%sdevice_algorithm cudnn needs a PetNN built with cuDNN; valid here: gemm", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre);
#endif
  PetscCheck(*alg != NN_CONV_DEVICE_CUDNN || l->part.type == NN_PARTITION_REPLICATE, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s): -%sdevice_algorithm cudnn takes whole weights, not -%spartition %s; use -%sdevice_algorithm gemm (the default)",
             ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, pre, NNLayerPartitions[l->part.type], pre);
  PetscCheck(*alg != NN_CONV_DEVICE_CUDNN || d->nd == 2, PetscObjectComm((PetscObject)l), PETSC_ERR_SUP, "Layer %s (%s): -%sdevice_algorithm cudnn is for conv2d only; use -%sdevice_algorithm gemm", ((PetscObject)l)->name, ((PetscObject)l)->type_name, pre, pre);
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerForwardDevice_Conv(NNLayer l, PetscInt n, const void *x, void *y)
{
  NNConvDeviceAlgorithm alg;

  PetscFunctionBegin;
  PetscCall(NNConvDeviceAlgorithmCheck(l, &alg));
#if defined(PETNN_HAVE_CUDNN)
  if (alg == NN_CONV_DEVICE_CUDNN) {
    PetscCall(NNConvForwardCUDNN(l, n, x, y));
    PetscFunctionReturn(0);
  }
#endif
  PetscCall(NNConvForwardGemm(l, n, x, y));
  PetscFunctionReturn(0);
}

PetscErrorCode NNLayerBackwardDevice_Conv(NNLayer l, PetscInt n, const void *x, const void *y PETSC_UNUSED, const void *dy, void *dx)
{
  NNConvDeviceAlgorithm alg;

  PetscFunctionBegin;
  PetscCall(NNConvDeviceAlgorithmCheck(l, &alg));
#if defined(PETNN_HAVE_CUDNN)
  if (alg == NN_CONV_DEVICE_CUDNN) {
    PetscCall(NNConvBackwardCUDNN(l, n, x, dy, dx));
    PetscFunctionReturn(0);
  }
#endif
  PetscCall(NNConvBackwardGemm(l, n, x, dy, dx));
  PetscFunctionReturn(0);
}
