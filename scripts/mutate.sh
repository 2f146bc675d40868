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
#   scripts/mutate.sh [--list] [MUTANT...]
# --list prints the mutants and exits. Prints a table and, last, the line
# "mutants: N killed, M survived". Exit 0 when every mutant was killed, 1 when
# one survived, 2 on bad usage, a source text that no longer matches exactly
# once, a mutant that does not compile, or unit tests that fail unmutated.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # '&' in a replacement is literal
here=$(cd "$(dirname "$0")/.." && pwd)

IDS=() FILES=() FROMS=() TOS=()
# m ID FILE FROM TO: one mutant. FROM and TO are literal text; $'...' for
# several lines.
m() { IDS+=("$1"); FILES+=("$2"); FROMS+=("$3"); TOS+=("$4"); }

# The unit tests that cover each source file (ctest names = target names).
tests_for() {
  case "$1" in
    models/mdl_hist.c) echo "test_mdl_hist test_mdl_stats" ;;
    models/mdl_queue.c) echo "test_mdl_queue" ;;
    models/mdl_stats.c) echo "test_mdl_stats test_mdl_ks2" ;;
    models/mdl_fit.c) echo "test_mdl_fit" ;;
    models/mdl_verdict.c) echo "test_mdl_verdict" ;;
    loadgen/lg_rxclock.c) echo "test_lg_rxclock" ;;
    loadgen/lg_bias.c) echo "test_lg_bias" ;;
    loadgen/lg_knee.c) echo "test_lg_knee" ;;
    loadgen/lg_sched.c) echo "test_lg_sched" ;;
    loadgen/lg_sse.c) echo "test_lg_sse" ;;
    loadgen/lg_chunk.c) echo "test_lg_chunk" ;;
    loadgen/lg_stats.c) echo "test_lg_stats" ;;
    simserver/sim_http.c) echo "test_sim_http" ;;
    simserver/sim_model.c) echo "test_sim_model" ;;
    calibrate/cal_rule.c) echo "test_cal_rule" ;;
    calibrate/cal_sweep.c) echo "test_cal_sweep" ;;
    loadgen/lg_dataset.c) echo "test_lg_dataset" ;;
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
m verdict-lag-boundary models/mdl_verdict.c 'if (in->lag_p99_us > MDL_VERDICT_AT_RISK_LAG_US) {' \
  'if (in->lag_p99_us >= MDL_VERDICT_AT_RISK_LAG_US) {'
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
m verdict-biased-lag-boundary models/mdl_verdict.c 'if (in->lag_p99_us > MDL_VERDICT_BIASED_LAG_US) {' \
  'if (in->lag_p99_us >= MDL_VERDICT_BIASED_LAG_US) {'
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
  'if (st->duration_ns > 0 && offset_ns >= (double)st->duration_ns) return 0;' \
  'if (st->duration_ns > 0 && offset_ns > (double)st->duration_ns) return 0;'
m sched-stage-count-boundary loadgen/lg_sched.c \
  'if (st->max_requests > 0 && in_stage >= st->max_requests) return 0;' \
  'if (st->max_requests > 0 && in_stage > st->max_requests) return 0;'
m sched-gamma-scale loadgen/lg_sched.c '1.0 / (rate_per_s * burstiness)' '1.0 / rate_per_s'
m sched-drops-pause loadgen/lg_sched.c 'start += llround(end_ns) + sp->pause_ns;' 'start += llround(end_ns);'
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
m stats-truth-client-keeps-decode loadgen/lg_stats.c 's->truth_client_ns += ntpot - q - p - d;' \
  's->truth_client_ns += ntpot - q - p;'
m goodput-tpot-over-n loadgen/lg_stats.c '(r->end_ns - r->first_token_ns) / (n - 1) > slo[LG_M_TPOT])' \
  '(r->end_ns - r->first_token_ns) / n > slo[LG_M_TPOT])'
# simserver/sim_http.c
m http-header-limit-boundary simserver/sim_http.c 'if (hp->header_bytes > hp->lim.max_header_bytes) {' \
  'if (hp->header_bytes >= hp->lim.max_header_bytes) {'
m http-body-limit-boundary simserver/sim_http.c 'if (r->body_len + n > hp->lim.max_body_bytes) {' \
  'if (r->body_len + n >= hp->lim.max_body_bytes) {'
m http-query-kept simserver/sim_http.c "char *q = strchr(r->path, '?');" "char *q = strchr(r->path, '&');"
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
# calibrate/cal_sweep.c
m fill-saturation-only calibrate/cal_sweep.c \
  'return isfinite(budget_us) ? cal_sweep_looks_bad(s, transport_us, budget_us) : s->saturated;' \
  'return s->saturated;'
m aim-in-turn-dropped calibrate/cal_sweep.c 'if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i) i = n - 1;' \
  'if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i + 1) i = n - 1;'
m aim-in-turn-all-k calibrate/cal_sweep.c 'if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i) i = n - 1;' \
  'if (n - 1 < c->n_targets && n - 1 > i) i = n - 1;'
m secant-uncapped calibrate/cal_sweep.c 'if (secant > want) want = secant < 1.25 * want ? secant : 1.25 * want;' \
  'if (secant > want) want = secant;'

# loadgen/lg_dataset.c, lg_body.c: token-id prompts
m ids-past-vocab loadgen/lg_dataset.c 'gsl_rng_uniform_int(r, (unsigned long)vocab));' \
  'gsl_rng_uniform_int(r, (unsigned long)vocab) + 1);'
m ids-comma-dropped loadgen/lg_body.c 'if (!in_word && any) rb_buf_add(b, ",", 1);' \
  'if (!in_word && any) rb_buf_add(b, " ", 1);'
m ids-as-text loadgen/lg_body.c '        if (o->token_ids)' '        if (0)'

# loadgen/lg_dataset.c: Inference Perf's distributions
m ip-no-min-clip loadgen/lg_dataset.c '    if (x < d->min) x = d->min;' ';'
m ip-no-max-clip loadgen/lg_dataset.c '    if (x > d->max) x = d->max;' ';'
m ip-sd-ignored loadgen/lg_dataset.c 'x = d->mean + gsl_ran_gaussian(r, d->std_dev);' 'x = d->mean;'
m ip-uniform-short loadgen/lg_dataset.c 'x = d->min + gsl_rng_uniform(r) * (double)(d->max - d->min);' \
  'x = d->min + gsl_rng_uniform(r) * (double)(d->max - d->min - 1);'

# loadgen/lg_dataset.c: ShareGPT's filters as vLLM's
m sgpt-prompt-max-boundary loadgen/lg_dataset.c 'in <= 1024 &&' 'in < 1024 &&'
m sgpt-sum-unchecked loadgen/lg_dataset.c 'in + out <= 2048);' 'in + out <= 4096);'
m sgpt-no-shuffle loadgen/lg_dataset.c '            size_t j = gsl_rng_uniform_int(r, i + 1);' '            size_t j = i;'

# common/rb_tok.c: the BPE merge order, the pairs a merge makes, byte
# fallback, the UTF-8 cleaning
m tok-heap-order common/rb_tok.c 'if (q->rank < c.rank || (q->rank == c.rank && q->pos < c.pos)) break;' \
  'if (q->rank > c.rank || (q->rank == c.rank && q->pos < c.pos)) break;'
m tok-left-pair-dropped common/rb_tok.c 'if (l->prev >= 0 && try_pair(t, l->prev)) return -ENOMEM;' ';'
m tok-no-byte-fallback common/rb_tok.c 'int all = t->byte_fallback;' 'int all = 0;'
m tok-truncated-utf8-kept common/rb_tok.c 'if (got == need) {' 'if (got >= 1) {'

# ---- the run ------------------------------------------------------------
list=0
want=()
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list=1; shift ;;
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
occurrences() {
  local text=$1 needle=$2 n=0
  while [[ "$text" == *"$needle"* ]]; do text=${text#*"$needle"}; n=$((n + 1)); done
  echo "$n"
}

# Every anchor first, before anything is built: a drifted source fails loudly.
drift=0
for i in "${sel[@]}"; do
  f="$here/${FILES[$i]}"
  [ -f "$f" ] || { echo "mutate.sh: ${IDS[$i]}: no file ${FILES[$i]}" >&2; drift=1; continue; }
  tests_for "${FILES[$i]}" >/dev/null || exit 2
  read_file "$f"
  n=$(occurrences "$content" "${FROMS[$i]}")
  if [ "$n" -ne 1 ]; then
    echo "mutate.sh: ${IDS[$i]}: the text to replace occurs $n times in ${FILES[$i]} (must be exactly once):" >&2
    printf '  %s\n' "${FROMS[$i]}" >&2
    drift=1
  fi
done
[ "$drift" -eq 0 ] || { echo "mutate.sh: the sources have drifted from the mutants; update them" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rhobench-mutate.XXXXXX")
trap 'rm -rf "$work"' EXIT
src="$work/src" build="$work/build"
mkdir -p "$src"
tar -C "$here" --exclude=./.git --exclude='./build' --exclude='./build-*' --exclude=./out \
    --exclude='./rhobench-out*' -cf - . | tar -C "$src" -xf -

targets=()
for i in "${sel[@]}"; do
  for t in $(tests_for "${FILES[$i]}"); do
    [[ " ${targets[*]-} " == *" $t "* ]] || targets+=("$t")
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
ctest --test-dir "$build" -R "$(regex "${targets[@]}")" --timeout 120 >"$work/baseline.log" 2>&1 ||
  { cat "$work/baseline.log" >&2; echo "mutate.sh: the unit tests fail without any mutant" >&2; exit 2; }

echo "| mutant | file | tests | result | s |"
echo "| --- | --- | --- | --- | ---: |"
killed=0 survived=0 broken=0
survivors=()
for i in "${sel[@]}"; do
  id=${IDS[$i]} file=${FILES[$i]}
  t0=$(date +%s%N)
  read_file "$src/$file"
  orig=$content
  printf '%s' "${orig/"${FROMS[$i]}"/"${TOS[$i]}"}" >"$src/$file"
  read -r -a tests <<<"$(tests_for "$file")"
  log="$work/$id.log"
  if ! cmake --build "$build" -j "$jobs" --target "${tests[@]}" >"$log" 2>&1; then
    result="DOES NOT BUILD"
    broken=$((broken + 1))
    grep -m 3 -E 'error' "$log" >&2 || true
  elif ctest --test-dir "$build" -R "$(regex "${tests[@]}")" --timeout 120 >>"$log" 2>&1; then
    result="SURVIVED"
    survived=$((survived + 1))
    survivors+=("$id")
  else
    result="killed"
    killed=$((killed + 1))
  fi
  printf '%s' "$orig" >"$src/$file"
  t1=$(date +%s%N)
  printf '| %s | %s | %s | %s | %s |\n' "$id" "$file" "${tests[*]}" "$result" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')"
done
echo
echo "mutate.sh: $((killed + survived + broken)) mutants in $(( $(date +%s) - start )) s" >&2
[ ${#survivors[@]} -eq 0 ] || echo "mutate.sh: survived (strengthen the tests): ${survivors[*]}" >&2
[ "$broken" -eq 0 ] || echo "mutate.sh: $broken mutants do not build: fix them" >&2
echo "mutants: $killed killed, $survived survived"
if [ "$broken" -gt 0 ]; then exit 2; fi
if [ "$survived" -gt 0 ]; then exit 1; fi
exit 0
