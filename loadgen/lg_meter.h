/* lg_meter: the client's measurement of its own load, apart from the loop
 * that it measures. Pure: no libuv, no curl, no clock calls; the worker
 * (lg_worker.c) reads the clocks, libuv's idle time and the host's counters
 * (rb_host_sample) and feeds them in.
 *
 * Three parts:
 *  - the send window: lg_meter_open starts it, lg_meter_callback times each
 *    loop callback inside it (the service units whose sum and sum of squares
 *    give the loop's rho and second moment), lg_meter_event counts each SSE
 *    event in it, lg_meter_end_window closes it into the worker's slot;
 *  - per-stage accounting: the window is cut at each stage change
 *    (lg_meter_stage) and each stage's stats block gets what the loop and the
 *    host did while it was timed: wall time, idle time, service units, run
 *    delay, involuntary switches, steal and CPU time. The readings taken at a
 *    cut both close the stage being timed and open the next, so the stages'
 *    shares add up to the window with nothing counted twice or lost;
 *  - the per-token split (lg_meter_token): one content token's times into
 *    the stage's histograms (ITL, ITL_U, OVERHEAD, ITL_S, TTFT_S, PROCESSING,
 *    CLIENT_DELAY, PICKUP, SERVER_SEND) and receive-clock counters, with the
 *    request's chain of tokens (first and last times, largest gap, count, the
 *    server's last stamp) kept in an lg_meter_chain.
 *
 * Which receive time a token gets (the kernel's stamp, the pickup, the wire
 * capture) is the receive clock's choice (lg_rxclock.h, lg_wire.h), made in
 * the worker: the meter takes the chosen time and its kind. */
#ifndef LG_METER_H
#define LG_METER_H

#include <stdint.h>

#include "lg_rxclock.h"
#include "lg_slots.h"
#include "lg_stats.h"
#include "rb_host.h"

/* One worker's meter. Fields are read-only outside lg_meter.c. */
typedef struct lg_meter {
    int in_window;             /* between lg_meter_open and lg_meter_end_window */
    uint64_t callbacks;        /* loop callbacks timed in the window */
    uint64_t events;           /* SSE events (or whole responses) in the window */
    double svc_sum, svc_sumsq; /* their service times (ns, ns^2) */
    int64_t idle_at_open_ns;   /* the loop's idle time when the window opened */
    int64_t nivcsw_at_open;
    /* the stage being timed (-1: none) and the readings when it opened */
    int stage;
    int64_t at_ns, at_idle_ns;
    rb_host_reading at;
    uint64_t at_callbacks;
    double at_svc_sum, at_svc_sumsq;
} lg_meter;

/* A meter with no window open and no stage timed. */
void lg_meter_init(lg_meter *m);

/* Opens the send window at now_ns (loop idle time loop_idle_ns, host reading
 * *h) and starts timing stage `stage` from the same readings. */
void lg_meter_open(lg_meter *m, int64_t now_ns, int64_t loop_idle_ns, const rb_host_reading *h,
                   int stage);

/* One loop callback took dt_ns; counted only inside the window. */
void lg_meter_callback(lg_meter *m, int64_t dt_ns);
/* One SSE event (or a whole non-streamed response); counted only inside the
 * window. */
void lg_meter_event(lg_meter *m);

/* A stage change at now_ns: adds to *closing what happened since the stage
 * being timed (m->stage) opened, up to these readings, then times stage
 * `next` (-1: none) from them. closing is m->stage's stats block (ignored,
 * and may be NULL, when m->stage is -1). A run delay of -1 at either end
 * adds nothing to run_delay_ns. */
void lg_meter_stage(lg_meter *m, int64_t now_ns, int64_t loop_idle_ns, const rb_host_reading *h,
                    int next, lg_stage_stats *closing);

/* Closes the window at now_ns: the stage being timed is closed into *closing
 * (as lg_meter_stage with next -1) and the window's totals go to *slot
 * (window_end_ns, idle_ns, callbacks, svc_sum_ns, svc_sumsq_ns2, events,
 * nivcsw). Returns 1, or 0 (nothing written) when no window was open. */
int lg_meter_end_window(lg_meter *m, int64_t now_ns, int64_t loop_idle_ns, const rb_host_reading *h,
                        lg_stage_stats *closing, lg_slot *slot);

/* A request's content tokens so far (all 0: none yet). */
typedef struct lg_meter_chain {
    int64_t first_ns, first_u_ns; /* the first token's arrival and delivery */
    int64_t last_ns, last_u_ns;   /* the last token's */
    int64_t max_gap_ns;           /* the largest arrival gap (max ITL; 0: none) */
    int64_t tokens;               /* content tokens */
    int64_t last_stamp_ns;        /* the server's stamp of the last token, while
                                   * every token had one (0: none or broken) */
} lg_meter_chain;

/* One content token. */
typedef struct lg_meter_tok {
    int64_t t_ns;         /* arrival: the receive clock's time */
    int64_t tu_ns;        /* delivery: curl's write callback */
    lg_rx_kind kind;      /* what t_ns is: LG_RX_WIRE, _KERNEL, _PICKUP, _DELIVERY */
    lg_rx_kind read_kind; /* the read's own kind, before the wire clock's
                           * choice (LG_RX_DELIVERY: no pickup timed it) */
    int64_t entry_ns;     /* the loop callback's entry, the pickup (0: none) */
    int64_t stamp_ns;     /* the server's send stamp (0: none) */
    int64_t dispatch_ns;  /* the request's dispatch */
} lg_meter_tok;

/* Splits one token's delay into st's histograms and counters and extends
 * the chain:
 *   ITL (arrival gap) and ITL_U (delivery gap) from the second token on;
 *   OVERHEAD = tu - stamp, ITL_S = stamp gap (while the chain of stamps is
 *   unbroken), TTFT_S = first stamp - dispatch (first token only);
 *   PROCESSING = tu - entry (a read timed by a pickup);
 *   for wire and kernel times: CLIENT_DELAY = tu - t, PICKUP = entry - t,
 *   SERVER_SEND = t - stamp; rx_kernel_tokens (and rx_wire_tokens and
 *   rx_exact_tokens for wire: a segment's own time); other kinds count in
 *   rx_user_tokens.
 * Negative values are recorded as 0. */
void lg_meter_token(lg_stage_stats *st, lg_meter_chain *chain, const lg_meter_tok *tok);

#endif
