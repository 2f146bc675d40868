/* lg_record: the per-request JSONL record (see lg_record.h). */
#include "lg_record.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- the formatter ------------------------------------------------------ */

/* s as the inside of a JSON string into out (cap >= 6 * strlen(s) + 1). */
static void esc(const char *s, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            *out++ = '\\';
            *out++ = (char)ch;
        } else if (ch < 0x20) {
            const char *named = ch == '\n' ? "n" : ch == '\r' ? "r" : ch == '\t' ? "t" : NULL;
            *out++ = '\\';
            if (named) {
                *out++ = *named;
            } else {
                memcpy(out, "u00", 3);
                out[3] = hex[ch >> 4];
                out[4] = hex[ch & 15];
                out += 5;
                continue;
            }
        } else {
            *out++ = (char)ch;
        }
    }
    *out = '\0';
}

int lg_record_format(const lg_record *r, char *buf, size_t cap)
{
    char cls[sizeof r->cls * 6];
    char raw[sizeof r->cls];
    memcpy(raw, r->cls, sizeof raw);
    raw[sizeof raw - 1] = '\0';
    esc(raw, cls);
    int n = snprintf(
        buf, cap,
        "{\"index\":%" PRId64 ",\"worker\":%d,\"stage\":%d,\"intended_ns\":%" PRId64
        ",\"dispatch_ns\":%" PRId64 ",\"first_byte_ns\":%" PRId64 ",\"first_token_ns\":%" PRId64
        ",\"end_ns\":%" PRId64 ",\"input_tokens\":%" PRId64 ",\"output_tokens\":%" PRId64
        ",\"status\":%d,\"class\":\"%s\"",
        r->index, (int)r->worker, (int)r->stage, r->intended_ns, r->dispatch_ns, r->first_byte_ns,
        r->first_token_ns, r->end_ns, r->input_tokens, r->output_tokens, (int)r->status, cls);
    if (n > 0 && (size_t)n < cap && r->has_truth)
        n += snprintf(buf + n, cap - (size_t)n,
                      ",\"queue_ns\":%" PRId64 ",\"prefill_ns\":%" PRId64 ",\"decode_ns\":%" PRId64,
                      r->queue_ns, r->prefill_ns, r->decode_ns);
    if (n > 0 && (size_t)n < cap && r->has_sent)
        n += snprintf(buf + n, cap - (size_t)n,
                      ",\"sent_wire_ns\":%" PRId64 ",\"sent_wire_last_ns\":%" PRId64,
                      r->sent_wire_ns, r->sent_wire_last_ns);
    if (n <= 0 || (size_t)n + 2 >= cap) return -1;
    buf[n++] = '}';
    buf[n++] = '\n';
    buf[n] = '\0';
    return n;
}

/* ---- the parser --------------------------------------------------------- */

enum { K_I64, K_I32, K_STR };
static const struct {
    const char *name;
    size_t off;
    int kind, required;
} keys[] = {
    /* the order the messages follow: the exporters' keys first */
    {"index", offsetof(lg_record, index), K_I64, 1},
    {"intended_ns", offsetof(lg_record, intended_ns), K_I64, 1},
    {"dispatch_ns", offsetof(lg_record, dispatch_ns), K_I64, 1},
    {"first_token_ns", offsetof(lg_record, first_token_ns), K_I64, 1},
    {"end_ns", offsetof(lg_record, end_ns), K_I64, 1},
    {"input_tokens", offsetof(lg_record, input_tokens), K_I64, 1},
    {"output_tokens", offsetof(lg_record, output_tokens), K_I64, 1},
    {"stage", offsetof(lg_record, stage), K_I32, 1},
    {"status", offsetof(lg_record, status), K_I32, 1},
    {"class", offsetof(lg_record, cls), K_STR, 1},
    {"worker", offsetof(lg_record, worker), K_I32, 1},
    {"first_byte_ns", offsetof(lg_record, first_byte_ns), K_I64, 1},
    {"queue_ns", offsetof(lg_record, queue_ns), K_I64, 0},
    {"prefill_ns", offsetof(lg_record, prefill_ns), K_I64, 0},
    {"decode_ns", offsetof(lg_record, decode_ns), K_I64, 0},
    {"sent_wire_ns", offsetof(lg_record, sent_wire_ns), K_I64, 0},
    {"sent_wire_last_ns", offsetof(lg_record, sent_wire_last_ns), K_I64, 0},
};
enum { N_KEYS = sizeof keys / sizeof keys[0], FIRST_TRUTH = 12, FIRST_SENT = 15 };

typedef struct cur {
    const char *p, *e;
} cur;

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static void ws(cur *c)
{
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int hex4(cur *c, unsigned *v)
{
    if (c->e - c->p < 4) return -1;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char h = *c->p++;
        unsigned d = h >= '0' && h <= '9'   ? (unsigned)(h - '0')
                     : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                     : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10)
                                            : 16u;
        if (d > 15) return -1;
        *v = *v << 4 | d;
    }
    return 0;
}

/* A JSON string at c->p (the opening quote) into out (cap bytes, NUL-
 * terminated, cut short with *long_ set). Returns 0 or -1 (bad string). */
static int str(cur *c, char *out, size_t cap, int *long_)
{
    size_t n = 0;
    char u[4];
    *long_ = 0;
    c->p++;
    while (c->p < c->e && *c->p != '"') {
        unsigned char ch = (unsigned char)*c->p++;
        size_t k = 1;
        u[0] = (char)ch;
        if (ch < 0x20) return -1;
        if (ch == '\\') {
            if (c->p >= c->e) return -1;
            char x = *c->p++;
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *at = x ? strchr(from, x) : NULL;
            if (at) {
                u[0] = to[at - from];
            } else if (x == 'u') {
                unsigned cp, lo;
                if (hex4(c, &cp)) return -1;
                if (cp >= 0xd800 && cp < 0xdc00) {
                    if (c->e - c->p < 2 || c->p[0] != '\\' || c->p[1] != 'u') return -1;
                    c->p += 2;
                    if (hex4(c, &lo) || lo < 0xdc00 || lo >= 0xe000) return -1;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else if (cp >= 0xdc00 && cp < 0xe000) {
                    return -1;
                }
                if (cp < 0x80) {
                    u[0] = (char)cp;
                } else if (cp < 0x800) {
                    u[0] = (char)(0xc0 | cp >> 6);
                    u[1] = (char)(0x80 | (cp & 0x3f));
                    k = 2;
                } else if (cp < 0x10000) {
                    u[0] = (char)(0xe0 | cp >> 12);
                    u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
                    u[2] = (char)(0x80 | (cp & 0x3f));
                    k = 3;
                } else {
                    u[0] = (char)(0xf0 | cp >> 18);
                    u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
                    u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
                    u[3] = (char)(0x80 | (cp & 0x3f));
                    k = 4;
                }
            } else {
                return -1;
            }
        }
        if (n + k < cap) {
            memcpy(out + n, u, k);
            n += k;
        } else {
            *long_ = 1;
        }
    }
    if (c->p >= c->e) return -1;
    c->p++;
    if (cap) out[n] = '\0';
    return 0;
}

/* A JSON number at c->p. Returns 0 with *v (an integer in int64's range),
 * 1 (a valid number but not such an integer), -1 (not a number). */
static int num(cur *c, int64_t *v)
{
    int neg = c->p < c->e && *c->p == '-';
    if (neg) c->p++;
    if (c->p >= c->e || *c->p < '0' || *c->p > '9') return -1;
    uint64_t acc = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int over = 0;
    while (c->p < c->e && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p++ - '0');
        if (acc > (lim - d) / 10)
            over = 1;
        else
            acc = acc * 10 + d;
    }
    int frac = 0;
    while (c->p < c->e && *c->p && strchr(".eE+-0123456789", *c->p)) {
        frac = 1;
        c->p++;
    }
    if (over || frac) return 1;
    *v = neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc) : (int64_t)acc;
    return 0;
}

static int lit(cur *c)
{
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(c->e - c->p) >= n && memcmp(c->p, words[i], n) == 0) {
            c->p += n;
            return 0;
        }
    }
    return -1;
}

static int find_key(const char *k)
{
    for (int i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].name, k) == 0) return i;
    return -1;
}

static int missing(int i, char *err, size_t errlen)
{
    if (keys[i].kind == K_STR)
        return fail(err, errlen, "'%s' missing or not a short string", keys[i].name);
    return fail(err, errlen, "'%s' missing or not a number", keys[i].name);
}

/* One "key": value; the key's name into name. */
static int member(cur *c, lg_record *out, unsigned *seen, char *name, size_t namecap, char *err,
                  size_t errlen)
{
    int long_;
    if (c->p >= c->e || *c->p != '"' || str(c, name, namecap, &long_))
        return fail(err, errlen, "a key is not a string");
    int k = long_ ? -1 : find_key(name);
    ws(c);
    if (c->p >= c->e || *c->p != ':') return fail(err, errlen, "no ':' after '%s'", name);
    c->p++;
    ws(c);
    if (k >= 0 && (*seen >> k & 1)) return fail(err, errlen, "'%s' given twice", name);
    if (k >= 0) *seen |= 1u << k;
    char *dst = k >= 0 ? (char *)out + keys[k].off : NULL;
    if (c->p < c->e && *c->p == '"') {
        char s[sizeof out->cls];
        if (str(c, s, sizeof s, &long_)) return fail(err, errlen, "'%s': bad string", name);
        if (k < 0) return 0;
        if (keys[k].kind != K_STR || long_) return missing(k, err, errlen);
        memcpy(dst, s, sizeof s);
        return 0;
    }
    int64_t v = 0;
    int rc = num(c, &v);
    if (rc < 0 && lit(c) < 0) return fail(err, errlen, "'%s': bad value", name);
    if (k < 0) return 0;
    if (rc != 0 || keys[k].kind == K_STR) return missing(k, err, errlen);
    if (keys[k].kind == K_I64) {
        memcpy(dst, &v, sizeof v);
        return 0;
    }
    if (v < INT32_MIN || v > INT32_MAX) return fail(err, errlen, "'%s' out of range", name);
    int32_t v32 = (int32_t)v;
    memcpy(dst, &v32, sizeof v32);
    return 0;
}

int lg_record_parse(const char *line, size_t len, lg_record *out, char *err, size_t errlen)
{
    cur c = {line, line + len};
    memset(out, 0, sizeof *out);
    unsigned seen = 0;
    char name[32] = "";
    ws(&c);
    if (c.p >= c.e || *c.p != '{') return fail(err, errlen, "not a JSON object");
    c.p++;
    ws(&c);
    if (c.p < c.e && *c.p == '}') {
        c.p++;
    } else {
        for (;;) {
            if (member(&c, out, &seen, name, sizeof name, err, errlen)) return -1;
            ws(&c);
            if (c.p < c.e && *c.p == ',') {
                c.p++;
                ws(&c);
                continue;
            }
            if (c.p < c.e && *c.p == '}') {
                c.p++;
                break;
            }
            return fail(err, errlen, "not a JSON object (after '%s')", name);
        }
    }
    ws(&c);
    if (c.p != c.e) return fail(err, errlen, "text after the object");
    for (int i = 0; i < N_KEYS; i++)
        if (keys[i].required && !(seen >> i & 1)) return missing(i, err, errlen);
    if (out->stage < 0) return fail(err, errlen, "bad 'stage'");
    unsigned truth = seen >> FIRST_TRUTH & 7, sent = seen >> FIRST_SENT & 3;
    if (sent == 1 || sent == 2)
        return fail(err, errlen, "'%s' missing (the departure times come both or none)",
                    keys[sent == 1 ? FIRST_SENT + 1 : FIRST_SENT].name);
    out->has_sent = sent == 3;
    if (truth != 0 && truth != 7) {
        for (int i = FIRST_TRUTH; i < FIRST_SENT; i++)
            if (!(seen >> i & 1))
                return fail(err, errlen, "'%s' missing (the server's timings come all or none)",
                            keys[i].name);
    }
    out->has_truth = truth == 7;
    return 0;
}
