#!/usr/bin/env bash
# The README's second command, and what CI runs: set up, build with warnings as errors, and run
# the whole test suite (unit and scenario tests, a smoke run of the benchmarks), then a short
# libFuzzer run of every parser when clang is installed (tools/fuzz.sh, docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh ci
jobs=$(nproc 2>/dev/null || echo 2)
ctest --preset ci -j "$jobs" "$@"
tools/fuzz.sh "${CAPSIM_FUZZ_SECONDS:-10}"  # seconds per target: 7 targets
