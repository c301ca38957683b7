#!/usr/bin/env bash
# Data-parallel Fashion-MNIST CNN (examples/fashion_cnn.opts), global batch 256, OPENBLAS_NUM_THREADS=1:
#   1 rank vs 2 ranks as 2 data groups (-nn_data_groups 2), with the shared-memory all-reduce and
#   the sharded optimizer step on one shared copy of the parameters (the defaults on one node), the
#   same without sharding (-nn_shard_optimizer 0), and the MPI all-reduce (-nn_allreduce mpi:
#   bucketed MPI_Iallreduce during the backward pass, with the fraction of it hidden behind the
#   backward pass); then the cost of one checkpoint per epoch.
#
#   bench/dp_bench.sh [build dir (default build)] [training samples (default 6000)] [epochs (default 2)] [repetitions (default 1)] [all|default]
#
# "default" runs only 1 rank and 2 ranks with the default settings, for more repetitions per minute.
#
# Epoch times are those of the last epoch (the first one also pays for first-touch allocations).
# The 1-rank and 2-rank runs alternate, repetitions times, and the speed-ups are ratios of the
# medians: on a shared machine single runs move by 20%. With a subset of the 60000 samples the
# checkpoint overhead is also given for a full epoch (the checkpoint costs the same, the epoch is
# 60000/samples times longer).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-6000}
epochs=${3:-2}
reps=${4:-1}
variants=${5:-all}
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec="mpiexec"
mpiexec --version 2>&1 | grep -q "Open MPI" && mpiexec="mpiexec --oversubscribe --mca mpi_yield_when_idle 1"
nnrun=$build/examples/nnrun
common="-options_file examples/fashion_cnn.opts -nn_batch_size 256 -train_data_max_samples $n -nn_epochs $epochs -test 0 -nn_monitor"
out=$(mktemp -d)
last_epoch_time() { grep "Epoch" "$1" | tail -1 | sed 's/.*time \([0-9.]*\) s.*/\1/'; }
median() { python3 -c "import statistics, sys; print(f'{statistics.median(float(a) for a in sys.argv[1:]):.2f}')" "$@"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }

echo "Fashion-MNIST CNN, $n training samples, global batch 256, OPENBLAS_NUM_THREADS=1, $epochs epochs, $reps repetition(s)"
uptime
declare -A t
for r in $(seq "$reps"); do
  $nnrun $common > "$out/one.log"
  $mpiexec -n 2 $nnrun $common -nn_data_groups 2 -log_view > "$out/shm.log"
  if [ "$variants" = default ]; then
    t[one]="${t[one]:-} $(last_epoch_time "$out/one.log")"
    t[shm]="${t[shm]:-} $(last_epoch_time "$out/shm.log")"
    echo "repetition $r: 1 rank $(last_epoch_time "$out/one.log") s/epoch; 2 ranks $(last_epoch_time "$out/shm.log") s"
    continue
  fi
  $mpiexec -n 2 $nnrun $common -nn_data_groups 2 -nn_allreduce mpi -log_view > "$out/mpi.log"
  $mpiexec -n 2 $nnrun $common -nn_data_groups 2 -nn_shard_optimizer 0 > "$out/whole.log"
  for k in one shm mpi whole; do t[$k]="${t[$k]:-} $(last_epoch_time "$out/$k.log")"; done
  echo "repetition $r: 1 rank $(last_epoch_time "$out/one.log") s/epoch; 2 ranks: shared memory $(last_epoch_time "$out/shm.log") s, shared memory unsharded $(last_epoch_time "$out/whole.log") s, MPI all-reduce $(last_epoch_time "$out/mpi.log") s"
done
m1=$(median ${t[one]}); ms=$(median ${t[shm]})
if [ "$variants" = default ]; then
  echo "median s/epoch: 1 rank $m1; 2 ranks $ms (speed-up $(ratio "$m1" "$ms")x)"
  grep "all-reduce" "$out/shm.log" | tail -1
  exit 0
fi
mm=$(median ${t[mpi]}); mh=$(median ${t[whole]})
echo "median s/epoch: 1 rank $m1; 2 ranks: shared memory $ms (speed-up $(ratio "$m1" "$ms")x), shared memory unsharded $mh ($(ratio "$m1" "$mh")x), MPI $mm ($(ratio "$m1" "$mm")x)"
echo "last repetition, 2 ranks, last epoch:"
grep "all-reduce" "$out/shm.log" | tail -1
grep "all-reduce" "$out/mpi.log" | tail -1
for k in shm mpi; do
  grep -E "^(NNForward|NNBackward|NNAllreduceLaunch|NNAllreduceWait|NNDataExchange|NNOptStep) " "$out/$k.log" | awk -v k=$k '{printf "  -log_view (2 ranks, %s all-reduce) %-18s max time %s s (max/min %s)\n", k, $1, $4, $5}'
done

# one checkpoint per epoch (-nn_checkpoint, every epoch by default), 1 rank
ck=$out/cnn_ck.h5
$nnrun $common -nn_checkpoint "$ck" -log_view > "$out/ck.log"
tc=$(grep -E "^NNCheckpoint " "$out/ck.log" | awk '{print $4}')
nc=$(grep -E "^NNCheckpoint " "$out/ck.log" | awk '{print $2}')
tk=$(last_epoch_time "$out/ck.log")
python3 - "$tc" "$nc" "$tk" "$n" <<'PY'
import sys
tc, nc, tk, n = float(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
per = tc / nc
print(f"checkpoint: {per:.3f} s each ({nc} written, {tc:.3f} s); {100*per/tk:.2f}% of this {tk:.2f} s epoch,"
      f" {100*per/(tk*60000/n):.2f}% of a full 60000-sample epoch")
PY
ls -l "$ck" | awk '{printf "checkpoint file: %.1f MB\n", $5/1e6}'
rm -rf "$out"
