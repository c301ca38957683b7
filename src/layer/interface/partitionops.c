/*
   Model-parallel primitives (DistDL's all-gather, sum-reduce and their adjoints) on [rows][cols] arrays
   whose columns are split over the ranks of a communicator: a dense activation [n][features] with its
   features split, or a channels-last spatial activation [pixels x slots][channels] with its channels
   split. A replicated array is one logical tensor that every rank holds, so
     all-gather (split -> replicated)   has the adjoint "take the rank's own columns";
     replication (replicated -> used by every rank's partial product) has the adjoint "sum over the ranks".
   tests/model_parallel_ops.c checks both pairs with the dot-product test.
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
  p->size = 0;
  PetscFunctionReturn(0);
}

/* full[r][dsp_q + j] = piece of rank q [r][j] for rows < n: local is this rank's [n][cnt] with leading dimension
   ldl, full [n][ncol] with leading dimension ldf; collective */
PetscErrorCode NNPartColumnsAllgather(NNPartColumns *p, PetscInt n, const PetscScalar local[], PetscInt ldl, PetscScalar full[], PetscInt ldf)
{
  PetscMPIInt *cnt, *dsp, me;
  PetscInt     c = p->cnt[p->rank], off = 0;

  PetscFunctionBegin;
  PetscCheck(n <= p->maxrows, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "All-gather of %" PetscInt_FMT " rows; set up for %" PetscInt_FMT, n, p->maxrows);
  PetscCall(PetscLogEventBegin(NN_PartGather, 0, 0, 0, 0));
  PetscCall(PetscMalloc2(p->size, &cnt, p->size, &dsp));
  for (PetscMPIInt q = 0; q < p->size; q++) {
    PetscCall(PetscMPIIntCast(n * p->cnt[q], &cnt[q]));
    PetscCall(PetscMPIIntCast(off, &dsp[q]));
    off += n * p->cnt[q];
  }
  for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(p->work + dsp[p->rank] + r * c, local + r * ldl, c));
  PetscCall(PetscMPIIntCast(n * c, &me));
  PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, me, MPIU_SCALAR, p->work, cnt, dsp, MPIU_SCALAR, p->comm));
  for (PetscMPIInt q = 0; q < p->size; q++)
    for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(full + r * ldf + p->dsp[q], p->work + dsp[q] + r * p->cnt[q], p->cnt[q]));
  PetscCall(PetscFree2(cnt, dsp));
  PetscCall(PetscLogEventEnd(NN_PartGather, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* the adjoint of the all-gather: local[r][j] = full[r][dsp_me + j] for rows < n; not collective */
PetscErrorCode NNPartColumnsTake(NNPartColumns *p, PetscInt n, const PetscScalar full[], PetscInt ldf, PetscScalar local[], PetscInt ldl)
{
  PetscFunctionBegin;
  for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(local + r * ldl, full + r * ldf + p->dsp[p->rank], p->cnt[p->rank]));
  PetscFunctionReturn(0);
}

/* a[0..n) = the sum over the ranks of comm of their a (the adjoint of replication); collective */
PetscErrorCode NNPartSum(MPI_Comm comm, PetscInt n, PetscScalar a[])
{
  PetscMPIInt cnt;

  PetscFunctionBegin;
  PetscCall(NNParallelRegisterEvents());
  PetscCall(PetscLogEventBegin(NN_PartReduce, 0, 0, 0, 0));
  PetscCall(PetscMPIIntCast(n, &cnt));
  if (cnt) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, a, cnt, MPIU_SCALAR, MPIU_SUM, comm));
  PetscCall(PetscLogEventEnd(NN_PartReduce, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
