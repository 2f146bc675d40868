/* Unit tests for lg_export: a small result JSON and its records (the
 * fixture below) converted into vLLM's result layout and Inference Perf's
 * lifecycle reports: the tools' key paths, units (ms -> s), the metadata at
 * vLLM's top level, rhobench's additions under "rhobench", per-request
 * arrays in index order, nulls where the files cannot tell, bad records
 * refused with their line; vLLM's itls from the records' token times
 * (--save-token-times), which stay each record's own across blocks and the
 * sort; the result's own arrays (a subset, in the records' file order). */
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
#include <unistd.h>

#include "lg_export.h"

/* A closed-loop run of 4 requests over one stage, one failed with 429. */
static const char *const result_txt =
    "{\"backend\":\"openai\",\"model_id\":\"m\",\"date\":\"20261201-000000\",\"num_prompts\":4,"
    "\"tokenizer_id\":\"tok\",\"endpoint\":\"/v1/chat/completions\",\"load_mode\":\"closed\","
    "\"num_workers\":1,\"burstiness\":null,\"max_concurrency\":2,\"duration\":2.0,"
    "\"completed\":3,\"failed\":1,\"dispatched\":4,\"total_input_tokens\":30,"
    "\"total_output_tokens\":12,\"request_rate\":\"inf\",\"request_throughput\":1.5,"
    "\"request_goodput\":0.5,\"output_throughput\":6,\"total_token_throughput\":21,"
    "\"achieved_rate\":2,\"send_window_s\":1.5,\"cached_prompt_tokens_share\":0.5,"
    "\"mean_ttft_ms\":100,\"median_ttft_ms\":90,\"std_ttft_ms\":5,\"p50_ttft_ms\":90,"
    "\"p99_ttft_ms\":200,\"mean_tpot_ms\":10,\"median_tpot_ms\":10,\"std_tpot_ms\":1,"
    "\"p50_tpot_ms\":10,\"p99_tpot_ms\":12,\"mean_itl_ms\":10,\"median_itl_ms\":9,"
    "\"std_itl_ms\":1,\"p50_itl_ms\":9,\"p99_itl_ms\":30,\"mean_e2el_ms\":300,"
    "\"median_e2el_ms\":300,\"std_e2el_ms\":40,\"p50_e2el_ms\":300,\"p99_e2el_ms\":400,"
    "\"mean_ntpot_ms\":75,\"median_ntpot_ms\":75,\"p99_ntpot_ms\":100,"
    "\"mean_ttft_dispatch_ms\":80,\"mean_schedule_lag_ms\":1,\"median_schedule_lag_ms\":1,"
    "\"p99_schedule_lag_ms\":2,\"max_schedule_lag_ms\":3,\"failures_by_class\":{\"http_429\":1},"
    "\"failed_latency\":{\"n\":1,\"mean_ms\":50,\"median_ms\":50,\"p99_ms\":50,\"max_ms\":50},"
    "\"ntpot_breakdown_ms\":{\"queue\":1,\"prefill\":2,\"decode\":3,\"client\":4},"
    "\"client_bias\":{\"verdict\":\"ok\",\"max_rho\":0.1},\"tp\":\"1\","
    "\"stages\":[{\"stage\":0,\"duration\":2.0,\"completed\":3,\"failed\":1,\"dispatched\":4,"
    "\"total_input_tokens\":30,\"total_output_tokens\":12,\"request_rate\":null,"
    "\"achieved_rate\":2,\"send_window_s\":1.5,\"mean_ttft_ms\":100,\"median_ttft_ms\":90,"
    "\"p99_ttft_ms\":200,\"mean_tpot_ms\":null,\"mean_e2el_ms\":300,\"median_e2el_ms\":300,"
    "\"p99_e2el_ms\":400,\"failures_by_class\":{\"http_429\":1},"
    "\"client_bias\":{\"verdict\":\"ok\"}}]}";

/* Its records, out of index order as the workers' parts concatenate them. */
static const char *const recs_txt[] = {
    "{\"index\":2,\"worker\":0,\"stage\":0,\"intended_ns\":1000000000,\"dispatch_ns\":1002000000,"
    "\"first_byte_ns\":1050000000,\"first_token_ns\":1100000000,\"end_ns\":1400000000,"
    "\"input_tokens\":5,\"output_tokens\":4,\"status\":200,\"class\":\"ok\"}",
    "{\"index\":0,\"worker\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":1000000,"
    "\"first_byte_ns\":50000000,\"first_token_ns\":100000000,\"end_ns\":300000000,"
    "\"input_tokens\":10,\"output_tokens\":4,\"status\":200,\"class\":\"ok\"}",
    "{\"index\":3,\"worker\":0,\"stage\":0,\"intended_ns\":1500000000,\"dispatch_ns\":1500000000,"
    "\"first_byte_ns\":1520000000,\"first_token_ns\":-1,\"end_ns\":1550000000,"
    "\"input_tokens\":5,\"output_tokens\":0,\"status\":429,\"class\":\"http_429\"}",
    "{\"index\":1,\"worker\":0,\"stage\":0,\"intended_ns\":500000000,\"dispatch_ns\":501000000,"
    "\"first_byte_ns\":550000000,\"first_token_ns\":580000000,\"end_ns\":800000000,"
    "\"input_tokens\":10,\"output_tokens\":4,\"status\":200,\"class\":\"ok\"}",
};

static cJSON *result(void)
{
    cJSON *j = cJSON_Parse(result_txt);
    assert_non_null(j);
    return j;
}

static void records(lg_xrecs *x)
{
    char err[256];
    memset(x, 0, sizeof *x);
    for (int i = 0; i < 4; i++)
        assert_int_equal(
            lg_xrecs_add_line(x, recs_txt[i], strlen(recs_txt[i]), i + 1, err, sizeof err), 0);
    lg_xrecs_sort(x);
}

/* The value at a dotted path ("a.b.c"; "[N]" for an array item). */
static const cJSON *at(const cJSON *j, const char *path)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", path);
    for (char *k = strtok_r(buf, ".", &save); k && j; k = strtok_r(NULL, ".", &save))
        j = k[0] == '[' ? cJSON_GetArrayItem(j, atoi(k + 1))
                        : cJSON_GetObjectItemCaseSensitive(j, k);
    return j;
}

static double n_at(const cJSON *j, const char *path)
{
    const cJSON *x = at(j, path);
    if (!cJSON_IsNumber(x)) fail_msg("%s: not a number", path);
    return x->valuedouble;
}

static void is_null(const cJSON *j, const char *path)
{
    if (!cJSON_IsNull(at(j, path))) fail_msg("%s: not null", path);
}

static const char *s_at(const cJSON *j, const char *path)
{
    const char *s = cJSON_GetStringValue(at(j, path));
    if (!s) fail_msg("%s: not a string", path);
    return s;
}

/* lg_export_vllm into memory, parsed back. */
static cJSON *vllm(const cJSON *r, const lg_xrecs *x)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(lg_export_vllm(f, r, x, "tp=1\n", "r.json"), 0);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    if (!j) fail_msg("not JSON: %s", buf);
    free(buf);
    return j;
}

/* The run's result takes some of the arrays (lg_export_arrays): only those
 * asked, after the result's own keys, entry i from record i as read (the
 * JSONL's order when not sorted); no records, the text alone. */
static void result_arrays_in_file_order(void **state)
{
    (void)state;
    char path[] = "/tmp/test_lg_export.XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *w = fdopen(fd, "w");
    for (int i = 0; i < 4; i++)
        fprintf(w, "%s\n", recs_txt[i]);
    fclose(w);
    lg_xrecs x = {0};
    assert_int_equal(lg_xrecs_read(&x, path, 0, err, sizeof err), 0);
    unlink(path);
    assert_int_equal(x.n, 4);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    lg_export_arrays(f, "{\n\t\"a\":\t1\n}", &x, LG_XA_INPUT_LENS | LG_XA_TTFTS | LG_XA_ERRORS);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    if (!j) fail_msg("not JSON: %s", buf);
    free(buf);
    static const char *const keys[] = {"a", "input_lens", "ttfts", "errors"};
    int k = 0;
    for (const cJSON *it = j->child; it; it = it->next, k++) {
        assert_true(k < 4);
        assert_string_equal(it->string, keys[k]);
    }
    assert_int_equal(k, 4);
    static const double in[] = {5, 10, 5, 10}, ttft[] = {0.1, 0.1, 0.0, 0.08};
    static const char *const errs[] = {"", "", "http_429", ""};
    char p[64];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "input_lens.[%d]", i);
        assert_true(n_at(j, p) == in[i]);
        snprintf(p, sizeof p, "ttfts.[%d]", i);
        assert_true(fabs(n_at(j, p) - ttft[i]) < 1e-9);
        snprintf(p, sizeof p, "errors.[%d]", i);
        assert_string_equal(s_at(j, p), errs[i]);
    }
    cJSON_Delete(j);
    f = open_memstream(&buf, &len);
    lg_export_arrays(f, "{\n\t\"a\":\t1\n}", NULL, LG_XA_ALL);
    fclose(f);
    assert_string_equal(buf, "{\n\t\"a\":\t1\n}\n");
    free(buf);
    assert_true(lg_export_array_key("itls") && lg_export_array_key("start_times"));
    assert_false(lg_export_array_key("detailed_arrays") || lg_export_array_key("itl"));
    lg_xrecs_free(&x);
}

static void formats_parse(void **state)
{
    (void)state;
    assert_int_equal(lg_export_parse_format("rhobench"), 0);
    assert_int_equal(lg_export_parse_format("vllm"), LG_EXPORT_VLLM);
    assert_int_equal(lg_export_parse_format("inference-perf"), LG_EXPORT_IP);
    assert_int_equal(lg_export_parse_format("both"), LG_EXPORT_VLLM | LG_EXPORT_IP);
    assert_int_equal(lg_export_parse_format("csv"), -1);
}

static void bad_records_name_their_line(void **state)
{
    (void)state;
    lg_xrecs x = {0};
    char err[256] = "";
    assert_int_equal(lg_xrecs_add_line(&x, "[1]", 3, 7, err, sizeof err), -EINVAL);
    assert_string_equal(err, "line 7: not a JSON object");
    const char *no_end = "{\"index\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":0,"
                         "\"first_token_ns\":0,\"input_tokens\":1,\"output_tokens\":1,"
                         "\"status\":200,\"class\":\"ok\"}";
    assert_int_equal(lg_xrecs_add_line(&x, no_end, strlen(no_end), 3, err, sizeof err), -EINVAL);
    assert_string_equal(err, "line 3: 'end_ns' missing or not a number");
    assert_int_equal(x.n, 0);
    lg_xrecs_free(&x);
}

static void vllm_layout_without_records(void **state)
{
    (void)state;
    cJSON *r = result();
    cJSON *v = vllm(r, NULL);
    assert_string_equal(s_at(v, "backend"), "openai-chat"); /* the chat endpoint */
    assert_string_equal(s_at(v, "endpoint_type"), "openai-chat");
    assert_string_equal(s_at(v, "date"), "20261201-000000");
    assert_string_equal(s_at(v, "tokenizer_id"), "tok");
    assert_string_equal(s_at(v, "request_rate"), "inf");
    assert_string_equal(s_at(v, "tp"), "1"); /* metadata: vLLM's top level */
    assert_null(at(v, "rhobench.tp"));
    assert_true(n_at(v, "num_prompts") == 4 && n_at(v, "completed") == 3);
    assert_true(n_at(v, "mean_ttft_ms") == 100 && n_at(v, "p99_itl_ms") == 30);
    assert_true(n_at(v, "std_e2el_ms") == 40 && n_at(v, "max_concurrency") == 2);
    is_null(v, "max_output_tokens_per_s");
    /* rhobench's own keys, moved out of vLLM's */
    assert_null(at(v, "mean_ntpot_ms"));
    assert_null(at(v, "client_bias"));
    assert_true(n_at(v, "rhobench.mean_ntpot_ms") == 75);
    assert_string_equal(s_at(v, "rhobench.client_bias.verdict"), "ok");
    assert_true(n_at(v, "rhobench.ntpot_breakdown_ms.client") == 4);
    assert_true(n_at(v, "rhobench.stages.[0].completed") == 3);
    assert_null(at(v, "input_lens")); /* no records, no arrays */
    assert_null(at(v, "rhobench.per_request"));
    cJSON_Delete(v);
    cJSON_Delete(r);
}

static void vllm_arrays_in_index_order(void **state)
{
    (void)state;
    cJSON *r = result();
    lg_xrecs x;
    records(&x);
    cJSON *v = vllm(r, &x);
    static const double in[] = {10, 10, 5, 5}, out[] = {4, 4, 4, 0};
    static const double ttft[] = {0.1, 0.08, 0.1, 0.0}, start[] = {0, 0.5, 1.0, 1.5};
    char k[64];
    for (int i = 0; i < 4; i++) {
        snprintf(k, sizeof k, "input_lens.[%d]", i);
        assert_true(n_at(v, k) == in[i]);
        snprintf(k, sizeof k, "output_lens.[%d]", i);
        assert_true(n_at(v, k) == out[i]);
        snprintf(k, sizeof k, "ttfts.[%d]", i);
        assert_true(fabs(n_at(v, k) - ttft[i]) < 1e-12);
        snprintf(k, sizeof k, "start_times.[%d]", i);
        assert_true(fabs(n_at(v, k) - start[i]) < 1e-12);
        snprintf(k, sizeof k, "itls.[%d]", i);
        assert_true(cJSON_IsArray(at(v, k)) && cJSON_GetArraySize(at(v, k)) == 0);
        snprintf(k, sizeof k, "generated_texts.[%d]", i);
        assert_string_equal(s_at(v, k), "");
        snprintf(k, sizeof k, "errors.[%d]", i);
        assert_string_equal(s_at(v, k), i == 3 ? "http_429" : "");
    }
    assert_int_equal(cJSON_GetArraySize(at(v, "errors")), 4);
    assert_non_null(strstr(s_at(v, "rhobench.per_request"), "itls are empty"));
    cJSON_Delete(v);
    lg_xrecs_free(&x);
    cJSON_Delete(r);
}

/* The fixture's records with token times (us from the dispatch): request 2
 * had 2 tokens past the cap, the 429 none. */
static const char *const timed_txt[] = {
    "{\"index\":2,\"worker\":0,\"stage\":0,\"intended_ns\":1000000000,\"dispatch_ns\":1002000000,"
    "\"first_byte_ns\":1050000000,\"first_token_ns\":1100000000,\"end_ns\":1400000000,"
    "\"input_tokens\":5,\"output_tokens\":4,\"status\":200,\"class\":\"ok\","
    "\"token_times_dropped\":2,\"token_times_us\":[98000,98500]}",
    "{\"index\":0,\"worker\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":1000000,"
    "\"first_byte_ns\":50000000,\"first_token_ns\":100000000,\"end_ns\":300000000,"
    "\"input_tokens\":10,\"output_tokens\":4,\"status\":200,\"class\":\"ok\","
    "\"token_times_dropped\":0,\"token_times_us\":[99000,150000,220000,299000]}",
    "{\"index\":3,\"worker\":0,\"stage\":0,\"intended_ns\":1500000000,\"dispatch_ns\":1500000000,"
    "\"first_byte_ns\":1520000000,\"first_token_ns\":-1,\"end_ns\":1550000000,"
    "\"input_tokens\":5,\"output_tokens\":0,\"status\":429,\"class\":\"http_429\","
    "\"token_times_dropped\":0,\"token_times_us\":[]}",
    "{\"index\":1,\"worker\":0,\"stage\":0,\"intended_ns\":500000000,\"dispatch_ns\":501000000,"
    "\"first_byte_ns\":550000000,\"first_token_ns\":580000000,\"end_ns\":800000000,"
    "\"input_tokens\":10,\"output_tokens\":4,\"status\":200,\"class\":\"ok\","
    "\"token_times_dropped\":0,\"token_times_us\":[79000,79001,80001,219000]}",
};

static void vllm_itls_from_token_times(void **state)
{
    (void)state;
    cJSON *r = result();
    lg_xrecs x;
    char err[256];
    memset(&x, 0, sizeof x);
    for (int i = 0; i < 4; i++)
        assert_int_equal(
            lg_xrecs_add_line(&x, timed_txt[i], strlen(timed_txt[i]), i + 1, err, sizeof err), 0);
    lg_xrecs_sort(&x);
    cJSON *v = vllm(r, &x);
    /* index order; the gaps in s; the 429's none, the capped one's to its cap */
    static const double want[4][3] = {
        {0.051, 0.07, 0.079}, {0.000001, 0.001, 0.138999}, {0.0005}, {0}};
    static const int len[] = {3, 3, 1, 0};
    char k[64];
    for (int i = 0; i < 4; i++) {
        snprintf(k, sizeof k, "itls.[%d]", i);
        const cJSON *l = at(v, k);
        assert_true(cJSON_IsArray(l));
        assert_int_equal(cJSON_GetArraySize(l), len[i]);
        for (int j = 0; j < len[i]; j++) {
            double g = cJSON_GetArrayItem(l, j)->valuedouble;
            if (fabs(g - want[i][j]) > 1e-12)
                fail_msg("itls[%d][%d] = %.12g, want %g", i, j, g, want[i][j]);
        }
    }
    /* the other arrays as without token times */
    assert_true(n_at(v, "output_lens.[3]") == 0 && n_at(v, "input_lens.[0]") == 10);
    assert_true(fabs(n_at(v, "ttfts.[1]") - 0.08) < 1e-12);
    assert_string_equal(s_at(v, "errors.[3]"), "http_429");
    assert_int_equal(cJSON_GetArraySize(at(v, "itls")), 4);
    assert_non_null(strstr(s_at(v, "rhobench.per_request"), "itls from the records' token times"));
    assert_true(n_at(v, "rhobench.itls_truncated_requests") == 1);
    cJSON_Delete(v);
    lg_xrecs_free(&x);
    /* without token times: empty lists, and no truncation count */
    records(&x);
    v = vllm(r, &x);
    is_null(v, "rhobench.itls_truncated_requests");
    cJSON_Delete(v);
    lg_xrecs_free(&x);
    cJSON_Delete(r);
}

/* A record's token times stay its own: across the blocks they are kept in
 * (one of 2^20 + 1 times takes a block of its own, and the next a new one)
 * and after the sort moves the records. */
static void token_times_kept_across_blocks(void **state)
{
    (void)state;
    const size_t big = ((size_t)1 << 20) + 1;
    const char *head =
        "{\"index\":%d,\"worker\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":0,"
        "\"first_byte_ns\":0,\"first_token_ns\":0,\"end_ns\":0,\"input_tokens\":1,"
        "\"output_tokens\":1,\"status\":200,\"class\":\"ok\",\"token_times_dropped\":0,"
        "\"token_times_us\":[";
    size_t cap = 512 + big * 2;
    char *line = malloc(cap);
    assert_non_null(line);
    lg_xrecs x = {0};
    char err[256];
    static const int index[] = {5, 1, 3};
    const size_t count[] = {3, big, 2};
    for (int i = 0; i < 3; i++) {
        size_t n = (size_t)snprintf(line, cap, head, index[i]);
        for (size_t j = 0; j < count[i]; j++) {
            if (j) line[n++] = ',';
            line[n++] = (char)('0' + index[i]); /* the record's own digit */
        }
        n += (size_t)snprintf(line + n, cap - n, "]}");
        assert_int_equal(lg_xrecs_add_line(&x, line, n, i + 1, err, sizeof err), 0);
    }
    lg_xrecs_sort(&x);
    static const int sorted[] = {1, 3, 5};
    const size_t sorted_n[] = {big, 2, 3};
    for (int i = 0; i < 3; i++) {
        const lg_record *rec = &x.r[i];
        assert_int_equal(rec->index, sorted[i]);
        assert_int_equal(rec->n_token_times, (int64_t)sorted_n[i]);
        for (size_t j = 0; j < sorted_n[i]; j++)
            if (rec->token_times_us[j] != sorted[i])
                fail_msg("record %d's time %zu: %lld", sorted[i], j,
                         (long long)rec->token_times_us[j]);
    }
    lg_xrecs_free(&x);
    free(line);
}

static void ip_summary_from_the_result(void **state)
{
    (void)state;
    cJSON *r = result();
    cJSON *s = lg_export_ip(r, NULL, -1, "r.json");
    assert_non_null(s);
    assert_true(n_at(s, "benchmark_time_seconds") == 2.0);
    assert_true(n_at(s, "load_summary.count") == 4);
    assert_null(at(s, "load_summary.requested_rate")); /* a stage's key only */
    assert_true(fabs(n_at(s, "load_summary.schedule_delay.max") - 0.003) < 1e-12);
    assert_true(n_at(s, "successes.count") == 3);
    /* ms -> s; percentiles as Inference Perf names them */
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.mean") - 0.1) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.median") - 0.09) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.p99") - 0.2) < 1e-12);
    is_null(s, "successes.latency.time_to_first_token.min"); /* unknown without records */
    assert_true(fabs(n_at(s, "successes.latency.request_latency.p99") - 0.4) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.inter_token_latency.p99") - 0.03) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.normalized_time_per_output_token.mean") - 0.075) <
                1e-12);
    assert_true(n_at(s, "successes.throughput.requests_per_sec") == 1.5);
    assert_true(n_at(s, "successes.throughput.total_tokens_per_sec") == 21);
    assert_true(n_at(s, "successes.prompt_tokens.cached") == 15);
    is_null(s, "successes.output_len");
    assert_true(fabs(n_at(s, "successes.goodput_metrics.goodput_percentage") - 100.0 / 3) < 1e-9);
    assert_true(n_at(s, "successes.goodput_metrics.good_requests") == 1);
    assert_true(n_at(s, "failures.count") == 1);
    assert_true(n_at(s, "failures.by_label.429 - Rate Limit.count") == 1);
    assert_true(fabs(n_at(s, "failures.request_latency.mean") - 0.05) < 1e-12);
    assert_true(n_at(s, "rhobench.from_dispatch.mean_ttft_dispatch_ms") == 80);
    assert_string_equal(s_at(s, "rhobench.client_bias.verdict"), "ok");
    assert_true(n_at(s, "rhobench.ntpot_breakdown_ms.queue") == 1);
    cJSON_Delete(s);
    cJSON_Delete(r);
}

static void ip_from_records_and_per_stage(void **state)
{
    (void)state;
    cJSON *r = result();
    lg_xrecs x;
    records(&x);
    cJSON *s = lg_export_ip(r, &x, -1, "r.json");
    /* the three successes' TTFT 0.1, 0.08, 0.1 s from the intended send */
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.min") - 0.08) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.max") - 0.1) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.median") - 0.1) < 1e-12);
    assert_true(fabs(n_at(s, "successes.latency.request_latency.mean") - 1.0 / 3) < 1e-12);
    /* numpy's percentile of 0.3, 0.3, 0.4: rank 1.98, 0.3 + 0.98 x 0.1 */
    assert_true(fabs(n_at(s, "successes.latency.request_latency.p99") - 0.398) < 1e-12);
    /* (end - first token) / (4 - 1): 0.2/3, 0.22/3, 0.3/3 */
    assert_true(fabs(n_at(s, "successes.latency.time_per_output_token.max") - 0.1) < 1e-12);
    assert_true(fabs(n_at(s, "load_summary.schedule_delay.max") - 0.002) < 1e-12);
    assert_true(n_at(s, "successes.output_len.mean") == 4);
    assert_true(n_at(s, "successes.prompt_tokens.min") == 5);
    assert_true(fabs(n_at(s, "failures.request_latency.mean") - 0.05) < 1e-12);
    assert_true(n_at(s, "failures.by_label.429 - Rate Limit.count") == 1);
    cJSON_Delete(s);
    /* the stage: its rates, the closed loop's concurrency, a TPOT not measured */
    s = lg_export_ip(r, &x, 0, "r.json");
    assert_non_null(s);
    is_null(s, "load_summary.requested_rate");
    assert_true(n_at(s, "load_summary.achieved_rate") == 2);
    assert_true(n_at(s, "load_summary.send_duration") == 1.5);
    assert_true(n_at(s, "load_summary.concurrency") == 2);
    is_null(s, "successes.latency.time_per_output_token");
    assert_true(fabs(n_at(s, "successes.latency.time_to_first_token.min") - 0.08) < 1e-12);
    cJSON_Delete(s);
    assert_null(lg_export_ip(r, &x, 1, "r.json")); /* no such stage */
    lg_xrecs_free(&x);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(formats_parse),
        cmocka_unit_test(bad_records_name_their_line),
        cmocka_unit_test(vllm_layout_without_records),
        cmocka_unit_test(vllm_arrays_in_index_order),
        cmocka_unit_test(result_arrays_in_file_order),
        cmocka_unit_test(vllm_itls_from_token_times),
        cmocka_unit_test(token_times_kept_across_blocks),
        cmocka_unit_test(ip_summary_from_the_result),
        cmocka_unit_test(ip_from_records_and_per_stage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
