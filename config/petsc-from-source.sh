#!/usr/bin/env bash
# Builds a PETSc release from source into a cache directory outside the checkout, against Debian's
# Open MPI, OpenBLAS (BLAS/LAPACK), HDF5 (openmpi flavour) and FFTW (with MPI); no --download-*;
# then the matching SLEPc release on it (Debian's SLEPc is built on Debian's PETSc 3.18 and cannot be
# mixed with another PETSc). PetNN then builds against them with
#
#   make check PETSC_DIR=<printed dir> PETSC_ARCH=<printed arch> SLEPC_DIR=<printed dir>
#
# (without SLEPC_DIR, PetNN builds without SLEPc and the tests that need it are skipped).
#
# Usage:
#   config/petsc-from-source.sh [int32|int64]          (default int32)
#
# Environment:
#   PETSC_VERSION   release tag to build (default v3.25.4, the newest release when this was written)
#   PETSC_GIT       where to clone it from (default https://gitlab.com/petsc/petsc.git; a local
#                   mirror or bare repository works too, e.g. one fetched from github.com/petsc/petsc)
#   SLEPC_VERSION   SLEPc release tag (default v3.25.1, the one for PETSc 3.25); SLEPC_VERSION=none: no SLEPc
#   SLEPC_GIT       where to clone it from (default https://gitlab.com/slepc/slepc.git)
#   PETSC_CACHE     cache root (default ${XDG_CACHE_HOME:-~/.cache}/petnn)
#   JOBS            make jobs (default nproc)
#
# The result is ${PETSC_CACHE}/petsc-<version>-<int32|int64> (PETSC_DIR, the source tree) with
# PETSC_ARCH=arch-petnn-<int32|int64>, and ${PETSC_CACHE}/slepc-<version>-<int32|int64> (SLEPC_DIR). A
# finished build is reused: delete the directory to rebuild. The last lines printed are the variables
# to pass to make; the builds' wall times are in petnn-build-time.txt in each directory.
set -euo pipefail

ints=${1:-int32}
case "$ints" in
  int32) idxopt=--with-64-bit-indices=0 ;;
  int64) idxopt=--with-64-bit-indices=1 ;;
  *) echo "petsc-from-source: index size '$ints' is not valid; use int32 or int64" >&2; exit 2 ;;
esac

version=${PETSC_VERSION:-v3.25.4}
git_src=${PETSC_GIT:-https://gitlab.com/petsc/petsc.git}
cache=${PETSC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/petnn}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
dir="$cache/petsc-${version#v}-$ints"
arch="arch-petnn-$ints"
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
libdir=/usr/lib/$multiarch

if [ -f "$dir/$arch/lib/pkgconfig/PETSc.pc" ] && [ -f "$dir/petnn-build-time.txt" ]; then
  echo "petsc-from-source: reusing $dir ($(cat "$dir/petnn-build-time.txt"))"
else
  mkdir -p "$cache"
  if [ ! -d "$dir/.git" ]; then
    rm -rf "$dir"
    git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$version" "$git_src" "$dir" 2>/dev/null ||
      { rm -rf "$dir"; git -c advice.detachedHead=false clone --quiet --no-checkout "$git_src" "$dir" &&
        git -C "$dir" -c advice.detachedHead=false checkout --quiet "$version"; }
  fi
  start=$(date +%s)
  cd "$dir"
  # Debian's libraries: Open MPI's wrappers, OpenBLAS through the reference names (liblapack/libblas are
  # OpenBLAS's by the alternatives system), the openmpi flavour of HDF5, FFTW 3 with libfftw3_mpi
  python3 ./configure PETSC_ARCH="$arch" \
    --with-cc=mpicc --with-cxx=mpicxx --with-fc=0 \
    --with-debugging=0 COPTFLAGS=-O2 CXXOPTFLAGS=-O2 \
    "$idxopt" --with-scalar-type=real --with-precision=double \
    --with-blaslapack-lib="-L$libdir -llapack -lblas" \
    --with-hdf5-include=/usr/include/hdf5/openmpi --with-hdf5-lib="-L$libdir/hdf5/openmpi -lhdf5_hl -lhdf5" \
    --with-fftw-include=/usr/include --with-fftw-lib="-L$libdir -lfftw3_mpi -lfftw3" \
    --with-x=0 --with-cuda=0 --with-hip=0 --with-sycl=0 --with-shared-libraries=1
  make PETSC_DIR="$dir" PETSC_ARCH="$arch" MAKE_NP="$jobs" all
  end=$(date +%s)
  echo "$((end - start)) s to configure and build $(git -C "$dir" describe --tags 2>/dev/null || echo "$version") ($(git -C "$dir" rev-parse HEAD)), $ints, $jobs jobs" \
    >"$dir/petnn-build-time.txt"
  cat "$dir/petnn-build-time.txt"
fi

slepc_version=${SLEPC_VERSION:-v3.25.1}
if [ "$slepc_version" != none ]; then
  sdir="$cache/slepc-${slepc_version#v}-$ints"
  if [ -f "$sdir/$arch/lib/pkgconfig/slepc.pc" ] && [ -f "$sdir/petnn-build-time.txt" ]; then
    echo "petsc-from-source: reusing $sdir ($(cat "$sdir/petnn-build-time.txt"))"
  else
    if [ ! -d "$sdir/.git" ]; then
      rm -rf "$sdir"
      sgit=${SLEPC_GIT:-https://gitlab.com/slepc/slepc.git}
      git -c advice.detachedHead=false clone --quiet --depth 1 --branch "$slepc_version" "$sgit" "$sdir" 2>/dev/null ||
        { rm -rf "$sdir"; git -c advice.detachedHead=false clone --quiet --no-checkout "$sgit" "$sdir" &&
          git -C "$sdir" -c advice.detachedHead=false checkout --quiet "$slepc_version"; }
    fi
    start=$(date +%s)
    (cd "$sdir" && SLEPC_DIR="$sdir" PETSC_DIR="$dir" PETSC_ARCH="$arch" python3 ./configure &&
      make SLEPC_DIR="$sdir" PETSC_DIR="$dir" PETSC_ARCH="$arch" MAKE_NP="$jobs")
    end=$(date +%s)
    echo "$((end - start)) s to configure and build SLEPc $(git -C "$sdir" describe --tags 2>/dev/null || echo "$slepc_version") ($(git -C "$sdir" rev-parse HEAD)), $ints" \
      >"$sdir/petnn-build-time.txt"
    cat "$sdir/petnn-build-time.txt"
  fi
fi
echo "PETSC_DIR=$dir"
echo "PETSC_ARCH=$arch"
[ "$slepc_version" != none ] && echo "SLEPC_DIR=$sdir"
exit 0
