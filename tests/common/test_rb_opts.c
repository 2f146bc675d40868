/* Unit tests for rb_opts: a small table through the parser, the defaults,
 * the checker and the generated --help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_opts.h"

typedef struct demo {
    int count;
    int64_t seed;
    double rate;
    int64_t wait_ns;
    uint64_t limit;
    char name[8];
    int on, fast;
    int mode;
} demo;

static int parse_mode(void *base, const char *v, char *why, size_t n)
{
    demo *d = base;
    if (!strcmp(v, "a") || !strcmp(v, "b")) {
        d->mode = v[0];
        return 0;
    }
    snprintf(why, n, "must be a or b");
    return -1;
}

static const rb_opt OPTS[] = {
    {.name = "count",
     .type = RB_OPT_INT,
     .arg = "N",
     RB_OPT_AT(demo, count),
     .lo = 1,
     .hi = 9,
     .def = "3",
     .help = "how many"},
    {.name = "fast", .type = RB_OPT_FLAG, RB_OPT_AT(demo, fast), .ival = 7, .help = "go fast"},
    {.name = "limit",
     .type = RB_OPT_SIZE,
     .arg = "SIZE",
     RB_OPT_AT(demo, limit),
     .lo = 1024,
     .def = "1M",
     .help = "a byte limit"},
    {.name = "mode",
     .type = RB_OPT_CUSTOM,
     .arg = "a|b",
     .off = 0,
     .fn = parse_mode,
     .def = "a",
     .help = "the mode"},
    {.name = "name",
     .type = RB_OPT_STR,
     .arg = "NAME",
     RB_OPT_AT(demo, name),
     .def = "x",
     .help = "a short name"},
    {.name = "on",
     .type = RB_OPT_BOOL,
     RB_OPT_AT(demo, on),
     .def = "true",
     .help = "switch it; a long help text that has to be wrapped at the edge of the usage text "
             "so that no line is wider than seventy-nine columns"},
    {.name = "rate",
     .type = RB_OPT_DOUBLE,
     .arg = "R",
     .unit = "requests/s",
     RB_OPT_AT(demo, rate),
     .min = 0,
     .max = 1e6,
     .excl_min = 1,
     .def = "20",
     .help = "a rate"},
    {.name = "seed",
     .type = RB_OPT_INT,
     .arg = "N",
     RB_OPT_AT(demo, seed),
     .lo = 0,
     .hi = INT64_MAX,
     .help = "a seed"},
    {.name = "wait",
     .type = RB_OPT_DURATION,
     .arg = "DUR",
     RB_OPT_AT(demo, wait_ns),
     .lo = 1000000,
     .def = "1s",
     .why = "must be a duration of at least 1ms",
     .help = "how long"},
};
static const rb_opts_spec SPEC = {.prog = "demo",
                                  .opts = OPTS,
                                  .n = sizeof OPTS / sizeof OPTS[0],
                                  .head = "Usage: demo\n",
                                  .tail = "Exit: 0 ok, 2 bad usage.\n"};

static int run(demo *d, char *err, int argc, char **argv)
{
    memset(d, 0, sizeof *d);
    assert_int_equal(rb_opts_defaults(&SPEC, d, err, 256), 0);
    return rb_opts_parse(&SPEC, d, argc, argv, err, 256);
}

static void defaults_come_from_the_table(void **state)
{
    demo d;
    char err[256];
    assert_int_equal(run(&d, err, 0, NULL), RB_OPTS_OK);
    assert_int_equal(d.count, 3);
    assert_true(d.rate == 20);
    assert_int_equal(d.wait_ns, 1000000000);
    assert_int_equal(d.limit, 1 << 20);
    assert_string_equal(d.name, "x");
    assert_int_equal(d.on, 1);
    assert_int_equal(d.mode, 'a');
    assert_int_equal(d.fast, 0);
}

static void both_value_forms_and_every_type(void **state)
{
    demo d;
    char err[256];
    char *argv[] = {"--count", "9",           "--seed=9223372036854775807",
                    "--fast",  "--rate=0.5",  "--wait",
                    "20ms",    "--limit=64k", "--name",
                    "abcdefg", "--on=false",  "--mode=b"};
    assert_int_equal(run(&d, err, 12, argv), RB_OPTS_OK);
    assert_int_equal(d.count, 9);
    assert_true(d.seed == INT64_MAX);
    assert_int_equal(d.fast, 7);
    assert_true(d.rate == 0.5);
    assert_int_equal(d.wait_ns, 20000000);
    assert_int_equal(d.limit, 65536);
    assert_string_equal(d.name, "abcdefg");
    assert_int_equal(d.on, 0);
    assert_int_equal(d.mode, 'b');
    char *on[] = {"--on", "--count", "4"}; /* a BOOL does not take the next argument */
    assert_int_equal(run(&d, err, 3, on), RB_OPTS_OK);
    assert_int_equal(d.on, 1);
    assert_int_equal(d.count, 4);
}

static void help_and_version(void **state)
{
    demo d;
    char err[256];
    char *h[] = {"--count", "2", "--help", "--bogus"};
    assert_int_equal(run(&d, err, 4, h), RB_OPTS_HELP);
    char *h2[] = {"-h"};
    assert_int_equal(run(&d, err, 1, h2), RB_OPTS_HELP);
    char *v[] = {"--version"};
    assert_int_equal(run(&d, err, 1, v), RB_OPTS_VERSION);
}

#define BAD(want, ...)                                                                             \
    do {                                                                                           \
        char *argv_[] = {__VA_ARGS__};                                                             \
        demo d_;                                                                                   \
        char e_[256] = "";                                                                         \
        assert_int_equal(run(&d_, e_, (int)(sizeof argv_ / sizeof argv_[0]), argv_), -1);          \
        if (strcmp(e_, want) != 0) fail_msg("got \"%s\", want \"%s\"", e_, want);                  \
    } while (0)

static void bad_usage_names_the_flag_and_value(void **state)
{
    BAD("--count: must be an integer in [1, 9], got '10'", "--count", "10");
    BAD("--count: needs a value", "--count");
    BAD("--seed: must be an integer >= 0, got '-1'", "--seed=-1");
    BAD("--rate: must be a number > 0 requests/s, got '0'", "--rate", "0");
    BAD("--wait: must be a duration of at least 1ms, got '10us'", "--wait", "10us");
    BAD("--limit: must be a size such as 64k or 1M, got '1'", "--limit", "1");
    BAD("--name: too long, got 'abcdefgh'", "--name", "abcdefgh");
    BAD("--name: must not be empty, got ''", "--name=");
    BAD("--on: must be true or false, got 'yes'", "--on=yes");
    BAD("--mode: must be a or b, got 'c'", "--mode", "c");
    BAD("--fast: takes no value, got '1'", "--fast=1");
    BAD("--bogus: unknown option (see --help)", "--bogus");
    BAD("--cou: unknown option (see --help)", "--cou", "1"); /* no abbreviations */
    BAD("stray: unexpected argument (see --help)", "stray");
    BAD("-x: unexpected argument (see --help)", "-x");
}

/* A second table: run lengths, choices, a flag taking several values, and
 * the program's own wording for unknown and stray arguments. */
typedef struct more {
    int64_t run_ns;
    int run_given;
    int kind;
    int sum;
} more;

static int add(void *base, const char *v, char *why, size_t n)
{
    more *m = base;
    if (strlen(v) != 1 || v[0] < '0' || v[0] > '9') {
        snprintf(why, n, "must be a digit");
        return -1;
    }
    m->sum += v[0] - '0';
    return 0;
}

static const rb_choice KINDS[] = {{"a", 1}, {"alias-of-a", 1}, {"b", 2}, {NULL, 0}};
static const rb_opt MORE[] = {
    {.name = "add",
     .type = RB_OPT_CUSTOM,
     .arg = "D...",
     .fn = add,
     .greedy = 1,
     .help = "digits to add"},
    {.name = "kind",
     .type = RB_OPT_CHOICE,
     .arg = "K",
     RB_OPT_AT(more, kind),
     .choices = KINDS,
     .def = "b",
     .help = "a kind"},
    {.name = "run",
     .type = RB_OPT_SECONDS,
     .arg = "D",
     RB_OPT_AT(more, run_ns),
     RB_OPT_GIVEN(more, run_given),
     .lo = 1,
     .def = "1",
     .help = "a run length"},
};
static const rb_opts_spec MORE_SPEC = {.prog = "more",
                                       .opts = MORE,
                                       .n = 3,
                                       .unknown_fmt = "unknown flag '%s' (see --help)",
                                       .stray_fmt = "unexpected argument '%s'"};

static int more_run(more *m, char *err, int argc, char **argv)
{
    memset(m, 0, sizeof *m);
    assert_int_equal(rb_opts_defaults(&MORE_SPEC, m, err, 256), 0);
    return rb_opts_parse(&MORE_SPEC, m, argc, argv, err, 256);
}

static void seconds_choices_greedy_and_wording(void **state)
{
    more m;
    char err[256] = "";
    assert_int_equal(more_run(&m, err, 0, NULL), 0);
    assert_int_equal(m.kind, 2);
    assert_int_equal(m.run_ns, 1000000000);
    assert_int_equal(m.run_given, 0); /* a default is not "given" */
    char *ok[] = {"--run",   "10", "--add",    "1", "2", "--kind=alias-of-a",
                  "--add=3", "4",  "--run=5ms"};
    assert_int_equal(more_run(&m, err, 9, ok), 0);
    assert_int_equal(m.run_ns, 5000000); /* the last --run; "10" alone was 10 s */
    assert_int_equal(m.run_given, 1);
    assert_int_equal(m.sum, 10);
    assert_int_equal(m.kind, 1);
    char *ten[] = {"--run", "10"};
    assert_int_equal(more_run(&m, err, 2, ten), 0);
    assert_int_equal(m.run_ns, 10000000000LL);
    char *none[] = {"--add", "--run", "1"};
    assert_int_equal(more_run(&m, err, 3, none), -1);
    assert_string_equal(err, "--add: needs a value");
    char *bad[] = {"--add", "1", "x"};
    assert_int_equal(more_run(&m, err, 3, bad), -1);
    assert_string_equal(err, "--add: must be a digit, got 'x'");
    char *kind[] = {"--kind", "c"};
    assert_int_equal(more_run(&m, err, 2, kind), -1);
    assert_string_equal(err, "--kind: must be a, alias-of-a or b, got 'c'");
    char *zero[] = {"--run", "0"};
    assert_int_equal(more_run(&m, err, 2, zero), -1);
    assert_string_equal(
        err, "--run: must be seconds >= 0, or a duration with a unit (500ms, 2s), got '0'");
    char *unk[] = {"--frob"};
    assert_int_equal(more_run(&m, err, 1, unk), -1);
    assert_string_equal(err, "unknown flag '--frob' (see --help)");
    char *stray[] = {"x"};
    assert_int_equal(more_run(&m, err, 1, stray), -1);
    assert_string_equal(err, "unexpected argument 'x'");
    static more scratch;
    assert_int_equal(rb_opts_check(&MORE_SPEC, &scratch, err, sizeof err), 0);
}

static void the_checker_catches_a_bad_table(void **state)
{
    demo scratch;
    char err[256];
    assert_int_equal(rb_opts_check(&SPEC, &scratch, err, sizeof err), 0);
    rb_opt swapped[2] = {OPTS[1], OPTS[0]};
    rb_opts_spec s = {.prog = "demo", .opts = swapped, .n = 2};
    assert_int_equal(rb_opts_check(&s, &scratch, err, sizeof err), -1);
    assert_non_null(strstr(err, "--count: out of alphabetical order"));
    rb_opt bad_def = OPTS[0];
    bad_def.def = "99";
    s = (rb_opts_spec){.prog = "demo", .opts = &bad_def, .n = 1};
    assert_int_equal(rb_opts_check(&s, &scratch, err, sizeof err), -1);
    assert_non_null(strstr(err, "--count: must be an integer in [1, 9], got '99'"));
    rb_opt wrong_size = OPTS[6];
    wrong_size.size = sizeof(int);
    s = (rb_opts_spec){.prog = "demo", .opts = &wrong_size, .n = 1};
    assert_int_equal(rb_opts_check(&s, &scratch, err, sizeof err), -1);
    /* A config key names one flag: found by it, and refused twice. */
    rb_opt keyed[2] = {OPTS[0], OPTS[1]};
    keyed[0].key = "run.count";
    keyed[1].key = "run.fast";
    s = (rb_opts_spec){.prog = "demo", .opts = keyed, .n = 2};
    assert_int_equal(rb_opts_check(&s, &scratch, err, sizeof err), 0);
    assert_ptr_equal(rb_opts_find_key(&s, "run.fast"), &keyed[1]);
    assert_null(rb_opts_find_key(&s, "run"));
    keyed[1].key = "run.count";
    assert_int_equal(rb_opts_check(&s, &scratch, err, sizeof err), -1);
    assert_string_equal(err, "--fast: config key 'run.count' is --count's already");
}

static void usage_lists_the_table_wrapped(void **state)
{
    char *u = rb_opts_usage(&SPEC);
    assert_non_null(u);
    assert_true(strncmp(u, "Usage: demo\n", 12) == 0);
    assert_non_null(strstr(u, "  --count N"));
    assert_non_null(strstr(u, "how many (default 3)\n"));
    assert_non_null(strstr(u, "a rate [requests/s] (default 20)\n"));
    assert_non_null(strstr(u, "  --on[=BOOL]"));
    assert_non_null(strstr(u, "  --help, -h"));
    assert_true(strstr(u, "  --count") < strstr(u, "  --wait")); /* table order */
    size_t n = strlen(u);
    assert_true(n > 12 && strcmp(u + n - 25, "Exit: 0 ok, 2 bad usage.\n") == 0);
    for (char *line = u; *line;) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        assert_true(end - line <= 79);
        line = end + 1;
    }
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_come_from_the_table),
        cmocka_unit_test(both_value_forms_and_every_type),
        cmocka_unit_test(help_and_version),
        cmocka_unit_test(bad_usage_names_the_flag_and_value),
        cmocka_unit_test(seconds_choices_greedy_and_wording),
        cmocka_unit_test(the_checker_catches_a_bad_table),
        cmocka_unit_test(usage_lists_the_table_wrapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
