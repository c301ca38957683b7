/*
   Process grid, data-parallel training and tournaments: private to src/nn/interface/grid.c, src/reducer, src/trainer
   and checkpoint.c.

   The network's communicator (size P) is split into K trainers x D data groups x S spatial ranks,
   P = K*D*S, in this order of world ranks:  rank = (trainer*D + group)*S + srank.
     tcomm  - the D*S ranks of one trainer (an independent model; K > 1 only with tournaments)
     scomm  - the S ranks of one data group: the layers' communicator (DMDA decomposition of samples)
     dcomm  - the D ranks of a trainer with the same spatial rank: the gradient all-reduce
   Parameters are replicated on every rank of a trainer.
*/
#pragma once
#include <petnn/private/nnimpl.h>

typedef struct {
  PetscInt lo, hi;  /* slice of the parameter/gradient array */
  PetscInt trigger; /* top-level layer whose backward pass completes the slice */
} NNBucket;

struct _n_NNParallel {
  PetscInt    K, D, S;
  PetscMPIInt size, rank;             /* in the network's communicator */
  PetscMPIInt trainer, group, srank;  /* this rank's trainer, data group within it, rank in its spatial group */
  MPI_Comm    tcomm, dcomm, scomm;

  /* gradient buckets (all-reduced over dcomm during the backward pass) */
  PetscReal    bucket_mb;             /* bucket size in MB; 0: one bucket per layer with parameters */
  PetscInt     nbuckets, nlaunched;
  NNBucket    *buckets;               /* in launch order: last layers first */
  MPI_Request *req;

  /* the shared-memory all-reduce (src/reducer/impls/shm/shm.c) */
  NNAllreduceType artype;             /* -nn_allreduce */
  PetscBool       useshm, shmused;    /* in use now; used by the current or last training */
  PetscBool       shmtheta;           /* the parameters are in the window too, one copy for all groups (sharded optimizer) */
  PetscBool       thetaown;           /* ... but the parameter Vec has its own copy for now (NNShmDetachParameters()) */
  MPI_Comm        shmcomm;            /* dcomm's ranks, when all of them share a node */
  MPI_Win         win;                /* segment g: data group g's gradient (segment 0: then the shared parameters) */
  PetscScalar   **seg;
  MPI_Win         cwin;               /* with shared parameters: the control block (chunk counter, each group's progress) */
  PetscInt64     *ctrl;
  PetscInt64      cbase;              /* the chunk counter's value at the start of this step */
  PetscInt64      cstep;              /* steps reduced so far + 1 (progress values, src/reducer/impls/shm/shm.c) */
  PetscInt        nchunk;             /* chunks of the shared reduction and optimizer step */
  PetscScalar    *gsum;               /* a chunk's summed gradient, for the optimizer step (the segments are zeroed) */

  /* the optimizer step sharded over the data groups (ZeRO stage 1): buckets are reduce-scattered,
     group g updates parameters [slo, shi) and the parameters are all-gathered after the step */
  PetscBool    shard, shard_set;      /* -nn_shard_optimizer; if not set: sharded with the shared-memory all-reduce */
  PetscBool    sharded;               /* in use in the current training (shard and D > 1) */
  PetscInt     slo, shi;
  PetscMPIInt *pcount, *pdispl;       /* the D slices, for MPI_Allgatherv */
  PetscMPIInt *rcount;                /* [nbuckets][D]: each slice's part of each bucket (MPI_Ireduce_scatter) */
  PetscScalar *gslice;                /* the summed gradient of this group's slice */

  /* load balancing (src/trainer/interface/balance.c) */
  PetscBool  balance;                 /* -nn_load_balance */
  PetscReal  balance_max;             /* largest shard as a multiple of batch/D */
  PetscReal *speed;                   /* [D] samples per second of each group of this trainer (0: not timed yet) */
  PetscInt   cap;                     /* per-rank batch capacity during training */
  PetscReal  sharemin, sharemax;      /* extreme shares (x D/n) since the last report */

  /* the current training step */
  PetscInt  n, first, last;           /* samples in the global batch, this group's shard [first,last) */
  PetscReal weight;                   /* (last-first)/n: this group's share of the mean gradient */
  PetscInt *draws;                    /* random numbers each top-level layer draws per sample (dropout) */

  /* communication statistics since the start of training */
  PetscLogDouble t_exposed;           /* time inside MPI calls of the all-reduce (launch, test, wait) */
  PetscLogDouble t_block;             /* one blocking MPI_Allreduce of the whole gradient (measured) */
  PetscLogDouble t_wait;              /* shared memory: part of t_exposed spent waiting for the other groups */
  PetscLogDouble t_early;             /* shared parameters: part of t_exposed spent summing and stepping while another group was still in its backward pass */
  PetscInt       nreduce;             /* steps whose gradient was all-reduced */

  /* tournament training */
  PetscInt interval, tsamples;        /* steps between tournaments, tournament-set size per trainer */
  PetscInt ntour;                     /* tournaments held */

  /* this trainer's training samples: global indices sample0 + [0, ntrain); tournament set tour0 + [0, tsamples) */
  PetscInt sample0, ntrain, tour0;
};

PETSC_INTERN PetscErrorCode NNParallelGet(NN, NNParallel *);                      /* creates the default grid */
PETSC_INTERN void           NNParallelShard(PetscInt, PetscInt, PetscInt, PetscInt *, PetscInt *);
PETSC_INTERN PetscErrorCode NNParallelTrainBegin(NN);
PETSC_INTERN PetscErrorCode NNParallelTrainEnd(NN);
PETSC_INTERN PetscErrorCode NNParallelStepBegin(NN, PetscInt);
PETSC_INTERN PetscErrorCode NNParallelStepEmpty(NN);
PETSC_INTERN PetscErrorCode NNParallelStepEnd(NN);
PETSC_INTERN PetscErrorCode NNParallelOptStep(NN);
PETSC_INTERN PetscErrorCode NNParallelGatherOptState(NN);
PETSC_INTERN PetscErrorCode NNParallelSetPartition(NN, NNData);
PETSC_INTERN PetscErrorCode NNParallelFileName(NN, const char[], size_t, char[]);
PETSC_INTERN PetscErrorCode NNTournament(NN, NNData);


PETSC_INTERN PetscErrorCode NNEvaluateRange(NN, NNData, MPI_Comm, PetscInt, PetscInt, PetscReal *, PetscReal *);
PETSC_INTERN PetscErrorCode NNShmAllreduceSetUp(NN);
PETSC_INTERN PetscErrorCode NNShmAllreduceDestroy(NN);
PETSC_INTERN PetscErrorCode NNShmAllreduceCheck(NN);
PETSC_INTERN PetscErrorCode NNShmAllreduce(NN, PetscLogDouble *, PetscLogDouble *, PetscLogDouble *);
PETSC_INTERN PetscErrorCode NNShmBackwardProgress(NN, PetscInt);
PETSC_INTERN PetscErrorCode NNShmMarkBadStep(NN);
PETSC_INTERN PetscErrorCode NNShmBarrier(NNParallel);
PETSC_INTERN PetscErrorCode NNShmDetachParameters(NN);
PETSC_INTERN PetscErrorCode NNShmAttachParameters(NN);
PETSC_INTERN PetscInt       NNParallelBatchCapacity(NNParallel, PetscInt);
PETSC_INTERN PetscErrorCode NNParallelBalanceBegin(NN, PetscInt);
PETSC_INTERN void           NNParallelStepShard(NNParallel, PetscInt);
PETSC_INTERN PetscInt       NNParallelBalanceSlots(NNParallel);
PETSC_INTERN void           NNParallelBalancePut(NNParallel, PetscReal *, PetscLogDouble);
PETSC_INTERN void           NNParallelBalanceUpdate(NNParallel, const PetscReal *, PetscInt);
