/* Unit tests of lg_capture, the wire clock's libpcap shell: the per-worker
 * filters (disjoint port ranges below the ephemeral range), the target's
 * route (lo for loopback), a filter that does not compile and an interface
 * that does not exist (refused with their reasons), and a live capture on
 * lo: three segments a server sends apart, read together by the client in
 * one recv, keep three capture times, in order, none after the read. The
 * live part needs CAP_NET_RAW: without it the test says so and passes,
 * except under CI=true (CI runs as root), where that is a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "lg_capture.h"
#include "lg_rxclock.h"
#include "rb_clock.h"

static void test_filters(void **state)
{
    (void)state;
    char f[320];
    int lo, hi, lo1, hi1;
    lg_cap_filter("127.0.0.1", 8000, 0, 1, f, sizeof f, &lo, &hi);
    assert_string_equal(f, "tcp and host 127.0.0.1 and port 8000 and (src port 8000 "
                           "or tcp[tcpflags] & tcp-push != 0)");
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
    lg_cap_filter("10.0.0.2", 80, 0, 1, f, sizeof f, &lo, &hi);
    assert_non_null(strstr(f, "tcp and host 10.0.0.2 and port 80"));
    /* Two workers: disjoint ranges, adjacent, below the ephemeral range. */
    lg_cap_filter("127.0.0.1", 8000, 0, 2, f, sizeof f, &lo, &hi);
    lg_cap_filter("127.0.0.1", 8000, 1, 2, f, sizeof f, &lo1, &hi1);
    assert_true(lo >= 1024 && lo < hi);
    assert_int_equal(hi + 1, lo1);
    assert_true(lo1 < hi1);
    int eph = 32768;
    FILE *fp = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (fp) {
        assert_int_equal(fscanf(fp, "%d", &eph), 1);
        fclose(fp);
    }
    assert_true(hi1 < eph);
    char want[64];
    snprintf(want, sizeof want, " and portrange %d-%d", lo1, hi1);
    assert_non_null(strstr(f, want));
}

static void test_target(void **state)
{
    (void)state;
    char addr[64], ifn[64], err[256];
    int port;
    assert_int_equal(lg_cap_target("http://127.0.0.1:8123/v1/completions", addr, sizeof addr, &port,
                                   ifn, sizeof ifn, err, sizeof err),
                     0);
    assert_string_equal(addr, "127.0.0.1");
    assert_int_equal(port, 8123);
    assert_string_equal(ifn, "lo");
    assert_int_equal(lg_cap_target("http://127.0.0.1/", addr, sizeof addr, &port, ifn, sizeof ifn,
                                   err, sizeof err),
                     0);
    assert_int_equal(port, 80);
    assert_int_equal(
        lg_cap_target("not a url", addr, sizeof addr, &port, ifn, sizeof ifn, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a url"));
}

/* Whether this process may capture; fails the test under CI when not. */
static int may_capture(void)
{
    int why;
    char err[256];
    lg_cap *c = lg_cap_open("lo", "tcp", 64, 1, &why, err, sizeof err);
    if (c) {
        lg_cap_close(c);
        return 1;
    }
    const char *ci = getenv("CI");
    if (ci && strcmp(ci, "true") == 0) fail_msg("cannot capture under CI: %s", err);
    assert_int_equal(why, -EPERM);
    fprintf(stderr, "test_lg_capture: no CAP_NET_RAW: the live checks are not run\n");
    return 0;
}

static void test_refusals(void **state)
{
    (void)state;
    if (!may_capture()) return;
    int why = 0;
    char err[256] = "";
    assert_null(lg_cap_open("lo", "tcp and and", 64, 1, &why, err, sizeof err));
    assert_int_equal(why, -EINVAL);
    assert_non_null(strstr(err, "tcp and and"));
    why = 0;
    assert_null(lg_cap_open("nosuchif9", "tcp", 64, 1, &why, err, sizeof err));
    assert_int_equal(why, -ENODEV);
    assert_non_null(strstr(err, "nosuchif9"));
}

static void test_live_capture(void **state)
{
    (void)state;
    if (!may_capture()) return;
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    assert_int_equal(bind(ls, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(ls, 1), 0);
    assert_int_equal(getsockname(ls, (struct sockaddr *)&sa, &sl), 0);
    int sport = ntohs(sa.sin_port);
    char filter[320];
    int lo, hi, why;
    char err[256];
    lg_cap_filter("127.0.0.1", sport, 0, 1, filter, sizeof filter, &lo, &hi);
    lg_cap *cap = lg_cap_open("lo", filter, 1024, sport, &why, err, sizeof err);
    assert_non_null(cap);
    lg_wire *wire = lg_wire_new(64);
    /* The handle's first packet is this connection's SYN-ACK, and it is
     * seen: a filter that only the kernel can run (`inbound`) lost it, as
     * libpcap runs a new filter in user space over the first frame. */
    int c = socket(AF_INET, SOCK_STREAM, 0);
    assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof sa), 0);
    int s = accept(ls, NULL, NULL);
    assert_true(s >= 0);
    /* connect() returned after the client's TCP took the SYN-ACK, and the
     * packet tap runs before TCP: it is in the ring, and opens the map. */
    assert_int_equal(lg_cap_drain(cap, wire), 1);
    assert_int_equal(lg_wire_get_counts(wire).conns, 1);
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* The client's request (a PSH segment), then three replies 3 ms apart. */
    assert_int_equal(write(c, "GET", 3), 3);
    char buf[64];
    assert_int_equal(read(s, buf, 3), 3);
    int64_t before = rb_wall_ns();
    for (int i = 0; i < 3; i++) {
        assert_int_equal(write(s, "data: x\n\n", 9), 9);
        nanosleep(&(struct timespec){0, 3000000}, NULL);
    }
    /* All three wait in the socket; one read takes them (bounded retries
     * until the 27 bytes are in). */
    size_t got = 0;
    for (int i = 0; i < 1000 && got < 27; i++) {
        ssize_t n = recv(c, buf + got, sizeof buf - got, MSG_DONTWAIT);
        if (n > 0) got += (size_t)n;
        if (got < 27) nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_int_equal(got, 27);
    int64_t after = rb_wall_ns();
    int taken = lg_cap_drain(cap, wire);
    assert_true(taken >= 3); /* the three data segments at least */
    int cport = lg_rx_local_port(c);
    int64_t t[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(lg_wire_lookup(wire, (uint16_t)cport, (uint64_t)(9 * i + 8), &t[i]), 0);
        assert_true(t[i] >= before - 1000000 && t[i] <= after);
    }
    /* Each its own time, in the order sent, about 3 ms apart (at least 1). */
    assert_true(t[1] - t[0] >= 1000000);
    assert_true(t[2] - t[1] >= 1000000);
    uint64_t packets, drops;
    lg_cap_stats(cap, &packets, &drops);
    assert_true(packets >= (uint64_t)taken + 1); /* and the SYN-ACK */
    assert_int_equal(drops, 0);
    close(c);
    close(s);
    close(ls);
    lg_wire_free(wire);
    lg_cap_close(cap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_target),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_live_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
