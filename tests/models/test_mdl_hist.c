/* Unit tests of mdl_hist: percentiles against exact order statistics of random
 * samples, exact merge, exact extremes and mean, clamping, iteration. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_test_rng.h"

#include "mdl_hist.h"

/* Log-uniform over [1, 1e10]: exercises every group. */
static uint64_t rng_loguniform(uint64_t *s)
{
    return (uint64_t)exp(rng_unit(s) * log(1e10));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t exact_percentile(const uint64_t *sorted, size_t n, double p)
{
    if (p <= 0.0) return sorted[0];
    if (p >= 100.0) return sorted[n - 1];
    size_t rank = (size_t)ceil(p / 100.0 * (double)n);
    if (rank < 1) rank = 1;
    return sorted[rank - 1];
}

static void check_percentiles(int sub_bits, uint64_t seed)
{
    enum { N = 20000 };
    uint64_t *x = malloc(N * sizeof *x);
    mdl_hist *h = mdl_hist_new(MDL_HIST_LATENCY_HIGHEST_NS, sub_bits);
    assert_non_null(x);
    assert_non_null(h);
    for (size_t i = 0; i < N; i++) {
        x[i] = rng_loguniform(&seed);
        mdl_hist_record(h, x[i]);
    }
    qsort(x, N, sizeof *x, cmp_u64);
    const double ps[] = {0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};
    /* mdl_hist.h: a reported value is within 2^-(sub_bits+1) of any value in
     * its bucket (the midpoint; an endpoint would be off by up to 2^-sub_bits) */
    double tol = ldexp(1.0, -(sub_bits + 1));
    for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++) {
        double exact = (double)exact_percentile(x, N, ps[j]);
        double got = (double)mdl_hist_percentile(h, ps[j]);
        double rel = fabs(got - exact) / exact;
        if (rel > tol)
            fail_msg("sub_bits %d p%g: got %.0f exact %.0f rel %g > %g", sub_bits, ps[j], got,
                     exact, rel, tol);
    }
    /* extremes are exact, p0 and p100 are them */
    assert_int_equal(h->min, x[0]);
    assert_int_equal(h->max, x[N - 1]);
    assert_int_equal(mdl_hist_percentile(h, 0), x[0]);
    assert_int_equal(mdl_hist_percentile(h, 100), x[N - 1]);
    free(x);
    mdl_hist_free(h);
}

static void test_percentiles_within_relative_error(void **state)
{
    (void)state;
    check_percentiles(MDL_HIST_LATENCY_SUB_BITS, 1);
    check_percentiles(7, 2);
    check_percentiles(3, 3);
    check_percentiles(1, 4);
}

static void test_small_values_are_exact(void **state)
{
    (void)state;
    mdl_hist *h = mdl_hist_new(1000000, 4); /* exact below 16 */
    for (uint64_t v = 0; v < 16; v++)
        mdl_hist_record(h, v);
    for (int i = 0; i < 16; i++) {
        assert_int_equal(mdl_hist_bucket_low(h, i), (uint64_t)i);
        assert_int_equal(mdl_hist_bucket_high(h, i), (uint64_t)i);
    }
    /* 16 values 0..15: the median (rank 8) is 7 */
    assert_int_equal(mdl_hist_percentile(h, 50), 7);
    mdl_hist_free(h);
}

/* The reported value is the bucket's midpoint lo + (hi - lo) / 2 exactly
 * (away from min and max, which clamp it), and within the header's
 * 2^-(sub_bits+1) of both ends of the bucket. */
static void test_reports_bucket_midpoint(void **state)
{
    (void)state;
    const int sub_bits = 3;
    const uint64_t highest = 100000;
    mdl_hist *h = mdl_hist_new(highest, sub_bits);
    assert_non_null(h);
    double tol = ldexp(1.0, -(sub_bits + 1));
    int wide = 0;
    for (int i = 1; i < h->n_buckets - 1; i++) {
        uint64_t lo = mdl_hist_bucket_low(h, i), hi = mdl_hist_bucket_high(h, i);
        uint64_t mid = lo + (hi - lo) / 2;
        /* one value at each end of the bucket, and the extremes elsewhere */
        mdl_hist_reset(h);
        mdl_hist_record(h, 0);
        mdl_hist_record(h, lo);
        mdl_hist_record(h, hi);
        mdl_hist_record(h, highest);
        if (mdl_hist_value_at_rank(h, 2) != mid || mdl_hist_value_at_rank(h, 3) != mid)
            fail_msg("bucket %d [%llu, %llu]: ranks 2, 3 give %llu, %llu, want %llu", i,
                     (unsigned long long)lo, (unsigned long long)hi,
                     (unsigned long long)mdl_hist_value_at_rank(h, 2),
                     (unsigned long long)mdl_hist_value_at_rank(h, 3), (unsigned long long)mid);
        assert_int_equal(mdl_hist_percentile(h, 50), mid);
        assert_true((double)(mid - lo) <= tol * (double)lo);
        assert_true((double)(hi - mid) <= tol * (double)hi);
        wide += hi - lo >= 2;
    }
    assert_true(wide > 20); /* the loop did see buckets where the ends differ from the midpoint */
    /* a lone value is its own min and max: reported exactly */
    mdl_hist_reset(h);
    mdl_hist_record(h, 77777);
    assert_int_equal(mdl_hist_percentile(h, 50), 77777);
    mdl_hist_free(h);
}

static void test_buckets_tile_the_range(void **state)
{
    (void)state;
    mdl_hist *h = mdl_hist_new(MDL_HIST_LATENCY_HIGHEST_NS, 11);
    assert_non_null(h);
    assert_int_equal(mdl_hist_bucket_low(h, 0), 0);
    for (int i = 1; i < h->n_buckets; i++) {
        assert_int_equal(mdl_hist_bucket_low(h, i), mdl_hist_bucket_high(h, i - 1) + 1);
        uint64_t lo = mdl_hist_bucket_low(h, i), hi = mdl_hist_bucket_high(h, i);
        /* width / low <= 2^-sub_bits */
        assert_true((double)(hi - lo + 1) <= ldexp((double)lo, -11) || hi == lo);
    }
    assert_true(mdl_hist_bucket_high(h, h->n_buckets - 1) >= MDL_HIST_LATENCY_HIGHEST_NS);
    assert_int_equal(mdl_hist_bytes(MDL_HIST_LATENCY_HIGHEST_NS, 11),
                     sizeof(mdl_hist) + (size_t)h->n_buckets * sizeof(uint64_t));
    mdl_hist_free(h);
}

static void test_merge_equals_union(void **state)
{
    (void)state;
    uint64_t seed = 42;
    mdl_hist *a = mdl_hist_new_latency(), *b = mdl_hist_new_latency(), *u = mdl_hist_new_latency();
    mdl_hist *empty = mdl_hist_new_latency();
    for (int i = 0; i < 5000; i++) {
        uint64_t v = rng_loguniform(&seed);
        mdl_hist_record(i % 3 ? a : b, v);
        mdl_hist_record(u, v);
    }
    assert_int_equal(mdl_hist_merge(a, empty), 0);
    assert_int_equal(mdl_hist_merge(empty, b), 0); /* empty takes b's extremes */
    assert_int_equal(empty->min, b->min);
    assert_int_equal(mdl_hist_merge(a, b), 0);
    assert_int_equal(a->total, u->total);
    assert_int_equal(a->min, u->min);
    assert_int_equal(a->max, u->max);
    assert_memory_equal(a->counts, u->counts, (size_t)u->n_buckets * sizeof(uint64_t));
    assert_true(fabs(a->sum - u->sum) <= 1e-9 * u->sum);
    for (double p = 0; p <= 100; p += 0.5)
        assert_int_equal(mdl_hist_percentile(a, p), mdl_hist_percentile(u, p));

    /* extremes from either side: the smaller min and the larger max win,
     * whichever histogram holds them */
    mdl_hist *lo_hi[2] = {mdl_hist_new_latency(), mdl_hist_new_latency()};
    for (int side = 0; side < 2; side++) {
        mdl_hist_reset(lo_hi[0]);
        mdl_hist_reset(lo_hi[1]);
        mdl_hist_record(lo_hi[side], 5);       /* the min */
        mdl_hist_record(lo_hi[side], 100);     /* neither */
        mdl_hist_record(lo_hi[!side], 50);     /* neither */
        mdl_hist_record(lo_hi[!side], 900000); /* the max */
        assert_int_equal(mdl_hist_merge(lo_hi[0], lo_hi[1]), 0);
        assert_int_equal(lo_hi[0]->min, 5);
        assert_int_equal(lo_hi[0]->max, 900000);
        assert_int_equal(lo_hi[0]->total, 4);
    }
    mdl_hist_free(lo_hi[0]);
    mdl_hist_free(lo_hi[1]);

    mdl_hist *other = mdl_hist_new(1000, 11);
    assert_int_equal(mdl_hist_merge(a, other), -EINVAL);
    mdl_hist_free(other);
    mdl_hist_free(a);
    mdl_hist_free(b);
    mdl_hist_free(u);
    mdl_hist_free(empty);
}

static void test_mean_and_stddev_exact(void **state)
{
    (void)state;
    mdl_hist *h = mdl_hist_new_latency();
    assert_int_equal(mdl_hist_percentile(h, 50), 0);
    assert_true(mdl_hist_mean(h) == 0.0);
    /* 1000, 2000, 3000, 4000 recorded once each, 10^9 five times */
    for (uint64_t v = 1000; v <= 4000; v += 1000)
        mdl_hist_record(h, v);
    mdl_hist_record_n(h, 1000000000ULL, 5);
    mdl_hist_record_n(h, 7, 0); /* no-op */
    assert_int_equal(h->total, 9);
    assert_int_equal(h->min, 1000);
    assert_int_equal(h->max, 1000000000ULL);
    double mean = (10000.0 + 5e9) / 9.0;
    assert_true(fabs(mdl_hist_mean(h) - mean) < 1e-6);
    double ss = 1e6 + 4e6 + 9e6 + 16e6 + 5e18;
    double sd = sqrt(ss / 9.0 - mean * mean);
    assert_true(fabs(mdl_hist_stddev(h) - sd) < 1e-6 * sd);
    mdl_hist_reset(h);
    assert_int_equal(h->total, 0);
    assert_int_equal(mdl_hist_next_nonzero(h, 0), -1);
    mdl_hist_free(h);
}

static void test_clamping(void **state)
{
    (void)state;
    mdl_hist *h = mdl_hist_new(10000, 5);
    mdl_hist_record(h, 500);
    mdl_hist_record_n(h, 50000, 3);
    assert_int_equal(h->total, 4);
    assert_int_equal(h->clamped, 3);
    assert_int_equal(h->max, 50000); /* exact extreme, before clamping */
    assert_true(fabs(mdl_hist_mean(h) - (500.0 + 150000.0) / 4.0) < 1e-9);
    /* the clamped values sit in highest's bucket */
    uint64_t p75 = mdl_hist_percentile(h, 75);
    assert_true(p75 <= 10000 * (1.0 + ldexp(1.0, -5)) && p75 >= 10000 * (1.0 - ldexp(1.0, -5)));
    /* highest itself is in range: recorded, not clamped */
    mdl_hist_record(h, 10000);
    assert_int_equal(h->clamped, 3);
    assert_int_equal(h->total, 5);
    mdl_hist_free(h);
}

static void test_iteration_visits_every_count(void **state)
{
    (void)state;
    mdl_hist *h = mdl_hist_new_latency();
    const uint64_t vals[] = {3, 3, 900, 123456, 123457, 99999999, 3000000000ULL};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        mdl_hist_record(h, vals[i]);
    uint64_t n = 0;
    int buckets = 0;
    for (int i = mdl_hist_next_nonzero(h, 0); i >= 0; i = mdl_hist_next_nonzero(h, i + 1)) {
        n += h->counts[i];
        buckets++;
        /* each value's bucket contains it */
        int found = 0;
        for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++)
            found |= vals[j] >= mdl_hist_bucket_low(h, i) && vals[j] <= mdl_hist_bucket_high(h, i);
        assert_true(found);
    }
    assert_int_equal(n, h->total);
    assert_true(buckets == 5 || buckets == 6); /* 123456 and 123457 may share one */
    mdl_hist_free(h);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    assert_null(mdl_hist_new(1, 11));
    assert_null(mdl_hist_new(1000, 0));
    assert_null(mdl_hist_new(1000, 15));
    assert_int_equal(mdl_hist_bytes(1000, 20), 0);
    uint64_t buf[64];
    assert_int_equal(mdl_hist_init((mdl_hist *)buf, 1, 3), -EINVAL);
}

static void test_caller_memory(void **state)
{
    (void)state;
    size_t bytes = mdl_hist_bytes(1000000, 6);
    assert_true(bytes > sizeof(mdl_hist));
    mdl_hist *h = malloc(bytes);
    memset(h, 0xAB, bytes); /* garbage that init must clear */
    assert_int_equal(mdl_hist_init(h, 1000000, 6), 0);
    assert_int_equal(mdl_hist_next_nonzero(h, 0), -1);
    mdl_hist_record(h, 77777);
    assert_int_equal(h->total, 1);
    assert_int_equal(mdl_hist_percentile(h, 50), 77777);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles_within_relative_error),
        cmocka_unit_test(test_small_values_are_exact),
        cmocka_unit_test(test_reports_bucket_midpoint),
        cmocka_unit_test(test_buckets_tile_the_range),
        cmocka_unit_test(test_merge_equals_union),
        cmocka_unit_test(test_mean_and_stddev_exact),
        cmocka_unit_test(test_clamping),
        cmocka_unit_test(test_iteration_visits_every_count),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_caller_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
