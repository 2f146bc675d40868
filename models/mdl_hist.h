/* mdl_hist: an HDR-style log-linear histogram of non-negative integer values
 * (the suite records nanoseconds). Buckets are powers of two split into
 * 2^sub_bits linear sub-buckets, so every recorded value is kept within a
 * fixed relative error (2^-sub_bits; sub_bits = 11 gives about 3 significant
 * digits). Fixed memory whatever the count, exact merge by addition, so k
 * workers' histograms merge into exactly the histogram of the union.
 *
 * Layout: values below S = 2^sub_bits have one bucket each (exact); above,
 * each power of two [2^e, 2^(e+1)) is split into S equal buckets of width
 * 2^(e - sub_bits). A value's bucket is found by arithmetic (no search), and a
 * reported value (the bucket's midpoint) is within 2^-(sub_bits+1) of any
 * value in the bucket. The latency histogram (1 h, sub_bits 11) has 65536
 * buckets: 512 KiB.
 *
 * Pure: no I/O, no clocks, no globals. Not thread-safe: one owner at a time.
 * The struct may be placed in shared memory (counts are a flexible array of
 * uint64_t; see mdl_hist_bytes). */
#ifndef MDL_HIST_H
#define MDL_HIST_H

#include <stddef.h>
#include <stdint.h>

typedef struct mdl_hist {
    uint64_t lowest;   /* 0: every value from 0 up has a bucket */
    uint64_t highest;  /* values above are clamped to highest (and counted in `clamped`) */
    int sub_bits;      /* linear sub-buckets per power of two = 2^sub_bits */
    int n_buckets;     /* total number of counts[] */
    uint64_t total;    /* values recorded */
    uint64_t clamped;  /* values clamped to highest */
    uint64_t min, max; /* exact extremes (before clamping); 0 when empty */
    double sum;        /* exact sum, for the mean */
    double sum_sq;     /* for the standard deviation */
    uint64_t counts[];
} mdl_hist;

/* Bytes needed for a histogram with these parameters, or 0 if invalid. */
size_t mdl_hist_bytes(uint64_t highest, int sub_bits);
/* Allocates (malloc) and initialises. highest >= 2, 1 <= sub_bits <= 14.
 * Returns NULL on bad parameters or no memory. Free with mdl_hist_free. */
mdl_hist *mdl_hist_new(uint64_t highest, int sub_bits);
/* Initialises caller-provided memory of mdl_hist_bytes() bytes. Returns 0 or -EINVAL. */
int mdl_hist_init(mdl_hist *h, uint64_t highest, int sub_bits);
void mdl_hist_free(mdl_hist *h);
void mdl_hist_reset(mdl_hist *h);

void mdl_hist_record(mdl_hist *h, uint64_t value);
void mdl_hist_record_n(mdl_hist *h, uint64_t value, uint64_t count);

/* dst += src. Both must have the same highest and sub_bits; returns 0 or -EINVAL. */
int mdl_hist_merge(mdl_hist *dst, const mdl_hist *src);

/* The value at percentile p in [0, 100]: the smallest bucket value v such that
 * at least p% of the recorded values are <= v (reported as the bucket's
 * midpoint, clamped to [min, max]). 0 when empty. */
uint64_t mdl_hist_percentile(const mdl_hist *h, double p);
/* The value of the rank-th smallest recorded value (1-based, clamped to
 * [1, total]), reported as for mdl_hist_percentile. 0 when empty. */
uint64_t mdl_hist_value_at_rank(const mdl_hist *h, uint64_t rank);
double mdl_hist_mean(const mdl_hist *h);
double mdl_hist_stddev(const mdl_hist *h);

/* Iteration over non-empty buckets, for serialising: returns the next index
 * >= i with a non-zero count, or -1. The bucket's value range is
 * [mdl_hist_bucket_low(h, i), mdl_hist_bucket_high(h, i)]. */
int mdl_hist_next_nonzero(const mdl_hist *h, int i);
uint64_t mdl_hist_bucket_low(const mdl_hist *h, int i);
uint64_t mdl_hist_bucket_high(const mdl_hist *h, int i);

/* The suite's standard latency histogram: 1 ns .. 1 h, sub_bits 11. */
#define MDL_HIST_LATENCY_HIGHEST_NS 3600000000000ULL
#define MDL_HIST_LATENCY_SUB_BITS 11
static inline mdl_hist *mdl_hist_new_latency(void)
{
    return mdl_hist_new(MDL_HIST_LATENCY_HIGHEST_NS, MDL_HIST_LATENCY_SUB_BITS);
}

#endif
