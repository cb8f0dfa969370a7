#!/usr/bin/env bash
# Runs the regression suite: every scenario in this directory, with one capsim binary and one
# scheduler profile, over several seeds, into OUT_DIR/<scenario>.db (one report file per
# scenario; the seeds are runs appended to it, which compare and check average).
#
#   scenarios/regression/run-suite.sh [--capsim BIN] [--profile NAME] [--seeds "1 2 3"] OUT_DIR
#
# --profile defaults to each scenario's own profile; --seeds to "1 2 3 4 5"; --capsim to
# capsim on PATH, else build/release/capsim. Exit status: capsim's, on the first failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

capsim=""
profile=""
seeds="1 2 3 4 5"
while (($# > 0)); do
  case "$1" in
    --capsim) capsim=$2; shift 2 ;;
    --profile) profile=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run-suite: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if (($# != 1)); then
  echo "usage: run-suite.sh [--capsim BIN] [--profile NAME] [--seeds \"1 2 3\"] OUT_DIR" >&2
  exit 2
fi
out=$1
if [[ -z $capsim ]]; then
  capsim=$(command -v capsim || echo "$here/../../build/release/capsim")
fi
mkdir -p "$out"

for scenario in "$here"/*.yaml; do
  [[ $(basename "$scenario") == thresholds.yaml ]] && continue
  name=$(basename "$scenario" .yaml)
  db="$out/$name.db"
  rm -f "$db"
  for seed in $seeds; do
    args=(run "$scenario" -o "$db" --append --seed "$seed" --quiet)
    [[ -n $profile ]] && args+=(--profile "$profile")
    "$capsim" "${args[@]}" > /dev/null
  done
  echo "run-suite: $name: seeds $seeds${profile:+, profile $profile} -> $db" >&2
done
