/* Unit tests of lg_rxclock: the realtime-to-monotonic map (offset, slew,
 * steps, reading width), the receive time given to each delivered event,
 * and the two socket calls on a real loopback connection (the stamp lies
 * between the send and the peek, and the peek consumes nothing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "lg_rxclock.h"
#include "rb_clock.h"

static void test_map_offset(void **state)
{
    (void)state;
    lg_clock_map m = {0};
    assert_int_equal(lg_clock_map_to_mono(&m, 123), 0); /* no sample yet */
    /* realtime = monotonic + 1e12; the reading took 40 ns. */
    lg_clock_map_sample(&m, 1000, 1000000001020LL, 1040);
    assert_int_equal(m.offset_ns, 1000000000000LL);
    assert_int_equal(m.width_ns, 40);
    assert_int_equal(lg_clock_map_to_mono(&m, 1000000005000LL), 5000);
    /* A slew of 300 ns is followed, and counted in the spread. */
    lg_clock_map_sample(&m, 2000, 1000000002320LL, 2040);
    assert_int_equal(m.offset_ns, 1000000000300LL);
    assert_int_equal(m.spread_ns, 300);
    assert_int_equal(m.steps, 0);
    /* A wider reading does not widen the best width; a narrower one does. */
    lg_clock_map_sample(&m, 3000, 1000000003310LL, 3020);
    assert_int_equal(m.width_ns, 20);
    assert_int_equal(m.samples, 3);
    /* A reading that went backwards is ignored. */
    lg_clock_map_sample(&m, 5000, 7, 4000);
    assert_int_equal(m.samples, 3);
}

static void test_map_step(void **state)
{
    (void)state;
    lg_clock_map m = {0};
    lg_clock_map_sample(&m, 0, 500, 0);
    lg_clock_map_sample(&m, 10, 510 + 200, 10); /* +200 ns: slew */
    assert_int_equal(m.spread_ns, 200);
    /* Exactly the step threshold is still a slew; one more is a step. */
    lg_clock_map_sample(&m, 20, 20 + 700 + LG_CLOCK_STEP_NS, 20);
    assert_int_equal(m.steps, 0);
    lg_clock_map_sample(&m, 30, 30 + 1700 + 2 * LG_CLOCK_STEP_NS + 1, 30);
    assert_int_equal(m.steps, 1);
    /* After the step the spread restarts from the new offset, and the
     * largest spread seen before is kept. */
    assert_int_equal(m.lo_ns, m.hi_ns);
    assert_int_equal(m.spread_ns, 200 + LG_CLOCK_STEP_NS);
    assert_int_equal(lg_clock_map_to_mono(&m, m.offset_ns + 99), 99);
}

static void test_event_time(void **state)
{
    (void)state;
    lg_rx_kind kind;
    lg_pickup none = {.conn = -1, .pickup_ns = 100, .kernel_ns = 50};
    assert_int_equal(lg_pickup_event_time(&none, 4000, 900, &kind), 900);
    assert_int_equal(kind, LG_RX_DELIVERY);
    lg_pickup p = {.conn = 4000, .pickup_ns = 100, .kernel_ns = 50};
    assert_int_equal(lg_pickup_event_time(&p, 4000, 900, &kind), 50);
    assert_int_equal(kind, LG_RX_KERNEL);
    /* Another connection's bytes are not timed by this pickup. */
    assert_int_equal(lg_pickup_event_time(&p, 4001, 900, &kind), 900);
    assert_int_equal(kind, LG_RX_DELIVERY);
    /* No stamp: the pickup time. */
    p.kernel_ns = 0;
    assert_int_equal(lg_pickup_event_time(&p, 4000, 900, &kind), 100);
    assert_int_equal(kind, LG_RX_PICKUP);
    /* Never received after it was delivered. */
    p.kernel_ns = 1000;
    assert_int_equal(lg_pickup_event_time(&p, 4000, 900, &kind), 900);
    assert_int_equal(kind, LG_RX_KERNEL);
}

static void pair(int *client, int *server)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(ls, 1), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
    *client = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(lg_rx_enable(*client), 0);
    assert_int_equal(connect(*client, (struct sockaddr *)&a, sizeof a), 0);
    *server = accept(ls, NULL, NULL);
    assert_true(*server >= 0);
    close(ls);
}

static void test_peek_on_loopback(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    int64_t real, queued;
    /* Nothing waiting: no stamp, no error. */
    assert_int_equal(lg_rx_peek(c, &real, &queued), 0);
    /* The kernel turns receive stamping on for the whole host lazily (a
     * deferred static key) when the first socket asks: wait for it, bounded,
     * by sending single bytes until one arrives stamped. */
    char b;
    int stamped = 0;
    for (int i = 0; i < 5000 && !stamped; i++) {
        assert_int_equal(write(s, "w", 1), 1);
        assert_int_equal(recv(c, &b, 1, MSG_PEEK), 1);
        stamped = lg_rx_peek(c, &real, &queued) == 1;
        assert_int_equal(recv(c, &b, 1, 0), 1);
        if (!stamped) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_true(stamped);
    int64_t before = rb_wall_ns();
    assert_int_equal(write(s, "data: x\n\n", 9), 9);
    /* Wait until the bytes are there (a blocking 1-byte peek). */
    assert_int_equal(recv(c, &b, 1, MSG_PEEK), 1);
    int64_t after = rb_wall_ns();
    assert_int_equal(lg_rx_peek(c, &real, &queued), 1);
    assert_true(real >= before - 1000000 && real <= after);
    assert_int_equal(queued, 9);
    /* The peek consumed nothing. */
    char buf[16];
    assert_int_equal(read(c, buf, sizeof buf), 9);
    assert_memory_equal(buf, "data: x\n\n", 9);
    /* End of stream: nothing to stamp. */
    close(s);
    assert_int_equal(lg_rx_peek(c, &real, &queued), 0);
    close(c);
    /* A closed descriptor is an error, not a stamp. */
    assert_true(lg_rx_peek(c, &real, &queued) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_offset),
        cmocka_unit_test(test_map_step),
        cmocka_unit_test(test_event_time),
        cmocka_unit_test(test_peek_on_loopback),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
