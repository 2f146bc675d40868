/* lg_rxclock: when the bytes of a response reached this host, from the
 * kernel, not from the loop. A TCP socket with SO_TIMESTAMPING (software RX)
 * carries, on every recvmsg, the kernel's receive time of the bytes it
 * returns; a 1-byte MSG_PEEK at the loop's pickup (the poll callback, before
 * curl reads) gives that time without consuming anything. The time is
 * CLOCK_REALTIME; it is mapped onto the suite's CLOCK_MONOTONIC by an offset
 * taken from paired clock readings and re-sampled while the run goes on.
 *
 * What one peek tells (measured on Linux 6.18 loopback, see loadgen/README.md):
 * the kernel coalesces consecutive segments that wait unread into one buffer
 * and gives that buffer the receive time of the NEWEST bytes merged into it.
 * So a pickup that delivers one event has that event's exact arrival time;
 * when several events waited together, the time is exact for the last event
 * of the first buffer and an upper bound for the ones before it.
 *
 * The clock map and the pickup bookkeeping are pure (no syscalls) and
 * unit-tested; lg_rx_enable and lg_rx_peek are the two thin syscall shells.
 * One owner (a worker's loop thread). */
#ifndef LG_RXCLOCK_H
#define LG_RXCLOCK_H

#include <stdint.h>

/* A jump of the realtime-minus-monotonic offset larger than this between
 * two samples is a clock step (settimeofday, an NTP step), not a slew. */
#define LG_CLOCK_STEP_NS 1000000LL

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

/* One pickup: the loop woke for a readable socket. */
typedef struct lg_pickup {
    int conn;             /* the connection's local port; -1: no pickup under way */
    int64_t pickup_ns;    /* the poll callback's entry */
    int64_t kernel_ns;    /* monotonic kernel receive time; 0: none */
    int64_t queued_bytes; /* bytes waiting in the receive queue at pickup (-1: unknown) */
    uint32_t tokens;      /* content tokens delivered from this pickup so far */
    int stage;            /* the stage of the request they belong to */
} lg_pickup;

/* How an event's receive time was taken. */
typedef enum {
    LG_RX_KERNEL = 0, /* the kernel's receive stamp, from the peek at pickup */
    LG_RX_PICKUP,     /* no stamp: the pickup (poll callback entry) */
    LG_RX_DELIVERY    /* not delivered from a pickup of its connection: the delivery itself */
} lg_rx_kind;

/* The receive time to assign to an event delivered at delivery_ns to a
 * request on connection conn (its local port), with pickup p under way: the
 * pickup's kernel time when it is this connection's and had one, else its
 * pickup time, else delivery_ns. Never later than delivery_ns (a realtime step between receive
 * and mapping could say so). *kind says which. */
int64_t lg_pickup_event_time(const lg_pickup *p, int conn, int64_t delivery_ns, lg_rx_kind *kind);

/* Sets SO_TIMESTAMPING (software receive stamps) on a socket. 0 or -errno.
 * The kernel stamps incoming packets only while some socket asks for it, and
 * turns that on lazily (a deferred static key): lg_rx_keep_on opens a socket
 * that asks, so the first connections of a run are stamped too. Returns the
 * descriptor (close it at the end) or -errno. */
int lg_rx_keep_on(void);
/* Sets SO_TIMESTAMPING (software receive stamps) on a socket. 0 or -errno. */
int lg_rx_enable(int fd);
/* Peeks one byte with its receive stamp. Returns 1 with *real_ns set, 0 when
 * the socket has data but no stamp (or no data), -errno on error. Also reads
 * the receive queue's depth into *queued (-1 when unknown). */
int lg_rx_peek(int fd, int64_t *real_ns, int64_t *queued);

#endif
