#!/usr/bin/env bash
# Runs the test suite of a build made with -fsanitize=address,undefined (make sanitize).
#
#   config/sanitize/run-tests.sh <build-dir> [max-ranks] [ctest regex] [ctest args...]
#
# Sets the sanitizer environment (config/sanitize/env.sh, also for tests that are not run through
# config/petnn_runtest.sh, e.g. install/consumer) and, with max-ranks, leaves out the test cases
# that run on more ranks (CI runs the serial and 2-rank tests: SAN_MAX_RANKS=2). SAN_EXCLUDE=<regex> (environment)
# leaves out the test cases whose names it matches (CI: the PyTorch cross-checks on perturbed data, which run the
# networks of their unperturbed cases again: other values, the same memory accesses).
set -u
build=${1:?usage: run-tests.sh <build-dir> [max-ranks] [regex] [ctest args...]}
max=${2:-}
regex=${3:-.}
shift $(( $# < 3 ? $# : 3 ))
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PETNN_SANITIZE=1
# shellcheck disable=SC1091
source "$here/env.sh"
excl=()
out=()
[ -n "${SAN_EXCLUDE:-}" ] && out+=("${SAN_EXCLUDE}")
if [ -n "$max" ]; then
  wide=()
  while IFS= read -r f; do
    name=$(sed -n 's/^T_NAME=//p' "$f")
    if grep -qE "^T_NSIZE\[[0-9]+\]=([0-9]+)$" "$f" &&
       [ "$(sed -nE 's/^T_NSIZE\[[0-9]+\]=([0-9]+)$/\1/p' "$f" | sort -n | tail -1)" -gt "$max" ]; then
      wide+=("$name")
    fi
  done < <(find "$build/testdefs" -name '*.sh')
  if [ ${#wide[@]} -gt 0 ]; then
    out+=("^($(IFS='|'; echo "${wide[*]}"))\$")
    echo "sanitize: leaving out ${#wide[@]} test cases on more than $max ranks"
  fi
fi
[ -n "${SAN_EXCLUDE:-}" ] && echo "sanitize: leaving out the test cases matching $SAN_EXCLUDE"
[ ${#out[@]} -gt 0 ] && excl=(-E "$(IFS='|'; echo "${out[*]}")")
exec "${CTEST:-ctest}" --test-dir "$build" --output-on-failure -j "${CTEST_JOBS:-2}" -R "$regex" "${excl[@]}" "$@"
