#!/usr/bin/env bash
# Runs the FGD study's experiment grid -- traces x policies x seeds, one capsim run each, in
# parallel -- and writes the comparison with the study's published results (docs/fgd.md).
#
#   tools/fgd-grid.sh [-j JOBS] [-o OUTDIR] [-b CAPSIM] [-t "default cpu200 ..."]
#                     [-p "Random DotProd ..."] [-s "42 43 ..."] [-e EXPECTED_DIR]
#
# Defaults: every trace with a scenario in scenarios/fgd/, the six policies, seeds 42-51, JOBS =
# the number of cores, OUTDIR = fgd-grid/, CAPSIM = build/release/capsim, EXPECTED_DIR =
# ../shared/data/fgd-expected. Each run writes OUTDIR/runs/<trace>-<policy>-<seed>.db; the
# table goes to OUTDIR/table.md (and stdout), and the wall time of the whole grid to stderr.
# Needs bash, xargs, sqlite3 and awk.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs=$(nproc 2>/dev/null || echo 2)
out=fgd-grid
capsim="$root/build/release/capsim"
traces=""
policies="Random DotProd GpuClustering GpuPacking BestFit FGD"
seeds="42 43 44 45 46 47 48 49 50 51"
expected="$root/../shared/data/fgd-expected"
while getopts "j:o:b:t:p:s:e:h" opt; do
  case $opt in
    j) jobs=$OPTARG ;;
    o) out=$OPTARG ;;
    b) capsim=$OPTARG ;;
    t) traces=$OPTARG ;;
    p) policies=$OPTARG ;;
    s) seeds=$OPTARG ;;
    e) expected=$OPTARG ;;
    h | *) sed -n '2,13p' "$0"; exit 2 ;;
  esac
done
if [ -z "$traces" ]; then
  traces=$(cd "$root/scenarios/fgd" && ls ./*.yaml | sed 's|^\./||; s|\.yaml$||' | tr '\n' ' ')
fi
[ -x "$capsim" ] || { echo "fgd-grid: no capsim binary at $capsim (build the release preset)" >&2; exit 66; }
mkdir -p "$out/runs"

# 1. The runs, JOBS at a time. A run already in OUTDIR is kept (delete OUTDIR to redo it).
start=$(date +%s.%N)
for t in $traces; do for p in $policies; do for s in $seeds; do
  [ -s "$out/runs/$t-$p-$s.db" ] || echo "$t $p $s"
done; done; done |
  xargs -P "$jobs" -L 1 sh -c '"$0" run "$1/scenarios/fgd/$3.yaml" --profile "$4" --seed "$5" \
      -o "$2/runs/$3-$4-$5.db" --quiet > /dev/null || { echo "fgd-grid: $3 $4 $5 failed" >&2; exit 255; }' \
      "$capsim" "$root" "$out" || exit 1
end=$(date +%s.%N)
runs=$(ls "$out"/runs/*.db | wc -l)
awk -v a="$start" -v b="$end" -v n="$runs" -v j="$jobs" \
  'BEGIN { printf "fgd-grid: %d runs, %.1f s wall with %d jobs\n", n, b - a, j }' >&2

# 2. capsim's results: one line per run (trace policy seed alloc@100 alloc@130 frag@130 failed
#    wall), from each run's summary.
results="$out/results.tsv"
: > "$results"
for f in "$out"/runs/*.db; do
  name=$(basename "$f" .db)
  t=${name%%-*}; rest=${name#*-}; p=${rest%-*}; s=${rest##*-}
  sqlite3 -separator ' ' "$f" "SELECT
      (SELECT value FROM summary WHERE metric = 'gpu_allocation_ratio_at_arrived_100'),
      (SELECT value FROM summary WHERE metric = 'gpu_allocation_ratio_at_arrived_130'),
      (SELECT value FROM summary WHERE metric = 'fragmentation_ratio_at_arrived_130'),
      (SELECT value FROM summary WHERE metric = 'fill_pods_failed'),
      (SELECT wall_seconds FROM run)" | sed "s/^/$t $p $s /" >> "$results"
done

# 3. The table: published mean +- std (sample std over seeds) next to capsim's, per trace and
#    policy, at arrived = 100 % and 130 %. A cell holds if |difference| <= max(1.0, 2 std_pub).
awk -f "$root/tools/fgd-table.awk" -v expected="$expected/analysis_allo_discrete.csv" \
  -v expected_frag="$expected/analysis_frag_ratio_discrete.csv" "$results" |
  tee "$out/table.md"
