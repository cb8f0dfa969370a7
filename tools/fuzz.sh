#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (the `fuzz` preset: ASan + UBSan) and runs each for a
# while from its committed seed corpus; new inputs go to a scratch directory, so the corpus in
# the repository only changes when someone commits an interesting input on purpose.
#   tools/fuzz.sh [seconds per target, default 45]
# Skipped (exit 0) when clang++ or its libFuzzer runtime is missing; tools/setup.sh installs them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-45}
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
for target in capsim_cel_fuzz; do
  corpus=tests/fuzz/corpus/${target#capsim_}
  corpus=${corpus%_fuzz}
  echo "fuzz: $target for ${seconds}s from $corpus" >&2
  mkdir -p "$work/$target"
  build/fuzz/tests/fuzz/$target -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/" "$work/$target" "$corpus" 2>&1 |
    grep -E "^(#[0-9]+ +DONE|stat::|INFO: (Loaded|seed)|==[0-9]+==|SUMMARY|Done)" >&2 || true
  if ls "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-* >/dev/null 2>&1; then
    echo "fuzz: $target found a failing input:" >&2
    ls "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-* 2>/dev/null >&2 || true
    mkdir -p build/fuzz/findings
    cp "$work"/crash-* "$work"/timeout-* "$work"/leak-* "$work"/oom-* build/fuzz/findings/ 2>/dev/null || true
    exit 1
  fi
done
