#!/usr/bin/env bash
# Installs what capsim needs to build (Debian 12 packages) when it is missing, then configures
# and builds with the given CMake preset (default: release).
#   tools/setup.sh [preset] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."

preset=${1:-release}
shift || true

packages=(cmake ninja-build g++ pkg-config libboost-program-options-dev libyaml-cpp-dev
          libyaml-dev libeigen3-dev libfmt-dev libsqlite3-dev sqlite3 libbenchmark-dev doctest-dev
          libmimalloc-dev clang libclang-rt-14-dev)  # clang and its libFuzzer runtime: tools/fuzz.sh
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >&2 || true
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake --preset "$preset" "$@" >&2
cmake --build --preset "$preset" -j "$jobs" >&2
