"""petnn4py: PetNN (deep learning in PETSc) from Python, on petsc4py.

Use it as slepc4py is used::

    import sys, petnn4py
    petnn4py.init(sys.argv)          # PETSc's options from the command line (optional)
    from petsc4py import PETSc
    from petnn4py import PetNN

    net = PetNN.NN().create()
    net.setFromOptions()             # -nn_layers ..., -<layer>_type ..., as for the C programs

Its objects are petsc4py objects: the options database, prefixes, ``view()``, ``-log_view`` and
``PETSc.Error`` work as for PETSc's own; a ``PETSc.Vec`` passes to PetNN without a copy.
"""

__version__ = "0.1"


def init(args=None, comm=None):
    """Initializes PETSc through petsc4py with these command-line arguments (before the first import of PetNN)."""
    import petsc4py
    petsc4py.init(args, comm=comm)

