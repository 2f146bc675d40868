#!/usr/bin/env bash
# The mutation check: proves that the unit tests of the pure cores bite.
# Each mutant below is one small, hand-written fault (a midpoint turned into an
# endpoint, `<` into `<=` at a boundary, an off-by-one, a sign flip, a dropped
# merge term), given as an exact text substitution that must match exactly
# once in its source file. For each mutant, in a copy of the tree (the working
# tree is never touched) and one build directory configured once and rebuilt
# incrementally, the script applies the substitution, builds the unit tests of
# that file, runs them, and records the mutant as killed (a test failed) or
# survived (every test passed).
#   scripts/mutate.sh [--list | --anchors | --prepare] [MUTANT...]
# --list prints the mutants and exits; --anchors only checks that every
# mutant's text still matches its source exactly once. --prepare (with
# RHOBENCH_MUTATE_WORK=DIR) copies the tree and builds both lanes for those
# mutants in DIR, then stops; a run with the same DIR, on the same tree (its
# commit and `git status`), finds them built and only runs the mutants (CI
# prepares while README command 2 runs, its CPUs mostly idle). On another
# tree the folder is emptied and built afresh. Without RHOBENCH_MUTATE_WORK
# the work folder is a new temporary one. Prints a table and, last, the line
# "mutants: N killed, M survived". Exit 0 when every mutant was killed, 1 when
# one survived, 2 on bad usage, a source text that no longer matches exactly
# once, a mutant that does not compile, or unit tests that fail unmutated.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # '&' in a replacement is literal
here=$(cd "$(dirname "$0")/.." && pwd)

IDS=() FILES=() FROMS=() TOS=() BUILDS=() CHECKS=()
# m ID FILE FROM TO: one mutant. FROM and TO are literal text; $'...' for
# several lines. Its tests are the unit tests tests_for names.
m() { IDS+=("$1"); FILES+=("$2"); FROMS+=("$3"); TOS+=("$4"); BUILDS+=(""); CHECKS+=(""); }
# me ID FILE FROM TO "TARGETS" "TESTS": a mutant of an event loop, which only
# an end-to-end test can see (a timer armed late): TARGETS are the programs
# to rebuild, TESTS the ctest names that must kill it.
me() { IDS+=("$1"); FILES+=("$2"); FROMS+=("$3"); TOS+=("$4"); BUILDS+=("$5"); CHECKS+=("$6"); }
# targets_of I / checks_of I: what mutant I rebuilds and which tests judge it.
targets_of() { if [ -n "${BUILDS[$1]}" ]; then echo "${BUILDS[$1]}"; else tests_for "${FILES[$1]}"; fi; }
checks_of() { if [ -n "${CHECKS[$1]}" ]; then echo "${CHECKS[$1]}"; else tests_for "${FILES[$1]}"; fi; }

# The unit tests that cover each source file (ctest names = target names).
tests_for() {
  case "$1" in
    models/mdl_hist.c) echo "test_mdl_hist test_mdl_stats" ;;
    models/mdl_queue.c) echo "test_mdl_queue" ;;
    models/mdl_stats.c) echo "test_mdl_stats test_mdl_ks2" ;;
    models/mdl_fit.c) echo "test_mdl_fit" ;;
    models/mdl_verdict.c) echo "test_mdl_verdict" ;;
    loadgen/lg_rxclock.c) echo "test_lg_rxclock" ;;
    loadgen/lg_wire.c) echo "test_lg_wire" ;;
    loadgen/lg_capture.c) echo "test_lg_capture" ;;
    loadgen/lg_bias.c) echo "test_lg_bias" ;;
    loadgen/lg_knee.c) echo "test_lg_knee" ;;
    loadgen/lg_judge.c) echo "test_lg_judge" ;;
    loadgen/lg_sched.c) echo "test_lg_sched" ;;
    loadgen/lg_sweep.c) echo "test_lg_sweep" ;;
    loadgen/lg_worker.c) echo "test_lg_worker" ;;
    loadgen/lg_record.c) echo "test_lg_record" ;;
    loadgen/lg_export.c | loadgen/lg_export_vllm.c | loadgen/lg_xrecs.c) echo "test_lg_export" ;;
    loadgen/lg_outputs.c) echo "test_lg_outputs" ;;
    loadgen/lg_sse.c) echo "test_lg_sse" ;;
    loadgen/lg_chunk.c) echo "test_lg_chunk" ;;
    loadgen/lg_stats.c) echo "test_lg_stats" ;;
    loadgen/lg_prom.c) echo "test_lg_prom" ;;
    loadgen/lg_srvm.c) echo "test_lg_prom" ;;
    loadgen/lg_promql.c) echo "test_lg_prom" ;;
    loadgen/lg_extra.c) echo "test_lg_extra" ;;
    loadgen/lg_meter.c) echo "test_lg_meter" ;;
    common/rb_host.c) echo "test_lg_meter test_rb_host" ;;
    calibrate/cal_proc.c) echo "test_cal_proc" ;;
    common/rb_json.c) echo "test_rb_json" ;;
    simserver/sim_http.c) echo "test_sim_http" ;;
    simserver/sim_model.c) echo "test_sim_model" ;;
    simserver/sim_metrics.c) echo "test_sim_metrics" ;;
    simserver/sim_api.c) echo "test_sim_api" ;;
    simserver/sim_engine.c) echo "test_sim_engine" ;;
    simserver/sim_render.c) echo "test_sim_render" ;;
    common/rb_timer.c) echo "test_rb_timer" ;;
    loadgen/lg_merge.c) echo "test_lg_merge" ;;
    calibrate/cal_level.c) echo "test_cal_level test_cal_sweep" ;;
    calibrate/cal_step.c) echo "test_cal_step" ;;
    loadgen/lg_cert.c) echo "test_lg_cert" ;;
    calibrate/cal_rule.c) echo "test_cal_rule" ;;
    calibrate/cal_sweep.c) echo "test_cal_sweep" ;;
    calibrate/cal_opts.c) echo "test_cal_opts" ;;
    calibrate/cal_fit.c) echo "test_cal_fit" ;;
    calibrate/cal_cert.c) echo "test_cal_cert" ;;
    common/rb_cert.c) echo "test_rb_cert test_lg_cert test_cal_cert" ;;

    loadgen/lg_dataset.c) echo "test_lg_dataset" ;;
    loadgen/lg_custom.c) echo "test_lg_dataset" ;;
    common/rb_tok.c) echo "test_rb_tok" ;;
    loadgen/lg_body.c) echo "test_lg_body" ;;
    *) echo "mutate.sh: no unit tests are listed for $1" >&2; exit 2 ;;
  esac
}

# ---- the mutants --------------------------------------------------------
# models/mdl_hist.c
m hist-mid-to-low models/mdl_hist.c \
  'uint64_t mid = lo + (mdl_hist_bucket_high(h, i) - lo) / 2;' 'uint64_t mid = lo;'
m hist-mid-to-high models/mdl_hist.c \
  'uint64_t mid = lo + (mdl_hist_bucket_high(h, i) - lo) / 2;' 'uint64_t mid = lo + (mdl_hist_bucket_high(h, i) - lo);'
m hist-rank-boundary models/mdl_hist.c 'if (seen >= rank) {' 'if (seen > rank) {'
m hist-merge-drops-sum models/mdl_hist.c 'dst->sum += src->sum;' ';'
m hist-merge-min-flipped models/mdl_hist.c 'if (src->min < dst->min) dst->min = src->min;' \
  'if (src->min > dst->min) dst->min = src->min;'
m hist-variance-sign models/mdl_hist.c 'double var = h->sum_sq / n - mean * mean;' \
  'double var = h->sum_sq / n + mean * mean;'
m hist-clamp-boundary models/mdl_hist.c 'if (value > h->highest) {' 'if (value >= h->highest) {'
# models/mdl_queue.c
m mg1-drops-half models/mdl_queue.c 'return lambda * es2 / (2.0 * (1.0 - rho));' \
  'return lambda * es2 / (1.0 - rho);'
m kingman-variance-sign models/mdl_queue.c 'return rho / (1.0 - rho) * (ca2 + cs2) / 2.0 * es;' \
  'return rho / (1.0 - rho) * (ca2 - cs2) / 2.0 * es;'
m mg1-max-lambda models/mdl_queue.c 'return 2.0 * budget_s / (es2 + 2.0 * budget_s * es);' \
  'return 2.0 * budget_s / (es2 + budget_s * es);'
# models/mdl_stats.c
m ks-below-off-by-one models/mdl_stats.c 'double below = f - (double)i / (double)n;' \
  'double below = f - (double)(i + 1) / (double)n;'
m ks-no-stephens models/mdl_stats.c $'sqrt((double)n);\n    double p = mdl_kolmogorov_q((rn + 0.12 + 0.11 / rn) * d);' \
  $'sqrt((double)n);\n    double p = mdl_kolmogorov_q(rn * d);'
m cv2-population-variance models/mdl_stats.c 'return ss / (double)(n - 1) / (mean * mean);' \
  'return ss / (double)n / (mean * mean);'
m ci-upper-rank-off-by-one models/mdl_stats.c 'uint64_t u = binom_quantile(1.0 - alpha / 2.0, q, n) + 1;' \
  'uint64_t u = binom_quantile(1.0 - alpha / 2.0, q, n);'
m ci-lower-boundary models/mdl_stats.c 'if (!got_lo && seen >= l) {' 'if (!got_lo && seen > l) {'
# models/mdl_fit.c
m fit-intervals-4x-wide models/mdl_fit.c $'p->lo = value - t * se;\n    p->hi = value + t * se;' \
  $'p->lo = value - 4 * t * se;\n    p->hi = value + 4 * t * se;'
m fit-residual-variance-over-n models/mdl_fit.c 'double sigma2 = best / out->dof;' \
  'double sigma2 = best / (out->dof + fd->p);'
m fit-m1-interval-4x-wide models/mdl_fit.c \
  $'.lo = exp(a - t * se_a) * 1e-6,\n                                    .hi = exp(a + t * se_a) * 1e-6};' \
  $'.lo = exp(a - 4 * t * se_a) * 1e-6,\n                                    .hi = exp(a + 4 * t * se_a) * 1e-6};'
# models/mdl_verdict.c
m verdict-rho-boundary models/mdl_verdict.c 'if (in->max_rho >= MDL_VERDICT_BIASED_RHO) {' \
  'if (in->max_rho > MDL_VERDICT_BIASED_RHO) {'
m verdict-lag-boundary models/mdl_verdict.c 'if (lag > MDL_VERDICT_AT_RISK_LAG_US) {' \
  'if (lag >= MDL_VERDICT_AT_RISK_LAG_US) {'
m verdict-lag-point-estimate models/mdl_verdict.c \
  'return isnan(in->lag_p99_lo_us) ? in->lag_p99_us : in->lag_p99_lo_us;' 'return in->lag_p99_us;'
m verdict-lag-note-dropped models/mdl_verdict.c \
  $'if (in->lag_p99_us > MDL_VERDICT_AT_RISK_LAG_US)\n        append(out,' $'if (0)\n        append(out,'
m verdict-uncertified-rho-boundary models/mdl_verdict.c '} else if (in->max_rho > MDL_VERDICT_UNCERTIFIED_RHO) {' \
  '} else if (in->max_rho >= MDL_VERDICT_UNCERTIFIED_RHO) {'
m verdict-wire-share-boundary models/mdl_verdict.c \
  'int wire = in->wire_share >= MDL_VERDICT_WIRE_SHARE;' 'int wire = in->wire_share > MDL_VERDICT_WIRE_SHARE;'
m verdict-mm1-p99-factor models/mdl_verdict.c \
  'return figure_us <= 2.0 * wq * log(100.0 * rho) / rho ? "client queue" : "host";' \
  'return figure_us <= 2.0 * wq * log(100.0 * rho) ? "client queue" : "host";'
m verdict-wire-delay-counted models/mdl_verdict.c $'    if (!wire) {\n        int which = over_budget(in, F, bm, bp);' \
  $'    if (1) {\n        int which = over_budget(in, F, bm, bp);'
m verdict-flow-control-any-delay models/mdl_verdict.c \
  'if (in->rxq_max_bytes >= MDL_VERDICT_RXQ_BYTES && in->delay_p99_us > bp) {' \
  'if (in->rxq_max_bytes >= MDL_VERDICT_RXQ_BYTES) {'
# models/mdl_stats.c (the two-sample test)
m ks2-tolerance-ignored models/mdl_stats.c 'while (j < m && b[j] <= a[i] + tol)' 'while (j < m && b[j] <= a[i])'
# loadgen/lg_rxclock.c
m rx-exact-window-boundary loadgen/lg_rxclock.c 'return w <= tol_ns ? rd->tokens : 1;' 'return w < tol_ns ? rd->tokens : 1;'
m rx-exact-one-segment loadgen/lg_rxclock.c 'if (rd->tokens == 1 || rd->segments == 1) return rd->tokens;' \
  'if (rd->tokens == 1 || rd->segments <= 1) return rd->tokens;'
m rx-event-not-clamped loadgen/lg_rxclock.c 'return t < delivery_ns ? t : delivery_ns;' 'return t;'
m rx-step-boundary loadgen/lg_rxclock.c 'if (d > LG_CLOCK_STEP_NS || d < -LG_CLOCK_STEP_NS) {' \
  'if (d >= LG_CLOCK_STEP_NS || d < -LG_CLOCK_STEP_NS) {'
m rx-other-connection loadgen/lg_rxclock.c 'if (rd->port >= 0 && rd->port == port && rd->kernel_ns > 0) {' \
  'if (rd->port >= 0 && rd->kernel_ns > 0) {'
# loadgen/lg_wire.c
m wire-isn-no-syn-byte loadgen/lg_wire.c 'return conn_new(w, port, isn + 1) ? 0 : -1;' 'return conn_new(w, port, isn) ? 0 : -1;'
m wire-no-wrap-extension loadgen/lg_wire.c 'return (int64_t)c->hi + (int32_t)(rel - (uint32_t)c->hi);' \
  'return (int64_t)rel;'
# (A later capture overwrites the time of the bytes already seen. The old
# form, 'if (0)', never advanced past a seen range, and was killed only by
# ctest's timeout, 120 s later.)
m wire-last-capture-wins loadgen/lg_wire.c 'if (pos < c->n && c->r[pos].s <= s) {' \
  'if (pos < c->n && c->r[pos].s <= s) { c->r[pos].t_ns = t_ns;'
m wire-lookup-end-inclusive loadgen/lg_wire.c 'if (c->r[mid].e > off)' 'if (c->r[mid].e >= off)'
m wire-release-ignored loadgen/lg_wire.c '    if (offset <= c->base) return;' '    if (offset <= c->base || 1) return;'
m wire-no-bound loadgen/lg_wire.c 'if (c->n == w->max_segs) {' 'if (0) {'
m wire-evict-newest loadgen/lg_wire.c '        if (*pos == 0) return 1;' '        return 1;'
m wire-old-data-taken loadgen/lg_wire.c '        s = c->base;' '        ;'
m wire-syn-without-ack loadgen/lg_wire.c '        if (!(seg->flags & LG_TCP_ACK)) return 2;' '        ;'
m wire-len-from-snapshot loadgen/lg_wire.c 'seg->len = (uint32_t)(ip_payload - thl);' \
  'seg->len = (uint32_t)(caplen - off - ip_hl - thl);'
m wire-fragment-taken loadgen/lg_wire.c 'if (rd16(ip + 6) & 0x3fff) return -1;' ';'
m wire-anchor-trusted loadgen/lg_wire.c 'if (s64 != 0) { /* the anchor was not the first request' \
  'if (0) { /* the anchor was not the first request'
m wire-anchor-after-reads loadgen/lg_wire.c 'if (w->tainted[port >> 3] & (1u << (port & 7))) return 1;' ';'
m wire-anchor-moves loadgen/lg_wire.c '    if (w->conn[port]) return 1;' '    lg_wire_close(w, port);'
# the client's request stream (its departure times)
m wire-client-start-is-isn loadgen/lg_wire.c 'lg_wire_client_start(w, seg->dport, seg->ack);' \
  'lg_wire_client_start(w, seg->dport, seg->ack - 1);'
m wire-client-side-on-anchor loadgen/lg_wire.c 'if (!c || c->tentative) return -1;' 'if (!c) return -1;'
m wire-sent-into-server-side loadgen/lg_wire.c 'return side_add(w, &c->cli, s64, len, t_ns, &w->c.sent_dup_bytes);' \
  'return side_add(w, &c->srv, s64, len, t_ns, &w->c.sent_dup_bytes);'
m wire-sent-not-fed loadgen/lg_wire.c 'return lg_wire_sent(w, seg->sport, seg->seq, seg->len, t_ns) < 0 ? -1 : 2;' \
  'return 2;'
m wire-sent-release-ignored loadgen/lg_wire.c 'if (c) side_release(&c->cli, offset);' '(void)c;'
# loadgen/lg_capture.c (its live checks need CAP_NET_RAW: run as root)
m cap-filter-kernel-only loadgen/lg_capture.c '"tcp and host %s and port %d and (src port %d or' \
  '"inbound and tcp and host %s and port %d and (src port %d or'
m cap-ranges-overlap loadgen/lg_capture.c '*hi = *lo + span - 1;' '*hi = *lo + span;'
m cap-filter-error-kind loadgen/lg_capture.c '        *why = -EINVAL;' '        *why = -EIO;'
m cap-stamp-as-us loadgen/lg_capture.c 'int64_t t = (int64_t)h->ts.tv_sec * 1000000000LL + (int64_t)h->ts.tv_usec;' \
  'int64_t t = (int64_t)h->ts.tv_sec * 1000000000LL + (int64_t)h->ts.tv_usec * 1000;'
m bias-wire-note-boundary loadgen/lg_bias.c 'if (b->capture_share >= MDL_VERDICT_WIRE_SHARE) {' \
  'if (b->capture_share > MDL_VERDICT_WIRE_SHARE) {'

# loadgen/lg_bias.c
m bias-arrival-resolution loadgen/lg_bias.c 'if (gi < LG_ARRIVAL_RESOLUTION_NS) continue;' 'if (gi < 0) continue;'
m bias-arrival-across-stages loadgen/lg_bias.c 'if (a->stage != b->stage) continue; /* a pause between stages is no gap */' ';'
m bias-exact-share-from-kernel loadgen/lg_bias.c 'vi.wire_share = b->exact_share;' 'vi.wire_share = b->wire_share;'
m bias-worst-rho loadgen/lg_bias.c 'if (isfinite(rho) && (isnan(b->max_rho) || rho > b->max_rho)) {' \
  'if (isfinite(rho) && (isnan(b->max_rho) || rho < b->max_rho)) {'
m bias-rho-unclamped loadgen/lg_bias.c '*rho = r < 0 ? 0 : (r > 1 ? 1 : r);' '*rho = r;'
m bias-achieved-ratio-inverted loadgen/lg_bias.c 'b->achieved_ratio = fmin(1.0, span_i / span_d);' \
  'b->achieved_ratio = fmin(1.0, span_d / span_i);'
m bias-lag-p50-not-p99 loadgen/lg_bias.c \
  'b->lag_p99_us = (double)mdl_hist_percentile(lg_stats_hist_c(s, LG_H_LAG), 99.0) / 1e3;' \
  'b->lag_p99_us = (double)mdl_hist_percentile(lg_stats_hist_c(s, LG_H_LAG), 50.0) / 1e3;'
m bias-lag-bound-two-sided-95 loadgen/lg_bias.c '99.0, 0.90, &lo, NULL) == 0)' '99.0, 0.95, &lo, NULL) == 0)'
m bias-lag-bound-not-judged loadgen/lg_bias.c '    vi.lag_p99_lo_us = b->lag_p99_lo_us;' ''
m bias-transport-kept loadgen/lg_bias.c 'vi.delay_p99_us = fmax(0.0, b->overhead_us.p99 - tr);' \
  'vi.delay_p99_us = fmax(0.0, b->overhead_us.p99);'
m bias-below-share-inverted loadgen/lg_bias.c \
  't->below_share = gaps ? (double)(gaps - n) / (double)gaps : NAN;' \
  't->below_share = gaps ? (double)n / (double)gaps : NAN;'
# loadgen/lg_rxclock.c (the clock map)
m rx-map-endpoint loadgen/lg_rxclock.c 'int64_t off = real_ns - (mono_before_ns + width / 2);' \
  'int64_t off = real_ns - mono_before_ns;'
m rx-map-widest-reading loadgen/lg_rxclock.c 'if (width < m->width_ns) m->width_ns = width;' \
  'if (width > m->width_ns) m->width_ns = width;'
m rx-map-step-not-reset loadgen/lg_rxclock.c $'            m->steps++;\n            m->lo_ns = m->hi_ns = off;' \
  $'            m->steps++;'
m rx-no-lower-bound-exact loadgen/lg_rxclock.c \
  'int64_t w = rd->lower_ns > 0 ? rd->kernel_ns - rd->lower_ns : rd->kernel_ns;' \
  'int64_t w = rd->lower_ns > 0 ? rd->kernel_ns - rd->lower_ns : 0;'
# common/rb_cert.c
m cert-rho-zero-accepted common/rb_cert.c \
  '(open ? v->valuedouble > lo : v->valuedouble >= lo) && v->valuedouble <= hi' \
  'v->valuedouble >= lo && v->valuedouble <= hi'
m cert-cap-off-by-one common/rb_cert.c 'if (n > RB_CERT_MAX_ENTRIES) {' 'if (n > RB_CERT_MAX_ENTRIES + 1) {'
m cert-zero-costs-accepted common/rb_cert.c \
  'if (out->per_delivery_us == 0 && out->per_event_us == 0) {' \
  'if (out->per_delivery_us == 0 && out->per_event_us < 0) {'
m cert-moments-unchecked common/rb_cert.c \
  'if (optional_num(e, path, moments[m], 0, 0, INFINITY, &ignored, err, errlen)) goto out;' \
  '(void)ignored;'
# calibrate/cal_fit.c
# calibrate/cal_opts.c: a k's deadline, never less than its own share (test_cal_opts)
m deadline-shared-only calibrate/cal_opts.c 'return alone > shared ? alone : shared;' 'return alone > 0 ? shared : shared;'
m deadline-own-is-cumulative calibrate/cal_opts.c 'own = cum - (i > 0 ? cal_opts_budget_share(o, i - 1) : 0);' \
  'own = cum;'
m cost-negative-kept calibrate/cal_fit.c '            if (u[c] && !(cf[c] >= 0)) ok = 0;' \
  '            if (u[c] && !(cf[c] >= 0) && c == COST_EV) ok = 0;'
m cost-zero-kept calibrate/cal_fit.c '    return isfinite(best) ? 0 : -1;' '    return 0;'
m fit-negative-r-kept calibrate/cal_fit.c 'if (fitted && !(out->r_us > 0 && isfinite(out->transport_us))) {' \
  'if (fitted && !isfinite(out->transport_us)) {'
# the self-test's model checks (issue 23): PK's R of the injected client,
# its inputs, and the verdicts on R, the goodness of fit and the rule
m selftest-exp-moment calibrate/cal_fit.c '(inj->exponential ? g * (g + 1.0) : g * g)' '(g * g)'
m selftest-cross-term calibrate/cal_fit.c 'es2 = m2 + q * (ex2 + 2.0 * ex * m1);' 'es2 = m2 + q * ex2;'
m selftest-callbacks-ignored calibrate/cal_fit.c 'double q = n / (g * c);' 'double q = n / (g + 0 * c);'
m selftest-group-bound calibrate/cal_fit.c '!(g <= n) || !(q <= 1) || ' ''
m selftest-moment-guard calibrate/cal_fit.c '!(m2 >= m1 * m1) || ' ''
m selftest-r-tol-ignored calibrate/cal_fit.c 'fmin(fmax(r_tol, isfinite(side) ? side / r_true : 0),' \
  'fmin((isfinite(side) ? side / r_true : 0),'
m selftest-r-tol-uncapped calibrate/cal_fit.c \
  'c->tol = fmin(fmax(r_tol, isfinite(side) ? side / r_true : 0), CAL_SELFTEST_R_TOL_MAX);' \
  'c->tol = fmax(r_tol, isfinite(side) ? side / r_true : 0);'
m selftest-r-side-swapped calibrate/cal_fit.c 'double side = r_true >= p->r_us ?' 'double side = r_true <= p->r_us ?'
m selftest-gof-ignored calibrate/cal_fit.c 'c->pass = p->fit_ok;' 'c->pass = 1;'
m selftest-rule-fitted-r calibrate/cal_fit.c 'budget_us / (budget_us + r_true), rule_tol' \
  'budget_us / (budget_us + p->r_us), rule_tol'
m selftest-baseline-weight calibrate/cal_fit.c 's2 += cb * s->second_moment_us2;' 's2 += s->second_moment_us2;'
m selftest-delivery-window calibrate/cal_fit.c 'if (pass == 0 && !(l->rho >= rho_lo && l->rho <= rho_hi)) continue;' \
  'if (pass == 0 && !(l->rho >= rho_lo)) continue;'
# the self-test's held-out level (issue 23): out of the refit, interpolated
# only, judged against the band plus its own error bar on its own side
m holdout-in-sample calibrate/cal_fit.c 'copy[i].level = -1; /* out of every level' \
  'copy[i].level = copy[i].level; /* out of every level'
m holdout-extrapolates calibrate/cal_fit.c 'if (above && (best < 0 ||' 'if ((best < 0 ||'
m holdout-error-ignored calibrate/cal_fit.c 'double err = isfinite(l->delay_err_us) ? l->delay_err_us : 0;' \
  'double err = 0;'
m holdout-one-side calibrate/cal_fit.c 'double side = l->delay_us >= pred ? bhi - pred : pred - blo;' \
  'double side = bhi - pred;'
m holdout-none-passes calibrate/cal_fit.c $'        c->counted = 1;\n        return 1;' $'        c->counted = 0;\n        return 0;'
# loadgen/lg_judge.c
m judge-cut-stopping-stage loadgen/lg_judge.c 'return n_used - (stopped_stage + 1);' 'return n_used - stopped_stage;'
m judge-cut-ignored loadgen/lg_judge.c 'if (s >= n_judged) {' 'if (s >= n_views) {'
# loadgen/lg_knee.c
m knee-dispatch-boundary loadgen/lg_knee.c \
  'if (o->scheduled > 0 && (double)o->dispatched < r->min_ratio * (double)o->scheduled) {' \
  'if (o->scheduled > 0 && (double)o->dispatched <= r->min_ratio * (double)o->scheduled) {'
m knee-sent-clause-dropped loadgen/lg_knee.c \
  'if (done >= r->min_ratio * offered || done >= r->min_ratio * sent) return 0;' \
  'if (done >= r->min_ratio * offered) return 0;'
m knee-offered-clause-dropped loadgen/lg_knee.c \
  'if (done >= r->min_ratio * offered || done >= r->min_ratio * sent) return 0;' \
  'if (done >= r->min_ratio * sent) return 0;'
m knee-noise-without-sqrt-factor loadgen/lg_knee.c 'double noise = 3.0 * sqrt(n0 + n1) + 2.0;' \
  'double noise = sqrt(n0 + n1) + 2.0;'
m knee-shedding-share loadgen/lg_knee.c \
  'int shedding = (double)o->failed_in >= (1.0 - r->min_ratio) * sent;' \
  'int shedding = (double)o->failed_in >= r->min_ratio * sent;'
m knee-ttft-baseline-max loadgen/lg_knee.c \
  'if (isnan(base) || obs[j].ttft_p50_ms < base) base = obs[j].ttft_p50_ms, at = j;' \
  'if (isnan(base) || obs[j].ttft_p50_ms > base) base = obs[j].ttft_p50_ms, at = j;'
m knee-ttft-baseline-saturated loadgen/lg_knee.c \
  'if (v[j].saturated || isnan(obs[j].ttft_p50_ms)) continue;' 'if (isnan(obs[j].ttft_p50_ms)) continue;'
m knee-ttft-whole-e2e loadgen/lg_knee.c 'isnan(e2e) ? 0 : 0.5 * e2e);' 'isnan(e2e) ? 0 : e2e);'
m knee-ttft-factor-dropped loadgen/lg_knee.c 'double bound = fmax(r->ttft_factor * base, base + rise);' \
  'double bound = base + rise;'
m knee-ttft-boundary loadgen/lg_knee.c 'if (p50 <= bound) return 0;' 'if (p50 < bound) return 0;'
m knee-lag-share-boundary loadgen/lg_knee.c \
  '(double)o->lag_over > r->lag_over_share * (double)o->dispatched) {' \
  '(double)o->lag_over >= r->lag_over_share * (double)o->dispatched) {'
m knee-last-saturated-stage loadgen/lg_knee.c $'        snprintf(k->criterion, sizeof k->criterion, "%s", v[s].criterion);\n        return;' \
  $'        snprintf(k->criterion, sizeof k->criterion, "%s", v[s].criterion);'
# models/mdl_verdict.c (more boundaries and guards)
m verdict-achieved-boundary models/mdl_verdict.c 'if (in->achieved_ratio < MDL_VERDICT_BIASED_ACHIEVED_RATIO) {' \
  'if (in->achieved_ratio <= MDL_VERDICT_BIASED_ACHIEVED_RATIO) {'
m verdict-biased-lag-boundary models/mdl_verdict.c 'if (lag > MDL_VERDICT_BIASED_LAG_US) {' \
  'if (lag >= MDL_VERDICT_BIASED_LAG_US) {'
m verdict-safe-rho-boundary models/mdl_verdict.c 'if (in->max_rho > in->safe_rho) {' 'if (in->max_rho >= in->safe_rho) {'
m verdict-arrival-d-ignored models/mdl_verdict.c $'if (in->arrival_p_value < MDL_VERDICT_AT_RISK_ARRIVAL_P &&\n        !(in->arrival_d <= MDL_VERDICT_AT_RISK_ARRIVAL_D)) {' \
  'if (in->arrival_p_value < MDL_VERDICT_AT_RISK_ARRIVAL_P) {'
m verdict-mean-half-wq models/mdl_verdict.c 'if (!p99) return 2.0 * wq >= figure_us ? "client queue" : "host";' \
  'if (!p99) return wq >= figure_us ? "client queue" : "host";'
m verdict-wq-counted-when-wire models/mdl_verdict.c 'if (!wire && in->predicted_wq_us > bm) {' \
  'if (in->predicted_wq_us > bm) {'
# models/mdl_stats.c (the two-sample test, more)
m ks2-smaller-side models/mdl_stats.c 'double d = d1 > d2 ? d1 : d2;' 'double d = d1 < d2 ? d1 : d2;'
m ks2-effective-n models/mdl_stats.c 'double ne = (double)n * (double)m / (double)(n + m);' \
  'double ne = (double)n;'
m ks2-ecdf-off-by-one models/mdl_stats.c 'double diff = (double)(i + 1) / (double)n - (double)j / (double)m;' \
  'double diff = (double)i / (double)n - (double)j / (double)m;'
m ks2-tolerance-sign models/mdl_stats.c 'while (j < m && b[j] <= a[i] + tol)' 'while (j < m && b[j] <= a[i] - tol)'
# loadgen/lg_sched.c
m sched-round-robin-off-by-one loadgen/lg_sched.c 'return (int)(a->index % k);' \
  'return (int)((a->index + 1) % k);'
m sched-worker-bound loadgen/lg_sched.c 'if (k < 1 || worker < 0 || worker >= k) return 0;' \
  'if (k < 1 || worker < 0 || worker > k) return 0;'
m sched-duration-boundary loadgen/lg_sched.c \
  'if (st->duration_ns > 0 && !(offset_ns < (double)st->duration_ns)) return 0;' \
  'if (st->duration_ns > 0 && !(offset_ns <= (double)st->duration_ns)) return 0;'
m sched-nan-gap-kept loadgen/lg_sched.c \
  'return isnan(g) ? INFINITY : g;' \
  'return g;'
m sched-stage-count-boundary loadgen/lg_sched.c \
  'if (st->max_requests > 0 && in_stage >= st->max_requests) return 0;' \
  'if (st->max_requests > 0 && in_stage > st->max_requests) return 0;'
m sched-gamma-scale loadgen/lg_sched.c '1.0 / (rate_per_s * burstiness)' '1.0 / rate_per_s'
m sched-drops-pause loadgen/lg_sched.c 'start += llround(end_ns) + sp->pause_ns;' 'start += llround(end_ns);'
m sched-constant-summed loadgen/lg_sched.c 'if (isinf(sp->burstiness) && st->ramp == LG_RAMP_NONE)' 'if (0)'
# loadgen/lg_sse.c
m sse-keeps-leading-space loadgen/lg_sse.c "if (value_len && value[0] == ' ') {" 'if (0) {'
m sse-crlf-split loadgen/lg_sse.c "if (*s == '\\n') {" "if (*s == '\\r') {"
m sse-data-lines-unjoined loadgen/lg_sse.c 'rb_buf_add(&p->data, "\n", 1)' 'rb_buf_add(&p->data, "", 0)'
m sse-size-boundary loadgen/lg_sse.c 'if ((size_t)(eol - s) > p->max_bytes) return -EMSGSIZE;' \
  'if ((size_t)(eol - s) >= p->max_bytes) return -EMSGSIZE;'
m sse-finish-keeps-nothing loadgen/lg_sse.c 'int discarded = p->has_data;' 'int discarded = 0;'
# loadgen/lg_chunk.c
m chunk-role-with-content loadgen/lg_chunk.c \
  'if (c.role && !(r->out->flags & LG_CHUNK_CONTENT)) r->out->flags |= LG_CHUNK_ROLE;' \
  'if (c.role) r->out->flags |= LG_CHUNK_ROLE;'
m chunk-raw-length loadgen/lg_chunk.c 'out->content_bytes += n;' 'out->content_bytes += (size_t)(b - a);'
m chunk-stamp-digits loadgen/lg_chunk.c 'if (len == 0 || len > 19) return 0;' 'if (len == 0 || len > 18) return 0;'
m chunk-fast-string-length loadgen/lg_chunk.c 'if (decoded) *decoded = (size_t)(q - s->p);' \
  'if (decoded) *decoded = (size_t)(q - s->p) + 1;'
m chunk-truth-fast-no-decode loadgen/lg_chunk.c 'if (t.v[0] < 0 || t.v[1] < 0 || t.v[2] < 0) return 0;' \
  'if (t.v[0] < 0 || t.v[1] < 0) return 0;'
m chunk-count-zero loadgen/lg_chunk.c 'if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d)) return -2;' \
  'if (!(d > 0 && d <= 9007199254740992.0) || d != floor(d)) return -2;'
# loadgen/lg_stats.c (the merge, the goodput rule, and lines of the recording
# that the histograms added beside them leave alone)
m stats-merge-drops-good loadgen/lg_stats.c 'dst->good += src->good;' ';'
m stats-merge-drops-input-tokens loadgen/lg_stats.c 'dst->input_tokens += src->input_tokens;' ';'
m stats-merge-wrong-hist loadgen/lg_stats.c 'mdl_hist_merge(lg_stats_hist(dst, i), lg_stats_hist_c(src, i));' \
  'mdl_hist_merge(lg_stats_hist(dst, i), lg_stats_hist_c(src, 0));'
m stats-min-flipped loadgen/lg_stats.c 'if (v && (!*dst || v < *dst)) *dst = v;' 'if (v && (!*dst || v > *dst)) *dst = v;'
m stats-tpot-over-n loadgen/lg_stats.c 'rec(s, base[k] + 1, (e2e - ttft) / (n - 1));' \
  'rec(s, base[k] + 1, (e2e - ttft) / n);'
m stats-both-from-dispatch loadgen/lg_stats.c 'const int64_t starts[2] = {r->intended_ns, r->dispatch_ns};' \
  'const int64_t starts[2] = {r->dispatch_ns, r->dispatch_ns};'
m stats-lag-folded loadgen/lg_stats.c 'if (lag < 0) lag = 0;' 'if (lag < 0) lag = -lag;'
m stats-send-delay-from-intended loadgen/lg_stats.c 'rec(s, LG_H_SEND_WIRE, r->sent_wire_ns - r->dispatch_ns);' \
  'rec(s, LG_H_SEND_WIRE, r->sent_wire_ns - r->intended_ns);'
m stats-ttft-wire-from-dispatch loadgen/lg_stats.c 'rec(s, LG_H_TTFT_W, r->first_token_ns - r->sent_wire_ns);' \
  'rec(s, LG_H_TTFT_W, r->first_token_ns - r->dispatch_ns);'
m stats-merge-drops-departures loadgen/lg_stats.c 'dst->departures += src->departures;' ';'
m stats-truth-client-keeps-decode loadgen/lg_stats.c 's->truth_client_ns += ntpot - q - p - d;' \
  's->truth_client_ns += ntpot - q - p;'
m goodput-tpot-over-n loadgen/lg_stats.c '(r->end_ns - r->first_token_ns) / (n - 1) > slo[LG_M_TPOT])' \
  '(r->end_ns - r->first_token_ns) / n > slo[LG_M_TPOT])'
# loadgen/lg_prom.c (the server's metrics: the text format, its sums and quantiles)
m prom-quantile-no-interpolation loadgen/lg_prom.c 'return lo + (hi - lo) * ((rank - prev) / in);' \
  'return lo;'
m prom-quantile-inf-bucket-nan loadgen/lg_prom.c 'if (b == h->n - 1) return h->n >= 2 ? h->le[h->n - 2] : NAN;' \
  'if (b == h->n - 1) return NAN;'
m prom-delta-ignores-reset loadgen/lg_prom.c 'if (reset) return 1;' 'if (0) return 1;'
m prom-sum-last-only loadgen/lg_prom.c 'sum = isnan(sum) ? p->s[i].value : sum + p->s[i].value;' \
  'sum = p->s[i].value;'
m prom-type-twice-accepted loadgen/lg_prom.c 'if (family_find(o, name, n))' 'if (0)'
m prom-bad-escape-accepted loadgen/lg_prom.c "else if (e == '\\\\' || e == '\"')" \
  "else if (e == '\\\\' || e == '\"' || e == 'x')"
# loadgen/lg_srvm.c (the server's metrics per stage)
m srvm-base-boundary loadgen/lg_srvm.c 'if (!w->base.set && t_ns > w->start)' \
  'if (!w->base.set && t_ns >= w->start)'
m srvm-gauge-window-end loadgen/lg_srvm.c 'if (t_ns < w->start || t_ns >= w->end) continue;' \
  'if (t_ns < w->start || t_ns > w->end) continue;'
m srvm-counter-reset-negative loadgen/lg_srvm.c 'rb_json_put_num(e, "delta", reset ? b->v : d);' \
  'rb_json_put_num(e, "delta", d);'
m srvm-evidence-no-noise loadgen/lg_srvm.c 'int grew = max - s > 3.0 * sqrt(s + (max > 0 ? max : 0)) + 2.0;' \
  'int grew = max > s;'
# loadgen/lg_promql.c (Inference Perf's PromQL and the answers' numbers)
m promql-vector-last-only loadgen/lg_promql.c 'sum += x, n++;' 'sum = x, n++;'
m promql-empty-is-zero loadgen/lg_promql.c 'rc = -ENOENT;' '*v = 0, rc = 0;'
m promql-duration-truncated loadgen/lg_promql.c 'double d = floor(duration_s + 0.5);' \
  'double d = floor(duration_s);'
# loadgen/lg_extra.c (--extra-body and the sampling flags)
m extra-sampling-always loadgen/lg_extra.c 'if (!s[i].given) continue;' ';'
m extra-owned-unchecked loadgen/lg_extra.c 'for (size_t i = 0; i < sizeof OWNED / sizeof OWNED[0]; i++)' \
  'for (size_t i = 0; i < 1; i++)'
m extra-no-separator loadgen/lg_extra.c '"%s%s:%s", used ? "," : "", k, v)' '"%s%s:%s", "", k, v)'
# simserver/sim_http.c
m http-header-limit-boundary simserver/sim_http.c 'if (hp->header_bytes > hp->lim.max_header_bytes) {' \
  'if (hp->header_bytes >= hp->lim.max_header_bytes) {'
m http-body-limit-boundary simserver/sim_http.c 'if (r->body_len + n > hp->lim.max_body_bytes) {' \
  'if (r->body_len + n >= hp->lim.max_body_bytes) {'
m http-query-kept simserver/sim_http.c "char *q = strchr(r->path, '?');" "char *q = strchr(r->path, '&');"
# simserver/sim_metrics.c
m idle-cut-min-is-max simserver/sim_metrics.c \
  'if (cut > 0 && (out->idle_cut_min_ns == 0 || cut < out->idle_cut_min_ns))' \
  'if (cut > 0 && (out->idle_cut_min_ns == 0 || cut > out->idle_cut_min_ns))'
m idle-cut-counts-zero simserver/sim_metrics.c 'if (cut > 0 && (out->idle_cut_min_ns == 0' 'if (cut >= 0 && (out->idle_cut_min_ns == 0'
# loadgen/lg_sched.c: vLLM's ramp-up
m ramp-linear-squared loadgen/lg_sched.c 'return st->ramp == LG_RAMP_LINEAR ? a + (b - a) * p : a * pow(b / a, p);' \
  'return st->ramp == LG_RAMP_LINEAR ? a + (b - a) * p * p : a * pow(b / a, p);'
m ramp-past-the-end loadgen/lg_sched.c '    if (p > 1) p = 1;' '    ;'
m ramp-gap-previous-rate loadgen/lg_sched.c \
  'gap_ns(s->rng, lg_stage_rate_at(st, s->in_stage, ramp_count(sp, st)), sp->burstiness);' \
  'gap_ns(s->rng, lg_stage_rate_at(st, s->in_stage - 1, ramp_count(sp, st)), sp->burstiness);'
m ramp-plan-previous-rate loadgen/lg_sched.c 'off += gap_ns(s->rng, lg_stage_rate_at(st, made, ramp_count(sp, st)),' \
  'off += gap_ns(s->rng, lg_stage_rate_at(st, made - 1, ramp_count(sp, st)),'
m ramp-uncounted-accepted loadgen/lg_sched.c '            if (!counted) {' '            if (0) {'
# loadgen/lg_sweep.c: a linear sweep that starts at 0, a geometric one that
# never reaches its top, a floor that ignores the given one.
m sweep-linear-from-zero loadgen/lg_sweep.c 'rates[i] = max_rate * (i + 1) / n;' 'rates[i] = max_rate * i / n;'
m sweep-geometric-short loadgen/lg_sweep.c 'lo * pow(max_rate / lo, (double)i / (n - 1));' \
  'lo * pow(max_rate / lo, (double)i / n);'
m sweep-floor-given-ignored loadgen/lg_sweep.c 'return min_rate > 0.0 ? min_rate : max_rate / pow(2.0, n - 1);' \
  'return max_rate / pow(2.0, n - 1);'
# Inference Perf's sweep (--sweep-probe): the burn-down rates, the
# percentile and the stages it places (test_lg_sweep), the probe's plan
# (test_lg_cli), the config's mapping (test_lg_config), and the probe's run
# end to end.
m sweep-burn-counts-rises loadgen/lg_sweep.c 'if (in_flight[i] < in_flight[i - 1] && dt > 0)' \
  'if (in_flight[i] != in_flight[i - 1] && dt > 0)'
m sweep-burn-timeout-kept loadgen/lg_sweep.c 'if (t_ns[i] >= t_end_ns) break;' 'if (t_ns[i] > t_end_ns) break;'
m sweep-percentile-rank-n loadgen/lg_sweep.c 'double h = (n - 1) * p / 100.0;' 'double h = n * p / 100.0;'
m sweep-probe-geometric-upside loadgen/lg_sweep.c '1.0 + s - pow(s, 1.0 - f)' 'pow(s, f)'
m sweep-probe-unrounded loadgen/lg_sweep.c 'return round(v * 100.0) / 100.0;' 'return v;'
me probe-window-uncut loadgen/lg_cli.c '    if (o->sweep_probe_timeout_ns < window) window = o->sweep_probe_timeout_ns;' '' \
  "test_lg_cli" "test_lg_cli"
me probe-max-rate-kept loadgen/lg_cli.c '    if (o->sweep_max_rate > 0.0 || o->sweep_min_rate > 0.0) {' '    if (o->sweep_min_rate > 0.0) {' \
  "test_lg_cli" "test_lg_cli"
me probe-config-never loadgen/lg_config.c \
  'if (!member(sweep, "load.sweep", "max_rate", p, sizeof p)) TRY(emit(c, "--sweep-probe", NULL));' \
  'if (0 && !member(sweep, "load.sweep", "max_rate", p, sizeof p)) TRY(emit(c, "--sweep-probe", NULL));' \
  "test_lg_config" "test_lg_config"
me probe-samples-dispatched loadgen/lg_run.c \
  'lg_probe_sample(c->o->probe, now, lg_plan_shared(p)->t0_ns, disp, done, failed);' \
  'lg_probe_sample(c->o->probe, now, lg_plan_shared(p)->t0_ns, disp, 0, failed);' "loadgen simserver" \
  "lg_e2e_inference_perf_sweep"
me probe-percentile-ignored loadgen/lg_probe.c 'lg_sweep_percentile(pr->rates, pr->n_rates, pr->percentile)' \
  'lg_sweep_percentile(pr->rates, pr->n_rates, 50)' "loadgen simserver" "lg_e2e_inference_perf_sweep"
me probe-stages-unplaced loadgen/lg_probe.c '    o->n_stages = pr->n_stages;' '    o->n_stages = 1;' \
  "loadgen simserver" "lg_e2e_inference_perf_sweep"
# loadgen/lg_worker.c, in-process against a server thread (test_lg_worker):
# dispatch early, the intended time lost, the stop's count skipped, the
# other worker's arrivals taken, a stage's counts in stage 0, a reply's
# receive time before its own send.
m worker-dispatch-2ms-early loadgen/lg_worker.c '        if (intended > now) return intended;' \
  '        if (intended > now + 2000000) return intended;'
m worker-intended-lost loadgen/lg_worker.c 'dispatch_one(w, &w->next, intended, now);' \
  'dispatch_one(w, &w->next, now, now);'
m worker-stop-uncounted loadgen/lg_worker.c '    if (cut) count_not_dispatched(w);' '    if (cut && 0) count_not_dispatched(w);'
m worker-other-share loadgen/lg_worker.c \
  '} else if (!lg_sched_next_for(w->sched, w->id, p->k, &w->next)) {' \
  '} else if (!lg_sched_next_for(w->sched, 0, p->k, &w->next)) {'
m worker-stage-zero loadgen/lg_worker.c '    lg_stage_stats *st = stats_of(w, a->stage);' \
  '    lg_stage_stats *st = stats_of(w, 0);'
m worker-receive-before-send loadgen/lg_worker.c '    if (t < r->dispatch_ns) t = r->dispatch_ns;' '    ;'
# --batch-tick: the tick ignored (the loop waits in epoll as without it), its
# sleeps not counted as the loop's idle time, the sleep dropped (a busy
# poll); the flag without its unit, or with the user clock, accepted.
m worker-tick-ignored loadgen/lg_worker.c '        if (w->o->batch_tick_ns > 0)' '        if (0)'
m worker-tick-sleep-not-idle loadgen/lg_worker.c '        w->tick_idle_ns += rb_now_ns() - now;' \
  '        (void)now;'
m worker-tick-no-sleep loadgen/lg_worker.c \
  '        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {' \
  '        while (0 && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {'
me cli-tick-without-unit loadgen/lg_cli.c "    if (len == 0 || !(val[len - 1] >= 'a' && val[len - 1] <= 'z') ||" \
  '    if (len == 0 ||' "test_lg_cli" "test_lg_cli"
me cli-tick-with-user-clock loadgen/lg_cli.c '    if (!o->batch_tick_ns || o->receive_clock != LG_RXC_USER) return 0;' \
  '    return 0;' "test_lg_cli" "test_lg_cli"
me report-tick-dropped loadgen/lg_report.c '    if (r->o->batch_tick_ns > 0) {' '    if (0) {' \
  "loadgen simserver" "lg_e2e_batch_tick"
# each worker's own clock: its wire share over one stage only, or over the
# kernel's tokens alone (the user-timed ones left out of the whole)
m judge-worker-wire-one-stage loadgen/lg_judge.c '        for (int s = 0; s < in->n_stages; s++) {
            const lg_stage_stats *x = block_of(in, w, s);' '        for (int s = 0; s < 1; s++) {
            const lg_stage_stats *x = block_of(in, w, s);'
m judge-worker-wire-user-left-out loadgen/lg_judge.c '            all += x->rx_kernel_tokens + x->rx_user_tokens;' \
  '            all += x->rx_kernel_tokens;'
# why a worker runs no wire clock: its own capture's error, or its run's
# (rank's) fallback, not kept in its slot, or not passed to the report
m worker-capture-error-unsaid loadgen/lg_worker.c \
  $'            snprintf(w->slot->rx_fallback, sizeof w->slot->rx_fallback, "%.*s",\n                     (int)sizeof w->slot->rx_fallback - 1, werr);' '            ;'
m worker-run-fallback-unsaid loadgen/lg_worker.c '    } else if (p->o->receive_clock_fallback[0]) {' \
  '    } else if (0) {'
m judge-worker-fallback-dropped loadgen/lg_judge.c '    b->receive_clock_fallback = s->rx_fallback;' \
  '    b->receive_clock_fallback = "";'
m json-put-str-empty common/rb_json.c '    if (s && s[0])' '    if (s)'
# TLS under the wire clock: a record's length bound, its version, a body cut
# short taken for a record's end; https sent back to the kernel's clock; the
# plaintext looked up in the ciphertext read (never found: every token falls back)
me tls-scan-length-2-14 loadgen/lg_wire.c 'len > 16384 + 2048) {' 'len > 16384) {' "test_lg_wire" "test_lg_wire"
me tls-scan-any-version loadgen/lg_wire.c "s->hdr[0] > 24 || s->hdr[1] != 3 ||" "s->hdr[0] > 24 ||" \
  "test_lg_wire" "test_lg_wire"
me tls-scan-body-always-ends loadgen/lg_wire.c '            body = s->body_left == 0;' '            body = 1;' \
  "test_lg_wire" "test_lg_wire"
me capture-tls-kernel-again loadgen/lg_capture.c '    if (o->receive_clock != LG_RXC_WIRE) return 0;' \
  '    if (o->receive_clock != LG_RXC_WIRE) return 0;
    if (strncasecmp(o->base_url, "https:", 6) == 0) {
        o->receive_clock = LG_RXC_KERNEL;
        return 0;
    }' "loadgen simserver" "lg_e2e_wire_tls"
me worker-tls-plaintext-looked-up loadgen/lg_worker.c '    if (w->tls_target ? !w->tls_read_ended' '    if (0 ? !w->tls_read_ended' \
  "loadgen simserver" "lg_e2e_wire_tls"
# the wire clock's bound sockets closed without a reset (left in TIME_WAIT)
me wire-ports-time-wait loadgen/lg_worker.c '        setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);' \
  '        (void)lg;' "loadgen simserver" "lg_e2e_wire_capture"
# a schedule the worker cannot make taken for a lack of memory (exit 1, not 2)
m worker-schedule-exit-1 loadgen/lg_worker.c '            return 2;' '            return 1;'
# loadgen/lg_capture.c: the client's data taken by PSH again (a long
# request's first segments untimed), or IPv4 only (no departure over ::1).
m capture-psh-only loadgen/lg_capture.c '(ip and ip[2:2] - ((ip[0] & "
                     "0xf) << 2) - ((tcp[12] & 0xf0) >> 2) > 0)' '(ip and tcp[tcpflags] & tcp-push "
                     "!= 0)'
m capture-ipv4-only loadgen/lg_capture.c ' or (ip6 and ip6[6] == 6 and "
                     "ip6[4:2] - ((ip6[52] & 0xf0) >> 2) > 0))",' ')",'
# --save-token-times: the delivery clock's time kept instead of the token's,
# the list not reset between requests, rounded rather than floored, the
# first entry's comma, the export's gaps from the first token, the join's
# line bound, the cap alone accepted, the times not kept by the export.
me tt-delivery-clock loadgen/lg_worker.c 'if (w->tt_cap) token_time(w, r, tok.t_ns);' \
  'if (w->tt_cap) token_time(w, r, tok.tu_ns);' "loadgen simserver" "lg_e2e_token_times"
m tt-not-reset loadgen/lg_worker.c '    r->tt_n = r->tt_dropped = 0;' '    r->tt_dropped = 0;'
m tt-rounded loadgen/lg_worker.c 'r->tt_us[r->tt_n++] = d >= 0 ? d / 1000 : -((999 - d) / 1000); /* floor */' \
  'r->tt_us[r->tt_n++] = d >= 0 ? (d + 500) / 1000 : -((999 - d) / 1000); /* floor */'
m tt-leading-comma loadgen/lg_record.c '        if (i) buf[n++] = '"','"';' '        buf[n++] = '"','"';'
m tt-itls-from-first loadgen/lg_export_vllm.c '(double)(r->token_times_us[j] - r->token_times_us[j - 1]) / 1e6);' \
  '(double)(r->token_times_us[j] - r->token_times_us[0]) / 1e6);'
m tt-join-short-lines loadgen/lg_outputs.c 'out->line_max = lg_record_line_max(o->save_token_times ? o->token_times_cap : 0);' \
  'out->line_max = lg_record_line_max(0);'
me tt-cap-alone loadgen/lg_cli.c '    if (o->token_times_cap_given && !o->save_token_times) {' \
  '    if (0 && o->token_times_cap_given && !o->save_token_times) {' "test_lg_cli" "test_lg_cli"
m tt-export-drops-times loadgen/lg_xrecs.c '        x->times->n += (size_t)rec.n_token_times;' ''
# scripts/report_html.sh: the server plot draws the waiting max at the
# mean's height (its value and tooltip right).
me report-server-plot-mean scripts/report_html.sh 'y: (if $k == "kv_max" then .[$k] * 100 else .[$k] end)' \
  'y: (if $k == "kv_max" then .[$k] * 100 else .waiting_mean end)' "loadgen simserver" "e2e_report_html"
# scripts/lib/report_html.jq: gnuplot missing blamed on the run's data again.
me report-nognuplot-blames-data scripts/lib/report_html.jq '| (if ($drawn | length) == 0 then' \
  '| (if ($drawn | length) == 0 or ($svgs | length) == 0 then' "loadgen simserver" "e2e_report_html"
# scripts/lib/pick_k.sh: the main job's k without a cost model, above the
# cores, and the events-per-request scale.
me pick-no-fallback scripts/lib/pick_k.sh '  if [ -z "$PICK_K" ]; then' '  if false; then' "loadgen" "e2e_main_pick"
me pick-above-cores scripts/lib/pick_k.sh 'select(.safe_rho != null and .workers <= $n) | .workers' \
  'select(.safe_rho != null) | .workers' "loadgen" "e2e_main_pick"
me pick-scale-tokens-only scripts/lib/pick_k.sh '($len + ($e - $l))' '$len' "loadgen" "e2e_main_pick"
# simserver/sim_api.c: stream_options taken on a request that does not stream.
m sim-stream-options-no-stream simserver/sim_api.c 'if (so->child && !out->stream)' 'if (so->child && 0)'
# loadgen/lg_report.c: a closed loop's predicted rho from one request too many
# (2% over at 50 requests: a factor-of-2 check of it did not see it).
me report-closed-rho-off loadgen/lg_report.c '            pr = r->cert.busy_per_request_us * 1e-6 * (double)st->completed /' \
  '            pr = r->cert.busy_per_request_us * 1e-6 * (double)(st->completed + 1) /' "loadgen simserver" "lg_e2e_certificate"
# loadgen/lg_report.c: the stages' timeouts not named in the summary, or
# counted from another class.
me report-timeouts-unnamed loadgen/lg_report.c '    if (!r->total->fail_class[LG_FAIL_TIMEOUT]) return;' \
  '    return;' "loadgen simserver" "lg_e2e_faults"
me report-timeouts-other-class loadgen/lg_report.c 'uint64_t n = r->stages[i].stats->fail_class[LG_FAIL_TIMEOUT];' \
  'uint64_t n = r->stages[i].stats->fail_class[LG_FAIL_RESET];' "loadgen simserver" "lg_e2e_faults"
# calibrate --self-test on the real client: the injected cost paid twice
# per event, and a self_test_result whose "failed" is not its checks'.
me selftest-cost-twice loadgen/lg_worker.c '    spin_ns((int64_t)(us * 1000.0));' \
  '    spin_ns((int64_t)(us * 2000.0));' "loadgen simserver calibrate" "e2e_calibrate_selftest"
me selftest-json-failed-off calibrate/main.c '        cJSON_AddNumberToObject(st, "failed", fails);' \
  '        cJSON_AddNumberToObject(st, "failed", fails + 1);' "loadgen simserver calibrate" \
  "e2e_calibrate_selftest"
# calibrate --self-test's repeat of a cost that failed a check: never made,
# its first sweep's failures still counted, or its own failures ignored.
me selftest-no-repeat calibrate/main.c '        if (!fails || r->n_costs >= CAL_MAX_COSTS' \
  '        if (1 || r->n_costs >= CAL_MAX_COSTS' "calibrate" "e2e_calibrate_fake"
me selftest-superseded-counted calibrate/main.c '            f = 0;' '            (void)0;' "calibrate" \
  "e2e_calibrate_fake"
me selftest-repeat-ignored calibrate/main.c '        fails += f;' '        fails += c < r->n_planned ? f : 0;' \
  "calibrate" "e2e_calibrate_fake"
# The repeats judged against the first baseline, or no baseline measured again.
me selftest-repeat-old-baseline calibrate/main.c '    return &r->bl[r->repeat_of[c] >= 0 && r->n_bl > 1];' \
  '    return &r->bl[0];' "calibrate" "e2e_calibrate_fake"
me selftest-no-rebaseline calibrate/main.c '    if (r->n_costs == r->n_planned || cal_proc_interrupted() || r->dead) return;' \
  '    return;' "calibrate" "e2e_calibrate_fake"
# calibrate/cal_step.c: the host's readings in ns divided by the clock tick
# again, which made every busy host's whole share "other processes".
m host-other-ticks calibrate/cal_step.c '    double o = (busy_ns * 1e-9 - own_s) / (total_ns * 1e-9);' \
  '    double o = (busy_ns / 100 - own_s) / (total_ns / 100);'
m host-other-negative calibrate/cal_step.c '    *other = o > 0 ? o : 0;' '    *other = o;'
# loadgen/lg_sched.c: what is left of a worker's share at a stop
# (lg_sched_rest_for), by arithmetic for a count-bounded stage.
m rest-walks-counted-stages loadgen/lg_sched.c \
  '            if (st->duration_ns == 0 && (st->max_requests > 0 || (last && sp->max_requests > 0))) {' \
  '            if (0 && last) {'
m rest-owned-boundary loadgen/lg_sched.c 'return (first + n) / k + ((first + n) % k > w) - first / k - (first % k > w);' \
  'return (first + n) / k + ((first + n) % k >= w) - first / k - (first % k > w);'
m rest-session-part-round loadgen/lg_sched.c '        got += owned_in(lead, take, w, k, 0);' '        got += take;'
m rest-ignores-cap loadgen/lg_sched.c '                if (sp->max_requests > 0 && sp->max_requests - s->index < m)' \
  '                if (0)'
m rest-walk-unbounded loadgen/lg_sched.c '        if (walked++ >= max_walk) { /* one more than the walk may count */' \
  '        if (walked++ < 0) {'
me rest-drops-fetched loadgen/lg_worker.c '        stats_of(w, w->next.stage)->not_dispatched++;
        w->have_next = 0;
    }
    int64_t *left' '        w->have_next = 0;
    }
    int64_t *left' "loadgen simserver" "rel_plan_range"
me rest-always-partial loadgen/lg_worker.c '        if (!whole && s >= w->next.stage) st->not_dispatched_partial = 1;' \
  '        if ((!whole || 1) && s >= w->next.stage) st->not_dispatched_partial = 1;' "loadgen simserver" "rel_plan_range"
me ramp-with-rate-accepted loadgen/lg_cli.c 'return BAD("cannot be combined with --request-rate (the ramp sets the rate, as vLLM'"'"'s)");' 'o->rate_given = 0;' "loadgen simserver" "lg_e2e_ramp"
me ramp-exponential-as-linear loadgen/lg_cli.c '    o->stages[0].ramp = (lg_ramp)o->ramp_up;' \
  '    o->stages[0].ramp = LG_RAMP_LINEAR;' "loadgen simserver" "lg_e2e_ramp"
m ignored-params-not-summed simserver/sim_metrics.c 'out->ignored[p] += LOAD(m->ignored[p]);' \
  'out->ignored[p] = LOAD(m->ignored[p]);'
# simserver/sim_api.c: the parameters it does not honour
m ignored-one-not-noop simserver/sim_api.c 'return j->valuedouble == 0 || (p == SIM_IGN_BEST_OF && j->valuedouble == 1);' \
  'return j->valuedouble == 0;'
# simserver's n, stop strings and logprobs, as vLLM answers them
m n-cap-boundary simserver/sim_api.c '    if (j->valuedouble > SIM_N_MAX)' '    if (j->valuedouble >= SIM_N_MAX)'
m stop-no-holdback simserver/sim_engine.c '    cs->hold = s->spec.include_stop_str ? 0 : cs->context;' '    cs->hold = 0;'
m stop-search-new-text-only simserver/sim_engine.c '        uint32_t from = before + 1 > len ? before + 1 - len : 0;' \
  '        uint32_t from = before;'
m n-holds-one-slot simserver/sim_engine.c '    e->n_running += n;' '    e->n_running++;'
m chat-final-stop-reason-dropped simserver/sim_render.c '    if (full || !r->chat || c->finish) {' '    if (full || !r->chat) {'
m logprob-chosen-not-first simserver/sim_model.c '    double p0 = 0.5 + 0.5 * unit(h);' '    double p0 = 0.5 * unit(h);'
me usage-one-choice simserver/sim_server.c \
  'sim_render_usage(o, &s->rc, es->spec.prompt_tokens, sim_stream_completion_tokens(es),' \
  'sim_render_usage(o, &s->rc, es->spec.prompt_tokens, es->emitted,' "simserver" "e2e_sim_sampling"
m ignored-empty-not-noop simserver/sim_api.c 'if (cJSON_IsArray(j) || cJSON_IsObject(j)) return j->child == NULL;' \
  'if (cJSON_IsArray(j)) return j->child == NULL;'
me ignored-not-counted simserver/sim_server.c 'if (es->spec.ignored & (1u << p)) SIM_METRIC_ADD(w->m->ignored[p], 1);' \
  'if (es->spec.ignored & (2u << p)) SIM_METRIC_ADD(w->m->ignored[p], 1);' "simserver" "e2e_sim_metrics"
# simserver/sim_model.c
m load-factor-off-by-one simserver/sim_model.c \
  'return 1.0 + (c->time_factor_under_load - 1.0) * (double)(running - 1) /' \
  'return 1.0 + (c->time_factor_under_load - 1.0) * (double)running /'
m cache-counts-last-block simserver/sim_model.c 'int64_t countable = (n_tokens - 1) / bs;' \
  'int64_t countable = n_tokens / bs;'
m cache-evicts-newest simserver/sim_model.c 'i = c->lru_tail; /* evict' 'i = c->lru_head; /* evict'
m fault-rate-scale simserver/sim_model.c 'if (gsl_rng_uniform(rng) * 100.0 >= rate_pct)' \
  'if (gsl_rng_uniform(rng) * 10.0 >= rate_pct)'
m echo-stop-boundary simserver/sim_model.c 's->prompt_tokens < s->max_tokens) {' 's->prompt_tokens <= s->max_tokens) {'
# calibrate/cal_rule.c
m rule-rate-cap-boundary calibrate/cal_rule.c 'return isfinite(p->rate) && p->rate > 0 && p->rate < bad_rate;' \
  'return isfinite(p->rate) && p->rate > 0 && p->rate <= bad_rate;'
m rule-saturated-caps-by-rho calibrate/cal_rule.c 'if (p[i].saturated && isfinite(p[i].rate) && p[i].rate > 0) {' \
  'if (0) {'
m cross-linear-in-rho calibrate/cal_rule.c \
  $'double x = xa + (budget - ya) / (yb - ya) * (xb - xa);\n    return x / (1.0 + x);' \
  $'(void)xa;\n    (void)xb;\n    return rho_a + (budget - ya) / (yb - ya) * (rho_b - rho_a);'
m cross-means-not-bounds calibrate/cal_rule.c \
  'cross = cal_rule_cross(a->rho, a->delay_us + ea, b->rho, b->delay_us + eb, budget_us);' \
  'cross = cal_rule_cross(a->rho, a->delay_us, b->rho, b->delay_us, budget_us);'
m cross-not-applied calibrate/cal_rule.c '    out->safe_rho = cross;' '    out->safe_rho = best;'
m rule-model-below-measured calibrate/cal_rule.c 'model_rho < cross && model_rho > best' 'model_rho < cross'
m rule-over-only-confirmed calibrate/cal_rule.c 'if (i_over < 0 || p[i].rho < p[i_over].rho) i_over = i;' \
  'if (p[i].confirmed && (i_over < 0 || p[i].rho < p[i_over].rho)) i_over = i;'
m rule-over-highest calibrate/cal_rule.c 'if (i_over < 0 || p[i].rho < p[i_over].rho) i_over = i;' \
  'if (i_over < 0 || p[i].rho > p[i_over].rho) i_over = i;'
m rule-over-below-best calibrate/cal_rule.c '!(p[i].rho > best) ||' '!(p[i].rho != best) ||'
m rule-over-saturated calibrate/cal_rule.c '|| p[i].saturated || !isfinite(p[i].delay_us) ||' \
  '|| !isfinite(p[i].delay_us) ||'
m rule-over-no-delay calibrate/cal_rule.c '|| p[i].saturated || !isfinite(p[i].delay_us) ||' '|| p[i].saturated ||'
m rule-over-past-cap calibrate/cal_rule.c '!(p[i].rho <= bad) || ' ''
m rule-over-above-rate calibrate/cal_rule.c $' ||\n            !below_rate(&p[i], bad_rate))' ')'
m fit-crossing-dropped calibrate/cal_fit.c '    if (rule->over_rho > 0) {' '    if (0) {'
m cert-crossing-not-read calibrate/cal_cert.c 'p->crossing_over_rho = rb_json_num(c, "over_rho");' \
  'p->crossing_over_rho = NAN;'
m cert-crossing-written-always calibrate/cal_cert.c '    if (p->crossing_over_rho > 0) {' '    if (1) {'
# calibrate/cal_sweep.c
m within-no-transport calibrate/cal_rule.c 'double c = isfinite(transport_us) ? transport_us : 0;' 'double c = 0;'
m within-no-bar calibrate/cal_rule.c 'double err = isfinite(err_us) && err_us > 0 ? err_us : 0;' 'double err = 0;'
m within-saturated calibrate/cal_rule.c 'return !saturated && isfinite(delay_us) && delay_us - c + err <= budget_us;' \
  'return isfinite(delay_us) && delay_us - c + err <= budget_us;'
m within-negative-bar calibrate/cal_rule.c 'double err = isfinite(err_us) && err_us > 0 ? err_us : 0;' \
  'double err = isfinite(err_us) ? err_us : 0;'
m fill-saturation-only calibrate/cal_sweep.c \
  'return !cal_rule_within(s->overhead_mean_us, err_us, transport_us, s->saturated, budget_us);' \
  'return s->saturated;'
m fill-refuted-steers calibrate/cal_sweep.c \
  '(steps[i].request_rate > top || caps_for_fill(&steps[i], transport_us, budget_us)) &&' \
  '(steps[i].request_rate > 0 || caps_for_fill(&steps[i], transport_us, budget_us)) &&'
m fill-caps-unconfirmed calibrate/cal_sweep.c \
  'return s->saturated || (s->confirmed && cal_sweep_looks_bad(s, transport_us, budget_us));' \
  'return s->saturated || cal_sweep_looks_bad(s, transport_us, budget_us);'
m fill-saturated-no-cap calibrate/cal_sweep.c \
  'return s->saturated || (s->confirmed && cal_sweep_looks_bad(s, transport_us, budget_us));' \
  'return s->confirmed && cal_sweep_looks_bad(s, transport_us, budget_us);'
m fill-no-bars calibrate/cal_sweep.c '#define ERR_OF(i) (err ? err[i] : 0)' '#define ERR_OF(i) 0'
m aim-in-turn-dropped calibrate/cal_sweep.c 'if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i) i = n - 1;' \
  'if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i + 1) i = n - 1;'
m aim-in-turn-all-k calibrate/cal_sweep.c 'if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i) i = n - 1;' \
  'if (n - 1 < c->n_targets && n - 1 > i) i = n - 1;'
m retry-never-gives-up calibrate/cal_sweep.c 'return !r->stopped && tries < 2 && level_retries < nb;' \
  'return tries < 2 && level_retries < nb;'
m retry-never-resumes calibrate/cal_sweep.c '        r->stopped = 0;' ''
m retry-first-try-futile calibrate/cal_sweep.c 'if (tries > 0 && ++r->futile >= CAL_RETRY_FUTILE && !r->stopped) {' \
  'if (++r->futile >= CAL_RETRY_FUTILE && !r->stopped) {'
m fill-never-past-deadline calibrate/cal_sweep.c 'return !(limit && fills == 0);' 'return 1;'
m fill-past-deadline-twice calibrate/cal_sweep.c 'return !(limit && fills == 0);' 'return !(limit && fills <= 1);'
m secant-uncapped calibrate/cal_sweep.c 'if (secant > want) want = secant < 1.25 * want ? secant : 1.25 * want;' \
  'if (secant > want) want = secant;'
m aim-skip-for-one-worker calibrate/cal_sweep.c 'if (last->workers > 1 && closer > clear) clear = closer;' \
  'if (closer > clear) clear = closer;'
m aim-skip-dropped calibrate/cal_sweep.c 'if (last->workers > 1 && closer > clear) clear = closer;' '(void)closer;'
m aim-skip-by-ratio calibrate/cal_sweep.c 'double closer = 1.0 - (1.0 - rho) / 1.1;' 'double closer = 1.25 * rho;'
m repeat-saturated-always calibrate/cal_sweep.c '    if (j < 0 || !view[j].saturated) return 1;' '    return 1;'
m repeat-saturated-never calibrate/cal_sweep.c '    if (j < 0 || !view[j].saturated) return 1;' '    return j < 0 || !view[j].saturated;'
m repeat-stall-not-repeated calibrate/cal_sweep.c '    if (cal_rule_within(view[j].overhead_mean_us, 0, transport_us, 0, budget_us)) return 1;' ''
m repeat-ignores-within-above calibrate/cal_sweep.c 'if (!(view[i].request_rate < rate)) return 1; /* within at or above it */' \
  'if (!(view[i].request_rate < rate)) continue;'
m repeat-within-by-mean calibrate/cal_sweep.c 'err ? err[i] : 0, transport_us,' '0, transport_us,'
m repeat-no-transport calibrate/cal_sweep.c 'err ? err[i] : 0, transport_us,' 'err ? err[i] : 0, 0,'
m pool-repeat-not-joined calibrate/cal_sweep.c '            steps[i].level = level;' '            (void)0;'
m pool-repeat-any-k calibrate/cal_sweep.c 'if (steps[i].workers == k && (steps[i].level == level || steps[i].level == repeat)) {' \
  'if (steps[i].level == level || steps[i].level == repeat) {'
m pool-repeat-not-confirmed calibrate/cal_sweep.c $'    if (bad)\n        for (int i = 0; i < n; i++)' $'    if (0)\n        for (int i = 0; i < n; i++)'
m pool-repeat-no-bar calibrate/cal_sweep.c 'double e = cal_level_confirm_err_us(lv, m, j, budget_us);' 'double e = 0;'
m pool-repeat-not-marked calibrate/cal_sweep.c '            steps[i].repeated = 1;' '            (void)0;'
m cert-repeated-unsaid calibrate/cal_cert.c '        cJSON_AddBoolToObject(e, "repeated", l->repeated);' ''
m level-repeated-dropped calibrate/cal_level.c '        out[j].repeated |= s->repeated;' ''

# loadgen/lg_merge.c
m merge-used-counts-stages loadgen/lg_merge.c 'if (m->stages[s]->dispatched) m->n_used = s + 1;' \
  'if (m->stages[s]->dispatched) m->n_used++;'
m merge-samples-no-cut loadgen/lg_merge.c 'while (c < n && all[c].index == all[0].index + (int64_t)c)' \
  'while (c < n)'
m merge-samples-sorted-backwards loadgen/lg_merge.c 'return (x->index > y->index) - (x->index < y->index);' \
  'return (x->index < y->index) - (x->index > y->index);'

# calibrate/cal_level.c: a level's figures over its batches
m level-saturated-counts calibrate/cal_level.c 'return !s->saturated || l->n_saturated == total[j];' 'return 1;'
m level-majority-off calibrate/cal_level.c 'l->saturated = 2 * l->n_saturated > total[j];' \
  'l->saturated = l->n_saturated > 0;'
m level-err-z-not-t calibrate/cal_level.c 'l->delay_err_us = cal_t95(l->n - 1) * l->delay_sd_us / sqrt(nn);' \
  'l->delay_err_us = 1.96 * l->delay_sd_us / sqrt(nn);'
m level-pooled-keeps-bad calibrate/cal_level.c 'v->request_rate >= bad_rate || v->delay_us > over) continue;' \
  'v->delay_us > over) continue;'
m level-pooled-bad-rate-open calibrate/cal_level.c 'v->request_rate >= bad_rate ||' 'v->request_rate > bad_rate ||'
m level-pooled-keeps-saturated calibrate/cal_level.c '    return !v->saturated && isfinite(v->delay_us)' \
  '    return isfinite(v->delay_us)'
m level-pooled-keeps-over-budget calibrate/cal_level.c '|| v->delay_us > over) continue;' '|| v->delay_us > over + INFINITY) continue;'
m level-pooled-over-edge calibrate/cal_level.c '|| v->delay_us > over) continue;' '|| v->delay_us >= over) continue;'
# a repeat confirming a level bad with a bar from a pool of too few batches
# (t(2) = 4.30), or with the threshold one degree of freedom lower
m level-confirm-thin-pool calibrate/cal_level.c '    if (pool(l, n, budget_us, &cv2) < CAL_CONFIRM_MIN_DOF) return 0;' \
  '    if (pool(l, n, budget_us, &cv2) < 0) return 0;'
m level-confirm-dof-edge calibrate/cal_level.c '    if (pool(l, n, budget_us, &cv2) < CAL_CONFIRM_MIN_DOF) return 0;' \
  '    if (pool(l, n, budget_us, &cv2) < CAL_CONFIRM_MIN_DOF - 1) return 0;'
m level-pooled-lowest-of-all calibrate/cal_level.c 'if (poolable(&l[i]) && l[i].delay_us < lowest)' 'if (l[i].delay_us < lowest)'

# loadgen/lg_cert.c: the plan's predicted rho against the certificate
m cert-rho-not-per-worker loadgen/lg_cert.c 'return rate / k * lg_cert_busy_us(c, k, w) * 1e-6;' \
  'return rate * lg_cert_busy_us(c, k, w) * 1e-6;'
m cert-boundary-refused loadgen/lg_cert.c 'd->ok = rho <= e->safe_rho;' 'd->ok = rho < e->safe_rho;'
m cert-drops-event-cost loadgen/lg_cert.c \
  'return a_req + deliveries * c->per_delivery_us + events * c->per_event_us;' \
  'return a_req + deliveries * c->per_delivery_us;'
# the terms older certificates lack: per request, plain responses, the
# reference's callbacks beyond its events, each k's scale
m cert-request-term-dropped loadgen/lg_cert.c \
  'double a_req = isfinite(c->per_request_us) ? c->per_request_us : 0;' 'double a_req = 0;'
m cert-plain-priced-as-streamed loadgen/lg_cert.c 'if (w->plain && isfinite(c->plain_callbacks_per_request) &&' \
  'if (0 && isfinite(c->plain_callbacks_per_request) &&'
m cert-plain-term-dropped loadgen/lg_cert.c \
  'double a_plain = isfinite(c->per_plain_response_us) ? c->per_plain_response_us : 0;' \
  'double a_plain = 0;'
m cert-headers-ignored loadgen/lg_cert.c 'double deliveries = fmax(1.0, events / epd + headers);' \
  'double deliveries = fmax(1.0, events / epd + 0 * headers);'
m cert-deliveries-unclamped loadgen/lg_cert.c 'double deliveries = fmax(1.0, events / epd + headers);' \
  'double deliveries = events / epd + headers;'
m cert-scale-ignored loadgen/lg_cert.c 'return busy_per_request_us(c, w) * scale;' \
  'return busy_per_request_us(c, w) * (0 * scale + 1);'
# common/rb_cert.c: the new optional figures are bounded
m cert-scale-zero-accepted common/rb_cert.c \
  'optional_num(e, path, "cost_scale", 0, 1, INFINITY, &c->cost_scale, err, errlen))' \
  'optional_num(e, path, "cost_scale", 0, 0, INFINITY, &c->cost_scale, err, errlen))'
m cert-request-cost-unread common/rb_cert.c \
  'optional_num(cm, "cost_model", "per_request_us", 0, 0, INFINITY, &out->per_request_us,' \
  'optional_num(cm, "cost_model", "per_request_us", -INFINITY, 0, INFINITY, &out->per_request_us,'
# calibrate/cal_fit.c: the cost model's terms enter only where told apart,
# negative ones leave, the references and each k's scale
m cost-request-always calibrate/cal_fit.c 'use[COST_REQ] = req_known && streamed >= 2 && epr_hi > 2.0 * epr_lo;' \
  'use[COST_REQ] = req_known && streamed >= 2;'
m cost-plain-without-request calibrate/cal_fit.c 'use[COST_PLAIN] = use[COST_REQ] && plain >= 1 && streamed >= 1;' \
  'use[COST_PLAIN] = plain >= 1 && streamed >= 1;'
m cost-first-valid-fit calibrate/cal_fit.c '        if (!(rss < best)) continue;' '        if (isfinite(best)) continue;'
m cost-unidentified-term calibrate/cal_fit.c '                if (!allowed[others[j]]) skip = 1;' '                (void)allowed;'
m cost-ref-counts-probes calibrate/cal_fit.c '        } else if (!s->probe) {' '        } else {'
m cost-plain-ref-events calibrate/cal_fit.c 'pe += s->event_rate_per_worker / req;' 'pe += s->callback_rate_per_worker / req;'
m cost-scale-counts-probes calibrate/cal_fit.c 'if (s->workers != k || s->saturated || s->probe || s->plain ||' \
  'if (s->workers != k || s->saturated ||'
m cost-scale-plain-term calibrate/cal_fit.c 'double busy = (isfinite(req) ? req * (r + (s->plain ? p : 0)) : 0) + cb * a +' \
  'double busy = (isfinite(req) ? req * (r + (s->plain ? 0 * p : 0)) : 0) + cb * a +'

# common/rb_timer.c: a timer armed 2 ms late.
m timer-2ms-late common/rb_timer.c 'if (deadline_ns < 1) deadline_ns = 1; /* 0 would disarm the timerfd */' \
  'deadline_ns += 2000000;'

# The event loops' timers, seen only from outside (tests/loadgen/e2e/lateness.sh):
# loadgen's dispatch armed 3 ms late or 1 ms early, simserver's pacer armed
# 2 ms late.
# A keep-alive request's departure from the connection's first byte (the
# request stream's boundary not moved): departures before their dispatch.
me departure-from-conn-start loadgen/lg_worker.c '        cr->req_lo = cr->sent;' '        ;' \
  "loadgen simserver" "lg_e2e_wire_capture"
me dispatch-3ms-late loadgen/lg_worker.c \
  'rb_timer_start_at(&w->dispatch, next_ns, on_dispatch_timer);' \
  'rb_timer_start_at(&w->dispatch, next_ns + 3000000, on_dispatch_timer);' "loadgen simserver" "lg_e2e_lateness"
me dispatch-1ms-early loadgen/lg_worker.c \
  '        if (intended > now) return intended;' \
  '        if (intended > now + 1000000) return intended;' "loadgen simserver" "lg_e2e_lateness"
me pacer-2ms-late simserver/sim_server.c 'rb_timer_start_at(&w->pace, next, w->pace.cb);' \
  'rb_timer_start_at(&w->pace, next + 2000000, w->pace.cb);' "loadgen simserver" "lg_e2e_lateness"
me watchdog-kills-early loadgen/lg_fleet_fork.c \
  'int64_t kill_at = p->end_deadline_ns ? p->end_deadline_ns + 2000000000LL : 0;' \
  'int64_t kill_at = p->end_deadline_ns ? p->end_deadline_ns - 3000000000LL : 0;' "loadgen simserver" "lg_e2e_rel_watchdog"
me warmup-cap-ignored loadgen/lg_warmup.c \
  'int cap = o->max_concurrency > 0 ? o->max_concurrency : o->num_warmups;' \
  'int cap = o->num_warmups;' "loadgen simserver" "lg_e2e_warmup"
me warmup-failures-counted-ok loadgen/lg_warmup.c \
  'if (msg->data.result == CURLE_OK && http >= 200 && http < 300) {' \
  'if (msg->data.result == CURLE_OK) {' "loadgen simserver" "lg_e2e_warmup"
# TLS (tests/loadgen/e2e/tls.sh): the options not applied to the requests,
# the warm-ups or the scrape; a refused certificate classed other; an
# unreadable --ca-cert not refused.
me tls-requests-default loadgen/lg_worker.c '    lg_tls_apply(e, &w->tls);' \
  '    ;' "loadgen simserver" "lg_e2e_tls"
me tls-warmups-default loadgen/lg_warmup.c '    lg_tls tls = LG_TLS_OF(o);' \
  '    lg_tls tls = {.insecure = 0};' "loadgen simserver" "lg_e2e_tls"
me tls-scrape-default loadgen/lg_scrape.c '    lg_tls_apply(e, &s->tls);' \
  '    ;' "loadgen simserver" "lg_e2e_tls"
me tls-no-client-cert loadgen/lg_tls.h '    if (t->client_cert && t->client_cert[0]) {' '    if (0) {' \
  "loadgen simserver" "lg_e2e_tls"
me tls-key-alone-accepted loadgen/lg_cli.c '    if (o->client_key[0] && !o->client_cert[0]) {' '    if (0) {' \
  "loadgen simserver" "lg_e2e_tls"
me tls-kernel-stamps-exact loadgen/lg_worker.c '    if (!w->tls_target) st->rx_exact_tokens += exact;' \
  '    st->rx_exact_tokens += exact;' "loadgen simserver" "lg_e2e_tls"
me tls-class-other loadgen/lg_worker.c '        return LG_FAIL_TLS;' '        return LG_FAIL_OTHER;' \
  "loadgen simserver" "lg_e2e_tls"
me tls-ca-cert-unread loadgen/lg_cli.c 'FILE *f = fopen(files[i][1], "r");' 'FILE *f = fopen("/dev/null", "r");' \
  "loadgen simserver" "lg_e2e_tls"
me idle-cut-early simserver/sim_server.c 'if (!c->deadline_ns || now < c->deadline_ns) continue;' \
  'if (!c->deadline_ns || now < c->deadline_ns - 100000000) continue;' "simserver" "e2e_sim_faults"

# loadgen/lg_dataset.c, lg_body.c: token-id prompts
m ids-past-vocab loadgen/lg_dataset.c 'gsl_rng_uniform_int(r, (unsigned long)vocab));' \
  'gsl_rng_uniform_int(r, (unsigned long)vocab) + 1);'
m ids-comma-dropped loadgen/lg_body.c 'if (!in_word && any) rb_buf_add(b, ",", 1);' \
  'if (!in_word && any) rb_buf_add(b, " ", 1);'
m ids-as-text loadgen/lg_body.c '        if (o->token_ids)' '        if (0)'

# loadgen/lg_dataset.c: Inference Perf's distributions
m custom-own-output-ignored loadgen/lg_custom.c 'want = (int32_t)ot->valuedouble;' 'want = 1;'
m custom-max-n-off-by-one loadgen/lg_custom.c 'if (!rc && spec->max_n && out->n > spec->max_n) {' \
  'if (!rc && spec->max_n && out->n > spec->max_n + 1) {'
m custom-shuffle-ignored loadgen/lg_custom.c 'if (!rc && spec->shuffle && lg_dataset_shuffle(' 'if (!rc && 0 && lg_dataset_shuffle('
m prefix-not-counted-per-request loadgen/lg_dataset.c '    out->input_tokens += spec->prefix_len;' ''
m prefix-not-counted-in-pool loadgen/lg_dataset.c '        p->input_tokens += spec->prefix_len;' ''
m ip-no-min-clip loadgen/lg_dataset.c '    if (x < d->min) x = d->min;' ';'
m ip-no-max-clip loadgen/lg_dataset.c '    if (x > d->max) x = d->max;' ';'
m ip-sd-ignored loadgen/lg_dataset.c 'x = d->mean + gsl_ran_gaussian(r, d->std_dev);' 'x = d->mean;'
m ip-uniform-short loadgen/lg_dataset.c 'x = d->min + gsl_rng_uniform(r) * (double)(d->max - d->min);' \
  'x = d->min + gsl_rng_uniform(r) * (double)(d->max - d->min - 1);'

# loadgen/lg_dataset.c: ShareGPT's filters as vLLM's
m sgpt-prompt-max-boundary loadgen/lg_dataset.c 'in <= 1024 &&' 'in < 1024 &&'
m sgpt-sum-unchecked loadgen/lg_dataset.c 'in + out <= 2048);' 'in + out <= 4096);'
m sgpt-no-shuffle loadgen/lg_dataset.c '        size_t j = gsl_rng_uniform_int(r, i + 1);' '        size_t j = i;'

# common/rb_tok.c: the BPE merge order, the pairs a merge makes, byte
# fallback, the UTF-8 cleaning
m tok-heap-order common/rb_tok.c 'if (q->rank < c.rank || (q->rank == c.rank && q->pos < c.pos)) break;' \
  'if (q->rank > c.rank || (q->rank == c.rank && q->pos < c.pos)) break;'
m tok-left-pair-dropped common/rb_tok.c 'if (l->prev >= 0 && try_pair(t, l->prev)) return -ENOMEM;' ';'
m tok-no-byte-fallback common/rb_tok.c 'int all = t->byte_fallback;' 'int all = 0;'
m tok-truncated-utf8-kept common/rb_tok.c 'if (got == need) {' 'if (got >= 1) {'

# loadgen/lg_meter.c: the send window, each stage's share of the loop and
# the host, the cut at a stage change, the split of a token's delays
m meter-callback-outside-window loadgen/lg_meter.c $'    if (!m->in_window) return;\n    double dt' '    double dt'
m meter-sumsq-linear loadgen/lg_meter.c 'm->svc_sumsq += dt * dt;' 'm->svc_sumsq += dt;'
m meter-event-outside-window loadgen/lg_meter.c 'if (m->in_window) m->events++;' 'm->events++;'
m meter-idle-not-delta loadgen/lg_meter.c 'st->loop_idle_ns += loop_idle_ns - m->at_idle_ns;' 'st->loop_idle_ns += loop_idle_ns;'
m meter-cut-svc-not-restarted loadgen/lg_meter.c 'm->at_callbacks = m->callbacks;' ';'
m meter-cut-host-not-restarted loadgen/lg_meter.c '    m->at = *h;' ';'
m meter-cut-clock-not-restarted loadgen/lg_meter.c '    m->at_ns = now_ns;' ';'
m meter-run-delay-unknown-start loadgen/lg_meter.c 'if (h->run_delay_ns >= 0 && m->at.run_delay_ns >= 0)' 'if (h->run_delay_ns >= 0)'
m meter-closes-no-stage loadgen/lg_meter.c 'if (m->stage >= 0 && closing) {' 'if (closing) {'
m meter-window-idle-from-stage loadgen/lg_meter.c 'slot->idle_ns = loop_idle_ns - m->idle_at_open_ns;' \
  'slot->idle_ns = loop_idle_ns - m->at_idle_ns;'
m meter-window-nivcsw-absolute loadgen/lg_meter.c 'slot->nivcsw = h->nivcsw - m->nivcsw_at_open;' 'slot->nivcsw = h->nivcsw;'
m meter-end-twice loadgen/lg_meter.c $'    if (!m->in_window) return 0;\n' ''
m tok-max-gap-is-last loadgen/lg_meter.c 'if (gap > c->max_gap_ns) c->max_gap_ns = gap;' 'c->max_gap_ns = gap;'
m tok-itl-u-mixes-clocks loadgen/lg_meter.c 'LG_H_ITL_U, tu - c->last_u_ns);' 'LG_H_ITL_U, tu - c->last_ns);'
m tok-stamp-chain-unbroken loadgen/lg_meter.c 'c->last_stamp_ns = 0; /* a token without a stamp breaks the chain */' ';'
m tok-ttft-s-not-first loadgen/lg_meter.c '    else if (c->tokens == 1)' '    else'
m tok-processing-without-pickup loadgen/lg_meter.c 'if (tok->read_kind != LG_RX_DELIVERY && tok->entry_ns)' 'if (tok->entry_ns)'
m tok-wire-as-user loadgen/lg_meter.c 'if (tok->kind != LG_RX_WIRE && tok->kind != LG_RX_KERNEL) {' 'if (tok->kind != LG_RX_KERNEL) {'
m tok-wire-not-exact loadgen/lg_meter.c '        st->rx_exact_tokens++;' ';'
m tok-pickup-without-entry loadgen/lg_meter.c 'if (tok->entry_ns) lg_stats_record_ns(st, LG_H_PICKUP' 'if (1) lg_stats_record_ns(st, LG_H_PICKUP'
m tok-server-send-from-delivery loadgen/lg_meter.c 'LG_H_SERVER_SEND, t - tok->stamp_ns);' 'LG_H_SERVER_SEND, tu - tok->stamp_ns);'
# common/rb_host.c: /proc/stat's steal and idle fields
m host-steal-field common/rb_host.c 'r->steal_ns = (int64_t)(v[7] * ns);' 'r->steal_ns = (int64_t)(v[6] * ns);'
m host-idle-without-iowait common/rb_host.c 'r->idle_ns = (int64_t)((v[3] + v[4]) * ns);' 'r->idle_ns = (int64_t)(v[3] * ns);'
# common/rb_host.c: CPU lists (a range's last CPU, ranges written back) and
# the per-CPU lines calibrate's placement reads (iowait is not busy)
m cpu-list-range-short common/rb_host.c '        for (unsigned long c = a; c <= b; c++)' \
  '        for (unsigned long c = a; c < b; c++)'
m cpu-list-no-ranges common/rb_host.c '        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))' \
  '        while (0 && CPU_ISSET(e + 1, set))'
m percpu-iowait-busy common/rb_host.c '    *busy = t - (v[3] + v[4]);' '    *busy = t - v[3];'
# calibrate/cal_proc.c: the placement (the simulator on the busiest allowed
# CPU, only with a CPU to spare, the workers on the others, an unread CPU
# idle)
m place-not-busiest calibrate/cal_proc.c '        if (v < least) {' '        if (v != least) {'
m place-without-spare calibrate/cal_proc.c '    if (k < 1 || CPU_COUNT(allowed) < k + 1) return -1;' \
  '    if (k < 1 || CPU_COUNT(allowed) < k) return -1;'
m place-workers-with-sim calibrate/cal_proc.c '    CPU_CLR(*sim_cpu, workers);' ''
m place-unread-busy calibrate/cal_proc.c 'idle[c] == idle[c] ? idle[c] : 1.0;' 'idle[c] == idle[c] ? idle[c] : 0.0;'
# calibrate/main.c: the placement as run (the simulator's nice apart, the
# workers' CPUs passed on, the simulator started again for a k that shares)
me place-sim-nice-19 calibrate/main.c '#define CAL_SIM_NICE_APART 10' '#define CAL_SIM_NICE_APART 19' \
  "calibrate" "e2e_calibrate_fake"
me place-workers-unbound calibrate/main.c '    if (!r->o.self_test && r->sim_apart) {' '    if (0) {' \
  "calibrate" "e2e_calibrate_fake"
me place-sim-kept calibrate/main.c '    if (r->o.self_test || want == r->sim_apart || r->sim_pid <= 0) return 0;' \
  '    if (1) return 0;' "calibrate" "e2e_calibrate_fake"
# calibrate/main.c: a placed k that certified nothing measured again shared
# (not at all, its placed batches left in the fits, its entry still
# "apart", the cost probe's k=1 placed again) and scripts/lib/placement.sh
# reading the entry's placement
me place-no-shared-again calibrate/main.c \
  '    if (!cal_fit_placed_doubtful(fitted ? &pk : NULL, r->both_why[i], sizeof r->both_why[i]))' \
  '    if (1)' "calibrate" "e2e_calibrate_fake"
me place-superseded-kept calibrate/main.c '        memmove(r->steps + first, r->steps + mid, (size_t)(r->n_steps - mid) * sizeof *r->steps);
        r->n_steps -= mid - first;' '' "calibrate" "e2e_calibrate_fake"
# calibrate: a placed k measured again shared when its certificate is low
# or capped, not only empty, and kept the sweep that certified more
# (cal_fit.c, test_cal_fit; main.c, e2e_calibrate_fake); the rule's count of
# levels capped (cal_rule.c); an empty batch read as idle and not counted
# (cal_step.c; main.c)
m placed-low-trusted calibrate/cal_fit.c '    if (p->safe_rho < CAL_PLACED_LOW_RHO) {' '    if (0) {'
m placed-capped-trusted calibrate/cal_fit.c '    if (p->n_capped > 0) {' '    if (0) {'
m placed-keep-shared calibrate/cal_fit.c 'return isfinite(placed_rho) && !(shared_rho > placed_rho);' \
  'return isfinite(placed_rho) && !(shared_rho > -1);'
m rule-capped-uncounted calibrate/cal_rule.c '            out->n_capped++;' '            ;'
m step-idle-is-error calibrate/cal_step.c '        if (m->events == 0 && !(m->callbacks > 0)) {' '        if (0) {'
me placed-low-ignored calibrate/main.c '    if (!cal_fit_placed_doubtful(fitted ? &pk : NULL, r->both_why[i], sizeof r->both_why[i]))' \
  '    if (fitted && isfinite(pk.safe_rho))' "calibrate" "e2e_calibrate_fake"
me placed-supersede-placed calibrate/main.c '    int from = keep_placed ? mid : first, to = keep_placed ? r->n_steps : mid;' \
  '    int from = first, to = mid;' "calibrate" "e2e_calibrate_fake"
me batch-empty-counted calibrate/main.c '        if (cal_step_empty(s)) {' '        if (0 && cal_step_empty(s)) {' "calibrate" "e2e_calibrate_fake"
m step-empty-failed-ignored calibrate/cal_step.c '    return s->n_meas > 0 && events == 0 && s->failed == 0;' \
  '    return s->n_meas > 0 && events == 0;'
me place-entry-apart calibrate/main.c 'k_placed(r, k) ? "apart"' \
  'r->apart && k < r->apart_n ? "apart"' "calibrate" "e2e_calibrate_fake"
me place-probe-placed calibrate/main.c '    int want = k_placed(r, k);' \
  '    int want = r->apart && k < r->apart_n;' "calibrate" "e2e_calibrate_fake"
me place-entry-unread scripts/lib/placement.sh '[ "$pl" != shared ] && ' '' "loadgen" "e2e_main_pick"
# loadgen/lg_worker.c: --worker-cpus parsed but not applied
me worker-cpus-unapplied loadgen/lg_worker.c '                              sched_setaffinity(0, sizeof set, &set) != 0))' \
  '                              0))' "loadgen simserver" "lg_e2e_modes"
# loadgen/lg_lora.c, lg_config.c, lg_body.c, lg_worker.c, lg_record.c: --lora-modules
# (the chooser, the split's parse, the config's, the body's model; the e2e
# test for what only a run shows)
me lora-values-not-joined loadgen/lg_lora.c "int k = o->lora_even && !strchr(val, '=') ? o->n_lora : 0," \
  'int k = 0,' "test_lg_lora" "test_lg_lora"
me lora-pick-shares-off loadgen/lg_lora.c 'if (u < cum) return i;' 'if (u < cum + 0.05) return i;' "test_lg_lora" "test_lg_lora"
me lora-pick-no-seed loadgen/lg_lora.c 'uint64_t h = mix(mix(seed ^ 0x4c6f52414c6f5241ULL) ^ (uint64_t)index);' 'uint64_t h = mix(mix(0x4c6f52414c6f5241ULL) ^ (uint64_t)index);' "test_lg_lora" "test_lg_lora"
me lora-zero-share-chosen loadgen/lg_lora.c 'if (o->lora_split[i] <= 0) continue;' 'if (o->lora_split[i] <= 0) return i;' "test_lg_lora" "test_lg_lora"
me lora-sum-loose loadgen/lg_lora.c 'if (fabs(sum - 1.0) > 1e-6) return' 'if (fabs(sum - 1.0) > 1e-1) return' "test_lg_lora" "test_lg_lora"
me lora-negative-accepted loadgen/lg_lora.c 'if (!isfinite(o->lora_split[i]) || o->lora_split[i] < 0)' 'if (!isfinite(o->lora_split[i]))' "test_lg_lora" "test_lg_lora"
me lora-even-split-off loadgen/lg_lora.c 'o->lora_split[i] = 1.0 / k;' 'o->lora_split[i] = 1.0 / (k + 1);' "test_lg_lora" "test_lg_lora"
me lora-config-sum-unchecked loadgen/lg_config.c '    if (fabs(sum - 1.0) > 1e-6) {' '    if (0) {' "test_lg_config" "test_lg_config"
me lora-config-negative loadgen/lg_config.c '!(v->valuedouble >= 0) || isinf(v->valuedouble))' '!(v->valuedouble >= -1) || isinf(v->valuedouble))' "test_lg_config" "test_lg_config"
me lora-body-model-kept loadgen/lg_body.c '    put_json_str(&b, model);' '    put_json_str(&b, "x");' "test_lg_lora" "test_lg_lora"
me lora-body-escape-unskipped loadgen/lg_body.c "end += body[end] == '\\\\' ? 2 : 1;" 'end += 1;' "test_lg_lora" "test_lg_lora"
me lora-body-not-sent loadgen/lg_worker.c '    body = lora_body(w, a->index, r, body, &len);' '    (void)lora_body;' "loadgen simserver" "lg_e2e_lora"
me lora-count-first-name loadgen/lg_worker.c 'st->lora_requests[lg_lora_pick(w->o, w->o->seed, a->index)]++;' 'st->lora_requests[0]++;' "loadgen simserver" "lg_e2e_lora"
me lora-record-no-model loadgen/lg_record.c 'if (n > 0 && (size_t)n < cap && r->model && strlen(r->model) < 128) {' 'if (0) {' "loadgen simserver" "lg_e2e_lora"
# loadgen/lg_run_report.c, lg_export_vllm.c: --save-detailed's vLLM arrays in
# the result (only a run shows them: the order of the JSONL, the values as
# the export's, left out with records lost or without the flag)
me sd-arrays-sorted loadgen/lg_run_report.c 'lg_xrecs_read(x, rc_->path, 0, err, sizeof err)' \
  'lg_xrecs_read(x, rc_->path, 1, err, sizeof err)' "loadgen simserver" "lg_e2e_jsonl"
me sd-arrays-no-errors loadgen/lg_run_report.c 'LG_XA_START_TIMES | LG_XA_ERRORS);' \
  'LG_XA_START_TIMES);' "loadgen simserver" "lg_e2e_jsonl"
me sd-arrays-no-start-times loadgen/lg_run_report.c 'LG_XA_START_TIMES | LG_XA_ERRORS);' \
  'LG_XA_ERRORS);' "loadgen simserver" "lg_e2e_jsonl"
me sd-arrays-start-times-as-ttfts loadgen/lg_run_report.c 'LG_XA_OUTPUT_LENS | LG_XA_TTFTS |' \
  'LG_XA_OUTPUT_LENS | LG_XA_START_TIMES |' "loadgen simserver" "lg_e2e_jsonl"
me sd-arrays-with-lost-records loadgen/lg_run_report.c '    else if (rc_->lost)' '    else if (0)' \
  "loadgen simserver" "lg_e2e_rel_diskfull"
me sd-arrays-without-save-detailed loadgen/lg_run_report.c '    if (j && o->save_detailed) {' \
  '    if (j && (o->save_detailed || 1)) {' "loadgen simserver" "lg_e2e_jsonl"
me sd-failure-ttft-kept loadgen/lg_export_vllm.c 'v = lg_xrec_ok(r) ? lg_xrec_value(r, LG_X_TTFT) : NAN;' \
  'v = lg_xrec_value(r, LG_X_TTFT);' "loadgen simserver" "lg_e2e_jsonl"
me sd-input-lens-from-output loadgen/lg_export_vllm.c 'fprintf(f, "%lld", (long long)r->input_tokens);' \
  'fprintf(f, "%lld", (long long)r->output_tokens);' "loadgen simserver" "lg_e2e_jsonl lg_e2e_vllm_bench"
me sd-itls-left-out loadgen/lg_run_report.c 'LG_XA_TTFTS | LG_XA_ITLS |' 'LG_XA_TTFTS |' \
  "loadgen simserver" "lg_e2e_token_times"
m sd-arrays-all-written loadgen/lg_export_vllm.c 'if (which & (1u << a)) array_out' 'array_out'
m sd-read-sorts-anyway loadgen/lg_xrecs.c 'if (rc == 0 && sort) lg_xrecs_sort(x);' 'if (rc == 0) lg_xrecs_sort(x);'
me sd-rewrite-drops-arrays loadgen/lg_run_report.c 'if (!txt || write_result(r->out.json, txt, arr)) exit_code = 1;' \
  'if (!txt || write_result(r->out.json, txt, NULL)) exit_code = 1;' "loadgen simserver" "rel_late_signal"
me sd-export-copies-arrays loadgen/lg_export_vllm.c ' || vllm_metric_key(k) || lg_export_array_key(k);' \
  ' || vllm_metric_key(k);' "loadgen simserver" "lg_e2e_token_times"

# --cpu-latency-us: the request never written (the host's limit stays the
# default), never held by the workers, a refusal reported as held, the
# certificate's limit not read, a sweep counting a batch that held none, the
# run's limit read as the least instead of the largest, the certificate's
# warning for a run that asks less, the default off
m cpulat-not-written common/rb_host.c '    if (write(fd, &v, sizeof v) != (ssize_t)sizeof v) {' \
  '    if (0 && write(fd, &v, sizeof v) != (ssize_t)sizeof v) {'
me cpulat-not-held loadgen/lg_worker.c '    if (o->cpu_latency_us >= 0) {' '    if (0) {' \
  "loadgen simserver" "lg_e2e_cpu_latency"
me cpulat-refusal-held loadgen/lg_report.c '        if (w->cpu_latency_held == 1) {' '        if (w->cpu_latency_held != -1) {' \
  "loadgen simserver" "lg_e2e_cpu_latency"
m cpulat-cert-unread common/rb_cert.c '    return optional_num(host, "host", "cpu_latency_us", 0, 0, 1e6, &out->cpu_latency_us, err,' \
  '    return out->cpu_latency_us = NAN, 0; (void)optional_num(host, "host", "cpu_latency_us", 0, 0, 1e6, &out->cpu_latency_us, err,'
m cpulat-step-none-counted calibrate/cal_step.c '        if (isnan(s[i].cpu_latency_us)) return NAN;' \
  '        if (isnan(s[i].cpu_latency_us)) continue;'
m cpulat-step-partial-held calibrate/cal_step.c '    return all > 0 && held == all && limit >= 0 ? limit : NAN;' \
  '    return all > 0 && held > 0 && limit >= 0 ? limit : NAN;'
m cpulat-cert-note-less loadgen/lg_cert.c '    if (run_cpu_latency_us >= 0 && run_cpu_latency_us <= c->cpu_latency_us) return;' \
  '    if (run_cpu_latency_us >= 0) return;'
me cpulat-default-off loadgen/lg_cli.c $'           "the report says whether it was held (off: do not ask)",\n           .def = "0"),' \
  $'           "the report says whether it was held (off: do not ask)",\n           .def = "off"),' \
  "test_lg_cli" "test_lg_cli"
# calibrate: a confirmed level over budget only by its error bar (its mean
# within) is undecided and caps nothing, in the rule (cal_rule.c), in the
# pool of error bars (cal_level.c) and in the table (cal_fit.c)
m undecided-caps calibrate/cal_rule.c '        if (cal_rule_undecided(&p[i], budget_us)) {' '        if (0) {'
m undecided-over-by-bar calibrate/cal_rule.c \
  '    return p->saturated || !cal_rule_within(p->delay_us, 0, NAN, 0, budget_us);' \
  '    return p->saturated || !cal_rule_within(p->delay_us, p->err_us, NAN, 0, budget_us);'
m undecided-saturated calibrate/cal_rule.c \
  '    return p->saturated || !cal_rule_within(p->delay_us, 0, NAN, 0, budget_us);' \
  '    return !cal_rule_within(p->delay_us, 0, NAN, 0, budget_us);'
m undecided-note-unsaid calibrate/cal_rule.c '    out->over_by_bar = !over(b, budget_us);' '    out->over_by_bar = 0;'
m undecided-level-unmarked calibrate/cal_fit.c '        l->undecided = cal_rule_undecided(&pts[np - 1], budget_us);' \
  '        l->undecided = 0;'
m undecided-unwritten calibrate/cal_cert.c '        cJSON_AddBoolToObject(e, "undecided", l->undecided);' \
  '        cJSON_AddBoolToObject(e, "undecided", 0);'
m pool-undecided-caps calibrate/cal_level.c \
  '        if (l[i].confirmed && (l[i].saturated || !(l[i].delay_us <= over)) &&' \
  '        if (l[i].confirmed &&'
m pool-saturated-uncapped calibrate/cal_level.c \
  '        if (l[i].confirmed && (l[i].saturated || !(l[i].delay_us <= over)) &&' \
  '        if (l[i].confirmed && (!(l[i].delay_us <= over)) &&'

# ---- the run ------------------------------------------------------------
list=0 anchors_only=0 prepare=0
want=()
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list=1; shift ;;
    --anchors) anchors_only=1; shift ;;
    --prepare) prepare=1; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "mutate.sh: unknown option '$1'" >&2; exit 2 ;;
    *) want+=("$1"); shift ;;
  esac
done
if [ "$list" -eq 1 ]; then
  for i in "${!IDS[@]}"; do printf '%s\t%s\n' "${IDS[$i]}" "${FILES[$i]}"; done
  exit 0
fi
sel=()
if [ ${#want[@]} -eq 0 ]; then
  sel=("${!IDS[@]}")
else
  for w in "${want[@]}"; do
    found=""
    for i in "${!IDS[@]}"; do [ "${IDS[$i]}" = "$w" ] && found=$i; done
    [ -n "$found" ] || { echo "mutate.sh: no mutant named '$w' (see --list)" >&2; exit 2; }
    sel+=("$found")
  done
fi

# read_file PATH: the file's bytes into $content (trailing newlines kept).
read_file() { content=$(cat "$1"; printf x); content=${content%x}; }
# occurrences TEXT NEEDLE: how many times NEEDLE occurs in TEXT.
# (Deleting every copy and dividing the bytes lost by the needle's length
# takes milliseconds; stripping one prefix at a time with ${text#*"$needle"}
# took 90 s over the 331 anchors, twice per CI run.)
occurrences() {
  local text=$1 needle=$2 rest
  rest=${text//"$needle"/}
  echo $(((${#text} - ${#rest}) / ${#needle}))
}

# Every anchor first, before anything is built: a drifted source fails loudly.
drift=0
for i in "${sel[@]}"; do
  f="$here/${FILES[$i]}"
  [ -f "$f" ] || { echo "mutate.sh: ${IDS[$i]}: no file ${FILES[$i]}" >&2; drift=1; continue; }
  [ -n "${CHECKS[$i]}" ] || tests_for "${FILES[$i]}" >/dev/null || exit 2
  read_file "$f"
  n=$(occurrences "$content" "${FROMS[$i]}")
  if [ "$n" -ne 1 ]; then
    echo "mutate.sh: ${IDS[$i]}: the text to replace occurs $n times in ${FILES[$i]} (must be exactly once):" >&2
    printf '  %s\n' "${FROMS[$i]}" >&2
    drift=1
  fi
done
[ "$drift" -eq 0 ] || { echo "mutate.sh: the sources have drifted from the mutants; update them" >&2; exit 2; }
[ "$anchors_only" -eq 0 ] || { echo "mutate.sh: every anchor matches exactly once (${#sel[@]} mutants)"; exit 0; }

# The tree's identity: a prepared folder serves only the tree it was built from.
tree_id() { { git -C "$here" rev-parse HEAD; git -C "$here" status --porcelain; } 2>/dev/null | cksum; }
if [ -n "${RHOBENCH_MUTATE_WORK:-}" ]; then
  work=$RHOBENCH_MUTATE_WORK
  mkdir -p "$work" || { echo "mutate.sh: RHOBENCH_MUTATE_WORK: cannot make '$work'" >&2; exit 2; }
  work=$(cd "$work" && pwd)
  if [ -e "$work/tree.id" ] && [ "$(cat "$work/tree.id")" = "$(tree_id)" ] && [ "$prepare" -eq 0 ]; then
    echo "mutate.sh: the builds prepared in $work are this tree's" >&2
  else
    [ ! -e "$work/tree.id" ] || echo "mutate.sh: $work was prepared for another tree: built afresh" >&2
    find "$work" -mindepth 1 -delete
  fi
  [ "$prepare" -eq 1 ] || trap 'rm -rf "$work"' EXIT
else
  [ "$prepare" -eq 0 ] || { echo "mutate.sh: --prepare needs RHOBENCH_MUTATE_WORK=DIR" >&2; exit 2; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/rhobench-mutate.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
# copy_tree DIR: the working tree's files (no .git, no build) into DIR, each
# with its own time (over a prepared copy of the same tree, make finds
# nothing to rebuild).
copy_tree() {
  mkdir -p "$1"
  tar -C "$here" --exclude=./.git --exclude='./build' --exclude='./build-*' --exclude=./out \
      --exclude='./rhobench-out*' -cf - . | tar -C "$1" -xf -
}
src="$work/src" build="$work/build"
copy_tree "$src"

targets=() checks=()
for i in "${sel[@]}"; do
  for t in $(targets_of "$i"); do
    [[ " ${targets[*]-} " == *" $t "* ]] || targets+=("$t")
  done
  for t in $(checks_of "$i"); do
    [[ " ${checks[*]-} " == *" $t "* ]] || checks+=("$t")
  done
done
regex() { local r; r=$(printf '%s|' "$@"); echo "^(${r%|})\$"; }

start=$(date +%s)
echo "mutate.sh: configuring and building ${targets[*]} in $build" >&2
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; echo "mutate.sh: configure failed" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
[ "$jobs" -le 2 ] || jobs=2
cmake --build "$build" -j "$jobs" --target "${targets[@]}" >"$work/build.log" 2>&1 ||
  { tail -n 30 "$work/build.log" >&2; echo "mutate.sh: the unmutated build failed" >&2; exit 2; }
# The baseline runs as README command 2 runs the tests (-j 2), which they
# are written to pass; run one at a time it took 4 minutes of CI.
# RHOBENCH_MUTATE_BASELINE=0 leaves it out: .ci/run sets it, because README
# command 2 ran every one of these tests on the same tree minutes before,
# and a failure there already stopped CI.
if [ "$prepare" -eq 0 ] && [ "${RHOBENCH_MUTATE_BASELINE:-1}" != 0 ]; then
  ctest --test-dir "$build" -R "$(regex "${checks[@]}")" -j "$jobs" --timeout 300 --output-on-failure \
    >"$work/baseline.log" 2>&1 ||
    { cat "$work/baseline.log" >&2; echo "mutate.sh: the unit tests fail without any mutant" >&2; exit 2; }
fi

# run_mutant I SRC BUILD JOBS: applies mutant I in SRC, rebuilds and runs its
# tests in BUILD, restores the file; its table row goes to $work/row.I and
# its result (killed, SURVIVED, DOES NOT BUILD) to $work/res.I.
run_mutant() {
  local i=$1 msrc=$2 mbuild=$3 mjobs=$4 id=${IDS[$1]} file=${FILES[$1]} t0 t1 orig result lib=""
  local -a tests builds
  t0=$(date +%s%N)
  read -r -a tests <<<"$(checks_of "$i")"
  read -r -a builds <<<"$(targets_of "$i")"
  is_e2e "$i" || lib=$(library_of "$mbuild" "$file")
  [ -z "$lib" ] || save_state "$msrc" "$mbuild" "$file" "$lib"
  read_file "$msrc/$file"
  orig=$content
  printf '%s' "${orig/"${FROMS[$i]}"/"${TOS[$i]}"}" >"$msrc/$file"
  local log="$work/$id.log"
  if ! build_mutant "$mbuild" "$mjobs" "$lib" "${builds[@]}" >"$log" 2>&1; then
    result="DOES NOT BUILD"
    grep -m 3 -E 'error' "$log" >&2 || true
  elif ctest --test-dir "$mbuild" -R "$(regex "${tests[@]}")" --timeout 300 >>"$log" 2>&1; then
    result="SURVIVED"
  else
    result="killed"
  fi
  if [ -n "$lib" ]; then
    restore_state "$msrc" "$mbuild" "$file" "$lib" "${builds[@]}"
  else
    printf '%s' "$orig" >"$msrc/$file"
    # A unit mutant that took the long way is rebuilt unmutated at once:
    # the next one may take the short way, which would not rebuild it.
    is_e2e "$i" || cmake --build "$mbuild" -j "$mjobs" --target "${builds[@]}" >>"$log" 2>&1 || true
  fi
  t1=$(date +%s%N)
  echo "$result" >"$work/res.$i"
  printf '| %s | %s | %s | %s | %s |\n' "$id" "$file" "${tests[*]}" "$result" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')" >"$work/row.$i"
}

# The unit-test mutants' short way. `cmake --build --target T` checks the
# whole build system and every dependency of T (half a second a mutant,
# 326 times a run) before it compiles the one file that changed. When the
# mutated file is a C source compiled into exactly one static library
# (loadgen/lg_meter.c into loadgen/liblg.a), make's LIB/fast and TEST/fast
# targets rebuild that object, that archive and the tests, and nothing is
# checked that cannot have changed. Afterwards the source, the object and
# the archive are put back as they were, times and all, and the tests'
# programs are deleted: the next mutant's build finds the tree as the
# unmutated build left it, and relinks every test it runs. Any other file
# (a header, a program's own source) takes the long way.
# library_of BUILD FILE: prints "DIR/CMakeFiles/LIB.dir/NAME.o DIR/libLIB.a
# LIB" for FILE's object, archive and target, or nothing.
library_of() {
  local b=$1 f=$2 d n objs
  [[ "$f" == *.c ]] || return 0
  d=$(dirname "$f") n=$(basename "$f")
  mapfile -t objs < <(find "$b" -path '*/CMakeFiles/*' -name "$n.o")
  [ "${#objs[@]}" -eq 1 ] || return 0
  case "${objs[0]}" in "$b/$d/CMakeFiles/"*.dir/"$n.o") ;; *) return 0 ;; esac
  local t=${objs[0]%/*}
  t=${t##*/} t=${t%.dir}
  [ -f "$b/$d/lib$t.a" ] || return 0
  echo "${objs[0]} $b/$d/lib$t.a $t"
}
# save_state SRC BUILD FILE "OBJ ARCHIVE LIB": copies, times kept.
save_state() {
  local obj ar t
  read -r obj ar t <<<"$4"
  cp -p "$1/$3" "$1/$3.unmutated" && cp -p "$obj" "$obj.unmutated" && cp -p "$ar" "$ar.unmutated"
}
restore_state() {
  local msrc=$1 mbuild=$2 file=$3 obj ar t target
  read -r obj ar t <<<"$4"
  shift 4
  mv -f "$msrc/$file.unmutated" "$msrc/$file"
  mv -f "$obj.unmutated" "$obj"
  mv -f "$ar.unmutated" "$ar"
  for target in "$@"; do
    find "$mbuild/tests" -type f -name "$target" -perm -u+x -delete
  done
}
# build_mutant BUILD JOBS "OBJ ARCHIVE LIB"|"" TARGET...
build_mutant() {
  local b=$1 j=$2 lib=$3 obj ar t target
  shift 3
  [ -n "$lib" ] || { cmake --build "$b" -j "$j" --target "$@"; return; }
  read -r obj ar t <<<"$lib"
  make -s -C "$b" "$t/fast" || return
  for target in "$@"; do make -s -C "$b" "$target/fast" || return; done
}

# Two lanes on two cores: the mutants alternate between this tree and a
# second copy with its own build, each building with one job; first the
# unit-test mutants (one file rebuilt, one small test run each), then the
# end-to-end mutants (a program rebuilt, a test that times its loop). An
# end-to-end test runs beside the other lane's build or test, as README
# command 2 runs every test beside another (-j 2), which they are written
# to pass: the load can make a test fail only where it fails under -j 2
# too, and the baseline (or command 2, in CI) has shown that it does not.
# Run one lane after the other, the end-to-end mutants took 456 s of CI's
# 954. RHOBENCH_MUTATE_LANES=1 runs everything in one lane.
lanes=${RHOBENCH_MUTATE_LANES:-$jobs}
case "$lanes" in 1|2) ;; *) echo "mutate.sh: RHOBENCH_MUTATE_LANES must be 1 or 2" >&2; exit 2 ;; esac
# A mutant is an end-to-end one when a test that judges it is not a unit
# test (unit tests are the test_* targets).
is_e2e() { local t; for t in $(checks_of "$1"); do [[ "$t" == test_* ]] || return 0; done; return 1; }
unit=() e2e=()
for i in "${sel[@]}"; do
  if is_e2e "$i"; then e2e+=("$i"); else unit+=("$i"); fi
done
# order: the unit mutants, then the end-to-end ones; lane L (0 or 1) takes
# every other one, so that the two mutants of one slow test (listed side by
# side) land in different lanes.
order=("${unit[@]}" "${e2e[@]}")
[ "${#order[@]}" -ge 8 ] || lanes=1
if [ "$lanes" -eq 2 ]; then
  src2="$work/src2" build2="$work/build2"
  # From the first copy, not the working tree: an edit made since the run
  # began must reach neither lane.
  mkdir -p "$src2" && cp -a "$src/." "$src2"
  lane_targets=()
  for k in "${!order[@]}"; do
    [ $((k % 2)) -eq 1 ] || continue
    for t in $(targets_of "${order[$k]}"); do
      [[ " ${lane_targets[*]-} " == *" $t "* ]] || lane_targets+=("$t")
    done
  done
  echo "mutate.sh: a second lane: building ${lane_targets[*]} in $build2" >&2
  if [ "$prepare" -eq 1 ]; then
    { cmake -S "$src2" -B "$build2" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/configure2.log" 2>&1 &&
      cmake --build "$build2" -j "$jobs" --target "${lane_targets[@]}" >"$work/build2.log" 2>&1; } ||
      { tail -n 30 "$work/build2.log" >&2; echo "mutate.sh: the second lane's build failed" >&2; exit 2; }
  fi
fi
if [ "$prepare" -eq 1 ]; then
  tree_id >"$work/tree.id"
  echo "mutate.sh: prepared ${#sel[@]} mutants' builds in $work ($(( $(date +%s) - start )) s)" >&2
  exit 0
fi
if [ "$lanes" -eq 2 ]; then
  # The lane builds while the first one already runs its mutants.
  ( { cmake -S "$src2" -B "$build2" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$work/configure2.log" 2>&1 &&
      cmake --build "$build2" -j 1 --target "${lane_targets[@]}" >"$work/build2.log" 2>&1; } ||
      { tail -n 30 "$work/build2.log" >&2; echo "mutate.sh: the second lane's build failed" >&2; exit 2; }
    for k in "${!order[@]}"; do
      [ $((k % 2)) -eq 1 ] && run_mutant "${order[$k]}" "$src2" "$build2" 1
    done; true ) &
  lane2=$!
  for k in "${!order[@]}"; do
    [ $((k % 2)) -eq 0 ] && run_mutant "${order[$k]}" "$src" "$build" 1
  done
  wait "$lane2" || { echo "mutate.sh: the second lane failed" >&2; exit 2; }
else
  for i in "${order[@]}"; do run_mutant "$i" "$src" "$build" "$jobs"; done
fi

echo "| mutant | file | tests | result | s |"
echo "| --- | --- | --- | --- | ---: |"
killed=0 survived=0 broken=0
survivors=()
for i in "${sel[@]}"; do
  [ -f "$work/res.$i" ] || { echo "mutate.sh: ${IDS[$i]} was never run" >&2; exit 2; }
  cat "$work/row.$i"
  case "$(cat "$work/res.$i")" in
    killed) killed=$((killed + 1)) ;;
    SURVIVED) survived=$((survived + 1)); survivors+=("${IDS[$i]}") ;;
    *) broken=$((broken + 1)) ;;
  esac
done
echo
echo "mutate.sh: $((killed + survived + broken)) mutants in $(( $(date +%s) - start )) s" >&2
[ ${#survivors[@]} -eq 0 ] || echo "mutate.sh: survived (strengthen the tests): ${survivors[*]}" >&2
[ "$broken" -eq 0 ] || echo "mutate.sh: $broken mutants do not build: fix them" >&2
echo "mutants: $killed killed, $survived survived"
if [ "$broken" -gt 0 ]; then exit 2; fi
if [ "$survived" -gt 0 ]; then exit 1; fi
exit 0
