/* lg_wire: the wire clock's pure core. A packet capture sees every TCP
 * segment before the kernel merges it into a socket's receive queue; this
 * module turns the captured segments of a worker's connections into "when
 * did the byte at stream offset X of connection P arrive", so that an SSE
 * event can be given the capture time of the segment that carried its last
 * byte, however late the worker read it.
 *
 * Per connection (keyed by the client's local port): the server's initial
 * sequence number comes from its SYN-ACK; a data segment's sequence number
 * then gives the stream offset of its bytes (offset 0 is the first byte
 * after the SYN, the first byte recv() returns). Offsets are 64-bit: the
 * 32-bit sequence space wraps, and a segment's offset is the one nearest the
 * connection's highest offset seen. Keep-alive needs nothing: offsets
 * continue across requests on one connection. The first capture of a byte
 * wins: a retransmission adds only the bytes not seen before, and a segment
 * that arrives out of order fills its gap. Bytes below the released offset
 * (already read by the client) are dropped, and a retransmission of them is
 * ignored.
 *
 * Where the SYN-ACK was not captured (on loopback the first connections of
 * a new capture can miss theirs), the client's first request segment
 * anchors the connection instead: its acknowledgement number is the
 * server's next sequence number, ISN + 1 before any response byte. The
 * anchor holds only if the server's first data segment then starts at
 * offset 0; otherwise the connection is dropped (unknown) rather than
 * mistimed. Nor is a connection anchored once the client has read from it
 * (lg_wire_release) or its data was seen without state: its request would
 * be a later one, whose acknowledgement also counts the responses before.
 *
 * The client's side, the request stream, is mapped the same way: the
 * SYN-ACK acknowledges the client's ISN + 1, its stream's offset 0, and each
 * captured client data segment is a range of that stream (first capture
 * winning, released as requests are timed), so the capture time of a
 * request's first and last bytes can be looked up by their offsets in the
 * client's send stream (which the client counts as it writes). A connection
 * anchored by the client's request instead has no client side: the
 * anchoring segment need not carry the stream's first byte.
 *
 * Bounded: at most max_segs ranges per connection and side (the oldest is dropped
 * past it, and counted); a connection's state is freed at lg_wire_close or
 * replaced by a new SYN-ACK on its port. Pure: no I/O, no clocks. One owner.
 *
 * lg_wire_parse reads a captured frame's headers (Ethernet, Linux cooked,
 * raw IP; IPv4 or IPv6; TCP) into a segment: ports, sequence number, flags
 * and the payload's length from the IP header (the capture keeps headers
 * only). */
#ifndef LG_WIRE_H
#define LG_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Link types lg_wire_parse reads (the DLT_ values of pcap). */
#define LG_WIRE_DLT_NULL 0
#define LG_WIRE_DLT_EN10MB 1
#define LG_WIRE_DLT_RAW 12
#define LG_WIRE_DLT_LINUX_SLL 113

#define LG_TCP_FIN 0x01
#define LG_TCP_SYN 0x02
#define LG_TCP_RST 0x04
#define LG_TCP_ACK 0x10

typedef struct lg_wire_seg {
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint32_t len; /* payload bytes (from the IP length, not the snapshot) */
    uint8_t flags;
} lg_wire_seg;

/* Parses a frame of link type dlt, caplen bytes captured. 0, or -1 when it
 * is not a TCP segment or its headers were not captured whole. */
int lg_wire_parse(int dlt, const uint8_t *frame, size_t caplen, lg_wire_seg *seg);

typedef struct lg_wire lg_wire;

typedef struct lg_wire_counts {
    uint64_t segments;       /* data segments taken */
    uint64_t dup_bytes;      /* bytes seen before (retransmissions), ignored */
    uint64_t unknown;        /* data segments of a port with no SYN-ACK seen */
    uint64_t evicted;        /* ranges dropped for the bound */
    uint64_t conns;          /* connections open now */
    uint64_t sent_segments;  /* the client's data segments taken */
    uint64_t sent_dup_bytes; /* the client's bytes seen before (retransmissions) */
} lg_wire_counts;

/* max_segs: ranges kept per connection (>= 1). NULL: no memory. */
lg_wire *lg_wire_new(size_t max_segs);
void lg_wire_free(lg_wire *w);

/* The server's SYN-ACK to local port `port`: a new connection whose data
 * starts after isn. Replaces any state of the port. 0 or -1 (no memory). */
int lg_wire_syn(lg_wire *w, uint16_t port, uint32_t isn);
/* The client's data segment from local port `port`, acknowledging ack:
 * anchors a connection with no state (see above). 0; 1 when it has state
 * already; -1 no memory. */
int lg_wire_client(lg_wire *w, uint16_t port, uint32_t ack);
/* The client's request stream on port starts at sequence number next (the
 * SYN-ACK's acknowledgement). 0, or -1 when the port has no connection or
 * one anchored by the client (its client side stays unknown). */
int lg_wire_client_start(lg_wire *w, uint16_t port, uint32_t next);
/* The client's data segment from local port `port` captured at t_ns. 0; 1
 * when the port's client side is not known; -1 no memory. */
int lg_wire_sent(lg_wire *w, uint16_t port, uint32_t seq, uint32_t len, int64_t t_ns);
/* A data segment to local port `port` captured at t_ns. 0; 1 when the port
 * has no connection (no SYN-ACK seen); -1 no memory. */
int lg_wire_data(lg_wire *w, uint16_t port, uint32_t seq, uint32_t len, int64_t t_ns);
/* Feeds one parsed segment between the server (port server_port) and the
 * client: the server's SYN-ACK and data, the client's data (an anchor, and
 * its request stream). Returns as lg_wire_data for the server's data, 0 for
 * a SYN-ACK, 2 for anything else (the client's segments included), -1 no
 * memory. */
int lg_wire_feed(lg_wire *w, const lg_wire_seg *seg, uint16_t server_port, int64_t t_ns);
/* The capture time of the segment that carried stream offset `offset` of
 * port's connection: 0 and *t_ns, or -1 (not captured, or released). */
int lg_wire_lookup(const lg_wire *w, uint16_t port, uint64_t offset, int64_t *t_ns);
/* The client has read everything below `offset`: frees those ranges. */
void lg_wire_release(lg_wire *w, uint16_t port, uint64_t offset);
/* The same two for the client's request stream: the capture time of its
 * byte at `offset`, and everything below `offset` timed (freed). */
int lg_wire_sent_lookup(const lg_wire *w, uint16_t port, uint64_t offset, int64_t *t_ns);
void lg_wire_sent_release(lg_wire *w, uint16_t port, uint64_t offset);
/* The connection ended: frees its state. */
void lg_wire_close(lg_wire *w, uint16_t port);
/* Ranges held for port (0: none; for tests and the memory bound). */
size_t lg_wire_ranges(const lg_wire *w, uint16_t port);
lg_wire_counts lg_wire_get_counts(const lg_wire *w);

/* TLS records in a connection's received ciphertext. Under TLS the SSE
 * framing is inside ciphertext, so an event cannot be found by its bytes;
 * but the TLS layer (OpenSSL through libcurl) reads a record's 5-byte
 * header, then exactly its body, decrypts it, and hands its plaintext to
 * the write callback before it reads again. So the plaintext delivered
 * after a read that ended exactly at a record's end came from that record,
 * and its arrival is the capture time of the read's last byte. The scan
 * follows the headers across reads (type 20-24, version 3.x, length at most
 * 2^14 + 2048), and says whether a read ended a record's body: 1, 0, or -1
 * once the stream is not TLS records (every later read then -1). */
typedef struct lg_tls_scan {
    uint32_t body_left; /* bytes of the current record's body still to come */
    uint8_t hdr[5];
    uint8_t hdr_n; /* header bytes seen so far */
    uint8_t bad;
} lg_tls_scan;
int lg_tls_scan_read(lg_tls_scan *s, const uint8_t *buf, size_t n);

#endif
