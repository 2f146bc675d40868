/* Unit tests of lg_rxclock: the realtime-to-monotonic map (offset, slew,
 * steps, reading width), the receive time given to each delivered event,
 * which tokens of a read are exact, and the stamped reads on a real loopback
 * connection (the process's recv() hands each read's stamp to the hook; the
 * stamp lies between the send and the read; peeks pass through). */
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
    lg_rx_read none = {.port = -1, .kernel_ns = 50};
    assert_int_equal(lg_rx_event_time(&none, 4000, 0, 900, &kind), 900);
    assert_int_equal(kind, LG_RX_DELIVERY);
    assert_int_equal(lg_rx_event_time(&none, 4000, 100, 900, &kind), 100);
    assert_int_equal(kind, LG_RX_PICKUP);
    lg_rx_read rd = {.port = 4000, .kernel_ns = 50};
    assert_int_equal(lg_rx_event_time(&rd, 4000, 100, 900, &kind), 50);
    assert_int_equal(kind, LG_RX_KERNEL);
    /* Another connection's read does not time this request's bytes. */
    assert_int_equal(lg_rx_event_time(&rd, 4001, 100, 900, &kind), 100);
    assert_int_equal(kind, LG_RX_PICKUP);
    /* A read without a stamp: the pickup. */
    rd.kernel_ns = 0;
    assert_int_equal(lg_rx_event_time(&rd, 4000, 100, 900, &kind), 100);
    assert_int_equal(kind, LG_RX_PICKUP);
    /* Never received after it was delivered. */
    rd.kernel_ns = 1000;
    assert_int_equal(lg_rx_event_time(&rd, 4000, 100, 900, &kind), 900);
    assert_int_equal(kind, LG_RX_KERNEL);
}

static void test_read_exact(void **state)
{
    (void)state;
    int64_t win;
    lg_rx_read rd = {.port = 1, .kernel_ns = 10000000, .lower_ns = 0, .segments = -1, .tokens = 1};
    /* One token: exact, whatever else is unknown. */
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 1);
    assert_int_equal(win, 0);
    /* Several tokens from one segment: they arrived together. */
    rd.tokens = 16;
    rd.segments = 1;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 16);
    assert_int_equal(win, 0);
    /* Several segments, no lower bound: only the newest is exact, and the
     * window is unbounded (reported as the kernel time itself). */
    rd.segments = 3;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 1);
    assert_int_equal(win, 10000000);
    /* A window at the tolerance is exact; one more nanosecond is not. */
    rd.lower_ns = rd.kernel_ns - LG_RX_EXACT_TOL_NS;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 16);
    assert_int_equal(win, LG_RX_EXACT_TOL_NS);
    rd.lower_ns--;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 1);
    assert_int_equal(win, LG_RX_EXACT_TOL_NS + 1);
    /* Unknown segment count behaves as several. */
    rd.segments = -1;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 1);
    /* No stamp, or no token: nothing is exact. */
    rd.kernel_ns = 0;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 0);
    rd.kernel_ns = 5;
    rd.tokens = 0;
    assert_int_equal(lg_rx_read_exact(&rd, LG_RX_EXACT_TOL_NS, &win), 0);
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

/* What the process's recv() hands its hook. */
static int hook_calls, hook_fd;
static ssize_t hook_n;
static int64_t hook_real;
static const void *hook_buf;
static void hook(void *ctx, int fd, const void *buf, ssize_t n, size_t len, int64_t real_ns)
{
    (void)len;
    *(int *)ctx += 1;
    hook_calls++;
    hook_fd = fd;
    hook_n = n;
    hook_buf = buf;
    hook_real = real_ns;
}

static void test_stamped_reads(void **state)
{
    (void)state;
    int c, s;
    pair(&c, &s);
    assert_true(lg_rx_local_port(c) > 0);
    assert_int_equal(lg_rx_local_port(-1), -1);
    int64_t real;
    char buf[16];
    /* The kernel turns receive stamping on for the whole host lazily (a
     * deferred static key) when the first socket asks: wait for it, bounded,
     * by sending single bytes until one arrives stamped. */
    int keeper = lg_rx_keep_on();
    assert_true(keeper >= 0);
    int stamped = 0;
    for (int i = 0; i < 5000 && !stamped; i++) {
        assert_int_equal(write(s, "w", 1), 1);
        assert_int_equal(lg_rx_recv(c, buf, 1, 0, &real), 1);
        stamped = real != 0;
        if (!stamped) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_true(stamped);
    int64_t segs0, bytes0;
    assert_int_equal(lg_rx_tcp_counts(c, &segs0, &bytes0), 0);
    assert_true(segs0 >= 1);
    assert_true(bytes0 >= segs0); /* the single bytes sent so far, all read */
    /* A stamp lies between the send and the read. */
    int64_t before = rb_wall_ns();
    assert_int_equal(write(s, "data: x\n\n", 9), 9);
    assert_int_equal(recv(c, buf, 1, MSG_PEEK), 1); /* a peek: passes through, no hook */
    int64_t after = rb_wall_ns();
    int calls = 0;
    lg_rx_set_hook(hook, &calls);
    assert_int_equal(recv(c, buf, 1, MSG_PEEK), 1);
    assert_int_equal(calls, 0);
    assert_int_equal(recv(c, buf, sizeof buf, 0), 9); /* through the process's recv() */
    assert_int_equal(calls, 1);
    assert_int_equal(hook_fd, c);
    assert_int_equal(hook_n, 9);
    assert_ptr_equal(hook_buf, buf); /* the bytes read (the wire clock finds events in them) */
    assert_true(hook_real >= before - 1000000 && hook_real <= after);
    assert_memory_equal(buf, "data: x\n\n", 9);
    int64_t segs1, bytes1;
    assert_int_equal(lg_rx_tcp_counts(c, &segs1, &bytes1), 0);
    assert_int_equal(segs1, segs0 + 1);
    assert_int_equal(bytes1, bytes0 + 9);
    /* End of stream: no hook call. */
    close(s);
    assert_int_equal(recv(c, buf, sizeof buf, 0), 0);
    assert_int_equal(calls, 1);
    lg_rx_set_hook(NULL, NULL);
    close(c);
    close(keeper);
    assert_int_equal(lg_rx_tcp_counts(c, &segs1, &bytes1), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_offset),    cmocka_unit_test(test_map_step),
        cmocka_unit_test(test_event_time),    cmocka_unit_test(test_read_exact),
        cmocka_unit_test(test_stamped_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
