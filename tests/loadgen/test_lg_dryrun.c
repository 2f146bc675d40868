/* Unit tests for lg_dryrun_count: the dry run's expected requests are the
 * schedule's own arrivals, per stage and per worker (index mod k), with the
 * stage's first and last intended times; a bad spec is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "lg_dryrun.h"

static void constant_stages_count_exactly(void **state)
{
    (void)state;
    /* constant rate (infinite gamma shape): 10/s for 1 s, then 5 requests at 100/s */
    lg_stage st[2] = {{.rate_per_s = 10, .duration_ns = 1000000000LL},
                      {.rate_per_s = 100, .max_requests = 5}};
    lg_sched_spec spec = {.seed = 1, .burstiness = INFINITY, .stages = st, .n_stages = 2};
    int64_t w[3];
    lg_dryrun_counts c;
    char err[128];
    assert_int_equal(lg_dryrun_count(&spec, 3, w, &c, err, sizeof err), 0);
    assert_int_equal(c.per_stage[0], 10);
    assert_int_equal(c.per_stage[1], 5);
    assert_int_equal(c.total, 15);
    assert_false(c.truncated);
    /* 15 arrivals over 3 workers: indices 0,3,..,12 / 1,..,13 / 2,..,14 */
    assert_int_equal(w[0], 5);
    assert_int_equal(w[1], 5);
    assert_int_equal(w[2], 5);
    assert_true(c.first_ns[0] >= 0 && c.last_ns[0] > c.first_ns[0]);
    assert_true(c.last_ns[0] < 1000000000LL && c.first_ns[1] >= 1000000000LL);
    assert_int_equal(c.first_ns[2], -1);
}

static void poisson_counts_follow_the_seed(void **state)
{
    (void)state;
    lg_stage st = {.rate_per_s = 50, .duration_ns = 2000000000LL};
    lg_sched_spec spec = {.seed = 7, .burstiness = 1.0, .stages = &st, .n_stages = 1};
    lg_dryrun_counts a, b;
    char err[128];
    assert_int_equal(lg_dryrun_count(&spec, 1, NULL, &a, err, sizeof err), 0);
    assert_int_equal(lg_dryrun_count(&spec, 1, NULL, &b, err, sizeof err), 0);
    assert_int_equal(a.total, b.total);
    /* the same count as iterating the schedule by hand */
    lg_sched *it = lg_sched_new(&spec, err, sizeof err);
    assert_non_null(it);
    lg_arrival x;
    int64_t n = 0;
    while (lg_sched_next(it, &x))
        n++;
    lg_sched_free(it);
    assert_int_equal(a.total, n);
    assert_true(n > 50 && n < 150);
}

static void bad_spec_is_refused(void **state)
{
    (void)state;
    lg_stage st = {.rate_per_s = -5, .duration_ns = 1000000000LL};
    lg_sched_spec spec = {.seed = 1, .burstiness = 1.0, .stages = &st, .n_stages = 1};
    lg_dryrun_counts c;
    char err[128] = "";
    assert_int_equal(lg_dryrun_count(&spec, 1, NULL, &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "rate"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(constant_stages_count_exactly),
        cmocka_unit_test(poisson_counts_follow_the_seed),
        cmocka_unit_test(bad_spec_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
