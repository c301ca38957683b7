/*
   Losses evaluated from partial sums (the sums/finish/gradient callbacks of NNLossOps): on outputs
   spread over the ranks of a communicator (spatial DMDA outputs) each rank sums over its entries,
   the sums are added over the ranks, and every rank finishes the same mean loss; on a sequential
   batch the same callbacks run on one block. A type's parameters (NNLossOps.param, set by its
   options) survive the network's set-up fetching the ops again.
*/
#include <petnn/private/nnimpl.h>

/* the ops of type for a network that may already hold them: the type's parameters are kept */
PetscErrorCode NNLossSetUpOps(NNLossType type, NNLossOps *ops)
{
  PetscReal param[4];
  PetscBool had = (PetscBool)(ops->eval || ops->sums);

  PetscFunctionBegin;
  PetscCall(PetscArraycpy(param, ops->param, 4));
  PetscCall(NNLossGetOps(type, ops));
  if (had) PetscCall(PetscArraycpy(ops->param, param, 4));
  PetscFunctionReturn(0);
}

/*
   NNLossEvaluateBlock - mean loss of n samples of k outputs each from the rank's block b, with the
   partial sums added over comm (MPI_COMM_NULL: the block is the whole batch), and dL/dy at the
   block's used entries (dy NULL: not needed). An error in a rank's sums (a bad target) is raised
   on every rank of comm.
*/
PetscErrorCode NNLossEvaluateBlock(const NNLossOps *ops, MPI_Comm comm, PetscInt n, PetscInt k, const NNLossBlock *b, PetscReal *loss, PetscScalar *dy)
{
  PetscInt       ns = ops->persample ? n * ops->nsums : ops->nsums;
  PetscReal      one[8], *sums = one;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (ns > 8) PetscCall(PetscMalloc1(ns, &sums));
  PetscCall(PetscArrayzero(sums, ns));
  if (comm == MPI_COMM_NULL) PetscCall((*ops->sums)(ops, n, k, b, sums));
  else {
    PetscMPIInt cnt;
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* a bad target on one rank: raised on all below */
    ierr = (*ops->sums)(ops, n, k, b, sums);
    PetscCall(PetscPopErrorHandler());
    PetscCall(NNCollectiveError(comm, ierr, PETSC_TRUE, ""));
    PetscCall(PetscMPIIntCast(ns, &cnt));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, cnt, MPIU_REAL, MPIU_SUM, comm));
  }
  PetscCall((*ops->finish)(ops, n, k, sums, loss));
  if (dy) {
    PetscCheck(ops->gradient, PETSC_COMM_SELF, PETSC_ERR_SUP, "This loss type provides partial sums but no gradient routine");
    PetscCall((*ops->gradient)(ops, n, k, b, sums, dy));
  }
  if (sums != one) PetscCall(PetscFree(sums));
  PetscFunctionReturn(0);
}
