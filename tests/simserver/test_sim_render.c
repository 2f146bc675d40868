/* Unit tests for the pure output side: rb_buf's JSON escaping, sim_render's
 * chunks and bodies (each must parse as the JSON OpenAI clients expect),
 * sim_metrics' Prometheus text, and sim_heap's ordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
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

/* A fixed log-probability source: token pos is " w<pos>" (" wé" for pos 9,
 * two bytes in UTF-8), its logprob -0.5 - pos, and its alternatives " a<k>"
 * each 1 lower than the previous. */
static char lp_words[16][8];
static void fake_lp(const void *ud, int64_t pos, sim_token *tok, sim_logprobs *lp)
{
    int n_alt = *(const int *)ud;
    if (pos == 9)
        snprintf(lp_words[pos], sizeof lp_words[pos], "w\xc3\xa9");
    else
        snprintf(lp_words[pos], sizeof lp_words[pos], "w%d", (int)pos);
    *tok = (sim_token){lp_words[pos], strlen(lp_words[pos])};
    static const char *const alts[] = {"a0", "a1", "a2", "a3"};
    lp->lp = -0.5 - (double)pos;
    lp->n_alt = n_alt;
    for (int a = 0; a < n_alt; a++) {
        lp->alt[a] = (sim_token){alts[a], 2};
        lp->alt_lp[a] = lp->lp - 1 - a;
    }
}

static cJSON *choice0(cJSON *j)
{
    cJSON *ch = cJSON_GetObjectItem(j, "choices");
    assert_int_equal(cJSON_GetArraySize(ch), 1);
    return cJSON_GetArrayItem(ch, 0);
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItem(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* Chunks of a request with choices: each names its index; completions name
 * stop_reason in every chunk, the finishing one with the stop string; the
 * logprobs have vLLM's completion shape; continuous usage rides on the chunk. */
static void choice_chunks_have_index_stop_reason_and_logprobs(void **state)
{
    sim_render_ctx r;
    sim_render_ctx_init(&r, 0, "cmpl-0-7", 1, "m");
    rb_buf b = {0};
    int n_alt = 2;
    sim_render_lp lp = {.get = fake_lp, .ud = &n_alt, .first = 3, .count = 1, .text_offset = 11};
    sim_render_choice c = {.index = 1, .text = "w3", .len = 2, .space = 1, .lp = &lp};
    sim_render_choice_chunk(&b, &r, &c);
    cJSON *j = event_json(&b);
    cJSON *c0 = choice0(j);
    assert_int_equal(num(c0, "index"), 1);
    assert_string_equal(cJSON_GetObjectItem(c0, "text")->valuestring, " w3");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "finish_reason")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "stop_reason")));
    assert_null(cJSON_GetObjectItem(j, "usage"));
    cJSON *l = cJSON_GetObjectItem(c0, "logprobs");
    cJSON *off = cJSON_GetObjectItem(l, "text_offset");
    assert_int_equal(cJSON_GetArraySize(off), 1);
    assert_int_equal(cJSON_GetArrayItem(off, 0)->valuedouble, 11);
    assert_true(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "token_logprobs"), 0)->valuedouble ==
                -3.5);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "tokens"), 0)->valuestring,
                        " w3");
    cJSON *top = cJSON_GetArrayItem(cJSON_GetObjectItem(l, "top_logprobs"), 0);
    assert_true(cJSON_IsObject(top));
    assert_int_equal(cJSON_GetArraySize(top), 3); /* the chosen token and 2 alternatives */
    assert_true(cJSON_GetArrayItem(top, 0)->valuedouble == -3.5);
    assert_string_equal(cJSON_GetArrayItem(top, 0)->string, " w3");
    assert_true(num(top, " a0") == -4.5);
    assert_true(num(top, " a1") == -5.5);
    cJSON_Delete(j);

    /* The finishing chunk: empty text (held back), the stop string, usage. */
    rb_buf_reset(&b);
    c = (sim_render_choice){.index = 0,
                            .text = "",
                            .len = 0,
                            .finish = "stop",
                            .stop_reason = "a \"q\"",
                            .stop_len = 5,
                            .usage = 1,
                            .prompt = 4,
                            .completion = 6};
    sim_render_choice_chunk(&b, &r, &c);
    j = event_json(&b);
    c0 = choice0(j);
    assert_int_equal(num(c0, "index"), 0);
    assert_string_equal(cJSON_GetObjectItem(c0, "text")->valuestring, "");
    assert_string_equal(cJSON_GetObjectItem(c0, "finish_reason")->valuestring, "stop");
    assert_string_equal(cJSON_GetObjectItem(c0, "stop_reason")->valuestring, "a \"q\"");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "logprobs")));
    cJSON *u = cJSON_GetObjectItem(j, "usage");
    assert_int_equal(num(u, "prompt_tokens"), 4);
    assert_int_equal(num(u, "completion_tokens"), 6);
    assert_int_equal(num(u, "total_tokens"), 10);
    cJSON_Delete(j);

    /* A whole body: two choices, the second with logprobs over 3 tokens (its
     * offsets count characters: " wé" is 3), usage over both. */
    rb_buf_reset(&b);
    sim_render_full_begin(&b, &r);
    c = (sim_render_choice){.index = 0, .text = " x y", .len = 4, .finish = "length"};
    sim_render_full_choice(&b, &r, &c);
    n_alt = 0;
    lp = (sim_render_lp){.get = fake_lp, .ud = &n_alt, .first = 8, .count = 3};
    c = (sim_render_choice){.index = 1,
                            .text = " w8 w\xc3\xa9 w10",
                            .len = 11,
                            .finish = "stop",
                            .stop_reason = "Z",
                            .stop_len = 1,
                            .lp = &lp};
    sim_render_full_choice(&b, &r, &c);
    sim_render_full_end(&b, 3, 5, 2);
    j = cJSON_ParseWithLength(b.data, b.len);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring, "text_completion");
    cJSON *chs = cJSON_GetObjectItem(j, "choices");
    assert_int_equal(cJSON_GetArraySize(chs), 2);
    cJSON *a = cJSON_GetArrayItem(chs, 0), *z = cJSON_GetArrayItem(chs, 1);
    assert_int_equal(num(a, "index"), 0);
    assert_string_equal(cJSON_GetObjectItem(a, "text")->valuestring, " x y");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(a, "stop_reason")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(a, "logprobs")));
    assert_int_equal(num(z, "index"), 1);
    assert_string_equal(cJSON_GetObjectItem(z, "text")->valuestring, " w8 w\xc3\xa9 w10");
    assert_string_equal(cJSON_GetObjectItem(z, "stop_reason")->valuestring, "Z");
    l = cJSON_GetObjectItem(z, "logprobs");
    off = cJSON_GetObjectItem(l, "text_offset");
    assert_int_equal(cJSON_GetArraySize(off), 3);
    assert_int_equal(cJSON_GetArrayItem(off, 0)->valuedouble, 0);
    assert_int_equal(cJSON_GetArrayItem(off, 1)->valuedouble, 3);
    assert_int_equal(cJSON_GetArrayItem(off, 2)->valuedouble, 6);
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(l, "tokens"), 1)->valuestring,
                        " w\xc3\xa9");
    cJSON *tops = cJSON_GetObjectItem(l, "top_logprobs");
    assert_int_equal(cJSON_GetArraySize(tops), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetArrayItem(tops, 2)), 1); /* logprobs 0 */
    u = cJSON_GetObjectItem(j, "usage");
    assert_int_equal(num(u, "completion_tokens"), 5);
    assert_int_equal(num(u, "total_tokens"), 8);
    assert_int_equal(num(cJSON_GetObjectItem(u, "prompt_tokens_details"), "cached_tokens"), 2);
    cJSON_Delete(j);
    rb_buf_free(&b);
    sim_render_ctx_free(&r);
}

/* Chat: a role chunk per choice; content deltas; stop_reason only on the
 * finishing chunk (vLLM leaves it out before); logprobs as
 * {"content":[{token, logprob, bytes, top_logprobs:[{token, logprob, bytes}]}]}. */
static void chat_choice_chunks_have_vllm_logprobs(void **state)
{
    sim_render_ctx r;
    sim_render_ctx_init(&r, 1, "chatcmpl-0-3", 1, "m");
    rb_buf b = {0};
    sim_render_choice_role(&b, &r, 2, 1, 9);
    cJSON *j = event_json(&b);
    cJSON *c0 = choice0(j);
    assert_int_equal(num(c0, "index"), 2);
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "delta"), "role")->valuestring,
                        "assistant");
    assert_int_equal(num(cJSON_GetObjectItem(j, "usage"), "completion_tokens"), 0);
    assert_int_equal(num(cJSON_GetObjectItem(j, "usage"), "prompt_tokens"), 9);
    cJSON_Delete(j);

    rb_buf_reset(&b);
    int n_alt = 1;
    sim_render_lp lp = {.get = fake_lp, .ud = &n_alt, .first = 9, .count = 1, .top = 2};
    sim_render_choice c = {.index = 2, .text = "w\xc3\xa9", .len = 3, .space = 1, .lp = &lp};
    sim_render_choice_chunk(&b, &r, &c);
    j = event_json(&b);
    c0 = choice0(j);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "delta"), "content")->valuestring,
        " w\xc3\xa9");
    assert_null(cJSON_GetObjectItem(c0, "stop_reason"));
    cJSON *content = cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "logprobs"), "content");
    assert_int_equal(cJSON_GetArraySize(content), 1);
    cJSON *t = cJSON_GetArrayItem(content, 0);
    assert_string_equal(cJSON_GetObjectItem(t, "token")->valuestring, " w\xc3\xa9");
    assert_true(num(t, "logprob") == -9.5);
    cJSON *bytes = cJSON_GetObjectItem(t, "bytes");
    assert_int_equal(cJSON_GetArraySize(bytes), 4);
    assert_int_equal(cJSON_GetArrayItem(bytes, 0)->valuedouble, 32);
    assert_int_equal(cJSON_GetArrayItem(bytes, 2)->valuedouble, 0xc3);
    assert_int_equal(cJSON_GetArrayItem(bytes, 3)->valuedouble, 0xa9);
    cJSON *top = cJSON_GetObjectItem(t, "top_logprobs");
    assert_int_equal(cJSON_GetArraySize(top), 2); /* top_logprobs 2: chosen + 1 */
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(top, 0), "token")->valuestring,
                        " w\xc3\xa9");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(top, 1), "token")->valuestring,
                        " a0");
    assert_true(num(cJSON_GetArrayItem(top, 1), "logprob") == -10.5);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(top, 1), "bytes")),
                     3);
    cJSON_Delete(j);

    /* top_logprobs 0: an empty list; the finishing chunk has stop_reason. */
    rb_buf_reset(&b);
    n_alt = 0;
    lp.top = 0;
    c = (sim_render_choice){.index = 0, .text = "", .len = 0, .finish = "length", .lp = &lp};
    sim_render_choice_chunk(&b, &r, &c);
    j = event_json(&b);
    c0 = choice0(j);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(c0, "stop_reason")));
    content = cJSON_GetObjectItem(cJSON_GetObjectItem(c0, "logprobs"), "content");
    top = cJSON_GetObjectItem(cJSON_GetArrayItem(content, 0), "top_logprobs");
    assert_true(cJSON_IsArray(top));
    assert_int_equal(cJSON_GetArraySize(top), 0);
    cJSON_Delete(j);

    /* A whole chat body: messages, per choice. */
    rb_buf_reset(&b);
    sim_render_full_begin(&b, &r);
    for (int i = 0; i < 2; i++) {
        c = (sim_render_choice){.index = i,
                                .text = i ? " b" : " a",
                                .len = 2,
                                .finish = "stop",
                                .stop_reason = i ? "S" : NULL,
                                .stop_len = 1};
        sim_render_full_choice(&b, &r, &c);
    }
    sim_render_full_end(&b, 1, 2, 0);
    j = cJSON_ParseWithLength(b.data, b.len);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "object")->valuestring, "chat.completion");
    cJSON *chs = cJSON_GetObjectItem(j, "choices");
    assert_int_equal(cJSON_GetArraySize(chs), 2);
    cJSON *m1 = cJSON_GetObjectItem(cJSON_GetArrayItem(chs, 1), "message");
    assert_string_equal(cJSON_GetObjectItem(m1, "role")->valuestring, "assistant");
    assert_string_equal(cJSON_GetObjectItem(m1, "content")->valuestring, " b");
    assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(chs, 1), "stop_reason")->valuestring,
                        "S");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(chs, 0), "stop_reason")));
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
        cmocka_unit_test(choice_chunks_have_index_stop_reason_and_logprobs),
        cmocka_unit_test(chat_choice_chunks_have_vllm_logprobs),
        cmocka_unit_test(stamps_truth_and_errors_have_their_formats),
        cmocka_unit_test(metrics_render_cumulative_buckets_and_sum_slots),
        cmocka_unit_test(heap_pops_in_deadline_order_and_removes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
