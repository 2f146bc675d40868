/* Tests of lg_knee: a stage is saturated by the client when it could not
 * offer the load, by the server when completions fall behind with a growing
 * backlog (or failures) or TTFT's median passes the knee; the knee is the
 * first saturated stage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "lg_knee.h"

/* A stage that kept up: 10 s at `rate`, its second half (5 s) as the window. */
static lg_knee_obs stable(double rate, double ttft_ms, double e2el_ms)
{
    uint64_t n = (uint64_t)(rate * 10), half = n / 2;
    return (lg_knee_obs){.rate_per_s = rate,
                         .scheduled = n,
                         .dispatched = n,
                         .have_window = 1,
                         .window_s = 5,
                         .sent_in = half,
                         .completed_in = half,
                         .in_flight_start = (int64_t)(rate * e2el_ms / 1e3),
                         .in_flight_end = (int64_t)(rate * e2el_ms / 1e3),
                         .ttft_p50_ms = ttft_ms,
                         .e2el_p50_ms = e2el_ms};
}

static lg_knee_verdict judge(lg_knee_obs *obs, lg_knee_verdict *v, int s)
{
    lg_knee_rules r = LG_KNEE_RULES_DEFAULT;
    for (int i = 0; i <= s; i++)
        lg_knee_judge(&r, obs, v, i, &v[i]);
    return v[s];
}

static void a_stable_stage_is_not_saturated(void **state)
{
    (void)state;
    lg_knee_obs obs[2] = {stable(10, 5, 300), stable(20, 6, 310)};
    lg_knee_verdict v[2] = {0};
    lg_knee_verdict x = judge(obs, v, 1);
    assert_false(x.saturated);
    assert_int_equal(x.by, LG_SAT_NONE);
    assert_true(fabs(x.completed_rate - 20) < 1e-9);
    /* a Poisson burst above the rate, all served, is not saturation */
    obs[1].sent_in = 130;
    obs[1].completed_in = 100;
    obs[1].in_flight_end += 30;
    assert_false(judge(obs, v, 1).saturated);
}

static void the_client_is_judged_first(void **state)
{
    (void)state;
    lg_knee_obs obs[1] = {stable(100, 5, 300)};
    lg_knee_verdict v[1] = {0};
    obs[0].dispatched = 900;   /* of 1000 scheduled */
    obs[0].completed_in = 100; /* and the server behind too */
    obs[0].in_flight_end += 300;
    lg_knee_verdict x = judge(obs, v, 0);
    assert_true(x.saturated);
    assert_int_equal(x.by, LG_SAT_CLIENT);
    assert_non_null(strstr(x.criterion, "dispatched 900 of 1000"));
    obs[0] = stable(100, 5, 300);
    obs[0].lag_over = 11; /* of 1000: more than 1% late */
    x = judge(obs, v, 0);
    assert_int_equal(x.by, LG_SAT_CLIENT);
    obs[0].lag_over = 10;
    assert_false(judge(obs, v, 0).saturated);
    /* exactly 95% of the schedule sent is enough; one fewer is not */
    obs[0] = stable(100, 5, 300);
    obs[0].dispatched = 950;
    assert_false(judge(obs, v, 0).saturated);
    obs[0].dispatched = 949;
    assert_int_equal(judge(obs, v, 0).by, LG_SAT_CLIENT);
    obs[0].dispatched = 1000;
    /* offered in full, a few late, and the server fell behind: the server */
    obs[0].lag_over = 14;
    obs[0].completed_in = 300;
    obs[0].in_flight_start = 30;
    obs[0].in_flight_end = 230;
    assert_int_equal(judge(obs, v, 0).by, LG_SAT_SERVER);
}

static void a_growing_backlog_is_the_server(void **state)
{
    (void)state;
    /* offered 40/s, served 25/s: the queue grows by 75 in the window */
    lg_knee_obs obs[1] = {stable(40, 5, 300)};
    lg_knee_verdict v[1] = {0};
    obs[0].completed_in = 125;
    obs[0].in_flight_start = 40;
    obs[0].in_flight_end = 115;
    lg_knee_verdict x = judge(obs, v, 0);
    assert_true(x.saturated);
    assert_int_equal(x.by, LG_SAT_SERVER);
    assert_non_null(strstr(x.criterion, "completed 25.0/s of 40.0/s offered"));
    assert_true(fabs(x.completed_rate - 25) < 1e-9);
    /* the same shortfall with a flat backlog is noise (or the window's ends) */
    obs[0].in_flight_end = 50;
    assert_false(judge(obs, v, 0).saturated);
    /* a rise within 3 sqrt(n0 + n1) + 2 (here 3 sqrt(105) + 2 = 32.7) is the
     * wander of a stable queue; past it, growth */
    obs[0].in_flight_end = 65;
    assert_false(judge(obs, v, 0).saturated);
    obs[0].in_flight_end = 80; /* 40 > 3 sqrt(120) + 2 = 34.9 */
    assert_int_equal(judge(obs, v, 0).by, LG_SAT_SERVER);
    obs[0].in_flight_end = 50;
    /* ... unless the server failed what it did not serve */
    obs[0].failed_in = 70;
    x = judge(obs, v, 0);
    assert_int_equal(x.by, LG_SAT_SERVER);
    assert_non_null(strstr(x.criterion, "failed"));
    /* failures count as shedding from 5% of what was sent (200 here) */
    obs[0].failed_in = 11;
    assert_int_equal(judge(obs, v, 0).by, LG_SAT_SERVER);
    obs[0].failed_in = 9;
    assert_false(judge(obs, v, 0).saturated);
}

static void the_server_is_judged_on_what_it_was_sent(void **state)
{
    (void)state;
    /* 40/s offered (200 in the window) but only 160 sent in it, all but 4
     * completed: the server kept up with what it got (a late burst at the
     * window's end raises the in-flight count). */
    lg_knee_obs obs[1] = {stable(40, 5, 300)};
    lg_knee_verdict v[1] = {0};
    obs[0].sent_in = 160;
    obs[0].completed_in = 156;
    obs[0].in_flight_start = 12;
    obs[0].in_flight_end = 60;
    assert_false(judge(obs, v, 0).saturated);
    obs[0].completed_in = 140; /* < 95% of 160 as well: behind */
    assert_int_equal(judge(obs, v, 0).by, LG_SAT_SERVER);
}

static void a_ttft_knee_is_the_server(void **state)
{
    (void)state;
    lg_knee_obs obs[3] = {stable(10, 2, 320), stable(20, 12, 330), stable(30, 170, 500)};
    lg_knee_verdict v[3] = {0};
    /* 12 ms: more than twice 2 ms but within half of 320 ms above it */
    assert_false(judge(obs, v, 1).saturated);
    /* 170 ms > 2 + 160 */
    lg_knee_verdict x = judge(obs, v, 2);
    assert_true(x.saturated);
    assert_int_equal(x.by, LG_SAT_SERVER);
    assert_non_null(strstr(x.criterion, "TTFT p50 170.00 ms > 162.00 ms"));
    obs[2].ttft_p50_ms = 161;
    assert_false(judge(obs, v, 2).saturated);
    obs[2].ttft_p50_ms = 162; /* at the bound: not past it */
    assert_false(judge(obs, v, 2).saturated);
    /* a slow first token against a short request: twice the baseline
     * (200 ms) is the larger bound, not 100 + 75 ms */
    lg_knee_obs slow[2] = {stable(10, 100, 150), stable(20, 190, 260)};
    lg_knee_verdict sv[2] = {0};
    assert_false(judge(slow, sv, 1).saturated);
    slow[1].ttft_p50_ms = 201;
    assert_int_equal(judge(slow, sv, 1).by, LG_SAT_SERVER);
    /* a stage saturated by the client is no baseline, however quick its
     * first tokens: stage 0's 50 ms is (bound 210 ms, not 1 + 165 ms) */
    lg_knee_obs cl[3] = {stable(10, 50, 320), stable(20, 1, 330), stable(30, 180, 340)};
    lg_knee_verdict cv[3] = {0};
    cl[1].dispatched = cl[1].scheduled / 2;
    assert_int_equal(judge(cl, cv, 1).by, LG_SAT_CLIENT);
    assert_false(judge(cl, cv, 2).saturated);
    /* quick requests: the 10 ms floor decides */
    lg_knee_obs quick[2] = {stable(100, 0.2, 1), stable(200, 10.1, 11)};
    lg_knee_verdict q[2];
    assert_false(judge(quick, q, 1).saturated);
    quick[1].ttft_p50_ms = 10.3;
    assert_int_equal(judge(quick, q, 1).by, LG_SAT_SERVER);
    /* no unsaturated earlier stage: no baseline, no TTFT rule */
    lg_knee_obs first[1] = {stable(10, 900, 1200)};
    lg_knee_verdict f[1];
    assert_false(judge(first, f, 0).saturated);
}

static void the_knee_is_the_first_saturated_stage(void **state)
{
    (void)state;
    lg_knee_obs obs[4] = {stable(10, 2, 320), stable(20, 3, 330), stable(30, 400, 700),
                          stable(40, 1500, 1800)};
    lg_knee_verdict v[4] = {0};
    judge(obs, v, 3);
    lg_knee k;
    lg_knee_find(obs, v, 4, &k);
    assert_true(k.found);
    assert_int_equal(k.stage, 2);
    assert_true(k.rate_per_s == 30);
    assert_int_equal(k.cause, LG_SAT_SERVER);
    assert_string_equal(k.criterion, v[2].criterion);
    cJSON *j = cJSON_CreateObject(), *st = cJSON_CreateObject();
    lg_knee_json(j, &k);
    lg_knee_stage_json(st, &v[2]);
    const cJSON *kn = cJSON_GetObjectItem(j, "knee");
    assert_true(cJSON_GetObjectItem(kn, "rate")->valuedouble == 30);
    assert_string_equal(cJSON_GetObjectItem(kn, "cause")->valuestring, "server");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(st, "saturated")));
    assert_string_equal(cJSON_GetObjectItem(st, "saturated_by")->valuestring, "server");
    cJSON_Delete(j);
    cJSON_Delete(st);
    lg_knee_find(obs, v, 2, &k);
    assert_false(k.found);
    j = cJSON_CreateObject();
    lg_knee_json(j, &k);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "knee")));
    cJSON_Delete(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stable_stage_is_not_saturated),
        cmocka_unit_test(the_client_is_judged_first),
        cmocka_unit_test(a_growing_backlog_is_the_server),
        cmocka_unit_test(the_server_is_judged_on_what_it_was_sent),
        cmocka_unit_test(a_ttft_knee_is_the_server),
        cmocka_unit_test(the_knee_is_the_first_saturated_stage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
