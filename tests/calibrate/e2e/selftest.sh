#!/usr/bin/env bash
# End-to-end: `calibrate --quick --self-test` against the real simserver and
# loadgen on loopback. It injects a known client cost per SSE event, a fixed
# 200 us and then an exponential one of mean 200 us, each its own sweep of
# one-token responses to open-loop Poisson requests, repeats the judged steps
# without it (the baseline), checks each cost against PK (calibrate/README.md)
# and writes a certificate with the keys loadgen reads and every check in its
# self_test_result.
#
# What this test asserts holds on any host, however slow or busy:
# - the certificate is valid and holds both costs' counted model checks;
# - the verdict is its checks': the JSON's pass/failed, the printed
#   "self-test: PASS|FAIL (N of M checks failed)" and the exit code (0 or 1)
#   all follow from the counted checks that failed, and the printed table
#   has a row for each check in the JSON;
# - the injected cost reached the client: for each cost, the fitted E[S]
#   minus the baseline's busy time per event is within a factor 1.5 of the
#   injected 200 us (a cost not paid, or paid twice, is outside it; every
#   recorded run was within 18%).
# Whether the checks themselves pass is a statistic of the host (the CI
# machine of stop 31 failed three runs in a row at load 1.1-1.5; a busy VM
# passed 6 of 8), so it is a benchmark, not a test:
# results/calibrate/selftest_pass_rate.md. The model's verdicts are tested
# deterministically instead: against hand-worked figures in test_cal_fit
# (the selftest-* mutants), and end to end by e2e_calibrate_fake, whose
# client follows a known M/G/1 law and must PASS with the true cost and
# FAIL with a wrong one. ~60 s. Runs alone (RUN_SERIAL): it measures CPU time.
set -euo pipefail
build=${RB_BUILD_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { cat "$tmp/stderr" >&2 2>/dev/null || true; echo "FAIL: $*" >&2; exit 1; }
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$tmp/out
set +e
"$build/calibrate/calibrate" --quick --self-test --no-plot --seed 41 --out-dir "$out" \
  > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
set -e
cat "$tmp/stdout"
[ $rc = 0 ] || [ $rc = 1 ] || fail "calibrate --quick --self-test: exit $rc"
cert=$out/selftest-certificate.json
jq -e '.rhobench_certificate == 2 and .self_test and (.per_k[0] | has("safe_rho") and has("safe_total_rate"))
       and (.cost_model | has("per_event_us")) and .reference_workload.rate_unit == "requests/s"' "$cert" \
  > /dev/null || fail "no valid certificate (exit $rc)"
# both costs' checks, the model's counted, in the JSON
# (a cost that failed a check on its first sweep is swept again: its second
# sweep's rows decide, the first's failed rows are marked superseded)
jq -e '.self_test_result | (.injected | map(select(.attempt == 1) | .kind) | join(",")) == "fixed,exp"
       and ([.checks[] | select(.check | test("R \\(us\\) vs PK|goodness of fit|certified rho vs PK"))
             | select(.counted == (.pass | not) or .superseded)] | length) == 6 + 3 * (.measured_again | length)
       and (.injected | length) == 2 + (.measured_again | length)' "$cert" > /dev/null \
  || fail "the model's checks are not in the JSON"
grep -Eq "^k=1 baseline \(same rates, no injected cost\): the client's own busy time [0-9.]+ us" \
  "$tmp/stdout" || fail "no baseline measured"

# The verdict is the counted checks' verdict, in the JSON, on stdout and in
# the exit code alike.
counted=$(jq '[.self_test_result.checks[] | select(.counted)] | length' "$cert")
nchecks=$(jq '.self_test_result.checks | length' "$cert")
jq -e --argjson c "$counted" '.self_test_result | .failed == $c and .pass == ($c == 0)
       and all(.checks[]; .counted == (.pass | not) or (.counted | not))' "$cert" > /dev/null \
  || fail "self_test_result's pass/failed do not follow from its checks ($counted counted failures)"
verdict=PASS want_rc=0
[ "$counted" = 0 ] || { verdict=FAIL want_rc=1; }
grep -qx "self-test: $verdict ($counted of $nchecks checks failed)" "$tmp/stdout" \
  || fail "stdout does not say 'self-test: $verdict ($counted of $nchecks checks failed)'"
[ $rc = $want_rc ] || fail "the self-test says $verdict but calibrate exited $rc"
rows=$(grep -cE '^(fixed|exp):200(#2)? k=1 .*(PASS|FAIL|FAIL \(measured again\)|over \(the median decides\))$' \
  "$tmp/stdout" || true)
[ "$rows" = "$nchecks" ] || fail "stdout has $rows check rows, the JSON $nchecks checks"

# The injected cost reached the client's loop, once per event.
jq -e '(.self_test_result.injected | length) as $n
       | [.self_test_result.injected[] | (.mean_service_us - .baseline_us) / .mean_us
          | select(. >= 0.5 and . <= 1.5)] | length == $n' "$cert" > /dev/null \
  || fail "E[S] - baseline is not near the injected cost: $(jq -c '[.self_test_result.injected[]
          | {kind, mean_us, mean_service_us, baseline_us}]' "$cert")"

if [ "${RB_SANITIZE:-0}" = 1 ]; then
  echo "(sanitized build: its CPU times are not the client's real ones)"
fi
echo "self-test verdict on this host: $verdict ($counted of $nchecks checks failed; load average now" \
  "$(cut -d' ' -f1-3 /proc/loadavg)); its pass rate is a benchmark: results/calibrate/selftest_pass_rate.md"
echo "e2e_calibrate_selftest: ok"
