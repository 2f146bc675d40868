/* lg_run: a whole loadgen run. The coordinator (lg_run) builds the plan, maps
 * one shared anonymous region, forks k workers (or runs one in-process),
 * watches their live counters, and merges their results exactly at the end.
 * Each worker (lg_worker_run) owns one libuv loop driving libcurl's multi
 * interface and writes only its own slot of the shared region. */
#ifndef LG_RUN_H
#define LG_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lg_cli.h"
#include "lg_dataset.h"
#include "lg_sched.h"
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

/* Everything a worker needs, built before the fork and read-only after. */
typedef struct lg_plan {
    const lg_opts *o;
    int k;      /* worker slots (>= 1) */
    int forked; /* 0: the single worker runs in the coordinator */
    lg_sched_spec spec;
    int closed;    /* closed loop: intended = dispatch */
    int capped;    /* open loop with a concurrency cap */
    int n_stages;  /* stats blocks per worker */
    lg_dataset ds; /* the prompt pool (empty for a trace) */
    char **bodies; /* pre-rendered request body per pool entry */
    size_t *body_len;
    lg_trace_row *trace;
    size_t n_trace;
    char url[1200];
    int stamps; /* send X-Sim-Stamp: 1 */
    int64_t lag_bound_ns;
    int64_t end_deadline_ns; /* absolute: cancel whatever is left (0: none) */
    /* per worker: its JSONL part, opened by the coordinator before the fork
     * (NULL or -1: no records) */
    const int *detailed_fd;
    /* the shared region */
    void *shm;
    size_t shm_bytes;
    size_t slot_bytes;
    /* in-process mode: the coordinator's watch, called from the worker's
     * housekeeping timer */
    void (*tick)(void *ctx);
    void *tick_ctx;
} lg_plan;

lg_shared *lg_plan_shared(const lg_plan *p);
lg_slot *lg_plan_slot(const lg_plan *p, int w);
lg_stage_stats *lg_plan_stats(const lg_plan *p, int w, int stage);
lg_dispatch_sample *lg_plan_sample(const lg_plan *p, int w);

/* Runs worker w of the plan to its end; returns its exit code (0 ok). */
int lg_worker_run(const lg_plan *p, int w);

/* The concurrency slots of worker w (C split over k). */
int lg_plan_worker_cap(const lg_plan *p, int w);

/* Renders one request body for a prompt (malloc'd into *out). */
int lg_body_render(const lg_opts *o, const char *prompt, int32_t max_tokens, char **out,
                   size_t *len);

/* The whole run: returns the process exit code (0, 1, 2 or 130); reports go
 * to stdout and, with --save-result, to the result file. */
int lg_run(lg_opts *o);

#endif
