#!/usr/bin/env bash
# simserver under abuse, one case per run: while abusive clients hold the
# server (each case proves they still did when its probes were over),
# /health answers (a 2 s sanity bound; the latency itself is a figure), a
# normal completion succeeds, and the server's peak resident memory stays
# under a stated bound; afterwards the server reclaims what the abusers held
# and stops cleanly on SIGTERM.
# Usage: abuse.sh idle|slowloris|oversize|garbage|noread|vanish|pipeline
source "$(dirname "$0")/lib.sh"
what=${1:?usage: abuse.sh idle|slowloris|oversize|garbage|noread|vanish|pipeline}
[ -x "$ABUSE" ] || fail "no $ABUSE (build the rel_abuse target)"
# Sanitizer builds keep freed memory in a quarantine and map shadow memory:
# resident sizes there are several times larger, so the bounds scale.
RSS_SCALE=1
[ "${RB_SANITIZE:-OFF}" = ON ] && RSS_SCALE=8

# rss_bound WHAT KB LIMIT_KB: asserts KB <= LIMIT_KB (scaled for sanitizers).
rss_bound() {
  local lim=$(($3 * RSS_SCALE))
  [ "$2" -le "$lim" ] || fail "$1: simserver RSS $2 kB over the bound $lim kB"
}
# during WHAT: the checks made while the abusers are connected (each case
# then proves they still were).
during() {
  health_answers "$SIM_URL" "$1"
  [ "$HEALTH_MS" -gt "${HEALTH_DURING:-0}" ] && HEALTH_DURING=$HEALTH_MS
  completion_ok "$SIM_URL"
  RSS_DURING=$(rss_kb "$SIM_PID")
}
# baseline: RSS once the server has answered one completion (warm).
baseline() {
  completion_ok "$SIM_URL"
  RSS_BEFORE=$(rss_kb "$SIM_PID")
}
# run_tool NAME ARGS...: the abuse tool in the background.
run_tool() {
  local name=$1
  shift
  "$ABUSE" "$@" >"$WORK/$name" 2>"$WORK/$name.err" &
  TOOL_PID=$!
  CHILDREN+=("$TOOL_PID")
}
wait_tool() {
  local rc=0
  wait "$TOOL_PID" || rc=$?
  [ "$rc" -eq 0 ] || fail "abuse tool exited $rc: $(cat "$WORK/$1" "$WORK/$1.err")"
}

case "$what" in
idle)
  # 10,000 connections that send nothing; --idle-timeout 4s must reclaim
  # every one of them.
  N=10000
  ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  # Both ends live on this host: the tool and the server each need N fds.
  # Under a lower descriptor limit that cannot be raised, as many as it
  # allows (at least 900), said in the output.
  [ "$(ulimit -n)" -ge $((N + 100)) ] || { N=$(($(ulimit -n) - 100)); echo "note: ulimit -n $(ulimit -n): $N idle connections"; }
  [ "$N" -ge 900 ] ||
    skip "ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)), below 1000"
  IDLE_S=$((4 * REL_SCALE))
  start_sim sim --idle-timeout "${IDLE_S}s"
  baseline
  run_tool idle idle "$SIM_PORT" "$N" $((15000 * REL_SCALE))
  wait_line "$WORK/idle" '^ready' 10
  [ "$(kv "$WORK/idle" opened)" -eq "$N" ] || fail "opened $(kv "$WORK/idle" opened) of $N"
  during "$N idle connections"
  held=$(fd_count "$SIM_PID")
  [ "$held" -ge $((N / 2)) ] || unmet "idle: the server held $held fds after the probes: they ran after the idle connections were gone"
  fig "idle_open_at_probe=$(kv "$WORK/idle" open) connect_ms=$(kv "$WORK/idle" connect_ms) server_fds_after_probe=$held"
  wait_tool idle
  cut=$(kv "$WORK/idle" closed_by_server)
  [ "$cut" -eq "$N" ] || fail "the server closed $cut of $N idle connections within $((15 * REL_SCALE)) s"
  # The tool's clock starts at its connect, before the server's accept: a cut
  # is never earlier than the timeout by it, nor by the server's own clock.
  first=$(kv "$WORK/idle" first_cut_ms)
  [ "$first" -ge $((IDLE_S * 1000)) ] || fail "an idle connection was cut after $first ms, before --idle-timeout ${IDLE_S}s"
  cut_min=$(prom sim_idle_cut_min_seconds)
  awk -v m="$cut_min" -v t="$IDLE_S" 'BEGIN { exit !(m >= t) }' ||
    fail "idle: the server cut a connection after $cut_min s of silence by its own clock, before ${IDLE_S}s"
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "$N idle connections" "$RSS_DURING" $((RSS_BEFORE + 40000))
  ;;
slowloris)
  # 500 connections trickling one header byte every 100 ms: each is cut at
  # --idle-timeout 2s from its first byte, unanswered, never before (the
  # trickle would go on for 8 s).
  N=500
  IDLE_S=$((2 * REL_SCALE))
  start_sim sim --idle-timeout "${IDLE_S}s"
  baseline
  run_tool slow slowloris "$SIM_PORT" "$N" 100 $((8000 * REL_SCALE))
  wait_line "$WORK/slow" '^ready' 10
  during "$N slowloris connections"
  held=$(fd_count "$SIM_PID")
  [ "$held" -ge $((N / 2)) ] || unmet "slowloris: the server held $held fds after the probes: they ran after the trickling connections were cut"
  wait_tool slow
  [ "$(kv "$WORK/slow" cut)" -eq "$N" ] || fail "slowloris: not all cut while they trickled: $(tail -n 1 "$WORK/slow")"
  [ "$(kv "$WORK/slow" answered)" -eq 0 ] || fail "slowloris: some were answered: $(tail -n 1 "$WORK/slow")"
  mn=$(kv "$WORK/slow" min_cut_ms) mx=$(kv "$WORK/slow" max_cut_ms)
  [ "$mn" -ge $((IDLE_S * 1000)) ] || fail "slowloris: a connection was cut after $mn ms, before --idle-timeout ${IDLE_S}s"
  fig "slowloris_cut_ms=$mn..$mx server_fds_after_probe=$held"
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "slowloris" "$RSS_DURING" $((RSS_BEFORE + 16000))
  ;;
oversize)
  # Header sections over 64 KiB: 431 and closed; bodies over --max-body:
  # 413 (from Content-Length) and closed. 20 of each while probing.
  start_sim sim --max-body 64k
  baseline
  for spec in "bighdr 70000 431" "bighdr 1048576 431" "bigbody 70000 413" "bigbody 8388608 413"; do
    set -- $spec
    "$ABUSE" "$1" "$SIM_PORT" "$2" >"$WORK/one" 2>&1 || fail "$spec: tool: $(cat "$WORK/one")"
    st=$(kv "$WORK/one" first_status) cl=$(kv "$WORK/one" closed) ms=$(kv "$WORK/one" max_ms)
    # An 8 MiB body outruns the socket buffers: the 413 reaches the client
    # only if simserver drains the body before it closes (lingering close);
    # a plain close turns the unread bytes into an RST that destroys it.
    [ "$st" = "$3" ] || fail "$1 of $2 bytes: status $st, expected $3 ($(cat "$WORK/one"))"
    # Closed right after the answer, not at the end of a lingering close
    # (up to 5 s): 3 s is a sanity bound, the figure is typically a few ms.
    [ "$cl" -eq 1 ] && [ "$ms" -lt 3000 ] || fail "$1 of $2 bytes: not closed at once ($(cat "$WORK/one"))"
    fig "oversize $spec: $(cat "$WORK/one")"
  done
  # 200 KB header sections and 1 MB bodies, one after another, until the
  # probes are over (at most 400 of each).
  loop_tool hdrs 400 bighdr "$SIM_PORT" 200000
  hdr_pid=$TOOL_PID
  loop_tool bodies 400 bigbody "$SIM_PORT" 1000000
  during "oversized requests"
  stop_loop bodies
  TOOL_PID=$hdr_pid
  stop_loop hdrs
  nh=$(grep -c "^sent=" "$WORK/hdrs" || true) nb=$(grep -c "^sent=" "$WORK/bodies" || true)
  [ "$nh" -gt 0 ] && [ "$nb" -gt 0 ] || fail "burst: $nh header sections and $nb bodies sent"
  [ "$(grep -c "first_status=431" "$WORK/hdrs")" -eq "$nh" ] || fail "burst: $(grep -c first_status=431 "$WORK/hdrs") of $nh header sections refused with 431: $(grep -v first_status=4 "$WORK/hdrs" | head -3)"
  b413=$(grep -c "first_status=413" "$WORK/bodies" || true)
  [ "$b413" -eq "$nb" ] || fail "burst: $b413 of $nb bodies got their 413: $(grep -v first_status=413 "$WORK/bodies" | head -3)"
  [ "$(cat "$WORK/hdrs" "$WORK/bodies" | grep -c "closed=1")" -eq $((nh + nb)) ] || fail "burst: a connection was left open"
  fig "oversize burst during the probes: $nh x 200 KB headers -> 431; $nb x 1 MB bodies -> $b413 x 413"
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "oversized requests" "$RSS_DURING" $((RSS_BEFORE + 16000))
  ;;
garbage)
  # 200 connections: 20 pipelined GET /health, then 4 KiB of random bytes
  # (each answered 200 twenty times, then 400 and closed); 200 connections of
  # random bytes only; one of 1 MiB of random bytes.
  # The pipelined rounds go on until the probes are over (at most 200).
  start_sim sim
  baseline
  loop_tool g1 200 garbage "$SIM_PORT" 200 20 4096 1
  during "pipelined garbage"
  stop_loop g1
  rounds=$(grep -c '^garbage ' "$WORK/g1" || true)
  [ "$rounds" -gt 0 ] || fail "pipelined: no round ran"
  [ "$(grep -c ' ok200=4000 ' "$WORK/g1")" -eq "$rounds" ] || fail "pipelined: $(grep -v ' ok200=4000 ' "$WORK/g1" | head -3)"
  [ "$(grep -c ' closed=200 ' "$WORK/g1")" -eq "$rounds" ] || fail "pipelined: not every garbage connection closed: $(grep -v ' closed=200 ' "$WORK/g1" | head -3)"
  "$ABUSE" garbage "$SIM_PORT" 200 0 4096 2 >"$WORK/g2" 2>&1 || fail "random: $(cat "$WORK/g2")"
  [ "$(kv "$WORK/g2" closed)" -eq 200 ] && [ "$(kv "$WORK/g2" ok200)" -eq 0 ] || fail "random: $(cat "$WORK/g2")"
  "$ABUSE" garbage "$SIM_PORT" 1 0 1048576 3 >"$WORK/g3" 2>&1 || fail "1 MiB random: $(cat "$WORK/g3")"
  [ "$(kv "$WORK/g3" closed)" -eq 1 ] || fail "1 MiB random: $(cat "$WORK/g3")"
  fig "garbage pipelined: $rounds rounds during the probes, the last: $(tail -n 1 "$WORK/g1")"
  fig "garbage random: $(tail -n 1 "$WORK/g2")"
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "garbage" "$RSS_DURING" $((RSS_BEFORE + 16000))
  ;;
noread)
  # 50 connections x 4 pipelined 30000-token requests, never read, streamed
  # then whole: --max-write-queue 1M drops them, streams stuck on a full
  # socket are cut at --idle-timeout 2s; nothing stays running.
  start_sim sim --max-write-queue 1M --idle-timeout $((2 * REL_SCALE))s
  baseline
  RSS_DURING=0
  for stream in 1 0; do
    p0=$(prom 'vllm:prompt_tokens_total{model_name="sim-model"}')
    run_tool nr$stream noread "$SIM_PORT" 50 4 "$stream" $((5000 * REL_SCALE))
    wait_line "$WORK/nr$stream" '^ready' 10
    # Probe once the server has taken every client's first request (the
    # burst's own rendering work is not what is checked here).
    for _ in $(seq 1 100); do
      p=$(prom 'vllm:prompt_tokens_total{model_name="sim-model"}')
      [ "${p%.*}" -ge $((${p0%.*} + 100)) ] && break
      sleep 0.05
    done
    [ "${p%.*}" -ge $((${p0%.*} + 100)) ] || fail "noread: the server took $(((${p%.*} - ${p0%.*}) / 2)) of 50 requests"
    during "clients that never read (stream=$stream)"
    kill -0 "$TOOL_PID" 2>/dev/null || unmet "noread: the clients were gone before the probes were over"
    # Nothing stays running: dropped, or cut at the idle timeout.
    for _ in $(seq 1 100); do
      [ "$(prom 'vllm:num_requests_running{model_name="sim-model"}')" = 0 ] && break
      sleep 0.05
    done
    run=$(prom 'vllm:num_requests_running{model_name="sim-model"}')
    [ "$run" = 0 ] || fail "noread (stream=$stream): $run requests still running 5 s later"
    kill "$TOOL_PID" 2>/dev/null || true
    wait "$TOOL_PID" 2>/dev/null || true
  done
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "clients that never read" "$RSS_DURING" $((RSS_BEFORE + 64000))
  ;;
vanish)
  # 200 connections x 3 pipelined paced streams (50 slots: the rest wait in
  # the queue), reset (RST) 0 to 300 ms in: nothing stays running or waiting.
  # Each reset delay once, then rounds at 50 ms until the probes are over.
  start_sim sim --inter-token-latency 5ms --max-num-seqs 50
  baseline
  for after in 0 5 50 300; do
    "$ABUSE" vanish "$SIM_PORT" 200 3 "$after" >"$WORK/v" 2>&1 || fail "vanish: $(cat "$WORK/v")"
    fig "vanish after ${after} ms: $(cat "$WORK/v")"
  done
  loop_tool v 100 vanish "$SIM_PORT" 200 3 50
  during "clients that vanish mid-stream"
  stop_loop v
  fig "vanish rounds during the probes: $(grep -c '^vanish ' "$WORK/v" || true)"
  for _ in $(seq 1 100); do
    [ "$(prom 'vllm:num_requests_running{model_name="sim-model"}')$(prom 'vllm:num_requests_waiting{model_name="sim-model"}')" = 00 ] && break
    sleep 0.05
  done
  [ "$(prom 'vllm:num_requests_running{model_name="sim-model"}')$(prom 'vllm:num_requests_waiting{model_name="sim-model"}')" = 00 ] ||
    fail "vanish: running/waiting left: $(curl -sS "$SIM_URL/metrics" | grep -E '^vllm:num_requests_(running|waiting)')"
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "clients that vanish" "$RSS_DURING" $((RSS_BEFORE + 32000))
  ;;
pipeline)
  # 300 connections, each a paced stream (60 tokens 50 ms apart) with 1.1 MB
  # of a next request (its body twice --max-body) behind it. The server
  # holds at most 64 KiB of it per connection and 8 MiB in all while the
  # stream runs (it stops reading past that), then answers 413 and closes.
  # Held whole, as before, that was about 300 MB. Then one connection whose
  # pipelined requests overrun the hold round after round.
  N=300
  start_sim sim --inter-token-latency $((50 * REL_SCALE))ms
  baseline
  run_tool ph pipehold "$SIM_PORT" "$N" 60 1100000 $((20000 * REL_SCALE))
  wait_line "$WORK/ph" '^ready' $((25 * REL_SCALE))
  during "$N connections with pipelined input held"
  run=$(prom 'vllm:num_requests_running{model_name="sim-model"}')
  [ "$run" = "$N" ] || unmet "pipeline: the streams were over before the probes ($run of $N running)"
  wait_tool ph
  [ "$(kv "$WORK/ph" answered_both)" -eq "$N" ] || fail "pipeline: not every connection got its 200 and its 413: $(tail -n 1 "$WORK/ph")"
  fig "pipeline: $(tail -n 1 "$WORK/ph")"
  # One connection, 5 rounds of a paced stream then 200 KB of pipelined
  # GET /health (about 6,000): past the 64 KiB hold each round, so reading
  # stops and resumes 5 times; every answer must come, in 30 s at most.
  "$ABUSE" pipemix "$SIM_PORT" 5 20 200000 >"$WORK/pm" 2>&1 || fail "pipemix: $(cat "$WORK/pm")"
  [ "$(kv "$WORK/pm" responses)" -eq "$(kv "$WORK/pm" expected)" ] && [ "$(kv "$WORK/pm" ok200)" -eq "$(kv "$WORK/pm" expected)" ] ||
    fail "pipemix: not every pipelined request was answered: $(cat "$WORK/pm")"
  fig "$(cat "$WORK/pm")"
  # The peak resident set over the whole run (the hold included).
  RSS_DURING=$(hwm_kb "$SIM_PID")
  rss_bound "pipelined input held" "$RSS_DURING" $((RSS_BEFORE + 16000))
  ;;
*) fail "unknown case '$what'" ;;
esac

health_answers "$SIM_URL" "$what, after"
completion_ok "$SIM_URL"
RSS_AFTER=$(rss_kb "$SIM_PID")
fig "abuse=$what health_max_ms_during=${HEALTH_DURING:-0} health_max_ms_after=$HEALTH_MS rss_before_kb=$RSS_BEFORE rss_during_kb=$RSS_DURING rss_after_kb=$RSS_AFTER"
stop_sim sim
pass "abuse $what: /health answered during and after (slowest ${HEALTH_DURING:-0} ms during), completions served, RSS $RSS_BEFORE -> peak $RSS_DURING -> $RSS_AFTER kB"
