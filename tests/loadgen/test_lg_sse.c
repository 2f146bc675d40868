/* Unit tests for lg_sse: events and comments come out identical whatever the
 * way the stream is cut into pieces, with every line ending, and within
 * bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_sse.h"

/* What the parser said, in order, as text: "E[len]data|" and "C[len]text|". */
typedef struct transcript {
    char buf[8192];
    size_t len;
} transcript;

static void put(transcript *t, char kind, const char *s, size_t n)
{
    int w = snprintf(t->buf + t->len, sizeof t->buf - t->len, "%c[%zu]", kind, n);
    assert_true(w > 0 && t->len + (size_t)w + n + 1 < sizeof t->buf);
    t->len += (size_t)w;
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len++] = '|';
    t->buf[t->len] = '\0';
}

static void on_event(void *user, const char *data, size_t len)
{
    put(user, 'E', data, len);
}

static void on_comment(void *user, const char *text, size_t len)
{
    put(user, 'C', text, len);
}

/* A stream with every feature: ground-truth comments, CRLF, CR and LF
 * endings, multi-line data, empty data, ignored fields, a field without a
 * colon, and a final event with no blank line after it. */
static const char STREAM[] =
    ": t=1000\r\n"
    "data: {\"choices\":[{\"text\":\"Hello\"}]}\r\n\r\n"
    ":t=2000\n"
    "data: {\"choices\":[{\"text\":\" world\"}]}\n\n"
    "data: line one\rdata:  line two\r\r"
    "event: message\nid: 7\nretry: 100\ndata:\n\n"
    "data\r\n\r\n"
    "unknown: field\n\n"
    ":\n"
    ": {\"queue_ns\":1,\"prefill_ns\":2,\"decode_ns\":3,\"cached_tokens\":0}\n"
    "data: [DONE]\n\n"
    "data: never finished";

static const char EXPECTED[] =
    "C[6]t=1000|"
    "E[30]{\"choices\":[{\"text\":\"Hello\"}]}|"
    "C[6]t=2000|"
    "E[31]{\"choices\":[{\"text\":\" world\"}]}|"
    "E[18]line one\n line two|"
    "E[0]|"
    "E[0]|"
    "C[0]|"
    "C[61]{\"queue_ns\":1,\"prefill_ns\":2,\"decode_ns\":3,\"cached_tokens\":0}|"
    "E[6][DONE]|";

/* Feeds STREAM cut at the given offsets (ascending), then finishes. */
static void feed_cut(const size_t *cuts, size_t n_cuts, transcript *t, int *finish_rc)
{
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, t, 0);
    size_t len = sizeof STREAM - 1, at = 0;
    for (size_t i = 0; i <= n_cuts; i++) {
        size_t to = i < n_cuts ? cuts[i] : len;
        assert_int_equal(lg_sse_feed(&p, STREAM + at, to - at), 0);
        at = to;
    }
    *finish_rc = lg_sse_finish(&p);
    lg_sse_free(&p);
}

static void one_shot_gives_the_expected_events(void **state)
{
    transcript t = {0};
    int rc;
    feed_cut(NULL, 0, &t, &rc);
    assert_string_equal(t.buf, EXPECTED);
    assert_int_equal(rc, 1); /* "never finished" was discarded */
}

static void every_split_point_gives_the_same_events(void **state)
{
    size_t len = sizeof STREAM - 1;
    for (size_t cut = 0; cut <= len; cut++) {
        transcript t = {0};
        int rc;
        feed_cut(&cut, 1, &t, &rc);
        if (strcmp(t.buf, EXPECTED) != 0) fail_msg("split at %zu: got %s", cut, t.buf);
        assert_int_equal(rc, 1);
    }
}

static void every_pair_of_split_points_gives_the_same_events(void **state)
{
    size_t len = sizeof STREAM - 1;
    for (size_t a = 0; a <= len; a++)
        for (size_t b = a; b <= len; b++) {
            size_t cuts[2] = {a, b};
            transcript t = {0};
            int rc;
            feed_cut(cuts, 2, &t, &rc);
            if (strcmp(t.buf, EXPECTED) != 0) fail_msg("split at %zu and %zu: got %s", a, b, t.buf);
        }
}

static void byte_at_a_time_gives_the_same_events(void **state)
{
    size_t len = sizeof STREAM - 1;
    size_t *cuts = malloc(len * sizeof *cuts);
    assert_non_null(cuts);
    for (size_t i = 0; i < len; i++)
        cuts[i] = i + 1;
    transcript t = {0};
    int rc;
    feed_cut(cuts, len - 1, &t, &rc);
    free(cuts);
    assert_string_equal(t.buf, EXPECTED);
    assert_int_equal(rc, 1);
}

static void comments_come_in_stream_order_with_events(void **state)
{
    transcript t = {0};
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, &t, 0);
    const char s[] = "data: a\n: between\ndata: b\n\n: after\n";
    assert_int_equal(lg_sse_feed(&p, s, sizeof s - 1), 0);
    /* The comment is reported when its line ends, before the event it sits
     * inside is dispatched. */
    assert_string_equal(t.buf, "C[7]between|E[3]a\nb|C[5]after|");
    assert_int_equal(lg_sse_finish(&p), 0);
    lg_sse_free(&p);
}

static void null_comment_callback_is_allowed(void **state)
{
    transcript t = {0};
    lg_sse p;
    lg_sse_init(&p, on_event, NULL, &t, 0);
    const char s[] = ": t=5\ndata: x\n\n";
    assert_int_equal(lg_sse_feed(&p, s, sizeof s - 1), 0);
    assert_string_equal(t.buf, "E[1]x|");
    lg_sse_free(&p);
}

static void finish_processes_an_unterminated_comment(void **state)
{
    transcript t = {0};
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, &t, 0);
    assert_int_equal(lg_sse_feed(&p, "data: x\n\n: last", 15), 0);
    assert_int_equal(lg_sse_finish(&p), 0); /* no event bytes were pending */
    assert_string_equal(t.buf, "E[1]x|C[4]last|");
    lg_sse_free(&p);
}

static void a_trailing_cr_then_lf_in_the_next_piece_is_one_ending(void **state)
{
    transcript t = {0};
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, &t, 0);
    assert_int_equal(lg_sse_feed(&p, "data: x\r", 8), 0);
    assert_int_equal(lg_sse_feed(&p, "\n", 1), 0);
    assert_string_equal(t.buf, ""); /* CRLF is one line end, not a blank line */
    assert_int_equal(lg_sse_feed(&p, "\r", 1), 0);
    assert_string_equal(t.buf, "E[1]x|");
    lg_sse_free(&p);
}

static void lines_and_events_past_max_bytes_fail(void **state)
{
    transcript t = {0};
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, &t, 16);
    /* A line of exactly 16 bytes is fine. */
    assert_int_equal(lg_sse_feed(&p, "data: 0123456789\n\n", 18), 0);
    assert_string_equal(t.buf, "E[10]0123456789|");
    /* ... also when split across pieces. */
    assert_int_equal(lg_sse_feed(&p, "data: 01234", 11), 0);
    assert_int_equal(lg_sse_feed(&p, "56789\n\n", 7), 0);
    assert_string_equal(t.buf, "E[10]0123456789|E[10]0123456789|");
    /* Data lines that add up to exactly 16 bytes (7 + the joining LF + 8). */
    const char exact[] = "data: 1234567\ndata: 12345678\n\n";
    assert_int_equal(lg_sse_feed(&p, exact, sizeof exact - 1), 0);
    assert_string_equal(t.buf, "E[10]0123456789|E[10]0123456789|E[16]1234567\n12345678|");
    /* A 17-byte line fails, in one piece or split. */
    assert_int_equal(lg_sse_feed(&p, "data: 0123456789a\n", 18), -EMSGSIZE);
    lg_sse_reset(&p);
    assert_int_equal(lg_sse_feed(&p, "data: 01234", 11), 0);
    assert_int_equal(lg_sse_feed(&p, "56789a", 6), -EMSGSIZE);
    lg_sse_reset(&p);
    /* A line that never ends is bounded too. */
    assert_int_equal(lg_sse_feed(&p, "xxxxxxxxxxxxxxxxxxxxxxxxx", 25), -EMSGSIZE);
    lg_sse_reset(&p);
    /* Short lines whose data add up past the bound fail as well. */
    assert_int_equal(lg_sse_feed(&p, "data: 12345678\n", 15), 0);
    assert_int_equal(lg_sse_feed(&p, "data: 12345678\n", 15), -EMSGSIZE);
    lg_sse_reset(&p);
    /* After a reset the parser works again. */
    t.len = 0;
    t.buf[0] = '\0';
    assert_int_equal(lg_sse_feed(&p, "data: ok\n\n", 10), 0);
    assert_string_equal(t.buf, "E[2]ok|");
    lg_sse_free(&p);
}

static void reset_forgets_a_partial_event(void **state)
{
    transcript t = {0};
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, &t, 0);
    assert_int_equal(lg_sse_feed(&p, "data: old\ndata: part", 20), 0);
    lg_sse_reset(&p);
    assert_int_equal(lg_sse_feed(&p, "data: new\n\n", 11), 0);
    assert_string_equal(t.buf, "E[3]new|");
    assert_int_equal(lg_sse_finish(&p), 0);
    lg_sse_free(&p);
}

/* Where each event ended in the piece fed: the wire clock maps it to the
 * segment that carried it. */
static lg_sse *at_parser;
static const char *at_base;
static long at_seen[4];
static int at_n;
static void on_event_at(void *user, const char *data, size_t len)
{
    (void)user, (void)data, (void)len;
    assert_true(at_n < 4);
    at_seen[at_n++] = at_parser->at ? at_parser->at - at_base : -1;
}

static void events_say_where_they_ended(void **state)
{
    (void)state;
    static const char piece[] = "data: a\n\ndata: bb\r\n\r\n: c\ndata: c\n";
    lg_sse p;
    lg_sse_init(&p, on_event_at, NULL, NULL, 0);
    at_parser = &p;
    at_base = piece;
    at_n = 0;
    assert_int_equal(lg_sse_feed(&p, piece, sizeof piece - 1), 0);
    assert_int_equal(at_n, 2);
    assert_int_equal(at_seen[0], 8);  /* the blank line's LF */
    assert_int_equal(at_seen[1], 19); /* the blank line's CR (its LF is next) */
    /* An event finished in the next piece ends there. */
    static const char rest[] = "\n";
    at_base = rest;
    assert_int_equal(lg_sse_feed(&p, rest, 1), 0);
    assert_int_equal(at_n, 3);
    assert_int_equal(at_seen[2], 0);
    lg_sse_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_shot_gives_the_expected_events),
        cmocka_unit_test(every_split_point_gives_the_same_events),
        cmocka_unit_test(every_pair_of_split_points_gives_the_same_events),
        cmocka_unit_test(byte_at_a_time_gives_the_same_events),
        cmocka_unit_test(comments_come_in_stream_order_with_events),
        cmocka_unit_test(null_comment_callback_is_allowed),
        cmocka_unit_test(finish_processes_an_unterminated_comment),
        cmocka_unit_test(a_trailing_cr_then_lf_in_the_next_piece_is_one_ending),
        cmocka_unit_test(lines_and_events_past_max_bytes_fail),
        cmocka_unit_test(reset_forgets_a_partial_event),
        cmocka_unit_test(events_say_where_they_ended),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
