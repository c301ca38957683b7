/*
   In-memory data sets: the caller's arrays, used where they are (no copy). A program that already
   holds its samples (a simulation's snapshots, numpy arrays handed over by petnn4py) wraps them
   with NNDataArraySetArrays() instead of writing a file first. Every rank passes the same N rows;
   a distributed data set then serves only its rows [rstart, rend) of them to the other ranks.
*/
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt           N;       /* rows the caller's arrays hold */
  NNShape            shape;   /* of one sample */
  PetscInt           ntarget; /* values per target */
  const PetscScalar *x, *y;   /* [N][size(shape)] and [N][ntarget], the caller's */
} NNData_Array;

static PetscErrorCode NNDataSetUp_Array(NNData d)
{
  NNData_Array *a = (NNData_Array *)d->data;

  PetscFunctionBegin;
  PetscCheck(a->x && a->y, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Data set of type \"array\" has no arrays: call NNDataArraySetArrays() before NNDataSetUp()");
  d->shape   = a->shape;
  d->ntarget = a->ntarget;
  PetscCall(NNDataSetSizes_Private(d, a->N));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataGetBatch_Array(NNData d, PetscInt n, const PetscInt ids[], PetscScalar *x, PetscScalar *t)
{
  NNData_Array *a = (NNData_Array *)d->data;

  PetscFunctionBegin; /* ids are local rows: offset to this rank's part of the caller's full arrays */
  PetscCall(NNDataCopySamples(d, a->x + (size_t)d->rstart * NNShapeSize(&a->shape), a->y + (size_t)d->rstart * a->ntarget, n, ids, x, t));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataView_Array(NNData d, PetscViewer v)
{
  NNData_Array *a = (NNData_Array *)d->data;
  char          s[64];

  PetscFunctionBegin;
  PetscCall(NNShapeToString(&a->shape, sizeof(s), s));
  PetscCall(PetscViewerASCIIPrintf(v, "the caller's arrays (not copied): %" PetscInt_FMT " samples of shape %s, %" PetscInt_FMT " target value(s) each\n", a->N, s, a->ntarget));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataDestroy_Array(NNData d)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)d, "NNDataArraySetArrays_C", NULL));
  PetscCall(PetscFree(d->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode NNDataArraySetArrays_Array(NNData d, PetscInt N, PetscInt ndim, const PetscInt dims[], PetscInt ntarget, const PetscScalar x[], const PetscScalar y[])
{
  NNData_Array *a = (NNData_Array *)d->data;

  PetscFunctionBegin;
  PetscCheck(N > 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_OUTOFRANGE, "NNDataArraySetArrays(): %" PetscInt_FMT " samples; give at least one", N);
  PetscCheck(ntarget > 0, PetscObjectComm((PetscObject)d), PETSC_ERR_ARG_OUTOFRANGE, "NNDataArraySetArrays(): %" PetscInt_FMT " target values per sample; give at least one", ntarget);
  PetscCall(NNShapeSet(&a->shape, ndim, dims)); /* checks the rank and the sizes */
  a->N       = N;
  a->ntarget = ntarget;
  a->x       = x;
  a->y       = y;
  d->setupcalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
   NNDataArraySetArrays - gives a data set of type `NNDATAARRAY` the caller's samples, without copying them

   Logically Collective

   Input Parameters:
+  data    - the data set
.  N       - the number of samples
.  ndim    - the rank of one sample's shape (1 to 4), in PyTorch order (C,H,W)
.  dims    - that shape
.  ntarget - values per target (1 for class labels)
.  x       - the features, [N][dims...] with each sample contiguous
-  y       - the targets, [N][ntarget]

   Notes:
   The arrays are used where they are: keep them alive and unchanged until the data set is destroyed or
   given other arrays. Every rank passes the same N samples. Calling it again replaces the arrays; the
   data set is then set up again. A data set of another type ignores the call.

   Level: beginner

.seealso: `NNDATAARRAY`, `NNDataCreate()`, `NNDataSetUp()`, `NNDataGetBatch()`
@*/
PetscErrorCode NNDataArraySetArrays(NNData data, PetscInt N, PetscInt ndim, const PetscInt dims[], PetscInt ntarget, const PetscScalar x[], const PetscScalar y[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(data, NNDATA_CLASSID, 1);
  PetscAssertPointer(dims, 4);
  PetscAssertPointer(x, 6);
  PetscAssertPointer(y, 7);
  PetscTryMethod(data, "NNDataArraySetArrays_C", (NNData, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscScalar[], const PetscScalar[]), (data, N, ndim, dims, ntarget, x, y));
  PetscFunctionReturn(0);
}

/*MC
   NNDATAARRAY - "array": samples the program holds in memory, given with `NNDataArraySetArrays()` and used
   without a copy

   Notes:
   Python's petnn4py wraps numpy arrays this way (`Data.fromArrays(X, y)`). Options such as
   -data_max_samples and -data_distribute apply as for the file types; -data_file does not.

   Level: beginner

.seealso: `NNDataArraySetArrays()`, `NNDATAHDF5`, `NNDATABINARY`
M*/
PETSC_INTERN PetscErrorCode NNDataCreate_Array(NNData d)
{
  NNData_Array *a;

  PetscFunctionBegin;
  PetscCall(PetscNew(&a));
  d->data         = a;
  d->ops->setup   = NNDataSetUp_Array;
  d->ops->getbatch = NNDataGetBatch_Array;
  d->ops->view    = NNDataView_Array;
  d->ops->destroy = NNDataDestroy_Array;
  PetscCall(PetscObjectComposeFunction((PetscObject)d, "NNDataArraySetArrays_C", NNDataArraySetArrays_Array));
  PetscFunctionReturn(0);
}
