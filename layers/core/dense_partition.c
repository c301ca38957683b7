/*
   Model-parallel passes of the dense layer (-<layer>_partition rows|columns), y = x W^T + b with x and y
   replicated on the layer's ranks (Megatron's column- and row-parallel linear layers, with the activations
   gathered so that the layers around need not know):

   rows    - rank r holds W[R_r, :] and b[R_r]: y[:, R_r] = x W_r^T + b_r, all-gathered into y;
             backward dW_r += dy[:, R_r]^T x, db_r += sum dy[:, R_r], dx = sum over r of dy[:, R_r] W_r
             (the adjoint of using the replicated x on every rank is the sum).
   columns - rank r holds W[:, C_r] and the whole b: y = sum over r of x[:, C_r] W_r^T, then + b;
             backward dW_r += dy^T x[:, C_r], db += sum dy (the same on every rank), dx[:, C_r] = dy W_r,
             all-gathered into dx.

   The passes are a precision template (dense_partition_passes.h): in single precision the pieces of the
   activations move as floats.

   The random initialization draws the numbers of the whole weight in PyTorch's order and keeps this rank's,
   so a partitioned network starts from the same weights as a replicated one with the same seed.
*/
#include "dense.h"
#include <cblas.h>
#include <petnn/private/nngemm.h>

PetscErrorCode NNDensePartSetUp(NNLayer l)
{
  NNLayer_Dense *d    = (NNLayer_Dense *)l->data;
  MPI_Comm       comm = NNLayerGetPartitionComm(l);
  PetscBool      rows = (PetscBool)(l->part.type == NN_PARTITION_ROWS);
  PetscInt       in = l->inshape.dim[0], nsplit = rows ? d->units : in, start, cnt;
  PetscMPIInt    size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(nsplit >= size, comm, PETSC_ERR_ARG_INCOMP, "Dense layer %s: -%spartition %s splits its %" PetscInt_FMT " %s over %d ranks; every rank needs at least one: use at most %" PetscInt_FMT " ranks per data group, or -%spartition %s", ((PetscObject)l)->name, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", NNLayerPartitions[l->part.type], nsplit, rows ? "output features (units)" : "input features", size, nsplit, ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "", rows ? "columns or replicate" : "rows or replicate");
  PetscCall(NNPartColumnsSetUp(comm, nsplit, l->nbatch, &d->pc));
  start = d->pc.dsp[d->pc.rank];
  cnt   = d->pc.cnt[d->pc.rank];
  PetscCall(NNLayerAddTensorSplit(l, "weight", NN_TENSOR_PARAM, 2, (PetscInt[]){d->units, in}, rows ? 0 : 1, start, cnt));
  if (d->bias && rows) PetscCall(NNLayerAddTensorSplit(l, "bias", NN_TENSOR_PARAM, 1, &d->units, 0, start, cnt));
  else if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->units));
  PetscCall(PetscMalloc1(PetscMax(l->nbatch * cnt, 1), &d->work));
  PetscCall(PetscMalloc1(PetscMax(l->nbatch * cnt, 1), &d->swork));
  PetscFunctionReturn(0);
}

/* draws U(-bound, bound) for every entry of the whole weight and bias in order, keeping this rank's */
PetscErrorCode NNDensePartInitialize(NNLayer l, PetscReal bound)
{
  NNLayer_Dense *d     = (NNLayer_Dense *)l->data;
  PetscInt       in    = l->inshape.dim[0], out = d->units, start = d->pc.dsp[d->pc.rank], cnt = d->pc.cnt[d->pc.rank];
  PetscScalar   *theta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  if (l->part.type == NN_PARTITION_ROWS) {
    NNRandomSkip(l->rng, (PetscInt64)start * in);
    for (PetscInt i = 0; i < cnt * in; i++) *theta++ = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
    NNRandomSkip(l->rng, (PetscInt64)(out - start - cnt) * in);
    if (d->bias) {
      NNRandomSkip(l->rng, start);
      for (PetscInt i = 0; i < cnt; i++) *theta++ = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
      NNRandomSkip(l->rng, out - start - cnt);
    }
  } else {
    for (PetscInt o = 0; o < out; o++) {
      NNRandomSkip(l->rng, start);
      for (PetscInt i = 0; i < cnt; i++) *theta++ = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
      NNRandomSkip(l->rng, in - start - cnt);
    }
    if (d->bias)
      for (PetscInt i = 0; i < out; i++) *theta++ = bound * (2.0 * NNRandomUniform(l->rng) - 1.0);
  }
  PetscFunctionReturn(0);
}

/* the [nbatch][this rank's features] work array of each precision */
static inline PetscScalar *NNDensePartWork(NNLayer_Dense *d)
{
  return d->work;
}

static inline float *NNDensePartWorkSingle(NNLayer_Dense *d)
{
  return d->swork;
}

#include <petnn/private/nnrealdouble.h>
#include "dense_partition_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "dense_partition_passes.h"
#include <petnn/private/nnrealundef.h>

PetscErrorCode NNDensePartView(NNLayer l, PetscViewer v)
{
  NNLayer_Dense *d = (NNLayer_Dense *)l->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(v, "partition %s: %" PetscInt_FMT " %s over %d ranks (%" PetscInt_FMT " to %" PetscInt_FMT " each), %" PetscInt_FMT " of %" PetscInt_FMT " parameters on rank 0\n", NNLayerPartitions[l->part.type], d->pc.ncol, l->part.type == NN_PARTITION_ROWS ? "rows" : "columns", d->pc.size, d->pc.cnt[d->pc.size - 1], d->pc.cnt[0], l->nparam, l->part.gnparam));
  PetscFunctionReturn(0);
}
