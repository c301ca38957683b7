/*
   The replay buffer data set (NNDATABUFFER, src/data/impls/buffer): a ring of capacity samples. Each rank
   keeps its own part of every sample: a whole sample for sequential pushes, its piece of the DMDA Vec for
   pushes of a simulation's state. Slots fill from 0; once full, the oldest slot (head) is overwritten.
*/
#pragma once
#include <petnn/private/nnimpl.h>

/* "replay buffer" in messages, with the buffer's options prefix when it has one: "%s" of NNBufferName() */
#define NNBufferName(d) (((PetscObject)(d))->prefix ? ((PetscObject)(d))->prefix : "")
#define NNBufferSep(d)  (((PetscObject)(d))->prefix ? " " : "")

typedef struct {
  PetscInt    capacity;       /* K: slots */
  PetscBool   replacement;    /* draws with replacement (-data_buffer_replacement) */
  PetscInt64  seed;           /* -data_buffer_seed: the draws' generator (mixed with the data group) */
  PetscBool   seeded;         /* the generator was seeded (at the first draw) */
  NNRandom    rng;
  PetscInt    count, head;    /* slots in use, the next slot written */
  PetscInt64  pushed;         /* samples ever pushed */
  PetscInt    xsize, ysize;   /* local entries of one input and one target (0: no push yet) */
  PetscBool   xdm, ydm;       /* the pushes are DMDA Vecs (pieces) or sequential (whole samples) */
  PetscInt    xglobal, yglobal; /* their global sizes */
  PetscScalar *x, *y;         /* [capacity][xsize], [capacity][ysize] */
  /* NNDataBufferTSMonitor(): the last horizon states, pushed as (u_{n-h}, u_n) pairs */
  PetscInt    horizon;
  Vec        *hist;
  PetscInt    nhist, laststep;
} NNData_Buffer;

/* n slot indices drawn as NNTrainStepBuffer() draws them, the generator seeded for data group g on first use */
PETSC_INTERN PetscErrorCode NNDataBufferDraw_Private(NNData, PetscInt, PetscInt, PetscInt[]);
/* samples idx[0..n) into batch-layout arrays with nb slots: pieces (c entries per point, dof nb * c) or whole samples */
PETSC_INTERN PetscErrorCode NNDataBufferFill_Private(NNData, PetscInt, const PetscInt[], PetscInt, PetscInt, PetscInt, PetscScalar *, PetscScalar *);

/* what checkpoints store of a buffer: every rank's part, gathered on rank 0 of a communicator */
#define NN_BUFFER_HEADER 11 /* capacity, count, head, pushed, seeded, xsize, ysize, xglobal, yglobal, xdm, ydm */
typedef struct {
  PetscMPIInt  size;
  int64_t     *header; /* [size][NN_BUFFER_HEADER] */
  uint64_t    *rng;    /* [size][4] */
  PetscScalar *x, *y;  /* the slots in use, rank after rank */
  PetscInt     nx, ny;
} NNBufferImage;
PETSC_INTERN PetscErrorCode NNDataBufferGather_Private(NNData, MPI_Comm, NNBufferImage *);  /* collective; the image on rank 0 */
PETSC_INTERN PetscErrorCode NNDataBufferScatter_Private(NNData, MPI_Comm, NNBufferImage *); /* collective; from rank 0's image */
PETSC_INTERN PetscErrorCode NNBufferImageWrite(int64_t, const NNBufferImage *);
PETSC_INTERN PetscErrorCode NNBufferImageRead(int64_t, const char[], NNBufferImage *, PetscBool *);
PETSC_INTERN PetscErrorCode NNBufferImageFree(NNBufferImage *);
