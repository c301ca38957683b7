# Errors, strings, shapes and array views shared by the classes.

from cpython.buffer cimport PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES
from cpython.ref cimport Py_INCREF, Py_DECREF, PyObject

from petsc4py.PETSc import Error as Petsc4pyError

import numpy

# an exception raised by Python code that PetNN called back (a layer type, a monitor): re-raised as the
# cause of the PETSc.Error that reaches the caller
cdef object pending_exception = None

cdef int CHKERR(PetscErrorCode ierr) except -1:
    """Raises PETSc.Error (its message: PetNN's, kept by petsc4py's error handler) when ierr is nonzero."""
    global pending_exception
    if ierr == 0:
        return 0
    cause, pending_exception = pending_exception, None
    if cause is not None:
        raise Petsc4pyError(<long>ierr) from cause
    raise Petsc4pyError(<long>ierr)

cdef PetscErrorCode python_error(object where) with gil:
    """Called in a callback's except clause: keeps the exception and raises a PETSc error naming it."""
    global pending_exception
    import sys
    exc = sys.exc_info()[1]
    pending_exception = exc
    msg = ("%s raised %s: %s" % (where, type(exc).__name__, exc)).encode()
    return PetscError_C(msg)

cdef PetscErrorCode PetscError_C(bytes msg):
    cdef const char *m = msg
    return PetscError(PETSC_COMM_SELF, 0, "petnn4py", "petnn4py", PETSC_ERR_LIB, PETSC_ERROR_INITIAL, "%s", m)

cdef extern from "Python.h":
    int Py_IsInitialized() nogil


cdef void release_python_object(void *obj) noexcept with gil:
    Py_DECREF(<object>obj)


cdef inline bytes str2bytes(object s):
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return str(s).encode()

cdef inline str bytes2str(const char *s):
    if s == NULL:
        return None
    return (<bytes>s).decode()

cdef tuple shape2tuple(const NNShape *s):
    return tuple(s.dim[i] for i in range(s.ndim))

cdef PetscBool asbool(object b):
    return PETSC_TRUE if b else PETSC_FALSE


cdef class _Buffer:
    """A flat array of PetscScalar that some object owns, seen by numpy without a copy.

    The owner (a network, a data set) is kept alive as long as any numpy array made from the buffer.
    """
    cdef PetscScalar *data
    cdef Py_ssize_t n
    cdef bint readonly
    cdef object owner
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]

    def __getbuffer__(self, Py_buffer *view, int flags):
        if (flags & PyBUF_WRITABLE) and self.readonly:
            raise BufferError("read-only PetNN array")
        self.shape[0] = self.n
        self.strides[0] = sizeof(PetscScalar)
        view.buf = <void *>self.data
        view.obj = self
        view.len = self.n * sizeof(PetscScalar)
        view.readonly = self.readonly
        view.itemsize = sizeof(PetscScalar)
        view.format = NULL
        if flags & PyBUF_FORMAT:
            view.format = b"d"
        view.ndim = 1
        view.shape = self.shape
        view.strides = self.strides
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer *view):
        pass


cdef object asarray(const PetscScalar *data, Py_ssize_t n, object shape, bint readonly, object owner):
    """numpy view (no copy) of n PetscScalars at data, reshaped to shape."""
    cdef _Buffer b = _Buffer.__new__(_Buffer)
    b.data = <PetscScalar *>data
    b.n = n
    b.readonly = readonly
    b.owner = owner
    a = numpy.asarray(b)
    if shape is not None:
        a = a.reshape(shape)
    return a


cdef PetscScalar *arraypointer(object a, bint writable) except NULL:
    """The data pointer of a C-contiguous float64 numpy array (TypeError otherwise: no silent copy)."""
    cdef const PetscScalar[::1] ro
    cdef PetscScalar[::1] rw
    if not isinstance(a, numpy.ndarray) or a.dtype != numpy.float64 or not a.flags.c_contiguous:
        raise TypeError("expected a C-contiguous numpy array of float64 (PetscScalar); use numpy.ascontiguousarray(a, dtype=numpy.float64)")
    if a.size == 0:
        raise ValueError("expected a non-empty array")
    flat = a.reshape(-1)
    if writable:
        rw = flat
        return &rw[0]
    ro = flat
    return <PetscScalar *>&ro[0]
