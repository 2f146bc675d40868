/* Unit tests for lg_cfgfile: Inference Perf's config schema as it is today,
 * in YAML or JSON, becomes loadgen's flags; the keys without effect are named
 * in a note, and typos and wrong types are still errors with their path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lg_cfgfile.h"
#include "lg_cli.h"
#include "lg_test_args.h"

static char notes[2048];

/* The flags a config becomes, joined by single spaces; notes in `notes`. */
static void expect_args(const char *txt, const char *want)
{
    lg_args a;
    char err[256] = "";
    int rc = lg_cfgfile_to_args(txt, strlen(txt), &a, notes, sizeof notes, err, sizeof err);
    lg_test_args_are(txt, rc, &a, err, want);
}

static void expect_error(const char *txt, const char *want)
{
    lg_args a;
    char err[256] = "";
    int rc = lg_cfgfile_to_args(txt, strlen(txt), &a, notes, sizeof notes, err, sizeof err);
    lg_test_refused(txt, rc, &a, err, want);
    assert_string_equal(notes, "");
}

static void expect_note(const char *want)
{
    if (!strstr(notes, want)) fail_msg("notes '%s' do not contain '%s'", notes, want);
}

static void yaml_and_json_give_the_same_flags(void **state)
{
    (void)state;
    const char *yaml = "server:\n  base_url: http://127.0.0.1:9000\n  model_name: m\n"
                       "load:\n  type: poisson\n  stages:\n  - rate: 5\n    duration: 2\n";
    const char *want = "--base-url http://127.0.0.1:9000 --model m --burstiness 1 --stage 5:2s";
    expect_args(yaml, want);
    assert_string_equal(notes, "");
    expect_args("{\"server\":{\"base_url\":\"http://127.0.0.1:9000\",\"model_name\":\"m\"},"
                "\"load\":{\"type\":\"poisson\",\"stages\":[{\"rate\":5,\"duration\":2}]}}",
                want);
    /* Inference Perf pauses 1 s between stages by default */
    expect_args("load: {stages: [{rate: 1, duration: 2}, {rate: 2, duration: 2}]}",
                "--stage 1:2s --stage 2:2s --stage-pause 1s");
    expect_args("load: {interval: 0, stages: [{rate: 1, duration: 2}, {rate: 2, duration: 2}]}",
                "--stage 1:2s --stage 2:2s --stage-pause 0s");
    /* flow YAML that starts like JSON but is not */
    expect_args("{load: {seed: 3}}", "--seed 3");
    expect_args("", "");
}

static void syntax_errors_name_the_line(void **state)
{
    (void)state;
    expect_error("{\"load\": {\n\"seed\": 3,,\n}}", "config: line 2: not valid JSON");
    expect_error("load:\n  seed: 3\n   x: [\n", "config: line 3: not valid YAML");
    expect_error("[1, 2]", "config: (top level): must be an object");
}

static void goodput_constraints_are_seconds(void **state)
{
    (void)state;
    const char *cfg = "report:\n  goodput:\n    constraints:\n      ttft: 0.5\n"
                      "      request_latency: 2\n      tpot: 0.025\n";
    expect_args(cfg, "--goodput ttft:500 --goodput tpot:25 --goodput e2el:2000");
    lg_args a;
    char err[256];
    assert_int_equal(lg_cfgfile_to_args(cfg, strlen(cfg), &a, NULL, 0, err, sizeof err), 0);
    lg_opts o;
    lg_opts_defaults(&o, 2);
    assert_int_equal(lg_cli_parse(&o, a.argc, a.argv, err, sizeof err), 0);
    lg_args_free(&a);
    assert_int_equal(o.goodput.slo_ns[LG_M_TTFT], 500000000LL);
    assert_int_equal(o.goodput.slo_ns[LG_M_TPOT], 25000000LL);
    assert_int_equal(o.goodput.slo_ns[LG_M_E2EL], 2000000000LL);
    expect_error("report: {goodput: {constraints: {ttft: 0}}}",
                 "config: report.goodput.constraints.ttft: must be a number of seconds > 0");
    expect_error("report: {goodput: {constraints: {ttft: \"1s\"}}}", "got \"1s\"");
    expect_error("report: {goodput: {constraints: {tfft: 1}}}",
                 "report.goodput.constraints.tfft: unknown key");
}

static void data_types_and_shared_prefix_names(void **state)
{
    (void)state;
    expect_args("data: {type: shareGPT, path: /d.json}",
                "--dataset-name sharegpt --dataset-path /d.json");
    expect_args("data:\n  type: synthetic\n  input_distribution: {min: 10, max: 100, mean: 50, "
                "std_dev: 10}\n",
                "--dataset-name random --random-input-len 50 --input-distribution "
                "mean:50,std_dev:10,min:10,max:100");
    expect_note("data.type synthetic: random prompts");
    expect_note("data.input_distribution: lengths drawn as Inference Perf draws them");
    expect_args("data: {output_distribution: {type: lognormal, mean: 150, std_dev: 40}}",
                "--random-output-len 150 --output-distribution mean:150,std_dev:40,type:lognormal");
    expect_error("data: {input_distribution: {mean: 5, std_dev: x}}",
                 "data.input_distribution.std_dev: must be a number");
    expect_args("data:\n  type: shared_prefix\n  shared_prefix:\n    num_unique_system_prompts: 3\n"
                "    num_users_per_system_prompt: 4\n    system_prompt_len: 100\n"
                "    question_len: 50\n    output_len: 20\n    seed: 42\n",
                "--seed 42 --dataset-name prefix --prefix-groups 3 --prefix-prompts-per-group 4 "
                "--prefix-system-len 100 --prefix-question-len 50 --random-output-len 20");
    /* the older names still work, and the load's seed wins over the prompts' */
    expect_args("load: {base_seed: 7}\ndata: {shared_prefix: {num_groups: 2, seed: 1}}",
                "--seed 7 --prefix-groups 2");
    expect_note("data.shared_prefix.seed: the load's seed is used");
    expect_args("data:\n  shared_prefix:\n    question_len: {type: skew_normal, mean: 199.6, "
                "std_dev: 80}\n    output_len: {type: lognormal, mean: 150}\n",
                "--prefix-question-len 200 --random-output-len 150");
    expect_note("data.shared_prefix.question_len: a distribution; every prompt uses its mean, 200");
    expect_args("data: {type: shared_prefix, shared_prefix: {enable_multi_turn_chat: true}}",
                "--dataset-name prefix --prefix-multi-turn");
    expect_args("data: {shared_prefix: {enable_multi_turn_chat: false}}", "");
    expect_args("data: {shared_prefix: {enable_multi_turn_chat: true}}", "");
    expect_note("enable_multi_turn_chat: has no effect without data.type shared_prefix");
    expect_error("data: {shared_prefix: {enable_multi_turn_chat: 1}}",
                 "data.shared_prefix.enable_multi_turn_chat");
    expect_error("data: {shared_prefix: {num_unique_system_prompts: 2, num_groups: 3}}",
                 "data.shared_prefix.num_groups: given twice");
    expect_error("data: {shared_prefix: {output_len: 0}}",
                 "data.shared_prefix.output_len: must be a whole number >= 1, got 0");
    expect_error("data: {shared_prefix: {question_len: {type: normal}}}",
                 "data.shared_prefix.question_len: a distribution needs a number \"mean\"");
    expect_error("data: {type: ShareGpt}", "data.type: must be");
}

static void closed_loop_stages(void **state)
{
    (void)state;
    expect_args("load:\n  type: concurrent\n  stages:\n  - concurrency_level: 8\n"
                "    num_requests: 200\n",
                "--max-concurrency 8 --num-prompts 200");
    /* more than one: closed stages in turn, Inference Perf's 1 s between them */
    expect_args(
        "load:\n  type: concurrent\n  stages:\n  - {concurrency_level: 8, num_requests: 10}\n"
        "  - {concurrency_level: 16, num_requests: 30}\n",
        "--stage-pause 1s --closed-stage 8:10 --closed-stage 16:30");
    expect_args("load:\n  type: concurrent\n  interval: 0.5\n  stages:\n"
                "  - {concurrency_level: 1, num_requests: 2}\n"
                "  - {concurrency_level: 2, num_requests: 4}\n"
                "  - {concurrency_level: 4, num_requests: 8}\n",
                "--stage-pause 0.5s --closed-stage 1:2 --closed-stage 2:4 --closed-stage 4:8");
    expect_error("load: {type: concurrent, stages: [{concurrency_level: 8, num_requests: 1}, "
                 "{concurrency_level: 2}]}",
                 "load.stages[1]: needs both concurrency_level and num_requests");
    expect_error("load: {type: concurrent, stages: [{concurrency_level: 8}]}",
                 "load.stages[0]: needs both concurrency_level and num_requests");
    expect_error(
        "load: {type: concurrent, stages: [{concurrency_level: 8, num_requests: 1, x: 1}]}",
        "load.stages[0].x: unknown key in a concurrent stage");
    expect_error("load: {type: concurrent, stages: [{concurrency_level: 0.5, num_requests: 1}]}",
                 "load.stages[0].concurrency_level: must be a whole number >= 1, got 0.5");
    /* rate stages under a concurrent load stay lg_config's to refuse */
    expect_error("load: {type: constant, stages: [{concurrency_level: 8, num_requests: 1}]}",
                 "load.stages[0].concurrency_level: unknown key");
}

static void trace_replay(void **state)
{
    (void)state;
    const char *cfg = "load:\n  type: trace_replay\n  trace:\n    file: ./traces/trace.csv\n"
                      "    format: AzurePublicDataset\n  stages:\n  - rate: 1\n    duration: 30\n"
                      "data:\n  type: random\n  trace:\n    file: ./traces/trace.csv\n"
                      "    format: AzurePublicDataset\n";
    expect_args(cfg, "--dataset-name trace --dataset-path ./traces/trace.csv");
    expect_note("load.stages: a trace is replayed at its own timestamps");
    expect_args("load: {type: trace_replay, trace: {file: t.csv}}",
                "--dataset-name trace --dataset-path t.csv");
    expect_error("load: {type: trace_replay}", "load.trace: is required by load.type");
    expect_error("load: {type: trace_replay, trace: {file: t.csv, format: Mooncake}}",
                 "load.trace.format: must be \"AzurePublicDataset\", got \"Mooncake\"");
    expect_error("load: {type: trace_replay, trace: {file: a.csv}}\ndata: {trace: {file: b.csv}}",
                 "data.trace: must name the same file as load.trace");
    expect_error("load: {type: trace_replay, trace: {file: a.csv}}\ndata: {type: shareGPT}",
                 "data.type: must be \"random\" (or absent)");
    expect_error("load: {type: trace_replay, trace: {file: a.csv, speed: 2}}",
                 "load.trace.speed: unknown key");
}

static void load_server_and_report_keys(void **state)
{
    (void)state;
    expect_args("load: {base_seed: 1234, worker_max_concurrency: 10, request_timeout: 60.5, "
                "worker_max_tcp_connections: 2500, circuit_breakers: [b]}",
                "--seed 1234 --max-connections-per-worker 10 --request-timeout 60.5s");
    expect_note("load.circuit_breakers, load.worker_max_tcp_connections");
    expect_args("server: {type: vllm, ignore_eos: true, base_url: \"http://0.0.0.0:8000\"}",
                "--base-url http://127.0.0.1:8000 --ignore-eos");
    expect_note("server.base_url http://0.0.0.0:8000: 0.0.0.0 means this host; connecting to "
                "http://127.0.0.1:8000");
    expect_note("server.type");
    expect_args("server: {ignore_eos: false}", "--no-ignore-eos");
    /* Inference Perf's client certificate and key (mutual TLS) */
    expect_args("server: {cert_path: /tmp/c.pem, key_path: /tmp/k.pem}",
                "--cert /tmp/c.pem --key /tmp/k.pem");
    expect_args("tokenizer: {pretrained_model_name_or_path: m}\nmetrics: {type: prometheus}\n"
                "storage: {local_storage: {path: x}}\n"
                "report:\n  request_lifecycle: {summary: true, per_stage: true, per_request: "
                "false, percentiles: [50, 99]}\n  prometheus: {summary: true}\n",
                "--metric-percentiles 50,99");
    expect_note("accepted without effect (they configure parts loadgen does not have): tokenizer, "
                "metrics, storage, report.prometheus, report.request_lifecycle.summary, "
                "report.request_lifecycle.per_stage, report.request_lifecycle.per_request\n");
    /* typos and wrong types are still errors with their path */
    expect_error("tokenzer: {}", "config: tokenzer: unknown key");
    expect_error("server: {tpye: vllm}", "config: server.tpye: unknown key");
    expect_error("server: {ignore_eos: \"yes\"}", "server.ignore_eos: must be true or false");
    expect_error("load: {request_timeout: -1}",
                 "load.request_timeout: must be a number of seconds");
    expect_error("load: {worker_max_concurrency: 0}", "load.worker_max_concurrency: must be");
    expect_error("load: {base_seed: 1, seed: 2}", "load.seed: given twice");
    expect_error("report: {request_lifecycle: {per_stage: true, percentile: [1]}}",
                 "report.request_lifecycle.percentile: unknown key");
}

static void unspecified_host_is_this_host(void **state)
{
    (void)state;
    char u[64];
    snprintf(u, sizeof u, "http://0.0.0.0:8000/v1");
    assert_int_equal(lg_url_unspecified_to_loopback(u, sizeof u), 1);
    assert_string_equal(u, "http://127.0.0.1:8000/v1");
    snprintf(u, sizeof u, "https://0.0.0.0");
    assert_int_equal(lg_url_unspecified_to_loopback(u, sizeof u), 1);
    assert_string_equal(u, "https://127.0.0.1");
    static const char *const keep[] = {"http://0.0.0.01:80", "http://10.0.0.0:1", "ftp://0.0.0.0",
                                       "http://127.0.0.1:8000", "http://0.0.0.0.example:1"};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        snprintf(u, sizeof u, "%s", keep[i]);
        assert_int_equal(lg_url_unspecified_to_loopback(u, sizeof u), 0);
        assert_string_equal(u, keep[i]);
    }
    /* no room for the two more bytes: left as it is */
    char small[17] = "http://0.0.0.0:1";
    assert_int_equal(lg_url_unspecified_to_loopback(small, sizeof small), 0);
    assert_string_equal(small, "http://0.0.0.0:1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(yaml_and_json_give_the_same_flags),
        cmocka_unit_test(syntax_errors_name_the_line),
        cmocka_unit_test(goodput_constraints_are_seconds),
        cmocka_unit_test(data_types_and_shared_prefix_names),
        cmocka_unit_test(closed_loop_stages),
        cmocka_unit_test(trace_replay),
        cmocka_unit_test(load_server_and_report_keys),
        cmocka_unit_test(unspecified_host_is_this_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
