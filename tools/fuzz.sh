#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (the `fuzz` preset: ASan + UBSan) and runs each, one at a
# time, for a while from its committed seed corpus (docs/fuzzing.md); new inputs go to a scratch
# directory, so the corpus in the repository only changes when someone commits an input on
# purpose. Prints each target's final figures (executions, coverage); a crash, a sanitizer report,
# a timeout or memory past 2 GB stops the run with exit 1 and leaves the input in
# build/fuzz/findings/.
#   tools/fuzz.sh [seconds per target, default 10] [target...]
# CAPSIM_FUZZ_SEED fixes libFuzzer's seed (tools/test.sh sets it, so CI explores the same inputs
# from one run to the next and a finding there can be replayed); unset, each run draws its own.
# Targets: cel scenario manifests k8s_dump traces study values (default: all).
# Skipped (exit 0) when clang++ or its libFuzzer runtime is missing; tools/setup.sh installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
shift || true
targets=("$@")
((${#targets[@]} > 0)) || targets=(cel scenario manifests k8s_dump traces study values)
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found; skipping the fuzz run (tools/setup.sh installs clang)" >&2
  exit 0
fi
if ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "fuzz: libFuzzer runtime (libclang-rt-14-dev) not found; skipping the fuzz run" >&2
  exit 0
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset fuzz >&2
cmake --build --preset fuzz -j "$jobs" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for name in "${targets[@]}"; do
  target=capsim_${name}_fuzz
  corpus=tests/fuzz/corpus/$name
  echo "fuzz: $target for ${seconds}s from $corpus" >&2
  mkdir -p "$work/$name" "$work/$name-artifacts"
  seed_option=()
  [[ -n ${CAPSIM_FUZZ_SEED:-} ]] && seed_option=(-seed="$CAPSIM_FUZZ_SEED")
  build/fuzz/tests/fuzz/$target "${seed_option[@]}" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/$name-artifacts/" "$work/$name" "$corpus" \
    >"$work/$name.log" 2>&1 || true
  # The last status line (#runs DONE cov: ... ft: ...) and the summary of any finding.
  grep -E "^#[0-9]+[[:space:]]+DONE|^stat::number_of_executed_units|==[0-9]+==ERROR|^SUMMARY" \
    "$work/$name.log" | sed "s/^/fuzz: $name: /" >&2 || true
  if compgen -G "$work/$name-artifacts/*" >/dev/null; then
    echo "fuzz: $target found a failing input:" >&2
    tail -n 60 "$work/$name.log" >&2
    mkdir -p build/fuzz/findings
    cp "$work/$name-artifacts/"* build/fuzz/findings/
    ls build/fuzz/findings >&2
    # The input replayed with the errors the target expected printed: a broken contract (an
    # import writing what run refuses) shows as the last of them.
    for input in "$work/$name-artifacts/"*; do
      echo "fuzz: replaying $(basename "$input"):" >&2
      CAPSIM_FUZZ_VERBOSE=1 build/fuzz/tests/fuzz/$target "$input" 2>&1 |
        grep -v -E "^INFO:|^ +#[0-9]+ " | head -n 20 >&2 || true
      echo "fuzz: input (first 2000 bytes):" >&2
      head -c 2000 "$input" | cat -v >&2
      echo >&2
    done
    exit 1
  fi
done
