/* Tests of lg_cert: parsing calibrate's certificate and the refuse/accept
 * rule (per-process planned rate against the certified one for this k, or
 * the closest k; another host is only a warning). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lg_cert.h"

static const char *CERT =
    "{\"host\":{\"cpu_model\":\"Test CPU\",\"cores_online\":2,\"kernel\":\"Linux\"},"
    "\"budget_us\":50,"
    "\"per_k\":[{\"workers\":1,\"safe_rho\":0.3,\"safe_rate_per_worker\":1000,\"safe_total_rate\":"
    "1000,\"transport_us\":21.5},"
    "{\"workers\":2,\"safe_rho\":0.25,\"safe_rate_per_worker\":800,\"safe_total_rate\":1600}]}";

static rb_host host(const char *cpu, int cores)
{
    rb_host h = {0};
    strcpy(h.cpu_model, cpu);
    h.cores_online = cores;
    return h;
}

static void test_parse(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    assert_string_equal(c.cpu_model, "Test CPU");
    assert_int_equal(c.cores_online, 2);
    assert_true(c.budget_us == 50);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.per_k[1].workers, 2);
    assert_true(c.per_k[1].safe_rate_per_worker == 800);
    assert_true(c.per_k[1].safe_rho == 0.25);
    /* the transport term feeds the verdict; an entry without it has NAN */
    assert_true(c.per_k[0].transport_us == 21.5);
    assert_true(isnan(c.per_k[1].transport_us));
    lg_cert_free(&c);
}

static void test_parse_errors_name_the_key(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    const char *no_host = "{\"per_k\":[]}";
    assert_int_equal(lg_cert_parse(no_host, strlen(no_host), &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "host.cpu_model"));
    const char *no_rate = "{\"host\":{\"cpu_model\":\"x\",\"cores_online\":2},"
                          "\"per_k\":[{\"workers\":1,\"safe_rho\":0.3}]}";
    assert_int_equal(lg_cert_parse(no_rate, strlen(no_rate), &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "per_k[0].safe_rate_per_worker"));
    assert_int_equal(lg_cert_parse("nope", 4, &c, err, sizeof err), -EINVAL);
}

static void test_rule(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    rb_host h = host("Test CPU", 2);
    lg_cert_decision d;
    /* 1500/s over 2 workers = 750 per worker <= 800: accepted */
    lg_cert_check(&c, &h, 2, 1500, &d);
    assert_true(d.ok);
    assert_true(d.exact_k);
    assert_false(d.other_host);
    assert_string_equal(d.warning, "");
    /* 1700/s over 2 = 850 > 800: refused, and the message gives the numbers */
    lg_cert_check(&c, &h, 2, 1700, &d);
    assert_false(d.ok);
    assert_non_null(strstr(d.message, "850.0"));
    assert_non_null(strstr(d.message, "800.0"));
    /* the boundary is accepted */
    lg_cert_check(&c, &h, 2, 1600, &d);
    assert_true(d.ok);
    /* no entry for k=4: the closest (2) is used, and said */
    lg_cert_check(&c, &h, 4, 3000, &d);
    assert_true(d.ok); /* 750 per worker */
    assert_false(d.exact_k);
    assert_int_equal(d.entry->workers, 2);
    assert_non_null(strstr(d.warning, "closest"));
    /* an infinite rate is beyond any certificate */
    lg_cert_check(&c, &h, 1, INFINITY, &d);
    assert_false(d.ok);
    /* closed loop: nothing to compare, accepted */
    lg_cert_check(&c, &h, 1, NAN, &d);
    assert_true(d.ok);
    /* another host: a warning, the rule still applies */
    rb_host other = host("Other CPU", 8);
    lg_cert_check(&c, &other, 1, 900, &d);
    assert_true(d.ok);
    assert_true(d.other_host);
    assert_non_null(strstr(d.warning, "another host"));
    lg_cert_free(&c);
}

/* The run's --cpu-latency-us against the certificate's: a warning only when
 * the run holds idle CPUs to less than the certificate measured with. */
static void test_cpu_latency_note(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    lg_cert_decision d = {0};
    /* not recorded (an older certificate): nothing */
    lg_cert_note_cpu_latency(&c, -1, &d);
    assert_string_equal(d.warning, "");
    c.cpu_latency_recorded = 1;
    c.cpu_latency_us = 0;
    lg_cert_note_cpu_latency(&c, 0, &d);
    assert_string_equal(d.warning, "");
    lg_cert_note_cpu_latency(&c, -1, &d);
    assert_non_null(strstr(d.warning, "within 0 us; this run holds none (--cpu-latency-us off)"));
    memset(&d, 0, sizeof d);
    lg_cert_note_cpu_latency(&c, 50, &d);
    assert_non_null(strstr(d.warning, "this run asks 50 us"));
    /* appended to a warning already there */
    snprintf(d.warning, sizeof d.warning, "closest k");
    lg_cert_note_cpu_latency(&c, 50, &d);
    assert_int_equal(strncmp(d.warning, "closest k; the certificate", 26), 0);
    /* the certificate held none: a run that holds one is not slower */
    memset(&d, 0, sizeof d);
    c.cpu_latency_us = NAN;
    lg_cert_note_cpu_latency(&c, 0, &d);
    lg_cert_note_cpu_latency(&c, -1, &d);
    assert_string_equal(d.warning, "");
    c.cpu_latency_us = 100;
    lg_cert_note_cpu_latency(&c, 20, &d);
    assert_string_equal(d.warning, "");
    lg_cert_free(&c);
}

/* A streamed workload of t tokens, e events per delivery. */
#define W(t, e) (&(lg_cert_workload){.output_tokens = (t), .events_per_delivery = (e)})

/* A version 2 certificate: safe_rho per k, the cost model (6 us per
 * delivery, 2 us per event) and the reference workload (16 tokens, 18 events
 * per request). */
static const char *CERT2 =
    "{\"rhobench_certificate\":2,\"host\":{\"cpu_model\":\"Test CPU\",\"cores_online\":2},"
    "\"budget_us\":100,"
    "\"cost_model\":{\"per_delivery_us\":6,\"per_event_us\":2},"
    "\"reference_workload\":{\"random_output_len\":16,\"events_per_request\":18},"
    "\"per_k\":[{\"workers\":1,\"safe_rho\":0.4,\"safe_rate_per_worker\":2500,"
    "\"safe_total_rate\":2500,\"transport_us\":30},"
    "{\"workers\":2,\"safe_rho\":0.2,\"safe_rate_per_worker\":null,\"safe_total_rate\":null}]}";

static void test_parse_v2(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT2, strlen(CERT2), &c, err, sizeof err), 0);
    assert_int_equal(c.version, 2);
    assert_true(c.per_delivery_us == 6 && c.per_event_us == 2);
    assert_true(c.ref_events_per_request == 18 && c.ref_output_len == 16);
    assert_int_equal(c.n, 2);
    assert_true(c.per_k[1].safe_rho == 0.2);
    assert_true(isnan(c.per_k[1].safe_rate_per_worker));
    lg_cert_free(&c);
    /* the first format has no version key and reads as version 1 */
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    assert_int_equal(c.version, 1);
    assert_true(isnan(c.per_delivery_us));
    lg_cert_free(&c);
    /* a version this loadgen does not know: refused, naming it */
    const char *v9 = "{\"rhobench_certificate\":9,\"host\":{\"cpu_model\":\"x\","
                     "\"cores_online\":2},\"per_k\":[{\"workers\":1,\"safe_rho\":0.3}]}";
    assert_int_equal(lg_cert_parse(v9, strlen(v9), &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "format version 9 is not one this loadgen reads (1 or 2)"));
    /* version 2 without safe_rho */
    const char *no_rho = "{\"rhobench_certificate\":2,\"host\":{\"cpu_model\":\"x\","
                         "\"cores_online\":2},\"per_k\":[{\"workers\":1}]}";
    assert_int_equal(lg_cert_parse(no_rho, strlen(no_rho), &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "per_k[0].safe_rho"));
}

/* rho = rate / k x (events / per-delivery x 6 + events x 2) us, events =
 * tokens + 2 (the reference workload's 18 - 16) */
static void test_predict_rho(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT2, strlen(CERT2), &c, err, sizeof err), 0);
    /* the reference workload: 18 events, one per delivery: 18 x 8 = 144 us
     * a request; 1000/s on one worker is rho 0.144 */
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, W(16, 1)) - 0.144) < 1e-12);
    /* twice the tokens: 34 events, 272 us: rho 0.272 */
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, W(32, 1)) - 0.272) < 1e-12);
    /* the same load over two workers: half each */
    assert_true(fabs(lg_cert_predict_rho(&c, 2, 1000, W(32, 1)) - 0.136) < 1e-12);
    /* unpaced tokens, ~9 events a delivery: 18 / 9 x 6 + 18 x 2 = 48 us */
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, W(16, 9)) - 0.048) < 1e-12);
    /* unknowns */
    assert_true(isnan(lg_cert_predict_rho(&c, 1, 1000, W(NAN, 1))));
    assert_true(isnan(lg_cert_predict_rho(&c, 1, INFINITY, W(16, 1))));
    assert_true(isnan(lg_cert_predict_rho(&c, 1, 1000, W(16, 0.5))));
    lg_cert_free(&c);
    /* no cost model (version 1): no prediction */
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    assert_true(isnan(lg_cert_predict_rho(&c, 1, 1000, W(16, 1))));
    lg_cert_free(&c);
}

/* A plain plan's decision: its message says non-streamed and the terms. */
static void lg_rule_plain(const lg_cert *c, const lg_cert_workload *w)
{
    rb_host h = host("Test CPU", 2);
    lg_cert_decision d;
    lg_cert_check_plan(c, &h, 2, 4000, w, &d); /* 2000/s each x 94 us x 1.25 = 0.235 > 0.2 */
    assert_false(d.ok);
    assert_true(fabs(d.predicted_rho - 0.235) < 1e-12);
    assert_non_null(strstr(d.message, "(non-streamed)"));
    assert_non_null(strstr(d.message, "50.00 us per request"));
    assert_non_null(strstr(d.message, "x1.25 for 2 workers"));
}

/* The terms an older certificate lacks: 50 us per request, 30 us per
 * non-streamed response on top, the reference's 19 read callbacks for its
 * 18 events (one beyond them: the headers), a non-streamed response's 2
 * callbacks and 1 event, and k=2 workers 1.25 times as busy each. */
static const char *CERT3 =
    "{\"rhobench_certificate\":2,\"host\":{\"cpu_model\":\"Test CPU\",\"cores_online\":2},"
    "\"cost_model\":{\"per_delivery_us\":6,\"per_event_us\":2,\"per_request_us\":50,"
    "\"per_plain_response_us\":30},"
    "\"reference_workload\":{\"random_output_len\":16,\"events_per_request\":18,"
    "\"callbacks_per_request\":%g,\"plain_callbacks_per_request\":2,"
    "\"plain_events_per_request\":1},"
    "\"per_k\":[{\"workers\":1,\"safe_rho\":0.4,\"cost_scale\":1},"
    "{\"workers\":2,\"safe_rho\":0.2,\"cost_scale\":1.25}]}";

static void test_predict_rho_terms(void **state)
{
    (void)state;
    lg_cert c;
    char err[256], text[1024];
    snprintf(text, sizeof text, CERT3, 19.0);
    assert_int_equal(lg_cert_parse(text, strlen(text), &c, err, sizeof err), 0);
    /* 16 tokens: 18 events in 19 deliveries: 50 + 19 x 6 + 18 x 2 = 200 us */
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, W(16, 1)) - 0.2) < 1e-12);
    /* k=2: 500/s each, 1.25 times as busy: 0.125 */
    assert_true(fabs(lg_cert_predict_rho(&c, 2, 1000, W(16, 1)) - 0.125) < 1e-12);
    /* k=3 has no entry: the closest (2) lends its scale */
    assert_true(fabs(lg_cert_predict_rho(&c, 3, 1000, W(16, 1)) - 1000.0 / 3 * 250e-6) < 1e-12);
    /* not streamed: 50 + 30 + 2 x 6 + 1 x 2 = 94 us, whatever the tokens */
    lg_cert_workload plain = {.output_tokens = 512, .events_per_delivery = 1, .plain = 1};
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, &plain) - 0.094) < 1e-12);
    plain.output_tokens = NAN;
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, &plain) - 0.094) < 1e-12);
    lg_rule_plain(&c, &plain);
    lg_cert_free(&c);
    /* the reference's last events shared a read (17 callbacks for 18
     * events): 17 deliveries, 50 + 102 + 36 = 188 us */
    snprintf(text, sizeof text, CERT3, 17.0);
    assert_int_equal(lg_cert_parse(text, strlen(text), &c, err, sizeof err), 0);
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, W(16, 1)) - 0.188) < 1e-12);
    lg_cert_free(&c);
    /* never fewer than one delivery: 1 token, 3 events, 10 callbacks in the
     * reference (8 fewer than its events): 50 + 1 x 6 + 3 x 2 = 62 us */
    snprintf(text, sizeof text, CERT3, 10.0);
    assert_int_equal(lg_cert_parse(text, strlen(text), &c, err, sizeof err), 0);
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, W(1, 1)) - 0.062) < 1e-12);
    lg_cert_free(&c);
    /* an older certificate (no plain references): a plain plan is priced
     * as streamed, as before: 18 x 8 = 144 us */
    assert_int_equal(lg_cert_parse(CERT2, strlen(CERT2), &c, err, sizeof err), 0);
    plain.output_tokens = 16;
    assert_true(fabs(lg_cert_predict_rho(&c, 1, 1000, &plain) - 0.144) < 1e-12);
    lg_cert_free(&c);
}

/* The plan's predicted rho against safe_rho, with the numbers in the message. */
static void test_rule_v2(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT2, strlen(CERT2), &c, err, sizeof err), 0);
    rb_host h = host("Test CPU", 2);
    lg_cert_decision d;
    /* 2000/s of 16 tokens on one worker: rho 0.288 <= 0.4 */
    lg_cert_check_plan(&c, &h, 1, 2000, W(16, 1), &d);
    assert_true(d.ok);
    assert_true(fabs(d.predicted_rho - 0.288) < 1e-12);
    /* the same rate with 32 tokens: 0.544 > 0.4, refused, and said with numbers */
    lg_cert_check_plan(&c, &h, 1, 2000, W(32, 1), &d);
    assert_false(d.ok);
    assert_non_null(strstr(d.message, "rho 0.544"));
    assert_non_null(strstr(d.message, "safe rho 0.400"));
    /* the boundary: rho exactly 0.4 (2777.78/s of 16 tokens: the double
     * whose prediction is 0.4 to the last bit) is accepted */
    lg_cert_check_plan(&c, &h, 1, 2777.7777777777783, W(16, 1), &d);
    assert_true(d.predicted_rho == 0.4);
    assert_true(d.ok);
    /* tokens not known (a trace): the reference workload's rate decides */
    lg_cert_check_plan(&c, &h, 1, 2000, W(NAN, 1), &d);
    assert_true(d.ok && isnan(d.predicted_rho)); /* 2000 <= 2500 */
    lg_cert_check_plan(&c, &h, 1, 3000, W(NAN, 1), &d);
    assert_false(d.ok);
    /* ... and for k=2 it has none: refused, saying why */
    lg_cert_check_plan(&c, &h, 2, 100, W(NAN, 1), &d);
    assert_false(d.ok);
    assert_non_null(strstr(d.message, "no cost model"));
    /* closed loop: nothing to compare, and the message names safe_rho */
    lg_cert_check_plan(&c, &h, 2, NAN, W(16, 1), &d);
    assert_true(d.ok);
    assert_non_null(strstr(d.message, "certified safe rho 0.200"));
    /* k=2 by prediction: 1000/s of 16 tokens = 0.072 per worker <= 0.2 */
    lg_cert_check_plan(&c, &h, 2, 1000, W(16, 1), &d);
    assert_true(d.ok);
    lg_cert_free(&c);
    /* a version 1 certificate keeps its request-rate rule */
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    lg_cert_check_plan(&c, &h, 2, 1700, W(16, 1), &d);
    assert_false(d.ok);
    assert_non_null(strstr(d.message, "850.0"));
    lg_cert_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),    cmocka_unit_test(test_parse_errors_name_the_key),
        cmocka_unit_test(test_rule),     cmocka_unit_test(test_cpu_latency_note),
        cmocka_unit_test(test_parse_v2), cmocka_unit_test(test_predict_rho),
        cmocka_unit_test(test_rule_v2),  cmocka_unit_test(test_predict_rho_terms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
