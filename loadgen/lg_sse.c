/* lg_sse: the incremental Server-Sent Events parser (see lg_sse.h). Lines
 * that arrive whole inside one piece are handled in place; only a line split
 * across pieces is copied, so the common case costs one scan per byte. */
#include "lg_sse.h"

#include <errno.h>
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
    p->line = (rb_buf)RB_BUF_INIT(p->max_bytes);
    p->data = (rb_buf)RB_BUF_INIT(p->max_bytes);
}

/* A buffer after an error (rb_buf's are sticky) or an event: empty, usable. */
static void clear(rb_buf *b)
{
    if (b->err)
        rb_buf_free(b);
    else
        rb_buf_reset(b);
}

static void dispatch(lg_sse *p)
{
    if (p->has_data && p->on_event)
        p->on_event(p->user, p->data.data ? p->data.data : "", p->data.len);
    rb_buf_reset(&p->data);
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
    if (p->has_data && (rc = rb_buf_add(&p->data, "\n", 1))) return rc;
    if ((rc = rb_buf_add(&p->data, value, value_len))) return rc;
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
            return rb_buf_add(&p->line, s, (size_t)(end - s));
        }
        p->at = eol;
        if (p->line.len) {
            if ((rc = rb_buf_add(&p->line, s, (size_t)(eol - s)))) return rc;
            rc = process_line(p, p->line.data, p->line.len);
            rb_buf_reset(&p->line);
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
    p->at = NULL;
    if (p->line.len) {
        /* A line within bounds can only fail to grow the data buffer; the
         * event is discarded below either way. */
        (void)process_line(p, p->line.data, p->line.len);
    }
    int discarded = p->has_data;
    clear(&p->line);
    clear(&p->data);
    p->has_data = 0;
    p->last_was_cr = 0;
    return discarded;
}

void lg_sse_reset(lg_sse *p)
{
    clear(&p->line);
    clear(&p->data);
    p->has_data = 0;
    p->last_was_cr = 0;
}

void lg_sse_free(lg_sse *p)
{
    rb_buf_free(&p->line);
    rb_buf_free(&p->data);
    lg_sse_reset(p);
}
