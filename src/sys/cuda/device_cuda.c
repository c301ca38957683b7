/*
   The package's CUDA state (-nn_device cuda): the GPU each process uses, one stream and one cuBLAS handle on it, a
   vector of ones per precision (bias GEMMs), and the cuBLAS GEMM every device pass goes through. Made on first use
   (NNSetDevice()), freed by PetscFinalize(). Built only with PETNN_HAVE_CUDA (CMake's PETNN_WITH_CUDA).

   One process, one GPU: a rank takes GPU (its rank on the node) modulo (the GPUs it sees), so ranks of a node spread
   over its GPUs in order, and several ranks share a GPU when there are more ranks than GPUs.
*/
#include <petnn/private/cudaimpl.h>

static struct {
  PetscBool      initialized;
  int            device;
  cudaStream_t   stream;
  cublasHandle_t blas;
  void          *ones[2]; /* [NNPrecision] */
  PetscInt       nones[2];
} NNCUDA;

PetscErrorCode NNCUDAGetDeviceCount(PetscInt *count, size_t len, char why[])
{
  int         n   = 0;
  cudaError_t err = cudaGetDeviceCount(&n);

  PetscFunctionBegin;
  *count = 0;
  if (why && len) why[0] = 0;
  if (err != cudaSuccess) {
    if (why) PetscCall(PetscSNPrintf(why, len, "no usable CUDA device: cudaGetDeviceCount() returned %s (%s)", cudaGetErrorName(err), cudaGetErrorString(err)));
    (void)cudaGetLastError(); /* clear the sticky-free error, so that later calls start clean */
    PetscFunctionReturn(0);
  }
  if (!n && why) PetscCall(PetscSNPrintf(why, len, "no CUDA device: cudaGetDeviceCount() found none"));
  *count = n;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNCUDAFinalize(void)
{
  PetscFunctionBegin;
  if (!NNCUDA.initialized) PetscFunctionReturn(0);
  for (int p = 0; p < 2; p++) PetscCall(NNCUDAFree(&NNCUDA.ones[p]));
  NNCallCUBLAS(cublasDestroy(NNCUDA.blas));
  NNCallCUDA(cudaStreamDestroy(NNCUDA.stream));
  PetscCall(PetscMemzero(&NNCUDA, sizeof(NNCUDA)));
  PetscFunctionReturn(0);
}

/*
   NNCUDAInitialize - selects this process's GPU and makes the stream and the cuBLAS handle, once; collective on comm
   the first time (the ranks of a node number themselves), then a no-op. Errors when no GPU can be used.
*/
PetscErrorCode NNCUDAInitialize(MPI_Comm comm)
{
  PetscInt    count;
  char        why[256];
  MPI_Comm    node;
  PetscMPIInt rank;

  PetscFunctionBegin;
  if (NNCUDA.initialized) PetscFunctionReturn(0);
  PetscCall(NNCUDAGetDeviceCount(&count, sizeof(why), why));
  PetscCheck(count > 0, PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "-nn_device cuda: %s; valid here: cpu", why);
  PetscCallMPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  PetscCallMPI(MPI_Comm_rank(node, &rank));
  PetscCallMPI(MPI_Comm_free(&node));
  NNCUDA.device = (int)(rank % count);
  NNCallCUDA(cudaSetDevice(NNCUDA.device));
  NNCallCUDA(cudaStreamCreateWithFlags(&NNCUDA.stream, cudaStreamNonBlocking));
  NNCallCUBLAS(cublasCreate(&NNCUDA.blas));
  NNCallCUBLAS(cublasSetStream(NNCUDA.blas, NNCUDA.stream));
  /* no reduced-precision math unless a GEMM asks for it (TF32 only with -nn_cuda_tf32, through its compute type) */
  NNCallCUBLAS(cublasSetMathMode(NNCUDA.blas, CUBLAS_DEFAULT_MATH));
  NNCUDA.initialized = PETSC_TRUE;
  PetscCall(PetscRegisterFinalize(NNCUDAFinalize));
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAGetStream(cudaStream_t *s)
{
  PetscFunctionBegin;
  PetscCheck(NNCUDA.initialized, PETSC_COMM_SELF, PETSC_ERR_ORDER, "CUDA is not initialized: call NNSetDevice(net, NN_DEVICE_CUDA) first");
  *s = NNCUDA.stream;
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAGetBLAS(cublasHandle_t *h)
{
  PetscFunctionBegin;
  PetscCheck(NNCUDA.initialized, PETSC_COMM_SELF, PETSC_ERR_ORDER, "CUDA is not initialized: call NNSetDevice(net, NN_DEVICE_CUDA) first");
  *h = NNCUDA.blas;
  PetscFunctionReturn(0);
}

/* "NVIDIA H200 (device 0, sm_90, 139.8 GiB)" */
PetscErrorCode NNCUDAGetDeviceName(size_t len, char name[])
{
  struct cudaDeviceProp prop;

  PetscFunctionBegin;
  PetscCheck(NNCUDA.initialized, PETSC_COMM_SELF, PETSC_ERR_ORDER, "CUDA is not initialized: call NNSetDevice(net, NN_DEVICE_CUDA) first");
  NNCallCUDA(cudaGetDeviceProperties(&prop, NNCUDA.device));
  PetscCall(PetscSNPrintf(name, len, "%s, device %d, sm_%d%d, %.1f GiB", prop.name, NNCUDA.device, prop.major, prop.minor, prop.totalGlobalMem / 1073741824.0));
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAMalloc(size_t bytes, void **p)
{
  cudaError_t err;

  PetscFunctionBegin;
  *p = NULL;
  if (!bytes) PetscFunctionReturn(0);
  err = cudaMalloc(p, bytes);
  PetscCheck(err == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMalloc() of %.4g MB failed: %s (%s)", bytes / 1e6, cudaGetErrorName(err), cudaGetErrorString(err));
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAFree(void **p)
{
  PetscFunctionBegin;
  if (*p) NNCallCUDA(cudaFree(*p));
  *p = NULL;
  PetscFunctionReturn(0);
}

/* grow-only page-locked stages, one per use (NNCUDAStage), kept until PetscFinalize() */
static void  *NNCUDAStages[NN_CUDA_STAGE_COUNT];
static size_t NNCUDAStageBytes[NN_CUDA_STAGE_COUNT];

static PetscErrorCode NNCUDAStagesFree(void)
{
  PetscFunctionBegin;
  for (int i = 0; i < NN_CUDA_STAGE_COUNT; i++) {
    PetscCall(NNCUDAFreeHost(&NNCUDAStages[i]));
    NNCUDAStageBytes[i] = 0;
  }
  PetscFunctionReturn(0);
}

/*
   NNCUDAGetHostStage - a page-locked host buffer of at least bytes for the use which (one buffer per use, grown on
   demand, freed at PetscFinalize()); what names the use in an allocation error. The caller waits for its transfers
   before the next use.
*/
PetscErrorCode NNCUDAGetHostStage(NNCUDAStage which, size_t bytes, const char what[], void **p)
{
  static PetscBool registered = PETSC_FALSE;

  PetscFunctionBegin;
  if (NNCUDAStageBytes[which] < bytes) {
    if (!registered) PetscCall(PetscRegisterFinalize(NNCUDAStagesFree));
    registered = PETSC_TRUE;
    PetscCall(NNCUDAFreeHost(&NNCUDAStages[which]));
    PetscCall(NNCUDAMallocHost(bytes, what, &NNCUDAStages[which]));
    NNCUDAStageBytes[which] = bytes;
  }
  *p = NNCUDAStages[which];
  PetscFunctionReturn(0);
}

/* page-locked host memory (staging of transfers); what names the use in the error */
PetscErrorCode NNCUDAMallocHost(size_t bytes, const char what[], void **p)
{
  cudaError_t err;

  PetscFunctionBegin;
  *p = NULL;
  if (!bytes) PetscFunctionReturn(0);
  err = cudaMallocHost(p, bytes);
  PetscCheck(err == cudaSuccess, PETSC_COMM_SELF, PETSC_ERR_MEM, "cudaMallocHost() of %.4g MB (%s) failed: %s (%s)", bytes / 1e6, what, cudaGetErrorName(err), cudaGetErrorString(err));
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAFreeHost(void **p)
{
  PetscFunctionBegin;
  if (*p) NNCallCUDA(cudaFreeHost(*p));
  *p = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode NNCUDAGetOnes(NNPrecision prec, PetscInt n, const void **ones)
{
  const int p = prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  if (n > NNCUDA.nones[p]) {
    PetscCall(NNCUDAFree(&NNCUDA.ones[p]));
    PetscCall(NNCUDAMalloc((size_t)n * (p ? sizeof(float) : sizeof(double)), &NNCUDA.ones[p]));
    NNCallCUDA(NNCUDAFill(p, (size_t)n, 1.0, NNCUDA.ones[p], NNCUDA.stream));
    NNCUDA.nones[p] = n;
  }
  *ones = NNCUDA.ones[p];
  PetscFunctionReturn(0);
}

/*
   NNCUDAGemm - C = alpha op(A) op(B) + beta C with column-major m x n C, k the inner dimension, through cublasGemmEx():
   doubles with CUBLAS_COMPUTE_64F, or floats with CUBLAS_COMPUTE_32F (CUBLAS_COMPUTE_32F_FAST_TF32 when tf32)
*/
PetscErrorCode NNCUDAGemm(NNPrecision prec, PetscBool tf32, cublasOperation_t ta, cublasOperation_t tb, PetscInt m, PetscInt n, PetscInt k, PetscReal alpha, const void *A, PetscInt lda, const void *B, PetscInt ldb, PetscReal beta, void *C, PetscInt ldc)
{
  PetscBLASInt M, N, K, LDA, LDB, LDC;
  const float  fa = (float)alpha, fb = (float)beta;
  const double da = alpha, db = beta;
  const int    single = prec == NN_PRECISION_SINGLE;

  PetscFunctionBegin;
  if (!m || !n) PetscFunctionReturn(0);
  PetscCall(PetscBLASIntCast(m, &M));
  PetscCall(PetscBLASIntCast(n, &N));
  PetscCall(PetscBLASIntCast(k, &K));
  PetscCall(PetscBLASIntCast(lda, &LDA));
  PetscCall(PetscBLASIntCast(ldb, &LDB));
  PetscCall(PetscBLASIntCast(ldc, &LDC));
  NNCallCUBLAS(cublasGemmEx(NNCUDA.blas, ta, tb, M, N, K, single ? (const void *)&fa : (const void *)&da, A, single ? CUDA_R_32F : CUDA_R_64F, LDA, B, single ? CUDA_R_32F : CUDA_R_64F, LDB, single ? (const void *)&fb : (const void *)&db, C, single ? CUDA_R_32F : CUDA_R_64F, LDC,
                            single ? (tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) : CUBLAS_COMPUTE_64F, CUBLAS_GEMM_DEFAULT));
  PetscCall(PetscLogFlops(2.0 * m * n * k));
  PetscFunctionReturn(0);
}
