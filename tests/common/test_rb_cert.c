/* Unit tests for rb_cert: the certificate's keys loadgen relies on, written
 * and read back equal (write -> read -> equal), figures not measured travel
 * as null, and the reader's refusals name the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_cert.h"

static char *write_text(const rb_cert *c)
{
    cJSON *root = cJSON_CreateObject();
    assert_non_null(rb_cert_put(root, c));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    assert_non_null(text);
    return text;
}

static void round_trip_is_equal(void **state)
{
    rb_cert_entry e[3] = {{1, 0.8125, 2216.2, 2216.2, 40.0625, 1},
                          {2, NAN, 1999.5, 3999, NAN, 1.25},
                          {4, 0.5, NAN, NAN, 12, NAN}};
    rb_cert c = {.version = RB_CERT_VERSION,
                 .cpu_model = "AMD EPYC \"quoted\" 7B13",
                 .cores_online = 2,
                 .cpu_latency_us = 0,
                 .budget_us = 100,
                 .per_k = e,
                 .n = 3,
                 .per_delivery_us = 3.25,
                 .per_event_us = 0.5,
                 .ref_events_per_request = 18,
                 .ref_output_len = 16,
                 .per_request_us = 40.5,
                 .per_plain_response_us = NAN,
                 .ref_callbacks_per_request = 18.5,
                 .plain_callbacks_per_request = 2,
                 .plain_events_per_request = 1.25};
    char *text = write_text(&c);
    rb_cert b;
    char err[256] = "";
    assert_int_equal(rb_cert_parse(text, strlen(text), &b, err, sizeof err), 0);
    assert_int_equal(b.version, c.version);
    assert_string_equal(b.cpu_model, c.cpu_model);
    assert_int_equal(b.cores_online, c.cores_online);
    assert_true(b.cpu_latency_recorded && b.cpu_latency_us == 0);
    assert_true(b.budget_us == c.budget_us);
    assert_true(b.per_delivery_us == c.per_delivery_us && b.per_event_us == c.per_event_us);
    assert_true(b.ref_events_per_request == c.ref_events_per_request);
    assert_true(b.ref_output_len == c.ref_output_len);
    assert_true(b.per_request_us == 40.5 && isnan(b.per_plain_response_us));
    assert_true(b.ref_callbacks_per_request == 18.5);
    assert_true(b.plain_callbacks_per_request == 2 && b.plain_events_per_request == 1.25);
    assert_int_equal(b.n, c.n);
    for (size_t i = 0; i < c.n; i++) {
        const rb_cert_entry *x = &c.per_k[i], *y = &b.per_k[i];
        assert_int_equal(y->workers, x->workers);
        /* equal, or both not measured (written as null, read as NAN) */
        assert_true(y->safe_rho == x->safe_rho || (isnan(x->safe_rho) && isnan(y->safe_rho)));
        assert_true(y->safe_rate_per_worker == x->safe_rate_per_worker ||
                    (isnan(x->safe_rate_per_worker) && isnan(y->safe_rate_per_worker)));
        assert_true(y->transport_us == x->transport_us ||
                    (isnan(x->transport_us) && isnan(y->transport_us)));
        assert_true(y->cost_scale == x->cost_scale ||
                    (isnan(x->cost_scale) && isnan(y->cost_scale)));
    }
    assert_true(b.per_k[0].safe_total_rate == 2216.2 && b.per_k[1].safe_total_rate == 3999);
    rb_cert_free(&b);
    assert_null(b.per_k);
    free(text);
}

static void put_adds_to_objects_root_has(void **state)
{
    rb_cert_entry e = {1, 0.5, 10, 10, 1, 1};
    rb_cert c = {.cpu_model = "cpu", .cores_online = 1, .budget_us = 50, .per_k = &e, .n = 1};
    cJSON *root = cJSON_Parse("{\"host\":{\"kernel\":\"Linux\"}}");
    cJSON *arr = rb_cert_put(root, &c);
    assert_int_equal(cJSON_GetArraySize(arr), 1);
    cJSON *host = cJSON_GetObjectItemCaseSensitive(root, "host");
    assert_int_equal(cJSON_GetArraySize(host), 4); /* kernel kept, three keys added */
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(host, "kernel")->valuestring, "Linux");
    cJSON_Delete(root);
}

/* host.cpu_latency_us: a number, null (written for NAN: not held in every
 * batch) and absent (an older certificate) read apart. */
static void cpu_latency_null_and_absent_read_apart(void **state)
{
    rb_cert_entry e = {1, 0.5, 10, 10, 1, 1};
    rb_cert c = {.version = RB_CERT_VERSION,
                 .cpu_model = "cpu",
                 .cores_online = 1,
                 .cpu_latency_us = NAN,
                 .budget_us = 50,
                 .per_k = &e,
                 .n = 1,
                 .per_delivery_us = NAN,
                 .per_event_us = NAN,
                 .ref_events_per_request = NAN,
                 .ref_output_len = NAN,
                 .per_request_us = NAN,
                 .per_plain_response_us = NAN,
                 .ref_callbacks_per_request = NAN,
                 .plain_callbacks_per_request = NAN,
                 .plain_events_per_request = NAN};
    char *text = write_text(&c);
    rb_cert b;
    char err[256] = "";
    if (rb_cert_parse(text, strlen(text), &b, err, sizeof err)) fail_msg("%s", err);
    assert_true(b.cpu_latency_recorded && isnan(b.cpu_latency_us));
    rb_cert_free(&b);
    /* the same certificate without the key */
    cJSON *root = cJSON_Parse(text);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItemCaseSensitive(root, "host"), "cpu_latency_us");
    char *older = cJSON_Print(root);
    cJSON_Delete(root);
    assert_int_equal(rb_cert_parse(older, strlen(older), &b, err, sizeof err), 0);
    free(older);
    assert_true(!b.cpu_latency_recorded && isnan(b.cpu_latency_us));
    rb_cert_free(&b);
    free(text);
}

static void refusals_name_the_key(void **state)
{
    static const struct {
        const char *text, *key;
    } bad[] = {
        {"[1]", "not a JSON object"},
        {"{\"rhobench_certificate\":3}", "format version 3"},
        {"{\"host\":{\"cores_online\":2},\"per_k\":[]}", "host.cpu_model"},
        {"{\"host\":{\"cpu_model\":\"x\",\"cores_online\":-1}}", "host.cores_online"},
        {"{\"host\":{\"cpu_model\":\"x\",\"cores_online\":2,\"cpu_latency_us\":-5}}",
         "host.cpu_latency_us"},
        {"{\"host\":{\"cpu_model\":\"x\",\"cores_online\":2},\"per_k\":[]}", "per_k"},
        {"{\"host\":{\"cpu_model\":\"x\",\"cores_online\":2},\"per_k\":[{\"workers\":0}]}",
         "per_k[0].workers"},
        {"{\"host\":{\"cpu_model\":\"x\",\"cores_online\":2},\"per_k\":[{\"workers\":1}]}",
         "per_k[0].safe_rate_per_worker"},
        {"{\"rhobench_certificate\":2,\"host\":{\"cpu_model\":\"x\",\"cores_online\":2},"
         "\"per_k\":[{\"workers\":1}]}",
         "per_k[0].safe_rho"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rb_cert c;
        char err[256] = "";
        assert_int_equal(rb_cert_parse(bad[i].text, strlen(bad[i].text), &c, err, sizeof err),
                         -EINVAL);
        if (!strstr(err, bad[i].key)) fail_msg("%s: got \"%s\"", bad[i].text, err);
        assert_null(c.per_k);
    }
}

/* A version 2 certificate: V2(TOP_KEYS, ENTRY_KEYS); SR a valid safe_rho. */
#define V2_HEAD "{\"rhobench_certificate\":2,\"host\":{\"cpu_model\":\"x\",\"cores_online\":2}"
#define V2_COST ",\"cost_model\":{\"per_delivery_us\":12.5,\"per_event_us\":1.5}"
#define V2(top, entry) V2_HEAD top ",\"per_k\":[{\"workers\":2" entry "}]}"
#define SR ",\"safe_rho\":0.3"

static void forged_figures_are_refused_naming_the_key(void **state)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {V2(V2_COST, ",\"safe_rho\":1.5"), "per_k[0].safe_rho: must be in (0, 1], got 1.5"},
        {V2(V2_COST, ",\"safe_rho\":1e9"), "per_k[0].safe_rho: must be in (0, 1], got 1e+09"},
        {V2(V2_COST, ",\"safe_rho\":1e999"), "per_k[0].safe_rho: must be in (0, 1], got inf"},
        {V2(V2_COST, ",\"safe_rho\":0"), "per_k[0].safe_rho: must be in (0, 1], got 0"},
        {V2(V2_COST, ",\"safe_rho\":-0.2"), "per_k[0].safe_rho"},
        {V2(",\"cost_model\":{\"per_delivery_us\":12.5,\"per_event_us\":-4}", SR),
         "cost_model.per_event_us: must be finite and >= 0, got -4"},
        {V2(",\"cost_model\":{\"per_delivery_us\":1e999,\"per_event_us\":1}", SR),
         "cost_model.per_delivery_us: must be finite and >= 0, got inf"},
        {V2(",\"cost_model\":{\"per_delivery_us\":0,\"per_event_us\":0}", SR),
         "cost_model: per_delivery_us and per_event_us are both 0"},
        {V2(V2_COST ",\"budget_us\":1e300", SR), "budget_us: must be in (0, 1e+09], got 1e+300"},
        {V2(V2_COST ",\"budget_us\":0", SR), "budget_us: must be in (0, 1e+09], got 0"},
        {V2(V2_COST ",\"budget_us\":-100", SR), "budget_us"},
        {V2(V2_COST ",\"budget_us\":\"100\"", SR), "budget_us: must be in (0, 1e+09], got not"},
        {V2(V2_COST, SR ",\"r_us\":-12"), "per_k[0].r_us: must be finite and >= 0, got -12"},
        {V2(V2_COST, SR ",\"second_moment_us2\":-800"), "per_k[0].second_moment_us2"},
        {V2(V2_COST, SR ",\"mean_service_us\":1e999"), "per_k[0].mean_service_us"},
        {V2(V2_COST, SR ",\"transport_us\":1e999"), "per_k[0].transport_us"},
        {V2(V2_COST, SR ",\"safe_total_rate\":-1"), "per_k[0].safe_total_rate"},
        {V2(V2_COST ",\"reference_workload\":{\"events_per_request\":0}", SR),
         "reference_workload.events_per_request"},
        {V2(",\"cost_model\":{\"per_delivery_us\":1,\"per_event_us\":1,\"per_request_us\":-2}", SR),
         "cost_model.per_request_us: must be finite and >= 0, got -2"},
        {V2(",\"cost_model\":{\"per_delivery_us\":1,\"per_event_us\":1,"
            "\"per_plain_response_us\":1e999}",
            SR),
         "cost_model.per_plain_response_us"},
        {V2(V2_COST ",\"reference_workload\":{\"callbacks_per_request\":0}", SR),
         "reference_workload.callbacks_per_request"},
        {V2(V2_COST ",\"reference_workload\":{\"plain_callbacks_per_request\":-1}", SR),
         "reference_workload.plain_callbacks_per_request"},
        {V2(V2_COST ",\"reference_workload\":{\"plain_events_per_request\":0}", SR),
         "reference_workload.plain_events_per_request"},
        {V2(V2_COST, SR ",\"cost_scale\":0"), "per_k[0].cost_scale: must be finite and > 0, got 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rb_cert c;
        char err[256] = "";
        if (rb_cert_parse(bad[i].text, strlen(bad[i].text), &c, err, sizeof err) != -EINVAL)
            fail_msg("accepted: %s", bad[i].text);
        if (!strstr(err, bad[i].want)) fail_msg("%s: got \"%s\"", bad[i].text, err);
        assert_null(c.per_k);
    }
    /* the edges that stay valid: safe_rho 1 and null, a negative fitted
     * constant, one cost 0, the largest budget */
    static const char *const good[] = {
        V2(V2_COST, ",\"safe_rho\":1"),
        V2(V2_COST, ",\"safe_rho\":null"),
        V2(V2_COST, SR ",\"transport_us\":-3,\"r_us\":null"),
        V2(",\"cost_model\":{\"per_delivery_us\":0,\"per_event_us\":2}", SR),
        V2(V2_COST ",\"budget_us\":1e9", SR),
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        rb_cert c;
        char err[256] = "";
        if (rb_cert_parse(good[i], strlen(good[i]), &c, err, sizeof err) != 0)
            fail_msg("refused: %s: %s", good[i], err);
        rb_cert_free(&c);
    }
}

/* The entry cap: exactly RB_CERT_MAX_ENTRIES are read, one more is refused. */
static void the_entries_are_capped(void **state)
{
    size_t cap = (size_t)RB_CERT_MAX_ENTRIES + 2, per = 40;
    char *t = malloc(cap * per + 256);
    assert_non_null(t);
    for (int extra = 0; extra <= 1; extra++) {
        size_t n = (size_t)RB_CERT_MAX_ENTRIES + (size_t)extra;
        size_t len = (size_t)sprintf(t, V2_HEAD V2_COST ",\"per_k\":[");
        for (size_t i = 0; i < n; i++)
            len += (size_t)sprintf(t + len, "%s{\"workers\":%zu,\"safe_rho\":0.5}", i ? "," : "",
                                   i + 1);
        len += (size_t)sprintf(t + len, "]}");
        rb_cert c;
        char err[256] = "";
        int rc = rb_cert_parse(t, len, &c, err, sizeof err);
        if (!extra) {
            assert_int_equal(rc, 0);
            assert_int_equal(c.n, n);
            assert_int_equal(c.per_k[n - 1].workers, (int)n);
            rb_cert_free(&c);
        } else {
            assert_int_equal(rc, -EINVAL);
            assert_non_null(strstr(err, "per_k: more than 100000 entries"));
        }
    }
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_is_equal),
        cmocka_unit_test(put_adds_to_objects_root_has),
        cmocka_unit_test(refusals_name_the_key),
        cmocka_unit_test(cpu_latency_null_and_absent_read_apart),
        cmocka_unit_test(forged_figures_are_refused_naming_the_key),
        cmocka_unit_test(the_entries_are_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
