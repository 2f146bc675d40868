/* Unit tests for lg_vllm: vLLM bench's own flags become loadgen's, the rest
 * pass through in order, the accepted-without-effect ones are noted, bad
 * values are refused with the flag; and the report's vLLM keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_test_args.h"
#include "lg_vllm.h"

static char notes[1024];

/* The space-separated words of line, as an argv (at most 32). */
static int split(const char *line, char *buf, size_t cap, char **av)
{
    snprintf(buf, cap, "%s", line);
    int n = 0;
    for (char *t = strtok(buf, " "); t && n < 32; t = strtok(NULL, " "))
        av[n++] = t;
    return n;
}

/* lg_vllm_args on the words of cmd. */
static int run(const char *cmd, lg_args *a, char *err, size_t errlen)
{
    char buf[1024], *av[32];
    int n = split(cmd, buf, sizeof buf, av);
    err[0] = '\0';
    return lg_vllm_args(n, av, a, notes, sizeof notes, err, errlen);
}

static void expect(const char *cmd, const char *want)
{
    lg_args a;
    char err[256];
    int rc = run(cmd, &a, err, sizeof err);
    lg_test_args_are(cmd, rc, &a, err, want);
}

static void expect_error(const char *cmd, const char *want)
{
    lg_args a;
    char err[256];
    int rc = run(cmd, &a, err, sizeof err);
    lg_test_refused(cmd, rc, &a, err, want);
}

static void host_and_port_build_the_base_url(void **state)
{
    (void)state;
    expect("loadgen --host 127.0.0.2 --port 8001 --num-prompts 5",
           "loadgen --num-prompts 5 --base-url http://127.0.0.2:8001");
    expect("loadgen --port=9000", "loadgen --base-url http://127.0.0.1:9000");
    expect("loadgen --host localhost", "loadgen --base-url http://localhost:8000");
    expect("loadgen --host ::1 --port 1", "loadgen --base-url http://[::1]:1");
    /* as in vLLM, --base-url wins */
    expect("loadgen --base-url http://127.0.0.1:7 --port 8",
           "loadgen --base-url http://127.0.0.1:7");
    if (!strstr(notes, "--host/--port: --base-url is given")) fail_msg("notes: %s", notes);
    expect("loadgen --model m", "loadgen --model m");
    assert_string_equal(notes, "");
    expect_error("loadgen --port 0", "--port: must be a port in [1, 65535], got '0'");
    expect_error("loadgen --port 80x", "got '80x'");
    expect_error("loadgen --port", "--port: must be a port");
    expect_error("loadgen --host=", "--host: needs a host name or address");
}

static void backend_picks_the_endpoint(void **state)
{
    (void)state;
    expect("l --backend vllm", "l --endpoint /v1/completions");
    expect("l --backend=openai-chat", "l --endpoint /v1/chat/completions");
    expect("l --backend openai --endpoint /v1/x", "l --endpoint /v1/x");
    expect("l --backend llama.cpp", "l --endpoint /v1/completions");
    expect_error("l --backend tgi", "--backend: loadgen speaks the OpenAI API");
    expect_error("l --backend", "got '(none)'");
}

static void flags_without_effect_are_noted(void **state)
{
    (void)state;
    expect("l --disable-tqdm --tokenizer t --seed 3", "l --no-progress --tokenizer t --seed 3");
    expect("l --metadata a=1 b=2 c=3 --num-prompts 4",
           "l --metadata a=1 --metadata b=2 --metadata c=3 --num-prompts 4");
    expect("l --metadata=tp=2", "l --metadata tp=2");
    assert_string_equal(notes, "");
    expect("l --random-prefix-len 0 --sharegpt-output-len 64 --logprobs 5 --trust-remote-code",
           "l --random-prefix-len 0 --sharegpt-output-len 64");
    if (strstr(notes, "--random-prefix-len")) fail_msg("a prefix is built: no note");
    if (strstr(notes, "--sharegpt-output-len") || !strstr(notes, "--logprobs 5: not requested") ||
        !strstr(notes, "--trust-remote-code"))
        fail_msg("notes: %s", notes);
    expect("l --random-prefix-len=100", "l --random-prefix-len 100");
    if (strstr(notes, "--random-prefix-len")) fail_msg("notes: %s", notes);
    expect_error("l --random-prefix-len -1", "--random-prefix-len: must be a whole number >= 0");
    expect_error("l --logprobs many", "--logprobs: must be a whole number");
    expect_error("l --sharegpt-output-len 0", "--sharegpt-output-len: must be a whole number >= 1");
}

static void a_vllm_docs_command_line_parses(void **state)
{
    (void)state;
    /* from vLLM's `bench serve` documentation, program name changed */
    const char *cmd = "loadgen --backend vllm --model NousResearch/Hermes-3-Llama-3.1-8B "
                      "--endpoint /v1/completions --dataset-name sharegpt --dataset-path "
                      "/d/ShareGPT_V3_unfiltered_cleaned_split.json --num-prompts 10";
    char buf[1024], *av[32];
    int n = split(cmd, buf, sizeof buf, av);
    lg_args a;
    char err[256];
    assert_int_equal(lg_vllm_args(n, av, &a, notes, sizeof notes, err, sizeof err), 0);
    lg_opts o;
    lg_opts_defaults(&o, 2);
    if (lg_cli_parse(&o, a.argc - 1, a.argv + 1, err, sizeof err) ||
        lg_cli_finish(&o, err, sizeof err))
        fail_msg("the CLI refused it: %s", err);
    lg_args_free(&a);
    assert_string_equal(o.endpoint, "/v1/completions");
    assert_int_equal(o.dataset, LG_DS_SHAREGPT);
    assert_int_equal(o.num_prompts, 10);
}

static void report_keys(void **state)
{
    (void)state;
    lg_opts o;
    lg_opts_defaults(&o, 2);
    snprintf(o.model, sizeof o.model, "m1");
    cJSON *j = cJSON_CreateObject();
    setenv("TZ", "UTC", 1);
    lg_vllm_report_keys(j, &o, 123, (time_t)1764580096); /* 2025-12-01 09:08:16 UTC */
    assert_string_equal(cJSON_GetObjectItem(j, "date")->valuestring, "20251201-090816");
    assert_true(cJSON_GetObjectItem(j, "num_prompts")->valuedouble == 123);
    assert_string_equal(cJSON_GetObjectItem(j, "tokenizer_id")->valuestring, "m1");
    cJSON_Delete(j);
    snprintf(o.tokenizer, sizeof o.tokenizer, "tok");
    j = cJSON_CreateObject();
    lg_vllm_report_keys(j, &o, 0, 0);
    assert_string_equal(cJSON_GetObjectItem(j, "tokenizer_id")->valuestring, "tok");
    cJSON_Delete(j);
    /* --metadata items become string keys; the report's own keys win */
    char *md[] = {"--metadata", " tp = 4 ", "--metadata", "num_prompts=x", "--metadata", "v=a=b"};
    char merr[128];
    assert_int_equal(lg_cli_parse(&o, 6, md, merr, sizeof merr), 0);
    j = cJSON_CreateObject();
    lg_vllm_report_keys(j, &o, 5, 0);
    lg_vllm_report_metadata(j, &o);
    assert_string_equal(cJSON_GetObjectItem(j, "tp")->valuestring, "4");
    assert_string_equal(cJSON_GetObjectItem(j, "v")->valuestring, "a=b");
    assert_true(cJSON_GetObjectItem(j, "num_prompts")->valuedouble == 5);
    assert_int_equal(cJSON_GetArraySize(j), 5);
    cJSON_Delete(j);
    char *nokv[] = {"--metadata", "tp"};
    assert_int_equal(lg_cli_parse(&o, 2, nokv, merr, sizeof merr), -EINVAL);
    if (!strstr(merr, "--metadata") || !strstr(merr, "expected KEY=VALUE")) fail_msg("%s", merr);
    /* the CLI stores --tokenizer */
    char *av[] = {"--tokenizer", "x/y"};
    char err[128];
    assert_int_equal(lg_cli_parse(&o, 2, av, err, sizeof err), 0);
    assert_string_equal(o.tokenizer, "x/y");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(host_and_port_build_the_base_url),
        cmocka_unit_test(backend_picks_the_endpoint),
        cmocka_unit_test(flags_without_effect_are_noted),
        cmocka_unit_test(a_vllm_docs_command_line_parses),
        cmocka_unit_test(report_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
