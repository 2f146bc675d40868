/* Unit tests for rb_units: the units people type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>

#include "rb_units.h"

static void durations_take_units_and_default_to_ms(void **state)
{
    int64_t ns = -1;
    assert_int_equal(rb_parse_duration_ns("500us", &ns), 0);
    assert_int_equal(ns, 500000);
    assert_int_equal(rb_parse_duration_ns("20ms", &ns), 0);
    assert_int_equal(ns, 20000000);
    assert_int_equal(rb_parse_duration_ns("2s", &ns), 0);
    assert_int_equal(ns, 2000000000LL);
    assert_int_equal(rb_parse_duration_ns("7", &ns), 0);
    assert_int_equal(ns, 7000000);
    assert_int_equal(rb_parse_duration_ns("1.5ms", &ns), 0);
    assert_int_equal(ns, 1500000);
    assert_int_equal(rb_parse_duration_ns("250ns", &ns), 0);
    assert_int_equal(ns, 250);
    assert_int_equal(rb_parse_duration_ns("0", &ns), 0);
    assert_int_equal(ns, 0);
}

static void run_lengths_default_to_seconds(void **state)
{
    int64_t ns = -1;
    assert_int_equal(rb_parse_seconds_ns("10", &ns), 0);
    assert_int_equal(ns, 10000000000LL);
    assert_int_equal(rb_parse_seconds_ns("0.25", &ns), 0);
    assert_int_equal(ns, 250000000);
    assert_int_equal(rb_parse_seconds_ns("500ms", &ns), 0);
    assert_int_equal(ns, 500000000);
    assert_int_equal(rb_parse_seconds_ns("1m", &ns), 0);
    assert_int_equal(ns, 60000000000LL);
    ns = 42;
    assert_int_equal(rb_parse_seconds_ns("10 s", &ns), -EINVAL);
    assert_int_equal(rb_parse_seconds_ns("-1", &ns), -ERANGE);
    assert_int_equal(ns, 42);
}

static void bad_durations_are_refused_and_leave_out_alone(void **state)
{
    int64_t ns = 42;
    assert_int_equal(rb_parse_duration_ns("", &ns), -EINVAL);
    assert_int_equal(rb_parse_duration_ns("ms", &ns), -EINVAL);
    assert_int_equal(rb_parse_duration_ns("5 parsecs", &ns), -EINVAL);
    assert_int_equal(rb_parse_duration_ns("5xs", &ns), -EINVAL);
    assert_int_equal(rb_parse_duration_ns("-3ms", &ns), -ERANGE);
    assert_int_equal(rb_parse_duration_ns("nan", &ns), -EINVAL);
    assert_int_equal(rb_parse_duration_ns("1e30s", &ns), -ERANGE);
    assert_int_equal(ns, 42);
}

static void sizes_are_powers_of_1024(void **state)
{
    uint64_t b = 0;
    assert_int_equal(rb_parse_size("1M", &b), 0);
    assert_int_equal(b, 1048576);
    assert_int_equal(rb_parse_size("64k", &b), 0);
    assert_int_equal(b, 65536);
    assert_int_equal(rb_parse_size("2KiB", &b), 0);
    assert_int_equal(b, 2048);
    assert_int_equal(rb_parse_size("17", &b), 0);
    assert_int_equal(b, 17);
    assert_int_equal(rb_parse_size("-1", &b), -EINVAL);
    assert_int_equal(rb_parse_size("3T", &b), -EINVAL);
    assert_int_equal(rb_parse_size("99999999999999G", &b), -ERANGE);
}

static void numbers_check_their_range(void **state)
{
    int64_t i = 0;
    double d = 0;
    assert_int_equal(rb_parse_i64("12", 1, 100, &i), 0);
    assert_int_equal(i, 12);
    assert_int_equal(rb_parse_i64("0", 1, 100, &i), -ERANGE);
    assert_int_equal(rb_parse_i64("12x", 1, 100, &i), -EINVAL);
    assert_int_equal(rb_parse_double("0.25", 0, 1, &d), 0);
    assert_true(d == 0.25);
    assert_int_equal(rb_parse_double("inf", 0, 1, &d), -ERANGE);
    assert_int_equal(rb_parse_double("inf", 0, INFINITY, &d), 0);
    assert_true(isinf(d));
    assert_int_equal(rb_parse_double("nan", 0, INFINITY, &d), -EINVAL);
    assert_int_equal(rb_parse_double("-2", 0, 1, &d), -ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations_take_units_and_default_to_ms),
        cmocka_unit_test(run_lengths_default_to_seconds),
        cmocka_unit_test(bad_durations_are_refused_and_leave_out_alone),
        cmocka_unit_test(sizes_are_powers_of_1024),
        cmocka_unit_test(numbers_check_their_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
