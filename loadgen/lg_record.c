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

/* v in decimal at out (room for 20 bytes); returns the bytes written. A
 * hand loop: a record may carry thousands of token times, and snprintf's
 * cost per call would be most of the record's. */
static size_t put_i64(char *out, int64_t v)
{
    char tmp[20];
    size_t n = 0, k = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) out[k++] = '-';
    while (n)
        out[k++] = tmp[--n];
    return k;
}

/* Appends the token times' keys at buf[n]; the new length, or -1 if they
 * do not fit. The count first, so that a reader of the line sees it before
 * the long list. */
static int token_times(const lg_record *r, char *buf, size_t cap, size_t n)
{
    int k = snprintf(buf + n, cap - n, ",\"token_times_dropped\":%" PRId64 ",\"token_times_us\":[",
                     r->token_times_dropped);
    if (k < 0 || (size_t)k >= cap - n) return -1;
    n += (size_t)k;
    for (int64_t i = 0; i < r->n_token_times; i++) {
        if (cap - n < LG_RECORD_TT_ENTRY_MAX + 1) return -1;
        if (i) buf[n++] = ',';
        n += put_i64(buf + n, r->token_times_us[i]);
    }
    if (cap - n < 2) return -1;
    buf[n++] = ']';
    buf[n] = '\0';
    return n > INT32_MAX ? -1 : (int)n;
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
    if (n > 0 && (size_t)n < cap && r->model && strlen(r->model) < 128) {
        char m[128 * 6];
        esc(r->model, m);
        n += snprintf(buf + n, cap - (size_t)n, ",\"model\":\"%s\"", m);
    }
    if (n > 0 && (size_t)n < cap && r->has_truth)
        n += snprintf(buf + n, cap - (size_t)n,
                      ",\"queue_ns\":%" PRId64 ",\"prefill_ns\":%" PRId64 ",\"decode_ns\":%" PRId64,
                      r->queue_ns, r->prefill_ns, r->decode_ns);
    if (n > 0 && (size_t)n < cap && r->has_sent)
        n += snprintf(buf + n, cap - (size_t)n,
                      ",\"sent_wire_ns\":%" PRId64 ",\"sent_wire_last_ns\":%" PRId64,
                      r->sent_wire_ns, r->sent_wire_last_ns);
    if (n > 0 && (size_t)n < cap && r->has_token_times) n = token_times(r, buf, cap, (size_t)n);
    if (n <= 0 || (size_t)n + 2 >= cap) return -1;
    buf[n++] = '}';
    buf[n++] = '\n';
    buf[n] = '\0';
    return n;
}

/* ---- the parser --------------------------------------------------------- */

enum { K_I64, K_I32, K_STR, K_TIMES };
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
    {"token_times_us", offsetof(lg_record, n_token_times), K_TIMES, 0},
    {"token_times_dropped", offsetof(lg_record, token_times_dropped), K_I64, 0},
};
enum { N_KEYS = sizeof keys / sizeof keys[0], FIRST_TRUTH = 12, FIRST_SENT = 15, FIRST_TIMES = 17 };

/* The text being read, and where the token times go (tt NULL: counted
 * only). */
typedef struct cur {
    const char *p, *e;
    int64_t *tt;
    size_t tt_cap;
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
    if (keys[i].kind == K_TIMES)
        return fail(err, errlen, "'%s' missing or not a list of integers", keys[i].name);
    return fail(err, errlen, "'%s' missing or not a number", keys[i].name);
}

/* The token times' list at c->p (its '['), into c->tt when it is given. */
static int times(cur *c, lg_record *out, char *err, size_t errlen)
{
    int64_t n = 0;
    c->p++;
    ws(c);
    if (c->p < c->e && *c->p == ']') {
        c->p++;
    } else {
        for (;;) {
            int64_t v;
            if (num(c, &v) != 0) return missing(FIRST_TIMES, err, errlen);
            if (c->tt) {
                if ((size_t)n >= c->tt_cap)
                    return fail(err, errlen, "'%s': more than %zu entries", keys[FIRST_TIMES].name,
                                c->tt_cap);
                c->tt[n] = v;
            }
            n++;
            ws(c);
            if (c->p < c->e && *c->p == ',') {
                c->p++;
                ws(c);
                continue;
            }
            if (c->p < c->e && *c->p == ']') {
                c->p++;
                break;
            }
            return missing(FIRST_TIMES, err, errlen);
        }
    }
    out->n_token_times = n;
    out->token_times_us = c->tt;
    return 0;
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
    if (c->p < c->e && *c->p == '[') { /* the one list a record holds */
        if (k < 0 || keys[k].kind != K_TIMES) return fail(err, errlen, "'%s': bad value", name);
        return times(c, out, err, errlen);
    }
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
    if (rc != 0 || keys[k].kind == K_STR || keys[k].kind == K_TIMES) return missing(k, err, errlen);
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
    return lg_record_parse_times(line, len, out, NULL, 0, err, errlen);
}

int lg_record_parse_times(const char *line, size_t len, lg_record *out, int64_t *tt, size_t tt_cap,
                          char *err, size_t errlen)
{
    cur c = {line, line + len, tt, tt_cap};
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
    unsigned tt_seen = seen >> FIRST_TIMES & 3;
    if (tt_seen == 1 || tt_seen == 2)
        return fail(err, errlen, "'%s' missing (the token times come with their dropped count)",
                    keys[tt_seen == 1 ? FIRST_TIMES + 1 : FIRST_TIMES].name);
    if (out->token_times_dropped < 0) return fail(err, errlen, "bad 'token_times_dropped'");
    out->has_token_times = tt_seen == 3;
    return 0;
}
