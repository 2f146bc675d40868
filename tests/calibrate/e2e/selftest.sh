#!/usr/bin/env bash
# End-to-end: `calibrate --quick --self-test` against the real simserver and
# loadgen on loopback. It injects a known client cost per SSE event, repeats
# the judged steps without it (the baseline, same invocation, same rates),
# and must recover the injected cost: fitted E[S] minus the baseline's E[S]
# (the loop's own work, paid with or without injection) within 10% of it,
# and the fitted curve d = c + R rho/(1 - rho) within 20% of the measured mean
# delay (the median over the levels with rho in [0.2, 0.85]). It must then
# write a certificate with the keys loadgen reads. One run decides: no second try.
# Runs alone (RUN_SERIAL): the check is about CPU time. As root the self-test
# runs loadgen's worker at real-time priority, so other processes' time does
# not land in the client's queue. Under sanitizers the client's CPU time is
# not its real one, so only completion and the certificate are checked.
set -euo pipefail
build=${RB_BUILD_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$tmp/out
set +e
"$build/calibrate/calibrate" --quick --self-test --no-plot --out-dir "$out" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
set -e
cat "$tmp/stdout"
cert=$out/selftest-certificate.json
jq -e '.rhobench_certificate == 2 and .self_test and (.per_k[0] | has("safe_rho") and has("safe_total_rate"))
       and (.cost_model | has("per_event_us")) and .reference_workload.rate_unit == "requests/s"' "$cert" \
  > /dev/null || { cat "$tmp/stderr" >&2; echo "FAIL: no valid certificate (exit $rc)" >&2; exit 1; }
grep -Eq "^k=1 baseline \(same rates, no injected cost\): the client's own busy time [0-9.]+ us" \
  "$tmp/stdout" || { cat "$tmp/stderr" >&2; echo "FAIL: no baseline measured" >&2; exit 1; }
if [ "${RB_SANITIZE:-0}" = 1 ]; then
  grep -Eq "^self-test: (PASS|FAIL)" "$tmp/stdout" \
    || { cat "$tmp/stderr" >&2; echo "FAIL: calibrate exited $rc without a verdict" >&2; exit 1; }
  echo "(sanitized build: the self-test's timing verdict is not asserted)"
  echo "e2e_calibrate_selftest: ok"
  exit 0
fi
[ $rc = 0 ] && grep -q "^self-test: PASS" "$tmp/stdout" \
  || { cat "$tmp/stderr" >&2; echo "FAIL: calibrate --quick --self-test: exit $rc" >&2; exit 1; }
echo "e2e_calibrate_selftest: ok"
