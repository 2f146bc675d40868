/* Unit tests of cal_sweep: the saturation rule at its boundaries and the
 * next-rate rule (targets, clamps, stops), with rates worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "cal_level.h"
#include "cal_sweep.h"

static cal_step step(double offered, double achieved, double rho)
{
    cal_step s;
    cal_step_clear(&s);
    s.workers = 1;
    s.request_rate = offered;
    s.achieved_rate = achieved;
    s.rho_mean = rho;
    s.completed = 1000;
    s.lag_p99_ms = 0.1;
    return s;
}

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))))

static void test_saturation_rule(void **state)
{
    (void)state;
    cal_sweep_cfg c;
    cal_sweep_defaults(&c, 1);
    char why[160];
    cal_step s = step(1000, 950, 0.5);
    assert_false(cal_sweep_saturated(&c, &s, why, sizeof why));
    s.achieved_rate = 949.9;
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    assert_non_null(strstr(why, "achieved 949.9/s < 95% of 1000.0/s"));
    s = step(1000, 1000, 0.5);
    s.lag_p99_ms = 1.0;
    assert_false(cal_sweep_saturated(&c, &s, why, sizeof why));
    s.lag_p99_ms = 1.01;
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    assert_non_null(strstr(why, "lag p99 1.01 ms > 1.00 ms"));
    /* a preemption spike: the mean lag stays low, no saturation */
    s.lag_p99_ms = 12.7;
    s.lag_mean_ms = 0.1;
    assert_false(cal_sweep_saturated(&c, &s, why, sizeof why));
    s.lag_mean_ms = 0.11;
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    /* at low utilisation one late request in few moves the mean: the median
     * must show the backlog too */
    s.rho_mean = 0.1;
    s.lag_p50_ms = 0.03;
    assert_false(cal_sweep_saturated(&c, &s, why, sizeof why));
    s.lag_p50_ms = 0.2;
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    s = step(1000, 1000, 0.5);
    s.failed = 0;
    assert_false(cal_sweep_saturated(&c, &s, why, sizeof why));
    s.failed = 1; /* a batch with a failed request is no measurement */
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    assert_non_null(strstr(why, "1 of 1001 requests failed"));
    s = step(1000, 1000, 0.5);
    s.completed = 0;
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    /* 100 offered in a 1 s window: Poisson sd 10, so 3 sd = 30% of slack */
    s = step(100, 65.5, 0.5);
    s.send_window_s = 1.0;
    assert_false(cal_sweep_saturated(&c, &s, why, sizeof why));
    s.achieved_rate = 64.5;
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
    s = step(1000, NAN, 0.5); /* not measured counts as not achieved */
    assert_true(cal_sweep_saturated(&c, &s, why, sizeof why));
}

static void test_next_rate(void **state)
{
    (void)state;
    cal_sweep_cfg c;
    cal_sweep_defaults(&c, 1); /* targets 0.05, 0.15, 0.3, 0.45, 0.6, ... growth [1.05, 30] */
    cal_step s[12];
    NEAR(cal_sweep_next_rate(&c, s, 0, 20), 20);
    /* rho 0.1 at 100/s: 1 ms busy per request; target 0.15 -> 150/s */
    s[0] = step(100, 100, 0.1);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 150);
    /* rho 0.2 at 100/s: target 0.3 -> 150/s */
    s[0] = step(100, 100, 0.2);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 150);
    /* a tiny rho: the geometric ceiling */
    s[0] = step(100, 100, 0.001);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 3000);
    /* rho 0.004 at 20/s: target 0.05 -> 250/s */
    s[0] = step(20, 20, 0.004);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 250);
    /* rho 0.5 at 100/s: target 0.6 (> 0.53) -> 120/s */
    s[0] = step(100, 100, 0.5);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 120);
    /* rho 0.58: 0.6 is within 0.03, so 0.7 -> 120.69/s */
    s[0] = step(100, 100, 0.58);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 100 * 0.7 / 0.58);
    /* two workers: busy per request = rho k / achieved; rho 0.1 at 200/s,
     * 0.15 within a tenth in 1 - rho (1 - 0.9 / 1.1 = 0.18): 0.3 -> 600/s */
    s[0] = step(200, 200, 0.1);
    s[0].workers = 2;
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 600);
    /* rho 0.8: 0.87 is the next target -> 108.75/s */
    s[0] = step(100, 100, 0.8);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 108.75);
    /* the floor of growth: 1.09 wanted, 1.2 the least */
    c.min_growth = 1.2;
    s[0] = step(100, 100, 0.55);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 120);
    c.min_growth = 1.05;
    /* affine rho (fixed costs): 0.1 at 100/s, 0.15 at 200/s; target 0.3:
     * proportional 400/s, the secant 500/s, within 25% of it */
    s[0] = step(100, 100, 0.1);
    s[1] = step(200, 200, 0.15);
    NEAR(cal_sweep_next_rate(&c, s, 2, 20), 500);
    /* concave rho, two close levels: 0.448 at 3188/s, 0.452 at 3558/s;
     * target 0.6: the secant runs far off, trusted up to 1.25 x the
     * proportional 4723/s */
    s[0] = step(3188, 3188, 0.448);
    s[1] = step(3558, 3558, 0.452);
    NEAR(cal_sweep_next_rate(&c, s, 2, 20), 1.25 * 3558 * 0.6 / 0.452);
    /* a convex secant (it would aim lower) is not taken */
    s[0] = step(100, 100, 0.05);
    s[1] = step(200, 200, 0.2);
    NEAR(cal_sweep_next_rate(&c, s, 2, 20), 200 * 0.3 / 0.2);
    /* a saturated or a slower previous level gives no secant */
    s[0] = step(100, 100, 0.1);
    s[0].saturated = 1;
    s[1] = step(200, 200, 0.15);
    NEAR(cal_sweep_next_rate(&c, s, 2, 20), 400);
    s[0] = step(300, 300, 0.1);
    NEAR(cal_sweep_next_rate(&c, s, 2, 20), 400);
    /* targets in turn: the fourth level (n = 3 made) aims at the third
     * target, 0.3, although the last fell short of the second (0.15) */
    s[0] = step(20, 20, 0.004);
    s[1] = step(250, 250, 0.05);
    s[2] = step(400, 400, 0.08);
    NEAR(cal_sweep_next_rate(&c, s, 3, 20), 400 * 0.3 / 0.08);
    /* a level already past the next target in turn aims by what it measured */
    s[2] = step(400, 400, 0.4);
    NEAR(cal_sweep_next_rate(&c, s, 3, 20), 400 * 0.45 / 0.4);
    /* targets in turn are for one worker only: after five levels, the last
     * at rho 0.35, one worker aims at the fifth target (0.6), two at the
     * first clear of 0.35 (1 - 0.65 / 1.1 = 0.41): 0.45 (the secant through
     * 0.1 at 300/s is lower, not taken) */
    for (int i = 0; i < 5; i++)
        s[i] = step(20.0 * (i + 1), 20.0 * (i + 1), 0.01 * (i + 1));
    s[3] = step(300, 300, 0.1);
    s[4] = step(400, 400, 0.35);
    NEAR(cal_sweep_next_rate(&c, s, 5, 20), 400 * 0.6 / 0.35);
    for (int i = 0; i < 5; i++)
        s[i].workers = 2;
    NEAR(cal_sweep_next_rate(&c, s, 5, 20), 400 * 0.45 / 0.35);
    /* and two workers at rho 0.08 skip 0.15 (1 - 0.92 / 1.1 = 0.164): 0.3 */
    s[0] = step(20, 20, 0.004);
    s[1] = step(250, 250, 0.05);
    s[2] = step(400, 400, 0.08);
    for (int i = 0; i < 3; i++)
        s[i].workers = 2;
    NEAR(cal_sweep_next_rate(&c, s, 3, 20), 400 * 0.3 / 0.08);
    /* two workers skip a target they came within a tenth of in 1 - rho:
     * quick targets 0.1, 0.3, 0.5, 0.7, 0.85; at rho 0.25 (1 - 0.75 / 1.1 =
     * 0.318 > 0.3) the aim is 0.5, where one worker aims at 0.3 still
     * (0.25 + 0.03 < 0.3) */
    cal_sweep_cfg q;
    cal_sweep_defaults(&q, 0);
    s[0] = step(1000, 1000, 0.25);
    NEAR(cal_sweep_next_rate(&q, s, 1, 20), 1200);
    s[0].workers = 2;
    NEAR(cal_sweep_next_rate(&q, s, 1, 20), 2000);
    s[0] = step(1000, 1000, 0.2); /* 1 - 0.8 / 1.1 = 0.273 < 0.3: 0.3 still */
    s[0].workers = 2;
    NEAR(cal_sweep_next_rate(&q, s, 1, 20), 1500);
    s[0] = step(1000, 1000, 0.06); /* 0.145 > 0.1: 0.3 */
    s[0].workers = 2;
    NEAR(cal_sweep_next_rate(&q, s, 1, 20), 5000);
    s[0] = step(1000, 1000, 0.7); /* 0.727 < 0.85: 0.85, as for one worker */
    s[0].workers = 2;
    NEAR(cal_sweep_next_rate(&q, s, 1, 20), 1000 * 0.85 / 0.7);
    /* past the list's end (9 targets in the default mode): by what was measured */
    for (int i = 0; i < 10; i++)
        s[i] = step(100.0 * (i + 1), 100.0 * (i + 1), 0.05 + 0.05 * i);
    s[9] = step(1000, 1000, 0.5);
    NEAR(cal_sweep_next_rate(&c, s, 10, 20), 1000 * 0.6 / 0.5);
}

static void test_stops(void **state)
{
    (void)state;
    cal_sweep_cfg c;
    cal_sweep_defaults(&c, 1);
    cal_step s[32];
    s[0] = step(100, 100, 0.93); /* stop_rho */
    assert_true(cal_sweep_next_rate(&c, s, 1, 20) == 0);
    s[0] = step(100, 100, 0.91); /* no target above 0.94 */
    assert_true(cal_sweep_next_rate(&c, s, 1, 20) == 0);
    s[0] = step(100, 90, 0.3); /* saturated */
    assert_true(cal_sweep_next_rate(&c, s, 1, 20) == 0);
    for (int i = 0; i < c.max_steps; i++)
        s[i] = step(100, 100, 0.1);
    assert_true(cal_sweep_next_rate(&c, s, c.max_steps, 20) == 0);
    /* the rate cap: clamped once, then over */
    c.max_rate = 150;
    s[0] = step(100, 100, 0.1);
    NEAR(cal_sweep_next_rate(&c, s, 1, 20), 150);
    s[1] = step(150, 150, 0.15);
    assert_true(cal_sweep_next_rate(&c, s, 2, 20) == 0);
    NEAR(cal_sweep_next_rate(&c, s, 0, 1000), 150);
}

static void test_looks_bad(void **state)
{
    (void)state;
    cal_step s = step(100, 100, 0.3);
    s.overhead_mean_us = 140; /* 100 of it queueing over a transport of 40 */
    assert_false(cal_sweep_looks_bad(&s, 40, 100));
    assert_true(cal_sweep_looks_bad(&s, 39, 100));
    assert_true(cal_sweep_looks_bad(&s, NAN, 100)); /* no transport known: all of it counts */
    s.overhead_mean_us = NAN;                       /* no delay measured: not within budget */
    assert_true(cal_sweep_looks_bad(&s, 40, 100));
    s.overhead_mean_us = 50;
    s.saturated = 1;
    assert_true(cal_sweep_looks_bad(&s, 40, 100));
}

static void test_fill_rate(void **state)
{
    (void)state;
    cal_step s[4] = {step(100, 100, 0.2), step(400, 400, 0.7), step(900, 700, 0.99),
                     step(200, 200, 0.4)};
    s[2].saturated = 1;
    /* between 400 (the fastest good below) and 900: sqrt(400 * 900) = 600 */
    assert_true(fabs(cal_sweep_fill_rate(s, NULL, 4, 0, INFINITY) - 600) < 1e-9);
    s[1].request_rate = 850; /* within 8% of 900: nothing left to fill */
    assert_true(cal_sweep_fill_rate(s, NULL, 4, 0, INFINITY) == 0);
    s[2].saturated = 0; /* no saturated step: no fill */
    assert_true(cal_sweep_fill_rate(s, NULL, 4, 0, INFINITY) == 0);
    s[0].saturated = 1; /* the first step saturated, nothing kept up: a quarter */
    assert_true(fabs(cal_sweep_fill_rate(s, NULL, 1, 0, INFINITY) - 25) < 1e-9);
}

static void test_fill_over_budget(void **state)
{
    (void)state;
    /* levels 4x apart, none saturated: the one at 1600/s over budget */
    cal_step s[4] = {step(100, 100, 0.05), step(400, 400, 0.1), step(1600, 1600, 0.3),
                     step(6400, 6400, 0.6)};
    for (int i = 0; i < 4; i++)
        s[i].overhead_mean_us = 50;
    s[2].overhead_mean_us = 190; /* 150 of queueing over a transport of 40 */
    s[3].overhead_mean_us = 400;
    /* with a budget, between 400 (within it) and 1600 (over it): 800 */
    assert_true(fabs(cal_sweep_fill_rate(s, NULL, 4, 40, 100) - 800) < 1e-9);
    /* a generous budget: none is bad, nothing to fill */
    assert_true(cal_sweep_fill_rate(s, NULL, 4, 40, 1000) == 0);
    /* without a budget (the self-test) only saturation counts */
    assert_true(cal_sweep_fill_rate(s, NULL, 4, 40, INFINITY) == 0);
    /* the fill-in at 800 was within budget: next between 800 and 1600 */
    cal_step t[5] = {s[0], s[1], s[2], s[3], step(800, 800, 0.2)};
    t[4].overhead_mean_us = 60;
    assert_true(fabs(cal_sweep_fill_rate(t, NULL, 5, 40, 100) - sqrt(800.0 * 1600.0)) < 1e-9);
    /* it was over budget instead: between 400 and 800 */
    t[4].overhead_mean_us = 160;
    assert_true(fabs(cal_sweep_fill_rate(t, NULL, 5, 40, 100) - sqrt(400.0 * 800.0)) < 1e-9);
    /* pooled with repeats within budget, they are no limit */
    s[2].overhead_mean_us = s[3].overhead_mean_us = 60;
    assert_true(cal_sweep_fill_rate(s, NULL, 4, 40, 100) == 0);
}

/* A bad step below a step within budget steers the fill only when it caps
 * in the rule (saturated, or confirmed over budget by its mean); the bad
 * steps are judged with their error bars (neighbour-6f08df4's k=1 sweep). */
static void test_fill_refuted_bad(void **state)
{
    (void)state;
    cal_step s[4] = {step(20, 20, 0.01), step(154, 154, 0.06), step(776, 776, 0.18),
                     step(2452, 2452, 0.55)};
    double err[4] = {199, 27, 24, 53};
    double d[4] = {214, 51, 44, 113}; /* the transport 44: 170 over, 7 within, 0, 69 + 53 over */
    for (int i = 0; i < 4; i++)
        s[i].overhead_mean_us = d[i];
    s[3].confirmed = 1; /* over by its bar only: caps nothing, bounds the crossing */
    /* the stalled first step (over by its mean, one batch, unconfirmed) lies
     * below levels within budget: between 776 and 2452 */
    NEAR(cal_sweep_fill_rate(s, err, 4, 44, 100), sqrt(776.0 * 2452.0));
    /* without the bars the level at 2452 is within: nothing bounds the crossing */
    assert_true(cal_sweep_fill_rate(s, NULL, 4, 44, 100) == 0);
    /* the first step confirmed over by its mean caps all above it: a quarter of its rate */
    s[0].confirmed = 1;
    NEAR(cal_sweep_fill_rate(s, err, 4, 44, 100), 5.0);
    /* within budget first, then a saturated step below one within: it caps, bisect below it */
    s[0].confirmed = 0;
    s[0].overhead_mean_us = 50;
    err[0] = 10;
    s[1].saturated = 1;
    NEAR(cal_sweep_fill_rate(s, err, 4, 44, 100), sqrt(20.0 * 154.0));
}

/* A saturated level is measured again only when nothing places it: no
 * level within budget below it, or one at or above its rate. A level over
 * budget always is. */
static void test_repeat_bad(void **state)
{
    (void)state;
    cal_step v[4] = {step(100, 100, 0.05), step(400, 400, 0.2), step(1600, 1600, 0.7),
                     step(3200, 3000, 0.99)};
    double err[4] = {5, 10, 10, 0};
    for (int i = 0; i < 4; i++) {
        v[i].level = i;
        v[i].overhead_mean_us = 50;
    }
    v[3].saturated = 1;
    /* the delays of levels 0-2 and of the saturated level 3, the transport,
     * the budget, and whether level 3 is measured again */
    static const struct {
        double d0, d1, d2, d3, c, budget;
        int again;
    } cases[] = {
        /* saturated above three within (50 + 10 - 40 <= 100): bisect below */
        {50, 50, 50, 5000, 40, 100, 0},
        /* saturated with a delay within budget (a stall): measured again */
        {50, 50, 50, 130, 40, 100, 1},
        {50, 50, 50, 145, 40, 100, 0},
        /* the self-test without a budget: every delay is within */
        {50, 50, 50, 5000, 40, INFINITY, 1},
        /* within net of the transport: 130 + 10 - 40 <= 100 (not without) */
        {130, 130, 130, 5000, 40, 100, 0},
        {130, 130, 130, 5000, 0, 100, 1},
        /* the fastest level below over budget by its bar: still placed */
        {50, 50, 135, 5000, 40, 100, 0},
        /* none within below it: measured again */
        {145, 145, 135, 5000, 40, 100, 1},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        v[0].overhead_mean_us = cases[t].d0;
        v[1].overhead_mean_us = cases[t].d1;
        v[2].overhead_mean_us = cases[t].d2;
        v[3].overhead_mean_us = cases[t].d3;
        if (cal_sweep_repeat_bad(v, 4, err, 3, cases[t].c, cases[t].budget) != cases[t].again)
            fail_msg("case %zu: measured again %d, wanted %d", t, !cases[t].again, cases[t].again);
    }
    v[0].overhead_mean_us = v[1].overhead_mean_us = v[2].overhead_mean_us = 50;
    v[3].overhead_mean_us = 5000;
    /* a level within at its rate or above: a contradiction, measured again */
    v[2].request_rate = 3200;
    assert_true(cal_sweep_repeat_bad(v, 4, err, 3, 40, 100));
    v[2].request_rate = 4000;
    assert_true(cal_sweep_repeat_bad(v, 4, err, 3, 40, 100));
    v[2].request_rate = 1600;
    /* the probe, saturated with nothing below it: measured again */
    v[0].saturated = 1;
    assert_true(cal_sweep_repeat_bad(v, 1, err, 0, 40, 100));
    /* a level over budget, not saturated: always measured again */
    v[3].saturated = 0;
    v[3].overhead_mean_us = 400;
    assert_true(cal_sweep_repeat_bad(v, 4, err, 3, 40, 100));
    /* a level not in the view: measured again */
    v[3].saturated = 1;
    assert_true(cal_sweep_repeat_bad(v, 4, err, 7, 40, 100));
    /* without error bars (NULL): by the means */
    assert_false(cal_sweep_repeat_bad(v, 4, NULL, 3, 40, 100));
}

/* Level 0 at 100/s (30, 32, 34 us), level 1 at 400/s that looked bad (230,
 * 232, 234 us), its repeat, level 2, at the same rate (70, 72, 74 us);
 * swapped: the repeat is the bad one. All of worker count k. */
static void pool_case(cal_step s[9], int k, int swapped)
{
    static const double d[9] = {30, 32, 34, 230, 232, 234, 70, 72, 74};
    for (int i = 0; i < 9; i++) {
        s[i] = step(i < 3 ? 100 : 400, i < 3 ? 100 : 400, i < 3 ? 0.1 : 0.4);
        s[i].workers = k;
        s[i].level = i / 3;
        s[i].overhead_mean_us = swapped && i >= 3 ? d[i < 6 ? i + 3 : i - 3] : d[i];
    }
}

/* A repeat joins its level: both measurements pooled, judged together. */
static void test_pool_repeat(void **state)
{
    (void)state;
    cal_step s[9];
    pool_case(s, 1, 0);
    /* pooled: 152 us over 6 batches; minus the transport 30, 122 > 100 */
    assert_true(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 100));
    cal_level lv[4];
    int n = cal_levels_build(s, 9, 1, lv, 4);
    assert_int_equal(n, 2);
    assert_int_equal(lv[1].level, 1);
    assert_int_equal(lv[1].n, 6);
    assert_true(fabs(lv[1].delay_us - 152) < 1e-9);
    assert_true(lv[1].confirmed && lv[1].repeated);
    assert_false(lv[0].confirmed || lv[0].repeated);
    /* the same pool against a budget of 150 us: within by its mean (122),
     * over by its bar: the pool's spread (level 0: 30, 32, 34; the pool:
     * 152 +- 87.7 sd) over 7 degrees of freedom, cv 0.4885, t(7) 2.3646,
     * 2.3646 x 0.4885 x 152 / sqrt(6) = 71.7 us, and 122 + 71.7 > 150 */
    pool_case(s, 1, 0);
    assert_true(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 150));
    /* against 200 us it is within (193.7): counted, neither confirmed nor
     * dropped */
    pool_case(s, 1, 0);
    assert_false(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 200));
    n = cal_levels_build(s, 9, 1, lv, 4);
    assert_int_equal(n, 2);
    assert_false(lv[1].confirmed);
    assert_true(lv[1].repeated && lv[1].n == 6);
    /* and against 190 us it is over (193.7 > 190) */
    pool_case(s, 1, 0);
    assert_true(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 190));
    /* the reverse order (the repeat is the bad one): the same pool */
    pool_case(s, 1, 1);
    assert_true(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 100));
    n = cal_levels_build(s, 9, 1, lv, 4);
    assert_true(fabs(lv[1].delay_us - 152) < 1e-9 && lv[1].n == 6 && lv[1].confirmed);
    /* another worker count's batches are left alone */
    pool_case(s, 2, 0);
    assert_false(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 100));
    assert_int_equal(s[6].level, 2);
    assert_false(s[6].repeated);
    /* a saturated first measurement (all three batches) and a repeat that
     * kept up: 3 of 6 saturated is not more than half, the level's means
     * are the repeat's, within budget */
    pool_case(s, 1, 0);
    for (int i = 3; i < 6; i++)
        s[i].saturated = 1;
    assert_false(cal_sweep_pool_repeat(s, 9, 1, 1, 2, 30, 100));
    n = cal_levels_build(s, 9, 1, lv, 4);
    assert_false(lv[1].saturated);
    assert_true(fabs(lv[1].delay_us - 72) < 1e-9);
}

/* A neighbour that never leaves: every batch and every retry disturbed. The
 * first CAL_RETRY_FUTILE retries are made, then none until a quiet batch. */
static void test_retry_steady_neighbour(void **state)
{
    (void)state;
    cal_retry r = {0};
    /* batch 0: first try disturbed, retried twice (the batch's limit) */
    assert_true(cal_retry_again(&r, 1, 0, 0, 3));
    assert_true(cal_retry_again(&r, 1, 1, 1, 3));  /* one futile retry */
    assert_false(cal_retry_again(&r, 1, 2, 2, 3)); /* two: the batch's limit */
    assert_int_equal(r.futile, 2);
    assert_int_equal(r.stops, 0);
    /* batch 1: retried once more; that third futile retry gives up */
    assert_true(cal_retry_again(&r, 1, 0, 2, 3));
    assert_false(cal_retry_again(&r, 1, 1, 3, 3));
    assert_int_equal(r.stops, 1);
    /* the next levels: disturbed first tries are kept, not retried */
    for (int b = 0; b < 6; b++)
        assert_false(cal_retry_again(&r, 1, 0, 0, 3));
    assert_int_equal(r.stops, 1);
    /* a quiet batch: retries resume, and the streak starts over */
    assert_false(cal_retry_again(&r, 0, 0, 0, 3));
    assert_int_equal(r.futile, 0);
    assert_true(cal_retry_again(&r, 1, 0, 0, 3));
    assert_true(cal_retry_again(&r, 1, 1, 1, 3));
    assert_int_equal(r.stops, 1);
}

/* A neighbour that comes and goes: a retry that comes out quiet ends the
 * streak, so passing disturbances never stop the retries. */
static void test_retry_passing_neighbour(void **state)
{
    (void)state;
    cal_retry r = {0};
    for (int b = 0; b < 20; b++) {
        assert_true(cal_retry_again(&r, 1, 0, 0, 20));
        assert_true(cal_retry_again(&r, 1, 1, 1, 20));  /* disturbed again */
        assert_false(cal_retry_again(&r, 0, 2, 2, 20)); /* then quiet: kept */
    }
    assert_int_equal(r.stops, 0);
    /* the level's own limit still holds */
    assert_false(cal_retry_again(&r, 1, 0, 3, 3));
}

/* The sweep's time rule: the levels before min_levels and those that end
 * in time always run; past the deadline only the first fill level does. */
static void test_out_of_time(void **state)
{
    (void)state;
    const long long s = 1000000000LL;
    /* in time */
    assert_false(cal_sweep_out_of_time(5, 3, 10 * s, 5 * s, 15 * s, 0, 0));
    /* would end past the deadline */
    assert_true(cal_sweep_out_of_time(5, 3, 10 * s, 5 * s, 15 * s - 1, 0, 0));
    /* fewer than the minimum of levels: on, whatever the time */
    assert_false(cal_sweep_out_of_time(2, 3, 100 * s, 5 * s, 15 * s, 0, 0));
    assert_true(cal_sweep_out_of_time(3, 3, 100 * s, 5 * s, 15 * s, 0, 0));
    /* a limit found: the first fill level runs past the deadline ... */
    assert_false(cal_sweep_out_of_time(5, 3, 100 * s, 5 * s, 15 * s, 1, 0));
    /* ... and no second one */
    assert_true(cal_sweep_out_of_time(6, 3, 100 * s, 5 * s, 15 * s, 1, 1));
    /* a fill level in time runs as any level does */
    assert_false(cal_sweep_out_of_time(6, 3, 10 * s, 5 * s, 15 * s, 1, 3));
}

static void test_modes(void **state)
{
    (void)state;
    cal_sweep_cfg q, d, t;
    cal_sweep_defaults(&q, 0);
    cal_sweep_defaults(&d, 1);
    cal_sweep_defaults(&t, 2);
    assert_true(q.n_targets < d.n_targets && d.n_targets < t.n_targets);
    for (int i = 1; i < t.n_targets; i++)
        assert_true(t.rho_targets[i] > t.rho_targets[i - 1]);
}

/* The baseline repeats the judged steps (rho in the window, not saturated,
 * this k), ascending; with fewer than two of them, the two fastest. */
static void test_baseline_rates(void **state)
{
    (void)state;
    cal_step s[6];
    const double rate[] = {20, 90, 150, 240, 200, 60};
    const double rho[] = {0.07, 0.36, 0.54, 0.86, 0.7, 0.3};
    for (int i = 0; i < 6; i++) {
        cal_step_clear(&s[i]);
        s[i].workers = i == 5 ? 2 : 1;
        s[i].request_rate = rate[i];
        s[i].rho_mean = rho[i];
    }
    s[3].saturated = 1;
    double out[8];
    assert_int_equal(cal_sweep_baseline_rates(s, 6, 1, 0.2, 0.85, out, 8), 3);
    assert_true(out[0] == 90 && out[1] == 150 && out[2] == 200);
    assert_int_equal(cal_sweep_baseline_rates(s, 6, 1, 0.2, 0.85, out, 2), 2);
    /* two batches of one level: its rate once */
    s[0].request_rate = 150;
    s[0].rho_mean = 0.5;
    assert_int_equal(cal_sweep_baseline_rates(s, 6, 1, 0.2, 0.85, out, 8), 3);
    s[0].request_rate = 20;
    s[0].rho_mean = 0.07;
    /* nothing in the window: the two fastest unsaturated */
    assert_int_equal(cal_sweep_baseline_rates(s, 6, 1, 0.9, 0.95, out, 8), 2);
    assert_true(out[0] == 150 && out[1] == 200);
    assert_int_equal(cal_sweep_baseline_rates(s, 6, 3, 0.2, 0.85, out, 8), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_saturation_rule),
        cmocka_unit_test(test_next_rate),
        cmocka_unit_test(test_stops),
        cmocka_unit_test(test_looks_bad),
        cmocka_unit_test(test_fill_rate),
        cmocka_unit_test(test_fill_over_budget),
        cmocka_unit_test(test_fill_refuted_bad),
        cmocka_unit_test(test_repeat_bad),
        cmocka_unit_test(test_pool_repeat),
        cmocka_unit_test(test_baseline_rates),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_retry_steady_neighbour),
        cmocka_unit_test(test_retry_passing_neighbour),
        cmocka_unit_test(test_out_of_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
