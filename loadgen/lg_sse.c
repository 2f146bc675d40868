/* lg_sse: the incremental Server-Sent Events parser (see lg_sse.h). Lines
 * that arrive whole inside one piece are handled in place; only a line split
 * across pieces is copied, so the common case costs one scan per byte. */
#include "lg_sse.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LG_SSE_DEFAULT_MAX (1u << 20)

void lg_sse_init(lg_sse *p, lg_sse_event_cb on_event, lg_sse_comment_cb on_comment, void *user,
                 size_t max_bytes)
{
    memset(p, 0, sizeof *p);
    p->on_event = on_event;
    p->on_comment = on_comment;
    p->user = user;
    p->max_bytes = max_bytes ? max_bytes : LG_SSE_DEFAULT_MAX;
}

/* Grows *buf to hold need bytes; the bound was checked by the caller. */
static int grow(char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need)
        n *= 2;
    char *b = realloc(*buf, n);
    if (!b) return -ENOMEM;
    *buf = b;
    *cap = n;
    return 0;
}

static int append(lg_sse *p, char **buf, size_t *len, size_t *cap, const char *src, size_t n)
{
    if (n > p->max_bytes || *len > p->max_bytes - n) return -EMSGSIZE;
    int rc = grow(buf, cap, *len + n);
    if (rc) return rc;
    if (n) memcpy(*buf + *len, src, n);
    *len += n;
    return 0;
}

static void dispatch(lg_sse *p)
{
    if (p->has_data && p->on_event) p->on_event(p->user, p->data ? p->data : "", p->data_len);
    p->data_len = 0;
    p->has_data = 0;
}

/* One complete line (without its ending). */
static int process_line(lg_sse *p, const char *s, size_t n)
{
    if (n == 0) {
        dispatch(p);
        return 0;
    }
    const char *colon = memchr(s, ':', n);
    size_t name_len = colon ? (size_t)(colon - s) : n;
    const char *value = colon ? colon + 1 : s + n;
    size_t value_len = (size_t)(s + n - value);
    if (value_len && value[0] == ' ') {
        value++;
        value_len--;
    }
    if (name_len == 0) {
        if (p->on_comment) p->on_comment(p->user, value, value_len);
        return 0;
    }
    if (name_len != 4 || memcmp(s, "data", 4) != 0)
        return 0; /* event:, id:, retry: and unknown fields do not matter here */
    int rc;
    if (p->has_data && (rc = append(p, &p->data, &p->data_len, &p->data_cap, "\n", 1))) return rc;
    if ((rc = append(p, &p->data, &p->data_len, &p->data_cap, value, value_len))) return rc;
    p->has_data = 1;
    return 0;
}

/* The first CR or LF in [s, end), or end. Two bounded memchr calls beat a
 * byte loop: the CR search stops at the first LF. */
static const char *find_eol(const char *s, const char *end)
{
    const char *lf = memchr(s, '\n', (size_t)(end - s));
    const char *stop = lf ? lf : end;
    const char *cr = memchr(s, '\r', (size_t)(stop - s));
    return cr ? cr : stop;
}

int lg_sse_feed(lg_sse *p, const char *buf, size_t len)
{
    const char *s = buf, *end = buf + len;
    int rc;
    while (s < end) {
        if (p->last_was_cr) {
            p->last_was_cr = 0;
            if (*s == '\n') {
                s++;
                continue;
            }
        }
        const char *eol = find_eol(s, end);
        if (eol == end) {
            /* An unfinished line: keep it for the next piece. */
            return append(p, &p->line, &p->line_len, &p->line_cap, s, (size_t)(end - s));
        }
        if (p->line_len) {
            if ((rc = append(p, &p->line, &p->line_len, &p->line_cap, s, (size_t)(eol - s))))
                return rc;
            size_t n = p->line_len;
            p->line_len = 0;
            rc = process_line(p, p->line, n);
        } else {
            if ((size_t)(eol - s) > p->max_bytes) return -EMSGSIZE;
            rc = process_line(p, s, (size_t)(eol - s));
        }
        if (rc) return rc;
        p->last_was_cr = *eol == '\r';
        s = eol + 1;
    }
    return 0;
}

int lg_sse_finish(lg_sse *p)
{
    if (p->line_len) {
        size_t n = p->line_len;
        p->line_len = 0;
        /* A line within bounds can only fail to grow the data buffer; the
         * event is discarded below either way. */
        (void)process_line(p, p->line, n);
    }
    int discarded = p->has_data;
    p->data_len = 0;
    p->has_data = 0;
    p->last_was_cr = 0;
    return discarded;
}

void lg_sse_reset(lg_sse *p)
{
    p->line_len = 0;
    p->data_len = 0;
    p->has_data = 0;
    p->last_was_cr = 0;
}

void lg_sse_free(lg_sse *p)
{
    free(p->line);
    free(p->data);
    p->line = p->data = NULL;
    p->line_cap = p->data_cap = 0;
    lg_sse_reset(p);
}
