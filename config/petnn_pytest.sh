#!/usr/bin/env bash
# CTest python/pytest_<n>: petnn4py's pytest suite on n ranks, against the build tree
#
#   petnn_pytest.sh <build dir> <ranks> <python> <test dir or file> [pytest args]
#   petnn_pytest.sh <build dir> <ranks> <python> --script <file.py> [args]   (a Python example instead)
#
# Every rank runs the same tests (collective calls line up) and prints its own report. PyTorch and Fashion-MNIST are optional: the tests that need them skip with the reason.
set -uo pipefail
build=$(cd "${1:?build dir}" && pwd)
n=${2:?ranks}
python=${3:?python}
if [ "${4:-}" = --script ]; then
  script=$(realpath "${5:?script}")
  shift 5
else
  tests=$(realpath "${4:?test dir or file}")
  shift 4
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
export PETNN_BUILD_DIR=$build PYTHONDONTWRITEBYTECODE=1
if [ "$n" -gt 1 ]; then export OPENBLAS_NUM_THREADS=1; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/petnn4py-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
if [ -n "${script:-}" ]; then
  exec mpiexec --oversubscribe -n "$n" "$python" "$script" "$@"
fi
status=0
mpiexec --oversubscribe -n "$n" "$python" -m pytest -q -p no:cacheprovider -o cache_dir="$work" "$tests" "$@" 2>&1 |
  tee "$work/out" || status=$?
# the tests run under -malloc_debug: PETSc lists what is still allocated at PetscFinalize
if grep -qE '^\[ *[0-9]+\] [0-9]+ bytes ' "$work/out"; then
  echo "petnn_pytest: PETSc memory left allocated at PetscFinalize (above): a leak"
  status=1
fi
exit $status
