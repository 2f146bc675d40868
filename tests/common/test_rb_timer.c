/* Unit tests for rb_timer: deadlines are kept in order and never early, and
 * the kernel is asked for exactly the deadline, never a later one (the upper
 * bound that holds on any machine: what the timerfd was armed for, read back
 * from the kernel). How late a wake-up comes after that is the host's, and
 * is measured by benchmarks, not here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/timerfd.h>

#include "rb_clock.h"
#include "rb_timer.h"

typedef struct {
    rb_timer t;
    int fired;
    int64_t deadlines[5];
    int64_t fired_at[5];
} chain;

static void chain_fired(rb_timer *t)
{
    chain *c = t->data;
    c->fired_at[c->fired] = rb_now_ns();
    c->fired++;
    if (c->fired < 5) rb_timer_start_at(t, c->deadlines[c->fired], chain_fired);
}

static void deadlines_fire_in_order_and_not_early(void **state)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    chain c = {0};
    assert_int_equal(rb_timer_init(&loop, &c.t), 0);
    c.t.data = &c;
    int64_t now = rb_now_ns();
    for (int i = 0; i < 5; i++)
        c.deadlines[i] = now + (i + 1) * 300000; /* 300 us apart */
    assert_int_equal(rb_timer_start_at(&c.t, c.deadlines[0], chain_fired), 0);
    uv_run(&loop, UV_RUN_DEFAULT); /* returns once the chain stops re-arming */
    assert_int_equal(c.fired, 5);
    for (int i = 0; i < 5; i++) {
        assert_true(c.fired_at[i] >= c.deadlines[i]);
        if (i) assert_true(c.fired_at[i] >= c.fired_at[i - 1]);
    }
    rb_timer_close(&c.t, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

/* Armed for the deadline itself: the kernel's remaining time, read right
 * after arming, lies between what was left before the call and after it. */
static void armed_for_its_deadline_not_later(void **state)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    chain c = {0};
    assert_int_equal(rb_timer_init(&loop, &c.t), 0);
    c.t.data = &c;
    for (int i = 0; i < 20; i++) {
        int64_t before = rb_now_ns();
        int64_t deadline = before + 50000000 + i * 1000; /* 50 ms ahead */
        assert_int_equal(rb_timer_start_at(&c.t, deadline, chain_fired), 0);
        struct itimerspec cur;
        assert_int_equal(timerfd_gettime(c.t.fd, &cur), 0);
        int64_t after = rb_now_ns();
        int64_t left = (int64_t)cur.it_value.tv_sec * 1000000000LL + cur.it_value.tv_nsec;
        assert_true(left <= deadline - before); /* not later than asked */
        assert_true(left >= deadline - after);  /* nor earlier */
        assert_int_equal(c.t.deadline_ns, deadline);
    }
    assert_int_equal(rb_timer_stop(&c.t), 0);
    rb_timer_close(&c.t, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(c.fired, 0);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void stopped_timer_does_not_fire(void **state)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    chain c = {0};
    assert_int_equal(rb_timer_init(&loop, &c.t), 0);
    c.t.data = &c;
    assert_int_equal(rb_timer_start_at(&c.t, rb_now_ns() + 1000000, chain_fired), 0);
    assert_int_equal(rb_timer_stop(&c.t), 0);
    uv_run(&loop, UV_RUN_DEFAULT); /* nothing keeps the loop alive */
    assert_int_equal(c.fired, 0);
    rb_timer_close(&c.t, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void past_deadline_fires_at_once(void **state)
{
    uv_loop_t loop;
    assert_int_equal(uv_loop_init(&loop), 0);
    chain c = {0};
    c.fired = 4; /* one shot */
    assert_int_equal(rb_timer_init(&loop, &c.t), 0);
    c.t.data = &c;
    assert_int_equal(rb_timer_start_at(&c.t, rb_now_ns() - 1000000000LL, chain_fired), 0);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(c.fired, 5);
    rb_timer_close(&c.t, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deadlines_fire_in_order_and_not_early),
        cmocka_unit_test(armed_for_its_deadline_not_later),
        cmocka_unit_test(stopped_timer_does_not_fire),
        cmocka_unit_test(past_deadline_fires_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
