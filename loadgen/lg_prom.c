/* lg_prom: the Prometheus text format parser and its sums (see lg_prom.h). */
#include "lg_prom.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cur {
    const char *p, *end; /* the line, without its '\n' */
    size_t line;
    char *err;
    size_t errlen;
} cur;

static int fail(cur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(cur *c, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (c->err && c->errlen) snprintf(c->err, c->errlen, "line %zu: %s", c->line, what);
    return -EINVAL;
}

static int is_name_start(int ch, int colon)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (colon && ch == ':');
}

static int is_name_char(int ch, int colon)
{
    return is_name_start(ch, colon) || (ch >= '0' && ch <= '9');
}

static void skip_blanks(cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

/* A name at c->p: its length (0: none). */
static size_t name_len(const cur *c, int colon)
{
    const char *q = c->p;
    if (q >= c->end || !is_name_start((unsigned char)*q, colon)) return 0;
    while (q < c->end && is_name_char((unsigned char)*q, colon))
        q++;
    return (size_t)(q - c->p);
}

/* A float token of n bytes: strtod over a NUL-terminated copy, which must
 * consume it whole. */
static int parse_float(const char *s, size_t n, double *v)
{
    char tmp[64];
    if (n == 0 || n >= sizeof tmp) return -1;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    /* strtod also reads hex floats and "infinity"; Go's ParseFloat (the
     * reference parser's) reads them too, so they are let through. */
    char *e;
    errno = 0;
    *v = strtod(tmp, &e);
    if (e != tmp + n) return -1;
    return 0;
}

static int parse_int(const char *s, size_t n)
{
    size_t i = 0;
    if (n && (s[0] == '-' || s[0] == '+')) i = 1;
    if (i == n || n > 20) return -1;
    for (; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return -1;
    return 0;
}

static int family_add(lg_prom *o, const char *name, size_t n, lg_prom_type t)
{
    if (o->n_fam == o->cap_fam) {
        size_t cap = o->cap_fam ? 2 * o->cap_fam : 16;
        lg_prom_family *f = realloc(o->fam, cap * sizeof *f);
        if (!f) return -ENOMEM;
        o->fam = f;
        o->cap_fam = cap;
    }
    char *dup = malloc(n + 1);
    if (!dup) return -ENOMEM;
    memcpy(dup, name, n);
    dup[n] = '\0';
    o->fam[o->n_fam++] = (lg_prom_family){dup, t};
    return 0;
}

static const lg_prom_family *family_find(const lg_prom *o, const char *name, size_t n)
{
    for (size_t i = 0; i < o->n_fam; i++)
        if (strlen(o->fam[i].name) == n && !memcmp(o->fam[i].name, name, n)) return &o->fam[i];
    return NULL;
}

/* Was a sample of this family seen already (a TYPE line must come first)? */
static int family_has_samples(const lg_prom *o, const char *name, size_t n)
{
    static const char *const sfx[] = {"", "_bucket", "_sum", "_count", "_total", "_created"};
    for (size_t i = 0; i < o->n; i++) {
        const char *s = o->s[i].name;
        if (strncmp(s, name, n)) continue;
        for (size_t k = 0; k < sizeof sfx / sizeof sfx[0]; k++)
            if (!strcmp(s + n, sfx[k])) return 1;
    }
    return 0;
}

static int comment(cur *c, lg_prom *o)
{
    c->p++; /* '#' */
    skip_blanks(c);
    size_t kw = name_len(c, 0);
    int is_type = kw == 4 && !memcmp(c->p, "TYPE", 4);
    int is_help = kw == 4 && !memcmp(c->p, "HELP", 4);
    if (!is_type && !is_help) return 0; /* any other comment */
    c->p += 4;
    if (c->p >= c->end || (*c->p != ' ' && *c->p != '\t'))
        return fail(c, "%s: expected a metric name", is_type ? "TYPE" : "HELP");
    skip_blanks(c);
    size_t n = name_len(c, 1);
    if (!n) return fail(c, "%s: expected a metric name", is_type ? "TYPE" : "HELP");
    const char *name = c->p;
    c->p += n;
    if (is_help) {
        if (c->p < c->end && *c->p != ' ' && *c->p != '\t')
            return fail(c, "HELP: bad character after the metric name");
        return 0; /* the docstring is free text */
    }
    if (c->p >= c->end || (*c->p != ' ' && *c->p != '\t'))
        return fail(c, "TYPE %.*s: expected a type", (int)(n > 80 ? 80 : n), name);
    skip_blanks(c);
    const char *t = c->p;
    size_t tn = name_len(c, 0);
    c->p += tn;
    skip_blanks(c);
    static const struct {
        const char *w;
        lg_prom_type t;
    } types[] = {{"counter", LG_PROM_COUNTER},
                 {"gauge", LG_PROM_GAUGE},
                 {"histogram", LG_PROM_HISTOGRAM},
                 {"summary", LG_PROM_SUMMARY},
                 {"untyped", LG_PROM_UNTYPED}};
    int found = -1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].w) == tn && !memcmp(types[i].w, t, tn)) found = (int)i;
    if (found < 0 || c->p != c->end)
        return fail(c, "TYPE %.*s: the type must be counter, gauge, histogram, summary or untyped",
                    (int)(n > 80 ? 80 : n), name);
    if (family_find(o, name, n))
        return fail(c, "TYPE %.*s: a second TYPE line", (int)(n > 80 ? 80 : n), name);
    if (family_has_samples(o, name, n))
        return fail(c, "TYPE %.*s: after its first sample", (int)(n > 80 ? 80 : n), name);
    return family_add(o, name, n, types[found].t);
}

/* The labels at c->p ('{' consumed): each checked; le's value kept. */
static int labels(cur *c, double *le)
{
    char val[64];
    for (;;) {
        skip_blanks(c);
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            return 0;
        }
        size_t n = name_len(c, 0);
        if (!n) return fail(c, "expected a label name or '}'");
        int is_le = n == 2 && !memcmp(c->p, "le", 2);
        c->p += n;
        skip_blanks(c);
        if (c->p >= c->end || *c->p != '=') return fail(c, "expected '=' after a label name");
        c->p++;
        skip_blanks(c);
        if (c->p >= c->end || *c->p != '"') return fail(c, "expected '\"' to open a label value");
        c->p++;
        size_t vn = 0;
        int closed = 0;
        while (c->p < c->end) {
            char ch = *c->p++;
            if (ch == '"') {
                closed = 1;
                break;
            }
            if (ch == '\\') {
                if (c->p >= c->end) break;
                char e = *c->p++;
                if (e == 'n')
                    ch = '\n';
                else if (e == '\\' || e == '"')
                    ch = e;
                else
                    return fail(c, "bad escape '\\%c' in a label value", e);
            }
            if (is_le && vn + 1 < sizeof val) val[vn] = ch;
            vn++;
        }
        if (!closed) return fail(c, "unterminated label value");
        if (is_le) {
            double v;
            if (vn >= sizeof val || parse_float(val, vn, &v) || isnan(v))
                return fail(c, "le: not a number");
            *le = v;
        }
        skip_blanks(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == '}') continue;
        return fail(c, "expected ',' or '}' after a label");
    }
}

static int sample(cur *c, lg_prom *o)
{
    size_t n = name_len(c, 1);
    if (!n) return fail(c, "expected a metric name, '#' or an empty line");
    const char *name = c->p;
    c->p += n;
    double le = NAN;
    skip_blanks(c);
    if (c->p < c->end && *c->p == '{') {
        c->p++;
        int rc = labels(c, &le);
        if (rc) return rc;
        skip_blanks(c);
    }
    const char *v = c->p;
    while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
        c->p++;
    double value;
    if (parse_float(v, (size_t)(c->p - v), &value))
        return fail(c, "%.*s: bad value '%.*s'", (int)(n > 80 ? 80 : n), name,
                    (int)(c->p - v > 40 ? 40 : c->p - v), v);
    skip_blanks(c);
    if (c->p < c->end) {
        const char *ts = c->p;
        while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
            c->p++;
        if (parse_int(ts, (size_t)(c->p - ts)))
            return fail(c, "%.*s: bad timestamp", (int)(n > 80 ? 80 : n), name);
        skip_blanks(c);
        if (c->p < c->end)
            return fail(c, "%.*s: text after the timestamp", (int)(n > 80 ? 80 : n), name);
    }
    if (o->n == LG_PROM_MAX_SAMPLES) return fail(c, "more than %d samples", LG_PROM_MAX_SAMPLES);
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        lg_prom_sample *s = realloc(o->s, cap * sizeof *s);
        if (!s) return -ENOMEM;
        o->s = s;
        o->cap = cap;
    }
    char *dup = malloc(n + 1);
    if (!dup) return -ENOMEM;
    memcpy(dup, name, n);
    dup[n] = '\0';
    o->s[o->n++] = (lg_prom_sample){dup, le, value};
    return 0;
}

int lg_prom_parse(const char *text, size_t len, lg_prom *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen) err[0] = '\0';
    cur c = {.err = err, .errlen = errlen};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        c.line++;
        c.p = p;
        c.end = le;
        if (le - p > LG_PROM_MAX_LINE) return fail(&c, "longer than %d bytes", LG_PROM_MAX_LINE);
        if (memchr(p, '\0', (size_t)(le - p))) return fail(&c, "a NUL byte");
        if (le > p && le[-1] == '\r') c.end--; /* tolerated, as Prometheus does */
        skip_blanks(&c);
        int rc = 0;
        if (c.p == c.end)
            rc = 0;
        else if (*c.p == '#')
            rc = comment(&c, out);
        else
            rc = sample(&c, out);
        if (rc) return rc;
        p = nl ? nl + 1 : end;
    }
    return 0;
}

void lg_prom_free(lg_prom *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->s[i].name);
    for (size_t i = 0; i < p->n_fam; i++)
        free(p->fam[i].name);
    free(p->s);
    free(p->fam);
    memset(p, 0, sizeof *p);
}

lg_prom_type lg_prom_type_of(const lg_prom *p, const char *family)
{
    const lg_prom_family *f = family_find(p, family, strlen(family));
    return f ? f->type : LG_PROM_UNTYPED;
}

double lg_prom_sum(const lg_prom *p, const char *name)
{
    double sum = NAN;
    for (size_t i = 0; i < p->n; i++) {
        if (strcmp(p->s[i].name, name)) continue;
        sum = isnan(sum) ? p->s[i].value : sum + p->s[i].value;
    }
    return sum;
}

static double suffixed_sum(const lg_prom *p, const char *family, const char *sfx)
{
    char name[512];
    if ((size_t)snprintf(name, sizeof name, "%s%s", family, sfx) >= sizeof name) return NAN;
    return lg_prom_sum(p, name);
}

int lg_prom_hist_of(const lg_prom *p, const char *family, lg_prom_hist *h)
{
    h->n = 0;
    h->sum = suffixed_sum(p, family, "_sum");
    h->count = suffixed_sum(p, family, "_count");
    size_t fl = strlen(family);
    for (size_t i = 0; i < p->n; i++) {
        const lg_prom_sample *s = &p->s[i];
        if (isnan(s->le) || strncmp(s->name, family, fl) || strcmp(s->name + fl, "_bucket"))
            continue;
        int at = -1;
        for (int b = 0; b < h->n && at < 0; b++)
            if (h->le[b] == s->le) at = b;
        if (at < 0) {
            if (h->n == LG_PROM_MAX_BUCKETS) return -E2BIG;
            at = h->n++;
            h->le[at] = s->le;
            h->cum[at] = 0;
        }
        h->cum[at] += s->value;
    }
    /* ascending by bound (insertion sort: at most 128) */
    for (int i = 1; i < h->n; i++) {
        double l = h->le[i], v = h->cum[i];
        int j = i - 1;
        for (; j >= 0 && h->le[j] > l; j--) {
            h->le[j + 1] = h->le[j];
            h->cum[j + 1] = h->cum[j];
        }
        h->le[j + 1] = l;
        h->cum[j + 1] = v;
    }
    return h->n ? 0 : -ENOENT;
}

static double value_at(const lg_prom_hist *h, double le)
{
    for (int i = 0; i < h->n; i++)
        if (h->le[i] == le) return h->cum[i];
    return 0;
}

int lg_prom_hist_delta(const lg_prom_hist *a, const lg_prom_hist *b, lg_prom_hist *out)
{
    int reset = (!isnan(a->count) && !isnan(b->count) && b->count < a->count) ||
                (!isnan(a->sum) && !isnan(b->sum) && b->sum < a->sum);
    for (int i = 0; i < b->n && !reset; i++)
        if (b->cum[i] < value_at(a, b->le[i])) reset = 1;
    *out = *b;
    if (reset) return 1;
    for (int i = 0; i < b->n; i++)
        out->cum[i] = b->cum[i] - value_at(a, b->le[i]);
    if (!isnan(a->count)) out->count = b->count - a->count;
    if (!isnan(a->sum)) out->sum = b->sum - a->sum;
    return 0;
}

double lg_prom_quantile(const lg_prom_hist *h, double q)
{
    if (h->n < 1 || !isinf(h->le[h->n - 1]) || h->le[h->n - 1] < 0 || isnan(q)) return NAN;
    if (q < 0) q = 0;
    if (q > 1) q = 1;
    double total = h->cum[h->n - 1];
    if (!(total > 0)) return NAN;
    double rank = q * total, prev = 0, lo = 0;
    for (int b = 0; b < h->n; b++) {
        double cum = h->cum[b] > prev ? h->cum[b] : prev; /* monotone, as Prometheus fixes it */
        if (cum >= rank && cum > 0) {
            if (b == h->n - 1) return h->n >= 2 ? h->le[h->n - 2] : NAN;
            if (b == 0 && h->le[0] <= 0) return h->le[0];
            double in = cum - prev;
            double hi = h->le[b];
            if (!(in > 0)) return hi;
            return lo + (hi - lo) * ((rank - prev) / in);
        }
        prev = cum;
        lo = h->le[b];
    }
    return NAN;
}
