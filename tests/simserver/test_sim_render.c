/* Unit tests for the pure output side: rb_buf's JSON escaping, sim_render's
 * chunks and bodies (each must parse as the JSON OpenAI clients expect),
 * sim_metrics' Prometheus text, and sim_heap's ordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "rb_buf.h"
#include "sim_heap.h"
#include "sim_metrics.h"
#include "sim_render.h"

static char *cstr(rb_buf *b)
{
    rb_buf_add(b, "", 1);
    b->len--;
    return b->data;
}

static void json_strings_are_escaped_and_valid_utf8(void **state)
{
    rb_buf b = {0};
    const char in[] = "a\"b\\c\n\x01\xc3\xa9\xff\xe2\x82";
    rb_buf_add(&b, "\"", 1);
    rb_buf_json_str(&b, in, sizeof in - 1);
    rb_buf_add(&b, "\"", 1);
    assert_string_equal(cstr(&b), "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\\ufffd\\ufffd\\ufffd\"");
    cJSON *j = cJSON_Parse(b.data);
    assert_non_null(j);
    assert_string_equal(j->valuestring,
                        "a\"b\\c\n\x01\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
    cJSON_Delete(j);
    rb_buf_free(&b);
    rb_buf_i64(&b, -1234567890123LL);
    assert_string_equal(cstr(&b), "-1234567890123");
    rb_buf_free(&b);
}

/* Parses one "data: {...}\n\n" event. */
static cJSON *event_json(const rb_buf *b)
{
    assert_true(b->len > 8);
    assert_memory_equal(b->data, "data: ", 6);
    assert_memory_equal(b->data + b->len - 2, "\n\n", 2);
    char *s = strndup(b->data + 6, b->len - 8);
    cJSON *j = cJSON_Parse(s);
    free(s);
    assert_non_null(j);
    return j;
}

static void completion_chunks_are_openai_json(void **state)
{
    sim_render_ctx r;
    sim_render_ctx_init(&r, 0, "cmpl-0-1", 1700000000, "sim-model");
    rb_buf b = {0};
    sim_render_token(&b, &r, "wo\"rd", 5, "length");
    cJSON *j = event_json(&b);
    assert_string_equal(cJSON_GetObjectItem(j, "id")->valuestring, "cmpl-0-1");
    assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring, "text_completion");
    assert_int_equal(cJSON_GetObjectItem(j, "created")->valuedouble, 1700000000);
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    assert_string_equal(cJSON_GetObjectItem(c0, "text")->valuestring, " wo\"rd");
    assert_string_equal(cJSON_GetObjectItem(c0, "finish_reason")->valuestring, "length");
    cJSON_Delete(j);
    rb_buf_reset(&b);
    sim_render_usage(&b, &r, 7, 16, 4);
    j = event_json(&b);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "choices")), 0);
    cJSON *u = cJSON_GetObjectItem(j, "usage");
    assert_int_equal(cJSON_GetObjectItem(u, "prompt_tokens")->valuedouble, 7);
    assert_int_equal(cJSON_GetObjectItem(u, "completion_tokens")->valuedouble, 16);
    assert_int_equal(cJSON_GetObjectItem(u, "total_tokens")->valuedouble, 23);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(u, "prompt_tokens_details"), "cached_tokens")
            ->valuedouble,
        4);
    cJSON_Delete(j);
    rb_buf_free(&b);
    sim_render_ctx_free(&r);
}

static void chat_chunks_have_role_and_delta(void **state)
{
    sim_render_ctx r;
    sim_render_ctx_init(&r, 1, "chatcmpl-0-2", 1, "m");
    rb_buf b = {0};
    sim_render_role(&b, &r);
    cJSON *j = event_json(&b);
    assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring, "chat.completion.chunk");
    cJSON *d =
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0), "delta");
    assert_string_equal(cJSON_GetObjectItem(d, "role")->valuestring, "assistant");
    assert_null(cJSON_GetObjectItem(d, "content"));
    cJSON_Delete(j);
    rb_buf_reset(&b);
    sim_render_token(&b, &r, "hi", 2, NULL);
    j = event_json(&b);
    cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "delta"), "content")->valuestring, " hi");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "finish_reason")));
    cJSON_Delete(j);
    rb_buf_reset(&b);
    sim_render_full(&b, &r, " a b", 4, "stop", 3, 2, 0);
    j = cJSON_ParseWithLength(b.data, b.len);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring, "chat.completion");
    c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "message"), "content")->valuestring, " a b");
    assert_string_equal(cJSON_GetObjectItem(c0, "finish_reason")->valuestring, "stop");
    cJSON_Delete(j);
    rb_buf_free(&b);
    sim_render_ctx_free(&r);
}

static void stamps_truth_and_errors_have_their_formats(void **state)
{
    rb_buf b = {0};
    sim_render_stamp(&b, 123456789012LL);
    sim_render_done(&b);
    sim_render_truth(&b, 1, 2, 3, 16, 45);
    assert_string_equal(cstr(&b),
                        ": t=123456789012\ndata: [DONE]\n\n"
                        ": {\"queue_ns\":1,\"prefill_ns\":2,\"decode_ns\":3,\"cached_tokens\":16,"
                        "\"max_late_ns\":45}\n\n");
    rb_buf_reset(&b);
    sim_render_error(&b, "bad \"x\"", "invalid_request_error", "max_tokens", NULL);
    cJSON *j = cJSON_ParseWithLength(b.data, b.len);
    cJSON *e = cJSON_GetObjectItem(j, "error");
    assert_string_equal(cJSON_GetObjectItem(e, "message")->valuestring, "bad \"x\"");
    assert_string_equal(cJSON_GetObjectItem(e, "param")->valuestring, "max_tokens");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(e, "code")));
    cJSON_Delete(j);
    rb_buf_reset(&b);
    sim_render_head(&b, 429, "application/json", 12, 0, "x-a: 1\r\n");
    assert_string_equal(cstr(&b),
                        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n"
                        "content-length: 12\r\nconnection: close\r\nx-a: 1\r\n\r\n");
    rb_buf_free(&b);
}

static void metrics_render_cumulative_buckets_and_sum_slots(void **state)
{
    sim_metrics slots[2];
    memset(slots, 0, sizeof slots);
    sim_hist_add(&slots[0].ttft, 50000);        /* 50 us */
    sim_hist_add(&slots[1].ttft, 3000000);      /* 3 ms */
    sim_hist_add(&slots[1].ttft, 9000000000LL); /* 9 s */
    slots[0].running = 2;
    slots[1].running = 3;
    slots[1].faults[SIM_FAULT_STALL] = 4;
    slots[0].success_length = 5;
    sim_hist_add(&slots[0].late, 200000);  /* 0.2 ms late */
    sim_hist_add(&slots[1].late, 7000000); /* 7 ms late */
    sim_metrics m;
    sim_metrics_sum(slots, 2, &m);
    rb_buf b = {0};
    sim_metrics_render(&m, "sim-model", &b);
    const char *t = cstr(&b);
    assert_non_null(strstr(t, "vllm:num_requests_running{model_name=\"sim-model\"} 5\n"));
    assert_non_null(strstr(
        t, "vllm:time_to_first_token_seconds_bucket{le=\"0.0001\",model_name=\"sim-model\"} 1\n"));
    assert_non_null(strstr(
        t, "vllm:time_to_first_token_seconds_bucket{le=\"0.005\",model_name=\"sim-model\"} 2\n"));
    assert_non_null(strstr(
        t, "vllm:time_to_first_token_seconds_bucket{le=\"10\",model_name=\"sim-model\"} 3\n"));
    assert_non_null(strstr(
        t, "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"sim-model\"} 3\n"));
    assert_non_null(
        strstr(t, "vllm:time_to_first_token_seconds_count{model_name=\"sim-model\"} 3\n"));
    assert_non_null(
        strstr(t, "vllm:time_to_first_token_seconds_sum{model_name=\"sim-model\"} 9.003050000\n"));
    assert_non_null(strstr(t, "sim_injected_faults_total{type=\"stall\"} 4\n"));
    assert_non_null(strstr(
        t, "vllm:request_success_total{finished_reason=\"length\",model_name=\"sim-model\"} 5\n"));
    assert_non_null(strstr(t, "# TYPE vllm:inter_token_latency_seconds histogram\n"));
    /* The pacer's lateness, summed over the slots like the others. */
    assert_non_null(strstr(t, "# TYPE sim_send_lateness_seconds histogram\n"));
    assert_non_null(
        strstr(t, "sim_send_lateness_seconds_bucket{le=\"0.00025\",model_name=\"sim-model\"} 1\n"));
    assert_non_null(
        strstr(t, "sim_send_lateness_seconds_bucket{le=\"0.005\",model_name=\"sim-model\"} 1\n"));
    assert_non_null(
        strstr(t, "sim_send_lateness_seconds_bucket{le=\"0.01\",model_name=\"sim-model\"} 2\n"));
    assert_non_null(
        strstr(t, "sim_send_lateness_seconds_sum{model_name=\"sim-model\"} 0.007200000\n"));
    assert_non_null(strstr(t, "sim_send_lateness_seconds_count{model_name=\"sim-model\"} 2\n"));
    rb_buf_free(&b);
}

static void heap_pops_in_deadline_order_and_removes(void **state)
{
    sim_heap h = {0};
    sim_heap_node nodes[200];
    uint64_t x = 12345;
    for (int i = 0; i < 200; i++) {
        sim_heap_node_init(&nodes[i]);
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        nodes[i].deadline_ns = (int64_t)(x >> 40);
        assert_int_equal(sim_heap_push(&h, &nodes[i]), 0);
    }
    for (int i = 0; i < 200; i += 3)
        sim_heap_remove(&h, &nodes[i]);
    sim_heap_remove(&h, &nodes[0]); /* twice: no effect */
    int64_t last = -1;
    int n = 0;
    sim_heap_node *p;
    while ((p = sim_heap_pop(&h))) {
        assert_true(p->deadline_ns >= last);
        assert_int_not_equal((p - nodes) % 3, 0);
        assert_int_equal(p->index, SIM_HEAP_NONE);
        last = p->deadline_ns;
        n++;
    }
    assert_int_equal(n, 200 - 67);
    sim_heap_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_strings_are_escaped_and_valid_utf8),
        cmocka_unit_test(completion_chunks_are_openai_json),
        cmocka_unit_test(chat_chunks_have_role_and_delta),
        cmocka_unit_test(stamps_truth_and_errors_have_their_formats),
        cmocka_unit_test(metrics_render_cumulative_buckets_and_sum_slots),
        cmocka_unit_test(heap_pops_in_deadline_order_and_removes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
