/* lg_rxclock: when the bytes of a response reached this host, from the
 * kernel, not from the loop. A TCP socket with SO_TIMESTAMPING (software RX)
 * carries, on every recvmsg, the kernel's receive time of the bytes it
 * returns. libcurl reads its sockets with recv(); this module defines recv()
 * for the process (the executable's definition comes first in symbol lookup,
 * so libcurl's calls land here), performs the same read as a recvmsg with a
 * control buffer, and hands the stamp to a hook: every read curl makes is
 * stamped, whichever loop callback drove it, at no extra system call. The
 * time is CLOCK_REALTIME; it is mapped onto the suite's CLOCK_MONOTONIC by an
 * offset from paired clock readings, re-sampled while the run goes on.
 *
 * What one stamp tells (measured on Linux 6.18 loopback; loadgen/README.md):
 * the kernel coalesces consecutive segments that wait unread into one buffer
 * and gives it the receive time of the NEWEST bytes merged in, and a read
 * over several buffers reports the last one's. So a read that delivers one
 * event has that event's exact arrival time; when several events waited
 * together, the time is exact for the last and an upper bound for the ones
 * before it. Their lower bound is the last instant the connection's queue is
 * known to have been empty (a read that returned less than it asked for), or
 * the request's dispatch if later: every event of the read arrived within
 * [lower, kernel]. The kernel also counts the data segments a connection
 * received (TCP_INFO tcpi_data_segs_in): when a read consumed exactly one
 * segment, its events arrived together, at the kernel time, and are exact.
 * The same call gives the bytes received (tcpi_bytes_received): when they
 * equal the bytes read so far the queue is empty, the count is a sound
 * baseline for the next read, and their difference is the queue's depth.
 * Otherwise a batch whose window is at most LG_RX_EXACT_TOL_NS wide is exact
 * within it; a wider one is not, and its width is reported.
 *
 * The clock map and the per-read bookkeeping are pure and unit-tested; the
 * rest are thin system-call shells. One owner: a worker's loop thread. */
#ifndef LG_RXCLOCK_H
#define LG_RXCLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A jump of the realtime-minus-monotonic offset larger than this between
 * two samples is a clock step (settimeofday, an NTP step), not a slew. */
#define LG_CLOCK_STEP_NS 1000000LL

/* Batched tokens whose arrival window is at most this wide count as exact. */
#define LG_RX_EXACT_TOL_NS 100000LL

typedef struct lg_clock_map {
    int64_t offset_ns;    /* realtime - monotonic, from the latest sample */
    int64_t lo_ns, hi_ns; /* extremes of the offset since the last step */
    int64_t spread_ns;    /* largest hi - lo seen over the run (slew + reading noise) */
    int64_t width_ns;     /* the narrowest paired reading (its uncertainty) */
    uint64_t samples;
    uint64_t steps; /* clock steps seen */
} lg_clock_map;

/* Takes one sample: mono_before <= real <= mono_after were read in that order. */
void lg_clock_map_sample(lg_clock_map *m, int64_t mono_before_ns, int64_t real_ns,
                         int64_t mono_after_ns);
/* A realtime instant on the monotonic clock (0 if no sample yet). */
int64_t lg_clock_map_to_mono(const lg_clock_map *m, int64_t real_ns);

/* One stamped read of a connection, and the tokens delivered from it. */
typedef struct lg_rx_read {
    int port;          /* the connection's local port; -1: none */
    int64_t kernel_ns; /* monotonic kernel receive time; 0: the read had no stamp */
    int64_t lower_ns;  /* the queue was empty then: nothing in it arrived earlier (0: unknown) */
    int64_t segments;  /* data segments this read consumed (-1: unknown) */
    uint32_t tokens;   /* content tokens delivered from it so far */
    int stage;         /* the stage of their request */
} lg_rx_read;

/* How an event's receive time was taken. */
typedef enum {
    LG_RX_KERNEL = 0, /* the kernel's stamp of the read that brought it */
    LG_RX_PICKUP,     /* no stamp: the loop callback's entry (the pickup) */
    LG_RX_DELIVERY,   /* neither: the delivery itself */
    LG_RX_WIRE        /* the capture time of the segment that carried it (lg_wire) */
} lg_rx_kind;

/* The receive time of an event delivered at delivery_ns to a request on
 * connection port, the last read being rd and the loop callback under way
 * having started at pickup_ns (0: none). Never later than delivery_ns (a
 * realtime step between receive and mapping could say so). */
int64_t lg_rx_event_time(const lg_rx_read *rd, int port, int64_t pickup_ns, int64_t delivery_ns,
                         lg_rx_kind *kind);

/* When a read's tokens are all delivered: how many were timed exactly (all
 * when it delivered one token or consumed one segment; else the last one,
 * and the others too when the window [lower_ns, kernel_ns] is at most tol_ns
 * wide), and that window's width for the others (0 when all are exact by
 * the first two rules). */
uint32_t lg_rx_read_exact(const lg_rx_read *rd, int64_t tol_ns, int64_t *window_ns);

/* Sets SO_TIMESTAMPING (software receive stamps) on a socket. 0 or -errno. */
int lg_rx_enable(int fd);
/* The kernel stamps incoming packets only while some socket asks for it,
 * and turns that on lazily (a deferred static key): this opens a socket
 * that asks, so the first connections of a run are stamped too. Returns the
 * descriptor (close it at the end) or -errno. */
int lg_rx_keep_on(void);
/* What a TCP connection has received so far, from one TCP_INFO call: its
 * data segments and its payload bytes in order. 0, or -1 when unknown. */
int lg_rx_tcp_counts(int fd, int64_t *segments, int64_t *bytes);
/* The local port of a socket (-1: unknown). */
int lg_rx_local_port(int fd);

/* Called after every successful non-peek recv() of the process: n bytes of
 * the len asked for were read from fd into buf; real_ns is the read's
 * kernel stamp (0: none). Runs on the reading thread, inside libcurl. */
typedef void (*lg_rx_hook)(void *ctx, int fd, const void *buf, ssize_t n, size_t len,
                           int64_t real_ns);
/* Installs the hook (NULL: none; recv() then passes straight through). */
void lg_rx_set_hook(lg_rx_hook hook, void *ctx);
/* Called after every successful send() of the process: n bytes of fd's
 * stream were written (the wire clock counts a connection's request stream
 * with it). Runs on the writing thread, inside libcurl. */
typedef void (*lg_tx_hook)(void *ctx, int fd, size_t n);
/* Installs it (NULL: none; send() then passes straight through). */
void lg_tx_set_hook(lg_tx_hook hook, void *ctx);
/* recv() with the kernel's receive stamp: as recv(2), and *real_ns set (0
 * when the read carried none). */
ssize_t lg_rx_recv(int fd, void *buf, size_t len, int flags, int64_t *real_ns);

#endif
