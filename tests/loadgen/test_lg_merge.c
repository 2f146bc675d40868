/* Unit tests for lg_merge: the total is the sum of the stages, n_used is the
 * last stage that dispatched (not the count of those that did), and the
 * dispatch samples are sorted by index and cut to the complete prefix of
 * the stream, so that the arrival test never sees a gap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lg_merge.h"

static void the_total_adds_the_stages_and_n_used_is_the_last_that_dispatched(void **state)
{
    (void)state;
    lg_merged m;
    assert_int_equal(lg_merged_alloc(&m, 4), 0);
    m.stages[0]->dispatched = 5;
    m.stages[0]->completed = 4;
    m.stages[2]->dispatched = 7;
    m.stages[2]->completed = 7;
    lg_merge_total(&m);
    assert_int_equal(m.total->dispatched, 12);
    assert_int_equal(m.total->completed, 11);
    assert_int_equal(m.n_used, 3); /* stage 1 sent nothing; stage 3 neither */
    lg_merged_free(&m);
    assert_int_equal(lg_merged_alloc(&m, 2), 0);
    lg_merge_total(&m);
    assert_int_equal(m.n_used, 0);
    assert_int_equal(m.total->dispatched, 0);
    lg_merged_free(&m);
}

static lg_dispatch_sample *samples(const int64_t *idx, size_t n)
{
    lg_dispatch_sample *s = calloc(n ? n : 1, sizeof *s);
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        s[i].index = idx[i];
        s[i].intended_ns = 1000 * idx[i];
    }
    return s;
}

static void samples_are_sorted_and_cut_at_the_first_gap(void **state)
{
    (void)state;
    lg_merged m = {0};
    /* two workers' samples interleaved, worker 1's ending early: 0-5 and 7 */
    static const int64_t idx[] = {4, 0, 2, 1, 3, 7, 5};
    lg_merge_sorted_samples(&m, samples(idx, 7), 7);
    assert_int_equal(m.n_samples, 6);
    for (size_t i = 0; i < m.n_samples; i++) {
        assert_int_equal(m.samples[i].index, (int64_t)i);
        assert_int_equal(m.samples[i].intended_ns, 1000 * (int64_t)i);
    }
    /* a stream that starts past 0 (a later stage) is contiguous from its first */
    static const int64_t later[] = {12, 10, 11};
    lg_merge_sorted_samples(&m, samples(later, 3), 3);
    assert_int_equal(m.n_samples, 3);
    assert_int_equal(m.samples[0].index, 10);
    assert_int_equal(m.samples[2].index, 12);
    lg_merge_sorted_samples(&m, samples(later, 0), 0);
    assert_int_equal(m.n_samples, 0);
    lg_merged_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_total_adds_the_stages_and_n_used_is_the_last_that_dispatched),
        cmocka_unit_test(samples_are_sorted_and_cut_at_the_first_gap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
