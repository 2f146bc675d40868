#!/usr/bin/env bash
# wire_tls beside a busy loop on CPU 0 (nice 0) and a second unpinned busy loop: nginx at
# SCHED_FIFO (new) against nice 0 (old), alternated
reps=${1:-5}
cd /work/main
for i in $(seq 1 $reps); do
  for v in new old; do
    timeout 120 taskset -c 0 bash -c 'while :; do :; done' & b1=$!
    timeout 120 bash -c 'while :; do :; done' & b2=$!
    sleep 1
    f=tests/loadgen/e2e/wire_tls.sh; [ $v = old ] && f=tests/loadgen/e2e/wire_tls_old_tmp.sh # git show d60842c:tests/loadgen/e2e/wire_tls.sh
    t0=$(date -u +%H:%M:%S)
    RB_BUILD_DIR=/work/main/build RB_SOURCE_DIR=/work/main bash $f > /tmp/wt/$v-$i.txt 2>&1; rc=$?
    kill $b1 $b2 2>/dev/null; wait $b1 $b2 2>/dev/null
    line=$(grep '^{"receive_clock"' /tmp/wt/$v-$i.txt | head -1)
    d=$(jq -r '(.itl[1] - .sim_itl[1]) | . * 1000 | round / 1000' <<<"$line" 2>/dev/null)
    echo "$v $i rc=$rc $t0 p99diff_ms=$d $(jq -c '[.itl, .sim_itl]' <<<"$line" 2>/dev/null)" | tee -a /tmp/wt/res.txt
    sleep 2
  done
done
