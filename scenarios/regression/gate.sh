#!/usr/bin/env bash
# The regression gate: `capsim check` of every scenario's candidate runs against its baseline
# runs (as written by run-suite.sh), with this directory's thresholds.yaml.
#
#   scenarios/regression/gate.sh [--capsim BIN] [--thresholds FILE] BASE_DIR CAND_DIR REPORT_DIR
#
# Writes REPORT_DIR/<scenario>.junit.xml (one test case per metric), REPORT_DIR/<scenario>.md
# and REPORT_DIR/summary.md (all scenarios). Exit 0: no regression; 1: a regression; anything
# else: capsim could not check (missing or invalid input: 65/66, unwritable output: 74).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

capsim=""
thresholds="$here/thresholds.yaml"
while (($# > 0)); do
  case "$1" in
    --capsim) capsim=$2; shift 2 ;;
    --thresholds) thresholds=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gate: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if (($# != 3)); then
  echo "usage: gate.sh [--capsim BIN] [--thresholds FILE] BASE_DIR CAND_DIR REPORT_DIR" >&2
  exit 2
fi
base=$1 cand=$2 reports=$3
if [[ -z $capsim ]]; then
  capsim=$(command -v capsim || echo "$here/../../build/release/capsim")
fi
mkdir -p "$reports" || exit 74

status=0
shopt -s nullglob
dbs=("$base"/*.db)
if ((${#dbs[@]} == 0)); then
  echo "gate: no baseline reports in $base" >&2
  exit 66
fi
: > "$reports/summary.md"
for db in "${dbs[@]}"; do
  name=$(basename "$db" .db)
  "$capsim" check --baseline "$db" --candidate "$cand/$name.db" --thresholds "$thresholds" \
    --junit "$reports/$name.junit.xml" --markdown "$reports/$name.md"
  rc=$?
  [[ -f $reports/$name.md ]] && cat "$reports/$name.md" >> "$reports/summary.md"
  if ((rc == 1)); then
    ((status == 0)) && status=1
  elif ((rc != 0)); then
    status=$rc
  fi
done
exit $status
