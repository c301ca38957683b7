#!/usr/bin/env bash
# Runs one PetNN test case the way PETSc's harness does (config/petsc_harness.sh
# and example_template.py in PETSc's examples/config), driven by a descriptor
# written by config/petnn_testgen.py.
#
#   petnn_runtest.sh <descriptor.sh> <executable>
#
# For every run of the test case (subtests and {{...}} loops give several):
#   - runs  [mpiexec -n N] <exe> -petsc_ci <args>  in a scratch copy of the source
#     directory inside <build>/testrun/<dir>/<test>/ (see below; localrunfiles are
#     copied in), so relative paths such as -options_file foo.opts resolve as in the
#     source directory while output files stay in the build tree;
#   - fails if the program exits non-zero (unless filter: starts with "Error:",
#     in which case stdout+stderr are compared and the exit code is ignored),
#     except exit code 77 with a line saying SKIPPED: the program skipped itself (a GPU
#     test on a machine without a GPU, tests/cuda_layers.c), and the test case is reported
#     as skipped (77 alone is PETSC_ERR_PLIB, a failed check);
#   - compares stdout, piped through filter:, with the expected output file using
#     PETSc's petscdiff (floating-point numbers are masked, whitespace ignored).
#
# Environment:
#   PETNN_TEST_UPDATE=1   write the (filtered) output to the expected output file
#                         when it is missing or differs; the test then passes
#   PETNN_MPIEXEC         replace the MPI launcher (default found at configure time)
#   PETNN_TEST_VERBOSE=1  also print stdout/stderr of passing runs
#   DATAFILESPATH         for tests that say requires: datafilespath
#   PETNN_TEST_WRAPPER    a command put in front of the program in serial runs (config/valgrind/run.sh
#                         uses valgrind); runs on several ranks and command: tests are not wrapped
#   PETNN_SANITIZE=1      the programs are built with -fsanitize=address,undefined (make sanitize):
#                         source config/sanitize/env.sh (suppressions, options for MPI ranks)
# Exit codes: 0 pass, 1 fail, 77 skipped (CTest SKIP_RETURN_CODE).

set -u
desc=${1:?usage: petnn_runtest.sh <descriptor> <executable>}
exe=${2:-}
# shellcheck disable=SC1090
source "$desc" || { echo "cannot read test descriptor $desc" >&2; exit 1; }

if [ -n "$T_SKIP" ]; then
  echo "SKIP $T_NAME: $T_SKIP"
  exit 77
fi
if [ "$T_NEED_DATAFILESPATH" = 1 ] && [ -z "${DATAFILESPATH:-}" ]; then
  echo "SKIP $T_NAME: requires DATAFILESPATH"
  exit 77
fi

needs_exe=0
for ((i = 0; i < T_NRUNS; i++)); do [ -z "${T_COMMAND[$i]}" ] && needs_exe=1; done
if [ "$needs_exe" = 1 ]; then
  if [ -z "$exe" ]; then
    echo "SKIP $T_NAME: no build target for $(basename "$T_SOURCE")"
    exit 77
  fi
  if [ ! -x "$exe" ]; then
    echo "FAIL $T_NAME: executable $exe not found (build first: cmake --build)" >&2
    exit 1
  fi
fi

export LC_ALL=C
if [ "${PETNN_SANITIZE:-0}" = 1 ]; then
  # shellcheck disable=SC1091
  source "$(dirname "${BASH_SOURCE[0]}")/sanitize/env.sh"
fi
# What PETSc's harness sets (example_template.py)
export PETSC_OPTIONS="${PETSC_OPTIONS:-} -check_pointer_intensity 0 -error_output_stdout -malloc_dump"
# Running as root (CI containers) and oversubscribing a small machine
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-$T_TIMEOUT}
export PETNN_TEST_SRCDIR=$T_SRCDIR PETNN_SOURCE_DIR=$T_ROOT PETNN_BINARY_DIR=$T_BINDIR
# the size of PetscInt, for scripts that write PETSc binary files (whose headers hold PetscInts)
export PETNN_PETSC_INDEX_BITS=${T_INDEX_BITS:-32}
mpiexec=${PETNN_MPIEXEC:-$T_MPIEXEC}
petscdiff=${PETSCDIFF:-$T_PETSCDIFF}

# ---------------------------------------------------------------- scratch run directory
# <build>/testrun/<dir>/<test>/ mirrors the source tree: every top-level entry is a
# symlink except the path down to the test's directory, which is real; there small
# files are copied, larger ones and subdirectories symlinked, output/ left out.  The
# test runs in <mirror>/<dir>, so paths relative to the source directory (also ../x)
# resolve, while the files a test writes stay in the build tree.
mirror=$T_MIRROR
rm -rf "$mirror"
mkdir -p "$mirror" || exit 1
shopt -s nullglob dotglob
src=$T_ROOT
dst=$mirror
IFS=/ read -ra comps <<<"$T_RELDIR"
for comp in "${comps[@]}"; do
  [ "$comp" = . ] && continue
  for f in "$src"/*; do
    b=$(basename "$f")
    case "$b" in "$comp"|.git) continue ;; esac
    ln -s "$f" "$dst/$b"
  done
  src=$src/$comp
  dst=$dst/$comp
  mkdir -p "$dst"
done
rundir=$dst
hdir=$mirror/.harness   # stdout, stderr, diffs of the runs
mkdir -p "$hdir"
for f in "$T_SRCDIR"/*; do
  b=$(basename "$f")
  case "$b" in output) continue ;; esac
  if [ -f "$f" ] && [ ! -L "$f" ] && [ "$(stat -c %s "$f")" -le 1048576 ]; then
    cp -p "$f" "$rundir/$b"
  else
    ln -s "$f" "$rundir/$b"
  fi
done
shopt -u nullglob dotglob
for ((i = 0; i < T_NRUNS; i++)); do
  for lf in ${T_LOCALRUNFILES[$i]}; do
    if [ ! -e "$T_SRCDIR/$lf" ]; then
      echo "FAIL $T_NAME: localrunfiles entry $lf not found in $T_SRCDIR" >&2
      exit 1
    fi
    mkdir -p "$rundir/$(dirname "$lf")"
    rm -rf "${rundir:?}/$lf"
    cp -r "$T_SRCDIR/$lf" "$rundir/$lf"
  done
done

# ---------------------------------------------------------------- runs
fail=0
skipped=0
for ((i = 0; i < T_NRUNS; i++)); do
  n=${T_NSIZE[$i]}
  tag=""
  [ "$T_NRUNS" -gt 1 ] && tag=" [run $((i + 1))/$T_NRUNS]"
  if [ -n "${T_COMMAND[$i]}" ]; then
    cmd=${T_COMMAND[$i]}
  else
    # -options_left 0: PETSc 3.18 (optimized) lists unused options at PetscFinalize() only when asked, later releases
    # always; tests that set options for a case that fails before reading them would print them. A test that checks
    # the listing passes -options_left itself (its args come later and win)
    if [ "$n" -gt 1 ]; then
      cmd="$mpiexec -n $n \"\$exe\" -petsc_ci -options_left 0 ${T_ARGS[$i]}"
    else
      cmd="${PETNN_TEST_WRAPPER:+$PETNN_TEST_WRAPPER }\"\$exe\" -petsc_ci -options_left 0 ${T_ARGS[$i]}"
    fi
  fi
  out="$hdir/run$i.out"
  err="$hdir/run$i.err"
  printf '%s%s: cd %s && %s\n' "$T_NAME" "$tag" "$rundir" "${cmd//\"\$exe\"/$exe}"
  (
    cd "$rundir" || exit 1
    if [ "$n" -gt 1 ]; then export OPENBLAS_NUM_THREADS=1; fi
    # env: entries are shell words VAR=value, exported like PETSc does
    envwords=()
    eval "envwords=(${T_ENV[$i]})"
    for w in "${envwords[@]}"; do export "${w?}"; done
    export exe nsize="$n" args="${T_ARGS[$i]}" mpiexec
    if [ "${T_ERROR[$i]}" = 1 ]; then
      eval "$cmd" </dev/null >"$out" 2>&1
    else
      eval "$cmd" </dev/null >"$out" 2>"$err"
    fi
  )
  rc=$?
  touch "$out" "$err"
  # 77 is also PETSC_ERR_PLIB, the code of a failed check in a test program: a skip only with the program's SKIPPED line
  if [ "${T_ERROR[$i]}" != 1 ] && [ "$rc" = 77 ] && grep -q "SKIPPED" "$out"; then
    echo "SKIP $T_NAME$tag: the program skipped itself (exit code 77): $(tail -n 1 "$out")"
    skipped=1
    continue
  fi
  if [ "${T_ERROR[$i]}" != 1 ] && [ "$rc" != 0 ]; then
    echo "FAIL $T_NAME$tag: exit code $rc"
    echo "---- stdout ----"; cat "$out"
    echo "---- stderr ----"; cat "$err"
    fail=1
    continue
  fi
  if [ "${PETNN_TEST_VERBOSE:-0}" = 1 ]; then
    echo "---- stdout ----"; cat "$out"
    echo "---- stderr ----"; cat "$err"
  fi

  # expected output: the first candidate that exists (output file, then _alt files)
  cands=()
  eval "cands=(\"\${T_OUTPUTS_${i}[@]}\")"
  expected=""
  for c in "${cands[@]}"; do
    if [ -f "$c" ]; then expected=$c; break; fi
  done
  dflags=()
  [ -n "${T_FILTER[$i]}" ] && dflags+=(-F "${T_FILTER[$i]}")
  [ -n "${T_FILTER_OUTPUT[$i]}" ] && dflags+=(-f "${T_FILTER_OUTPUT[$i]}")
  # shellcheck disable=SC2206
  dargs=(${T_DIFF_ARGS[$i]})

  if [ -z "$expected" ]; then
    if [ "${PETNN_TEST_UPDATE:-0}" = 1 ]; then
      expected=${cands[0]}
    else
      echo "FAIL $T_NAME$tag: expected output ${cands[0]#"$T_ROOT"/} is missing"
      echo "  (create it with: PETNN_TEST_UPDATE=1 ctest --test-dir $T_BINDIR -R '^$T_NAME\$')"
      echo "---- stdout ----"; cat "$out"
      fail=1
      continue
    fi
  else
    # petscdiff prints the plain diff (expected vs actual) on a mismatch
    if (cd "$rundir" && "$petscdiff" "${dflags[@]}" "${dargs[@]}" "$expected" "$out") >"$hdir/run$i.diff" 2>&1; then
      continue
    fi
  fi
  if [ "${PETNN_TEST_UPDATE:-0}" = 1 ]; then
    mkdir -p "$(dirname "$expected")"
    if [ -n "${T_FILTER[$i]}" ]; then
      (cd "$rundir" && eval "cat \"\$out\" | ${T_FILTER[$i]}") >"$expected.tmp" && mv "$expected.tmp" "$expected"
    else
      cp "$out" "$expected"
    fi
    echo "UPDATED ${expected#"$T_ROOT"/}"
    continue
  fi
  echo "FAIL $T_NAME$tag: output differs from ${expected#"$T_ROOT"/} (diff expected actual):"
  cat "$hdir/run$i.diff"
  if [ -s "$err" ]; then echo "---- stderr ----"; cat "$err"; fi
  echo "  (accept the new output with: PETNN_TEST_UPDATE=1 ctest --test-dir $T_BINDIR -R '^$T_NAME\$')"
  fail=1
done

if [ "$fail" = 0 ] && [ "$skipped" = 1 ]; then
  exit 77
fi
if [ "$fail" = 0 ]; then
  echo "PASS $T_NAME"
  exit 0
fi
exit 1
