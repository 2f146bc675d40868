#!/usr/bin/env bash
# A result name the run could not write is refused before the first request
# (exit 2, a message naming the problem), not found after the whole run:
# '.', '..', a path, an existing directory, a 300-character name. The target
# is a closed port, so a run that went ahead would exit 1 (connect errors,
# then "cannot write"), not 2.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/rel_lib.sh"
mkdir -p "$WORK/res/adir.json" "$WORK/res/d2.jsonl"
long=$(head -c 300 /dev/zero | tr '\0' n).json
try() { # NAME EXPECTED-MESSAGE [flags]
  local name=$1 msg=$2 rc=0; shift 2
  "$LOADGEN" --base-url http://127.0.0.1:9 --num-workers 0 --request-rate 100 --num-prompts 20 \
    --random-input-len 8 --random-output-len 4 --quiet --no-progress --save-result \
    --result-dir "$WORK/res" --result-filename "$name" "$@" 2>"$WORK/err" || rc=$?
  [ "$rc" -eq 2 ] || fail "--result-filename '${name:0:40}': exit $rc, expected 2 ($(cat "$WORK/err"))"
  grep -q -- "$msg" "$WORK/err" || fail "--result-filename '${name:0:40}': message $(cat "$WORK/err")"
  grep -q "connect\|Failed\|cannot write" "$WORK/err" && fail "'${name:0:40}': the run went ahead"
  return 0
}
try . "must be a file name"
try .. "must be a file name"
try sub/x.json "must be a file name"
try adir.json "exists and is a directory"
try d2.json "exists and is a directory" --save-detailed
try "$long" "File name too long"
[ -z "$(ls -A "$WORK/res" | grep -v '^adir.json$\|^d2.jsonl$')" ] || fail "files left: $(ls -A "$WORK/res")"
pass "bad result names refused before the run: . .. a path, a directory, 300 characters"
