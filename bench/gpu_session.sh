#!/usr/bin/env bash
# gpu_session.sh -- the first run of PetNN's CUDA device on a GPU machine, in one command: checks, tests, timings.
#
#   bash bench/gpu_session.sh [BUNDLE_TARBALL [OUTDIR]]
#
# BUNDLE_TARBALL: a bundle made by `make bundle` from a build with CUDA (CMake said "PetNN: CUDA ON"); default the
# newest dist/petnn-*-linux-x86_64.tar.*. OUTDIR: where the log and -log_view files go (default $OUT when set, else
# /tmp/petnn-gpu-session). Run from the repository root (it uses bench/mlp_gpu_torch.py). Nothing is installed.
#
#   1. the GPU (nvidia-smi) and the CUDA libraries libpetnn needs that the bundle leaves to the node (cudart, cuBLAS,
#      cuDNN when the build found it):
#      looked up in the loader cache, /usr/local/cuda and the image's Python nvidia-* packages, added to
#      LD_LIBRARY_PATH for PetNN's programs only;
#   2. the tests: tests/device_1, tests/cuda_layers_1/_2 and _spectral/_spectral_2 (CUDA vs CPU for every layer type
#      with device passes in double <= 1e-12 and single <= 1e-5, an MLP's Adam steps), cuda_spatial_split_2, _spectral_2 and
#      cuda_halo_adjoint_2 (activations split over 2 ranks, the staged halo exchange), cuda_model_parallel_2 (partitioned
#      and sharded layers on 2 ranks), device_train_1 (a CNN with batch
#      norm trained resident), through the bundle's tests/run-tests.sh, then
#      cuda_layers again printing the measured differences;
#   3. the view of a network on the GPU (-nn_view);
#   4. timings of the MLP 784-256-128-10 (ReLU, Adam, batch 128) on 60000 synthetic 28x28 samples (the machine has no
#      Fashion-MNIST): PetNN on the GPU in double and single (best epoch after the first of 3) against PyTorch on the
#      same GPU (each batch copied from host memory as PetNN does, and with the data resident on the GPU), PetNN on
#      the CPU for reference, and -log_view of the single-precision GPU run (NNDevFwd_/NNDevBwd_<type>: device time);
#   5. timings of the Fashion-MNIST CNN of examples/fashion_cnn.opts and the ODE-Net of fashion_odenet.opts (conv 5x5x32 - relu - maxpool - conv 5x5x64 - relu -
#      maxpool - dense 1024 - relu - dropout - dense 10, Adam, batch 128) on the same synthetic data: PetNN on the GPU
#      (cuDNN convolutions) in double, single and single with TF32 (-nn_cuda_tf32) against PyTorch on the same GPU in
#      the same precision and TF32 setting (batches copied from host memory), CNN_EPOCHS epochs (default 2, the best
#      after the first), and -log_view of PetNN's single-precision run. Issue 17's bar: PetNN/PyTorch <= 1.0.
# Exit status: 0 when the tests pass (timings are reported, not checked).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
tarball=${1:-$(ls -t "$root"/dist/petnn-*-linux-x86_64.tar.* 2>/dev/null | head -1)}
out=${2:-${OUT:-/tmp/petnn-gpu-session}}
[ -n "$tarball" ] && [ -f "$tarball" ] || { echo "gpu_session: no bundle (make bundle, then carry dist/)" >&2; exit 1; }
mkdir -p "$out"
exec > >(tee "$out/gpu_session.log") 2>&1
scratch=$(mktemp -d "${TMPDIR:-/tmp}/petnn-gpu.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
step() { printf '\n==== %s\n' "$*"; }
status=0

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
run() { "$B/bin/petnn-env" "$@"; }

step "2. tests (CUDA vs CPU)"
"$B/tests/run-tests.sh" '^tests/(device_1|cuda_layers_1|cuda_layers_2|cuda_layers_spectral|cuda_layers_spectral_2|cuda_spatial_split_2|cuda_spatial_split_spectral_2|cuda_halo_adjoint_2|cuda_model_parallel_2|device_train_1)$' || status=1
echo "-- measured differences (cuda_layers -print_errors):"
(cd "$scratch" && timeout 300 "$B/bin/petnn-env" "$B/tests/bin/cuda_layers" -print_errors) || status=1

step "3. NNView of an MLP on the GPU"
python3 "$root/bench/mlp_gpu_torch.py" --write "$scratch/synth.h5" || { echo "gpu_session: cannot write the data (h5py?)"; exit 1; }
data=(-train_data_type hdf5 -train_data_file "$scratch/synth.h5" -train_data_features x -train_data_targets y -test 0)
(cd "$scratch" && timeout 300 "$B/bin/petnn-env" nnrun -options_file "$B/examples/fashion_mlp.opts" "${data[@]}" -nn_epochs 1 \
   -train_data_max_samples 1280 -nn_device cuda -nn_precision single -nn_view) || status=1

step "4. MLP epoch timings (60000 samples, batch 128; seconds per epoch, best after the first)"
best() { grep -o 'time [0-9.]* s' | awk '{print $2}' | tail -n +2 | sort -g | head -1; }
declare -A T
for prec in double single; do
  log=$out/petnn_cuda_$prec.txt
  extra=()
  [ "$prec" = single ] && extra=(-log_view ":$out/logview_cuda_single.txt")
  (cd "$scratch" && timeout 600 "$B/bin/petnn-env" nnrun -options_file "$B/examples/fashion_mlp.opts" "${data[@]}" -nn_epochs 3 \
     -nn_device cuda -nn_precision "$prec" "${extra[@]}") >"$log" 2>&1 || { echo "PetNN cuda $prec failed:"; tail -20 "$log"; status=1; }
  T[petnn_cuda_$prec]=$(best <"$log")
  dt=float64; [ "$prec" = single ] && dt=float32
  for res in "" --resident; do
    key=torch_${prec}${res:+_resident}
    timeout 600 python3 "$root/bench/mlp_gpu_torch.py" --data "$scratch/synth.h5" --dtype $dt --epochs 3 $res >"$out/$key.txt" 2>&1 || { echo "PyTorch $dt $res failed:"; tail -5 "$out/$key.txt"; }
    T[$key]=$(grep -o '"epoch_seconds": [0-9.e-]*' "$out/$key.txt" | awk '{print $2}')
  done
  log=$out/petnn_cpu_$prec.txt
  (cd "$scratch" && OPENBLAS_NUM_THREADS=$(nproc) timeout 600 "$B/bin/petnn-env" nnrun -options_file "$B/examples/fashion_mlp.opts" "${data[@]}" \
     -nn_epochs 2 -nn_precision "$prec") >"$log" 2>&1 || { echo "PetNN cpu $prec failed:"; tail -5 "$log"; }
  T[petnn_cpu_$prec]=$(best <"$log")
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else printf "-" }'; }
printf '\n%-8s %14s %14s %16s %20s %14s\n' precision "PetNN cuda" "PyTorch cuda" "PetNN/PyTorch" "PyTorch resident" "PetNN cpu($(nproc))"
for prec in double single; do
  printf '%-8s %14s %14s %16s %20s %14s\n' "$prec" "${T[petnn_cuda_$prec]:--}" "${T[torch_$prec]:--}" \
    "$(ratio "${T[petnn_cuda_$prec]:-0}" "${T[torch_$prec]:-0}")" "${T[torch_${prec}_resident]:--}" "${T[petnn_cpu_$prec]:--}"
done
echo "-- the device events of the single-precision run ($out/logview_cuda_single.txt):"
grep -E "^(NNDev|NNForward|NNBackward|NNLoss|NNOptStep|NNDataLoad)" "$out/logview_cuda_single.txt" 2>/dev/null | cut -c1-100

step "5. CNN and ODE-Net epoch timings (60000 samples, batch 128; seconds per epoch, best after the first)"
cnn_epochs=${CNN_EPOCHS:-2}
declare -A C
for model in cnn odenet; do
for mode in double single single_tf32 single_gemm; do
  prec=${mode%_tf32}
  prec=${prec%_gemm}
  extra=()
  targs=()
  [ "$mode" = single_tf32 ] && { extra=(-nn_cuda_tf32); targs=(--tf32); }
  if [ "$mode" = single_gemm ]; then # the convolutions through PetNN's im2col kernels and cuBLAS instead of cuDNN
    for layer in $(grep -o '^-[a-z0-9]*_type conv2d' "$B/examples/fashion_$model.opts" | sed 's/^-\(.*\)_type.*/\1/'); do extra+=(-"${layer}"_device_algorithm gemm); done
  fi
  [ "$mode" = single ] && extra=(-log_view ":$out/logview_${model}_cuda_single.txt")
  log=$out/petnn_${model}_cuda_$mode.txt
  (cd "$scratch" && timeout 600 "$B/bin/petnn-env" nnrun -options_file "$B/examples/fashion_$model.opts" "${data[@]}" -nn_epochs "$cnn_epochs" \
     -nn_monitor_steps 0 -nn_device cuda -nn_precision "$prec" "${extra[@]}") >"$log" 2>&1 || { echo "PetNN $model cuda $mode failed:"; tail -20 "$log"; status=1; }
  C[petnn_${model}_$mode]=$(best <"$log")
  dt=float64; [ "$prec" = single ] && dt=float32
  timeout 600 python3 "$root/bench/mlp_gpu_torch.py" --model "$model" --data "$scratch/synth.h5" --dtype $dt --epochs "$cnn_epochs" "${targs[@]}" \
    >"$out/torch_${model}_$mode.txt" 2>&1 || { echo "PyTorch $model $dt ${targs[*]} failed:"; tail -5 "$out/torch_${model}_$mode.txt"; }
  C[torch_${model}_$mode]=$(grep -o '"epoch_seconds": [0-9.e-]*' "$out/torch_${model}_$mode.txt" | awk '{print $2}')
done
done
printf '\n%-8s %-12s %14s %14s %16s\n' model precision "PetNN cuda" "PyTorch cuda" "PetNN/PyTorch"
for model in cnn odenet; do
  for mode in double single single_tf32 single_gemm; do
    printf '%-8s %-12s %14s %14s %16s\n' "$model" "$mode" "${C[petnn_${model}_$mode]:--}" "${C[torch_${model}_$mode]:--}" "$(ratio "${C[petnn_${model}_$mode]:-0}" "${C[torch_${model}_$mode]:-0}")"
  done
done
for model in cnn odenet; do
  echo "-- the device events of the single-precision $model run ($out/logview_${model}_cuda_single.txt):"
  grep -E "^(NNDev|NNForward|NNBackward|NNLoss|NNOptStep|NNDataLoad|NNODE)" "$out/logview_${model}_cuda_single.txt" 2>/dev/null | cut -c1-100
done

step "6. the U-Net surrogate of the Allen-Cahn simulation (examples/allen_cahn_unet.opts, 64x64; a graph network with a spatial input)"
for dev in cuda cpu; do
  for prec in double single; do
    log=$out/unet_${dev}_$prec.txt
    (cd "$scratch" && OPENBLAS_NUM_THREADS=$(nproc) timeout 600 "$B/bin/petnn-env" reaction_diffusion_surrogate -options_file "$B/examples/allen_cahn_unet.opts" \
       -ntrain 48 -nn_epochs 3 -nn_device "$dev" -nn_precision "$prec" -log_view ":$out/logview_unet_${dev}_$prec.txt") >"$log" 2>&1 ||
      { echo "U-Net $dev $prec failed:"; tail -20 "$log"; [ "$dev" = cuda ] && status=1; }
    echo "-- U-Net, $dev, $prec: $(grep -E '^epoch +3' "$log"); forward + backward + loss + optimizer: $(grep -E '^(NNForward|NNBackward|NNLoss|NNOptStep) ' "$out/logview_unet_${dev}_$prec.txt" 2>/dev/null | awk '{t += $4} END {printf "%.3g s", t}')"
    grep -E "^Held-out|^Time per call" "$log"
  done
done

step "done: tests $([ $status = 0 ] && echo passed || echo FAILED); log in $out/gpu_session.log"
exit $status
