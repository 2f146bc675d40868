/* Unit tests of mdl_verdict: each rule at its boundary, the order of the
 * rules, wire-timed against user-timed figures, the cause named from host
 * evidence or from the client's queue, unmeasured figures, and the reason
 * naming the deciding figure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_verdict.h"

/* A wire-timed run with nothing to complain about. */
static mdl_verdict_input calm(void)
{
    mdl_verdict_input in = mdl_verdict_input_none();
    in.max_rho = 0.1;
    in.predicted_wq_us = 2;
    in.delay_mean_us = 15;
    in.delay_p99_us = 200;
    in.pickup_mean_us = 10;
    in.wire_share = 1.0;
    in.rxq_max_bytes = 600;
    in.run_delay_share = 0.001;
    in.steal_share = 0.0;
    in.lag_p99_us = 50;
    in.achieved_ratio = 1.0;
    in.arrival_p_value = 0.4;
    in.arrival_d = 0.01;
    return in;
}

/* The same run timed by the loop (no kernel stamps). */
static mdl_verdict_input calm_user(void)
{
    mdl_verdict_input in = calm();
    in.wire_share = 0.0;
    in.pickup_mean_us = NAN;
    return in;
}

static mdl_verdict judge(mdl_verdict_input in)
{
    mdl_verdict v;
    memset(&v, 0xA5, sizeof v);
    mdl_verdict_judge(&in, &v);
    return v;
}

#define assert_verdict(in, lvl, cause_, needle)                                                    \
    do {                                                                                           \
        mdl_verdict v_ = judge(in);                                                                \
        if (v_.level != (lvl) || strcmp(v_.cause, (cause_)) != 0 || !strstr(v_.reason, (needle)))  \
            fail_msg("got %s (%s) \"%s\", want %s (%s) containing \"%s\"",                         \
                     mdl_verdict_name(v_.level), v_.cause, v_.reason, mdl_verdict_name(lvl),       \
                     (cause_), (needle));                                                          \
    } while (0)

static void test_ok(void **state)
{
    (void)state;
    assert_verdict(calm(), MDL_VERDICT_OK, "none", "max worker rho 0.10, wire-timed");
    mdl_verdict v = judge(calm());
    assert_int_equal(v.wire_timed, 1);
    assert_int_equal(v.user_timed_biased, 0);
    assert_non_null(strstr(v.reason, "mean 15 us, p99 200 us within budgets 100/2000 us"));
    /* Nothing measured: OK, and says so. */
    mdl_verdict_input none = mdl_verdict_input_none();
    assert_verdict(none, MDL_VERDICT_OK, "none", "rho not measured within budget");
    v = judge(none);
    assert_int_equal(v.wire_timed, 0);
    assert_int_equal(v.user_timed_biased, 0);
    /* Budgets that are not > 0 fall back to the defaults. */
    mdl_verdict_input in = calm();
    in.budget_mean_us = NAN;
    in.budget_p99_us = -1;
    assert_verdict(in, MDL_VERDICT_OK, "none", "within budgets 100/2000 us");
}

static void test_rate_and_schedule(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.achieved_ratio = 0.949;
    assert_verdict(in, MDL_VERDICT_BIASED, "rate", "achieved rate 94.9% of requested < 95%");
    in.achieved_ratio = 0.95; /* the boundary is not BIASED */
    assert_verdict(in, MDL_VERDICT_OK, "none", "max worker rho");

    in = calm();
    in.lag_p99_us = 10001;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule", "schedule lag p99 10001 us > 10000 us");
    in.lag_p99_us = 10000; /* exactly at the BIASED line: AT-RISK */
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule", "schedule lag p99 10000 us > 1000 us");
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule", ": the host, not the client's queue");
    in.max_rho = 0.6;
    in.safe_rho = 0.7;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule",
                   "10000 us > 1000 us: the client's own queue");
    in.max_rho = 0.1;
    in.safe_rho = NAN;
    in.lag_p99_us = 1000; /* exactly at the AT-RISK line: OK */
    assert_verdict(in, MDL_VERDICT_OK, "none", "wire-timed");

    /* With the p99's lower confidence bound the rules judge the bound, at
     * the same lines, and the reason gives both. */
    in = calm();
    in.lag_p99_us = 50000;
    in.lag_p99_lo_us = 10001;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule",
                   "schedule lag p99 50000 us > 10000 us (its lower 95% bound 10001 us)");
    in.lag_p99_lo_us = 10000;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule",
                   "schedule lag p99 50000 us > 1000 us (its lower 95% bound 10000 us)");
    in.lag_p99_us = 1500;
    in.lag_p99_lo_us = 1001;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule", "(its lower 95% bound 1001 us): the host");
    in.lag_p99_lo_us = 1000; /* the bound at the line: OK, and the p99 named */
    assert_verdict(in, MDL_VERDICT_OK, "none",
                   "; schedule lag p99 1500 us, but its lower 95% bound 1000 us is within 1000 us: "
                   "too few late dispatches to call it over");
    in.lag_p99_us = 900; /* a p99 within the line needs no word */
    in.lag_p99_lo_us = 400;
    mdl_verdict v = judge(in);
    assert_int_equal(v.level, MDL_VERDICT_OK);
    assert_null(strstr(v.reason, "schedule lag"));
    in.lag_p99_us = 1500; /* the note follows the delay's sentence, user-timed too */
    in.lag_p99_lo_us = 700;
    in.wire_share = 0.0;
    in.pickup_mean_us = NAN;
    v = judge(in);
    assert_int_equal(v.level, MDL_VERDICT_OK);
    assert_non_null(strstr(v.reason, "within budgets 100/2000 us; schedule lag p99 1500 us"));

    /* The arrival test needs both a small p and an effect. */
    in = calm();
    in.arrival_p_value = 0.0009;
    in.arrival_d = 0.051;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule", "arrival test p-value 0.0009 < 0.001");
    in.arrival_d = 0.05;
    assert_verdict(in, MDL_VERDICT_OK, "none", "wire-timed");
    in.arrival_d = NAN; /* unknown effect: p alone decides */
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule", "arrival test");
    in.arrival_p_value = 0.001;
    assert_verdict(in, MDL_VERDICT_OK, "none", "wire-timed");
}

static void test_rho(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.max_rho = 0.90;
    assert_verdict(in, MDL_VERDICT_BIASED, "client queue", "max worker rho 0.90 >= 0.90");
    in.max_rho = 0.89;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue",
                   "max worker rho 0.89 > 0.50 (no certificate)");
    in.max_rho = 0.50;
    assert_verdict(in, MDL_VERDICT_OK, "none", "max worker rho 0.50");
    /* With a certificate, its safe rho is the line. */
    in.safe_rho = 0.7;
    in.max_rho = 0.71;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue",
                   "max worker rho 0.71 > certified safe rho 0.70");
    in.max_rho = 0.70;
    assert_verdict(in, MDL_VERDICT_OK, "none", "max worker rho 0.70");
    in.safe_rho = 0.3;
    in.max_rho = 0.4; /* below the uncertified 0.5, above the certificate */
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue", "certified safe rho 0.30");
}

/* Wire-timed: a delay over budget is reported, never counted. */
static void test_wire_timed_delay_is_reported(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.delay_p99_us = 1301 * 10; /* far over 10x the p99 budget */
    in.delay_mean_us = 5000;
    in.pickup_mean_us = 4900;
    in.run_delay_share = 0.031;
    mdl_verdict v = judge(in);
    assert_int_equal(v.level, MDL_VERDICT_OK);
    assert_int_equal(v.wire_timed, 1);
    assert_int_equal(v.user_timed_biased, 1);
    assert_string_equal(v.cause, "host");
    assert_non_null(strstr(v.reason, "its delay per token (mean 5000 us) being over their "
                                     "budget of 100 us: the host"));
    assert_non_null(strstr(v.reason, "run-queue wait 3.1% of the window"));
    assert_non_null(strstr(v.reason, "user-timed ones would have been biased"));
    /* An OK verdict reads as one: no clause that looks like a failed check. */
    assert_null(strstr(v.reason, " > "));
    in.delay_mean_us = 50;
    v = judge(in);
    assert_non_null(strstr(v.reason, "(p99 13010 us) being over their budget of 2000 us"));
    in.delay_mean_us = 5000;
    /* 99% of tokens kernel-timed is the line. */
    in.wire_share = 0.99;
    assert_int_equal(judge(in).level, MDL_VERDICT_OK);
    in.wire_share = 0.989;
    v = judge(in);
    assert_int_equal(v.level, MDL_VERDICT_BIASED);
    assert_int_equal(v.wire_timed, 0);
}

/* User-timed: the mean against the mean budget, the p99 against the p99. */
static void test_user_timed_budgets(void **state)
{
    (void)state;
    mdl_verdict_input in = calm_user();
    assert_verdict(in, MDL_VERDICT_OK, "none", "max worker rho 0.10; client delay");
    in.delay_mean_us = 101;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "host",
                   "client delay per token mean 101 us > budget 100 us");
    in.delay_mean_us = 100;
    assert_verdict(in, MDL_VERDICT_OK, "none", "within budgets");
    in.delay_p99_us = 2001;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "host",
                   "client delay per token p99 2001 us > budget 2000 us");
    in.delay_p99_us = 20001;
    assert_verdict(in, MDL_VERDICT_BIASED, "host",
                   "client delay per token p99 20001 us > 10x budget 2000 us");
    in.delay_p99_us = 20000;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "host", "p99 20000 us > budget 2000 us");
    in = calm_user();
    in.delay_mean_us = 1001;
    assert_verdict(in, MDL_VERDICT_BIASED, "host", "mean 1001 us > 10x budget 100 us");
    /* A p99 of 1 ms is not over a mean budget of 100 us: like for like. */
    in = calm_user();
    in.delay_p99_us = 1000;
    in.delay_mean_us = 50;
    assert_verdict(in, MDL_VERDICT_OK, "none", "within budgets");
    /* User budgets are the caller's. */
    in.budget_mean_us = 40;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "host", "mean 50 us > budget 40 us");
    /* PK's prediction counts only when the figures are the loop's own. */
    in = calm_user();
    in.predicted_wq_us = 101;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue",
                   "predicted client W_q 101 us > budget 100 us");
    in.wire_share = 1.0;
    assert_verdict(in, MDL_VERDICT_OK, "none", "wire-timed");
}

/* The cause, from evidence. */
static void test_cause(void **state)
{
    (void)state;
    mdl_verdict_input in = calm_user();
    in.delay_mean_us = 300;
    in.max_rho = 0.45;
    in.run_delay_share = NAN;
    in.steal_share = 0.02;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "host", "steal 2.0%)");
    mdl_verdict v = judge(in);
    assert_null(strstr(v.reason, "run-queue"));
    /* A busy loop: the client's queue, with PK's figure. */
    in.max_rho = 0.5;
    in.safe_rho = 0.6;
    in.predicted_wq_us = 90;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue",
                   "the client's own queue (max worker rho 0.50, PK W_q 90 us)");
    /* Low rho, but PK explains at least half the pickup delay. */
    in = calm();
    in.delay_mean_us = 400;
    in.pickup_mean_us = 380;
    in.predicted_wq_us = 190;
    v = judge(in);
    assert_int_equal(v.level, MDL_VERDICT_OK);
    assert_string_equal(v.cause, "client queue");
    in.predicted_wq_us = 189;
    assert_string_equal(judge(in).cause, "host");
    /* A p99 is explained by PK within twice an M/M/1 queue's p99 at that
     * W_q and rho: at rho 0.1, 2 W_q ln(10) / 0.1 = 46.05 W_q, so a 12 ms
     * lag needs W_q >= 260.6 us. */
    in = calm();
    in.lag_p99_us = 12000;
    in.predicted_wq_us = 261;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule",
                   "12000 us > 10000 us: the client's own queue");
    in.predicted_wq_us = 260;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule", "12000 us > 10000 us: the host");
    /* Below rho 0.01 a queue has no p99 wait: the host, whatever W_q. */
    in.max_rho = 0.009;
    in.predicted_wq_us = 1e6;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule", ": the host");
    in = calm_user();
    in.delay_p99_us = 900;
    in.budget_p99_us = 800;
    in.predicted_wq_us = 19.6; /* 46.05 x 19.6 = 902.6 */
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue", "p99 900 us > budget 800 us");
    in.predicted_wq_us = 19.5; /* 898.0 */
    assert_verdict(in, MDL_VERDICT_AT_RISK, "host", "p99 900 us > budget 800 us");
}

/* A receive queue deep enough for flow control, while the loop was late. */
static void test_flow_control(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.rxq_max_bytes = 65536;
    in.delay_p99_us = 2001;
    assert_verdict(in, MDL_VERDICT_BIASED, "flow control",
                   "receive queue reached 64 KiB at a pickup while the client delay p99 was 2001");
    in.delay_p99_us = 2000; /* a deep queue read promptly: a big response, not a late loop */
    assert_int_equal(judge(in).level, MDL_VERDICT_OK);
    in.delay_p99_us = 5000;
    in.rxq_max_bytes = 65535;
    assert_int_equal(judge(in).level, MDL_VERDICT_OK);
}

/* The order: the first rule that fires decides. */
static void test_order(void **state)
{
    (void)state;
    mdl_verdict_input in = calm_user();
    in.achieved_ratio = 0.5;
    in.max_rho = 0.95;
    in.lag_p99_us = 50000;
    in.delay_mean_us = 1e6;
    assert_verdict(in, MDL_VERDICT_BIASED, "rate", "achieved rate");
    in.achieved_ratio = 1;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule", "schedule lag");
    in.lag_p99_us = 50;
    assert_verdict(in, MDL_VERDICT_BIASED, "client queue", "max worker rho 0.95");
    in.max_rho = 0.6;
    assert_verdict(in, MDL_VERDICT_BIASED, "client queue", "client delay per token mean");
    in.delay_mean_us = 50;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client queue", "max worker rho 0.60 > 0.50");
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(mdl_verdict_name(MDL_VERDICT_OK), "OK");
    assert_string_equal(mdl_verdict_name(MDL_VERDICT_AT_RISK), "AT-RISK");
    assert_string_equal(mdl_verdict_name(MDL_VERDICT_BIASED), "BIASED");
    assert_string_equal(mdl_verdict_name((mdl_verdict_level)7), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok),
        cmocka_unit_test(test_rate_and_schedule),
        cmocka_unit_test(test_rho),
        cmocka_unit_test(test_wire_timed_delay_is_reported),
        cmocka_unit_test(test_user_timed_budgets),
        cmocka_unit_test(test_cause),
        cmocka_unit_test(test_flow_control),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
