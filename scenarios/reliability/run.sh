#!/bin/sh
# Runs the reliability fleet with checkpoints every 30 min, 1 h, 3 h and never, and with 0, 2, 4
# and 8 spare nodes for the training job, and prints the gang's effective training time, the
# fleet's goodput and the failures as markdown tables.
#   scenarios/reliability/run.sh [path/to/capsim] [output dir]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
capsim=${1:-"$here/../../build/release/capsim"}
out=${2:-"${TMPDIR:-/tmp}/reliability"}
mkdir -p "$out"

metric() {  # db metric [format]
  sqlite3 "$1" "SELECT printf('${3:-%.3f}', value) FROM summary WHERE metric = '$2'"
}
row() {  # label db
  echo "| $1 | $(metric "$2" queue.training.effective_time_ratio) |" \
    "$(metric "$2" goodput_ratio) | $(metric "$2" gpu_hours_lost_to_failures %.0f) |" \
    "$(metric "$2" gpu_hours_lost_to_checkpoints %.0f) | $(metric "$2" pods_interrupted %.0f) |" \
    "$(metric "$2" node_failures %.0f) | $(metric "$2" gpu_failures %.0f) |" \
    "$(metric "$2" pool.training.availability) |"
}
header() {
  echo "| $1 | gang effective time | goodput | GPU-h lost to failures | GPU-h checkpointing | pods interrupted | node failures | GPU failures | training pool availability |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
}

header "checkpoints (4 spares)"
for iv in 30m 1h 3h none; do
  if [ "$iv" = none ]; then set -- --set 'checkpoints=[]'; else set -- --set "checkpoints[0].interval=$iv"; fi
  "$capsim" run "$here/fleet.yaml" -o "$out/ckpt-$iv.db" --quiet "$@" > /dev/null
  row "$iv" "$out/ckpt-$iv.db"
done
echo
header "spare nodes (1 h checkpoints)"
for spares in 0 2 4 8; do
  "$capsim" run "$here/fleet.yaml" -o "$out/spares-$spares.db" --quiet \
    --set "cluster.pools[0].count=$((128 + spares))" \
    --set "cluster.pools[1].count=$((128 - spares))" > /dev/null
  row "$spares" "$out/spares-$spares.db"
done
