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
#define NNLAYERBATCHNORM2D "batchnorm2d"     /* per-channel batch norm over batch and pixels, reduced over ranks */
#define NNLAYERBATCHNORM3D "batchnorm3d"

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
PETSC_EXTERN PetscErrorCode NNLayerForward(NNLayer, PetscInt, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNLayerBackward(NNLayer, PetscInt, Vec, Vec, Vec, Vec);
PETSC_EXTERN PetscErrorCode NNLayerSetTraining(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerCreateOutputVec(NNLayer, Vec *);

/* type-specific setters: no-ops on other types */
PETSC_EXTERN PetscErrorCode NNLayerDenseSetUnits(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerDenseSetBias(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerLeakyReLUSetSlope(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerDropoutSetRate(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerBatchNormSetMomentum(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerBatchNormSetEpsilon(NNLayer, PetscReal);
PETSC_EXTERN PetscErrorCode NNLayerResidualAddLayer(NNLayer, NNLayerType, const char[], NNLayer *);
PETSC_EXTERN PetscErrorCode NNLayerConvSetFilters(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetKernelSize(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetStride(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetPadding(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetBias(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerConvSetPeriodic(NNLayer, PetscBool);
PETSC_EXTERN PetscErrorCode NNLayerConvSetDilation(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerConvSetGroups(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerPoolSetKernelSize(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerPoolSetStride(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerPoolSetPadding(NNLayer, PetscInt);
PETSC_EXTERN PetscErrorCode NNLayerUpsampleSetScale(NNLayer, PetscInt);

/* ---------------------------------------------------------------- losses */
typedef const char *NNLossType;
#define NNLOSSCROSSENTROPY "cross_entropy" /* softmax + negative log-likelihood, mean over the batch */
#define NNLOSSMSE          "mse"           /* mean squared error, mean over all entries */

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

/* ---------------------------------------------------------------- data sets */
typedef const char *NNDataType;
#define NNDATAIDX    "idx"    /* IDX files (MNIST / Fashion-MNIST), optionally gzipped */
#define NNDATABINARY "binary" /* PETSc binary: features as Mat (rows = samples) or Vec, targets as Vec */
#define NNDATAHDF5   "hdf5"   /* HDF5: features [n, ...] and targets [n] or [n, k] */

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

/* ---------------------------------------------------------------- networks */
PETSC_EXTERN PetscErrorCode NNCreate(MPI_Comm, NN *);
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
PETSC_EXTERN PetscErrorCode NNSetUp(NN);
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
PETSC_EXTERN PetscErrorCode NNTrainTao(NN, NNData, Tao);

PETSC_EXTERN PetscErrorCode NNCheckpointSave(NN, const char[]);
PETSC_EXTERN PetscErrorCode NNCheckpointLoad(NN, const char[]);
PETSC_EXTERN PetscErrorCode NNSaveGradients(NN, const char[], PetscInt, Vec, Vec);

PETSC_EXTERN PetscErrorCode NNGradientCheck(NN, PetscInt, Vec, Vec, PetscReal, PetscReal *, PetscReal *);
