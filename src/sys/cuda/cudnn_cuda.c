/* The package's cuDNN handle (PETNN_HAVE_CUDNN): made on the first device convolution, bound to the package's stream,
   destroyed by PetscFinalize(). Made lazily so that networks without convolutions never load cuDNN's kernels. */
#if defined(PETNN_HAVE_CUDNN)
  #include <petnn/private/cudnnimpl.h>

static cudnnHandle_t NNDNN = NULL;

static PetscErrorCode NNCUDADNNFinalize(void)
{
  PetscFunctionBegin;
  if (NNDNN) NNCallCUDNN(cudnnDestroy(NNDNN));
  NNDNN = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAGetDNN(cudnnHandle_t *h)
{
  cudaStream_t s;

  PetscFunctionBegin;
  if (!NNDNN) {
    PetscCall(NNCUDAGetStream(&s));
    NNCallCUDNN(cudnnCreate(&NNDNN));
    NNCallCUDNN(cudnnSetStream(NNDNN, s));
    PetscCall(PetscRegisterFinalize(NNCUDADNNFinalize));
  }
  *h = NNDNN;
  PetscFunctionReturn(0);
}
#endif
