/* sim_model: see sim_model.h. */
#include "sim_model.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double sim_load_factor(const sim_latency_cfg *c, int64_t running)
{
    if (c->max_num_seqs <= 1 || c->time_factor_under_load <= 1.0) return 1.0;
    if (running < 1) running = 1;
    if (running > c->max_num_seqs) running = c->max_num_seqs;
    return 1.0 + (c->time_factor_under_load - 1.0) * (double)(running - 1) /
                     (double)(c->max_num_seqs - 1);
}

static int64_t jitter(int64_t mean_ns, int64_t sd_ns, gsl_rng *rng)
{
    if (sd_ns <= 0 || !rng) return mean_ns;
    double v = (double)mean_ns + gsl_ran_gaussian(rng, (double)sd_ns);
    return v > 0 ? (int64_t)v : 0;
}

static int64_t scale(int64_t ns, double f)
{
    if (f == 1.0) return ns;
    double v = (double)ns * f;
    return v > 9e18 ? (int64_t)9e18 : (int64_t)v;
}

int64_t sim_model_ttft_ns(const sim_latency_cfg *c, gsl_rng *rng, int64_t uncached_tokens,
                          int64_t running)
{
    int64_t base;
    if (c->ttft_ns > 0) {
        base = c->ttft_ns;
    } else {
        if (uncached_tokens < 0) uncached_tokens = 0;
        base = c->prefill_overhead_ns + c->prefill_per_token_ns * uncached_tokens;
    }
    return scale(jitter(base, c->ttft_sd_ns, rng), sim_load_factor(c, running));
}

int64_t sim_model_itl_ns(const sim_latency_cfg *c, gsl_rng *rng, int64_t running)
{
    return scale(jitter(c->itl_ns, c->itl_sd_ns, rng), sim_load_factor(c, running));
}

int sim_model_is_instant(const sim_latency_cfg *c)
{
    return c->ttft_ns == 0 && c->ttft_sd_ns == 0 && c->prefill_overhead_ns == 0 &&
           c->prefill_per_token_ns == 0 && c->itl_ns == 0 && c->itl_sd_ns == 0;
}

/* ---- prefix cache ---- */

int sim_cache_init(sim_prefix_cache *c, int64_t capacity_blocks, int block_size)
{
    memset(c, 0, sizeof *c);
    if (capacity_blocks < 0 || capacity_blocks > (1 << 28) || block_size < 1) return -EINVAL;
    c->capacity = capacity_blocks;
    c->block_size = block_size;
    c->lru_head = c->lru_tail = -1;
    if (capacity_blocks == 0) return 0;
    uint32_t nb = 16;
    while (nb < (uint64_t)capacity_blocks * 2)
        nb *= 2;
    c->n_buckets = nb;
    c->buckets = malloc(nb * sizeof *c->buckets);
    c->nodes = malloc((size_t)capacity_blocks * sizeof *c->nodes);
    if (!c->buckets || !c->nodes) {
        sim_cache_free(c);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < nb; i++)
        c->buckets[i] = -1;
    return 0;
}

void sim_cache_free(sim_prefix_cache *c)
{
    free(c->buckets);
    free(c->nodes);
    c->buckets = NULL;
    c->nodes = NULL;
}

static uint32_t bucket_of(const sim_prefix_cache *c, uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (c->n_buckets - 1);
}

static int32_t find(const sim_prefix_cache *c, uint64_t key)
{
    for (int32_t i = c->buckets[bucket_of(c, key)]; i >= 0; i = c->nodes[i].bucket_next)
        if (c->nodes[i].key == key) return i;
    return -1;
}

static void lru_unlink(sim_prefix_cache *c, int32_t i)
{
    sim_cache_node *n = &c->nodes[i];
    if (n->lru_prev >= 0)
        c->nodes[n->lru_prev].lru_next = n->lru_next;
    else
        c->lru_head = n->lru_next;
    if (n->lru_next >= 0)
        c->nodes[n->lru_next].lru_prev = n->lru_prev;
    else
        c->lru_tail = n->lru_prev;
}

static void lru_push_front(sim_prefix_cache *c, int32_t i)
{
    sim_cache_node *n = &c->nodes[i];
    n->lru_prev = -1;
    n->lru_next = c->lru_head;
    if (c->lru_head >= 0) c->nodes[c->lru_head].lru_prev = i;
    c->lru_head = i;
    if (c->lru_tail < 0) c->lru_tail = i;
}

static void bucket_remove(sim_prefix_cache *c, int32_t i)
{
    int32_t *link = &c->buckets[bucket_of(c, c->nodes[i].key)];
    while (*link != i)
        link = &c->nodes[*link].bucket_next;
    *link = c->nodes[i].bucket_next;
}

static void touch_or_insert(sim_prefix_cache *c, uint64_t key)
{
    int32_t i = find(c, key);
    if (i >= 0) {
        lru_unlink(c, i);
        lru_push_front(c, i);
        return;
    }
    if (c->n_used < c->capacity) {
        i = c->n_used++;
    } else {
        i = c->lru_tail; /* evict the least recently used block */
        lru_unlink(c, i);
        bucket_remove(c, i);
    }
    c->nodes[i].key = key;
    uint32_t b = bucket_of(c, key);
    c->nodes[i].bucket_next = c->buckets[b];
    c->buckets[b] = i;
    lru_push_front(c, i);
}

static uint64_t chain(uint64_t h, uint64_t tok)
{
    h ^= tok + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

int64_t sim_cache_lookup_insert(sim_prefix_cache *c, const uint64_t *tok_hash, int64_t n_tokens)
{
    if (c->capacity == 0 || n_tokens <= 0) return 0;
    int64_t bs = c->block_size;
    int64_t full = n_tokens / bs;
    int64_t countable = (n_tokens - 1) / bs; /* blocks that end before the last token */
    int64_t cached_blocks = 0;
    int still_hitting = 1;
    uint64_t h = 0x6b762d6361636865ULL;
    for (int64_t b = 0; b < full; b++) {
        for (int64_t k = 0; k < bs; k++)
            h = chain(h, tok_hash[b * bs + k]);
        if (b < countable) c->lookups++;
        if (still_hitting && b < countable && find(c, h) >= 0) {
            cached_blocks++;
            c->hits++;
        } else {
            still_hitting = 0;
        }
        touch_or_insert(c, h);
    }
    return cached_blocks * bs;
}

/* ---- output tokens ---- */

static const char *const vocab[] = {
    "the",    "of",     "and",    "to",    "in",     "a",      "is",      "that",
    "for",    "it",     "as",     "was",   "with",   "be",     "by",      "on",
    "not",    "he",     "this",   "are",   "or",     "his",    "from",    "at",
    "which",  "but",    "have",   "an",    "had",    "they",   "you",     "were",
    "their",  "one",    "all",    "we",    "can",    "her",    "has",     "there",
    "been",   "if",     "more",   "when",  "will",   "would",  "who",     "so",
    "no",     "time",   "model",  "token", "server", "queue",  "latency", "request",
    "stream", "answer", "system", "value", "result", "number", "data",    "first",
};
#define VOCAB_N (sizeof vocab / sizeof vocab[0])

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

sim_token sim_model_token(const sim_req_spec *s, int mode, uint64_t seed, int64_t i)
{
    sim_token t;
    if (mode == SIM_MODE_ECHO && s->prompt_tokens > 0) {
        int64_t k = i % s->prompt_tokens;
        t.word = s->words + s->word_off[k];
        t.len = s->word_off[k + 1] - s->word_off[k];
        if (t.len > SIM_TOKEN_MAX_BYTES) {
            /* Cut on a UTF-8 boundary: back off continuation bytes. */
            t.len = SIM_TOKEN_MAX_BYTES;
            while (t.len > 0 && ((unsigned char)t.word[t.len] & 0xC0) == 0x80)
                t.len--;
        }
        return t;
    }
    const char *w = vocab[mix(seed ^ mix(s->prompt_hash ^ (uint64_t)i)) % VOCAB_N];
    t.word = w;
    t.len = strlen(w);
    return t;
}

sim_token sim_model_choice_token(const sim_req_spec *s, int mode, uint64_t seed, int c, int64_t i)
{
    if (c == 0 || (mode == SIM_MODE_ECHO && s->prompt_tokens > 0))
        return sim_model_token(s, mode, seed, i);
    uint64_t h = mix(mix(s->prompt_hash ^ (uint64_t)i) ^ (0x63686f6963650000ULL + (uint64_t)c));
    const char *w = vocab[mix(seed ^ h) % VOCAB_N];
    return (sim_token){w, strlen(w)};
}

/* A uniform double in [0, 1) from a hash. */
static double unit(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

void sim_model_logprobs(const sim_req_spec *s, uint64_t server_seed, int c, int64_t i,
                        sim_token chosen, int n_alt, sim_logprobs *out)
{
    uint64_t h = mix((s->has_seed ? s->seed : server_seed) ^ mix(s->prompt_hash ^ (uint64_t)i) ^
                     mix(0x6c6f6770726f6273ULL + (uint64_t)c));
    double p0 = 0.5 + 0.5 * unit(h);
    double rest = 1.0 - p0;
    out->lp = log(p0);
    if (n_alt > SIM_LOGPROBS_MAX) n_alt = SIM_LOGPROBS_MAX;
    if (n_alt < 0) n_alt = 0;
    out->n_alt = n_alt;
    /* Alternatives: distinct vocabulary words, never the chosen token's text. */
    size_t start = (size_t)(mix(h ^ 0x616c74ULL) % VOCAB_N), k = 0;
    for (int a = 0; a < n_alt; a++) {
        const char *w;
        do
            w = vocab[(start + k++) % VOCAB_N];
        while (strlen(w) == chosen.len && memcmp(w, chosen.word, chosen.len) == 0);
        out->alt[a] = (sim_token){w, strlen(w)};
        /* Its share of the rest in [2^-(a+2), 2^-(a+1)): non-increasing,
         * summing below 1. */
        double w_a = ldexp(0.5 + 0.5 * unit(mix(h + (uint64_t)a + 1)), -(a + 1));
        out->alt_lp[a] = log(rest * w_a);
    }
}

int64_t sim_model_output_tokens(const sim_req_spec *s, int mode, int *finish_stop)
{
    *finish_stop = 0;
    if (mode == SIM_MODE_ECHO && !s->ignore_eos && s->prompt_tokens < s->max_tokens) {
        *finish_stop = 1;
        return s->prompt_tokens;
    }
    return s->max_tokens;
}

/* ---- faults ---- */

static const struct {
    const char *name;
    int status;
} faults[SIM_FAULT_COUNT] = {
    [SIM_FAULT_NONE] = {"none", 0},
    [SIM_FAULT_RATE_LIMIT] = {"rate_limit", 429},
    [SIM_FAULT_SERVER_ERROR] = {"server_error", 500},
    [SIM_FAULT_UNAVAILABLE] = {"unavailable", 503},
    [SIM_FAULT_INVALID_REQUEST] = {"invalid_request", 400},
    [SIM_FAULT_INVALID_API_KEY] = {"invalid_api_key", 401},
    [SIM_FAULT_CONNECTION_RESET] = {"connection_reset", 0},
    [SIM_FAULT_MIDSTREAM_DROP] = {"midstream_drop", 0},
    [SIM_FAULT_MALFORMED_CHUNK] = {"malformed_chunk", 0},
    [SIM_FAULT_STALL] = {"stall", 0},
};

const char *sim_fault_name(sim_fault f)
{
    return f < SIM_FAULT_COUNT ? faults[f].name : "unknown";
}

int sim_fault_status(sim_fault f)
{
    return f < SIM_FAULT_COUNT ? faults[f].status : 0;
}

sim_fault sim_fault_parse(const char *name)
{
    for (int f = 1; f < SIM_FAULT_COUNT; f++)
        if (strcmp(name, faults[f].name) == 0) return (sim_fault)f;
    return SIM_FAULT_NONE;
}

int sim_fault_parse_list(const char *list, unsigned *mask, char *bad, size_t bad_len)
{
    unsigned m = 0;
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[40];
        if (n == 0 || n >= sizeof name) {
            snprintf(bad, bad_len, "%.*s", (int)(n < 39 ? n : 39), p);
            return -1;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        if (strcmp(name, "all") == 0) {
            m |= ((1u << SIM_FAULT_COUNT) - 1) & ~1u;
        } else {
            sim_fault f = sim_fault_parse(name);
            if (f == SIM_FAULT_NONE) {
                snprintf(bad, bad_len, "%s", name);
                return -1;
            }
            m |= 1u << f;
        }
        p += n;
        if (*p == ',') p++;
    }
    if (m == 0) {
        snprintf(bad, bad_len, "%s", list);
        return -1;
    }
    *mask = m;
    return 0;
}

sim_fault sim_fault_draw(gsl_rng *rng, double rate_pct, unsigned mask)
{
    if (rate_pct <= 0 || mask == 0) return SIM_FAULT_NONE;
    if (gsl_rng_uniform(rng) * 100.0 >= rate_pct) return SIM_FAULT_NONE;
    int n = __builtin_popcount(mask);
    int k = (int)gsl_rng_uniform_int(rng, (unsigned long)n);
    for (int f = 1; f < SIM_FAULT_COUNT; f++)
        if (mask & (1u << f) && k-- == 0) return (sim_fault)f;
    return SIM_FAULT_NONE;
}
