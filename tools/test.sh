#!/usr/bin/env bash
# The README's second command, and what CI runs (docs/testing.md): set up, build with warnings as
# errors, and run the whole test suite (unit and scenario tests, a smoke run of the benchmarks),
# then
#   - g++ -O0, clang++ -O0 and clang++ -O2 write the golden runs byte for byte, and clang++
#     builds the whole project (tools/test-compilers.sh gcc-O0 clang-O0, then --whole clang-O2;
#     with the optimised g++ build above, all four builds of the compiler matrix),
#   - the sharded-sweep recipe on a real one-node Slurm (tools/test-slurm.sh),
#   - a short libFuzzer run of every parser when clang is installed (tools/fuzz.sh,
#     docs/fuzzing.md).
# A step that cannot run here is skipped with its reason, listed again at the end;
# CAPSIM_TEST_COMPILERS=0 and CAPSIM_TEST_SLURM=0 skip those two steps.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh ci
jobs=$(nproc 2>/dev/null || echo 2)
ctest --preset ci -j "$jobs" "$@"

skipped=()
# step NAME VARIABLE COMMAND...: runs COMMAND unless VARIABLE=0; exit 77 means skipped.
step() {
  local name=$1 var=$2 rc=0
  shift 2
  if [[ ${!var:-1} == 0 ]]; then
    skipped+=("$name: $var=0")
    return
  fi
  "$@" || rc=$?
  case $rc in
    0) ;;
    77) skipped+=("$name: could not run here (reason above)") ;;
    *) echo "test: $name failed (exit $rc)" >&2; exit "$rc" ;;
  esac
}
step "tools/test-compilers.sh gcc-O0 clang-O0" CAPSIM_TEST_COMPILERS tools/test-compilers.sh gcc-O0 clang-O0
step "tools/test-compilers.sh --whole clang-O2" CAPSIM_TEST_COMPILERS tools/test-compilers.sh --whole clang-O2
step tools/test-slurm.sh CAPSIM_TEST_SLURM env CAPSIM=build/ci/capsim tools/test-slurm.sh

CAPSIM_FUZZ_SEED=${CAPSIM_FUZZ_SEED:-1} tools/fuzz.sh "${CAPSIM_FUZZ_SECONDS:-10}"  # seconds per target: 7 targets

for s in "${skipped[@]}"; do echo "test: SKIPPED $s" >&2; done
