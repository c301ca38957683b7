/* Launchers of PetNN's own CUDA kernels (*.cu files), callable from C. No PETSc here: the kernels' files are compiled by
   nvcc without PETSc's headers; each launcher enqueues its kernel on the given stream and returns the launch's
   cudaError_t, which the C caller turns into a PETSc error (NNCallCUDA(), cudaimpl.h). Arrays hold doubles, or floats
   when single is nonzero. */
#pragma once
#include <stddef.h>
#include <cuda_runtime_api.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* the pointwise activations with device passes (layers/activation/activation_kernels.cu) */
typedef enum {
  NN_CUDA_RELU,
  NN_CUDA_LEAKY_RELU,
  NN_CUDA_TANH,
  NN_CUDA_SIGMOID,
  NN_CUDA_GELU
} NNCUDAActivation;

/* y = f(x) on N entries; slope: the leaky ReLU's negative slope */
cudaError_t NNCUDAActivationForward(NNCUDAActivation, int single, double slope, size_t N, const void *x, void *y, cudaStream_t);
/* dx = f'(x) dy on N entries, f' from x and y */
cudaError_t NNCUDAActivationBackward(NNCUDAActivation, int single, double slope, size_t N, const void *x, const void *y, const void *dy, void *dx, cudaStream_t);
/* x[0..N) = value (src/sys/cuda/cudakernels.cu) */
cudaError_t NNCUDAFill(int single, size_t N, double value, void *x, cudaStream_t);

#if defined(__cplusplus)
}
#endif
