#!/usr/bin/env bash
# Same bytes from any compiler: builds capsim with g++ and clang++ at -O0 and -O2, runs the
# golden runs in each build, and checks that every build reports exactly the committed golden
# files (tests/scenario/golden: events, summaries, pods, samples), so all builds agree with each
# other. Prints the digest of the committed golden files, then one line per build with the
# digest of what its golden runs wrote (equal to the first when the build matches).
#   tools/test-compilers.sh [--whole] [build ...]   builds: gcc-O0 gcc-O2 clang-O0 clang-O2
#                                                   (default: all four)
# Each build compiles the libraries, the CLI and the golden test binary (capsim_golden_tests);
# --whole also compiles every other target (all tests, the benchmarks), to show the whole project
# builds with that compiler. tools/test.sh (CI) runs `gcc-O0 clang-O0`, then `--whole clang-O2`
# (its ctest build is the optimised g++ one; docs/testing.md). A compiler that is not installed
# is reported and skipped (exit 77 when no build could run); tools/setup.sh installs both.
# ccache is used when installed.
set -euo pipefail
cd "$(dirname "$0")/.."
whole=0
if [[ ${1:-} == --whole ]]; then
  whole=1
  shift
fi
builds=("$@")
((${#builds[@]} > 0)) || builds=(gcc-O0 gcc-O2 clang-O0 clang-O2)
jobs=$(nproc 2>/dev/null || echo 2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
skipped=0
digest_of() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16); }
# The committed golden files are the reference every build's output is digested against.
reference=$(digest_of tests/scenario/golden)
printf '%-9s %-9s %s\n' build golden "digest of the golden runs' output" >&2
printf '%-9s %-9s %s (%s files)\n' committed - "$reference" "$(find tests/scenario/golden -type f | wc -l)" >&2
for b in "${builds[@]}"; do
  case $b in
    gcc-O0 | gcc-O2) cxx=g++ ;;
    clang-O0 | clang-O2) cxx=clang++ ;;
    *) echo "test-compilers: unknown build '$b' (use gcc-O0, gcc-O2, clang-O0, clang-O2)" >&2; exit 2 ;;
  esac
  if ! command -v "$cxx" >/dev/null; then
    echo "test-compilers: $cxx is not installed; skipping $b" >&2
    skipped=$((skipped + 1))
    continue
  fi
  dir=build/compilers/$b
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # CMAKE_BUILD_TYPE=None: the flags are exactly -O0 or -O2 (plus the project's own).
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-${b#*-}" -DCAPSIM_BUILD_BENCH=$((whole ? 1 : 0)) -DCAPSIM_WARNINGS_AS_ERRORS=ON \
    "${launcher[@]}" >"$work/$b.configure" 2>&1 ||
    { cat "$work/$b.configure" >&2; exit 1; }
  targets=(capsim capsim_golden_tests)
  ((whole)) && targets+=(all)
  if ! cmake --build "$dir" -j "$jobs" --target "${targets[@]}" >"$work/$b.build" 2>&1; then
    tail -40 "$work/$b.build" >&2
    echo "test-compilers: $b does not build" >&2
    exit 1
  fi
  out=$work/$b
  mkdir -p "$out"
  if (cd "$dir/tests" && CAPSIM_GOLDEN_DUMP="$out" ./capsim_golden_tests \
      >"$work/$b.log" 2>&1); then
    result=identical
  else
    result=DIFFERS
    failed=1
    grep -E "differs from its golden file|expected:|actual:" "$work/$b.log" | head -6 >&2 || true
  fi
  digest=$(digest_of "$out")
  printf '%-9s %-9s %s (%s files)\n' "$b" "$result" "$digest" "$(find "$out" -type f | wc -l)" >&2
  [[ $digest == "$reference" ]] || failed=1
done
if ((skipped == ${#builds[@]})); then
  echo "test-compilers: SKIPPED: no compiler of ${builds[*]} is installed" >&2
  exit 77
fi
if ((failed)); then
  echo "test-compilers: the builds do not all report the golden runs byte for byte" >&2
  exit 1
fi
echo "test-compilers: every build reports the golden runs byte for byte" >&2
