#!/bin/bash
# A capsim sweep as a Slurm job array, then the merge as a dependent job (docs/planning.md).
#
#   sbatch docs/sweep-slurm.sh                       # submits the array and the merge
#   SWEEP=my-sweep.yaml SHARDS=16 sbatch docs/sweep-slurm.sh
#   bash docs/sweep-slurm.sh                         # the same, from the login node
#
# Run without SLURM_ARRAY_TASK_ID (by sbatch or bash, not as an array task) it submits itself as
# an array of $SHARDS tasks plus a merge job that starts when every task succeeded (and is
# cancelled if one fails). Each task runs one shard: capsim reads SLURM_ARRAY_TASK_ID,
# SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT itself. Results go to $OUT (a directory every
# node sees): shard files named after the array's job id, so an earlier run in the same
# directory is never merged in, and $OUT/<sweep name>.db. Relative paths are relative to the
# directory sbatch was run from. tools/test-slurm.sh runs this script on a one-node Slurm.
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
  # --parsable prints "id" or "id;cluster".
  array=$(sbatch --parsable --array=0-$((SHARDS - 1)) \
    --export=ALL,SWEEP="$SWEEP",OUT="$OUT",CAPSIM="$CAPSIM" "$0")
  array=${array%%;*}
  merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
    --job-name=capsim-merge --output="$OUT/merge-%j.log" \
    --wrap="$(printf '%q ' "$CAPSIM" merge "$OUT/$NAME.db")$(printf '%q' "$OUT/shard-$array")-*.db")
  echo "submitted array ${array} ($SHARDS shards) and its merge ${merge%%;*}"
  exit 0
fi

exec "$CAPSIM" sweep "$SWEEP" -j "${SLURM_CPUS_PER_TASK:-1}" --quiet \
  -o "$OUT/shard-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}.db"
