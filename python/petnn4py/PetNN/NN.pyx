# NN: the network (include/petnn.h, src/nn/)

cdef class NN(Object):
    """A network: its layers, loss, parameter and gradient Vecs (PetNN's ``NN``).

    Built from the options database (``net.create(); net.setFromOptions()`` reads ``-nn_layers`` and
    each layer's options) or from calls (``addLayer``). Every method is collective on the network's
    communicator unless it says otherwise; a PetNN error raises ``PETSc.Error`` with PetNN's message.
    """

    cdef PetNN nn

    def __cinit__(self):
        self.obj = <PetscObject *>&self.nn
        self.nn = NULL

    def create(self, comm=None):
        """Creates the network on comm (default: ``PETSc.COMM_WORLD``)."""
        cdef MPI_Comm ccomm = GetComm(comm, GetCommDefault())
        cdef PetNN newnn = NULL
        CHKERR(NNCreate(ccomm, &newnn))
        CHKERR(PetscObjectDestroy(self.obj))
        self.nn = newnn
        return self

    def createFromOptionsFile(self, filename, prefix=None, comm=None):
        """Creates the network, its optimizer and trainer from an options (or PETSc YAML) file, under a prefix."""
        cdef MPI_Comm ccomm = GetComm(comm, GetCommDefault())
        cdef PetNN newnn = NULL
        bprefix = str2bytes(prefix) if prefix else b""
        CHKERR(NNCreateFromOptionsFile(ccomm, str2bytes(filename), bprefix, &newnn))
        CHKERR(PetscObjectDestroy(self.obj))
        self.nn = newnn
        return self

    def setType(self, nn_type):
        """"sequential" or "graph"."""
        CHKERR(NNSetType(self.nn, str2bytes(nn_type)))

    def getType(self):
        cdef const char *t = NULL
        CHKERR(NNGetType(self.nn, &t))
        return bytes2str(t)

    def setOptionsPrefix(self, prefix):
        CHKERR(NNSetOptionsPrefix(self.nn, str2bytes(prefix)))

    def getOptionsPrefix(self):
        cdef const char *p = NULL
        CHKERR(PetscObjectGetOptionsPrefix(<PetscObject>self.nn, &p))
        return bytes2str(p)

    def setFromOptions(self):
        """Reads -nn_* options and the layers' options (-nn_layers a,b,... and -<layer>_*)."""
        CHKERR(NNSetFromOptions(self.nn))

    def setUp(self):
        CHKERR(NNSetUp(self.nn))

    def view(self, Viewer viewer=None):
        cdef PetscViewer v = NULL if viewer is None else viewer.vwr
        CHKERR(NNView(self.nn, v))

    # -------------------------------------------------------------- architecture
    def setInputShape(self, shape):
        """The shape of one sample, without the batch dimension (PyTorch order: (C,H,W) or (F,))."""
        cdef PetscInt dims[4]
        shape = tuple(shape)
        if not 1 <= len(shape) <= NN_MAX_DIM:
            raise ValueError("input shape %r: give 1 to %d dimensions" % (shape, NN_MAX_DIM))
        for i, d in enumerate(shape):
            dims[i] = d
        CHKERR(NNSetInputShape(self.nn, len(shape), dims))

    def getInputShape(self):
        cdef NNShape s
        CHKERR(NNGetInputShape(self.nn, &s))
        return shape2tuple(&s)

    def getOutputShape(self):
        cdef NNShape s
        CHKERR(NNGetOutputShape(self.nn, &s))
        return shape2tuple(&s)

    def setInputDM(self, DM dm):
        """Spatial networks: the input lives on this DMDA (dof = input channels), decomposed as the simulation's."""
        CHKERR(NNSetInputDM(self.nn, dm.dm))

    def getInputDM(self):
        cdef DM dm = DM()
        CHKERR(NNGetInputDM(self.nn, &dm.dm))
        if dm.dm == NULL:
            return None
        CHKERR(PetscObjectReference(<PetscObject>dm.dm))
        return dm

    def addLayer(self, layer_type, name, inputs=None, **options):
        """Appends a layer; keyword options call its typed setters (see ``Layer.set``).

        ``inputs`` (graph networks) names the activations the layer reads.
        """
        cdef Layer layer = Layer()
        CHKERR(NNAddLayer(self.nn, str2bytes(layer_type), str2bytes(name), &layer.layer))
        CHKERR(PetscObjectReference(<PetscObject>layer.layer))
        layer.net = self
        if inputs is not None:
            layer.setInputs(inputs)
        if options:
            layer.set(**options)
        return layer

    def getLayer(self, name):
        cdef Layer layer = Layer()
        CHKERR(NNGetLayer(self.nn, str2bytes(name), &layer.layer))
        CHKERR(PetscObjectReference(<PetscObject>layer.layer))
        layer.net = self
        return layer

    def getLayers(self):
        """The top-level layers, in order."""
        cdef PetscInt n = 0
        cdef const PetLayer *layers = NULL
        cdef Layer layer
        CHKERR(NNGetLayers(self.nn, &n, &layers))
        out = []
        for i in range(n):
            layer = Layer()
            layer.layer = layers[i]
            CHKERR(PetscObjectReference(<PetscObject>layer.layer))
            layer.net = self
            out.append(layer)
        return out

    def setLoss(self, loss):
        CHKERR(NNSetLoss(self.nn, str2bytes(loss)))

    def getLoss(self):
        cdef const char *t = NULL
        CHKERR(NNGetLoss(self.nn, &t))
        return bytes2str(t)

    def setBatchSize(self, PetscInt n):
        CHKERR(NNSetBatchSize(self.nn, n))

    def getBatchSize(self):
        cdef PetscInt n = 0
        CHKERR(NNGetBatchSize(self.nn, &n))
        return n

    def setEpochs(self, PetscInt n):
        CHKERR(NNSetEpochs(self.nn, n))

    def getEpochs(self):
        cdef PetscInt n = 0
        CHKERR(NNGetEpochs(self.nn, &n))
        return n

    def setSeed(self, seed):
        CHKERR(NNSetSeed(self.nn, <PetscInt64>seed))

    def setPrecision(self, precision):
        """"double" or "single"."""
        p = {'double': NN_PRECISION_DOUBLE, 'single': NN_PRECISION_SINGLE}.get(precision)
        if p is None:
            raise ValueError("precision %r: valid: double, single" % (precision,))
        CHKERR(NNSetPrecision(self.nn, p))

    def getPrecision(self):
        cdef NNPrecision p
        CHKERR(NNGetPrecision(self.nn, &p))
        return 'single' if p == NN_PRECISION_SINGLE else 'double'

    def setTraining(self, flag=True):
        CHKERR(NNSetTraining(self.nn, asbool(flag)))

    def getTrainer(self):
        cdef Trainer t = Trainer()
        CHKERR(NNGetTrainer(self.nn, &t.trainer))
        CHKERR(PetscObjectReference(<PetscObject>t.trainer))
        return t

    def getOpt(self):
        cdef Opt o = Opt()
        CHKERR(NNGetOpt(self.nn, &o.opt))
        CHKERR(PetscObjectReference(<PetscObject>o.opt))
        return o

    # -------------------------------------------------------------- parameters
    def getNumParameters(self):
        cdef PetscInt n = 0
        CHKERR(NNGetNumParameters(self.nn, &n))
        return n

    def getParameters(self):
        """The network's parameter Vec itself (not a copy): writing to it changes the network."""
        cdef Vec v = Vec()
        CHKERR(NNGetParameters(self.nn, &v.vec))
        CHKERR(PetscObjectReference(<PetscObject>v.vec))
        return v

    def getGradient(self):
        """The gradient Vec the last lossGradient() or training step wrote."""
        cdef Vec v = Vec()
        CHKERR(NNGetGradient(self.nn, &v.vec))
        CHKERR(PetscObjectReference(<PetscObject>v.vec))
        return v

    def getBuffers(self):
        """The Vec of non-trained state (running statistics), or None."""
        cdef Vec v = Vec()
        CHKERR(NNGetBuffers(self.nn, &v.vec))
        if v.vec == NULL:
            return None
        CHKERR(PetscObjectReference(<PetscObject>v.vec))
        return v

    def getLayerParameters(self, name):
        """A numpy view (no copy) of one layer's slice of the parameter Vec, on this rank."""
        cdef PetscInt n = 0
        cdef PetscScalar *a = NULL
        bname = str2bytes(name)
        CHKERR(NNGetLayerParameters(self.nn, bname, &n, &a))
        view = asarray(a, n, None, False, self)
        CHKERR(NNRestoreLayerParameters(self.nn, bname, &a))
        return view

    def getLayerGradient(self, name):
        """A numpy view (no copy) of one layer's slice of the gradient Vec, on this rank."""
        cdef PetscInt n = 0
        cdef PetscScalar *a = NULL
        bname = str2bytes(name)
        CHKERR(NNGetLayerGradient(self.nn, bname, &n, &a))
        view = asarray(a, n, None, True, self)
        CHKERR(NNRestoreLayerGradient(self.nn, bname, &a))
        return view

    # -------------------------------------------------------------- passes
    def createBatchVecs(self):
        """(x, t): Vecs for one input batch and its targets, of the batch size's capacity."""
        cdef Vec x = Vec(), t = Vec()
        CHKERR(NNCreateBatchVecs(self.nn, &x.vec, &t.vec))
        return x, t

    def createInputVec(self):
        """A Vec in the input activation's layout (a DMDA global Vec after setInputDM())."""
        cdef Vec x = Vec()
        CHKERR(NNCreateInputVec(self.nn, &x.vec))
        return x

    def forward(self, PetscInt n, Vec x):
        """Runs the first n samples of x; returns the output Vec (the network's, valid until the next pass)."""
        cdef Vec y = Vec()
        CHKERR(NNForward(self.nn, n, x.vec, &y.vec))
        CHKERR(PetscObjectReference(<PetscObject>y.vec))
        return y

    def lossGradient(self, PetscInt n, Vec x, Vec t, Vec dx=None):
        """Forward, loss and backward on the first n samples; returns the loss, fills getGradient() (and dx)."""
        cdef PetscReal loss = 0
        CHKERR(NNLossGradient(self.nn, n, x.vec, t.vec, &loss, NULL if dx is None else dx.vec))
        return loss

    def predict(self, Vec x, Vec y):
        """Evaluates the network on the Vecs given, in place (no copy): a simulation's own Vecs work."""
        CHKERR(NNPredict(self.nn, x.vec, y.vec))

    def predictArray(self, X, Y=None):
        """predict() on numpy arrays [m, *input shape] -> [m, *output shape], wrapped as Vecs without a copy."""
        cdef PetscVec xv = NULL, yv = NULL
        cdef PetscScalar *xp
        cdef PetscScalar *yp
        cdef PetscErrorCode ierr
        insize = int(numpy.prod(self.getInputShape()))
        outshape = self.getOutputShape()
        if X.size % insize:
            raise ValueError("input array of %d values is not a whole number of samples of %d" % (X.size, insize))
        m = X.size // insize
        if Y is None:
            Y = numpy.empty((m,) + outshape)
        xp = arraypointer(X, False)
        yp = arraypointer(Y, True)
        CHKERR(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, X.size, xp, &xv))
        ierr = VecCreateSeqWithArray(PETSC_COMM_SELF, 1, Y.size, yp, &yv)
        if ierr == 0:
            ierr = NNPredict(self.nn, xv, yv)
        VecDestroy(&xv)
        VecDestroy(&yv)
        CHKERR(ierr)
        return Y

    def gradientCheck(self, PetscInt n, Vec x, Vec t, PetscReal tol=1e-6):
        """Central finite differences against the backward pass: (largest relative error over the parameters,
        over the inputs); prints PASSED/FAILED lines against tol."""
        cdef PetscReal ep = 0, ei = 0
        CHKERR(NNGradientCheck(self.nn, n, x.vec, t.vec, tol, &ep, &ei))
        return ep, ei

    # -------------------------------------------------------------- training
    def train(self, Data train, Data test=None):
        """Trains with the trainer's optimizer for its epochs (NNTrain)."""
        CHKERR(NNTrain(self.nn, train.data, NULL if test is None else test.data))

    def trainStep(self, Vec x, Vec y):
        """One optimizer step on the batch given (online training, NNTrainStep); returns the loss."""
        cdef PetscReal loss = 0
        CHKERR(NNTrainStep(self.nn, x.vec, y.vec, &loss))
        return loss

    def setTrainBuffer(self, Data buffer):
        """The replay buffer (a Data of type "buffer") trainStepBuffer() draws from."""
        CHKERR(NNSetTrainBuffer(self.nn, buffer.data))

    def trainStepBuffer(self):
        """One optimizer step on a minibatch drawn from the train buffer; returns the loss."""
        cdef PetscReal loss = 0
        CHKERR(NNTrainStepBuffer(self.nn, &loss))
        return loss

    def evaluate(self, Data data):
        """(mean loss, accuracy) over a data set; accuracy is -1 for regression losses."""
        cdef PetscReal loss = 0, acc = 0
        CHKERR(NNEvaluate(self.nn, data.data, &loss, &acc))
        return loss, acc

    def trainTao(self, Data data, TAO tao=None):
        """Full-batch training with a PETSc Tao (created from the options, -tao_*, when not given)."""
        cdef PetscTAO t = NULL
        cdef PetscErrorCode ierr
        if tao is not None:
            CHKERR(NNTrainTao(self.nn, data.data, tao.tao))
            return
        CHKERR(NNCreateTao(self.nn, &t))
        ierr = NNTrainTao(self.nn, data.data, t)
        TaoDestroy(&t)
        CHKERR(ierr)

    def loadONNX(self, filename):
        """Layers and parameters from an ONNX file (torch.onnx.export; NNLoadONNX, -nn_onnx)."""
        CHKERR(NNLoadONNX(self.nn, str2bytes(filename)))

    def saveCheckpoint(self, filename):
        """Parameters, buffers, optimizer state, generator and cursor to HDF5, written atomically."""
        CHKERR(NNCheckpointSave(self.nn, str2bytes(filename)))

    def loadCheckpoint(self, filename):
        CHKERR(NNCheckpointLoad(self.nn, str2bytes(filename)))

    def saveGradients(self, filename, PetscInt n, Vec x, Vec t):
        """Forward and backward on one batch; writes loss, outputs, input and parameter gradients to HDF5."""
        CHKERR(NNSaveGradients(self.nn, str2bytes(filename), n, x.vec, t.vec))

    property parameters:
        def __get__(self):
            return self.getParameters()

    property gradient:
        def __get__(self):
            return self.getGradient()
