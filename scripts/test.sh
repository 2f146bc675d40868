#!/usr/bin/env bash
# README command 2: set up, build, and run every test (unit and end-to-end).
#   scripts/test.sh [--sanitize]   (extra arguments go to setup.sh)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$("$here/scripts/setup.sh" "$@" | tail -n 1)
cd "$build"
ctest --output-on-failure -j 2 --timeout 600
