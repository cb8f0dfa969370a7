#!/usr/bin/env bash
# Renders the quickstart's HTML report to a PNG with headless Chromium (Debian's `chromium`
# package), to see the report as a reader does; docs/images/quickstart-report.png is made so.
#
#   tools/render-report.sh [--capsim BIN] [--db RUN.db] [OUT.png]
#
# Without --db it runs scenarios/quickstart.yaml first. Needs chromium (apt-get install -y
# chromium); nothing is fetched from the network: the report is self-contained.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
capsim="$root/build/release/capsim"
db=""
while (($# > 0)); do
  case "$1" in
    --capsim) capsim=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
out=${1:-$root/docs/images/quickstart-report.png}
command -v chromium >/dev/null || { echo "render-report: chromium is not installed (apt-get install -y chromium)" >&2; exit 1; }
[[ -x $capsim ]] || { echo "render-report: no capsim at $capsim (build first, or --capsim BIN)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z $db ]]; then
  db="$work/quickstart.db"
  "$capsim" run "$root/scenarios/quickstart.yaml" -o "$db" --quiet > /dev/null
fi
"$capsim" report "$db" -o "$work/report.html" --quiet
mkdir -p "$(dirname "$out")"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$work/profile" \
  --hide-scrollbars --screenshot="$out" --window-size=1400,3000 "file://$work/report.html" \
  2> "$work/chromium.log" || { cat "$work/chromium.log" >&2; exit 1; }
echo "render-report: wrote $out" >&2
