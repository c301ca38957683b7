#!/usr/bin/env bash
# Installs the Debian (bookworm) packages PetNN needs to build, test and run its demo (and the
# tools of make sanitize / fuzz / valgrind: clang with its libFuzzer runtime, valgrind; patchelf for
# make bundle).
# Only packages that are not installed yet are installed; when nothing is missing this
# only queries dpkg and needs neither root nor the network.
#
#   config/install-deps.sh            # as root (or with password-less sudo)
#   config/install-deps.sh --check    # list what is missing, install nothing (exit 1 if any)
set -euo pipefail

packages=(
  build-essential cmake pkg-config gfortran
  petsc-dev slepc-dev libopenmpi-dev openmpi-bin libopenblas-dev zlib1g-dev
  libfftw3-dev libfftw3-mpi-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev python3-onnx
  libpetsc3.18-dev-examples
  dataset-fashion-mnist
  python3-torch python3-h5py python3-numpy
  python3-dev python3-petsc4py cython3 python3-pytest
  clang libclang-rt-dev valgrind
  patchelf
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  if [ "$status" != "installed" ]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi

echo "install-deps: missing: ${missing[*]}"
if [ "${1:-}" = "--check" ]; then
  exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "install-deps: run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update </dev/null
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
echo "install-deps: installed ${missing[*]}"
