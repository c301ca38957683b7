/* Private implementation structs of PetNN objects. Layer, optimizer and data-set types include this. */
#pragma once

#include <petnn.h>

/* the end of the -help line of an option that needs SLEPc */
#if defined(PETNN_HAVE_SLEPC)
  #define NN_SLEPC_NOTE "(SLEPc: built in)"
#else
  #define NN_SLEPC_NOTE "(needs SLEPc: this PetNN was built without it)"
#endif
#include <petsc/private/petscimpl.h>
#include <petscdmda.h>
#include <stdint.h>

/* ---------------------------------------------------------------- random numbers
   xoshiro256** with splitmix64 seeding: a 32-byte state that checkpoints can store, so a
   restarted run draws exactly the numbers an uninterrupted one would. */
typedef struct _n_NNRandom {
  uint64_t s[4];
} NNRandom;

PETSC_INTERN void      NNRandomSeed(NNRandom *, uint64_t);
PETSC_INTERN uint64_t  NNRandomNext(NNRandom *);
PETSC_INTERN PetscReal NNRandomUniform(NNRandom *); /* [0,1) with 53 random bits */
PETSC_INTERN void      NNRandomMask(NNRandom *, PetscInt, PetscReal, PetscReal, PetscBool, void *); /* u >= p ? a : 0, n draws */
PETSC_INTERN void      NNRandomShuffle(NNRandom *, PetscInt, PetscInt[]);
PETSC_INTERN void      NNRandomSkip(NNRandom *, PetscInt64); /* advances by k draws */

/* ---------------------------------------------------------------- collective errors (src/sys/collective.c) */
/* every rank raises the error of the first rank with a nonzero code, with its message */
PETSC_INTERN PetscErrorCode NNCollectiveError(MPI_Comm, PetscErrorCode, PetscBool, const char[]);
PETSC_INTERN PetscErrorCode NNCollectiveCheck(MPI_Comm, PetscErrorCode, PetscBool, const char[], const char[]);

/* ---------------------------------------------------------------- log events */
PETSC_EXTERN PetscLogEvent NN_Forward, NN_Backward, NN_Loss, NN_OptStep, NN_DataLoad, NN_Checkpoint, NN_Predict, NN_TrainStep;
/* events of the parallel machinery, registered on first use (src/sys/collective.c) */
PETSC_EXTERN PetscLogEvent NN_AllreduceLaunch, NN_AllreduceWait, NN_Allgather, NN_DataExchange, NN_Broadcast, NN_Tournament, NN_PartGather, NN_PartReduce;
PETSC_INTERN PetscErrorCode NNParallelRegisterEvents(void);

/* ---------------------------------------------------------------- layers (layerimpl.h) */
#include <petnn/private/layerimpl.h>

PETSC_INTERN PetscErrorCode NNTypeListString(PetscFunctionList, size_t, char[]);
PETSC_INTERN PetscErrorCode NNLogEventRegister(const char[], PetscClassId, PetscLogEvent *); /* not collective: src/sys/logevent.c */

/* ---------------------------------------------------------------- losses */
/* NNLossOps and NNLossRegister() are public (petnn.h); types in src/loss/impls/<name>/ */
PETSC_INTERN PetscErrorCode NNLossGetOps(NNLossType, NNLossOps *);
PETSC_INTERN PetscErrorCode NNLossSetUpOps(NNLossType, NNLossOps *); /* NNLossGetOps() keeping the type's parameters (src/loss/interface/losseval.c) */
PETSC_INTERN PetscErrorCode NNLossEvaluateBlock(const NNLossOps *, MPI_Comm, PetscInt, PetscInt, const NNLossBlock *, PetscReal *, PetscScalar *);
/* src/nn/interface/nnsetup.c: frees act[] and dact[], also those a failed set-up left partly made */
PETSC_INTERN PetscErrorCode NNDestroyActivationVecs(NN);
PETSC_EXTERN PetscErrorCode NNLossCheckTargets(NNLossType, PetscInt, PetscInt, const PetscScalar *);

/* ---------------------------------------------------------------- optimizers */
/* a network's parameters on its device (src/nn/interface/nndevice.c), for the optimizers' device steps: n local
   parameters in double (the master copy), the float copy the passes read in single precision (NULL in double: they
   read master), and the gradient of the last backward pass in the precision of the passes */
typedef struct {
  PetscInt    n;
  PetscBool   single;
  double     *master;
  float      *work;
  const void *grad;
} NNDeviceParameters;

typedef struct _NNOptOps *NNOptOps;
struct _NNOptOps {
  PetscErrorCode (*setfromoptions)(NNOpt, NNOptionItems );
  PetscErrorCode (*setup)(NNOpt, Vec); /* create state vectors shaped like the parameters */
  PetscErrorCode (*step)(NNOpt, PetscReal, Vec, Vec);
  /* the step on the device (set by types with device kernels, built with PETNN_HAVE_CUDA): the parameters of the
     network's device copy, the state in the device arrays state[] (double, in the order of the state Vecs) */
  PetscErrorCode (*stepdevice)(NNOpt, PetscReal, const NNDeviceParameters *, void *const[]);
  PetscErrorCode (*view)(NNOpt, PetscViewer);
  PetscErrorCode (*destroy)(NNOpt);
};

#define NN_OPT_MAX_STATE 3

struct _p_NNOpt {
  PETSCHEADER(struct _NNOptOps);
  PetscReal lr0, lr, weight_decay;
  char      schedule[16];
  PetscInt  step_size; /* step schedule: decay every step_size epochs */
  PetscReal gamma;     /* step schedule factor */
  PetscInt  tmax;      /* cosine period in epochs (0: number of training epochs) */
  PetscReal lr_min;
  PetscInt  nsteps;    /* optimizer steps taken (Adam bias correction) */
  /* state vectors, each the size of the parameter Vec, named as in PyTorch's optimizer state */
  PetscInt  nstate;
  Vec       state[NN_OPT_MAX_STATE];
  char      statename[NN_OPT_MAX_STATE][32];
  PetscBool setupcalled;
  void     *data;
  /* the device copies of the state (src/opt/interface/optdevice.c): made on the first device step from the Vecs;
     newer: they hold the newest state (NNOptDeviceSyncHost() copies it into the Vecs); hoststate: the Vecs' object
     states when last copied, so that a state changed on the host (a checkpoint loaded) is uploaded again */
  struct {
    void            *state[NN_OPT_MAX_STATE];
    PetscObjectState hoststate[NN_OPT_MAX_STATE];
    PetscInt         n;
    PetscBool        newer;
    PetscInt         steps; /* steps taken on the device */
  } dev;
};

PETSC_INTERN PetscErrorCode NNOptAddState(NNOpt, Vec, const char[]);
/* the step on the network's device (the parameters and gradient of its device copy), its state copied back into the
   state Vecs by NNOptDeviceSyncHost(); NNOptHasDeviceStep(): the type has a device step */
PETSC_EXTERN PetscErrorCode NNOptStepDevice(NNOpt, NN);
PETSC_INTERN PetscBool      NNOptHasDeviceStep(NNOpt);
PETSC_INTERN PetscErrorCode NNOptDeviceSyncHost(NNOpt);
PETSC_INTERN PetscErrorCode NNOptDeviceReset(NNOpt);
PETSC_INTERN PetscErrorCode NNOptSetFromOptions_Private(NNOpt, NNOptionItems );
PETSC_INTERN PetscErrorCode NNOptStepRange(NNOpt, PetscInt, PetscInt, Vec, const PetscScalar[]); /* a step on a slice of the parameters */

/* ---------------------------------------------------------------- data sets */
typedef struct _NNDataOps *NNDataOps;
struct _NNDataOps {
  PetscErrorCode (*setfromoptions)(NNData, NNOptionItems );
  PetscErrorCode (*setup)(NNData); /* read the files; set nsamples, shape, ntarget */
  /* copy samples idx[0..n) into x ([n][size(shape)]) and t ([n][ntarget]) */
  PetscErrorCode (*getbatch)(NNData, PetscInt, const PetscInt[], PetscScalar *, PetscScalar *);
  PetscErrorCode (*view)(NNData, PetscViewer);
  PetscErrorCode (*destroy)(NNData);
};

PETSC_INTERN PetscErrorCode NNDataCopySamples(NNData, const PetscScalar *, const PetscScalar *, PetscInt, const PetscInt[], PetscScalar *, PetscScalar *);

struct _p_NNData {
  PETSCHEADER(struct _NNDataOps);
  PetscInt  nsamples, maxsamples, ntarget;
  NNShape   shape;
  char     *filename; /* the main file (binary, HDF5); IDX uses its own pair */
  PetscBool setupcalled;
  void     *data;
  /* distributed data sets (src/data/interface/data.c): rank r of the data set's communicator holds the contiguous
     rows [rstart, rend) in memory and serves them to the other ranks; getbatch gets local row
     indices (global index - rstart). Not distributed: every rank holds all rows, rstart = 0. */
  PetscBool distribute;  /* option -data_distribute: split the rows over the ranks (default) */
  PetscBool distributed; /* set up distributed (more than one rank and distribute) */
  PetscInt  rstart, rend;
  PetscInt  badsample;   /* first sample of the last batch with a NaN/Inf feature or target, -1 if none */
};

/* data sets: set the total number of samples and the rows this rank reads (types call it in setup) */
PETSC_INTERN PetscErrorCode NNDataSetSizes_Private(NNData, PetscInt);
/* gathers samples idx[0..n) (global indices) exchanging rows over xcomm, a communicator whose ranks own
   all the requested rows; collective on xcomm when the data set is distributed, n may be 0 */
PETSC_INTERN PetscErrorCode NNDataGetBatchOn(NNData, MPI_Comm, PetscInt, const PetscInt[], Vec, Vec);
PETSC_INTERN PetscErrorCode NNDataGetOwner(NNData, PetscInt, PetscMPIInt *);
/* fetches rows idx[0..n) (global indices) from their owners among xcomm's ranks (src/data/interface/dataexchange.c) */
PETSC_INTERN PetscErrorCode NNDataExchange(NNData, MPI_Comm, PetscInt, const PetscInt[], PetscScalar *, PetscScalar *);

/* ---------------------------------------------------------------- networks */
typedef struct _n_NNParallel *NNParallel;
/* Callbacks of the backward pass (NNSetBackwardCallbacks()): NNLossGradient() calls begin after the
   loss with its value; begin sets the factor (initially 1) NNLossGradient() then scales dL/dy by, wherever dL/dy
   is (host Vec or device array), layerdone(net, i, g) after top-level
   layer i's backward pass, when that layer's part of the gradient array g is final, and done(net, g)
   after the whole backward pass, g still held. Data-parallel training sums finished slices of the
   gradient across data groups in them (src/reducer/interface/dataparallel.c). */
typedef struct {
  PetscErrorCode (*begin)(NN, PetscReal, PetscReal *, void *);
  PetscErrorCode (*layerdone)(NN, PetscInt, PetscScalar *, void *);
  PetscErrorCode (*done)(NN, PetscScalar *, void *);
  void *ctx;
  /* with the parameters resident on the device (NNDeviceSetResident()): layerdone with the device gradient array (in
     the precision of the passes), which then stays there; NULL: the gradient comes to the host for layerdone */
  PetscErrorCode (*layerdonedevice)(NN, PetscInt, void *, void *);
} NNBackwardCallbacks;

/* creates the network's trainer (src/trainer) and reads its options: the package registers it
   (src/sys/dlregis.c), so NNSetFromOptions() configures the trainer without src/nn calling into src/trainer */
PETSC_INTERN PetscErrorCode (*NNTrainerConstructor)(NN);

struct _p_NN {
  PETSCHEADER(int);
  /* the graph */
  NNShape   inshape;
  PetscInt  nlayers;
  NNLayer  *layers; /* in the order they run (NNSetUp(): src/nn/interface/nnreorder.c), the inserted repartitions included */
  struct {
    NNLayer *layers;   /* in the order they were added */
    PetscInt n;        /* how many: nlayers less the repartitions NNSetUp() inserted */
    PetscInt capacity; /* of added.layers; layers holds 2 * capacity (a repartition before each) */
  } added;
  /* repartitions NNSetUp() inserts where a layer cannot take the spatial (DMDA) activation before it
     (src/nn/interface/nnrepartition.c): spatial_flatten layers named "<consumer>_repartition", owned here */
  struct {
    PetscBool on;        /* -nn_auto_repartition, NNSetAutoRepartition() */
    PetscInt  n, capacity;
    NNLayer  *layers;
    NNLayer  *consumer;  /* the layer each one feeds (borrowed) */
    PetscBool *used;     /* inserted by the current set-up */
  } repart;
  struct {
    PetscBool poolfirst; /* NNSetPoolBeforeActivation() */
    PetscInt  nmoved;    /* ReLUs NNSetUp() moved behind the max pooling after them */
  } reorder;
  char      loss[32];
  NNLossOps lossops;
  PetscInt  nbatch; /* batch capacity = minibatch size */
  NNRandom  rng;    /* initialization, shuffling, dropout */
  struct {
    PetscInt64 seed;   /* -nn_seed: the generator's state at every initialization */
    PetscBool  reinit; /* the next NNSetUp() initializes parameters; false when only the batch size changed */
    PetscInt   count;  /* initializations so far: the trainer's restart cursor belongs to one */
  } init;
  PetscBool training, setupcalled, setfromoptionscalled;

  /* storage */
  Vec       theta, dtheta, buf; /* parameters, gradient, buffers (sequential: this rank's pieces, see part) */
  /* model parallelism (src/nn/interface/nnpartition.c): with layers whose tensors are split over the layer
     communicator (-<layer>_partition), theta holds the whole tensors of the other layers (the same on
     every rank of the group) and this rank's pieces of the split ones; np, nb are the sizes of the full
     layout (as on one rank) that checkpoints gather to */
  struct {
    PetscBool on;
    PetscInt  np, nb;
  } part;
  PetscBool dthetazero;         /* dtheta is known to be zero: the next NNLossGradient() need not zero it */
  PetscInt  nact;               /* number of activation Vecs (nlayers + 1 at the last set up) */
  Vec      *act;                /* act[0] input, act[i+1] output of layer i */
  Vec      *dact;               /* gradients of the activations */
  /* single precision (-nn_precision single, src/nn/interface/nnprecision.c): float copies of the activations and
     their gradients beside act[] and dact[] (which hold the double values at boundaries: the input, the loss,
     layers without single-precision passes), the float working copy of the parameters, and a float gradient */
  struct {
    NNPrecision      type;
    float          **act, **dact;  /* [nact] */
    PetscInt        *len;          /* [nact] local entries of act[i] */
    float           *theta, *dtheta; /* the parameters, copied at the start of every pass; a layer's float gradient */
    /* graph networks: float twins of graph.scratch, per node whether act[v] (forward) or dact[v] (backward) holds the
       float values too, and 4 * graph.maxio float array arguments of a multi layer's pass */
    PetscInt   nscratch;
    float    **scratch;
    PetscBool *dbl;
    float    **work;
  } prec;
  /* the device (-nn_device cuda, src/nn/interface/nndevice.c): device copies of the activations, their gradients
     and the parameters, in the precision above, made by NNSetUp() (src/nn/interface/nndevice_cuda.c); act[] and dact[]
     hold the double values at the boundaries (the input, the output and its loss gradient, the input gradient) */
  struct {
    NNDevice  type;
    PetscBool tf32;     /* -nn_cuda_tf32: single-precision GEMMs may use TF32 tensor cores */
    PetscBool resident; /* NNDeviceSetResident(): parameters, gradient and optimizer steps stay on the device */
    void     *cuda; /* an NNDeviceCUDA (include/petnn/private/cudaimpl.h), NULL on the CPU */
  } dev;
  struct {
    DM  indm;     /* NNSetInputDM(): the input's DMDA (dof = channels); NULL for sequential input */
    Vec tspatial; /* targets cut to a spatial output's layout */
  } spatial;

  /* graph networks (NNSetType(net, NNTYPEGRAPH), src/nn/interface/nngraph.c): activations are nodes, act[0] the
     input, act[i + 1] output 0 of layer i (so act[nlayers] is the network output, as in a sequential network),
     then the further outputs of multi-output layers (split); layers run in a topological order */
  struct {
    PetscBool  on;
    PetscInt   nnodes;
    PetscInt  *inptr, *in;   /* layer i reads nodes in[inptr[i] .. inptr[i + 1]) */
    PetscInt  *outptr, *out; /* layer i writes nodes out[outptr[i] .. outptr[i + 1]), out[outptr[i]] = i + 1 */
    PetscInt  *order;        /* the layers in the order they run */
    PetscInt  *slot;         /* per input: -1 if its gradient is written into the node's, else the scratch Vec it goes to before it is added */
    PetscInt   nscratch;
    Vec       *scratch;
    PetscInt  *scratchnode; /* the node each scratch Vec has the layout of */
    NNShape   *shape;       /* per node */
    PetscBool *need, *done; /* backward-pass workspace: per node, per layer */
    PetscInt   maxio;       /* the most inputs or outputs of a layer */
    Vec       *work;        /* 4 * maxio Vecs: the arguments of a multi-input pass */
  } graph;

  NNTrainer  trainer; /* NNGetTrainer(): optimizer, schedule, monitors, checkpoint policy, restart cursor (src/trainer) */
  NNParallel par;     /* process grid (trainers x data groups x spatial ranks), src/nn/interface/grid.c */
  /* what a rank computing a shard of a data-parallel step adds to the passes (src/nn/interface/nnpass.c) */
  struct {
    NNBackwardCallbacks backward; /* NNSetBackwardCallbacks(): called during NNLossGradient()'s backward pass */
    PetscInt            rngshard[2]; /* NNSetRandomShard(): samples of other data groups before and after this rank's */
  } pass;
  /* an imported model's parameters (NNLoadONNX(), src/nn/onnx): written over the initialization of every NNSetUp()
     that initializes, so options applied after the import keep them (src/nn/interface/nnimported.c) */
  struct {
    PetscInt      n;
    char        **layer;
    PetscInt     *len;
    PetscScalar **val;
    char         *file; /* the model read (-nn_onnx is read once) */
  } imported;
};
PETSC_INTERN PetscErrorCode NNImportedAddParameters(NN, const char[], PetscInt, const PetscScalar[]);
PETSC_INTERN PetscErrorCode NNImportedApply(NN, PetscScalar[]);
PETSC_INTERN PetscErrorCode NNImportedReset(NN);

/* the passes (src/nn/interface/nnpass.c) */
PETSC_INTERN PetscErrorCode NNSetBackwardCallbacks(NN, const NNBackwardCallbacks *); /* NULL: none */
PETSC_INTERN PetscErrorCode NNSetRandomShard(NN, PetscInt, PetscInt);
PETSC_INTERN PetscErrorCode NNLayerGetRandomDraws(NNLayer, PetscInt *);

/* single precision (src/nn/interface/nnprecision.c; the passes in nnsinglepass.c and, for graph networks, nnsinglegraph.c) */
PETSC_INTERN PetscErrorCode NNPrecisionSetUp(NN);
PETSC_INTERN PetscErrorCode NNPrecisionReset(NN);
PETSC_INTERN PetscErrorCode NNPrecisionView(NN, PetscViewer);
PETSC_INTERN PetscErrorCode NNSingleForwardLayers(NN, PetscInt, Vec);
PETSC_INTERN PetscErrorCode NNSingleBackward(NN, PetscInt, Vec, Vec, PetscScalar *, PetscBool[]);
PETSC_INTERN PetscErrorCode NNSingleGraphForward(NN, PetscInt, Vec);
PETSC_INTERN PetscErrorCode NNSingleGraphBackward(NN, PetscInt, Vec, Vec, PetscScalar *);
PETSC_INTERN PetscErrorCode NNSingleRoundVec(PetscInt, Vec, float *);           /* a double activation rounded in place, its float copy kept */
PETSC_INTERN PetscErrorCode NNSingleVecToFloat(PetscInt, Vec, float *);
PETSC_INTERN PetscErrorCode NNSingleFloatToVec(PetscInt, const float *, Vec);
PETSC_INTERN PetscErrorCode NNSingleLength(NN, PetscInt, PetscInt, Vec, PetscInt *); /* the entries of activation i a pass over n samples uses */
PETSC_INTERN PetscErrorCode NNSingleParameters(NN);                             /* the float parameter copy, made for every pass */
PETSC_INTERN PetscErrorCode NNSingleAddGradient(NNLayer, PetscInt, PetscScalar *);

/* the device (src/nn/interface/nndevice.c; the CUDA parts in nndevice_cuda.c, built with PETNN_HAVE_CUDA) */
PETSC_INTERN PetscErrorCode NNSetFromOptions_Device(NN, NNOptionItems );
PETSC_INTERN PetscErrorCode NNDeviceSetUp(NN);
PETSC_INTERN PetscErrorCode NNDeviceReset(NN);
PETSC_INTERN PetscErrorCode NNDeviceView(NN, PetscViewer);
PETSC_INTERN PetscErrorCode NNDeviceForwardLayers(NN, PetscInt, Vec, PetscBool);
PETSC_INTERN PetscErrorCode NNDeviceForwardLayersEnd(NN);
PETSC_INTERN PetscErrorCode NNDeviceBackward(NN, PetscInt, Vec, Vec, PetscScalar *, PetscBool[]);
/* the loss and dL/dy on the device after NNDeviceForwardLayers() (src/loss/interface/lossdevice_cuda.c): done is
   PETSC_FALSE, and nothing computed, for a loss or output the device does not evaluate (the host does then) */
PETSC_INTERN PetscErrorCode NNDeviceLossEvaluate(NN, PetscInt, Vec, PetscReal *, PetscBool *);
PETSC_INTERN PetscErrorCode NNDeviceScaleOutputGradient(NN, PetscInt, PetscReal);
PETSC_INTERN PetscBool      NNLayerHasDevicePasses(NNLayer);
/* parameters resident on the device (NNTrain() with an optimizer that has a device step, src/trainer/interface/
   trainloop.c): while NNDeviceSetResident() is on, the parameters are uploaded only when the parameter Vec changed on
   the host, the backward pass leaves the gradient on the device (not added into the gradient Vec), and the optimizer
   steps there (NNOptStepDevice(): NNDeviceGetParameters() gives the arrays, NNDeviceParametersUpdated() marks them
   newer than the Vec). Turning it off copies newer parameters into the Vec (NNDeviceSyncHost()). Off, every pass
   uploads the Vec: other ranks may change it without changing its object state (shared-memory data parallelism,
   tournaments). */
PETSC_EXTERN PetscErrorCode NNDeviceSetResident(NN, PetscBool);
PETSC_INTERN PetscErrorCode NNHasSpectralNorm(NN, PetscBool *); /* src/spectral/spectralnormapply.c */
PETSC_INTERN PetscErrorCode NNDeviceGetParameters(NN, NNDeviceParameters *);
PETSC_INTERN PetscErrorCode NNDeviceParametersUpdated(NN);
PETSC_INTERN PetscErrorCode NNDeviceSyncHost(NN);
/* device memory for classes without CUDA sources of their own and for tests (an error in a PetNN built without CUDA);
   the copies wait for the device */
PETSC_EXTERN PetscErrorCode NNDeviceMalloc(size_t, void **);
PETSC_EXTERN PetscErrorCode NNDeviceFree(void **);
PETSC_EXTERN PetscErrorCode NNDeviceCopyToDevice(void *, const void *, size_t);
PETSC_EXTERN PetscErrorCode NNDeviceCopyToHost(void *, const void *, size_t);

/* graph networks (src/nn/interface/nngraph.c) */
PETSC_INTERN PetscErrorCode NNGraphCheckSequential(NN);
PETSC_INTERN PetscErrorCode NNGraphCheckChildren(NN, NNLayer);
PETSC_INTERN PetscErrorCode NNGraphSetUpLayers(NN);
PETSC_INTERN PetscErrorCode NNGraphCreateVecs(NN);
PETSC_INTERN PetscErrorCode NNGraphReset(NN);
PETSC_INTERN PetscErrorCode NNGraphView(NN, PetscViewer);
PETSC_INTERN PetscErrorCode NNGraphForward(NN, PetscInt, Vec);
PETSC_INTERN PetscErrorCode NNGraphBackward(NN, PetscInt, Vec, Vec, PetscScalar *);
/* the wiring the passes share (src/nn/interface/nngraphpass.c): the Vec of node v (the staged input x0 for node 0), a
   node's gradient += a scratch Vec, and the layerdone callbacks once the layers after a parameter slice are done */
static inline Vec NNGraphAct(NN net, PetscInt v, Vec x0)
{
  return v ? net->act[v] : x0;
}
PETSC_INTERN PetscErrorCode NNGraphAddGradient(NN, PetscInt, PetscInt, Vec, Vec);
PETSC_INTERN PetscErrorCode NNGraphLayerDone(NN, PetscInt, PetscInt *, PetscScalar *);

/* the order the layers run in (src/nn/interface/nnreorder.c) */
PETSC_INTERN PetscErrorCode NNReorderLayers(NN);
PETSC_INTERN PetscErrorCode NNViewReordering(NN, PetscViewer);
PETSC_INTERN PetscErrorCode NNResetLayerOrder(NN); /* the added layers in the order added, no repartitions */

/* repartitions inserted between layouts (src/nn/interface/nnrepartition.c) */
PETSC_INTERN PetscErrorCode NNSetUpTopLayer(NN, NNLayer, const NNShape *, const char[]); /* src/nn/interface/nnsetup.c */
PETSC_INTERN PetscErrorCode NNRepartitionBegin(NN);
PETSC_INTERN PetscErrorCode NNRepartitionSetUpLayer(NN, PetscInt, const NNShape *, Vec);
PETSC_INTERN PetscErrorCode NNRepartitionEnd(NN);
PETSC_INTERN PetscErrorCode NNRepartitionDestroy(NN);
PETSC_INTERN PetscErrorCode NNRepartitionView(NN, NNLayer, PetscViewer);
PETSC_INTERN PetscBool      NNIsRepartition(NN, NNLayer);

/* networks with spatial input or output (src/nn/interface/nnspatial.c) */
PETSC_INTERN PetscErrorCode NNStageInput(NN, PetscInt, Vec, Vec *);
PETSC_INTERN PetscErrorCode NNUnstageInputGradient(NN, PetscInt, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode NNLossEvaluate(NN, PetscInt, Vec, Vec, PetscReal *, Vec);
PETSC_INTERN PetscErrorCode NNPredictSpatial(NN, Vec, Vec);

/* model parallelism (src/nn/interface/nnpartition.c) */
PETSC_INTERN PetscErrorCode NNPartitionLayout(NN, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode NNPartitionGather(NN, NNTensorKind, const PetscScalar[], PetscScalar[]);
PETSC_INTERN PetscErrorCode NNPartitionExtract(NN, NNTensorKind, const PetscScalar[], PetscScalar[]);
PETSC_INTERN PetscErrorCode NNPartitionLocalIndex(NN, PetscInt **);
/* the parameters as one distributed Vec (each entry once): TAO with partitioned layers */
typedef struct {
  Vec        g;       /* on the layer communicator */
  VecScatter tolocal; /* g -> a rank's parameter-shaped array */
  PetscInt   nown, *own; /* the local entries this rank owns, in g's order */
} NNPartitionVec;
PETSC_INTERN PetscErrorCode NNPartitionVecCreate(NN, NNPartitionVec *);
PETSC_INTERN PetscErrorCode NNPartitionVecDestroy(NNPartitionVec *);
PETSC_INTERN PetscErrorCode NNPartitionVecFromLocal(NNPartitionVec *, Vec, Vec);
PETSC_INTERN PetscErrorCode NNPartitionVecToLocal(NNPartitionVec *, Vec, Vec);

/* recursive walks over a network's layers (children included, depth first) */
PETSC_INTERN PetscErrorCode NNSetLayerPointers(NN, const PetscScalar *, PetscScalar *, PetscScalar *);
typedef PetscErrorCode (*NNTensorVisitor)(NN, NNLayer, const char *, NNTensor *, void *);
PETSC_INTERN PetscErrorCode NNVisitTensors(NN, NNTensorVisitor, void *);
PETSC_INTERN PetscErrorCode NNVisitTensorsGlobal(NN, NNTensorVisitor, void *); /* full shapes, offsets in the full layout */
PETSC_INTERN PetscInt       NNTensorOffset(NNLayer, const NNTensor *); /* in the network's parameter (or buffer) array */

/* process grid (src/nn/interface/grid.c) */
PETSC_INTERN MPI_Comm       NNGetLayerComm(NN); /* the layers' communicator: the rank's spatial group */
PETSC_EXTERN MPI_Comm       NNGetPartitionComm(NN); /* partitioned layers split their weights over it: the model ranks (or the layer communicator) */
PETSC_INTERN PetscErrorCode NNSetFromOptions_Parallel(NN, NNOptionItems );
PETSC_INTERN PetscErrorCode NNParallelDestroy(NNParallel *);
PETSC_INTERN PetscErrorCode NNParallelView(NN, PetscViewer);

/* HDF5 helpers (rank 0 of the caller does the file work) */
PETSC_INTERN PetscErrorCode NNH5WriteArray(int64_t, const char[], PetscInt, const PetscInt[], const PetscScalar[]);
PETSC_INTERN PetscErrorCode NNH5ReadArray(int64_t, const char[], PetscInt, const PetscInt[], PetscScalar[]);
PETSC_INTERN PetscErrorCode NNH5GetShape(int64_t, const char[], PetscInt *, PetscInt[]); /* dims[] holds NN_H5_MAX_DIM */
#define NN_H5_MAX_DIM 8
PETSC_INTERN PetscErrorCode NNH5WriteInt64(int64_t, const char[], PetscInt, const PetscInt[], const int64_t[]);
PETSC_INTERN PetscErrorCode NNH5ReadInt64(int64_t, const char[], PetscInt, const PetscInt[], int64_t[]);
PETSC_INTERN PetscErrorCode NNH5WriteUInt64(int64_t, const char[], PetscInt, const PetscInt[], const uint64_t[]);
PETSC_INTERN PetscErrorCode NNH5ReadUInt64(int64_t, const char[], PetscInt, const PetscInt[], uint64_t[]);
PETSC_INTERN PetscErrorCode NNH5ReadHyperslab(int64_t, const char[], PetscInt, PetscScalar[]); /* first n rows, any shape */
PETSC_INTERN PetscErrorCode NNH5Exists(int64_t, const char[], PetscBool *);                 /* a link at that path */
PETSC_INTERN PetscErrorCode NNH5IsDataset(int64_t, const char[], PetscBool *);
PETSC_INTERN PetscErrorCode NNH5WriteAttributeString(int64_t, const char[], const char[], const char[]); /* object, name, value */
PETSC_INTERN PetscErrorCode NNH5ReadAttributeString(int64_t, const char[], const char[], size_t, char[], PetscBool *);
PETSC_INTERN PetscErrorCode NNH5OpenRead(const char[], const char[], int64_t *); /* file, what it is (for errors) */
PETSC_INTERN PetscErrorCode NNH5Close(int64_t *);
PETSC_INTERN PetscErrorCode NNH5ErrorMessage(size_t, char[]); /* innermost message of HDF5's error stack */
PETSC_INTERN PetscErrorCode NNH5SilenceErrors(PetscBool); /* PETSC_TRUE: stop HDF5 printing its stack; PETSC_FALSE: restore */
PETSC_INTERN PetscErrorCode NNH5ShapeToString(PetscInt, const PetscInt[], size_t, char[]);
PETSC_INTERN PetscErrorCode NNH5ListRoot(int64_t, size_t, char[]); /* "x (100,4), y (100), grp/" */
/* atomic files (src/sys/atomicfile.c): written to "<file>.tmp.<pid>", committed by a rename */
typedef struct {
  char    tmp[PETSC_MAX_PATH_LEN + 32];
  int64_t fid; /* an HDF5 hid_t */
} NNAtomicFile;
/* src/sys/threads.c: OpenBLAS at one thread during PetNN's threaded passes, and a float GEMM split over threads */
PETSC_INTERN PetscErrorCode NNThreadsBegin(void);
PETSC_INTERN PetscErrorCode NNThreadsEnd(void);
PETSC_INTERN PetscInt       NNThreadsAvailable(void);
PETSC_INTERN PetscErrorCode NNAtomicCreate(const char[], const char[], NNAtomicFile *); /* file, what it is (for errors) */
PETSC_INTERN PetscErrorCode NNAtomicCommit(NNAtomicFile *, const char[], const char[]);
PETSC_INTERN void           NNAtomicAbort(NNAtomicFile *); /* never fails: for error paths */
