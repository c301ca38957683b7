/* The model-parallel primitives on NN_REAL arrays, a precision template (include/petnn/private/nnrealdouble.h) that
   partitionops.c compiles in double and in float: the float instances move floats (the layers' float passes). */

/* full[r][dsp_q + j] = piece of rank q [r][j] for rows < n: local is this rank's [n][cnt] with leading dimension
   ldl, full [n][ncol] with leading dimension ldf; collective */
PetscErrorCode PetscConcat(NNPartColumnsAllgather, NN_SUFFIX)(NNPartColumns *p, PetscInt n, const NN_REAL local[], PetscInt ldl, NN_REAL full[], PetscInt ldf)
{
  PetscMPIInt *cnt, *dsp, me;
  PetscInt     c = p->cnt[p->rank], off = 0;
  NN_REAL     *work = NULL;

  PetscFunctionBegin;
  PetscCheck(n <= p->maxrows, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "All-gather of %" PetscInt_FMT " rows; set up for %" PetscInt_FMT, n, p->maxrows);
  PetscCall(PetscConcat(NNPartColumnsGetWork, NN_SUFFIX)(p, &work));
  PetscCall(PetscLogEventBegin(NN_PartGather, 0, 0, 0, 0));
  PetscCall(PetscMalloc2(p->size, &cnt, p->size, &dsp));
  for (PetscMPIInt q = 0; q < p->size; q++) {
    PetscCall(PetscMPIIntCast(n * p->cnt[q], &cnt[q]));
    PetscCall(PetscMPIIntCast(off, &dsp[q]));
    off += n * p->cnt[q];
  }
  for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(work + dsp[p->rank] + r * c, local + r * ldl, c));
  PetscCall(PetscMPIIntCast(n * c, &me));
  PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, me, NN_MPI_REAL, work, cnt, dsp, NN_MPI_REAL, p->comm));
  for (PetscMPIInt q = 0; q < p->size; q++)
    for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(full + r * ldf + p->dsp[q], work + dsp[q] + r * p->cnt[q], p->cnt[q]));
  PetscCall(PetscFree2(cnt, dsp));
  PetscCall(PetscLogEventEnd(NN_PartGather, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* the adjoint of the all-gather: local[r][j] = full[r][dsp_me + j] for rows < n; not collective */
PetscErrorCode PetscConcat(NNPartColumnsTake, NN_SUFFIX)(NNPartColumns *p, PetscInt n, const NN_REAL full[], PetscInt ldf, NN_REAL local[], PetscInt ldl)
{
  PetscFunctionBegin;
  for (PetscInt r = 0; r < n; r++) PetscCall(PetscArraycpy(local + r * ldl, full + r * ldf + p->dsp[p->rank], p->cnt[p->rank]));
  PetscFunctionReturn(0);
}

/* a[0..n) = the sum over the ranks of comm of their a (the adjoint of replication); collective */
PetscErrorCode PetscConcat(NNPartSum, NN_SUFFIX)(MPI_Comm comm, PetscInt n, NN_REAL a[])
{
  PetscMPIInt cnt;

  PetscFunctionBegin;
  PetscCall(NNParallelRegisterEvents());
  PetscCall(PetscLogEventBegin(NN_PartReduce, 0, 0, 0, 0));
  PetscCall(PetscMPIIntCast(n, &cnt));
  if (cnt) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, a, cnt, NN_MPI_REAL, MPIU_SUM, comm));
  PetscCall(PetscLogEventEnd(NN_PartReduce, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
