#!/usr/bin/env bash
# The teaching demo (scripts/demo.sh) with 1 s steps. What the code
# guarantees, whatever the host: summary.json has a row for every step with
# a Kingman figure, and that figure is Kingman's formula applied to the row's
# own ca2, rho_service and service moments; those moments are the step's
# loadgen result's, its PK figure is loadgen's, and its ca2 (finite, > 0) is
# recomputed here from the deliveries the step logged; the ratios are the
# row's own. demo.dat carries the Kingman column, the plot script draws the
# curve with a legend entry, and the text names both models with the
# measured ca2. Whether Kingman tracks the measured wait better than PK is a
# measurement (results/demo/kingman.md), not asserted here; so is every
# figure's size.
set -euo pipefail
build=${RB_BUILD_DIR:?} src=${RB_SOURCE_DIR:?}
# shellcheck source=tests/lib/skip.sh
source "$src/tests/lib/skip.sh"
command -v python3 >/dev/null || skip "python3 is not installed (the checks recompute the figures with it)"
command -v cc >/dev/null || skip "cc is not installed (the demo builds scripts/lib/sendlog.c)"
out=$(mktemp -d /tmp/rb-demo.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
timeout 240 bash "$src/scripts/demo.sh" --step-seconds 1 --out "$out/demo" --build "$build" \
  >"$out/stdout" 2>"$out/stderr" || rc=$?
[ "$rc" -eq 0 ] || fail "demo.sh exited $rc: $(tail -n 5 "$out/stderr")"
for f in summary.json summary.md demo.dat demo.gp demo.txt; do
  [ -s "$out/demo/$f" ] || fail "$f missing or empty"
done
if command -v gnuplot >/dev/null; then [ -s "$out/demo/demo.png" ] || fail "demo.png missing"; fi
grep -q '^demo: wrote ' "$out/stdout" || fail "no closing line: $(tail -n 2 "$out/stdout")"

python3 - "$out/demo" <<'PY'
import json, math, os, sys

d = sys.argv[1]
problems = []


def bad(msg):
    problems.append(msg)


def close(a, b, rel):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def ca2_of(times):
    """var/mean^2 of the gaps (population variance), as demo.sh defines it"""
    g = [b - a for a, b in zip(times, times[1:])]
    if not g:
        return None
    m = sum(g) / len(g)
    if m <= 0:
        return None
    return (sum(x * x for x in g) / len(g) - m * m) / (m * m)


def num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


s = json.load(open(os.path.join(d, "summary.json")))
floor = json.load(open(os.path.join(d, "steps", "floor.json")))
if not close(s["floor_us"], floor["client_bias"]["overhead_per_token_us"]["mean"], 1e-12):
    bad("floor_us is not floor.json's overhead mean")
names = ["rho-%s" % t for t in ("0.15", "0.3", "0.45", "0.6", "0.7", "0.8", "0.87", "0.92")]
rows = s["steps"]
if [r["step"] for r in rows] != names:
    bad("steps: %s, want %s" % ([r["step"] for r in rows], names))
for r in rows:
    n = r["step"]
    res = json.load(open(os.path.join(d, "steps", n + ".json")))
    w = res["client_bias"]["workers"][0]
    for k in ("rho", "callback_rate_per_s", "mean_service_us", "second_moment_us2"):
        if not close(num(r.get(k)), num(w[k]), 1e-12):
            bad("%s: %s %s is not the result's %s" % (n, k, r.get(k), w[k]))
    lam, es, es2 = w["callback_rate_per_s"], w["mean_service_us"], w["second_moment_us2"]
    rs = lam * es * 1e-6
    cs2 = es2 / (es * es) - 1
    if not close(r["rho_service"], rs, 1e-9):
        bad("%s: rho_service %s, lambda E[S] = %s" % (n, r["rho_service"], rs))
    if not close(r["cs2"], cs2, 1e-9):
        bad("%s: cs2 %s, E[S^2]/E[S]^2 - 1 = %s" % (n, r["cs2"], cs2))
    # ca2 from the step's own deliveries
    lines = [l.split() for l in open(os.path.join(d, "steps", n + ".sends")) if l.strip()]
    lines.sort(key=lambda f: int(f[0]))
    t = [int(f[0]) for f in lines]
    te = [int(f[0]) for f in lines for _ in range(int(f[2]))]
    if r["deliveries"] != len(t) or r["events"] != len(te) or len(te) == 0:
        bad("%s: deliveries %s events %s, the log has %d and %d" % (n, r["deliveries"], r["events"], len(t), len(te)))
    ca2, ca2e = ca2_of(t), ca2_of(te)
    c = num(r.get("ca2"))
    if c is None or not math.isfinite(c) or c <= 0:
        bad("%s: ca2 %s is not finite and > 0" % (n, r.get("ca2")))
        continue
    if not close(c, ca2, 1e-6):
        bad("%s: ca2 %s, recomputed from %s.sends %s" % (n, c, n, ca2))
    if not close(num(r.get("ca2_events")), ca2e, 1e-6):
        bad("%s: ca2_events %s, recomputed %s" % (n, r.get("ca2_events"), ca2e))
    # Kingman on the row's own figures (and on the recomputed ca2)
    kg = r.get("kingman_wq_us")
    if rs < 1:
        want = rs / (1 - rs) * (c + r["cs2"]) / 2 * r["mean_service_us"]
        want2 = rs / (1 - rs) * (ca2 + cs2) / 2 * es
        if num(kg) is None or not math.isfinite(kg):
            bad("%s: kingman_wq_us %s is not a number" % (n, kg))
            continue
        if not close(kg, want, 1e-9) or not close(kg, want2, 1e-5):
            bad("%s: kingman_wq_us %s, the formula gives %s (%s from the log)" % (n, kg, want, want2))
    elif kg is not None:
        bad("%s: rho_service %s >= 1 and kingman_wq_us %s (want null: no steady state)" % (n, rs, kg))
    pk = num(w["predicted_wq_us"])
    if not close(num(r.get("pk_wq_us")), pk, 1e-12):
        bad("%s: pk_wq_us %s is not loadgen's %s" % (n, r.get("pk_wq_us"), w["predicted_wq_us"]))
    m = res["client_bias"]["overhead_per_token_us"]["mean"] - s["floor_us"]
    if not close(r["measured_wq_us"], m, 1e-9):
        bad("%s: measured_wq_us %s, overhead - floor = %s" % (n, r["measured_wq_us"], m))
    for key, den in (("measured_over_pk", pk), ("measured_over_kingman", num(kg))):
        want = m / den if den is not None and den > 0 else None
        if not close(num(r.get(key)), want, 1e-9):
            bad("%s: %s %s, want %s" % (n, key, r.get(key), want))

# demo.dat: a row per step, the Kingman column (8) and ca2 (9) as in summary.json
dat = [l.split() for l in open(os.path.join(d, "demo.dat")) if not l.startswith("#")]
if len(dat) != len(rows):
    bad("demo.dat has %d rows for %d steps" % (len(dat), len(rows)))
for f, r in zip(dat, rows):
    if len(f) != 12:
        bad("demo.dat row %s: %d columns, want 12" % (r["step"], len(f)))
        continue
    for col, key in ((8, "kingman_wq_us"), (9, "ca2")):
        v = None if f[col - 1] == "NaN" else float(f[col - 1])
        if not close(v, num(r[key]), 1e-9):
            bad("demo.dat row %s column %d: %s, summary.json %s %s" % (r["step"], col, f[col - 1], key, r[key]))
md = [l for l in open(os.path.join(d, "summary.md")) if l.startswith("| rho-")]
if len(md) != len(rows):
    bad("summary.md has %d step rows" % len(md))
if "Kingman W_q" not in open(os.path.join(d, "summary.md")).readline():
    bad("summary.md has no Kingman column")


def median(v):
    v = sorted(x for x in v if num(x) is not None)
    if not v:
        return None
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


hi = [r for r in rows if r["rho"] >= 0.7]
for key in ("measured_over_pk", "measured_over_kingman"):
    if not close(s["high_rho"]["median_" + key], median([r[key] for r in hi]), 1e-12):
        bad("high_rho median_%s is not the median of its steps" % key)
if not close(s["median_ca2"], median([r["ca2"] for r in rows]), 1e-12):
    bad("median_ca2 is not the steps' median")

gp = open(os.path.join(d, "demo.gp")).read()
if "kg(x) = x / (1 - x) * V" not in gp or 'title sprintf("Kingman G/G/1' not in gp or "using 1:8" not in gp:
    bad("demo.gp does not draw Kingman's curve and points with a legend entry")
txt = open(os.path.join(d, "demo.txt")).read()
flat = " ".join(txt.split())
ca2s = [r["ca2"] for r in rows]
for want in ("Pollaczek-Khinchine", "Kingman's G/G/1", "ca2 = 1", "Which curve the certificate stands for",
             "ca2 = %.1f to %.1f over the steps" % (min(ca2s), max(ca2s))):
    if want not in flat:
        bad("demo.txt does not say '%s'" % want)
if problems:
    print("\n".join("FAIL: " + p for p in problems))
    sys.exit(1)
print("demo: %d steps; ca2 %.2f-%.2f; at rho >= 0.7 measured/PK %s, measured/Kingman %s (recorded, not asserted)"
      % (len(rows), min(ca2s), max(ca2s), s["high_rho"]["median_measured_over_pk"],
         s["high_rho"]["median_measured_over_kingman"]))
PY
