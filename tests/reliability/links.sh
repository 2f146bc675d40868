#!/usr/bin/env bash
# Planted links in a shared result folder (rel_links): loadgen never writes
# through a link at any name it creates there (the lock, the result, the
# records, the exports), and refuses a lock that is a symbolic link, a hard
# link or a FIFO with exit 2, naming it; scripts/plot_run.sh and
# report_html.sh write their temporaries under names mktemp makes, so links
# at their old fixed temporary names (and at the final names) are never
# written through. Every victim file must keep its bytes.
source "$(dirname "$0")/lib.sh"
start_sim links
victim="$WORK/victim"
printf 'precious\n' >"$victim"
sum0=$(sha256sum <"$victim")
intact() { [ "$(sha256sum <"$victim")" = "$sum0" ] || fail "$1: the victim file was written through a link"; }

lg() { # lg DIR NAME [flags]: a short run into DIR/NAME; sets RC
  local dir=$1 name=$2
  shift 2
  RC=0
  timeout -s KILL 60 "$LOADGEN" --base-url "$SIM_URL" --num-workers 2 --request-rate 200 \
    --num-prompts 20 --random-input-len 8 --random-output-len 4 --quiet --no-progress \
    --save-result --save-detailed --result-dir "$dir" --result-filename "$name" "$@" \
    2>"$WORK/lg.err" || RC=$?
  [ "$RC" -ne 137 ] || fail "loadgen hung (killed after 60 s)"
}

# 1. The lock: a symbolic link, a hard link, a FIFO at r.json.lock.
for kind in symlink hardlink fifo; do
  d="$WORK/lock-$kind"
  mkdir -p "$d"
  case $kind in
  symlink) ln -s "$victim" "$d/r.json.lock" ;;
  hardlink) ln "$victim" "$d/r.json.lock" ;;
  fifo) mkfifo "$d/r.json.lock" ;;
  esac
  lg "$d" r.json
  [ "$RC" -eq 2 ] || { cat "$WORK/lg.err" >&2; fail "lock $kind: exit $RC, expected 2"; }
  grep -q "r.json.lock" "$WORK/lg.err" || fail "lock $kind: the message does not name the lock: $(cat "$WORK/lg.err")"
  intact "lock $kind"
  [ ! -e "$d/r.json" ] || fail "lock $kind: a result was written under a refused lock"
  pass "a $kind at the lock: refused with exit 2, naming it; the victim intact"
done

# 2. Links at every final name loadgen writes: each is replaced, not followed.
d="$WORK/final"
mkdir -p "$d" "$WORK/victim-dir"
for n in r.json r.jsonl r.partial.jsonl r.vllm.json; do ln -s "$victim" "$d/$n"; done
lg "$d" r.json --report-format vllm
[ "$RC" -eq 0 ] || { cat "$WORK/lg.err" >&2; fail "links at the final names: exit $RC"; }
intact "links at the final names"
for n in r.json r.jsonl r.vllm.json; do
  [ -f "$d/$n" ] && [ ! -L "$d/$n" ] || fail "$n: still a link, not the run's file"
done
[ "$(jnum "$d/r.json" .completed)" -eq 20 ] || fail "r.json: not this run's"
# The Inference Perf folder planted as a link to another folder: refused.
ln -s "$WORK/victim-dir" "$d/s.inference-perf"
lg "$d" s.json --report-format inference-perf
[ "$RC" -eq 1 ] || { cat "$WORK/lg.err" >&2; fail "a linked export folder: exit $RC, expected 1"; }
[ -z "$(ls -A "$WORK/victim-dir")" ] || fail "a linked export folder: files written into the folder it names"
[ -f "$d/s.json" ] || fail "a linked export folder: the result itself is lost"
pass "links at the result, records and export names: replaced, never written through"

# 3. plot_run.sh / report_html.sh: links at the old fixed temporaries and
# at the final names.
p="$d/plots"
mkdir -p "$p"
for n in plot_facts.json.tmp run_profile.dat.tmp run_plots.gp.tmp plot_facts.json run_profile.dat \
  run_plots.gp latency_profile.png.tmp latency_profile.svg.tmp; do
  ln -s "$victim" "$p/$n"
done
ln -s "$victim" "$d/report.html.tmp"
ln -s "$victim" "$d/report.html"
bash "$(dirname "$0")/../../scripts/plot_run.sh" "$d/r.json" "$p" >"$WORK/plot.out" 2>&1 ||
  { cat "$WORK/plot.out" >&2; fail "plot_run.sh failed"; }
intact "plot_run.sh"
for n in plot_facts.json run_profile.dat run_plots.gp; do
  [ -f "$p/$n" ] && [ ! -L "$p/$n" ] || fail "plots/$n: still a link"
done
[ -f "$d/report.html" ] && [ ! -L "$d/report.html" ] || fail "report.html: still a link"
grep -q '<html' "$d/report.html" || fail "report.html: not the report"
left=$(find "$d" -name '.plot_run.*' -o -name '.report.html.*' | tr '\n' ' ')
[ -z "$left" ] || fail "the scripts left their temporaries: $left"
pass "plot_run.sh and report_html.sh: links at fixed temporary and final names never written through"
