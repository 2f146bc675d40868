#!/usr/bin/env bash
# Prompts never silently repeat: a 5-stage sweep of 2,000+ requests draws a
# fresh prompt for every request (no repeats, simserver's prefix cache finds
# nothing: cached share 0 in every stage); the same sweep with a small pool
# (deliberate reuse) and a shared-prefix run show a cached share above 0, and
# the repeats are counted and said.
source "$(dirname "$0")/lib.sh"
start_sim sim
common=(--base-url "$SIM_URL" --num-workers 2 --random-input-len 64 --random-output-len 4 --seed 3
        --sweep geometric --sweep-stages 5 --sweep-max-rate 400 --stage-duration 3 --no-progress
        --save-result --result-dir "$WORK")
"$LOADGEN" "${common[@]}" --result-filename fresh.json >"$WORK/fresh.out" 2>"$WORK/fresh.err" ||
  fail "fresh sweep exited $?: $(cat "$WORK/fresh.err")"
f="$WORK/fresh.json"
d=$(jnum "$f" .dispatched)
[ "$d" -ge 2000 ] || fail "fresh sweep: $d requests, expected 2,000+"
[ "$(jnum "$f" '.stages | length')" -eq 5 ] || fail "fresh sweep: not 5 stages"
jq -e '.prompts_repeated == 0 and .prompt_pool_size >= .dispatched and .cached_prompt_tokens_share == 0
       and ([.stages[] | .cached_prompt_tokens_share == 0] | all)' "$f" >/dev/null ||
  fail "fresh sweep: $(jq -c '{prompts_repeated, prompt_pool_size, dispatched, cached_prompt_tokens_share,
        stages: [.stages[] | .cached_prompt_tokens_share]}' "$f")"
! grep -qi "repeat" "$WORK/fresh.err" "$WORK/fresh.out" || fail "fresh sweep warned of repeats: $(grep -i repeat "$WORK/fresh.err" "$WORK/fresh.out")"

"$LOADGEN" "${common[@]}" --prompt-pool-size 100 --result-filename reuse.json >"$WORK/reuse.out" 2>"$WORK/reuse.err" ||
  fail "reuse sweep exited $?: $(cat "$WORK/reuse.err")"
r="$WORK/reuse.json"
jq -e '.prompt_pool_size == 100 and .prompts_repeated == .dispatched - 100
       and .cached_prompt_tokens_share > 0 and .stages[4].cached_prompt_tokens_share > 0.5' "$r" >/dev/null ||
  fail "reuse sweep: $(jq -c '{prompts_repeated, prompt_pool_size, dispatched, cached_prompt_tokens_share,
        stages: [.stages[] | .cached_prompt_tokens_share]}' "$r")"
grep -q "prompts will repeat, as asked" "$WORK/reuse.err" || fail "reuse sweep: no note before the run"
grep -q "^warning: .* requests repeated a prompt (pool of 100)" "$WORK/reuse.out" ||
  fail "reuse sweep: the summary does not warn of repeats"

"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --dataset-name shared-prefix --prefix-groups 2 \
  --prefix-prompts-per-group 8 --prefix-system-len 64 --prefix-question-len 8 --random-output-len 4 \
  --request-rate 100 --num-prompts 16 --quiet --no-progress --save-result --result-dir "$WORK" \
  --result-filename prefix.json 2>"$WORK/prefix.err" || fail "shared-prefix run exited $?"
jq -e '.prompts_repeated == 0 and .cached_prompt_tokens_share > 0' "$WORK/prefix.json" >/dev/null ||
  fail "shared-prefix: $(jq -c '{prompts_repeated, cached_prompt_tokens_share}' "$WORK/prefix.json")"
# A run of unknown length (closed loop for a duration) has no pool: each
# prompt is made when sent, none repeats, the server's cache finds nothing,
# and neither the dry run nor the run speaks of a pool or of repeats.
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --random-input-len 64 --random-output-len 4 --seed 5 \
  --max-concurrency 8 --duration 2 --dry-run >"$WORK/open.plan" 2>&1 || fail "open-ended plan: exit $?"
grep -q "; no pool: each prompt made when its request is sent$" "$WORK/open.plan" ||
  fail "open-ended plan: $(grep ^dataset "$WORK/open.plan")"
"$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --random-input-len 64 --random-output-len 4 --seed 5 \
  --max-concurrency 8 --duration 2 --no-progress --save-result --save-detailed --result-dir "$WORK" \
  --result-filename open.json >"$WORK/open.out" 2>"$WORK/open.err" || fail "open-ended run: exit $?"
o="$WORK/open.json"
jq -e '.prompt_source == "per_request" and .prompt_pool_size == null and .prompts_repeated == 0
       and .dispatched > 100 and .cached_prompt_tokens_share == 0' "$o" >/dev/null ||
  fail "open-ended run: $(jq -c '{prompt_source, prompt_pool_size, prompts_repeated, dispatched, cached_prompt_tokens_share}' "$o")"
! grep -qi "repeat\|pool" "$WORK/open.err" "$WORK/open.out" || fail "open-ended run spoke of a pool: $(grep -i 'repeat\|pool' "$WORK/open.err" "$WORK/open.out")"
jq -e '.prompt_source == "pool"' "$f" >/dev/null || fail "fresh sweep: prompt_source $(jq .prompt_source "$f")"
pass "prompts: fresh by default, reuse counted and cached"
