/* fuzz_sim_request: simserver's request handling on any bytes: HTTP framing
 * (sim_http) and the JSON body check (sim_api) of each request found. The
 * framing must not depend on how the bytes were cut: the input is parsed
 * whole and in two pieces, and the requests (and whether it ended in an
 * error) must be identical, or the harness aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_api.h"
#include "sim_http.h"

/* A digest of what the parser produced: requests in order, then the status. */
typedef struct digest {
    uint64_t h;
    int count;
} digest;

static void mix(digest *d, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) {
        d->h ^= s[i];
        d->h *= 1099511628211ULL;
    }
    d->h ^= n;
    d->h *= 1099511628211ULL;
}

static void record(digest *d, const sim_http_request *r)
{
    int ints[6] = {r->method,     r->path_too_long, r->http_minor,
                   r->keep_alive, r->stamp,         r->expect_continue};
    mix(d, ints, sizeof ints);
    /* A path too long is not kept (its prefix depends on the cut; the
     * server answers 404 without looking at it). */
    if (!r->path_too_long) mix(d, r->path, strnlen(r->path, sizeof r->path));
    mix(d, r->fail, strnlen(r->fail, sizeof r->fail));
    mix(d, r->body ? r->body : "", r->body_len);
    d->count++;
}

static const char *const MODELS[] = {"sim-model", "other"};

static void handle(const sim_http_request *r, void *ud)
{
    record(ud, r);
    if (memchr(r->path, '\0', sizeof r->path) == NULL) abort();
    sim_route route = r->path_too_long ? SIM_ROUTE_NOT_FOUND : sim_api_route(r->method, r->path);
    if (route != SIM_ROUTE_COMPLETIONS && route != SIM_ROUTE_CHAT) return;
    sim_api_limits lim = {.served_models = MODELS, .n_served = 2, .max_model_len = 4096};
    sim_req_spec spec;
    sim_api_error err;
    int rc = sim_api_parse(r->body ? r->body : "", r->body_len, route == SIM_ROUTE_CHAT, &lim,
                           &spec, &err);
    if (rc == 0) {
        if (spec.prompt_tokens < 0 || spec.max_tokens < 0 ||
            spec.prompt_tokens + spec.max_tokens > lim.max_model_len)
            abort();
        sim_req_spec_free(&spec);
    } else if (err.status < 400 || err.status > 599) {
        abort();
    }
}

/* Feeds [data, data+len) in the given pieces, as a connection would. */
static int feed_pieces(const char *data, size_t len, size_t split, const sim_http_limits *lim,
                       digest *d)
{
    sim_http_parser hp;
    sim_http_init(&hp, lim);
    int status = 0;
    size_t bounds[2] = {split, len}, at = 0;
    for (int piece = 0; piece < 2 && !status; piece++) {
        while (at < bounds[piece]) {
            size_t used = 0;
            int st = sim_http_feed(&hp, data + at, bounds[piece] - at, &used);
            at += used;
            if (st == SIM_HTTP_DONE) {
                record(d, &hp.req);
                sim_http_next(&hp);
            } else if (st == SIM_HTTP_MORE) {
                break;
            } else {
                status = st;
                break;
            }
        }
    }
    sim_http_free(&hp);
    return status ? -status : d->count;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    if (size < 3) return 0;
    /* Small limits now and then, to reach the 413 and 431 paths. */
    sim_http_limits lim =
        in[0] & 1 ? (sim_http_limits){.max_header_bytes = 64 + in[1], .max_body_bytes = 16 + in[1]}
                  : (sim_http_limits){.max_header_bytes = 16384, .max_body_bytes = 1 << 20};
    const char *data = (const char *)in + 3;
    size_t len = size - 3;
    size_t split = ((size_t)in[1] | (size_t)in[2] << 8) % (len + 1);

    digest whole = {.h = 1469598103934665603ULL}, two = {.h = 1469598103934665603ULL};
    int rc_whole = sim_http_parse_bytes(data, len, &lim, handle, &whole);
    int rc_two = feed_pieces(data, len, split, &lim, &two);
    /* A request that is both too big and malformed may earn 431 or 400
     * depending on which the cut lets the parser see first; both close the
     * connection, so only "an error" is compared, not which one. */
    int same_outcome = rc_whole < 0 ? rc_two < 0 : rc_whole == rc_two;
    if (!same_outcome || whole.h != two.h || whole.count != two.count) abort();
    return 0;
}
