#!/usr/bin/env bash
# test-bundle.sh -- check a PetNN bundle the way a bare GPU node would use it (make bundle-test).
#
#   config/bundle/test-bundle.sh [TARBALL | DIR]     (default: the newest petnn-*.tar.* in dist/)
#
# Unpacks the tarball into a fresh directory under ${TMPDIR:-/tmp} and, with a scrubbed environment
# (env -i, PATH=/usr/bin:/bin, HOME in the scratch directory), checks
#   1. size: the tarball is at most 60 MiB;
#   2. ldd: every library of every ELF file of the bundle (programs, libpetnn, the closure, Open MPI's
#      MCA components, PMIx's and hwloc's plugins) resolves inside the bundle, glibc's own libraries
#      and the vdso excepted (and, in a CUDA build, the node's NVIDIA driver and CUDA libraries, which it
#      lists); prints the resolution of nnrun, libpetnn and one MCA component;
#   3. the demos through bin/petnn-demo on 1 and 2 ranks with the bundle's mpiexec: Fashion-MNIST
#      (`make demo`, 2 epochs; its data from FASHION_MNIST_DIR, default /usr/share/datasets/
#      fashion-mnist, skipped when absent; the test accuracy must reach 0.8) and Peaks
#      (examples/peaks.opts, generated data, prints PASS; PETNN_BUNDLE_TEST_QUICK=1 runs it on 2
#      ranks only);
#   4. tests/run-tests.sh: the default subset of test cases against their expected outputs;
#   5. /proc/<pid>/maps of mpiexec and both ranks of a running 2-rank job: every mapped shared
#      object is the bundle's or glibc's;
#   6. as root where `unshare -m` works: the system's libraries hidden (a mount namespace where
#      /usr/lib/x86_64-linux-gnu holds only glibc and what bash/coreutils/sed/grep/diff/awk need, and
#      /usr/share/openmpi, /etc/openmpi are empty), then steps 2 (nnrun), 4 and a 2-rank demo again.
# Exit status 0 when everything passes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
arg=${1:-$root/dist}
if [ -d "$arg" ]; then
  tarball=$(ls -t "$arg"/petnn-*-linux-x86_64.tar.* 2>/dev/null | head -1 || true)
  [ -n "$tarball" ] || { echo "test-bundle: no petnn-*-linux-x86_64.tar.* in $arg: run make bundle" >&2; exit 1; }
else
  tarball=$arg
fi
tarball=$(readlink -f "$tarball")
fashion=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
quick=${PETNN_BUNDLE_TEST_QUICK:-0}
glibc_re='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libmvec\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libutil\.so\.1|libresolv\.so\.2|libanl\.so\.1)$'
# a CUDA build of PetNN may take these from the node (its driver, its CUDA toolkit): allowed, listed
node_re='^(libcuda\.so|libnvidia-|libcudart|libcublas|libcublasLt|libcudnn|libnccl|libcufft|libcurand|libcusparse|libcusolver|libnvrtc|libnvJitLink|libnvToolsExt)'
fail=0
bad() { echo "test-bundle: FAIL: $*"; fail=1; }
step() { echo; echo "== $*"; }

# ------------------------------------------------------------------ 1. size, unpack
size=$(stat -c %s "$tarball")
step "1. $tarball: $(awk "BEGIN{printf \"%.1f\", $size / 1048576}") MiB (limit 60 MiB)"
[ "$size" -le $((60 * 1048576)) ] || bad "the tarball is over 60 MiB"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/petnn-bundle-test.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
tar -C "$scratch" -xf "$tarball"
bundle=$(ls -d "$scratch"/petnn-*-linux-x86_64)
mkdir -p "$scratch/home"
echo "unpacked into $bundle ($(du -sm "$bundle" | cut -f1) MiB)"
cleanenv=(env -i PATH=/usr/bin:/bin HOME="$scratch/home" OPENBLAS_NUM_THREADS=1)
if [ "$(id -u)" = 0 ]; then cleanenv+=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1); fi

# ------------------------------------------------------------------ 2. ldd
# prints "file: lib => where" lines for the references that leave the bundle (glibc excepted)
ldd_check() { # $1: bundle root; the ELF files are found there
  local b=$1 f n=0 refs=0 out
  while IFS= read -r f; do
    n=$((n + 1))
    out=$("${cleanenv[@]}" ldd "$f" 2>&1) || { echo "$f: ldd failed: $out"; continue; }
    while read -r lib arrow path _; do
      [ -z "$lib" ] && continue
      refs=$((refs + 1))
      [[ $(basename "$lib") =~ $glibc_re ]] && continue
      [ "$arrow" = "=>" ] && [[ $path == "$b"/* ]] && continue
      if [[ $lib =~ $node_re ]]; then echo "${f#"$b"/}: $lib $arrow $path" >>"$scratch/node-libs.txt"; continue; fi
      echo "${f#"$b"/}: $lib $arrow $path"
    done <<<"$out"
  done < <(find "$b" -type f \( -path '*/lib/*' -o -path '*/bin/*' \) -exec sh -c 'head -c4 "$1" | grep -q ELF && echo "$1"' _ {} \;)
  echo "checked $n ELF files, $refs library references" >&2
}
show_ldd() { # $1: file; one line per library: name -> where (relative to the bundle)
  "${cleanenv[@]}" ldd "$1" | awk -v b="$bundle/" '{ if ($2 == "=>") { p = $3; sub(b, "<bundle>/", p); printf "    %-36s %s\n", $1, p } else printf "    %-36s (%s)\n", $1, "system: glibc/vdso" }'
}
step "2. ldd of every ELF file in the bundle (env -i): what resolves outside the bundle, glibc excepted"
for f in bin/nnrun lib/libpetnn.so.0 lib/openmpi3/mca_btl_vader.so; do
  echo "  $f:"
  show_ldd "$bundle/$f"
done
outside=$(ldd_check "$bundle")
if [ -n "$outside" ]; then bad "libraries resolved outside the bundle:"; echo "$outside"
else echo "  none: every library resolves inside the bundle (or is glibc's)"; fi
if [ -s "$scratch/node-libs.txt" ]; then
  echo "  from the node's NVIDIA driver / CUDA toolkit (allowed):"
  awk '{print $2, $3, $4}' "$scratch/node-libs.txt" | sort -u | sed 's/^/    /'
fi

# ------------------------------------------------------------------ 3. demos
demo() { # $1: ranks, then the demo's arguments; prints its last lines, returns its status
  local n=$1 log=$scratch/demo.log rc=0
  shift
  "${cleanenv[@]}" "$bundle/bin/petnn-demo" -n "$n" "$@" >"$log" 2>&1 || rc=$?
  tail -n 3 "$log" | sed 's/^/    /'
  # Open MPI reports a component it cannot load (a library missing from the bundle) and goes on
  if grep -E 'mca_base_component_repository_open|WARNING|cannot open shared object' "$log"; then rc=1; fi
  return $rc
}
step "3. demos from the bundle (bin/petnn-demo)"
if [ -f "$fashion/train-images-idx3-ubyte.gz" ] || [ -f "$fashion/train-images-idx3-ubyte" ]; then
  for n in 1 2; do
    echo "  Fashion-MNIST MLP (examples/fashion_mlp.opts, 2 epochs), $n rank(s):"
    if demo "$n" fashion "$fashion" -nn_epochs 2; then
      acc=$(sed -n 's/.*Final test loss [0-9.]*, test accuracy \([0-9.]*\).*/\1/p' "$scratch/demo.log")
      awk "BEGIN{exit !(${acc:-0} >= 0.8)}" || bad "Fashion-MNIST demo on $n rank(s): test accuracy ${acc:-?} < 0.8"
    else bad "Fashion-MNIST demo on $n rank(s) failed"; fi
  done
else
  echo "  Fashion-MNIST demo skipped: no IDX files in $fashion (set FASHION_MNIST_DIR)"
fi
ranks="1 2"
[ "$quick" = 1 ] && ranks=2
for n in $ranks; do
  echo "  Peaks (examples/peaks.opts: MGRIT layer-parallel ODE network, TAO), $n rank(s):"
  demo "$n" peaks && grep -q 'validation accuracy at least .*: PASS' "$scratch/demo.log" || bad "Peaks demo on $n rank(s)"
done

# ------------------------------------------------------------------ 4. tests
step "4. tests/run-tests.sh (default subset, expected outputs of the build tree)"
"${cleanenv[@]}" "$bundle/tests/run-tests.sh" | sed 's/^/  /' || bad "tests/run-tests.sh"

# ------------------------------------------------------------------ 5. /proc/<pid>/maps
step "5. shared objects mapped by a running 2-rank job (mpiexec + ranks, /proc/<pid>/maps)"
children() { local p; for p in /proc/[0-9]*; do [ "$(awk '{print $4}' "$p/stat" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"; done; return 0; }
(cd "$scratch/home" && exec "${cleanenv[@]}" "$bundle/bin/petnn-env" mpiexec --oversubscribe -n 2 peaks \
  -options_file "$bundle/examples/peaks.opts" >"$scratch/maps.log" 2>&1) &
job=$!
pids=""
for _ in $(seq 1 120); do
  sleep 0.5
  grep -q '^Peaks:' "$scratch/maps.log" 2>/dev/null || continue
  pids="$job $(children "$job" | tr '\n' ' ')"
  break
done
if [ -z "$pids" ] || [ "$(echo "$pids" | wc -w)" -lt 3 ]; then
  bad "could not find mpiexec and its 2 ranks (pids: ${pids:-none})"; cat "$scratch/maps.log"
else
  maps=$(for p in $pids; do awk '$6 ~ /\.so/ {print $6}' "/proc/$p/maps"; done | sort -u)
  inb=$(grep -c "^$bundle/" <<<"$maps" || true)
  others=$(grep -v "^$bundle/" <<<"$maps" || true)
  echo "  pids $pids: $(wc -l <<<"$maps") distinct shared objects, $inb from the bundle, among them the plugins"
  echo "    $(grep -c "^$bundle/lib/openmpi3/" <<<"$maps" || true) Open MPI components ($(grep "^$bundle/lib/openmpi3/mca_\(btl\|pml\)" <<<"$maps" | xargs -n1 basename | tr '\n' ' '))," \
    "$(grep -c "^$bundle/lib/pmix/" <<<"$maps" || true) PMIx plugins, $(grep -c "^$bundle/lib/hwloc/" <<<"$maps" || true) hwloc plugin; outside the bundle:"
  sed 's/^/    /' <<<"$others"
  while read -r f; do
    [ -z "$f" ] && continue
    [[ $(basename "$f") =~ $glibc_re || $(basename "$f") =~ $node_re ]] || bad "mapped from outside the bundle: $f"
  done <<<"$others"
fi
kill "$job" 2>/dev/null || true
wait "$job" 2>/dev/null || true

# ------------------------------------------------------------------ 6. system libraries hidden
step "6. with the system's libraries hidden (mount namespace)"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  arch=/usr/lib/x86_64-linux-gnu
  # shellcheck disable=SC2010
  keep=$( { ls "$arch" | grep -E "$glibc_re|^libc\.so|^libm\.so|^ld-linux"
            for t in bash env sh dirname basename mktemp rm cat sed grep diff awk mawk sort head tail tr cut cp ln mkdir seq id touch sleep wc uname ls readlink find od; do
              p=$(command -v "$t" 2>/dev/null) || continue
              ldd "$(readlink -f "$p")" 2>/dev/null | awk '$2 == "=>" {print $1}'
            done; } | sort -u | tr '\n' ' ')
  echo "  visible in $arch: $keep"
  cat >"$scratch/hidden.sh" <<EOF
set -u
mkdir -p "$scratch/view"
mount -t tmpfs none "$scratch/view"
for f in $keep; do
  [ -e "$arch/\$f" ] || continue
  cp -L "$arch/\$f" "$scratch/view/\$f"
done
for d in /usr/share/openmpi /etc/openmpi /usr/lib/petscdir /usr/lib/slepcdir; do [ -d "\$d" ] && mount -t tmpfs none "\$d"; done
mount --bind "$scratch/view" "$arch"   # the last mount: mount itself needs libmount
exec bash "$scratch/hidden2.sh"
EOF
  cat >"$scratch/hidden2.sh" <<EOF
set -u
rc=0
echo "  \$(ls $arch | wc -l) files left in $arch; /usr/share/openmpi: \$(ls /usr/share/openmpi | wc -l) files"
echo "  nnrun:"
${cleanenv[*]} ldd "$bundle/bin/nnrun" | grep -c "=> $bundle/" | sed 's/^/    libraries from the bundle: /'
${cleanenv[*]} ldd "$bundle/bin/nnrun" | awk '\$2 == "=>" && index(\$3, "$bundle/") != 1 {printf " %s", \$1} END {print ""}' | sed 's/^/    from outside the bundle:/'
${cleanenv[*]} ldd "$bundle/bin/nnrun" | grep 'not found' && rc=1
${cleanenv[*]} "$bundle/tests/run-tests.sh" | sed 's/^/  /'; [ \${PIPESTATUS[0]} = 0 ] || rc=1
${cleanenv[*]} "$bundle/bin/petnn-demo" -n 2 peaks -ntrain 1000 -tao_max_it 20 -min_accuracy 0.5 2>&1 | tail -n 2 | sed 's/^/  /'; [ \${PIPESTATUS[0]} = 0 ] || rc=1
exit \$rc
EOF
  unshare -m --propagation private bash "$scratch/hidden.sh" || bad "the run with the system's libraries hidden"
else
  echo "  skipped: needs root and unshare -m"
fi

echo
if [ "$fail" = 0 ]; then echo "test-bundle: PASS ($tarball)"; else echo "test-bundle: FAILED ($tarball)"; fi
exit "$fail"
