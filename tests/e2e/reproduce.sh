#!/usr/bin/env bash
# The study's reproduction in its shortened mode: the table has its columns,
# every figure in it is the one in the report it came from, every request is
# accounted for, and the emulated single-process client gets a worse verdict
# than loadgen with k = CPUs at the higher rate.
set -euo pipefail
build=${RB_BUILD_DIR:?} src=${RB_SOURCE_DIR:?}
out=$(mktemp -d /tmp/rb-repro.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

timeout 120 bash "$src/scripts/reproduce_paper.sh" --short --out "$out" --build "$build" >/dev/null
for f in table.md table.json machine.md table.dat plots.gp; do [ -s "$out/$f" ] || fail "$f missing"; done
head -n 1 "$out/table.md" | grep -q '| client | k | target QPS | achieved QPS | completed | failed | client delay p50 (ms) | client delay p99 (ms) | TTFT p50 (ms) | TTFT p99 (ms) | TTFT inflation, mean (ms) | max ρ_k | verdict |' \
  || fail "table.md header: $(head -n 1 "$out/table.md")"
k=$(nproc)
[ "$(jq '.rows | length' "$out/table.json")" -eq 6 ] || fail "expected 6 rows"
[ "$(grep -c '^| \(loadgen\|asyncio\)' "$out/table.md")" -eq 6 ] || fail "expected 6 rows in table.md"

# Each row against its own report.
n=$(jq '.rows | length' "$out/table.json")
for i in $(seq 0 $((n - 1))); do
  row=$(jq -c ".rows[$i]" "$out/table.json")
  file=$out/$(jq -r .file <<<"$row")
  [ -s "$file" ] || fail "row $i: report $file missing"
  jq -e --argjson r "$row" '
      (.achieved_rate == $r.achieved_qps) and (.completed == $r.completed) and (.failed == $r.failed)
      and (.request_rate == $r.target_qps) and (.num_workers == $r.workers)
      and (.median_ttft_ms == $r.ttft_p50_ms) and (.p99_ttft_ms == $r.ttft_p99_ms)
      and ((.client_bias.overhead_per_token_us.median / 1000 - $r.client_delay_p50_ms) | fabs < 1e-9)
      and ((.client_bias.overhead_per_token_us.p99 / 1000 - $r.client_delay_p99_ms) | fabs < 1e-9)
      and (.ttft_truth_ms.inflation_mean == $r.ttft_inflation_mean_ms)
      and (.client_bias.verdict == $r.verdict)
      and (.completed + .failed == .dispatched) and (.interrupted == false)' "$file" >/dev/null \
    || fail "row $i ($row) does not match $file"
  # The markdown row carries the same verdict and counts.
  client=$(jq -r .client <<<"$row") rate=$(jq -r .target_qps <<<"$row")
  grep -q "^| $client | [0-9]* | $rate | .* | $(jq -r .completed <<<"$row") | $(jq -r .failed <<<"$row") | .* | $(jq -r .verdict <<<"$row") |\$" "$out/table.md" \
    || fail "table.md has no row for $client at $rate matching the report"
done

# The same arrivals for every client at a rate: same dispatched count.
for rate in 200 1000; do
  [ "$(jq --argjson r $rate '[.rows[] | select(.target_qps == $r) | .completed + .failed] | unique | length' "$out/table.json")" -eq 1 ] \
    || fail "clients at $rate QPS were not offered the same number of requests"
done

level() { case "$1" in OK) echo 0 ;; AT-RISK) echo 1 ;; BIASED) echo 2 ;; *) fail "unknown verdict '$1'" ;; esac; }
emul=$(jq -r '.rows[] | select(.client == "asyncio-emulated" and .target_qps == 1000) | .verdict' "$out/table.json")
kn=$(jq -r --arg c "loadgen-k$k" '.rows[] | select(.client == $c and .target_qps == 1000) | .verdict' "$out/table.json")
[ "$(level "$emul")" -gt "$(level "$kn")" ] || fail "at 1000 QPS the emulated client ($emul) is not judged worse than k=$k ($kn)"
echo "reproduce: table consistent with its reports; emulated client $emul, loadgen k=$k $kn at 1000 QPS"
