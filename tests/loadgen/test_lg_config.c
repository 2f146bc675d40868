/* Unit tests for lg_config: each Inference Perf key becomes its flag, and
 * every kind of mistake is refused with the key path and the value. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_config.h"
#include "lg_test_args.h"
#include "rb_opts.h"

/* The flags a config becomes, joined by single spaces. */
static void expect_args(const char *json, const char *want)
{
    lg_args a;
    char err[256] = "";
    int rc = lg_config_to_args(json, strlen(json), &a, err, sizeof err);
    lg_test_args_are(json, rc, &a, err, want);
}

static void expect_error(const char *json, const char *want)
{
    lg_args a;
    char err[256] = "";
    int rc = lg_config_to_args(json, strlen(json), &a, err, sizeof err);
    lg_test_refused(json, rc, &a, err, want);
}

static void empty_config_gives_no_flags(void **state)
{
    expect_args("{}", "");
    expect_args(" {\n}\n", "");
}

static void server_and_api(void **state)
{
    expect_args("{\"server\":{\"base_url\":\"http://127.0.0.1:8000\",\"model_name\":\"m\"}}",
                "--base-url http://127.0.0.1:8000 --model m");
    expect_args("{\"api\":{\"type\":\"completion\"}}", "--endpoint /v1/completions");
    expect_args("{\"api\":{\"type\":\"chat\",\"streaming\":false}}",
                "--endpoint /v1/chat/completions --no-stream");
    expect_args("{\"api\":{\"streaming\":true}}", "--stream");
}

static void load_types(void **state)
{
    expect_args("{\"load\":{\"type\":\"constant\"}}", "--burstiness inf");
    expect_args("{\"load\":{\"type\":\"poisson\"}}", "--burstiness 1");
    expect_args("{\"load\":{\"type\":\"concurrent\",\"concurrency\":8}}", "--max-concurrency 8");
    expect_args("{\"load\":{\"num_workers\":4,\"seed\":42}}", "--num-workers 4 --seed 42");
}

/* load.lora_traffic_split: --lora-modules NAME=SPLIT,..., lg_cli takes it;
 * refused by key path: negative, not summing to 1, empty names, shapes. */
static void load_lora_traffic_split(void **state)
{
    const char *json = "{\"load\":{\"lora_traffic_split\":[{\"name\":\"a\",\"split\":0.7},"
                       "{\"name\":\"b\",\"split\":0.3},{\"name\":\"c\",\"split\":0}]}}";
    expect_args(json, "--lora-modules a=0.7,b=0.3,c=0");
    lg_args a;
    char err[256] = "";
    assert_int_equal(lg_config_to_args(json, strlen(json), &a, err, sizeof err), 0);
    lg_opts o;
    lg_opts_defaults(&o, 2);
    if (lg_cli_parse(&o, a.argc, a.argv, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(o.n_lora, 3);
    assert_true(o.lora_split[0] == 0.7 && o.lora_split[2] == 0);
    lg_args_free(&a);
    expect_error("{\"load\":{\"lora_traffic_split\":[{\"name\":\"a\",\"split\":0.5},"
                 "{\"name\":\"b\",\"split\":0.4}]}}",
                 "config: load.lora_traffic_split: the splits sum to 0.9, not 1");
    expect_error("{\"load\":{\"lora_traffic_split\":[{\"name\":\"a\",\"split\":1.5},"
                 "{\"name\":\"b\",\"split\":-0.5}]}}",
                 "config: load.lora_traffic_split[1].split: must be a number >= 0, got -0.5");
    expect_error("{\"load\":{\"lora_traffic_split\":[{\"name\":\"\",\"split\":1}]}}",
                 "config: load.lora_traffic_split[0].name: must be a non-empty string");
    expect_error("{\"load\":{\"lora_traffic_split\":[{\"split\":1}]}}",
                 "config: load.lora_traffic_split[0].name: is required");
    expect_error("{\"load\":{\"lora_traffic_split\":[{\"name\":\"a\"}]}}",
                 "config: load.lora_traffic_split[0].split: is required");
    expect_error("{\"load\":{\"lora_traffic_split\":[]}}",
                 "config: load.lora_traffic_split: must be a non-empty array");
    expect_error("{\"load\":{\"lora_traffic_split\":[{\"name\":\"a\",\"split\":1,\"w\":2}]}}",
                 "config: load.lora_traffic_split[0].w: unknown key");
}

static void load_stages_and_interval(void **state)
{
    expect_args("{\"load\":{\"type\":\"poisson\",\"stages\":[{\"rate\":100,\"duration\":10},"
                "{\"rate\":2.5,\"duration\":\"500ms\"},{\"rate\":0.1,\"duration\":1.5}],"
                "\"interval\":2}}",
                "--burstiness 1 --stage 100:10s --stage 2.5:500ms --stage 0.1:1.5s "
                "--stage-pause 2s");
    expect_args("{\"load\":{\"interval\":0}}", "--stage-pause 0s");
    /* A bare number in a string is seconds, and the flag says so. */
    expect_args("{\"load\":{\"stages\":[{\"rate\":20,\"duration\":\"30\"}],\"interval\":\"1.5\"}}",
                "--stage 20:30s --stage-pause 1.5s");
}

static void load_sweep(void **state)
{
    expect_args("{\"load\":{\"sweep\":{\"type\":\"geometric\",\"num_stages\":5,"
                "\"max_rate\":400,\"stage_duration\":30}}}",
                "--sweep geometric --sweep-stages 5 --sweep-max-rate 400 --stage-duration 30s");
    /* Inference Perf's sweep (no max_rate, loadgen's own key): its probe */
    expect_args("{\"load\":{\"sweep\":{\"type\":\"linear\"}}}", "--sweep-probe --sweep linear");
    expect_args("{\"load\":{\"sweep\":{\"type\":\"linear\",\"timeout\":60,\"num_stages\":10,"
                "\"stage_duration\":60,\"saturation_percentile\":95,\"num_requests\":300}}}",
                "--sweep-probe --sweep linear --sweep-stages 10 --stage-duration 60s "
                "--sweep-probe-requests 300 --sweep-probe-timeout 60s --sweep-probe-percentile 95");
}

static void data_keys(void **state)
{
    expect_args("{\"data\":{\"type\":\"random\",\"input_distribution\":{\"mean\":512},"
                "\"output_distribution\":{\"mean\":128}}}",
                "--dataset-name random --random-input-len 512 --random-output-len 128");
    expect_args("{\"data\":{\"type\":\"shared_prefix\",\"shared_prefix\":{\"num_groups\":4,"
                "\"num_prompts_per_group\":8,\"system_prompt_len\":100,\"question_len\":20}}}",
                "--dataset-name prefix --prefix-groups 4 --prefix-prompts-per-group 8 "
                "--prefix-system-len 100 --prefix-question-len 20");
    expect_args("{\"data\":{\"type\":\"sharegpt\",\"path\":\"/data/sg.json\"}}",
                "--dataset-name sharegpt --dataset-path /data/sg.json");
    expect_args("{\"data\":{\"type\":\"trace\",\"path\":\"azure.csv\"}}",
                "--dataset-name trace --dataset-path azure.csv");
}

static void report_keys(void **state)
{
    expect_args("{\"report\":{\"request_lifecycle\":{\"percentiles\":[50,90,99,99.9]}}}",
                "--metric-percentiles 50,90,99,99.9");
    expect_args("{\"report\":{\"goodput\":{\"constraints\":{\"ttft\":200,\"tpot\":50.5,"
                "\"e2e\":3000}}}}",
                "--goodput ttft:200 --goodput tpot:50.5 --goodput e2el:3000");
}

static void a_whole_config_in_fixed_order(void **state)
{
    expect_args("{\"report\":{\"goodput\":{\"constraints\":{\"itl\":20}}},"
                "\"data\":{\"type\":\"random\"},"
                "\"load\":{\"type\":\"constant\",\"stages\":[{\"rate\":10,\"duration\":5}]},"
                "\"api\":{\"type\":\"chat\"},"
                "\"server\":{\"base_url\":\"http://[::1]:9000\"}}",
                "--base-url http://[::1]:9000 --endpoint /v1/chat/completions "
                "--burstiness inf --stage 10:5s --dataset-name random --goodput itl:20");
}

static void syntax_and_shape_errors(void **state)
{
    expect_error("", "config: line 1: not valid JSON");
    expect_error("{\n\"load\": {\n\"type\": }\n}", "config: line 3: not valid JSON");
    expect_error("[1]", "config: (top level): must be an object, got [1]");
    expect_error("{} {}", "unexpected text after the JSON object");
    expect_error(
        "{\"lod\":{}}",
        "config: lod: unknown key (known here: load, api, server, data, report, metrics), got {}");
    expect_error("{\"load\":{\"tpye\":\"poisson\"}}", "config: load.tpye: unknown key");
    expect_error("{\"load\":{},\"load\":{}}", "config: load: given twice");
    expect_error("{\"load\":[]}", "config: load: must be an object, got []");
}

static void load_errors(void **state)
{
    expect_error("{\"load\":{\"type\":\"bursty\"}}",
                 "config: load.type: must be \"constant\", \"poisson\" or \"concurrent\", got "
                 "\"bursty\"");
    expect_error("{\"load\":{\"type\":\"concurrent\"}}",
                 "config: load.concurrency: is required when load.type is \"concurrent\"");
    expect_error("{\"load\":{\"concurrency\":0}}",
                 "config: load.concurrency: must be a whole number >= 1");
    expect_error("{\"load\":{\"stages\":{}}}", "config: load.stages: must be an array");
    expect_error("{\"load\":{\"stages\":[{\"rate\":1,\"duration\":1},{\"rate\":1,\"duration\":1},"
                 "{\"rate\":-5,\"duration\":1}]}}",
                 "config: load.stages[2].rate: must be a number > 0, got -5");
    expect_error("{\"load\":{\"stages\":[{\"rate\":\"fast\",\"duration\":1}]}}",
                 "load.stages[0].rate: must be a number > 0, got \"fast\"");
    expect_error("{\"load\":{\"stages\":[{\"duration\":1}]}}", "load.stages[0].rate: is required");
    expect_error("{\"load\":{\"stages\":[{\"rate\":1}]}}", "load.stages[0].duration: is required");
    expect_error("{\"load\":{\"stages\":[{\"rate\":1,\"duration\":0}]}}",
                 "load.stages[0].duration: must be seconds > 0");
    expect_error("{\"load\":{\"stages\":[{\"rate\":1,\"duration\":1e-10}]}}",
                 "load.stages[0].duration: must be seconds > 0");
    expect_error("{\"load\":{\"stages\":[{\"rate\":1,\"duration\":\"soon\"}]}}", "got \"soon\"");
    expect_error("{\"load\":{\"stages\":[{\"rate\":1,\"duration\":1,\"ramp\":2}]}}",
                 "config: load.stages[0].ramp: unknown key (known here: rate, duration)");
    expect_error("{\"load\":{\"stages\":[3]}}", "config: load.stages[0]: must be an object, got 3");
    expect_error("{\"load\":{\"interval\":-1}}", "config: load.interval: must be seconds >= 0");
    expect_error("{\"load\":{\"sweep\":{\"type\":\"log\"}}}",
                 "config: load.sweep.type: must be \"linear\" or \"geometric\", got \"log\"");
    expect_error("{\"load\":{\"sweep\":{\"num_stages\":2.5}}}",
                 "config: load.sweep.num_stages: must be a whole number >= 1 and <= 64, got 2.5");
    expect_error("{\"load\":{\"sweep\":{\"max_rate\":0}}}",
                 "load.sweep.max_rate: must be a number > 0");
    expect_error("{\"load\":{\"sweep\":{\"timeout\":0}}}",
                 "config: load.sweep.timeout: must be seconds > 0");
    expect_error("{\"load\":{\"sweep\":{\"saturation_percentile\":101}}}",
                 "load.sweep.saturation_percentile: must be a percentile in [0, 100]");
    expect_error("{\"load\":{\"sweep\":{\"num_requests\":0}}}",
                 "load.sweep.num_requests: must be a whole number");
    expect_error("{\"load\":{\"sweep\":{\"stage_duration\":true}}}",
                 "load.sweep.stage_duration: must be seconds > 0");
    expect_error("{\"load\":{\"num_workers\":\"4\"}}",
                 "config: load.num_workers: must be a whole number >= 1 and <= 1024, got \"4\"");
    expect_error("{\"load\":{\"seed\":-1}}", "config: load.seed: must be a whole number >= 0");
}

static void other_section_errors(void **state)
{
    expect_error("{\"api\":{\"type\":\"embeddings\"}}",
                 "config: api.type: must be \"completion\" or \"chat\", got \"embeddings\"");
    expect_error("{\"api\":{\"streaming\":\"no\"}}",
                 "config: api.streaming: must be true or false, got \"no\"");
    expect_error("{\"server\":{\"base_url\":5}}",
                 "config: server.base_url: must be a non-empty string, got 5");
    expect_error("{\"server\":{\"model_name\":\"\"}}",
                 "config: server.model_name: must be a non-empty");
    expect_error("{\"data\":{\"type\":\"csv\"}}", "config: data.type: must be \"random\"");
    expect_error("{\"data\":{\"path\":null}}",
                 "config: data.path: must be a non-empty string, got null");
    expect_error("{\"data\":{\"input_distribution\":{\"mean\":0}}}",
                 "config: data.input_distribution.mean: must be a whole number >= 1");
    expect_error("{\"data\":{\"input_distribution\":{\"std_dev\":3}}}",
                 "config: data.input_distribution.std_dev: unknown key (known here: mean)");
    expect_error("{\"data\":{\"output_distribution\":7}}",
                 "config: data.output_distribution: must be an object, got 7");
    expect_error("{\"data\":{\"shared_prefix\":{\"num_groups\":0}}}",
                 "config: data.shared_prefix.num_groups: must be a whole number >= 1");
    expect_error("{\"report\":{\"request_lifecycle\":{\"percentiles\":[50,101]}}}",
                 "config: report.request_lifecycle.percentiles[1]: must be a number in (0, 100], "
                 "got 101");
    expect_error("{\"report\":{\"request_lifecycle\":{\"percentiles\":[]}}}",
                 "report.request_lifecycle.percentiles: must be a non-empty array");
    expect_error("{\"report\":{\"request_lifecycle\":{\"summary\":true}}}",
                 "config: report.request_lifecycle.summary: unknown key");
    expect_error("{\"report\":{\"goodput\":{\"constraints\":{\"latency\":5}}}}",
                 "config: report.goodput.constraints.latency: unknown key");
    expect_error("{\"report\":{\"goodput\":{\"constraints\":{\"ttft\":\"200ms\"}}}}",
                 "config: report.goodput.constraints.ttft: must be a number of milliseconds > 0, "
                 "got \"200ms\"");
    expect_error("{\"report\":{\"goodput\":{\"constraints\":{\"ttft\":1,\"ttft\":2}}}}",
                 "report.goodput.constraints.ttft: given twice");
}

static void long_values_are_shortened_in_messages(void **state)
{
    char json[512];
    snprintf(json, sizeof json, "{\"api\":{\"type\":\"%0200d\"}}", 7);
    lg_args a;
    char err[256] = "";
    assert_int_equal(lg_config_to_args(json, strlen(json), &a, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "...")); /* the value is cut, the key path is whole */
    assert_non_null(strstr(err, "config: api.type:"));
    /* A NULL err is allowed. */
    assert_int_equal(lg_config_to_args(json, strlen(json), &a, NULL, 0), -EINVAL);
}

/* The contract with the CLI: every flag a config becomes is one that
 * lg_cli_parse takes, with the meaning the config key has. */
static void the_cli_takes_every_flag(void **state)
{
    const char *json =
        "{\"server\":{\"base_url\":\"http://127.0.0.1:9001\",\"model_name\":\"m2\"},"
        "\"api\":{\"type\":\"chat\",\"streaming\":false},"
        "\"load\":{\"type\":\"constant\",\"stages\":[{\"rate\":100,\"duration\":10},"
        "{\"rate\":2.5,\"duration\":\"500ms\"}],\"interval\":2,\"num_workers\":3,\"seed\":42,"
        "\"concurrency\":7},"
        "\"data\":{\"type\":\"shared_prefix\",\"path\":\"/tmp/x\","
        "\"input_distribution\":{\"mean\":300},\"output_distribution\":{\"mean\":30},"
        "\"shared_prefix\":{\"num_groups\":5,\"num_prompts_per_group\":6,"
        "\"system_prompt_len\":0,\"question_len\":8}},"
        "\"report\":{\"request_lifecycle\":{\"percentiles\":[50,99.9]},"
        "\"goodput\":{\"constraints\":{\"ttft\":200,\"e2e\":1500}}}}";
    lg_args a;
    char err[256] = "";
    assert_int_equal(lg_config_to_args(json, strlen(json), &a, err, sizeof err), 0);
    lg_opts o;
    lg_opts_defaults(&o, 2);
    if (lg_cli_parse(&o, a.argc, a.argv, err, sizeof err) != 0)
        fail_msg("lg_cli_parse refused the config's flags: %s", err);
    assert_string_equal(o.base_url, "http://127.0.0.1:9001");
    assert_string_equal(o.model, "m2");
    assert_string_equal(o.endpoint, "/v1/chat/completions");
    assert_int_equal(o.stream, 0);
    assert_true(isinf(o.burstiness));
    assert_int_equal(o.n_stages, 2);
    assert_true(o.stages[0].rate_per_s == 100 && o.stages[0].duration_ns == 10000000000LL);
    assert_true(o.stages[1].rate_per_s == 2.5 && o.stages[1].duration_ns == 500000000);
    assert_int_equal(o.stage_pause_ns, 2000000000LL);
    assert_int_equal(o.num_workers, 3);
    assert_int_equal(o.seed, 42);
    assert_int_equal(o.max_concurrency, 7);
    assert_int_equal(o.dataset, LG_DS_PREFIX);
    assert_string_equal(o.dataset_path, "/tmp/x");
    assert_int_equal(o.random_input_len, 300);
    assert_int_equal(o.random_output_len, 30);
    assert_int_equal(o.prefix_groups, 5);
    assert_int_equal(o.prefix_prompts_per_group, 6);
    assert_int_equal(o.prefix_system_len, 0);
    assert_int_equal(o.prefix_question_len, 8);
    assert_int_equal(o.n_percentiles, 2);
    assert_true(o.percentiles[0] == 50 && o.percentiles[1] == 99.9);
    assert_true(o.goodput.enabled);
    assert_int_equal(o.goodput.slo_ns[LG_M_TTFT], 200000000);
    assert_int_equal(o.goodput.slo_ns[LG_M_E2EL], 1500000000);
    lg_args_free(&a);

    const char *sweep = "{\"load\":{\"type\":\"poisson\",\"sweep\":{\"type\":\"linear\","
                        "\"num_stages\":4,\"max_rate\":40,\"stage_duration\":3}},"
                        "\"api\":{\"type\":\"completion\",\"streaming\":true},"
                        "\"data\":{\"type\":\"sharegpt\",\"path\":\"sg.json\"}}";
    assert_int_equal(lg_config_to_args(sweep, strlen(sweep), &a, err, sizeof err), 0);
    lg_opts_defaults(&o, 2);
    o.stream = 0;
    if (lg_cli_parse(&o, a.argc, a.argv, err, sizeof err) != 0)
        fail_msg("lg_cli_parse refused the config's flags: %s", err);
    assert_true(o.burstiness == 1);
    assert_int_equal(o.sweep, LG_SWEEP_LINEAR);
    assert_int_equal(o.sweep_stages, 4);
    assert_true(o.sweep_max_rate == 40);
    assert_int_equal(o.stage_duration_ns, 3000000000LL);
    assert_string_equal(o.endpoint, "/v1/completions");
    assert_int_equal(o.stream, 1);
    assert_int_equal(o.dataset, LG_DS_SHAREGPT);
    lg_args_free(&a);

    /* A duration string without a unit is seconds, as on the command line. */
    const char *bare = "{\"load\":{\"stages\":[{\"rate\":1,\"duration\":\"10\"}],"
                       "\"interval\":\"0.5\"}}";
    assert_int_equal(lg_config_to_args(bare, strlen(bare), &a, err, sizeof err), 0);
    lg_opts_defaults(&o, 2);
    if (lg_cli_parse(&o, a.argc, a.argv, err, sizeof err) != 0)
        fail_msg("lg_cli_parse refused the config's flags: %s", err);
    assert_int_equal(o.stages[0].duration_ns, 10000000000LL);
    assert_int_equal(o.stage_pause_ns, 500000000LL);
    lg_args_free(&a);
}

/* The keys that are one flag's come from the options table: every entry
 * with a key (but those whose values lg_config shapes itself: stages, the
 * dataset's and the API's names, percentiles, goodput) turns a value of
 * its type into that flag, and lg_cli_parse takes it. */
static void every_key_of_the_table_becomes_its_flag(void **state)
{
    static const char *const shaped[] = {"load.stages",
                                         "load.lora_traffic_split",
                                         "data.type",
                                         "api.type",
                                         "report.request_lifecycle.percentiles",
                                         "report.goodput.constraints",
                                         NULL};
    int tried = 0;
    for (size_t i = 0; i < lg_cli_spec.n; i++) {
        const rb_opt *e = &lg_cli_spec.opts[i];
        int skip = !e->key;
        for (int k = 0; shaped[k] && !skip; k++)
            skip = strcmp(shaped[k], e->key) == 0;
        if (skip) continue;
        char value[64], want_value[64];
        switch (e->type) {
        case RB_OPT_INT:
            snprintf(value, sizeof value, "%lld", (long long)(e->lo > 0 ? e->lo : 1) + 1);
            snprintf(want_value, sizeof want_value, "%s", value);
            break;
        case RB_OPT_SECONDS:
            snprintf(value, sizeof value, "3");
            snprintf(want_value, sizeof want_value, "3s");
            break;
        case RB_OPT_DOUBLE:
            snprintf(value, sizeof value, "7.5");
            snprintf(want_value, sizeof want_value, "7.5");
            break;
        case RB_OPT_STR:
            snprintf(value, sizeof value, "\"v\"");
            snprintf(want_value, sizeof want_value, "v");
            break;
        case RB_OPT_CHOICE:
            snprintf(value, sizeof value, "\"%s\"", e->choices[0].name);
            snprintf(want_value, sizeof want_value, "%s", e->choices[0].name);
            break;
        default:
            fail_msg("--%s: key '%s' on a type the config cannot give", e->name, e->key);
        }
        /* {"a":{"b":VALUE}} from "a.b" */
        char json[512] = "", tail[64] = "";
        int depth = 0;
        for (const char *k = e->key; *k; depth++) {
            size_t l = strcspn(k, ".");
            size_t n = strlen(json);
            snprintf(json + n, sizeof json - n, "{\"%.*s\":", (int)l, k);
            k += l + (k[l] == '.');
        }
        size_t n = strlen(json);
        snprintf(json + n, sizeof json - n, "%s", value);
        for (int d = 0; d < depth; d++)
            strcat(tail, "}");
        strcat(json, tail);
        char want[160];
        /* a sweep without loadgen's max_rate is Inference Perf's: its probe */
        int probe =
            strncmp(e->key, "load.sweep.", 11) == 0 && strcmp(e->key, "load.sweep.max_rate");
        snprintf(want, sizeof want, "%s--%s %s", probe ? "--sweep-probe " : "", e->name,
                 want_value);
        lg_args a;
        char err[256] = "";
        int rc = lg_config_to_args(json, strlen(json), &a, err, sizeof err);
        if (rc == 0) {
            lg_opts o;
            lg_opts_defaults(&o, 2);
            if (lg_cli_parse(&o, a.argc, a.argv, err, sizeof err) != 0)
                fail_msg("%s: lg_cli_parse refused: %s", json, err);
        }
        lg_test_args_are(json, rc, &a, err, want);
        tried++;
    }
    assert_true(tried >= 16); /* the server, load, sweep, data and prefix keys */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_config_gives_no_flags),
        cmocka_unit_test(server_and_api),
        cmocka_unit_test(load_types),
        cmocka_unit_test(load_lora_traffic_split),
        cmocka_unit_test(load_stages_and_interval),
        cmocka_unit_test(load_sweep),
        cmocka_unit_test(data_keys),
        cmocka_unit_test(report_keys),
        cmocka_unit_test(a_whole_config_in_fixed_order),
        cmocka_unit_test(syntax_and_shape_errors),
        cmocka_unit_test(load_errors),
        cmocka_unit_test(other_section_errors),
        cmocka_unit_test(long_values_are_shortened_in_messages),
        cmocka_unit_test(the_cli_takes_every_flag),
        cmocka_unit_test(every_key_of_the_table_becomes_its_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
