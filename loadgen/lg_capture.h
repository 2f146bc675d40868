/* lg_capture: the wire clock's capture shell, a thin layer over libpcap.
 * Each worker opens one handle on the interface that routes to the target
 * (lo for loopback): immediate mode, nanosecond time stamps, a snapshot of
 * the headers only, non-blocking, and a kernel BPF filter that keeps the
 * target's segments of this worker's connections (its own local port range
 * when there are several workers). The worker drains the ring in its read
 * path (lg_cap_drain, no thread, no extra wake-up) into lg_wire.
 *
 * Time stamps: a Linux packet socket stamps each packet with the skb's
 * receive time, CLOCK_REALTIME (the same stamp SO_TIMESTAMPING hands a
 * recvmsg of those bytes); pcap offers no monotonic time stamp type. The
 * stamps are kept as they come and mapped onto CLOCK_MONOTONIC at lookup by
 * the worker's lg_clock_map, like the kernel's receive stamps, so the wire,
 * kernel and loop clocks share one map.
 *
 * Who may capture: root or CAP_NET_RAW (setcap cap_net_raw+ep on the
 * executable). lg_capture_resolve decides the run's receive clock before
 * the workers start: wire when a handle can be opened, else kernel with the
 * reason, or exit 2 when wire was asked for explicitly. */
#ifndef LG_CAPTURE_H
#define LG_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"
#include "lg_wire.h"

typedef struct lg_cap lg_cap;

/* The target of url: its numeric address, port, and the interface whose
 * address the kernel's route to it uses. 0, or -1 with err. */
int lg_cap_target(const char *url, char *addr, size_t addr_len, int *port, char *ifname,
                  size_t if_len, char *err, size_t err_len);
/* The filter of worker `id` of k for target addr:port, which libpcap can
 * run in user space too (no `inbound`): this worker's local ports [lo, hi]
 * (when k > 1; *lo = *hi = 0 otherwise). */
void lg_cap_filter(const char *addr, int port, int id, int k, char *filter, size_t len, int *lo,
                   int *hi);
/* Opens a handle. NULL with err, and *why: -EPERM (no capability), -ENODEV
 * (no such interface), -EINVAL (the filter does not compile), -EIO (other). */
lg_cap *lg_cap_open(const char *ifname, const char *filter, int buffer_kib, int server_port,
                    int *why, char *err, size_t err_len);
/* Takes every captured packet into wire (realtime stamps). Returns packets
 * taken, or -1 when the handle failed (the interface went away). */
int lg_cap_drain(lg_cap *c, lg_wire *wire);
/* Packets taken, and the kernel's drops (pcap_stats ps_drop). */
void lg_cap_stats(lg_cap *c, uint64_t *packets, uint64_t *drops);
void lg_cap_close(lg_cap *c);

/* A worker's wire clock: its handle, the segments' map, and the last read
 * (whose bytes the write callbacks and the SSE parser point into). */
typedef struct lg_wclock {
    lg_cap *cap;
    lg_wire *wire;
    int on;               /* capturing (0: never opened, or the handle failed) */
    int port_lo, port_hi; /* this worker's local ports (0: any) */
    char filter[320];
    int port;        /* the last read: its connection's local port (-1: none) */
    const char *buf; /* its bytes */
    size_t n;
    uint64_t off;     /* the stream offset of buf[0] */
    uint64_t packets; /* taken so far */
    int64_t cost_ns;  /* time spent draining and looking up */
} lg_wclock;

/* Opens worker id of k's wire clock on o->capture_iface for url. 0, or -1
 * with err (the worker then times with the kernel's stamps). */
int lg_wclock_open(lg_wclock *wc, const lg_opts *o, const char *url, int id, int k, char *err,
                   size_t err_len);
/* After a read of n bytes at stream offset off of port's connection: takes
 * what the ring holds (the read's segments are in it by now), frees what
 * was read before. Returns packets taken, -1 when the handle failed. */
int lg_wclock_read(lg_wclock *wc, int port, const void *buf, size_t n, uint64_t off);
/* The capture time (realtime ns) of the segment that carried the byte at p
 * in the last read of port's connection (drains the ring again when the
 * segment is not in the map yet). 0, or -1: not found. */
int lg_wclock_time(lg_wclock *wc, int port, const char *p, int64_t *real_ns);
/* The same for the last byte of the last read of port's connection (under
 * TLS, whose plaintext does not point into the read: see lg_tls_scan). */
int lg_wclock_time_last(lg_wclock *wc, int port, int64_t *real_ns);
/* The capture times (realtime ns) of the first and last bytes of [lo, hi)
 * of port's request stream (a request's bytes, as the client wrote them),
 * draining the ring again when they are not in the map yet; frees the
 * stream below hi. 0, or -1: either end not found. */
int lg_wclock_sent(lg_wclock *wc, int port, uint64_t lo, uint64_t hi, int64_t *first_real_ns,
                   int64_t *last_real_ns);
void lg_wclock_close(lg_wclock *wc);

/* Decides o->receive_clock for a run of k workers (see above); fills the
 * capture's interface, worker 0's filter and the fallback reason in o. 0,
 * or 2 (told on stderr). */
int lg_capture_resolve(lg_opts *o, int k);

#endif
