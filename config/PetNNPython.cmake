# petnn4py (python/): PetNN's classes as petsc4py objects, a Cython extension compiled against petsc4py's
# PETSc.pxd as slepc4py is. On (PETNN_WITH_PYTHON) when a Python interpreter has petsc4py built for this
# PETSc's major.minor and numpy, and Cython is found; the configure output says which interpreter and why not.
#
# Build tree: ${CMAKE_BINARY_DIR}/python/petnn4py (PYTHONPATH=${CMAKE_BINARY_DIR}/python).
# Install:    <prefix>/${PETNN_PYTHON_INSTALL_DIR}/petnn4py (default lib/python3.X/site-packages).

# the first interpreter (the one given as Python3_EXECUTABLE, python3 on PATH, the system's) with petsc4py
# for this PETSc and numpy: a pyenv or venv python3 first on PATH often has neither
set(_petnn_py_candidates)
if(Python3_EXECUTABLE)
  list(APPEND _petnn_py_candidates ${Python3_EXECUTABLE})
endif()
find_program(_petnn_py_path NAMES python3)
foreach(_c ${_petnn_py_path} /usr/bin/python3)
  if(EXISTS ${_c})
    list(APPEND _petnn_py_candidates ${_c})
  endif()
endforeach()
list(REMOVE_DUPLICATES _petnn_py_candidates)
string(REGEX MATCH "^[0-9]+\\.[0-9]+" _petnn_petsc_mm "${PETSC_VERSION}")
set(PETNN_PYTHON_EXECUTABLE "")
set(_petnn_py_why "no python3 found")
foreach(_c ${_petnn_py_candidates})
  execute_process(COMMAND ${_c} -c "import sys, sysconfig, petsc4py, numpy; print(petsc4py.__version__); print(petsc4py.get_include()); print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX')); print('%d.%d' % sys.version_info[:2])"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc EQUAL 0)
    set(_petnn_py_why "${_c} has no petsc4py or numpy")
    continue()
  endif()
  string(REPLACE "\n" ";" _out "${_out}")
  list(GET _out 0 _p4py_version)
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _p4py_mm "${_p4py_version}")
  if(NOT _p4py_mm STREQUAL _petnn_petsc_mm)
    set(_petnn_py_why "${_c}'s petsc4py ${_p4py_version} is not for PETSc ${PETSC_VERSION}")
    continue()
  endif()
  set(PETNN_PYTHON_EXECUTABLE ${_c})
  list(GET _out 1 PETNN_PETSC4PY_INCLUDE)
  list(GET _out 2 PETNN_PYTHON_INCLUDE)
  list(GET _out 3 PETNN_PYTHON_EXT_SUFFIX)
  list(GET _out 4 PETNN_PYTHON_VERSION)
  break()
endforeach()
find_program(PETNN_CYTHON NAMES cython3 cython)
set(_petnn_py_default OFF)
if(PETNN_PYTHON_EXECUTABLE AND PETNN_CYTHON)
  set(_petnn_py_default ON)
elseif(PETNN_PYTHON_EXECUTABLE)
  set(_petnn_py_why "no Cython (Debian: cython3)")
endif()
option(PETNN_WITH_PYTHON "Build the Python bindings petnn4py (Cython on petsc4py)" ${_petnn_py_default})
if(NOT PETNN_WITH_PYTHON)
  if(_petnn_py_default)
    set(_petnn_py_why "-DPETNN_WITH_PYTHON=OFF")
  endif()
  message(STATUS "PetNN: Python bindings (petnn4py) OFF: ${_petnn_py_why}")
  return()
endif()
if(NOT PETNN_PYTHON_EXECUTABLE OR NOT PETNN_CYTHON)
  message(FATAL_ERROR "PETNN_WITH_PYTHON is ON but ${_petnn_py_why}")
endif()
message(STATUS "PetNN: Python bindings (petnn4py) ON: ${PETNN_PYTHON_EXECUTABLE} (Python ${PETNN_PYTHON_VERSION}), petsc4py ${_p4py_version}, ${PETNN_CYTHON}")

set(_petnn_py_src ${CMAKE_CURRENT_SOURCE_DIR}/python/petnn4py)
set(_petnn_py_out ${CMAKE_BINARY_DIR}/python/petnn4py)
file(GLOB _petnn_py_deps CONFIGURE_DEPENDS ${_petnn_py_src}/*.pyx ${_petnn_py_src}/PetNN/*.pyx ${_petnn_py_src}/PetNN/*.pxi)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/python/PetNN.c
  COMMAND ${PETNN_CYTHON} -3 -I ${PETNN_PETSC4PY_INCLUDE} -o ${CMAKE_BINARY_DIR}/python/PetNN.c ${_petnn_py_src}/PetNN.pyx
  DEPENDS ${_petnn_py_deps}
  COMMENT "Cython: petnn4py.PetNN")
add_library(petnn4py MODULE ${CMAKE_BINARY_DIR}/python/PetNN.c)
target_include_directories(petnn4py PRIVATE ${PETNN_PYTHON_INCLUDE} ${PETNN_PETSC4PY_INCLUDE})
target_link_libraries(petnn4py PRIVATE petnn)
target_compile_options(petnn4py PRIVATE -w) # generated code
set_target_properties(petnn4py PROPERTIES PREFIX "" OUTPUT_NAME PetNN SUFFIX "${PETNN_PYTHON_EXT_SUFFIX}"
  LIBRARY_OUTPUT_DIRECTORY ${_petnn_py_out})
configure_file(${_petnn_py_src}/__init__.py ${_petnn_py_out}/__init__.py COPYONLY)

set(PETNN_PYTHON_INSTALL_DIR "lib/python${PETNN_PYTHON_VERSION}/site-packages" CACHE STRING "Where make install puts petnn4py, relative to the prefix")
# the installed module finds the installed libpetnn relative to itself, so `cmake --install --prefix` relocates it
file(RELATIVE_PATH _petnn_py_to_lib /prefix/${PETNN_PYTHON_INSTALL_DIR}/petnn4py /prefix/${CMAKE_INSTALL_LIBDIR})
set_target_properties(petnn4py PROPERTIES INSTALL_RPATH "$ORIGIN/${_petnn_py_to_lib};${PETNN_INSTALL_RPATH}")
install(TARGETS petnn4py LIBRARY DESTINATION ${PETNN_PYTHON_INSTALL_DIR}/petnn4py)
install(FILES ${_petnn_py_src}/__init__.py DESTINATION ${PETNN_PYTHON_INSTALL_DIR}/petnn4py)
