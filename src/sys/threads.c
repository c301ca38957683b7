/*
   PetNN's own threads and OpenBLAS's. The convolutions split a pass over threads of their own (layers/conv/conv_run.c),
   each calling single-threaded BLAS. OpenBLAS's worker threads spin (sched_yield) for a while after every threaded
   call (2^28 cycles by default, OPENBLAS_THREAD_TIMEOUT); with PetNN's threads on the same cores that spinning took a
   third of a single-precision ODE-Net step (1.85 s against 1.33 s an epoch here). So the single-precision passes run
   with OpenBLAS at one thread (NNThreadsBegin/End around them) and split their large GEMMs over threads themselves
   (NNGemmSingle), with the thread count OpenBLAS had: OpenBLAS's workers never wake during the pass.
*/
#include <petnn/private/nnimpl.h>
#include <petnn/private/nngemm.h>
#include <pthread.h>

#define NN_GEMM_MAX_THREADS 64

static int NNThreadsDepth = 0, NNThreadsSaved = 1;

/* OpenBLAS to one thread until the matching NNThreadsEnd() (nested calls count) */
PetscErrorCode NNThreadsBegin(void)
{
  PetscFunctionBegin;
  if (NNThreadsDepth++ == 0) {
    NNThreadsSaved = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNThreadsEnd(void)
{
  PetscFunctionBegin;
  PetscCheck(NNThreadsDepth > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "NNThreadsEnd() without NNThreadsBegin()");
  if (--NNThreadsDepth == 0) openblas_set_num_threads(NNThreadsSaved);
  PetscFunctionReturn(0);
}

/* the threads PetNN's own kernels may use: OpenBLAS's count outside NNThreadsBegin/End, the saved one inside */
PetscInt NNThreadsAvailable(void)
{
  return NNThreadsDepth ? NNThreadsSaved : openblas_get_num_threads();
}

typedef struct {
  enum CBLAS_TRANSPOSE ta, tb;
  blasint              M, N, K, lda, ldb, ldc;
  float                alpha, beta;
  const float         *A, *B;
  float               *C;
} NNGemmTask;

static void *NNGemmTaskRun(void *arg)
{
  NNGemmTask *t = (NNGemmTask *)arg;

  if (t->M > 0 && t->N > 0) cblas_sgemm(CblasRowMajor, t->ta, t->tb, t->M, t->N, t->K, t->alpha, t->A, t->lda, t->B, t->ldb, t->beta, t->C, t->ldc);
  return NULL;
}

/*
   NNGemmLayerSingle - cblas_sgemm for the layers' own (not already threaded) GEMMs: inside NNThreadsBegin/End, C =
   alpha op(A) op(B) + beta C is split over NNThreadsAvailable() threads by rows of C (or by columns when C has fewer
   rows than columns); each part is an independent single-threaded sgemm, so the result does not depend on timing.
   Small products, and calls outside NNThreadsBegin/End (OpenBLAS threads them itself), run as one sgemm.
*/
void NNGemmLayerSingle(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, blasint M, blasint N, blasint K, float alpha, const float *A, blasint lda, const float *B, blasint ldb, float beta, float *C, blasint ldc)
{
  NNGemmTask task[NN_GEMM_MAX_THREADS];
  pthread_t  thr[NN_GEMM_MAX_THREADS];
  PetscInt   T = PetscMin(NNThreadsAvailable(), NN_GEMM_MAX_THREADS), started = 1;
  PetscBool  byrow = (PetscBool)(M >= N);
  int        err   = 0;

  if (order != CblasRowMajor || T <= 1 || (PetscLogDouble)M * N * K < 4e6 || !NNThreadsDepth) { /* small, or OpenBLAS threads it itself */
    cblas_sgemm(order, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  T = PetscMin(T, byrow ? M : N);
  for (PetscInt t = 0; t < T; t++) {
    blasint     total = byrow ? M : N, i0 = (blasint)(total * t / T), i1 = (blasint)(total * (t + 1) / T);
    NNGemmTask *w     = &task[t];
    *w = (NNGemmTask){ta, tb, byrow ? i1 - i0 : M, byrow ? N : i1 - i0, K, lda, ldb, ldc, alpha, beta, A, B, C};
    if (byrow) { /* rows i0..i1 of op(A) and of C */
      w->A = ta == CblasNoTrans ? A + i0 * lda : A + i0;
      w->C = C + i0 * ldc;
    } else { /* columns i0..i1 of op(B) and of C */
      w->B = tb == CblasNoTrans ? B + i0 : B + i0 * ldb;
      w->C = C + i0;
    }
  }
  for (; started < T; started++) {
    err = pthread_create(&thr[started], NULL, NNGemmTaskRun, &task[started]);
    if (err) break;
  }
  NNGemmTaskRun(&task[0]);
  for (PetscInt t = 1; t < started; t++) pthread_join(thr[t], NULL);
  for (PetscInt t = started; t < T; t++) NNGemmTaskRun(&task[t]); /* threads that could not start: run here */
}
