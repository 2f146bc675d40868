/* cal_sweep: the stopping rule and the next-rate rule of a calibration sweep. */
#include "cal_sweep.h"

#include "cal_level.h"
#include "cal_rule.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cal_sweep_defaults(cal_sweep_cfg *c, int mode)
{
    static const double quick[] = {0.1, 0.3, 0.5, 0.7, 0.85};
    static const double normal[] = {0.05, 0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.87, 0.92};
    static const double thorough[] = {0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.62,
                                      0.7,  0.76, 0.82, 0.86, 0.9,  0.93, 0.95};
    const double *t = mode == 0 ? quick : mode == 2 ? thorough : normal;
    size_t n = mode == 0   ? sizeof quick / sizeof quick[0]
               : mode == 2 ? sizeof thorough / sizeof thorough[0]
                           : sizeof normal / sizeof normal[0];
    *c = (cal_sweep_cfg){
        .min_achieved_ratio = 0.95,
        .lag_bound_ms = 1.0,
        .max_failed_ratio = 0.0, /* a batch with failures is no measurement */
        .stop_rho = 0.93,
        .retry_below_rho = 0.5,
        .max_steps = (int)n + 3,
        .max_rate = 1e6,
        .min_growth = 1.05,
        .max_growth = 30.0,
    };
    memcpy(c->rho_targets, t, n * sizeof *t);
    c->n_targets = (int)n;
}

int cal_sweep_saturated(const cal_sweep_cfg *c, const cal_step *s, char *why, size_t whylen)
{
    /* Poisson arrivals put noise of sqrt(N) on a count N: with few requests
     * per step the achieved rate alone would cry wolf. The shortfall must
     * also exceed 3 standard deviations of the offered count. */
    double expected = s->request_rate * s->send_window_s;
    double slack = isfinite(expected) && expected > 0 ? 3.0 * sqrt(expected) / expected : 0.0;
    if (!(s->achieved_rate >= (c->min_achieved_ratio - slack) * s->request_rate)) {
        snprintf(why, whylen, "achieved %.1f/s < %.0f%% of %.1f/s", s->achieved_rate,
                 100.0 * c->min_achieved_ratio, s->request_rate);
        return 1;
    }
    /* A backlog raises the whole lag distribution; one preemption of the
     * client raises only its top (in a short step p99 is the maximum) and,
     * with few requests, the mean. The client's own backlog needs a busy
     * client (rho_mean >= retry_below_rho); a backlog elsewhere (the host
     * saturated) lifts the median too. */
    int backlog =
        !(s->lag_mean_ms <= c->lag_bound_ms / 10.0) &&
        (!(s->rho_mean < c->retry_below_rho) || !(s->lag_p50_ms <= c->lag_bound_ms / 10.0));
    if (s->lag_p99_ms > c->lag_bound_ms && backlog) {
        snprintf(why, whylen, "schedule lag p99 %.2f ms > %.2f ms", s->lag_p99_ms, c->lag_bound_ms);
        return 1;
    }
    double total = (double)(s->completed + s->failed);
    if (total > 0 && (double)s->failed / total > c->max_failed_ratio) {
        snprintf(why, whylen, "%lld of %.0f requests failed", (long long)s->failed, total);
        return 1;
    }
    if (s->completed == 0) {
        snprintf(why, whylen, "no request completed");
        return 1;
    }
    if (why && whylen) why[0] = '\0';
    return 0;
}

double cal_sweep_next_rate(const cal_sweep_cfg *c, const cal_step *steps, int n, double start_rate)
{
    if (n == 0) return start_rate < c->max_rate ? start_rate : c->max_rate;
    if (n >= c->max_steps) return 0;
    const cal_step *last = &steps[n - 1];
    char why[160];
    if (last->saturated || cal_sweep_saturated(c, last, why, sizeof why)) return 0;
    double rho = last->rho_mean;
    if (rho >= c->stop_rho) return 0;
    if (last->request_rate >= c->max_rate) return 0;
    double growth = c->max_growth;
    if (isfinite(rho) && rho > 0 && last->achieved_rate > 0) {
        /* the first target clearly above the utilisation just measured:
         * 0.03 above it, and for k > 1 also at least a tenth closer in
         * 1 - rho (the scale the targets are spaced on: 0.25 skips 0.3,
         * 0.056 skips 0.1, 0.7 still aims at 0.85). k > 1 levels fall short of
         * their targets (the host's CPUs, shared with the server, run out
         * near rho 0.3-0.45 on 2 cores), and aiming again at a target they
         * nearly reached spends a level where nothing is decided: measured
         * (bench-afd8bbb), two of five quick k=2 sweeps aimed at 0.3 twice,
         * reached 0.25 and 0.29, and ran out of time there; every k=2
         * sweep aimed at 0.1 twice (0.05-0.06, then 0.08-0.10). */
        double clear = rho + 0.03;
        double closer = 1.0 - (1.0 - rho) / 1.1;
        if (last->workers > 1 && closer > clear) clear = closer;
        int i = 0;
        while (i < c->n_targets && c->rho_targets[i] <= clear)
            i++;
        if (i == c->n_targets) return 0;
        /* One worker: at least the next target in turn (level n aims at
         * target n - 1), so a level that fell short of its target is not
         * aimed at it again: a quiet quick run aimed at 0.1 twice and at 0.5
         * twice and used its 8 levels before reaching 0.7, where one worker
         * must reach the knee. Past the list's end, the first target above
         * what was measured. Not for k > 1: on a small host their limit is
         * the host's CPUs (near rho 0.35 on 2 cores), and aiming on in turn
         * jumped past it into saturation with the few levels k > 1 has left
         * (measured: one run in five certified k=2 at 0.235, -33% from the
         * median, where re-aiming kept all five within 10%). */
        if (last->workers == 1 && n - 1 < c->n_targets && n - 1 > i) i = n - 1;
        double busy_per_request_s = rho * last->workers / last->achieved_rate;
        double want = c->rho_targets[i] * last->workers / busy_per_request_s;
        /* rho is not proportional to the rate: a loop's fixed costs (its
         * timers, the tick) make it affine at low load, and deliveries that
         * carry more events each make it concave at high load, so aiming
         * through the origin falls short, level after level (measured: a
         * quick run aimed at 0.5 three times, reached 0.45, 0.45, 0.53, and
         * ran out of levels before 0.7). The secant through the last two
         * levels corrects for both; it is trusted up to 25% beyond the
         * proportional aim, as two close levels give a noisy slope. */
        const cal_step *prev = n >= 2 ? &steps[n - 2] : NULL;
        if (prev && !prev->saturated && isfinite(prev->rho_mean) &&
            prev->request_rate < last->request_rate && rho > prev->rho_mean) {
            double slope = (rho - prev->rho_mean) / (last->request_rate - prev->request_rate);
            double secant = last->request_rate + (c->rho_targets[i] - rho) / slope;
            if (secant > want) want = secant < 1.25 * want ? secant : 1.25 * want;
        }
        growth = want / last->request_rate;
    }
    if (growth < c->min_growth) growth = c->min_growth;
    if (growth > c->max_growth) growth = c->max_growth;
    double next = last->request_rate * growth;
    return next < c->max_rate ? next : c->max_rate;
}

int cal_sweep_out_of_time(int made, int min_levels, long long now_ns, long long per_level_ns,
                          long long deadline_ns, int limit, int fills)
{
    if (made < min_levels || now_ns + per_level_ns <= deadline_ns) return 0;
    return !(limit && fills == 0);
}

int cal_retry_again(cal_retry *r, int disturbed, int tries, int level_retries, int nb)
{
    if (!disturbed) {
        r->futile = 0;
        r->stopped = 0;
        return 0;
    }
    if (tries > 0 && ++r->futile >= CAL_RETRY_FUTILE && !r->stopped) {
        r->stopped = 1;
        r->stops++;
    }
    return !r->stopped && tries < 2 && level_retries < nb;
}

int cal_sweep_looks_bad(const cal_step *s, double transport_us, double budget_us)
{
    /* One step has no error bar yet: its mean alone. */
    return !cal_rule_within(s->overhead_mean_us, 0, transport_us, s->saturated, budget_us);
}

int cal_sweep_repeat_bad(const cal_step *view, int n, const double *err, int level,
                         double transport_us, double budget_us)
{
    int j = -1;
    for (int i = 0; i < n; i++)
        if (view[i].level == level) j = i;
    if (j < 0 || !view[j].saturated) return 1;
    /* saturated with a delay within budget by its mean: a stall of the
     * dispatch (lag, an unreached rate) that its own delay does not show,
     * not the limit the sweep expected */
    if (cal_rule_within(view[j].overhead_mean_us, 0, transport_us, 0, budget_us)) return 1;
    double rate = view[j].request_rate;
    int below = 0;
    for (int i = 0; i < n; i++) {
        if (i == j || !cal_rule_within(view[i].overhead_mean_us, err ? err[i] : 0, transport_us,
                                       view[i].saturated, budget_us))
            continue;
        if (!(view[i].request_rate < rate)) return 1; /* within at or above it */
        below = 1;
    }
    return !below;
}

int cal_sweep_pool_repeat(cal_step *steps, int n, int k, int level, int repeat, double transport_us,
                          double budget_us)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        if (steps[i].workers == k && (steps[i].level == level || steps[i].level == repeat)) {
            steps[i].level = level;
            steps[i].repeated = 1;
            any = 1;
        }
    if (!any) return 0;
    static cal_level lv[CAL_MAX_LEVELS];
    int m = cal_levels_build(steps, n, k, lv, CAL_MAX_LEVELS), j = -1;
    for (int i = 0; i < m; i++)
        if (lv[i].level == level) j = i;
    if (j < 0) return 0;
    double e = cal_level_confirm_err_us(lv, m, j, budget_us);
    int bad = !cal_rule_within(lv[j].delay_us, e, transport_us, lv[j].saturated, budget_us);
    if (bad)
        for (int i = 0; i < n; i++)
            if (steps[i].workers == k && steps[i].level == level) steps[i].confirmed = 1;
    return bad;
}

/* Bad for the fill: over budget with its error bar (err: NULL, none), or
 * saturated; with budget_us infinite (the self-test), saturated only. */
static int bad_for_fill(const cal_step *s, double err_us, double transport_us, double budget_us)
{
    if (!isfinite(budget_us)) return s->saturated;
    return !cal_rule_within(s->overhead_mean_us, err_us, transport_us, s->saturated, budget_us);
}

/* A bad step that caps every rate above it in the certification rule
 * (cal_rule_certify): saturated, or confirmed over budget by its mean. */
static int caps_for_fill(const cal_step *s, double transport_us, double budget_us)
{
    if (!isfinite(budget_us)) return s->saturated;
    return s->saturated || (s->confirmed && cal_sweep_looks_bad(s, transport_us, budget_us));
}

double cal_sweep_fill_rate(const cal_step *steps, const double *err, int n, double transport_us,
                           double budget_us)
{
#define ERR_OF(i) (err ? err[i] : 0)
    double top = 0; /* the fastest step within budget */
    for (int i = 0; i < n; i++)
        if (!bad_for_fill(&steps[i], ERR_OF(i), transport_us, budget_us) &&
            steps[i].request_rate > top)
            top = steps[i].request_rate;
    /* the slowest bad step that bounds the crossing: one above every step
     * within budget, or one that caps what lies above it; a bad step below
     * one within budget that caps nothing (a stalled batch's unconfirmed
     * level, or one over only by its error bar) is refuted by the rule and
     * does not steer the bisection */
    double bad = INFINITY, good = 0;
    for (int i = 0; i < n; i++)
        if (bad_for_fill(&steps[i], ERR_OF(i), transport_us, budget_us) &&
            (steps[i].request_rate > top || caps_for_fill(&steps[i], transport_us, budget_us)) &&
            steps[i].request_rate < bad)
            bad = steps[i].request_rate;
    if (!isfinite(bad)) return 0;
    for (int i = 0; i < n; i++)
        if (!bad_for_fill(&steps[i], ERR_OF(i), transport_us, budget_us) &&
            steps[i].request_rate < bad && steps[i].request_rate > good)
            good = steps[i].request_rate;
#undef ERR_OF
    if (!(good > 0)) return bad / 4.0; /* bad from the start: step back */
    if (bad < 1.08 * good) return 0;
    return sqrt(good * bad);
}

static int cmp_rate(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cal_sweep_baseline_rates(const cal_step *steps, int n, int k, double rho_lo, double rho_hi,
                             double *out, int max)
{
    int m = 0;
    for (int i = 0; i < n && m < max; i++) {
        const cal_step *s = &steps[i];
        int seen = 0; /* the batches of a level share their rate: once each */
        for (int j = 0; j < m; j++)
            seen |= out[j] == s->request_rate;
        if (s->workers == k && !s->saturated && s->request_rate > 0 && s->rho_mean >= rho_lo &&
            s->rho_mean <= rho_hi && !seen)
            out[m++] = s->request_rate;
    }
    if (m < 2) {
        /* the fastest unsaturated steps of k, whatever their rho */
        m = 0;
        double below = INFINITY;
        while (m < 2 && m < max) {
            double best = 0;
            for (int i = 0; i < n; i++) {
                const cal_step *s = &steps[i];
                if (s->workers == k && !s->saturated && s->request_rate < below &&
                    s->request_rate > best)
                    best = s->request_rate;
            }
            if (!(best > 0)) break;
            out[m++] = best;
            below = best;
        }
    }
    qsort(out, (size_t)m, sizeof *out, cmp_rate);
    return m;
}
