/* sim_opts: see sim_opts.h. One entry per flag, alphabetical. */
#include "sim_opts.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sim_model.h"

static int valid_name(const char *s)
{
    if (!*s || strlen(s) >= SIM_NAME_MAX) return 0;
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20) return 0;
    return 1;
}

static int parse_host(void *base, const char *v, char *why, size_t n)
{
    sim_opts *o = base;
    o->cfg.host = strcmp(v, "localhost") == 0 ? "127.0.0.1" : v; /* checked when bound */
    return 0;
}

static int parse_mode(void *base, const char *v, char *why, size_t n)
{
    sim_opts *o = base;
    if (strcmp(v, "random") == 0)
        o->cfg.mode = SIM_MODE_RANDOM;
    else if (strcmp(v, "echo") == 0)
        o->cfg.mode = SIM_MODE_ECHO;
    else
        return -1;
    return 0;
}

static int parse_model(void *base, const char *v, char *why, size_t n)
{
    sim_opts *o = base;
    if (!valid_name(v)) return -1;
    snprintf(o->model, sizeof o->model, "%s", v);
    return 0;
}

static int parse_served(void *base, const char *list, char *why, size_t n)
{
    sim_opts *o = base;
    sim_config *cfg = &o->cfg;
    const char *p = list;
    do {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (cfg->n_served >= SIM_MAX_MODELS || len >= SIM_NAME_MAX) return -1;
        char *name = o->served[cfg->n_served];
        memcpy(name, p, len);
        name[len] = '\0';
        if (!valid_name(name)) return -1;
        cfg->served[cfg->n_served++] = name;
        p = e ? e + 1 : p + len;
    } while (*p);
    return 0;
}

static int parse_faults(void *base, const char *v, char *why, size_t n)
{
    sim_opts *o = base;
    char bad[64];
    if (sim_fault_parse_list(v, &o->cfg.failure_mask, bad, sizeof bad) == 0) return 0;
    snprintf(why, n,
             "unknown fault type '%s' (known: rate_limit, server_error, unavailable, "
             "invalid_request, invalid_api_key, connection_reset, midstream_drop, "
             "malformed_chunk, stall, all)",
             bad);
    return -1;
}

#define AT(member) RB_OPT_AT(sim_opts, member)
#define LATENCY(flag, member, text)                                                                \
    {                                                                                              \
        .name = flag, .type = RB_OPT_DURATION, .arg = "DUR", AT(cfg.lat.member), .def = "0",       \
        .help = text                                                                               \
    }

static const rb_opt OPTS[] = {
    {.name = "block-size",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.block_size),
     .lo = 1,
     .hi = 65536,
     .unit = "tokens",
     .def = "16",
     .help = "tokens per prefix-cache block"},
    {.name = "enable-prefix-caching",
     .type = RB_OPT_BOOL,
     AT(cfg.enable_prefix_caching),
     .def = "true",
     .help = "the prefix cache (--no-enable-prefix-caching: off)"},
    {.name = "failure-injection-rate",
     .type = RB_OPT_DOUBLE,
     .arg = "P",
     AT(cfg.failure_rate_pct),
     .min = 0,
     .max = 100,
     .unit = "%",
     .def = "0",
     .why = "must be a percentage in [0, 100]",
     .help = "share of requests that fail"},
    {.name = "failure-types",
     .type = RB_OPT_CUSTOM,
     .arg = "LIST",
     .fn = parse_faults,
     .def = "all",
     .help = "comma list of rate_limit, server_error, unavailable, invalid_request, "
             "invalid_api_key, connection_reset, midstream_drop, malformed_chunk, stall, all "
             "(the request header 'X-Sim-Fail: TYPE' forces one)"},
    {.name = "host",
     .type = RB_OPT_CUSTOM,
     .arg = "ADDR",
     .fn = parse_host,
     .def = "127.0.0.1",
     .help = "numeric listen address, or localhost"},
    {.name = "idle-timeout",
     .type = RB_OPT_DURATION,
     .arg = "DUR",
     AT(cfg.idle_timeout_ns),
     .lo = 1000000,
     .def = "60s",
     .why = "must be a duration of at least 1ms such as 500ms or 60s",
     .help = "cut idle or slow clients"},
    LATENCY("inter-token-latency", itl_ns, "time between output tokens"),
    LATENCY("inter-token-latency-std-dev", itl_sd_ns, "Gaussian jitter of the inter-token latency"),
    {.name = "max-body",
     .type = RB_OPT_SIZE,
     .arg = "SIZE",
     AT(cfg.max_body_bytes),
     .lo = 1,
     .hi = 1LL << 30,
     .def = "1M",
     .why = "must be a size between 1 and 1G such as 64k or 1M",
     .help = "request body limit, 413 past it"},
    {.name = "max-model-len",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.max_model_len),
     .lo = 1,
     .hi = INT32_MAX,
     .unit = "tokens",
     .def = "32768",
     .help = "prompt + max_tokens limit"},
    {.name = "max-num-seqs",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.lat.max_num_seqs),
     .lo = 0,
     .hi = 1000000,
     .def = "0",
     .help = "running slots, 0 = unlimited"},
    {.name = "max-waiting-queue-length",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.max_waiting_queue_length),
     .lo = 0,
     .hi = 100000000,
     .def = "1000",
     .help = "waiting requests before 429, 0 = unlimited"},
    {.name = "max-write-queue",
     .type = RB_OPT_SIZE,
     .arg = "SIZE",
     AT(cfg.max_write_queue_bytes),
     .lo = 4096,
     .def = "4M",
     .why = "must be a size of at least 4k",
     .help = "drop a client with this much unsent"},
    {.name = "mode",
     .type = RB_OPT_CUSTOM,
     .arg = "random|echo",
     .fn = parse_mode,
     .def = "random",
     .why = "must be random or echo",
     .help = "output text: vocabulary words, or the prompt's words in order"},
    {.name = "model",
     .type = RB_OPT_CUSTOM,
     .arg = "NAME",
     .fn = parse_model,
     .def = "sim-model",
     .why = "must be 1-127 plain characters",
     .help = "served model name"},
    {.name = "no-enable-prefix-caching",
     .type = RB_OPT_FLAG,
     AT(cfg.enable_prefix_caching),
     .ival = 0,
     .help = "no prefix cache"},
    {.name = "port",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.port),
     .lo = 0,
     .hi = 65535,
     .def = "8000",
     .help = "port, 0 = any free port; the first line on stdout is 'listening http://HOST:PORT'"},
    LATENCY("prefill-overhead", prefill_overhead_ns,
            "TTFT = overhead + per-token x uncached prompt tokens"),
    LATENCY("prefill-time-per-token", prefill_per_token_ns, "the per-token term of the TTFT"),
    {.name = "prefix-cache-blocks",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.prefix_cache_blocks),
     .lo = 0,
     .hi = 1 << 26,
     .def = "16384",
     .help = "prefix-cache capacity in blocks, LRU"},
    {.name = "seed",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.seed),
     .lo = 0,
     .hi = INT64_MAX,
     .def = "0",
     .help = "seed of the jitter and fault draws"},
    {.name = "served-model-name",
     .type = RB_OPT_CUSTOM,
     .arg = "A[,B...]",
     .fn = parse_served,
     .why = "names must be 1-127 plain characters, at most 16 of them",
     .help = "names accepted in 'model' (repeatable); the first is the default and the metrics "
             "label (default: --model)"},
    {.name = "time-factor-under-load",
     .type = RB_OPT_DOUBLE,
     .arg = "F",
     AT(cfg.lat.time_factor_under_load),
     .min = 1,
     .max = 1e6,
     .def = "1",
     .why = "must be a number >= 1",
     .help = "ITL and TTFT scale from 1x (one running) to Fx (max-num-seqs running)"},
    LATENCY("time-to-first-token", ttft_ns, "fixed TTFT (overrides the prefill terms)"),
    LATENCY("time-to-first-token-std-dev", ttft_sd_ns, "Gaussian jitter of the TTFT"),
    {.name = "tokenizer",
     .type = RB_OPT_STR,
     .arg = "NAME",
     AT(tokenizer),
     .help = "a tokenizer.json (file or folder), or a model id in the local Hugging Face cache "
             "(nothing is downloaded): prompt_tokens counted in its tokens, as a server of that "
             "model counts them, and /tokenize answered with its ids (default: words)"},
    {.name = "workers",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(cfg.workers),
     .lo = 1,
     .hi = 256,
     .def = "1",
     .help = "worker processes sharing the port"},
};

const rb_opts_spec sim_opts_spec = {
    .prog = "simserver",
    .opts = OPTS,
    .n = sizeof OPTS / sizeof OPTS[0],
    .head = "Usage: simserver [options]\n"
            "An OpenAI-compatible simulated LLM inference server (see simserver/README.md).\n"
            "Durations: 500us, 20ms, 2s; a plain number is ms. Sizes: 64k, 1M.\n"
            "\n",
    .tail = "Exit: 0 after a clean shutdown, 1 on a failure to start, 2 bad usage.\n"};

int sim_opts_defaults(sim_opts *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->cfg.max_header_bytes = 64 << 10;
    o->cfg.shutdown_grace_ns = 2LL * 1000000000LL;
    return rb_opts_defaults(&sim_opts_spec, o, err, errlen);
}

int sim_opts_parse(sim_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    int rc = rb_opts_parse(&sim_opts_spec, o, argc, argv, err, errlen);
    if (rc) return rc;
    if (o->cfg.n_served == 0) {
        o->cfg.served[0] = o->model;
        o->cfg.n_served = 1;
    }
    return RB_OPTS_OK;
}
