/* Unit tests for cal_proc_place: where a certificate's simulator and
 * workers run, from each CPU's idle share at the start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "cal_proc.h"

static cpu_set_t cpus(int n)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    for (int c = 0; c < n; c++)
        CPU_SET(c, &s);
    return s;
}

static void the_simulator_takes_the_busiest_cpu(void **state)
{
    (void)state;
    cpu_set_t all = cpus(4), w;
    double idle[4] = {0.9, 0.97, 0.45, 0.6};
    int sim = -9;
    assert_int_equal(cal_proc_place(idle, 4, &all, 1, &sim, &w), 0);
    assert_int_equal(sim, 2);
    assert_int_equal(CPU_COUNT(&w), 3);
    assert_true(CPU_ISSET(0, &w) && CPU_ISSET(1, &w) && CPU_ISSET(3, &w));
    assert_false(CPU_ISSET(2, &w));
    /* three workers still have a CPU each beside it */
    assert_int_equal(cal_proc_place(idle, 4, &all, 3, &sim, &w), 0);
    assert_int_equal(sim, 2);
}

static void only_allowed_cpus_count(void **state)
{
    (void)state;
    cpu_set_t some, w;
    CPU_ZERO(&some);
    CPU_SET(1, &some);
    CPU_SET(3, &some);
    double idle[4] = {0.1, 0.8, 0.2, 0.7}; /* CPUs 0 and 2 are busier, not ours */
    int sim = -9;
    assert_int_equal(cal_proc_place(idle, 4, &some, 1, &sim, &w), 0);
    assert_int_equal(sim, 3);
    assert_int_equal(CPU_COUNT(&w), 1);
    assert_true(CPU_ISSET(1, &w));
}

static void unread_cpus_count_as_idle(void **state)
{
    (void)state;
    cpu_set_t all = cpus(3), w;
    double idle[2] = {NAN, 0.95}; /* CPU 0 unread, CPU 2 beyond the array */
    int sim = -9;
    assert_int_equal(cal_proc_place(idle, 2, &all, 1, &sim, &w), 0);
    assert_int_equal(sim, 1);
}

static void no_spare_cpu_places_nothing(void **state)
{
    (void)state;
    cpu_set_t two = cpus(2), one = cpus(1), w;
    double idle[2] = {0.5, 1.0};
    int sim = -9;
    assert_int_equal(cal_proc_place(idle, 2, &two, 2, &sim, &w), -1);
    assert_int_equal(sim, -1);
    assert_int_equal(CPU_COUNT(&w), 0);
    assert_int_equal(cal_proc_place(idle, 2, &one, 1, &sim, &w), -1);
    assert_int_equal(cal_proc_place(idle, 2, &two, 1, &sim, &w), 0);
    assert_int_equal(sim, 0);
    assert_int_equal(cal_proc_place(idle, 2, &two, 0, &sim, &w), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_simulator_takes_the_busiest_cpu),
        cmocka_unit_test(only_allowed_cpus_count),
        cmocka_unit_test(unread_cpus_count_as_idle),
        cmocka_unit_test(no_spare_cpu_places_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
