/* lg_xrecs: the per-request JSONL read back into records (see lg_xrecs.h),
 * for the exports and for the result's own per-request arrays. */
#include "lg_xrecs.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int xfail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/* A block of token times: filled from the front, never moved. */
struct lg_xtimes {
    lg_xtimes *next;
    size_t n, cap;
    int64_t v[];
};

/* Room for n more token times in x's newest block (a new block when it has
 * less: at least 1 Mi times, so blocks are few); NULL: no memory. */
static int64_t *times_room(lg_xrecs *x, size_t n)
{
    lg_xtimes *b = x->times;
    if (b && b->cap - b->n >= n) return b->v + b->n;
    size_t cap = n > ((size_t)1 << 20) ? n : (size_t)1 << 20;
    b = malloc(sizeof *b + cap * sizeof b->v[0]);
    if (!b) return NULL;
    b->next = x->times;
    b->n = 0;
    b->cap = cap;
    x->times = b;
    return b->v;
}

int lg_xrecs_add_line(lg_xrecs *x, const char *line, size_t len, long lineno, char *err,
                      size_t errlen)
{
    lg_record rec;
    char why[200];
    if (lg_record_parse(line, len, &rec, why, sizeof why))
        return xfail(err, errlen, "line %ld: %s", lineno, why);
    if (rec.n_token_times > 0) {
        /* counted by the first reading, kept by a second into their room */
        int64_t *tt = times_room(x, (size_t)rec.n_token_times);
        if (!tt) return -ENOMEM;
        if (lg_record_parse_times(line, len, &rec, tt, (size_t)rec.n_token_times, why, sizeof why))
            return xfail(err, errlen, "line %ld: %s", lineno, why);
        x->times->n += (size_t)rec.n_token_times;
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 1024;
        lg_record *p = realloc(x->r, cap * sizeof *p);
        if (!p) return -ENOMEM;
        x->r = p;
        x->cap = cap;
    }
    x->r[x->n++] = rec;
    return 0;
}

static int by_index(const void *a, const void *b)
{
    int64_t x = ((const lg_record *)a)->index, y = ((const lg_record *)b)->index;
    return (x > y) - (x < y);
}

void lg_xrecs_sort(lg_xrecs *x)
{
    if (x->n) qsort(x->r, x->n, sizeof *x->r, by_index);
}

int lg_xrecs_read(lg_xrecs *x, const char *path, int sort, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) return xfail(err, errlen, "cannot read '%s': %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lineno = 0;
    int rc = 0;
    char why[256];
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (n == 0 || (n == 1 && line[0] == '\n')) continue;
        rc = lg_xrecs_add_line(x, line, (size_t)n, lineno, why, sizeof why);
        if (rc == -EINVAL) xfail(err, errlen, "%s: %s", path, why);
        if (rc == -ENOMEM) xfail(err, errlen, "%s: out of memory", path);
    }
    if (rc == 0 && ferror(f)) rc = xfail(err, errlen, "cannot read '%s'", path);
    free(line);
    fclose(f);
    if (rc == 0 && sort) lg_xrecs_sort(x);
    return rc;
}

void lg_xrecs_free(lg_xrecs *x)
{
    for (lg_xtimes *b = x->times, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(x->r);
    memset(x, 0, sizeof *x);
}

int lg_xrec_ok(const lg_record *r)
{
    return strcmp(r->cls, "ok") == 0;
}

double lg_xrec_value(const lg_record *r, int what)
{
    double e2e = (double)(r->end_ns - r->intended_ns) / 1e9;
    int has_ft = r->first_token_ns >= 0;
    switch (what) {
    case LG_X_LAT:
        return e2e;
    case LG_X_TTFT:
        return has_ft ? (double)(r->first_token_ns - r->intended_ns) / 1e9 : NAN;
    case LG_X_TPOT:
        return has_ft && r->output_tokens > 1
                   ? (double)(r->end_ns - r->first_token_ns) / 1e9 / (double)(r->output_tokens - 1)
                   : NAN;
    case LG_X_NTPOT:
        return r->output_tokens > 0 ? e2e / (double)r->output_tokens : NAN;
    case LG_X_LAG:
        return r->dispatch_ns >= 0 ? (double)(r->dispatch_ns - r->intended_ns) / 1e9 : NAN;
    case LG_X_IN:
        return (double)r->input_tokens;
    default:
        return (double)r->output_tokens;
    }
}
