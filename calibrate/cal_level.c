/* cal_level: grouping a sweep's batches into levels. */
#include "cal_level.h"

#include <math.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

double cal_t95(int dof)
{
    return gsl_cdf_tdist_Pinv(0.975, dof < 1 ? 1.0 : (double)dof);
}

static int find(const cal_level *lv, int n, int k, int level)
{
    for (int i = 0; i < n; i++)
        if (lv[i].workers == k && lv[i].level == level) return i;
    return -1;
}

/* Whether batch s of level l counts in its means: a saturated batch is no
 * measurement, unless the whole level saturated (it keeps its figures). */
static int counts(const cal_level *l, const cal_step *s, const int *total, int j)
{
    return !s->saturated || l->n_saturated == total[j];
}

int cal_levels_build(const cal_step *steps, int n, int k, cal_level *out, int max)
{
    int m = 0;
    int total[CAL_MAX_LEVELS];
    /* the levels and their batch counts first */
    for (int i = 0; i < n; i++) {
        const cal_step *s = &steps[i];
        if (s->workers != k || s->level < 0) continue;
        int j = find(out, m, k, s->level);
        if (j < 0) {
            if (m >= max || m >= CAL_MAX_LEVELS) continue;
            j = m++;
            memset(&out[j], 0, sizeof out[j]);
            out[j].workers = k;
            out[j].level = s->level;
            out[j].request_rate = s->request_rate;
            total[j] = 0;
        }
        total[j]++;
        out[j].n_saturated += s->saturated != 0;
        out[j].repeated |= s->repeated;
        out[j].confirmed |= s->confirmed;
        out[j].retried += s->retried;
    }
    /* then the sums over the batches that count */
    double s_rho2[CAL_MAX_LEVELS] = {0}, s_d2[CAL_MAX_LEVELS] = {0}, s_busy_n[CAL_MAX_LEVELS] = {0},
           s_other_n[CAL_MAX_LEVELS] = {0}, s_rq_n[CAL_MAX_LEVELS] = {0};
    for (int i = 0; i < n; i++) {
        const cal_step *s = &steps[i];
        if (s->workers != k || s->level < 0) continue;
        int j = find(out, m, k, s->level);
        if (j < 0 || !counts(&out[j], s, total, j)) continue;
        cal_level *l = &out[j];
        l->n++;
        l->rho += s->rho_mean;
        s_rho2[j] += s->rho_mean * s->rho_mean;
        l->delay_us += s->overhead_mean_us;
        s_d2[j] += s->overhead_mean_us * s->overhead_mean_us;
        l->event_rate_per_worker += s->event_rate_per_worker;
        l->callback_rate_per_worker += s->callback_rate_per_worker;
        l->events_per_request += s->events_per_request;
        if (isfinite(s->host_busy)) {
            l->host_busy += s->host_busy;
            s_busy_n[j]++;
        }
        if (isfinite(s->host_other)) {
            l->host_other += s->host_other;
            s_other_n[j]++;
        }
        if (isfinite(s->run_delay_share)) {
            l->run_delay_share += s->run_delay_share;
            s_rq_n[j]++;
        }
    }
    for (int j = 0; j < m; j++) {
        cal_level *l = &out[j];
        double nn = l->n;
        l->rho /= nn;
        l->delay_us /= nn;
        l->event_rate_per_worker /= nn;
        l->callback_rate_per_worker /= nn;
        l->events_per_request /= nn;
        l->host_busy = s_busy_n[j] > 0 ? l->host_busy / s_busy_n[j] : NAN;
        l->host_other = s_other_n[j] > 0 ? l->host_other / s_other_n[j] : NAN;
        l->run_delay_share = s_rq_n[j] > 0 ? l->run_delay_share / s_rq_n[j] : NAN;
        l->saturated = 2 * l->n_saturated > total[j];
        if (l->n >= 2) {
            l->rho_sd = sqrt(fmax(0, (s_rho2[j] - nn * l->rho * l->rho) / (nn - 1)));
            l->delay_sd_us = sqrt(fmax(0, (s_d2[j] - nn * l->delay_us * l->delay_us) / (nn - 1)));
            l->delay_err_us = cal_t95(l->n - 1) * l->delay_sd_us / sqrt(nn);
        } else {
            l->rho_sd = l->delay_sd_us = l->delay_err_us = NAN;
        }
    }
    return m;
}

/* A level that may count in the pool (cal_level_pooled_err_us). */
static int poolable(const cal_level *v)
{
    return !v->saturated && isfinite(v->delay_us) && v->rho > 0 && v->rho < 1;
}

/* The pool of cal_level_pooled_err_us: the summed squared relative spread
 * (times each level's n - 1) into *cv2; returns its degrees of freedom. */
static int pool(const cal_level *l, int n, double budget_us, double *cv2)
{
    double bad_rate = INFINITY, lowest = INFINITY;
    int dof = 0;
    *cv2 = 0;
    for (int i = 0; i < n; i++)
        if (poolable(&l[i]) && l[i].delay_us < lowest) lowest = l[i].delay_us;
    double over = isfinite(budget_us) && isfinite(lowest) ? lowest + budget_us : INFINITY;
    /* the cap: confirmed and over by the mean (or saturated), as cal_rule's */
    for (int i = 0; i < n; i++)
        if (l[i].confirmed && (l[i].saturated || !(l[i].delay_us <= over)) &&
            l[i].request_rate < bad_rate)
            bad_rate = l[i].request_rate;
    for (int i = 0; i < n; i++) {
        const cal_level *v = &l[i];
        if (!poolable(v) || v->request_rate >= bad_rate || v->delay_us > over) continue;
        if (v->n >= 2 && v->delay_us > 0 && isfinite(v->delay_sd_us)) {
            double rel = v->delay_sd_us / v->delay_us;
            *cv2 += (v->n - 1) * rel * rel;
            dof += v->n - 1;
        }
    }
    return dof;
}

double cal_level_pooled_err_us(const cal_level *l, int n, int j, double budget_us)
{
    double cv2;
    int dof = pool(l, n, budget_us, &cv2);
    if (dof < 1 || j < 0 || j >= n || !(l[j].n >= 1)) return NAN;
    return cal_t95(dof) * sqrt(cv2 / dof) * l[j].delay_us / sqrt((double)l[j].n);
}

double cal_level_confirm_err_us(const cal_level *l, int n, int j, double budget_us)
{
    double cv2;
    if (pool(l, n, budget_us, &cv2) < CAL_CONFIRM_MIN_DOF) return 0;
    double e = cal_level_pooled_err_us(l, n, j, budget_us);
    return isfinite(e) ? e : 0;
}
