#!/usr/bin/env bash
# Records the reliability suite's figures: runs the rel_* and lg_e2e_rel_*
# ctest tests N times, one at a time (no -j: the host is shared, and the
# tests' figures are timings too), keeps each run's verbose output filtered
# to the lines that carry results (each test's PASS / FAIL / FIG lines and
# ctest's verdict and time per test) in raw/run-<i>.txt with the load
# average before it, and writes summary.md: per test its passes and median
# time, and each figure line with every number that varies across the runs
# given as "median [min..max]" (numbers equal in every run stay as they are).
#   results/reliability/record.sh [--build DIR] [--runs N] [--tests REGEX] [--out DIR]
# (--out: where raw/ and summary.md go, default beside this script.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
args=$*
build="$root/build" runs=5 regex='^(rel_|lg_e2e_rel_)' out=$here
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --tests) regex=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "record.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if ! [[ "$runs" =~ ^[0-9]+$ ]] || [ "$runs" -eq 0 ]; then echo "record.sh: --runs must be a positive integer" >&2; exit 2; fi
[ -f "$build/CTestTestfile.cmake" ] || { echo "record.sh: no ctest build in $build" >&2; exit 2; }
build=$(cd "$build" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rel-record.XXXXXX")
trap 'rm -rf "$work"' EXIT
commit=$(git -C "$root" rev-parse --short HEAD)
mkdir -p "$work/raw"
for i in $(seq 1 "$runs"); do
  la=$(cut -d' ' -f1-3 /proc/loadavg)
  t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  rc=0
  (cd "$build" && ctest -R "$regex" -V --timeout 600) >"$work/ctest.log" 2>&1 || rc=$?
  {
    echo "run $i of $runs: $t0, load average before $la, ctest exit $rc"
    echo "command: cd $(basename "$build") && ctest -R '$regex' -V"
    # "NN: PASS: ..." / "NN: FIG ..." / "NN: FAIL: ..." and ctest's
    # "1/44 Test #NN: name ....   Passed    3.21 sec" lines, and the leak
    # test's per-process valgrind summaries ("NN:   x.log: ERROR SUMMARY ...").
    grep -E '^[0-9]+: (PASS|FAIL|FIG|SKIP)|Test +#[0-9]+: |^[0-9]+: +[^ ]+\.log: ERROR SUMMARY' "$work/ctest.log" || true
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$work/raw/run-$i.txt"
  echo "record.sh: run $i of $runs done (ctest exit $rc)" >&2
done
{
  echo "**The reliability suite, $runs runs** (raw: [raw/](raw/), one file per run)"
  echo
  echo "- command: \`results/reliability/record.sh${args:+ $args}\` (each run: \`ctest -R '$regex' -V\`, one test at a time)"
  echo "- measures: tests/reliability tests/loadgen/e2e/rel_*.sh tests/loadgen/e2e/rel_server.py loadgen simserver common"
  echo "- commit $commit; $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs online, $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME"); shared with other work"
  echo "- load average (1, 5, 15 min) before each run: $(for f in "$work"/raw/run-*.txt; do sed -n '1s/.*load average before \([0-9.]* [0-9.]* [0-9.]*\).*/\1/p' "$f"; done | paste -sd ';' | sed 's/;/; /g')"
  echo
  python3 - "$work/raw" <<'PY'
import os, re, statistics, sys
raw = sys.argv[1]
files = sorted((f for f in os.listdir(raw) if f.startswith("run-")), key=lambda f: int(f[4:-4]))
runs = []
for f in files:
    tests, figs = {}, {}
    num2name = {}
    lines = open(os.path.join(raw, f)).read().splitlines()
    for ln in lines:
        m = re.search(r"Test +#(\d+): (\S+) \.+\** *(Passed|Failed|Not Run|\S+.*?) +([0-9.]+) sec", ln)
        if m:
            num2name[m.group(1)] = m.group(2)
            tests[m.group(2)] = (m.group(3).strip(), float(m.group(4)))
    for ln in lines:
        m = re.match(r"(\d+): (PASS|FAIL|FIG|SKIP):? ?(.*)", ln) or re.match(r"(\d+): +()(\S+\.log: ERROR SUMMARY.*)", ln)
        if m:
            figs.setdefault(num2name.get(m.group(1), "#" + m.group(1)), []).append((m.group(2) + ": " if m.group(2) else "") + m.group(3))
    runs.append((tests, figs))
names = []
for t, _ in runs:
    for n in t:
        if n not in names:
            names.append(n)
print("| test | passed | median s | min..max s |")
print("| --- | --- | ---: | --- |")
for n in names:
    st = [r[0][n] for r in runs if n in r[0]]
    ok = sum(1 for s in st if s[0] == "Passed")
    secs = [s[1] for s in st]
    print(f"| {n} | {ok}/{len(runs)} | {statistics.median(secs):.2f} | {min(secs):.2f}..{max(secs):.2f} |")
print()
print("Each test's result lines, in order; a number that varies across the runs is")
print("shown as median [min..max] over the runs that printed that line.")
num = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
def fmt(v):
    return ("%d" % v) if float(v).is_integer() else ("%.3g" % v if abs(v) < 100 else "%.0f" % v)
for n in names:
    per = [r[1].get(n, []) for r in runs]
    longest = max((len(p) for p in per), default=0)
    if not longest:
        continue
    print()
    print(f"`{n}`:")
    print()
    for j in range(longest):
        col = [p[j] for p in per if len(p) > j]
        shape = [num.sub("#", c) for c in col]
        base = col[0]
        if any(s != shape[0] for s in shape):
            # the lines differ in shape across runs: show every run's
            for k, c in enumerate(col):
                print(f"- (run {k + 1}) {c}")
            continue
        nums = [[float(x) for x in num.findall(c)] for c in col]
        out, pos, idx = [], 0, 0
        for m in num.finditer(base):
            out.append(base[pos:m.start()])
            vals = [v[idx] for v in nums]
            if min(vals) == max(vals):
                out.append(m.group(0))
            else:
                out.append(f"{fmt(statistics.median(vals))} [{fmt(min(vals))}..{fmt(max(vals))}]")
            pos, idx = m.end(), idx + 1
        out.append(base[pos:])
        print("- " + "".join(out) + (f" ({len(col)} runs)" if len(col) != len(per) else ""))
PY
} >"$work/summary.md"
mkdir -p "$out"
rm -rf "$out/raw.tmp"
mv "$work/raw" "$out/raw.tmp"
rm -rf "$out/raw"
mv "$out/raw.tmp" "$out/raw"
mv "$work/summary.md" "$out/summary.md.tmp" && mv "$out/summary.md.tmp" "$out/summary.md"
head -n 60 "$out/summary.md"
