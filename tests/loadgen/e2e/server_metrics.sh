#!/usr/bin/env bash
# The server's own metrics (--server-metrics), scraped by the coordinator:
# - below capacity, the prompt-token counter's delta over the run equals the
#   prompt tokens the client was served (usage), and the stages' deltas add
#   up to the run's;
# - a sweep past simserver's capacity (8 slots x 64 tokens x 5 ms: about
#   25 requests/s) finds the server's knee, and there the waiting gauge's max
#   is above the first stage's, and the knee's evidence says so;
# - a scrape that gets garbage, no answer (a listener that never replies),
#   or a refused connection is counted by kind and the run still succeeds;
# - bad input exits 2 naming the flag; off (the default) writes null.
source "$(dirname "$0")/lib.sh"
start_sim sim --max-num-seqs 8 --inter-token-latency 5ms
common=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 32 --random-output-len 64 --ignore-eos
        --quiet --no-progress --save-result --result-dir "$WORK" --server-metrics target
        --server-metrics-interval 250ms)

# 1. Counters: everything the server counted, the client was served.
"$LOADGEN" "${common[@]}" --request-rate 10 --num-prompts 30 --save-detailed --result-filename low.json \
  2>"$WORK/low.err" || fail "low run exited $?: $(cat "$WORK/low.err")"
l="$WORK/low.json"
show=$(jq -c '{completed, failed, total_input_tokens, sm: (.server_metrics | del(.metrics)),
               prompt: .server_metrics.metrics["vllm:prompt_tokens_total"]}' "$l")
echo "$show"
jq -e '.failed == 0 and .server_metrics.failed_scrapes == 0 and .server_metrics.scrapes >= 2
       and .server_metrics.metrics["vllm:prompt_tokens_total"].delta == .total_input_tokens
       and .server_metrics.metrics["vllm:generation_tokens_total"].delta == .total_output_tokens
       and .server_metrics.metrics["vllm:request_success_total"].delta == .completed
       and .server_metrics.metrics["vllm:time_to_first_token_seconds"].count == .completed
       and ([.stages[].server_metrics.metrics["vllm:prompt_tokens_total"].delta] | add) == .total_input_tokens' \
  "$l" >/dev/null || fail "the server's counters against the client's: $show"
jsum=$(jq -s '[.[].input_tokens] | add' "$WORK/low.jsonl")
[ "$jsum" = "$(jnum "$l" .total_input_tokens)" ] || fail "JSONL input tokens $jsum != total_input_tokens"
grep -q "server_metrics" "$l" || fail "no server_metrics"

# 2. The knee: a sweep past capacity. (The lag bound is raised to 1 s: this
# test is about the server, and on a shared 2-core host, under a sanitizer,
# a preempted worker would otherwise be judged as the client.)
"$LOADGEN" "${common[@]}" --sweep linear --sweep-stages 3 --sweep-max-rate 45 --stage-duration 3 \
  --saturation-lag-ms 1000 --result-filename sweep.json 2>"$WORK/sweep.err" ||
  fail "sweep exited $?: $(cat "$WORK/sweep.err")"
s="$WORK/sweep.json"
show=$(jq -c '{knee, waiting: [.stages[].server_metrics.metrics["vllm:num_requests_waiting"] | [.start, .max, .samples]]}' "$s")
echo "$show"
jq -e '.knee.cause == "server"
       and (.stages[.knee.stage].server_metrics.metrics["vllm:num_requests_waiting"].max >
            .stages[0].server_metrics.metrics["vllm:num_requests_waiting"].max)
       and (.stages[.knee.stage].server_metrics.metrics["vllm:num_requests_waiting"].samples >= 2)
       and (.knee.evidence | startswith("by the server (waiting requests "))
       and (.server_metrics.metrics["vllm:num_requests_waiting"].max >= 3)' "$s" >/dev/null ||
  fail "the server's waiting queue at its knee: $show"

# 3. Failing scrapes: counted, never fatal. A listener that accepts and never
# answers (the kernel completes the handshake: it never reads).
python3 - "$WORK/silent.port" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
EOF
CHILDREN+=($!)
for _ in $(seq 1 100); do [ -s "$WORK/silent.port" ] && break; sleep 0.05; done
[ -s "$WORK/silent.port" ] || fail "the silent listener did not start"
silent="http://127.0.0.1:$(cat "$WORK/silent.port")/metrics"
# a port nobody listens on: bind one, then close it
dead_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for c in "garbage $SIM_URL/v1/models parse" "silent $silent timeout" "dead http://127.0.0.1:$dead_port/metrics connect"; do
  read -r name url kind <<<"$c"
  "$LOADGEN" "${common[@]}" --request-rate 20 --duration 2 --server-metrics "$url" \
    --server-metrics-interval 1 --result-filename "$name.json" 2>"$WORK/$name.err" ||
    fail "$name: a failing scrape failed the run (exit $?): $(cat "$WORK/$name.err")"
  f="$WORK/$name.json"
  show=$(jq -c '{completed, failed, sm: (.server_metrics | del(.metrics))}' "$f")
  echo "$name: $show"
  jq -e --arg k "$kind" '.completed > 0 and .failed == 0 and .server_metrics.failed_scrapes >= 1
         and .server_metrics.failures_by_kind[$k] >= 1 and (.server_metrics.last_error | length) > 0
         and .server_metrics.failed_scrapes == .server_metrics.scrapes' "$f" >/dev/null ||
    fail "$name: the failing scrapes are not counted as $kind: $show"
done

# 4. Bad input and off.
rc=0
"$LOADGEN" --base-url "$SIM_URL" --server-metrics ftp://127.0.0.1/metrics --num-prompts 1 2>"$WORK/bad.err" || rc=$?
[ "$rc" -eq 2 ] || fail "a non-http metrics URL exited $rc"
grep -q -- "--server-metrics: must be an http:// or https:// URL, target or off, got 'ftp://127.0.0.1/metrics'" "$WORK/bad.err" ||
  fail "no clear message: $(cat "$WORK/bad.err")"
"$LOADGEN" "${common[@]}" --request-rate 20 --num-prompts 5 --server-metrics off --result-filename off.json \
  2>"$WORK/off.err" || fail "off exited $?: $(cat "$WORK/off.err")"
jq -e '.server_metrics == null and .stages[0].server_metrics == null' "$WORK/off.json" >/dev/null ||
  fail "off: server_metrics is not null"
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 20 --num-prompts 5 --quiet --no-progress \
  --save-result --result-dir "$WORK" --result-filename default.json 2>"$WORK/default.err" ||
  fail "default exited $?: $(cat "$WORK/default.err")"
jq -e '.server_metrics == null' "$WORK/default.json" >/dev/null || fail "the default scraped"
pass "server metrics: counters match the client's, the waiting queue grows at the knee, failures are counted"
