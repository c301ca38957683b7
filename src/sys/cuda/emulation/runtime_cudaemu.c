/*
   The CUDA emulation's runtime and cuBLAS (headers in include/ beside this file; built only with CMake's
   PETNN_CUDA_EMULATION, never beside real CUDA). One emulated device, "CUDA emulation on the host (no GPU)"; device
   memory is malloc()ed, filled with NaN bytes and kept in a table, so that copies and memsets can check their
   direction: a host array given where a device array is expected (or the reverse) is an error that prints both
   addresses. Every operation is synchronous.
*/
#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint3 blockIdx, threadIdx, blockDim, gridDim;

static struct {
  const char **p;
  size_t      *n;
  size_t       len, cap;
} NNEmuTable;
static cudaError_t NNEmuLast = cudaSuccess;
static NNEmuStats  NNEmuCount;

static void NNEmuPrintStats(void)
{
  const NNEmuStats *c = &NNEmuCount;
  fprintf(stderr, "[CUDA emulation] syncs %lu, copies h2d %lu (%lu bytes) d2h %lu (%lu bytes) d2d %lu, mallocs %lu, frees %lu, host allocs %lu, memsets %lu, launches %lu, gemms %lu\n", c->syncs, c->h2d, c->h2dbytes, c->d2h, c->d2hbytes, c->d2d, c->mallocs, c->frees, c->hostallocs, c->memsets, c->launches, c->gemms);
}

void NNEmuGetStats(NNEmuStats *s)
{
  static int registered = 0;
  if (!registered) {
    const char *e = getenv("PETNN_CUDA_EMULATION_STATS");
    registered    = 1;
    if (e && e[0] && e[0] != '0') atexit(NNEmuPrintStats);
  }
  if (s) *s = NNEmuCount;
}

void NNEmuCountLaunch(void)
{
  NNEmuCount.launches++;
}

static cudaError_t NNEmuFail(cudaError_t e, const char *what, const void *a, const void *b)
{
  fprintf(stderr, "[CUDA emulation] %s (%p, %p)\n", what, a, b);
  NNEmuLast = e;
  return e;
}

int NNEmuIsDevice(const void *p, size_t bytes)
{
  const char *c = (const char *)p;
  for (size_t i = 0; i < NNEmuTable.len; i++)
    if (c >= NNEmuTable.p[i] && c + bytes <= NNEmuTable.p[i] + NNEmuTable.n[i]) return 1;
  return 0;
}

/* whether p points into (not necessarily at the start of) a device allocation */
static int NNEmuInDevice(const void *p)
{
  const char *c = (const char *)p;
  for (size_t i = 0; i < NNEmuTable.len; i++)
    if (c >= NNEmuTable.p[i] && c < NNEmuTable.p[i] + NNEmuTable.n[i]) return 1;
  return 0;
}

cudaError_t cudaGetDeviceCount(int *n)
{
  NNEmuGetStats(NULL); /* the printer at exit, when asked for */
  *n = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int d)
{
  return d == 0 ? cudaSuccess : NNEmuFail(cudaErrorInvalidValue, "cudaSetDevice(): the emulation has device 0 only", NULL, NULL);
}

cudaError_t cudaGetDevice(int *d)
{
  *d = 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int d)
{
  (void)d;
  memset(prop, 0, sizeof(*prop));
  snprintf(prop->name, sizeof(prop->name), "CUDA emulation on the host (no GPU)");
  prop->major               = 9;
  prop->minor               = 0;
  prop->multiProcessorCount = 1;
  prop->totalGlobalMem      = (size_t)1 << 30;
  return cudaSuccess;
}

const char *cudaGetErrorName(cudaError_t e)
{
  switch (e) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorNoDevice:
    return "cudaErrorNoDevice";
  case cudaErrorInvalidDevicePointer:
    return "cudaErrorInvalidDevicePointer";
  case cudaErrorNotReady:
    return "cudaErrorNotReady";
  }
  return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
  return e == cudaErrorInvalidDevicePointer ? "a host array where a device array belongs, or the reverse (CUDA emulation; the addresses are on stderr)" : cudaGetErrorName(e);
}

cudaError_t cudaGetLastError(void)
{
  cudaError_t e = NNEmuLast;
  NNEmuLast     = cudaSuccess;
  return e;
}

cudaError_t cudaMalloc(void **p, size_t bytes)
{
  *p = NULL;
  if (NNEmuTable.len == NNEmuTable.cap) {
    size_t       cap = NNEmuTable.cap ? 2 * NNEmuTable.cap : 64;
    const char **np  = (const char **)realloc(NNEmuTable.p, cap * sizeof(*np));
    if (!np) return NNEmuFail(cudaErrorMemoryAllocation, "cudaMalloc(): no memory for the table", NULL, NULL);
    NNEmuTable.p = np;
    size_t *nn   = (size_t *)realloc(NNEmuTable.n, cap * sizeof(*nn));
    if (!nn) return NNEmuFail(cudaErrorMemoryAllocation, "cudaMalloc(): no memory for the table", NULL, NULL);
    NNEmuTable.n   = nn;
    NNEmuTable.cap = cap;
  }
  *p = malloc(bytes ? bytes : 1);
  if (!*p) return NNEmuFail(cudaErrorMemoryAllocation, "cudaMalloc(): out of host memory", NULL, NULL);
  NNEmuCount.mallocs++;
  memset(*p, 0xff, bytes); /* NaN in double and float: nothing may read what it has not written */
  NNEmuTable.p[NNEmuTable.len]   = (const char *)*p;
  NNEmuTable.n[NNEmuTable.len++] = bytes;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p)
{
  if (!p) return cudaSuccess;
  for (size_t i = 0; i < NNEmuTable.len; i++)
    if (NNEmuTable.p[i] == (const char *)p) {
      NNEmuTable.p[i] = NNEmuTable.p[NNEmuTable.len - 1];
      NNEmuTable.n[i] = NNEmuTable.n[NNEmuTable.len - 1];
      NNEmuTable.len--;
      NNEmuCount.frees++;
      free(p);
      return cudaSuccess;
    }
  return NNEmuFail(cudaErrorInvalidDevicePointer, "cudaFree() of an address that cudaMalloc() did not return", p, NULL);
}

cudaError_t cudaMallocHost(void **p, size_t bytes)
{
  NNEmuCount.hostallocs++;
  *p = malloc(bytes ? bytes : 1);
  return *p ? cudaSuccess : NNEmuFail(cudaErrorMemoryAllocation, "cudaMallocHost(): out of host memory", NULL, NULL);
}

cudaError_t cudaFreeHost(void *p)
{
  if (p && NNEmuInDevice(p)) return NNEmuFail(cudaErrorInvalidDevicePointer, "cudaFreeHost() of device memory", p, NULL);
  free(p);
  return cudaSuccess;
}

/* a copy, checked against the table */
static cudaError_t NNEmuCopy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
  int dd = NNEmuIsDevice(dst, bytes), sd = NNEmuIsDevice(src, bytes);
  int ok = 1;

  if (!bytes) return cudaSuccess;
  switch (kind) {
  case cudaMemcpyHostToDevice:
    ok = dd && !NNEmuInDevice(src);
    break;
  case cudaMemcpyDeviceToHost:
    ok = sd && !NNEmuInDevice(dst);
    break;
  case cudaMemcpyDeviceToDevice:
    ok = dd && sd;
    break;
  case cudaMemcpyHostToHost:
    ok = !NNEmuInDevice(dst) && !NNEmuInDevice(src);
    break;
  case cudaMemcpyDefault:
    ok = (dd || !NNEmuInDevice(dst)) && (sd || !NNEmuInDevice(src));
    break;
  }
  if (!ok) {
    static const char *kinds[] = {"host to host", "host to device", "device to host", "device to device", "default"};
    char               what[160];
    snprintf(what, sizeof(what), "cudaMemcpy of %zu bytes %s: the destination or the source (below) is not where the kind says, or overruns its allocation", bytes, kinds[kind]);
    return NNEmuFail(cudaErrorInvalidDevicePointer, what, dst, src);
  }
  memmove(dst, src, bytes);
  return cudaSuccess;
}

static void NNEmuCountCopy(size_t bytes, cudaMemcpyKind kind)
{
  if (kind == cudaMemcpyHostToDevice) {
    NNEmuCount.h2d++;
    NNEmuCount.h2dbytes += bytes;
  } else if (kind == cudaMemcpyDeviceToHost) {
    NNEmuCount.d2h++;
    NNEmuCount.d2hbytes += bytes;
  } else if (kind == cudaMemcpyDeviceToDevice) NNEmuCount.d2d++;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind)
{
  NNEmuCount.syncs++;
  NNEmuCountCopy(bytes, kind);
  return NNEmuCopy(dst, src, bytes, kind);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
  (void)s;
  NNEmuCountCopy(bytes, kind);
  return NNEmuCopy(dst, src, bytes, kind);
}

/* height rows of width bytes each, dpitch and spitch bytes apart: a cudaMemcpy() per row, checked as it is */
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t s)
{
  (void)s;
  if (width > dpitch || width > spitch) return NNEmuFail(cudaErrorInvalidValue, "cudaMemcpy2DAsync() with a width beyond a pitch", dst, src);
  NNEmuCountCopy(width * height, kind);
  for (size_t r = 0; r < height; r++) {
    cudaError_t err = NNEmuCopy((char *)dst + r * dpitch, (const char *)src + r * spitch, width, kind);
    if (err != cudaSuccess) return err;
  }
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *p, int v, size_t bytes, cudaStream_t s)
{
  (void)s;
  if (!bytes) return cudaSuccess;
  NNEmuCount.memsets++;
  if (!NNEmuIsDevice(p, bytes)) return NNEmuFail(cudaErrorInvalidDevicePointer, "cudaMemsetAsync() of memory that is not (all) device memory", p, NULL);
  memset(p, v, bytes);
  return cudaSuccess;
}

struct NNEmuStream {
  int dummy;
};
struct NNEmuEvent {
  int dummy;
};

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
  (void)flags;
  *s = (cudaStream_t)calloc(1, sizeof(struct NNEmuStream));
  return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
  free(s);
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
  (void)s;
  NNEmuCount.syncs++;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
  NNEmuCount.syncs++;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *e)
{
  *e = (cudaEvent_t)calloc(1, sizeof(struct NNEmuEvent));
  return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags)
{
  (void)flags;
  return cudaEventCreate(e);
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
  free(e);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
  (void)e, (void)s;
  return cudaSuccess;
}

/* the emulation runs every operation when it is enqueued: an event is complete once recorded */
cudaError_t cudaEventQuery(cudaEvent_t e)
{
  (void)e;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
  (void)e;
  NNEmuCount.syncs++;
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
  (void)a, (void)b;
  *ms = 0;
  return cudaSuccess;
}

/* ---------------------------------------------------------------- cuBLAS */
struct NNEmuBLAS {
  int dummy;
};

cublasStatus_t cublasCreate(cublasHandle_t *h)
{
  *h = (cublasHandle_t)calloc(1, sizeof(struct NNEmuBLAS));
  return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasDestroy(cublasHandle_t h)
{
  free(h);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
  (void)h, (void)s;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m)
{
  (void)h, (void)m;
  return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t s)
{
  switch (s) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

const char *cublasGetStatusString(cublasStatus_t s)
{
  return s == CUBLAS_STATUS_INVALID_VALUE ? "an invalid dimension, leading dimension or array (CUDA emulation; details on stderr)" : cublasGetStatusName(s);
}

/* whether the column-major r x c matrix with leading dimension ld at p lies in device memory */
static int NNEmuMatrixOnDevice(const void *p, int r, int c, int ld, size_t es)
{
  if (!r || !c) return 1;
  return NNEmuIsDevice(p, ((size_t)ld * (c - 1) + r) * es);
}

/* C = alpha op(A) op(B) + beta C, column-major; with beta = 0, C is not read (as cuBLAS) */
#define NN_EMU_GEMM(T) \
  do { \
    const T *a = (const T *)A, *b = (const T *)B; \
    T       *c = (T *)C, al = *(const T *)alpha, be = *(const T *)beta; \
    for (int j = 0; j < n; j++) \
      for (int i = 0; i < m; i++) { \
        T s = 0; \
        for (int l = 0; l < k; l++) s += (ta == CUBLAS_OP_N ? a[i + (size_t)l * lda] : a[l + (size_t)i * lda]) * (tb == CUBLAS_OP_N ? b[l + (size_t)j * ldb] : b[j + (size_t)l * ldb]); \
        c[i + (size_t)j * ldc] = be == 0 ? al * s : al * s + be * c[i + (size_t)j * ldc]; \
      } \
  } while (0)

cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha, const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc, cublasComputeType_t comp, cublasGemmAlgo_t algo)
{
  const int    dbl = at == CUDA_R_64F;
  const size_t es  = dbl ? sizeof(double) : sizeof(float);
  const int    ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m, br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;

  (void)algo;
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (at != bt || at != ct || (dbl ? comp != CUBLAS_COMPUTE_64F : comp == CUBLAS_COMPUTE_64F)) {
    fprintf(stderr, "[CUDA emulation] cublasGemmEx(): data types %d, %d, %d with compute type %d are not a combination PetNN uses\n", (int)at, (int)bt, (int)ct, (int)comp);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (m < 0 || n < 0 || k < 0 || lda < (ar > 1 ? ar : 1) || ldb < (br > 1 ? br : 1) || ldc < (m > 1 ? m : 1)) {
    fprintf(stderr, "[CUDA emulation] cublasGemmEx(): m %d n %d k %d with lda %d ldb %d ldc %d (op(A) %s, op(B) %s): a leading dimension is below its matrix's rows\n", m, n, k, lda, ldb, ldc, ta == CUBLAS_OP_N ? "N" : "T", tb == CUBLAS_OP_N ? "N" : "T");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (!NNEmuMatrixOnDevice(A, ar, k ? ac : 0, lda, es) || !NNEmuMatrixOnDevice(B, br, k ? bc : 0, ldb, es) || !NNEmuMatrixOnDevice(C, m, n, ldc, es)) {
    fprintf(stderr, "[CUDA emulation] cublasGemmEx(): m %d n %d k %d: A %p, B %p or C %p is not (all) device memory\n", m, n, k, A, B, C);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  NNEmuCount.gemms++;
  if (dbl) NN_EMU_GEMM(double);
  else NN_EMU_GEMM(float);
  return CUBLAS_STATUS_SUCCESS;
}
