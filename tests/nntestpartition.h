/* A helper shared by the test programs of model parallelism (tests/model_parallel_*.c, tests/precision_model_parallel.c):
   a partitioned network's parameter-sized array against a replicated (or serial) network's. Header-only, static inline, as
   tests/nntest.h. */
#pragma once
#include <petnn/private/nnimpl.h>

/* max |a - b| / max |b| of the partitioned network's array a gathered to the full layout against the replicated
   network's b (world rank 0 compares; the result is broadcast) */
static inline PetscErrorCode NNTestCompareGathered(NN part, Vec a, Vec b, PetscReal *err)
{
  const PetscScalar *pa, *pb;
  PetscScalar       *full = NULL;
  PetscInt           n;
  PetscReal          e = 0, m = 0;
  PetscMPIInt        rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(VecGetSize(b, &n));
  PetscCheck(n == part->part.np, PETSC_COMM_WORLD, PETSC_ERR_PLIB, "Full layouts differ: %" PetscInt_FMT " vs %" PetscInt_FMT, part->part.np, n);
  PetscCall(PetscMalloc1(n, &full)); /* gathered on rank 0 of each layer communicator (data groups: several) */
  PetscCall(VecGetArrayRead(a, &pa));
  PetscCall(NNPartitionGather(part, NN_TENSOR_PARAM, pa, full));
  PetscCall(VecRestoreArrayRead(a, &pa));
  PetscCall(VecGetArrayRead(b, &pb));
  for (PetscInt i = 0; !rank && i < n; i++) {
    e = PetscMax(e, PetscAbsScalar(full[i] - pb[i]));
    m = PetscMax(m, PetscAbsScalar(pb[i]));
  }
  PetscCall(VecRestoreArrayRead(b, &pb));
  PetscCall(PetscFree(full));
  *err = e / PetscMax(m, 1e-300);
  PetscCallMPI(MPI_Bcast(err, 1, MPIU_REAL, 0, PETSC_COMM_WORLD));
  PetscFunctionReturn(0);
}
