#!/usr/bin/env bash
# Old build vs new build, the same nnrun command, alternating A/B runs: the epoch time of the last
# epoch of each run, the medians, and their ratio (new/old). Also checks the runs' monitor lines
# (losses and accuracies) and final checkpoints (bench/h5same.py: every tensor and counter, bitwise) are identical
# between the two builds.
#
#   bench/ab_builds.sh OLD_BUILD NEW_BUILD OPTIONS_FILE [samples (6000)] [epochs (2)] [pairs (3)] [extra nnrun options]
#
# e.g. bench/ab_builds.sh /path/to/old/build build examples/fashion_mlp.opts 60000 2 3
set -eu
cd "$(dirname "$0")/.."
old=$1 new=$2 opts=$3 n=${4:-6000} epochs=${5:-2} pairs=${6:-3}
shift $(( $# < 6 ? $# : 6 ))
extra="$*"
common="-options_file $opts -train_data_max_samples $n -nn_epochs $epochs -test 0 -nn_monitor $extra"
out=$(mktemp -d)
last_epoch_time() { grep "Epoch" "$1" | tail -1 | sed 's/.*time \([0-9.]*\) s.*/\1/'; }
median() { /usr/bin/python3 -c "import statistics, sys; print(f'{statistics.median(float(a) for a in sys.argv[1:]):.3f}')" "$@"; }
echo "A/B: $opts, $n samples, $epochs epochs, $pairs alternating pairs; old $old, new $new"
uptime
to= tn=
for r in $(seq "$pairs"); do
  "$old/examples/nnrun" $common -nn_checkpoint "$out/old.h5" > "$out/old.log"
  "$new/examples/nnrun" $common -nn_checkpoint "$out/new.h5" > "$out/new.log"
  a=$(last_epoch_time "$out/old.log") b=$(last_epoch_time "$out/new.log")
  to="$to $a" tn="$tn $b"
  same=identical
  strip() { grep Epoch "$1" | sed 's/time .*//'; }
  cmp -s <(strip "$out/old.log") <(strip "$out/new.log") || same=DIFFERENT
  /usr/bin/python3 bench/h5same.py "$out/old.h5" "$out/new.h5" || same="$same; checkpoints DIFFERENT"
  echo "pair $r: old $a s/epoch, new $b s/epoch; monitor lines and checkpoints $same"
done
mo=$(median $to) mn=$(median $tn)
echo "median s/epoch: old $mo, new $mn, new/old $(/usr/bin/python3 -c "print(f'{$mn/$mo:.3f}')")"
