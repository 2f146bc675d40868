/* cal_fit: per-k fit, safe region, and the self-test's checks. */
#include "cal_fit.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "cal_rule.h"
#include "mdl_queue.h"

#define CAL_FIT_MAX_POINTS 256

static int usable(const cal_step *s, int k)
{
    return s->workers == k && !s->saturated && !s->outlier && s->event_rate_per_worker > 0 &&
           isfinite(s->event_rate_per_worker) && isfinite(s->overhead_mean_us);
}

static double safe_lambda(mdl_fit_model model, double m1_s, double m2_s2, double budget_s)
{
    if (model == MDL_FIT_KINGMAN_CA0) {
        double cs2 = m2_s2 / (m1_s * m1_s) - 1.0;
        return mdl_kingman_max_lambda(m1_s, 0.0, cs2 > 0 ? cs2 : 0.0, budget_s);
    }
    return mdl_mg1_max_lambda(m1_s, m2_s2, budget_s);
}

int cal_fit_per_k(cal_step *steps, int n, int k, double budget_us, mdl_fit_model model,
                  cal_per_k *out)
{
    memset(out, 0, sizeof *out);
    out->workers = k;
    snprintf(out->method, sizeof out->method, "none");
    double nan2[2] = {NAN, NAN};
    out->mean_service_us = out->second_moment_us2 = out->transport_us = out->r2 = NAN;
    memcpy(out->mean_service_us_ci, nan2, sizeof nan2);
    memcpy(out->second_moment_us2_ci, nan2, sizeof nan2);
    memcpy(out->transport_us_ci, nan2, sizeof nan2);
    out->events_per_request = out->safe_event_rate_per_worker = out->safe_rho = NAN;
    out->safe_rate_per_worker = out->safe_total_rate = out->conservative_safe_total_rate = NAN;
    out->util_service_us = NAN;
    out->model_safe_total_rate = out->model_rho = out->measured_rho = NAN;
    memcpy(out->util_service_us_ci, nan2, sizeof nan2);

    double lambda[CAL_FIT_MAX_POINTS], d[CAL_FIT_MAX_POINTS];
    double lam_rho[CAL_FIT_MAX_POINTS], rho[CAL_FIT_MAX_POINTS];
    int m = 0, n_rho = 0, busiest = -1;
    double epr_sum = 0;
    int epr_n = 0;
    for (int i = 0; i < n; i++) {
        if (steps[i].workers != k) continue;
        out->n_steps++;
        steps[i].used_in_fit = 0;
        steps[i].fit_pred_us = NAN;
        if (!usable(&steps[i], k) || m >= CAL_FIT_MAX_POINTS) continue;
        lambda[m] = steps[i].event_rate_per_worker;
        d[m] = steps[i].overhead_mean_us * 1e-6;
        m++;
        if (isfinite(steps[i].rho_mean)) {
            lam_rho[n_rho] = steps[i].event_rate_per_worker;
            rho[n_rho++] = steps[i].rho_mean;
        }
        steps[i].used_in_fit = 1;
        if (busiest < 0 || steps[i].rho_mean > steps[busiest].rho_mean) busiest = i;
        if (isfinite(steps[i].events_per_request)) {
            epr_sum += steps[i].events_per_request;
            epr_n++;
        }
        if (steps[i].request_rate > out->max_measured_rate)
            out->max_measured_rate = steps[i].request_rate;
    }
    out->n_fit = m;
    if (m == 0) return -ENODATA;
    out->events_per_request = epr_n ? epr_sum / epr_n : NAN;

    /* E[S] from the loop's own utilisation: rho = lambda E[S]. */
    mdl_fit_param util;
    if (n_rho >= 2 && mdl_fit_through_origin(lam_rho, rho, (size_t)n_rho, 0.95, &util) == 0) {
        out->util_service_us = util.value * 1e6;
        out->util_service_us_ci[0] = util.lo * 1e6;
        out->util_service_us_ci[1] = util.hi * 1e6;
    }

    /* The delay's noise grows with the delay: relative weights. */
    double w[CAL_FIT_MAX_POINTS];
    for (int i = 0; i < m; i++)
        w[i] = 1.0 / fmax(d[i] * d[i], 1e-18);
    mdl_fit_opts o = MDL_FIT_OPTS_DEFAULT;
    o.model = model;
    o.weights = w;
    /* Two nested models: E[S] free (three parameters), or pinned at the
     * utilisation's (two). The free one is taken only when it is well
     * determined and fits significantly better (F test, 5%): otherwise the
     * pole is not something the curve can tell, and the measured E[S] is. */
    mdl_fit_result free_fit, pinned_fit;
    int free_ok = m >= 4 && mdl_fit_delay(lambda, d, (size_t)m, &o, &free_fit) == 0 &&
                  isfinite(free_fit.m1_s.value) && isfinite(free_fit.m2_s2.value) &&
                  free_fit.m1_s.hi <= CAL_FIT_MAX_CI_RATIO * free_fit.m1_s.lo &&
                  !(free_fit.m1_s.value < out->util_service_us * 1e-6 / CAL_FIT_MAX_UTIL_RATIO) &&
                  !(free_fit.m1_s.value > out->util_service_us * 1e-6 * CAL_FIT_MAX_UTIL_RATIO) &&
                  /* The utilisation can only overstate the client's E[S]
                   * (another process's time while a callback runs counts as
                   * busy), never understate it: a free E[S] whose whole
                   * interval lies above it is the curve's noise, not the
                   * client. */
                  !(out->util_service_us > 0 && out->util_service_us * 1e-6 < free_fit.m1_s.lo);
    int pinned_ok = 0;
    if (m >= 3 && out->util_service_us > 0) {
        o.pin_m1_s = out->util_service_us * 1e-6;
        pinned_ok = mdl_fit_delay(lambda, d, (size_t)m, &o, &pinned_fit) == 0 &&
                    isfinite(pinned_fit.m2_s2.value);
        if (pinned_ok) {
            pinned_fit.m1_s.lo = out->util_service_us_ci[0] * 1e-6;
            pinned_fit.m1_s.hi = out->util_service_us_ci[1] * 1e-6;
        }
    }
    out->f_test_p = NAN;
    if (free_ok && pinned_ok && free_fit.dof > 0) {
        double f = (pinned_fit.chisq - free_fit.chisq) / (free_fit.chisq / free_fit.dof);
        out->f_test_p = f > 0 ? gsl_cdf_fdist_Q(f, 1.0, (double)free_fit.dof) : 1.0;
        if (!(out->f_test_p < CAL_FIT_F_TEST_ALPHA)) free_ok = 0;
    }
    int ok = free_ok || pinned_ok;
    const char *method = free_ok ? "fit" : "fit-util";
    if (ok) out->fit = free_ok ? free_fit : pinned_fit;
    double m1_s, m2_s2, m1_hi, m2_hi;
    if (ok) {
        snprintf(out->method, sizeof out->method, "%s", method);
        m1_s = out->fit.m1_s.value;
        m2_s2 = out->fit.m2_s2.value;
        m1_hi = out->fit.m1_s.hi;
        m2_hi = out->fit.m2_s2.hi;
        out->mean_service_us = m1_s * 1e6;
        out->mean_service_us_ci[0] = out->fit.m1_s.lo * 1e6;
        out->mean_service_us_ci[1] = m1_hi * 1e6;
        out->second_moment_us2 = m2_s2 * 1e12;
        out->second_moment_us2_ci[0] = out->fit.m2_s2.lo * 1e12;
        out->second_moment_us2_ci[1] = m2_hi * 1e12;
        out->transport_us = out->fit.c_s.value * 1e6;
        out->transport_us_ci[0] = out->fit.c_s.lo * 1e6;
        out->transport_us_ci[1] = out->fit.c_s.hi * 1e6;
        out->r2 = out->fit.r2;
    } else {
        /* The busiest step's own moments: busy time per event, and the
         * per-callback second moment (one event per callback when the server
         * spaces its tokens). */
        snprintf(out->method, sizeof out->method, "moments");
        const cal_step *b = &steps[busiest];
        m1_s = b->service_per_event_us * 1e-6;
        m2_s2 = fmax(b->second_moment_us2 * 1e-12, m1_s * m1_s);
        m1_hi = m1_s;
        m2_hi = m2_s2;
        out->mean_service_us = m1_s * 1e6;
        out->second_moment_us2 = m2_s2 * 1e12;
        double cmin = INFINITY;
        for (int i = 0; i < m; i++)
            cmin = fmin(cmin, d[i] * 1e6);
        out->transport_us = cmin;
        /* a fit object that predicts with these moments */
        memset(&out->fit, 0, sizeof out->fit);
        out->fit.model = model;
        out->fit.model_name = mdl_fit_model_name(model);
        out->fit.c_s.value = cmin * 1e-6;
        out->fit.m1_s.value = m1_s;
        out->fit.m2_s2.value = m2_s2;
        out->fit.r2 = NAN;
    }
    for (int i = 0; i < n; i++)
        if (steps[i].workers == k && isfinite(steps[i].event_rate_per_worker))
            steps[i].fit_pred_us = mdl_fit_predict(&out->fit, steps[i].event_rate_per_worker) * 1e6;

    if (!(m1_s > 0) || !isfinite(m1_s))
        return 0; /* nothing sound to certify; the safe figures stay NAN */
    double b_s = budget_us * 1e-6;
    out->model_safe_total_rate = k * safe_lambda(model, m1_s, m2_s2, b_s) / out->events_per_request;
    /* The fit's conservative bound: the utilisation at which the predicted
     * queueing delay with the upper ends of E[S] and E[S^2] reaches the budget. */
    double m1c = m1_hi > 0 && isfinite(m1_hi) ? m1_hi : m1_s;
    double m2c = isfinite(m2_hi) ? fmax(m2_hi, m1c * m1c) : m2_s2;
    out->model_rho = safe_lambda(model, m1c, m2c, b_s) * m1c;
    out->fit_ok = ok && isfinite(out->r2) && out->r2 >= CAL_FIT_MIN_R2;

    /* The rule (cal_rule.h) over the measured levels of this k. The
     * client's queueing delay at a level is its mean delay minus the fitted
     * transport term, which is at least 0 and at most the lowest delay. */
    double c_us = out->transport_us, lowest = INFINITY;
    for (int i = 0; i < m; i++)
        lowest = fmin(lowest, d[i] * 1e6);
    if (!(c_us >= 0)) c_us = 0;
    if (c_us > lowest) c_us = lowest;
    cal_point pts[CAL_FIT_MAX_POINTS];
    int np = 0;
    for (int i = 0; i < n && np < CAL_FIT_MAX_POINTS; i++) {
        const cal_step *s = &steps[i];
        if (s->workers != k || s->outlier) continue;
        pts[np++] = (cal_point){.rho = s->rho_mean,
                                .delay_us = s->overhead_mean_us - c_us,
                                .err_us = 0,
                                .saturated = s->saturated,
                                .confirmed = s->confirmed};
    }
    cal_rule_result rule;
    cal_rule_certify(pts, np, budget_us, out->model_rho, out->fit_ok, &rule);
    out->measured_rho = rule.measured_rho;
    snprintf(out->limited_by, sizeof out->limited_by, "%s", cal_limit_name(rule.limit));
    snprintf(out->cert_note, sizeof out->cert_note, "%s", rule.note);
    if (!isfinite(rule.safe_rho)) return 0;
    /* The certified utilisation in rates, with the upper end of E[S]: the
     * conservative figure is the one certified. */
    double lam = rule.safe_rho / m1c;
    out->safe_event_rate_per_worker = lam;
    out->safe_rho = rule.safe_rho;
    out->safe_rate_per_worker = lam / out->events_per_request;
    out->safe_total_rate = k * out->safe_rate_per_worker;
    out->conservative_safe_total_rate = out->safe_total_rate;
    return 0;
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cal_baseline_service_us(const cal_step *steps, int n, int k, double ci[2])
{
    double lam[CAL_FIT_MAX_POINTS], rho[CAL_FIT_MAX_POINTS];
    int m = 0;
    for (int i = 0; i < n && m < CAL_FIT_MAX_POINTS; i++)
        if (usable(&steps[i], k) && isfinite(steps[i].rho_mean)) {
            lam[m] = steps[i].event_rate_per_worker;
            rho[m++] = steps[i].rho_mean;
        }
    mdl_fit_param b;
    if (ci) ci[0] = ci[1] = NAN;
    if (m < 2 || mdl_fit_through_origin(lam, rho, (size_t)m, 0.95, &b) != 0) return NAN;
    if (ci) {
        ci[0] = b.lo * 1e6;
        ci[1] = b.hi * 1e6;
    }
    return b.value * 1e6;
}

int cal_selftest_eval(const cal_step *steps, int n, const cal_per_k *pk, int npk,
                      double injected_us, const double *baseline_us, double es_tol, double pred_tol,
                      double rho_lo, double rho_hi, cal_check *out, int max, int *n_out)
{
    int fails = 0;
    *n_out = 0;
    for (int j = 0; j < npk; j++) {
        cal_check *c = add_check(out, max, n_out);
        if (!c) break;
        int fitted = !strncmp(pk[j].method, "fit", 3);
        snprintf(c->name, sizeof c->name, "k=%d E[S] - baseline E[S] (us) vs injected%s",
                 pk[j].workers,
                 !fitted                 ? " [no fit]"
                 : isnan(baseline_us[j]) ? " [no baseline]"
                                         : "");
        judge(c, pk[j].mean_service_us - baseline_us[j], injected_us, es_tol);
        if (!fitted || isnan(baseline_us[j])) c->pass = 0;
        c->counted = !c->pass;
        fails += c->counted;

        double errs[64];
        int in_window = 0;
        for (int i = 0; i < n; i++) {
            const cal_step *s = &steps[i];
            if (s->workers != pk[j].workers || !s->used_in_fit || !(s->rho_mean >= rho_lo) ||
                !(s->rho_mean <= rho_hi))
                continue;
            c = add_check(out, max, n_out);
            if (!c) break;
            snprintf(c->name, sizeof c->name, "k=%d rho %.2f: PK delay (us) vs measured",
                     s->workers, s->rho_mean);
            judge(c, s->fit_pred_us, s->overhead_mean_us, pred_tol);
            double e = isfinite(c->rel_err) ? c->rel_err : INFINITY;
            if (in_window < 64) errs[in_window] = e;
            in_window++;
            c->counted = !(e <= 3.0 * pred_tol);
            fails += c->counted;
        }
        if (in_window < 2) {
            c = add_check(out, max, n_out);
            if (!c) break;
            snprintf(c->name, sizeof c->name, "k=%d fitted steps with rho in [%.2f, %.2f]",
                     pk[j].workers, rho_lo, rho_hi);
            c->measured = in_window;
            c->expected = 2;
            c->rel_err = NAN;
            c->tol = NAN;
            c->pass = 0;
            c->counted = 1;
            fails++;
            continue;
        }
        int m = in_window < 64 ? in_window : 64;
        qsort(errs, (size_t)m, sizeof errs[0], cmp_double);
        double med = (m % 2) ? errs[m / 2] : 0.5 * (errs[m / 2 - 1] + errs[m / 2]);
        c = add_check(out, max, n_out);
        if (!c) break;
        snprintf(c->name, sizeof c->name, "k=%d median PK error over %d steps (%%)", pk[j].workers,
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
