/* rb_buf: see rb_buf.h. The integer and JSON-string appenders are written by
 * hand because they sit on simserver's per-token path. */
#include "rb_buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RB_BUF_NOCAP (SIZE_MAX / 2)

static int fail(rb_buf *b, int err)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->err = err;
    return err;
}

/* cap never passes max + 1, so room in the allocation is room under the cap:
 * rb_buf_add's inline test is then the only one on the fast path. */
int rb_buf_reserve(rb_buf *b, size_t extra)
{
    if (b->err) return b->err;
    size_t max = b->max ? b->max : RB_BUF_NOCAP;
    if (extra > max || b->len > max - extra) return fail(b, -EMSGSIZE);
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    if (cap > max + 1) cap = max + 1;
    char *p = realloc(b->data, cap);
    if (!p) return fail(b, -ENOMEM);
    b->data = p;
    b->cap = cap;
    return 0;
}

int rb_buf_add_slow(rb_buf *b, const void *p, size_t n)
{
    int rc = rb_buf_reserve(b, n);
    if (rc) return rc;
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int rb_buf_puts(rb_buf *b, const char *s)
{
    return rb_buf_add(b, s, strlen(s));
}

int rb_buf_printf(rb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return b->err;
    int rc = rb_buf_reserve(b, (size_t)n);
    if (rc) return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

int rb_buf_u64(rb_buf *b, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    return rb_buf_add(b, tmp + i, sizeof tmp - (size_t)i);
}

int rb_buf_i64(rb_buf *b, int64_t v)
{
    if (v >= 0) return rb_buf_u64(b, (uint64_t)v);
    rb_buf_add(b, "-", 1);
    return rb_buf_u64(b, (uint64_t)0 - (uint64_t)v);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        min = 0x10000;
    } else
        return 0;
    if (n < len) return 0;
    unsigned cp = c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

/* Bytes copied as they are: bit 1 when UTF-8 is checked (ASCII only), bit 2
 * when it is not (every byte >= 0x80 too); never a quote, backslash or
 * control byte. A table, because the scan is the escaper's inner loop. */
#define PLAIN_ASCII(c) ((c) >= 0x20 && (c) < 0x80 && (c) != '"' && (c) != '\\')
#define PLAIN(c) (PLAIN_ASCII(c) ? 3 : (c) >= 0x80 ? 2 : 0)
#define PLAIN4(c) PLAIN(c), PLAIN(c + 1), PLAIN(c + 2), PLAIN(c + 3)
#define PLAIN16(c) PLAIN4(c), PLAIN4(c + 4), PLAIN4(c + 8), PLAIN4(c + 12)
#define PLAIN64(c) PLAIN16(c), PLAIN16(c + 16), PLAIN16(c + 32), PLAIN16(c + 48)
static const unsigned char plain[256] = {PLAIN64(0), PLAIN64(64), PLAIN64(128), PLAIN64(192)};

/* The one JSON escaper; utf8: validate bytes >= 0x80 (else copy them). */
static int json_escape(rb_buf *b, const char *s, size_t n, int utf8)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    const unsigned char mask = utf8 ? 1 : 2;
    rb_buf_reserve(b, n + 8);
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        /* Copy plain bytes in one go. */
        while (run < n && (plain[u[run]] & mask))
            run++;
        if (run > i) {
            rb_buf_add(b, s + i, run - i);
            i = run;
            continue;
        }
        unsigned c = u[i];
        if (c == '"') {
            rb_buf_add(b, "\\\"", 2);
            i++;
        } else if (c == '\\') {
            rb_buf_add(b, "\\\\", 2);
            i++;
        } else if (c == '\n') {
            rb_buf_add(b, "\\n", 2);
            i++;
        } else if (c == '\r') {
            rb_buf_add(b, "\\r", 2);
            i++;
        } else if (c == '\t') {
            rb_buf_add(b, "\\t", 2);
            i++;
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            rb_buf_add(b, e, 6);
            i++;
        } else {
            size_t l = utf8_len(u + i, n - i);
            if (l) {
                rb_buf_add(b, s + i, l);
                i += l;
            } else {
                rb_buf_add(b, "\\ufffd", 6);
                i++;
            }
        }
    }
    return b->err;
}

int rb_buf_json_str(rb_buf *b, const char *s, size_t n)
{
    return json_escape(b, s, n, 1);
}

int rb_buf_json_bytes(rb_buf *b, const char *s, size_t n)
{
    return json_escape(b, s, n, 0);
}

void rb_buf_reset(rb_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

int rb_buf_take(rb_buf *b, char **out, size_t *len)
{
    *out = NULL;
    if (len) *len = 0;
    if (b->err) {
        int rc = b->err;
        b->err = 0;
        return rc;
    }
    if (!b->data && rb_buf_reserve(b, 0)) {
        b->err = 0;
        return -ENOMEM;
    }
    b->data[b->len] = '\0';
    *out = b->data;
    if (len) *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return 0;
}

void rb_buf_free(rb_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->err = 0;
}
