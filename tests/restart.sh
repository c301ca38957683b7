#!/usr/bin/env bash
# Kill-and-restart test, driven through tests/restart.c:   restart.sh <restart exe> <mpiexec> <ranks> [options]
#   1. an uninterrupted data-parallel run on <ranks> ranks (4 epochs of 5 steps)
#   2. the same run with a checkpoint every 3 steps, rank 0 killed with SIGKILL after step 8,
#      in the middle of epoch 2: its last checkpoint is the one of step 6 (epoch 2, batch 1)
#   3. a restart from that checkpoint on <ranks> ranks ends bitwise identical to run 1
#   4. restarts from the same checkpoint on 1 and 3 ranks end within 1e-10 of run 1 (1e-5 in single precision:
#      other rank counts sum the float gradients of other shards)
# further options go to every run
set -u
exe=$1
mpiexec=$2
n=$3
shift 3
extra=("$@")
tol=1e-10
case " ${extra[*]} " in *" -nn_precision single "*) tol=1e-5 ;; esac
run() {
  local np=$1
  shift
  if [ "$np" -gt 1 ]; then $mpiexec -n "$np" "$exe" "$@" "${extra[@]}"; else "$exe" "$@" "${extra[@]}"; fi
}
rm -f full.h5 ck.h5 ck_step6.h5 never.h5 resumed_*.h5 restart_data.dat
run "$n" -mode full -out full.h5 || exit 1
run "$n" -mode train -nn_checkpoint ck.h5 -nn_checkpoint_steps 3 -kill_step 8 -kill_rank 0 -out never.h5 > killed.log 2>&1
rc=$?
grep -h "SIGKILL" killed.log
if [ "$rc" -eq 0 ] || [ -e never.h5 ] || [ ! -e ck.h5 ]; then
  echo "FAIL: the killed run finished (exit code $rc) or left no checkpoint"
  cat killed.log
  exit 1
fi
echo "killed run: nonzero exit code, no final state, checkpoint ck.h5 kept"
cp ck.h5 ck_step6.h5
run "$n" -mode resume -load ck.h5 -out resumed_$n.h5 || exit 1
run 1 -mode compare -a full.h5 -b resumed_$n.h5 -tol 0 || exit 1
for m in 1 3; do
  [ "$m" = "$n" ] && continue
  run "$m" -mode resume -load ck_step6.h5 -out resumed_$m.h5 || exit 1
  run 1 -mode compare -a full.h5 -b resumed_$m.h5 -tol "$tol" || exit 1
done
