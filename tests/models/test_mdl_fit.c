/* Unit tests of mdl_fit: recovery of known parameters from synthetic noisy
 * delay curves (fixed seeds), coverage of the confidence intervals over many
 * seeds, the Kingman variant, fixed moments, and points past the pole. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_test_rng.h"

#include "mdl_fit.h"
#include "mdl_queue.h"

/* The truth: transport 50 us, E[S] 20 us, E[S^2] 2 E[S]^2 (exponential). */
#define C_S 50e-6
#define M1_S 20e-6
#define M2_S2 (2.0 * M1_S * M1_S)
#define NPTS 14

/* rho from 0.05 to 0.85; additive noise of sd `noise_s`. */
static void make_points(double *lambda, double *d, uint64_t seed, double noise_s, int kingman)
{
    for (int i = 0; i < NPTS; i++) {
        double rho = 0.05 + 0.8 * i / (NPTS - 1);
        lambda[i] = rho / M1_S;
        double wq = kingman ? mdl_kingman_wq(lambda[i], M1_S, 0.0, M2_S2 / (M1_S * M1_S) - 1.0)
                            : mdl_mg1_wq(lambda[i], M1_S, M2_S2);
        d[i] = C_S + wq + noise_s * rng_normal(&seed);
    }
}

static int covers(const mdl_fit_param *p, double truth)
{
    return p->lo <= truth && truth <= p->hi;
}

static void test_recovers_pk_parameters(void **state)
{
    (void)state;
    double lambda[NPTS], d[NPTS];
    make_points(lambda, d, 11, 1e-6, 0); /* 1 us noise */
    mdl_fit_opts o = MDL_FIT_OPTS_DEFAULT;
    mdl_fit_result r;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), 0);
    assert_string_equal(r.model_name, "M/G/1 (Pollaczek-Khinchine)");
    assert_int_equal(r.model, MDL_FIT_PK);
    assert_int_equal(r.n_points, NPTS);
    assert_int_equal(r.dof, NPTS - 3);
    assert_true(fabs(r.c_s.value - C_S) < 0.05 * C_S);
    assert_true(fabs(r.m1_s.value - M1_S) < 0.05 * M1_S);
    assert_true(fabs(r.m2_s2.value - M2_S2) < 0.10 * M2_S2);
    assert_true(covers(&r.c_s, C_S));
    assert_true(covers(&r.m1_s, M1_S));
    assert_true(covers(&r.m2_s2, M2_S2));
    assert_true(r.m1_s.lo > 0 && r.m1_s.lo < r.m1_s.value && r.m1_s.value < r.m1_s.hi);
    assert_true(r.r2 > 0.99);
    assert_true(r.rmse_s < 3e-6);
    /* the curve predicts the truth where it was measured */
    double l = 0.7 / M1_S;
    assert_true(fabs(mdl_fit_predict(&r, l) - (C_S + mdl_mg1_wq(l, M1_S, M2_S2))) < 3e-6);
    assert_true(isinf(mdl_fit_predict(&r, 2.0 / M1_S)));
}

/* P(X <= k) for X ~ Binomial(n, q), summed in logs. */
static double binom_cdf(int k, int n, double q)
{
    double sum = 0.0;
    for (int j = 0; j <= k && j <= n; j++)
        sum += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) + j * log(q) +
                   (n - j) * log1p(-q));
    return sum;
}

/* A nominal `conf` interval must miss the truth at close to its rate: with
 * n independent seeds the misses are Binomial(n, 1 - conf), and a count in
 * either tail beyond 1e-4 fails. Too narrow misses too often; too wide (say
 * 4x, whose misses are those beyond 8 standard errors) almost never does.
 * `name` labels the message. */
static void check_miss_rate(const char *name, int misses, int n, double conf)
{
    double q = 1.0 - conf;
    double below = binom_cdf(misses, n, q);           /* P(X <= misses) */
    double above = 1.0 - binom_cdf(misses - 1, n, q); /* P(X >= misses) */
    if (below < 1e-4 || above < 1e-4)
        fail_msg("%s: %d misses of %d at nominal %g (expected %.1f; P(X <= %d) = %.2g, P(X >= %d) "
                 "= %.2g)",
                 name, misses, n, conf, n * q, misses, below, misses, above);
}

#define COVER_SEEDS 1000

/* Over 1000 seeds, 95% intervals should miss about 50 times each. */
static void test_intervals_cover_the_truth(void **state)
{
    (void)state;
    int miss_c = 0, miss_m1 = 0, miss_m2 = 0;
    for (uint64_t seed = 100; seed < 100 + COVER_SEEDS; seed++) {
        double lambda[NPTS], d[NPTS];
        make_points(lambda, d, seed, 3e-6, 0);
        mdl_fit_result r;
        assert_int_equal(mdl_fit_delay(lambda, d, NPTS, NULL, &r), 0);
        miss_c += !covers(&r.c_s, C_S);
        miss_m1 += !covers(&r.m1_s, M1_S);
        miss_m2 += !covers(&r.m2_s2, M2_S2);
    }
    print_message("misses of %d: c %d, m1 %d, m2 %d\n", COVER_SEEDS, miss_c, miss_m1, miss_m2);
    check_miss_rate("c", miss_c, COVER_SEEDS, 0.95);
    check_miss_rate("m1", miss_m1, COVER_SEEDS, 0.95);
    check_miss_rate("m2", miss_m2, COVER_SEEDS, 0.95);
}

/* The linear cases have exact t intervals: c with the moments given, and the
 * slope through the origin. Both must miss at their nominal rate too. */
static void test_linear_intervals_cover_the_truth(void **state)
{
    (void)state;
    int miss_c = 0, miss_slope = 0, miss_c90 = 0;
    mdl_fit_opts o = MDL_FIT_OPTS_DEFAULT;
    o.fix_moments = 1;
    o.fixed_m1_s = M1_S;
    o.fixed_m2_s2 = M2_S2;
    for (uint64_t seed = 5000; seed < 5000 + COVER_SEEDS; seed++) {
        double lambda[NPTS], d[NPTS], rho[NPTS];
        make_points(lambda, d, seed, 2e-6, 0);
        mdl_fit_result r;
        o.conf = 0.95;
        assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), 0);
        miss_c += !covers(&r.c_s, C_S);
        o.conf = 0.90;
        assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), 0);
        miss_c90 += !covers(&r.c_s, C_S);
        uint64_t s2 = seed * 7919;
        for (int i = 0; i < NPTS; i++)
            rho[i] = lambda[i] * M1_S + 0.01 * rng_normal(&s2);
        mdl_fit_param slope;
        assert_int_equal(mdl_fit_through_origin(lambda, rho, NPTS, 0.95, &slope), 0);
        miss_slope += !covers(&slope, M1_S);
    }
    print_message("misses of %d: c %d (95%%), c %d (90%%), slope %d\n", COVER_SEEDS, miss_c,
                  miss_c90, miss_slope);
    check_miss_rate("c, moments given", miss_c, COVER_SEEDS, 0.95);
    check_miss_rate("c, moments given, 90%", miss_c90, COVER_SEEDS, 0.90);
    check_miss_rate("slope through the origin", miss_slope, COVER_SEEDS, 0.95);
}

static void test_kingman_variant(void **state)
{
    (void)state;
    double lambda[NPTS], d[NPTS];
    make_points(lambda, d, 21, 0.5e-6, 1);
    mdl_fit_opts o = MDL_FIT_OPTS_DEFAULT;
    o.model = MDL_FIT_KINGMAN_CA0;
    mdl_fit_result r;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), 0);
    assert_int_equal(r.model, MDL_FIT_KINGMAN_CA0);
    assert_string_equal(r.model_name, "G/G/1 (Kingman, ca2=0)");
    assert_true(fabs(r.m1_s.value - M1_S) < 0.05 * M1_S);
    assert_true(fabs(r.m2_s2.value - M2_S2) < 0.10 * M2_S2);
    assert_true(covers(&r.m1_s, M1_S));
    /* the same points read as PK give a wrong (smaller) E[S^2] */
    mdl_fit_result pk;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, NULL, &pk), 0);
    assert_true(pk.m2_s2.value < 0.8 * M2_S2);
}

static void test_fixed_moments_fit_c_only(void **state)
{
    (void)state;
    double lambda[NPTS], d[NPTS];
    make_points(lambda, d, 31, 2e-6, 0);
    mdl_fit_opts o = MDL_FIT_OPTS_DEFAULT;
    o.fix_moments = 1;
    o.fixed_m1_s = M1_S;
    o.fixed_m2_s2 = M2_S2;
    mdl_fit_result r;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), 0);
    assert_true(r.m1_s.fixed && r.m2_s2.fixed && !r.c_s.fixed);
    assert_true(r.m1_s.value == M1_S && r.m2_s2.value == M2_S2);
    assert_int_equal(r.dof, NPTS - 1);
    assert_true(covers(&r.c_s, C_S));
    /* the interval is about 2 sd / sqrt(n) wide on each side */
    assert_true(r.c_s.hi - r.c_s.lo < 4.0 * 2e-6 * 2.5 / sqrt(NPTS));
    o.fixed_m1_s = -1;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), -EINVAL);
}

static void test_points_past_the_pole_do_not_blow_up(void **state)
{
    (void)state;
    double lambda[NPTS + 2], d[NPTS + 2];
    make_points(lambda, d, 41, 1e-6, 0);
    /* two saturated steps: offered beyond 1/E[S], delay measured but huge */
    lambda[NPTS] = 1.05 / M1_S;
    d[NPTS] = 5e-3;
    lambda[NPTS + 1] = 1.3 / M1_S;
    d[NPTS + 1] = 2e-2;
    mdl_fit_result r;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS + 2, NULL, &r), 0);
    assert_true(isfinite(r.c_s.value) && isfinite(r.m1_s.value) && isfinite(r.m2_s2.value));
    assert_true(r.m1_s.value > 0 && r.m2_s2.value >= r.m1_s.value * r.m1_s.value);
    /* (the saturated points do distort the fit: callers leave them out) */
    assert_true(isfinite(r.r2) && isfinite(r.m1_s.lo) && isfinite(r.m1_s.hi));
    /* a point exactly at the pole is as harmless */
    lambda[NPTS] = 1.0 / M1_S;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS + 1, NULL, &r), 0);
    assert_true(isfinite(r.m1_s.value) && isfinite(r.m2_s2.value));
}

/* With E[S] given (as the measured utilisation gives it), c and E[S^2] are
 * fitted by the same solver; the utilisation line's slope is E[S]. */
static void test_pinned_m1_and_utilisation_slope(void **state)
{
    (void)state;
    double lambda[NPTS], d[NPTS], rho[NPTS];
    make_points(lambda, d, 61, 2e-6, 0);
    uint64_t seed = 62;
    for (int i = 0; i < NPTS; i++)
        rho[i] = lambda[i] * M1_S * (1.0 + 0.01 * rng_normal(&seed));
    mdl_fit_param slope;
    assert_int_equal(mdl_fit_through_origin(lambda, rho, NPTS, 0.95, &slope), 0);
    assert_true(fabs(slope.value - M1_S) < 0.02 * M1_S);
    assert_true(covers(&slope, M1_S));
    assert_true(slope.hi - slope.lo < 0.05 * M1_S);

    mdl_fit_opts o = MDL_FIT_OPTS_DEFAULT;
    o.pin_m1_s = slope.value;
    mdl_fit_result r;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), 0);
    assert_true(r.m1_s.fixed);
    assert_true(r.m1_s.value == slope.value);
    assert_int_equal(r.dof, NPTS - 2);
    assert_true(fabs(r.c_s.value - C_S) < 0.05 * C_S);
    assert_true(fabs(r.m2_s2.value - M2_S2) < 0.10 * M2_S2);
    assert_true(covers(&r.m2_s2, M2_S2));
    assert_true(covers(&r.c_s, C_S));
    /* through the origin by hand: y = {2, 4.2}, x = {1, 2}: b = 10.4 / 5 */
    const double x2[] = {1, 2}, y2[] = {2, 4.2};
    assert_int_equal(mdl_fit_through_origin(x2, y2, 2, 0.95, &slope), 0);
    assert_true(fabs(slope.value - 2.08) < 1e-12);
    assert_int_equal(mdl_fit_through_origin(x2, y2, 1, 0.95, &slope), -EINVAL);
    o.pin_m1_s = -1;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, &o, &r), -EINVAL);
}

static void test_bad_input(void **state)
{
    (void)state;
    double lambda[NPTS], d[NPTS];
    make_points(lambda, d, 51, 1e-6, 0);
    mdl_fit_result r;
    assert_int_equal(mdl_fit_delay(lambda, d, 3, NULL, &r), -EINVAL);
    d[2] = NAN;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, NULL, &r), -EINVAL);
    d[2] = 1e-4;
    lambda[0] = -1;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, NULL, &r), -EINVAL);
    for (int i = 0; i < NPTS; i++)
        lambda[i] = 0;
    assert_int_equal(mdl_fit_delay(lambda, d, NPTS, NULL, &r), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recovers_pk_parameters),
        cmocka_unit_test(test_intervals_cover_the_truth),
        cmocka_unit_test(test_linear_intervals_cover_the_truth),
        cmocka_unit_test(test_kingman_variant),
        cmocka_unit_test(test_fixed_moments_fit_c_only),
        cmocka_unit_test(test_points_past_the_pole_do_not_blow_up),
        cmocka_unit_test(test_pinned_m1_and_utilisation_slope),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
