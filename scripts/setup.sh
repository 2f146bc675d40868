#!/usr/bin/env bash
# One set-up step for both README commands and CI: installs the Debian
# packages that are missing (non-interactive), then configures and builds.
#   scripts/setup.sh [--tests] [--sanitize] [--fuzz] [--build-dir DIR] [--log FILE] [--extra PKG...]
#                    [--target NAME]...
# --tests adds what only the tests use (README command 2 and CI); without it
# only what building and the main job need is installed (README command 1).
# --target NAME (repeatable) builds only those targets (and what they link),
# not every one.
# The package manager's and the build's output go to the log (default
# BUILD_DIR/setup.log); one line per phase, with its time, goes to stderr.
# Prints the build directory on its last line.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build"
cmake_args=()
extra=()
targets=()
log=""
want_tests=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tests) want_tests=1; shift ;;
    --sanitize) cmake_args+=(-DRHOBENCH_SANITIZE=ON); build="$here/build-asan"; shift ;;
    --fuzz) cmake_args+=(-DRHOBENCH_FUZZ=ON -DCMAKE_C_COMPILER=clang); build="$here/build-fuzz"; extra+=(clang libclang-rt-14-dev); shift ;;
    --build-dir) build="$2"; shift 2 ;;
    --log) log="$2"; shift 2 ;;
    --target) targets+=(--target "$2"); shift 2 ;;
    --extra) shift; while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do extra+=("$1"); shift; done ;;
    *) echo "setup.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

# Building and the main job: the compiler and the libraries (libpcap for the
# wire clock, PCRE2 for tokenizers' pre-tokenizer patterns), gnuplot-nox for
# the plots, curl and jq for the scripts, procps for pgrep/ps.
pkgs=(build-essential cmake pkg-config libcurl4-openssl-dev libuv1-dev libcjson-dev libyaml-dev
      libgsl-dev libcmocka-dev libhttp-parser-dev libpcap-dev libpcre2-dev gnuplot-nox curl jq procps)
# Only the tests: valgrind (leak checks), clang-format (the style check),
# nginx-light and openssl (a TLS terminator, and its certificate),
# prometheus (promtool, and a real server),
# chromium and python3 (the report in a browser), Open MPI and MPICH (the mpi
# back-end), time (/usr/bin/time in the reliability tests), iproute2 (network
# namespaces).
test_pkgs=(valgrind clang-format nginx-light openssl prometheus chromium python3 openmpi-bin libopenmpi-dev
           mpich libmpich-dev time iproute2)
[ "$want_tests" -eq 0 ] || pkgs+=("${test_pkgs[@]}")
pkgs+=("${extra[@]}")

mkdir -p "$build"
[ -n "$log" ] || log="$build/setup.log"
mkdir -p "$(dirname "$log")"
: >"$log"
phase() { echo "setup: $1 ($(( $(date +%s) - t0 )) s; log: $log)" >&2; }
fail() { echo "setup: $1 failed; the last lines of $log:" >&2; tail -n 20 "$log" >&2; exit 1; }

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
t0=$(date +%s)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${#missing[@]} Debian packages: ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  { $sudo apt-get update -qq && $sudo apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
      --no-install-recommends "${missing[@]}"; } >>"$log" 2>&1 || fail "apt-get install"
  phase "installed"
fi
t0=$(date +%s)
cmake -S "$here" -B "$build" "${cmake_args[@]}" >>"$log" 2>&1 || fail "cmake configure"
cmake --build "$build" -j "$(nproc)" "${targets[@]}" >>"$log" 2>&1 || fail "the build"
phase "built in $build"
echo "$build"
