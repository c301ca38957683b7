#!/usr/bin/env bash
# Runs the whole test suite of a build once with OpenBLAS's own choice of kernels and once per forced
# core type (make check-cores), so a machine of one CPU type shows what machines of others would.
#
#   config/check-cores.sh <build-dir> [core types...]      (default: SkylakeX Sandybridge Haswell)
#
# Debian's OpenBLAS is built with DYNAMIC_ARCH: it carries kernels for every x86-64 core and picks one
# at load time; OPENBLAS_CORETYPE=<name> forces another. Kernels differ in blocking, summation order
# and FMA use (Sandybridge: AVX without FMA), so they round differently. Every test runs, not a
# subset: any result that reaches a tolerance, a convergence test or an expected output passes
# through BLAS somewhere (GEMMs of the layers, PETSc's own BLAS calls in Vec/Mat/KSP/TAO), and the
# tests that do not (option errors, bad input) cost seconds. A core type newer than the CPU would
# fault on illegal instructions, so the script refuses names this CPU cannot run: OpenBLAS falls
# back silently to another kernel for names it does not know, and the script checks which one it
# loaded. CTEST_ARGS (environment) is passed to each ctest run; CHECK_CORES_NATIVE=0 (environment) leaves out the run
# with OpenBLAS's own choice (make check has run it).
set -uo pipefail
build=${1:?usage: check-cores.sh <build-dir> [core types...]}
shift
cores=("$@")
[ ${#cores[@]} -eq 0 ] && cores=(SkylakeX Sandybridge Haswell)

# the kernel set OpenBLAS loads under OPENBLAS_CORETYPE=$1; empty: the variable unset, OpenBLAS's own choice (an empty
# value is a name it does not know, which loads another kernel set)
coretype() { if [ -n "$1" ]; then env OPENBLAS_CORETYPE="$1" "${@:2}"; else env -u OPENBLAS_CORETYPE "${@:2}"; fi; }
corename() {
  coretype "$1" python3 -c 'import ctypes
l = ctypes.CDLL("libopenblas.so.0")
l.openblas_get_corename.restype = ctypes.c_char_p
print(l.openblas_get_corename().decode())'
}

native=$(corename "")
echo "check-cores: OpenBLAS's own choice on this CPU: $native; forced: ${cores[*]}"
for c in "${cores[@]}"; do
  got=$(corename "$c")
  if [ "${got,,}" != "${c,,}" ]; then
    echo "check-cores: OPENBLAS_CORETYPE=$c loads OpenBLAS's $got kernels: not a core type it knows (e.g. Haswell, SkylakeX, Cooperlake, Zen, Sandybridge, Nehalem, Prescott)" >&2
    exit 2
  fi
done

summary=()
status=0
runs=("" "${cores[@]}")
[ "${CHECK_CORES_NATIVE:-1}" = 0 ] && runs=("${cores[@]}")
for c in "${runs[@]}"; do
  label=${c:-native ($native)}
  echo "check-cores: ===== ${label} ====="
  start=$(date +%s)
  # shellcheck disable=SC2086
  coretype "$c" ${CTEST:-ctest} --test-dir "$build" --output-on-failure -j "${CTEST_JOBS:-2}" ${CTEST_ARGS:-} >"$build/check-cores-${c:-native}.log" 2>&1
  rc=$?
  end=$(date +%s)
  result=$(grep -E "tests passed" "$build/check-cores-${c:-native}.log" | tail -1)
  failed=$(grep -E "^\s+[0-9]+ - " "$build/check-cores-${c:-native}.log" | grep -v "(Skipped)" | sed -E 's/^\s+[0-9]+ - //' | tr '\n' ' ')
  summary+=("$(printf '%-22s %s (%d s)%s' "$label" "${result:-no result}" $((end - start)) "${failed:+ failed: $failed}")")
  [ $rc -ne 0 ] && status=1
  echo "${summary[-1]}"
done
echo "check-cores: summary (logs in $build/check-cores-*.log)"
printf '  %s\n' "${summary[@]}"
exit $status
