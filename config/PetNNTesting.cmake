# PetNNTesting.cmake -- register the /*TEST ... TEST*/ blocks of source files as CTest tests.
#
#   include(config/PetNNTesting.cmake)
#   petnn_add_harness_tests(FILES <src.c>... [SOURCE_ROOT dir])
#
# Each source file's executable target must be named after the file (tests/dense.c -> dense).
# Parsing happens at configure time with PETSc's own testparse.py; editing a .c file
# re-runs the configure step.  See config/petnn_testgen.py and config/petnn_runtest.sh.
#
# Cache variables:
#   PETNN_PYTHON            interpreter for the generator and requires: torch (/usr/bin/python3)
#   PETNN_PETSC_CONFIG_DIR  PETSc's examples/config (testparse.py, gmakegen.py)
#   PETNN_PETSCDIFF         PETSc's petscdiff
#   PETNN_MPIEXEC           MPI launcher line for nsize > 1
#   PETNN_TEST_TIMEOUT      seconds per test case before timeoutfactor (300)
# Variables read:
#   PETNN_TEST_FEATURES     extra names that requires: accepts (e.g. cuda when built with CUDA)

set(_petnn_testing_dir "${CMAKE_CURRENT_LIST_DIR}")

set(PETNN_PYTHON "/usr/bin/python3" CACHE FILEPATH "Python used by the test generator (needs torch for requires: torch)")
set(PETNN_TEST_TIMEOUT 300 CACHE STRING "Default test timeout in seconds (multiplied by timeoutfactor:)")

if(NOT PETNN_PETSC_CONFIG_DIR OR NOT PETNN_PETSCDIFF)
  set(_hints)
  if(PETSC_PREFIX)
    list(APPEND _hints "${PETSC_PREFIX}")
  endif()
  if(PETSC_VERSION MATCHES "^([0-9]+)\\.([0-9]+)")
    list(APPEND _hints "/usr/share/petsc/${CMAKE_MATCH_1}.${CMAKE_MATCH_2}")
  endif()
  list(APPEND _hints "$ENV{PETSC_DIR}" "/usr/share/petsc/3.18")
endif()
find_path(PETNN_PETSC_CONFIG_DIR testparse.py
  HINTS ${_hints}
  PATH_SUFFIXES share/petsc/examples/config config
  NO_DEFAULT_PATH
  DOC "Directory with PETSc's testparse.py (Debian: libpetsc3.18-dev-examples)")
find_program(PETNN_PETSCDIFF petscdiff
  HINTS ${_hints}
  PATH_SUFFIXES lib/petsc/bin
  NO_DEFAULT_PATH
  DOC "PETSc's petscdiff")

if(NOT DEFINED PETNN_MPIEXEC)
  find_program(_petnn_mpiexec NAMES mpiexec mpirun)
  set(_mpiexec "${_petnn_mpiexec}")
  if(_petnn_mpiexec)
    execute_process(COMMAND "${_petnn_mpiexec}" --version OUTPUT_VARIABLE _v ERROR_VARIABLE _v
                    RESULT_VARIABLE _r TIMEOUT 20)
    if(_v MATCHES "Open ?MPI|OpenRTE")
      string(APPEND _mpiexec " --oversubscribe")
    endif()
  else()
    set(_mpiexec "mpiexec")
  endif()
  set(PETNN_MPIEXEC "${_mpiexec}" CACHE STRING "MPI launcher for tests with nsize > 1 (the runner adds -n N)")
endif()

# requires: torch  ==  ${PETNN_PYTHON} can import torch and h5py (a success is cached)
function(_petnn_detect_test_features out)
  set(feats ${PETNN_TEST_FEATURES})
  if(NOT PETNN_HAVE_TORCH)
    execute_process(COMMAND "${PETNN_PYTHON}" -c "import torch, h5py"
                    RESULT_VARIABLE r OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
    if(r EQUAL 0)
      set(PETNN_HAVE_TORCH TRUE CACHE INTERNAL "PETNN_PYTHON imports torch and h5py")
    endif()
  endif()
  if(PETNN_HAVE_TORCH)
    list(APPEND feats torch)
  endif()
  if(EXISTS "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")
    list(APPEND feats fashion_mnist fashionmnist)
  endif()
  if(PETNN_WITH_SLEPC)
    list(APPEND feats slepc)
  endif()
  if(PETSC_VERSION VERSION_GREATER_EQUAL 3.21)
    list(APPEND feats petsc_rk_adjoint_zero_weights)  # TSAdjoint exact for RK tableaus with zero weights (2b, 5f, 5dp)
  endif()
  if(PETNN_WITH_FFTW)
    list(APPEND feats petnn_fftw)  # not "fftw": PETSc itself may have FFTW (PETSC_HAVE_FFTW)
    if(PETNN_FFTWF_FOUND)
      list(APPEND feats petnn_fftwf)  # and its single-precision library: the spectral_conv layers' float passes
    endif()
  endif()
  if(PETNN_WITH_CUDA)
    list(APPEND feats cuda)  # the test programs then skip at run time (exit code 77) when no GPU is present
  endif()
  if(PETNN_CUDA_EMULATION)
    list(APPEND feats cuda_emulation)  # the device code on the host (src/sys/cuda/emulation/): no GPU needed, no cuDNN
  endif()
  if(PETNN_CUDNN_LIBRARY_DIR)
    list(APPEND feats cudnn)
  endif()
  if(PETNN_WITH_ONNX)
    if(NOT PETNN_HAVE_PY_ONNX)
      execute_process(COMMAND "${PETNN_PYTHON}" -c "import onnx"
                      RESULT_VARIABLE r OUTPUT_QUIET ERROR_QUIET TIMEOUT 120)
      if(r EQUAL 0)
        set(PETNN_HAVE_PY_ONNX TRUE CACHE INTERNAL "PETNN_PYTHON imports onnx")
      endif()
    endif()
    if(PETNN_HAVE_PY_ONNX)
      list(APPEND feats petnn_onnx)  # ONNX import built, and the onnx package writes the tests' bad models
    endif()
  endif()
  if(PETNN_WITH_FORTRAN)
    list(APPEND feats petnn_fortran)  # the Fortran module and examples were built (not "fortran": PETSc has PETSC_HAVE_FORTRAN)
  endif()
  set(${out} ${feats} PARENT_SCOPE)
endfunction()

function(petnn_add_harness_tests)
  cmake_parse_arguments(A "" "SOURCE_ROOT" "FILES" ${ARGN})
  if(NOT A_SOURCE_ROOT)
    set(A_SOURCE_ROOT "${CMAKE_CURRENT_SOURCE_DIR}")
  endif()
  if(NOT PETNN_PETSC_CONFIG_DIR OR NOT PETNN_PETSCDIFF OR NOT EXISTS "${PETNN_PYTHON}")
    message(WARNING "PetNN tests disabled: need ${PETNN_PYTHON}, PETSc's testparse.py and petscdiff "
                    "(Debian package libpetsc3.18-dev-examples); set PETNN_PETSC_CONFIG_DIR / PETNN_PETSCDIFF")
    return()
  endif()

  # PETSc's configuration header, for requires: (hdf5, complex, double, int64, ...)
  set(petscconf "")
  foreach(d ${PETSC_INCLUDE_DIRS} ${PETSC_INCLUDEDIR})
    if(EXISTS "${d}/petscconf.h")
      set(petscconf "${d}/petscconf.h")
      break()
    endif()
  endforeach()
  _petnn_detect_test_features(features)
  string(REPLACE ";" " " features "${features}")

  set(outfile "${CMAKE_BINARY_DIR}/PetNNHarnessTests.cmake")
  file(REMOVE_RECURSE "${CMAKE_BINARY_DIR}/testdefs")
  execute_process(
    COMMAND "${PETNN_PYTHON}" "${_petnn_testing_dir}/petnn_testgen.py"
            --source-root "${A_SOURCE_ROOT}"
            --binary-dir "${CMAKE_BINARY_DIR}"
            --output "${outfile}"
            --runner "${_petnn_testing_dir}/petnn_runtest.sh"
            --testparse-dir "${PETNN_PETSC_CONFIG_DIR}"
            --petscconf "${petscconf}"
            --features "${features}"
            --timeout "${PETNN_TEST_TIMEOUT}"
            --mpiexec "${PETNN_MPIEXEC}"
            --petscdiff "${PETNN_PETSCDIFF}"
            ${A_FILES}
    RESULT_VARIABLE r
    OUTPUT_VARIABLE o
    ERROR_VARIABLE e)
  if(NOT r EQUAL 0)
    message(FATAL_ERROR "config/petnn_testgen.py failed (${r}):\n${o}${e}")
  endif()
  if(e)
    message(WARNING "${e}")
  endif()
  string(STRIP "${o}" o)
  message(STATUS "${o}")

  # re-run configure when a TEST block (or the generator) changes
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${A_FILES} "${_petnn_testing_dir}/petnn_testgen.py")

  set(PETNN_TEST_EXECUTABLES)
  include("${outfile}")
  if(PETNN_TEST_EXECUTABLES)
    list(REMOVE_DUPLICATES PETNN_TEST_EXECUTABLES)
  endif()
  set(PETNN_TEST_EXECUTABLES ${PETNN_TEST_EXECUTABLES} PARENT_SCOPE)
endfunction()
