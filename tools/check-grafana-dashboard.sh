#!/usr/bin/env bash
# Checks docs/grafana/capsim.json the way a user would run it: exports report files with
# `capsim report --prometheus`, backfills them with `promtool tsdb create-blocks-from openmetrics`,
# starts Prometheus on the blocks, and asks it every query of every dashboard panel over the runs'
# time span. Prints, per query, how many series answered and the largest values of the first three; exits 1 if a
# query returned nothing. Needs prometheus, promtool (Debian: apt-get install prometheus), curl
# and python3.
#
#   tools/check-grafana-dashboard.sh build/ci/capsim RUN.db...
set -euo pipefail

capsim=${1:?usage: $0 CAPSIM RUN.db...}
shift
[ $# -gt 0 ] || { echo "usage: $0 CAPSIM RUN.db..." >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
dashboard=$here/docs/grafana/capsim.json
work=$(mktemp -d)
prom_pid=
cleanup() {
  if [ -n "$prom_pid" ]; then kill "$prom_pid" 2>/dev/null || true; wait "$prom_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Simulated time 0 two days ago, on the hour: every run's series lie in the recent past.
start=$(( ($(date +%s) - 2 * 86400) / 3600 * 3600 ))
end=$(( start + 2 * 86400 ))
mkdir -p "$work/data"
for db in "$@"; do
  name=$(basename "$db" .db)
  "$capsim" report "$db" --prometheus "$work/$name.om" --start "$start" -q
  promtool tsdb create-blocks-from openmetrics "$work/$name.om" "$work/data" > /dev/null
  echo "backfilled $db: $(wc -l < "$work/$name.om") lines"
done

port=$(( 20000 + RANDOM % 20000 ))
cat > "$work/prometheus.yml" <<EOF
global: {scrape_interval: 1m}
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
  --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" \
  > "$work/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 60); do
  curl -sf "http://127.0.0.1:$port/-/ready" > /dev/null && break
  sleep 0.5
done
curl -sf "http://127.0.0.1:$port/-/ready" > /dev/null || { cat "$work/prometheus.log" >&2; exit 1; }
echo "prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}') on port $port"

python3 - "$dashboard" "$port" "$start" "$end" <<'EOF'
import json, sys, urllib.parse, urllib.request
dashboard, port, start, end = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
d = json.load(open(dashboard))
failed = 0
for p in d["panels"]:
    for t in p.get("targets", []):
        expr = t["expr"].replace("$scenario", ".*").replace("$run_id", ".*")
        q = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": "600"})
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query_range?{q}") as r:
            body = json.load(r)
        series = body["data"]["result"] if body.get("status") == "success" else []
        points = sum(len(s["values"]) for s in series)
        peaks = []
        for s in series[:3]:
            labels = ",".join(f"{k}={v}" for k, v in s["metric"].items())
            values = [float(v[1]) for v in s["values"] if v[1] not in ("NaN", "+Inf", "-Inf")]
            peaks.append(f"{{{labels}}} {max(values):.4g}" if values else f"{{{labels}}} NaN")
        print(f"{p['title']} [{t['refId']}]: {len(series)} series, {points} points; max: "
              + ("; ".join(peaks) if peaks else "-"))
        if not series:
            failed += 1
            print(f"  NO DATA: {expr}")
sys.exit(1 if failed else 0)
EOF
