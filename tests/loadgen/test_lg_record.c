/* lg_record: what the formatter writes the parser reads back unchanged, for
 * every failure class, with and without the server's timings, at the extreme
 * values; the exact bytes of a known record; malformed lines are refused
 * with a message naming the key. The token times: their exact bytes, a
 * record of the cap's worst case within lg_record_line_max, the parser's
 * two modes (counted, kept), and their malformed forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_record.h"
#include "lg_stats.h"

static lg_record sample(void)
{
    return (lg_record){.index = 7,
                       .worker = 1,
                       .stage = 2,
                       .intended_ns = 1000,
                       .dispatch_ns = 1200,
                       .first_byte_ns = 5000,
                       .first_token_ns = 5100,
                       .end_ns = 9000,
                       .input_tokens = 16,
                       .output_tokens = 8,
                       .status = 200,
                       .cls = "ok"};
}

static void round_trip(const lg_record *r)
{
    char buf[LG_RECORD_MAX], err[256] = "";
    int n = lg_record_format(r, buf, sizeof buf);
    assert_true(n > 0);
    assert_int_equal((size_t)n, strlen(buf));
    assert_int_equal(buf[n - 1], '\n');
    lg_record back;
    memset(&back, 0x5a, sizeof back);
    int rc = lg_record_parse(buf, (size_t)n, &back, err, sizeof err);
    if (rc) fprintf(stderr, "parse of %s: %s\n", buf, err);
    assert_int_equal(rc, 0);
    assert_int_equal(back.index, r->index);
    assert_int_equal(back.worker, r->worker);
    assert_int_equal(back.stage, r->stage);
    assert_int_equal(back.intended_ns, r->intended_ns);
    assert_int_equal(back.dispatch_ns, r->dispatch_ns);
    assert_int_equal(back.first_byte_ns, r->first_byte_ns);
    assert_int_equal(back.first_token_ns, r->first_token_ns);
    assert_int_equal(back.end_ns, r->end_ns);
    assert_int_equal(back.input_tokens, r->input_tokens);
    assert_int_equal(back.output_tokens, r->output_tokens);
    assert_int_equal(back.status, r->status);
    assert_string_equal(back.cls, r->cls);
    assert_int_equal(back.has_truth, !!r->has_truth);
    if (r->has_truth) {
        assert_int_equal(back.queue_ns, r->queue_ns);
        assert_int_equal(back.prefill_ns, r->prefill_ns);
        assert_int_equal(back.decode_ns, r->decode_ns);
    }
    assert_int_equal(back.has_sent, !!r->has_sent);
    if (r->has_sent) {
        assert_int_equal(back.sent_wire_ns, r->sent_wire_ns);
        assert_int_equal(back.sent_wire_last_ns, r->sent_wire_last_ns);
    }
    /* and the line the parsed record formats to is the same line */
    char again[LG_RECORD_MAX];
    assert_int_equal(lg_record_format(&back, again, sizeof again), n);
    assert_memory_equal(again, buf, (size_t)n);
}

/* The wire clock's departure times: both, written after the server's
 * timings, or none; one alone is refused. */
static void departure_times(void **state)
{
    (void)state;
    lg_record r = sample();
    r.has_sent = 1;
    r.sent_wire_ns = 1250;
    r.sent_wire_last_ns = 1260;
    char buf[LG_RECORD_MAX], err[256] = "";
    int n = lg_record_format(&r, buf, sizeof buf);
    assert_non_null(strstr(buf, ",\"sent_wire_ns\":1250,\"sent_wire_last_ns\":1260}"));
    round_trip(&r);
    r.has_truth = 1;
    round_trip(&r);
    r = sample();
    n = lg_record_format(&r, buf, sizeof buf);
    assert_null(strstr(buf, "sent_wire"));
    lg_record back;
    assert_int_equal(lg_record_parse(buf, (size_t)n, &back, err, sizeof err), 0);
    assert_int_equal(back.has_sent, 0);
    /* one of the two alone */
    char one[LG_RECORD_MAX];
    snprintf(one, sizeof one, "%.*s,\"sent_wire_ns\":5}", n - 2, buf);
    assert_int_equal(lg_record_parse(one, strlen(one), &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "'sent_wire_last_ns' missing"));
    snprintf(one, sizeof one, "%.*s,\"sent_wire_last_ns\":5}", n - 2, buf);
    assert_int_equal(lg_record_parse(one, strlen(one), &back, err, sizeof err), -1);
    assert_non_null(strstr(err, "'sent_wire_ns' missing"));
}

static void exact_bytes(void **state)
{
    (void)state;
    lg_record r = sample();
    r.has_truth = 1;
    r.queue_ns = 0;
    r.prefill_ns = 2018640;
    r.decode_ns = 7143575;
    char buf[LG_RECORD_MAX];
    const char *want =
        "{\"index\":7,\"worker\":1,\"stage\":2,\"intended_ns\":1000,\"dispatch_ns\":1200,"
        "\"first_byte_ns\":5000,\"first_token_ns\":5100,\"end_ns\":9000,\"input_tokens\":16,"
        "\"output_tokens\":8,\"status\":200,\"class\":\"ok\",\"queue_ns\":0,"
        "\"prefill_ns\":2018640,\"decode_ns\":7143575}\n";
    assert_int_equal(lg_record_format(&r, buf, sizeof buf), (int)strlen(want));
    assert_string_equal(buf, want);
    r.has_truth = 0;
    assert_true(lg_record_format(&r, buf, sizeof buf) > 0);
    assert_null(strstr(buf, "queue_ns"));
    /* too small a buffer: refused, not cut */
    assert_int_equal(lg_record_format(&r, buf, 40), -1);
}

static void every_class_with_and_without_stamps(void **state)
{
    (void)state;
    for (int c = 0; c < LG_N_CLASSES; c++) {
        for (int truth = 0; truth < 2; truth++) {
            lg_record r = sample();
            snprintf(r.cls, sizeof r.cls, "%s", lg_class_names[c]);
            if (strcmp(r.cls, "http") == 0 || strncmp(r.cls, "http", 4) == 0) {
                r.status = 503;
                snprintf(r.cls, sizeof r.cls, "http_%d", r.status);
            }
            if (c != 0) { /* a failure: some stamps did not happen */
                r.first_byte_ns = c % 2 ? -1 : r.first_byte_ns;
                r.first_token_ns = -1;
                r.output_tokens = 0;
            }
            r.has_truth = truth;
            r.queue_ns = 11 * c;
            r.prefill_ns = 13;
            r.decode_ns = 0;
            round_trip(&r);
        }
    }
    /* a dispatch that failed before it had a request: index -1, nothing happened */
    lg_record r = sample();
    r.index = -1;
    r.first_byte_ns = r.first_token_ns = -1;
    r.status = 0;
    r.input_tokens = r.output_tokens = 0;
    round_trip(&r);
}

static void extreme_values(void **state)
{
    (void)state;
    lg_record r = sample();
    r.index = INT64_MAX;
    r.worker = INT32_MAX;
    r.stage = INT32_MAX;
    r.intended_ns = r.dispatch_ns = r.first_byte_ns = r.first_token_ns = r.end_ns = INT64_MAX;
    r.input_tokens = r.output_tokens = INT64_MAX;
    r.status = INT32_MIN;
    r.has_truth = 1;
    r.queue_ns = r.prefill_ns = r.decode_ns = INT64_MAX;
    round_trip(&r);
    r = sample();
    r.index = INT64_MIN;
    r.intended_ns = r.dispatch_ns = r.first_byte_ns = r.first_token_ns = r.end_ns = 0;
    r.input_tokens = r.output_tokens = 0;
    r.stage = r.worker = r.status = 0;
    r.has_truth = 1;
    r.queue_ns = r.prefill_ns = r.decode_ns = 0;
    round_trip(&r);
}

static void escapes(void **state)
{
    (void)state;
    lg_record r = sample();
    snprintf(r.cls, sizeof r.cls, "a\"b\\c\nd\te\x01/\xc3\xa9");
    char buf[LG_RECORD_MAX];
    assert_true(lg_record_format(&r, buf, sizeof buf) > 0);
    assert_non_null(strstr(buf, "\"class\":\"a\\\"b\\\\c\\nd\\te\\u0001/\xc3\xa9\""));
    round_trip(&r);
    /* \u escapes another writer may use come back as UTF-8 */
    const char *u = "{\"index\":0,\"worker\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":0,"
                    "\"first_byte_ns\":0,\"first_token_ns\":0,\"end_ns\":0,\"input_tokens\":0,"
                    "\"output_tokens\":0,\"status\":0,\"class\":\"\\u00e9\\ud83d\\ude00\\/\"}";
    lg_record back;
    char err[256] = "";
    assert_int_equal(lg_record_parse(u, strlen(u), &back, err, sizeof err), 0);
    assert_string_equal(back.cls, "\xc3\xa9\xf0\x9f\x98\x80/");
}

/* A valid line with key k's "key":value replaced by repl (NULL: dropped). */
static void line_with(char *out, size_t cap, const char *k, const char *repl)
{
    static const char *const kv[] = {
        "\"index\":3",        "\"worker\":0",        "\"stage\":0",          "\"intended_ns\":1",
        "\"dispatch_ns\":2",  "\"first_byte_ns\":3", "\"first_token_ns\":4", "\"end_ns\":5",
        "\"input_tokens\":6", "\"output_tokens\":7", "\"status\":200",       "\"class\":\"ok\"",
        "\"queue_ns\":1",     "\"prefill_ns\":2",    "\"decode_ns\":3"};
    size_t n = (size_t)snprintf(out, cap, "{");
    int first = 1;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        const char *item = kv[i];
        char key[40];
        snprintf(key, sizeof key, "\"%s\":", k);
        if (strncmp(item, key, strlen(key)) == 0) item = repl;
        if (!item) continue;
        n += (size_t)snprintf(out + n, cap - n, "%s%s", first ? "" : ",", item);
        first = 0;
    }
    snprintf(out + n, cap - n, "}\n");
}

static void refuse(const char *line, const char *want)
{
    lg_record r;
    char err[256] = "";
    assert_int_equal(lg_record_parse(line, strlen(line), &r, err, sizeof err), -1);
    if (!strstr(err, want)) fprintf(stderr, "line %s: got '%s', want '%s'\n", line, err, want);
    assert_non_null(strstr(err, want));
}

static void malformed_lines_name_the_key(void **state)
{
    (void)state;
    char line[LG_RECORD_MAX];
    lg_record r;
    char err[256] = "";
    line_with(line, sizeof line, "none", NULL);
    assert_int_equal(lg_record_parse(line, strlen(line), &r, err, sizeof err), 0);
    assert_int_equal(r.has_truth, 1);
    assert_int_equal(r.decode_ns, 3);

    static const char *const required[] = {
        "index",          "worker", "stage",        "intended_ns",   "dispatch_ns", "first_byte_ns",
        "first_token_ns", "end_ns", "input_tokens", "output_tokens", "status"};
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        char want[80], bad[80];
        snprintf(want, sizeof want, "'%s' missing or not a number", required[i]);
        line_with(line, sizeof line, required[i], NULL);
        refuse(line, want);
        snprintf(bad, sizeof bad, "\"%s\":\"12\"", required[i]);
        line_with(line, sizeof line, required[i], bad);
        refuse(line, want);
        snprintf(bad, sizeof bad, "\"%s\":1.5", required[i]);
        line_with(line, sizeof line, required[i], bad);
        refuse(line, want);
        snprintf(bad, sizeof bad, "\"%s\":9223372036854775808", required[i]);
        line_with(line, sizeof line, required[i], bad);
        refuse(line, want);
    }
    static const struct {
        const char *key, *repl, *want;
    } cases[] = {
        {"class", NULL, "'class' missing or not a short string"},
        {"class", "\"class\":\"a_class_name_longer_than_24\"",
         "'class' missing or not a short string"},
        {"class", "\"class\":7", "'class' missing or not a short string"},
        {"stage", "\"stage\":4294967296", "'stage' out of range"},
        {"stage", "\"stage\":-1", "bad 'stage'"},
        {"prefill_ns", NULL, "'prefill_ns' missing"},
        {"end_ns", "\"end_ns\":5,\"end_ns\":6", "'end_ns' given twice"},
        {"class", "\"class\":\"o\\qk\"", "'class': bad string"},
        {"end_ns", "\"end_ns\":", "'end_ns': bad value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        line_with(line, sizeof line, cases[i].key, cases[i].repl);
        refuse(line, cases[i].want);
    }
    refuse("[1]", "not a JSON object");
    refuse("", "not a JSON object");
    refuse("{\"index\":1", "after 'index'");
    refuse("{\"index\" 1}", "no ':' after 'index'");
    line_with(line, sizeof line, "none", NULL);
    strcat(line, "x");
    refuse(line, "text after the object");

    /* unknown keys are skipped whatever their simple value */
    line_with(line, sizeof line, "status",
              "\"status\":200,\"extra\":\"s\",\"n\":1.5e3,\"t\":true,\"z\":null");
    assert_int_equal(lg_record_parse(line, strlen(line), &r, err, sizeof err), 0);
    assert_int_equal(r.status, 200);
}

/* The token times: after everything else, the count before the list;
 * read back counted only, or kept in the caller's buffer. */
static void token_times_exact_bytes(void **state)
{
    (void)state;
    static const int64_t tt[] = {0, 1, 999, 1000, -2, INT64_MAX, INT64_MIN};
    lg_record r = sample();
    r.has_sent = 1;
    r.sent_wire_ns = 1250;
    r.sent_wire_last_ns = 1260;
    r.has_token_times = 1;
    r.token_times_us = tt;
    r.n_token_times = 7;
    r.token_times_dropped = 3;
    char buf[LG_RECORD_MAX], err[256] = "";
    int n = lg_record_format(&r, buf, sizeof buf);
    assert_true(n > 0);
    const char *tail = ",\"sent_wire_last_ns\":1260,\"token_times_dropped\":3,\"token_times_us\":"
                       "[0,1,999,1000,-2,9223372036854775807,-9223372036854775808]}\n";
    assert_true((size_t)n > strlen(tail));
    assert_string_equal(buf + n - strlen(tail), tail);
    /* counted, not kept */
    lg_record back;
    assert_int_equal(lg_record_parse(buf, (size_t)n, &back, err, sizeof err), 0);
    assert_int_equal(back.has_token_times, 1);
    assert_int_equal(back.n_token_times, 7);
    assert_int_equal(back.token_times_dropped, 3);
    assert_null(back.token_times_us);
    assert_int_equal(back.has_sent, 1);
    /* kept, and formatted back to the same bytes */
    int64_t got[8] = {0};
    assert_int_equal(lg_record_parse_times(buf, (size_t)n, &back, got, 8, err, sizeof err), 0);
    assert_ptr_equal(back.token_times_us, got);
    assert_int_equal(back.n_token_times, 7);
    assert_memory_equal(got, tt, sizeof tt);
    char again[LG_RECORD_MAX];
    assert_int_equal(lg_record_format(&back, again, sizeof again), n);
    assert_memory_equal(again, buf, (size_t)n);
    /* none yet (a request that failed before its first token): an empty list */
    r.n_token_times = 0;
    r.token_times_dropped = 0;
    r.token_times_us = NULL;
    n = lg_record_format(&r, buf, sizeof buf);
    assert_non_null(strstr(buf, ",\"token_times_dropped\":0,\"token_times_us\":[]}\n"));
    assert_int_equal(lg_record_parse_times(buf, (size_t)n, &back, got, 8, err, sizeof err), 0);
    assert_int_equal(back.has_token_times, 1);
    assert_int_equal(back.n_token_times, 0);
    /* off: neither key */
    r.has_token_times = 0;
    n = lg_record_format(&r, buf, sizeof buf);
    assert_null(strstr(buf, "token_times"));
    assert_int_equal(lg_record_parse(buf, (size_t)n, &back, err, sizeof err), 0);
    assert_int_equal(back.has_token_times, 0);
    assert_int_equal(back.n_token_times, 0);
    /* spaces inside the list, as another writer may put them */
    const char *spaced =
        "{\"index\":0,\"worker\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":0,"
        "\"first_byte_ns\":0,\"first_token_ns\":0,\"end_ns\":0,\"input_tokens\":0,"
        "\"output_tokens\":2,\"status\":200,\"class\":\"ok\","
        "\"token_times_us\": [ 5 , 6 ] ,\"token_times_dropped\":0}";
    assert_int_equal(lg_record_parse_times(spaced, strlen(spaced), &back, got, 8, err, sizeof err),
                     0);
    assert_int_equal(back.n_token_times, 2);
    assert_true(got[0] == 5 && got[1] == 6);
}

/* The longest record with token times fits lg_record_line_max(cap): every
 * field at its widest, the class all escapes, and cap times of 20 digits. */
static void token_times_within_the_line_max(void **state)
{
    (void)state;
    static const int64_t caps[] = {1, 7, 4096};
    for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
        int64_t cap = caps[c];
        int64_t *tt = malloc((size_t)cap * sizeof *tt);
        assert_non_null(tt);
        for (int64_t i = 0; i < cap; i++)
            tt[i] = INT64_MIN;
        lg_record r = {.index = INT64_MIN,
                       .worker = INT32_MIN,
                       .stage = INT32_MAX, /* (a negative one is refused) */
                       .intended_ns = INT64_MIN,
                       .dispatch_ns = INT64_MIN,
                       .first_byte_ns = INT64_MIN,
                       .first_token_ns = INT64_MIN,
                       .end_ns = INT64_MIN,
                       .input_tokens = INT64_MIN,
                       .output_tokens = INT64_MIN,
                       .status = INT32_MIN,
                       .has_truth = 1,
                       .queue_ns = INT64_MIN,
                       .prefill_ns = INT64_MIN,
                       .decode_ns = INT64_MIN,
                       .has_sent = 1,
                       .sent_wire_ns = INT64_MIN,
                       .sent_wire_last_ns = INT64_MIN,
                       .has_token_times = 1,
                       .token_times_us = tt,
                       .n_token_times = cap,
                       .token_times_dropped = INT64_MAX};
        memset(r.cls, 1, sizeof r.cls - 1); /* each written as \u0001 */
        size_t max = lg_record_line_max(cap);
        char *buf = malloc(max);
        assert_non_null(buf);
        int n = lg_record_format(&r, buf, max);
        assert_true(n > 0);
        assert_true((size_t)n < max);
        /* the list is all there; a buffer one byte short of the line is refused */
        assert_true((size_t)n > (size_t)cap * LG_RECORD_TT_ENTRY_MAX);
        assert_int_equal(lg_record_format(&r, buf, (size_t)n), -1);
        assert_int_equal(lg_record_format(&r, buf, (size_t)n + 1), n);
        /* the parser's bound on the entries: len / 2 + 1 */
        lg_record back;
        char err[256] = "";
        int64_t *got = malloc(((size_t)n / 2 + 1) * sizeof *got);
        assert_non_null(got);
        assert_int_equal(
            lg_record_parse_times(buf, (size_t)n, &back, got, (size_t)n / 2 + 1, err, sizeof err),
            0);
        assert_int_equal(back.n_token_times, cap);
        assert_true(got[cap - 1] == INT64_MIN);
        free(got);
        free(buf);
        free(tt);
    }
    /* one-digit times, the densest list: len / 2 + 1 still holds them */
    char line[4096];
    int n =
        snprintf(line, sizeof line,
                 "{\"index\":0,\"worker\":0,\"stage\":0,\"intended_ns\":0,\"dispatch_ns\":0,"
                 "\"first_byte_ns\":0,\"first_token_ns\":0,\"end_ns\":0,\"input_tokens\":0,"
                 "\"output_tokens\":2,\"status\":200,\"class\":\"ok\",\"token_times_dropped\":0,"
                 "\"token_times_us\":[");
    for (int i = 0; i < 1000; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, i ? ",%d" : "%d", i % 10);
    n += snprintf(line + n, sizeof line - (size_t)n, "]}");
    int64_t got[4096 / 2 + 1];
    lg_record back;
    char err[256] = "";
    assert_int_equal(
        lg_record_parse_times(line, (size_t)n, &back, got, (size_t)n / 2 + 1, err, sizeof err), 0);
    assert_int_equal(back.n_token_times, 1000);
    assert_int_equal(got[999], 9);
    /* and a buffer too small is an error, not a cut */
    assert_int_equal(lg_record_parse_times(line, (size_t)n, &back, got, 999, err, sizeof err), -1);
    assert_string_equal(err, "'token_times_us': more than 999 entries");
}

static void token_times_malformed(void **state)
{
    (void)state;
    char line[LG_RECORD_MAX];
    static const struct {
        const char *repl, *want;
    } cases[] = {
        {"\"status\":200,\"token_times_dropped\":0",
         "'token_times_us' missing (the token times come with their dropped count)"},
        {"\"status\":200,\"token_times_us\":[1]",
         "'token_times_dropped' missing (the token times come with their dropped count)"},
        {"\"status\":200,\"token_times_us\":[1],\"token_times_dropped\":-1",
         "bad 'token_times_dropped'"},
        {"\"status\":200,\"token_times_us\":[1,2.5],\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":[1,,2],\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":[1 2],\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":[1,],\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":[\"1\"],\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":[9223372036854775808],\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":5,\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":\"5\",\"token_times_dropped\":0",
         "'token_times_us' missing or not a list of integers"},
        {"\"status\":200,\"token_times_us\":[1],\"token_times_dropped\":[0]",
         "'token_times_dropped': bad value"},
        {"\"status\":200,\"token_times_us\":[1],\"token_times_us\":[1],\"token_times_dropped\":0",
         "'token_times_us' given twice"},
        {"\"status\":200,\"other\":[1]", "'other': bad value"},
        {"\"status\":200,\"token_times_us\":[1", "'token_times_us' missing or not a list"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        line_with(line, sizeof line, "status", cases[i].repl);
        refuse(line, cases[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_bytes),
        cmocka_unit_test(departure_times),
        cmocka_unit_test(every_class_with_and_without_stamps),
        cmocka_unit_test(extreme_values),
        cmocka_unit_test(escapes),
        cmocka_unit_test(malformed_lines_name_the_key),
        cmocka_unit_test(token_times_exact_bytes),
        cmocka_unit_test(token_times_within_the_line_max),
        cmocka_unit_test(token_times_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
