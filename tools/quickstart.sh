#!/usr/bin/env bash
# The README's first command: set up, build, and run the bundled default scenario. Prints the
# summary and writes quickstart.db (open it with sqlite3, or `capsim report` once available).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh release
./build/release/capsim run scenarios/quickstart.yaml -o quickstart.db "$@"
echo "report written to $(pwd)/quickstart.db (run.status = $(sqlite3 quickstart.db "select status from run order by run_id desc limit 1"))" >&2
