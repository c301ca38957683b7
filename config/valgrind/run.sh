#!/usr/bin/env bash
# Valgrind memcheck on the serial test cases of a build (make valgrind).
#
#   config/valgrind/run.sh <build-dir> [ctest regex]
#
# Every serial run of a program becomes `valgrind ... <program>` (PETNN_TEST_WRAPPER of
# config/petnn_runtest.sh); test cases on several ranks and tests driven by a command: (Python)
# are left out. A run fails on an invalid read or write, a use of uninitialised memory, or a
# definitely or indirectly lost block (exit code 97); suppressions: Open MPI's own file and
# config/valgrind/petnn.supp (Open MPI, OpenBLAS, HDF5 internals only). Logs and a summary:
# <build-dir>/valgrind/. Memcheck runs programs 20-50 times slower: the training examples need a
# longer per-test limit than the default 300 s (configure with -DPETNN_TEST_TIMEOUT=3000).
set -u
build=${1:?usage: run.sh <build-dir> [ctest regex]}
regex=${2:-.}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$build" && pwd)
logs=$build/valgrind
rm -rf "$logs"
mkdir -p "$logs"
supp=(--suppressions="$here/petnn.supp")
[ -f /usr/share/openmpi/openmpi-valgrind.supp ] && supp+=(--suppressions=/usr/share/openmpi/openmpi-valgrind.supp)
# serial cases without a command: line
serial=()
while IFS= read -r f; do
  grep -qE '^T_NSIZE\[[0-9]+\]=([2-9]|[1-9][0-9])' "$f" && continue
  grep -qE "^T_COMMAND\[[0-9]+\]='[^']" "$f" && continue
  name=$(sed -n 's/^T_NAME=//p' "$f")
  [[ $name =~ $regex ]] && serial+=("$name")
done < <(find "$build/testdefs" -name '*.sh' | sort)
echo "valgrind: ${#serial[@]} serial test cases"
export PETNN_TEST_WRAPPER="valgrind --tool=memcheck --error-exitcode=97 --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --track-origins=no --num-callers=30 ${supp[*]} --log-file=$logs/vg.%p.log"
# OpenBLAS would pick AVX-512 kernels valgrind cannot run; MPI: keep components loaded for stacks
export OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1 OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
# the test harness's timeouts are far too short under valgrind
export MPIEXEC_TIMEOUT=0
"${CTEST:-ctest}" --test-dir "$build" -j "${CTEST_JOBS:-2}" --output-on-failure \
  -R "^($(IFS='|'; echo "${serial[*]}"))\$" >"$logs/ctest.log" 2>&1
rc=$?
# numbers per log: errors, definitely and indirectly lost bytes
printf '%8s %12s %12s  %s\n' errors definitely indirectly program >"$logs/summary.txt"
for l in "$logs"/*.log; do
  [ "$(basename "$l")" = ctest.log ] && continue
  e=$(sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' "$l" | tail -1)
  [ -z "$e" ] && continue # the child Open MPI forks to start its daemon (it execs, unchecked)
  d=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$l" | tail -1)
  i=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' "$l" | tail -1)
  c=$(sed -n 's/^==[0-9]*== Command: //p' "$l" | head -1 | cut -c1-120)
  printf '%8s %12s %12s  %s\n' "${e:-?}" "${d:-0}" "${i:-0}" "${c#"$build"/}" >>"$logs/summary.txt"
done
cat "$logs/summary.txt"
tail -n 3 "$logs/ctest.log"
exit $rc
