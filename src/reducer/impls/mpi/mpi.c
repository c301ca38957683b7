/*
   The "mpi" reducer: gradient buckets (contiguous slices of about -nn_bucket_size MB, filled from
   the last layer backwards) handed to MPI_Iallreduce over the data communicator as soon as their
   first layer's backward pass is done, progressed by MPI_Testall between the layers' backward
   passes and waited for at the end of the backward pass. With a sharded optimizer (ZeRO stage 1)
   the buckets are reduce-scattered instead, every group steps its slice of the parameters and the
   parameters are all-gathered after the step.

   With -nn_allreduce_single (not sharded) a bucket is rounded to float, summed as floats and widened back when the
   backward pass ends: half the bytes on the wire, the gradient rounded to float once more (bench/RESULTS.md compares
   the two sums).
*/
#include <petnn/private/reducerimpl.h>

static PetscErrorCode NNBucketLaunch(NNReducer r, PetscScalar *g, PetscInt b)
{
  NNParallel     p = r->net->par;
  NNBucket      *k = &r->buckets[b];
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  if (r->sharded) { /* each group receives the sum over its slice's part of the bucket */
    PetscInt off = PetscMin(PetscMax(k->lo, r->slo), r->shi) - r->slo;
    PetscCallMPI(MPI_Ireduce_scatter(g + k->lo, r->gslice + off, r->rcount + b * p->D, MPIU_SCALAR, MPIU_SUM, p->dcomm, &r->req[b]));
  } else if (r->fsum) { /* rounded to float, summed as floats */
    PetscInt n;
    if (!r->fbuf) {
      PetscCall(VecGetLocalSize(r->net->theta, &n));
      PetscCall(PetscMalloc1(n, &r->fbuf));
    }
    for (PetscInt i = k->lo; i < k->hi; i++) r->fbuf[i] = (float)g[i];
    PetscCallMPI(MPI_Iallreduce(MPI_IN_PLACE, r->fbuf + k->lo, (PetscMPIInt)(k->hi - k->lo), MPI_FLOAT, MPI_SUM, p->dcomm, &r->req[b]));
  } else PetscCallMPI(MPI_Iallreduce(MPI_IN_PLACE, g + k->lo, (PetscMPIInt)(k->hi - k->lo), MPIU_SCALAR, MPIU_SUM, p->dcomm, &r->req[b]));
  PetscCall(PetscTime(&t1));
  r->t_exposed += t1 - t0;
  PetscFunctionReturn(0);
}

/* after layer i's backward pass: launch the bucket it completes, progress the ones in flight */
static PetscErrorCode NNReducerLayerDone_MPI(NNReducer r, PetscInt i, PetscScalar *g)
{
  PetscLogDouble t0, t1;
  int            flag;

  PetscFunctionBegin;
  if (!r->nbuckets) PetscFunctionReturn(0);
  PetscCall(PetscLogEventBegin(NN_AllreduceLaunch, r->net, 0, 0, 0));
  while (r->nlaunched < r->nbuckets && r->buckets[r->nlaunched].trigger >= i) {
    PetscCall(NNBucketLaunch(r, g, r->nlaunched));
    r->nlaunched++;
  }
  PetscCall(PetscTime(&t0));
  if (r->nlaunched) PetscCallMPI(MPI_Testall((PetscMPIInt)r->nlaunched, r->req, &flag, MPI_STATUSES_IGNORE));
  PetscCall(PetscTime(&t1));
  r->t_exposed += t1 - t0;
  PetscCall(PetscLogEventEnd(NN_AllreduceLaunch, r->net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* end of the backward pass: launch what is left (nothing, normally) and wait for everything */
static PetscErrorCode NNReducerBackwardDone_MPI(NNReducer r, PetscScalar *g)
{
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  for (; r->nlaunched < r->nbuckets; r->nlaunched++) PetscCall(NNBucketLaunch(r, g, r->nlaunched));
  PetscCall(PetscTime(&t0));
  PetscCallMPI(MPI_Waitall((PetscMPIInt)r->nbuckets, r->req, MPI_STATUSES_IGNORE));
  if (r->fsum && !r->sharded)
    for (PetscInt b = 0; b < r->nbuckets; b++)
      for (PetscInt i = r->buckets[b].lo; i < r->buckets[b].hi; i++) g[i] = r->fbuf[i];
  PetscCall(PetscTime(&t1));
  r->t_exposed += t1 - t0;
  PetscFunctionReturn(0);
}

/* the sharded optimizer step: this group's slice, then an all-gather of the parameters over the data groups */
PetscErrorCode NNReducerStep_MPI(NNReducer r)
{
  NN             net = r->net;
  PetscScalar   *t;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(NNOptStepRange(r->opt, r->slo, r->shi, net->theta, r->gslice));
  PetscCall(PetscLogEventBegin(NN_Allgather, net, 0, 0, 0));
  PetscCall(PetscTime(&t0));
  PetscCall(VecGetArray(net->theta, &t));
  PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t, r->pcount, r->pdispl, MPIU_SCALAR, net->par->dcomm));
  PetscCall(VecRestoreArray(net->theta, &t));
  PetscCall(PetscTime(&t1));
  r->t_exposed += t1 - t0;
  PetscCall(PetscLogEventEnd(NN_Allgather, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* a sharded optimizer keeps its state current only on each group's slice: gather it */
PetscErrorCode NNReducerGatherOptState_MPI(NNReducer r)
{
  NN           net = r->net;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(NN_Allgather, net, 0, 0, 0));
  for (PetscInt i = 0; i < r->opt->nstate; i++) {
    PetscCall(VecGetArray(r->opt->state[i], &a));
    PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, r->pcount, r->pdispl, MPIU_SCALAR, net->par->dcomm));
    PetscCall(VecRestoreArray(r->opt->state[i], &a));
  }
  PetscCall(PetscLogEventEnd(NN_Allgather, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode NNReducerCreate_MPI(NNReducer r)
{
  PetscFunctionBegin;
  r->ops->layerdone      = NNReducerLayerDone_MPI;
  r->ops->backwarddone   = NNReducerBackwardDone_MPI;
  r->ops->step           = NNReducerStep_MPI;
  r->ops->gatheroptstate = NNReducerGatherOptState_MPI;
  PetscFunctionReturn(0);
}
