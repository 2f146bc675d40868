/* test_lg_sweep: a sweep's stage rates from its bounds, and Inference Perf's
 * saturation probe (burn-down rates, percentile, stage rates), with known
 * answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "lg_sweep.h"

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want))) fail_msg("rate %.17g, expected %.17g", got, want);
}

static void linear_steps_evenly_up_to_the_top(void **state)
{
    (void)state;
    double r[6] = {0};
    assert_int_equal(lg_sweep_rates(LG_SWEEP_LINEAR, 6, lg_sweep_min_rate(6, 0, 400), 400, r), 0);
    for (int i = 0; i < 6; i++)
        near(r[i], 400.0 * (i + 1) / 6); /* 66.7, 133.3, ..., 400: the main job's sweep */
    near(r[0], 66.666666666666667);
    near(r[5], 400);
}

static void geometric_doubles_from_its_default_floor(void **state)
{
    (void)state;
    double r[4] = {0}, want[4] = {100, 200, 400, 800};
    near(lg_sweep_min_rate(4, 0, 800), 100); /* 800 / 2^3 */
    assert_int_equal(lg_sweep_rates(LG_SWEEP_GEOMETRIC, 4, 100, 800, r), 0);
    for (int i = 0; i < 4; i++)
        near(r[i], want[i]);
}

static void geometric_keeps_a_constant_ratio_from_a_given_floor(void **state)
{
    (void)state;
    double r[3] = {0};
    near(lg_sweep_min_rate(3, 10, 1000), 10); /* given: kept */
    assert_int_equal(lg_sweep_rates(LG_SWEEP_GEOMETRIC, 3, 10, 1000, r), 0);
    near(r[0], 10);
    near(r[1], 100);
    near(r[2], 1000);
    /* one stage: the top alone */
    assert_int_equal(lg_sweep_rates(LG_SWEEP_GEOMETRIC, 1, 1000, 1000, r), 0);
    near(r[0], 1000);
}

static void bad_bounds_are_refused_and_leave_the_rates(void **state)
{
    (void)state;
    double r[2] = {-1, -1};
    assert_int_equal(lg_sweep_rates(LG_SWEEP_LINEAR, 0, 1, 10, r), -1);
    assert_int_equal(lg_sweep_rates(LG_SWEEP_NONE, 2, 1, 10, r), -1);
    assert_int_equal(lg_sweep_rates(LG_SWEEP_GEOMETRIC, 2, 20, 10, r), -1); /* floor over the top */
    assert_int_equal(lg_sweep_rates(LG_SWEEP_GEOMETRIC, 2, 0, 10, r), -1);
    assert_int_equal(lg_sweep_rates(LG_SWEEP_LINEAR, 2, 1, INFINITY, r), -1);
    assert_int_equal(lg_sweep_rates(LG_SWEEP_LINEAR, 2, 1, NAN, r), -1);
    assert_true(r[0] == -1 && r[1] == -1);
}

/* Inference Perf's stages: linspace(1, s, n), and 1 + s - geomspace(s, 1, n). */
static void probe_rates_as_inference_perf_places_them(void **state)
{
    (void)state;
    double r[5] = {0};
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 5, 101, r), 0);
    const double lin[] = {1, 26, 51, 76, 101};
    for (int i = 0; i < 5; i++)
        near(r[i], lin[i]);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_GEOMETRIC, 3, 100, r), 0);
    near(r[0], 1);   /* 1 + 100 - 100 */
    near(r[1], 91);  /* 1 + 100 - 10 */
    near(r[2], 100); /* 1 + 100 - 1 */
    /* rounded to 0.01 request/s, as Inference Perf rounds them */
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 2, 10.126, r), 0);
    near(r[0], 1);
    near(r[1], 10.13);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_GEOMETRIC, 4, 1000, r), 0);
    near(r[1], 901); /* 1 + 1000 - 100 */
    near(r[2], 991);
    /* one stage: 1 request/s, whatever the saturation rate */
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 1, 50, r), 0);
    near(r[0], 1);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_GEOMETRIC, 1, 50, r), 0);
    near(r[0], 1);
    /* refused, the rates untouched: no stage, no kind, no rate, a stage at 0 */
    double z[2] = {-1, -1};
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 0, 10, z), -1);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_NONE, 2, 10, z), -1);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 2, 0, z), -1);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 2, NAN, z), -1);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 2, INFINITY, z), -1);
    assert_int_equal(lg_sweep_probe_rates(LG_SWEEP_LINEAR, 2, 0.004, z), -1);
    assert_true(z[0] == -1 && z[1] == -1);
}

/* The burn-down rates: the falls only, per second of their interval, and
 * none from a pair that ends at or after the timeout. */
static void burn_rates_count_the_falls_before_the_timeout(void **state)
{
    (void)state;
    const int64_t t[] = {0, 500000000, 1000000000, 1250000000, 1500000000, 2000000000};
    const int64_t a[] = {10, 20, 15, 10, 10, 0};
    double r[6] = {0};
    assert_int_equal(lg_sweep_burn_rates(t, a, 6, 1600000000, r), 2);
    near(r[0], 10); /* 5 in 0.5 s */
    near(r[1], 20); /* 5 in 0.25 s */
    /* the last fall (10 in 0.5 s) counts once the timeout is past it */
    assert_int_equal(lg_sweep_burn_rates(t, a, 6, 2000000001, r), 3);
    near(r[2], 20);
    /* a pair that ends at the timeout is left out */
    assert_int_equal(lg_sweep_burn_rates(t, a, 6, 1250000000, r), 1);
    assert_int_equal(lg_sweep_burn_rates(t, a, 1, 2000000001, r), 0);
    assert_int_equal(lg_sweep_burn_rates(t, a, 0, 2000000001, r), 0);
}

/* numpy.percentile's default: linear between the order statistics. */
static void percentile_is_numpys_linear_one(void **state)
{
    (void)state;
    double x[] = {4, 1, 3, 2};
    near(lg_sweep_percentile(x, 4, 95), 3.85); /* rank 2.85 */
    assert_true(x[0] == 1 && x[3] == 4);       /* sorted */
    near(lg_sweep_percentile(x, 4, 50), 2.5);
    near(lg_sweep_percentile(x, 4, 0), 1);
    near(lg_sweep_percentile(x, 4, 100), 4);
    double y[] = {7};
    near(lg_sweep_percentile(y, 1, 95), 7);
    assert_true(isnan(lg_sweep_percentile(y, 0, 95)));
    assert_true(isnan(lg_sweep_percentile(x, 4, 100.5)));
    assert_true(isnan(lg_sweep_percentile(x, 4, -1)));
    assert_true(isnan(lg_sweep_percentile(x, 4, NAN)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(linear_steps_evenly_up_to_the_top),
        cmocka_unit_test(geometric_doubles_from_its_default_floor),
        cmocka_unit_test(geometric_keeps_a_constant_ratio_from_a_given_floor),
        cmocka_unit_test(bad_bounds_are_refused_and_leave_the_rates),
        cmocka_unit_test(probe_rates_as_inference_perf_places_them),
        cmocka_unit_test(burn_rates_count_the_falls_before_the_timeout),
        cmocka_unit_test(percentile_is_numpys_linear_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
