/* Tests of lg_extra (--extra-body and vLLM's sampling flags rendered into
 * the members every request body carries) and of the body that carries
 * them: valid JSON with them, refusals that name the flag and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_plan.h"

static int run(lg_opts *o, char *err, size_t n, int argc, char **argv)
{
    lg_opts_defaults(o, 1);
    int rc = lg_cli_parse(o, argc, argv, err, n);
    return rc ? rc : lg_cli_finish(o, err, n);
}

static void test_rendered_into_the_body(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    char *a[] = {"--extra-body",
                 "{\"chat_template_kwargs\":{\"enable_thinking\":false},\"x\":\"q\\\"\"}",
                 "--temperature",
                 "0.5",
                 "--top-k",
                 "-1",
                 "--served-model-name",
                 "m2"};
    assert_int_equal(run(&o, err, sizeof err, 8, a), 0);
    assert_string_equal(o.extra_members,
                        "\"chat_template_kwargs\":{\"enable_thinking\":false},\"x\":\"q\\\"\","
                        "\"temperature\":0.5,\"top_k\":-1");
    char *body;
    size_t len;
    assert_int_equal(lg_body_render(&o, "hi", 8, &body, &len), 0);
    cJSON *j = cJSON_Parse(body);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "model")->valuestring, "m2");
    assert_true(cJSON_GetObjectItem(j, "temperature")->valuedouble == 0.5);
    assert_true(cJSON_GetObjectItem(j, "top_k")->valuedouble == -1);
    assert_string_equal(cJSON_GetObjectItem(j, "x")->valuestring, "q\"");
    assert_null(cJSON_GetObjectItem(j, "top_p")); /* not given: not sent */
    assert_int_equal(cJSON_GetObjectItem(j, "max_tokens")->valueint, 8);
    cJSON_Delete(j);
    free(body);
    /* the random dataset asks to ignore EOS by default, as vLLM's bench */
    char *dflt[] = {"--model", "m"};
    assert_int_equal(run(&o, err, sizeof err, 2, dflt), 0);
    assert_int_equal(lg_body_render(&o, "hi", 8, &body, &len), 0);
    assert_non_null(strstr(body, ",\"ignore_eos\":true"));
    free(body);
    /* nothing given: the body is as before */
    char *none[] = {"--model", "m", "--no-ignore-eos"};
    assert_int_equal(run(&o, err, sizeof err, 3, none), 0);
    assert_string_equal(o.extra_members, "");
    assert_int_equal(lg_body_render(&o, "hi", 8, &body, &len), 0);
    assert_non_null(strstr(body, "\"ignore_eos\"") == NULL ? body : NULL);
    assert_true(body[len - 1] == '}' && strstr(body, ",}") == NULL);
    free(body);
}

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        const char *json, *says;
    } bad[] = {{"[1]", "must be a JSON object"},         {"{", "not valid JSON"},
               {"{\"model\":\"x\"}", "\"model\""},       {"{\"prompt\":\"x\"}", "\"prompt\""},
               {"{\"messages\":[]}", "\"messages\""},    {"{\"stream\":true}", "\"stream\""},
               {"{\"max_tokens\":3}", "\"max_tokens\""}, {"{\"top_p\":0.5}", "as --top-p does"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lg_opts o;
        char err[512];
        char *a[] = {"--extra-body", (char *)bad[i].json, "--top-p", "0.9"};
        int rc = run(&o, err, sizeof err, 4, a);
        if (rc != -EINVAL || !strstr(err, "--extra-body") || !strstr(err, bad[i].says) ||
            !strstr(err, bad[i].json))
            fail_msg("%s: rc %d, '%s'", bad[i].json, rc, err);
    }
    lg_opts o;
    char err[512];
    char *a[] = {"--top-p", "0"};
    assert_int_equal(run(&o, err, sizeof err, 2, a), -EINVAL);
    assert_non_null(strstr(err, "--top-p"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rendered_into_the_body),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
