/* mdl_stats: the statistics a run needs to judge itself. Pure, thread-safe
 * (no state; GSL's special functions only).
 *
 * The arrival test: a run that asks for Poisson (or gamma) arrivals checks the
 * gaps it actually dispatched against that law with a one-sample
 * Kolmogorov-Smirnov test. The p-value is the asymptotic Kolmogorov law with
 * Stephens' correction (sqrt(n) + 0.12 + 0.11/sqrt(n)) D, good from n of
 * about 5. When the law's mean is estimated from the same sample (Lilliefors'
 * case) the p-value is conservative: a wrong process is then rejected less
 * often, never more. PK's W_q presumes Poisson arrivals; a rejection says the
 * prediction stands on weaker ground.
 *
 * Percentile intervals: distribution-free, from the ranks of the order
 * statistics, P(X_(l) <= q_p <= X_(u)) >= conf with l, u binomial quantiles;
 * the histogram's bucket edges widen them (never narrow them). */
#ifndef MDL_STATS_H
#define MDL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "mdl_hist.h"

/* One-sample Kolmogorov-Smirnov test of x[0..n) against Gamma(shape, scale)
 * (shape 1 is the exponential of Poisson arrivals). Sorts x in place. Fills
 * the statistic D and its asymptotic p-value. Returns 0, or -EINVAL when
 * n < 2 or the parameters are not positive and finite. */
int mdl_ks_gamma(double *x, size_t n, double shape, double scale, double *d_out, double *p_out);
static inline int mdl_ks_exponential(double *x, size_t n, double mean, double *d, double *p)
{
    return mdl_ks_gamma(x, n, 1.0, mean, d, p);
}

/* Two-sample Kolmogorov-Smirnov test of x[0..n) against y[0..m): the
 * largest distance between the two empirical distribution functions, and its
 * asymptotic p-value at the effective size nm/(n+m) (with Stephens'
 * correction). Sorts both in place. Ties across the samples are handled
 * (both functions step together). Returns 0, or -EINVAL when n or m < 2.
 *
 * With tol > 0 the distance allows a horizontal shift of up to tol either
 * way (a Levy-type distance): D = sup_v max(F_x(v) - F_y(v + tol),
 * F_y(v) - F_x(v + tol), 0), so values that differ by less than tol count as
 * equal. Two samples of one law plus noise within tol give D no larger than
 * the plain statistic, so the plain law's p-value is conservative for it.
 * This compares processes at a stated resolution: a constant-rate schedule
 * dispatched with microseconds of jitter is not rejected for the jitter. */
int mdl_ks_two_sample(double *x, size_t n, double *y, size_t m, double tol, double *d_out,
                      double *p_out);

/* P(K > t) for the Kolmogorov distribution (the limit law of sqrt(n) D). */
double mdl_kolmogorov_q(double t);

/* Squared coefficient of variation of x[0..n) (var / mean^2); NAN if n < 2. */
double mdl_cv2(const double *x, size_t n);

/* A distribution-free confidence interval for the p-th percentile (p in
 * (0,100)) of a histogram's sample, at confidence level conf (e.g. 0.95),
 * from the binomial order-statistic ranks. lo/hi are bucket values; when the
 * sample is too small for the interval, lo = min or hi = max. Returns 0, or
 * -EINVAL when empty. */
int mdl_hist_percentile_ci(const mdl_hist *h, double p, double conf, uint64_t *lo, uint64_t *hi);

#endif
