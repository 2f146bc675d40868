/* sim_buf: see sim_buf.h. The integer and JSON-string appenders are written
 * by hand because they sit on the per-token hot path. */
#include "sim_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sim_buf_reserve(sim_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) abort();
    b->data = p;
    b->cap = cap;
}

void sim_buf_append(sim_buf *b, const void *p, size_t n)
{
    if (n == 0) return;
    sim_buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void sim_buf_puts(sim_buf *b, const char *s)
{
    sim_buf_append(b, s, strlen(s));
}

void sim_buf_printf(sim_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    sim_buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sim_buf_u64(sim_buf *b, uint64_t v)
{
    char tmp[24];
    int i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sim_buf_append(b, tmp + i, sizeof tmp - (size_t)i);
}

void sim_buf_i64(sim_buf *b, int64_t v)
{
    if (v < 0) {
        sim_buf_append(b, "-", 1);
        sim_buf_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        sim_buf_u64(b, (uint64_t)v);
    }
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

void sim_buf_json_str(sim_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    sim_buf_reserve(b, n + 8);
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        /* Copy plain ASCII in one go. */
        while (run < n && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
            run++;
        if (run > i) {
            sim_buf_append(b, s + i, run - i);
            i = run;
            continue;
        }
        unsigned c = u[i];
        if (c == '"') {
            sim_buf_append(b, "\\\"", 2);
            i++;
        } else if (c == '\\') {
            sim_buf_append(b, "\\\\", 2);
            i++;
        } else if (c == '\n') {
            sim_buf_append(b, "\\n", 2);
            i++;
        } else if (c == '\r') {
            sim_buf_append(b, "\\r", 2);
            i++;
        } else if (c == '\t') {
            sim_buf_append(b, "\\t", 2);
            i++;
        } else if (c < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sim_buf_append(b, e, 6);
            i++;
        } else {
            size_t l = utf8_len(u + i, n - i);
            if (l) {
                sim_buf_append(b, s + i, l);
                i += l;
            } else {
                sim_buf_append(b, "\\ufffd", 6);
                i++;
            }
        }
    }
}

void sim_buf_free(sim_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
