#!/bin/sh
# Runs the nvl72 variants (Kueue TAS required, preferred, unconstrained at the NVLink-domain
# level; kube-scheduler with ComputeDomains, without and with TopologyPacking) and prints their
# topology figures as a markdown table.
#   scenarios/topology/run.sh [path/to/capsim] [output dir]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
capsim=${1:-"$here/../../build/release/capsim"}
out=${2:-"${TMPDIR:-/tmp}/topology"}
mkdir -p "$out"
metric() {  # db metric format
  sqlite3 "$1" "SELECT printf('$3', value) FROM summary WHERE metric = '$2'"
}
echo "| variant | pod wait p95 (s) | TAS admission wait p95 (s) | GPU allocation | jobs spanning >1 NVLink domain | slowdown factor, mean | makespan (h) | fragmented GPUs, nvlink level (mean) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for v in required preferred unconstrained compute-domains compute-domains-packed; do
  db="$out/$v.db"
  "$capsim" run "$here/nvl72-$v.yaml" -o "$db" --quiet > /dev/null
  echo "| $v | $(metric "$db" wait_seconds_p95 '%.0f') |" \
    "$(metric "$db" tas_wait_seconds_p95 '%.0f') |" \
    "$(metric "$db" gpu_allocation_ratio_mean '%.3f') |" \
    "$(metric "$db" jobs_spanning_domains '%.0f') |" \
    "$(metric "$db" topology_slowdown_mean '%.3f') |" \
    "$(sqlite3 "$db" "SELECT printf('%.1f', value / 3600) FROM summary WHERE metric = 'makespan_seconds'") |" \
    "$(metric "$db" topology.nvlink.fragmented_gpus_mean '%.1f') |"
done
echo
echo "Gangs by span (pods of a gang share one row per gang):"
for v in required preferred unconstrained compute-domains compute-domains-packed; do
  sqlite3 "$out/$v.db" "SELECT '$v', topology_span, printf('%.2f', topology_slowdown),
                               count(DISTINCT job) FROM pod WHERE topology_span IS NOT NULL
                        GROUP BY topology_span, topology_slowdown"
done
