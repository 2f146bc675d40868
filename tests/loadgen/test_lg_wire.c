/* Unit tests of lg_wire: segments mapped to stream offsets from the SYN-ACK's
 * sequence number, lookups at range edges, the first capture of a byte
 * winning over retransmissions and out-of-order fill, keep-alive offsets
 * continuing, the 32-bit wraparound (at the ISN and past 4 GiB of stream),
 * release and close freeing state, the per-connection bound, and the header
 * parser on synthetic Ethernet, cooked and raw IPv4/IPv6 frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lg_wire.h"

static int64_t at(const lg_wire *w, uint16_t port, uint64_t off)
{
    int64_t t = -7;
    if (lg_wire_lookup(w, port, off, &t) != 0) return -1;
    return t;
}

static void test_offsets(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(64);
    assert_non_null(w);
    /* No SYN-ACK seen: the port is unknown. */
    assert_int_equal(lg_wire_data(w, 5000, 1, 10, 100), 1);
    assert_int_equal(lg_wire_get_counts(w).unknown, 1);
    assert_int_equal(lg_wire_syn(w, 5000, 1000), 0);
    /* Offset 0 is the byte after the SYN: seq 1001. */
    assert_int_equal(lg_wire_data(w, 5000, 1001, 100, 10), 0);
    assert_int_equal(lg_wire_data(w, 5000, 1101, 50, 20), 0);
    assert_int_equal(at(w, 5000, 0), 10);
    assert_int_equal(at(w, 5000, 99), 10);
    assert_int_equal(at(w, 5000, 100), 20);
    assert_int_equal(at(w, 5000, 149), 20);
    assert_int_equal(at(w, 5000, 150), -1); /* not yet captured */
    assert_int_equal(at(w, 5001, 0), -1);   /* another port */
    /* An empty segment (a pure ACK) adds nothing. */
    assert_int_equal(lg_wire_data(w, 5000, 1151, 0, 30), 0);
    assert_int_equal(lg_wire_ranges(w, 5000), 2);
    /* Keep-alive: the next response's bytes continue the offsets. */
    assert_int_equal(lg_wire_data(w, 5000, 1151, 30, 40), 0);
    assert_int_equal(at(w, 5000, 150), 40);
    assert_int_equal(at(w, 5000, 179), 40);
    assert_int_equal(lg_wire_get_counts(w).segments, 3);
    lg_wire_free(w);
}

static void test_first_capture_wins(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(64);
    lg_wire_syn(w, 7, 0);
    /* Out of order: [100,200) before [0,100). */
    lg_wire_data(w, 7, 101, 100, 50);
    assert_int_equal(at(w, 7, 50), -1);
    lg_wire_data(w, 7, 1, 100, 60);
    assert_int_equal(at(w, 7, 0), 60);
    assert_int_equal(at(w, 7, 99), 60);
    assert_int_equal(at(w, 7, 100), 50);
    /* A retransmission of [50,250) later: only [200,250) is new. */
    lg_wire_data(w, 7, 51, 200, 90);
    assert_int_equal(at(w, 7, 50), 60);
    assert_int_equal(at(w, 7, 150), 50);
    assert_int_equal(at(w, 7, 199), 50);
    assert_int_equal(at(w, 7, 200), 90);
    assert_int_equal(at(w, 7, 249), 90);
    assert_int_equal(lg_wire_get_counts(w).dup_bytes, 150);
    /* A gap filled by a segment that spans it and its neighbours. */
    lg_wire_data(w, 7, 301, 50, 100);  /* [300,350) */
    lg_wire_data(w, 7, 201, 200, 110); /* [200,400): new are [250,300) and [350,400) */
    assert_int_equal(at(w, 7, 260), 110);
    assert_int_equal(at(w, 7, 320), 100);
    assert_int_equal(at(w, 7, 360), 110);
    assert_int_equal(at(w, 7, 400), -1);
    /* The ranges stay sorted and disjoint: every byte has one time. */
    assert_int_equal(lg_wire_ranges(w, 7), 6);
    lg_wire_free(w);
}

static void test_wrap(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(8);
    /* The ISN just below 2^32: offsets run across the wrap. */
    lg_wire_syn(w, 9, 0xfffffff0u);
    lg_wire_data(w, 9, 0xfffffff1u, 10, 1); /* [0,10) */
    lg_wire_data(w, 9, 0xfffffffbu, 20, 2); /* [10,30): seq wraps inside */
    lg_wire_data(w, 9, 0x0000000fu, 5, 3);  /* [30,35) */
    assert_int_equal(at(w, 9, 9), 1);
    assert_int_equal(at(w, 9, 10), 2);
    assert_int_equal(at(w, 9, 29), 2);
    assert_int_equal(at(w, 9, 30), 3);
    /* A retransmission from before the wrap arriving after it is old data. */
    lg_wire_data(w, 9, 0xfffffff1u, 10, 4);
    assert_int_equal(at(w, 9, 0), 1);
    /* Past 4 GiB of stream: 1 MB segments, released as they are read. */
    lg_wire_syn(w, 11, 12345);
    uint64_t off = 0;
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(lg_wire_data(w, 11, (uint32_t)(12346 + off), 1000000, i + 1), 0);
        off += 1000000;
        lg_wire_release(w, 11, off - 1);
        assert_true(lg_wire_ranges(w, 11) <= 1);
    }
    assert_true(off > 4294967296ULL);
    assert_int_equal(at(w, 11, off - 1), 5000);
    assert_int_equal(at(w, 11, off - 2), -1); /* released */
    assert_int_equal(lg_wire_get_counts(w).evicted, 0);
    lg_wire_free(w);
}

static void test_release_close_bound(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(4);
    lg_wire_syn(w, 3, 99);
    for (int i = 0; i < 4; i++)
        lg_wire_data(w, 3, 100 + (uint32_t)i * 10, 10, i + 1);
    assert_int_equal(lg_wire_ranges(w, 3), 4);
    /* Released up to 25: [0,10) and [10,20) go; 20..24 cannot be looked up. */
    lg_wire_release(w, 3, 25);
    assert_int_equal(lg_wire_ranges(w, 3), 2);
    assert_int_equal(at(w, 3, 19), -1);
    assert_int_equal(at(w, 3, 24), -1);
    assert_int_equal(at(w, 3, 25), 3);
    /* A retransmission of released bytes is not taken again. */
    lg_wire_data(w, 3, 100, 30, 9);
    assert_int_equal(lg_wire_ranges(w, 3), 2);
    assert_int_equal(at(w, 3, 25), 3);
    /* The bound: a fifth range drops the oldest, counted. */
    lg_wire_data(w, 3, 140, 10, 5);
    lg_wire_data(w, 3, 150, 10, 6);
    lg_wire_data(w, 3, 160, 10, 7);
    assert_int_equal(lg_wire_ranges(w, 3), 4);
    assert_int_equal(lg_wire_get_counts(w).evicted, 1);
    assert_int_equal(at(w, 3, 25), -1);
    assert_int_equal(at(w, 3, 30), 4);
    assert_int_equal(at(w, 3, 69), 7);
    /* A release below the last one changes nothing. */
    lg_wire_release(w, 3, 0);
    assert_int_equal(at(w, 3, 30), 4);
    /* A new SYN-ACK on the port starts over; close frees it. */
    lg_wire_syn(w, 3, 5000);
    assert_int_equal(lg_wire_ranges(w, 3), 0);
    assert_int_equal(at(w, 3, 30), -1);
    lg_wire_data(w, 3, 5001, 10, 8);
    assert_int_equal(at(w, 3, 0), 8);
    assert_int_equal(lg_wire_get_counts(w).conns, 1);
    lg_wire_close(w, 3);
    assert_int_equal(lg_wire_get_counts(w).conns, 0);
    assert_int_equal(at(w, 3, 0), -1);
    assert_int_equal(lg_wire_data(w, 3, 5011, 10, 9), 1);
    lg_wire_free(w);
}

static void test_full_out_of_order(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(2);
    lg_wire_syn(w, 4, 0);
    lg_wire_data(w, 4, 21, 10, 1); /* [20,30) */
    lg_wire_data(w, 4, 41, 10, 2); /* [40,50) */
    /* Full, and [0,10) would be the lowest: it is the one dropped. */
    lg_wire_data(w, 4, 1, 10, 3);
    assert_int_equal(at(w, 4, 5), -1);
    assert_int_equal(at(w, 4, 25), 1);
    assert_int_equal(at(w, 4, 45), 2);
    assert_int_equal(lg_wire_get_counts(w).evicted, 1);
    lg_wire_free(w);
}

/* A TCP segment in IPv4 (or IPv6) behind `link` bytes of link header. */
static size_t frame(uint8_t *f, int v6, size_t link, uint16_t sport, uint16_t dport, uint32_t seq,
                    uint8_t flags, uint16_t payload)
{
    memset(f, 0, 128);
    uint8_t *ip = f + link;
    size_t ipl = v6 ? 40 : 20;
    uint8_t *t = ip + ipl;
    if (v6) {
        ip[0] = 0x60;
        ip[4] = (uint8_t)((20 + 12 + payload) >> 8);
        ip[5] = (uint8_t)(20 + 12 + payload);
        ip[6] = 6;
    } else {
        ip[0] = 0x45;
        uint16_t total = (uint16_t)(20 + 32 + payload);
        ip[2] = (uint8_t)(total >> 8);
        ip[3] = (uint8_t)total;
        ip[6] = 0x40; /* don't fragment */
        ip[9] = 6;
    }
    t[0] = (uint8_t)(sport >> 8);
    t[1] = (uint8_t)sport;
    t[2] = (uint8_t)(dport >> 8);
    t[3] = (uint8_t)dport;
    t[4] = (uint8_t)(seq >> 24);
    t[5] = (uint8_t)(seq >> 16);
    t[6] = (uint8_t)(seq >> 8);
    t[7] = (uint8_t)seq;
    t[8] = 1, t[9] = 2, t[10] = 3, t[11] = 4; /* the acknowledgement number */
    t[12] = 8 << 4;                           /* 32 bytes: timestamps option */
    t[13] = flags;
    return link + ipl + 32; /* the headers only: the snapshot */
}

static void test_parse(void **state)
{
    (void)state;
    uint8_t f[128];
    lg_wire_seg s;
    size_t n = frame(f, 0, 14, 8000, 40001, 0xdeadbeef, LG_TCP_ACK, 123);
    f[12] = 0x08; /* IPv4 ethertype */
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_EN10MB, f, n, &s), 0);
    assert_int_equal(s.sport, 8000);
    assert_int_equal(s.dport, 40001);
    assert_true(s.seq == 0xdeadbeefu);
    assert_true(s.ack == 0x01020304u);
    assert_int_equal(s.len, 123);
    assert_int_equal(s.flags, LG_TCP_ACK);
    /* The TCP header cut short by the snapshot: refused. */
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_EN10MB, f, 14 + 20 + 19, &s), -1);
    /* Not TCP: refused. */
    f[14 + 9] = 17;
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_EN10MB, f, n, &s), -1);
    /* A fragment: refused. */
    n = frame(f, 0, 14, 8000, 40001, 1, LG_TCP_ACK, 10);
    f[12] = 0x08;
    f[14 + 6] = 0x20;
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_EN10MB, f, n, &s), -1);
    /* IPv6 behind a Linux cooked header. */
    n = frame(f, 1, 16, 8000, 40002, 77, LG_TCP_SYN | LG_TCP_ACK, 0);
    f[14] = 0x86;
    f[15] = 0xdd;
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_LINUX_SLL, f, n, &s), 0);
    assert_int_equal(s.dport, 40002);
    assert_int_equal(s.len, 0);
    assert_int_equal(s.flags, LG_TCP_SYN | LG_TCP_ACK);
    /* Raw IPv4. */
    n = frame(f, 0, 0, 1, 2, 3, LG_TCP_ACK, 1);
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_RAW, f, n, &s), 0);
    assert_int_equal(s.len, 1);
    /* An Ethernet type that says IPv6 over an IPv4 header: refused. */
    n = frame(f, 0, 14, 1, 2, 3, LG_TCP_ACK, 1);
    f[12] = 0x86;
    f[13] = 0xdd;
    assert_int_equal(lg_wire_parse(LG_WIRE_DLT_EN10MB, f, n, &s), -1);
    assert_int_equal(lg_wire_parse(999, f, n, &s), -1);
}

static void test_feed(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(16);
    lg_wire_seg syn = {.sport = 8000, .dport = 40000, .seq = 500, .flags = LG_TCP_SYN};
    /* A SYN without ACK is the client's (or another's): ignored. */
    assert_int_equal(lg_wire_feed(w, &syn, 8000, 1), 2);
    syn.flags = LG_TCP_SYN | LG_TCP_ACK;
    assert_int_equal(lg_wire_feed(w, &syn, 9999, 1), 2); /* another server */
    assert_int_equal(lg_wire_feed(w, &syn, 8000, 1), 0);
    lg_wire_seg d = {.sport = 8000, .dport = 40000, .seq = 501, .len = 40, .flags = LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &d, 8000, 77), 0);
    assert_int_equal(at(w, 40000, 39), 77);
    /* The client's own segments (source port its own) are ignored. */
    lg_wire_seg c = {.sport = 40000, .dport = 8000, .seq = 1, .len = 40, .flags = LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &c, 8000, 78), 2);
    lg_wire_seg ack = {.sport = 8000, .dport = 40000, .seq = 541, .flags = LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &ack, 8000, 79), 2);
    lg_wire_free(w);
}

static void test_client_anchor(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(16);
    /* No SYN-ACK: the client's request (ack = the server's ISN + 1) anchors. */
    lg_wire_seg req = {.sport = 40010,
                       .dport = 8000,
                       .seq = 9,
                       .ack = 7001,
                       .len = 120,
                       .flags = LG_TCP_ACK | 0x08};
    assert_int_equal(lg_wire_feed(w, &req, 8000, 1), 2);
    assert_int_equal(lg_wire_get_counts(w).conns, 1);
    lg_wire_seg d = {.sport = 8000, .dport = 40010, .seq = 7001, .len = 50, .flags = LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &d, 8000, 5), 0);
    assert_int_equal(at(w, 40010, 0), 5);
    assert_int_equal(at(w, 40010, 49), 5);
    /* A later request on the connection does not move the anchor. */
    req.ack = 7051;
    assert_int_equal(lg_wire_client(w, 40010, 7051), 1);
    d.seq = 7051;
    lg_wire_feed(w, &d, 8000, 6);
    assert_int_equal(at(w, 40010, 50), 6);
    /* An anchor whose server data does not start at offset 0 (not the first
     * request's) is dropped, not trusted. */
    assert_int_equal(lg_wire_client(w, 40011, 9001), 0);
    assert_int_equal(lg_wire_data(w, 40011, 9101, 10, 7), 1);
    assert_int_equal(at(w, 40011, 100), -1);
    assert_int_equal(lg_wire_get_counts(w).conns, 1);
    /* A connection the client has read from (its first response's SYN-ACK
     * and request lost) is not anchored by its next request: that ack
     * counts the first response too. Its SYN-ACK, or a close, clears it. */
    lg_wire_release(w, 40013, 0);
    assert_int_equal(lg_wire_client(w, 40013, 5000), 1);
    lg_wire_close(w, 40013);
    assert_int_equal(lg_wire_client(w, 40013, 5000), 0);
    lg_wire_close(w, 40013);
    assert_int_equal(lg_wire_data(w, 40014, 100, 10, 1), 1); /* data seen without state */
    assert_int_equal(lg_wire_client(w, 40014, 5000), 1);
    assert_int_equal(lg_wire_syn(w, 40014, 99), 0);
    assert_int_equal(lg_wire_data(w, 40014, 100, 10, 2), 0);
    assert_int_equal(at(w, 40014, 0), 2);
    lg_wire_close(w, 40014);
    /* A pure ACK or a SYN of the client anchors nothing. */
    lg_wire_seg ack = {.sport = 40012, .dport = 8000, .ack = 1, .flags = LG_TCP_ACK};
    lg_wire_feed(w, &ack, 8000, 1);
    ack.flags = LG_TCP_SYN;
    ack.len = 10;
    lg_wire_feed(w, &ack, 8000, 1);
    assert_int_equal(lg_wire_get_counts(w).conns, 1);
    lg_wire_free(w);
}

static int64_t sent_at(const lg_wire *w, uint16_t port, uint64_t off)
{
    int64_t t = -7;
    if (lg_wire_sent_lookup(w, port, off, &t) != 0) return -1;
    return t;
}

/* The client's request stream: offset 0 from the SYN-ACK's acknowledgement
 * (the client's ISN + 1), a request split over segments, a retransmission,
 * a keep-alive second request, release, the 32-bit wrap, and no client side
 * for a connection anchored by its request. */
static void test_client_stream(void **state)
{
    (void)state;
    lg_wire *w = lg_wire_new(16);
    lg_wire_seg sa = {
        .sport = 8000, .dport = 40020, .seq = 700, .ack = 5001, .flags = LG_TCP_SYN | LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &sa, 8000, 1), 0);
    /* Request 1 in two segments: [0, 100) at 10, [100, 150) at 11. */
    lg_wire_seg c = {
        .sport = 40020, .dport = 8000, .seq = 5001, .ack = 701, .len = 100, .flags = LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &c, 8000, 10), 2);
    c.seq = 5101;
    c.len = 50;
    c.flags |= 0x08;
    assert_int_equal(lg_wire_feed(w, &c, 8000, 11), 2);
    assert_int_equal(sent_at(w, 40020, 0), 10);
    assert_int_equal(sent_at(w, 40020, 99), 10);
    assert_int_equal(sent_at(w, 40020, 100), 11);
    assert_int_equal(sent_at(w, 40020, 149), 11);
    assert_int_equal(sent_at(w, 40020, 150), -1);
    /* The server's stream is apart: the client's bytes are not its. */
    assert_int_equal(at(w, 40020, 0), -1);
    /* A retransmission of the first segment: the first capture wins. */
    c.seq = 5001;
    c.len = 100;
    assert_int_equal(lg_wire_feed(w, &c, 8000, 20), 2);
    assert_int_equal(sent_at(w, 40020, 0), 10);
    assert_int_equal(lg_wire_get_counts(w).sent_dup_bytes, 100);
    assert_int_equal(lg_wire_get_counts(w).sent_segments, 3);
    /* The response, then a keep-alive second request at [150, 250). */
    lg_wire_seg d = {.sport = 8000, .dport = 40020, .seq = 701, .len = 40, .flags = LG_TCP_ACK};
    assert_int_equal(lg_wire_feed(w, &d, 8000, 15), 0);
    assert_int_equal(at(w, 40020, 0), 15);
    lg_wire_sent_release(w, 40020, 150);
    assert_int_equal(sent_at(w, 40020, 149), -1);
    c.seq = 5151;
    c.ack = 741;
    assert_int_equal(lg_wire_feed(w, &c, 8000, 30), 2);
    assert_int_equal(sent_at(w, 40020, 150), 30);
    assert_int_equal(sent_at(w, 40020, 249), 30);
    assert_int_equal(sent_at(w, 40020, 250), -1);
    /* A retransmission of released bytes is ignored. */
    c.seq = 5001;
    assert_int_equal(lg_wire_feed(w, &c, 8000, 40), 2);
    assert_int_equal(sent_at(w, 40020, 150), 30);
    /* Across the 32-bit wrap: the client's ISN just below 2^32. */
    sa.dport = 40021;
    sa.ack = 0xffffffc0u;
    assert_int_equal(lg_wire_feed(w, &sa, 8000, 1), 0);
    c.sport = 40021;
    c.seq = 0xffffffc0u;
    c.len = 0x80;
    assert_int_equal(lg_wire_feed(w, &c, 8000, 50), 2);
    assert_int_equal(sent_at(w, 40021, 0x7f), 50);
    c.seq = 0x40;
    c.len = 10;
    lg_wire_feed(w, &c, 8000, 51);
    assert_int_equal(sent_at(w, 40021, 0x80), 51);
    /* Anchored by the request (no SYN-ACK): no client side. */
    c.sport = 40022;
    c.seq = 9;
    c.ack = 7001;
    assert_int_equal(lg_wire_feed(w, &c, 8000, 60), 2);
    assert_int_equal(lg_wire_get_counts(w).conns, 3);
    assert_int_equal(sent_at(w, 40022, 0), -1);
    assert_int_equal(lg_wire_client_start(w, 40022, 9), -1);
    assert_int_equal(lg_wire_sent(w, 40022, 9, 10, 61), 1);
    assert_int_equal(lg_wire_sent(w, 40023, 9, 10, 61), 1); /* no connection */
    /* A new SYN-ACK on a port forgets its old client side. */
    sa.dport = 40020;
    sa.ack = 9001;
    lg_wire_feed(w, &sa, 8000, 70);
    assert_int_equal(sent_at(w, 40020, 150), -1);
    lg_wire_free(w);
}

/* TLS record headers followed across reads: a read ends a record's body
 * (1) only when its last byte is the body's last; a header alone, a body
 * cut short, or a read that runs into the next header do not (0); a
 * stream that is not TLS records is refused for good (-1). */
static void test_tls_scan(void **state)
{
    (void)state;
    lg_tls_scan s = {0};
    const uint8_t hdr[5] = {23, 3, 3, 0, 4}; /* application data, 4 bytes */
    const uint8_t body[4] = {1, 2, 3, 4};
    assert_int_equal(lg_tls_scan_read(&s, hdr, 5), 0);  /* OpenSSL's header read */
    assert_int_equal(lg_tls_scan_read(&s, body, 4), 1); /* and its body read */
    /* the same record in pieces: header split, body split */
    assert_int_equal(lg_tls_scan_read(&s, hdr, 3), 0);
    assert_int_equal(lg_tls_scan_read(&s, hdr + 3, 2), 0);
    assert_int_equal(lg_tls_scan_read(&s, body, 3), 0);
    assert_int_equal(lg_tls_scan_read(&s, body + 3, 1), 1);
    /* two records in one read, ending with the second's body: 1; a read
     * that ends inside the next header: 0 */
    uint8_t two[5 + 4 + 5 + 4 + 2];
    memcpy(two, hdr, 5);
    memcpy(two + 5, body, 4);
    memcpy(two + 9, hdr, 5);
    two[9 + 4] = 2; /* length 2 */
    two[14] = 9;
    two[15] = 9;
    two[16] = 22; /* the next record's first header bytes */
    two[17] = 3;
    assert_int_equal(lg_tls_scan_read(&s, two, 16), 1);
    assert_int_equal(lg_tls_scan_read(&s, two + 16, 2), 0);
    const uint8_t rest[3 + 1] = {3, 0, 1, 7}; /* version's minor, length 1, body */
    assert_int_equal(lg_tls_scan_read(&s, rest, 3), 0);
    assert_int_equal(lg_tls_scan_read(&s, rest + 3, 1), 1);
    /* a body longer than a record may be, or not TLS at all: -1 from then on */
    lg_tls_scan t = {0};
    const uint8_t big[5] = {23, 3, 3, 0x48, 0x01}; /* 18433 > 2^14 + 2048 */
    assert_int_equal(lg_tls_scan_read(&t, big, 5), -1);
    assert_int_equal(lg_tls_scan_read(&t, hdr, 5), -1);
    lg_tls_scan u = {0};
    assert_int_equal(lg_tls_scan_read(&u, (const uint8_t *)"HTTP/", 5), -1);
    lg_tls_scan x = {0};
    const uint8_t v2[5] = {23, 2, 0, 0, 1}; /* a record type, but not version 3.x */
    assert_int_equal(lg_tls_scan_read(&x, v2, 5), -1);
    lg_tls_scan v = {0};
    const uint8_t top[5] = {23, 3, 3, 0x48, 0x00}; /* 18432: the largest allowed */
    assert_int_equal(lg_tls_scan_read(&v, top, 5), 0);
    assert_int_equal(v.body_left, 18432);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_first_capture_wins),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_release_close_bound),
        cmocka_unit_test(test_full_out_of_order),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_feed),
        cmocka_unit_test(test_client_anchor),
        cmocka_unit_test(test_client_stream),
        cmocka_unit_test(test_tls_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
