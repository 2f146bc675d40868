# Helpers of the rel_* tests (sourced after lib.sh).
# start_rel_server NAME: starts rel_server.py; sets REL_URL, REL_PID and
# REL_LOG (one JSON line per request it served).
start_rel_server() {
  local name=$1
  command -v python3 >/dev/null || skip "python3 is not installed"
  REL_LOG="$WORK/$name.log"
  : >"$REL_LOG"
  python3 "$(dirname "${BASH_SOURCE[0]}")/rel_server.py" "$REL_LOG" >"$WORK/$name.out" 2>"$WORK/$name.err" &
  REL_PID=$!
  CHILDREN+=("$REL_PID")
  for _ in $(seq 1 100); do
    REL_URL=$(sed -n '1s|^listening \(http://127\.0\.0\.1:[0-9]*\)$|\1|p' "$WORK/$name.out" 2>/dev/null || true)
    [ -n "$REL_URL" ] && return 0
    kill -0 "$REL_PID" 2>/dev/null || fail "rel_server exited: $(cat "$WORK/$name.err")"
    sleep 0.05
  done
  fail "rel_server did not print its address"
}

# records_agree JSON: the JSONL next to a result holds exactly one record per
# request the report counts (completed + failed), each a JSON object.
records_agree() {
  local out=$1 jl="${1%.json}.jsonl" c f n
  [ -f "$jl" ] || fail "no $jl"
  c=$(jnum "$out" .completed); f=$(jnum "$out" .failed)
  n=$(wc -l <"$jl")
  [ "$n" -eq $((c + f)) ] || fail "$jl: $n records, the report counts $((c + f))"
  jq -e -s 'all(.[]; has("index") and has("worker"))' "$jl" >/dev/null || fail "$jl: not JSON records"
  [ "$(jnum "$out" .detailed_records)" -eq "$n" ] || fail "detailed_records $(jq .detailed_records "$out") != $n"
}

# lg_bg ERRFILE FLAGS...: starts loadgen in the background; sets LG_PID.
lg_bg() {
  local err=$1; shift
  "$LOADGEN" "$@" 2>"$err" &
  LG_PID=$!
  CHILDREN+=("$LG_PID")
}

# wait_parts NAME [WORKER]: waits (up to 5 s) until the workers' part files of
# result NAME in $WORK (or worker WORKER's) hold a whole record; fails if not.
parts_records() { cat "$WORK/.$1.w${2:-}"*.part 2>/dev/null | grep -c '}$' || true; }
wait_parts() {
  for _ in $(seq 1 100); do
    [ "$(parts_records "$@")" -gt 0 ] && return 0
    sleep 0.05
  done
  fail "no records flushed to the parts of $1 (worker ${2:-any}) within 5 s"
}
