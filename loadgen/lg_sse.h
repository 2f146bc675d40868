/* lg_sse: an incremental Server-Sent Events parser. Bytes arrive in arbitrary
 * pieces (curl's write callback); events come out whole, identical whatever
 * the split. Pure: no I/O, no clocks. One parser per response; not
 * thread-safe. Follows the WHATWG rules that matter here: lines end in LF,
 * CR or CRLF; "data:" lines accumulate (joined by LF) until a blank line
 * dispatches the event; lines starting with ':' are comments; one space after
 * the colon is dropped; other fields (event:, id:, retry:) are ignored. An
 * event with a "data:" line but no text ("data:\n\n") comes out with len 0.
 * Callbacks run inside lg_sse_feed/lg_sse_finish and must not feed, reset or
 * free the parser; the pointers they get are valid only during the call. */
#ifndef LG_SSE_H
#define LG_SSE_H

#include <stddef.h>

#include "rb_buf.h"

/* A complete event's data (not NUL-terminated; len may be 0). */
typedef void (*lg_sse_event_cb)(void *user, const char *data, size_t len);
/* A comment line's text after the ':' (leading space dropped). Called as soon
 * as the line is complete, in stream order relative to events. */
typedef void (*lg_sse_comment_cb)(void *user, const char *text, size_t len);

typedef struct lg_sse {
    lg_sse_event_cb on_event;
    lg_sse_comment_cb on_comment; /* may be NULL */
    void *user;
    rb_buf line;      /* the line being assembled (capped at max_bytes) */
    rb_buf data;      /* the event's data being assembled (capped at max_bytes) */
    int has_data;     /* a data: field was seen for this event */
    int last_was_cr;  /* the previous byte was CR (a following LF is part of it) */
    size_t max_bytes; /* bound on line and data size; past it lg_sse_feed fails */
    /* During a callback from lg_sse_feed: the terminator of the line that
     * completed the event or comment, in the piece being fed (the event's
     * last byte but a CRLF's LF); NULL from lg_sse_finish. */
    const char *at;
} lg_sse;

/* max_bytes bounds memory per response (0 means 1 MiB). */
void lg_sse_init(lg_sse *p, lg_sse_event_cb on_event, lg_sse_comment_cb on_comment, void *user,
                 size_t max_bytes);
/* Feeds bytes. Returns 0, or -EMSGSIZE when a line or event passes max_bytes,
 * or -ENOMEM; after an error the parser must be reset or freed. */
int lg_sse_feed(lg_sse *p, const char *buf, size_t len);
/* End of stream: an unterminated last line is processed as if ended, but an
 * event with no closing blank line is discarded, as the standard says.
 * Returns 1 if bytes of an incomplete event were discarded, else 0. */
int lg_sse_finish(lg_sse *p);
void lg_sse_reset(lg_sse *p);
void lg_sse_free(lg_sse *p);

#endif
