/* Unit tests of cal_level: batches grouped into levels, a saturated batch
 * left out of its level's means, the level's own t interval. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cal_level.h"
#include "cal_rule.h"

static cal_step batch(int k, int lv, double rho, double d, int saturated)
{
    cal_step s;
    cal_step_clear(&s);
    s.workers = k;
    s.level = lv;
    s.rho_mean = rho;
    s.overhead_mean_us = d;
    s.event_rate_per_worker = s.callback_rate_per_worker = 1000;
    s.events_per_request = 18;
    s.host_busy = 0.5;
    s.saturated = saturated;
    return s;
}

static void test_levels(void **state)
{
    (void)state;
    cal_step s[9] = {
        batch(1, 0, 0.2, 100, 0),  batch(1, 0, 0.3, 120, 0),   batch(1, 0, 0.25, 110, 0),
        batch(1, 1, 0.5, 200, 0),  batch(1, 1, 0.6, 30000, 1), /* a stall: left out */
        batch(1, 1, 0.5, 220, 0),  batch(2, 0, 0.1, 50, 0),    /* another k */
        batch(1, 2, 0.9, 5000, 1), batch(1, 2, 0.95, 9000, 1), /* saturated level */
    };
    s[2].repeated = 1; /* one batch of level 0 is its repeat's */
    cal_level l[8];
    assert_int_equal(cal_levels_build(s, 9, 1, l, 8), 3);
    /* level 0: three batches, mean 110, sd 10, t(2) 4.303 x 10 / sqrt 3 */
    assert_int_equal(l[0].n, 3);
    assert_true(fabs(l[0].delay_us - 110) < 1e-9);
    assert_true(fabs(l[0].rho - 0.25) < 1e-9);
    assert_true(fabs(l[0].delay_sd_us - 10) < 1e-9);
    assert_true(fabs(l[0].delay_err_us - 4.302653 * 10 / sqrt(3)) < 1e-4);
    assert_true(l[0].repeated && !l[0].confirmed && !l[0].saturated);
    assert_false(l[1].repeated);
    /* level 1: the saturated batch is no measurement */
    assert_int_equal(l[1].n, 2);
    assert_int_equal(l[1].n_saturated, 1);
    assert_false(l[1].saturated);
    assert_true(fabs(l[1].delay_us - 210) < 1e-9);
    assert_true(fabs(l[1].rho - 0.5) < 1e-9);
    /* level 2: all saturated, it keeps its figures and is saturated */
    assert_true(l[2].saturated);
    assert_int_equal(l[2].n, 2);
    assert_true(fabs(l[2].delay_us - 7000) < 1e-9);
    assert_true(fabs(l[2].host_busy - 0.5) < 1e-12);
    /* batches without a level are not levels */
    s[0].level = -1;
    assert_int_equal(cal_levels_build(s, 9, 1, l, 8), 3);
    assert_int_equal(l[0].n, 2);
    assert_int_equal(cal_levels_build(s, 9, 2, l, 8), 1);
}

/* The pooled error bar: the relative spread pooled over the levels that
 * count, each level's bar scaled by its own delay and batch count. */
static void test_pooled_err(void **state)
{
    (void)state;
    cal_level l[4] = {0};
    /* two levels of 3 batches: cv 0.1 and 0.2 -> pooled cv^2 = (0.01 + 0.04) / 2 */
    l[0] = (cal_level){.n = 3, .rho = 0.1, .delay_us = 20, .delay_sd_us = 2};
    l[1] = (cal_level){.n = 3, .rho = 0.5, .delay_us = 50, .delay_sd_us = 10};
    /* saturated levels do not count in the pool */
    l[2] = (cal_level){.n = 3, .rho = 0.6, .delay_us = 60, .delay_sd_us = 60, .saturated = 1};
    l[3] = (cal_level){.n = 1, .rho = 0.8, .delay_us = 90, .delay_sd_us = NAN, .saturated = 1};
    double cv = sqrt(0.05 / 2);
    assert_true(
        fabs(cal_level_pooled_err_us(l, 4, 1, INFINITY) - cal_t95(4) * cv * 50 / sqrt(3.0)) < 1e-9);
    /* a one-batch level gets one too, from the pool */
    assert_true(fabs(cal_level_pooled_err_us(l, 4, 3, INFINITY) - cal_t95(4) * cv * 90) < 1e-9);
    /* a level confirmed bad (saturated), and the first measurement at its
     * rate, are beyond the crossing: their spread (cv 1) widens no bar below
     * them */
    cal_level m[6];
    memcpy(m, l, sizeof l);
    m[0].request_rate = 100;
    m[1].request_rate = 500;
    m[2].request_rate = 600;
    m[3].request_rate = 800;
    m[4] = (cal_level){.n = 3,
                       .rho = 0.7,
                       .request_rate = 700,
                       .delay_us = 700,
                       .delay_sd_us = 700,
                       .saturated = 1,
                       .confirmed = 1};
    m[5] =
        (cal_level){.n = 3, .rho = 0.69, .request_rate = 700, .delay_us = 650, .delay_sd_us = 650};
    assert_true(
        fabs(cal_level_pooled_err_us(m, 6, 1, INFINITY) - cal_t95(4) * cv * 50 / sqrt(3.0)) < 1e-9);
    /* ... but a level below the confirmed one's rate counts, however noisy */
    m[5].request_rate = 650;
    double cv3 = sqrt((0.01 + 0.04 + 1.0) / 3);
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, INFINITY) -
                     cal_t95(6) * cv3 * 50 / sqrt(3.0)) < 1e-9);
    /* unless it is over the budget by its mean (650 - 20 us lowest > 100):
     * beyond the crossing, confirmed or not */
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, 100) - cal_t95(4) * cv * 50 / sqrt(3.0)) <
                1e-9);
    /* at the budget's edge (120 - 20 = 100 us: not over) it counts */
    m[5].delay_us = m[5].delay_sd_us = 120;
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, 100) - cal_t95(6) * cv3 * 50 / sqrt(3.0)) <
                1e-9);
    /* the lowest delay is of the levels that count: the saturated level's 1 us is not it */
    m[2].delay_us = 1;
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, 100) - cal_t95(6) * cv3 * 50 / sqrt(3.0)) <
                1e-9);
    m[2].delay_us = 60;
    m[5].delay_us = m[5].delay_sd_us = 650;
    m[5].request_rate = 700;
    /* a confirmed level that kept up caps by its mean: over a 670 us budget
     * (700 - 20 us lowest), the level at its rate does not count; over a
     * 690 us one only by its bar, it caps nothing (cal_rule_undecided), and
     * both count */
    m[4].saturated = 0;
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, 670) - cal_t95(4) * cv * 50 / sqrt(3.0)) <
                1e-9);
    double cv4 = sqrt((0.01 + 0.04 + 1.0 + 1.0) / 4);
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, 690) - cal_t95(8) * cv4 * 50 / sqrt(3.0)) <
                1e-9);
    /* without a confirmed level every level counts */
    m[4].confirmed = 0;
    assert_true(fabs(cal_level_pooled_err_us(m, 6, 1, INFINITY) -
                     cal_t95(8) * cv4 * 50 / sqrt(3.0)) < 1e-9);
    /* no level of two batches: not known */
    l[0].n = l[1].n = 1;
    assert_true(isnan(cal_level_pooled_err_us(l, 4, 0, INFINITY)));
    assert_true(isnan(cal_level_pooled_err_us(l, 4, 9, INFINITY)));
}

/* The bar a repeat confirms a level with: the pooled one once the pool has
 * CAL_CONFIRM_MIN_DOF degrees of freedom, else none (the mean alone). */
static void test_confirm_err(void **state)
{
    (void)state;
    /* the case measured: a one-batch probe called saturated, and its repeat
     * at the same rate, 23, 81 and 49 us: a pool of 2 dof, a bar of about
     * 72 us, over a 100 us budget with the mean of 51; by the mean, within */
    double d[3] = {22.8, 80.6, 48.7}, mean = (d[0] + d[1] + d[2]) / 3, ss = 0;
    for (int i = 0; i < 3; i++)
        ss += (d[i] - mean) * (d[i] - mean);
    cal_level l[3] = {0};
    l[0] = (cal_level){.n = 1, .rho = 0.03, .request_rate = 20, .delay_us = 59.4, .saturated = 1};
    l[1] = (cal_level){
        .n = 3, .rho = 0.024, .request_rate = 20, .delay_us = mean, .delay_sd_us = sqrt(ss / 2)};
    double pooled = cal_level_pooled_err_us(l, 2, 1, 100);
    assert_true(pooled > 60 && pooled < 80); /* t(2) = 4.30: wide */
    assert_false(cal_rule_within(mean, pooled, NAN, 0, 100));
    assert_true(cal_level_confirm_err_us(l, 2, 1, 100) == 0);
    assert_true(cal_rule_within(mean, cal_level_confirm_err_us(l, 2, 1, 100), NAN, 0, 100));
    /* one more level of three batches: 4 dof, the pooled bar again */
    l[2] = (cal_level){.n = 3, .rho = 0.1, .request_rate = 80, .delay_us = 40, .delay_sd_us = 4};
    double e = cal_level_confirm_err_us(l, 3, 1, 100);
    assert_true(e > 0);
    assert_true(fabs(e - cal_level_pooled_err_us(l, 3, 1, 100)) < 1e-9);
    /* a level of two batches instead: 3 dof, still the mean alone */
    l[2].n = 2;
    assert_true(cal_level_confirm_err_us(l, 3, 1, 100) == 0);
    assert_true(cal_level_pooled_err_us(l, 3, 1, 100) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_pooled_err),
        cmocka_unit_test(test_confirm_err),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
