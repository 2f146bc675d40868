/* lg_dataset: where the prompts come from. A dataset is a bounded pool of
 * prompts built before the run (memory stays bounded however long the run):
 * request with global index i uses pool entry i % n, so prompts repeat only
 * once the run has made more than n requests (see lg_pool_size_for). Pure apart from reading
 * the dataset file in lg_dataset_load_*; GSL draws the random lengths from
 * the seed, so every worker builds the identical pool. */
#ifndef LG_DATASET_H
#define LG_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "lg_sched.h"
#include "lg_trace.h" /* the trace CSV, replayed rather than pooled */

typedef struct lg_prompt {
    char *text;            /* the prompt text, NUL-terminated */
    int32_t input_tokens;  /* its length by simserver's counting rule */
    int32_t output_tokens; /* max_tokens to ask for */
    /* shared-prefix: bytes of text that are the group's system prompt (the
     * question follows after one space); 0 for the other datasets, or no
     * system prompt. A multi-turn session starts from it (lg_session.h). */
    uint32_t prefix_len;
} lg_prompt;

typedef struct lg_dataset {
    lg_prompt *items;
    size_t n;
} lg_dataset;

typedef enum { LG_LEN_FIXED, LG_LEN_UNIFORM, LG_LEN_NORMAL, LG_LEN_LOGNORMAL } lg_len_dist;

/* Inference Perf's length distribution (its generate_distribution): normal
 * N(mean, std_dev), lognormal of that mean and std_dev above min, uniform
 * in [min, max], each clipped to [min, max] and rounded (half to even, as
 * numpy rounds); fixed is the mean, truncated. on = 0: not given. */
typedef struct lg_len_ip {
    int on;
    lg_len_dist type;
    double mean, std_dev;
    int32_t min, max;
} lg_len_ip;

typedef struct lg_random_spec {
    uint64_t seed;
    size_t n;                      /* pool size (>= 1) */
    int32_t input_len, output_len; /* means */
    double range_ratio; /* uniform: [len*(1-r), len*(1+r)]; normal/lognormal: sd = len*r */
    lg_len_dist dist;
    /* > 0: the prompts are token ids drawn uniformly from [0, vocab) instead
     * of words; the text holds them as space-separated decimals (one id a
     * word, so lg_count_tokens counts them) and lg_body_render sends them as
     * "prompt": [ids]. 0: words. */
    int32_t vocab;
    lg_len_ip in_ip, out_ip; /* when on, they draw the lengths instead */
    /* vLLM's --random-prefix-len: this many tokens (words, ids, or with a
     * tokenizer exact tokens) drawn once from the seed's own stream and put
     * before every prompt's random part; input_tokens counts them. */
    int32_t prefix_len;
} lg_random_spec;

/* Parses "mean:M[,std_dev:S][,min:A][,max:B][,type:normal|lognormal|uniform|
 * fixed]" (defaults: std_dev 0, min 1, max 1000000, type normal). 0, or -1
 * with why (the bad part named). */
int lg_len_ip_parse(const char *s, lg_len_ip *out, char *why, size_t n);

typedef struct lg_prefix_spec {
    uint64_t seed;
    int32_t groups, prompts_per_group;
    int32_t system_prompt_len, question_len, output_len; /* system_prompt_len may be 0 */
    int32_t vocab;                                       /* > 0: token ids, as lg_random_spec's */
} lg_prefix_spec;

/* Each returns 0 or a negative errno with a message naming the problem in err
 * ("dataset: line 12: ..."). lg_dataset_free frees what they built. */
int lg_dataset_random(const lg_random_spec *spec, lg_dataset *out, char *err, size_t errlen);
int lg_dataset_shared_prefix(const lg_prefix_spec *spec, lg_dataset *out, char *err, size_t errlen);
/* A ShareGPT JSON file (an array of {"conversations":[{"from":"human","value":...},
 * {"from":"gpt","value":...}]}): the first human turn is the prompt, the gpt
 * turn's length sets output_tokens (at least 1). Entries without a human turn
 * followed by a gpt turn are skipped ("user"/"assistant" count as the same).
 * At most max_n entries are kept (0: all). */
int lg_dataset_sharegpt_parse(const char *json, size_t len, size_t max_n, lg_dataset *out,
                              char *err, size_t errlen);
int lg_dataset_load_sharegpt(const char *path, size_t max_n, lg_dataset *out, char *err,
                             size_t errlen);
void lg_dataset_free(lg_dataset *d);
/* Reads a dataset file whole (at most LG_MAX_FILE_BYTES): 0, or a negative
 * errno with err "KIND PATH: cannot read: why". */
int lg_dataset_read_file(const char *kind, const char *path, char **buf, size_t *len, char *err,
                         size_t errlen);

/* ShareGPT as vLLM's benchmark samples it (ShareGPTDataset.sample): the
 * entries shuffled from the seed (loadgen's generator: the same seed picks
 * other entries than Python's random.shuffle), then, unless filter is 0,
 * those dropped that vLLM's is_valid_sequence drops: a prompt under 4
 * tokens or over 1,024, an output under 4 (not checked when output_len is
 * given), prompt + output over 2,048; the first max_n kept (0: all). With
 * output_len > 0 every request asks for that many tokens (vLLM's
 * --sharegpt-output-len). Lengths are those lg_count_tokens gave, plus the
 * tokenizer's special tokens (vLLM counts tokenizer(text).input_ids, a BOS
 * included, for both). In place; 0, or -EINVAL when nothing is left (err
 * says how many entries the filter dropped). */
typedef struct lg_sharegpt_spec {
    uint64_t seed;
    size_t max_n;
    int32_t output_len;
    int shuffle, filter;
} lg_sharegpt_spec;
int lg_dataset_sharegpt_sample(lg_dataset *d, const lg_sharegpt_spec *spec, char *err,
                               size_t errlen);
/* Shuffles the items in place (Fisher-Yates) from the generator seeded with
 * (seed, stream): 2 is ShareGPT's, 3 the custom dataset's. 0 or -ENOMEM. */
int lg_dataset_shuffle(lg_dataset *d, uint64_t seed, uint64_t stream);

/* Sizing the pool. A pool that is smaller than the run repeats prompts, and
 * a server's prefix cache then answers the repeats faster than fresh ones.
 * The default pool therefore holds one prompt per planned arrival, bounded
 * by memory: lg_pool_bytes_per_prompt is what one prompt of about `tokens`
 * synthetic words costs (its text and its rendered request body);
 * lg_pool_size_for is min(arrivals, budget / bytes_per_prompt, LG_POOL_MAX),
 * at least 1; arrivals < 0 means unknown (then the memory bound). */
#define LG_POOL_MAX 10000000
#define LG_POOL_BUDGET_BYTES ((size_t)512 << 20)
/* The largest dataset or trace file read (whole, into memory). */
#define LG_MAX_FILE_BYTES ((size_t)1 << 30) /* ShareGPT V3 is 0.65 GB */
size_t lg_pool_bytes_per_prompt(int64_t tokens);
size_t lg_pool_size_for(int64_t arrivals, size_t bytes_per_prompt, size_t budget_bytes);

/* The random dataset without a pool: each request's prompt made on its own
 * when it is sent, from (spec->seed, index) alone, with the same length
 * distributions and word list as lg_dataset_random (another generator,
 * reseeded per index: the prompts are not the pool's, and every process
 * makes the same one for the same index). No memory grows with the run and
 * nothing is built before it; a prompt is never repeated. The default for
 * runs longer than LG_POOL_EAGER_MAX requests or of unknown length
 * (lg_cli's size_pool). spec->n is ignored. Single-threaded per generator. */
#define LG_POOL_EAGER_MAX 16384
typedef struct lg_random_gen lg_random_gen;
/* NULL on no memory or a spec lg_dataset_random would refuse (err says which). */
lg_random_gen *lg_random_gen_new(const lg_random_spec *spec, char *err, size_t errlen);
/* Request index's prompt: out->text malloc'd (the caller frees). 0 or -ENOMEM. */
int lg_random_gen_at(lg_random_gen *g, uint64_t index, lg_prompt *out);
void lg_random_gen_free(lg_random_gen *g);

/* The prompt-token counting rule shared with simserver: the number of
 * maximal runs of non-space bytes (whitespace-separated words); with a
 * tokenizer set, its tokens (special tokens not counted). */
int32_t lg_count_tokens(const char *text, size_t len);

/* --tokenizer: lengths counted in its tokens from now on (lg_count_tokens,
 * ShareGPT), text prompts of the random and shared-prefix datasets built to
 * exact token lengths, and token-id prompts drawn from its ids that are not
 * special (vocab is then ignored). NULL: words again. Not owned; set once,
 * before the datasets are built (every worker process inherits it). With a
 * tokenizer that adds special tokens (a BOS), a text prompt of length L has
 * L minus their number in text, so that the server, which adds them, counts
 * L (vLLM's random dataset does the same); input_tokens says L. */
struct rb_tok;
void lg_dataset_set_tokenizer(struct rb_tok *t);
struct rb_tok *lg_dataset_tokenizer(void);

#endif
