# NNData: data sets (include/petnn.h, src/data/)

cdef class Data(Object):
    """A data set (PetNN's ``NNData``): "idx", "binary" or "hdf5" files, or numpy arrays ("array").

    ``Data().create(); data.setOptionsPrefix("train_"); data.setFromOptions()`` reads
    ``-train_data_type``, ``-train_data_file``, ... as the C programs do; ``Data.fromArrays(X, y)``
    wraps arrays the program already holds, without a copy.
    """

    cdef PetData data
    cdef object arrays  # the numpy arrays of an "array" data set, kept alive here

    def __cinit__(self):
        self.obj = <PetscObject *>&self.data
        self.data = NULL

    def create(self, comm=None):
        cdef MPI_Comm ccomm = GetComm(comm, GetCommDefault())
        cdef PetData newdata = NULL
        CHKERR(NNDataCreate(ccomm, &newdata))
        CHKERR(PetscObjectDestroy(self.obj))
        self.data = newdata
        return self

    @classmethod
    def fromArrays(cls, X, y, comm=None):
        """A data set of type "array" on the samples X [N, *shape] and targets y [N] or [N, k].

        X is used where it is when it is C-contiguous float64 (otherwise converted once, a copy);
        y (class labels may be integers) is converted to float64 when it is not. Keep X unchanged while
        the data set lives. Every rank passes the same N samples.
        """
        cdef Data d = cls().create(comm)
        cdef PetscInt dims[4]
        X = numpy.ascontiguousarray(X, dtype=numpy.float64)
        y = numpy.ascontiguousarray(y, dtype=numpy.float64)
        if X.ndim < 2 or X.ndim > 1 + NN_MAX_DIM:
            raise ValueError("features of shape %r: give [N, d1, ...] with 1 to %d dimensions after N" % (X.shape, NN_MAX_DIM))
        if y.ndim < 1 or y.shape[0] != X.shape[0]:
            raise ValueError("targets of shape %r for %d samples: give [N] or [N, k]" % (y.shape, X.shape[0]))
        for i in range(X.ndim - 1):
            dims[i] = X.shape[i + 1]
        CHKERR(NNDataSetType(d.data, b"array"))
        CHKERR(NNDataArraySetArrays(d.data, X.shape[0], X.ndim - 1, dims, y.size // X.shape[0], arraypointer(X, False), arraypointer(y, False)))
        d.arrays = (X, y)
        return d

    def setType(self, data_type):
        CHKERR(NNDataSetType(self.data, str2bytes(data_type)))

    def getType(self):
        cdef const char *t = NULL
        CHKERR(NNDataGetType(self.data, &t))
        return bytes2str(t)

    def setOptionsPrefix(self, prefix):
        CHKERR(NNDataSetOptionsPrefix(self.data, str2bytes(prefix)))

    def getOptionsPrefix(self):
        cdef const char *p = NULL
        CHKERR(PetscObjectGetOptionsPrefix(<PetscObject>self.data, &p))
        return bytes2str(p)

    def setFromOptions(self):
        CHKERR(NNDataSetFromOptions(self.data))

    def setFileName(self, filename):
        CHKERR(NNDataSetFileName(self.data, str2bytes(filename)))

    def setSplit(self, split):
        """IDX data: "train" or "t10k"."""
        CHKERR(NNDataIDXSetSplit(self.data, str2bytes(split)))

    def setMaxSamples(self, PetscInt n):
        CHKERR(NNDataSetMaxSamples(self.data, n))

    def setDistribute(self, flag):
        CHKERR(NNDataSetDistribute(self.data, asbool(flag)))

    def setUp(self):
        CHKERR(NNDataSetUp(self.data))

    def view(self, Viewer viewer=None):
        cdef PetscViewer v = NULL if viewer is None else viewer.vwr
        CHKERR(NNDataView(self.data, v))

    def getNumSamples(self):
        cdef PetscInt n = 0
        CHKERR(NNDataGetNumSamples(self.data, &n))
        return n

    def getSampleShape(self):
        cdef NNShape s
        CHKERR(NNDataGetSampleShape(self.data, &s))
        return shape2tuple(&s)

    def getTargetSize(self):
        cdef PetscInt n = 0
        CHKERR(NNDataGetTargetSize(self.data, &n))
        return n

    def setBufferCapacity(self, PetscInt capacity):
        """Replay buffers ("buffer"): how many (input, target) pairs the ring holds."""
        CHKERR(NNDataBufferSetCapacity(self.data, capacity))

    def getBufferCapacity(self):
        cdef PetscInt n = 0
        CHKERR(NNDataBufferGetCapacity(self.data, &n))
        return n

    def setBufferReplacement(self, flag):
        CHKERR(NNDataBufferSetReplacement(self.data, asbool(flag)))

    def setBufferSeed(self, seed):
        CHKERR(NNDataBufferSetSeed(self.data, <PetscInt64>seed))

    def push(self, Vec x, Vec y):
        """Replay buffers: pushes one (input, target) pair, e.g. a simulation's state and its successor."""
        CHKERR(NNDataBufferPush(self.data, x.vec, y.vec))

    def getBufferCount(self):
        """Replay buffers: (pairs held now, pairs ever pushed)."""
        cdef PetscInt held = 0
        cdef PetscInt64 pushed = 0
        CHKERR(NNDataBufferGetCount(self.data, &held, &pushed))
        return held, pushed

    def getBatch(self, indices, Vec x, Vec t=None):
        """Fills x (and t) with the samples of the given global indices, one after the other."""
        cdef PetscInt[::1] ids = numpy.ascontiguousarray(indices, dtype=numpy.dtype("i%d" % sizeof(PetscInt)))
        cdef PetscInt dummy = 0
        CHKERR(NNDataGetBatch(self.data, ids.shape[0], &ids[0] if ids.shape[0] else &dummy, x.vec, NULL if t is None else t.vec))
