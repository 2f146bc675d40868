/* lg_bias: the client-bias figures of one stage (or of the whole run) and
 * their verdict, from the workers' measurement blocks. Pure: no clocks, no
 * I/O; the coordinator calls it after the workers have exited.
 *
 * Per stage: each worker's utilisation and PK prediction from its own block
 * (the worst worker counts), the client's own delay per token (kernel
 * arrival to delivery) split into pickup and processing, the server's send
 * path (simulator stamp to kernel arrival), the receive queue at pickup, the
 * share of tokens the kernel timed, host evidence (run-queue wait, steal),
 * the schedule (lag, achieved ratio, arrival test), and mdl_verdict's
 * judgement of them. */
#ifndef LG_BIAS_H
#define LG_BIAS_H

#include <stddef.h>
#include <stdint.h>

#include "lg_slots.h"
#include "lg_stats.h"
#include "mdl_verdict.h"

/* Gaps shorter than this are below the resolution that matters to an
 * inference server (its time per token is milliseconds): the arrival test
 * compares offered with intended gaps only where the intended one is longer. */
#define LG_ARRIVAL_RESOLUTION_NS 1000000LL
/* Offered and intended gaps that differ by less than this count as equal:
 * the dispatch timer's own noise on a shared host (tens of microseconds). */
#define LG_ARRIVAL_TOLERANCE_NS 100000LL

typedef struct lg_arrival_test {
    int tested;
    const char *test;   /* "ks2" (offered vs intended gaps) */
    char model[64];     /* the process asked for: "gamma(shape=1)", "constant" */
    size_t n;           /* gaps tested (intended gap >= the resolution) */
    double below_share; /* share of intended gaps below the resolution (not tested) */
    double resolution_ms, tolerance_ms;
    double statistic, p_value;
    char note[160]; /* why it was skipped, when it was */
} lg_arrival_test;

/* A distribution's summary, in the unit of the caller's scale. */
typedef struct lg_dist {
    double mean, p50, p99, max;
    uint64_t n;
} lg_dist;
/* From a histogram of ns (or bytes), divided by scale. n = 0: NANs. */
void lg_dist_of(const mdl_hist *h, double scale, lg_dist *d);

typedef struct lg_bias_stage {
    /* the loop: worst worker */
    double max_rho;
    int worst_worker;
    double predicted_wq_us;
    /* the client's own delay per token, us */
    lg_dist client_delay_us, pickup_delay_us, processing_us, server_send_us;
    lg_dist overhead_us; /* the simulator's send stamp to delivery (server send + client) */
    lg_dist rx_queue_bytes;
    lg_dist rx_window_us; /* batched tokens: width of their arrival window */
    uint64_t kernel_tokens, exact_tokens, user_tokens, pickups;
    uint64_t wire_tokens; /* of kernel_tokens: timed from a captured segment */
    double wire_share;    /* tokens with a kernel time (NAN: no token) */
    double exact_share;   /* tokens whose kernel time is exact within LG_RX_EXACT_TOL_NS */
    double capture_share; /* tokens timed from a captured segment (the wire clock) */
    /* host evidence */
    double run_delay_share; /* worst worker: run-queue wait over its loop window */
    double run_delay_ms;    /* summed over workers */
    double nivcsw;          /* summed over workers */
    double steal_share;     /* host-wide steal over CPU time */
    /* the schedule */
    double lag_p99_us, lag_p99_lo_us, achieved_ratio; /* lo: the p99's lower 95% bound */
    lg_arrival_test arrival;
    mdl_verdict verdict;
} lg_bias_stage;

/* One worker's utilisation and PK W_q over a block's loop accounting (NAN
 * when the block saw no loop time). */
void lg_bias_worker_loop(const lg_stage_stats *s, double *rho, double *wq_us,
                         double *run_delay_share);

/* Fills b from one stage: blocks[w] is worker w's block (NULL: lost), merged
 * their sum. closed: a closed loop (no schedule to judge). */
void lg_bias_stage_figures(const lg_stage_stats *const *blocks, int k, const lg_stage_stats *merged,
                           int closed, lg_bias_stage *b);

/* The arrival test of one stage (stage < 0: every stage) over the dispatch
 * samples all[0..m), sorted by index with indices contiguous. model names
 * the process asked for. */
void lg_bias_arrival_test(const lg_dispatch_sample *all, size_t m, int stage, const char *model,
                          lg_arrival_test *t);

typedef struct lg_bias_budget {
    double safe_rho; /* from the certificate (NAN: none) */
    double mean_us, p99_us;
    double transport_us; /* the certificate's transport term (NAN: none) */
} lg_bias_budget;

/* Judges b (its verdict). Without kernel times the client delay is the
 * stamp-to-delivery overhead less the certificate's transport term, or, with
 * no stamps, the processing time alone (which misses wake-ups: the reason
 * says so). */
void lg_bias_judge(lg_bias_stage *b, const lg_bias_budget *budget);

#endif
