/*
   Running a convolution pass on T threads (layers/conv/conv.h).

   Each thread runs single-threaded BLAS on its own tiles with its own workspace and gradient
   accumulators, which are summed in thread order afterwards, so results do not depend on timing.
   The forward pass and a backward pass without input gradient split the output pixels (im2col) or
   tiles (Winograd); a backward pass with input gradient splits the batch slots, so the scatter-adds
   into the ghosted input gradient of different threads never touch the same entries. OpenBLAS is
   set to one thread while the threads run and restored afterwards. With T = 1 the work runs in the
   calling thread and OpenBLAS threads each GEMM itself.
*/
#include "conv.h"
#include <cblas.h>
#include <pthread.h>

static void NNConvTaskSizes(const NNConvGeom *g, PetscInt *ws, PetscInt *wi, PetscInt *acc)
{
  if (g->alg == NN_CONV_WINOGRAD) {
    NNConvWinogradWorkSize(g, ws, wi);
    *acc = NNConvWinogradTransformedSize(g) + g->Cout;
  } else {
    NNConvIm2colWorkSize(g, ws, wi);
    *acc = g->G * g->Ka * g->Og + g->Cout;
  }
}

/*
   NNConvWorkspaceSize - scalars and integers of workspace NNConvRun() needs with nthreads threads
*/
PetscErrorCode NNConvWorkspaceSize(const NNConvGeom *g, PetscInt nthreads, PetscInt *nscalar, PetscInt *nint)
{
  PetscInt ws, wi, acc;

  PetscFunctionBegin;
  NNConvTaskSizes(g, &ws, &wi, &acc);
  *nscalar = nthreads * ws + (nthreads - 1) * acc;
  *nint    = nthreads * wi;
  PetscFunctionReturn(0);
}

static void *NNConvTaskRun(void *arg)
{
  NNConvTask *w = (NNConvTask *)arg;

  if (w->pass->y) {
    if (w->g->alg == NN_CONV_WINOGRAD) NNConvWinogradForward(w);
    else NNConvIm2colForward(w);
  } else {
    if (w->g->alg == NN_CONV_WINOGRAD) NNConvWinogradBackward(w);
    else NNConvIm2colBackward(w);
  }
  return NULL;
}

/*
   NNConvRun - one forward (pass->y set) or backward (pass->dy set) pass over the owned outputs and
   the first g->ns slots

   Input Parameters:
+  g        - the geometry
.  pass     - what to compute
.  nthreads - threads to split the pass over
.  work     - workspace of NNConvWorkspaceSize() scalars
-  iwork    - and integers

   Output Parameter:
.  flops - floating-point operations done
*/
PetscErrorCode NNConvRun(const NNConvGeom *g, const NNConvPass *pass, PetscInt nthreads, PetscScalar *work, PetscInt *iwork, PetscLogDouble *flops)
{
  NNConvTask   task[NN_CONV_MAX_THREADS];
  pthread_t    thr[NN_CONV_MAX_THREADS];
  PetscBool    forward = pass->y ? PETSC_TRUE : PETSC_FALSE, byslot = (PetscBool)(!forward && pass->dx);
  PetscInt     T, units = g->alg == NN_CONV_WINOGRAD ? g->w.ntiles : g->npix, nunits = byslot ? g->ns : units, ws, wi, acc, nacc;
  PetscScalar *accs;

  PetscFunctionBegin;
  NNConvTaskSizes(g, &ws, &wi, &acc);
  nacc = acc - g->Cout;
  T    = PetscMax(1, PetscMin(PetscMin(nthreads, NN_CONV_MAX_THREADS), nunits));
  accs = work + nthreads * ws;
  for (PetscInt t = 0; t < T; t++) {
    NNConvTask *w = &task[t];
    PetscInt    u0 = (nunits * t) / T, u1 = (nunits * (t + 1)) / T;
    w->g     = g;
    w->pass  = pass;
    w->q0    = byslot ? 0 : u0;
    w->q1    = byslot ? units : u1;
    w->s0    = byslot ? u0 : 0;
    w->s1    = byslot ? u1 : g->ns;
    w->work  = work + t * ws;
    w->iwork = iwork + t * wi;
    w->flops = 0;
    w->dW    = forward ? NULL : pass->dW;
    w->db    = forward ? NULL : pass->db;
    if (t > 0 && !forward) { /* private accumulators, summed below */
      PetscScalar *a = accs + (t - 1) * acc;
      w->dW          = pass->dW ? a : NULL;
      w->db          = pass->db ? a + nacc : NULL;
      if (w->dW) PetscCall(PetscArrayzero(w->dW, nacc));
      if (w->db) PetscCall(PetscArrayzero(w->db, g->Cout));
    }
  }
  if (T > 1) {
    PetscInt started = 1;
    int      err     = 0, nblas = openblas_get_num_threads();
    openblas_set_num_threads(1);
    for (; started < T; started++) {
      err = pthread_create(&thr[started], NULL, NNConvTaskRun, &task[started]);
      if (err) break;
    }
    NNConvTaskRun(&task[0]);
    for (PetscInt t = 1; t < started; t++) pthread_join(thr[t], NULL);
    openblas_set_num_threads(nblas);
    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_SYS, "Convolution: cannot start a thread (pthread_create error %d); use fewer threads (-<layer prefix>threads)", err);
    for (PetscInt t = 1; t < T; t++) {
      if (task[t].dW)
        for (PetscInt i = 0; i < nacc; i++) pass->dW[i] += task[t].dW[i];
      if (task[t].db)
        for (PetscInt i = 0; i < g->Cout; i++) pass->db[i] += task[t].db[i];
    }
  } else NNConvTaskRun(&task[0]);
  *flops = 0;
  for (PetscInt t = 0; t < T; t++) *flops += task[t].flops;
  PetscFunctionReturn(0);
}
