/* Tests of lg_plan: closed loop has one definition, and the load mode label
 * follows it; C is split over k workers without loss; the region's slots
 * start on their own cache line, are disjoint, and are addressed from
 * slot_base (a process under --mpi holds only its rank's slot). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lg_plan.h"

static lg_opts opts(void)
{
    lg_opts o;
    lg_opts_defaults(&o, 2);
    return o;
}

static void closed_loop_is_a_cap_without_a_rate_on_one_stage(void **state)
{
    (void)state;
    lg_opts o = opts();
    o.max_concurrency = 8;
    o.rate_given = 0;
    o.n_stages = 1;
    assert_true(lg_closed_loop(&o));
    assert_string_equal(lg_load_mode(&o), "closed");
    o.rate_given = 1;
    assert_false(lg_closed_loop(&o));
    assert_string_equal(lg_load_mode(&o), "open-capped");
    o.rate_given = 0;
    o.n_stages = 3;
    assert_false(lg_closed_loop(&o));
    assert_string_equal(lg_load_mode(&o), "open-capped");
    /* a trace gives the arrival times: capped, but open */
    o.n_stages = 1;
    o.dataset = LG_DS_TRACE;
    assert_false(lg_closed_loop(&o));
    assert_string_equal(lg_load_mode(&o), "open-capped");
    o.dataset = LG_DS_RANDOM;
    o.max_concurrency = 0;
    assert_false(lg_closed_loop(&o));
    assert_string_equal(lg_load_mode(&o), "open");
}

static void the_cap_is_split_without_loss(void **state)
{
    (void)state;
    lg_opts o = opts();
    lg_plan p;
    memset(&p, 0, sizeof p);
    p.o = &o;
    for (int c = 3; c <= 11; c += 4)
        for (int k = 1; k <= c; k++) {
            o.max_concurrency = c;
            p.k = k;
            int sum = 0, lo = c, hi = 0;
            for (int w = 0; w < k; w++) {
                int n = lg_plan_worker_cap(&p, w);
                sum += n;
                lo = n < lo ? n : lo;
                hi = n > hi ? n : hi;
            }
            assert_int_equal(sum, c);
            assert_true(hi - lo <= 1);
        }
    o.max_concurrency = 0;
    assert_int_equal(lg_plan_worker_cap(&p, 0), 0);
}

static void slots_are_disjoint_and_addressed_from_slot_base(void **state)
{
    (void)state;
    lg_opts o = opts();
    lg_plan p;
    memset(&p, 0, sizeof p);
    p.o = &o;
    p.k = 5;
    p.n_stages = 2;
    assert_int_equal(lg_plan_map(&p, 3, 2), 0); /* workers 3 and 4 of 5 */
    assert_non_null(p.shm);
    assert_int_equal(lg_plan_shared(&p)->saturated_stage, -1);
    char *s3 = (char *)lg_plan_slot(&p, 3), *s4 = (char *)lg_plan_slot(&p, 4);
    assert_ptr_equal(s3, (char *)p.shm + LG_SLOTS_PAGE);
    assert_int_equal((size_t)(s4 - s3), lg_slot_bytes(2));
    assert_int_equal((uintptr_t)s4 % 64, 0); /* no cache line shared between workers */
    /* a slot's parts follow each other inside it */
    char *b0 = (char *)lg_plan_stats(&p, 3, 0), *b1 = (char *)lg_plan_stats(&p, 3, 1);
    char *smp = (char *)lg_plan_sample(&p, 3);
    assert_true(b0 >= s3 + sizeof(lg_slot));
    assert_int_equal((size_t)(b1 - b0), lg_stats_block_bytes());
    assert_true(smp >= b1 + lg_stats_block_bytes());
    assert_true(smp + LG_SAMPLE_PER_WORKER * sizeof(lg_dispatch_sample) <= s4);
    assert_true(s4 + lg_slot_bytes(2) <= (char *)p.shm + p.shm_bytes);
    /* the blocks are initialised: they record and merge */
    lg_stats_record_dispatch(lg_plan_stats(&p, 4, 1), 1000, 1500, 1000000);
    assert_int_equal(lg_plan_stats(&p, 4, 1)->dispatched, 1);
    assert_int_equal(lg_plan_stats(&p, 3, 1)->dispatched, 0);
    /* no parts file: no records */
    assert_int_equal(lg_plan_detailed_fd(&p, 4), -1);
    int fds[2] = {7, 9};
    p.detailed_fd = fds;
    assert_int_equal(lg_plan_detailed_fd(&p, 4), 9);
    lg_plan_free(&p);
    assert_null(p.shm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closed_loop_is_a_cap_without_a_rate_on_one_stage),
        cmocka_unit_test(the_cap_is_split_without_loss),
        cmocka_unit_test(slots_are_disjoint_and_addressed_from_slot_base),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
