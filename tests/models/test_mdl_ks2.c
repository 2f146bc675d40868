/* Unit tests of mdl_ks_two_sample: the statistic on hand-computed samples
 * (ties inside and across the samples), its p-value's calibration (two
 * samples of one law are rejected at about the nominal rate, no more) and its
 * power (a shifted law is rejected). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_stats.h"
#include "mdl_test_rng.h"

static void test_hand_computed(void **state)
{
    (void)state;
    double d, p;
    double x[] = {4, 2, 3, 1}, y[] = {6, 3, 5, 4};
    assert_int_equal(mdl_ks_two_sample(x, 4, y, 4, 0, &d, &p), 0);
    assert_float_equal(d, 0.5, 1e-12); /* at 2: F_x = 0.5, F_y = 0 */
    /* Ties across the samples step together. */
    double a[] = {1, 1, 2}, b[] = {1, 2, 2};
    assert_int_equal(mdl_ks_two_sample(a, 3, b, 3, 0, &d, &p), 0);
    assert_float_equal(d, 1.0 / 3.0, 1e-12);
    /* Identical samples: D = 0, p = 1. */
    double c1[] = {5, 1, 3, 3}, c2[] = {3, 5, 3, 1};
    assert_int_equal(mdl_ks_two_sample(c1, 4, c2, 4, 0, &d, &p), 0);
    assert_float_equal(d, 0.0, 1e-12);
    assert_float_equal(p, 1.0, 1e-12);
    /* Disjoint samples of unequal sizes: D = 1. */
    double lo[] = {1, 2, 3, 4, 5, 6}, hi[] = {10, 11, 12};
    assert_int_equal(mdl_ks_two_sample(lo, 6, hi, 3, 0, &d, &p), 0);
    assert_float_equal(d, 1.0, 1e-12);
    assert_true(p < 0.05);
    /* Too small. */
    assert_int_equal(mdl_ks_two_sample(lo, 1, hi, 3, 0, &d, &p), -EINVAL);
    assert_int_equal(mdl_ks_two_sample(lo, 6, NULL, 3, 0, &d, &p), -EINVAL);
    assert_int_equal(mdl_ks_two_sample(lo, 6, hi, 3, -1, &d, &p), -EINVAL);
}

/* The tolerance: values within tol of each other count as equal. */
static void test_tolerance(void **state)
{
    (void)state;
    double d, p;
    /* A constant gap of 2 ms, dispatched 2.02 ms apart: the plain test sees
     * two disjoint samples, the test at a 0.1 ms resolution sees none. */
    double want[50], got[50];
    for (int i = 0; i < 50; i++) {
        want[i] = 2.0;
        got[i] = 2.0 + (i % 2 ? 0.02 : -0.02);
    }
    assert_int_equal(mdl_ks_two_sample(got, 50, want, 50, 0, &d, &p), 0);
    assert_float_equal(d, 0.5, 1e-12); /* the low half is below, the high half above */
    assert_int_equal(mdl_ks_two_sample(got, 50, want, 50, 0.1, &d, &p), 0);
    assert_float_equal(d, 0.0, 1e-12);
    assert_float_equal(p, 1.0, 1e-12);
    /* A shift larger than tol is still seen, by how much mass moved. */
    double a[] = {1, 2, 3, 4}, b[] = {1, 2, 3.5, 4.5};
    assert_int_equal(mdl_ks_two_sample(a, 4, b, 4, 0.25, &d, &p), 0);
    assert_float_equal(d, 0.25, 1e-12); /* at 3: F_a = 0.75, F_b(3.25) = 0.5 */
    assert_int_equal(mdl_ks_two_sample(a, 4, b, 4, 0.5, &d, &p), 0);
    assert_float_equal(d, 0.0, 1e-12);
}

enum { N = 400, RUNS = 400 };

static void test_calibration_and_power(void **state)
{
    (void)state;
    static double x[N], y[N];
    uint64_t s = 7;
    int rejected_same = 0, rejected_shift = 0;
    for (int run = 0; run < RUNS; run++) {
        for (int i = 0; i < N; i++) {
            x[i] = rng_exp(&s, 1.0);
            y[i] = rng_exp(&s, 1.0);
        }
        double d, p;
        assert_int_equal(mdl_ks_two_sample(x, N, y, N, 0, &d, &p), 0);
        if (p < 0.05) rejected_same++;
        /* The same law with a 50% longer mean. */
        for (int i = 0; i < N; i++)
            y[i] = rng_exp(&s, 1.5);
        assert_int_equal(mdl_ks_two_sample(x, N, y, N, 0, &d, &p), 0);
        if (p < 0.05) rejected_shift++;
    }
    /* Nominal 5%: over 400 runs the count is Binomial(400, 0.05) (mean 20,
     * sd 4.4); the asymptotic law is conservative at this size, so the
     * count may be lower, but never far above: 20 + 3.5 sd = 35. */
    assert_true(rejected_same <= 35);
    assert_true(rejected_same >= 2);
    /* A 50% longer mean at n = 400 (true D 0.15 against a 5% critical
     * value of 0.096) is found nearly always. */
    assert_true(rejected_shift >= RUNS * 95 / 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed),
        cmocka_unit_test(test_tolerance),
        cmocka_unit_test(test_calibration_and_power),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
