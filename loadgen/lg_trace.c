/* lg_trace: the Azure-style trace CSV (see lg_trace.h). */
#include "lg_trace.h"

#include "lg_dataset.h" /* lg_dataset_read_file, LG_MAX_FILE_BYTES */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rb_file.h"
#include "rb_text.h"

/* One CSV field: [s, e) after trimming blanks and one pair of quotes. */
typedef struct field {
    const char *s;
    size_t n;
} field;

/* Splits one line into fields (quoted fields may hold commas; "" inside
 * quotes is kept as is, which is enough for names and numbers). */
static size_t split_fields(const char *s, size_t len, field *f, size_t max_f)
{
    size_t n = 0, i = 0;
    for (;;) {
        size_t start = i;
        int quoted = 0;
        while (i < len && (quoted || s[i] != ',')) {
            if (s[i] == '"') quoted = !quoted;
            i++;
        }
        const char *a = s + start, *b = s + i;
        while (a < b && rb_is_space((unsigned char)*a))
            a++;
        while (b > a && rb_is_space((unsigned char)b[-1]))
            b--;
        if (b - a >= 2 && *a == '"' && b[-1] == '"') {
            a++;
            b--;
        }
        if (n < max_f) f[n] = (field){a, (size_t)(b - a)};
        n++;
        if (i >= len) return n;
        i++; /* the comma */
    }
}

static int field_is(field f, const char *name)
{
    return f.n == strlen(name) && strncasecmp(f.s, name, f.n) == 0;
}

/* Copies a field into a NUL-terminated buffer; 0 if it does not fit or
 * holds a NUL byte (which would hide the rest from the number parsers). */
static int field_str(field f, char *buf, size_t cap)
{
    if (f.n + 1 > cap || memchr(f.s, '\0', f.n)) return 0;
    memcpy(buf, f.s, f.n);
    buf[f.n] = '\0';
    return 1;
}

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *v)
{
    int x = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 1;
}

/* "YYYY-MM-DD HH:MM:SS[.fraction]" (or 'T' between) to ns since 1970 (UTC;
 * only differences matter). */
static int parse_datetime(const char *s, int64_t *ns)
{
    size_t n = strlen(s);
    int y, mo, d, h, mi, sec;
    if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' ||
        s[16] != ':')
        return 0;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
        !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec))
        return 0;
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
        mi > 59 || sec > 60)
        return 0;
    int64_t frac_ns = 0;
    if (n > 19) {
        if (s[19] != '.' || n == 20) return 0;
        int64_t scale = 100000000;
        for (size_t i = 20; i < n; i++) {
            if (s[i] < '0' || s[i] > '9') return 0;
            frac_ns += (s[i] - '0') * scale; /* digits past ns are dropped */
            scale /= 10;
        }
    }
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    *ns = secs * 1000000000 + frac_ns;
    return 1;
}

static int parse_timestamp(field f, int64_t *ns)
{
    char buf[64];
    if (!field_str(f, buf, sizeof buf) || f.n == 0) return 0;
    if (parse_datetime(buf, ns)) return 1;
    char *end;
    errno = 0;
    double s = strtod(buf, &end);
    if (*end || errno || !(s >= 0 && s <= 4e9)) return 0;
    *ns = llround(s * 1e9);
    return 1;
}

static int parse_count(field f, int32_t *v)
{
    char buf[32];
    if (!field_str(f, buf, sizeof buf) || f.n == 0) return 0;
    char *end;
    errno = 0;
    long long x = strtoll(buf, &end, 10);
    if (*end || errno || x < 0 || x > INT32_MAX) return 0;
    *v = (int32_t)x;
    return 1;
}

typedef struct trace_item {
    lg_trace_row row;
    size_t order, line;
} trace_item;

/* A trace longer than this is a mistake (mixed units, a bad date), not a
 * workload: 10 years. */
#define LG_TRACE_MAX_SPAN_NS (10 * 366 * 86400 * (int64_t)1000000000)

static int by_time(const void *a, const void *b)
{
    const trace_item *x = a, *y = b;
    if (x->row.t_ns != y->row.t_ns) return x->row.t_ns < y->row.t_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

enum { COL_T, COL_IN, COL_OUT, N_COLS };
static const char *const COL_NAMES[N_COLS] = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};

static int trace_parse(const char *what, const char *csv, size_t len, lg_trace_row **out,
                       size_t *n_out, char *err, size_t errlen)
{
    *out = NULL;
    *n_out = 0;
    size_t col[N_COLS], n_fields = 0, n = 0, cap = 0, line = 0;
    int have_header = 0, rc = 0;
    trace_item *items = NULL;
    field f[64];
    for (size_t at = 0; at < len;) {
        const char *s = csv + at;
        const char *nl = memchr(s, '\n', len - at);
        size_t ll = nl ? (size_t)(nl - s) : len - at;
        at += ll + 1;
        line++;
        if (ll && s[ll - 1] == '\r') ll--;
        if (lg_count_tokens(s, ll) == 0) continue; /* a blank line */
        size_t nf = split_fields(s, ll, f, sizeof f / sizeof f[0]);
        if (!have_header) {
            for (int c = 0; c < N_COLS; c++) {
                col[c] = SIZE_MAX;
                for (size_t i = 0; i < nf && i < sizeof f / sizeof f[0]; i++)
                    if (field_is(f[i], COL_NAMES[c])) col[c] = i;
                if (col[c] == SIZE_MAX) {
                    rb_set_err(err, errlen, "%s: line %zu: the header has no %s column", what, line,
                               COL_NAMES[c]);
                    rc = -EINVAL;
                    goto done;
                }
            }
            n_fields = nf;
            have_header = 1;
            continue;
        }
        if (nf != n_fields) {
            rb_set_err(err, errlen, "%s: line %zu: %zu fields, but the header has %zu", what, line,
                       nf, n_fields);
            rc = -EINVAL;
            goto done;
        }
        trace_item it = {.order = n, .line = line};
        int bad = !parse_timestamp(f[col[COL_T]], &it.row.t_ns)          ? COL_T
                  : !parse_count(f[col[COL_IN]], &it.row.input_tokens)   ? COL_IN
                  : !parse_count(f[col[COL_OUT]], &it.row.output_tokens) ? COL_OUT
                                                                         : -1;
        if (bad >= 0) {
            field v = f[col[bad]];
            int shown = v.n > 40 ? 40 : (int)v.n;
            rb_set_err(err, errlen, "%s: line %zu: %s: %s, got '%.*s'", what, line, COL_NAMES[bad],
                       bad == COL_T ? "must be seconds >= 0 or YYYY-MM-DD HH:MM:SS[.fraction]"
                                    : "must be a whole number >= 0",
                       shown, v.s);
            rc = -EINVAL;
            goto done;
        }
        /* A request asks for at least one token and sends at least one. */
        if (it.row.input_tokens < 1) it.row.input_tokens = 1;
        if (it.row.output_tokens < 1) it.row.output_tokens = 1;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            trace_item *p = realloc(items, nc * sizeof *p);
            if (!p) {
                rb_set_err(err, errlen, "%s: out of memory", what);
                rc = -ENOMEM;
                goto done;
            }
            items = p;
            cap = nc;
        }
        items[n++] = it;
    }
    if (!have_header || n == 0) {
        rb_set_err(err, errlen, "%s: %s", what,
                   have_header ? "no rows after the header" : "empty (no header line)");
        rc = -EINVAL;
        goto done;
    }
    qsort(items, n, sizeof *items, by_time);
    if (items[n - 1].row.t_ns - items[0].row.t_ns > LG_TRACE_MAX_SPAN_NS) {
        rb_set_err(err, errlen,
                   "%s: line %zu: %s: more than 10 years after the earliest row (line %zu)", what,
                   items[n - 1].line, COL_NAMES[COL_T], items[0].line);
        rc = -EINVAL;
        goto done;
    }
    lg_trace_row *rows = malloc(n * sizeof *rows);
    if (!rows) {
        rb_set_err(err, errlen, "%s: out of memory", what);
        rc = -ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        rows[i] = items[i].row;
        rows[i].t_ns -= items[0].row.t_ns;
    }
    *out = rows;
    *n_out = n;
done:
    free(items);
    return rc;
}

int lg_trace_parse(const char *csv, size_t len, lg_trace_row **out, size_t *n, char *err,
                   size_t errlen)
{
    return trace_parse("trace", csv, len, out, n, err, errlen);
}

int lg_trace_load(const char *path, lg_trace_row **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    char *buf, what[512];
    size_t len;
    int rc = lg_dataset_read_file("trace", path, &buf, &len, err, errlen);
    if (rc) return rc;
    snprintf(what, sizeof what, "trace %s", path);
    rc = trace_parse(what, buf, len, out, n, err, errlen);
    free(buf);
    return rc;
}
