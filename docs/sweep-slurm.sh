#!/bin/bash
# A capsim sweep as a Slurm job array, then the merge as a dependent job (docs/planning.md).
#
#   sbatch docs/sweep-slurm.sh                       # submits the array and the merge
#   SWEEP=my-sweep.yaml SHARDS=16 sbatch docs/sweep-slurm.sh
#
# Run without SLURM_ARRAY_TASK_ID (i.e. by sbatch, not as an array task) it submits itself as an
# array of $SHARDS tasks plus a merge job that starts when every task succeeded. Each task runs
# one shard: capsim reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT
# itself. Results go to $OUT (a directory every node sees).
#SBATCH --job-name=capsim-sweep
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=capsim-sweep-%A_%a.log
set -euo pipefail

SWEEP=${SWEEP:-scenarios/planning/sweep.yaml}
SHARDS=${SHARDS:-4}
OUT=${OUT:-results}
CAPSIM=${CAPSIM:-capsim}
NAME=$(basename "$SWEEP" .yaml)

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  mkdir -p "$OUT"
  array=$(sbatch --parsable --array=0-$((SHARDS - 1)) --export=ALL,SWEEP="$SWEEP",OUT="$OUT",CAPSIM="$CAPSIM" "$0")
  sbatch --dependency=afterok:"$array" --job-name=capsim-merge --output="$OUT/merge-%j.log" \
    --wrap="$CAPSIM merge '$OUT/$NAME.db' '$OUT'/shard-*.db"
  echo "submitted array $array ($SHARDS shards) and its merge"
  exit 0
fi

exec "$CAPSIM" sweep "$SWEEP" -j "${SLURM_CPUS_PER_TASK:-1}" --quiet \
  -o "$OUT/shard-${SLURM_ARRAY_TASK_ID}.db"
