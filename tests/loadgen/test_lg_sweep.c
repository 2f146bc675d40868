/* test_lg_sweep: a sweep's stage rates from its bounds, with known answers. */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(linear_steps_evenly_up_to_the_top),
        cmocka_unit_test(geometric_doubles_from_its_default_floor),
        cmocka_unit_test(geometric_keeps_a_constant_ratio_from_a_given_floor),
        cmocka_unit_test(bad_bounds_are_refused_and_leave_the_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
