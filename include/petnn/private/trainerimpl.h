/*
   The trainer (NNTrainer, src/trainer): how a network is trained with its optimizer on minibatches.
   It holds the optimizer, the schedule (epochs, shuffling, the gradient check), the monitors, the
   checkpoint policy and the restart cursor; the network holds the graph, the storage, the generator and the
   process grid, and owns its trainer (NNGetTrainer()).
*/
#pragma once
#include <petnn/private/reducerimpl.h>

#define NN_MAX_MONITORS 8

typedef struct {
  PetscErrorCode (*fn)(NN, PetscInt, PetscInt, PetscReal, void *);
  void *ctx;
  PetscErrorCode (*destroy)(void **);
} NNTrainerMonitor;

typedef struct {
  PetscErrorCode (*fn)(NN, PetscInt, PetscReal, PetscReal, PetscReal, PetscReal, void *);
  void *ctx;
  PetscErrorCode (*destroy)(void **);
} NNTrainerEpochMonitor;

/* what the built-in monitors of src/trainer/interface/trainmonitors.c, trainprogress.c and
   traincurves.c keep: the options and the open CSV file and draw window (rank 0) */
typedef struct {
  PetscInt    steps;                     /* -nn_monitor_steps: progress every so many optimizer steps (0: off) */
  PetscInt    tty;                       /* -nn_monitor_steps_tty: 1 a redrawn bar, 0 plain lines, -1 isatty(stdout) decides */
  PetscBool   bar;                       /* the bar is drawn in this run of NNTrain() */
  char        csv[PETSC_MAX_PATH_LEN];   /* -nn_monitor_csv */
  FILE       *fp;                        /* the open CSV file (rank 0) */
  PetscBool   draw;                      /* -nn_monitor_draw */
  PetscViewer viewer;                    /* its window (rank 0) */
  PetscInt    ncurves;                   /* curves drawn: train loss, test loss, train acc, test acc where known */
  PetscLogDouble dt;                     /* seconds of training in the epoch just done */
} NNTrainerMonitors;

/* where training stands: what a checkpoint stores (by name, src/trainer/interface/checkpointcursor.c)
   so that a restarted run continues bitwise */
typedef struct {
  PetscInt  epoch, step;    /* epochs done, optimizer steps done */
  PetscInt  batch;          /* minibatches done in the current epoch: restarts continue mid-epoch */
  NNRandom  rng_epoch;      /* the network's generator before the current epoch's shuffle (regenerates its permutation) */
  PetscReal epoch_loss;     /* sum over the current epoch's batches so far of mean loss * samples */
  PetscInt  epoch_correct;  /* correctly classified training samples so far in the current epoch */
  PetscInt  ninit;          /* the network's parameter initialization it belongs to (NNTrainerSyncCursor()) */
} NNTrainerCursor;

struct _p_NNTrainer {
  PETSCHEADER(int);
  NN        net; /* borrowed: the network owns its trainer */
  NNOpt     opt;     /* set up on the network's parameters whenever they are initialized anew */
  PetscInt  optinit; /* the network's initialization the optimizer was set up for (0: none) */
  PetscInt  epochs;
  PetscBool monitor, shuffle;
  PetscBool gradcheck;
  PetscReal gradcheck_tol;
  /* checkpoint policy: the file, every so many epochs, steps or seconds */
  char      checkpoint[PETSC_MAX_PATH_LEN];
  PetscInt  checkpoint_every, checkpoint_steps;
  PetscReal checkpoint_seconds;
  PetscInt         nmonitors; /* NNTrainerMonitorSet(): called after every optimizer step */
  NNTrainerMonitor monitors[NN_MAX_MONITORS];
  PetscInt              nepochmonitors; /* NNTrainerEpochMonitorSet(): called after every epoch */
  NNTrainerEpochMonitor epochmonitors[NN_MAX_MONITORS];
  NNTrainerMonitors     mon;            /* the built-in progress, CSV and draw monitors */
  NNTrainerCursor  cursor;
  /* online training (NNTrainStep(), src/trainer/interface/trainstep.c) */
  struct {
    PetscInt       steps_per_epoch; /* -nn_steps_per_epoch: NNTrainStep() calls that make an epoch (0: one endless epoch) */
    PetscInt       samples;         /* samples of the current epoch's steps (its mean loss) */
    PetscLogDouble tck, tepoch;     /* time of the last checkpoint, start of the current epoch (0: not yet) */
    Vec            xs, ts;          /* a single spatial sample staged into the network's batch layout */
    NNData         buffer;          /* NNSetTrainBuffer(): the replay buffer NNTrainStepBuffer() draws from, in checkpoints */
    Vec            xb, tb;          /* the minibatch drawn from it, in the network's batch layout */
    PetscInt      *idx;             /* its slots */
  } online;
};

/* the network's trainer with its cursor current (zeroed when the parameters were initialized anew) */
PETSC_INTERN PetscErrorCode NNGetTrainerCursor(NN, NNTrainer *, NNTrainerCursor **);

/* the restart cursor as checkpoints store it, entry by entry under its dataset name
   (src/trainer/interface/checkpointcursor.c) */
#define NN_CURSOR_NENTRIES 7
typedef struct {
  uint64_t  rng[4], rng_epoch[4]; /* rng/state, rng/epoch_state */
  int64_t   epoch, step, batch, epoch_correct; /* training/... */
  PetscReal epoch_loss;
  PetscBool found[NN_CURSOR_NENTRIES]; /* which entries the file holds */
} NNCheckpointCursor;
PETSC_INTERN PetscErrorCode NNCheckpointWriteCursor(NN, int64_t);
PETSC_INTERN PetscErrorCode NNCheckpointReadCursor(NN, int64_t, const char[], NNCheckpointCursor *);
PETSC_INTERN PetscErrorCode NNCheckpointApplyCursor(NN, const NNCheckpointCursor *);

/* the training loop (src/trainer/interface/trainloop.c, trainmonitor.c) */
typedef struct {
  NNTrainer        tr;
  NNTrainerCursor *cur;
  NNData          train, test;
  PetscInt        B, N, nbatches, k;   /* global batch, training samples, batches per epoch, outputs per sample */
  Vec             x, t;                /* this group's shard of a batch */
  PetscInt       *perm, *idx;          /* the epoch's permutation, the shard's sample indices */
  PetscReal      *v;                   /* the per-step reduction (NNTrainStepReduce()) */
  PetscInt        nv;
  PetscLogDouble  tck;                 /* time of the last checkpoint */
  PetscLogDouble  exposed0, block0, wait0, early0; /* communication times at the last monitor line */
  PetscLogDouble  tepoch;              /* when the current epoch started in this run (-nn_monitor_steps) */
  PetscInt        batch0;              /* the batch it started from in this run */
  PetscBool       devstep;             /* parameters, gradient and optimizer steps stay on the device (NNTrainDeviceResident()) */
} NNTrainLoop;

typedef struct {
  PetscInt       n, m, bad;            /* samples of the global batch, of this group's shard, first bad sample (-1) */
  PetscReal      L, correct;           /* this shard's mean loss and correctly classified samples */
  PetscLogDouble tc;                   /* this group's compute time */
} NNTrainStepInfo;

PETSC_INTERN PetscErrorCode NNTrainEpochs(NN, NNTrainLoop *);
/* one online step on m samples of this data group in the network's batch layout (src/trainer/interface/trainstep.c) */
PETSC_INTERN PetscErrorCode NNTrainStepBatch_Private(NN, PetscInt, Vec, Vec, PetscBool, PetscReal *);
PETSC_INTERN PetscErrorCode NNTrainerMonitorStep(NNTrainer, PetscInt, PetscInt, PetscReal); /* calls every step monitor */
PETSC_INTERN PetscErrorCode NNTrainMonitorEpoch(NN, NNTrainLoop *, PetscInt, PetscLogDouble);
/* the built-in monitors and the epoch monitors (src/trainer/interface/trainmonitors.c, trainprogress.c, traincurves.c) */
PETSC_INTERN PetscErrorCode NNTrainerMonitorsSetFromOptions_Private(NNTrainer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNTrainerMonitorsDestroy_Private(NNTrainer);
PETSC_INTERN PetscBool      NNTrainerHasEpochMonitors(NNTrainer);
PETSC_INTERN PetscErrorCode NNTrainerMonitorEpochCall(NNTrainer, PetscInt, PetscReal, PetscReal, PetscReal, PetscReal, PetscLogDouble);
PETSC_INTERN PetscErrorCode NNTrainMonitorProgress(NN, NNTrainLoop *, PetscInt);
PETSC_INTERN PetscErrorCode NNEvaluateMonitorProgress(NN, PetscInt, PetscInt, PetscLogDouble);
PETSC_INTERN PetscErrorCode NNTrainerMonitorCurves(NN, PetscInt, PetscReal, PetscReal, PetscReal, PetscReal, void *);
PETSC_INTERN PetscErrorCode NNTrainerMonitorCurvesClose(NNTrainer);
PETSC_INTERN PetscErrorCode NNTrainStop(NN, NNData, PetscInt, const char[]);
PETSC_INTERN PetscInt       NNCountCorrect(PetscInt, PetscInt, const PetscScalar *, const PetscScalar *);

/* tournaments, evaluation, load balancing (src/trainer/interface/tournament.c, train.c, balance.c) */
PETSC_INTERN PetscErrorCode NNParallelSetPartition(NN, NNData);
PETSC_INTERN PetscErrorCode NNTournament(NN, NNData);
PETSC_INTERN PetscErrorCode NNEvaluateRange(NN, NNData, MPI_Comm, PetscInt, PetscInt, PetscReal *, PetscReal *);
PETSC_INTERN PetscInt       NNParallelBatchCapacity(NNParallel, PetscInt);
PETSC_INTERN PetscErrorCode NNParallelBalanceBegin(NN, PetscInt);
PETSC_INTERN void           NNParallelStepShard(NNParallel, PetscInt);
PETSC_INTERN PetscInt       NNParallelBalanceSlots(NNParallel);
PETSC_INTERN void           NNParallelBalancePut(NNParallel, PetscReal *, PetscLogDouble);
PETSC_INTERN void           NNParallelBalanceUpdate(NNParallel, const PetscReal *, PetscInt);
