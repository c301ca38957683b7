#!/usr/bin/env bash
# Runs the libFuzzer targets built in <build-fuzz> (make fuzz-build) for <seconds> each.
#
#   tests/fuzz/run.sh <build-fuzz> <seconds> [targets...]     (default: all six)
#
# For each target: replays tests/fuzz/<t>/regressions (the crashes found so far must stay fixed),
# then fuzzes from tests/fuzz/<t>/corpus into the work corpus <build-fuzz>/corpus/<t>; findings go
# to <build-fuzz>/artifacts/<t>/. Leaks are checked on every execution (LeakSanitizer, suppressions
# in tests/fuzz/lsan.supp). The options target unwinds allocations slowly (fast_unwind_on_malloc=0)
# because its suppression matches a PETSc frame, and PETSc is built without frame pointers.
# Exit status: non-zero if any target reported a crash, leak, timeout or sanitizer error.
# Environment: FUZZ_NICE (default 19), FUZZ_ARGS (extra libFuzzer flags, e.g. -runs=1000000),
# FUZZ_LEAKS (default 1). FUZZ_LEAKS=0 is for long campaigns: executions run without LeakSanitizer
# (the options target then runs about 100 times faster: its leak suppressions need slow full
# unwinding on every malloc), and afterwards every input of the resulting corpus -- one per
# coverage feature found -- is replayed with leak checking on; a leak there fails the target.
set -u
build=${1:?usage: run.sh <build-fuzz> <seconds> [targets...]}
secs=${2:?usage: run.sh <build-fuzz> <seconds> [targets...]}
shift 2
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(idx binary hdf5 checkpoint options onnx)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(cd "$build" && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_mca_base_component_disable_dlclose=1
export LSAN_OPTIONS="suppressions=$here/lsan.supp:leak_check_at_exit=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
# the targets write scratch files (and an input may name an output file): work in the build tree
mkdir -p "$build/run"
cd "$build/run" || exit 1
export TMPDIR="$build/run"
for t in "${targets[@]}"; do
  exe=$build/fuzz_$t
  if [ "$t" = onnx ] && [ ! -x "$exe" ]; then
    echo "fuzz: $exe not built (a library without ONNX import: PETNN_WITH_ONNX off), skipped"
    continue
  fi
  [ -x "$exe" ] || { echo "fuzz: $exe not built (make fuzz-build)"; status=1; continue; }
  asan="detect_leaks=1"
  [ "$t" = options ] && asan="$asan:fast_unwind_on_malloc=0"
  fuzzasan=$asan
  [ "${FUZZ_LEAKS:-1}" = 0 ] && fuzzasan="detect_leaks=0"
  dict=()
  [ -f "$here/$t.dict" ] && dict=(-dict="$here/$t.dict")
  work=$build/corpus/$t
  art=$build/artifacts/$t
  mkdir -p "$work" "$art"
  if [ -d "$here/$t/regressions" ] && [ -n "$(ls -A "$here/$t/regressions" 2>/dev/null)" ]; then
    if ! ASAN_OPTIONS=$asan "$exe" -runs=0 "$here/$t/regressions" >"$build/$t.replay.log" 2>&1; then
      echo "fuzz $t: a regression input fails again (see $build/$t.replay.log)"
      status=1
      continue
    fi
  fi
  # shellcheck disable=SC2086
  ASAN_OPTIONS=$fuzzasan nice -n "${FUZZ_NICE:-19}" "$exe" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2560 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_ARGS:-} \
    "$work" "$here/$t/corpus" >"$build/$t.log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log")
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/$t.log")
  echo "fuzz $t: exit $rc, ${runs:-?} executions, ${eps:-?} exec/s, corpus $(ls "$work" | wc -l) inputs, log $build/$t.log"
  [ "$rc" = 0 ] || { grep -m3 -E "ERROR|SUMMARY|Test unit written" "$build/$t.log"; status=1; }
  if [ "${FUZZ_LEAKS:-1}" = 0 ]; then # the corpus, leak-checked
    ASAN_OPTIONS=$asan "$exe" -runs=0 "$work" >"$build/$t.leaks.log" 2>&1
    lrc=$?
    echo "fuzz $t: corpus replayed with leak checking: exit $lrc, $(ls "$work" | wc -l) inputs, log $build/$t.leaks.log"
    [ "$lrc" = 0 ] || { grep -m3 -E "ERROR|SUMMARY" "$build/$t.leaks.log"; status=1; }
  fi
done
exit $status
