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
  } else if (g->alg == NN_CONV_DIRECT) {
    NNConvDirectWorkSize(g, ws, wi);
    *acc = g->Ka * g->Cout + g->Cout;
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



#include <petnn/private/nnrealdouble.h>
#include "conv_run_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "conv_run_passes.h"
#include <petnn/private/nnrealundef.h>
