"""petnn4py's tests: run by CTest (python/pytest_1, python/pytest_2: config/petnn_pytest.sh) against the build
tree, on 1 and 2 ranks, every rank running the same tests. PETSc is initialized once, with -malloc_debug so
that the leak test can count PETSc's allocations."""
import os
import sys

import petnn4py

petnn4py.init([sys.argv[0], "-malloc_debug", "-options_left", "0"])

import pytest  # noqa: E402
from petsc4py import PETSc  # noqa: E402


def build_dir():
    return os.environ.get("PETNN_BUILD_DIR", "")


def clean_env():
    """The environment for a program started from a test: without the MPI job's variables, so that it
    starts as a program of its own (a singleton), not as a rank of this job."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_", "PRTE_"))}
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


@pytest.fixture
def comm():
    return PETSc.COMM_WORLD


@pytest.fixture
def serial():
    """Tests that run C programs as subprocesses (an MPI job cannot start one): on one rank only."""
    if PETSc.COMM_WORLD.getSize() > 1:
        pytest.skip("runs a C program next to the Python one; on one rank only")
    if not os.path.isdir(os.path.join(build_dir(), "examples")):
        pytest.skip("PETNN_BUILD_DIR does not name a build tree with examples/")
    return build_dir()
