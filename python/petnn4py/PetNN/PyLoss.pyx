# Losses written in Python (numpy), registered with NNLossRegister() like a C loss. PetNN calls a loss's
# eval routine without a context, so each Python loss takes one of NSLOTS fixed C trampolines.

DEF NSLOTS = 8
cdef list python_losses = [None] * NSLOTS  # slot -> (name, object)


cdef PetscErrorCode py_loss_eval(int slot, PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept with gil:
    name, obj = python_losses[slot]
    try:
        k = 1 if obj.classification else nout
        ya = asarray(y, n * nout, (n, nout), True, None)
        ta = asarray(t, n * k, (n, k) if k > 1 else (n,), True, None)
        dya = asarray(dy, n * nout, (n, nout), False, None) if dy != NULL else None
        loss[0] = float(obj.eval(ya, ta, dya))
    except BaseException:
        return python_error("Python loss %s: eval()" % name)
    return 0


cdef PetscErrorCode py_loss_eval_0(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(0, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_0(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_0
    ops.classification = asbool(getattr(python_losses[0][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_1(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(1, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_1(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_1
    ops.classification = asbool(getattr(python_losses[1][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_2(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(2, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_2(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_2
    ops.classification = asbool(getattr(python_losses[2][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_3(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(3, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_3(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_3
    ops.classification = asbool(getattr(python_losses[3][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_4(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(4, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_4(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_4
    ops.classification = asbool(getattr(python_losses[4][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_5(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(5, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_5(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_5
    ops.classification = asbool(getattr(python_losses[5][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_6(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(6, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_6(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_6
    ops.classification = asbool(getattr(python_losses[6][1], "classification", False))
    return 0


cdef PetscErrorCode py_loss_eval_7(PetscInt n, PetscInt nout, const PetscScalar *y, const PetscScalar *t, PetscReal *loss, PetscScalar *dy) noexcept nogil:
    return py_loss_eval(7, n, nout, y, t, loss, dy)


cdef PetscErrorCode py_loss_create_7(NNLossOps *ops) noexcept with gil:
    ops.eval = py_loss_eval_7
    ops.classification = asbool(getattr(python_losses[7][1], "classification", False))
    return 0


ctypedef PetscErrorCode (*LossCreate)(NNLossOps *) noexcept nogil
cdef LossCreate py_loss_creates[NSLOTS]
py_loss_creates[0] = py_loss_create_0
py_loss_creates[1] = py_loss_create_1
py_loss_creates[2] = py_loss_create_2
py_loss_creates[3] = py_loss_create_3
py_loss_creates[4] = py_loss_create_4
py_loss_creates[5] = py_loss_create_5
py_loss_creates[6] = py_loss_create_6
py_loss_creates[7] = py_loss_create_7


def registerLoss(name, loss):
    """Registers a loss written in Python, usable by name like a C loss (``net.setLoss(name)``, ``-nn_loss name``).

    ``loss`` has ``eval(y, t, dy) -> mean loss``: ``y`` the outputs [n, nout], ``t`` the targets ([n] class
    indices when ``loss.classification`` is true, else [n, nout]); it writes dL/dy into ``dy`` unless ``dy`` is
    None. For sequential outputs (a spatial output needs a C loss with partial sums); at most 8 Python
    losses. Registering a name again replaces the loss.
    """
    name = str(name)
    for slot in range(NSLOTS):
        if python_losses[slot] is not None and python_losses[slot][0] == name:
            break
    else:
        free = [i for i in range(NSLOTS) if python_losses[i] is None]
        if not free:
            raise RuntimeError("at most %d losses written in Python" % NSLOTS)
        slot = free[0]
    python_losses[slot] = (name, loss)
    CHKERR(NNLossRegister(str2bytes(name), py_loss_creates[slot]))
