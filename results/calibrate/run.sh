#!/usr/bin/env bash
# Reproduces the reference calibration of this folder on the current host:
# a default calibration (k = 1 and the online CPUs) and a self-test, each
# repeated N times (default 3) so that medians can be quoted. Writes
# default-<i>/ and selftest-<i>/ (certificate, plot, per-step results) and
# summary.txt here. Usage: results/calibrate/run.sh [BUILD_DIR] [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
n=${2:-3}
cal=$build/calibrate/calibrate
[ -x "$cal" ] || { echo "run.sh: no calibrate at $cal (build first)" >&2; exit 2; }
{
  echo "host: $(lscpu | grep 'Model name' | sed 's/Model name: *//'), $(nproc) CPUs, $(uname -sr)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$here/summary.txt"
for i in $(seq "$n"); do
  rm -rf "$here/default-$i" "$here/selftest-$i"
  "$cal" --quiet --seed "$i" --out-dir "$here/default-$i" > "$here/default-$i.txt" || true
  "$cal" --quick --self-test --quiet --seed "$i" --out-dir "$here/selftest-$i" \
    > "$here/selftest-$i.txt" || true
  echo "load after run $i: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$here/summary.txt"
done
for i in $(seq "$n"); do
  echo "--- default-$i"
  jq -r '.per_k[] | "k=\(.workers) \(.method) E[S]=\(.mean_service_us) us [\(.mean_service_us_ci[0]), \(.mean_service_us_ci[1])] E[S^2]=\(.second_moment_us2) transport=\(.transport_us) safe_rho=\(.safe_rho) safe/worker=\(.safe_rate_per_worker) safe_total=\(.safe_total_rate) (\(.limited_by))"' \
    "$here/default-$i/certificate.json" 2>/dev/null || echo "(no certificate)"
  echo "--- selftest-$i"
  grep -E "vs injected|vs measured|self-test:|utilisation" "$here/selftest-$i.txt" || true
done >> "$here/summary.txt"
cat "$here/summary.txt"
