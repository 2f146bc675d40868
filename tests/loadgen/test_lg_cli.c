/* Tests of lg_cli: every invalid value is refused with a message that names
 * the flag and the value; defaults, sweeps, modes and config overrides. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_cli.h"
#include "lg_config.h"

static int parse(lg_opts *o, char *err, size_t errlen, ...)
{
    char *argv[64];
    int argc = 0;
    va_list ap;
    va_start(ap, errlen);
    for (char *a; (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    lg_opts_defaults(o, 2);
    int rc = lg_cli_parse(o, argc, argv, err, errlen);
    if (rc == 0) rc = lg_cli_finish(o, err, errlen);
    return rc;
}

static void refuses(const char *flag, const char *value, const char *needle)
{
    lg_opts o;
    char err[512] = "";
    int rc = parse(&o, err, sizeof err, (char *)flag, (char *)value, (char *)NULL);
    if (rc != -EINVAL) fail_msg("%s %s: expected -EINVAL, got %d", flag, value, rc);
    if (!strstr(err, flag)) fail_msg("message '%s' does not name %s", err, flag);
    if (!strstr(err, needle)) fail_msg("message '%s' does not contain '%s'", err, needle);
}

static void test_bad_values_name_flag_and_value(void **state)
{
    (void)state;
    refuses("--request-rate", "-5", "-5");
    refuses("--request-rate", "abc", "abc");
    refuses("--request-rate", "0", "0");
    refuses("--burstiness", "0", "0");
    refuses("--num-prompts", "0", "0");
    refuses("--num-workers", "x", "x");
    refuses("--num-workers", "-1", "-1");
    refuses("--max-connections-per-worker", "0", "0");
    refuses("--stage", "100", "100");
    refuses("--stage", "-1:10s", "-1:10s");
    refuses("--stage", "10:0s", "10:0s");
    refuses("--sweep", "cubic", "cubic");
    refuses("--duration", "soon", "soon");
    refuses("--random-range-ratio", "1.5", "1.5");
    refuses("--random-len-dist", "zipf", "zipf");
    refuses("--worker-cpus", "1-", "CPU numbers");
    refuses("--worker-cpus", "0,,1", "CPU numbers");
    refuses("--worker-cpus", "1023", "not one loadgen may run on");
    refuses("--dataset-name", "imagenet", "imagenet");
    refuses("--sim-stamps", "maybe", "maybe");
    refuses("--client-cost", "fixed", "fixed");
    refuses("--client-cost", "gauss:5", "gauss:5");
    refuses("--metric-percentiles", "50,101", "50,101");
    refuses("--percentile-metrics", "ttft,bogus", "ttft,bogus");
    refuses("--goodput", "latency:5", "latency:5");
    refuses("--goodput", "ttft:-1", "ttft:-1");
    refuses("--endpoint", "v1/completions", "v1/completions");
    refuses("--header", "NoColon", "NoColon");
    refuses("--result-filename", "a/b.json", "a/b.json");
    refuses("--base-url", "http://10.1.2.3:8000", "10.1.2.3");
    refuses("--base-url", "http://example.com", "example.com");
    refuses("--base-url", "ftp://127.0.0.1", "ftp://");
    refuses("--vocab-size", "0", "0");
}

/* --batch-tick: a duration with its unit in [10us, 10ms], or off; never
 * with the user clock, which would time the reads' wait for the tick. */
static void test_batch_tick(void **state)
{
    (void)state;
    lg_opts o;
    char err[512] = "";
    assert_int_equal(parse(&o, err, sizeof err, "--batch-tick", "250us", (char *)NULL), 0);
    assert_int_equal(o.batch_tick_ns, 250000);
    assert_int_equal(parse(&o, err, sizeof err, "--batch-tick", "10ms", (char *)NULL), 0);
    assert_int_equal(o.batch_tick_ns, 10000000);
    assert_int_equal(parse(&o, err, sizeof err, "--batch-tick", "10us", "--receive-clock", "kernel",
                           (char *)NULL),
                     0);
    assert_int_equal(o.batch_tick_ns, 10000);
    assert_int_equal(parse(&o, err, sizeof err, (char *)NULL), 0);
    assert_int_equal(o.batch_tick_ns, 0); /* off by default */
    assert_int_equal(
        parse(&o, err, sizeof err, "--batch-tick", "1ms", "--batch-tick", "off", (char *)NULL), 0);
    assert_int_equal(o.batch_tick_ns, 0);
    refuses("--batch-tick", "0.5", "0.5"); /* no unit: not a run length's seconds */
    refuses("--batch-tick", "9us", "9us");
    refuses("--batch-tick", "11ms", "11ms");
    refuses("--batch-tick", "-1ms", "-1ms");
    int rc =
        parse(&o, err, sizeof err, "--batch-tick", "1ms", "--receive-clock", "user", (char *)NULL);
    assert_int_equal(rc, -EINVAL);
    if (!strstr(err, "--receive-clock") || !strstr(err, "--batch-tick") || !strstr(err, "user"))
        fail_msg("the refusal does not name both flags and the clock: %s", err);
}

/* --cpu-latency-us: held at 0 us by default, any whole number of us up to
 * 1 s, or off (-1). */
static void test_cpu_latency(void **state)
{
    (void)state;
    lg_opts o;
    char err[512] = "";
    assert_int_equal(parse(&o, err, sizeof err, (char *)NULL), 0);
    assert_int_equal(o.cpu_latency_us, 0);
    assert_int_equal(parse(&o, err, sizeof err, "--cpu-latency-us", "off", (char *)NULL), 0);
    assert_int_equal(o.cpu_latency_us, -1);
    assert_int_equal(parse(&o, err, sizeof err, "--cpu-latency-us", "1000000", (char *)NULL), 0);
    assert_int_equal(o.cpu_latency_us, 1000000);
    refuses("--cpu-latency-us", "-1", "-1");
    refuses("--cpu-latency-us", "1000001", "1000001");
    refuses("--cpu-latency-us", "2.5", "2.5");
    refuses("--cpu-latency-us", "10us", "10us");
}

/* --token-ids: the ids' range, and the modes that cannot carry ids. */
static void test_token_ids(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    assert_int_equal(parse(&o, err, sizeof err, "--token-ids", NULL), 0);
    assert_int_equal(o.token_ids, 1);
    assert_int_equal(o.vocab_size, 32000);
    assert_int_equal(parse(&o, err, sizeof err, "--token-ids", "--vocab-size", "128256", NULL), 0);
    assert_int_equal(o.vocab_size, 128256);
    assert_int_equal(
        parse(&o, err, sizeof err, "--token-ids", "--endpoint", "/v1/chat/completions", NULL),
        -EINVAL);
    assert_non_null(strstr(err, "--token-ids"));
    assert_non_null(strstr(err, "chat"));
    assert_int_equal(parse(&o, err, sizeof err, "--token-ids", "--dataset-name", "sharegpt",
                           "--dataset-path", "x.json", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "--token-ids"));
    assert_int_equal(
        parse(&o, err, sizeof err, "--token-ids", "--dataset-name", "shared-prefix", NULL), 0);
}

/* --save-token-times and its cap: the default, the cap's bounds, what each
 * implies and the combinations refused. */
static void test_token_times(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    assert_int_equal(parse(&o, err, sizeof err, NULL), 0);
    assert_int_equal(o.save_token_times, 0);
    assert_int_equal(o.token_times_cap, 4096); /* the default, unused while off */
    assert_int_equal(parse(&o, err, sizeof err, "--save-token-times", NULL), 0);
    assert_true(o.save_token_times && o.save_detailed && o.save_result);
    assert_int_equal(o.token_times_cap, 4096);
    assert_int_equal(
        parse(&o, err, sizeof err, "--save-token-times", "--token-times-cap", "1", NULL), 0);
    assert_int_equal(o.token_times_cap, 1);
    assert_int_equal(
        parse(&o, err, sizeof err, "--save-token-times", "--token-times-cap", "1048576", NULL), 0);
    assert_int_equal(o.token_times_cap, 1048576);
    static const char *const bad[] = {"0", "-1", "abc", "1048577", "4.5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[128];
        snprintf(want, sizeof want,
                 "--token-times-cap: must be a whole number in [1, 1048576], got '%s'", bad[i]);
        assert_int_equal(
            parse(&o, err, sizeof err, "--save-token-times", "--token-times-cap", bad[i], NULL),
            -EINVAL);
        assert_string_equal(err, want);
    }
    /* the cap alone is a mistake, and so is a run with no token times */
    assert_int_equal(parse(&o, err, sizeof err, "--token-times-cap", "8", NULL), -EINVAL);
    assert_string_equal(err, "--token-times-cap: is the cap of --save-token-times: give that "
                             "too, got '8'");
    assert_int_equal(parse(&o, err, sizeof err, "--save-token-times", "--no-stream", NULL),
                     -EINVAL);
    assert_string_equal(err, "--save-token-times: needs streamed responses (a whole response has "
                             "no token times), got 'with --no-stream'");
    assert_int_equal(parse(&o, err, sizeof err, "--save-token-times=1", NULL), -EINVAL);
    assert_non_null(strstr(err, "--save-token-times"));
}

static void test_unknown_flag_and_missing_value(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    assert_int_equal(parse(&o, err, sizeof err, "--frobnicate", "1", NULL), -EINVAL);
    assert_non_null(strstr(err, "--frobnicate"));
    assert_int_equal(parse(&o, err, sizeof err, "--request-rate", NULL), -EINVAL);
    assert_non_null(strstr(err, "--request-rate"));
    assert_non_null(strstr(err, "needs a value"));
    /* An unknown flag given last is unknown, not short of a value. */
    assert_int_equal(parse(&o, err, sizeof err, "--request-rate", "5", "--frobnicate", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "unknown flag '--frobnicate'"));
    assert_null(strstr(err, "needs a value"));
    assert_int_equal(parse(&o, err, sizeof err, "--help", NULL), 1);
}

static void test_plain_durations_are_seconds(void **state)
{
    (void)state;
    lg_opts o;
    char err[512] = "";
    assert_int_equal(parse(&o, err, sizeof err, "--request-rate", "10", "--duration", "2",
                           "--drain-timeout", "3", "--request-timeout", "0.5", NULL),
                     0);
    assert_int_equal(o.duration_ns, 2000000000LL);
    assert_int_equal(o.stages[0].duration_ns, 2000000000LL);
    assert_int_equal(o.drain_timeout_ns, 3000000000LL);
    assert_int_equal(o.request_timeout_ns, 500000000LL);
    assert_int_equal(parse(&o, err, sizeof err, "--stage", "100:10", "--stage", "50:250ms",
                           "--stage-pause", "1", NULL),
                     0);
    assert_int_equal(o.stages[0].duration_ns, 10000000000LL);
    assert_int_equal(o.stages[1].duration_ns, 250000000LL);
    assert_int_equal(o.stage_pause_ns, 1000000000LL);
    assert_int_equal(
        parse(&o, err, sizeof err, "--sweep-max-rate", "100", "--stage-duration", "4", NULL), 0);
    assert_int_equal(o.stage_duration_ns, 4000000000LL);
    /* Under 1 ms, curl would have no timeout at all. */
    refuses("--request-timeout", "500us", "at least 1ms");
    refuses("--request-timeout", "0.0005", "at least 1ms");
    refuses("--request-timeout", "999999ns", "at least 1ms");
    assert_int_equal(parse(&o, err, sizeof err, "--request-timeout", "1ms", NULL), 0);
    assert_int_equal(o.request_timeout_ns, 1000000LL);
}

static void test_prompt_pool_covers_the_plan(void **state)
{
    (void)state;
    lg_opts o;
    char err[512] = "";
    /* The old pool of 1,024 repeated from request 1,025 on. */
    assert_int_equal(parse(&o, err, sizeof err, "--sweep", "geometric", "--sweep-max-rate", "400",
                           "--stage-duration", "10", "--random-input-len", "256", NULL),
                     0);
    int64_t expect = 0;
    for (int i = 0; i < 5; i++)
        expect += (int64_t)(o.stages[i].rate_per_s * 10);
    assert_true(o.planned_arrivals >= expect);
    assert_true(o.planned_arrivals < expect + 6 * 5 * 70 + 5 * 17);
    assert_int_equal(o.prompt_pool_size, o.planned_arrivals);
    assert_false(o.prompt_per_request);
    assert_int_equal(parse(&o, err, sizeof err, "--num-prompts", "3000", NULL), 0);
    assert_int_equal(o.planned_arrivals, 3000);
    assert_int_equal(o.prompt_pool_size, 3000);
    assert_false(o.prompt_per_request);
    /* Unknown length (closed loop bounded by time): no pool, each prompt
     * made when sent. */
    assert_int_equal(parse(&o, err, sizeof err, "--max-concurrency", "4", "--duration", "5", NULL),
                     0);
    assert_int_equal(o.planned_arrivals, -1);
    assert_true(o.prompt_per_request);
    /* Longer than LG_POOL_EAGER_MAX: the same; at it, a pool. */
    assert_int_equal(
        parse(&o, err, sizeof err, "--request-rate", "5000", "--duration", "600", NULL), 0);
    assert_true(o.planned_arrivals > LG_POOL_EAGER_MAX);
    assert_true(o.prompt_per_request);
    assert_int_equal(parse(&o, err, sizeof err, "--num-prompts", "16384", NULL), 0);
    assert_false(o.prompt_per_request);
    assert_int_equal(o.prompt_pool_size, 16384);
    assert_int_equal(parse(&o, err, sizeof err, "--num-prompts", "16385", NULL), 0);
    assert_true(o.prompt_per_request);
    /* Asked for: kept, even below the plan. */
    assert_int_equal(
        parse(&o, err, sizeof err, "--num-prompts", "3000", "--prompt-pool-size", "16", NULL), 0);
    assert_int_equal(o.prompt_pool_size, 16);
    assert_int_equal(o.prompt_pool_given, 1);
    refuses("--prompt-pool-size", "0", "0");
    assert_int_equal(parse(&o, err, sizeof err, "--dataset-name", "shared-prefix",
                           "--prompt-pool-size", "16", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "--prompt-pool-size"));
    assert_non_null(strstr(err, "--prefix-groups"));
}

static void test_loopback_rule(void **state)
{
    (void)state;
    assert_true(lg_url_is_loopback("http://127.0.0.1:8000"));
    assert_true(lg_url_is_loopback("http://127.1.2.3/v1"));
    assert_true(lg_url_is_loopback("http://localhost:80"));
    assert_true(lg_url_is_loopback("http://[::1]:8000"));
    assert_true(lg_url_is_loopback("http://user@127.0.0.1:1"));
    assert_false(lg_url_is_loopback("http://128.0.0.1:80"));
    assert_false(lg_url_is_loopback("http://127.0.0.1.example.com/"));
    assert_false(lg_url_is_loopback("http://192.168.1.1:80"));
    assert_false(lg_url_is_loopback("127.0.0.1:80"));
    lg_opts o;
    char err[512];
    assert_int_equal(
        parse(&o, err, sizeof err, "--base-url", "http://10.1.2.3:8000", "--allow-remote", NULL),
        0);
}

static void test_defaults_and_modes(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    assert_int_equal(parse(&o, err, sizeof err, NULL), 0);
    assert_int_equal(o.num_workers, 2);
    assert_true(isinf(o.request_rate));
    assert_int_equal(o.n_stages, 1);
    assert_int_equal(o.stages[0].max_requests, 1000);
    assert_int_equal(o.n_percentiles, 3);
    /* --duration alone drops the default prompt count */
    assert_int_equal(parse(&o, err, sizeof err, "--request-rate", "10", "--duration", "2s", NULL),
                     0);
    assert_int_equal(o.stages[0].max_requests, 0);
    assert_int_equal(o.stages[0].duration_ns, 2000000000LL);
    /* an infinite rate for a duration never ends */
    assert_int_equal(parse(&o, err, sizeof err, "--duration", "2s", NULL), -EINVAL);
    assert_non_null(strstr(err, "--duration"));
    /* closed loop: the cap splits over at most C workers */
    assert_int_equal(
        parse(&o, err, sizeof err, "--max-concurrency", "1", "--num-workers", "4", NULL), 0);
    assert_int_equal(o.num_workers, 1);
    assert_int_equal(o.max_concurrency, 1);
    /* --flag=value form, percentiles with a fraction */
    assert_int_equal(parse(&o, err, sizeof err, "--metric-percentiles=50,99.9", NULL), 0);
    assert_int_equal(o.n_percentiles, 2);
    assert_true(o.percentiles[1] == 99.9);
    /* goodput takes several items */
    assert_int_equal(
        parse(&o, err, sizeof err, "--goodput", "ttft:300", "tpot:50", "--seed", "3", NULL), 0);
    assert_true(o.goodput.enabled);
    assert_int_equal(o.goodput.slo_ns[LG_M_TTFT], 300000000LL);
    assert_int_equal(o.goodput.slo_ns[LG_M_TPOT], 50000000LL);
    assert_int_equal(o.seed, 3);
}

static void test_sweep_builds_stages(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    assert_int_equal(parse(&o, err, sizeof err, "--sweep", "geometric", "--sweep-stages", "4",
                           "--sweep-max-rate", "800", "--stage-duration", "1s", NULL),
                     0);
    assert_int_equal(o.n_stages, 4);
    double want[4] = {100, 200, 400, 800};
    for (int i = 0; i < 4; i++) {
        assert_true(fabs(o.stages[i].rate_per_s - want[i]) < 1e-9);
        assert_int_equal(o.stages[i].duration_ns, 1000000000LL);
    }
    assert_int_equal(parse(&o, err, sizeof err, "--sweep", "linear", "--sweep-stages", "4",
                           "--sweep-max-rate", "800", "--stage-duration", "1s", NULL),
                     0);
    assert_true(fabs(o.stages[0].rate_per_s - 200) < 1e-9);
    assert_true(fabs(o.stages[3].rate_per_s - 800) < 1e-9);
    assert_int_equal(
        parse(&o, err, sizeof err, "--sweep", "linear", "--sweep-max-rate", "800", NULL), -EINVAL);
    assert_non_null(strstr(err, "--stage-duration"));
    assert_int_equal(parse(&o, err, sizeof err, "--stage", "10:1s", "--request-rate", "5", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "--request-rate"));
}

/* --sweep-probe: until the probe has run, the plan is its one stage
 * (requests over 5 s, cut at a shorter timeout); the sweep's own bounds and
 * what the probe cannot run beside are refused, naming the flag. */
static void test_sweep_probe_plans_its_probe(void **state)
{
    (void)state;
    lg_opts o;
    char err[512];
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe", "--stage-duration", "2", NULL), 0);
    assert_true(o.sweep_probe);
    assert_int_equal(o.sweep, LG_SWEEP_GEOMETRIC);
    assert_int_equal(o.sweep_stages, 5); /* Inference Perf's default */
    assert_int_equal(o.n_stages, 1);
    assert_true(fabs(o.stages[0].rate_per_s - 400) < 1e-9); /* 2000 in 5 s */
    assert_int_equal(o.stages[0].duration_ns, 5000000000LL);
    assert_int_equal(o.sweep_probe_timeout_ns, 60000000000LL);
    assert_true(o.sweep_probe_percentile == 95);
    /* a probe flag alone turns the probe on; a timeout under 5 s cuts it */
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe-timeout", "3",
                           "--sweep-probe-requests", "100", "--sweep", "linear", "--stage-duration",
                           "2", NULL),
                     0);
    assert_true(o.sweep_probe);
    assert_int_equal(o.sweep, LG_SWEEP_LINEAR);
    assert_true(fabs(o.stages[0].rate_per_s - 20) < 1e-9);
    assert_int_equal(o.stages[0].duration_ns, 3000000000LL);
    /* refused */
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe", "--sweep-max-rate", "50",
                           "--stage-duration", "2", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "--sweep-max-rate"));
    assert_non_null(strstr(err, "--sweep-probe"));
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe", NULL), -EINVAL);
    assert_non_null(strstr(err, "--stage-duration"));
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe", "--stage-duration", "2",
                           "--max-concurrency", "4", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "with --max-concurrency"));
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe", "--stage-duration", "2", "--stage",
                           "5:1", NULL),
                     -EINVAL);
    assert_non_null(strstr(err, "with --stage"));
    assert_int_equal(parse(&o, err, sizeof err, "--sweep-probe-percentile", "101", NULL), -EINVAL);
    assert_non_null(strstr(err, "--sweep-probe-percentile"));
}

static void test_config_then_flags_override(void **state)
{
    (void)state;
    const char *json = "{\"load\":{\"type\":\"poisson\",\"stages\":[{\"rate\":10,\"duration\":2}],"
                       "\"num_workers\":3},\"server\":{\"base_url\":\"http://127.0.0.1:9\","
                       "\"model_name\":\"m\"}}";
    lg_args a = {0};
    char err[512];
    int rc = lg_config_to_args(json, strlen(json), &a, err, sizeof err);
    if (rc) fail_msg("config: %s", err);
    lg_opts o;
    lg_opts_defaults(&o, 2);
    assert_int_equal(lg_cli_parse(&o, a.argc, a.argv, err, sizeof err), 0);
    char *cli[] = {"--num-workers", "1"};
    assert_int_equal(lg_cli_parse(&o, 2, cli, err, sizeof err), 0);
    assert_int_equal(lg_cli_finish(&o, err, sizeof err), 0);
    assert_int_equal(o.num_workers, 1);
    assert_string_equal(o.model, "m");
    assert_string_equal(o.base_url, "http://127.0.0.1:9");
    assert_int_equal(o.n_stages, 1);
    assert_true(o.stages[0].rate_per_s == 10);
    lg_args_free(&a);
}

/* The table is alphabetical and well-formed (its defaults parse), --help has
 * a line for every flag, and the defaults the table gives are the documented
 * ones. */
static void test_table_and_usage(void **state)
{
    (void)state;
    static lg_opts scratch;
    char err[256] = "";
    if (rb_opts_check(&lg_cli_spec, &scratch, err, sizeof err)) fail_msg("%s", err);
    const char *u = lg_cli_usage();
    for (size_t i = 0; i < lg_cli_spec.n; i++) {
        char flag[80];
        snprintf(flag, sizeof flag, "\n  --%s", lg_cli_spec.opts[i].name);
        if (!strstr(u, flag)) fail_msg("--help lacks %s", flag + 1);
    }
    lg_opts o;
    lg_opts_defaults(&o, 3);
    assert_string_equal(o.base_url, "http://127.0.0.1:8000");
    assert_string_equal(o.endpoint, "/v1/completions");
    assert_string_equal(o.model, "sim-model");
    assert_string_equal(o.result_dir, ".");
    assert_int_equal(o.num_workers, 3);
    assert_int_equal(o.max_conn_per_worker, 512);
    assert_true(isinf(o.request_rate) && o.burstiness == 1.0 && o.saturation_lag_ms == 10.0);
    assert_int_equal(o.num_prompts, 1000);
    assert_int_equal(o.random_input_len, 1024);
    assert_int_equal(o.random_output_len, 128);
    assert_int_equal(o.random_len_dist, LG_LEN_UNIFORM);
    assert_int_equal(o.prefix_groups, 4);
    assert_int_equal(o.prefix_prompts_per_group, 16);
    assert_int_equal(o.prefix_system_len, 512);
    assert_int_equal(o.prefix_question_len, 64);
    assert_int_equal(o.dataset, LG_DS_RANDOM);
    assert_int_equal(o.sim_stamps, LG_STAMPS_AUTO);
    assert_int_equal(o.receive_clock, LG_RXC_WIRE);
    assert_int_equal(o.receive_clock_given, 0);
    assert_int_equal(o.capture_buffer_kib, 4096);
    assert_int_equal(o.drain_timeout_ns, 5000000000LL);
    assert_int_equal(o.request_timeout_ns, 60000000000LL);
    assert_int_equal(o.stream, 1);
    assert_int_equal(o.progress, -1);
    assert_true(o.trace_speedup == 1.0 && o.random_range_ratio == 0.0);
    /* the alias sets what the flag sets */
    char *alias[] = {"--num-dataset-entries", "7"};
    assert_int_equal(lg_cli_parse(&o, 2, alias, err, sizeof err), 0);
    assert_int_equal(o.prompt_pool_size, 7);
    assert_int_equal(o.prompt_pool_given, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_and_usage),
        cmocka_unit_test(test_bad_values_name_flag_and_value),
        cmocka_unit_test(test_batch_tick),
        cmocka_unit_test(test_cpu_latency),
        cmocka_unit_test(test_token_ids),
        cmocka_unit_test(test_token_times),
        cmocka_unit_test(test_unknown_flag_and_missing_value),
        cmocka_unit_test(test_plain_durations_are_seconds),
        cmocka_unit_test(test_prompt_pool_covers_the_plan),
        cmocka_unit_test(test_loopback_rule),
        cmocka_unit_test(test_defaults_and_modes),
        cmocka_unit_test(test_sweep_builds_stages),
        cmocka_unit_test(test_sweep_probe_plans_its_probe),
        cmocka_unit_test(test_config_then_flags_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
