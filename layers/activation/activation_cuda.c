/* Device passes of the pointwise activations (-nn_device cuda): relu, leaky_relu, tanh, sigmoid and gelu through the
   kernels of activation_kernels.cu on n * l->localsize entries, in the pass's precision. The kink masks of relu and
   leaky_relu (loss-Hessian products, src/spectral/hessian.c) are a CPU feature: that code refuses a network on a device. */
#include <petnn/private/cudaimpl.h>

static PetscErrorCode NNActivationForwardDevice(NNLayer l, NNCUDAActivation a, PetscReal slope, PetscInt n, const void *x, void *y)
{
  cudaStream_t s;
  size_t       N = (size_t)n * (size_t)l->localsize;

  PetscFunctionBegin;
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAActivationForward(a, l->dev.prec == NN_PRECISION_SINGLE, slope, N, x, y, s));
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNActivationBackwardDevice(NNLayer l, NNCUDAActivation a, PetscReal slope, PetscInt n, const void *x, const void *y, const void *dy, void *dx)
{
  cudaStream_t s;
  size_t       N = (size_t)n * (size_t)l->localsize;

  PetscFunctionBegin;
  if (!dx) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetStream(&s));
  NNCallCUDA(NNCUDAActivationBackward(a, l->dev.prec == NN_PRECISION_SINGLE, slope, N, x, y, dy, dx, s));
  PetscCall(PetscLogFlops((PetscLogDouble)N));
  PetscFunctionReturn(0);
}

#define NN_ACTIVATION_DEVICE(Name, kind, slope) \
  PetscErrorCode NNLayerForwardDevice_##Name(NNLayer l, PetscInt n, const void *x, void *y) \
  { \
    PetscReal s = 0; \
    PetscFunctionBegin; \
    PetscCall(slope); \
    PetscCall(NNActivationForwardDevice(l, kind, s, n, x, y)); \
    PetscFunctionReturn(0); \
  } \
  PetscErrorCode NNLayerBackwardDevice_##Name(NNLayer l, PetscInt n, const void *x, const void *y, const void *dy, void *dx) \
  { \
    PetscReal s = 0; \
    PetscFunctionBegin; \
    PetscCall(slope); \
    PetscCall(NNActivationBackwardDevice(l, kind, s, n, x, y, dy, dx)); \
    PetscFunctionReturn(0); \
  }

NN_ACTIVATION_DEVICE(ReLU, NN_CUDA_RELU, 0)
NN_ACTIVATION_DEVICE(LeakyReLU, NN_CUDA_LEAKY_RELU, NNLayerLeakyReLUGetSlope(l, &s))
NN_ACTIVATION_DEVICE(Tanh, NN_CUDA_TANH, 0)
NN_ACTIVATION_DEVICE(Sigmoid, NN_CUDA_SIGMOID, 0)
NN_ACTIVATION_DEVICE(GELU, NN_CUDA_GELU, 0)
