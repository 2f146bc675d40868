/* Unit tests for rb_host's CPU lists and per-CPU lines: the placement of
 * calibrate's simulator and loadgen's --worker-cpus stand on them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb_host.h"

static void cpu_lists_take_singles_and_ranges(void **state)
{
    (void)state;
    cpu_set_t s;
    assert_int_equal(rb_host_parse_cpu_list("1", &s), 0);
    assert_int_equal(CPU_COUNT(&s), 1);
    assert_true(CPU_ISSET(1, &s));
    assert_int_equal(rb_host_parse_cpu_list("0,2-4,7", &s), 0);
    assert_int_equal(CPU_COUNT(&s), 5);
    assert_true(CPU_ISSET(0, &s) && CPU_ISSET(2, &s) && CPU_ISSET(3, &s) && CPU_ISSET(4, &s) &&
                CPU_ISSET(7, &s));
    assert_false(CPU_ISSET(1, &s) || CPU_ISSET(5, &s));
    char buf[64];
    rb_host_format_cpu_list(&s, buf, sizeof buf);
    assert_string_equal(buf, "0,2-4,7");
}

static void cpu_lists_refuse_what_taskset_would(void **state)
{
    (void)state;
    cpu_set_t s;
    const char *bad[] = {"", "a", "1,", ",1", "3-1", "1-", "-1", "1 2", "1;2", "99999", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rb_host_parse_cpu_list(bad[i], &s), -1);
}

static void a_short_buffer_keeps_whole_entries(void **state)
{
    (void)state;
    cpu_set_t s;
    assert_int_equal(rb_host_parse_cpu_list("10,12,14", &s), 0);
    char buf[6];
    rb_host_format_cpu_list(&s, buf, sizeof buf);
    assert_string_equal(buf, "10,12");
    CPU_ZERO(&s);
    rb_host_format_cpu_list(&s, buf, sizeof buf);
    assert_string_equal(buf, "");
}

static void percpu_lines_count_idle_and_iowait_as_not_busy(void **state)
{
    (void)state;
    int c = -1;
    uint64_t busy = 0, total = 0;
    assert_int_equal(rb_host_parse_percpu_line("cpu3 10 1 4 100 5 2 3 7 0 0\n", &c, &busy, &total),
                     0);
    assert_int_equal(c, 3);
    assert_int_equal(total, 132);
    assert_int_equal(busy, 27);
    /* the host's line, short lines and other lines are not per-CPU lines */
    assert_int_equal(rb_host_parse_percpu_line("cpu 10 1 4 100 5 2 3 7\n", &c, &busy, &total), -1);
    assert_int_equal(rb_host_parse_percpu_line("cpu1 10 1 4\n", &c, &busy, &total), -1);
    assert_int_equal(rb_host_parse_percpu_line("intr 5 6 7 8 9 1 2 3\n", &c, &busy, &total), -1);
}

static void this_host_reads_an_idle_share_per_cpu(void **state)
{
    (void)state;
    double idle[CPU_SETSIZE];
    int n = rb_host_cpu_idle(idle, CPU_SETSIZE, 50000000);
    assert_true(n >= 1);
    int seen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (!isnan(idle[c])) {
            assert_true(idle[c] >= 0 && idle[c] <= 1);
            seen++;
        }
    assert_true(seen <= n);
}

/* A request written as the device takes it (a binary s32), held while
 * open and read back; a path that cannot be opened is refused with the step
 * and the errno named. A regular file stands in for the device: its read
 * gives back what was written, as the device gives the least request. */
static void a_cpu_latency_request_is_written_held_and_described(void **state)
{
    (void)state;
    char path[] = "/tmp/rb_cpulat_XXXXXX";
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    rb_cpu_latency c;
    assert_int_equal(rb_cpu_latency_hold(&c, 25, path), 0);
    assert_true(c.fd >= 0);
    assert_int_equal(c.asked_us, 25);
    assert_int_equal(c.effective_us, 25);
    int32_t v = -1;
    assert_int_equal(pread(tmp, &v, sizeof v, 0), (ssize_t)sizeof v);
    assert_int_equal(v, 25);
    char d[192];
    rb_cpu_latency_describe(&c, path, d, sizeof d);
    assert_string_equal(d, "held: 25 us (the host's limit 25 us)");
    rb_cpu_latency_release(&c);
    assert_int_equal(c.fd, -1);
    rb_cpu_latency_release(&c); /* twice: a no-op */
    close(tmp);
    unlink(path);
    /* gone: not held, and the description names the step and the cause */
    assert_int_equal(rb_cpu_latency_hold(&c, 0, path), -1);
    assert_int_equal(c.fd, -1);
    assert_int_equal(c.err, ENOENT);
    rb_cpu_latency_describe(&c, path, d, sizeof d);
    char want[192];
    snprintf(want, sizeof want, "not held: open %s: %s", path, strerror(ENOENT));
    assert_string_equal(d, want);
    /* not asked */
    c = (rb_cpu_latency){.fd = -1, .asked_us = -1, .effective_us = -1};
    rb_cpu_latency_describe(&c, NULL, d, sizeof d);
    assert_string_equal(d, "not asked");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_lists_take_singles_and_ranges),
        cmocka_unit_test(cpu_lists_refuse_what_taskset_would),
        cmocka_unit_test(a_short_buffer_keeps_whole_entries),
        cmocka_unit_test(percpu_lines_count_idle_and_iowait_as_not_busy),
        cmocka_unit_test(this_host_reads_an_idle_share_per_cpu),
        cmocka_unit_test(a_cpu_latency_request_is_written_held_and_described),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
