/* sim_metrics: the server's counters and histograms, and their Prometheus
 * text with vLLM's metric names. A sim_metrics is plain data so that it can
 * live in a shared-memory page: each worker process writes only its own slot
 * (single writer, relaxed atomic stores), and whichever worker answers
 * /metrics sums all slots. Rendering is pure. */
#ifndef SIM_METRICS_H
#define SIM_METRICS_H

#include <stdint.h>

#include "rb_buf.h"
#include "sim_model.h"

#define SIM_HIST_BUCKETS 26
#define SIM_IGNORED_PARAMS 11 /* SIM_IGN_COUNT (sim_api.h; checked there) */

typedef struct sim_hist {
    uint64_t counts[SIM_HIST_BUCKETS + 1]; /* per bucket, last is +Inf */
    uint64_t count;
    uint64_t sum_ns;
} sim_hist;

/* Token counts per request: vLLM's 1-2-5 buckets up to its default
 * max_model_len (32768), then +Inf. */
#define SIM_THIST_BUCKETS 14

typedef struct sim_thist {
    uint64_t counts[SIM_THIST_BUCKETS + 1];
    uint64_t count;
    uint64_t sum;
} sim_thist;

typedef struct sim_metrics {
    int64_t running;
    int64_t waiting;
    uint64_t prompt_tokens;
    uint64_t generation_tokens;
    uint64_t success_stop;
    uint64_t success_length;
    uint64_t faults[SIM_FAULT_COUNT];
    sim_hist ttft;           /* arrival -> first token */
    sim_hist itl;            /* between tokens */
    sim_hist e2e;            /* arrival -> last token */
    sim_hist queue;          /* arrival -> start of prefill */
    sim_hist late;           /* an event's write - its due time (the pacer's lateness) */
    uint64_t prefix_queries; /* prompt tokens looked up in the prefix cache */
    uint64_t prefix_hits;    /* of which found there */
    int64_t kv_blocks_used;  /* blocks the running requests hold */
    int64_t kv_blocks_total; /* the prefix cache's capacity in blocks */
    sim_thist prompt_len;    /* prompt tokens per finished request */
    sim_thist output_len;    /* generated tokens per finished request */
    uint64_t idle_cuts;      /* connections cut by the idle or slow-request timeout */
    int64_t idle_cut_min_ns; /* the shortest silence before such a cut (0 = none yet) */
    uint64_t ignored[SIM_IGNORED_PARAMS]; /* requests that set parameter p (sim_api.h), ignored */
} sim_metrics;

/* Single-writer updates, safe for concurrent readers in other processes. */
#define SIM_METRIC_ADD(field, v)                                                                   \
    __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)

void sim_hist_add(sim_hist *h, int64_t ns);
/* k observations of the same value (the n choices of one request). */
void sim_hist_add_n(sim_hist *h, int64_t ns, uint64_t k);
void sim_thist_add(sim_thist *h, int64_t tokens);
/* out = the sum of n slots (read with relaxed atomic loads). */
void sim_metrics_sum(const sim_metrics *slots, int n, sim_metrics *out);
/* Appends the Prometheus text exposition of m. */
void sim_metrics_render(const sim_metrics *m, const char *model_name, rb_buf *out);

#endif
