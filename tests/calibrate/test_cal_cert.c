/* Unit tests of cal_cert: a certificate written and read back gives the same
 * figures; the keys loadgen relies on are present and required; not-measured
 * figures travel as null. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "cal_cert.h"

static void fill(cal_cert_info *info, cal_per_k pk[2], cal_step *st)
{
    memset(info, 0, sizeof *info);
    snprintf(info->created, sizeof info->created, "2026-01-02T03:04:05Z");
    snprintf(info->host.cpu_model, sizeof info->host.cpu_model, "Test CPU \"quoted\" 9000");
    info->host.cores_online = 2;
    snprintf(info->host.kernel, sizeof info->host.kernel, "Linux 6.1");
    snprintf(info->host.hostname, sizeof info->host.hostname, "box");
    snprintf(info->version_rhobench, sizeof info->version_rhobench, "0.1.0");
    snprintf(info->version_libcurl, sizeof info->version_libcurl, "7.88.1");
    snprintf(info->version_libuv, sizeof info->version_libuv, "1.44.2");
    info->budget_us = 100;
    snprintf(info->model, sizeof info->model, "M/G/1 (Pollaczek-Khinchine)");
    snprintf(info->mode, sizeof info->mode, "quick");
    info->self_test = 1;
    snprintf(info->client_cost, sizeof info->client_cost, "fixed:200");
    info->server_itl_us = 4000;
    info->input_len = info->output_len = 16;
    info->step_duration_s = 1.5;
    info->loadavg_start = 0.25;
    info->loadavg_end = 1.5;
    info->cost.per_delivery_us = 12.75;
    info->cost.per_event_us = 1.75;
    info->ref_events_per_request = 18.5;
    for (int i = 0; i < 2; i++) {
        cal_per_k *p = &pk[i];
        memset(p, 0, sizeof *p);
        p->workers = i + 1;
        snprintf(p->method, sizeof p->method, "fit");
        p->n_steps = 9;
        p->n_fit = 8;
        p->mean_service_us = 20.5 + i;
        p->mean_service_us_ci[0] = 19.25;
        p->mean_service_us_ci[1] = 21.75;
        p->second_moment_us2 = 812.125;
        p->second_moment_us2_ci[0] = 700;
        p->second_moment_us2_ci[1] = 900;
        p->transport_us = 40.0625;
        p->transport_us_ci[0] = 39;
        p->transport_us_ci[1] = 41;
        p->r2 = 0.9987;
        p->events_per_request = 18.5;
        p->safe_event_rate_per_worker = 41000;
        p->safe_rho = 0.8125;
        p->safe_rate_per_worker = 2216.2;
        p->safe_total_rate = (i + 1) * 2216.2;
        p->conservative_safe_total_rate = (i + 1) * 2000.5;
        p->max_measured_rate = 1500;
        p->model_safe_total_rate = 3000.25;
        snprintf(p->limited_by, sizeof p->limited_by, "measured range");
    }
    pk[1].r2 = NAN; /* not measured: null */
    /* k=1 certified at the crossing toward a level over budget, not repeated */
    pk[0].measured_rho = 0.75;
    pk[0].crossing_over_rho = 0.875;
    pk[0].crossing_rho = 0.84375;
    pk[0].crossing_rho_ci[0] = 0.8125;
    pk[0].crossing_rho_ci[1] = 0.859375;
    cal_step_clear(st);
    st->workers = 1;
    st->request_rate = st->achieved_rate = 100;
    st->overhead_mean_us = 41;
    /* k=1: two levels, the second measured twice and pooled */
    pk[0].n_levels = 2;
    memset(pk[0].levels, 0, 2 * sizeof pk[0].levels[0]);
    for (int j = 0; j < 2; j++) {
        pk[0].levels[j].level = j;
        pk[0].levels[j].n = 3 + 3 * j;
        pk[0].levels[j].request_rate = 100.0 * (j + 1);
        pk[0].level_pred_us[j] = 40;
    }
    pk[0].levels[1].repeated = pk[0].levels[1].confirmed = pk[0].levels[1].undecided = 1;
}

static void test_round_trip(void **state)
{
    (void)state;
    cal_cert_info info, back;
    cal_per_k pk[2], pb[4];
    cal_step st;
    fill(&info, pk, &st);
    char *text = cal_cert_to_json(&info, pk, 2, &st, 1);
    assert_non_null(text);
    int n = 0;
    char err[256];
    int prc = cal_cert_parse(text, strlen(text), &back, pb, 4, &n, err, sizeof err);
    if (prc) fail_msg("%s", err);
    assert_int_equal(n, 2);
    assert_string_equal(back.created, info.created);
    assert_string_equal(back.host.cpu_model, info.host.cpu_model);
    assert_int_equal(back.host.cores_online, 2);
    assert_string_equal(back.host.kernel, "Linux 6.1");
    assert_string_equal(back.host.hostname, "box");
    assert_string_equal(back.version_libcurl, "7.88.1");
    assert_string_equal(back.version_libuv, "1.44.2");
    assert_string_equal(back.version_rhobench, "0.1.0");
    assert_string_equal(back.model, info.model);
    assert_string_equal(back.mode, "quick");
    assert_true(back.self_test);
    assert_string_equal(back.client_cost, "fixed:200");
    assert_true(back.budget_us == 100);
    assert_true(back.server_itl_us == 4000);
    assert_true(back.loadavg_start == 0.25 && back.loadavg_end == 1.5);
    assert_int_equal(back.output_len, 16);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pb[i].workers, pk[i].workers);
        assert_string_equal(pb[i].method, "fit");
        assert_int_equal(pb[i].n_fit, 8);
        assert_true(pb[i].mean_service_us == pk[i].mean_service_us);
        assert_true(pb[i].mean_service_us_ci[0] == 19.25 && pb[i].mean_service_us_ci[1] == 21.75);
        assert_true(pb[i].second_moment_us2 == 812.125);
        assert_true(pb[i].second_moment_us2_ci[1] == 900);
        assert_true(pb[i].transport_us == 40.0625);
        assert_true(pb[i].safe_rho == 0.8125);
        assert_true(fabs(pb[i].safe_rate_per_worker - 2216.2) < 1e-9);
        assert_true(fabs(pb[i].safe_total_rate - pk[i].safe_total_rate) < 1e-9);
        assert_true(fabs(pb[i].conservative_safe_total_rate - pk[i].conservative_safe_total_rate) <
                    1e-9);
        assert_true(pb[i].events_per_request == 18.5);
        assert_true(pb[i].model_safe_total_rate == 3000.25);
        assert_string_equal(pb[i].limited_by, "measured range");
    }
    assert_true(fabs(pb[0].r2 - 0.9987) < 1e-12);
    /* the crossing and its interval, for k=1 only */
    assert_true(pb[0].crossing_over_rho == 0.875 && pb[0].crossing_rho == 0.84375);
    assert_true(pb[0].crossing_rho_ci[0] == 0.8125 && pb[0].crossing_rho_ci[1] == 0.859375);
    assert_false(pb[0].crossing_over_confirmed);
    assert_true(isnan(pb[1].crossing_over_rho) && isnan(pb[1].crossing_rho));
    assert_true(isnan(pb[1].r2));

    /* the table and the keys loadgen reads, by their exact names */
    cJSON *root = cJSON_Parse(text);
    assert_non_null(cJSON_GetObjectItemCaseSensitive(root, "table"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "table")), 1);
    cJSON *p1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "per_k"), 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(p1, "r2")));
    assert_null(cJSON_GetObjectItemCaseSensitive(p1, "crossing"));
    cJSON *x0 = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "per_k"), 0), "crossing");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(x0, "over_confirmed")));
    assert_true(cJSON_GetObjectItemCaseSensitive(x0, "within_rho")->valuedouble == 0.75);
    /* each level says whether it was measured twice and pooled */
    cJSON *lv = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "per_k"), 0), "levels");
    assert_int_equal(cJSON_GetArraySize(lv), 2);
    assert_true(
        cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(lv, 0), "repeated")));
    assert_true(
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(lv, 1), "repeated")));
    assert_int_equal(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(lv, 1), "batches")->valueint, 6);
    /* and whether it was over budget only by its error bar (capping nothing) */
    assert_true(
        cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(lv, 0), "undecided")));
    assert_true(
        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(lv, 1), "undecided")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p1, "safe_rate_per_worker")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p1, "safe_total_rate")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(p1, "safe_rho")));
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(root, "rhobench_certificate")));
    cJSON_Delete(root);
    free(text);
}

/* What calibrate writes is what loadgen reads: the text through rb_cert_parse,
 * the reader loadgen --certificate uses (lg_cert_parse). */
static void test_loadgen_reads_what_calibrate_writes(void **state)
{
    cal_cert_info info;
    cal_per_k pk[2];
    cal_step st;
    fill(&info, pk, &st);
    info.cost.per_delivery_us = 3.5;
    info.cost.per_event_us = 0.75;
    info.ref_events_per_request = 19;
    pk[1].safe_rho = NAN; /* nothing certified for 2 workers */
    char *text = cal_cert_to_json(&info, pk, 2, &st, 1);
    assert_non_null(text);
    rb_cert c;
    char err[256] = "";
    assert_int_equal(rb_cert_parse(text, strlen(text), &c, err, sizeof err), 0);
    assert_int_equal(c.version, RB_CERT_VERSION);
    assert_string_equal(c.cpu_model, info.host.cpu_model);
    assert_int_equal(c.cores_online, info.host.cores_online);
    assert_true(c.budget_us == info.budget_us);
    assert_true(c.per_delivery_us == 3.5 && c.per_event_us == 0.75);
    assert_true(c.ref_events_per_request == 19);
    assert_true(c.ref_output_len == info.output_len);
    assert_int_equal(c.n, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(c.per_k[i].workers, pk[i].workers);
        assert_true(c.per_k[i].safe_rate_per_worker == pk[i].safe_rate_per_worker);
        assert_true(c.per_k[i].safe_total_rate == pk[i].safe_total_rate);
        assert_true(c.per_k[i].transport_us == pk[i].transport_us);
    }
    assert_true(c.per_k[0].safe_rho == pk[0].safe_rho);
    assert_true(isnan(c.per_k[1].safe_rho)); /* written as null, read as not certified */
    rb_cert_free(&c);
    free(text);
}

static void test_required_keys(void **state)
{
    (void)state;
    cal_cert_info info;
    cal_per_k pk[2];
    int n;
    char err[256];
    const char *no_host = "{\"rhobench_certificate\": 1, \"budget_us\": 100, \"per_k\": []}";
    assert_int_equal(cal_cert_parse(no_host, strlen(no_host), &info, pk, 2, &n, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "host.cpu_model"));
    /* version 2: safe_rho is the certified figure (version 1 had none) */
    const char *no_rho = "{\"rhobench_certificate\": 2, \"budget_us\": 100, \"host\": "
                         "{\"cpu_model\": \"x\", \"cores_online\": 2}, \"per_k\": [{\"workers\": "
                         "1, \"safe_rate_per_worker\": 5, \"safe_total_rate\": 5}]}";
    assert_int_equal(cal_cert_parse(no_rho, strlen(no_rho), &info, pk, 2, &n, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "per_k[0].safe_rho"));
    const char *wrong = "{\"rhobench_certificate\": 3}";
    assert_int_equal(cal_cert_parse(wrong, strlen(wrong), &info, pk, 2, &n, err, sizeof err),
                     -EINVAL);
    assert_non_null(strstr(err, "rhobench_certificate"));
    assert_int_equal(cal_cert_parse("nope", 4, &info, pk, 2, &n, err, sizeof err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_loadgen_reads_what_calibrate_writes),
        cmocka_unit_test(test_required_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
