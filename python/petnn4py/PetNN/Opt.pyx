# NNOpt: optimizers (src/opt/)

cdef class Opt(Object):
    """An optimizer (PetNN's ``NNOpt``): "sgd", "adam" or "adamw", with a learning-rate schedule."""

    cdef PetOpt opt

    def __cinit__(self):
        self.obj = <PetscObject *>&self.opt
        self.opt = NULL

    def setType(self, opt_type):
        CHKERR(NNOptSetType(self.opt, str2bytes(opt_type)))

    def getType(self):
        cdef const char *t = NULL
        CHKERR(NNOptGetType(self.opt, &t))
        return bytes2str(t)

    def setLearningRate(self, PetscReal lr):
        CHKERR(NNOptSetLearningRate(self.opt, lr))

    def getLearningRate(self):
        cdef PetscReal lr = 0
        CHKERR(NNOptGetLearningRate(self.opt, &lr))
        return lr

    def setWeightDecay(self, PetscReal wd):
        CHKERR(NNOptSetWeightDecay(self.opt, wd))

    def setSchedule(self, schedule, PetscInt step=0, PetscReal gamma=0.1):
        """"none", "step" (times gamma every step epochs) or "cosine"."""
        CHKERR(NNOptSetSchedule(self.opt, str2bytes(schedule), step, gamma))

    def setMomentum(self, PetscReal momentum, nesterov=False):
        CHKERR(NNOptSGDSetMomentum(self.opt, momentum, asbool(nesterov)))

    def setBetas(self, PetscReal beta1, PetscReal beta2, PetscReal epsilon=1e-8):
        CHKERR(NNOptAdamSetBetas(self.opt, beta1, beta2, epsilon))

    def getNumSteps(self):
        cdef PetscInt n = 0
        CHKERR(NNOptGetNumSteps(self.opt, &n))
        return n

    def step(self, Vec theta, Vec grad):
        """One optimizer step: theta updated in place from grad (a training loop of one's own)."""
        CHKERR(NNOptStep(self.opt, theta.vec, grad.vec))

    def setEpoch(self, PetscInt epoch, PetscInt epochs):
        """The epoch the schedule is at (0-based) of how many."""
        CHKERR(NNOptSetEpoch(self.opt, epoch, epochs))

    def view(self, Viewer viewer=None):
        cdef PetscViewer v = NULL if viewer is None else viewer.vwr
        CHKERR(NNOptView(self.opt, v))
