#!/usr/bin/env bash
# k=1 certificates as calibrate places them by default, beside a one-job
# compile of a copy of the tree (/tmp/loadtree, nice 0) and quiet,
# alternated: with the fallback of calibrate's sweep_k_placed (a placed k
# that certified nothing measured again with every CPU shared).
#   run-fallback.sh REPS BUILD_DIR OUT_DIR
set -u
reps=${1:-3} B=${2:?build dir}/calibrate/calibrate out=${3:?out dir}
mkdir -p "$out"
stopb() { pkill -9 -f 'LOADTREE_LOOP' 2>/dev/null; pkill -9 -f /tmp/loadtree 2>/dev/null; sleep 1
  while pgrep -f /tmp/loadtree >/dev/null; do pkill -9 -f /tmp/loadtree; sleep 0.5; done; }
trap stopb EXIT
for i in $(seq 1 "$reps"); do
  for ld in build quiet; do
    d=$out/placed-$ld-$i; rm -rf "$d"; mkdir -p "$d"
    if [ "$ld" = build ]; then
      timeout 300 bash -c 'while :; do cmake --build /tmp/loadtree/build --target clean >/dev/null 2>&1; cmake --build /tmp/loadtree/build -j1 >/dev/null 2>&1; done # LOADTREE_LOOP' &
      sleep 3
    fi
    la=$(cut -d' ' -f1 /proc/loadavg); t0=$(date -u +%H:%M:%S)
    timeout 400 "$B" --quick --workers 1 --seed "$i" --no-plot --quiet --out-dir "$d" >"$d.txt" 2>&1; rc=$?
    stopb
    printf "%s %s %d %s %s %s %s\n" "$ld" "$i" "$rc" "$t0" "$(date -u +%H:%M:%S)" "$la" \
      "$(jq -c '[.per_k[] | [.workers, .safe_rho, .placement, .measured_again_shared, ([.levels[]?] | length)]] + [[.table | map(select(.superseded)) | length]]' "$d/certificate.json" 2>/dev/null)" | tee -a "$out/res-fallback.txt"
  done
done
