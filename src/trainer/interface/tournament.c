/*
   Tournament training (LBANN's "LTFB", livermore tournament fast batch): K trainers train
   independent copies of the network on their own parts of the data; every M steps they are
   paired at random, swap models, and each keeps whichever of the two has the smaller loss on its
   own tournament set. A trainer that adopts its partner's model keeps its own optimizer state
   (moments, step count), as LBANN does.
*/
#include <petnn/private/trainerimpl.h>

/* one tournament, collective on the network's communicator (all trainers take part) */
PetscErrorCode NNTournament(NN net, NNData train)
{
  NNParallel   p    = net->par;
  MPI_Comm     comm = PetscObjectComm((PetscObject)net);
  PetscInt     K = p->K, T = p->D * p->S * p->M, round, *perm, partner = -1, np, nb;
  PetscReal    mine[5], *all = NULL, Lown, Lother = 0;
  PetscBool    adopt = PETSC_FALSE;
  NNRandom     r;
  NNTrainer    tr;
  NNTrainerCursor *cur;
  Vec          theta0, buf0;
  PetscScalar *a, *b;

  PetscFunctionBegin;
  PetscCall(NNGetTrainerCursor(net, &tr, &cur));
  round = cur->step / p->interval;
  PetscCall(PetscLogEventBegin(NN_Tournament, net, 0, 0, 0));
  /* the pairing: a generator seeded by the network's seed and the round, the same on every rank */
  NNRandomSeed(&r, (uint64_t)net->init.seed ^ (0xd1b54a32d192ed03ULL * (uint64_t)(round + 1)));
  PetscCall(PetscMalloc1(K, &perm));
  for (PetscInt i = 0; i < K; i++) perm[i] = i;
  NNRandomShuffle(&r, K, perm);
  for (PetscInt q = 0; q + 1 < K; q += 2) {
    if (perm[q] == p->trainer) partner = perm[q + 1];
    if (perm[q + 1] == p->trainer) partner = perm[q];
  }
  PetscCall(PetscFree(perm));

  PetscCall(NNEvaluateRange(net, train, p->tcomm, p->tour0, p->tsamples, &Lown, NULL));
  if (partner >= 0) { /* rank i of one trainer swaps models with rank i of the other */
    PetscMPIInt peer = (PetscMPIInt)(partner * T + (p->rank - p->trainer * T));
    PetscCall(VecGetSize(net->theta, &np));
    PetscCall(VecGetSize(net->buf, &nb));
    PetscCall(VecDuplicate(net->theta, &theta0));
    PetscCall(VecDuplicate(net->buf, &buf0));
    PetscCall(VecCopy(net->theta, theta0));
    PetscCall(VecCopy(net->buf, buf0));
    PetscCall(VecGetArray(theta0, &a));
    PetscCall(VecGetArray(net->theta, &b));
    PetscCallMPI(MPI_Sendrecv(a, (PetscMPIInt)np, MPIU_SCALAR, peer, 0, b, (PetscMPIInt)np, MPIU_SCALAR, peer, 0, comm, MPI_STATUS_IGNORE));
    PetscCall(VecRestoreArray(net->theta, &b));
    PetscCall(VecRestoreArray(theta0, &a));
    if (nb) {
      PetscCall(VecGetArray(buf0, &a));
      PetscCall(VecGetArray(net->buf, &b));
      PetscCallMPI(MPI_Sendrecv(a, (PetscMPIInt)nb, MPIU_SCALAR, peer, 1, b, (PetscMPIInt)nb, MPIU_SCALAR, peer, 1, comm, MPI_STATUS_IGNORE));
      PetscCall(VecRestoreArray(net->buf, &b));
      PetscCall(VecRestoreArray(buf0, &a));
    }
    PetscCall(NNEvaluateRange(net, train, p->tcomm, p->tour0, p->tsamples, &Lother, NULL));
    adopt = (PetscBool)(Lother < Lown); /* the same decision on every rank of the trainer: the losses are reduced over it */
    if (!adopt) {
      PetscCall(VecCopy(theta0, net->theta));
      PetscCall(VecCopy(buf0, net->buf));
    }
    PetscCall(VecDestroy(&theta0));
    PetscCall(VecDestroy(&buf0));
  }

  /* the outcome, printed by the first rank in trainer order */
  mine[0] = p->trainer;
  mine[1] = partner;
  mine[2] = Lown;
  mine[3] = Lother;
  mine[4] = adopt;
  if (!p->rank) PetscCall(PetscMalloc1(5 * p->size, &all));
  PetscCallMPI(MPI_Gather(mine, 5, MPIU_REAL, all, 5, MPIU_REAL, 0, comm));
  if (tr->monitor && !p->rank) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "Tournament %" PetscInt_FMT " after step %" PetscInt_FMT ":\n", round, cur->step));
    for (PetscInt t = 0; t < K; t++) {
      const PetscReal *o = all + 5 * t * T;
      if (o[1] < 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "  trainer %" PetscInt_FMT " sits out (tournament loss %.4f)\n", t, (double)o[2]));
      else if (o[4] > 0) PetscCall(PetscPrintf(PETSC_COMM_SELF, "  trainer %" PetscInt_FMT " vs trainer %d: tournament loss %.4f (own) vs %.4f: adopts trainer %d's model\n", t, (int)o[1], (double)o[2], (double)o[3], (int)o[1]));
      else PetscCall(PetscPrintf(PETSC_COMM_SELF, "  trainer %" PetscInt_FMT " vs trainer %d: tournament loss %.4f (own) vs %.4f: keeps its own model\n", t, (int)o[1], (double)o[2], (double)o[3]));
    }
  }
  PetscCall(PetscFree(all));
  p->ntour++;
  PetscCall(PetscLogEventEnd(NN_Tournament, net, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* this trainer's training samples and tournament set: trainer t owns the rows of its ranks in the
   distributed data set; every trainer trains on as many samples as the smallest part minus the
   tournament set */
PetscErrorCode NNParallelSetPartition(NN net, NNData d)
{
  NNParallel p = NULL;
  PetscInt   N, lo, hi, nmin;
  MPI_Comm   comm = PetscObjectComm((PetscObject)net);

  PetscFunctionBegin;
  PetscCall(NNParallelGet(net, &p));
  PetscCall(NNDataGetNumSamples(d, &N));
  if (p->K == 1) {
    p->sample0 = 0;
    p->ntrain  = N;
    p->tour0   = N;
    PetscFunctionReturn(0);
  }
  PetscCheck(p->tsamples > 0, comm, PETSC_ERR_ARG_WRONGSTATE, "Tournament training with %" PetscInt_FMT " trainers needs a tournament set: give -nn_tournament_samples <S> (NNSetTournament())", p->K);
  if (d->distributed) {
    PetscInt r0 = p->trainer * p->D * p->S * p->M, r1 = r0 + p->D * p->S * p->M;
    PetscMPIInt dsize;
    PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)d), &dsize));
    PetscCheck(dsize == p->size, comm, PETSC_ERR_ARG_INCOMP, "Tournament training needs the training data on the network's communicator (%d ranks), not on %d", p->size, dsize);
    lo = (PetscInt)(((PetscInt64)N * r0) / dsize);
    hi = (PetscInt)(((PetscInt64)N * r1) / dsize);
  } else { /* every rank holds everything: split it the same way */
    lo = (PetscInt)(((PetscInt64)N * p->trainer) / p->K);
    hi = (PetscInt)(((PetscInt64)N * (p->trainer + 1)) / p->K);
  }
  nmin = hi - lo;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nmin, 1, MPIU_INT, MPI_MIN, comm));
  PetscCheck(nmin > p->tsamples, comm, PETSC_ERR_ARG_OUTOFRANGE, "Each of the %" PetscInt_FMT " trainers holds at least %" PetscInt_FMT " training samples, too few for a tournament set of -nn_tournament_samples %" PetscInt_FMT, p->K, nmin, p->tsamples);
  p->sample0 = lo;
  p->ntrain  = nmin - p->tsamples;
  p->tour0   = hi - p->tsamples;
  PetscFunctionReturn(0);
}
