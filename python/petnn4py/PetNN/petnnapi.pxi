# The C API of PetNN that the bindings call (include/petnn.h), and the part of the layer struct a
# layer type written in Python needs (include/petnn/private/layerimpl.h, as examples/custom_layer.c).

cdef extern from * nogil:
    ctypedef int PetscErrorCode
    ctypedef long PetscInt
    ctypedef long long PetscInt64
    ctypedef double PetscReal
    ctypedef double PetscScalar
    ctypedef double PetscLogDouble
    ctypedef enum PetscBool:
        PETSC_FALSE
        PETSC_TRUE
    enum: PETSC_ERR_LIB
    enum: PETSC_ERR_ARG_WRONG
    enum: PETSC_ERR_ARG_OUTOFRANGE
    MPI_Comm PETSC_COMM_SELF
    PetscErrorCode PetscObjectReference(PetscObject)
    PetscErrorCode PetscObjectDestroy(PetscObject *)
    PetscErrorCode PetscObjectGetOptionsPrefix(PetscObject, const char *[])
    PetscErrorCode PetscObjectSetName(PetscObject, const char[])
    PetscErrorCode PetscObjectGetName(PetscObject, const char *[])
    PetscErrorCode PetscObjectStateIncrease(PetscObject)
    PetscErrorCode PetscError(MPI_Comm, int, const char *, const char *, PetscErrorCode, int, const char *, ...)
    enum: PETSC_ERROR_INITIAL
    PetscErrorCode VecCreateSeqWithArray(MPI_Comm, PetscInt, PetscInt, const PetscScalar[], PetscVec *)
    PetscErrorCode VecDestroy(PetscVec *)
    PetscErrorCode VecGetArrayRead(PetscVec, const PetscScalar **)
    PetscErrorCode VecRestoreArrayRead(PetscVec, const PetscScalar **)
    PetscErrorCode VecGetLocalSize(PetscVec, PetscInt *)
    PetscErrorCode TaoDestroy(PetscTAO *)
    PetscErrorCode PetscMallocGetCurrentUsage(PetscLogDouble *)

cdef extern from "petnn.h" nogil:
    enum: NN_MAX_DIM
    ctypedef struct NNShape:
        PetscInt ndim
        PetscInt dim[4]
    PetscInt NNShapeSize(const NNShape *)

    struct _p_NN
    ctypedef _p_NN *PetNN "NN"
    struct _p_NNLayer
    ctypedef _p_NNLayer *PetLayer "NNLayer"
    struct _p_NNOpt
    ctypedef _p_NNOpt *PetOpt "NNOpt"
    struct _p_NNData
    ctypedef _p_NNData *PetData "NNData"
    struct _p_NNTrainer
    ctypedef _p_NNTrainer *PetTrainer "NNTrainer"

    int NN_CLASSID, NNLAYER_CLASSID, NNOPT_CLASSID, NNDATA_CLASSID, NNTRAINER_CLASSID
    PetscErrorCode PetNNInitializePackage()
    enum: PETNN_VERSION_MAJOR
    enum: PETNN_VERSION_MINOR

    ctypedef enum NNPrecision:
        NN_PRECISION_DOUBLE
        NN_PRECISION_SINGLE

    # NN
    PetscErrorCode NNCreate(MPI_Comm, PetNN *)
    PetscErrorCode NNSetType(PetNN, const char[])
    PetscErrorCode NNGetType(PetNN, const char **)
    PetscErrorCode NNSetOptionsPrefix(PetNN, const char[])
    PetscErrorCode NNSetFromOptions(PetNN)
    PetscErrorCode NNSetUp(PetNN)
    PetscErrorCode NNView(PetNN, PetscViewer)
    PetscErrorCode NNSetInputShape(PetNN, PetscInt, const PetscInt[])
    PetscErrorCode NNGetInputShape(PetNN, NNShape *)
    PetscErrorCode NNGetOutputShape(PetNN, NNShape *)
    PetscErrorCode NNSetInputDM(PetNN, PetscDM)
    PetscErrorCode NNGetInputDM(PetNN, PetscDM *)
    PetscErrorCode NNCreateInputVec(PetNN, PetscVec *)
    PetscErrorCode NNCreateBatchVecs(PetNN, PetscVec *, PetscVec *)
    PetscErrorCode NNAddLayer(PetNN, const char[], const char[], PetLayer *)
    PetscErrorCode NNGetLayer(PetNN, const char[], PetLayer *)
    PetscErrorCode NNGetLayers(PetNN, PetscInt *, const PetLayer **)
    PetscErrorCode NNSetLoss(PetNN, const char[])
    PetscErrorCode NNGetLoss(PetNN, const char **)
    PetscErrorCode NNSetBatchSize(PetNN, PetscInt)
    PetscErrorCode NNGetBatchSize(PetNN, PetscInt *)
    PetscErrorCode NNSetEpochs(PetNN, PetscInt)
    PetscErrorCode NNGetEpochs(PetNN, PetscInt *)
    PetscErrorCode NNSetSeed(PetNN, PetscInt64)
    PetscErrorCode NNSetPrecision(PetNN, NNPrecision)
    PetscErrorCode NNGetPrecision(PetNN, NNPrecision *)
    PetscErrorCode NNGetParameters(PetNN, PetscVec *)
    PetscErrorCode NNGetGradient(PetNN, PetscVec *)
    PetscErrorCode NNGetBuffers(PetNN, PetscVec *)
    PetscErrorCode NNGetNumParameters(PetNN, PetscInt *)
    PetscErrorCode NNSetTraining(PetNN, PetscBool)
    PetscErrorCode NNForward(PetNN, PetscInt, PetscVec, PetscVec *)
    PetscErrorCode NNLossGradient(PetNN, PetscInt, PetscVec, PetscVec, PetscReal *, PetscVec)
    PetscErrorCode NNPredict(PetNN, PetscVec, PetscVec)
    PetscErrorCode NNTrain(PetNN, PetData, PetData)
    PetscErrorCode NNEvaluate(PetNN, PetData, PetscReal *, PetscReal *)
    PetscErrorCode NNCreateTao(PetNN, PetscTAO *)
    PetscErrorCode NNTrainTao(PetNN, PetData, PetscTAO)
    PetscErrorCode NNCheckpointSave(PetNN, const char[])
    PetscErrorCode NNCheckpointLoad(PetNN, const char[])
    PetscErrorCode NNSaveGradients(PetNN, const char[], PetscInt, PetscVec, PetscVec)
    PetscErrorCode NNGetLayerParameters(PetNN, const char[], PetscInt *, PetscScalar **)
    PetscErrorCode NNRestoreLayerParameters(PetNN, const char[], PetscScalar **)
    PetscErrorCode NNGetLayerGradient(PetNN, const char[], PetscInt *, PetscScalar **)
    PetscErrorCode NNRestoreLayerGradient(PetNN, const char[], PetscScalar **)
    PetscErrorCode NNGetTrainer(PetNN, PetTrainer *)
    PetscErrorCode NNGetOpt(PetNN, PetOpt *)
    PetscErrorCode NNGradientCheck(PetNN, PetscInt, PetscVec, PetscVec, PetscReal, PetscReal *, PetscReal *)

    # losses: the eval form of NNLossOps (sequential outputs)
    ctypedef struct NNLossOps:
        PetscErrorCode (*eval)(PetscInt, PetscInt, const PetscScalar *, const PetscScalar *, PetscReal *, PetscScalar *)
        PetscBool classification
    PetscErrorCode NNLossRegister(const char[], PetscErrorCode (*)(NNLossOps *))

    # NNLayer
    PetscErrorCode NNLayerRegister(const char[], PetscErrorCode (*)(PetLayer))
    PetscErrorCode NNLayerGetType(PetLayer, const char **)
    PetscErrorCode NNLayerGetInputShape(PetLayer, NNShape *)
    PetscErrorCode NNLayerGetOutputShape(PetLayer, NNShape *)
    PetscErrorCode NNLayerGetNumParameters(PetLayer, PetscInt *)
    PetscErrorCode NNLayerView(PetLayer, PetscViewer)
    PetscErrorCode NNLayerSetInputs(PetLayer, PetscInt, const char *const[])
    PetscErrorCode NNLayerDenseSetUnits(PetLayer, PetscInt)
    PetscErrorCode NNLayerDenseSetBias(PetLayer, PetscBool)
    PetscErrorCode NNLayerLeakyReLUSetSlope(PetLayer, PetscReal)
    PetscErrorCode NNLayerDropoutSetRate(PetLayer, PetscReal)
    PetscErrorCode NNLayerBatchNormSetMomentum(PetLayer, PetscReal)
    PetscErrorCode NNLayerBatchNormSetEpsilon(PetLayer, PetscReal)
    PetscErrorCode NNLayerNormSetEpsilon(PetLayer, PetscReal)
    PetscErrorCode NNLayerNormSetAffine(PetLayer, PetscBool)
    PetscErrorCode NNLayerGroupNormSetGroups(PetLayer, PetscInt)
    PetscErrorCode NNLayerConvSetFilters(PetLayer, PetscInt)
    PetscErrorCode NNLayerConvSetKernelSize(PetLayer, PetscInt)
    PetscErrorCode NNLayerConvSetStride(PetLayer, PetscInt)
    PetscErrorCode NNLayerConvSetPadding(PetLayer, PetscInt)
    PetscErrorCode NNLayerConvSetBias(PetLayer, PetscBool)
    PetscErrorCode NNLayerConvSetPeriodic(PetLayer, PetscBool)
    PetscErrorCode NNLayerConvSetDilation(PetLayer, PetscInt)
    PetscErrorCode NNLayerConvSetGroups(PetLayer, PetscInt)
    PetscErrorCode NNLayerPoolSetKernelSize(PetLayer, PetscInt)
    PetscErrorCode NNLayerPoolSetStride(PetLayer, PetscInt)
    PetscErrorCode NNLayerPoolSetPadding(PetLayer, PetscInt)
    PetscErrorCode NNLayerUpsampleSetScale(PetLayer, PetscInt)
    PetscErrorCode NNLayerUpsampleSetMode(PetLayer, const char[])
    PetscErrorCode NNLayerSpectralConvSetFilters(PetLayer, PetscInt)
    PetscErrorCode NNLayerSpectralConvSetModes(PetLayer, PetscInt, const PetscInt[])
    PetscErrorCode NNLayerODESetTime(PetLayer, PetscReal)
    PetscErrorCode NNLayerODESetSteps(PetLayer, PetscInt)
    PetscErrorCode NNLayerODEAddLayer(PetLayer, const char[], const char[], PetLayer *)
    PetscErrorCode NNLayerResidualAddLayer(PetLayer, const char[], const char[], PetLayer *)

    # NNData
    PetscErrorCode NNDataCreate(MPI_Comm, PetData *)
    PetscErrorCode NNDataSetType(PetData, const char[])
    PetscErrorCode NNDataGetType(PetData, const char **)
    PetscErrorCode NNDataSetOptionsPrefix(PetData, const char[])
    PetscErrorCode NNDataSetFromOptions(PetData)
    PetscErrorCode NNDataSetUp(PetData)
    PetscErrorCode NNDataView(PetData, PetscViewer)
    PetscErrorCode NNDataSetFileName(PetData, const char[])
    PetscErrorCode NNDataIDXSetSplit(PetData, const char[])
    PetscErrorCode NNDataSetMaxSamples(PetData, PetscInt)
    PetscErrorCode NNDataSetDistribute(PetData, PetscBool)
    PetscErrorCode NNDataGetNumSamples(PetData, PetscInt *)
    PetscErrorCode NNDataGetSampleShape(PetData, NNShape *)
    PetscErrorCode NNDataGetTargetSize(PetData, PetscInt *)
    PetscErrorCode NNDataGetBatch(PetData, PetscInt, const PetscInt[], PetscVec, PetscVec)
    PetscErrorCode NNDataArraySetArrays(PetData, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscScalar[], const PetscScalar[])

    # NNOpt
    PetscErrorCode NNOptSetType(PetOpt, const char[])
    PetscErrorCode NNOptGetType(PetOpt, const char **)
    PetscErrorCode NNOptSetLearningRate(PetOpt, PetscReal)
    PetscErrorCode NNOptGetLearningRate(PetOpt, PetscReal *)
    PetscErrorCode NNOptSetWeightDecay(PetOpt, PetscReal)
    PetscErrorCode NNOptSetSchedule(PetOpt, const char[], PetscInt, PetscReal)
    PetscErrorCode NNOptSGDSetMomentum(PetOpt, PetscReal, PetscBool)
    PetscErrorCode NNOptAdamSetBetas(PetOpt, PetscReal, PetscReal, PetscReal)
    PetscErrorCode NNOptGetNumSteps(PetOpt, PetscInt *)
    PetscErrorCode NNOptStep(PetOpt, PetscVec, PetscVec)
    PetscErrorCode NNOptSetEpoch(PetOpt, PetscInt, PetscInt)
    PetscErrorCode NNOptView(PetOpt, PetscViewer)

    # NNTrainer
    PetscErrorCode NNTrainerSetFromOptions(PetTrainer)
    PetscErrorCode NNTrainerGetOpt(PetTrainer, PetOpt *)
    PetscErrorCode NNTrainerView(PetTrainer, PetscViewer)
    PetscErrorCode NNTrainerSetEpochs(PetTrainer, PetscInt)
    PetscErrorCode NNTrainerGetEpochs(PetTrainer, PetscInt *)
    PetscErrorCode NNTrainerSetShuffle(PetTrainer, PetscBool)
    PetscErrorCode NNTrainerSetMonitor(PetTrainer, PetscBool)
    PetscErrorCode NNTrainerSetCheckpoint(PetTrainer, const char[])
    PetscErrorCode NNTrainerSetCheckpointEvery(PetTrainer, PetscInt)
    PetscErrorCode NNTrainerGetProgress(PetTrainer, PetscInt *, PetscInt *, PetscInt *)
    PetscErrorCode NNTrainerMonitorSet(PetTrainer, PetscErrorCode (*)(PetNN, PetscInt, PetscInt, PetscReal, void *), void *, PetscErrorCode (*)(void **))
    PetscErrorCode NNTrainerMonitorCancel(PetTrainer)

cdef extern from "petnn.h" nogil:  # online training (include/petnn/online.h)
    PetscErrorCode NNCreateFromOptionsFile(MPI_Comm, const char[], const char[], PetNN *)
    PetscErrorCode NNLoadONNX(PetNN, const char[])
    PetscErrorCode NNTrainStep(PetNN, PetscVec, PetscVec, PetscReal *)
    PetscErrorCode NNTrainStepBuffer(PetNN, PetscReal *)
    PetscErrorCode NNSetTrainBuffer(PetNN, PetData)
    PetscErrorCode NNTrainerSetStepsPerEpoch(PetTrainer, PetscInt)
    PetscErrorCode NNDataBufferSetCapacity(PetData, PetscInt)
    PetscErrorCode NNDataBufferGetCapacity(PetData, PetscInt *)
    PetscErrorCode NNDataBufferSetReplacement(PetData, PetscBool)
    PetscErrorCode NNDataBufferSetSeed(PetData, PetscInt64)
    PetscErrorCode NNDataBufferPush(PetData, PetscVec, PetscVec)
    PetscErrorCode NNDataBufferGetCount(PetData, PetscInt *, PetscInt64 *)

cdef extern from "petnn/private/layerimpl.h" nogil:
    ctypedef enum NNTensorKind:
        NN_TENSOR_PARAM
        NN_TENSOR_BUFFER
    ctypedef struct NNTensor:
        char         name[64]
        NNTensorKind kind
        PetscInt     ndim
        PetscInt     dim[6]
        PetscInt     size
        PetscInt     offset
    struct _NNLayerOps:
        PetscErrorCode (*setup)(PetLayer)
        PetscErrorCode (*forward)(PetLayer, PetscInt, const PetscScalar *, PetscScalar *)
        PetscErrorCode (*backward)(PetLayer, PetscInt, const PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *)
        PetscErrorCode (*initialize)(PetLayer)
        PetscErrorCode (*view)(PetLayer, PetscViewer)
        PetscErrorCode (*destroy)(PetLayer)
    struct _p_NNLayer:
        _NNLayerOps       *ops
        NNShape            inshape, outshape
        PetscBool          training
        PetscInt           ntensors
        NNTensor           tensors[8]
        PetscInt           nparam, nbuf
        PetscScalar       *dtheta
        const PetscScalar *theta
        PetscInt           localsize
        void              *data
    PetscErrorCode NNLayerAddTensor(PetLayer, const char[], NNTensorKind, PetscInt, const PetscInt[])
    PetscErrorCode PetscViewerASCIIPrintf(PetscViewer, const char[], ...)
