#!/usr/bin/env bash
# gpu_session.sh -- the first run of PetNN's CUDA device on a GPU machine, in one command: checks, tests, timings.
#
#   bash bench/gpu_session.sh [BUNDLE_TARBALL [OUTDIR]]
#
# BUNDLE_TARBALL: a bundle made by `make bundle` from a build with CUDA (CMake said "PetNN: CUDA ON"); default the
# newest dist/petnn-*-linux-x86_64.tar.*. OUTDIR: where the log goes (default $OUT when set, else
# /tmp/petnn-gpu-session). Run from the repository root (it uses bench/mlp_gpu_torch.py). Nothing is installed.
#
# One call of the device tool runs at most 600 s and brings back at most 8 files, so the script keeps a deadline,
# GPU_SESSION_SECONDS after its start (default 540): the steps run in the order of what issue 17's bar needs most, each
# program with a timeout that ends before the deadline, and a step that has no time left says so and is skipped.
# OUTDIR receives two files: gpu_session.log (everything printed, the tables included) and details.tar.gz (every
# program's output and the -log_view files), packed again after each step, so a call stopped at its limit still
# brings back what was done.
#
#   1. the GPU (nvidia-smi) and the CUDA libraries libpetnn needs that the bundle leaves to the node (cudart, cuBLAS,
#      cuDNN, NCCL when the build found them): looked up in the loader cache, /usr/local/cuda and the image's Python
#      nvidia-* packages, added to LD_LIBRARY_PATH for PetNN's programs only;
#   2. the tests: tests/device_1, tests/cuda_layers_1/_2 and _spectral/_spectral_2 (CUDA vs CPU for every layer type
#      with device passes in double <= 1e-12 and single <= 1e-5, an MLP's Adam steps), cuda_spatial_split_2,
#      _spectral_2 and cuda_halo_adjoint_2 (activations split over 2 ranks, the staged halo exchange),
#      cuda_model_parallel_2 (partitioned and sharded layers on 2 ranks), device_train_1 (a CNN with batch norm trained
#      resident), bench/dense_cublas_check (the dense layer against cuBLAS's GEMMs), through the bundle's
#      tests/run-tests.sh, then cuda_layers again printing the measured differences;
#   3. dense layers against cuBLAS alone (bench/dense_cublas: the MLP's, the CNN's and the ODE-Net's dense layers at
#      batch 128, and 4096^3) in single, double and single with TF32: issue 17's bar, >= 70% of cuBLAS's rate;
#   4. the CNN of examples/fashion_cnn.opts and the ODE-Net of fashion_odenet.opts (Adam, batch 128) on 60000 synthetic
#      28x28 samples (the machine has no Fashion-MNIST; the data also serve steps 5 and 6): seconds per epoch, the best
#      after the first of CNN_EPOCHS (default 2), PetNN on the GPU (conv2d by the GEMM passes, the default) in single and double against
#      PyTorch on the same GPU in the same precision (batches copied from host memory, as PetNN does), and -log_view of
#      PetNN's single-precision runs: issue 17's bar, PetNN/PyTorch <= 1.0;
#   5. the MLP 784-256-128-10 (ReLU, Adam, batch 128): its view on the GPU (-nn_view), then epochs in double and single
#      (best after the first of 3) against PyTorch on the same GPU (batches copied from host memory, and the data
#      resident on the GPU), PetNN on the CPU for reference, -log_view of the single-precision GPU run
#      (NNDevFwd_/NNDevBwd_<type>: device time);
#   6. the CNN and the ODE-Net again in single precision with TF32 (-nn_cuda_tf32, PyTorch --tf32) and with conv2d
#      through cuDNN (-<layer>_device_algorithm cudnn) in single and double;
#   7. the U-Net surrogate of the Allen-Cahn simulation (examples/allen_cahn_unet.opts, 64x64), GPU and CPU.
# GPU_SESSION_STEPS (default "2 3 4 5 6 7") chooses the steps after the first, which always runs: a second call on a
# warm machine can run those the first one had no time for. GPU_SESSION_DENSE_MODES (default "single double
# single_tf32") are step 3's, GPU_SESSION_CNN_MODES (default "single double") step 4's (a mode <precision>[_tf32|_gemm|_cudnn]).
# Exit status: 0 when the tests pass (timings are reported, not checked).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
tarball=${1:-$(ls -t "$root"/dist/petnn-*-linux-x86_64.tar.* 2>/dev/null | head -1)}
out=${2:-${OUT:-/tmp/petnn-gpu-session}}
[ -n "$tarball" ] && [ -f "$tarball" ] || { echo "gpu_session: no bundle (make bundle, then carry dist/)" >&2; exit 1; }
mkdir -p "$out"
exec > >(tee "$out/gpu_session.log") 2>&1
deadline=$((SECONDS + ${GPU_SESSION_SECONDS:-540}))
scratch=$(mktemp -d "${TMPDIR:-/tmp}/petnn-gpu.XXXXXX")
det=$scratch/details # the programs' outputs: packed into $out/details.tar.gz
mkdir -p "$det"
pack() { tar -C "$scratch" -czf "$out/details.tar.gz.part" details && mv "$out/details.tar.gz.part" "$out/details.tar.gz"; }
trap 'pack; rm -rf "$scratch"' EXIT
step() { pack; printf '\n==== %s (%d s left)\n' "$*" $((deadline - SECONDS)); }
# limited CAP CMD...: CMD with a timeout of CAP seconds, or less so as to end 10 s before the deadline; not run without time
limited() {
  local t=$((deadline - SECONDS - 10))
  [ "$t" -gt "$1" ] && t=$1
  shift
  [ "$t" -ge 5 ] || { echo "-- not run, the deadline is near: $*"; return 124; }
  timeout "$t" "$@"
}
# enough N WHAT: whether N seconds are left before the deadline; else says that WHAT is skipped
enough() { [ $((deadline - SECONDS)) -ge "$1" ] && return 0; echo "-- skipped, $((deadline - SECONDS)) s left: $2"; return 1; }
status=0
steps=" ${GPU_SESSION_STEPS:-2 3 4 5 6 7} "
want() { [[ "$steps" == *" $1 "* ]]; }

step "1. the machine and the CUDA libraries"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv || echo "nvidia-smi failed"
command -v nvcc >/dev/null && nvcc --version | tail -2
tar -C "$scratch" -xf "$tarball" || { echo "gpu_session: cannot unpack $tarball" >&2; exit 1; }
B=$(ls -d "$scratch"/petnn-*-linux-x86_64 | head -1)
libdirs=()
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do [ -d "$d" ] && libdirs+=("$d"); done
while read -r d; do [ -n "$d" ] && libdirs+=("$d"); done < <(python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
dirs = set()
for s in site.getsitepackages() + [site.getusersitepackages()] + sys.path:
    for d in glob.glob(os.path.join(s, "nvidia", "*", "lib")) + glob.glob(os.path.join(s, "nvidia", "cu*", "lib")):
        dirs.add(d)
print("\n".join(sorted(dirs)))
PY
)
cudalibs=$(IFS=:; echo "${libdirs[*]}")
export LD_LIBRARY_PATH="${cudalibs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "LD_LIBRARY_PATH for PetNN: $LD_LIBRARY_PATH"
ldd "$B/lib/libpetnn.so" | grep -E "cuda|cublas|cudnn|nccl|not found"
if ldd "$B/lib/libpetnn.so" | grep -q "not found"; then
  echo "gpu_session: libpetnn misses libraries (above): find them on this machine and add their directories to LD_LIBRARY_PATH"
  exit 1
fi
ldd "$B/lib/libpetnn.so" | grep -q libcudart || echo "gpu_session: this bundle's libpetnn has no CUDA (built with PETNN_WITH_CUDA=OFF?): the tests will skip"
# a program of the bundle in the scratch directory, with a timeout (limited)
prun() { local cap=$1; shift; (cd "$scratch" && limited "$cap" "$B/bin/petnn-env" "$@"); }

if want 2; then
step "2. tests (CUDA vs CPU)"
limited 240 "$B/tests/run-tests.sh" '^(tests/(device_1|cuda_layers_1|cuda_layers_2|cuda_layers_spectral|cuda_layers_spectral_2|cuda_spatial_split_2|cuda_spatial_split_spectral_2|cuda_halo_adjoint_2|cuda_model_parallel_2|device_train_1)|bench/dense_cublas_check.*)$' || status=1
echo "-- measured differences (cuda_layers -print_errors):"
prun 120 "$B/tests/bin/cuda_layers" -print_errors || status=1
fi

if want 3; then
step "3. dense layers against cuBLAS alone (the layer's share of cuBLAS's rate; issue 17: >= 70%)"
for mode in ${GPU_SESSION_DENSE_MODES:-single double single_tf32}; do
  enough 30 "dense_cublas $mode" || break
  extra=()
  [ "$mode" = single_tf32 ] && extra=(-nn_cuda_tf32)
  prun 90 dense_cublas -nn_precision "${mode%_tf32}" "${extra[@]}"
  rc=$?
  [ $rc = 0 ] || [ $rc = 77 ] || status=1 # 77: no GPU, skipped
done
fi

best() { grep -o 'time [0-9.]* s' | awk '{print $2}' | tail -n +2 | sort -g | head -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
data=(-train_data_type hdf5 -train_data_file "$scratch/synth.h5" -train_data_features x -train_data_targets y -test 0)
cnn_epochs=${CNN_EPOCHS:-2}
declare -A C
# cnn_run MODEL MODE: PetNN on the GPU and PyTorch on the same GPU, one configuration (MODE: double, single,
# single_tf32; <precision>_gemm or _cudnn: conv2d through PetNN's im2col kernels and cuBLAS, the default, or cuDNN)
cnn_run() {
  local model=$1 mode=$2 prec extra=() targs=() log dt
  prec=${mode%_tf32}
  prec=${prec%_gemm}
  prec=${prec%_cudnn}
  [ "$mode" = single_tf32 ] && { extra=(-nn_cuda_tf32); targs=(--tf32); }
  if [ "${mode%_gemm}" != "$mode" ] || [ "${mode%_cudnn}" != "$mode" ]; then
    for layer in $(grep -o '^-[a-z0-9]*_type conv2d' "$B/examples/fashion_$model.opts" | sed 's/^-\(.*\)_type.*/\1/'); do extra+=(-"${layer}"_device_algorithm "${mode##*_}"); done
  fi
  [ "$mode" = single ] && extra+=(-log_view ":$det/logview_${model}_cuda_single.txt")
  log=$det/petnn_${model}_cuda_$mode.txt
  prun 240 nnrun -options_file "$B/examples/fashion_$model.opts" "${data[@]}" -nn_epochs "$cnn_epochs" -nn_monitor_steps 0 \
    -nn_device cuda -nn_precision "$prec" "${extra[@]}" >"$log" 2>&1 || { echo "PetNN $model cuda $mode failed:"; tail -20 "$log"; status=1; }
  C[petnn_${model}_$mode]=$(best <"$log")
  dt=float64
  [ "$prec" = single ] && dt=float32
  limited 240 python3 "$root/bench/mlp_gpu_torch.py" --model "$model" --data "$scratch/synth.h5" --dtype $dt --epochs "$cnn_epochs" "${targs[@]}" \
    >"$det/torch_${model}_$mode.txt" 2>&1 || { echo "PyTorch $model $dt ${targs[*]} failed:"; tail -5 "$det/torch_${model}_$mode.txt"; }
  C[torch_${model}_$mode]=$(grep -o '"epoch_seconds": [0-9.e-]*' "$det/torch_${model}_$mode.txt" | awk '{print $2}')
  echo "-- $model $mode: PetNN ${C[petnn_${model}_$mode]:--} s, PyTorch ${C[torch_${model}_$mode]:--} s per epoch"
}
# cnn_runs MODE...: both models in each mode while time is left, then the table of every run so far
cnn_runs() {
  for mode in "$@"; do
    for model in cnn odenet; do
      enough 40 "$model $mode" && cnn_run "$model" "$mode"
    done
  done
  cnn_table
}
cnn_table() {
  printf '\n%-8s %-12s %14s %14s %16s\n' model precision "PetNN cuda" "PyTorch cuda" "PetNN/PyTorch"
  for model in cnn odenet; do
    for mode in single double single_tf32 single_gemm double_gemm single_cudnn double_cudnn; do
      [ -n "${C[petnn_${model}_$mode]+x}" ] || continue
      printf '%-8s %-12s %14s %14s %16s\n' "$model" "$mode" "${C[petnn_${model}_$mode]:--}" "${C[torch_${model}_$mode]:--}" "$(ratio "${C[petnn_${model}_$mode]:-0}" "${C[torch_${model}_$mode]:-0}")"
    done
  done
}
# the synthetic data of steps 4-6, written once
synth() {
  [ -f "$scratch/synth.h5" ] && return 0
  limited 120 python3 "$root/bench/mlp_gpu_torch.py" --write "$scratch/synth.h5" || { echo "gpu_session: cannot write the data (h5py?)"; exit 1; }
}

if want 4; then
step "4. CNN and ODE-Net epoch timings (60000 samples, batch 128; seconds per epoch, best after the first)"
synth
cnn_runs ${GPU_SESSION_CNN_MODES:-single double}
for model in cnn odenet; do
  echo "-- the device events of the single-precision $model run (logview_${model}_cuda_single.txt):"
  grep -E "^(NNDev|NNForward|NNBackward|NNLoss|NNOptStep|NNDataLoad|NNODE)" "$det/logview_${model}_cuda_single.txt" 2>/dev/null | cut -c1-100
done
fi

if want 5; then
step "5. the MLP: its view on the GPU, epoch timings (60000 samples, batch 128; seconds per epoch, best after the first)"
synth
prun 60 nnrun -options_file "$B/examples/fashion_mlp.opts" "${data[@]}" -nn_epochs 1 -train_data_max_samples 1280 -nn_device cuda \
  -nn_precision single -nn_view || status=1
declare -A T
for prec in single double; do
  enough 40 "MLP $prec" || break
  log=$det/petnn_cuda_$prec.txt
  extra=()
  [ "$prec" = single ] && extra=(-log_view ":$det/logview_cuda_single.txt")
  prun 120 nnrun -options_file "$B/examples/fashion_mlp.opts" "${data[@]}" -nn_epochs 3 -nn_device cuda -nn_precision "$prec" "${extra[@]}" \
    >"$log" 2>&1 || { echo "PetNN cuda $prec failed:"; tail -20 "$log"; status=1; }
  T[petnn_cuda_$prec]=$(best <"$log")
  dt=float64
  [ "$prec" = single ] && dt=float32
  for res in "" --resident; do
    key=torch_${prec}${res:+_resident}
    limited 120 python3 "$root/bench/mlp_gpu_torch.py" --data "$scratch/synth.h5" --dtype $dt --epochs 3 $res >"$det/$key.txt" 2>&1 ||
      { echo "PyTorch $dt $res failed:"; tail -5 "$det/$key.txt"; }
    T[$key]=$(grep -o '"epoch_seconds": [0-9.e-]*' "$det/$key.txt" | awk '{print $2}')
  done
  log=$det/petnn_cpu_$prec.txt
  OPENBLAS_NUM_THREADS=$(nproc) prun 120 nnrun -options_file "$B/examples/fashion_mlp.opts" "${data[@]}" -nn_epochs 2 -nn_precision "$prec" \
    >"$log" 2>&1 || { echo "PetNN cpu $prec failed:"; tail -5 "$log"; }
  T[petnn_cpu_$prec]=$(best <"$log")
done
printf '\n%-8s %14s %14s %16s %20s %14s\n' precision "PetNN cuda" "PyTorch cuda" "PetNN/PyTorch" "PyTorch resident" "PetNN cpu($(nproc))"
for prec in single double; do
  printf '%-8s %14s %14s %16s %20s %14s\n' "$prec" "${T[petnn_cuda_$prec]:--}" "${T[torch_$prec]:--}" \
    "$(ratio "${T[petnn_cuda_$prec]:-0}" "${T[torch_$prec]:-0}")" "${T[torch_${prec}_resident]:--}" "${T[petnn_cpu_$prec]:--}"
done
echo "-- the device events of the single-precision run (logview_cuda_single.txt):"
grep -E "^(NNDev|NNForward|NNBackward|NNLoss|NNOptStep|NNDataLoad)" "$det/logview_cuda_single.txt" 2>/dev/null | cut -c1-100
fi

if want 6; then
step "6. CNN and ODE-Net in single precision with TF32, and with conv2d through cuDNN"
synth
cnn_runs single_tf32 single_cudnn double_cudnn
fi

if want 7; then
step "7. the U-Net surrogate of the Allen-Cahn simulation (examples/allen_cahn_unet.opts, 64x64; a graph network with a spatial input)"
for dev in cuda cpu; do
  for prec in single double; do
    enough 30 "U-Net $dev $prec" || continue
    log=$det/unet_${dev}_$prec.txt
    OPENBLAS_NUM_THREADS=$(nproc) prun 120 reaction_diffusion_surrogate -options_file "$B/examples/allen_cahn_unet.opts" \
      -ntrain 48 -nn_epochs 3 -nn_device "$dev" -nn_precision "$prec" -log_view ":$det/logview_unet_${dev}_$prec.txt" >"$log" 2>&1 ||
      { echo "U-Net $dev $prec failed:"; tail -20 "$log"; [ "$dev" = cuda ] && status=1; }
    echo "-- U-Net, $dev, $prec: $(grep -E '^epoch +3' "$log"); forward + backward + loss + optimizer: $(grep -E '^(NNForward|NNBackward|NNLoss|NNOptStep) ' "$det/logview_unet_${dev}_$prec.txt" 2>/dev/null | awk '{t += $4} END {printf "%.3g s", t}')"
    grep -E "^Held-out|^Time per call" "$log"
  done
done
fi

step "done: tests $([ $status = 0 ] && echo passed || echo FAILED); log in $out/gpu_session.log, the programs' outputs in $out/details.tar.gz"
exit $status
