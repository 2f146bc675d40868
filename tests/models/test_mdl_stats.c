/* Unit tests of mdl_stats: the Kolmogorov law at tabulated points, KS
 * statistics by hand, the arrival test on Poisson and constant samples (fixed
 * seeds), cv2, and percentile intervals against exact binomial ranks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_test_rng.h"

#include "mdl_stats.h"

#define assert_near(got, want, tol)                                                                \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(fabs(g_ - w_) <= (tol)))                                                             \
            fail_msg("%s = %.10g, want %.10g +- %g", #got, g_, w_, (double)(tol));                 \
    } while (0)

static void test_kolmogorov_law(void **state)
{
    (void)state;
    /* values of 2 sum (-1)^(j-1) exp(-2 j^2 t^2), summed to convergence */
    assert_near(mdl_kolmogorov_q(0.5), 0.963945, 1e-5);
    assert_near(mdl_kolmogorov_q(1.0), 0.270000, 1e-5);
    assert_near(mdl_kolmogorov_q(1.36), 0.049486, 1e-5);
    assert_near(mdl_kolmogorov_q(1.628), 0.009976, 1e-5);
    assert_near(mdl_kolmogorov_q(2.0), 0.000671, 1e-6);
    /* the two series agree where they meet */
    assert_near(mdl_kolmogorov_q(1.18 - 1e-9), mdl_kolmogorov_q(1.18 + 1e-9), 1e-7);
    assert_near(mdl_kolmogorov_q(0.0), 1.0, 0);
    assert_near(mdl_kolmogorov_q(0.1), 1.0, 1e-12);
    assert_near(mdl_kolmogorov_q(10.0), 0.0, 1e-12);
}

static void test_ks_statistic_by_hand(void **state)
{
    (void)state;
    /* {2, 1} against Exp(1): F(1) = 0.63212, F(2) = 0.86466; the largest gap
     * is F(1) - 0 at the first point. The sample gets sorted in place. */
    double x[] = {2.0, 1.0};
    double d, p;
    assert_int_equal(mdl_ks_exponential(x, 2, 1.0, &d, &p), 0);
    assert_near(d, 1.0 - exp(-1.0), 1e-12);
    assert_near(x[0], 1.0, 0);
    /* the p-value is the Kolmogorov law at Stephens' (sqrt(n) + 0.12 +
     * 0.11/sqrt(n)) D, not at the uncorrected sqrt(n) D */
    double t = (sqrt(2.0) + 0.12 + 0.11 / sqrt(2.0)) * (1.0 - exp(-1.0));
    assert_near(p, mdl_kolmogorov_q(t), 1e-12);
    assert_true(fabs(p - mdl_kolmogorov_q(sqrt(2.0) * (1.0 - exp(-1.0)))) > 0.05);
    assert_int_equal(mdl_ks_gamma(x, 1, 1.0, 1.0, &d, &p), -EINVAL);
    assert_int_equal(mdl_ks_gamma(x, 2, 0.0, 1.0, &d, &p), -EINVAL);
    assert_int_equal(mdl_ks_gamma(x, 2, 1.0, NAN, &d, &p), -EINVAL);
}

static void test_ks_accepts_poisson_rejects_constant(void **state)
{
    (void)state;
    enum { N = 4000 };
    double *x = malloc(N * sizeof *x);
    uint64_t seed = 7;
    double d, p;
    for (int i = 0; i < N; i++)
        x[i] = rng_exp(&seed, 0.002); /* 500/s */
    assert_int_equal(mdl_ks_exponential(x, N, 0.002, &d, &p), 0);
    assert_true(p > 0.01);
    assert_true(d < 1.63 / sqrt(N));
    /* constant-rate arrivals at the same mean: D = 1 - exp(-1) */
    for (int i = 0; i < N; i++)
        x[i] = 0.002;
    assert_int_equal(mdl_ks_exponential(x, N, 0.002, &d, &p), 0);
    assert_near(d, 1.0 - exp(-1.0), 1e-3);
    assert_true(p < 1e-6);
    /* gamma(2) arrivals (sum of two exponentials): accepted as gamma(2),
     * rejected as exponential of the same mean */
    for (int i = 0; i < N; i++)
        x[i] = rng_exp(&seed, 0.001) + rng_exp(&seed, 0.001);
    assert_int_equal(mdl_ks_gamma(x, N, 2.0, 0.001, &d, &p), 0);
    assert_true(p > 0.01);
    assert_int_equal(mdl_ks_exponential(x, N, 0.002, &d, &p), 0);
    assert_true(p < 1e-6);
    free(x);
}

static void test_cv2(void **state)
{
    (void)state;
    const double x[] = {1, 2, 3, 4}; /* mean 2.5, sample variance 5/3 */
    assert_near(mdl_cv2(x, 4), (5.0 / 3.0) / 6.25, 1e-12);
    const double c[] = {3, 3, 3};
    assert_near(mdl_cv2(c, 3), 0.0, 0);
    assert_true(isnan(mdl_cv2(x, 1)));
    const double z[] = {-1, 1};
    assert_true(isnan(mdl_cv2(z, 2)));
}

/* Values 1..1000 are exact in a sub_bits-11 histogram, so the interval is the
 * order statistics X_(l), X_(u) themselves. Ranks by exact binomial sums:
 * median: l 469, u 532; p99: l 983, u 997 (95%). */
static void test_percentile_ci_ranks(void **state)
{
    (void)state;
    mdl_hist *h = mdl_hist_new_latency();
    for (uint64_t v = 1; v <= 1000; v++)
        mdl_hist_record(h, v);
    uint64_t lo, hi;
    assert_int_equal(mdl_hist_percentile_ci(h, 50, 0.95, &lo, &hi), 0);
    assert_int_equal(lo, 469);
    assert_int_equal(hi, 532);
    assert_int_equal(mdl_hist_percentile_ci(h, 99, 0.95, &lo, &hi), 0);
    assert_int_equal(lo, 983);
    assert_int_equal(hi, 997);
    /* the estimate lies inside its interval */
    uint64_t p90 = mdl_hist_percentile(h, 90);
    assert_int_equal(mdl_hist_percentile_ci(h, 90, 0.99, &lo, &hi), 0);
    assert_true(lo <= p90 && p90 <= hi);
    assert_int_equal(mdl_hist_percentile_ci(h, 0, 0.95, &lo, &hi), -EINVAL);
    assert_int_equal(mdl_hist_percentile_ci(h, 50, 1.0, &lo, &hi), -EINVAL);
    mdl_hist_reset(h);
    assert_int_equal(mdl_hist_percentile_ci(h, 50, 0.95, &lo, &hi), -EINVAL);
    /* five values: P(B <= 0) = 1/32 > 0.025 and P(B <= 4) < 0.975, so the
     * median's 95% interval is the whole range */
    for (uint64_t v = 10; v <= 50; v += 10)
        mdl_hist_record(h, v);
    assert_int_equal(mdl_hist_percentile_ci(h, 50, 0.95, &lo, &hi), 0);
    assert_int_equal(lo, 10);
    assert_int_equal(hi, 50);
    mdl_hist_free(h);
}

/* Coarse buckets: the interval widens to whole buckets, never narrower than
 * the exact order statistics. */
static void test_percentile_ci_coarse_buckets(void **state)
{
    (void)state;
    mdl_hist *fine = mdl_hist_new_latency();
    mdl_hist *coarse = mdl_hist_new(MDL_HIST_LATENCY_HIGHEST_NS, 2);
    uint64_t seed = 3;
    for (int i = 0; i < 3000; i++) {
        uint64_t v = (uint64_t)(rng_exp(&seed, 1e5)) + 1;
        mdl_hist_record(fine, v);
        mdl_hist_record(coarse, v);
    }
    uint64_t flo, fhi, clo, chi;
    assert_int_equal(mdl_hist_percentile_ci(fine, 99, 0.95, &flo, &fhi), 0);
    assert_int_equal(mdl_hist_percentile_ci(coarse, 99, 0.95, &clo, &chi), 0);
    assert_true(clo <= flo);
    assert_true(chi >= fhi);
    mdl_hist_free(fine);
    mdl_hist_free(coarse);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kolmogorov_law),
        cmocka_unit_test(test_ks_statistic_by_hand),
        cmocka_unit_test(test_ks_accepts_poisson_rejects_constant),
        cmocka_unit_test(test_cv2),
        cmocka_unit_test(test_percentile_ci_ranks),
        cmocka_unit_test(test_percentile_ci_coarse_buckets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
