#!/usr/bin/env bash
# End-to-end: `calibrate --quick --self-test` against the real simserver and
# loadgen on loopback. It injects a known client cost per SSE event, a fixed
# 200 us and then an exponential one of mean 200 us, each its own sweep of
# one-token responses to open-loop Poisson requests (a Poisson stream of
# deliveries at the client's loop), repeats the judged steps without it (the
# baseline, same invocation, same rates), and for each cost must recover it:
# fitted E[S] minus the baseline's E[S] within 10%, the fitted curve
# d = c + R rho/(1 - rho) within 20% of the measured mean delay (the median
# over the levels with rho in [0.2, 0.85]), PK's R for the injected client
# within the fit's interval or 20%, the fit's goodness-of-fit test passed,
# and the certified rho within 15% of where PK with that R reaches the
# budget (calibrate/README.md). It must then write a certificate with the
# keys loadgen reads and every check in its self_test_result.
# Each run's checks are statistics of a noisy host (6 of 8 runs passed on
# the 2-core VM beside two other builds; results/calibrate/
# selftest_pass_rate.md): the structure is asserted on every run, and the
# verdict must be PASS in one of at most 3 runs. A wrong model (an R off by
# its factor, a rule that certifies elsewhere) fails every run; a host that
# passes 3 of 4 fails three in a row 1.6% of the time. ~60 s a run.
# Runs alone (RUN_SERIAL): the check is about CPU time. As root the self-test
# runs loadgen's worker at real-time priority, so other processes' time does
# not land in the client's queue. Under sanitizers the client's CPU time is
# not its real one, so only completion and the certificate are checked.
set -euo pipefail
build=${RB_BUILD_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for attempt in 1 2 3; do
out=$tmp/out$attempt
set +e
"$build/calibrate/calibrate" --quick --self-test --no-plot --seed $((40 + attempt)) --out-dir "$out" \
  > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
set -e
cat "$tmp/stdout"
cert=$out/selftest-certificate.json
jq -e '.rhobench_certificate == 2 and .self_test and (.per_k[0] | has("safe_rho") and has("safe_total_rate"))
       and (.cost_model | has("per_event_us")) and .reference_workload.rate_unit == "requests/s"' "$cert" \
  > /dev/null || { cat "$tmp/stderr" >&2; echo "FAIL: no valid certificate (exit $rc)" >&2; exit 1; }
# both costs' checks, the model's counted, in the JSON
jq -e '.self_test_result | (.injected | map(.kind) | join(",")) == "fixed,exp"
       and ([.checks[] | select(.check | test("R \\(us\\) vs PK|goodness of fit|certified rho vs PK"))
             | select(.counted == (.pass | not))] | length) == 6' "$cert" > /dev/null \
  || { cat "$tmp/stderr" >&2; echo "FAIL: the model's checks are not in the JSON" >&2; exit 1; }
grep -Eq "^k=1 baseline \(same rates, no injected cost\): the client's own busy time [0-9.]+ us" \
  "$tmp/stdout" || { cat "$tmp/stderr" >&2; echo "FAIL: no baseline measured" >&2; exit 1; }
grep -Eq "^self-test: (PASS|FAIL)" "$tmp/stdout" \
  || { cat "$tmp/stderr" >&2; echo "FAIL: calibrate exited $rc without a verdict" >&2; exit 1; }
if [ "${RB_SANITIZE:-0}" = 1 ]; then
  echo "(sanitized build: the self-test's timing verdict is not asserted)"
  echo "e2e_calibrate_selftest: ok"
  exit 0
fi
if [ $rc = 0 ] && grep -q "^self-test: PASS" "$tmp/stdout"; then
  echo "e2e_calibrate_selftest: PASS on run $attempt of at most 3"
  break
fi
[ $rc = 1 ] || { cat "$tmp/stderr" >&2; echo "FAIL: calibrate --quick --self-test: exit $rc" >&2; exit 1; }
echo "run $attempt: self-test FAIL (exit 1); load average $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$attempt" -lt 3 ] || { cat "$tmp/stderr" >&2; echo "FAIL: the self-test failed 3 runs in a row" >&2; exit 1; }
done
echo "e2e_calibrate_selftest: ok"
