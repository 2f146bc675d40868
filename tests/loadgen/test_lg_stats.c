/* Tests of lg_stats and lg_report: k workers' blocks merged by addition give
 * exactly one worker's block over the same requests (and the same report);
 * goodput counts only requests within every SLO. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_report.h"
#include "lg_stats.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A deterministic stream of varied request outcomes. */
static lg_req_result synth(int i)
{
    int64_t t = 1000000000LL + (int64_t)i * 1000000LL;
    lg_req_result r = {.intended_ns = t, .dispatch_ns = t + (int64_t)(next() % 200000)};
    r.first_token_ns = r.dispatch_ns + 5000000 + (int64_t)(next() % 30000000);
    r.output_tokens = 1 + (int64_t)(next() % 64);
    r.end_ns = r.first_token_ns + r.output_tokens * (int64_t)(1000000 + next() % 4000000);
    r.input_tokens = 10 + (int64_t)(next() % 100);
    r.max_itl_ns = 2000000 + (int64_t)(next() % 9000000);
    switch (next() % 10) {
    case 0:
        r.cls = LG_FAIL_HTTP;
        r.http_status = 429;
        break;
    case 1:
        r.cls = LG_FAIL_MIDSTREAM;
        break;
    default:
        r.cls = LG_OK;
    }
    if (i % 3 == 0) {
        r.has_truth = 1;
        r.truth_queue_ns = 1000;
        r.truth_prefill_ns = 200000;
        r.truth_decode_ns = r.output_tokens * 900000;
    }
    return r;
}

static void record(lg_stage_stats *s, const lg_req_result *r, const lg_goodput *g)
{
    lg_stats_record_dispatch(s, r->intended_ns, r->dispatch_ns, 100000);
    if (r->first_token_ns && r->output_tokens > 1) {
        int64_t gap = (r->end_ns - r->first_token_ns) / (r->output_tokens - 1);
        lg_stats_record_itl(s, gap);
    }
    lg_stats_record_request(s, r, g);
}

static void assert_close(double a, double b)
{
    if (a == b || fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b))) return;
    fail_msg("%.17g != %.17g", a, b);
}

/* Every number of two JSON trees equal (within rounding of float sums). */
static void assert_json_equal(const cJSON *a, const cJSON *b)
{
    assert_int_equal(a->type, b->type);
    if (cJSON_IsNumber(a)) {
        assert_close(a->valuedouble, b->valuedouble);
        return;
    }
    if (cJSON_IsString(a)) {
        assert_string_equal(a->valuestring, b->valuestring);
        return;
    }
    assert_int_equal(cJSON_GetArraySize(a), cJSON_GetArraySize(b));
    const cJSON *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) {
        if (x->string) assert_string_equal(x->string, y->string);
        assert_json_equal(x, y);
    }
}

static void test_merge_of_workers_equals_one_worker(void **state)
{
    (void)state;
    lg_goodput g = {.enabled = 1};
    g.slo_ns[LG_M_TTFT] = 25000000;
    lg_stage_stats *one = lg_stats_new(), *w[3], *merged = lg_stats_new();
    for (int k = 0; k < 3; k++)
        w[k] = lg_stats_new();
    assert_non_null(one);
    for (int i = 0; i < 5000; i++) {
        lg_req_result r = synth(i);
        record(one, &r, &g);
        record(w[i % 3], &r, &g); /* round-robin, as the workers split arrivals */
    }
    for (int k = 0; k < 3; k++)
        lg_stats_merge(merged, w[k]);
    assert_int_equal(merged->dispatched, one->dispatched);
    assert_int_equal(merged->completed, one->completed);
    assert_int_equal(merged->failed, one->failed);
    assert_int_equal(merged->good, one->good);
    assert_int_equal(merged->fail_http[429], one->fail_http[429]);
    assert_int_equal(merged->fail_class[LG_FAIL_MIDSTREAM], one->fail_class[LG_FAIL_MIDSTREAM]);
    assert_int_equal(merged->output_tokens, one->output_tokens);
    assert_int_equal(merged->lag_over, one->lag_over);
    assert_int_equal(merged->first_dispatch_ns, one->first_dispatch_ns);
    assert_int_equal(merged->last_end_ns, one->last_end_ns);
    assert_true(one->completed > 3000 && one->failed > 500);
    for (int h = 0; h < LG_N_HISTS; h++) {
        const mdl_hist *a = lg_stats_hist_c(merged, h), *b = lg_stats_hist_c(one, h);
        assert_int_equal(a->total, b->total);
        assert_int_equal(a->min, b->min);
        assert_int_equal(a->max, b->max);
        assert_memory_equal(a->counts, b->counts, (size_t)a->n_buckets * sizeof(uint64_t));
    }
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.goodput = g;
    cJSON *ja = cJSON_CreateObject(), *jb = cJSON_CreateObject();
    lg_report_metrics(ja, merged, &o, 1000000000LL, 0, 1000.0);
    lg_report_metrics(jb, one, &o, 1000000000LL, 0, 1000.0);
    assert_json_equal(ja, jb);
    assert_non_null(cJSON_GetObjectItem(ja, "p99_ttft_ms"));
    assert_non_null(cJSON_GetObjectItem(ja, "median_ttft_dispatch_ms"));
    assert_non_null(cJSON_GetObjectItem(ja, "ntpot_breakdown_ms"));
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    free(one);
    free(merged);
    for (int k = 0; k < 3; k++)
        free(w[k]);
}

/* The one value a histogram holds (exact: min = max = it). */
static int64_t only(const lg_stage_stats *s, int id)
{
    const mdl_hist *h = lg_stats_hist_c(s, id);
    if (h->total != 1 || h->min != h->max)
        fail_msg("histogram %d: %llu values", id, (unsigned long long)h->total);
    return (int64_t)h->min;
}

/* One request with round figures: every latency lands in its histogram with
 * the value lg_stats.h defines (from the intended start and from the
 * dispatch), the lag in its own, and the truth sums per token. The merge test
 * cannot see such faults: both its sides are recorded by the same code. */
static void test_records_each_latency_exactly(void **state)
{
    (void)state;
    lg_stage_stats *s = lg_stats_new();
    lg_goodput g = {0};
    const int64_t t0 = 1000000000LL;
    lg_req_result r = {.intended_ns = t0,
                       .dispatch_ns = t0 + 2000000,           /* lag 2 ms */
                       .first_token_ns = t0 + 30000000,       /* TTFT 30 ms, 28 from dispatch */
                       .end_ns = t0 + 30000000 + 9 * 5000000, /* 10 tokens 5 ms apart */
                       .output_tokens = 10,
                       .input_tokens = 7,
                       .cls = LG_OK,
                       .has_truth = 1,
                       .truth_queue_ns = 1000000,
                       .truth_prefill_ns = 4000000,
                       .truth_decode_ns = 45000000};
    lg_stats_record_dispatch(s, r.intended_ns, r.dispatch_ns, 0);
    lg_stats_record_request(s, &r, &g);
    assert_int_equal(only(s, LG_H_LAG), 2000000);
    assert_int_equal(only(s, LG_H_TTFT_I), 30000000);
    assert_int_equal(only(s, LG_H_TTFT_D), 28000000);
    assert_int_equal(only(s, LG_H_E2EL_I), 75000000);
    assert_int_equal(only(s, LG_H_E2EL_D), 73000000);
    assert_int_equal(only(s, LG_H_TPOT_I), 5000000); /* (75 - 30) / 9 */
    assert_int_equal(only(s, LG_H_TPOT_D), 5000000);
    assert_int_equal(only(s, LG_H_NTPOT_I), 7500000); /* 75 / 10 */
    assert_int_equal(only(s, LG_H_NTPOT_D), 7300000);
    assert_int_equal(s->input_tokens, 7);
    assert_int_equal(s->output_tokens, 10);
    /* truth per token: queue 0.1, prefill 0.4, decode 4.5 ms; the client's
     * share is the rest of the 7.5 ms per token */
    assert_int_equal(s->truth_n, 1);
    assert_close(s->truth_queue_ns, 100000);
    assert_close(s->truth_prefill_ns, 400000);
    assert_close(s->truth_decode_ns, 4500000);
    assert_close(s->truth_client_ns, 7500000 - 100000 - 400000 - 4500000);
    assert_close(s->truth_ttft_ns, 5000000);
    assert_close(s->truth_measured_ttft_ns, 30000000);
    /* a dispatch ahead of its intended time is a lag of 0, not a negative
     * one folded up */
    lg_stats_record_dispatch(s, t0 + 100000000, t0 + 99000000, 0);
    assert_int_equal(lg_stats_hist_c(s, LG_H_LAG)->min, 0);
    free(s);
}

/* The wire clock's departure: the send delay from dispatch and the TTFT
 * from departure, only for a request whose departure was captured. */
static void test_departure(void **state)
{
    (void)state;
    lg_stage_stats *s = lg_stats_new();
    lg_goodput g = {0};
    const int64_t t0 = 1000000000LL;
    lg_req_result r = {.intended_ns = t0,
                       .dispatch_ns = t0 + 2000000,
                       .first_token_ns = t0 + 30000000,
                       .end_ns = t0 + 40000000,
                       .output_tokens = 3,
                       .cls = LG_OK,
                       .sent_wire_ns = t0 + 2150000, /* left 150 us after dispatch */
                       .sent_wire_last_ns = t0 + 2160000};
    lg_stats_record_request(s, &r, &g);
    assert_int_equal(only(s, LG_H_SEND_WIRE), 150000);
    assert_int_equal(only(s, LG_H_TTFT_W), 27850000);
    assert_int_equal(only(s, LG_H_TTFT_D), 28000000);
    r.sent_wire_ns = 0; /* not captured: neither */
    lg_stats_record_request(s, &r, &g);
    assert_int_equal(lg_stats_hist_c(s, LG_H_SEND_WIRE)->total, 1);
    assert_int_equal(lg_stats_hist_c(s, LG_H_TTFT_W)->total, 1);
    s->departures = 1;
    s->departure_fallbacks = 1;
    lg_stage_stats *m = lg_stats_new();
    lg_stats_merge(m, s);
    lg_stats_merge(m, s);
    assert_int_equal(m->departures, 2);
    assert_int_equal(m->departure_fallbacks, 2);
    assert_int_equal(lg_stats_hist_c(m, LG_H_SEND_WIRE)->total, 2);
    free(m);
    free(s);
}

static void test_zeroed_init_equals_full_init(void **state)
{
    (void)state;
    size_t n = lg_stats_block_bytes();
    lg_stage_stats *a = calloc(1, n), *b = malloc(n);
    assert_non_null(a);
    assert_non_null(b);
    memset(b, 0xAB, n);
    lg_stats_init(a, 1);
    lg_stats_init(b, 0);
    assert_memory_equal(a, b, n);
    free(a);
    free(b);
}

static void test_goodput(void **state)
{
    (void)state;
    lg_goodput g = {0};
    lg_req_result r = {.intended_ns = 0,
                       .dispatch_ns = 1000000,
                       .first_token_ns = 30000000,
                       .end_ns = 130000000,
                       .output_tokens = 11,
                       .max_itl_ns = 15000000,
                       .cls = LG_OK};
    assert_true(lg_goodput_ok(&g, &r)); /* no SLO: every success is good */
    r.cls = LG_FAIL_TIMEOUT;
    assert_false(lg_goodput_ok(&g, &r));
    r.cls = LG_OK;
    char err[128];
    /* TTFT 30 ms (from the intended start), TPOT 10 ms, NTPOT 130/11 ms, ITL max 15 ms */
    assert_int_equal(lg_goodput_parse_item(&g, "ttft:30", err, sizeof err), 0);
    assert_true(lg_goodput_ok(&g, &r));
    assert_int_equal(lg_goodput_parse_item(&g, "ttft:29.9", err, sizeof err), 0);
    assert_false(lg_goodput_ok(&g, &r));
    g = (lg_goodput){0};
    assert_int_equal(lg_goodput_parse_item(&g, "tpot:10", err, sizeof err), 0);
    assert_true(lg_goodput_ok(&g, &r));
    assert_int_equal(lg_goodput_parse_item(&g, "tpot:9.99", err, sizeof err), 0);
    assert_false(lg_goodput_ok(&g, &r));
    g = (lg_goodput){0};
    assert_int_equal(lg_goodput_parse_item(&g, "itl:14", err, sizeof err), 0);
    assert_false(lg_goodput_ok(&g, &r));
    g = (lg_goodput){0};
    assert_int_equal(lg_goodput_parse_item(&g, "ntpot:12", err, sizeof err), 0);
    assert_true(lg_goodput_ok(&g, &r));
    assert_int_equal(lg_goodput_parse_item(&g, "e2el:129", err, sizeof err), 0);
    assert_false(lg_goodput_ok(&g, &r));
    /* counted in the block */
    lg_stage_stats *s = lg_stats_new();
    g = (lg_goodput){0};
    lg_goodput_parse_item(&g, "ttft:30", err, sizeof err);
    lg_stats_record_dispatch(s, r.intended_ns, r.dispatch_ns, 0);
    lg_stats_record_request(s, &r, &g);
    r.first_token_ns = 31000000;
    lg_stats_record_dispatch(s, r.intended_ns, r.dispatch_ns, 0);
    lg_stats_record_request(s, &r, &g);
    assert_int_equal(s->completed, 2);
    assert_int_equal(s->good, 1);
    free(s);
}

static void test_percentile_key_words(void **state)
{
    (void)state;
    char b[32];
    lg_report_pword(99, b, sizeof b);
    assert_string_equal(b, "99");
    lg_report_pword(99.9, b, sizeof b);
    assert_string_equal(b, "99.9");
    lg_report_pword(50, b, sizeof b);
    assert_string_equal(b, "50");
}

/* Every failure lands in exactly one place: a class, or an HTTP code. Codes
 * 600-999 (curl takes any three digits) are kept by code; a code outside
 * the table goes to "other". The classes and codes sum to failed. */
static void test_failure_classes_sum_to_failed(void **state)
{
    (void)state;
    lg_stage_stats *s = lg_stats_new();
    assert_non_null(s);
    lg_goodput g = {0};
    const int codes[] = {429, 500, 600, 999, 1000, 0, -1};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        lg_req_result r = {.intended_ns = 1,
                           .dispatch_ns = 1,
                           .end_ns = 2,
                           .cls = LG_FAIL_HTTP,
                           .http_status = codes[i]};
        record(s, &r, &g);
    }
    lg_req_result big = {.intended_ns = 1, .dispatch_ns = 1, .end_ns = 2, .cls = LG_FAIL_TOO_LARGE};
    record(s, &big, &g);
    uint64_t sum = 0;
    for (int c = 1; c < LG_N_CLASSES; c++)
        if (c != LG_FAIL_HTTP) sum += s->fail_class[c];
    for (int code = 0; code < LG_HTTP_CODES; code++)
        sum += s->fail_http[code];
    assert_int_equal(s->failed, 8);
    assert_int_equal(sum, s->failed);
    assert_int_equal(s->fail_http[600], 1);
    assert_int_equal(s->fail_http[999], 1);
    assert_int_equal(s->fail_class[LG_FAIL_OTHER], 3); /* 1000, 0, -1 */
    assert_int_equal(s->fail_class[LG_FAIL_TOO_LARGE], 1);
    assert_string_equal(lg_class_names[LG_FAIL_TOO_LARGE], "body_too_large");
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_of_workers_equals_one_worker),
        cmocka_unit_test(test_records_each_latency_exactly),
        cmocka_unit_test(test_departure),
        cmocka_unit_test(test_zeroed_init_equals_full_init),
        cmocka_unit_test(test_goodput),
        cmocka_unit_test(test_percentile_key_words),
        cmocka_unit_test(test_failure_classes_sum_to_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
