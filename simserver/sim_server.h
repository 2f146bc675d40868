/* sim_server: the libuv shell of one worker process. It accepts connections
 * on a listening socket, frames requests with sim_http, validates them with
 * sim_api, hands them to sim_engine (the simulation, on a given clock),
 * paces what it says is due with one rb_timer, and writes what sim_render
 * renders. A worker owns its loop, its rng and its prefix cache; it shares
 * only its metrics slot (written by it alone). Runs until SIGINT or
 * SIGTERM, then drains (2 s grace) and returns. */
#ifndef SIM_SERVER_H
#define SIM_SERVER_H

#include <stdint.h>

#include "sim_metrics.h"
#include "sim_model.h"

#define SIM_MAX_MODELS 16

typedef struct sim_config {
    const char *host;
    int port;
    int workers;
    const char *served[SIM_MAX_MODELS]; /* the first is the default */
    int n_served;
    int mode; /* enum sim_mode */
    uint64_t seed;
    sim_latency_cfg lat;
    int64_t max_waiting_queue_length; /* 0 = unlimited */
    int block_size;
    int64_t prefix_cache_blocks;
    int enable_prefix_caching;
    double failure_rate_pct;
    unsigned failure_mask; /* 1u << sim_fault */
    int64_t max_model_len;
    uint64_t max_body_bytes;
    uint64_t max_header_bytes;
    int64_t idle_timeout_ns;
    uint64_t max_write_queue_bytes;
    int64_t shutdown_grace_ns;
    struct rb_tok *tok; /* --tokenizer: prompts counted in its tokens (NULL: words) */
} sim_config;

/* Serves on listen_fd (bound and listening) as worker `index`, updating
 * slots[index] and reading all n_slots for /metrics. Returns 0 after a clean
 * shutdown, 1 on a failure to start. */
int sim_server_run(const sim_config *cfg, int listen_fd, int index, sim_metrics *slots,
                   int n_slots);

#endif
