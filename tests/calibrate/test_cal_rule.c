/* Unit tests of cal_rule: the certification rule at its boundaries. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cal_rule.h"
#include "cal_sweep.h"

static cal_point pt(double rho, double delay_us, double err_us)
{
    return (cal_point){.rho = rho, .delay_us = delay_us, .err_us = err_us};
}

/* The rule over p[0..n) with a 100 us budget; its return code must be rc. */
static cal_rule_result certify(const cal_point *p, int n, double model_rho, int fit_ok, int rc)
{
    cal_rule_result r;
    assert_int_equal(cal_rule_certify(p, n, 100, model_rho, fit_ok, &r), rc);
    return r;
}

/* four levels within a 100 us budget */
static int good(cal_point *p)
{
    p[0] = pt(0.1, 5, 2);
    p[1] = pt(0.3, 20, 5);
    p[2] = pt(0.5, 45, 10);
    p[3] = pt(0.7, 80, 15);
    return 4;
}

static void test_model_bound_above_measured(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    /* the fit's bound below a level measured within budget (0.7: 80 + 15
     * <= 100) does not take the certificate below that level */
    cal_rule_result r = certify(p, n, 0.6, 1, 0);
    assert_true(r.safe_rho == 0.7);
    assert_int_equal(r.limit, CAL_LIMIT_MEASURED);
    assert_true(r.measured_rho == 0.7);
    /* above the highest level within budget, below the crossing, it caps */
    p[n] = pt(0.8, 300, 20);
    p[n].confirmed = 1;
    r = certify(p, n + 1, 0.701, 1, 0); /* the crossing is at 0.7033 */
    assert_true(r.safe_rho == 0.701);
    assert_int_equal(r.limit, CAL_LIMIT_MODEL);
    assert_true(r.measured_rho == 0.7);
}

/* the model would allow more than was measured: the highest level caps */
static void test_never_beyond_highest_measured(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    cal_rule_result r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == 0.7);
    assert_int_equal(r.limit, CAL_LIMIT_MEASURED);
    assert_non_null(strstr(r.note, "not measured beyond rho = 0.700"));
    assert_int_equal(r.n_capped, 0);
    assert_int_equal(r.n_within, 4);
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* a confirmed level over budget: nothing at or above it is certified, even
 * a level above it that happened to measure within budget; the certified
 * rho is where the delay crosses the budget between the level within and
 * the level over, linear in rho/(1-rho), not either grid point */
static void test_no_certification_beyond_over_budget(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    p[n] = pt(0.4, 150, 10);
    p[n++].confirmed = 1;
    cal_rule_result r = certify(p, n, 0.9, 1, 0);
    /* (0.3, 20 +- 5) within, (0.4, 150 +- 10) over: x = 3/7 and 2/3; the
     * upper bounds 25 and 160 reach 100 at x = 3/7 + 75/135 (2/3 - 3/7) */
    NEAR(r.safe_rho, 0.35932203389830514);
    NEAR(r.crossing_rho, 0.36511627906976746);       /* the means 20 and 150 */
    NEAR(r.crossing_rho_ci[0], r.safe_rho);          /* the upper bounds */
    NEAR(r.crossing_rho_ci[1], 0.37125748502994016); /* the lower bounds 15 and 140 */
    assert_true(r.interpolated);
    assert_true(r.measured_rho == 0.3);
    assert_int_equal(r.limit, CAL_LIMIT_OVER);
    assert_non_null(strstr(r.note, "crosses the budget between rho 0.300 (within) and 0.400"));
    assert_true(r.bad_rho == 0.4);
    assert_int_equal(r.n_bad, 1);
    /* the levels within budget at 0.5 and 0.7, above the confirmed 0.4, are
     * capped by it and counted so (a delay that fell as the load rose) */
    assert_int_equal(r.n_capped, 2);
    assert_int_equal(r.n_within, 2);
    /* the model's bound below the crossing decides */
    r = certify(p, n, 0.33, 1, 0);
    assert_true(r.safe_rho == 0.33);
    assert_int_equal(r.limit, CAL_LIMIT_MODEL);
    /* the error bar counts: 95 + 6 > 100 is not within budget; its mean is,
     * so the level is undecided: it caps nothing, and the level within at
     * 0.7 (80 + 15) above it is certified */
    n = good(p);
    p[2] = pt(0.5, 95, 6);
    p[2].confirmed = 1;
    r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == 0.7);
    assert_int_equal(r.n_undecided, 1);
    assert_int_equal(r.n_bad, 0);
    assert_int_equal(r.n_capped, 0);
    assert_int_equal(r.n_within, 3);
    /* as the highest level, it bounds the crossing (of the upper bounds 25
     * and 101); the crossing of the means is the level itself */
    r = certify(p, n - 1, 0.9, 1, 0);
    NEAR(r.safe_rho, 0.4981132075471698);
    NEAR(r.crossing_rho, 0.5);
    NEAR(r.crossing_rho_ci[1], 0.5);
    assert_true(r.over_by_bar);
    assert_non_null(strstr(r.note, "0.500 (over by its error bar, confirmed by a repeat)"));
    /* over by its mean (101), it caps the level within above it */
    p[2] = pt(0.5, 101, 6);
    p[2].confirmed = 1;
    r = certify(p, n, 0.9, 1, 0);
    NEAR(r.safe_rho, 0.4875); /* upper bounds 25 and 107: x = 546/574 */
    assert_false(r.over_by_bar);
    assert_int_equal(r.n_undecided, 0);
    assert_int_equal(r.n_bad, 1);
    assert_int_equal(r.n_capped, 1);
    assert_non_null(strstr(r.note, "0.500 (over, confirmed by a repeat)"));
    /* exactly at the budget is within it */
    p[2] = pt(0.5, 94, 6);
    p[2].confirmed = 1;
    p[3] = pt(0.7, 200, 6);
    p[3].confirmed = 1;
    r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == 0.5); /* already at the budget: the crossing is the level */
    assert_false(r.interpolated);
    assert_int_equal(r.n_capped, 0); /* nothing within budget above the bad 0.7 */
}

/* the crossing's edges, in rho/(1-rho) */
static void test_cross(void **state)
{
    (void)state;
    /* x 1 -> 3 (rho 0.5 -> 0.75), 50 -> 150: 100 at x 2, rho 2/3 */
    NEAR(cal_rule_cross(0.5, 50, 0.75, 150, 100), 2.0 / 3.0);
    NEAR(cal_rule_cross(0.5, 50, 0.75, 100, 100), 0.75); /* the far end not above */
    NEAR(cal_rule_cross(0.5, 50, 0.75, 40, 100), 0.75);  /* not rising */
    NEAR(cal_rule_cross(0.5, 120, 0.75, 150, 100), 0.5); /* already over */
    NEAR(cal_rule_cross(0.5, 100, 0.75, 150, 100), 0.5);
}

/* one unconfirmed bad point (a level its repeat did not confirm) does not
 * move the certificate, wherever it lies and however large */
static void test_unconfirmed_does_not_move(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    cal_rule_result base = certify(p, n, 0.9, 1, 0), r;
    const double at[] = {0.05, 0.2, 0.45, 0.65};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        n = good(p);
        p[n++] = pt(at[i], 10000, 500); /* unconfirmed */
        r = certify(p, n, 0.9, 1, 0);
        assert_true(r.safe_rho == base.safe_rho);
        assert_int_equal(r.limit, base.limit);
        assert_int_equal(r.n_ignored, 1);
        /* one that saturated is no different */
        p[n - 1].saturated = 1;
        r = certify(p, n, 0.9, 1, 0);
        assert_true(r.safe_rho == base.safe_rho);
        /* confirmed, the same point caps the certificate below it */
        p[n - 1].confirmed = 1;
        r = certify(p, n, 0.9, 1, at[i] < 0.1 ? -ENODATA : 0);
        assert_true(at[i] < 0.1 ? isnan(r.safe_rho) : r.safe_rho < at[i]);
    }
}

/* One stalled batch among quiet ones: a confirmed level far below the
 * crossing, within budget by its mean and over only by its wide bar (the
 * placed k=1 level of a record: 71 +- 108 us at rho 0.05), does not move the
 * certificate; over by its mean, it takes everything above it. */
static void test_undecided_low_level_does_not_cap(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    cal_rule_result base = certify(p, n, 0.9, 1, 0), r;
    p[n] = pt(0.05, 71, 108);
    p[n].confirmed = 1;
    r = certify(p, n + 1, 0.9, 1, 0);
    assert_true(r.safe_rho == base.safe_rho);
    assert_int_equal(r.limit, base.limit);
    assert_int_equal(r.n_undecided, 1);
    assert_int_equal(r.n_capped, 0);
    assert_true(isnan(r.bad_rho));
    /* its mean just over the budget: confirmed bad, nothing within below */
    p[n] = pt(0.05, 100.5, 108);
    p[n].confirmed = 1;
    r = certify(p, n + 1, 0.9, 1, -ENODATA);
    assert_int_equal(r.n_capped, 4);
    assert_true(r.bad_rho == 0.05);
}

/* a confirmed saturated level caps like one over budget */
static void test_saturated_caps(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    p[3].saturated = 1;
    p[3].confirmed = 1;
    cal_rule_result r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == 0.5);
    assert_int_equal(r.limit, CAL_LIMIT_OVER);
}

/* A saturated level caps by its offered rate, not by the rho it managed:
 * on a host that ran out of CPU it can read a lower rho than a slower level
 * that kept up within budget, which stays certified. */
static void test_saturated_caps_by_rate(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    for (int i = 0; i < n; i++)
        p[i].rate = 1000.0 * (i + 1);
    /* the fastest level saturated, confirmed, having managed only rho 0.35 */
    p[n - 1].saturated = p[n - 1].confirmed = 1;
    p[n - 1].rho = 0.35;
    cal_rule_result r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == p[n - 2].rho); /* the fastest level below it that kept up */
    assert_int_equal(r.limit, CAL_LIMIT_OVER);
    assert_non_null(strstr(r.note, "did not keep up"));
    assert_true(r.bad_rho == 0.35);
    /* nothing offered at or above the saturated rate is certified */
    p[n - 2].rate = p[n - 1].rate;
    r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == p[n - 3].rho);
    /* a level of unknown rate cannot be placed below it: not certified */
    p[n - 3].rate = NAN;
    r = certify(p, n, 0.9, 1, 0);
    assert_true(r.safe_rho == p[n - 4].rho);
    /* a bad level that kept up still caps by its rho, whatever its rate */
    cal_point q[3] = {pt(0.2, 20, 5), pt(0.4, 150, 5), pt(0.5, 30, 5)};
    q[0].rate = 1000, q[1].rate = 3000, q[2].rate = 2000; /* 0.5 at a lower rate: noise */
    q[1].confirmed = 1;
    r = certify(q, 3, 0.9, 1, 0);
    NEAR(r.safe_rho, 0.32903225806451614); /* between 0.2 (25) and 0.4 (155) */
    assert_non_null(strstr(r.note, "over, confirmed by a repeat"));
}

/* A level over budget that was never measured again (within budget by the
 * bars the sweep had, over by the final ones) has not been refuted: it
 * bounds the crossing above the highest level within, as a confirmed one
 * would, and the certificate is no grid point. Below a level within budget
 * it is refuted; a saturated one has no delay to cross toward; nothing
 * above a confirmed cap counts. */
static void test_unconfirmed_over_bounds_the_crossing(void **state)
{
    (void)state;
    cal_point p[10];
    int n = good(p);
    for (int i = 0; i < n; i++)
        p[i].rate = 1000.0 * (i + 1);
    /* the two orders: the lowest level over counts, not the first given */
    for (int order = 0; order < 2; order++) {
        int m = n;
        cal_point hi = pt(0.9, 300, 20), lo = pt(0.8, 150, 20);
        hi.rate = 7000, lo.rate = 5000;
        p[m++] = order ? lo : hi;
        p[m++] = order ? hi : lo;
        p[m++] = pt(0.6, 500, 10); /* refuted by 0.7 within */
        p[m - 1].rate = 3500;
        cal_rule_result r = certify(p, m, 0.9, 1, 0);
        /* (0.7, 80 +- 15) and (0.8, 150 +- 20): x = 7/3 and 4; the upper
         * bounds 95 and 170 reach 100 at x = 22/9, rho 22/31; the means at
         * rho 59/80, the lower bounds (65, 130) at 42/55 */
        NEAR(r.safe_rho, 22.0 / 31.0);
        NEAR(r.crossing_rho, 59.0 / 80.0);
        NEAR(r.crossing_rho_ci[0], 22.0 / 31.0);
        NEAR(r.crossing_rho_ci[1], 42.0 / 55.0);
        assert_true(r.interpolated);
        assert_true(r.measured_rho == 0.7);
        assert_true(r.over_rho == 0.8);
        assert_false(r.over_confirmed);
        assert_int_equal(r.limit, CAL_LIMIT_OVER);
        assert_int_equal(r.n_bad, 0);
        assert_int_equal(r.n_ignored, 3);
        assert_non_null(strstr(r.note, "and 0.800 (over, not measured again)"));
        /* a confirmed saturated level offered below it: it is not crossed
         * toward, and the certificate stays at the level below the cap */
        p[m] = pt(0.75, 4000, 100);
        p[m].saturated = p[m].confirmed = 1;
        p[m].rate = 4500;
        r = certify(p, m + 1, 0.9, 1, 0);
        assert_true(r.safe_rho == 0.7);
        assert_false(r.interpolated);
        assert_non_null(strstr(r.note, "did not keep up"));
        /* offered above it, it does not stop the crossing below */
        p[m].rate = 6000;
        r = certify(p, m + 1, 0.9, 1, 0);
        NEAR(r.safe_rho, 22.0 / 31.0);
        /* of unknown rate, it caps by its rho 0.75: 0.8 is beyond it */
        p[m].rate = NAN;
        r = certify(p, m + 1, 0.9, 1, 0);
        assert_true(r.safe_rho == 0.7);
        assert_false(r.interpolated);
    }
    /* a level above of unknown delay has nothing to cross toward */
    n = good(p);
    p[n] = pt(0.8, NAN, 0);
    cal_rule_result r0 = certify(p, n + 1, 0.9, 1, 0);
    assert_true(r0.safe_rho == 0.7);
    assert_false(r0.interpolated);
    /* a confirmed level over budget at 0.85 that kept up caps: an
     * unconfirmed one beyond it is no bound, the confirmed one is */
    p[n] = pt(0.9, 150, 20);
    p[n + 1] = pt(0.85, 150, 20);
    p[n + 1].confirmed = 1;
    r0 = certify(p, n + 2, 0.9, 1, 0);
    assert_true(r0.over_rho == 0.85 && r0.over_confirmed);
    NEAR(r0.safe_rho, cal_rule_cross(0.7, 95, 0.85, 170, 100));
    assert_non_null(strstr(r0.note, "and 0.850 (over, confirmed by a repeat)"));
    /* a saturated level above, unconfirmed, is no delay to cross toward */
    n = good(p);
    p[n] = pt(0.8, 5000, 500);
    p[n].saturated = 1;
    cal_rule_result r = certify(p, n + 1, 0.9, 1, 0);
    assert_true(r.safe_rho == 0.7);
    assert_int_equal(r.limit, CAL_LIMIT_MEASURED);
    /* a quick k=2 sweep as measured: levels within up to rho 0.099, then
     * 0.321 over by its final bar (72.6 + 46.1 us), never repeated, and a
     * saturated level confirmed above: the crossing, not 0.099 */
    cal_point q[4] = {pt(0.052, 3.5, 12.5), pt(0.099, 12.8, 17.0), pt(0.321, 72.6, 46.1),
                      pt(0.572, 4244, 2070)};
    q[0].rate = 217, q[1].rate = 471, q[2].rate = 1550, q[3].rate = 2418;
    q[3].saturated = q[3].confirmed = 1;
    r = certify(q, 4, NAN, 1, 0);
    assert_true(r.safe_rho > 0.25 && r.safe_rho < 0.321);
    NEAR(r.safe_rho, cal_rule_cross(0.099, 29.8, 0.321, 118.7, 100));
}

/* a fit that failed its test gives the measured range, and says so, even
 * when its bound would be lower */
static void test_failed_fit_measured_range(void **state)
{
    (void)state;
    cal_point p[8];
    int n = good(p);
    cal_rule_result r = certify(p, n, 0.4, 0, 0);
    assert_true(r.safe_rho == 0.7);
    assert_int_equal(r.limit, CAL_LIMIT_FIT);
    assert_non_null(strstr(r.note, "measured range only"));
    assert_string_equal(cal_limit_name(r.limit), "goodness of fit");
}

/* The one within-budget test: the delay less the transport plus the error
 * bar, at most the budget, and never a saturated level or an unknown delay;
 * a missing bar or transport counts 0. */
static void test_within_budget(void **state)
{
    (void)state;
    assert_true(cal_rule_within(80, 20, NAN, 0, 100));  /* 100 <= 100 */
    assert_false(cal_rule_within(80, 21, NAN, 0, 100)); /* the bar counts */
    assert_true(cal_rule_within(130, 20, 50, 0, 100));  /* less the transport */
    assert_false(cal_rule_within(131, 20, 50, 0, 100));
    assert_false(cal_rule_within(10, 0, 0, 1, 100));  /* saturated */
    assert_false(cal_rule_within(NAN, 0, 0, 0, 100)); /* no delay */
    assert_true(cal_rule_within(100, NAN, INFINITY, 0, 100));
    assert_false(cal_rule_within(103, -5, NAN, 0, 100)); /* a negative bar is none */
    /* the sweep's view of one step: its mean, no bar */
    cal_step s = {.overhead_mean_us = 130, .saturated = 0};
    assert_false(cal_sweep_looks_bad(&s, 50, 100));
    s.overhead_mean_us = 151;
    assert_true(cal_sweep_looks_bad(&s, 50, 100));
    s.overhead_mean_us = 10;
    s.saturated = 1;
    assert_true(cal_sweep_looks_bad(&s, 50, 100));
}

static void test_nothing_within(void **state)
{
    (void)state;
    cal_point p[2] = {pt(0.1, 150, 0), pt(0.2, 300, 0)};
    p[0].confirmed = p[1].confirmed = 1;
    cal_rule_result r = certify(p, 2, 0.5, 1, -ENODATA);
    assert_true(isnan(r.safe_rho));
    assert_int_equal(r.limit, CAL_LIMIT_NONE);
    r = certify(p, 0, 0.5, 1, -ENODATA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cross),
        cmocka_unit_test(test_model_bound_above_measured),
        cmocka_unit_test(test_never_beyond_highest_measured),
        cmocka_unit_test(test_no_certification_beyond_over_budget),
        cmocka_unit_test(test_unconfirmed_does_not_move),
        cmocka_unit_test(test_undecided_low_level_does_not_cap),
        cmocka_unit_test(test_saturated_caps),
        cmocka_unit_test(test_saturated_caps_by_rate),
        cmocka_unit_test(test_unconfirmed_over_bounds_the_crossing),
        cmocka_unit_test(test_failed_fit_measured_range),
        cmocka_unit_test(test_nothing_within),
        cmocka_unit_test(test_within_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
