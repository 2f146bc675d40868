/* mdl_queue: the queueing formulas of mdl_queue.h. Pure arithmetic; every
 * function checks its domain first (NAN) and then stability (INFINITY). */
#include "mdl_queue.h"

#include <math.h>

static int rate_ok(double lambda)
{
    return isfinite(lambda) && lambda >= 0.0;
}

static int time_ok(double es)
{
    return isfinite(es) && es > 0.0;
}

double mdl_rho(double lambda, double es)
{
    if (!rate_ok(lambda) || !time_ok(es)) return NAN;
    return lambda * es;
}

double mdl_mg1_wq(double lambda, double es, double es2)
{
    if (!rate_ok(lambda) || !time_ok(es) || !isfinite(es2) || es2 < 0.0) return NAN;
    double rho = lambda * es;
    if (rho >= 1.0) return INFINITY;
    return lambda * es2 / (2.0 * (1.0 - rho));
}

double mdl_mg1_w(double lambda, double es, double es2)
{
    return mdl_mg1_wq(lambda, es, es2) + es;
}

double mdl_mg1_lq(double lambda, double es, double es2)
{
    double wq = mdl_mg1_wq(lambda, es, es2);
    if (lambda == 0.0 && !isnan(wq)) return 0.0;
    return lambda * wq;
}

double mdl_mm1_wq(double lambda, double es)
{
    return time_ok(es) ? mdl_mg1_wq(lambda, es, 2.0 * es * es) : NAN;
}

double mdl_md1_wq(double lambda, double es)
{
    return time_ok(es) ? mdl_mg1_wq(lambda, es, es * es) : NAN;
}

double mdl_kingman_wq(double lambda, double es, double ca2, double cs2)
{
    if (!rate_ok(lambda) || !time_ok(es) || !isfinite(ca2) || ca2 < 0.0 || !isfinite(cs2) ||
        cs2 < 0.0)
        return NAN;
    double rho = lambda * es;
    if (rho >= 1.0) return INFINITY;
    return rho / (1.0 - rho) * (ca2 + cs2) / 2.0 * es;
}

double mdl_rho_k(double lambda, int k, double es)
{
    if (k < 1) return NAN;
    return mdl_rho(lambda, es) / (double)k;
}

double mdl_mg1_max_lambda(double es, double es2, double budget_s)
{
    if (!time_ok(es) || !isfinite(es2) || es2 < 0.0 || !isfinite(budget_s) || budget_s < 0.0)
        return NAN;
    /* lambda E[S^2] / (2 (1 - lambda E[S])) <= b  <=>  lambda <= 2b / (E[S^2] + 2b E[S]);
     * with E[S^2] = 0 this is the stability limit 1/E[S] itself. */
    return 2.0 * budget_s / (es2 + 2.0 * budget_s * es);
}

double mdl_kingman_max_lambda(double es, double ca2, double cs2, double budget_s)
{
    if (!time_ok(es) || !isfinite(ca2) || ca2 < 0.0 || !isfinite(cs2) || cs2 < 0.0 ||
        !isfinite(budget_s) || budget_s < 0.0)
        return NAN;
    double v = (ca2 + cs2) / 2.0;
    if (v == 0.0) /* no variability, no queue: the stability limit */
        return 1.0 / es;
    /* rho/(1-rho) <= x  <=>  rho <= x/(1+x), with x = b / (v E[S]) */
    double x = budget_s / (v * es);
    return x / (1.0 + x) / es;
}
