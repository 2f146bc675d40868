/* lg_slots: the layout of the region the workers write and the coordinator
 * reads. One page of run-wide header (lg_shared), then one slot per worker:
 * its header (lg_slot), its per-stage stats blocks (lg_stats.h) and its
 * dispatch sample. A worker writes only its own slot; the live fields are
 * relaxed atomics, the rest is valid once the worker has ended. */
#ifndef LG_SLOTS_H
#define LG_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "lg_stats.h"

/* Dispatch times kept per worker for the arrival test. */
#define LG_SAMPLE_PER_WORKER 50000

typedef struct lg_dispatch_sample {
    int64_t index;       /* global arrival number */
    int64_t dispatch_ns; /* absolute */
    int64_t intended_ns; /* absolute */
    int32_t stage;
    int32_t pad_;
} lg_dispatch_sample;

/* Worker states, in order. */
enum { LG_W_STARTING, LG_W_RUNNING, LG_W_DRAINING, LG_W_DONE };

/* One worker's slot header in the shared region. The first group is live
 * (relaxed atomics, written only by the worker); the rest is final, valid
 * once the worker has exited. */
typedef struct lg_slot {
    uint64_t in_flight;
    uint64_t lag_p99_ns; /* current stage's lag p99, refreshed ~4 times a second */
    int32_t cur_stage;
    int32_t state;
    /* final */
    uint64_t callbacks; /* service units timed in the send window */
    double svc_sum_ns, svc_sumsq_ns2;
    uint64_t events; /* SSE events received in the send window */
    int64_t window_start_ns, window_end_ns;
    int64_t idle_ns; /* loop idle time within the send window */
    int64_t nivcsw;  /* involuntary context switches in the window (preemptions) */
    uint64_t n_sample;
    int32_t saw_stamps; /* the server sent X-Sim-Stamp comments */
    /* the receive clock's own health */
    uint64_t rx_enable_failed; /* connections that refused SO_TIMESTAMPING */
    int64_t clock_spread_ns;   /* realtime-monotonic offset: largest spread between steps */
    int64_t clock_width_ns;    /* narrowest paired reading */
    uint64_t clock_steps;      /* realtime steps seen */
    /* --batch-tick: the loop's ticks, and those whose work ran past the next */
    uint64_t ticks, ticks_overrun;
    /* The receive clock this worker ran ("wire" only when its own capture
     * opened; "": it never started) and its capture's interface ("": none).
     * Under --mpi each rank resolves its own, on its own host. */
    char rx_clock[8];
    char capture_iface[64];
    /* why this worker does not run the wire clock ("": it does, or it was
     * not asked for): its rank's fallback, or its own capture's error */
    char rx_fallback[160];
    /* the CPUs this worker may run on, read back once it set --worker-cpus
     * ("0,2-3"; "": unreadable) */
    char cpus[64];
    /* --cpu-latency-us: 1 held, 0 asked and refused, -1 not asked; the
     * host's limit read back while held (us; -1: unread); its description
     * (rb_cpu_latency_describe: "held: 0 us (...)", "not held: ...") */
    int32_t cpu_latency_held, cpu_latency_us;
    char cpu_latency[160];
    /* multi-turn sessions (lg_session.h): rounds that waited for their
     * user's previous one, contexts that stopped growing at the cap */
    int64_t sess_waited, sess_capped;
    /* the per-request records (--save-detailed), as of the last flush */
    uint64_t detailed_written, detailed_lost;
    int32_t detailed_err; /* the first write error (-errno); 0: none */
    int32_t exit_code;
    char error[256];
} lg_slot;

/* The header of the shared region. */
typedef struct lg_shared {
    int32_t stop;            /* 1: stop issuing and drain; 2: cancel in-flight now */
    int32_t interrupted;     /* the stop came from SIGINT, SIGTERM or SIGHUP */
    int32_t saturated_stage; /* -1 or the stage after which a sweep stopped */
    int32_t pad_;
    int64_t t0_ns; /* the run's start: intended times are t0 + offsets */
} lg_shared;

/* The region's parts, in bytes: the run-wide header page, one slot's header,
 * one whole slot (with n_stages blocks), and the region for k slots. */
#define LG_SLOTS_PAGE 4096
size_t lg_slot_header_bytes(void);
size_t lg_slot_bytes(int n_stages);
size_t lg_slots_region_bytes(int k, int n_stages);

/* Slot w's parts in a region laid out for n_stages stages. */
lg_shared *lg_slots_shared(void *region);
lg_slot *lg_slots_slot(void *region, int n_stages, int w);
lg_stage_stats *lg_slots_stats(void *region, int n_stages, int w, int stage);
lg_dispatch_sample *lg_slots_sample(void *region, int n_stages, int w);

#endif
