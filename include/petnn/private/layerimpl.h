/* Private implementation of NNLayer: the ops table a layer type fills, the layer struct, the helpers
   types call from their callbacks, and the spatial (DMDA) layout helpers. A layer type written outside
   the library includes this header (examples/custom_layer.c); layers/core/dense.c explains the contract. */
#pragma once

#include <petnn.h>
#include <petsc/private/petscimpl.h>
#include <petscdmda.h>

struct _n_NNRandom; /* NNRandom (nnimpl.h): the network's random-number generator */

/* ---------------------------------------------------------------- layers */
typedef enum {
  NN_TENSOR_PARAM, /* trainable: lives in the network's parameter and gradient Vecs */
  NN_TENSOR_BUFFER /* state such as running statistics: lives in the network's buffer Vec */
} NNTensorKind;

#define NN_MAX_TENSOR_DIM 6 /* conv3d weights are [out, in/groups, kd, kh, kw] */

/* One named tensor of a layer (a state_dict entry such as "weight" with PyTorch shape). */
typedef struct {
  char         name[64];
  NNTensorKind kind;
  PetscInt     ndim;
  PetscInt     dim[NN_MAX_TENSOR_DIM];
  PetscInt     size;
  PetscInt     offset; /* within the layer's slice of the parameter (or buffer) array */
  /* model parallelism (-<layer>_partition): dim[] and size are this rank's piece; a split tensor holds entries
     [start, start + dim[axis]) of its axis, whose full extent is gdim; goffset is its offset in the layer's
     full (unpartitioned) slice. A zeroed NNTensor is whole on every rank. */
  PetscBool    split;
  PetscInt     axis, gdim, start, goffset;
} NNTensor;

#define NN_MAX_TENSORS 8

typedef struct _NNLayerOps *NNLayerOps;
struct _NNLayerOps {
  PetscErrorCode (*setfromoptions)(NNLayer, NNOptionItems );
  /* given inshape and nbatch: set outshape, declare tensors, allocate workspace */
  PetscErrorCode (*setup)(NNLayer);
  /* y = f(x) for the first n samples; keep what backward needs */
  PetscErrorCode (*forward)(NNLayer, PetscInt, const PetscScalar *, PetscScalar *);
  /* dx = f'(x)^T dy (dx may be NULL: not needed); ADD the parameter gradient into dtheta */
  PetscErrorCode (*backward)(NNLayer, PetscInt, const PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *);
  /* optional Vec-level passes for layers whose activations need more than their local array
     (DMDA layouts: halo exchange with DMGlobalToLocal); used instead of forward/backward when set */
  PetscErrorCode (*forwardvec)(NNLayer, PetscInt, Vec, Vec);
  PetscErrorCode (*backwardvec)(NNLayer, PetscInt, Vec, Vec, Vec, Vec);
  /* optional: create the output activation Vec (e.g. a DMDA global Vec); default a sequential Vec of nbatch*size(outshape) */
  PetscErrorCode (*createoutputvec)(NNLayer, Vec *);
  /* initialize parameters (theta) and buffers (buf), drawing from the layer's rng */
  PetscErrorCode (*initialize)(NNLayer);
  PetscErrorCode (*view)(NNLayer, PetscViewer);
  PetscErrorCode (*reset)(NNLayer); /* free workspace made by setup */
  /* random numbers one sample's forward pass draws from the network's generator in training mode
     (dropout: one per entry); not set: none, or for a layer with children the sum of theirs */
  PetscErrorCode (*randomdraws)(NNLayer, PetscInt *);
  PetscErrorCode (*destroy)(NNLayer);
  /* multi-input or multi-output layers (concat, add, split; graph networks only, src/nn/interface/nngraph.c).
     Before setup the network sets l->graph.nin and l->graph.inshapes[] (l->inshape = inshapes[0]); setup sets
     l->outshape, and a type with several outputs also l->graph.nout and l->graph.outshapes[] (PetscMalloc'd,
     freed by the layer). After setup the network sets l->graph.indms[] (NULL entries: sequential inputs) and
     calls createoutputvecs for nout Vecs (their gradients are duplicates). forwardmulti(l, n, nin, x[], nout, y[])
     writes all outputs from the inputs; backwardmulti(l, n, nin, x[], nout, y[], dy[], dx[]) OVERWRITES every
     dx[k] that is not NULL (NULL: that input's gradient is not needed) with dL/dx[k]; the network sums the
     gradients of an activation that several layers read. A type that sets these leaves forward/backward unset. */
  PetscErrorCode (*forwardmulti)(NNLayer, PetscInt, PetscInt, Vec[], PetscInt, Vec[]);
  PetscErrorCode (*backwardmulti)(NNLayer, PetscInt, PetscInt, Vec[], PetscInt, Vec[], Vec[], Vec[]);
  PetscErrorCode (*createoutputvecs)(NNLayer, Vec[]);
  /* optional single-precision passes (-nn_precision single): forward and backward as above on float activations,
     with the float working copy of the parameters l->stheta, ADDING the parameter gradient into the float
     l->sdtheta. A type without them runs in single precision through its double passes on activations
     converted at its boundaries (src/layer/interface/layersingle.c). */
  PetscErrorCode (*forwardsingle)(NNLayer, PetscInt, const float *, float *);
  PetscErrorCode (*backwardsingle)(NNLayer, PetscInt, const float *, const float *, const float *, float *);
  /* the same for the multi-input or multi-output layers of graph networks (forwardmulti, backwardmulti above):
     forwardmultisingle(l, n, nin, x[], xs[], nout, y[], ys[]) and backwardmultisingle(l, n, nin, x[], nout, y[], dys[],
     dxs[]) on the float arrays xs, ys, dys, dxs; the Vecs x[] and y[] give only the layouts (their DMs and local sizes,
     their entries are not to be read); backwardmultisingle OVERWRITES every dxs[k] that is not NULL. A graph network
     in single precision needs them on every multi layer (src/nn/interface/nnprecision.c). */
  PetscErrorCode (*forwardmultisingle)(NNLayer, PetscInt, PetscInt, Vec[], const float *const[], PetscInt, Vec[], float *const[]);
  PetscErrorCode (*backwardmultisingle)(NNLayer, PetscInt, PetscInt, Vec[], PetscInt, Vec[], const float *const[], float *const[]);
  /* optional device passes (-nn_device cuda, src/nn/interface/nndevice_cuda.c): forward and backward as above on device
     arrays whose entries are l->dev.prec (double or float), with the device copy of this layer's parameters l->dev.theta,
     ADDING the parameter gradient into the device array l->dev.dtheta; enqueued on the network's stream
     (NNCUDAGetStream()), not waited for. A type sets them only when built with PETNN_HAVE_CUDA; a network with a layer
     of a type without them does not run on a device (NNSetUp() names the layer and the types that have them). */
  PetscErrorCode (*forwarddevice)(NNLayer, PetscInt, const void *, void *);
  PetscErrorCode (*backwarddevice)(NNLayer, PetscInt, const void *, const void *, const void *, void *);
  /* the same for the multi-input or multi-output layers of graph networks (forwardmulti, backwardmulti above) on
     device arrays: backwardmultidevice OVERWRITES every dx[k] that is not NULL */
  PetscErrorCode (*forwardmultidevice)(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, void *const[]);
  PetscErrorCode (*backwardmultidevice)(NNLayer, PetscInt, PetscInt, const void *const[], PetscInt, const void *const[], const void *const[], void *const[]);
};

struct _p_NNLayer {
  PETSCHEADER(struct _NNLayerOps);
  NNShape   inshape, outshape;
  PetscInt  nbatch;   /* batch capacity */
  PetscBool training; /* train (dropout on, batch statistics) or eval mode */
  PetscBool setupcalled;
  /* the backward pass reads what the layer's last forward pass kept besides its input and output (the statistics of
     the normalizations), so it must follow its own forward pass: an ODE block in float, whose adjoint runs the
     backward passes of all stages after their forward passes, takes its double passes then (ts/ode/odeblock_single.c) */
  PetscBool forwardstate;

  /* tensors and the slices of the network's arrays they live in */
  PetscInt  ntensors;
  NNTensor  tensors[NN_MAX_TENSORS];
  PetscInt  nparam, nbuf; /* sizes of this layer's own slices (children excluded) */
  PetscInt  poff, boff;   /* offsets of the slices in the network's arrays */
  /* model parallelism: the partition (-<layer>_partition), and the sizes and offsets of the slices in the
     full layout (as on one rank: checkpoints, views); equal to nparam, nbuf, poff, boff when nothing is split */
  struct {
    NNLayerPartition type;    /* never NN_PARTITION_SHARD: that is shard below, handled outside the types */
    PetscBool        handled; /* the type's setup took the partition (NNLayerCheckPartition()) */
    /* sharded parameters (-<layer>_partition shard, src/layer/interface/layershard.c): the type sees whole
       tensors; this rank stores 1/P of each along its first axis; a pass gathers them into full (and a
       backward pass sums its parameter gradient in dfull, then keeps this rank's piece) */
    PetscBool          shard;
    PetscScalar       *full, *dfull;
    const PetscScalar *theta0; /* the pointers into the network's arrays during a pass */
    PetscScalar       *dtheta0;
    float             *sfull, *sdfull; /* the same in a float pass (NNLayerShardBeginSingle()) */
    void              *devfull, *devdfull; /* and on the device (NNLayerShardBeginDevice()) */
    const void        *devtheta0;
    void              *devdtheta0;
    const float       *stheta0;
    float             *sdtheta0;
    PetscBool          floatpasses;    /* the type's float passes take its partitions (rows, columns, filters, channels) */
    PetscBool          devicepasses;   /* and its device passes */
    NNTensor          *whole, *pieces; /* [ntensors]: the type's tables (whole, swapped in for its calls) and the pieces */
    PetscInt           npieces;        /* nparam of the pieces */
    MPI_Comm         comm;    /* the ranks the pieces are split over (not owned): set by the network before set-up
                                 (NNGetPartitionComm()); MPI_COMM_NULL: the layer's own (NNLayerGetPartitionComm()) */
    PetscInt         gnparam, gnbuf, gpoff, gboff;
  } part;
  PetscScalar       *dtheta; /* valid during backward */
  const PetscScalar *theta;  /* valid during forward and backward */
  PetscScalar       *buf;    /* valid during forward and backward */
  const float       *stheta;  /* single precision: this layer's slice of the float working copy of the parameters */
  float             *sdtheta; /* and of the float gradient (valid during single-precision passes) */
  struct {                    /* device passes (ops forwarddevice, backwarddevice; valid during them) */
    NNPrecision prec;         /* the entries of the device arrays: double or float */
    PetscBool   tf32;         /* float GEMMs may use TF32 (-nn_cuda_tf32) */
    const void *theta;        /* this layer's slice of the device parameter copy */
    void       *dtheta;       /* and of the device parameter gradient */
    PetscBool   split;        /* the device passes take spatial activations split over ranks (set by the type) */
  } dev;
  /* entries of one sample that the array-level passes (forward, backward) loop over: size(inshape), or for a
     pointwise layer on a spatial (DMDA) activation the rank's local entries per batch slot (set up by
     NNLayerSetUp() and NNLayerSetInputDM(); the layer then gets n = nbatch slots) */
  PetscInt           localsize;
  PetscLogEvent      evfwd, evbwd; /* NNFwd_<type>, NNBwd_<type>: found once by NNLayerSetType(), not on every pass */

  /* nested layers (residual blocks, ODE vector fields) */
  PetscInt  nchildren;
  NNLayer  *children;
  /* the children's slices stored ncopies times (0 or 1: once), copy k at k*pcopy (k*bcopy) entries after
     copy 0, its tensors named "<layer>.<k>.<child>...": ODE blocks with one parameter set per time step.
     The owning type sets ncopies before the network lays out; NNSetUp() sets pcopy and bcopy. */
  PetscInt  ncopies, pcopy, bcopy;

  struct _n_NNRandom *rng; /* the network's generator (dropout masks, initialization): an NNRandom */
  const char *inputname; /* what produces the input (previous layer or "the network input"), for error messages */
  /* graph networks: the inputs the layer names (NNLayerSetInputs(), -<name>_inputs), and for multi-input or
     multi-output layers (ops forwardmulti) the shapes and DMs of their inputs and outputs at set-up */
  struct {
    PetscInt  ninputs;
    char    **inputs;
    PetscInt  nin, nout;
    NNShape  *inshapes, *outshapes;
    DM       *indms;
    char    **innames; /* producers of the inputs, for error messages */
  } graph;
  void     *data;
};

PETSC_INTERN PetscBool      NNLayerIsPointwise(NNLayer); /* no parameters, no children, as many outputs as inputs */
PETSC_INTERN PetscErrorCode NNLayerCheckPointwise(NNLayer);
/* single precision (src/layer/interface/layersingle.c) */
PETSC_INTERN PetscBool      NNLayerHasSinglePasses(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerArraySamples(NNLayer, Vec, PetscInt *);
PETSC_INTERN PetscErrorCode NNLayerForwardSingle(NNLayer, PetscInt, Vec, const float *, float *);
PETSC_INTERN PetscErrorCode NNLayerBackwardSingle(NNLayer, PetscInt, Vec, const float *, const float *, const float *, float *);
PETSC_INTERN PetscBool      NNLayerHasMultiSinglePasses(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerForwardMultiSingle(NNLayer, PetscInt, PetscInt, Vec[], const float *const[], PetscInt, Vec[], float *const[]);
PETSC_INTERN PetscErrorCode NNLayerBackwardMultiSingle(NNLayer, PetscInt, PetscInt, Vec[], PetscInt, Vec[], const float *const[], float *const[]);
/* multi-input/multi-output layers (src/layer/interface/layermulti.c) */
PETSC_INTERN PetscErrorCode NNLayerSetUpMulti(NNLayer, PetscInt, const NNShape[], const char *const[]);
PETSC_INTERN PetscErrorCode NNLayerCreateOutputVecsMulti(NNLayer, const DM[], Vec[]);
PETSC_INTERN PetscErrorCode NNLayerForwardMulti(NNLayer, PetscInt, PetscInt, Vec[], PetscInt, Vec[]);
PETSC_INTERN PetscErrorCode NNLayerBackwardMulti(NNLayer, PetscInt, PetscInt, Vec[], PetscInt, Vec[], Vec[], Vec[]);
PETSC_INTERN PetscErrorCode NNLayerGraphReset(NNLayer); /* frees the graph arrays but the named inputs */
PETSC_INTERN PetscErrorCode NNLayerGraphDestroy(NNLayer);
/* set by the package registration (src/sys/dlregis.c): the layer options and set-up of spectral normalization (src/spectral/spectralnorm.c) */
PETSC_INTERN PetscErrorCode (*NNLayerSetFromOptionsHook)(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode (*NNLayerSetUpHook)(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerSetUpLocalSize(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerGetEvents(const char[], PetscLogEvent *, PetscLogEvent *); /* forward and backward events of a type (-log_view) */
/* a type-specific function (setter, getter) composed on the layers of a type and found by name with
   PetscTryMethod()/PetscUseMethod(); NNLayerComposeFunctions() composes (PETSC_TRUE) or removes a table of them */
typedef struct {
  const char       *name;
  PetscVoidFunction fn;
} NNLayerFunction;
PETSC_EXTERN PetscErrorCode NNLayerComposeFunctions(NNLayer, size_t, const NNLayerFunction[], PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerAddTensor(NNLayer, const char[], NNTensorKind, PetscInt, const PetscInt[]);
/* a tensor of full shape dim[] of which this rank holds entries [start, start + count) along axis (model parallelism) */
PETSC_EXTERN PetscErrorCode NNLayerAddTensorSplit(NNLayer, const char[], NNTensorKind, PetscInt, const PetscInt[], PetscInt, PetscInt, PetscInt);
/* the range [start, start + count) of n items that rank r of size ranks holds (an even split, the first n % size ranks one more) */
PETSC_EXTERN void NNPartitionRange(PetscInt, PetscMPIInt, PetscMPIInt, PetscInt *, PetscInt *);
/* model-parallel primitives (src/layer/interface/partitionops.c) on [rows][cols] arrays whose columns are split over
   the ranks of a communicator (rank r: cnt[r] columns from dsp[r]); replicated arrays are one logical tensor held
   by every rank, so the adjoint of an all-gather takes the rank's own columns and that of a replication is a sum */
typedef struct {
  MPI_Comm     comm;
  PetscMPIInt  size, rank;
  PetscInt     ncol;       /* all columns */
  PetscInt    *cnt, *dsp;  /* [size] each rank's columns */
  PetscScalar *work;       /* rows * ncol entries, for the exchanges */
  float       *swork;      /* the same in float (the float passes), allocated on first use */
  PetscInt     maxrows;
} NNPartColumns;
PETSC_EXTERN PetscErrorCode NNPartColumnsSetUp(MPI_Comm, PetscInt, PetscInt, NNPartColumns *);
PETSC_EXTERN PetscErrorCode NNPartColumnsReset(NNPartColumns *);
PETSC_EXTERN PetscErrorCode NNPartColumnsAllgather(NNPartColumns *, PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscInt);
PETSC_EXTERN PetscErrorCode NNPartColumnsTake(NNPartColumns *, PetscInt, const PetscScalar[], PetscInt, PetscScalar[], PetscInt);
PETSC_EXTERN PetscErrorCode NNPartSum(MPI_Comm, PetscInt, PetscScalar[]);
PETSC_EXTERN PetscErrorCode NNPartColumnsAllgatherSingle(NNPartColumns *, PetscInt, const float[], PetscInt, float[], PetscInt);
PETSC_EXTERN PetscErrorCode NNPartColumnsTakeSingle(NNPartColumns *, PetscInt, const float[], PetscInt, float[], PetscInt);
PETSC_EXTERN PetscErrorCode NNPartSumSingle(MPI_Comm, PetscInt, float[]);
/* the same on device arrays of a precision (-nn_device cuda, partitionops_cuda.c): the rank's columns of [n][ldf] into
   [n][ldl] by a strided device copy; every rank's [n][ldl] into [n][ldf], staged through page-locked host memory */
PETSC_EXTERN PetscErrorCode NNDevicePartColumnsTake(NNPartColumns *, NNPrecision, PetscInt, const void *, PetscInt, void *, PetscInt);
PETSC_EXTERN PetscErrorCode NNDevicePartColumnsAllgather(NNPartColumns *, NNPrecision, PetscInt, const void *, PetscInt, void *, PetscInt);
/* errors unless the layer's partition is one of the given ones (its type supports them) */
PETSC_EXTERN PetscErrorCode NNLayerCheckPartition(NNLayer, PetscInt, const NNLayerPartition[]);
PETSC_EXTERN MPI_Comm       NNLayerGetPartitionComm(NNLayer); /* l->part.comm, or the layer's communicator when unset */
PETSC_INTERN PetscErrorCode NNLayerSetFromOptions_Partition(NNLayer, NNOptionItems );
PETSC_INTERN PetscErrorCode NNLayerCheckWhole(NNLayer, const char[]);
PETSC_INTERN PetscErrorCode NNLayerShardSetUp(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerShardBegin(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNLayerShardEnd(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNLayerShardBeginSingle(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNLayerShardGather(NNLayer, const void *, void *, MPI_Datatype);
PETSC_INTERN void           NNLayerShardSwap(NNLayer, PetscBool);
PETSC_INTERN PetscInt       NNTensorPost(const NNTensor *);
PETSC_INTERN PetscErrorCode NNLayerShardEndSingle(NNLayer, PetscBool);
PETSC_INTERN PetscErrorCode NNLayerShardInitialize(NNLayer);
PETSC_INTERN PetscErrorCode NNLayerShardReset(NNLayer);
PETSC_EXTERN PetscErrorCode NNLayerSetChildPointers(NNLayer);
PETSC_EXTERN PetscErrorCode NNLayerCheckInputRank(NNLayer, PetscInt);
PETSC_INTERN PetscErrorCode NNLayerCreateNamed(MPI_Comm, const char[], NNLayerType, const char[], NNLayer *);
/* NNLayerSetInputDM()/NNLayerGetInputDM() are public (petnn.h): NNSetUp() sets the input DM before
   NNLayerCreateOutputVec(), so spatial layers can build matching DMs */

/* ---------------------------------------------------------------- spatial (DMDA) layouts (src/layer/interface/spatiallayout.c) */
/* a window along each axis (x, y, z order; nd = 2 or 3): output o reads inputs o*s - p + j*dil, j < k */
typedef struct {
  PetscInt  nd;
  PetscInt  N[3];                     /* input extents W, H, D */
  PetscInt  k[3], s[3], p[3], dil[3]; /* kernel, stride, padding, dilation */
  PetscBool periodic;                 /* wrap around (periodic DMDA halo) instead of zero padding */
} NNSpatialWindow;

PETSC_EXTERN PetscErrorCode NNSpatialGetInputDA(NNLayer, DM *);
PETSC_EXTERN PetscErrorCode NNSpatialWindowOutputSize(NNLayer, const NNSpatialWindow *, PetscInt[3]);
PETSC_EXTERN PetscErrorCode NNSpatialCreateWindowDMs(NNLayer, DM, const NNSpatialWindow *, PetscInt, DM *, DM *, PetscInt *);
PETSC_EXTERN PetscErrorCode NNSpatialCreateLike(DM, PetscInt, PetscInt, DM *);
PETSC_EXTERN PetscErrorCode NNSpatialCopy(DM, PetscInt, const NNShape *, PetscInt, PetscScalar *, PetscScalar *, PetscBool);
PETSC_INTERN PetscErrorCode NNSpatialCopySingle(DM, PetscInt, const NNShape *, PetscInt, float *, float *, PetscBool);
/* ghosted local Vecs lent shared storage for one pass (src/layer/interface/spatialscratch.c): slot 0 the input, 1 its gradient */
PETSC_EXTERN PetscErrorCode NNSpatialCreateHaloVec(DM, Vec *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloVecGet(Vec, PetscInt);
PETSC_EXTERN PetscErrorCode NNSpatialHaloVecRestore(Vec, PetscInt);
PETSC_INTERN PetscErrorCode NNSpatialHaloSlotGetSingle(PetscInt, PetscInt, float **);
PETSC_INTERN PetscErrorCode NNSpatialHaloSlotRestoreSingle(PetscInt);

/* the halo of a windowed layer (conv, pool: src/layer/interface/spatialhalo.c) */
typedef struct {
  DM       dahalo, daout; /* the input's grid with the stencil width the window needs; the output grid */
  PetscInt halo;          /* that stencil width */
  Vec      xl, dxl;       /* ghosted input and input gradient, storage lent per pass (NULL: the input Vec's arrays serve) */
  MPI_Datatype sunit;     /* single precision: the float unit of dahalo's exchange (dof floats; NULL until first used) */
  float       *sdxl;      /* single precision: the ghosted input gradient while lent */
  MPI_Datatype dunit;     /* the double unit of the same exchange on raw arrays (the device's staging) */
  void        *dev;       /* the device's staging buffers (spatialhalo_cuda.c; NULL until first used) */
} NNSpatialHalo;
PETSC_EXTERN PetscErrorCode NNSpatialHaloSetUp(NNLayer, const NNSpatialWindow *, PetscInt, NNSpatialHalo *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloCreateVecs(NNSpatialHalo *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloReset(NNSpatialHalo *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloGetCorners(const NNSpatialHalo *, PetscInt, PetscInt[3], PetscInt[3], PetscInt[3], PetscInt[3]);
PETSC_EXTERN PetscErrorCode NNSpatialHaloGetInput(NNSpatialHalo *, Vec, Vec *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloRestoreInput(NNSpatialHalo *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloGetInputGradient(NNSpatialHalo *, Vec, Vec *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloRestoreInputGradient(NNSpatialHalo *, Vec);
/* the same on float arrays in the global layout (single precision, src/layer/interface/spatialhalosingle.c) */
PETSC_INTERN PetscErrorCode NNSpatialHaloGetInputSingle(NNSpatialHalo *, const float *, const float **);
PETSC_INTERN PetscErrorCode NNSpatialHaloRestoreInputSingle(NNSpatialHalo *);
PETSC_INTERN PetscErrorCode NNSpatialHaloGetInputGradientSingle(NNSpatialHalo *, float *, float **);
PETSC_INTERN PetscErrorCode NNSpatialHaloRestoreInputGradientSingle(NNSpatialHalo *, float *);
/* dahalo's global-to-local PetscSF with its unit of dof floats (single) or doubles and the MPI_Op that sums them */
PETSC_INTERN PetscErrorCode NNSpatialHaloGetSF(NNSpatialHalo *, PetscBool, PetscSF *, MPI_Datatype *, MPI_Op *);
/* the MPI_Op that sums units of floats (single) or doubles in a PetscSF's reduction */
PETSC_INTERN PetscErrorCode NNGetSumOp(PetscBool, MPI_Op *);
/* the device's exchange (-nn_device cuda, src/layer/interface/spatialhalo_cuda.c): the same PetscSF, split into device
   copies on the rank and the face pixels staged through page-locked host memory, in the precision given; xg, the
   ghosted array of dahalo, from the owned x, and its adjoint, x = the sum of the ghosted entries over the ranks' halos;
   the entries an exchange stages and those of the whole owned and ghosted arrays */
PETSC_EXTERN PetscErrorCode NNSpatialHaloDeviceScatter(NNSpatialHalo *, NNPrecision, const void *, void *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloDeviceSum(NNSpatialHalo *, NNPrecision, const void *, void *);
PETSC_EXTERN PetscErrorCode NNSpatialHaloDeviceGetStaging(NNSpatialHalo *, NNPrecision, size_t *, size_t *);
PETSC_INTERN PetscErrorCode NNSpatialHaloDeviceReset(NNSpatialHalo *);
