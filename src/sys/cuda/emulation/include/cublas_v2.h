/* The CUDA emulation (cuda_runtime_api.h): the part of cuBLAS PetNN calls, cublasGemmEx() through the host's BLAS. */
#pragma once
#include <cuda_runtime_api.h>

#if defined(__cplusplus)
extern "C" {
#endif

typedef enum {
  CUBLAS_STATUS_SUCCESS         = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE   = 7,
  CUBLAS_STATUS_NOT_SUPPORTED   = 15
} cublasStatus_t;
typedef enum {
  CUBLAS_OP_N = 0,
  CUBLAS_OP_T = 1
} cublasOperation_t;
typedef enum {
  CUDA_R_32F = 0,
  CUDA_R_64F = 1
} cudaDataType;
typedef enum {
  CUBLAS_COMPUTE_32F           = 68,
  CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  CUBLAS_COMPUTE_64F           = 70
} cublasComputeType_t;
typedef enum {
  CUBLAS_DEFAULT_MATH = 0
} cublasMath_t;
typedef enum {
  CUBLAS_GEMM_DEFAULT = -1
} cublasGemmAlgo_t;
typedef struct NNEmuBLAS *cublasHandle_t;

cublasStatus_t cublasCreate(cublasHandle_t *);
cublasStatus_t cublasDestroy(cublasHandle_t);
cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t);
cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t);
const char    *cublasGetStatusName(cublasStatus_t);
const char    *cublasGetStatusString(cublasStatus_t);
cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *, const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);

#if defined(__cplusplus)
}
#endif
