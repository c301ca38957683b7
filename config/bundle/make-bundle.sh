#!/usr/bin/env bash
# make-bundle.sh -- a relocatable tarball of PetNN with the runtime closure of its Debian libraries.
#
#   config/bundle/make-bundle.sh [BUILD_DIR [OUT_DIR]]      (make bundle; defaults build/ and dist/)
#
# Writes OUT_DIR/petnn-<version>-linux-x86_64.tar.xz (zstd when PETNN_BUNDLE_COMPRESS=zstd) holding
#   bin/       nnrun and the other example programs, Open MPI's launcher (mpiexec, mpirun, orterun,
#              orted, ompi_info), petnn-env (sets OPAL_PREFIX etc., see below) and petnn-demo
#   lib/       libpetnn and every shared library the programs, libpetnn and the dlopen'ed plugins
#              need (PETSc, SLEPc, Open MPI, PMIx, hwloc, HDF5, OpenBLAS, libgfortran, ...), named by
#              the soname the ELF files ask for; lib/openmpi3/ Open MPI's MCA components,
#              lib/pmix/ PMIx's plugins, lib/hwloc/ hwloc's PCI plugin
#   share/     Open MPI's and PMIx's help files, PETSc's petscdiff (used by tests/run-tests.sh)
#   etc/       openmpi-mca-params.conf, pmix-mca-params.conf (the bundle's defaults, read through
#              OPAL_SYSCONFDIR / PMIX_SYSCONFDIR)
#   examples/  the .opts/.yaml files and expected outputs; tests/ the test programs (tests/bin),
#              their expected outputs and data, testdefs/ the harness descriptors, and
#              tests/run-tests.sh that runs them from the bundle
# Left out on purpose (the node provides them, or they would drag in large closures):
#   - glibc (libc, libm, libpthread, libdl, librt, libutil, libresolv, libanl, ld-linux, libmvec,
#     libnss_*): it must be the node's own; the node's glibc must be at least bookworm's (2.36);
#   - the NVIDIA driver (libcuda, libnvidia-*) and the CUDA toolkit (libcudart, cuBLAS, cuDNN, NCCL,
#     cuFFT, cuRAND, cuSPARSE, cuSOLVER, NVRTC): a PetNN built with CUDA finds the node's copies
#     through the node's ldconfig cache or LD_LIBRARY_PATH (the bundle's RUNPATH is searched first
#     and holds none of them); the CPU build needs none;
#   - Open MPI components for InfiniBand/Omni-Path/libfabric/UCX (btl openib/ofi, mtl ofi/psm/psm2,
#     pml/osc ucx, libmca_common_{ofi,ucx,verbs}) and for OpenSHMEM (liboshmem and its atomic,
#     memheap, scoll, spml, sshmem components): they pull in libfabric, UCX, libibverbs and PSM with
#     their own provider plugins.  The bundle runs on one node over shared memory (btl vader) and
#     across nodes over TCP; etc/openmpi-mca-params.conf selects exactly these;
#   - hwloc's GL, OpenCL and libxml2 plugins (libX11/libOpenCL/libicu, 35 MB; hwloc has its own XML
#     reader); its PCI plugin is kept.
#
# Relocation: every ELF file gets RUNPATH $ORIGIN/../lib (lib/: $ORIGIN, plugins: $ORIGIN/..) with
# patchelf (config/install-deps.sh installs it), so `ldd` resolves everything inside the bundle
# without LD_LIBRARY_PATH.  Open MPI, PMIx and hwloc find their plugins and help files through the
# variables bin/petnn-env sets (OPAL_PREFIX, OPAL_LIBDIR, OPAL_SYSCONFDIR, PMIX_PREFIX, PMIX_LIBDIR,
# PMIX_DATADIR, PMIX_SYSCONFDIR, HWLOC_PLUGINS_PATH) before it execs the program:
#   petnn-<version>/bin/petnn-env mpiexec -n 2 nnrun -options_file petnn-<version>/examples/x.opts
# PETNN_BUNDLE_COMPRESS=xz|zstd and PETNN_BUNDLE_LEVEL (default xz -9, zstd -19) choose the compression.
# Copies are stripped (strip --strip-unneeded) before patchelf.  The list of bundled files with
# sizes and origins is written into the bundle as MANIFEST.txt.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${2:-$root/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
compress=${PETNN_BUNDLE_COMPRESS:-xz}
arch=/usr/lib/x86_64-linux-gnu
ompi_libdir=$arch/openmpi/lib
ompi_pkglibdir=$ompi_libdir/openmpi3
pmix_dir=$arch/pmix2

for tool in patchelf strip objdump ldd tar "$compress"; do
  command -v "$tool" >/dev/null || { echo "make-bundle: $tool not found (config/install-deps.sh installs patchelf)" >&2; exit 1; }
done
[ -f "$build/libpetnn.so" ] || { echo "make-bundle: $build/libpetnn.so not found: build first (make build)" >&2; exit 1; }

version=$(sed -n 's/^project(PetNN VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
name=petnn-${version:-0}-linux-x86_64
stage=$out/$name
rm -rf "$stage"
mkdir -p "$stage"/{bin,lib/openmpi3,lib/pmix,lib/hwloc,share/openmpi,share/pmix,share/petsc,etc,examples,bench,tests/bin,testdefs}
log=$out/$name.log
: >"$log"

is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

# ------------------------------------------------------------------ PetNN itself
cp -a "$build"/libpetnn.so* "$stage/lib/"
for f in "$build"/examples/* "$build"/bench/*; do is_elf "$f" && [ -x "$f" ] && cp "$f" "$stage/bin/"; done
for f in "$build"/tests/*; do is_elf "$f" && [ -x "$f" ] && cp "$f" "$stage/tests/bin/"; done
cp "$root"/examples/*.opts "$root"/examples/*.yaml "$stage/examples/"
cp -r "$root/examples/output" "$stage/examples/"
cp -r "$root/bench/output" "$stage/bench/"
cp -r "$root/tests/output" "$root/tests/data" "$stage/tests/"
rm -f "$stage"/tests/data/*.c
# harness descriptors of the test cases that run a compiled program (no python command:, no
# DATAFILESPATH); tests/run-tests.sh reads them and maps their paths into the bundle
ndefs=0
for d in "$build"/testdefs/*/*.sh; do
  grep -q "^T_COMMAND\[[0-9]*\]='[^']" "$d" && continue
  grep -q '^T_NEED_DATAFILESPATH=1' "$d" && continue
  grep -q "^T_SKIP=''" "$d" || continue
  rel=$(basename "$(dirname "$d")")
  mkdir -p "$stage/testdefs/$rel"
  cp "$d" "$stage/testdefs/$rel/"
  ndefs=$((ndefs + 1))
done
cp "$here/run-tests.sh" "$stage/tests/"
cp "$here/petnn-env" "$here/petnn-demo" "$stage/bin/"
chmod 755 "$stage/tests/run-tests.sh" "$stage/bin/petnn-env" "$stage/bin/petnn-demo"
cp "$here/README.bundle.md" "$stage/README.md"
petscdiff=$(sed -n 's/^PETNN_PETSCDIFF:FILEPATH=//p' "$build/CMakeCache.txt")
cp "${petscdiff:-/usr/lib/petscdir/petsc3.18/x86_64-linux-gnu-real/lib/petsc/bin/petscdiff}" "$stage/share/petsc/petscdiff"

# ------------------------------------------------------------------ Open MPI, PMIx, hwloc
cp /usr/bin/orterun /usr/bin/orted /usr/bin/ompi_info "$stage/bin/"
ln -s orterun "$stage/bin/mpiexec"
ln -s orterun "$stage/bin/mpirun"
cp /usr/share/openmpi/help-*.txt "$stage/share/openmpi/"
cp -r /usr/share/openmpi/amca-param-sets "$stage/share/openmpi/"
cp "$pmix_dir"/share/pmix/help-*.txt "$stage/share/pmix/"
cp "$here/openmpi-mca-params.conf" "$stage/etc/"
cp "$pmix_dir/share/pmix-mca-params.conf" "$stage/etc/"
printf '# hosts for mpiexec (one per line); empty: the local node\n' >"$stage/etc/openmpi-default-hostfile"
# a plugin is left out when its closure reaches one of these (see the header)
skip_re='^(libfabric|libucp|libucs|libuct|libucm|libibverbs|librdmacm|libpsm|libpsm2|libinfinipath|libefa|liboshmem|libX11|libxml2|libicu)'
plugin_ok() { # $1: plugin file; prints the offending library and fails when it is left out
  local bad
  bad=$(LD_LIBRARY_PATH=$ompi_libdir:$pmix_dir/lib ldd "$1" | awk '{print $1}' | grep -E "$skip_re" | head -1 || true)
  [ -z "$bad" ] && return 0
  echo "left out $(basename "$1"): needs $bad" >>"$log"
  return 1
}
for f in "$ompi_pkglibdir"/*.so; do plugin_ok "$f" && cp "$f" "$stage/lib/openmpi3/"; done
for f in "$pmix_dir"/lib/pmix/*.so; do plugin_ok "$f" && cp "$f" "$stage/lib/pmix/"; done
cp "$arch/hwloc/hwloc_pci.so" "$stage/lib/hwloc/"

# ------------------------------------------------------------------ the shared-library closure
# glibc's own libraries and the vdso stay the node's; the NVIDIA driver and CUDA toolkit too
system_re='^(linux-vdso\.so|ld-linux-x86-64\.so|libc\.so|libm\.so|libmvec\.so|libpthread\.so|libdl\.so|librt\.so|libutil\.so|libresolv\.so|libanl\.so|libnss_|libthread_db\.so|libBrokenLocale\.so|libc_malloc_debug\.so)'
nvidia_re='^(libcuda\.so|libnvidia-|libcudart|libcublas|libcublasLt|libcudnn|libnccl|libcufft|libcurand|libcusparse|libcusolver|libnvrtc|libnvJitLink|libnvToolsExt)'
declare -A origin=()
mapfile -t elves < <(find "$stage" -type f | while read -r f; do is_elf "$f" && echo "$f"; done)
for f in "${elves[@]}"; do
  while read -r lib arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $lib =~ $system_re || $lib =~ $nvidia_re ]] && continue
    if [ "$path" = "not" ]; then echo "make-bundle: $f needs $lib, not found" >&2; exit 1; fi
    [ -e "$stage/lib/$lib" ] || [ -n "${origin[$lib]:-}" ] || origin[$lib]=$(readlink -f "$path")
  done < <(LD_LIBRARY_PATH=$build:$ompi_libdir:$pmix_dir/lib ldd "$f" 2>/dev/null)
done
for lib in "${!origin[@]}"; do
  cp "${origin[$lib]}" "$stage/lib/$lib"
  echo "lib/$lib <- ${origin[$lib]}" >>"$log"
done

# ------------------------------------------------------------------ strip, then RUNPATH
mapfile -t elves < <(find "$stage" -type f | while read -r f; do is_elf "$f" && echo "$f"; done)
for f in "${elves[@]}"; do
  chmod u+w "$f"
  strip --strip-unneeded "$f" 2>/dev/null || echo "strip failed on ${f#"$stage"/} (kept as is)" >>"$log"
  case "${f#"$stage"/}" in
    bin/*)                        rp='$ORIGIN/../lib' ;;
    tests/bin/*)                  rp='$ORIGIN/../../lib' ;;
    lib/openmpi3/*|lib/pmix/*|lib/hwloc/*) rp='$ORIGIN/..' ;;
    lib/*)                        rp='$ORIGIN' ;;
    *) echo "make-bundle: unexpected ELF file $f" >&2; exit 1 ;;
  esac
  patchelf --set-rpath "$rp" "$f"
done

# ------------------------------------------------------------------ manifest and tarball
(cd "$stage" && find . -type f -printf '%s\t%P\n' | sort -rn) >"$stage/MANIFEST.txt"
case "$compress" in
  xz)   ext=tar.xz;  comp=(xz -T2 "-${PETNN_BUNDLE_LEVEL:-9}") ;;
  zstd) ext=tar.zst; comp=(zstd -T2 "-${PETNN_BUNDLE_LEVEL:-19}" -q) ;;
  *) echo "make-bundle: PETNN_BUNDLE_COMPRESS=$compress: use xz or zstd" >&2; exit 1 ;;
esac
tarball=$out/$name.$ext
tar -C "$out" --owner=0 --group=0 --numeric-owner --sort=name -cf - "$name" | "${comp[@]}" >"$tarball"
raw=$(du -sb "$stage" | cut -f1)
packed=$(stat -c %s "$tarball")
echo "make-bundle: $tarball"
printf 'make-bundle: %d files, %d libraries (%d MCA components); %.1f MiB unpacked, %.1f MiB compressed (limit 60 MiB); %d test cases\n' \
  "$(grep -c . "$stage/MANIFEST.txt")" "$(find "$stage/lib" -maxdepth 1 -type f | wc -l)" \
  "$(find "$stage/lib/openmpi3" -type f | wc -l)" "$(awk "BEGIN{print $raw / 1048576}")" "$(awk "BEGIN{print $packed / 1048576}")" "$ndefs"
echo "make-bundle: largest members:"
head -8 "$stage/MANIFEST.txt" | awk -F'\t' '{printf "  %7.1f MiB  %s\n", $1 / 1048576, $2}'
echo "make-bundle: details (sources, left-out plugins) in $log"
if [ "$packed" -gt $((60 * 1048576)) ]; then
  echo "make-bundle: the tarball is over 60 MiB" >&2
  exit 1
fi
