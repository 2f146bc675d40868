#!/usr/bin/env bash
# vLLM's custom JSONL dataset, its --random-prefix-len, and the ignore_eos
# that its bench serve forces on the random dataset, against simserver:
#  - custom with --custom-output-len -1: every line is sent once (a run of as
#    many requests as lines), each with its own prompt length (words, as
#    simserver counts them) and its own output_tokens, by the server's usage;
#  - --custom-output-len 5: every request asks for 5 tokens;
#  - a bad line exits 2 naming the line; custom without a path exits 2;
#  - --random-prefix-len 100 with --token-ids: 150 prompt tokens served for
#    a 50-token random part, every request;
#  - simserver in echo mode stops at the prompt's length unless asked to
#    ignore EOS: the random dataset's 8-word prompts give 30 tokens by
#    default, 8 with --no-ignore-eos.
source "$(dirname "$0")/lib.sh"
start_sim sim
run() { # run NAME FLAGS...
  local name=$1
  shift
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 100 --seed 3 --no-progress \
    --quiet --save-detailed --result-dir "$WORK" --result-filename "$name.json" "$@" \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || fail "$name: exit $?: $(cat "$WORK/$name.err")"
}

# 30 lines: line i has i+1 words and asks for 2 * i + 1 tokens.
f="$WORK/d.jsonl"
for i in $(seq 0 29); do
  words=$(seq 0 "$i" | sed 's/^/w/' | tr '\n' ' ')
  printf '{"prompt": "%s", "output_tokens": %d, "id": %d}\n' "${words% }" $((2 * i + 1)) "$i"
  [ "$i" -ne 14 ] || echo
done >"$f"
run custom --dataset-name custom --dataset-path "$f" --custom-output-len -1 --num-prompts 30
want=$(jq -c -s '[.[] | [(.prompt | split(" ") | length), .output_tokens]] | sort' "$f")
got=$(jq -c -s '[.[] | select(.status == 200) | [.input_tokens, .output_tokens]] | sort' "$WORK/custom.jsonl")
[ "$got" = "$want" ] || fail "custom: served (prompt, output) pairs $got, the file's $want"
# shuffled from the seed: not the file's order
order=$(jq -c -s 'sort_by(.index) | [.[] | .input_tokens]' "$WORK/custom.jsonl")
[ "$order" != "$(jq -c -s '[.[] | (.prompt | split(" ") | length)]' "$f")" ] ||
  fail "custom: requests in the file's order, expected a seeded shuffle: $order"
echo "custom, each line's lengths: $(jq -s length "$WORK/custom.jsonl") requests served as the file says"

run fixed --dataset-name custom --dataset-path "$f" --num-prompts 12 --custom-output-len 5
jq -s -e 'length == 12 and all(.[]; .output_tokens == 5 and .status == 200)' "$WORK/fixed.jsonl" \
  >/dev/null || fail "custom-output-len 5: $(jq -s -c '[.[] | .output_tokens] | unique' "$WORK/fixed.jsonl")"

printf '{"prompt": "a b"}\n{"prompt": "c"}\n{"text": "d"}\n' >"$WORK/bad.jsonl"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --dataset-name custom --dataset-path "$WORK/bad.jsonl" \
  --num-prompts 3 --no-progress --quiet >"$WORK/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "a bad custom line: exit $rc, expected 2"
grep -q 'line 3: has no "prompt"' "$WORK/bad.out" || fail "a bad custom line: $(cat "$WORK/bad.out")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --dataset-name custom --num-prompts 1 --dry-run >"$WORK/np.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--dataset-path" "$WORK/np.out" || fail "custom without a path: exit $rc: $(cat "$WORK/np.out")"

run prefix --token-ids --random-prefix-len 100 --random-input-len 50 --random-output-len 10 --num-prompts 16
jq -s -e 'length == 16 and all(.[]; .input_tokens == 150 and .output_tokens == 10 and .status == 200)' \
  "$WORK/prefix.jsonl" >/dev/null ||
  fail "random-prefix-len: $(jq -s -c '[.[] | [.input_tokens, .output_tokens]] | unique' "$WORK/prefix.jsonl")"
jq -e '.stages[0].lengths.input_tokens_requested.mean == 150 and .stages[0].lengths.input_differs == false' \
  "$WORK/prefix.json" >/dev/null || fail "random-prefix-len: requested $(jq -c .stages[0].lengths "$WORK/prefix.json")"

start_sim echo --mode echo
SIM_URL_ECHO=$SIM_URL
for eos in default no; do
  flags=()
  [ "$eos" = default ] || flags=(--no-ignore-eos)
  run "eos-$eos" --random-input-len 8 --random-output-len 30 --num-prompts 10 "${flags[@]}"
done
jq -s -e 'all(.[]; .output_tokens == 30)' "$WORK/eos-default.jsonl" >/dev/null ||
  fail "random dataset, default: outputs $(jq -s -c '[.[] | .output_tokens] | unique' "$WORK/eos-default.jsonl"), expected 30 (EOS ignored)"
jq -s -e 'all(.[]; .output_tokens == 8)' "$WORK/eos-no.jsonl" >/dev/null ||
  fail "--no-ignore-eos: outputs $(jq -s -c '[.[] | .output_tokens] | unique' "$WORK/eos-no.jsonl"), expected 8 (the echo's end)"
: "$SIM_URL_ECHO"
pass "custom dataset, random prefix, and ignore_eos as vLLM's bench serve"
