/* Unit tests for lg_chunk: the facts taken from OpenAI streaming events and
 * bodies, malformed chunks refused, and simserver's ground-truth comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "lg_chunk.h"

static int decode(const char *s, lg_chunk *c)
{
    return lg_chunk_decode(s, strlen(s), c);
}

static void completion_text_is_content(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":"
                            "[{\"index\":0,\"text\":\" hello\",\"finish_reason\":null}]}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT);
    assert_int_equal(c.content_bytes, 6);
    assert_int_equal(c.prompt_tokens, -1);
    assert_int_equal(c.completion_tokens, -1);
    assert_int_equal(c.cached_tokens, -1);
    assert_string_equal(c.finish_reason, "");
}

static void chat_role_chunk_is_not_content(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                            "\"content\":\"\"},\"finish_reason\":null}]}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_ROLE);
    assert_int_equal(c.content_bytes, 0);
}

static void chat_delta_content_is_content(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"choices\":[{\"delta\":{\"content\":\"caf\\u00e9\"}}]}", &c), 0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT);
    assert_int_equal(c.content_bytes, 5); /* UTF-8 bytes of "café" */
    /* A delta with both role and content counts as content. */
    assert_int_equal(
        decode("{\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}", &c), 0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT);
}

static void finish_and_usage_are_taken(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}],"
                            "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":34,"
                            "\"total_tokens\":46,\"prompt_tokens_details\":{\"cached_tokens\":8}}}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_FINISH | LG_CHUNK_USAGE);
    assert_string_equal(c.finish_reason, "length");
    assert_int_equal(c.prompt_tokens, 12);
    assert_int_equal(c.completion_tokens, 34);
    assert_int_equal(c.cached_tokens, 8);
}

static void usage_only_chunk_with_empty_choices(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"choices\":[],\"usage\":{\"prompt_tokens\":3,"
                            "\"completion_tokens\":4,\"prompt_tokens_details\":null}}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_USAGE);
    assert_int_equal(c.prompt_tokens, 3);
    assert_int_equal(c.completion_tokens, 4);
    assert_int_equal(c.cached_tokens, -1);
    /* "usage": null is the OpenAI way to say "not in this chunk". */
    assert_int_equal(decode("{\"choices\":[{\"text\":\"a\"}],\"usage\":null}", &c), 0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT);
}

static void long_finish_reason_is_truncated(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"choices\":[{\"text\":\"\",\"finish_reason\":"
                            "\"a_very_long_reason_indeed\"}]}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_FINISH);
    assert_string_equal(c.finish_reason, "a_very_long_rea");
}

static void non_streamed_bodies(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
                            "\"message\":{\"role\":\"assistant\",\"content\":\"one two three\"},"
                            "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,"
                            "\"completion_tokens\":3}}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT | LG_CHUNK_FINISH | LG_CHUNK_USAGE);
    assert_int_equal(c.content_bytes, 13);
    assert_string_equal(c.finish_reason, "stop");
    assert_int_equal(c.completion_tokens, 3);
    assert_int_equal(decode("{\"object\":\"text_completion\",\"choices\":[{\"text\":\"abc\","
                            "\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,"
                            "\"completion_tokens\":1}}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT | LG_CHUNK_FINISH | LG_CHUNK_USAGE);
    assert_int_equal(c.content_bytes, 3);
}

static void done_and_error(void **state)
{
    lg_chunk c;
    assert_int_equal(decode("[DONE]", &c), 0);
    assert_int_equal(c.flags, LG_CHUNK_DONE);
    assert_int_equal(decode(" [DONE]\n", &c), 0);
    assert_int_equal(c.flags, LG_CHUNK_DONE);
    assert_int_equal(decode("{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\","
                            "\"code\":503}}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_ERROR);
}

static void malformed_chunks_are_refused(void **state)
{
    static const char *bad[] = {
        "",
        "[DONE",
        "[DONE]x",
        "DONE",
        "{",
        "{\"choices\":[{\"text\":\"a\"}]",
        "[1,2]",
        "42",
        "\"text\"",
        "{}",
        "{\"unrelated\":1}",
        "{\"choices\":{}}",
        "{\"choices\":[42]}",
        "{\"choices\":[{\"text\":5}]}",
        "{\"choices\":[{\"delta\":[]}]}",
        "{\"choices\":[{\"delta\":{\"content\":true}}]}",
        "{\"choices\":[{\"delta\":{\"role\":1}}]}",
        "{\"choices\":[{\"message\":\"x\"}]}",
        "{\"choices\":[{\"finish_reason\":7}]}",
        "{\"usage\":[]}",
        "{\"usage\":{\"prompt_tokens\":-1}}",
        "{\"usage\":{\"prompt_tokens\":1.5}}",
        "{\"usage\":{\"completion_tokens\":\"3\"}}",
        "{\"usage\":{\"prompt_tokens_details\":{\"cached_tokens\":-2}}}",
        "{\"usage\":{\"prompt_tokens_details\":5}}",
        "{\"choices\":[]} trailing",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lg_chunk c;
        if (decode(bad[i], &c) != -EBADMSG) fail_msg("accepted malformed chunk: %s", bad[i]);
    }
}

static void decode_reads_only_len_bytes(void **state)
{
    const char buf[] = "{\"choices\":[{\"text\":\"ab\"}]}GARBAGE";
    lg_chunk c;
    assert_int_equal(lg_chunk_decode(buf, strlen(buf) - 7, &c), 0);
    assert_int_equal(c.content_bytes, 2);
    assert_int_equal(lg_chunk_decode("[DONE]]]", 6, &c), 0);
    assert_int_equal(c.flags, LG_CHUNK_DONE);
}

static void escapes_and_unusual_json(void **state)
{
    lg_chunk c;
    /* Simple escapes count as one byte each; \u as its UTF-8 bytes. */
    assert_int_equal(decode("{\"choices\":[{\"text\":\"a\\nb\\\"\"}]}", &c), 0);
    assert_int_equal(c.content_bytes, 4);
    assert_int_equal(decode("{\"choices\":[{\"text\":\"\\u00e9\\ud83d\\ude00\"}]}", &c), 0);
    assert_int_equal(c.content_bytes, 6);
    /* The first of two equal keys counts, as in cJSON. */
    assert_int_equal(decode("{\"choices\":[{\"text\":\"ab\",\"text\":\"abcd\"}]}", &c), 0);
    assert_int_equal(c.content_bytes, 2);
    /* Other choices, nesting and odd numbers elsewhere are only checked for JSON. */
    assert_int_equal(decode("{\"x\":[1e5,-0.5,{\"y\":[true,false,null]}],\"choices\":"
                            "[{\"text\":\"a\"},{\"text\":5}],\"created\":1.5E+3}",
                            &c),
                     0);
    assert_int_equal(c.content_bytes, 1);
    /* A role with content anywhere in the choice is a content chunk. */
    assert_int_equal(decode("{\"choices\":[{\"delta\":{\"role\":\"assistant\"},"
                            "\"message\":{\"content\":\"x\"}}]}",
                            &c),
                     0);
    assert_int_equal(c.flags, LG_CHUNK_CONTENT);
    /* Whitespace between tokens; numbers with leading zeros as cJSON reads them. */
    assert_int_equal(decode(" {\r\n \"usage\" :\t{ \"prompt_tokens\" : 7 } }\n", &c), 0);
    assert_int_equal(c.prompt_tokens, 7);
    assert_int_equal(decode("{\"usage\":{\"prompt_tokens\":007}}", &c), 0);
    assert_int_equal(c.prompt_tokens, 7);
}

/* The fast path and the cJSON reference agree on every chunk used here. */
static void fast_path_agrees_with_cjson(void **state)
{
    static const char *chunks[] = {
        "{\"id\":\"cmpl-0-1\",\"object\":\"text_completion\",\"created\":1795944699,"
        "\"model\":\"sim-model\",\"choices\":[{\"index\":0,\"text\":\" so\",\"logprobs\":null,"
        "\"finish_reason\":null}]}",
        "{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"finish_reason\":null}]}",
        "{\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":4,\"total_tokens\":9,"
        "\"prompt_tokens_details\":{\"cached_tokens\":0}}}",
        "{\"error\":{\"message\":\"x\",\"type\":\"server_error\",\"param\":null,\"code\":null}}",
        "{\"choices\":[{\"text\":\"\\t\",\"finish_reason\":\"st\\u006fp\"}]}",
        "{\"choices\":[{\"text\":\"\\x\"}]}",
        "{\"usage\":{\"prompt_tokens\":1,\"prompt_tokens\":-1}}",
        "{\"choices\":[{\"delta\":{\"content\":null,\"role\":null}}]}",
        "{\"choices\":[{\"delta\":null,\"message\":null,\"text\":null}],\"usage\":null,\"error\":"
        "null}",
        "{\"choices\":[{}],\"a\":\"\x01\"}",
        "{\"choices\":[{}],}",
        "{\"choices\":[{},]}",
        "{\"choices\":[{}]}x",
        "{\"usage\":{\"prompt_tokens\":9007199254740993}}",
        "{\"usage\":{\"prompt_tokens\":123456789012345}}",
        "{\"usage\":{\"prompt_tokens\":1e3}}",
        /* cJSON releases differ on numbers over 63 characters */
        "{\"choices\":[],\"n\":1234567890123456789012345678901234567890"
        "123456789012345678901234567890}",
    };
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        lg_chunk a, b;
        int ra = decode(chunks[i], &a), rb = lg_chunk_decode_json(chunks[i], strlen(chunks[i]), &b);
        if (ra != rb) fail_msg("chunk %zu: %d vs %d: %s", i, ra, rb, chunks[i]);
        if (ra == 0) {
            assert_int_equal(a.flags, b.flags);
            assert_int_equal(a.content_bytes, b.content_bytes);
            assert_int_equal(a.prompt_tokens, b.prompt_tokens);
            assert_int_equal(a.completion_tokens, b.completion_tokens);
            assert_int_equal(a.cached_tokens, b.cached_tokens);
            assert_string_equal(a.finish_reason, b.finish_reason);
        }
    }
}

static int comment(const char *s, int64_t *stamp, lg_truth *truth)
{
    return lg_chunk_comment(s, strlen(s), stamp, truth);
}

static void stamp_comments(void **state)
{
    int64_t t = -7;
    assert_int_equal(comment("t=123456789012", &t, NULL), 1);
    assert_int_equal(t, 123456789012LL);
    assert_int_equal(comment("t=9223372036854775807", &t, NULL), 1);
    assert_int_equal(t, INT64_MAX);
    t = -7;
    assert_int_equal(comment("t=9223372036854775808", &t, NULL), 0);
    assert_int_equal(comment("t=99999999999999999999", &t, NULL), 0);
    assert_int_equal(comment("t=", &t, NULL), 0);
    assert_int_equal(comment("t=-5", &t, NULL), 0);
    assert_int_equal(comment("t=12x", &t, NULL), 0);
    assert_int_equal(comment("s=12", &t, NULL), 0);
    assert_int_equal(comment("", &t, NULL), 0);
    assert_int_equal(comment("keep-alive", &t, NULL), 0);
    assert_int_equal(t, -7);
    /* Only len bytes are read. */
    assert_int_equal(lg_chunk_comment("t=42999", 4, &t, NULL), 1);
    assert_int_equal(t, 42);
}

static void truth_comment(void **state)
{
    lg_truth tr = {0};
    int64_t t = -1;
    assert_int_equal(comment("{\"queue_ns\":1500,\"prefill_ns\":2000000,\"decode_ns\":"
                             "30000000,\"cached_tokens\":64}",
                             &t, &tr),
                     2);
    assert_int_equal(tr.queue_ns, 1500);
    assert_int_equal(tr.prefill_ns, 2000000);
    assert_int_equal(tr.decode_ns, 30000000);
    assert_int_equal(tr.cached_tokens, 64);
    assert_int_equal(t, -1);
    /* Without cached_tokens the count is unknown. */
    assert_int_equal(comment("{\"queue_ns\":0,\"prefill_ns\":0,\"decode_ns\":0}", &t, &tr), 2);
    assert_int_equal(tr.cached_tokens, -1);
    tr.queue_ns = 77;
    assert_int_equal(comment("{\"queue_ns\":1,\"prefill_ns\":2}", &t, &tr), 0);
    assert_int_equal(comment("{\"queue_ns\":-1,\"prefill_ns\":2,\"decode_ns\":3}", &t, &tr), 0);
    assert_int_equal(comment("{\"queue_ns\":\"1\",\"prefill_ns\":2,\"decode_ns\":3}", &t, &tr), 0);
    assert_int_equal(comment("{not json", &t, &tr), 0);
    assert_int_equal(comment("[1,2,3]", &t, &tr), 0);
    assert_int_equal(tr.queue_ns, 77);
}

static void truth_headers_of_a_whole_response(void **state)
{
    (void)state;
    lg_truth t = {0};
    const char *q = "X-Sim-Queue-Ns: 1200\r\n", *pf = "x-sim-prefill-ns:34\r\n",
               *d = "X-SIM-DECODE-NS: 560\r\n", *c = "x-sim-cached-tokens: 16\r\n";
    assert_int_equal(lg_chunk_truth_header(q, strlen(q), &t), 1);
    assert_int_equal(lg_chunk_truth_header(pf, strlen(pf), &t), 1);
    assert_int_equal(lg_chunk_truth_header(d, strlen(d), &t), 1);
    assert_int_equal(lg_chunk_truth_header(c, strlen(c), &t), 1);
    assert_true(t.queue_ns == 1200 && t.prefill_ns == 34 && t.decode_ns == 560 &&
                t.cached_tokens == 16);
    const char *other = "Content-Type: application/json\r\n", *bad = "X-Sim-Queue-Ns: -5\r\n",
               *status = "HTTP/1.1 200 OK\r\n", *longer = "X-Sim-Queue-Ns-2: 7\r\n";
    assert_int_equal(lg_chunk_truth_header(other, strlen(other), &t), 0);
    assert_int_equal(lg_chunk_truth_header(bad, strlen(bad), &t), 0);
    assert_int_equal(lg_chunk_truth_header(status, strlen(status), &t), 0);
    assert_int_equal(lg_chunk_truth_header(longer, strlen(longer), &t), 0);
    assert_true(t.queue_ns == 1200);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(completion_text_is_content),
        cmocka_unit_test(chat_role_chunk_is_not_content),
        cmocka_unit_test(chat_delta_content_is_content),
        cmocka_unit_test(finish_and_usage_are_taken),
        cmocka_unit_test(usage_only_chunk_with_empty_choices),
        cmocka_unit_test(long_finish_reason_is_truncated),
        cmocka_unit_test(non_streamed_bodies),
        cmocka_unit_test(done_and_error),
        cmocka_unit_test(malformed_chunks_are_refused),
        cmocka_unit_test(decode_reads_only_len_bytes),
        cmocka_unit_test(escapes_and_unusual_json),
        cmocka_unit_test(fast_path_agrees_with_cjson),
        cmocka_unit_test(stamp_comments),
        cmocka_unit_test(truth_comment),
        cmocka_unit_test(truth_headers_of_a_whole_response),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
