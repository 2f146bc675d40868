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
    assert_string_equal(f, "tcp and host 127.0.0.1 and port 8000 and (src port 8000 or (ip and "
                           "ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2) > 0) or "
                           "(ip6 and ip6[6] == 6 and ip6[4:2] - ((ip6[52] & 0xf0) >> 2) > 0))");
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);
    /* the longest address, two workers: the filter fits its buffer */
    lg_cap_filter("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 65535, 1, 2, f, sizeof f, &lo,
                  &hi);
    assert_non_null(strstr(f, " and portrange "));
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

/* The client's departures as the filter lets them through, over IPv4 and
 * IPv6 loopback: a short request (one segment), then a long one written at
 * once (several segments: PSH marks the last of a send only), each timed
 * from its first byte on, and the client's pure ACKs left out. */
static void departures_over(int family)
{
    int ls = socket(family, SOCK_STREAM, 0);
    assert_true(ls >= 0);
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sl = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        sl = sizeof *a;
    }
    assert_int_equal(bind(ls, (struct sockaddr *)&ss, sl), 0);
    assert_int_equal(listen(ls, 1), 0);
    assert_int_equal(getsockname(ls, (struct sockaddr *)&ss, &sl), 0);
    int sport = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                        : ((struct sockaddr_in6 *)&ss)->sin6_port);
    char filter[320], err[256];
    int lo, hi, why;
    lg_cap_filter(family == AF_INET ? "127.0.0.1" : "::1", sport, 0, 1, filter, sizeof filter, &lo,
                  &hi);
    lg_cap *cap = lg_cap_open("lo", filter, 4096, sport, &why, err, sizeof err);
    if (!cap) fail_msg("lg_cap_open(%s): %s", filter, err);
    lg_wire *wire = lg_wire_new(64);
    int c = socket(family, SOCK_STREAM, 0);
    assert_int_equal(connect(c, (struct sockaddr *)&ss, sl), 0);
    int s = accept(ls, NULL, NULL);
    assert_true(s >= 0);
    assert_int_equal(lg_cap_drain(cap, wire), 1); /* the SYN-ACK */
    int cport = lg_rx_local_port(c);
    /* a short request */
    int64_t before = rb_wall_ns();
    assert_int_equal(write(c, "GET", 3), 3);
    char buf[4096];
    assert_int_equal(read(s, buf, 3), 3);
    /* a long one, in one write; the server reads it all (bounded) */
    enum { LONG = 300000 };
    char *big = calloc(1, LONG);
    assert_non_null(big);
    size_t put = 0, got = 0;
    for (int i = 0; i < 100000 && got < LONG; i++) {
        if (put < LONG) {
            ssize_t n = send(c, big + put, LONG - put, MSG_DONTWAIT);
            if (n > 0) put += (size_t)n;
        }
        ssize_t m = recv(s, buf, sizeof buf, MSG_DONTWAIT);
        if (m > 0) got += (size_t)m;
        if (m <= 0) nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    assert_int_equal(got, LONG);
    free(big);
    int64_t after = rb_wall_ns();
    lg_cap_drain(cap, wire);
    /* every byte of both has a departure time, in the window, in order */
    int64_t t0 = 0, t1 = 0, tl = 0;
    assert_int_equal(lg_wire_sent_lookup(wire, (uint16_t)cport, 0, &t0), 0);
    assert_int_equal(lg_wire_sent_lookup(wire, (uint16_t)cport, 3, &t1), 0);
    assert_int_equal(lg_wire_sent_lookup(wire, (uint16_t)cport, 3 + LONG - 1, &tl), 0);
    assert_true(t0 >= before - 1000000 && t0 <= after);
    assert_true(t0 <= t1 && t1 <= tl && tl <= after);
    for (uint64_t off = 3; off < 3 + LONG; off += 997) {
        int64_t t;
        if (lg_wire_sent_lookup(wire, (uint16_t)cport, off, &t) != 0)
            fail_msg("family %d: no departure time for request byte %llu", family,
                     (unsigned long long)off);
    }
    assert_true(lg_wire_get_counts(wire).sent_segments >= 2);
    uint64_t packets, drops;
    lg_cap_stats(cap, &packets, &drops);
    assert_int_equal(drops, 0);
    close(c);
    close(s);
    close(ls);
    lg_wire_free(wire);
    lg_cap_close(cap);
}

static void test_departures_v4_and_v6(void **state)
{
    (void)state;
    if (!may_capture()) return;
    departures_over(AF_INET);
    departures_over(AF_INET6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filters),      cmocka_unit_test(test_departures_v4_and_v6),
        cmocka_unit_test(test_target),       cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_live_capture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
