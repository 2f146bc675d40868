/* Unit tests for sim_opts: simserver's table is well-formed and sorted, its
 * defaults are the documented ones, and each rule of the flags holds
 * without starting a server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim_opts.h"

static sim_opts o;

static int parse(char *err, int argc, char **argv)
{
    assert_int_equal(sim_opts_defaults(&o, err, 256), 0);
    return sim_opts_parse(&o, argc, argv, err, 256);
}

static void table_is_sorted_and_well_formed(void **state)
{
    static sim_opts scratch;
    char err[256] = "";
    if (rb_opts_check(&sim_opts_spec, &scratch, err, sizeof err)) fail_msg("%s", err);
}

static void defaults(void **state)
{
    char err[256];
    assert_int_equal(parse(err, 0, NULL), RB_OPTS_OK);
    const sim_config *c = &o.cfg;
    assert_string_equal(c->host, "127.0.0.1");
    assert_int_equal(c->port, 8000);
    assert_int_equal(c->workers, 1);
    assert_int_equal(c->n_served, 1);
    assert_string_equal(c->served[0], "sim-model");
    assert_int_equal(c->mode, SIM_MODE_RANDOM);
    assert_true(c->lat.time_factor_under_load == 1.0);
    assert_int_equal(c->lat.itl_ns, 0);
    assert_int_equal(c->max_waiting_queue_length, 1000);
    assert_int_equal(c->block_size, 16);
    assert_int_equal(c->prefix_cache_blocks, 16384);
    assert_int_equal(c->enable_prefix_caching, 1);
    assert_int_equal(c->failure_mask, ((1u << SIM_FAULT_COUNT) - 1) & ~1u);
    assert_int_equal(c->max_model_len, 32768);
    assert_int_equal(c->max_body_bytes, 1 << 20);
    assert_int_equal(c->max_header_bytes, 64 << 10);
    assert_int_equal(c->idle_timeout_ns, 60LL * 1000000000LL);
    assert_int_equal(c->max_write_queue_bytes, 4 << 20);
    assert_int_equal(c->shutdown_grace_ns, 2LL * 1000000000LL);
}

static void flags_set_the_config(void **state)
{
    char err[256];
    char *argv[] = {"--host=localhost",
                    "--port",
                    "0",
                    "--inter-token-latency",
                    "20", /* a plain number is ms */
                    "--mode=echo",
                    "--served-model-name",
                    "a,b",
                    "--served-model-name=c",
                    "--no-enable-prefix-caching",
                    "--failure-types",
                    "stall,rate_limit",
                    "--seed",
                    "9223372036854775807",
                    "--max-body=64k"};
    assert_int_equal(parse(err, 15, argv), RB_OPTS_OK);
    const sim_config *c = &o.cfg;
    assert_string_equal(c->host, "127.0.0.1");
    assert_int_equal(c->port, 0);
    assert_int_equal(c->lat.itl_ns, 20000000);
    assert_int_equal(c->mode, SIM_MODE_ECHO);
    assert_int_equal(c->n_served, 3);
    assert_string_equal(c->served[0], "a");
    assert_string_equal(c->served[2], "c");
    assert_int_equal(c->enable_prefix_caching, 0);
    assert_int_equal(c->failure_mask, (1u << SIM_FAULT_STALL) | (1u << SIM_FAULT_RATE_LIMIT));
    assert_true(c->seed == (uint64_t)INT64_MAX);
    assert_int_equal(c->max_body_bytes, 65536);
    char *again[] = {"--enable-prefix-caching=false", "--enable-prefix-caching"};
    assert_int_equal(parse(err, 2, again), RB_OPTS_OK);
    assert_int_equal(o.cfg.enable_prefix_caching, 1);
}

#define BAD(want, ...)                                                                             \
    do {                                                                                           \
        char *argv_[] = {__VA_ARGS__};                                                             \
        char e_[256] = "";                                                                         \
        assert_int_equal(parse(e_, (int)(sizeof argv_ / sizeof argv_[0]), argv_), -1);             \
        if (!strstr(e_, want)) fail_msg("got \"%s\", want \"%s\"", e_, want);                      \
    } while (0)

static void bad_flags_are_named(void **state)
{
    BAD("--port: must be an integer in [0, 65535], got '65536'", "--port", "65536");
    BAD("--workers: must be an integer in [1, 256], got '0'", "--workers=0");
    BAD("--mode: must be random or echo, got 'rand'", "--mode", "rand");
    BAD("--model: must be 1-127 plain characters, got 'a\"b'", "--model", "a\"b");
    BAD("--served-model-name: names must be 1-127 plain characters", "--served-model-name", ",a");
    BAD("--failure-types: unknown fault type 'boom'", "--failure-types", "stall,boom");
    BAD("--failure-injection-rate: must be a percentage in [0, 100], got '101'",
        "--failure-injection-rate", "101");
    BAD("--time-factor-under-load: must be a number >= 1, got '0.5'",
        "--time-factor-under-load=0.5");
    BAD("--idle-timeout: must be a duration of at least 1ms", "--idle-timeout", "10us");
    BAD("--max-body: must be a size between 1 and 1G", "--max-body", "2G");
    BAD("--max-write-queue: must be a size of at least 4k, got '1k'", "--max-write-queue=1k");
    BAD("--inter-token-latency: must be a duration >= 0", "--inter-token-latency", "-1ms");
    BAD("--enable-prefix-caching: must be true or false, got 'on'", "--enable-prefix-caching=on");
    BAD("--port: needs a value", "--port");
    BAD("--bogus: unknown option (see --help)", "--bogus");
    BAD("8000: unexpected argument (see --help)", "8000");
}

static void help_names_every_flag(void **state)
{
    char err[256];
    char *h[] = {"--port", "1", "--help"};
    assert_int_equal(parse(err, 3, h), RB_OPTS_HELP);
    char *v[] = {"--version"};
    assert_int_equal(parse(err, 1, v), RB_OPTS_VERSION);
    char *u = rb_opts_usage(&sim_opts_spec);
    assert_non_null(u);
    for (size_t i = 0; i < sim_opts_spec.n; i++) {
        char flag[80];
        snprintf(flag, sizeof flag, "  --%s", sim_opts_spec.opts[i].name);
        assert_non_null(strstr(u, flag));
    }
    assert_non_null(strstr(u, "worker processes sharing the port (default 1)\n"));
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_sorted_and_well_formed),
        cmocka_unit_test(defaults),
        cmocka_unit_test(flags_set_the_config),
        cmocka_unit_test(bad_flags_are_named),
        cmocka_unit_test(help_names_every_flag),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
