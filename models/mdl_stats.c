/* mdl_stats: the Kolmogorov-Smirnov test against a gamma law, the squared
 * coefficient of variation, and distribution-free percentile confidence
 * intervals from a histogram (binomial order statistics). Pure. */
#include "mdl_stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* P(K > t) for the Kolmogorov distribution K, the limit law of sqrt(n) D.
 * Two series, each used where it converges in a few terms. */
double mdl_kolmogorov_q(double t)
{
    if (!(t > 0.0)) return 1.0;
    if (t < 1.18) {
        /* P(K <= t) = sqrt(2 pi)/t sum_{j>=1} exp(-(2j-1)^2 pi^2 / (8 t^2)) */
        double s = 0.0;
        for (int j = 1; j <= 20; j++) {
            double k = 2.0 * j - 1.0;
            s += exp(-k * k * M_PI * M_PI / (8.0 * t * t));
        }
        double q = 1.0 - sqrt(2.0 * M_PI) / t * s;
        return q < 0.0 ? 0.0 : (q > 1.0 ? 1.0 : q);
    }
    /* P(K > t) = 2 sum_{j>=1} (-1)^(j-1) exp(-2 j^2 t^2) */
    double s = 0.0;
    for (int j = 1; j <= 100; j++) {
        double term = exp(-2.0 * j * j * t * t);
        s += (j % 2 ? term : -term);
        if (term < 1e-17) break;
    }
    s *= 2.0;
    return s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
}

int mdl_ks_gamma(double *x, size_t n, double shape, double scale, double *d_out, double *p_out)
{
    if (!x || n < 2 || !isfinite(shape) || !(shape > 0.0) || !isfinite(scale) || !(scale > 0.0))
        return -EINVAL;
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0.0;
    for (size_t i = 0; i < n; i++) {
        double f = x[i] > 0.0 ? gsl_cdf_gamma_P(x[i], shape, scale) : 0.0;
        double above = (double)(i + 1) / (double)n - f; /* empirical cdf right of x_i */
        double below = f - (double)i / (double)n;       /* and left of it */
        if (above > d) d = above;
        if (below > d) d = below;
    }
    /* Stephens' small-sample correction of the asymptotic law. */
    double rn = sqrt((double)n);
    double p = mdl_kolmogorov_q((rn + 0.12 + 0.11 / rn) * d);
    if (d_out) *d_out = d;
    if (p_out) *p_out = p;
    return 0;
}

/* sup over v of F_a(v) - F_b(v + tol): F_a jumps only at its own values, and
 * F_b(v + tol) does not fall, so the sup is at a's values. */
static double one_sided(const double *a, size_t n, const double *b, size_t m, double tol)
{
    double d = 0.0;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        /* Inside a run of ties F_a has not reached its value yet, so the
         * difference there is never the largest: only the run's last counts. */
        if (i + 1 < n && a[i + 1] == a[i]) continue;
        while (j < m && b[j] <= a[i] + tol)
            j++;
        double diff = (double)(i + 1) / (double)n - (double)j / (double)m;
        if (diff > d) d = diff;
    }
    return d;
}

int mdl_ks_two_sample(double *x, size_t n, double *y, size_t m, double tol, double *d_out,
                      double *p_out)
{
    if (!x || !y || n < 2 || m < 2 || !(tol >= 0.0)) return -EINVAL;
    qsort(x, n, sizeof *x, cmp_double);
    qsort(y, m, sizeof *y, cmp_double);
    double d1 = one_sided(x, n, y, m, tol), d2 = one_sided(y, m, x, n, tol);
    double d = d1 > d2 ? d1 : d2;
    double ne = (double)n * (double)m / (double)(n + m);
    double rn = sqrt(ne);
    double p = mdl_kolmogorov_q((rn + 0.12 + 0.11 / rn) * d);
    if (d_out) *d_out = d;
    if (p_out) *p_out = p;
    return 0;
}

double mdl_cv2(const double *x, size_t n)
{
    if (!x || n < 2) return NAN;
    double mean = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    if (mean == 0.0) return NAN;
    double ss = 0.0;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    return ss / (double)(n - 1) / (mean * mean);
}

/* P(B <= k) for B ~ Binomial(n, q); k < 0 gives 0. */
static double binom_cdf(int64_t k, double q, uint64_t n)
{
    if (k < 0) return 0.0;
    if ((uint64_t)k >= n) return 1.0;
    /* gsl_cdf_binomial_P takes unsigned int; beyond that the regularised
     * incomplete beta identity P(B <= k) = I_{1-q}(n-k, k+1) is used directly. */
    return gsl_cdf_beta_P(1.0 - q, (double)(n - (uint64_t)k), (double)k + 1.0);
}

/* The smallest k in [0, n] with binom_cdf(k) >= target (binom_cdf(n) = 1). */
static uint64_t binom_quantile(double target, double q, uint64_t n)
{
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (binom_cdf((int64_t)mid, q, n) >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int mdl_hist_percentile_ci(const mdl_hist *h, double p, double conf, uint64_t *lo, uint64_t *hi)
{
    if (!h || h->total == 0 || !(p > 0.0 && p < 100.0) || !(conf > 0.0 && conf < 1.0))
        return -EINVAL;
    uint64_t n = h->total;
    double q = p / 100.0, alpha = 1.0 - conf;
    /* [X_(l), X_(u)] covers the q-quantile with probability
     * P(l <= B < u), B ~ Bin(n, q). l: the largest rank with P(B <= l-1) <= alpha/2;
     * u: the smallest rank with P(B <= u-1) >= 1 - alpha/2. */
    uint64_t k_lo = binom_quantile(alpha / 2.0, q, n); /* smallest k with cdf >= alpha/2 */
    /* binom_cdf(k_lo - 1) < alpha/2, so l = k_lo; when even P(B <= 0) >= alpha/2
     * (k_lo = 0) the sample is too small for a lower bound. */
    uint64_t l = k_lo;
    int lo_open = l == 0;
    uint64_t u = binom_quantile(1.0 - alpha / 2.0, q, n) + 1;
    int hi_open = u > n;

    /* Conservative about the bucket width: the low end of l's bucket, the
     * high end of u's, clamped to the exact extremes. */
    uint64_t vlo = h->min, vhi = h->max;
    uint64_t seen = 0;
    int got_lo = lo_open, got_hi = hi_open;
    for (int i = 0; i < h->n_buckets && !(got_lo && got_hi); i++) {
        if (!h->counts[i]) continue;
        seen += h->counts[i];
        if (!got_lo && seen >= l) {
            vlo = mdl_hist_bucket_low(h, i);
            got_lo = 1;
        }
        if (!got_hi && seen >= u) {
            vhi = mdl_hist_bucket_high(h, i);
            got_hi = 1;
        }
    }
    if (vlo < h->min) vlo = h->min;
    if (vhi > h->max) vhi = h->max;
    if (lo) *lo = vlo;
    if (hi) *hi = vhi;
    return 0;
}
