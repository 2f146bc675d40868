/* Unit tests of cal_opts (defaults, flags, messages naming flag and value)
 * and of the simulator's "listening" line parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "cal_opts.h"
#include "cal_proc.h"

/* --out-dir out, then a0..a3 (NULL ends them) */
static int parse(cal_opts *o, char *err, const char *a0, const char *a1, const char *a2,
                 const char *a3)
{
    int argc = a0 ? (a1 ? (a2 ? (a3 ? 4 : 3) : 2) : 1) : 0;
    char *argv[6] = {"--out-dir", "out", (char *)a0, (char *)a1, (char *)a2, (char *)a3};
    cal_opts_defaults(o, 8);
    return cal_opts_parse(o, argc + 2, argv, err, 256);
}

/* The run's files go into --out-dir or beside --out, never into the current
 * directory unasked: with neither, calibrate refuses. */
static void test_where_files_go(void **state)
{
    (void)state;
    cal_opts o;
    char err[256];
    char *beside[] = {"--out", "/tmp/certs/host.json"};
    cal_opts_defaults(&o, 2);
    assert_int_equal(cal_opts_parse(&o, 2, beside, err, sizeof err), 0);
    assert_string_equal(o.out_dir, "/tmp/certs");
    char *top[] = {"--out", "/host.json"};
    cal_opts_defaults(&o, 2);
    assert_int_equal(cal_opts_parse(&o, 2, top, err, sizeof err), 0);
    assert_string_equal(o.out_dir, "/");
    char *here[] = {"--out", "host.json"}; /* asked for: here */
    cal_opts_defaults(&o, 2);
    assert_int_equal(cal_opts_parse(&o, 2, here, err, sizeof err), 0);
    assert_string_equal(o.out_dir, ".");
    char *both[] = {"--out", "/a/host.json", "--out-dir", "/b"};
    cal_opts_defaults(&o, 2);
    assert_int_equal(cal_opts_parse(&o, 4, both, err, sizeof err), 0);
    assert_string_equal(o.out_dir, "/b");
    char *none[] = {"--quick"};
    cal_opts_defaults(&o, 2);
    assert_int_equal(cal_opts_parse(&o, 1, none, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "--out-dir DIR, or --out FILE"));
}

static void test_defaults(void **state)
{
    (void)state;
    cal_opts o;
    char err[256];
    assert_int_equal(parse(&o, err, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(o.n_workers, 2); /* 1 and the online CPUs */
    assert_int_equal(o.workers[0], 1);
    assert_int_equal(o.workers[1], 8);
    assert_true(o.budget_us == 100);
    assert_true(o.lag_bound_ms == 1.0);
    assert_int_equal(o.mode, CAL_MODE_DEFAULT);
    assert_true(cal_opts_step_ns(&o) == 1500000000LL);
    assert_int_equal(cal_opts_batches(&o), 4);
    assert_true(cal_opts_budget_ns(&o) == 150000000000LL);
    /* quick: three 1 s batches a level, the sweeps within 46 s; the
     * self-test's batches are longer */
    cal_opts q;
    cal_opts_defaults(&q, 2);
    q.mode = CAL_MODE_QUICK;
    assert_true(cal_opts_budget_ns(&q) == 60000000000LL);
    /* quick: k = 1 first gets half of the time (30 s), the others share
     * the rest */
    q.n_workers = 3;
    q.workers[0] = 1, q.workers[1] = 2, q.workers[2] = 4;
    assert_true(fabs(cal_opts_budget_share(&q, 0) - 0.5) < 1e-12);
    assert_true(fabs(cal_opts_budget_share(&q, 1) - 0.75) < 1e-12);
    assert_true(cal_opts_budget_share(&q, 2) == 1.0);
    /* the deadlines: the cumulative share's end, or the own share from the
     * sweep's start when an earlier k ran over (60 s, one cost: k=1 30 s,
     * k=2 15 s, k=4 15 s; two costs: half each) */
    const int64_t S = 1000000000LL;
    assert_true(cal_opts_deadline_ns(&q, 0, 100 * S, 100 * S, 1) == 130 * S);
    assert_true(cal_opts_deadline_ns(&q, 1, 100 * S, 120 * S, 1) == 145 * S); /* k=1 left 10 s */
    assert_true(cal_opts_deadline_ns(&q, 1, 100 * S, 135 * S, 1) == 150 * S); /* k=1 ran 5 s over */
    assert_true(cal_opts_deadline_ns(&q, 2, 100 * S, 150 * S, 1) == 165 * S);
    assert_true(cal_opts_deadline_ns(&q, 2, 100 * S, 130 * S, 1) == 160 * S);
    assert_true(cal_opts_deadline_ns(&q, 1, 100 * S, 130 * S, 2) == 137.5 * S); /* 30 s a cost */
    assert_true(cal_opts_deadline_ns(&q, 1, 100 * S, 112 * S, 2) == 122.5 * S);
    /* the default mode: k = 1 first gets 60% */
    q.mode = CAL_MODE_DEFAULT;
    assert_true(fabs(cal_opts_budget_share(&q, 0) - 0.6) < 1e-12);
    assert_true(fabs(cal_opts_budget_share(&q, 1) - 0.8) < 1e-12);
    q.mode = CAL_MODE_QUICK;
    q.workers[0] = 3; /* no single worker: equal shares */
    assert_true(fabs(cal_opts_budget_share(&q, 0) - 1.0 / 3) < 1e-12);
    q.n_workers = 1;
    assert_true(cal_opts_budget_share(&q, 0) == 1.0);
    cal_opts_defaults(&q, 2);
    q.mode = CAL_MODE_QUICK;
    assert_true(cal_opts_step_ns(&q) == 1000000000LL);
    assert_int_equal(cal_opts_batches(&q), 3);
    q.self_test = 1;
    assert_true(cal_opts_budget_ns(&q) == 48000000000LL);
    assert_int_equal(cal_opts_batches(&q), 2);
    assert_true(cal_opts_step_ns(&q) == 1000000000LL);
    cal_opts_defaults(&o, 1);
    assert_int_equal(o.n_workers, 1);
}

static void test_flags(void **state)
{
    (void)state;
    cal_opts o;
    char err[256];
    assert_int_equal(parse(&o, err, "--workers", "1,2,4", "--budget-us=50", NULL), 0);
    assert_int_equal(o.n_workers, 3);
    assert_int_equal(o.workers[2], 4);
    assert_true(o.budget_us == 50);
    assert_int_equal(parse(&o, err, "--quick", "--step-duration", "750ms", NULL), 0);
    assert_int_equal(o.mode, CAL_MODE_QUICK);
    assert_true(cal_opts_step_ns(&o) == 750000000LL);
    /* --self-test alone: one worker, the lag bound scaled to the cost */
    assert_int_equal(parse(&o, err, "--self-test-cost", "exp:300", NULL, NULL), 0);
    assert_true(o.self_test);
    assert_string_equal(o.cost_kind, "exp");
    assert_true(o.cost_us == 300);
    assert_int_equal(o.n_workers, 1);
    assert_true(fabs(o.lag_bound_ms - 7.5) < 1e-12);
    assert_true(cal_opts_step_ns(&o) == 2000000000LL); /* self-test batches are longer */
    assert_true(o.cost_given);
    /* one token per response, a jittered first token, the budget 5 x the cost */
    assert_int_equal(o.output_len, 1);
    assert_true(o.ttft_ns == 16000000 && o.ttft_sd_ns == 16000000);
    assert_true(o.budget_us == 1500);
    assert_true(o.start_rate == 100);
    assert_int_equal(parse(&o, err, "--self-test", "--random-output-len", "4", "--budget-us=50"),
                     0);
    assert_false(o.cost_given);
    assert_int_equal(o.output_len, 4);
    assert_true(o.ttft_ns == 0);
    assert_true(o.start_rate == 20);
    assert_true(o.budget_us == 50);
    assert_int_equal(parse(&o, err, "--batches", "6", NULL, NULL), 0);
    assert_int_equal(cal_opts_batches(&o), 6);
    assert_int_equal(parse(&o, err, "--self-test", "--workers", "2", "--lag-bound=2ms"), 0);
    assert_int_equal(o.workers[0], 2);
    assert_true(o.lag_bound_ms == 2.0);
    assert_int_equal(parse(&o, err, "--help", NULL, NULL, NULL), 1);
    assert_int_equal(parse(&o, err, "--version", NULL, NULL, NULL), 2);
}

#define BAD(a0, a1, needle)                                                                        \
    do {                                                                                           \
        cal_opts o_;                                                                               \
        char e_[256] = "";                                                                         \
        assert_int_equal(parse(&o_, e_, a0, a1, NULL, NULL), -EINVAL);                             \
        if (!strstr(e_, needle))                                                                   \
            fail_msg("'%s %s': message '%s' lacks '%s'", a0, a1 ? a1 : "", e_, needle);            \
    } while (0)

static void test_bad_values_name_flag_and_value(void **state)
{
    (void)state;
    BAD("--budget-us", "-5", "--budget-us: must be > 0 microseconds, got '-5'");
    BAD("--budget-us", "0", "--budget-us");
    BAD("--workers", "0", "--workers: want a comma-separated list");
    BAD("--workers", "1,1", "got '1,1'");
    BAD("--workers", "1,", "got '1,'");
    BAD("--workers", "65", "got '65'");
    BAD("--self-test-cost", "slow:5", "--self-test-cost: want fixed:US or exp:US");
    BAD("--self-test-cost", "fixed:5", "got 'fixed:5'");
    BAD("--step-duration", "10ms", "--step-duration");
    BAD("--max-steps", "0", "--max-steps");
    BAD("--time-budget", "500ms", "--time-budget: want a duration from 1s to 24h, got '500ms'");
    BAD("--start-rate", "-1", "--start-rate: must be > 0");
    BAD("--lag-bound", "0", "--lag-bound");
    BAD("--random-output-len", "x", "--random-output-len");
    BAD("--bogus", "1", "--bogus: unknown option");
    BAD("--budget-us", NULL, "--budget-us: needs a value");
    BAD("stray", NULL, "stray: unexpected argument");
}

/* The table is alphabetical and well-formed, and --help lists every flag. */
static void test_table_and_usage(void **state)
{
    (void)state;
    static cal_opts scratch;
    char err[256] = "";
    if (rb_opts_check(&cal_opts_spec, &scratch, err, sizeof err)) fail_msg("%s", err);
    const char *u = cal_usage();
    for (size_t i = 0; i < cal_opts_spec.n; i++) {
        char flag[80];
        snprintf(flag, sizeof flag, "  --%s", cal_opts_spec.opts[i].name);
        if (!strstr(u, flag)) fail_msg("--help lacks %s", flag);
    }
    assert_non_null(strstr(u, "Exit: 0 ok, 1 run failed (or self-test FAIL), 2 bad usage.\n"));
}

static void test_int_list(void **state)
{
    (void)state;
    int v[4], n;
    assert_int_equal(cal_parse_int_list("3", v, 4, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(cal_parse_int_list("1,2,3,4", v, 4, &n), 0);
    assert_int_equal(cal_parse_int_list("1,2,3,4,5", v, 4, &n), -EINVAL);
    assert_int_equal(cal_parse_int_list("", v, 4, &n), -EINVAL);
    assert_int_equal(cal_parse_int_list("1;2", v, 4, &n), -EINVAL);
}

static void test_listening_line(void **state)
{
    (void)state;
    assert_int_equal(cal_parse_listening("listening http://127.0.0.1:41234"), 41234);
    assert_int_equal(cal_parse_listening("listening http://127.0.0.1:8000\n"), 8000);
    assert_int_equal(cal_parse_listening("listening http://[::1]:9001"), 9001);
    assert_int_equal(cal_parse_listening("listening http://127.0.0.1:0"), -EINVAL);
    assert_int_equal(cal_parse_listening("listening http://127.0.0.1:70000"), -EINVAL);
    assert_int_equal(cal_parse_listening("listening http://127.0.0.1:"), -EINVAL);
    assert_int_equal(cal_parse_listening("warming up"), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_where_files_go),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_bad_values_name_flag_and_value),
        cmocka_unit_test(test_table_and_usage),
        cmocka_unit_test(test_int_list),
        cmocka_unit_test(test_listening_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
