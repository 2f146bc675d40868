/* Unit tests of mdl_verdict: each rule at its boundary, the order of the
 * rules, unmeasured figures, and the reason naming the deciding figure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_verdict.h"

/* A run with nothing to complain about. */
static mdl_verdict_input calm(void)
{
    return (mdl_verdict_input){.max_rho = 0.1,
                               .predicted_wq_us = 5,
                               .overhead_p99_us = 20,
                               .overhead_mean_us = 15,
                               .transport_us = NAN,
                               .lag_p99_us = 50,
                               .achieved_ratio = 1.0,
                               .arrival_p_value = 0.4,
                               .arrival_d = 0.01,
                               .safe_rho = NAN,
                               .budget_us = 100};
}

static mdl_verdict judge(mdl_verdict_input in)
{
    mdl_verdict v;
    memset(&v, 0, sizeof v);
    mdl_verdict_judge(&in, &v);
    return v;
}

#define assert_verdict(in, lvl, needle)                                                            \
    do {                                                                                           \
        mdl_verdict v_ = judge(in);                                                                \
        if (v_.level != (lvl) || !strstr(v_.reason, (needle)))                                     \
            fail_msg("got %s \"%s\", want %s containing \"%s\"", mdl_verdict_name(v_.level),       \
                     v_.reason, mdl_verdict_name(lvl), (needle));                                  \
    } while (0)

static void test_ok(void **state)
{
    (void)state;
    assert_verdict(calm(), MDL_VERDICT_OK, "max worker rho 0.10");
    mdl_verdict_input in = calm();
    in.max_rho = NAN;
    in.predicted_wq_us = NAN;
    in.overhead_p99_us = NAN;
    in.overhead_mean_us = NAN;
    in.arrival_d = NAN;
    in.lag_p99_us = NAN;
    in.achieved_ratio = NAN;
    in.arrival_p_value = NAN;
    in.budget_us = NAN; /* falls back to 100 */
    assert_verdict(in, MDL_VERDICT_OK, "within budget 100 us");
}

static void test_biased_boundaries(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.achieved_ratio = 0.95;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.achieved_ratio = 0.9499;
    assert_verdict(in, MDL_VERDICT_BIASED, "achieved rate 95.0% of requested < 95%");

    in = calm();
    in.max_rho = 0.8999;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "rho 0.90 > 0.50");
    in.max_rho = 0.93;
    assert_verdict(in, MDL_VERDICT_BIASED, "max worker rho 0.93 >= 0.90");
    in.max_rho = 0.90;
    assert_verdict(in, MDL_VERDICT_BIASED, ">= 0.90");

    in = calm();
    in.predicted_wq_us = 1000;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "W_q 1000 us > budget 100 us");
    in.predicted_wq_us = 1001;
    assert_verdict(in, MDL_VERDICT_BIASED, "W_q 1001 us > 10x budget 100 us");

    in = calm();
    in.lag_p99_us = 10000;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "lag p99 10000 us > 1000 us");
    in.lag_p99_us = 10001;
    assert_verdict(in, MDL_VERDICT_BIASED, "lag p99 10001 us > 10000 us");

    in = calm();
    in.budget_us = 50;
    in.overhead_p99_us = 500;
    assert_verdict(in, MDL_VERDICT_OK, ""); /* a tail under 10x the budget is the host's noise */
    in.overhead_p99_us = 501;
    assert_verdict(in, MDL_VERDICT_BIASED, "overhead p99 501 us > 10x budget 50 us");
    /* at low rho the reason blames the host, at high rho it does not */
    assert_verdict(in, MDL_VERDICT_BIASED, "the host");
    in.max_rho = 0.6;
    mdl_verdict v = judge(in);
    assert_null(strstr(v.reason, "the host"));
}

static void test_at_risk_boundaries(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.max_rho = 0.5;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.max_rho = 0.51;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "rho 0.51 > 0.50 (no certificate)");
    /* a certificate replaces the default limit, either way */
    in.safe_rho = 0.7;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.max_rho = 0.71;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "certified safe rho 0.70");
    in.safe_rho = 0.3;
    in.max_rho = 0.35;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "rho 0.35 > certified safe rho 0.30");

    in = calm();
    in.predicted_wq_us = 100;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.predicted_wq_us = 100.5;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "predicted client W_q");

    in = calm();
    in.lag_p99_us = 1000;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.lag_p99_us = 1001;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "schedule lag p99 1001 us > 1000 us");

    in = calm();
    in.overhead_mean_us = 100;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.overhead_mean_us = 101;
    assert_verdict(in, MDL_VERDICT_AT_RISK,
                   "client delay per token 101 us over transport > budget 100 us");
    in.transport_us = 30; /* the certificate's transport is not the client's */
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.overhead_mean_us = 131;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "client delay per token 101 us");

    in = calm();
    in.arrival_d = 0.2;
    in.arrival_p_value = 0.001;
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.arrival_p_value = 0.0009;
    assert_verdict(in, MDL_VERDICT_AT_RISK, "arrival test p-value 0.0009 < 0.001");
    in.arrival_d = 0.05; /* significant but tiny: dispatch jitter, not another process */
    assert_verdict(in, MDL_VERDICT_OK, "");
    in.arrival_d = NAN; /* D unknown: p alone decides */
    assert_verdict(in, MDL_VERDICT_AT_RISK, "arrival test");
}

static void test_most_severe_rule_decides(void **state)
{
    (void)state;
    mdl_verdict_input in = calm();
    in.arrival_p_value = 1e-9; /* AT-RISK */
    in.lag_p99_us = 20000;     /* BIASED */
    in.achieved_ratio = 0.5;   /* BIASED, and first */
    assert_verdict(in, MDL_VERDICT_BIASED, "achieved rate 50.0%");
    in.achieved_ratio = 1.0;
    assert_verdict(in, MDL_VERDICT_BIASED, "schedule lag");
    assert_string_equal(mdl_verdict_name(MDL_VERDICT_OK), "OK");
    assert_string_equal(mdl_verdict_name(MDL_VERDICT_AT_RISK), "AT-RISK");
    assert_string_equal(mdl_verdict_name(MDL_VERDICT_BIASED), "BIASED");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ok),
        cmocka_unit_test(test_biased_boundaries),
        cmocka_unit_test(test_at_risk_boundaries),
        cmocka_unit_test(test_most_severe_rule_decides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
