#!/usr/bin/env bash
# One set-up step for both README commands and CI: installs the Debian
# packages that are missing (non-interactive), then configures and builds.
#   scripts/setup.sh [--sanitize] [--fuzz] [--build-dir DIR] [--extra PKG...]
# Prints the build directory on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build"
cmake_args=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) cmake_args+=(-DRHOBENCH_SANITIZE=ON); build="$here/build-asan"; shift ;;
    --fuzz) cmake_args+=(-DRHOBENCH_FUZZ=ON -DCMAKE_C_COMPILER=clang); build="$here/build-fuzz"; extra+=(clang libclang-rt-14-dev); shift ;;
    --build-dir) build="$2"; shift 2 ;;
    --extra) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do extra+=("$1"); shift; done ;;
    *) echo "setup.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# Build and run-time needs. gnuplot-nox draws the plots; curl and jq are used
# by the end-to-end test scripts; procps gives the tests pgrep/ps; prometheus
# gives promtool, which checks simserver's metrics exposition; chromium renders
# report.html headless in its browser test, which reads it with python3.
pkgs=(build-essential cmake pkg-config libcurl4-openssl-dev libuv1-dev libcjson-dev libyaml-dev
      libgsl-dev libcmocka-dev libhttp-parser-dev libpcre2-dev gnuplot-nox curl jq procps valgrind clang-format nginx-light prometheus
      chromium python3 openmpi-bin libopenmpi-dev mpich libmpich-dev "${extra[@]}")
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cmake -S "$here" -B "$build" "${cmake_args[@]}" >&2
cmake --build "$build" -j "$(nproc)" >&2
echo "$build"
