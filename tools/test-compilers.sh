#!/usr/bin/env bash
# Same bytes from any compiler: builds the tests with g++ and clang++ at -O0 and -O2, runs the
# golden runs in each build, and checks that every build reports exactly the committed golden
# files (tests/scenario/golden: events, summaries, pods, samples), so all builds agree with each
# other. Prints one line per build with the digest of what its golden runs wrote.
#   tools/test-compilers.sh [build ...]   builds: gcc-O0 gcc-O2 clang-O0 clang-O2 (default: all)
# A compiler that is not installed is reported and skipped; tools/setup.sh installs both.
set -euo pipefail
cd "$(dirname "$0")/.."
builds=("$@")
((${#builds[@]} > 0)) || builds=(gcc-O0 gcc-O2 clang-O0 clang-O2)
jobs=$(nproc 2>/dev/null || echo 2)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
reference=""
printf '%-9s %-9s %s\n' build golden "digest of the golden runs' output" >&2
for b in "${builds[@]}"; do
  case $b in
    gcc-O0 | gcc-O2) cxx=g++ ;;
    clang-O0 | clang-O2) cxx=clang++ ;;
    *) echo "test-compilers: unknown build '$b' (use gcc-O0, gcc-O2, clang-O0, clang-O2)" >&2; exit 2 ;;
  esac
  if ! command -v "$cxx" >/dev/null; then
    echo "test-compilers: $cxx is not installed; skipping $b" >&2
    continue
  fi
  dir=build/compilers/$b
  # CMAKE_BUILD_TYPE=None: the flags are exactly -O0 or -O2 (plus the project's own).
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_FLAGS="-${b#*-}" -DCAPSIM_BUILD_BENCH=OFF -DCAPSIM_WARNINGS_AS_ERRORS=ON >"$work/$b.configure" 2>&1 ||
    { cat "$work/$b.configure" >&2; exit 1; }
  if ! cmake --build "$dir" -j "$jobs" --target capsim_tests >"$work/$b.build" 2>&1; then
    tail -40 "$work/$b.build" >&2
    echo "test-compilers: $b does not build" >&2
    exit 1
  fi
  out=$work/$b
  mkdir -p "$out"
  if (cd "$dir/tests" && CAPSIM_GOLDEN_DUMP="$out" ./capsim_tests --test-case='*golden*' \
      >"$work/$b.log" 2>&1); then
    result=identical
  else
    result=DIFFERS
    failed=1
    grep -E "differs from its golden file|expected:|actual:" "$work/$b.log" | head -6 >&2 || true
  fi
  digest=$(cd "$out" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)
  printf '%-9s %-9s %s (%s files)\n' "$b" "$result" "$digest" "$(find "$out" -type f | wc -l)" >&2
  [[ -z $reference ]] && reference=$digest
  [[ $digest == "$reference" ]] || failed=1
done
if ((failed)); then
  echo "test-compilers: the builds do not all report the golden runs byte for byte" >&2
  exit 1
fi
echo "test-compilers: every build reports the golden runs byte for byte" >&2
