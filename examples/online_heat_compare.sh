#!/usr/bin/env bash
# The C and the Fortran online-training examples (online_heat.c, online_heat_f.F90) on the same ranks give bitwise
# the same loss history and surrogate error:   online_heat_compare.sh <C exe> <Fortran exe> <mpiexec> <ranks> [options]
# Both write every training step's loss to 17 significant digits (-loss_history), which identifies the double; the
# values are compared as doubles (the two languages print exponents differently).
set -u
cexe=$1
fexe=$2
mpiexec=$3
n=$4
shift 4
run() {
  local exe=$1
  shift
  if [ "$n" -gt 1 ]; then $mpiexec -n "$n" "$exe" "$@"; else "$exe" "$@"; fi
}
rm -f c.txt f.txt
run "$cexe" "$@" -loss_history c.txt > c.log 2>&1 || { cat c.log; exit 1; }
run "$fexe" "$@" -loss_history f.txt > f.log 2>&1 || { cat f.log; exit 1; }
grep -h "relative L2 error" f.log | sed 's/ *[0-9.]*E[-+][0-9]*$//'
/usr/bin/python3 - c.txt f.txt <<'PY'
import sys
a = [l.split() for l in open(sys.argv[1])]
b = [l.split() for l in open(sys.argv[2])]
if len(a) != len(b) or not a:
    sys.exit("FAIL: %d lines of the C history against %d of the Fortran one" % (len(a), len(b)))
for x, y in zip(a, b):
    if x[0] != y[0] or float(x[1]) != float(y[1]):
        sys.exit("FAIL: C %s against Fortran %s" % (" ".join(x), " ".join(y)))
print("C and Fortran: %d training losses and the surrogate's error bitwise identical" % (len(a) - 1))
PY
