/* sim_model: the simulated engine's numbers. The latency model (time to first
 * token, inter-token latency, jitter, slow-down under load), the prefix cache
 * over hashed prompt blocks, the output tokens, and the fault catalogue.
 * Pure: randomness comes from a gsl_rng passed in, time from the caller.
 * A cache is owned by one worker loop; not thread-safe. */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "sim_api.h"

typedef struct sim_latency_cfg {
    int64_t ttft_ns;               /* --time-to-first-token; 0 = from prefill */
    int64_t ttft_sd_ns;            /* --time-to-first-token-std-dev */
    int64_t prefill_overhead_ns;   /* --prefill-overhead */
    int64_t prefill_per_token_ns;  /* --prefill-time-per-token */
    int64_t itl_ns;                /* --inter-token-latency */
    int64_t itl_sd_ns;             /* --inter-token-latency-std-dev */
    int64_t max_num_seqs;          /* 0 = unlimited */
    double time_factor_under_load; /* >= 1; 1 = no slow-down */
} sim_latency_cfg;

/* Slow-down with `running` requests in the engine (this one included):
 * 1 + (factor - 1) * (running - 1) / (max_num_seqs - 1), with running
 * clamped to [1, max_num_seqs]; 1 when max_num_seqs <= 1 or factor <= 1. */
double sim_load_factor(const sim_latency_cfg *c, int64_t running);

/* Time to first token, from the start of prefill: time_to_first_token when
 * set, else prefill_overhead + prefill_per_token * uncached_tokens; then
 * Gaussian jitter of sd time_to_first_token_std_dev (clamped at 0), then the
 * load factor. rng may be NULL only when the std-dev is 0. */
int64_t sim_model_ttft_ns(const sim_latency_cfg *c, gsl_rng *rng, int64_t uncached_tokens,
                          int64_t running);
/* One inter-token gap: inter_token_latency + Gaussian jitter (clamped at 0),
 * times the load factor. */
int64_t sim_model_itl_ns(const sim_latency_cfg *c, gsl_rng *rng, int64_t running);
/* True when every delay is zero, so a response can be written at once. */
int sim_model_is_instant(const sim_latency_cfg *c);

/* The prefix cache: full blocks of block_size prompt tokens, each keyed by a
 * hash chained over all tokens before it, evicted least recently used. */
typedef struct sim_cache_node {
    uint64_t key;
    int32_t bucket_next;
    int32_t lru_prev, lru_next;
} sim_cache_node;

typedef struct sim_prefix_cache {
    int64_t capacity; /* blocks */
    int block_size;   /* tokens per block */
    int32_t *buckets;
    uint32_t n_buckets; /* power of two */
    sim_cache_node *nodes;
    int32_t n_used;
    int32_t lru_head, lru_tail; /* head = most recent */
    int64_t hits, lookups;      /* blocks */
} sim_prefix_cache;

/* capacity 0 makes a cache that never hits. Returns 0 or -ENOMEM/-EINVAL. */
int sim_cache_init(sim_prefix_cache *c, int64_t capacity_blocks, int block_size);
void sim_cache_free(sim_prefix_cache *c);
/* Looks up the prompt's leading full blocks, then inserts all its full
 * blocks as most recently used. Returns the cached tokens: the length of the
 * longest run of leading blocks found, counting only blocks that end before
 * the prompt's last token (as vLLM, the last token is always computed). */
int64_t sim_cache_lookup_insert(sim_prefix_cache *c, const uint64_t *tok_hash, int64_t n_tokens);

/* An echoed token is at most this many bytes of its prompt word, so that no
 * response grows past max_tokens x (this + 1) bytes of text. */
#define SIM_TOKEN_MAX_BYTES 256

/* Output token i of a response (its text is sent with one leading space).
 * Random mode: a word of a fixed vocabulary chosen by a hash of (seed,
 * prompt, i), so the same request gets the same text. Echo mode: the
 * prompt's word i modulo its length (random words for an empty prompt). The
 * word points into the spec or into static storage. */
enum sim_mode { SIM_MODE_RANDOM = 0, SIM_MODE_ECHO = 1 };
typedef struct sim_token {
    const char *word; /* without the leading space */
    size_t len;
} sim_token;
sim_token sim_model_token(const sim_req_spec *s, int mode, uint64_t seed, int64_t i);
/* Token i of choice c (n > 1): choice 0 is sim_model_token's; the others
 * draw their random words with c mixed in (echo mode: the same words, as
 * greedy decoding would give every choice). */
sim_token sim_model_choice_token(const sim_req_spec *s, int mode, uint64_t seed, int c, int64_t i);

/* Synthetic log-probabilities of one output token: the chosen token is the
 * most likely (p in [0.5, 1)), the alternatives share what is left in
 * non-increasing shares, so every value is < 0, none above the chosen
 * token's, and their probabilities sum below 1. Alternatives are vocabulary
 * words other than the chosen one. The values depend only on (the request's
 * "seed" if it gave one, else the server's, the prompt, c, i), so the same
 * request gets the same numbers. */
typedef struct sim_logprobs {
    double lp; /* the chosen token's */
    int n_alt; /* alternatives, most likely first */
    sim_token alt[SIM_LOGPROBS_MAX];
    double alt_lp[SIM_LOGPROBS_MAX];
} sim_logprobs;
void sim_model_logprobs(const sim_req_spec *s, uint64_t server_seed, int c, int64_t i,
                        sim_token chosen, int n_alt, sim_logprobs *out);

/* Tokens a response will have, and whether it ends by "stop" (echo mode
 * running out of prompt without ignore_eos) rather than "length". */
int64_t sim_model_output_tokens(const sim_req_spec *s, int mode, int *finish_stop);

/* Faults. */
typedef enum sim_fault {
    SIM_FAULT_NONE = 0,
    SIM_FAULT_RATE_LIMIT,      /* 429 */
    SIM_FAULT_SERVER_ERROR,    /* 500 */
    SIM_FAULT_UNAVAILABLE,     /* 503 */
    SIM_FAULT_INVALID_REQUEST, /* 400 */
    SIM_FAULT_INVALID_API_KEY, /* 401 */
    SIM_FAULT_CONNECTION_RESET,
    SIM_FAULT_MIDSTREAM_DROP,
    SIM_FAULT_MALFORMED_CHUNK,
    SIM_FAULT_STALL,
    SIM_FAULT_COUNT
} sim_fault;

const char *sim_fault_name(sim_fault f);
/* The HTTP status of an error fault, 0 for the others. */
int sim_fault_status(sim_fault f);
/* Name -> fault, or SIM_FAULT_NONE if unknown. */
sim_fault sim_fault_parse(const char *name);
/* "a,b,c" -> bit mask (1u << fault). Returns 0, or -1 with the bad name
 * copied into bad (size bad_len). "all" means every type. */
int sim_fault_parse_list(const char *list, unsigned *mask, char *bad, size_t bad_len);
/* Draws whether a request fails (rate_pct in [0,100]) and which type,
 * uniformly over the mask. */
sim_fault sim_fault_draw(gsl_rng *rng, double rate_pct, unsigned mask);

#endif
