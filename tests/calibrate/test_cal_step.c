/* Unit tests of cal_step: reading a loadgen result and the per-event figures
 * derived from it (values worked out by hand below). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "cal_step.h"

#define NEAR(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * (1.0 + fabs((double)(b))))

/* Two workers: 1000 callbacks of mean 100 us and 3000 of mean 20 us; 1000 and
 * 3000 events; 200 completed requests. Busy 100000 + 60000 us over 4000 events
 * = 40 us per event; callback-weighted E[S] also 40 us; E[S^2] (1000*12000 +
 * 3000*500) / 4000 = 3375 us^2; events per request 20. */
static const char *two_workers =
    "{\"request_rate\": 100, \"achieved_rate\": 99.5, \"completed\": 200, \"failed\": 1,"
    " \"duration\": 2.0, \"median_schedule_lag_ms\": 0.05, \"p99_schedule_lag_ms\": 0.4,"
    " \"client_bias\": {\"workers\": ["
    "   {\"rho\": 0.2, \"callbacks\": 1000, \"callback_rate_per_s\": 500,"
    "    \"mean_service_us\": 100, \"second_moment_us2\": 12000, \"events\": 1000,"
    "    \"event_rate_per_s\": 500},"
    "   {\"rho\": 0.4, \"callbacks\": 3000, \"callback_rate_per_s\": 1500,"
    "    \"mean_service_us\": 20, \"second_moment_us2\": 500, \"events\": 3000,"
    "    \"event_rate_per_s\": 1500}],"
    "  \"overhead_per_token_us\": {\"mean\": 61.5, \"median\": 50, \"p99\": 300},"
    "  \"predicted_wq_us\": 12.5, \"arrival_test\": {\"p_value\": 0.31},"
    "  \"verdict\": \"OK\", \"reason\": \"fine\"}, \"extra\": [1, 2]}";

static void test_parse_and_derive(void **state)
{
    (void)state;
    cal_step s;
    char err[256];
    s.workers = 2;
    assert_int_equal(cal_step_parse(two_workers, strlen(two_workers), &s, err, sizeof err), 0);
    assert_int_equal(s.workers, 2);
    NEAR(s.request_rate, 100);
    NEAR(s.achieved_rate, 99.5);
    assert_int_equal(s.completed, 200);
    assert_int_equal(s.failed, 1);
    NEAR(s.lag_p99_ms, 0.4);
    assert_int_equal(s.n_meas, 2);
    NEAR(s.rho_mean, 0.3);
    NEAR(s.rho_max, 0.4);
    NEAR(s.event_rate_per_worker, 1000);
    NEAR(s.service_per_event_us, 40);
    NEAR(s.mean_service_us, 40);
    NEAR(s.second_moment_us2, 3375);
    NEAR(s.events_per_request, 20);
    NEAR(s.overhead_mean_us, 61.5);
    NEAR(s.overhead_p99_us, 300);
    assert_string_equal(s.delay_source, "overhead_per_token_us");
    assert_string_equal(s.receive_clock, "");
    NEAR(s.predicted_wq_us, 12.5);
    NEAR(s.arrival_p_value, 0.31);
    assert_string_equal(s.verdict, "OK");
    assert_false(s.saturated);
    assert_true(isnan(s.fit_pred_us));
}

static void test_errors_name_the_key(void **state)
{
    (void)state;
    cal_step s;
    char err[256];
    assert_int_equal(cal_step_parse("[1]", 3, &s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "not a JSON object"));
    const char *no_rate = "{\"completed\": 3, \"client_bias\": {\"workers\": []}}";
    assert_int_equal(cal_step_parse(no_rate, strlen(no_rate), &s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "achieved_rate"));
    const char *no_workers = "{\"achieved_rate\": 3, \"completed\": 3, \"client_bias\": {}}";
    assert_int_equal(cal_step_parse(no_workers, strlen(no_workers), &s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "client_bias.workers"));
    const char *bad_worker = "{\"achieved_rate\": 3, \"completed\": 3, \"client_bias\": "
                             "{\"workers\": [{\"rho\": \"high\"}]}}";
    assert_int_equal(cal_step_parse(bad_worker, strlen(bad_worker), &s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "workers[0]"));
}

/* Absent optional figures read as not measured; nothing completed gives no
 * events per request. */
static void test_optional_figures(void **state)
{
    (void)state;
    const char *j = "{\"achieved_rate\": 0, \"completed\": 0, \"client_bias\": {\"workers\": "
                    "[{\"rho\": 0, \"callbacks\": 0, \"mean_service_us\": 0, \"events\": 0,"
                    " \"event_rate_per_s\": 0}]}}";
    cal_step s;
    char err[256];
    assert_int_equal(cal_step_parse(j, strlen(j), &s, err, sizeof err), 0);
    assert_true(isnan(s.overhead_mean_us));
    assert_true(isnan(s.arrival_p_value));
    assert_true(isnan(s.events_per_request));
    assert_true(isnan(s.service_per_event_us));
    assert_true(isnan(s.request_rate));
}

/* A worker that received nothing in the batch: loadgen gives it no rho nor
 * service time (null). It did no work: idle, not an error. A worker with
 * events but no rho is still one. */
static void test_idle_worker(void **state)
{
    (void)state;
    const char *j = "{\"achieved_rate\": 0, \"completed\": 0, \"client_bias\": {\"workers\": "
                    "[{\"rho\": null, \"callbacks\": 0, \"mean_service_us\": null,"
                    " \"second_moment_us2\": null, \"events\": 0, \"event_rate_per_s\": 0},"
                    " {\"rho\": 0.5, \"callbacks\": 10, \"mean_service_us\": 100,"
                    " \"second_moment_us2\": 20000, \"events\": 10, \"event_rate_per_s\": 5000}]}}";
    cal_step s;
    char err[256];
    s.workers = 2;
    assert_int_equal(cal_step_parse(j, strlen(j), &s, err, sizeof err), 0);
    assert_int_equal(s.n_meas, 2);
    NEAR(s.w[0].rho, 0);
    NEAR(s.w[0].mean_service_us, 0);
    NEAR(s.rho_mean, 0.25);
    NEAR(s.mean_service_us, 100); /* over the callbacks: the idle worker had none */
    NEAR(s.second_moment_us2, 20000);
    NEAR(s.event_rate_per_worker, 2500);
    assert_false(cal_step_empty(&s)); /* one worker had events */
    const char *none = "{\"achieved_rate\": 0, \"completed\": 0, \"failed\": 0, \"client_bias\": "
                       "{\"workers\": [{\"rho\": null, \"callbacks\": 0, \"events\": 0,"
                       " \"event_rate_per_s\": 0}, {\"rho\": null, \"callbacks\": 0, \"events\": 0,"
                       " \"event_rate_per_s\": 0}]}}";
    assert_int_equal(cal_step_parse(none, strlen(none), &s, err, sizeof err), 0);
    assert_true(cal_step_empty(&s));
    s.failed = 1; /* a failure is a measurement: not empty */
    assert_false(cal_step_empty(&s));
    const char *busy = "{\"achieved_rate\": 3, \"completed\": 3, \"client_bias\": {\"workers\": "
                       "[{\"rho\": null, \"callbacks\": 4, \"mean_service_us\": 10,"
                       " \"events\": 4, \"event_rate_per_s\": 2}]}}";
    assert_int_equal(cal_step_parse(busy, strlen(busy), &s, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "workers[0]"));
}

/* host.cpu_latency_qos: the limit counts only when every worker held it;
 * a sweep's figure is the largest over its batches, NAN when one batch did
 * not hold it. */
static void test_cpu_latency(void **state)
{
    (void)state;
#define CPUQ(q)                                                                                    \
    "{\"achieved_rate\": 1, \"completed\": 1, \"host\": {\"cpu_latency_qos\": " q "},"             \
    " \"client_bias\": {\"workers\": [{\"rho\": 0.1, \"callbacks\": 1,"                            \
    " \"mean_service_us\": 10, \"events\": 1, \"event_rate_per_s\": 1}]}}"
    static const char *const texts[] = {
        CPUQ("{\"asked_us\": 0, \"held_workers\": 2, \"workers\": 2, \"limit_us\": 0}"),
        CPUQ("{\"asked_us\": 20, \"held_workers\": 2, \"workers\": 2, \"limit_us\": 20}"),
        CPUQ("{\"asked_us\": 0, \"held_workers\": 1, \"workers\": 2, \"limit_us\": 0}"),
        CPUQ("{\"asked_us\": null, \"held_workers\": 0, \"workers\": 2, \"limit_us\": null}"),
        "{\"achieved_rate\": 1, \"completed\": 1, \"client_bias\": {\"workers\": [{\"rho\": "
        "0.1, \"callbacks\": 1, \"mean_service_us\": 10, \"events\": 1, \"event_rate_per_s\": "
        "1}]}}",
    };
#undef CPUQ
    cal_step s[5];
    char err[256];
    for (int i = 0; i < 5; i++)
        assert_int_equal(cal_step_parse(texts[i], strlen(texts[i]), &s[i], err, sizeof err), 0);
    NEAR(s[0].cpu_latency_us, 0);
    NEAR(s[1].cpu_latency_us, 20);
    assert_true(isnan(s[2].cpu_latency_us)); /* one of two held it */
    assert_true(isnan(s[3].cpu_latency_us)); /* not asked */
    assert_true(isnan(s[4].cpu_latency_us)); /* an older loadgen's result */
    NEAR(cal_step_cpu_latency(s, 2), 20);
    NEAR(cal_step_cpu_latency(s, 1), 0);
    assert_true(isnan(cal_step_cpu_latency(s, 3)));
    assert_true(isnan(cal_step_cpu_latency(s + 2, 1)));
    assert_true(isnan(cal_step_cpu_latency(s, 0)));
}

/* With kernel receive times the result has client_bias.client_delay_us, the
 * client's own delay per token, and the step reads it in preference to the
 * stamp-based overhead. */
static void test_prefers_client_delay(void **state)
{
    (void)state;
    char json[4096];
    const char *at = strstr(two_workers, "\"overhead_per_token_us\"");
    assert_non_null(at);
    snprintf(json, sizeof json,
             "%.*s\"client_delay_us\": {\"mean\": 7.5, \"p50\": 5, \"p99\": 40, \"max\": 90, "
             "\"n\": 3000}, \"receive_clock\": \"kernel\", %s",
             (int)(at - two_workers), two_workers, at);
    cal_step s;
    char err[256];
    s.workers = 2;
    assert_int_equal(cal_step_parse(json, strlen(json), &s, err, sizeof err), 0);
    NEAR(s.overhead_mean_us, 7.5);
    NEAR(s.overhead_median_us, 5);
    NEAR(s.overhead_p99_us, 40);
    assert_string_equal(s.delay_source, "client_delay_us");
    assert_string_equal(s.receive_clock, "kernel");
    /* a null client_delay_us (no kernel times in this run): the fallback */
    snprintf(json, sizeof json, "%.*s\"client_delay_us\": {\"mean\": null}, %s",
             (int)(at - two_workers), two_workers, at);
    assert_int_equal(cal_step_parse(json, strlen(json), &s, err, sizeof err), 0);
    NEAR(s.overhead_mean_us, 61.5);
    assert_string_equal(s.delay_source, "overhead_per_token_us");
}

/* A batch of 10 s on 2 CPUs (20 CPU-s): the host busy 8 CPU-s, this run's
 * own processes 6 of them: busy 40%, other processes 10%. */
static void test_host_shares(void **state)
{
    (void)state;
    double busy, other;
    cal_step_host_shares(8e9, 20e9, 6.0, &busy, &other);
    assert_float_equal(busy, 0.40, 1e-12);
    assert_float_equal(other, 0.10, 1e-12);
    /* the run's own work is all the host did: no other share (never < 0) */
    cal_step_host_shares(8e9, 20e9, 8.5, &busy, &other);
    assert_float_equal(other, 0.0, 0.0);
    /* no time passed: unknown */
    cal_step_host_shares(0, 0, 0, &busy, &other);
    assert_true(isnan(busy) && isnan(other));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_derive),     cmocka_unit_test(test_host_shares),
        cmocka_unit_test(test_errors_name_the_key),  cmocka_unit_test(test_optional_figures),
        cmocka_unit_test(test_prefers_client_delay), cmocka_unit_test(test_idle_worker),
        cmocka_unit_test(test_cpu_latency),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
