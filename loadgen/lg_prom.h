/* lg_prom: a strict parser of Prometheus's text exposition format (0.0.4,
 * the format vLLM's and SGLang's /metrics serve), and the sums a benchmark
 * reads from one scrape. Pure: no I/O, no globals; single-threaded per
 * lg_prom value.
 *
 * The grammar (prometheus/docs exposition_formats.md):
 *   line    = comment | sample | blank
 *   comment = "#" ... ; "# HELP name text" and "# TYPE name type" are read,
 *             type one of counter, gauge, histogram, summary, untyped
 *             (at most one TYPE line per name, before its first sample)
 *   sample  = name [ "{" label "=" '"' value '"' { "," ... } [ "," ] "}" ]
 *             value [ timestamp ]
 *   name    = [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*
 *   a label value's escapes are \\, \" and \n; a value is a float (Inf,
 *   NaN, +Inf, -Inf allowed), a timestamp an integer of milliseconds.
 * Anything else is an error naming the line. Bounds: at most
 * LG_PROM_MAX_SAMPLES samples, lines of at most LG_PROM_MAX_LINE bytes.
 * A sample's labels are checked, and only its `le` (a histogram bucket's
 * bound) is kept: a benchmark sums a metric over its label sets (models,
 * finished reasons, engines). */
#ifndef LG_PROM_H
#define LG_PROM_H

#include <stddef.h>

#define LG_PROM_MAX_SAMPLES 200000
#define LG_PROM_MAX_LINE 65536
#define LG_PROM_MAX_BUCKETS 128

typedef enum {
    LG_PROM_UNTYPED = 0,
    LG_PROM_COUNTER,
    LG_PROM_GAUGE,
    LG_PROM_HISTOGRAM,
    LG_PROM_SUMMARY
} lg_prom_type;

typedef struct lg_prom_sample {
    char *name;   /* the sample's own name (a histogram's x_bucket, x_sum, x_count) */
    double le;    /* the le label's value (NAN: none) */
    double value; /* may be NAN or infinite */
} lg_prom_sample;

typedef struct lg_prom_family {
    char *name;
    lg_prom_type type;
} lg_prom_family;

typedef struct lg_prom {
    lg_prom_sample *s;
    size_t n, cap;
    lg_prom_family *fam; /* the TYPE lines */
    size_t n_fam, cap_fam;
} lg_prom;

/* Parses len bytes of text (no NUL needed) into *out (zeroed by the call;
 * free it with lg_prom_free, also after an error). Returns 0, -EINVAL with
 * err naming the line and what is wrong, or -ENOMEM. */
int lg_prom_parse(const char *text, size_t len, lg_prom *out, char *err, size_t errlen);
void lg_prom_free(lg_prom *p);

/* The type a TYPE line gave the family (LG_PROM_UNTYPED when none). */
lg_prom_type lg_prom_type_of(const lg_prom *p, const char *family);

/* The sum over label sets of the samples named exactly name (NAN: none). */
double lg_prom_sum(const lg_prom *p, const char *name);

/* A histogram's cumulative buckets, summed over label sets by bound,
 * ascending (the +Inf bucket last), with its _sum and _count. */
typedef struct lg_prom_hist {
    int n;
    double le[LG_PROM_MAX_BUCKETS];
    double cum[LG_PROM_MAX_BUCKETS];
    double sum, count; /* NAN: not given */
} lg_prom_hist;

/* Fills h from family's _bucket, _sum and _count samples. Returns 0,
 * -ENOENT when it has no bucket (h->n 0), or -E2BIG past
 * LG_PROM_MAX_BUCKETS distinct bounds. */
int lg_prom_hist_of(const lg_prom *p, const char *family, lg_prom_hist *h);

/* The histogram of what was observed between two scrapes: b - a by bound
 * (a bound missing in a counts 0). A counter reset (a bucket, the count or
 * the sum fell) makes the difference b itself: the server restarted, and
 * all of b was observed since. Returns 1 on a reset, else 0. */
int lg_prom_hist_delta(const lg_prom_hist *a, const lg_prom_hist *b, lg_prom_hist *out);

/* The q-quantile (0 <= q <= 1) of a cumulative histogram as Prometheus's
 * histogram_quantile computes it: linear within the bucket that holds
 * rank q x count, the first bucket's lower bound 0 (when its bound is
 * positive), the highest finite bound when the rank falls in +Inf. NAN
 * when the histogram is empty or has no +Inf bucket. */
double lg_prom_quantile(const lg_prom_hist *h, double q);

#endif
