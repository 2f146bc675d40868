/* sim_api: the OpenAI request side. Routes a method and path, and turns a
 * JSON body into a request spec (the prompt's tokens, max_tokens, stream
 * flags, the sampling parameters it honours: n, stop, logprobs) or an
 * OpenAI-style error. Pure: no sockets, no clocks, no globals.
 * The fuzz entry point is sim_api_parse. A spec owns its arrays; free it with
 * sim_req_spec_free. */
#ifndef SIM_API_H
#define SIM_API_H

#include <stddef.h>
#include <stdint.h>

#include "rb_buf.h"

typedef enum sim_route {
    SIM_ROUTE_COMPLETIONS,
    SIM_ROUTE_CHAT,
    SIM_ROUTE_MODELS,
    SIM_ROUTE_HEALTH,
    SIM_ROUTE_METRICS,
    SIM_ROUTE_TOKENIZE,   /* POST /tokenize, as vLLM's */
    SIM_ROUTE_DETOKENIZE, /* POST /detokenize */
    SIM_ROUTE_NOT_FOUND,  /* 404 */
    SIM_ROUTE_BAD_METHOD, /* 405 */
} sim_route;

/* method is an enum http_method. */
sim_route sim_api_route(int method, const char *path);

#define SIM_MODEL_NAME_MAX 128
#define SIM_DEFAULT_MAX_TOKENS 16

typedef struct sim_api_limits {
    const char *const *served_models; /* first one answers when "model" is absent */
    int n_served;
    int64_t max_model_len; /* prompt + max_tokens must fit */
    /* --tokenizer: prompt text counted in its tokens, special tokens added
     * once per request as vLLM adds them (NULL: the word rule). */
    struct rb_tok *tok;
} sim_api_limits;

/* The request parameters a real server honours and the simulator does not:
 * each changes what vLLM would do in time or bytes (several sequences
 * scored by best_of, constrained decoding, a minimum length, stop tokens,
 * prompt log-probabilities). A request that sets one to anything but its
 * no-op value is still served, as if it were absent, and counted
 * (sim_ignored_params_total), so that a benchmark of the simulator cannot
 * silently measure another workload. n, stop, logprobs and top_logprobs are
 * honoured (sim_req_spec below), so they are not in this list. */
typedef enum {
    SIM_IGN_BEST_OF,
    SIM_IGN_STOP_TOKEN_IDS,
    SIM_IGN_MIN_TOKENS,
    SIM_IGN_PROMPT_LOGPROBS,
    SIM_IGN_LOGIT_BIAS,
    SIM_IGN_RESPONSE_FORMAT,
    SIM_IGN_GUIDED_JSON,
    SIM_IGN_GUIDED_REGEX,
    SIM_IGN_GUIDED_CHOICE,
    SIM_IGN_TOOLS,
    SIM_IGN_USE_BEAM_SEARCH,
    SIM_IGN_COUNT
} sim_ignored_param;
/* The parameter's name in the request body ("best_of", "tools", ...). */
const char *sim_ignored_param_name(int p);

/* Limits of the honoured sampling parameters. n: vLLM allows up to
 * VLLM_MAX_N_SEQUENCES (16384); the simulator decodes the choices in
 * lockstep in one stream and caps them lower. stop: OpenAI's 4 strings; the
 * byte cap bounds the text held back while a stop string may be starting.
 * logprobs: vLLM's default --max-logprobs. */
#define SIM_N_MAX 128
#define SIM_STOP_MAX 4
#define SIM_STOP_BYTES_MAX 256
#define SIM_LOGPROBS_MAX 20

typedef struct sim_req_spec {
    int chat;
    uint32_t ignored; /* bit p set: parameter p (sim_ignored_param) was set, and ignored */
    int stream;
    int include_usage;
    int continuous_usage; /* stream_options.continuous_usage_stats (with include_usage) */
    int ignore_eos;
    int64_t max_tokens;
    char model[SIM_MODEL_NAME_MAX];
    /* The prompt, one entry per token (the token-counting rule: a word is a
     * maximal run of non-whitespace bytes; a token id is one token). */
    int64_t prompt_tokens;
    uint64_t *tok_hash;   /* prompt_tokens hashes, for the prefix cache */
    char *words;          /* the tokens' text, concatenated (echo mode) */
    uint32_t *word_off;   /* prompt_tokens + 1 offsets into words */
    uint64_t prompt_hash; /* of the whole token sequence */
    /* Sampling parameters (their defaults: n 1, no stop, no logprobs). */
    int n;                          /* choices, 1..SIM_N_MAX */
    int n_stop;                     /* stop strings, 0..SIM_STOP_MAX, each non-empty */
    const char *stop[SIM_STOP_MAX]; /* into stop_buf, NUL-terminated */
    uint32_t stop_len[SIM_STOP_MAX];
    char *stop_buf;       /* owned; NULL without stop strings */
    int include_stop_str; /* include_stop_str_in_output */
    int logprobs;         /* 1: log-probabilities asked for */
    int top_logprobs;     /* completions: its "logprobs" value; chat: "top_logprobs" */
    int has_seed;         /* "seed" given: the log-probabilities derive from it */
    uint64_t seed;
} sim_req_spec;

/* 1 when the request asks for more than one plain choice: n > 1, stop
 * strings, logprobs or continuous usage. Only such requests pay for the
 * per-choice state (sim_engine) and its rendering. */
static inline int sim_req_spec_has_choices(const sim_req_spec *s)
{
    return s->n > 1 || s->n_stop > 0 || s->logprobs || s->continuous_usage;
}

typedef struct sim_api_error {
    int status; /* 400, 404 */
    char message[512];
    const char *type; /* "invalid_request_error", "server_error" ... */
    char param[64];   /* "" renders as null */
    const char *code; /* NULL renders as null */
} sim_api_error;

/* Parses and validates a request body for a completions (chat = 0) or chat
 * completions (chat = 1) endpoint. Returns 0 and fills *out (caller frees),
 * or -1 and fills *err (out is left empty). */
int sim_api_parse(const char *body, size_t len, int chat, const sim_api_limits *lim,
                  sim_req_spec *out, sim_api_error *err);
void sim_req_spec_free(sim_req_spec *s);

/* The /tokenize (detok 0) and /detokenize (detok 1) answers, as vLLM gives
 * them: {"count", "max_model_len", "tokens", "token_strs"} for a "prompt"
 * (a string or token ids) or "messages", "add_special_tokens" (default
 * true); {"prompt"} for "tokens". With lim->tok its ids; without, the word
 * rule's tokens: a word's id is a hash of it (31 bits), and detokenizing
 * writes each id as a decimal word (as many words as ids). Returns 0 with
 * the JSON in out, or -1 and *err. */
int sim_api_tokenize(const char *body, size_t len, int detok, const sim_api_limits *lim,
                     rb_buf *out, sim_api_error *err);

/* Number of words (maximal runs of non-whitespace bytes) in s. */
int64_t sim_count_words(const char *s, size_t n);

#endif
