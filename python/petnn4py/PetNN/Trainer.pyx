# NNTrainer: epochs, shuffling, monitors and checkpoint policy of a network (src/trainer/)

cdef PetscErrorCode PyTrainMonitor(PetNN net, PetscInt epoch, PetscInt step, PetscReal loss, void *ctx) noexcept with gil:
    cdef NN w = NN()
    w.nn = net  # borrowed for the call
    try:
        (<object>ctx)(w, epoch, step, loss)
    except BaseException:
        return python_error("Python training monitor %r" % (<object>ctx,))
    finally:
        w.nn = NULL
    return 0


cdef PetscErrorCode PyTrainMonitorDestroy(void **ctx) noexcept nogil:
    if ctx != NULL and ctx[0] != NULL and Py_IsInitialized():  # not after Python's shutdown (PyLayerDestroy)
        release_python_object(ctx[0])
    if ctx != NULL:
        ctx[0] = NULL
    return 0


cdef class Trainer(Object):
    """How a network is trained (PetNN's ``NNTrainer``, from ``NN.getTrainer()``)."""

    cdef PetTrainer trainer

    def __cinit__(self):
        self.obj = <PetscObject *>&self.trainer
        self.trainer = NULL

    def setFromOptions(self):
        CHKERR(NNTrainerSetFromOptions(self.trainer))

    def getOpt(self):
        cdef Opt o = Opt()
        CHKERR(NNTrainerGetOpt(self.trainer, &o.opt))
        CHKERR(PetscObjectReference(<PetscObject>o.opt))
        return o

    def view(self, Viewer viewer=None):
        cdef PetscViewer v = NULL if viewer is None else viewer.vwr
        CHKERR(NNTrainerView(self.trainer, v))

    def setEpochs(self, PetscInt n):
        CHKERR(NNTrainerSetEpochs(self.trainer, n))

    def getEpochs(self):
        cdef PetscInt n = 0
        CHKERR(NNTrainerGetEpochs(self.trainer, &n))
        return n

    def setStepsPerEpoch(self, PetscInt steps):
        """Online training: how many trainStep() calls make an epoch of the schedule."""
        CHKERR(NNTrainerSetStepsPerEpoch(self.trainer, steps))

    def setShuffle(self, flag):
        CHKERR(NNTrainerSetShuffle(self.trainer, asbool(flag)))

    def setMonitor(self, flag):
        """Prints the loss and accuracy per epoch (-nn_monitor)."""
        CHKERR(NNTrainerSetMonitor(self.trainer, asbool(flag)))

    def setCheckpoint(self, filename):
        CHKERR(NNTrainerSetCheckpoint(self.trainer, str2bytes(filename)))

    def setCheckpointEvery(self, PetscInt epochs):
        CHKERR(NNTrainerSetCheckpointEvery(self.trainer, epochs))

    def getProgress(self):
        """(epochs done, optimizer steps taken, batches of the current epoch done)."""
        cdef PetscInt e = 0, s = 0, b = 0
        CHKERR(NNTrainerGetProgress(self.trainer, &e, &s, &b))
        return e, s, b

    def monitorSet(self, monitor):
        """Calls monitor(net, epoch, step, loss) after every optimizer step (a Python callable)."""
        if not callable(monitor):
            raise TypeError("monitor must be callable as monitor(net, epoch, step, loss)")
        Py_INCREF(monitor)
        try:
            CHKERR(NNTrainerMonitorSet(self.trainer, PyTrainMonitor, <void *>monitor, PyTrainMonitorDestroy))
        except BaseException:
            Py_DECREF(monitor)
            raise

    def monitorCancel(self):
        CHKERR(NNTrainerMonitorCancel(self.trainer))
