/*
   Model-parallel primitives (DistDL's all-gather, sum-reduce and their adjoints) on [rows][cols] arrays
   whose columns are split over the ranks of a communicator: a dense activation [n][features] with its
   features split, or a channels-last spatial activation [pixels x slots][channels] with its channels
   split. A replicated array is one logical tensor that every rank holds, so
     all-gather (split -> replicated)   has the adjoint "take the rank's own columns";
     replication (replicated -> used by every rank's partial product) has the adjoint "sum over the ranks".
   tests/model_parallel_dense.c checks both pairs with the dot-product test, tests/precision_model_parallel.c their
   float instances.
*/
#include <petnn/private/nnimpl.h>

/* Sets up the split of ncol columns over the ranks of comm (an even split, NNPartitionRange()); every rank needs
   at least one column (minimum: ncol >= ranks, the caller's error message names the layer). */
PetscErrorCode NNPartColumnsSetUp(MPI_Comm comm, PetscInt ncol, PetscInt maxrows, NNPartColumns *p)
{
  PetscFunctionBegin;
  PetscCall(NNParallelRegisterEvents());
  PetscCall(NNPartColumnsReset(p));
  p->comm = comm;
  PetscCallMPI(MPI_Comm_size(comm, &p->size));
  PetscCallMPI(MPI_Comm_rank(comm, &p->rank));
  p->ncol    = ncol;
  p->maxrows = maxrows;
  PetscCall(PetscMalloc2(p->size, &p->cnt, p->size, &p->dsp));
  for (PetscMPIInt r = 0; r < p->size; r++) NNPartitionRange(ncol, r, p->size, &p->dsp[r], &p->cnt[r]);
  PetscCall(PetscMalloc1(PetscMax(maxrows * ncol, 1), &p->work));
  PetscFunctionReturn(0);
}

PetscErrorCode NNPartColumnsReset(NNPartColumns *p)
{
  PetscFunctionBegin;
  PetscCall(PetscFree2(p->cnt, p->dsp));
  PetscCall(PetscFree(p->work));
  PetscCall(PetscFree(p->swork));
  p->size = 0;
  PetscFunctionReturn(0);
}

/* the exchanges' workspace of rows * ncol entries: the double one from set-up, the float one on first use */
static PetscErrorCode NNPartColumnsGetWork(NNPartColumns *p, PetscScalar **work)
{
  PetscFunctionBegin;
  *work = p->work;
  PetscFunctionReturn(0);
}

static PetscErrorCode NNPartColumnsGetWorkSingle(NNPartColumns *p, float **work)
{
  PetscFunctionBegin;
  if (!p->swork) PetscCall(PetscMalloc1(PetscMax(p->maxrows * p->ncol, 1), &p->swork));
  *work = p->swork;
  PetscFunctionReturn(0);
}

#include <petnn/private/nnrealdouble.h>
#include "partitionops_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "partitionops_passes.h"
#include <petnn/private/nnrealundef.h>

#if !defined(PETNN_HAVE_CUDA)
/* the device's primitives need CUDA (partitionops_cuda.c); these say so in a PetNN built without it */
PetscErrorCode NNDevicePartColumnsTake(NNPartColumns *p, NNPrecision prec, PetscInt n, const void *full, PetscInt ldf, void *local, PetscInt ldl)
{
  PetscFunctionBegin;
  (void)p, (void)prec, (void)n, (void)full, (void)ldf, (void)local, (void)ldl;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "Model-parallel primitives on the device: this PetNN was built without CUDA");
}

PetscErrorCode NNDevicePartColumnsAllgather(NNPartColumns *p, NNPrecision prec, PetscInt n, const void *local, PetscInt ldl, void *full, PetscInt ldf)
{
  PetscFunctionBegin;
  (void)p, (void)prec, (void)n, (void)local, (void)ldl, (void)full, (void)ldf;
  SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP_SYS, "Model-parallel primitives on the device: this PetNN was built without CUDA");
}
#endif
