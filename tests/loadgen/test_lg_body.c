/* Tests of lg_body_render: the request body is valid JSON carrying the prompt
 * byte for byte whatever it contains, in the completions or chat shape. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_run.h"

static cJSON *render(const lg_opts *o, const char *prompt, int32_t max_tokens)
{
    char *body = NULL;
    size_t len = 0;
    assert_int_equal(lg_body_render(o, prompt, max_tokens, &body, &len), 0);
    assert_int_equal(strlen(body), len);
    cJSON *j = cJSON_ParseWithLength(body, len);
    if (!j) fail_msg("not JSON: %s", body);
    free(body);
    return j;
}

static void test_completions_body(void **state)
{
    (void)state;
    lg_opts o;
    lg_opts_defaults(&o, 1);
    const char *prompt = "say \"hi\"\n\ttab \\ back\x01 end \xc3\xa9";
    cJSON *j = render(&o, prompt, 7);
    assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "sim-model");
    assert_string_equal(cJSON_GetObjectItem(j, "prompt")->valuestring, prompt);
    assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 7);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "stream")));
    cJSON *so = cJSON_GetObjectItem(j, "stream_options");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(so, "include_usage")));
    assert_null(cJSON_GetObjectItem(j, "ignore_eos"));
    cJSON_Delete(j);
}

static void test_chat_no_stream_ignore_eos(void **state)
{
    (void)state;
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.chat = 1;
    o.stream = 0;
    o.ignore_eos = 1;
    strcpy(o.model, "m\"x");
    cJSON *j = render(&o, "hello world", 3);
    assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "m\"x");
    cJSON *msgs = cJSON_GetObjectItem(j, "messages");
    assert_int_equal(cJSON_GetArraySize(msgs), 1);
    cJSON *m = cJSON_GetArrayItem(msgs, 0);
    assert_string_equal(cJSON_GetObjectItem(m, "role")->valuestring, "user");
    assert_string_equal(cJSON_GetObjectItem(m, "content")->valuestring, "hello world");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(j, "stream")));
    assert_null(cJSON_GetObjectItem(j, "stream_options"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "ignore_eos")));
    assert_null(cJSON_GetObjectItem(j, "prompt"));
    cJSON_Delete(j);
}

/* --token-ids: the prompt's decimal words go out as an array of numbers,
 * in order, however the spaces run; chat keeps text. */
static void test_token_id_prompt(void **state)
{
    (void)state;
    lg_opts o;
    lg_opts_defaults(&o, 1);
    o.token_ids = 1;
    cJSON *j = render(&o, "5 0  31999 7", 3);
    cJSON *p = cJSON_GetObjectItem(j, "prompt");
    assert_true(cJSON_IsArray(p));
    assert_int_equal(cJSON_GetArraySize(p), 4);
    const int want[] = {5, 0, 31999, 7};
    for (int i = 0; i < 4; i++)
        assert_int_equal(cJSON_GetArrayItem(p, i)->valueint, want[i]);
    cJSON_Delete(j);
    /* pieces split inside an id join it */
    lg_body_piece pc[2] = {{.s = "12 3", .len = 4}, {.s = "4 56", .len = 4}};
    char *body;
    size_t len;
    assert_int_equal(lg_body_render_pieces(&o, pc, 2, 3, &body, &len), 0);
    assert_non_null(strstr(body, "\"prompt\":[12,34,56]"));
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_completions_body),
        cmocka_unit_test(test_token_id_prompt),
        cmocka_unit_test(test_chat_no_stream_ignore_eos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
