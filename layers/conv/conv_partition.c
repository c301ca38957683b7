/*
   Model-parallel passes of conv2d/conv3d (-<layer>_partition filters|channels, LBANN's channel and filter
   parallelism): the weight is split over the layer's partition communicator (the network's model ranks,
   which hold the same samples and the same spatial subdomain); input and output stay channel-replicated,
   so the layers around need not know. Activations are channels-last [pixel][slot][channel], that is
   [rows][channels] arrays for the primitives of src/layer/interface/partitionops.c.

   filters  - rank r holds weight[F_r, :, ...] and bias[F_r]: it computes its output channels on its pixels
              with the replicated layer's algorithms (a geometry with Cout = |F_r|) and the channels of
              every pixel and slot are all-gathered into the output. Backward: the rank's columns of dy
              give its weight and bias gradient and a partial input gradient, summed over the ranks (the
              adjoint of using the replicated input on every rank).
   channels - rank r holds weight[:, C_r, ...] and the whole bias: it takes its columns of the ghosted
              input, computes the partial output of all filters (a geometry with Cin = |C_r|, no bias),
              the partial outputs are summed over the ranks, then the bias is added. Backward: its weight
              gradient from its channels, the input gradient of its channels all-gathered, the bias
              gradient (the same on every rank) from the replicated dy.

   The parameter gradient of the pieces is then summed over the spatial ranks (the layer communicator) as
   for the replicated layer: the spatial ranks of one model rank hold the same piece. The random
   initialization draws the numbers of the whole weight in PyTorch's order and keeps this rank's, so a
   partitioned network starts from the same weights as a replicated one with the same seed.
*/
#include "conv.h"

static const char *NNConvPrefix(NNLayer l)
{
  return ((PetscObject)l)->prefix ? ((PetscObject)l)->prefix : "";
}

/* Checks the partition and declares this rank's pieces of the weight [filters, in, k...] and bias; wdim is the full weight shape. */
PetscErrorCode NNConvPartSetUp(NNLayer l, const PetscInt wdim[])
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  MPI_Comm      comm = NNLayerGetPartitionComm(l), lcomm = PetscObjectComm((PetscObject)l);
  const char   *pre = NNConvPrefix(l), *name = ((PetscObject)l)->name, *type = ((PetscObject)l)->type_name;
  PetscBool     filters = (PetscBool)(l->part.type == NN_PARTITION_FILTERS);
  PetscInt      nsplit  = filters ? d->filters : wdim[1];
  PetscMPIInt   size, rank, lsize, cmp;

  PetscFunctionBegin;
  PetscCheck(d->groups == 1, lcomm, PETSC_ERR_SUP, "Layer %s (%s): -%spartition %s needs -%sgroups 1, got %" PetscInt_FMT "; use -%spartition replicate with groups", name, type, pre, NNLayerPartitions[l->part.type], pre, d->groups, pre);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(lcomm, &lsize));
  PetscCallMPI(MPI_Comm_compare(comm, lcomm, &cmp));
  PetscCheck(lsize == 1 || (cmp != MPI_IDENT && cmp != MPI_CONGRUENT), lcomm, PETSC_ERR_SUP, "Layer %s (%s): -%spartition %s splits the weights over the model ranks, which share samples and subdomain, but its %d ranks split the samples spatially; give -nn_model_ranks M (the ranks per spatial rank that split the weights) or -%spartition replicate", name, type, pre, NNLayerPartitions[l->part.type], lsize, pre);
  PetscCheck(nsplit >= size, comm, PETSC_ERR_ARG_INCOMP, "Layer %s (%s): -%spartition %s splits its %" PetscInt_FMT " %s over %d model ranks; every rank needs at least one: use at most %" PetscInt_FMT " model ranks (-nn_model_ranks), or -%spartition %s", name, type, pre, NNLayerPartitions[l->part.type], nsplit, filters ? "filters" : "input channels", size, nsplit, pre, filters ? "channels or replicate" : "filters or replicate");
  NNPartitionRange(nsplit, rank, size, &d->pstart, &d->pcnt);
  PetscCall(NNLayerAddTensorSplit(l, "weight", NN_TENSOR_PARAM, d->nd + 2, wdim, filters ? 0 : 1, d->pstart, d->pcnt));
  if (d->bias && filters) PetscCall(NNLayerAddTensorSplit(l, "bias", NN_TENSOR_PARAM, 1, &d->filters, 0, d->pstart, d->pcnt));
  else if (d->bias) PetscCall(NNLayerAddTensor(l, "bias", NN_TENSOR_PARAM, 1, &d->filters));
  PetscFunctionReturn(0);
}

static void NNConvDraw(NNRandom *rng, PetscReal bound, PetscInt n, PetscScalar **theta)
{
  for (PetscInt i = 0; i < n; i++) *(*theta)++ = bound * (2.0 * NNRandomUniform(rng) - 1.0);
}

/* draws U(-bound, bound) for every entry of the whole weight [out][in][taps] and bias in order, keeping this rank's */
PetscErrorCode NNConvPartInitialize(NNLayer l, PetscReal bound)
{
  NNLayer_Conv *d     = (NNLayer_Conv *)l->data;
  PetscInt      in    = l->inshape.dim[0], out = d->filters, ntap = 1, s = d->pstart, c = d->pcnt;
  PetscScalar  *theta = (PetscScalar *)l->theta;

  PetscFunctionBegin;
  for (PetscInt a = 0; a < d->nd; a++) ntap *= d->k[a];
  if (l->part.type == NN_PARTITION_FILTERS) {
    NNRandomSkip(l->rng, (PetscInt64)s * in * ntap);
    NNConvDraw(l->rng, bound, c * in * ntap, &theta);
    NNRandomSkip(l->rng, (PetscInt64)(out - s - c) * in * ntap);
    if (d->bias) {
      NNRandomSkip(l->rng, s);
      NNConvDraw(l->rng, bound, c, &theta);
      NNRandomSkip(l->rng, out - s - c);
    }
  } else {
    for (PetscInt o = 0; o < out; o++) {
      NNRandomSkip(l->rng, (PetscInt64)s * ntap);
      NNConvDraw(l->rng, bound, c * ntap, &theta);
      NNRandomSkip(l->rng, (PetscInt64)(in - s - c) * ntap);
    }
    if (d->bias) NNConvDraw(l->rng, bound, out, &theta);
  }
  PetscFunctionReturn(0);
}

/* the rows of the split arrays: output pixels x slots (filters), ghosted input pixels x slots (channels) */
static PetscInt NNConvPartRows(const NNConvGeom *g, NNLayerPartition part)
{
  return (part == NN_PARTITION_FILTERS ? g->npix : g->gm[0] * g->gm[1] * g->gm[2]) * g->nb;
}

/* After the replicated geometry is set (output Vec creation): this rank's geometry (its filters or input
   channels) and the split of the channels of every row over the partition communicator. */
PetscErrorCode NNConvPartGeometry(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  NNConvGeom   *g = &d->g;
  PetscInt      rows;

  PetscFunctionBegin;
  PetscCall(PetscFree2(d->pbuf, d->pbuf2));
  PetscCall(PetscFree2(d->spbuf, d->spbuf2));
  if (l->part.type == NN_PARTITION_FILTERS) {
    rows = NNConvPartRows(g, l->part.type);
    PetscCall(NNPartColumnsSetUp(NNLayerGetPartitionComm(l), g->Cout, rows, &d->pc));
    g->Cout = g->Og = d->pcnt;
    PetscCall(PetscMalloc2(PetscMax(rows * d->pcnt, 1), &d->pbuf, 1, &d->pbuf2));
    PetscCall(PetscMalloc2(PetscMax(rows * d->pcnt, 1), &d->spbuf, 1, &d->spbuf2));
  } else {
    rows = NNConvPartRows(g, l->part.type);
    PetscCall(NNPartColumnsSetUp(NNLayerGetPartitionComm(l), g->Cin, rows, &d->pc));
    g->Cin = g->Cg = d->pcnt;
    g->K           = g->ntap * g->Cg;
    g->bias        = PETSC_FALSE; /* added once, after the sum of the partial outputs */
    g->Ka          = g->K;
    PetscCall(PetscMalloc2(PetscMax(rows * d->pcnt, 1), &d->pbuf, PetscMax(rows * d->pcnt, 1), &d->pbuf2));
    PetscCall(PetscMalloc2(PetscMax(rows * d->pcnt, 1), &d->spbuf, PetscMax(rows * d->pcnt, 1), &d->spbuf2));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode NNConvPartReset(NNLayer l)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;

  PetscFunctionBegin;
  PetscCall(NNPartColumnsReset(&d->pc));
  PetscCall(PetscFree2(d->pbuf, d->pbuf2));
  PetscCall(PetscFree2(d->spbuf, d->spbuf2));
  PetscFunctionReturn(0);
}

/* the work arrays and the parameters of each precision, for the template below */
static inline void NNConvPartBuffers(NNLayer_Conv *d, PetscScalar **b, PetscScalar **b2)
{
  *b  = d->pbuf;
  *b2 = d->pbuf2;
}

static inline void NNConvPartBuffersSingle(NNLayer_Conv *d, float **b, float **b2)
{
  *b  = d->spbuf;
  *b2 = d->spbuf2;
}

static inline const PetscScalar *NNConvPartTheta(NNLayer l)
{
  return l->theta;
}

static inline const float *NNConvPartThetaSingle(NNLayer l)
{
  return l->stheta;
}

#include <petnn/private/nnrealdouble.h>
#include "conv_partition_passes.h"
#include <petnn/private/nnrealsingle.h>
#include "conv_partition_passes.h"
#include <petnn/private/nnrealundef.h>

/* filters: the input gradient dx (after the halo sum) summed over the ranks' partial ones; collective */
PetscErrorCode NNConvPartSumInputGradient(NNLayer l, Vec dx)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  PetscScalar  *a;
  PetscInt      n;

  PetscFunctionBegin;
  if (l->part.type != NN_PARTITION_FILTERS) PetscFunctionReturn(0);
  PetscCall(VecGetLocalSize(dx, &n));
  PetscCall(VecGetArray(dx, &a));
  PetscCall(NNPartSum(d->pc.comm, n, a));
  PetscCall(VecRestoreArray(dx, &a));
  PetscFunctionReturn(0);
}

/* one line of the layer's view */
PetscErrorCode NNConvPartView(NNLayer l, PetscViewer v)
{
  NNLayer_Conv *d = (NNLayer_Conv *)l->data;
  PetscMPIInt   size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(NNLayerGetPartitionComm(l), &size));
  PetscCall(PetscViewerASCIIPrintf(v, "partition %s: %" PetscInt_FMT " %s over %d model ranks, %" PetscInt_FMT " of %" PetscInt_FMT " parameters on rank 0\n", NNLayerPartitions[l->part.type], l->part.type == NN_PARTITION_FILTERS ? d->filters : l->inshape.dim[0], l->part.type == NN_PARTITION_FILTERS ? "filters" : "input channels", size, l->nparam, l->part.gnparam));
  PetscFunctionReturn(0);
}
