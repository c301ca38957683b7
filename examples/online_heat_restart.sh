#!/usr/bin/env bash
# Kill-and-restart of online training, driven through examples/online_heat(.c or _f.F90):
#   online_heat_restart.sh <exe> <mpiexec> <ranks> [options]
#   1. an uninterrupted run writes its loss history
#   2. the same run checkpointing every 8 training steps (network, optimizer, generator and replay buffer) is
#      killed with SIGKILL after training step 27: its last checkpoint is the one of step 24
#   3. a run resumed from that checkpoint (the solver recomputes its state) continues the loss history of run 1
#      bitwise, through the surrogate's final error
set -u
exe=$1
mpiexec=$2
n=$3
shift 3
extra=("$@")
run() {
  if [ "$n" -gt 1 ]; then $mpiexec -n "$n" "$exe" "$@" "${extra[@]}"; else "$exe" "$@" "${extra[@]}"; fi
}
rm -f full.txt killed.txt resumed.txt ck.h5
run -loss_history full.txt > full.log 2>&1 || { cat full.log; exit 1; }
run -loss_history killed.txt -nn_checkpoint ck.h5 -nn_checkpoint_steps 8 -kill_step 27 > killed.log 2>&1
rc=$?
grep -h "SIGKILL" killed.log
if [ "$rc" -eq 0 ] || [ ! -e ck.h5 ]; then
  echo "FAIL: the killed run finished (exit code $rc) or left no checkpoint"
  cat killed.log
  exit 1
fi
echo "killed run: nonzero exit code, checkpoint ck.h5 kept"
run -loss_history resumed.txt -load ck.h5 > resumed.log 2>&1 || { cat resumed.log; exit 1; }
grep -h "resumed from" resumed.log
s=$(head -n 1 resumed.txt | awk '{print $1}')
if diff <(tail -n +"$s" full.txt) resumed.txt > /dev/null; then
  echo "resumed run: loss history from training step $s on and the surrogate's error bitwise identical to the uninterrupted run's ($(wc -l < resumed.txt) lines)"
else
  echo "FAIL: the resumed run's history differs from the uninterrupted one's"
  diff <(tail -n +"$s" full.txt) resumed.txt | head
  exit 1
fi
