/*
   The reducer (NNReducer, src/reducer): how the data groups of a trainer sum their gradients and
   take the optimizer step. Types: "mpi" (bucketed MPI_Iallreduce or MPI_Ireduce_scatter launched
   during the backward pass, src/reducer/impls/mpi) and "shm" (the groups' gradients in one MPI
   shared-memory window, src/reducer/impls/shm). The generic part (src/reducer/interface) holds the
   buckets, the sharding of the optimizer step and the timings; it registers the backward-pass
   callbacks of every data-parallel step with the network (NNSetBackwardCallbacks()).
*/
#pragma once
#include <petnn/private/gridimpl.h>

#define NNREDUCERMPI "mpi"
#define NNREDUCERSHM "shm"
#define NNREDUCERNCCL "nccl"

typedef struct _NNReducerOps *NNReducerOps;
struct _NNReducerOps {
  PetscErrorCode (*setup)(NNReducer);                              /* start of training, after the buckets */
  PetscErrorCode (*layerdone)(NNReducer, PetscInt, PetscScalar *); /* after top-level layer i's backward pass (the gradient array) */
  PetscErrorCode (*layerdonedevice)(NNReducer, PetscInt, void *);  /* the same with the gradient on the device (training resident there) */
  PetscErrorCode (*backwarddone)(NNReducer, PetscScalar *);        /* end of the backward pass: the gradient summed */
  PetscErrorCode (*step)(NNReducer);                               /* the optimizer step of every group */
  PetscErrorCode (*gatheroptstate)(NNReducer);                     /* the whole optimizer state on every rank */
  PetscErrorCode (*markbad)(NNReducer);                            /* this group's data or loss are bad: no step */
  PetscErrorCode (*detach)(NNReducer);                             /* the parameter Vec gets a private array (tournament, gradient check) */
  PetscErrorCode (*attach)(NNReducer);                             /* and shares it again */
  PetscErrorCode (*reset)(NNReducer);                              /* end of training */
  PetscErrorCode (*view)(NNReducer, PetscViewer);
  PetscErrorCode (*destroy)(NNReducer);
};

struct _p_NNReducer {
  PETSCHEADER(struct _NNReducerOps);
  NN              net;       /* borrowed: the network's grid owns the reducer */
  NNOpt           opt;       /* borrowed during training: the trainer's optimizer, stepped by sharded types */
  NNAllreduceType artype;    /* -nn_allreduce: auto picks shm when the data groups share a node */
  PetscReal       bucket_mb; /* bucket size in MB; 0: one bucket per layer with parameters */
  PetscBool       shard, shard_set; /* -nn_shard_optimizer; if not set: sharded with the shm type */
  PetscBool       shmused;   /* the shm type served the current or last training */
  PetscBool       fsum;      /* -nn_allreduce_single: the mpi type sums the buckets in float */
  float          *fbuf;      /* and stages them here (the whole gradient's length) */

  /* the current training */
  PetscBool    sharded;      /* the optimizer step split over the data groups (ZeRO stage 1) */
  PetscInt     nbuckets, nlaunched;
  NNBucket    *buckets;      /* in launch order: last layers first */
  MPI_Request *req;
  PetscInt     slo, shi;     /* sharded: this group's slice of the parameters */
  PetscMPIInt *pcount, *pdispl; /* the D slices, for MPI_Allgatherv */
  PetscMPIInt *rcount;       /* [nbuckets][D]: each slice's part of each bucket (MPI_Ireduce_scatter) */
  PetscScalar *gslice;       /* the summed gradient of this group's slice */
  PetscInt    *draws;        /* random numbers each top-level layer draws per sample (dropout) */

  /* the current step */
  PetscInt  n;               /* samples in the global batch */
  PetscReal weight;          /* (last-first)/n: this group's share of the mean gradient */

  /* communication statistics since the start of training */
  PetscLogDouble t_exposed;  /* time inside MPI calls of the all-reduce (launch, test, wait) */
  PetscLogDouble t_block;    /* one blocking MPI_Allreduce of the whole gradient (measured) */
  PetscLogDouble t_wait;     /* shm: part of t_exposed spent waiting for the other groups */
  PetscLogDouble t_early;    /* shm with shared parameters: part of t_exposed spent summing and stepping while another group was still in its backward pass */
  PetscInt       nreduce;    /* steps whose gradient was summed */
  void          *data;
};

PETSC_INTERN PetscErrorCode NNReducerCreate_MPI(NNReducer);
PETSC_INTERN PetscErrorCode NNReducerCreate_Shm(NNReducer);
#if defined(PETNN_HAVE_NCCL)
PETSC_INTERN PetscErrorCode NNReducerCreate_NCCL(NNReducer);
#endif
PETSC_INTERN PetscErrorCode NNReducerShmUsable(NNReducer, PetscBool *); /* all data groups on one node, and the type allows it */
/* the mpi type's pieces the shm type reuses */
PETSC_INTERN PetscErrorCode NNReducerStep_MPI(NNReducer);
PETSC_INTERN PetscErrorCode NNReducerGatherOptState_MPI(NNReducer);

/* data-parallel training steps (src/reducer/interface/dataparallel.c), called by the trainer */
PETSC_INTERN PetscErrorCode NNParallelTrainBegin(NN, NNOpt);
PETSC_INTERN PetscErrorCode NNParallelTrainEnd(NN);
PETSC_INTERN PetscErrorCode NNParallelStepBegin(NN, PetscInt);
PETSC_INTERN PetscErrorCode NNParallelStepEmpty(NN);
PETSC_INTERN PetscErrorCode NNParallelStepEnd(NN);
PETSC_INTERN PetscErrorCode NNParallelOptStep(NN, NNOpt);
PETSC_INTERN PetscErrorCode NNParallelGatherOptState(NN);
PETSC_INTERN PetscErrorCode NNParallelMarkBadStep(NN);       /* this group's data or loss are bad: no optimizer step */
PETSC_INTERN PetscErrorCode NNParallelDetachParameters(NN);  /* a private parameter array for a while (tournament, gradient check) */
PETSC_INTERN PetscErrorCode NNParallelAttachParameters(NN);
