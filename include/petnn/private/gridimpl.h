/*
   The process grid of a network (src/nn/interface/grid.c); src/reducer (reducerimpl.h) and
   src/trainer (trainerimpl.h) build on it.

   The network's communicator (size P) is split into K trainers x D data groups x S spatial ranks x
   M model ranks, P = K*D*S*M, in this order of world ranks:  rank = ((trainer*D + group)*S + srank)*M + mrank.
     tcomm  - the D*S*M ranks of one trainer (an independent model; K > 1 only with tournaments)
     scomm  - the S ranks of one data group with the same model rank: the layers' communicator (DMDA
              decomposition of samples)
     dcomm  - the D ranks of a trainer with the same spatial and model rank: the gradient all-reduce
     mcomm  - the M ranks of one group with the same spatial rank (same samples, same subdomain): the
              partition communicator of partitioned layers (model parallelism, NNGetPartitionComm())
   Parameters are replicated on every rank of a trainer, except the pieces of partitioned layers,
   which are the same on the ranks of a trainer with the same model rank.
*/
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt lo, hi;  /* slice of the parameter/gradient array */
  PetscInt trigger; /* top-level layer whose backward pass completes the slice */
} NNBucket;

struct _n_NNParallel {
  PetscInt    K, D, S, M;
  PetscMPIInt size, rank;             /* in the network's communicator */
  PetscMPIInt trainer, group, srank;  /* this rank's trainer, data group within it, rank in its spatial group */
  PetscMPIInt mrank;                  /* this rank's model rank */
  MPI_Comm    tcomm, dcomm, scomm, mcomm;

  NNReducer   reducer;            /* the data groups' gradient sum and optimizer step (src/reducer), NNGetReducer() */

  /* load balancing (src/trainer/interface/balance.c) */
  PetscBool  balance;                 /* -nn_load_balance */
  PetscReal  balance_max;             /* largest shard as a multiple of batch/D */
  PetscReal *speed;                   /* [D] samples per second of each group of this trainer (0: not timed yet) */
  PetscInt   cap;                     /* per-rank batch capacity during training */
  PetscReal  sharemin, sharemax;      /* extreme shares (x D/n) since the last report */

  /* the current training step */
  PetscInt  first, last;              /* this group's shard [first,last) of the global batch */

  /* tournament training */
  PetscInt interval, tsamples;        /* steps between tournaments, tournament-set size per trainer */
  PetscInt ntour;                     /* tournaments held */

  /* this trainer's training samples: global indices sample0 + [0, ntrain); tournament set tour0 + [0, tsamples) */
  PetscInt sample0, ntrain, tour0;
};

PETSC_INTERN PetscErrorCode NNParallelGet(NN, NNParallel *); /* creates the default grid */
PETSC_INTERN void           NNParallelShard(PetscInt, PetscInt, PetscInt, PetscInt *, PetscInt *);
PETSC_INTERN PetscErrorCode NNParallelFileName(NN, const char[], size_t, char[]);
