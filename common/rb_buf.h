/* rb_buf: the suite's one growable byte buffer, with a size cap and one
 * out-of-memory policy, as curl's dynbuf has with its toobig limit.
 *
 * A buffer is owned by whoever declared it; rb_buf_free releases it. Not
 * thread-safe. The bytes are always NUL-terminated (data[len] == '\0' once
 * anything was added), so a buffer's text can be handed out as a C string.
 *
 * Policy: an append that would pass the cap (max bytes, the NUL not counted)
 * or that finds no memory FREES the buffer and leaves the error in err
 * (-EMSGSIZE or -ENOMEM). The error is sticky: every later append returns it
 * and adds nothing, so a renderer may append unchecked and test once at the
 * end (rb_buf_take, or err). rb_buf_free clears it. What the caller does
 * with an error is the caller's: loadgen and calibrate return it, simserver
 * aborts (its buffers are bounded by the request limits, and it cannot answer
 * without memory).
 *
 * Declare with RB_BUF_INIT(max), or zero it ({0}: no cap beyond SIZE_MAX / 2). */
#ifndef RB_BUF_H
#define RB_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct rb_buf {
    char *data; /* NULL until the first append */
    size_t len; /* bytes held, the NUL not counted */
    size_t cap; /* bytes allocated */
    size_t max; /* the cap on len (0: SIZE_MAX / 2) */
    int err;    /* 0, -ENOMEM or -EMSGSIZE (sticky) */
} rb_buf;

#define RB_BUF_INIT(max_bytes)                                                                     \
    {                                                                                              \
        NULL, 0, 0, (max_bytes), 0                                                                 \
    }

/* Room for extra more bytes (and the NUL). 0 or the sticky error. */
int rb_buf_reserve(rb_buf *b, size_t extra);
int rb_buf_add_slow(rb_buf *b, const void *p, size_t n);
/* Appends p[0..n). Inline: it is on simserver's per-token path. An error
 * frees the memory (cap 0), so the one test sends it to the slow path. */
static inline int rb_buf_add(rb_buf *b, const void *p, size_t n)
{
    if (n >= b->cap - b->len) return rb_buf_add_slow(b, p, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}
int rb_buf_puts(rb_buf *b, const char *s);
int rb_buf_printf(rb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rb_buf_u64(rb_buf *b, uint64_t v);
int rb_buf_i64(rb_buf *b, int64_t v);
/* Appends s[0..n) as the inside of a JSON string: quotes, backslashes and
 * control bytes escaped (\n \r \t, else \u00xx), invalid UTF-8 replaced by
 * U+FFFD, so the output is valid JSON whatever bytes it was given. */
int rb_buf_json_str(rb_buf *b, const char *s, size_t n);
/* The same escaping, but bytes >= 0x80 are copied as they are, valid UTF-8
 * or not (loadgen sends a dataset's prompt bytes unchanged). */
int rb_buf_json_bytes(rb_buf *b, const char *s, size_t n);
/* Forgets the bytes but keeps the memory (and the cap; the error stays). */
void rb_buf_reset(rb_buf *b);
/* Hands the bytes over: *out (malloc'd, NUL-terminated, "" when nothing was
 * added; caller frees) and *len, and leaves the buffer empty (no memory).
 * Returns 0, or the buffer's error (then *out is NULL and the error is
 * cleared) or -ENOMEM. */
int rb_buf_take(rb_buf *b, char **out, size_t *len);
void rb_buf_free(rb_buf *b);

#endif
