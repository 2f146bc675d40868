/* lg_stats: what a run measures, per stage, as one flat block of counters and
 * histograms that can live in shared memory. One worker owns (writes) a
 * block; the coordinator reads it after the worker has exited and merges
 * blocks by addition, so k workers' merged block equals one worker's block
 * over the same requests. Pure: no clocks, no I/O. A few counters are also
 * read live by the coordinator (see lg_stats_live_*), through relaxed atomics. */
#ifndef LG_STATS_H
#define LG_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"
#include "mdl_hist.h"

/* Latency histograms: "_I" from the intended start, "_D" from the dispatch. */
enum {
    LG_H_TTFT_I,
    LG_H_TPOT_I,
    LG_H_E2EL_I,
    LG_H_NTPOT_I,
    LG_H_TTFT_D,
    LG_H_TPOT_D,
    LG_H_E2EL_D,
    LG_H_NTPOT_D,
    LG_H_ITL,      /* gaps between content chunks (start-independent) */
    LG_H_LAG,      /* schedule lag = dispatch - intended */
    LG_H_OVERHEAD, /* per token: client delivery time - server send time */
    /* The same metrics as a client that timestamps on processing would
     * report them: from delivery times (curl's write callback), intended start. */
    LG_H_TTFT_U,
    LG_H_TPOT_U,
    LG_H_E2EL_U,
    LG_H_NTPOT_U,
    LG_H_ITL_U,
    LG_H_CLIENT_DELAY, /* per token: delivery - kernel arrival (the client's own delay) */
    LG_H_PICKUP,       /* per token: pickup (poll callback entry) - kernel arrival */
    LG_H_PROCESSING,   /* per token: delivery - pickup */
    LG_H_SERVER_SEND,  /* per token: kernel arrival - the simulator's send stamp */
    LG_H_FAILED,       /* failed or cancelled requests: intended start to the failure */
    LG_H_RXQ,          /* bytes waiting in the socket's receive queue at each pickup */
    LG_H_RX_WINDOW,    /* per batched token: width of its arrival window (lg_rxclock.h) */
    LG_H_ITL_S,        /* the simulator's send stamps: gaps between content tokens */
    LG_H_TTFT_S,       /* the simulator's send stamp of the first token - dispatch */
    LG_H_SEND_WIRE,    /* the wire clock: the request's first byte captured - dispatch */
    LG_H_TTFT_W,       /* the wire clock: first token - the request's first byte captured */
    /* lengths in tokens of completed requests that carried usage: asked for
     * (the dataset's) and served (the server's usage) */
    LG_H_IN_REQUESTED,
    LG_H_IN_SERVED,
    LG_H_OUT_REQUESTED,
    LG_H_OUT_SERVED,
    LG_N_HISTS
};

/* Failure classes. HTTP errors are counted by status code separately; the
 * classes other than LG_FAIL_HTTP and the codes together sum to `failed`. */
typedef enum {
    LG_OK = 0,
    LG_FAIL_CONNECT,
    LG_FAIL_TIMEOUT,
    LG_FAIL_RESET,
    LG_FAIL_MIDSTREAM,
    LG_FAIL_MALFORMED, /* not a completion: bad JSON or SSE, a non-JSON Content-Type */
    LG_FAIL_TOO_LARGE, /* a non-streamed body past loadgen's 1 MiB limit */
    LG_FAIL_CANCELLED, /* still in flight when the drain timeout ran out */
    LG_FAIL_OTHER,
    LG_FAIL_FD_LIMIT, /* loadgen's own descriptor limit (EMFILE, ENFILE): the client's */
    LG_FAIL_TLS,      /* the TLS handshake, or the server's certificate refused */
    LG_FAIL_HTTP,
    LG_N_CLASSES
} lg_class;
extern const char *const lg_class_names[LG_N_CLASSES];

#define LG_HTTP_CODES 1000 /* every three-digit status curl accepts */

typedef struct lg_stage_stats {
    /* live (relaxed atomics; written by the owner, read by the coordinator) */
    uint64_t dispatched;
    uint64_t done;     /* completed + failed */
    uint64_t lag_over; /* requests whose lag passed the saturation bound */
    uint64_t failed;
    /* final */
    uint64_t completed;
    uint64_t good; /* completed within every goodput SLO */
    uint64_t fail_class[LG_N_CLASSES];
    uint64_t fail_http[LG_HTTP_CODES];
    uint64_t input_tokens, output_tokens;        /* of completed requests */
    uint64_t cached_tokens, cached_of_tokens;    /* usage's cached prompt tokens, of how many */
    uint64_t events;                             /* SSE events (or whole responses) received */
    int64_t first_dispatch_ns, last_dispatch_ns; /* absolute; 0 when none */
    int64_t first_intended_ns, last_intended_ns;
    int64_t last_end_ns;
    /* the simulator's ground truth: sums of per-request per-token parts */
    uint64_t truth_n;
    double truth_queue_ns, truth_prefill_ns, truth_decode_ns, truth_client_ns;
    /* per request, not per token: the server's true TTFT (queue + prefill)
     * and the TTFT measured from the intended start, for the same requests */
    double truth_ttft_ns, truth_measured_ttft_ns;
    double truth_measured_ttft_u_ns; /* the same, user-timed (as delivered) */
    /* receive clock: content tokens timed by the kernel (exact: delivered
     * alone from their pickup; the rest were batched) or by the loop */
    uint64_t rx_kernel_tokens, rx_exact_tokens, rx_user_tokens;
    uint64_t pickups; /* pickups that delivered at least one event */
    /* the wire clock: tokens timed from a captured segment (also counted in
     * rx_kernel_tokens and rx_exact_tokens), tokens that fell back to the
     * kernel's stamp (segment not captured, dropped, or not found), and the
     * capture's packets, kernel drops and draining time */
    uint64_t rx_wire_tokens, wire_fallbacks;
    /* completed requests whose departure (the capture of their first byte)
     * was found, and those whose was not */
    uint64_t departures, departure_fallbacks;
    uint64_t cap_packets, cap_drops;
    int64_t cap_cost_ns;
    /* the worker loop's own accounting over its time in this stage; sums
     * merge, so per-worker utilisation is read from unmerged blocks */
    int64_t loop_window_ns, loop_idle_ns;
    uint64_t svc_n;
    double svc_sum_ns, svc_sumsq_ns2;
    /* host evidence over the same time: this process's runnable-but-waiting
     * time (schedstat run_delay), involuntary switches, and the host's
     * steal and total CPU time (/proc/stat) */
    int64_t run_delay_ns, nivcsw;
    int64_t host_steal_ns, host_cpu_ns;
    uint64_t lora_requests[LG_MAX_LORA]; /* --lora-modules: requests per name (lg_lora.h) */
    uint64_t not_dispatched;             /* arrivals of this stage never sent (stop or deadline) */
    /* workers whose not_dispatched is a lower bound (a timed stage's rest
     * past the count a worker draws at a stop: lg_sched_rest_for) */
    uint64_t not_dispatched_partial;
    /* followed by LG_N_HISTS histograms of lg_stats_hist_bytes() each */
} lg_stage_stats;

/* Bytes of one histogram and of one whole block. */
size_t lg_stats_hist_bytes(void);
size_t lg_stats_block_bytes(void);
mdl_hist *lg_stats_hist(lg_stage_stats *s, int id);
const mdl_hist *lg_stats_hist_c(const lg_stage_stats *s, int id);

/* Initialises a block. zeroed != 0 says the memory is already all zero (a
 * fresh anonymous mapping): then only the histograms' headers are written,
 * so pages that are never recorded into are never touched. */
void lg_stats_init(lg_stage_stats *s, int zeroed);
/* Allocates an initialised block (malloc'd; free with free()). */
lg_stage_stats *lg_stats_new(void);
/* dst += src, exactly. */
void lg_stats_merge(lg_stage_stats *dst, const lg_stage_stats *src);

/* One finished request, as the worker saw it. Times are absolute ns. */
typedef struct lg_req_result {
    int64_t intended_ns, dispatch_ns;
    int64_t first_token_ns;   /* 0: no content token (kernel receive time) */
    int64_t end_ns;           /* the last byte's receive time (kernel) */
    int64_t first_token_u_ns; /* the same two as delivered (user time); 0: same */
    int64_t end_u_ns;
    int64_t input_tokens, output_tokens;
    int has_cached; /* the server reported usage.prompt_tokens_details.cached_tokens */
    int64_t cached_tokens;
    int64_t max_itl_ns; /* largest gap between content chunks (0: none) */
    lg_class cls;
    int http_status;
    int has_truth;
    int64_t truth_queue_ns, truth_prefill_ns, truth_decode_ns;
    /* the wire clock: the capture time of the request's first and last
     * bytes as they left (0: not captured) */
    int64_t sent_wire_ns, sent_wire_last_ns;
} lg_req_result;

/* Records a request's outcome (dispatch must have been counted already with
 * lg_stats_record_dispatch). Failed requests count only as failures. */
void lg_stats_record_request(lg_stage_stats *s, const lg_req_result *r, const lg_goodput *g);
/* Records a dispatch and its schedule lag; lag_bound_ns feeds lag_over. */
void lg_stats_record_dispatch(lg_stage_stats *s, int64_t intended_ns, int64_t dispatch_ns,
                              int64_t lag_bound_ns);
/* Records v (ns, bytes) into histogram `hist`; a negative v as 0. */
static inline void lg_stats_record_ns(lg_stage_stats *s, int hist, int64_t v)
{
    mdl_hist_record(lg_stats_hist(s, hist), v > 0 ? (uint64_t)v : 0);
}
static inline void lg_stats_record_itl(lg_stage_stats *s, int64_t gap_ns)
{
    lg_stats_record_ns(s, LG_H_ITL, gap_ns);
}

/* Whether a finished request meets every goodput SLO (intended-start times). */
int lg_goodput_ok(const lg_goodput *g, const lg_req_result *r);

/* Relaxed-atomic access to the live counters. */
static inline uint64_t lg_stats_live_load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void lg_stats_live_add(uint64_t *p, uint64_t v)
{
    /* Single writer: a relaxed load + store is enough and cheaper than a
     * locked add. */
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

#endif
