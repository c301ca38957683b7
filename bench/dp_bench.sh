#!/usr/bin/env bash
# Data-parallel Fashion-MNIST CNN (examples/fashion_cnn.opts), global batch 256, OPENBLAS_NUM_THREADS=1:
#   1 rank vs 2 ranks as 2 data groups (-nn_data_groups 2); the fraction of the gradient all-reduce
#   hidden behind the backward pass (printed by -nn_monitor); the cost of one checkpoint per epoch.
#
#   bench/dp_bench.sh [build dir (default build)] [training samples (default 6000)] [epochs (default 2)]
#
# Epoch times are those of the last epoch (the first one also pays for first-touch allocations).
# With a subset of the 60000 samples the checkpoint overhead is also given for a full epoch
# (the checkpoint costs the same, the epoch is 60000/samples times longer).
# The wall-clock speed-up needs a quiet machine. The script also prints each run's CPU time
# (user + system, the slowest rank; waiting ranks yield the core): on a busy machine the ratio of
# CPU times estimates the speed-up the same runs would have on a quiet one.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-6000}
epochs=${3:-2}
export OPENBLAS_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpiexec="mpiexec"
mpiexec --version 2>&1 | grep -q "Open MPI" && mpiexec="mpiexec --oversubscribe --mca mpi_yield_when_idle 1"
nnrun=$build/examples/nnrun
common="-options_file examples/fashion_cnn.opts -nn_batch_size 256 -train_data_max_samples $n -nn_epochs $epochs -test 0 -nn_monitor"
out=$(mktemp -d)
last_epoch_time() { grep "Epoch" "$1" | tail -1 | sed 's/.*time \([0-9.]*\) s.*/\1/'; }

cputime() { grep "^cpu " "$1" | awk '{t = $2 + $3; if (t > m) m = t} END {print m}'; }

echo "Fashion-MNIST CNN, $n training samples, global batch 256, OPENBLAS_NUM_THREADS=1, $epochs epochs"
uptime
/usr/bin/time -f "cpu %U %S" $nnrun $common -log_view > "$out/one.log" 2> "$out/one.err"
$mpiexec -n 2 /usr/bin/time -f "cpu %U %S" $nnrun $common -nn_data_groups 2 -log_view > "$out/two.log" 2> "$out/two.err"
t1=$(last_epoch_time "$out/one.log")
t2=$(last_epoch_time "$out/two.log")
c1=$(cputime "$out/one.err")
c2=$(cputime "$out/two.err")
echo "1 rank:                  $t1 s/epoch (whole run: $c1 s CPU)"
echo "2 ranks (2 data groups): $t2 s/epoch (whole run: $c2 s CPU on the slower rank)"
echo "speed-up: $(python3 -c "print(f'{$t1/$t2:.2f}')")x wall clock, $(python3 -c "print(f'{$c1/$c2:.2f}')")x CPU time"
grep "all-reduce" "$out/two.log" | tail -1
$mpiexec -n 2 $nnrun $common -nn_data_groups 2 -nn_shard_optimizer > "$out/shard.log"
t3=$(last_epoch_time "$out/shard.log")
echo "2 ranks, sharded optimizer step (-nn_shard_optimizer): $t3 s/epoch   speed-up $(python3 -c "print(f'{$t1/$t3:.2f}')")x wall clock"
grep -E "^(NNAllreduceLaunch|NNAllreduceWait|NNDataExchange|NNBackward|NNOptStep) " "$out/two.log" | awk '{printf "  -log_view (2 ranks) %-18s max time %s s\n", $1, $4}'

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
