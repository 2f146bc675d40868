/* cal_fit: the per-k delay fit with its bootstrap, the safe region, the cost
 * model, and the self-test's checks. */
#include "cal_fit.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

#include "cal_rule.h"
#include "mdl_fit.h"

#define CAL_FIT_MAX_POINTS 256
#define RHO_MAX 0.995 /* rho / (1 - rho) is not evaluated beyond */

static int usable(const cal_step *s, int k)
{
    return s->workers == k && !s->saturated && !s->probe && s->event_rate_per_worker > 0 &&
           isfinite(s->event_rate_per_worker) && isfinite(s->rho_mean);
}

static double xof(double rho)
{
    if (rho > RHO_MAX) rho = RHO_MAX;
    return rho / (1.0 - rho);
}

double cal_fit_predict_us(const cal_per_k *p, double rho)
{
    if (!(rho < 1.0)) return INFINITY;
    return p->transport_us + p->r_us * rho / (1.0 - rho);
}

/* Weighted least squares of y = c + R x. 0, or -1 when singular. */
static int wls(const double *x, const double *y, const double *w, int n, double *c, double *r)
{
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sw += w[i];
        sx += w[i] * x[i];
        sy += w[i] * y[i];
        sxx += w[i] * x[i] * x[i];
        sxy += w[i] * x[i] * y[i];
    }
    double det = sw * sxx - sx * sx;
    if (!(fabs(det) > 1e-12 * sw * sxx)) return -1;
    *r = (sw * sxy - sx * sy) / det;
    *c = (sy - *r * sx) / sw;
    return 0;
}

/* splitmix64: the bootstrap's resampling, reproducible from its seed */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1) return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

static void set_nan2(double v[2])
{
    v[0] = v[1] = NAN;
}

static void clear_out(cal_per_k *out, int k)
{
    memset(out, 0, sizeof *out);
    out->workers = k;
    snprintf(out->method, sizeof out->method, "none");
    snprintf(out->limited_by, sizeof out->limited_by, "none");
    out->transport_us = out->r_us = out->f_gof = out->gof_p = out->r2 = NAN;
    out->mean_service_us = out->second_moment_us2 = out->busy_per_request_us = NAN;
    set_nan2(out->transport_us_ci);
    set_nan2(out->r_us_ci);
    set_nan2(out->mean_service_us_ci);
    set_nan2(out->second_moment_us2_ci);
    set_nan2(out->busy_per_request_us_ci);
    out->events_per_request = out->safe_event_rate_per_worker = out->safe_rho = NAN;
    out->safe_rate_per_worker = out->safe_total_rate = out->conservative_safe_total_rate = NAN;
    out->model_safe_total_rate = out->model_rho = out->measured_rho = NAN;
    out->crossing_rho = out->crossing_over_rho = NAN;
    set_nan2(out->crossing_rho_ci);
    out->cost_scale = NAN;
    set_nan2(out->cost_scale_ci);
}

/* The slope through the origin of y against x over the usable steps of k
 * (x, y chosen by which), in the unit the caller scales to. */
static int slope(const cal_step *steps, int n, int k, int which, mdl_fit_param *b)
{
    double x[CAL_FIT_MAX_POINTS], y[CAL_FIT_MAX_POINTS];
    int m = 0;
    for (int i = 0; i < n && m < CAL_FIT_MAX_POINTS; i++) {
        const cal_step *s = &steps[i];
        if (!usable(s, k)) continue;
        double xv = which == 0 ? s->event_rate_per_worker : s->achieved_rate / k;
        if (!(xv > 0) || !isfinite(xv)) continue;
        x[m] = xv;
        y[m++] = s->rho_mean;
    }
    if (m < 2) return -1;
    return mdl_fit_through_origin(x, y, (size_t)m, 0.95, b);
}

double cal_baseline_service_us(const cal_step *steps, int n, int k, double ci[2])
{
    mdl_fit_param b;
    if (ci) set_nan2(ci);
    if (slope(steps, n, k, 0, &b) != 0) return NAN;
    if (ci) {
        ci[0] = b.lo * 1e6;
        ci[1] = b.hi * 1e6;
    }
    return b.value * 1e6;
}

/* The delay fit over the counted levels of out (idx[0..L)), with its
 * bootstrap over the batches of steps. */
/* The pooled relative spread (squared) of a batch's mean delay over the
 * counted levels idx[0..L) with two batches or more, and its degrees of
 * freedom sum(n - 1); NAN and 0 when there is none. */
static double pooled_cv2(const cal_per_k *out, const int *idx, int L, int *dof)
{
    double cv2 = 0;
    *dof = 0;
    for (int j = 0; j < L; j++) {
        const cal_level *l = &out->levels[idx[j]];
        if (l->n >= 2 && l->delay_us > 0 && isfinite(l->delay_sd_us)) {
            double rel = l->delay_sd_us / l->delay_us;
            cv2 += (l->n - 1) * rel * rel;
            *dof += l->n - 1;
        }
    }
    return *dof > 0 ? cv2 / *dof : NAN;
}

static void fit_levels(const cal_step *steps, int n, int k, const int *idx, int L, cal_per_k *out)
{
    double x[CAL_MAX_LEVELS], y[CAL_MAX_LEVELS], w[CAL_MAX_LEVELS];
    int pure_dof;
    double cv2 = pooled_cv2(out, idx, L, &pure_dof);
    double cvw = isfinite(cv2) && cv2 > 1e-8 ? cv2 : 1e-4; /* weights need a scale only */
    for (int j = 0; j < L; j++) {
        const cal_level *l = &out->levels[idx[j]];
        x[j] = xof(l->rho);
        y[j] = l->delay_us;
        w[j] = l->n / (cvw * fmax(l->delay_us * l->delay_us, 1e-6));
    }
    double c, r;
    if (wls(x, y, w, L, &c, &r) != 0) return;
    snprintf(out->method, sizeof out->method, "wls-bootstrap");
    out->transport_us = c;
    out->r_us = r;
    out->n_fit = L;
    double ybar = 0, tss = 0, rss = 0, chi2 = 0;
    for (int j = 0; j < L; j++)
        ybar += y[j] / L;
    for (int j = 0; j < L; j++) {
        double res = y[j] - (c + r * x[j]);
        tss += (y[j] - ybar) * (y[j] - ybar);
        rss += res * res;
        chi2 += w[j] * res * res;
    }
    out->r2 = tss > 0 ? 1.0 - rss / tss : NAN;
    if (L >= 3 && pure_dof >= 1 && isfinite(cv2)) {
        /* lack of fit against pure error: with w = n / (cv^2 d^2), chi2 / (L - 2)
         * estimates 1 when the curve is right */
        out->gof_dof1 = L - 2;
        out->gof_dof2 = pure_dof;
        out->f_gof = (chi2 / (L - 2)) * (cvw / cv2);
        out->gof_p = gsl_cdf_fdist_Q(out->f_gof, L - 2, pure_dof);
    }
    out->fit_ok = isfinite(out->gof_p) && out->gof_p >= CAL_FIT_GOF_ALPHA && r > 0;

    /* the bootstrap: each level's batches resampled */
    static double bc[CAL_FIT_BOOT], br[CAL_FIT_BOOT];
    static double band[CAL_BAND_N][CAL_FIT_BOOT];
    double rho_top = 0;
    for (int j = 0; j < L; j++)
        rho_top = fmax(rho_top, out->levels[idx[j]].rho);
    rho_top = fmin(0.97, fmax(rho_top * 1.1, 0.5));
    for (int g = 0; g < CAL_BAND_N; g++)
        out->band_rho[g] = rho_top * (g + 1) / CAL_BAND_N;
    uint64_t seed = (uint64_t)k;
    int nb = 0;
    for (int b = 0; b < CAL_FIT_BOOT; b++) {
        double xb[CAL_MAX_LEVELS], yb[CAL_MAX_LEVELS];
        for (int j = 0; j < L; j++) {
            const cal_level *l = &out->levels[idx[j]];
            const cal_step *mine[32];
            int nm = 0;
            for (int i = 0; i < n && nm < 32; i++)
                if (steps[i].workers == k && steps[i].level == l->level) mine[nm++] = &steps[i];
            if (nm < 2) {
                xb[j] = x[j];
                yb[j] = y[j];
                continue;
            }
            double f = sqrt((double)nm / (nm - 1)), sr = 0, sd = 0;
            for (int t = 0; t < nm; t++) {
                const cal_step *s = mine[rng_next(&seed) % (uint64_t)nm];
                sr += s->rho_mean;
                sd += s->overhead_mean_us;
            }
            double rr = l->rho + f * (sr / nm - l->rho);
            xb[j] = xof(fmax(rr, 0));
            yb[j] = l->delay_us + f * (sd / nm - l->delay_us);
        }
        double cb, rb;
        if (wls(xb, yb, w, L, &cb, &rb) != 0) continue;
        bc[nb] = cb;
        br[nb] = rb;
        for (int g = 0; g < CAL_BAND_N; g++)
            band[g][nb] = cb + rb * xof(out->band_rho[g]);
        nb++;
    }
    if (nb < CAL_FIT_BOOT / 2) return;
    qsort(bc, (size_t)nb, sizeof bc[0], cmp_double);
    qsort(br, (size_t)nb, sizeof br[0], cmp_double);
    out->transport_us_ci[0] = quantile_sorted(bc, nb, 0.025);
    out->transport_us_ci[1] = quantile_sorted(bc, nb, 0.975);
    out->r_us_ci[0] = quantile_sorted(br, nb, 0.025);
    out->r_us_ci[1] = quantile_sorted(br, nb, 0.975);
    for (int g = 0; g < CAL_BAND_N; g++) {
        qsort(band[g], (size_t)nb, sizeof band[g][0], cmp_double);
        out->band_lo_us[g] = quantile_sorted(band[g], nb, 0.025);
        out->band_hi_us[g] = quantile_sorted(band[g], nb, 0.975);
    }
}

/* The steps of k: counted, fit marks cleared, the usable ones' events per request and top rate. */
static void tally_steps(cal_step *steps, int n, int k, cal_per_k *out)
{
    double epr_sum = 0;
    int epr_n = 0;
    for (int i = 0; i < n; i++) {
        if (steps[i].workers != k) continue;
        out->n_steps++;
        steps[i].used_in_fit = 0;
        steps[i].fit_pred_us = NAN;
        if (!usable(&steps[i], k)) continue;
        if (isfinite(steps[i].events_per_request)) {
            epr_sum += steps[i].events_per_request;
            epr_n++;
        }
        if (steps[i].request_rate > out->max_measured_rate)
            out->max_measured_rate = steps[i].request_rate;
    }
    out->events_per_request = epr_n ? epr_sum / epr_n : NAN;
}

/* E[S] per event and the busy time per request, each the slope of rho. */
static void fit_slopes(const cal_step *steps, int n, int k, cal_per_k *out)
{
    mdl_fit_param es, bpr;
    if (slope(steps, n, k, 0, &es) == 0) {
        out->mean_service_us = es.value * 1e6;
        out->mean_service_us_ci[0] = es.lo * 1e6;
        out->mean_service_us_ci[1] = es.hi * 1e6;
    }
    if (slope(steps, n, k, 1, &bpr) == 0) {
        out->busy_per_request_us = bpr.value * 1e6;
        out->busy_per_request_us_ci[0] = bpr.lo * 1e6;
        out->busy_per_request_us_ci[1] = bpr.hi * 1e6;
    }
}

/* The levels that count, into idx; returns how many. */
static int counted_levels(const cal_per_k *out, int *idx)
{
    /* not saturated, a finite delay */
    int L = 0;
    for (int j = 0; j < out->n_levels; j++) {
        const cal_level *l = &out->levels[j];
        if (!l->saturated && isfinite(l->delay_us) && isfinite(l->rho) && l->rho > 0 && l->rho < 1)
            idx[L++] = j;
    }
    return L;
}

/* Each level's error bar from the pooled spread of all levels' batches. */
static void pool_errors(cal_per_k *out, double budget_us)
{
    /* A level's own two or three batches say little about their spread (with
     * 2 degrees of freedom the t factor alone is 4.3), the pool of all
     * levels' batches far more. A level of one batch gets one too.
     * (cal_level_pooled_err_us: the sweep applies the same bar while it runs.) */
    double errs[CAL_MAX_LEVELS];
    for (int j = 0; j < out->n_levels; j++)
        errs[j] = cal_level_pooled_err_us(out->levels, out->n_levels, j, budget_us);
    for (int j = 0; j < out->n_levels; j++)
        if (isfinite(errs[j])) out->levels[j].delay_err_us = errs[j];
}

/* Whether the delay fit holds: 1, or 0 when there is none or it failed (its R in *failed_r). */
static int fit_holds(cal_per_k *out, double *failed_r)
{
    int fitted = !strcmp(out->method, "wls-bootstrap");
    if (fitted && !(out->r_us > 0 && isfinite(out->transport_us))) {
        /* R <= 0 is no queue (a delay that falls as the loop gets busier):
         * the fit failed, and its moments are not written (a certificate
         * with a negative R or E[S^2] is one loadgen refuses) */
        *failed_r = out->r_us;
        snprintf(out->method, sizeof out->method, "failed-fit");
        out->transport_us = out->r_us = out->f_gof = out->gof_p = out->r2 = NAN;
        set_nan2(out->transport_us_ci);
        set_nan2(out->r_us_ci);
        out->fit_ok = 0;
        fitted = 0;
    }
    return fitted;
}

/* A fit that holds: the levels' and steps' predicted delays, E[S^2], the model's rho. */
static void apply_fit(cal_step *steps, int n, int k, double budget_us, cal_per_k *out)
{
    for (int j = 0; j < out->n_levels; j++)
        out->level_pred_us[j] = cal_fit_predict_us(out, out->levels[j].rho);
    for (int i = 0; i < n; i++)
        if (steps[i].workers == k && steps[i].level >= 0) {
            steps[i].fit_pred_us = cal_fit_predict_us(out, steps[i].rho_mean);
            steps[i].used_in_fit = usable(&steps[i], k);
        }
    out->second_moment_us2 = 2.0 * out->r_us * out->mean_service_us;
    out->second_moment_us2_ci[0] = 2.0 * out->r_us_ci[0] * out->mean_service_us_ci[0];
    out->second_moment_us2_ci[1] = 2.0 * out->r_us_ci[1] * out->mean_service_us_ci[1];
    if (out->r_us_ci[1] > 0) out->model_rho = budget_us / (budget_us + out->r_us_ci[1]);
}

/* The certification rule over the levels, and its note. */
static void certify_levels(cal_per_k *out, const int *idx, int L, double budget_us, double failed_r,
                           cal_rule_result *rule)
{
    /* queueing delay = mean delay - transport, the transport at least 0 and
     * at most the lowest level's delay */
    double c_us = out->transport_us, lowest = INFINITY;
    for (int j = 0; j < L; j++)
        lowest = fmin(lowest, out->levels[idx[j]].delay_us);
    if (!(c_us >= 0)) c_us = 0;
    if (c_us > lowest) c_us = lowest;
    cal_point pts[CAL_MAX_LEVELS];
    int np = 0;
    for (int j = 0; j < out->n_levels; j++) {
        cal_level *l = &out->levels[j];
        pts[np++] = (cal_point){.rho = l->rho,
                                .rate = l->request_rate,
                                .delay_us = l->delay_us - c_us,
                                .err_us = l->delay_err_us,
                                .saturated = l->saturated,
                                .confirmed = l->confirmed};
        l->undecided = cal_rule_undecided(&pts[np - 1], budget_us);
    }
    cal_rule_certify(pts, np, budget_us, out->model_rho, out->fit_ok, rule);
    out->measured_rho = rule->measured_rho;
    out->n_capped = rule->n_capped;
    if (rule->over_rho > 0) {
        out->crossing_rho = rule->crossing_rho;
        out->crossing_rho_ci[0] = rule->crossing_rho_ci[0];
        out->crossing_rho_ci[1] = rule->crossing_rho_ci[1];
        out->crossing_over_rho = rule->over_rho;
        out->crossing_over_confirmed = rule->over_confirmed;
    }
    snprintf(out->limited_by, sizeof out->limited_by, "%s", cal_limit_name(rule->limit));
    snprintf(out->cert_note, sizeof out->cert_note, "%s", rule->note);
    if (!strcmp(out->method, "failed-fit")) {
        size_t used = strlen(out->cert_note);
        snprintf(out->cert_note + used, sizeof out->cert_note - used,
                 "; the fit failed: R = %.3g us is not a queue's", failed_r);
    }
}

/* The level that limited the certificate, else the fastest tried; -1 when none. */
static int limiting_level(const cal_per_k *out, const cal_rule_result *rule)
{
    int top = -1; /* of a level's repeats, the one on the busiest host */
    for (int j = 0; j < out->n_levels; j++) {
        const cal_level *l = &out->levels[j];
        if (top < 0 || l->request_rate > out->levels[top].request_rate ||
            (l->request_rate == out->levels[top].request_rate &&
             l->host_busy > out->levels[top].host_busy))
            top = j;
    }
    if (rule->limit == CAL_LIMIT_OVER)
        for (int j = 0; j < out->n_levels; j++) {
            const cal_level *l = &out->levels[j];
            if (l->confirmed && (top < 0 || !out->levels[top].confirmed ||
                                 l->request_rate < out->levels[top].request_rate))
                top = j;
        }
    return top;
}

/* Whether the host gave out first, and why (out->host_note). */
static void note_host_limit(cal_per_k *out, int k, const cal_rule_result *rule)
{
    /* Did the host give out first? The level that limited the certificate
     * (the slowest confirmed bad one), else the fastest tried, that did not
     * keep up or reach rho 0.7, on a host whose CPUs were all but fully busy
     * or whose worker waited in the run queue for a tenth of its time. */
    int top = limiting_level(out, rule);
    if (top < 0 || rule->limit == CAL_LIMIT_MODEL) return;
    const cal_level *t = &out->levels[top];
    int short_of_knee = t->saturated || t->confirmed || t->rho < 0.7;
    if (short_of_knee && t->host_other > CAL_HOST_OTHER_MAX) {
        out->host_limited = 1;
        snprintf(out->host_note, sizeof out->host_note,
                 "the host was busy with other work: other processes took %.0f%% of its CPU "
                 "time at %.0f requests/s (rho %.2f per worker)",
                 100.0 * t->host_other, t->request_rate, t->rho);
    } else if (short_of_knee && t->host_busy >= CAL_HOST_BUSY_LIMIT) {
        out->host_limited = 1;
        snprintf(out->host_note, sizeof out->host_note,
                 "the host ran out first: its CPUs were %.0f%% busy at %.0f requests/s "
                 "(rho %.2f per worker; %d loadgen workers and simserver share them)",
                 100.0 * t->host_busy, t->request_rate, t->rho, k);
    } else if (short_of_knee && t->run_delay_share >= CAL_RUN_DELAY_LIMIT) {
        out->host_limited = 1;
        snprintf(out->host_note, sizeof out->host_note,
                 "the host ran out first: at %.0f requests/s (rho %.2f per worker) a worker "
                 "waited for a CPU %.0f%% of its time; %d loadgen workers and simserver want "
                 "more CPU than the host's %.0f%% idle",
                 t->request_rate, t->rho, 100.0 * t->run_delay_share, k,
                 100.0 * (1.0 - t->host_busy));
    }
}

/* The certified rho as rates, at the busy time per request's upper bound. */
static void safe_rates(cal_per_k *out, int k, double safe_rho)
{
    out->safe_rho = safe_rho;
    double bpr_hi = out->busy_per_request_us_ci[1] > 0 ? out->busy_per_request_us_ci[1]
                                                       : out->busy_per_request_us;
    if (bpr_hi > 0) {
        out->safe_rate_per_worker = out->safe_rho / (bpr_hi * 1e-6);
        out->safe_total_rate = k * out->safe_rate_per_worker;
        out->conservative_safe_total_rate = out->safe_total_rate;
        out->safe_event_rate_per_worker = out->safe_rate_per_worker * out->events_per_request;
    }
}

int cal_fit_per_k(cal_step *steps, int n, int k, double budget_us, cal_per_k *out)
{
    clear_out(out, k);
    for (int g = 0; g < CAL_BAND_N; g++)
        out->band_rho[g] = out->band_lo_us[g] = out->band_hi_us[g] = NAN;
    tally_steps(steps, n, k, out);
    out->n_levels = cal_levels_build(steps, n, k, out->levels, CAL_MAX_LEVELS);
    for (int j = 0; j < out->n_levels; j++)
        out->level_pred_us[j] = NAN;
    fit_slopes(steps, n, k, out);

    int idx[CAL_MAX_LEVELS];
    int L = counted_levels(out, idx);
    if (L == 0) return -ENODATA;
    pool_errors(out, budget_us);
    snprintf(out->method, sizeof out->method, "measured");
    if (L >= 2) fit_levels(steps, n, k, idx, L, out);
    double failed_r = NAN; /* the R of a fit reported failed */
    int fitted = fit_holds(out, &failed_r);
    if (fitted) apply_fit(steps, n, k, budget_us, out);

    cal_rule_result rule;
    certify_levels(out, idx, L, budget_us, failed_r, &rule);
    note_host_limit(out, k, &rule);
    if (fitted && out->r_us > 0)
        out->model_safe_total_rate =
            k * (budget_us / (budget_us + out->r_us)) / (out->busy_per_request_us * 1e-6);
    if (!isfinite(rule.safe_rho)) return 0;
    safe_rates(out, k, rule.safe_rho);
    return 0;
}

/* The cost model's columns: per request, per delivery, per event, per plain response. */
enum { COST_REQ, COST_DEL, COST_EV, COST_PLAIN, COST_COLS };

/* The requests per second per worker of s (NAN: unknown). */
static double requests_per_worker(const cal_step *s)
{
    return s->workers >= 1 && s->achieved_rate > 0 ? s->achieved_rate / s->workers : NAN;
}

/* Row x[COST_COLS] of step s (rates per worker, per us); 0, or -1 when s is no row. */
static int cost_row(const cal_step *s, double x[COST_COLS])
{
    if (s->workers != 1 || s->saturated || !isfinite(s->rho_mean) ||
        !(s->callback_rate_per_worker > 0) || !(s->event_rate_per_worker > 0))
        return -1;
    double req = requests_per_worker(s);
    x[COST_REQ] = isfinite(req) ? req * 1e-6 : NAN;
    x[COST_DEL] = s->callback_rate_per_worker * 1e-6;
    x[COST_EV] = s->event_rate_per_worker * 1e-6;
    x[COST_PLAIN] = s->plain && isfinite(req) ? req * 1e-6 : 0;
    return 0;
}

/* Least squares through the origin of y on the columns use[] of x (m rows):
 * coef and the variance of each (NAN where not used). 0, or -1. */
static int ols(const double (*x)[COST_COLS], const double *y, int m, const int use[COST_COLS],
               double coef[COST_COLS], double var[COST_COLS], int *dof)
{
    int cols[COST_COLS], p = 0;
    for (int c = 0; c < COST_COLS; c++) {
        coef[c] = use[c] ? NAN : 0;
        var[c] = NAN;
        if (use[c]) cols[p++] = c;
    }
    *dof = m - p;
    if (p == 0 || m < p) return -1;
    gsl_matrix *X = gsl_matrix_alloc((size_t)m, (size_t)p), *cov = gsl_matrix_alloc(p, p);
    gsl_vector *Y = gsl_vector_alloc((size_t)m), *b = gsl_vector_alloc(p);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc((size_t)m, (size_t)p);
    int rc = -1;
    if (X && cov && Y && b && w) {
        for (int i = 0; i < m; i++) {
            gsl_vector_set(Y, (size_t)i, y[i]);
            for (int c = 0; c < p; c++)
                gsl_matrix_set(X, (size_t)i, (size_t)c, x[i][cols[c]]);
        }
        double chisq;
        if (gsl_multifit_linear(X, Y, b, cov, &chisq, w) == GSL_SUCCESS) {
            for (int c = 0; c < p; c++) {
                coef[cols[c]] = gsl_vector_get(b, (size_t)c);
                /* GSL's cov is (X'X)^-1 times chisq / (m - p); none with no dof */
                var[cols[c]] = *dof > 0 ? gsl_matrix_get(cov, (size_t)c, (size_t)c) : NAN;
            }
            rc = 0;
        }
    }
    gsl_multifit_linear_free(w);
    gsl_vector_free(b);
    gsl_vector_free(Y);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    return rc;
}

/* Which terms the rows can tell apart (cal_cost_fit), into use[]. */
static void cost_terms(const double (*x)[COST_COLS], int m, int use[COST_COLS])
{
    double epc_lo = INFINITY, epc_hi = 0, epr_lo = INFINITY, epr_hi = 0;
    int plain = 0, streamed = 0, req_known = 1;
    for (int i = 0; i < m; i++) {
        double epc = x[i][COST_EV] / x[i][COST_DEL];
        epc_lo = fmin(epc_lo, epc);
        epc_hi = fmax(epc_hi, epc);
        if (!(x[i][COST_REQ] > 0)) {
            req_known = 0;
            continue;
        }
        if (x[i][COST_PLAIN] > 0) {
            plain++;
            continue;
        }
        streamed++;
        double epr = x[i][COST_EV] / x[i][COST_REQ];
        epr_lo = fmin(epr_lo, epr);
        epr_hi = fmax(epr_hi, epr);
    }
    use[COST_EV] = 1;
    use[COST_DEL] = m >= 3 && epc_hi > 2.0 * epc_lo;
    use[COST_REQ] = req_known && streamed >= 2 && epr_hi > 2.0 * epr_lo;
    use[COST_PLAIN] = use[COST_REQ] && plain >= 1 && streamed >= 1;
}

/* The references a prediction needs (cal_cost's), from the rows' steps. */
static void cost_references(const cal_step *steps, int n, cal_cost *out)
{
    double cb = 0, pc = 0, pe = 0;
    int ncb = 0, np = 0;
    for (int i = 0; i < n; i++) {
        const cal_step *s = &steps[i];
        double x[COST_COLS], req = requests_per_worker(s);
        if (cost_row(s, x) != 0 || !(req > 0)) continue;
        if (s->plain) {
            pc += s->callback_rate_per_worker / req;
            pe += s->event_rate_per_worker / req;
            np++;
        } else if (!s->probe) {
            cb += s->callback_rate_per_worker / req;
            ncb++;
        }
    }
    out->ref_callbacks_per_request = ncb ? cb / ncb : NAN;
    out->plain_callbacks_per_request = np ? pc / np : NAN;
    out->plain_events_per_request = np ? pe / np : NAN;
}

/* The least-squares fit with no negative cost and a per-event cost above 0:
 * of the fits on the per-event term and any of the other terms allowed[]
 * (the subsets of at most three), the one with the smallest residual sum of
 * squares among those whose costs are all >= 0 and per-event cost > 0. That
 * is the constrained optimum (it lies on one of these faces), and it does
 * not depend on which term a greedy drop would take out first: the busy
 * time of a noisy batch that drives the per-event cost below 0 beside a
 * positive delivery cost drops the delivery term, not the model. use[],
 * coef, var and dof are the chosen fit's. 0, or -1 when no subset fits
 * (a utilisation that falls with the load). */
static int cost_best_subset(const double (*x)[COST_COLS], const double *y, int m,
                            const int allowed[COST_COLS], int use[COST_COLS],
                            double coef[COST_COLS], double var[COST_COLS], int *dof)
{
    const int others[] = {COST_REQ, COST_DEL, COST_PLAIN};
    double best = INFINITY;
    for (int mask = 0; mask < 8; mask++) {
        int u[COST_COLS] = {0}, d;
        u[COST_EV] = 1;
        int skip = 0;
        for (int j = 0; j < 3; j++)
            if (mask & (1 << j)) {
                if (!allowed[others[j]]) skip = 1;
                u[others[j]] = 1;
            }
        double cf[COST_COLS], vr[COST_COLS];
        if (skip || ols(x, y, m, u, cf, vr, &d) != 0 || !(cf[COST_EV] > 0) ||
            !isfinite(cf[COST_EV]))
            continue;
        int ok = 1;
        for (int c = 0; c < COST_COLS; c++)
            if (u[c] && !(cf[c] >= 0)) ok = 0;
        if (!ok) continue;
        double rss = 0;
        for (int i = 0; i < m; i++) {
            double f = 0;
            for (int c = 0; c < COST_COLS; c++)
                if (u[c]) f += cf[c] * x[i][c];
            rss += (y[i] - f) * (y[i] - f);
        }
        if (!(rss < best)) continue;
        best = rss;
        memcpy(use, u, sizeof u);
        memcpy(coef, cf, sizeof cf);
        memcpy(var, vr, sizeof vr);
        *dof = d;
    }
    return isfinite(best) ? 0 : -1;
}

int cal_cost_fit(const cal_step *steps, int n, cal_cost *out)
{
    memset(out, 0, sizeof *out);
    double *terms[COST_COLS] = {&out->per_request_us, &out->per_delivery_us, &out->per_event_us,
                                &out->per_plain_response_us};
    double *cis[COST_COLS] = {out->per_request_us_ci, out->per_delivery_us_ci, out->per_event_us_ci,
                              out->per_plain_response_us_ci};
    for (int c = 0; c < COST_COLS; c++) {
        *terms[c] = NAN;
        set_nan2(cis[c]);
    }
    cost_references(steps, n, out);
    static double x[CAL_FIT_MAX_POINTS][COST_COLS], y[CAL_FIT_MAX_POINTS];
    int m = 0;
    for (int i = 0; i < n && m < CAL_FIT_MAX_POINTS; i++)
        if (cost_row(&steps[i], x[m]) == 0) y[m++] = steps[i].rho_mean;
    out->n = m;
    if (m < 2) return -ENODATA;
    int allowed[COST_COLS], use[COST_COLS];
    cost_terms((const double(*)[COST_COLS])x, m, allowed);
    double coef[COST_COLS], var[COST_COLS];
    int dof = 0;
    if (cost_best_subset((const double(*)[COST_COLS])x, y, m, allowed, use, coef, var, &dof) != 0) {
        for (int c = 0; c < COST_COLS; c++)
            *terms[c] = NAN;
        return -ERANGE; /* no cost model: loadgen compares rates */
    }
    out->identified = use[COST_DEL];
    out->request_identified = use[COST_REQ];
    out->plain_identified = use[COST_PLAIN];
    double t = dof >= 1 ? gsl_cdf_tdist_Pinv(0.975, dof) : NAN;
    for (int c = 0; c < COST_COLS; c++) {
        *terms[c] = coef[c];
        if (use[c]) {
            cis[c][0] = coef[c] - t * sqrt(var[c]);
            cis[c][1] = coef[c] + t * sqrt(var[c]);
        }
    }
    return 0;
}

double cal_cost_rho(const cal_cost *c, const cal_step *s)
{
    if (!(s->event_rate_per_worker > 0)) return NAN;
    double req = requests_per_worker(s);
    double r = isfinite(c->per_request_us) ? c->per_request_us : 0;
    double a = isfinite(c->per_delivery_us) ? c->per_delivery_us : 0;
    double p = isfinite(c->per_plain_response_us) ? c->per_plain_response_us : 0;
    double cb = s->callback_rate_per_worker > 0 ? s->callback_rate_per_worker : 0;
    double busy = (isfinite(req) ? req * (r + (s->plain ? p : 0)) : 0) + cb * a +
                  s->event_rate_per_worker * c->per_event_us;
    return busy * 1e-6;
}

double cal_cost_scale(const cal_step *steps, int n, int k, const cal_cost *c, double ci[2])
{
    double spp = 0, spm = 0, smm = 0;
    int m = 0;
    for (int i = 0; i < n; i++) {
        const cal_step *s = &steps[i];
        if (s->workers != k || s->saturated || s->probe || s->plain || !isfinite(s->rho_mean))
            continue;
        double p = cal_cost_rho(c, s);
        if (!(p > 0)) continue;
        spp += p * p;
        spm += p * s->rho_mean;
        smm += s->rho_mean * s->rho_mean;
        m++;
    }
    if (ci) set_nan2(ci);
    if (m < 2) return NAN;
    double g = spm / spp;
    if (ci) {
        double se = sqrt(fmax(smm - g * spm, 0) / (m - 1) / spp);
        double t = gsl_cdf_tdist_Pinv(0.975, m - 1);
        ci[0] = g - t * se;
        ci[1] = g + t * se;
    }
    return g;
}

static cal_check *add_check(cal_check *out, int max, int *n)
{
    if (*n >= max) return NULL;
    cal_check *c = &out[(*n)++];
    memset(c, 0, sizeof *c);
    return c;
}

static void judge(cal_check *c, double measured, double expected, double tol)
{
    c->measured = measured;
    c->expected = expected;
    c->tol = tol;
    c->rel_err = fabs(measured - expected) / fabs(expected);
    c->pass = isfinite(c->rel_err) && c->rel_err <= tol;
}

int cal_selftest_eval(const cal_per_k *pk, int npk, double injected_us, const double *baseline_us,
                      double es_tol, double pred_tol, double rho_lo, double rho_hi, cal_check *out,
                      int max, int *n_out)
{
    int fails = 0;
    *n_out = 0;
    for (int j = 0; j < npk; j++) {
        const cal_per_k *p = &pk[j];
        cal_check *c = add_check(out, max, n_out);
        if (!c) break;
        int fitted = !strcmp(p->method, "wls-bootstrap");
        snprintf(c->name, sizeof c->name, "k=%d E[S] - baseline E[S] (us) vs injected%s",
                 p->workers, isnan(baseline_us[j]) ? " [no baseline]" : "");
        judge(c, p->mean_service_us - baseline_us[j], injected_us, es_tol);
        if (isnan(baseline_us[j])) c->pass = 0;
        c->counted = !c->pass;
        fails += c->counted;

        double errs[CAL_MAX_LEVELS];
        int in_window = 0;
        for (int i = 0; fitted && i < p->n_levels; i++) {
            const cal_level *l = &p->levels[i];
            if (l->saturated || !(l->rho >= rho_lo) || !(l->rho <= rho_hi)) continue;
            c = add_check(out, max, n_out);
            if (!c) break;
            snprintf(c->name, sizeof c->name, "k=%d rho %.2f: fitted delay (us) vs measured",
                     p->workers, l->rho);
            judge(c, p->level_pred_us[i], l->delay_us, pred_tol);
            double e = isfinite(c->rel_err) ? c->rel_err : INFINITY;
            errs[in_window++] = e;
            c->counted = 0; /* one level never decides: the median does */
        }
        if (in_window < 2) {
            c = add_check(out, max, n_out);
            if (!c) break;
            snprintf(c->name, sizeof c->name, "k=%d fitted levels with rho in [%.2f, %.2f]",
                     p->workers, rho_lo, rho_hi);
            c->measured = in_window;
            c->expected = 2;
            c->rel_err = NAN;
            c->tol = NAN;
            c->pass = 0;
            c->counted = 1;
            fails++;
            continue;
        }
        qsort(errs, (size_t)in_window, sizeof errs[0], cmp_double);
        int m = in_window;
        double med = (m % 2) ? errs[m / 2] : 0.5 * (errs[m / 2 - 1] + errs[m / 2]);
        c = add_check(out, max, n_out);
        if (!c) break;
        snprintf(c->name, sizeof c->name, "k=%d median error over %d levels (%%)", p->workers,
                 in_window);
        c->measured = 100.0 * med;
        c->expected = 0.0;
        c->rel_err = med;
        c->tol = pred_tol;
        c->pass = med <= pred_tol;
        c->counted = !c->pass;
        fails += c->counted;
    }
    return fails;
}

double cal_selftest_r_true(const cal_injected *inj)
{
    double m = inj->mean_us, n = inj->events_per_request, c = inj->callbacks_per_request;
    double g = inj->events_per_delivery, m1 = inj->base_m1_us, m2 = inj->base_m2_us2;
    double q = n / (g * c); /* the share of callbacks that read a group of g events */
    if (!(g >= 1) || !(g <= n) || !(q <= 1) || !(m1 >= 0) || !(m2 >= m1 * m1) || !(m >= 0) ||
        !(m1 + m > 0))
        return NAN;
    double ex = g * m, ex2 = (inj->exponential ? g * (g + 1.0) : g * g) * m * m;
    double es = m1 + q * ex, es2 = m2 + q * (ex2 + 2.0 * ex * m1);
    return es2 / (2.0 * es);
}

int cal_baseline_moments(const cal_step *steps, int n, int k, double *m1_us, double *m2_us2)
{
    double w = 0, s1 = 0, s2 = 0;
    int used = 0;
    for (int i = 0; i < n; i++) {
        const cal_step *s = &steps[i];
        double cb = s->callback_rate_per_worker;
        if (s->workers != k || s->saturated || !(cb > 0) || !isfinite(cb) ||
            !isfinite(s->mean_service_us) || !isfinite(s->second_moment_us2))
            continue;
        w += cb;
        s1 += cb * s->mean_service_us;
        s2 += cb * s->second_moment_us2;
        used++;
    }
    *m1_us = used ? s1 / w : NAN;
    *m2_us2 = used ? s2 / w : NAN;
    return used;
}

int cal_selftest_delivery(const cal_per_k *p, double rho_lo, double rho_hi, double *events,
                          double *callbacks)
{
    *events = *callbacks = NAN;
    for (int pass = 0; pass < 2; pass++) {
        double se = 0, sc = 0;
        int m = 0;
        for (int i = 0; i < p->n_levels; i++) {
            const cal_level *l = &p->levels[i];
            if (l->saturated || !(l->event_rate_per_worker > 0) ||
                !(l->callback_rate_per_worker > 0) || !(l->events_per_request > 0))
                continue;
            if (pass == 0 && !(l->rho >= rho_lo && l->rho <= rho_hi)) continue;
            se += l->events_per_request;
            sc += l->events_per_request * l->callback_rate_per_worker / l->event_rate_per_worker;
            m++;
        }
        if (m) {
            *events = se / m;
            *callbacks = sc / m;
            return 0;
        }
    }
    return -ENODATA;
}

int cal_selftest_model(const cal_per_k *p, const cal_injected *inj, double budget_us, double r_tol,
                       double rule_tol, cal_check *out, int max, int *n_out)
{
    double r_true = cal_selftest_r_true(inj);
    int fails = 0;
    cal_check *c = add_check(out, max, n_out);
    if (!c) return fails;
    snprintf(c->name, sizeof c->name, "k=%d R (us) vs PK's for the injected client", p->workers);
    judge(c, p->r_us, r_true, NAN);
    /* the interval's half-width on PK's side, at least r_tol and at most
     * CAL_SELFTEST_R_TOL_MAX: an interval wider than that has not measured R */
    double side = r_true >= p->r_us ? p->r_us_ci[1] - p->r_us : p->r_us - p->r_us_ci[0];
    c->tol = fmin(fmax(r_tol, isfinite(side) ? side / r_true : 0), CAL_SELFTEST_R_TOL_MAX);
    c->pass = isfinite(c->rel_err) && c->rel_err <= c->tol;
    c->counted = !c->pass;
    fails += c->counted;

    if (!(c = add_check(out, max, n_out))) return fails;
    snprintf(c->name, sizeof c->name, "k=%d goodness of fit: p vs alpha", p->workers);
    c->measured = p->gof_p;
    c->expected = CAL_FIT_GOF_ALPHA;
    c->rel_err = c->tol = NAN;
    c->pass = p->fit_ok;
    c->counted = !c->pass;
    fails += c->counted;

    if (!(c = add_check(out, max, n_out))) return fails;
    snprintf(c->name, sizeof c->name, "k=%d certified rho vs PK's crossing of %g us", p->workers,
             budget_us);
    judge(c, p->safe_rho, budget_us / (budget_us + r_true), rule_tol);
    c->counted = !c->pass;
    fails += c->counted;
    return fails;
}

/* The level to hold out: counted, rho in [lo, hi], below another counted
 * level of another rate, nearest the window's middle; -1 when none. */
static int holdout_level(const cal_per_k *p, double lo, double hi)
{
    int idx[CAL_MAX_LEVELS], best = -1;
    int L = counted_levels(p, idx);
    double mid = 0.5 * (lo + hi);
    for (int a = 0; a < L; a++) {
        const cal_level *l = &p->levels[idx[a]];
        if (!(l->rho >= lo && l->rho <= hi)) continue;
        int above = 0;
        for (int b = 0; b < L; b++) {
            const cal_level *m = &p->levels[idx[b]];
            above |= m->request_rate != l->request_rate && m->rho > l->rho;
        }
        if (above && (best < 0 || fabs(l->rho - mid) < fabs(p->levels[best].rho - mid)))
            best = idx[a];
    }
    return best;
}

/* The band of a fit at rho, interpolated on its grid; 0, or -1 outside it. */
static int band_at(const cal_per_k *q, double rho, double *lo, double *hi)
{
    for (int g = 0; g + 1 < CAL_BAND_N; g++) {
        double r0 = q->band_rho[g], r1 = q->band_rho[g + 1];
        if (!(rho >= r0 && rho <= r1)) continue;
        double f = (rho - r0) / (r1 - r0);
        *lo = q->band_lo_us[g] + f * (q->band_lo_us[g + 1] - q->band_lo_us[g]);
        *hi = q->band_hi_us[g] + f * (q->band_hi_us[g + 1] - q->band_hi_us[g]);
        return isfinite(*lo) && isfinite(*hi) ? 0 : -1;
    }
    return -1;
}

int cal_selftest_holdout(const cal_step *steps, int n, const cal_per_k *p, double budget_us,
                         double rho_lo, double rho_hi, cal_check *out, int max, int *n_out)
{
    cal_check *c = add_check(out, max, n_out);
    if (!c) return 0;
    c->measured = c->expected = c->rel_err = c->tol = NAN;
    int h = holdout_level(p, rho_lo, rho_hi);
    if (h < 0) {
        snprintf(c->name, sizeof c->name,
                 "k=%d held-out level: none with rho in [%.2f, %.2f] below another", p->workers,
                 rho_lo, rho_hi);
        c->counted = 1;
        return 1;
    }
    const cal_level *l = &p->levels[h];
    snprintf(c->name, sizeof c->name, "k=%d held-out rho %.2f: delay (us) vs the fit without it",
             p->workers, l->rho);
    c->measured = l->delay_us;
    cal_step *copy = malloc((size_t)(n > 0 ? n : 1) * sizeof *copy);
    cal_per_k *q = malloc(sizeof *q);
    int ok = copy && q;
    if (ok) {
        memcpy(copy, steps, (size_t)n * sizeof *copy);
        for (int i = 0; i < n; i++)
            if (copy[i].workers == p->workers && copy[i].request_rate == l->request_rate)
                copy[i].level = -1; /* out of every level, so out of the curve */
        ok = cal_fit_per_k(copy, n, p->workers, budget_us, q) == 0 &&
             !strcmp(q->method, "wls-bootstrap");
    }
    double blo, bhi;
    if (ok && band_at(q, l->rho, &blo, &bhi) == 0) {
        double pred = cal_fit_predict_us(q, l->rho);
        double err = isfinite(l->delay_err_us) ? l->delay_err_us : 0;
        double side = l->delay_us >= pred ? bhi - pred : pred - blo;
        c->expected = pred;
        c->rel_err = fabs(l->delay_us - pred) / pred;
        c->tol = (fmax(side, 0) + err) / pred;
        c->pass = l->delay_us + err >= blo && l->delay_us - err <= bhi;
    }
    free(copy);
    free(q);
    c->counted = !c->pass;
    return c->counted;
}

int cal_fit_placed_doubtful(const cal_per_k *p, char *why, size_t n)
{
    if (n) why[0] = '\0';
    if (!p || !isfinite(p->safe_rho)) {
        snprintf(why, n, "certified nothing");
        return 1;
    }
    if (p->n_capped > 0) {
        snprintf(why, n, "certified only rho %.3f, a level over budget below %d within it",
                 p->safe_rho, p->n_capped);
        return 1;
    }
    if (p->safe_rho < CAL_PLACED_LOW_RHO) {
        snprintf(why, n, "certified only rho %.3f (below %.2f)", p->safe_rho, CAL_PLACED_LOW_RHO);
        return 1;
    }
    return 0;
}

int cal_fit_keep_placed(double placed_rho, double shared_rho)
{
    return isfinite(placed_rho) && !(shared_rho > placed_rho); /* NAN compares false */
}
