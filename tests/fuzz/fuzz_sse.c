/* fuzz_sse: the SSE parser's split invariance. The input picks a split point
 * and a size bound, then the rest is fed whole, in two pieces, and (when
 * short) byte by byte: events, comments and errors must be identical, or the
 * harness aborts. Every event and comment also goes through lg_chunk, whose
 * fast path must agree with its cJSON reference. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_chunk.h"
#include "lg_sse.h"

/* What the parser said, in order: kind, length, bytes. */
typedef struct transcript {
    unsigned char *buf;
    size_t len, cap;
} transcript;

static void put(transcript *t, char kind, const char *s, size_t n)
{
    size_t need = t->len + 1 + sizeof n + n;
    if (need > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < need)
            cap *= 2;
        t->buf = realloc(t->buf, cap);
        if (!t->buf) abort();
        t->cap = cap;
    }
    t->buf[t->len++] = (unsigned char)kind;
    memcpy(t->buf + t->len, &n, sizeof n);
    t->len += sizeof n;
    if (n) memcpy(t->buf + t->len, s, n);
    t->len += n;
}

static int same_chunk(const lg_chunk *a, const lg_chunk *b)
{
    return a->flags == b->flags && a->content_bytes == b->content_bytes &&
           a->prompt_tokens == b->prompt_tokens && a->completion_tokens == b->completion_tokens &&
           a->cached_tokens == b->cached_tokens && strcmp(a->finish_reason, b->finish_reason) == 0;
}

static void check_chunk(const char *data, size_t len)
{
    lg_chunk c, ref;
    int rc = lg_chunk_decode(data, len, &c);
    /* The fast path must agree with the cJSON reference. */
    if (rc != lg_chunk_decode_json(data, len, &ref) || (rc == 0 && !same_chunk(&c, &ref))) abort();
    if (rc == 0) {
        if (c.content_bytes > len || memchr(c.finish_reason, '\0', sizeof c.finish_reason) == NULL)
            abort();
        if ((c.flags & LG_CHUNK_CONTENT) && c.content_bytes == 0) abort();
    }
}

static void on_event(void *user, const char *data, size_t len)
{
    put(user, 'E', data, len);
    check_chunk(data, len);
}

static void on_comment(void *user, const char *text, size_t len)
{
    put(user, 'C', text, len);
    int64_t stamp = -1;
    lg_truth truth;
    int rc = lg_chunk_comment(text, len, &stamp, &truth);
    if (rc < 0 || rc > 2 || (rc == 1 && stamp < 0)) abort();
}

/* Feeds data cut at the given points; records the outcome in t. */
static void run(const char *data, size_t len, const size_t *cuts, size_t n_cuts, size_t max_bytes,
                transcript *t)
{
    lg_sse p;
    lg_sse_init(&p, on_event, on_comment, t, max_bytes);
    size_t at = 0;
    int rc = 0;
    for (size_t i = 0; i <= n_cuts && rc == 0; i++) {
        size_t to = i < n_cuts ? cuts[i] : len;
        rc = lg_sse_feed(&p, data + at, to - at);
        at = to;
    }
    if (rc == 0) rc = 100 + lg_sse_finish(&p);
    put(t, 'R', (const char *)&rc, sizeof rc);
    lg_sse_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    if (size < 3) return 0;
    size_t split = (size_t)in[0] | (size_t)in[1] << 8;
    size_t max_bytes = in[2] < 128 ? 0 : (size_t)(in[2] - 120); /* default, or 8..135 */
    const char *data = (const char *)in + 3;
    size_t len = size - 3;
    split %= len + 1;

    transcript whole = {0}, two = {0};
    run(data, len, NULL, 0, max_bytes, &whole);
    run(data, len, &split, 1, max_bytes, &two);
    if (whole.len != two.len || memcmp(whole.buf, two.buf, whole.len) != 0) abort();
    if (len <= 512) {
        size_t cuts[512];
        for (size_t i = 0; i + 1 < len; i++)
            cuts[i] = i + 1;
        transcript bytes = {0};
        run(data, len, cuts, len ? len - 1 : 0, max_bytes, &bytes);
        if (whole.len != bytes.len || memcmp(whole.buf, bytes.buf, whole.len) != 0) abort();
        free(bytes.buf);
    }
    /* The whole input as one event, as a non-streamed body would come. */
    check_chunk(data, len);
    free(whole.buf);
    free(two.buf);
    return 0;
}
