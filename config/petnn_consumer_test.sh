#!/usr/bin/env bash
# CTest install/consumer: install the build tree into a scratch prefix, then build
# and run config/consumer/ against it twice: with find_package(PetNN) and with
# pkg-config petnn.
#
#   petnn_consumer_test.sh <build dir> <consumer source dir> [cmake]
set -euo pipefail
build=$(cd "${1:?build dir}" && pwd)
consumer=$(cd "${2:?consumer dir}" && pwd)
cmake=${3:-cmake}
work=$build/consumer-test
prefix=$work/prefix

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rm -rf "$work"
mkdir -p "$work"

echo "== install into $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
test -f "$prefix/include/petnn.h"
test -d "$prefix/include/petnn/private"

echo "== find_package(PetNN) with CMAKE_PREFIX_PATH=$prefix"
"$cmake" -S "$consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/build"
out=$("$work/build/petnn_consumer")
echo "$out"
grep -q "PetNN consumer OK" <<<"$out"

echo "== pkg-config petnn"
pcdir=$(dirname "$(find "$prefix" -name petnn.pc | head -n1)")
export PKG_CONFIG_PATH=$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
pkg-config --print-errors --exists petnn
flags=$(pkg-config --cflags --libs petnn)
echo "pkg-config --cflags --libs petnn: $flags"
libdir=$(pkg-config --variable=libdir petnn)
# shellcheck disable=SC2086
petsclibdir=$(pkg-config --variable=libdir PETSc) # a PETSc outside the loader's path (one built from source)
${CC:-cc} -Wall -Wextra -Werror -o "$work/petnn_consumer_pc" "$consumer/main.c" $flags -Wl,-rpath,"$libdir" -Wl,-rpath,"$petsclibdir"
out=$("$work/petnn_consumer_pc")
echo "$out"
grep -q "PetNN consumer OK" <<<"$out"
pymod=$(find "$prefix" -path "*/petnn4py/PetNN*.so" | head -n1)
if [ -n "$pymod" ]; then
  echo "== petnn4py from the install tree ($pymod)"
  pydir=$(dirname "$(dirname "$pymod")")
  # the interpreter the build chose (its petsc4py is this PETSc's); the module must load the installed libpetnn
  python=${PETNN_PYTHON:-python3}
  out=$(cd "$work" && env -u PYTHONPATH PYTHONPATH="$pydir" "$python" -c "
import petnn4py
petnn4py.init()
from petnn4py import PetNN
net = PetNN.NN().create()
net.setInputShape((3,)); net.addLayer('dense', 'fc', units=2); net.setUp()
maps = open('/proc/self/maps').read()
assert PetNN.__file__.startswith('$prefix'), PetNN.__file__
assert '$prefix' in maps and '$build/libpetnn' not in maps, 'libpetnn loaded from the build tree'
print('petnn4py install OK', net.getNumParameters())
")
  echo "$out"
  grep -q "petnn4py install OK 8" <<<"$out"
fi
echo "PASS install/consumer"
