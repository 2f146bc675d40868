/* Unit tests for sim_http: request framing, the headers simserver reads,
 * pipelining, and the statuses that bad input earns (400, 413, 431). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_http.h"

static const sim_http_limits lim = {.max_header_bytes = 65536, .max_body_bytes = 1 << 20};

typedef struct seen {
    int n;
    char path[4][64];
    char body[4][128];
    int stamp[4];
    char fail[4][32];
    int keep_alive[4];
} seen;

static void record(const sim_http_request *r, void *ud)
{
    seen *s = ud;
    if (s->n >= 4) return;
    snprintf(s->path[s->n], sizeof s->path[0], "%.60s", r->path);
    snprintf(s->body[s->n], sizeof s->body[0], "%.*s", (int)r->body_len, r->body ? r->body : "");
    s->stamp[s->n] = r->stamp;
    snprintf(s->fail[s->n], sizeof s->fail[0], "%s", r->fail);
    s->keep_alive[s->n] = r->keep_alive;
    s->n++;
}

static void parses_a_post_with_its_headers(void **state)
{
    const char req[] = "POST /v1/completions?x=1 HTTP/1.1\r\nHost: a\r\nX-Sim-Stamp: 1\r\n"
                       "x-sim-fail: stall\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
    seen s = {0};
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &lim, record, &s), 1);
    assert_string_equal(s.path[0], "/v1/completions");
    assert_string_equal(s.body[0], "{\"a\":1}");
    assert_int_equal(s.stamp[0], 1);
    assert_string_equal(s.fail[0], "stall");
    assert_int_equal(s.keep_alive[0], 1);
}

static void stamp_needs_the_value_one(void **state)
{
    const char req[] = "GET /health HTTP/1.1\r\nX-Sim-Stamp: 0\r\n\r\n";
    seen s = {0};
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &lim, record, &s), 1);
    assert_int_equal(s.stamp[0], 0);
    assert_string_equal(s.fail[0], "");
}

static void pipelined_requests_come_out_in_order(void **state)
{
    const char req[] =
        "GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\nGET /c HTTP/1.1\r\nConnection: close\r\n\r\n";
    seen s = {0};
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &lim, record, &s), 3);
    assert_string_equal(s.path[0], "/a");
    assert_string_equal(s.path[1], "/b");
    assert_string_equal(s.body[1], "abcde");
    assert_string_equal(s.path[2], "/c");
    assert_int_equal(s.keep_alive[2], 0);
}

static void bytes_fed_one_by_one_give_the_same_request(void **state)
{
    const char req[] = "POST /v1/chat/completions HTTP/1.1\r\nX-Sim-Fail: rate_limit\r\n"
                       "Content-Length: 5\r\n\r\nhello";
    sim_http_parser hp;
    sim_http_init(&hp, &lim);
    int rc = SIM_HTTP_MORE;
    size_t i = 0;
    for (; i < sizeof req - 1; i++) {
        size_t used = 0;
        rc = sim_http_feed(&hp, req + i, 1, &used);
        assert_int_equal(used, 1);
        if (rc != SIM_HTTP_MORE) break;
    }
    assert_int_equal(rc, SIM_HTTP_DONE);
    assert_int_equal(i, sizeof req - 2);
    assert_string_equal(hp.req.path, "/v1/chat/completions");
    assert_string_equal(hp.req.fail, "rate_limit");
    assert_int_equal(hp.req.body_len, 5);
    sim_http_free(&hp);
}

static void garbage_is_400(void **state)
{
    const char req[] = "HELLO THERE\r\n\r\n";
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &lim, NULL, NULL), -400);
}

static void a_declared_large_body_is_413_before_it_is_sent(void **state)
{
    const char req[] = "POST /v1/completions HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n";
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &lim, NULL, NULL), -413);
}

static void a_chunked_body_past_the_limit_is_413(void **state)
{
    sim_http_limits small = {.max_header_bytes = 65536, .max_body_bytes = 8};
    const char req[] = "POST /x HTTP/1.1\r\nTransfer-Encoding: "
                       "chunked\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n";
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &small, NULL, NULL), -413);
}

/* The limits are inclusive: a body of exactly max_body_bytes and a header
 * section of exactly max_header_bytes (the URL, names and values as the
 * parser hands them over: "/x" + "Host" + "a" = 7 bytes) are served. */
static void the_limits_are_inclusive(void **state)
{
    sim_http_limits body8 = {.max_header_bytes = 65536, .max_body_bytes = 8};
    const char chunked[] = "POST /x HTTP/1.1\r\nTransfer-Encoding: "
                           "chunked\r\n\r\n5\r\nhello\r\n3\r\nabc\r\n0\r\n\r\n";
    assert_int_equal(sim_http_parse_bytes(chunked, sizeof chunked - 1, &body8, NULL, NULL), 1);
    const char declared[] = "POST /x HTTP/1.1\r\nContent-Length: 8\r\n\r\nhelloabc";
    assert_int_equal(sim_http_parse_bytes(declared, sizeof declared - 1, &body8, NULL, NULL), 1);
    body8.max_body_bytes = 7;
    assert_int_equal(sim_http_parse_bytes(chunked, sizeof chunked - 1, &body8, NULL, NULL), -413);
    assert_int_equal(sim_http_parse_bytes(declared, sizeof declared - 1, &body8, NULL, NULL), -413);
    const char get[] = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
    sim_http_limits head7 = {.max_header_bytes = 7, .max_body_bytes = 8};
    assert_int_equal(sim_http_parse_bytes(get, sizeof get - 1, &head7, NULL, NULL), 1);
    head7.max_header_bytes = 6;
    assert_int_equal(sim_http_parse_bytes(get, sizeof get - 1, &head7, NULL, NULL), -431);
}

static void a_huge_header_section_is_431(void **state)
{
    size_t n = 70000;
    char *req = malloc(n + 64);
    int k = sprintf(req, "GET / HTTP/1.1\r\nX-Big: ");
    memset(req + k, 'a', n);
    memcpy(req + k + n, "\r\n\r\n", 4);
    assert_int_equal(sim_http_parse_bytes(req, (size_t)k + n + 4, &lim, NULL, NULL), -431);
    free(req);
}

static void an_incomplete_request_is_not_a_request(void **state)
{
    const char req[] = "POST /v1/completions HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc";
    seen s = {0};
    assert_int_equal(sim_http_parse_bytes(req, sizeof req - 1, &lim, record, &s), 0);
    assert_int_equal(s.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_a_post_with_its_headers),
        cmocka_unit_test(stamp_needs_the_value_one),
        cmocka_unit_test(pipelined_requests_come_out_in_order),
        cmocka_unit_test(bytes_fed_one_by_one_give_the_same_request),
        cmocka_unit_test(garbage_is_400),
        cmocka_unit_test(a_declared_large_body_is_413_before_it_is_sent),
        cmocka_unit_test(a_chunked_body_past_the_limit_is_413),
        cmocka_unit_test(the_limits_are_inclusive),
        cmocka_unit_test(a_huge_header_section_is_431),
        cmocka_unit_test(an_incomplete_request_is_not_a_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
