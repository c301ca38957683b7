/*
   PetNN: deep learning as a PETSc package.

   Objects
     NN       - a network: an ordered list of layers, a loss, one parameter Vec and one gradient Vec
     NNLayer  - a layer with a hand-written forward and backward pass
     NNOpt    - an optimizer (SGD, Adam, AdamW) with a learning-rate schedule
     NNData   - a data set (IDX, PETSc binary, HDF5) that fills minibatches

   Activation layout: a batch of n samples is a Vec whose first n*size(shape) entries hold the
   samples one after the other, each sample contiguous in PyTorch order (C,H,W). Vecs are sized
   for the network's batch capacity; a smaller final batch uses the leading part.
*/
#pragma once

#include <petscvec.h>
#include <petscmat.h>
#include <petscdm.h>
#include <petscviewer.h>
#include <petsctao.h>
#include <petscts.h>
#include <petnn/versioncompat.h>

#define PETNN_VERSION_MAJOR 0
#define PETNN_VERSION_MINOR 1

/* ---------------------------------------------------------------- shapes */
#define NN_MAX_DIM 4

/*S
   NNShape - the shape of one sample (without the batch dimension), in PyTorch order

   Dense activations have ndim = 1 (features); image-like ones (C,H,W) or (C,D,H,W).
S*/
typedef struct {
  PetscInt ndim;
  PetscInt dim[NN_MAX_DIM];
} NNShape;

PETSC_EXTERN PetscInt       NNShapeSize(const NNShape *);
PETSC_EXTERN PetscErrorCode NNShapeToString(const NNShape *, size_t, char[]);
PETSC_EXTERN PetscErrorCode NNShapeSet(NNShape *, PetscInt, const PetscInt[]);

/* ---------------------------------------------------------------- classes */
typedef struct _p_NN      *NN;
typedef struct _p_NNLayer *NNLayer;
typedef struct _p_NNOpt   *NNOpt;
typedef struct _p_NNData  *NNData;

PETSC_EXTERN PetscClassId NN_CLASSID, NNLAYER_CLASSID, NNOPT_CLASSID, NNDATA_CLASSID;

PETSC_EXTERN PetscErrorCode PetNNInitializePackage(void);
PETSC_EXTERN PetscErrorCode PetNNFinalizePackage(void);

/* ---------------------------------------------------------------- layers */
typedef const char *NNLayerType;
#define NNLAYERDENSE       "dense"
#define NNLAYERFLATTEN     "flatten"
#define NNLAYERRELU        "relu"
#define NNLAYERLEAKYRELU   "leaky_relu"
#define NNLAYERTANH        "tanh"
#define NNLAYERSIGMOID     "sigmoid"
#define NNLAYERGELU        "gelu"
#define NNLAYERDROPOUT     "dropout"
#define NNLAYERBATCHNORM1D "batchnorm1d"
#define NNLAYERRESIDUAL    "residual"
#define NNLAYERTOSPATIAL   "to_spatial"      /* sequential (C,H,W) batch -> DMDA-distributed channels-last batch */
#define NNLAYERCONV2D      "conv2d"          /* 2-d convolution on a DMDA activation (halo exchange + implicit GEMM) */
#define NNLAYERSPATIALFLATTEN "spatial_flatten" /* DMDA activation -> sequential flat batch (C*[D*]H*W), replicated */
#define NNLAYERCONV3D      "conv3d"          /* 3-d convolution on a 3-d DMDA activation */
#define NNLAYERMAXPOOL2D   "maxpool2d"
#define NNLAYERMAXPOOL3D   "maxpool3d"
#define NNLAYERAVGPOOL2D   "avgpool2d"
#define NNLAYERAVGPOOL3D   "avgpool3d"
#define NNLAYERGLOBALAVGPOOL "global_avgpool" /* DMDA activation -> sequential (C) per sample, replicated */
#define NNLAYERUPSAMPLE    "upsample"        /* nearest-neighbour upsampling by an integer factor (2-d and 3-d) */
#define NNLAYERCONVTRANSPOSE2D "conv_transpose2d" /* transposed convolution (torch.nn.ConvTranspose2d) on a DMDA activation */
#define NNLAYERCONVTRANSPOSE3D "conv_transpose3d"
#define NNLAYERBATCHNORM2D "batchnorm2d"     /* per-channel batch norm over batch and pixels, reduced over ranks */
#define NNLAYERBATCHNORM3D "batchnorm3d"
#define NNLAYERSPECTRALCONV2D "spectral_conv2d" /* Fourier neural operator layer (FFTW MPI): rfft2, kept modes x weights, irfft2, + 1x1 path */
#define NNLAYERSPECTRALCONV3D "spectral_conv3d"
#define NNLAYERGROUPNORM   "group_norm"      /* per-sample statistics over channel groups and positions (torch.nn.GroupNorm) */
#define NNLAYERINSTANCENORM "instance_norm"  /* per-sample, per-channel statistics over positions (torch.nn.InstanceNorm1d/2d/3d) */
#define NNLAYERLAYERNORM   "layer_norm"      /* per-sample, per-position statistics over channels (torch.nn.LayerNorm(C)) */
#define NNLAYERODE         "ode"             /* neural ODE block: du/dt = f(u, theta(t), t) on [0,T] by TS/TSAdjoint, f = its inner layers */
#define NNLAYERCONCAT      "concat"          /* graph networks: k inputs concatenated along channels (features) */
#define NNLAYERADD         "add"             /* graph networks: elementwise sum of k inputs of one shape */
#define NNLAYERSPLIT       "split"           /* graph networks: channels into pieces name:0, name:1, ... (-<name>_sizes) */

PETSC_EXTERN PetscFunctionList NNLayerList;
PETSC_EXTERN PetscErrorCode    NNLayerRegister(const char[], PetscErrorCode (*)(NNLayer));
PETSC_EXTERN PetscErrorCode    NNLayerRegisterAll(void);

PETSC_EXTERN PetscErrorCode NNLayerCreate(MPI_Comm, NNLayer *);
PETSC_EXTERN PetscErrorCode NNLayerSetType(NNLayer, NNLayerType);
PETSC_EXTERN PetscErrorCode NNLayerGetType(NNLayer, NNLayerType *);
PETSC_EXTERN PetscErrorCode NNLayerSetOptionsPrefix(NNLayer, const char[]);
PETSC_EXTERN PetscErrorCode NNLayerSetFromOptions(NNLayer);
PETSC_EXTERN PetscErrorCode NNLayerSetInputShape(NNLayer, const NNShape *);
PETSC_EXTERN PetscErrorCode NNLayerGetOutputShape(NNLayer, NNShape *);
PETSC_EXTERN PetscErrorCode NNLayerGetInputShape(NNLayer, NNShape *);
PETSC_EXTERN PetscErrorCode NNLayerSetBatchCapacity(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerSetUp(NNLayer);
PETSC_EXTERN PetscErrorCode NNLayerView(NNLayer, PetscViewer);
PETSC_EXTERN PetscErrorCode NNLayerDestroy(NNLayer *);
PETSC_EXTERN PetscErrorCode NNLayerGetNumParameters(NNLayer, PetscInt *);
/* model parallelism: how a layer's weights are split over the ranks of its communicator (-<layer>_partition) */
typedef enum {
  NN_PARTITION_REPLICATE, /* every rank holds every weight (the default) */
  NN_PARTITION_ROWS,      /* dense: output features (weight rows) split over the ranks */
  NN_PARTITION_COLUMNS,   /* dense: input features (weight columns) split over the ranks */
  NN_PARTITION_FILTERS,   /* convolution: output channels split over the ranks */
  NN_PARTITION_CHANNELS,  /* convolution: input channels split over the ranks */
  NN_PARTITION_SHARD      /* any layer: each rank stores 1/P of every parameter tensor (first axis), gathered for each pass */
} NNLayerPartition;
PETSC_EXTERN const char *const NNLayerPartitions[];
PETSC_EXTERN PetscErrorCode    NNLayerSetPartition(NNLayer, NNLayerPartition);
PETSC_EXTERN PetscErrorCode    NNLayerGetPartition(NNLayer, NNLayerPartition *);
PETSC_EXTERN PetscErrorCode    NNLayerGetNumParametersGlobal(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerForward(NNLayer, PetscInt, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNLayerBackward(NNLayer, PetscInt, Vec, Vec, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNLayerSetTraining(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerCreateOutputVec(NNLayer, Vec *);
/* the DM of the layer's input activation (a DMDA for spatial layouts, NULL for sequential ones);
   NNSetUp() sets it before NNLayerCreateOutputVec(), so spatial layers can build matching DMs */
PETSC_EXTERN PetscErrorCode NNLayerSetInputDM(NNLayer, DM);
PETSC_EXTERN PetscErrorCode NNLayerGetInputDM(NNLayer, DM *);

/* type-specific setters: no-ops on other types */
PETSC_EXTERN PetscErrorCode NNLayerDenseSetUnits(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerDenseSetBias(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerDenseGetUnits(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerDenseGetBias(NNLayer, PetscBool *);
PETSC_EXTERN PetscErrorCode NNLayerLeakyReLUSetSlope(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerLeakyReLUGetSlope(NNLayer, PetscReal *);
PETSC_EXTERN PetscErrorCode NNLayerDropoutSetRate(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerBatchNormSetMomentum(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerBatchNormSetEpsilon(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerBatchNormGetMomentum(NNLayer, PetscReal *);
PETSC_EXTERN PetscErrorCode NNLayerBatchNormGetEpsilon(NNLayer, PetscReal *);
PETSC_EXTERN PetscErrorCode NNLayerNormSetEpsilon(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerNormSetAffine(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerGroupNormSetGroups(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerResidualAddLayer(NNLayer, NNLayerType, const char[], NNLayer *);
PETSC_EXTERN PetscErrorCode NNLayerConvSetFilters(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetKernelSize(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetStride(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetPadding(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetBias(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerConvSetPeriodic(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerConvSetDilation(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetGroups(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetThreads(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvGetThreads(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerConvSetWinograd(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvGetWinograd(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerConvSetTileRows(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvGetTileRows(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerPoolSetKernelSize(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerPoolSetStride(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerPoolSetPadding(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerPoolGetKernelSize(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerPoolGetStride(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerPoolGetPadding(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerUpsampleSetScale(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerUpsampleGetScale(NNLayer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNLayerUpsampleSetMode(NNLayer, const char[]);
PETSC_EXTERN PetscErrorCode NNLayerUpsampleSetAlignCorners(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerConvTransposeSetOutputPadding(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerSpectralConvSetFilters(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerSpectralConvSetModes(NNLayer, PetscInt, const PetscInt[]);
PETSC_EXTERN PetscErrorCode NNLayerSpectralConvSetLinear(NNLayer, PetscBool);
/* graph networks (NNSetType(net, NNTYPEGRAPH)): the layer's inputs, "input", "name" or "name:k" */
PETSC_EXTERN PetscErrorCode NNLayerSetInputs(NNLayer, PetscInt, const char *const[]);
PETSC_EXTERN PetscErrorCode NNLayerGetInputs(NNLayer, PetscInt *, const char *const *[]);
PETSC_EXTERN PetscErrorCode NNLayerSplitSetSizes(NNLayer, PetscInt, const PetscInt[]);
PETSC_EXTERN PetscErrorCode NNLayerSplitGetSizes(NNLayer, PetscInt *, const PetscInt *[]);

/* ---------------------------------------------------------------- losses */
typedef const char *NNLossType;
#define NNLOSSCROSSENTROPY "cross_entropy" /* softmax + negative log-likelihood, mean over the batch */
#define NNLOSSMSE          "mse"           /* mean squared error, mean over all entries */
#define NNLOSSL1           "l1"            /* mean absolute error over all entries (torch.nn.L1Loss) */
#define NNLOSSHUBER        "huber"         /* Huber loss, mean over all entries (torch.nn.HuberLoss, -nn_loss_huber_delta) */
#define NNLOSSRELL2        "rel_l2"        /* mean over the batch of ||y_i - t_i||_2 / ||t_i||_2 (the FNO paper's relative L2) */
#define NNLOSSBCEWITHLOGITS "bce_with_logits" /* sigmoid + binary cross entropy, mean over all entries (torch.nn.BCEWithLogitsLoss) */

/* the rank's part of a batch for a loss evaluated in pieces (outputs spread over ranks, such as
   spatial DMDA outputs): entry j < c of sample s < n at position p < npos is y[p*ld + s*c + j], its
   target t[p*ld + s*c + j]; a sequential batch is one position with c = ld/n = the output size */
typedef struct {
  PetscInt           npos, ld, c;
  const PetscScalar *y, *t;
} NNLossBlock;

/* what a loss type provides (filled by the routine given to NNLossRegister()) */
typedef struct _n_NNLossOps NNLossOps;
struct _n_NNLossOps {
  /* mean loss over the first n samples (nout outputs each) and, when dy is not NULL, dL/dy */
  PetscErrorCode (*eval)(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *target, PetscReal *loss, PetscScalar *dy);
  PetscBool classification; /* targets are class indices (one per sample), accuracy is meaningful */
  /* optional, for outputs spread over ranks (spatial outputs): the loss as partial sums. sums ADDs the
     block's contributions to nsums values (per sample, [n][nsums], when persample); they are summed
     over the ranks, then finish gives the mean loss and gradient writes dL/dy at the block's used
     entries. A type with sums and finish may leave eval NULL (sequential outputs then use these too). */
  PetscInt  nsums;
  PetscBool persample;
  PetscErrorCode (*sums)(const NNLossOps *ops, PetscInt n, PetscInt nout, const NNLossBlock *b, PetscReal sums[]);
  PetscErrorCode (*finish)(const NNLossOps *ops, PetscInt n, PetscInt nout, const PetscReal sums[], PetscReal *loss);
  PetscErrorCode (*gradient)(const NNLossOps *ops, PetscInt n, PetscInt nout, const NNLossBlock *b, const PetscReal sums[], PetscScalar dy[]);
  PetscErrorCode (*setfromoptions)(NNLossOps *ops, NNOptionItems PetscOptionsObject); /* the type's options (-nn_loss_<type>_...) */
  PetscErrorCode (*view)(const NNLossOps *ops, PetscViewer v);
  PetscReal param[4]; /* the type's parameters (huber: delta), kept when the network is set up again */
};

PETSC_EXTERN PetscFunctionList NNLossList;
PETSC_EXTERN PetscErrorCode    NNLossRegister(const char[], PetscErrorCode (*)(NNLossOps *));

/* ---------------------------------------------------------------- optimizers */
typedef const char *NNOptType;
#define NNOPTSGD   "sgd"
#define NNOPTADAM  "adam"
#define NNOPTADAMW "adamw"

typedef const char *NNOptSchedule;
#define NNOPTSCHEDULENONE   "none"
#define NNOPTSCHEDULESTEP   "step"
#define NNOPTSCHEDULECOSINE "cosine"

PETSC_EXTERN PetscFunctionList NNOptList;
PETSC_EXTERN PetscErrorCode    NNOptRegister(const char[], PetscErrorCode (*)(NNOpt));
PETSC_EXTERN PetscErrorCode    NNOptCreate(MPI_Comm, NNOpt *);
PETSC_EXTERN PetscErrorCode    NNOptSetType(NNOpt, NNOptType);
PETSC_EXTERN PetscErrorCode    NNOptGetType(NNOpt, NNOptType *);
PETSC_EXTERN PetscErrorCode    NNOptSetOptionsPrefix(NNOpt, const char[]);
PETSC_EXTERN PetscErrorCode    NNOptSetFromOptions(NNOpt);
PETSC_EXTERN PetscErrorCode    NNOptSetUp(NNOpt, Vec);
PETSC_EXTERN PetscErrorCode    NNOptStep(NNOpt, Vec, Vec);
PETSC_EXTERN PetscErrorCode    NNOptSetLearningRate(NNOpt, PetscReal);
PETSC_EXTERN PetscErrorCode    NNOptGetLearningRate(NNOpt, PetscReal *);
PETSC_EXTERN PetscErrorCode    NNOptSetWeightDecay(NNOpt, PetscReal);
PETSC_EXTERN PetscErrorCode    NNOptSetSchedule(NNOpt, NNOptSchedule, PetscInt, PetscReal);
PETSC_EXTERN PetscErrorCode    NNOptSetEpoch(NNOpt, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode    NNOptView(NNOpt, PetscViewer);
PETSC_EXTERN PetscErrorCode    NNOptDestroy(NNOpt *);
PETSC_EXTERN PetscErrorCode    NNOptSGDSetMomentum(NNOpt, PetscReal, PetscBool);
PETSC_EXTERN PetscErrorCode    NNOptAdamSetBetas(NNOpt, PetscReal, PetscReal, PetscReal);
PETSC_EXTERN PetscErrorCode    NNOptGetNumSteps(NNOpt, PetscInt *);
PETSC_EXTERN PetscErrorCode    NNOptGetNumStates(NNOpt, PetscInt *);
PETSC_EXTERN PetscErrorCode    NNOptGetState(NNOpt, PetscInt, const char *[], Vec *);

/* ---------------------------------------------------------------- data sets */
typedef const char *NNDataType;
#define NNDATAIDX    "idx"    /* IDX files (MNIST / Fashion-MNIST), optionally gzipped */
#define NNDATABINARY "binary" /* PETSc binary: features as Mat (rows = samples) or Vec, targets as Vec */
#define NNDATAHDF5   "hdf5"   /* HDF5: features [n, ...] and targets [n] or [n, k] */
#define NNDATAARRAY  "array"  /* the caller's arrays in memory, not copied (NNDataArraySetArrays()) */

PETSC_EXTERN PetscFunctionList NNDataList;
PETSC_EXTERN PetscErrorCode    NNDataRegister(const char[], PetscErrorCode (*)(NNData));
PETSC_EXTERN PetscErrorCode    NNDataCreate(MPI_Comm, NNData *);
PETSC_EXTERN PetscErrorCode    NNDataSetType(NNData, NNDataType);
PETSC_EXTERN PetscErrorCode    NNDataGetType(NNData, NNDataType *);
PETSC_EXTERN PetscErrorCode    NNDataSetOptionsPrefix(NNData, const char[]);
PETSC_EXTERN PetscErrorCode    NNDataSetFromOptions(NNData);
PETSC_EXTERN PetscErrorCode    NNDataSetUp(NNData);
PETSC_EXTERN PetscErrorCode    NNDataView(NNData, PetscViewer);
PETSC_EXTERN PetscErrorCode    NNDataDestroy(NNData *);
PETSC_EXTERN PetscErrorCode    NNDataGetNumSamples(NNData, PetscInt *);
PETSC_EXTERN PetscErrorCode    NNDataGetSampleShape(NNData, NNShape *);
PETSC_EXTERN PetscErrorCode    NNDataGetTargetSize(NNData, PetscInt *);
PETSC_EXTERN PetscErrorCode    NNDataGetBatch(NNData, PetscInt, const PetscInt[], Vec, Vec);
PETSC_EXTERN PetscErrorCode    NNDataSetMaxSamples(NNData, PetscInt);
PETSC_EXTERN PetscErrorCode    NNDataIDXSetSplit(NNData, const char[]);
PETSC_EXTERN PetscErrorCode    NNDataSetFileName(NNData, const char[]);
PETSC_EXTERN PetscErrorCode    NNDataArraySetArrays(NNData, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscScalar[], const PetscScalar[]);
PETSC_EXTERN PetscErrorCode    NNDataSetDistribute(NNData, PetscBool);
PETSC_EXTERN PetscErrorCode    NNDataGetOwnershipRange(NNData, PetscInt *, PetscInt *);

/* ---------------------------------------------------------------- networks */
PETSC_EXTERN PetscErrorCode NNCreate(MPI_Comm, NN *);
/* how the layers connect: a chain (each layer reads the one before) or a graph (-<layer>_inputs) */
typedef const char *NNType;
#define NNTYPESEQUENTIAL "sequential"
#define NNTYPEGRAPH      "graph"
PETSC_EXTERN PetscErrorCode NNSetType(NN, NNType);
PETSC_EXTERN PetscErrorCode NNGetType(NN, NNType *);
PETSC_EXTERN PetscErrorCode NNSetOptionsPrefix(NN, const char[]);
PETSC_EXTERN PetscErrorCode NNSetInputShape(NN, PetscInt, const PetscInt[]);
PETSC_EXTERN PetscErrorCode NNGetInputShape(NN, NNShape *);
PETSC_EXTERN PetscErrorCode NNSetInputDM(NN, DM);
PETSC_EXTERN PetscErrorCode NNGetInputDM(NN, DM *);
PETSC_EXTERN PetscErrorCode NNCreateInputVec(NN, Vec *);
PETSC_EXTERN PetscErrorCode NNGetOutputShape(NN, NNShape *);
PETSC_EXTERN PetscErrorCode NNAddLayer(NN, NNLayerType, const char[], NNLayer *);
PETSC_EXTERN PetscErrorCode NNGetLayer(NN, const char[], NNLayer *);
PETSC_EXTERN PetscErrorCode NNSetLoss(NN, NNLossType);
PETSC_EXTERN PetscErrorCode NNGetLoss(NN, NNLossType *);
PETSC_EXTERN PetscErrorCode NNSetBatchSize(NN, PetscInt);
PETSC_EXTERN PetscErrorCode NNGetBatchSize(NN, PetscInt *);
PETSC_EXTERN PetscErrorCode NNSetEpochs(NN, PetscInt);
PETSC_EXTERN PetscErrorCode NNGetEpochs(NN, PetscInt *);
PETSC_EXTERN PetscErrorCode NNSetSeed(NN, PetscInt64);
PETSC_EXTERN PetscErrorCode NNGetOpt(NN, NNOpt *);
PETSC_EXTERN PetscErrorCode NNSetFromOptions(NN);
PETSC_EXTERN PetscErrorCode NNLoadONNX(NN, const char[]); /* an ONNX model's layers and parameters (protobuf-c; PETNN_WITH_ONNX) */
PETSC_EXTERN PetscErrorCode NNSetUp(NN);
PETSC_EXTERN PetscErrorCode NNSetPoolBeforeActivation(NN, PetscBool);
/* the precision of the activations and their gradients (-nn_precision); parameters, optimizer state and checkpoints stay double */
typedef enum {
  NN_PRECISION_DOUBLE, /* everything in double (the default) */
  NN_PRECISION_SINGLE  /* activations, their gradients and a working copy of the parameters in float */
} NNPrecision;
PETSC_EXTERN const char *const NNPrecisions[];
PETSC_EXTERN PetscErrorCode    NNSetPrecision(NN, NNPrecision);
PETSC_EXTERN PetscErrorCode    NNGetPrecision(NN, NNPrecision *);
/* where the activations live and the passes run (-nn_device); parameters, their gradient, optimizer state, checkpoints
   and TAO stay in the host Vecs */
typedef enum {
  NN_DEVICE_CPU, /* the host (the default) */
  NN_DEVICE_CUDA /* an NVIDIA GPU: PetNN's own device buffers, cuBLAS; needs a PetNN built with CUDA */
} NNDevice;
PETSC_EXTERN const char *const NNDevices[];
PETSC_EXTERN PetscErrorCode    NNSetDevice(NN, NNDevice);
PETSC_EXTERN PetscErrorCode    NNGetDevice(NN, NNDevice *);
PETSC_EXTERN PetscErrorCode    NNDeviceIsAvailable(NNDevice, PetscBool *, size_t, char[]);
PETSC_EXTERN PetscErrorCode    NNSetCUDATF32(NN, PetscBool);
PETSC_EXTERN PetscErrorCode    NNGetCUDATF32(NN, PetscBool *);
PETSC_EXTERN PetscErrorCode NNSetAutoRepartition(NN, PetscBool);
PETSC_EXTERN PetscErrorCode NNGetAutoRepartition(NN, PetscBool *);
PETSC_EXTERN PetscErrorCode NNView(NN, PetscViewer);
PETSC_EXTERN PetscErrorCode NNDestroy(NN *);

PETSC_EXTERN PetscErrorCode NNGetParameters(NN, Vec *);
PETSC_EXTERN PetscErrorCode NNGetGradient(NN, Vec *);
PETSC_EXTERN PetscErrorCode NNGetNumParameters(NN, PetscInt *);
PETSC_EXTERN PetscErrorCode NNSetTraining(NN, PetscBool);
PETSC_EXTERN PetscErrorCode NNCreateBatchVecs(NN, Vec *, Vec *);

PETSC_EXTERN PetscErrorCode NNForward(NN, PetscInt, Vec, Vec *);
PETSC_EXTERN PetscErrorCode NNLossGradient(NN, PetscInt, Vec, Vec, PetscReal *, Vec);
PETSC_EXTERN PetscErrorCode NNPredict(NN, Vec, Vec);

PETSC_EXTERN PetscErrorCode NNTrain(NN, NNData, NNData);
PETSC_EXTERN PetscErrorCode NNEvaluate(NN, NNData, PetscReal *, PetscReal *);
PETSC_EXTERN PetscErrorCode NNCreateTao(NN, Tao *);
PETSC_EXTERN PetscErrorCode NNTrainTao(NN, NNData, Tao);

PETSC_EXTERN PetscErrorCode NNCheckpointSave(NN, const char[]);
PETSC_EXTERN PetscErrorCode NNCheckpointLoad(NN, const char[]);
PETSC_EXTERN PetscErrorCode NNSaveGradients(NN, const char[], PetscInt, Vec, Vec);

PETSC_EXTERN PetscErrorCode NNGradientCheck(NN, PetscInt, Vec, Vec, PetscReal, PetscReal *, PetscReal *);

/* ---------------------------------------------------------------- access to a network's parts (src/nn/interface/nnaccess.c) */
#define NN_RANDOM_STATE_SIZE 4 /* 64-bit words of the generator state */
PETSC_EXTERN PetscErrorCode NNGetLayers(NN, PetscInt *, const NNLayer *[]);
PETSC_EXTERN PetscErrorCode NNGetNumMovedActivations(NN, PetscInt *);
PETSC_EXTERN PetscErrorCode NNGetActivations(NN, const char[], Vec *, Vec *);
PETSC_EXTERN PetscErrorCode NNGetActivationGradients(NN, const char[], Vec *, Vec *);
PETSC_EXTERN PetscErrorCode NNGetActivationVecs(NN, PetscInt *, const Vec *[], const Vec *[]);
PETSC_EXTERN PetscErrorCode NNGetBuffers(NN, Vec *);
PETSC_EXTERN PetscErrorCode NNGetLayerParameters(NN, const char[], PetscInt *, PetscScalar *[]);
PETSC_EXTERN PetscErrorCode NNRestoreLayerParameters(NN, const char[], PetscScalar *[]);
PETSC_EXTERN PetscErrorCode NNGetLayerGradient(NN, const char[], PetscInt *, PetscScalar *[]);
PETSC_EXTERN PetscErrorCode NNRestoreLayerGradient(NN, const char[], PetscScalar *[]);
PETSC_EXTERN PetscErrorCode NNGetLayerBuffers(NN, const char[], PetscInt *, PetscScalar *[]);
PETSC_EXTERN PetscErrorCode NNRestoreLayerBuffers(NN, const char[], PetscScalar *[]);
PETSC_EXTERN PetscErrorCode NNBeginLayerCalls(NN);
PETSC_EXTERN PetscErrorCode NNEndLayerCalls(NN);
PETSC_EXTERN PetscErrorCode NNGetCursor(NN, PetscInt *, PetscInt *, PetscInt *);
PETSC_EXTERN PetscErrorCode NNGetRandomState(NN, PetscInt64[]);
PETSC_EXTERN PetscErrorCode NNLayerGetChildren(NNLayer, PetscInt *, const NNLayer *[]);

/* ---------------------------------------------------------------- parallel training, restarts */
PETSC_EXTERN PetscErrorCode NNSetProcessGrid(NN, PetscInt, PetscInt);                     /* trainers, data groups per trainer */
PETSC_EXTERN PetscErrorCode NNGetProcessGrid(NN, PetscInt *, PetscInt *, PetscInt *);      /* trainers, data groups, spatial ranks */
PETSC_EXTERN PetscErrorCode NNSetModelRanks(NN, PetscInt);                                  /* model parallelism: ranks of the partitioned layers */
PETSC_EXTERN PetscErrorCode NNGetModelRanks(NN, PetscInt *);
PETSC_EXTERN PetscErrorCode NNGetProcessGridComms(NN, MPI_Comm *, MPI_Comm *, MPI_Comm *); /* trainer, data, spatial */
PETSC_EXTERN PetscErrorCode NNSetBucketSize(NN, PetscReal);
PETSC_EXTERN PetscErrorCode NNGetBucketSize(NN, PetscReal *);
PETSC_EXTERN PetscErrorCode NNSetOptimizerSharding(NN, PetscBool);
PETSC_EXTERN PetscErrorCode NNGetOptimizerSharding(NN, PetscBool *, PetscBool *); /* setting, whether set */
typedef enum {
  NN_ALLREDUCE_AUTO,  /* shared when all data groups share a node, MPI otherwise */
  NN_ALLREDUCE_MPI,   /* bucketed MPI_Iallreduce during the backward pass */
  NN_ALLREDUCE_SHARED, /* the gradients in one MPI shared-memory window, summed after the backward pass */
  NN_ALLREDUCE_NCCL    /* NCCL all-reduce of the device gradient (-nn_device cuda, training resident on the GPUs) */
} NNAllreduceType;
PETSC_EXTERN const char *const NNAllreduceTypes[];
PETSC_EXTERN PetscErrorCode    NNSetAllreduceType(NN, NNAllreduceType);
PETSC_EXTERN PetscErrorCode    NNGetAllreduceType(NN, NNAllreduceType *, PetscBool *);
PETSC_EXTERN PetscErrorCode    NNSetLoadBalance(NN, PetscBool, PetscReal);
PETSC_EXTERN PetscErrorCode NNSetTournament(NN, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode NNGetAllreduceTimes(NN, PetscLogDouble *, PetscLogDouble *);
PETSC_EXTERN PetscErrorCode NNSetCheckpointInterval(NN, PetscInt, PetscReal);
PETSC_EXTERN PetscErrorCode NNTrainMonitorSet(NN, PetscErrorCode (*)(NN, PetscInt, PetscInt, PetscReal, void *), void *, PetscErrorCode (*)(void **));

/* ---------------------------------------------------------------- the trainer (src/trainer)
   NNTrainer - how a network is trained: epochs, shuffling, gradient check, step monitors,
   checkpoint policy and the restart cursor. Each network has one (NNGetTrainer()). */
typedef struct _p_NNTrainer *NNTrainer;
PETSC_EXTERN PetscClassId   NNTRAINER_CLASSID;
PETSC_EXTERN PetscErrorCode NNGetTrainer(NN, NNTrainer *);
PETSC_EXTERN PetscErrorCode NNTrainerSetFromOptions(NNTrainer);
PETSC_EXTERN PetscErrorCode NNTrainerGetOpt(NNTrainer, NNOpt *);
PETSC_EXTERN PetscErrorCode NNTrainerView(NNTrainer, PetscViewer);
PETSC_EXTERN PetscErrorCode NNTrainerSetEpochs(NNTrainer, PetscInt);
PETSC_EXTERN PetscErrorCode NNTrainerGetEpochs(NNTrainer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNTrainerSetShuffle(NNTrainer, PetscBool);
PETSC_EXTERN PetscErrorCode NNTrainerGetShuffle(NNTrainer, PetscBool *);
PETSC_EXTERN PetscErrorCode NNTrainerSetMonitor(NNTrainer, PetscBool);
PETSC_EXTERN PetscErrorCode NNTrainerGetMonitor(NNTrainer, PetscBool *);
PETSC_EXTERN PetscErrorCode NNTrainerSetCheckpoint(NNTrainer, const char[]);
PETSC_EXTERN PetscErrorCode NNTrainerGetCheckpoint(NNTrainer, const char *[]);
PETSC_EXTERN PetscErrorCode NNTrainerSetCheckpointEvery(NNTrainer, PetscInt);
PETSC_EXTERN PetscErrorCode NNTrainerGetCheckpointEvery(NNTrainer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNTrainerSetCheckpointInterval(NNTrainer, PetscInt, PetscReal);
PETSC_EXTERN PetscErrorCode NNTrainerGetCheckpointInterval(NNTrainer, PetscInt *, PetscReal *);
PETSC_EXTERN PetscErrorCode NNTrainerSetGradientCheck(NNTrainer, PetscBool, PetscReal);
PETSC_EXTERN PetscErrorCode NNTrainerGetGradientCheck(NNTrainer, PetscBool *, PetscReal *);
PETSC_EXTERN PetscErrorCode NNTrainerMonitorSet(NNTrainer, PetscErrorCode (*)(NN, PetscInt, PetscInt, PetscReal, void *), void *, PetscErrorCode (*)(void **));
PETSC_EXTERN PetscErrorCode NNTrainerMonitorCancel(NNTrainer);
PETSC_EXTERN PetscErrorCode NNTrainerGetProgress(NNTrainer, PetscInt *, PetscInt *, PetscInt *); /* epochs, steps, batches of the current epoch done */
/* monitors of training progress and curves (-nn_monitor_steps, -nn_monitor_csv, -nn_monitor_draw) */
PETSC_EXTERN PetscErrorCode NNTrainerEpochMonitorSet(NNTrainer, PetscErrorCode (*)(NN, PetscInt, PetscReal, PetscReal, PetscReal, PetscReal, void *), void *, PetscErrorCode (*)(void **));
PETSC_EXTERN PetscErrorCode NNTrainerEpochMonitorCancel(NNTrainer);
PETSC_EXTERN PetscErrorCode NNTrainerSetMonitorSteps(NNTrainer, PetscInt);
PETSC_EXTERN PetscErrorCode NNTrainerGetMonitorSteps(NNTrainer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNTrainerSetMonitorStepsTTY(NNTrainer, PetscInt);
PETSC_EXTERN PetscErrorCode NNTrainerGetMonitorStepsTTY(NNTrainer, PetscInt *);
PETSC_EXTERN PetscErrorCode NNTrainerSetMonitorCSV(NNTrainer, const char[]);
PETSC_EXTERN PetscErrorCode NNTrainerGetMonitorCSV(NNTrainer, const char *[]);
PETSC_EXTERN PetscErrorCode NNTrainerSetMonitorDraw(NNTrainer, PetscBool);
PETSC_EXTERN PetscErrorCode NNTrainerGetMonitorDraw(NNTrainer, PetscBool *);

/* ---------------------------------------------------------------- the reducer (src/reducer)
   NNReducer - how the data groups of a trainer sum their gradients and take the optimizer step:
   types "mpi" (bucketed MPI_Iallreduce) and "shm" (an MPI shared-memory window). */
typedef struct _p_NNReducer *NNReducer;
PETSC_EXTERN PetscClassId   NNREDUCER_CLASSID;
PETSC_EXTERN PetscErrorCode NNGetReducer(NN, NNReducer *);
PETSC_EXTERN PetscErrorCode NNReducerSetType(NNReducer, const char[]);
PETSC_EXTERN PetscErrorCode NNReducerView(NNReducer, PetscViewer);

/* ---------------------------------------------------------------- spectral analysis (SLEPc; src/spectral, ts/ode/odeblock_spectrum*.c)
   Eigen- and singular values of a trained model's operators. Without SLEPc these fail with PETSC_ERR_SUP. */
PETSC_EXTERN PetscErrorCode NNSpectralViewFromOptions(NN, NNData, NNData);

/* ODE-block Jacobian spectra and explicit-RK stability checks */
typedef enum {
  NNODE_SPECTRUM_LARGEST_MAGNITUDE, /* largest |lambda| */
  NNODE_SPECTRUM_LARGEST_REAL,      /* rightmost: largest Re(lambda) */
  NNODE_SPECTRUM_SMALLEST_MAGNITUDE /* smallest |lambda| */
} NNODESpectrumWhich;
PETSC_EXTERN const char *const NNODESpectrumWhichs[];
typedef enum {
  NNODE_STABILITY_NONE,  /* report only */
  NNODE_STABILITY_WARN,  /* print a warning when the step is unstable */
  NNODE_STABILITY_ERROR  /* refuse: a PETSc error naming the block, h, lambda and the largest stable step */
} NNODEStabilityCheck;
PETSC_EXTERN const char *const NNODEStabilityChecks[];
typedef struct {
  PetscReal h;         /* the block's step */
  PetscReal hlmax;     /* max |h lambda| over the eigenvalues */
  PetscReal Rmax;      /* max |R(h lambda)|, R the scheme's stability function */
  PetscReal lre, lim;  /* the eigenvalue with the largest |R(h lambda)| / max(1, |exp(h lambda)|) */
  PetscReal hmax;      /* the largest stable step along that eigenvalue's ray (PETSC_INFINITY: every step) */
  PetscReal stiffness; /* max |lambda| / min |lambda| (PETSC_INFINITY with a zero eigenvalue) */
  PetscBool stable;    /* |R(h lambda)| <= max(1, |exp(h lambda)|) for every eigenvalue */
} NNODEStability;
PETSC_EXTERN PetscErrorCode NNODECreateJacobian(NN, const char[], PetscInt, Vec, PetscInt, PetscInt, Mat *);
PETSC_EXTERN PetscErrorCode NNODEComputeSpectrum(NN, const char[], PetscInt, Vec, PetscInt, PetscInt, NNODESpectrumWhich, PetscInt, PetscInt *, PetscReal[], PetscReal[]);
PETSC_EXTERN PetscErrorCode NNODEStabilityFunction(NN, const char[], PetscReal, PetscReal, PetscReal *, PetscReal *);
PETSC_EXTERN PetscErrorCode NNODECheckStability(NN, const char[], PetscInt, const PetscReal[], const PetscReal[], NNODEStabilityCheck, NNODEStability *);
PETSC_EXTERN PetscErrorCode NNODESpectrumView(NN, const char[], PetscInt, Vec, PetscViewer);

/* layer operator norms, Lipschitz bounds, spectral normalization */
PETSC_EXTERN PetscErrorCode NNLayerComputeOperatorNorm(NN, NNLayer, PetscReal *);
PETSC_EXTERN PetscErrorCode NNLayerComputeOperatorNormReference(NN, NNLayer, PetscReal *);
PETSC_EXTERN PetscErrorCode NNComputeLipschitzBound(NN, PetscReal *);
PETSC_EXTERN PetscErrorCode NNOperatorNormView(NN, PetscViewer);
PETSC_EXTERN PetscErrorCode NNLayerSetSpectralNorm(NNLayer, PetscReal, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerGetSpectralNorm(NNLayer, PetscReal *, PetscInt *);
PETSC_EXTERN PetscErrorCode NNApplySpectralNorm(NN);



/* loss-Hessian products and eigenvalues, second-order TAO */
PETSC_EXTERN PetscErrorCode NNCreateHessian(NN, PetscInt, Vec, Vec, Mat *);       /* one batch: H v by central differences of gradients */
PETSC_EXTERN PetscErrorCode NNCreateHessianData(NN, NNData, PetscInt, Mat *);      /* samples [0, N) of a data set (-1: all), data-parallel */
PETSC_EXTERN PetscErrorCode NNHessianGetNumProducts(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode NNComputeHessianEigenvalues(Mat, PetscInt, PetscBool, PetscInt *, PetscReal[]); /* nev, most negative?, nconv, eig */



/* ---------------------------------------------------------------- layer-parallel time stepping (MGRIT, ts/mgrit*.c)
   NNMGRIT solves u_{k+1} = Phi_k(u_k), k = 0..N-1, and its discrete adjoint with multigrid reduction in time,
   the N steps split in contiguous chunks over the ranks of its communicator. */
typedef struct _p_NNMGRIT *NNMGRIT;
PETSC_EXTERN PetscClassId NNMGRIT_CLASSID;

typedef enum {
  NNMGRIT_EXACT,   /* iterate to the tolerances: the serial solution and gradient */
  NNMGRIT_ONE_SHOT /* a fixed number of iterations per solve, warm-started from the previous solve */
} NNMGRITMode;
PETSC_EXTERN const char *const NNMGRITModes[];

typedef enum {
  NNMGRIT_RELAX_F,  /* F-relaxation */
  NNMGRIT_RELAX_FCF /* F-, C-, then F-relaxation */
} NNMGRITRelaxType;
PETSC_EXTERN const char *const NNMGRITRelaxTypes[];

/* uout = Phi(uin): one step of size dt from t; k is the fine-grid index of the step's first point (coarse
   steps of level l start at multiples of m^l and have dt = m^l h) */
typedef PetscErrorCode (*NNMGRITStepFn)(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec uin, Vec uout);
/* lout = (dPhi/du)^T lin for the step above, linearized at its start state u; with gradient, also ADD
   (dPhi/dtheta_k)^T lin to the caller's parameter gradient (only level 0 asks for it) */
typedef PetscErrorCode (*NNMGRITAdjointStepFn)(void *ctx, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec u, Vec lin, Vec lout, PetscBool gradient);
/* dJdu = the derivative of the objective with respect to the state u_k at t_k, k < N (observations) */
typedef PetscErrorCode (*NNMGRITForcingFn)(void *ctx, PetscInt k, PetscReal t, Vec u, Vec dJdu);
/* called before the TS propagator steps from t by dt for fine index k; for an adjoint step that wants the
   parameter gradient mu is non-NULL: set *mu to the Vec TSAdjoint should add the gradient of step k into */
typedef PetscErrorCode (*NNMGRITTSHook)(TS ts, PetscInt level, PetscInt k, PetscReal t, PetscReal dt, Vec *mu, void *ctx);

PETSC_EXTERN PetscErrorCode NNMGRITInitializePackage(void);
PETSC_EXTERN PetscErrorCode NNMGRITCreate(MPI_Comm, NNMGRIT *);
PETSC_EXTERN PetscErrorCode NNMGRITDestroy(NNMGRIT *);
PETSC_EXTERN PetscErrorCode NNMGRITSetOptionsPrefix(NNMGRIT, const char[]);
PETSC_EXTERN PetscErrorCode NNMGRITAppendOptionsPrefix(NNMGRIT, const char[]);
PETSC_EXTERN PetscErrorCode NNMGRITSetFromOptions(NNMGRIT);
PETSC_EXTERN PetscErrorCode NNMGRITSetUp(NNMGRIT);
PETSC_EXTERN PetscErrorCode NNMGRITView(NNMGRIT, PetscViewer);
PETSC_EXTERN PetscErrorCode NNMGRITSetTimeSpan(NNMGRIT, PetscReal, PetscReal, PetscInt);
PETSC_EXTERN PetscErrorCode NNMGRITSetStateTemplate(NNMGRIT, Vec);
PETSC_EXTERN PetscErrorCode NNMGRITSetOwnershipRange(NNMGRIT, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode NNMGRITGetOwnershipRange(NNMGRIT, PetscInt *, PetscInt *);
PETSC_EXTERN PetscErrorCode NNMGRITSetStep(NNMGRIT, NNMGRITStepFn, void *);
PETSC_EXTERN PetscErrorCode NNMGRITSetAdjointStep(NNMGRIT, NNMGRITAdjointStepFn, void *);
PETSC_EXTERN PetscErrorCode NNMGRITSetForcing(NNMGRIT, NNMGRITForcingFn, void *);
PETSC_EXTERN PetscErrorCode NNMGRITSetTS(NNMGRIT, TS, NNMGRITTSHook, void *);
PETSC_EXTERN PetscErrorCode NNMGRITSetCoarsening(NNMGRIT, PetscInt);
PETSC_EXTERN PetscErrorCode NNMGRITSetLevels(NNMGRIT, PetscInt);
PETSC_EXTERN PetscErrorCode NNMGRITGetNumLevels(NNMGRIT, PetscInt *);
PETSC_EXTERN PetscErrorCode NNMGRITSetRelaxation(NNMGRIT, NNMGRITRelaxType);
PETSC_EXTERN PetscErrorCode NNMGRITSetTolerances(NNMGRIT, PetscReal, PetscReal);
PETSC_EXTERN PetscErrorCode NNMGRITSetMaxIterations(NNMGRIT, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode NNMGRITSetMode(NNMGRIT, NNMGRITMode, PetscInt);
PETSC_EXTERN PetscErrorCode NNMGRITSetWarmStart(NNMGRIT, PetscBool);
PETSC_EXTERN PetscErrorCode NNMGRITSetMonitor(NNMGRIT, PetscBool);
PETSC_EXTERN PetscErrorCode NNMGRITSolve(NNMGRIT, Vec);
PETSC_EXTERN PetscErrorCode NNMGRITAdjointSolve(NNMGRIT, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNMGRITGetState(NNMGRIT, PetscInt, Vec *);
PETSC_EXTERN PetscErrorCode NNMGRITGetAdjointState(NNMGRIT, PetscInt, Vec *);
PETSC_EXTERN PetscErrorCode NNMGRITGetFinalState(NNMGRIT, Vec);
PETSC_EXTERN PetscErrorCode NNMGRITGetIterationNumber(NNMGRIT, PetscBool, PetscInt *);
PETSC_EXTERN PetscErrorCode NNMGRITGetResidualNorm(NNMGRIT, PetscBool, PetscReal *);
PETSC_EXTERN PetscErrorCode NNMGRITGetStepCounts(NNMGRIT, PetscBool, PetscInt, PetscInt[]);

/* ---------------------------------------------------------------- neural-ODE blocks (ts/odeblock*.c) */
typedef enum {
  NNODE_PARAMETERS_SHARED,  /* one set of f's parameters for all times */
  NNODE_PARAMETERS_PER_STEP /* one set per time step (a ResNet written as an ODE), named "<block>.<k>.<layer>.<tensor>" */
} NNODEParameters;
PETSC_EXTERN const char *const NNODEParametersTypes[];

typedef enum {
  NNODE_SCHEME_TS,      /* TSSolve forward, TSAdjointSolve backward */
  NNODE_SCHEME_DISCRETE /* the residual stack x_{k+1} = x_k + h f(x_k, theta_k, t_k) with hand-written passes (no TS) */
} NNODEScheme;
PETSC_EXTERN const char *const NNODESchemes[];

typedef enum {
  NNODE_PARALLEL_NONE, /* every rank of the layer communicator runs all steps (layer-serial) */
  NNODE_PARALLEL_MGRIT /* layer-parallel: MGRIT over the steps, each rank owning a chunk (ts/ode/odeblock_mgrit.c) */
} NNODEParallel;
PETSC_EXTERN const char *const NNODEParallelTypes[];

PETSC_EXTERN PetscErrorCode NNLayerODEAddLayer(NNLayer, NNLayerType, const char[], NNLayer *);
PETSC_EXTERN PetscErrorCode NNLayerODESetTime(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerODESetSteps(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerODESetParameters(NNLayer, NNODEParameters);
PETSC_EXTERN PetscErrorCode NNLayerODESetScheme(NNLayer, NNODEScheme);
PETSC_EXTERN PetscErrorCode NNLayerODESetCheckpoints(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerODESetTimeInput(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerODESetObservationTimes(NNLayer, PetscInt, const PetscReal[]);
PETSC_EXTERN PetscErrorCode NNLayerODEGetTS(NNLayer, TS *);
PETSC_EXTERN PetscErrorCode NNLayerODEGetStorage(NNLayer, PetscInt *, PetscLogDouble *, PetscInt *, PetscLogDouble *);
PETSC_EXTERN PetscErrorCode NNLayerODEGetTimes(NNLayer, PetscLogDouble *, PetscLogDouble *, PetscLogDouble *);
PETSC_EXTERN PetscErrorCode NNLayerODESetParallel(NNLayer, NNODEParallel);
PETSC_EXTERN PetscErrorCode NNLayerODEGetMGRIT(NNLayer, NNMGRIT *);
/* the learned vector field f outside the block (ts/ode/odeblock_rhs.c): TSSetRHSFunction(ts, NULL, NNODERHSFunction, net) */
PETSC_EXTERN PetscErrorCode NNComputeODEField(NN, NNLayer, PetscReal, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNODERHSFunction(TS, PetscReal, Vec, Vec, void *);

/* online training inside a simulation: NNTrainStep(), the replay buffer (include/petnn/online.h) */
#include <petnn/online.h>
