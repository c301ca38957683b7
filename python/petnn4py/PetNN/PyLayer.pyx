# Layer types written in Python (numpy), registered with NNLayerRegister() like a C type
# (examples/custom_layer.c). Their passes run in double precision on the host; in single precision
# and on the device PetNN converts the activations at the layer's boundaries, as for any C type
# without float or device passes.

cdef dict python_layer_types = {}  # type name -> factory (a class) making one object per layer


cdef Layer borrowed_layer(PetLayer l):
    """A Layer wrapper for one callback; the caller clears it afterwards (no reference is taken)."""
    cdef Layer w = Layer()
    w.layer = l
    return w


cdef dict tensor_views(PetLayer l, const PetscScalar *base, bint readonly):
    """{tensor name: numpy view} of a layer's parameter tensors in the slice base points to."""
    cdef NNTensor *t
    views = {}
    if base == NULL:
        return views
    for i in range(l.ntensors):
        t = &l.tensors[i]
        if t.kind != NN_TENSOR_PARAM:
            continue
        shape = tuple(t.dim[j] for j in range(t.ndim))
        views[bytes2str(t.name)] = asarray(base + t.offset, t.size, shape, readonly, None)
    return views


cdef str python_layer_name(PetLayer l):
    cdef const char *name = NULL
    PetscObjectGetName(<PetscObject>l, &name)
    return bytes2str(name) or "(unnamed)"


cdef PetscErrorCode PyLayerSetUp(PetLayer l) noexcept with gil:
    cdef Layer w = borrowed_layer(l)
    try:
        out = (<object>l.data).setUp(w, shape2tuple(&l.inshape))
        out = tuple(out)
        if not 1 <= len(out) <= NN_MAX_DIM or any(d <= 0 for d in out):
            raise ValueError("setUp() returned output shape %r; give 1 to %d positive sizes" % (out, NN_MAX_DIM))
        l.outshape.ndim = len(out)
        for i, d in enumerate(out):
            l.outshape.dim[i] = d
    except BaseException:
        return python_error("Python layer %s: setUp()" % python_layer_name(l))
    finally:
        w.layer = NULL
    return 0


cdef PetscErrorCode PyLayerInitialize(PetLayer l) noexcept with gil:
    cdef Layer w = borrowed_layer(l)
    try:
        obj = <object>l.data
        if hasattr(obj, "initialize"):
            obj.initialize(w, tensor_views(l, l.theta, False))
    except BaseException:
        return python_error("Python layer %s: initialize()" % python_layer_name(l))
    finally:
        w.layer = NULL
    return 0


cdef tuple pass_shapes(PetLayer l, PetscInt n):
    """The numpy shapes of a pass's input and output: [n, *shape], or for a pointwise layer on a spatial (DMDA)
    activation [n, the rank's local entries per batch slot] (channels last)."""
    if l.localsize != NNShapeSize(&l.inshape):
        return (n, l.localsize), (n, l.localsize), n * l.localsize, n * l.localsize
    return (n,) + shape2tuple(&l.inshape), (n,) + shape2tuple(&l.outshape), n * NNShapeSize(&l.inshape), n * NNShapeSize(&l.outshape)


cdef PetscErrorCode PyLayerForward(PetLayer l, PetscInt n, const PetscScalar *x, PetscScalar *y) noexcept with gil:
    cdef Layer w = borrowed_layer(l)
    try:
        ins, outs, nin, nout = pass_shapes(l, n)
        xa = asarray(x, nin, ins, True, None)
        ya = asarray(y, nout, outs, False, None)
        (<object>l.data).forward(w, xa, ya, tensor_views(l, l.theta, True))
    except BaseException:
        return python_error("Python layer %s: forward()" % python_layer_name(l))
    finally:
        w.layer = NULL
    return 0


cdef PetscErrorCode PyLayerBackward(PetLayer l, PetscInt n, const PetscScalar *x, const PetscScalar *y, const PetscScalar *dy, PetscScalar *dx) noexcept with gil:
    cdef Layer w = borrowed_layer(l)
    try:
        ins, outs, nin, nout = pass_shapes(l, n)
        xa = asarray(x, nin, ins, True, None)
        ya = asarray(y, nout, outs, True, None) if y != NULL else None
        dya = asarray(dy, nout, outs, True, None)
        dxa = asarray(dx, nin, ins, False, None) if dx != NULL else None
        (<object>l.data).backward(w, xa, ya, dya, dxa, tensor_views(l, l.theta, True), tensor_views(l, l.dtheta, False))
    except BaseException:
        return python_error("Python layer %s: backward()" % python_layer_name(l))
    finally:
        w.layer = NULL
    return 0


cdef PetscErrorCode PyLayerView(PetLayer l, PetscViewer v) noexcept with gil:
    try:
        obj = <object>l.data
        text = obj.describe() if hasattr(obj, "describe") else "a layer written in Python (%s)" % type(obj).__name__
        msg = str2bytes(text)
    except BaseException:
        return python_error("Python layer %s: describe()" % python_layer_name(l))
    return PetscViewerASCIIPrintf(v, "%s\n", <const char *>msg)


cdef PetscErrorCode PyLayerDestroy(PetLayer l) noexcept nogil:
    # a layer may outlive the interpreter: petsc4py finalizes PETSc (and destroys the objects Python left to
    # PETSc's garbage collection) after Python has shut down, when no Python object may be touched
    if l.data != NULL and Py_IsInitialized():
        release_python_object(l.data)
    l.data = NULL
    return 0


cdef PetscErrorCode PyLayerCreate(PetLayer l) noexcept with gil:
    cdef const char *t = NULL
    cdef PetscErrorCode ierr = NNLayerGetType(l, &t)
    if ierr:
        return ierr
    try:
        obj = python_layer_types[bytes2str(t)]()
    except BaseException:
        return python_error("Python layer type %s: creating an instance" % bytes2str(t))
    Py_INCREF(obj)
    l.data = <void *>obj
    l.ops.setup = PyLayerSetUp
    l.ops.initialize = PyLayerInitialize
    l.ops.forward = PyLayerForward
    l.ops.backward = PyLayerBackward
    l.ops.view = PyLayerView
    l.ops.destroy = PyLayerDestroy
    return 0


def registerLayer(name, factory):
    """Registers a layer type written in Python, usable by name like a C type (``-<layer>_type name``).

    ``factory()`` makes one object per layer, with the methods (numpy arrays, samples first):

    - ``setUp(layer, inshape) -> outshape``: declares tensors with ``layer.addParameter(name, shape)``
    - ``initialize(layer, params)`` (optional): fills the views ``params[name]``
    - ``forward(layer, x, y, params)``: writes ``y`` [n, *outshape] from ``x`` [n, *inshape]
    - ``backward(layer, x, y, dy, dx, params, grads)``: writes ``dx`` (``None`` when not needed) and
      ADDS the parameter gradient into ``grads[name]``
    - ``describe()`` (optional): one line for ``NNView``

    The arrays are views of PetNN's own (no copy), valid during the call only. The passes run in
    double on the host; other precisions and devices convert at the layer's boundaries. A type without
    parameters whose output has its input's size is pointwise: it also runs on spatial (DMDA)
    activations, where x and y are [n, the rank's local entries per sample] (channels last).
    """
    python_layer_types[str(name)] = factory
    CHKERR(NNLayerRegister(str2bytes(name), PyLayerCreate))
