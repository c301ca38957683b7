# cython: language_level=3
# cython: embedsignature=True
# cython: cdivision=True
"""PetNN's classes as petsc4py objects (built as petnn4py.PetNN; import it as ``from petnn4py import PetNN``)."""

from petsc4py.PETSc cimport MPI_Comm, PetscObject, PetscViewer, PetscVec, PetscDM, PetscTAO
from petsc4py.PETSc cimport Object, Viewer, Vec, DM, TAO
from petsc4py.PETSc cimport GetComm, GetCommDefault, PyPetscType_Register

include "PetNN/petnnapi.pxi"
include "PetNN/petnnsys.pxi"
include "PetNN/NN.pyx"
include "PetNN/Layer.pyx"
include "PetNN/PyLayer.pyx"
include "PetNN/PyLoss.pyx"
include "PetNN/Data.pyx"
include "PetNN/Opt.pyx"
include "PetNN/Trainer.pyx"

__version__ = "%d.%d" % (PETNN_VERSION_MAJOR, PETNN_VERSION_MINOR)

def mallocUsage():
    """Bytes PETSc's tracing allocator holds now (0 unless PETSc runs with -malloc_debug or -malloc_dump)."""
    cdef PetscLogDouble m = 0
    CHKERR(PetscMallocGetCurrentUsage(&m))
    return m


cdef int initialize() except -1:
    CHKERR(PetNNInitializePackage())
    PyPetscType_Register(NN_CLASSID, NN)
    PyPetscType_Register(NNLAYER_CLASSID, Layer)
    PyPetscType_Register(NNDATA_CLASSID, Data)
    PyPetscType_Register(NNOPT_CLASSID, Opt)
    PyPetscType_Register(NNTRAINER_CLASSID, Trainer)
    return 0

initialize()
