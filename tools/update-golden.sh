#!/usr/bin/env bash
# Rewrites the golden runs (tests/scenario/golden/) from the current tree: builds the test binary
# with the given preset (default: ci) and runs the golden test with CAPSIM_UPDATE_GOLDEN=1.
# Commit the rewritten files together with the change that explains them; `git diff --stat
# tests/scenario/golden` shows which runs changed.
#   tools/update-golden.sh [preset]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
cmake --build --preset "$preset" --target capsim_tests capsim >&2
CAPSIM_UPDATE_GOLDEN=1 "build/$preset/tests/capsim_tests" \
  --test-case='each golden run reports exactly what its golden files hold' >&2
git status --short tests/scenario/golden
