#!/usr/bin/env bash
# run-tests.sh -- run PetNN test cases from the bundle, as the harness does in the build tree
# (config/petnn_runtest.sh): same arguments, ranks, filters and expected outputs, compared with
# PETSc's petscdiff (floating-point numbers masked).
#
#   <bundle>/tests/run-tests.sh            the default subset (below)
#   <bundle>/tests/run-tests.sh REGEX      every bundled case whose name (e.g. tests/layers_1,
#                                          examples/peaks_compare_2) matches the extended regex
#   <bundle>/tests/run-tests.sh -l         list the bundled cases
# The bundle holds the cases that run a compiled program (not the python cross-checks).  Cases
# reading Fashion-MNIST need the IDX files at /usr/share/datasets/fashion-mnist, as in the build.
# Each case runs in a scratch mirror of the bundle's tests/ and examples/ under ${TMPDIR:-/tmp}.
# Exit status: 0 when no selected case fails. A program that exits with code 77 skipped itself (the GPU
# tests without a GPU): its case is counted as skipped, not passed.
set -u
bindir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../bin" && pwd -P)
bundle=$(dirname "$bindir")
default='^(tests/(layers_1|conv_2|mgrit_2|data_files_1|checkpoint_1|reorder_2)|examples/peaks_compare_[12])$'
if [ "${1:-}" = -l ]; then
  for d in "$bundle"/testdefs/*/*.sh; do echo "$(basename "$(dirname "$d")")/$(basename "$d" .sh)"; done
  exit 0
fi
regex=${1:-$default}
# shellcheck disable=SC1091
source "$bindir/petnn-env"
export LC_ALL=C
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -check_pointer_intensity 0 -error_output_stdout -malloc_dump"
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
petscdiff=$bundle/share/petsc/petscdiff
scratch=$(mktemp -d "${TMPDIR:-/tmp}/petnn-tests.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

npass=0
nfail=0
nskip=0
failed=()
skippedcases=()
run_case() { # $1: descriptor; runs every run of the case, returns 0 when all pass, 77 when one skipped itself
  local desc=$1 i n exe args cmd out err expected c rel rundir rc ok=0 cands=()
  unset T_NSIZE T_ARGS T_FILTER T_FILTER_OUTPUT T_DIFF_ARGS T_ENV T_ERROR T_LOCALRUNFILES
  # shellcheck disable=SC1090
  source "$desc"
  rel=$T_RELDIR
  case "$rel" in
    tests) exe=$bundle/tests/bin/$(basename "$T_SOURCE" .c) ;;
    *)     exe=$bundle/bin/$(basename "$T_SOURCE" .c) ;;
  esac
  rm -rf "${scratch:?}"/*
  # a mirror of tests/, examples/ and bench/: symlinks to the bundle's files, the case's directory real
  for dir in tests examples bench; do
    mkdir -p "$scratch/$dir"
    for f in "$bundle/$dir"/*; do
      case "$(basename "$f")" in bin|output) continue ;; esac
      ln -s "$f" "$scratch/$dir/"
    done
  done
  rundir=$scratch/$rel
  for ((i = 0; i < T_NRUNS; i++)); do
    for lf in ${T_LOCALRUNFILES[$i]}; do rm -f "$rundir/$lf"; cp -r "$bundle/$rel/$lf" "$rundir/$lf"; done
  done
  for ((i = 0; i < T_NRUNS; i++)); do
    n=${T_NSIZE[$i]}
    args=${T_ARGS[$i]//$T_ROOT/$scratch}
    if [ "$n" -gt 1 ]; then cmd="mpiexec --oversubscribe -n $n \"\$exe\" -petsc_ci $args"
    else cmd="\"\$exe\" -petsc_ci $args"; fi
    out=$scratch/run$i.out
    err=$scratch/run$i.err
    (
      cd "$rundir" || exit 1
      [ "$n" -gt 1 ] && export OPENBLAS_NUM_THREADS=1
      envwords=()
      eval "envwords=(${T_ENV[$i]})"
      for w in "${envwords[@]}"; do export "${w?}"; done
      export exe
      if [ "${T_ERROR[$i]}" = 1 ]; then eval "$cmd" </dev/null >"$out" 2>&1
      else eval "$cmd" </dev/null >"$out" 2>"$err"; fi
    )
    rc=$?
    touch "$out" "$err"
    # 77 is also PETSC_ERR_PLIB, a failed check in a test program: a skip only with the program's SKIPPED line
    if [ "${T_ERROR[$i]}" != 1 ] && [ "$rc" = 77 ] && grep -q "SKIPPED" "$out"; then
      echo "SKIP $T_NAME (run $((i + 1))/$T_NRUNS): $(tail -n 1 "$out")"
      [ "$ok" = 0 ] && ok=77
      continue
    fi
    if [ "${T_ERROR[$i]}" != 1 ] && [ "$rc" != 0 ]; then
      echo "FAIL $T_NAME (run $((i + 1))/$T_NRUNS, $n rank(s)): exit code $rc"
      cat "$out" "$err" | tail -20
      ok=1
      continue
    fi
    expected=""
    eval "cands=(\"\${T_OUTPUTS_${i}[@]}\")"
    for c in "${cands[@]}"; do
      c=$bundle/${c#"$T_ROOT"/}
      if [ -f "$c" ]; then expected=$c; break; fi
    done
    if [ -z "$expected" ]; then echo "FAIL $T_NAME: no expected output in the bundle"; ok=1; continue; fi
    dflags=()
    [ -n "${T_FILTER[$i]}" ] && dflags+=(-F "${T_FILTER[$i]}")
    [ -n "${T_FILTER_OUTPUT[$i]}" ] && dflags+=(-f "${T_FILTER_OUTPUT[$i]}")
    # shellcheck disable=SC2206
    dargs=(${T_DIFF_ARGS[$i]})
    if ! (cd "$rundir" && sh "$petscdiff" "${dflags[@]}" "${dargs[@]}" "$expected" "$out") >"$scratch/diff" 2>&1; then
      echo "FAIL $T_NAME (run $((i + 1))/$T_NRUNS, $n rank(s)): output differs from ${expected#"$bundle"/}"
      head -40 "$scratch/diff"
      ok=1
    fi
  done
  return $ok
}

for d in "$bundle"/testdefs/*/*.sh; do
  name="$(basename "$(dirname "$d")")/$(basename "$d" .sh)"
  [[ $name =~ $regex ]] || continue
  run_case "$d"
  rc=$?
  if [ "$rc" = 0 ]; then
    echo "PASS $name (${T_NRUNS} run(s), ranks ${T_NSIZE[*]})"
    npass=$((npass + 1))
  elif [ "$rc" = 77 ]; then
    nskip=$((nskip + 1))
    skippedcases+=("$name")
  else
    nfail=$((nfail + 1))
    failed+=("$name")
  fi
done
echo "run-tests: $npass passed, $nfail failed${failed:+: ${failed[*]}}, $nskip skipped${skippedcases:+: ${skippedcases[*]}}"
[ $((npass + nfail + nskip)) -gt 0 ] || { echo "run-tests: no bundled case matches '$regex' (run-tests.sh -l lists them)"; exit 1; }
[ "$nfail" = 0 ]
