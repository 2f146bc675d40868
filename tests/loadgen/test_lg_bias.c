/* Unit tests of lg_bias: a stage's figures from the workers' blocks (the
 * worst worker's rho and W_q, shares of kernel-timed and exact tokens, the
 * host's run-queue and steal shares, achieved ratio), the arrival test
 * against intended gaps above the resolution, which delay is judged, and
 * the schedule lag judged by its p99's lower confidence bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "lg_bias.h"

static lg_stage_stats *block(void)
{
    lg_stage_stats *s = lg_stats_new();
    assert_non_null(s);
    return s;
}

static void test_stage_figures(void **state)
{
    (void)state;
    lg_stage_stats *w0 = block(), *w1 = block(), *m = block();
    /* worker 0: 1 s window, 0.8 s idle (rho 0.2); worker 1: rho 0.6 */
    w0->loop_window_ns = 1000000000;
    w0->loop_idle_ns = 800000000;
    w0->run_delay_ns = 10000000;
    w0->svc_n = 1000;
    w0->svc_sum_ns = 1000 * 200e3;                /* E[S] = 200 us */
    w0->svc_sumsq_ns2 = 1000 * 2 * 200e3 * 200e3; /* E[S^2] = 2 E[S]^2 */
    w1->loop_window_ns = 1000000000;
    w1->loop_idle_ns = 400000000;
    w1->run_delay_ns = 30000000;
    const lg_stage_stats *blocks[3] = {w0, NULL, w1}; /* worker 1 lost */
    lg_stats_merge(m, w0);
    lg_stats_merge(m, w1);
    m->rx_kernel_tokens = 990;
    m->rx_user_tokens = 10;
    m->rx_exact_tokens = 900;
    m->host_steal_ns = 5;
    m->host_cpu_ns = 100;
    m->dispatched = 11;
    m->first_intended_ns = 1000;
    m->last_intended_ns = 1000 + 950;
    m->last_dispatch_ns = 1000 + 1000; /* dispatch span 1000 for 950 intended */
    for (int i = 1; i <= 100; i++) {
        mdl_hist_record(lg_stats_hist(m, LG_H_CLIENT_DELAY), (uint64_t)i * 1000);
        mdl_hist_record(lg_stats_hist(m, LG_H_LAG), (uint64_t)i * 10000); /* 10 us .. 1 ms */
    }
    lg_bias_stage b;
    lg_bias_stage_figures(blocks, 3, m, 0, &b);
    assert_float_equal(b.max_rho, 0.6, 1e-9);
    assert_int_equal(b.worst_worker, 2);
    /* PK: lambda 1000/s, E[S] 200 us, E[S^2] 8e-8 s^2 -> rho 0.2,
     * W_q = 1000 * 8e-8 / (2 * 0.8) = 50 us. */
    assert_float_equal(b.predicted_wq_us, 50.0, 1e-6);
    assert_float_equal(b.run_delay_share, 0.03, 1e-12);
    assert_float_equal(b.run_delay_ms, 40.0, 1e-9);
    assert_float_equal(b.wire_share, 0.99, 1e-12);
    assert_float_equal(b.exact_share, 0.90, 1e-12);
    assert_float_equal(b.steal_share, 0.05, 1e-12);
    assert_float_equal(b.achieved_ratio, 0.95, 1e-12);
    assert_int_equal(b.client_delay_us.n, 100);
    assert_float_equal(b.client_delay_us.mean, 50.5, 1e-9);
    assert_float_equal(b.client_delay_us.max, 100.0, 1e-9);
    assert_true(fabs(b.client_delay_us.p99 - 99.0) < 0.1);
    assert_true(isnan(b.pickup_delay_us.mean) && b.pickup_delay_us.n == 0);
    /* the schedule lag's p99, not its median */
    assert_true(fabs(b.lag_p99_us - 990.0) < 990.0 / 1024); /* the histogram's 2^-11 */
    /* A closed loop has no schedule to judge. */
    lg_bias_stage_figures(blocks, 3, m, 1, &b);
    assert_true(isnan(b.achieved_ratio) && isnan(b.lag_p99_us));
    /* An idle time past the window (clocks read at different moments) is
     * rho 0, never negative. */
    double rho, wq, rd;
    w1->loop_idle_ns = w1->loop_window_ns + 5000000;
    lg_bias_worker_loop(w1, &rho, &wq, &rd);
    assert_true(rho == 0.0);
    assert_true(isnan(wq)); /* no service times recorded */
    free(w0);
    free(w1);
    free(m);
}

static void test_judge_picks_the_delay(void **state)
{
    (void)state;
    lg_stage_stats *m = block();
    const lg_stage_stats *none[1] = {NULL};
    lg_bias_budget bud = {.safe_rho = NAN, .mean_us = 100, .p99_us = 120, .transport_us = 60};
    /* A user clock against the simulator: stamp to delivery 150 us, less
     * 60 us of transport, is 90 us: within the 100 us budget for the mean
     * and the 120 us one for the p99 (both have the transport taken off). */
    for (int i = 0; i < 100; i++)
        mdl_hist_record(lg_stats_hist(m, LG_H_OVERHEAD), 150000);
    m->rx_user_tokens = 100;
    lg_bias_stage b;
    lg_bias_stage_figures(none, 1, m, 0, &b);
    lg_bias_judge(&b, &bud);
    assert_int_equal(b.verdict.level, MDL_VERDICT_OK);
    assert_int_equal(b.verdict.wire_timed, 0);
    bud.transport_us = 40; /* 110 us over transport: over budget */
    lg_bias_judge(&b, &bud);
    assert_int_equal(b.verdict.level, MDL_VERDICT_AT_RISK);
    assert_non_null(strstr(b.verdict.reason, "mean 110 us > budget 100 us"));
    /* Kernel-timed: the kernel-to-delivery delay is the one judged (and
     * only reported). */
    m->rx_user_tokens = 0;
    m->rx_kernel_tokens = 100;
    m->rx_exact_tokens = 50; /* half batched: not wire-timed, the delay is judged */
    for (int i = 0; i < 100; i++)
        mdl_hist_record(lg_stats_hist(m, LG_H_CLIENT_DELAY), 300000);
    lg_bias_stage_figures(none, 1, m, 0, &b);
    lg_bias_judge(&b, &bud);
    assert_int_equal(b.verdict.level, MDL_VERDICT_AT_RISK);
    assert_int_equal(b.verdict.wire_timed, 0);
    assert_non_null(strstr(b.verdict.reason, "mean 300 us > budget 100 us"));
    m->rx_exact_tokens = 100;
    mdl_hist_reset(lg_stats_hist(m, LG_H_CLIENT_DELAY));
    for (int i = 0; i < 100; i++)
        mdl_hist_record(lg_stats_hist(m, LG_H_CLIENT_DELAY), 300000);
    lg_bias_stage_figures(none, 1, m, 0, &b);
    lg_bias_judge(&b, &bud);
    assert_int_equal(b.verdict.level, MDL_VERDICT_OK);
    assert_int_equal(b.verdict.wire_timed, 1);
    assert_int_equal(b.verdict.user_timed_biased, 1);
    assert_non_null(strstr(b.verdict.reason, "(mean 300 us) being over their budget of 100 us"));
    assert_null(strstr(b.verdict.reason, "wire clock"));
    /* Timed on the wire (every token from a captured segment): the reason
     * says the receive delay enters no latency, and what still can bias. */
    m->rx_wire_tokens = 99;
    lg_bias_stage_figures(none, 1, m, 0, &b);
    lg_bias_judge(&b, &bud);
    assert_true(b.capture_share == 0.99);
    assert_non_null(strstr(b.verdict.reason, "wire clock the client's receive delay enters no"));
    assert_non_null(strstr(b.verdict.reason, "dispatch lag"));
    /* the clause is whole, never cut by the reason's room */
    const char *tail = "TCP back-pressure still can";
    size_t rl = strlen(b.verdict.reason);
    assert_true(rl > strlen(tail) && strcmp(b.verdict.reason + rl - strlen(tail), tail) == 0);
    m->rx_wire_tokens = 98; /* under the wire share: not said */
    lg_bias_stage_figures(none, 1, m, 0, &b);
    lg_bias_judge(&b, &bud);
    assert_null(strstr(b.verdict.reason, "wire clock"));
    free(m);
}

/* A stage of n dispatches, 100 us late but for `late` that the host woke
 * 2 ms late, judged. */
static void judge_late(int n, int late, lg_bias_stage *b)
{
    lg_bias_budget bud = {.safe_rho = NAN, .mean_us = 100, .p99_us = 2000, .transport_us = NAN};
    const lg_stage_stats *none[1] = {NULL};
    lg_stage_stats *m = block();
    m->dispatched = (uint64_t)n;
    mdl_hist_record_n(lg_stats_hist(m, LG_H_LAG), 100000, (uint64_t)(n - late));
    mdl_hist_record_n(lg_stats_hist(m, LG_H_LAG), 2000000, (uint64_t)late);
    lg_bias_stage_figures(none, 1, m, 0, b);
    lg_bias_judge(b, &bud);
    free(m);
}

/* A 5 s stage at 66.7 requests/s: 279 dispatches. The p99 (the 3rd-latest)
 * is over the 1 ms line with 3 late ones; the sample tells it from 1% by
 * chance only with 7 (the binomial law: 6 or more of 279 at 1% happen in
 * 6.3% of stages, 7 or more in 2.3%). The lag rule judges the bound, and
 * names a p99 over the line that it lets pass. */
static void test_lag_judged_by_its_bound(void **state)
{
    (void)state;
    lg_bias_stage b;
    for (int late = 3; late <= 7; late++) {
        judge_late(279, late, &b);
        assert_true(b.lag_p99_us > 1900.0); /* the point estimate is over the line */
        if (late < 7) {
            assert_true(b.lag_p99_lo_us < 110.0);
            assert_int_equal(b.verdict.level, MDL_VERDICT_OK);
            assert_non_null(strstr(b.verdict.reason, "but its lower 95% bound 100 us is within"));
        } else {
            assert_true(b.lag_p99_lo_us > 1900.0);
            assert_int_equal(b.verdict.level, MDL_VERDICT_AT_RISK);
            assert_string_equal(b.verdict.cause, "schedule");
            assert_non_null(strstr(b.verdict.reason, "> 1000 us (its lower 95% bound 2000 us)"));
        }
    }
    /* With ten times the dispatches the line sits closer to 1%: 37 of 2790
     * over it (1.33%) happen by chance in 5.6% of stages, 38 in 3.9%. */
    judge_late(2790, 37, &b);
    assert_int_equal(b.verdict.level, MDL_VERDICT_OK);
    judge_late(2790, 38, &b);
    assert_int_equal(b.verdict.level, MDL_VERDICT_AT_RISK);
}

/* Dispatch samples with intended gaps alternating 0.5 ms and 2 ms: half
 * are below the 1 ms resolution. */
static size_t samples(lg_dispatch_sample *s, size_t n, int64_t jitter_ns, int bunch)
{
    int64_t t = 1000000000;
    for (size_t i = 0; i < n; i++) {
        s[i].index = (int64_t)i;
        s[i].stage = i < n / 2 ? 0 : 1;
        s[i].intended_ns = t;
        int64_t d = t + (i % 2 ? jitter_ns : 0);
        /* A stalled client sends every 8 arrivals at once, late. */
        if (bunch) d = t - (t % 20000000) + 20000000;
        s[i].dispatch_ns = d;
        /* a 50 ms pause between the stages: no gap of either */
        t += i == n / 2 - 1 ? 50000000 : (i % 2 ? 500000 : 2000000);
    }
    return n;
}

static void test_arrival(void **state)
{
    (void)state;
    enum { N = 2000 };
    lg_dispatch_sample *s = calloc(N, sizeof *s);
    assert_non_null(s);
    lg_arrival_test t;
    /* 20 us of dispatch jitter is far below the server's timescale. */
    samples(s, N, 20000, 0);
    lg_bias_arrival_test(s, N, -1, "gamma(shape=1)", &t);
    assert_int_equal(t.tested, 1);
    assert_string_equal(t.test, "ks2");
    assert_float_equal(t.below_share, 0.5, 0.001);
    assert_int_equal(t.n, 1000); /* 500 gaps of 2 ms in each stage, none across */
    assert_true(t.statistic < 0.05);
    assert_true(t.p_value > 0.001);
    /* Per stage: only that stage's gaps, none across the boundary. */
    lg_bias_arrival_test(s, N, 1, "gamma(shape=1)", &t);
    assert_int_equal(t.n, N / 4);
    /* Bunched dispatches differ from the intended gaps. */
    samples(s, N, 0, 1);
    lg_bias_arrival_test(s, N, -1, "gamma(shape=1)", &t);
    assert_int_equal(t.tested, 1);
    assert_true(t.statistic > 0.5);
    assert_true(t.p_value < 1e-6);
    /* One gap in four at 2 ms, the rest at 0.5 ms: three quarters below
     * the resolution. */
    for (int i = 0; i < 101; i++) {
        s[i].index = i;
        s[i].stage = 0;
        s[i].intended_ns = i ? s[i - 1].intended_ns + (i % 4 ? 500000 : 2000000) : 1000000000;
        s[i].dispatch_ns = s[i].intended_ns;
    }
    lg_bias_arrival_test(s, 101, -1, "gamma(shape=1)", &t);
    assert_int_equal(t.n, 25);
    assert_float_equal(t.below_share, 0.75, 1e-12);
    /* Too few gaps above the resolution: not tested, and says why. */
    lg_bias_arrival_test(s, 30, -1, "gamma(shape=1)", &t);
    assert_int_equal(t.tested, 0);
    assert_non_null(strstr(t.note, "too few to test"));
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stage_figures),
        cmocka_unit_test(test_judge_picks_the_delay),
        cmocka_unit_test(test_lag_judged_by_its_bound),
        cmocka_unit_test(test_arrival),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
