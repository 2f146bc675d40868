/* mdl_hist: the log-linear histogram of mdl_hist.h.
 * Layout: values below S = 2^sub_bits are kept exactly (group 0, width 1);
 * above, each power of two [2^e, 2^(e+1)) is one group of S sub-buckets of
 * width 2^(e - sub_bits), so a bucket's width is at most 2^-sub_bits of its
 * lowest value. Index arithmetic only, no search. */
#include "mdl_hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Group of a value: 0 for v < S, else floor(log2 v) - sub_bits + 1. */
static int group_of(uint64_t v, int sub_bits)
{
    if (v < ((uint64_t)1 << sub_bits)) return 0;
    int e = 63 - __builtin_clzll(v);
    return e - sub_bits + 1;
}

static int index_of(uint64_t v, int sub_bits)
{
    int g = group_of(v, sub_bits);
    uint64_t s = (uint64_t)1 << sub_bits;
    if (g == 0) return (int)v;
    return (int)((uint64_t)g * s + (v >> (g - 1)) - s);
}

static int params_ok(uint64_t highest, int sub_bits)
{
    return highest >= 2 && highest < ((uint64_t)1 << 62) && sub_bits >= 1 && sub_bits <= 14;
}

size_t mdl_hist_bytes(uint64_t highest, int sub_bits)
{
    if (!params_ok(highest, sub_bits)) return 0;
    size_t n = (size_t)index_of(highest, sub_bits) + 1;
    return sizeof(mdl_hist) + n * sizeof(uint64_t);
}

int mdl_hist_init(mdl_hist *h, uint64_t highest, int sub_bits)
{
    if (!h || !params_ok(highest, sub_bits)) return -EINVAL;
    h->lowest = 0;
    h->highest = highest;
    h->sub_bits = sub_bits;
    h->n_buckets = index_of(highest, sub_bits) + 1;
    mdl_hist_reset(h);
    return 0;
}

mdl_hist *mdl_hist_new(uint64_t highest, int sub_bits)
{
    size_t bytes = mdl_hist_bytes(highest, sub_bits);
    if (bytes == 0) return NULL;
    mdl_hist *h = malloc(bytes);
    if (!h) return NULL;
    mdl_hist_init(h, highest, sub_bits);
    return h;
}

void mdl_hist_free(mdl_hist *h)
{
    free(h);
}

void mdl_hist_reset(mdl_hist *h)
{
    h->total = 0;
    h->clamped = 0;
    h->min = 0;
    h->max = 0;
    h->sum = 0.0;
    h->sum_sq = 0.0;
    memset(h->counts, 0, (size_t)h->n_buckets * sizeof(uint64_t));
}

void mdl_hist_record_n(mdl_hist *h, uint64_t value, uint64_t count)
{
    if (count == 0) return;
    if (h->total == 0) {
        h->min = value;
        h->max = value;
    } else {
        if (value < h->min) h->min = value;
        if (value > h->max) h->max = value;
    }
    double v = (double)value;
    h->sum += v * (double)count;
    h->sum_sq += v * v * (double)count;
    h->total += count;
    if (value > h->highest) {
        h->clamped += count;
        value = h->highest;
    }
    h->counts[index_of(value, h->sub_bits)] += count;
}

void mdl_hist_record(mdl_hist *h, uint64_t value)
{
    mdl_hist_record_n(h, value, 1);
}

int mdl_hist_merge(mdl_hist *dst, const mdl_hist *src)
{
    if (!dst || !src || dst->highest != src->highest || dst->sub_bits != src->sub_bits ||
        dst->n_buckets != src->n_buckets)
        return -EINVAL;
    if (src->total == 0) return 0;
    if (dst->total == 0) {
        dst->min = src->min;
        dst->max = src->max;
    } else {
        if (src->min < dst->min) dst->min = src->min;
        if (src->max > dst->max) dst->max = src->max;
    }
    dst->total += src->total;
    dst->clamped += src->clamped;
    dst->sum += src->sum;
    dst->sum_sq += src->sum_sq;
    for (int i = 0; i < dst->n_buckets; i++)
        dst->counts[i] += src->counts[i];
    return 0;
}

uint64_t mdl_hist_bucket_low(const mdl_hist *h, int i)
{
    uint64_t s = (uint64_t)1 << h->sub_bits;
    if ((uint64_t)i < s) return (uint64_t)i;
    uint64_t g = (uint64_t)i >> h->sub_bits; /* >= 1 */
    uint64_t sub = (uint64_t)i & (s - 1);
    return (s + sub) << (g - 1);
}

uint64_t mdl_hist_bucket_high(const mdl_hist *h, int i)
{
    uint64_t s = (uint64_t)1 << h->sub_bits;
    if ((uint64_t)i < s) return (uint64_t)i;
    uint64_t g = (uint64_t)i >> h->sub_bits;
    return mdl_hist_bucket_low(h, i) + ((uint64_t)1 << (g - 1)) - 1;
}

uint64_t mdl_hist_percentile(const mdl_hist *h, double p)
{
    if (h->total == 0) return 0;
    if (!(p > 0.0)) return h->min;
    if (p >= 100.0) return h->max;
    /* rank of the wanted value among the sorted sample, 1-based */
    double r = ceil(p / 100.0 * (double)h->total);
    return mdl_hist_value_at_rank(h, r < 1.0 ? 1 : (uint64_t)r);
}

uint64_t mdl_hist_value_at_rank(const mdl_hist *h, uint64_t rank)
{
    if (h->total == 0) return 0;
    if (rank < 1) rank = 1;
    if (rank > h->total) rank = h->total;
    uint64_t seen = 0;
    for (int i = 0; i < h->n_buckets; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t lo = mdl_hist_bucket_low(h, i);
            uint64_t mid = lo + (mdl_hist_bucket_high(h, i) - lo) / 2;
            if (mid < h->min) mid = h->min;
            if (mid > h->max) mid = h->max;
            return mid;
        }
    }
    return h->max;
}

double mdl_hist_mean(const mdl_hist *h)
{
    return h->total ? h->sum / (double)h->total : 0.0;
}

double mdl_hist_stddev(const mdl_hist *h)
{
    if (h->total == 0) return 0.0;
    double n = (double)h->total;
    double mean = h->sum / n;
    double var = h->sum_sq / n - mean * mean;
    return var > 0.0 ? sqrt(var) : 0.0;
}

int mdl_hist_next_nonzero(const mdl_hist *h, int i)
{
    if (i < 0) i = 0;
    for (; i < h->n_buckets; i++)
        if (h->counts[i]) return i;
    return -1;
}
