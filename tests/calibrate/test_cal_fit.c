/* Unit tests of cal_fit: the per-k figures from synthetic steps that follow
 * a known M/G/1 client (E[S] 20 us, E[S^2] 800 us^2, transport 40 us, 18
 * events per request), the safe rates worked out by hand, the fallback to
 * measured moments, and the self-test's checks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "cal_fit.h"

#define NEAR(a, b, rel) assert_true(fabs((double)(a) - (double)(b)) <= (rel)*fabs((double)(b)))

/* A step at utilisation rho for k workers, its delay off the law by `noise`. */
static cal_step law_step(int k, double rho, double noise)
{
    cal_step s;
    cal_step_clear(&s);
    s.workers = k;
    double lam = rho / 20e-6; /* events/s per worker */
    s.event_rate_per_worker = lam;
    s.request_rate = s.achieved_rate = lam * k / 18.0;
    s.completed = 1000;
    s.events_per_request = 18;
    s.rho_mean = rho;
    s.service_per_event_us = 20;
    s.second_moment_us2 = 800;
    s.overhead_mean_us = (40 + lam * 800e-12 / (2 * (1 - rho)) * 1e6) * (1 + noise);
    return s;
}

static int law_steps(cal_step *s, int k, int first)
{
    static const double rho[] = {0.05, 0.15, 0.3, 0.45, 0.6, 0.7, 0.8, 0.85};
    static const double noise[] = {0.01, -0.01, 0.005, 0, -0.005, 0.01, -0.01, 0.005};
    for (int i = 0; i < 8; i++)
        s[first + i] = law_step(k, rho[i], noise[i]);
    return first + 8;
}

/* lambda* = 2b / (E[S^2] + 2b E[S]) = 2e-4 / (8e-10 + 4e-9) = 41666.7 events/s;
 * per worker 41666.7 / 18 = 2314.8 requests/s; safe rho 0.8333. */
static void test_fit_and_safe_region(void **state)
{
    (void)state;
    cal_step s[32];
    int n = law_steps(s, 1, 0);
    n = law_steps(s, 2, n);
    s[n] = law_step(1, 0.99, 0); /* saturated: left out */
    s[n].saturated = 1;
    n++;
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, n, 1, 100, MDL_FIT_PK, &p), 0);
    /* the utilisation tells E[S] exactly, so a free E[S] fits no better */
    assert_string_equal(p.method, "fit-util");
    assert_true(p.f_test_p >= 0.05);
    assert_int_equal(p.workers, 1);
    assert_int_equal(p.n_steps, 9);
    assert_int_equal(p.n_fit, 8);
    NEAR(p.mean_service_us, 20, 0.05);
    NEAR(p.second_moment_us2, 800, 0.15);
    NEAR(p.transport_us, 40, 0.03);
    assert_true(p.mean_service_us_ci[0] <= 20 && 20 <= p.mean_service_us_ci[1]);
    assert_true(p.r2 > 0.99);
    NEAR(p.events_per_request, 18, 1e-12);
    /* the model allows 0.833, but the level at 0.85 is over budget (W_q 113
     * us, not yet confirmed) and the one at 0.8 (80 us) is the highest
     * within it: the certificate stops there */
    NEAR(p.model_rho, 0.8333, 0.03);
    assert_true(p.model_rho <= 0.8334);
    NEAR(p.model_safe_total_rate, 2314.8, 0.05);
    NEAR(p.safe_rho, 0.8, 1e-12);
    assert_string_equal(p.limited_by, "measured range");
    NEAR(p.safe_rate_per_worker, 0.8 / 20e-6 / 18, 0.01);
    NEAR(p.safe_total_rate, p.safe_rate_per_worker, 1e-12);
    assert_true(p.conservative_safe_total_rate == p.safe_total_rate);
    assert_false(s[n - 1].used_in_fit);
    assert_true(s[0].used_in_fit);
    NEAR(s[3].fit_pred_us, s[3].overhead_mean_us, 0.03);

    cal_per_k p2;
    assert_int_equal(cal_fit_per_k(s, n, 2, 100, MDL_FIT_PK, &p2), 0);
    NEAR(p2.safe_rate_per_worker, p.safe_rate_per_worker, 0.01);
    NEAR(p2.safe_total_rate, 2 * p2.safe_rate_per_worker, 1e-12);
    /* a larger budget allows more */
    cal_per_k p3;
    assert_int_equal(cal_fit_per_k(s, n, 1, 200, MDL_FIT_PK, &p3), 0);
    assert_true(p3.safe_total_rate > p.safe_total_rate);
}

/* A utilisation that overstates E[S] by 30% (another process's time counted
 * as the client's): pinned there the curve misfits, the free E[S] fits far
 * better (F test) and is taken, and it finds the law's 20 us. */
static void test_free_fit_when_significantly_better(void **state)
{
    (void)state;
    cal_step s[8];
    int n = law_steps(s, 1, 0);
    for (int i = 0; i < n; i++)
        s[i].rho_mean *= 1.3;
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, n, 1, 100, MDL_FIT_PK, &p), 0);
    assert_string_equal(p.method, "fit");
    assert_true(p.f_test_p < 0.05);
    NEAR(p.util_service_us, 26, 1e-6);
    NEAR(p.mean_service_us, 20, 0.05);
    assert_true(p.mean_service_us_ci[0] <= 20 && 20 <= p.mean_service_us_ci[1]);
    NEAR(p.model_safe_total_rate, 2314.8, 0.06);
    /* the levels measured rho up to 1.04 here: the fit's own bound limits */
    NEAR(p.safe_rho, 0.8333, 0.03);
    assert_string_equal(p.limited_by, "model");
}

/* Three usable steps: too few for three parameters, so E[S] is pinned at the
 * utilisation's slope (20 us exactly here) and c, E[S^2] fitted: the law's. */
static void test_pinned_at_utilisation(void **state)
{
    (void)state;
    cal_step s[3] = {law_step(1, 0.1, 0), law_step(1, 0.5, 0), law_step(1, 0.3, 0)};
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, 3, 1, 100, MDL_FIT_PK, &p), 0);
    assert_string_equal(p.method, "fit-util");
    NEAR(p.util_service_us, 20, 1e-9);
    NEAR(p.mean_service_us, 20, 1e-9);
    NEAR(p.second_moment_us2, 800, 1e-6);
    NEAR(p.transport_us, 40, 1e-6);
    /* the model allows 2314.8/s, but the steps went to rho 0.5 only, 1388.9/s */
    NEAR(p.model_safe_total_rate, 2314.8, 0.001);
    assert_string_equal(p.limited_by, "measured range");
    NEAR(p.safe_rate_per_worker, 0.5 / 20e-6 / 18, 1e-9);
    NEAR(p.safe_rho, 0.5, 1e-9);
}

/* A noisy curve whose pole the delays alone cannot place: pinned too. */
static void test_ill_determined_curve_is_pinned(void **state)
{
    (void)state;
    static const double rho[] = {0.05, 0.1, 0.15, 0.2, 0.25};
    static const double noise[] = {0.1, -0.1, 0.12, -0.08, 0.1};
    cal_step s[5];
    for (int i = 0; i < 5; i++)
        s[i] = law_step(1, rho[i], noise[i]);
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, 5, 1, 100, MDL_FIT_PK, &p), 0);
    assert_string_equal(p.method, "fit-util");
    NEAR(p.mean_service_us, 20, 1e-9);
}

/* Two usable steps: no fit at all, the busiest step's measured moments. */
static void test_fallback_to_moments(void **state)
{
    (void)state;
    cal_step s[2] = {law_step(1, 0.1, 0), law_step(1, 0.5, 0)};
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, 2, 1, 100, MDL_FIT_PK, &p), 0);
    assert_string_equal(p.method, "moments");
    NEAR(p.mean_service_us, 20, 1e-12);
    NEAR(p.second_moment_us2, 800, 1e-12);
    NEAR(p.transport_us, s[0].overhead_mean_us, 1e-12);
    assert_true(isnan(p.mean_service_us_ci[0]));
    NEAR(p.model_safe_total_rate, 2314.8, 0.001);
    NEAR(p.safe_rate_per_worker, 0.5 / 20e-6 / 18, 1e-9);
}

static void test_no_data(void **state)
{
    (void)state;
    cal_step s[2] = {law_step(1, 0.1, 0), law_step(1, 0.2, 0)};
    s[0].saturated = s[1].saturated = 1;
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, 2, 1, 100, MDL_FIT_PK, &p), -ENODATA);
    assert_string_equal(p.method, "none");
    assert_true(isnan(p.safe_total_rate));
    assert_int_equal(cal_fit_per_k(s, 2, 4, 100, MDL_FIT_PK, &p), -ENODATA);
    assert_int_equal(p.n_steps, 0);
}

static void test_selftest_checks(void **state)
{
    (void)state;
    cal_step s[8];
    int n = law_steps(s, 1, 0);
    cal_per_k p;
    assert_int_equal(cal_fit_per_k(s, n, 1, 100, MDL_FIT_PK, &p), 0);
    cal_check c[32];
    int nc;
    const double zero[1] = {0};
    /* injected 20 us: every check passes; 6 steps have rho in [0.2, 0.85] */
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, zero, 0.10, 0.20, 0.2, 0.85, c, 32, &nc),
                     0);
    assert_int_equal(nc, 1 + 6 + 1); /* E[S], six steps, the median */
    for (int i = 0; i < nc; i++)
        assert_true(c[i].pass);
    /* injected 25 us: E[S] is 20% off */
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 25, zero, 0.10, 0.20, 0.2, 0.85, c, 32, &nc),
                     1);
    assert_false(c[0].pass);
    NEAR(c[0].rel_err, 0.2, 0.06);
    /* the client's own 5 us per event, measured without injection, is taken
     * off: 20 - 5 matches an injected 15 (and not 20: 25% off) */
    const double own[1] = {5}, none[1] = {NAN};
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 15, own, 0.10, 0.20, 0.2, 0.85, c, 32, &nc), 0);
    NEAR(c[0].measured, 15, 1e-6);
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, own, 0.10, 0.20, 0.2, 0.85, c, 32, &nc), 1);
    assert_false(c[0].pass);
    /* no baseline: the E[S] row cannot pass */
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, none, 0.10, 0.20, 0.2, 0.85, c, 32, &nc),
                     1);
    assert_non_null(strstr(c[0].name, "[no baseline]"));
    /* a prediction off by 30% at one step: shown failed, not counted (the
     * median of the six errors stays within 20%) */
    cal_step keep[8];
    memcpy(keep, s, sizeof keep);
    s[4].overhead_mean_us *= 1.3;
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, zero, 0.10, 0.20, 0.2, 0.85, c, 32, &nc),
                     0);
    int shown_failed = 0;
    for (int i = 0; i < nc; i++) {
        if (!c[i].pass) shown_failed++;
        assert_int_equal(c[i].counted, 0);
    }
    assert_int_equal(shown_failed, 1);
    /* off by 70% at one step: a gross miss counts on its own */
    memcpy(s, keep, sizeof keep);
    s[4].overhead_mean_us *= 3.5;
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, zero, 0.10, 0.20, 0.2, 0.85, c, 32, &nc),
                     1);
    /* off by 30% at four of the six steps: the median fails */
    memcpy(s, keep, sizeof keep);
    int bent = 0;
    for (int i = 0; i < n && bent < 4; i++)
        if (s[i].used_in_fit && s[i].rho_mean >= 0.2 && s[i].rho_mean <= 0.85) {
            s[i].overhead_mean_us *= 1.3;
            bent++;
        }
    assert_int_equal(bent, 4);
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, zero, 0.10, 0.20, 0.2, 0.85, c, 32, &nc),
                     1);
    assert_non_null(strstr(c[nc - 1].name, "median PK error"));
    assert_false(c[nc - 1].pass);
    memcpy(s, keep, sizeof keep);
    /* no steps in the window: a failed row says so */
    assert_int_equal(cal_selftest_eval(s, n, &p, 1, 20, zero, 0.10, 0.20, 0.95, 0.99, c, 32, &nc),
                     1);
    assert_non_null(strstr(c[nc - 1].name, "fitted steps with rho in"));
}

/* The baseline's E[S] is the utilisation's slope against the event rate;
 * saturated steps and steps of other k do not count. */
static void test_baseline_service(void **state)
{
    (void)state;
    cal_step s[4] = {law_step(1, 0.01, 0), law_step(1, 0.03, 0), law_step(2, 0.5, 0),
                     law_step(1, 0.2, 0)};
    /* the own cost 8 us: rho = lambda 8e-6 at the first two steps */
    s[0].rho_mean = s[0].event_rate_per_worker * 8e-6;
    s[1].rho_mean = s[1].event_rate_per_worker * 8e-6 * 1.02;
    s[3].saturated = 1;
    double ci[2];
    double es = cal_baseline_service_us(s, 4, 1, ci);
    assert_true(es > 8.0 && es < 8.0 * 1.02);
    assert_true(ci[0] < es && es < ci[1]);
    s[1].saturated = 1; /* one step left: no slope with an interval */
    assert_true(isnan(cal_baseline_service_us(s, 4, 1, ci)));
    assert_true(isnan(ci[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_and_safe_region),
        cmocka_unit_test(test_free_fit_when_significantly_better),
        cmocka_unit_test(test_pinned_at_utilisation),
        cmocka_unit_test(test_ill_determined_curve_is_pinned),
        cmocka_unit_test(test_fallback_to_moments),
        cmocka_unit_test(test_no_data),
        cmocka_unit_test(test_selftest_checks),
        cmocka_unit_test(test_baseline_service),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
