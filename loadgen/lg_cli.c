/* lg_cli: loadgen's options table (rb_opts, alphabetical), its defaults, the
 * parsers of the flags whose values have a shape of their own (stages,
 * budgets, lists), and the rules between flags (lg_cli_finish). --help is
 * generated from the table. About 790 lines, one file on purpose: the
 * table, its parsers and the rules between flags are together the one
 * description of what loadgen accepts. */
#include "lg_cli.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lg_export.h"
#include "lg_extra.h"
#include "lg_lora.h"
#include "lg_mpi.h"
#include "lg_plan.h"
#include "rb_host.h"
#include "rb_opts.h"
#include "rb_units.h"

const char *const lg_metric_names[LG_N_METRICS] = {"ttft", "tpot", "itl", "e2el", "ntpot"};

void lg_opts_defaults(lg_opts *o, int online_cpus)
{
    /* The defaults of the flags whose parsers do more than store a value
     * (and of what no flag sets); the table's own come after. */
    *o = (lg_opts){
        .endpoint = "/v1/completions",
        .num_workers = online_cpus > 0 ? online_cpus : 1,
        .stream = 1,
        .bias_budget_mean_us = 100.0,
        .bias_budget_p99_us = 2000.0,
        .request_timeout_ns = 60000000000LL,
        .percentiles = {50, 90, 99},
        .n_percentiles = 3,
        .percentile_metrics = (1u << LG_N_METRICS) - 1,
        .progress = -1,
        .ignore_eos = -1,
    };
    char err[256];
    /* they parse, as test_lg_cli checks: a failure is a broken table */
    if (rb_opts_defaults(&lg_cli_spec, o, err, sizeof err)) abort();
}

static int fail(char *err, size_t errlen, const char *fmt, const char *flag, const char *val)
{
    snprintf(err, errlen, fmt, flag, val ? val : "(none)");
    return -EINVAL;
}

#define BAD(what) fail(err, errlen, "%s: " what ", got '%s'", flag, val)

/* ---- the flags' own parsers (rb_opt_fn: 0, or -1 with why) ------------ */

#define WHY(...) (snprintf(why, n, __VA_ARGS__), -1)

/* A comma list with an empty item ("50,,90", ",", "50,"): refused, since
 * strtok would pass over it silently. */
static int empty_item(const char *val)
{
    size_t len = strlen(val);
    return len && (val[0] == ',' || val[len - 1] == ',' || strstr(val, ",,"));
}

static int parse_percentiles(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    char buf[512];
    if (strlen(val) >= sizeof buf || !*val) return WHY("expected a list like 50,90,99");
    if (empty_item(val)) return WHY("an empty item in the list (expected a list like 50,90,99)");
    strcpy(buf, val);
    int k = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        double p;
        if (k == LG_MAX_PERCENTILES) return WHY("too many percentiles (at most 16)");
        if (rb_parse_double(tok, 0.0, 100.0, &p) || p <= 0.0 || p >= 100.0)
            return WHY("each percentile must be in (0, 100)");
        o->percentiles[k++] = p;
    }
    if (k == 0) return WHY("expected a list like 50,90,99");
    o->n_percentiles = k;
    return 0;
}

static int metric_index(const char *name)
{
    for (int i = 0; i < LG_N_METRICS; i++)
        if (strcasecmp(name, lg_metric_names[i]) == 0) return i;
    if (strcasecmp(name, "e2e") == 0) return LG_M_E2EL;
    return -1;
}

static int parse_metrics(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    char buf[256];
    if (strlen(val) >= sizeof buf || !*val || empty_item(val))
        return WHY("expected a list of ttft,tpot,itl,e2el,ntpot, with no empty item");
    strcpy(buf, val);
    unsigned mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int m = metric_index(tok);
        if (m < 0) return WHY("unknown metric (known: ttft,tpot,itl,e2el,ntpot)");
        mask |= 1u << m;
    }
    o->percentile_metrics = mask;
    return 0;
}

static int goodput_item(lg_goodput *g, const char *item, char *why, size_t n)
{
    const char *colon = strchr(item, ':');
    char name[32];
    size_t len = colon ? (size_t)(colon - item) : 0;
    if (!colon || len == 0 || len >= sizeof name) return WHY("expected NAME:MS (e.g. ttft:300)");
    memcpy(name, item, len);
    name[len] = '\0';
    int m = metric_index(name);
    if (m < 0) return WHY("unknown metric (known: ttft,tpot,itl,e2el,ntpot)");
    double ms;
    if (rb_parse_double(colon + 1, 0.0, 1e12, &ms) || ms <= 0.0)
        return WHY("the threshold must be a number of milliseconds > 0");
    g->slo_ns[m] = (int64_t)llround(ms * 1e6);
    g->enabled = 1;
    return 0;
}

int lg_goodput_parse_item(lg_goodput *g, const char *item, char *err, size_t errlen)
{
    char why[128];
    if (goodput_item(g, item, why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "--goodput: %s, got '%s'", why, item);
    return -EINVAL;
}

static int parse_goodput(void *base, const char *val, char *why, size_t n)
{
    return goodput_item(&((lg_opts *)base)->goodput, val, why, n);
}

static int parse_stage(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (o->n_closed_stages) return WHY("cannot be combined with --closed-stage");
    if (o->n_stages == LG_MAX_STAGES) return WHY("too many stages (at most 64)");
    const char *colon = strchr(val, ':');
    char rate[64];
    size_t len = colon ? (size_t)(colon - val) : 0;
    if (!colon || len == 0 || len >= sizeof rate)
        return WHY("expected RATE:DURATION (e.g. 100:10s)");
    memcpy(rate, val, len);
    rate[len] = '\0';
    lg_stage st = {0};
    if (rb_parse_double(rate, 0.0, INFINITY, &st.rate_per_s) || !(st.rate_per_s > 0.0))
        return WHY("the rate must be > 0 (or inf)");
    if (rb_parse_seconds_ns(colon + 1, &st.duration_ns) || st.duration_ns <= 0)
        return WHY("the duration must be > 0 (seconds, or with a unit: 10s, 500ms)");
    o->stages[o->n_stages++] = st;
    return 0;
}

/* --closed-stage C:N: N requests with C in flight, after the stage before. */
static int parse_closed_stage(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (o->n_stages == LG_MAX_STAGES) return WHY("too many stages (at most 64)");
    if (o->n_stages != o->n_closed_stages) return WHY("cannot be combined with --stage");
    char c[32], *end;
    const char *colon = strchr(val, ':');
    int64_t conc, reqs;
    if (!colon || colon == val || (size_t)(colon - val) >= sizeof c)
        return WHY("expected CONCURRENCY:REQUESTS (e.g. 8:100)");
    memcpy(c, val, (size_t)(colon - val));
    c[colon - val] = '\0';
    conc = strtoll(c, &end, 10);
    if (*end || conc < 1 || conc > 10000000) return WHY("the concurrency must be 1..10000000");
    if (rb_parse_i64(colon + 1, 1, INT64_MAX / 2, &reqs)) return WHY("the requests must be >= 1");
    o->stages[o->n_stages] = (lg_stage){.rate_per_s = INFINITY, .max_requests = reqs};
    o->stage_conc[o->n_stages++] = (int)conc;
    o->n_closed_stages++;
    return 0;
}

static int parse_report_format(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    int f = lg_export_parse_format(val);
    if (f < 0) return WHY("must be rhobench, vllm, inference-perf or both");
    o->report_formats = (unsigned)f;
    if (f) o->save_result = 1; /* converted from the saved result */
    return 0;
}

static int parse_worker_cpus(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    cpu_set_t want, allowed;
    if (rb_host_parse_cpu_list(val, &want) != 0)
        return WHY("expected a list of CPU numbers, such as 1 or 0,2-3");
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &want) && !CPU_ISSET(c, &allowed)) {
                char may[64];
                rb_host_format_cpu_list(&allowed, may, sizeof may);
                return WHY("CPU %d is not one loadgen may run on here (it may run on %s)", c, may);
            }
    rb_host_format_cpu_list(&want, o->worker_cpus, sizeof o->worker_cpus);
    return 0;
}

static int parse_cost(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    const char *colon = strchr(val, ':');
    size_t len = colon ? (size_t)(colon - val) : 0;
    if (colon && len == 5 && strncmp(val, "fixed", 5) == 0)
        o->client_cost = LG_COST_FIXED;
    else if (colon && len == 3 && strncmp(val, "exp", 3) == 0)
        o->client_cost = LG_COST_EXP;
    else
        return WHY("expected fixed:US or exp:US");
    if (rb_parse_double(colon + 1, 0.0, 1e6, &o->client_cost_us))
        return WHY("the cost must be a number of microseconds in [0, 1e6]");
    if (o->client_cost_us == 0.0) o->client_cost = LG_COST_NONE;
    return 0;
}

/* "250us", "1ms" (a unit is a must: this is a tick, not a run length),
 * or 0 / "off". At most 10 ms: past that the dispatch lag it adds is the
 * lag the verdict calls AT-RISK. */
static int parse_batch_tick(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    size_t len = strlen(val);
    if (strcmp(val, "0") == 0 || strcmp(val, "off") == 0) {
        o->batch_tick_ns = 0;
        return 0;
    }
    int64_t ns = 0;
    if (len == 0 || !(val[len - 1] >= 'a' && val[len - 1] <= 'z') ||
        rb_parse_duration_ns(val, &ns) || ns < 10000 || ns > 10000000)
        return WHY("must be a duration in [10us, 10ms] with its unit (e.g. 250us, 1ms), or off");
    o->batch_tick_ns = ns;
    return 0;
}

/* A whole number of microseconds in [0, 1000000], or "off" (-1). */
static int parse_cpu_latency(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    int64_t us;
    if (strcmp(val, "off") == 0) {
        o->cpu_latency_us = -1;
        return 0;
    }
    if (rb_parse_i64(val, 0, 1000000, &us))
        return WHY("must be a whole number of microseconds in [0, 1000000], or off");
    o->cpu_latency_us = (int)us;
    return 0;
}

/* "mean:100us,p99:2ms": either part alone keeps the other's value. Each
 * value needs its unit (a latency, not a run length). */
static int parse_budget(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    char buf[128];
    if (strlen(val) >= sizeof buf) return WHY("too long");
    snprintf(buf, sizeof buf, "%s", val);
    char *save = NULL;
    int any = 0;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        if (!colon) return WHY("expected mean:DURATION,p99:DURATION (e.g. mean:100us,p99:2ms)");
        *colon = '\0';
        const char *v = colon + 1;
        size_t len = strlen(v);
        int64_t ns;
        if (len == 0 || !(v[len - 1] >= 'a' && v[len - 1] <= 'z') || rb_parse_duration_ns(v, &ns) ||
            ns <= 0)
            return WHY("each budget must be a duration > 0 with its unit (e.g. 100us, 2ms)");
        if (strcmp(item, "mean") == 0)
            o->bias_budget_mean_us = (double)ns / 1e3;
        else if (strcmp(item, "p99") == 0)
            o->bias_budget_p99_us = (double)ns / 1e3;
        else
            return WHY("budgets are named mean and p99");
        any = 1;
    }
    if (!any) return WHY("expected mean:DURATION,p99:DURATION");
    return 0;
}

/* --input-distribution / --output-distribution: Inference Perf's; the mean
 * also stands as --random-input-len / --random-output-len. */
static int parse_in_dist(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (lg_len_ip_parse(val, &o->input_dist, why, n)) return -1;
    o->random_input_len = (int32_t)llround(o->input_dist.mean);
    return 0;
}

static int parse_out_dist(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (lg_len_ip_parse(val, &o->output_dist, why, n)) return -1;
    o->random_output_len = (int32_t)llround(o->output_dist.mean);
    return 0;
}

static int parse_endpoint(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (!*val) return WHY("must not be empty");
    if (strlen(val) >= sizeof o->endpoint) return WHY("too long");
    if (val[0] != '/') return WHY("must start with '/'");
    strcpy(o->endpoint, val);
    return 0;
}

static int parse_result_filename(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (!*val) return WHY("must not be empty");
    if (strlen(val) >= sizeof o->result_filename) return WHY("too long");
    if (strchr(val, '/')) return WHY("must be a file name (use --result-dir for the folder)");
    strcpy(o->result_filename, val);
    return 0;
}

static int parse_metadata(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    size_t l = strlen(o->metadata);
    if (!strchr(val, '=') || val[0] == '=' || strchr(val, '\n')) return WHY("expected KEY=VALUE");
    if (l + strlen(val) + 2 > sizeof o->metadata) return WHY("too much metadata");
    snprintf(o->metadata + l, sizeof o->metadata - l, "%s\n", val);
    return 0;
}

/* "KEY=VALUE" (vLLM's form) or "KEY:VALUE": the first '=' or ':' ends the
 * name (neither can be in a header's name), so a value may hold either. */
static int parse_header(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (o->n_headers == LG_MAX_HEADERS) return WHY("too many headers (at most 32)");
    const char *c = strpbrk(val, ":=");
    if (!c || c == val) return WHY("expected KEY=VALUE or KEY:VALUE");
    for (const char *k = val; k < c; k++)
        if (*k <= ' ' || *k >= 127 || strchr("\"(),/;<>?@[\\]{}", *k))
            return WHY("the name before '%c' is not a header name", *c);
    if (strpbrk(val, "\r\n")) return WHY("must not contain a line break");
    o->headers[o->n_headers++] = (char *)val; /* argv outlives o */
    return 0;
}

static int parse_extra_body(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (!*val) return WHY("must be a JSON object");
    o->extra_body = val; /* argv outlives o; checked by lg_cli_finish */
    return 0;
}

static int parse_server_metric(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (o->n_server_metric == LG_MAX_SERVER_METRICS) return WHY("too many metrics (at most 16)");
    int ok = *val && !(val[0] >= '0' && val[0] <= '9') && strlen(val) < 256;
    for (const char *c = val; ok && *c; c++)
        ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
             *c == '_' || *c == ':';
    if (!ok) return WHY("must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
    o->server_metric[o->n_server_metric++] = val; /* argv outlives o */
    return 0;
}

static int parse_request_timeout(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    int64_t v;
    if (rb_parse_seconds_ns(val, &v) || v <= 0)
        return WHY("must be seconds > 0, or a duration with a unit (500ms, 2s)");
    /* curl counts whole milliseconds, and reads 0 as "no timeout". */
    if (v < 1000000) return WHY("must be at least 1ms");
    o->request_timeout_ns = v;
    return 0;
}

static int parse_lora(void *base, const char *val, char *why, size_t n)
{
    return lg_lora_parse(base, val, why, n);
}

static int set_save_detailed(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (val) return WHY("takes no value");
    o->save_detailed = o->save_result = 1;
    return 0;
}

static int set_save_token_times(void *base, const char *val, char *why, size_t n)
{
    lg_opts *o = base;
    if (val) return WHY("takes no value");
    o->save_token_times = o->save_detailed = o->save_result = 1;
    return 0;
}

/* ---- the table: one entry per flag, alphabetical ---------------------- */

#define XSTR(x) #x
#define STR_(x) XSTR(x)
#define AT(member) RB_OPT_AT(lg_opts, member)
#define FLAG(flag, member, v, text)                                                                \
    {                                                                                              \
        .name = flag, .type = RB_OPT_FLAG, AT(member), .ival = v, .help = text                     \
    }
#define CUSTOM(flag, value, f, text, ...)                                                          \
    {                                                                                              \
        .name = flag, .type = RB_OPT_CUSTOM, .arg = value, .fn = f, .help = text, __VA_ARGS__      \
    }
#define INT(flag, member, l, h, d, text, ...)                                                      \
    {                                                                                              \
        .name = flag, .type = RB_OPT_INT, .arg = "N", AT(member), .lo = l, .hi = h, .def = d,      \
        .why = "must be a whole number in [" STR_(l) ", " STR_(h) "]", .help = text, __VA_ARGS__   \
    }
#define RATE(flag, member, d, bad, text, ...)                                                      \
    {                                                                                              \
        .name = flag, .type = RB_OPT_DOUBLE, .arg = "R", AT(member), .min = 0, .max = 1e9,         \
        .excl_min = 1, .def = d, .why = bad, .help = text, __VA_ARGS__                             \
    }
#define SECONDS(flag, member, l, d, text, ...)                                                     \
    {                                                                                              \
        .name = flag, .type = RB_OPT_SECONDS, .arg = "D", AT(member), .lo = l, .def = d,           \
        .why = l ? "must be seconds > 0, or a duration with a unit (500ms, 2s)"                    \
                 : "must be seconds >= 0, or a duration with a unit (500ms, 2s)",                  \
        .help = text, __VA_ARGS__                                                                  \
    }
#define STRING(flag, value, member, d, text, ...)                                                  \
    {                                                                                              \
        .name = flag, .type = RB_OPT_STR, .arg = value, AT(member), .def = d, .help = text,        \
        __VA_ARGS__                                                                                \
    }
#define CHOICE(flag, value, member, list, d, bad, text, ...)                                       \
    {                                                                                              \
        .name = flag, .type = RB_OPT_CHOICE, .arg = value, AT(member), .choices = list, .def = d,  \
        .why = bad, .help = text, __VA_ARGS__                                                      \
    }

#define POOL(flag, text)                                                                           \
    {                                                                                              \
        .name = flag, .type = RB_OPT_INT, .arg = "N", AT(prompt_pool_size),                        \
        RB_OPT_GIVEN(lg_opts, prompt_pool_given), .lo = 1, .hi = LG_POOL_MAX,                      \
        .why = "must be a whole number in [1, " STR_(LG_POOL_MAX) "]", .help = text                \
    }

static const rb_choice DATASETS[] = {{"random", LG_DS_RANDOM},
                                     {"prefix", LG_DS_PREFIX},
                                     {"shared_prefix", LG_DS_PREFIX},
                                     {"shared-prefix", LG_DS_PREFIX},
                                     {"prefix_repetition", LG_DS_PREFIX},
                                     {"sharegpt", LG_DS_SHAREGPT},
                                     {"trace", LG_DS_TRACE},
                                     {"custom", LG_DS_CUSTOM},
                                     {NULL, 0}};
static const rb_choice LEN_DISTS[] = {{"fixed", LG_LEN_FIXED},
                                      {"uniform", LG_LEN_UNIFORM},
                                      {"normal", LG_LEN_NORMAL},
                                      {"lognormal", LG_LEN_LOGNORMAL},
                                      {NULL, 0}};
static const rb_choice CLOCKS[] = {
    {"wire", LG_RXC_WIRE}, {"kernel", LG_RXC_KERNEL}, {"user", LG_RXC_USER}, {NULL, 0}};
static const rb_choice STAMPS[] = {
    {"auto", LG_STAMPS_AUTO}, {"on", LG_STAMPS_ON}, {"off", LG_STAMPS_OFF}, {NULL, 0}};
static const rb_choice RAMPS[] = {
    {"linear", LG_RAMP_LINEAR}, {"exponential", LG_RAMP_EXPONENTIAL}, {NULL, 0}};
static const rb_choice SWEEPS[] = {
    {"linear", LG_SWEEP_LINEAR}, {"geometric", LG_SWEEP_GEOMETRIC}, {NULL, 0}};

static const rb_opt OPTS[] = {
    FLAG("allow-remote", allow_remote, 1, "allow a base URL that is not a loopback address"),
    STRING("base-url", "URL", base_url, "http://127.0.0.1:8000", "the server; loopback only",
           .key = "server.base_url"),
    CUSTOM("batch-tick", "D", parse_batch_tick,
           "wake on a tick of D (e.g. 250us) and then send everything due and read everything "
           "ready, instead of on each socket and each send (fewer wake-ups; the dispatch lag "
           "grows by up to D; reads wait up to D, so it needs the wire or kernel clock)"),
    CUSTOM("bias-budget", "mean:D,p99:D", parse_budget,
           "the client's own delay per token the verdict accepts (default mean:100us,p99:2ms)"),
    {.name = "burstiness",
     .type = RB_OPT_DOUBLE,
     .arg = "B",
     AT(burstiness),
     .min = 0,
     .max = INFINITY,
     .excl_min = 1,
     .def = "1",
     .why = "must be > 0 (1 is Poisson, inf is constant rate)",
     .help = "gamma shape of the gaps: 1 Poisson, inf constant"},
    STRING("ca-cert", "FILE", ca_cert, NULL,
           "https: verify the server's certificate against this PEM file (a CA bundle, or the "
           "server's own self-signed certificate) instead of the system's store"),
    STRING("cacert", "FILE", ca_cert, NULL, "the same as --ca-cert (curl's spelling)"),
    INT("capture-buffer", capture_buffer_kib, 1, 1048576, "4096",
        "each worker's capture ring for the wire clock, in KiB (a packet that finds it full is "
        "dropped, counted, and its tokens take the kernel's stamp)"),
    STRING("cert", "FILE", client_cert, NULL,
           "https: present this client certificate (PEM) to the server: mutual TLS (with --key "
           "when the key is in its own file)",
           .key = "server.cert_path"),
    STRING("certificate", "FILE", certificate, NULL, "refuse a plan beyond this host certificate"),
    CUSTOM("client-cost", "fixed:US|exp:US", parse_cost,
           "busy CPU work per received event (emulates a slow client)"),
    CUSTOM("closed-stage", "C:N", parse_closed_stage,
           "a closed-loop stage: N requests, C in flight; stages in turn (repeatable; Inference "
           "Perf's concurrent)"),
    STRING("config", "FILE", config, NULL,
           "Inference Perf config, YAML or JSON; flags override it"),
    CUSTOM("cpu-latency-us", "N|off", parse_cpu_latency,
           "each worker holds a CPU latency QoS request of N us (/dev/cpu_dma_latency) for its "
           "run: no idle CPU of the host then takes longer to wake (0: they poll instead of "
           "halting). On a VM whose idle CPUs halt, timers otherwise wake ms late. Needs root; "
           "the report says whether it was held (off: do not ask)",
           .def = "0"),
    INT("custom-output-len", custom_output_len, -1, 1000000, "256",
        "custom: max_tokens of every request (-1: each line's output_tokens), as vLLM's"),
    CHOICE("dataset-name", "NAME", dataset, DATASETS, "random",
           "must be random, shared-prefix, sharegpt, custom or trace",
           "random, shared-prefix, sharegpt, custom, trace", .key = "data.type"),
    STRING("dataset-path", "FILE", dataset_path, NULL,
           "ShareGPT JSON, a custom JSONL (a \"prompt\" per line), or an Azure-style trace CSV",
           .key = "data.path"),
    FLAG("disable-shuffle", disable_shuffle, 1,
         "custom and sharegpt: the file's order (default: shuffled from the seed, as vLLM)"),
    SECONDS("drain-timeout", drain_timeout_ns, 0, "5s",
            "wait for in-flight requests at the end or on SIGINT"),
    FLAG("dry-run", dry_run, 1, "check the options, print the plan, send nothing"),
    SECONDS("duration", duration_ns, 1, NULL, "send for D seconds instead (e.g. 30, or 30s)"),
    CUSTOM("endpoint", "PATH", parse_endpoint, "/v1/completions (default) or /v1/chat/completions",
           .key = "api.type"),
    CUSTOM("extra-body", "JSON", parse_extra_body,
           "a JSON object merged into every request body, rendered once before the run (it may "
           "not set model, prompt, messages, stream, stream_options, max_tokens, ignore_eos)"),
    FLAG("force", force, 1, "run anyway beyond the certificate"),
    {.name = "goodput",
     .type = RB_OPT_CUSTOM,
     .arg = "NAME:MS ...",
     .fn = parse_goodput,
     .greedy = 1,
     .help = "SLOs for goodput (ttft, tpot, itl, ntpot, e2el)",
     .key = "report.goodput.constraints"},
    CUSTOM("header", "KEY=VALUE", parse_header,
           "extra request headers, KEY=VALUE (vLLM's) or KEY:VALUE, one or more (repeatable); "
           "OPENAI_API_KEY in the environment -> Authorization: Bearer",
           .greedy = 1),
    FLAG("ignore-eos", ignore_eos, 1,
         "ask the server to ignore end-of-sequence (default: on for the random dataset, as vLLM's "
         "bench serve sets it, off for the others)"),
    CUSTOM("input-distribution", "mean:M,std_dev:S,min:A,max:B,type:T", parse_in_dist,
           "random: prompt lengths drawn as Inference Perf draws them (type normal, lognormal, "
           "uniform or fixed; clipped to [min, max]); its data.input_distribution"),
    FLAG("insecure", insecure, 1,
         "https: do not verify the server's certificate (curl's -k; the report says so)"),
    STRING("key", "FILE", client_key, NULL, "the private key (PEM) of --cert",
           .key = "server.key_path"),
    CUSTOM("lora-modules", "NAME[=SHARE],...", parse_lora,
           "models (LoRA adapters) the requests carry instead of --model: request i's drawn from "
           "a hash of (--seed, i), evenly (vLLM's --lora-modules a b c, or a,b,c) or by each "
           "name's share, the shares >= 0 summing to 1 (a=0.7,b=0.3: Inference Perf's "
           "load.lora_traffic_split); at most 16",
           .greedy = 1, .key = "load.lora_traffic_split"),
    INT("max-concurrency", max_concurrency, 1, 10000000, NULL,
        "alone: closed loop with C in flight; with a rate: a cap (waiting for a slot counts in "
        "latency from intended time)",
        .key = "load.concurrency"),
    INT("max-connections-per-worker", max_conn_per_worker, 1, 100000, "512",
        "connection limit of each worker"),
    CUSTOM("metadata", "KEY=VALUE", parse_metadata, "written into the result JSON (repeatable)"),
    CUSTOM("metric-percentiles", "LIST", parse_percentiles, "percentiles (default 50,90,99)",
           .key = "report.request_lifecycle.percentiles"),
    {.name = "min-p",
     .type = RB_OPT_DOUBLE,
     .arg = "P",
     AT(min_p),
     RB_OPT_GIVEN(lg_opts, min_p_given),
     .min = 0,
     .max = 1,
     .why = "must be in [0, 1]",
     .help = "min_p of every request (vLLM's; default: not sent)"},
    STRING("model", "NAME", model, "sim-model", "model name sent in each request",
           .key = "server.model_name"),
    FLAG("mpi", mpi, 1, "under mpirun: each rank one worker, rank 0 reports"),
    INT("mpi-salvage", mpi_salvage, 1, 1 << 20, NULL,
        "report an --mpi run of N ranks from its snapshots"),
    INT("nice", nice, -20, 19, NULL,
        "scheduling priority of the workers (default: unchanged; negative needs privileges)"),
    FLAG("no-ignore-eos", ignore_eos, 0,
         "do not ask the server to ignore end-of-sequence (also with the random dataset)"),
    FLAG("no-progress", progress, 0, "no live progress line"),
    FLAG("no-stream", stream, 0, "non-streamed responses"),
    POOL("num-dataset-entries", "the same as --prompt-pool-size"),
    {.name = "num-prompts",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(num_prompts),
     RB_OPT_GIVEN(lg_opts, num_prompts_given),
     .lo = 1,
     .hi = INT64_MAX / 4,
     .def = "1000",
     .why = "must be a whole number >= 1",
     .help = "requests to send"},
    INT("num-warmups", num_warmups, 0, 100000, "0",
        "send this many copies of the first request before the run, at most --max-concurrency "
        "at a time, and wait for them (vLLM's; nothing of them is measured)"),
    INT("num-workers", num_workers, 0, 1024, NULL,
        "worker processes (default: online CPUs; 0: one in-process)", .key = "load.num_workers"),
    CUSTOM("output-distribution", "mean:M,std_dev:S,min:A,max:B,type:T", parse_out_dist,
           "random: max_tokens drawn so (see --input-distribution)"),
    CUSTOM("percentile-metrics", "LIST", parse_metrics,
           "of ttft,tpot,itl,e2el,ntpot (default all)"),
    INT("prefix-groups", prefix_groups, 1, 100000, "4", "shared-prefix: groups",
        .key = "data.shared_prefix.num_groups"),
    FLAG("prefix-multi-turn", prefix_multi_turn, 1,
         "shared-prefix: each prompt is a user's chat, its context growing by every answer"),
    INT("prefix-prompts-per-group", prefix_prompts_per_group, 1, 100000, "16",
        "shared-prefix: prompts per group", .key = "data.shared_prefix.num_prompts_per_group"),
    INT("prefix-question-len", prefix_question_len, 1, 1000000, "64",
        "shared-prefix: question words", .key = "data.shared_prefix.question_len"),
    INT("prefix-system-len", prefix_system_len, 0, 1000000, "512",
        "shared-prefix: system prompt words", .key = "data.shared_prefix.system_prompt_len"),
    FLAG("progress", progress, 1, "live progress line on stderr (default: when a terminal)"),
    SECONDS("prometheus-scrape-interval", prometheus_scrape_interval_ns, 1000000, "30s",
            "that Prometheus's scrape interval: the run waits it + 2 s before querying",
            .key = "metrics.prometheus.scrape_interval"),
    STRING("prometheus-url", "URL", prometheus_url, NULL,
           "a Prometheus server scraping the target: each stage's metrics queried with PromQL "
           "after the run, as Inference Perf does",
           .key = "metrics.prometheus.url"),
    POOL("prompt-pool-size",
         "distinct prompts; request i uses prompt i mod N (default: one per planned request, "
         "within 512 MiB; a smaller N repeats prompts on purpose)"),
    FLAG("quiet", quiet, 1, "no summary table"),
    RATE("ramp-up-end-rps", ramp_up_end_rps, NULL, "must be a rate > 0",
         "the ramp's rate at its last request (vLLM's)"),
    RATE("ramp-up-start-rps", ramp_up_start_rps, NULL, "must be a rate > 0",
         "the ramp's rate at its first request (vLLM's; > 0)"),
    CHOICE("ramp-up-strategy", "linear|exponential", ramp_up, RAMPS, NULL,
           "must be linear or exponential",
           "vLLM's ramp-up: request j of --num-prompts N comes at rate start + (end - start) p "
           "(linear) or start (end / start)^p (exponential), p = j / (N - 1), instead of "
           "--request-rate"),
    INT("random-input-len", random_input_len, 1, 1000000, "1024",
        "prompt length: words, or token ids with --token-ids",
        .key = "data.input_distribution.mean"),
    CHOICE("random-len-dist", "D", random_len_dist, LEN_DISTS, "uniform",
           "must be fixed, uniform, normal or lognormal", "fixed, uniform, normal, lognormal"),
    INT("random-output-len", random_output_len, 1, 1000000, "128", "max_tokens",
        .key = "data.output_distribution.mean"),
    INT("random-prefix-len", random_prefix_len, 0, 1000000, "0",
        "random: a prefix of this many tokens (words, or ids with --token-ids), the same for "
        "every prompt, before its random part (vLLM's; the input length adds it)"),
    {.name = "random-range-ratio",
     .type = RB_OPT_DOUBLE,
     .arg = "R",
     AT(random_range_ratio),
     .min = 0,
     .max = 0.9999999999999999,
     .def = "0",
     .why = "must be in [0, 1)",
     .help = "spread of the lengths, in [0, 1): lengths in [L(1-R), L(1+R)], as today's vLLM; "
             "vLLM v0.6.1 drew randint(L*R, L): its R=0.5 is not this R=0.5"},
    INT("realtime-priority", rt_priority, 0, 99, NULL,
        "run the workers SCHED_FIFO at priority 1..99 (needs privileges): wake-ups on a shared "
        "host are then not delayed by other processes (default 0: off)"),
    CHOICE("receive-clock", "wire|kernel|user", receive_clock, CLOCKS, "wire",
           "must be wire, kernel or user",
           "a token's receive time: wire: the capture time of the segment that carried it "
           "(needs CAP_NET_RAW; the default, else kernel with the reason), kernel: the kernel's "
           "receive stamp of the read, user: when the loop picked it up",
           RB_OPT_GIVEN(lg_opts, receive_clock_given)),
    CUSTOM("report-format", "F", parse_report_format,
           "rhobench (default), vllm, inference-perf or both (also <result>.vllm.json, "
           "<result>.inference-perf/)"),
    {.name = "request-rate",
     .type = RB_OPT_DOUBLE,
     .arg = "R",
     AT(request_rate),
     RB_OPT_GIVEN(lg_opts, rate_given),
     .min = 0,
     .max = INFINITY,
     .excl_min = 1,
     .def = "inf",
     .why = "must be > 0 (or inf)",
     .unit = "requests/s, all workers",
     .help = "the offered rate (inf: all at once)"},
    CUSTOM("request-timeout", "D", parse_request_timeout,
           "bound on each request, at least 1ms (default 60s)"),
    STRING("result-dir", "DIR", result_dir, ".", "the result JSON's folder"),
    CUSTOM("result-filename", "NAME", parse_result_filename,
           "its name (default loadgen-<rate>qps-<model>-<time>.json)"),
    RATE("saturation-lag-ms", saturation_lag_ms, "10", "must be a number of milliseconds > 0",
         "lag bound of saturation [ms]"),
    {.name = "save-detailed",
     .type = RB_OPT_CUSTOM,
     .fn = set_save_detailed,
     .help = "also one JSON line per request (<result>.jsonl); implies --save-result"},
    FLAG("save-result", save_result, 1, "write the result JSON"),
    {.name = "save-token-times",
     .type = RB_OPT_CUSTOM,
     .fn = set_save_token_times,
     .help = "each per-request record also lists its tokens' arrival times in us from its "
             "dispatch (token_times_us, the times the ITL figures come from), at most "
             "--token-times-cap of them, the rest counted (token_times_dropped); implies "
             "--save-detailed"},
    {.name = "seed",
     .type = RB_OPT_INT,
     .arg = "S",
     AT(seed),
     .lo = 0,
     .hi = INT64_MAX,
     .def = "0",
     .why = "must be a whole number >= 0",
     .key = "load.seed",
     .help = "seed of the arrival schedule and the dataset"},
    STRING("served-model-name", "NAME", served_model_name, NULL,
           "the model name the requests carry (vLLM's; default: --model)"),
    CUSTOM("server-metric", "NAME", parse_server_metric,
           "also report this metric of the server's, per stage (repeatable, at most 16)"),
    STRING("server-metrics", "URL|target|off", server_metrics, NULL,
           "scrape the server's Prometheus metrics from URL (target: the base URL's /metrics; "
           "default off: a scrape is a request the server sees); the coordinator scrapes, never "
           "the workers"),
    SECONDS("server-metrics-interval", server_metrics_interval_ns, 10000000, "1s",
            "time between scrapes of --server-metrics (at least 10ms)"),
    FLAG("sharegpt-in-order", sharegpt_in_order, 1,
         "sharegpt: the file's first entries in order (default: shuffled from the seed, as vLLM "
         "samples)"),
    FLAG("sharegpt-no-filter", sharegpt_no_filter, 1,
         "sharegpt: keep the entries vLLM's length filters drop (prompt 4-1024 tokens, output "
         ">= 4, 2048 in all)"),
    INT("sharegpt-output-len", sharegpt_output_len, 0, 1000000, "0",
        "sharegpt: max_tokens of every request (0: the reply's length), as vLLM's"),
    CHOICE("sim-stamps", "auto|on|off", sim_stamps, STAMPS, "auto", "must be auto, on or off",
           "send X-Sim-Stamp: 1 for simserver's ground truth (auto: on)"),
    CUSTOM("stage", "RATE:D", parse_stage,
           "a stage of the run (repeatable; e.g. 100:10 or 100:10s)", .key = "load.stages"),
    SECONDS("stage-duration", stage_duration_ns, 1, NULL, "duration of each sweep stage",
            .key = "load.sweep.stage_duration"),
    SECONDS("stage-pause", stage_pause_ns, 0, "0", "idle time between stages",
            .key = "load.interval"),
    FLAG("stream", stream, 1, "streamed SSE responses (the default)"),
    CHOICE("sweep", "linear|geometric", sweep, SWEEPS, NULL, "must be linear or geometric",
           "stages up to --sweep-max-rate", .key = "load.sweep.type"),
    RATE("sweep-max-rate", sweep_max_rate, NULL, "must be a finite rate > 0",
         "the sweep's last rate", .key = "load.sweep.max_rate"),
    RATE("sweep-min-rate", sweep_min_rate, NULL, "must be a finite rate > 0",
         "geometric sweep's first rate (default max/2^(N-1))"),
    FLAG("sweep-probe", sweep_probe, 1,
         "Inference Perf's sweep: a saturation probe (--sweep-probe-requests in 5 s, in-flight "
         "sampled every 0.5 s until --sweep-probe-timeout) finds the saturation rate, the "
         "sweep's stages go from 1 request/s up to it"),
    {.name = "sweep-probe-percentile",
     .type = RB_OPT_DOUBLE,
     .arg = "P",
     AT(sweep_probe_percentile),
     RB_OPT_GIVEN(lg_opts, sweep_probe_given),
     .min = 0,
     .max = 100,
     .def = "95",
     .why = "must be a percentile in [0, 100]",
     .help = "the probe's burn-down rates' percentile taken as the saturation rate",
     .key = "load.sweep.saturation_percentile"},
    {.name = "sweep-probe-requests",
     .type = RB_OPT_INT,
     .arg = "N",
     AT(sweep_probe_requests),
     RB_OPT_GIVEN(lg_opts, sweep_probe_given),
     .lo = 1,
     .hi = 10000000,
     .def = "2000",
     .why = "must be a whole number in [1, 10000000]",
     .help = "requests the saturation probe sends, in 5 s",
     .key = "load.sweep.num_requests"},
    SECONDS("sweep-probe-timeout", sweep_probe_timeout_ns, 1, "60",
            "the saturation probe's length, from its start (its send window is 5 s)",
            RB_OPT_GIVEN(lg_opts, sweep_probe_given), .key = "load.sweep.timeout"),
    INT("sweep-stages", sweep_stages, 1, 64, NULL,
        "number of sweep stages (default 5; 10 until saturation)", .key = "load.sweep.num_stages"),
    FLAG("sweep-until-saturation", sweep_until_saturation, 1,
         "stop after the first saturated stage: by the client (dispatched < 95% of scheduled, or "
         "> 1% later than --saturation-lag-ms) or by the server (completed < 95% of offered with "
         "a growing backlog, or TTFT p50 past its knee); the report's \"knee\" says which"),
    {.name = "temperature",
     .type = RB_OPT_DOUBLE,
     .arg = "T",
     AT(temperature),
     RB_OPT_GIVEN(lg_opts, temperature_given),
     .min = 0,
     .max = 1e6,
     .why = "must be a number >= 0",
     .help = "temperature of every request (vLLM's; default: not sent, the server's own)"},
    FLAG("token-ids", token_ids, 1,
         "random and shared-prefix on /v1/completions: send each prompt as \"prompt\": [token "
         "ids], ids drawn from the seed in [0, --vocab-size): its lengths are then exact in the "
         "server's tokens"),
    INT("token-times-cap", token_times_cap, 1, 1048576, "4096",
        "with --save-token-times: the token times a record lists at most (a worker holds up to "
        "8 bytes per token listed per request in flight)",
        RB_OPT_GIVEN(lg_opts, token_times_cap_given)),
    STRING("tokenizer", "NAME", tokenizer, NULL,
           "a tokenizer.json (file or folder), or a model id in the local Hugging Face cache "
           "(nothing is downloaded): lengths in its tokens, text prompts built to exact token "
           "lengths; recorded as tokenizer_id"),
    {.name = "top-k",
     .type = RB_OPT_INT,
     .arg = "K",
     AT(top_k),
     RB_OPT_GIVEN(lg_opts, top_k_given),
     .lo = -1,
     .hi = 1000000000,
     .why = "must be a whole number >= -1 (-1: all tokens)",
     .help = "top_k of every request (vLLM's; default: not sent)"},
    {.name = "top-p",
     .type = RB_OPT_DOUBLE,
     .arg = "P",
     AT(top_p),
     RB_OPT_GIVEN(lg_opts, top_p_given),
     .min = 0,
     .max = 1,
     .excl_min = 1,
     .why = "must be in (0, 1]",
     .help = "top_p of every request (vLLM's; default: not sent)"},
    RATE("trace-speedup", trace_speedup, "1", "must be > 0", "replay a trace X times faster"),
    INT("vocab-size", vocab_size, 1, 2147483647, "32000",
        "with --token-ids: ids in [0, V) (32000: Llama 2's and Mistral's vocabulary)"),
    CUSTOM("worker-cpus", "LIST", parse_worker_cpus,
           "the CPUs the workers may run on, such as 1 or 0,2-3 (as taskset's -c; default: "
           "any): keeps them off the CPUs of another program, such as a server on this host; "
           "each worker's report lists where it may run (client_bias.workers[].cpus)"),
};

_Static_assert(LG_MAX_STAGES == 64, "--sweep-stages' bound in the table");

const rb_opts_spec lg_cli_spec = {
    .prog = "loadgen",
    .opts = OPTS,
    .n = sizeof OPTS / sizeof OPTS[0],
    .head = "usage: loadgen [FLAGS]\n"
            "An open-loop, multi-process load generator for OpenAI-compatible servers.\n"
            "Latency is measured from each request's intended send time and from its\n"
            "actual dispatch; every report says how much of it is the client's own doing.\n"
            "Durations (D): a plain number is seconds (10 = 10 s); a unit may be given:\n"
            "250us, 500ms, 2s, 1.5m, 1h. vLLM bench's own flags (--host H --port P,\n"
            "--backend B, --disable-tqdm, ...) are read as loadgen's (loadgen/lg_vllm.h).\n"
            "\n",
    .tail = "A non-streamed response body is kept up to 1 MiB; a longer one fails as\n"
            "body_too_large.\n"
            "\n"
            "Exit codes: 0 ok, 1 run failed, 2 bad usage or input, 130/143/129 interrupted\n"
            "(SIGINT/SIGTERM/SIGHUP).\n",
    .unknown_fmt = "unknown flag '%s' (see --help)",
    .stray_fmt = "unexpected argument '%s'",
};

int lg_cli_parse(lg_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    int rc = rb_opts_parse(&lg_cli_spec, o, argc, argv, err, errlen);
    if (rc == RB_OPTS_HELP || rc == RB_OPTS_VERSION) return 1;
    return rc ? -EINVAL : 0;
}

/* Host part of a URL "scheme://[user@]host[:port]/path" into buf. */
static int url_host(const char *url, char *buf, size_t cap)
{
    const char *p = strstr(url, "://");
    if (!p) return -1;
    p += 3;
    const char *end = p + strcspn(p, "/?#");
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at) p = at + 1;
    const char *h_end;
    if (*p == '[') {
        const char *rb = memchr(p, ']', (size_t)(end - p));
        if (!rb) return -1;
        p++;
        h_end = rb;
    } else {
        h_end = memchr(p, ':', (size_t)(end - p));
        if (!h_end) h_end = end;
    }
    size_t n = (size_t)(h_end - p);
    if (n == 0 || n >= cap) return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

void lg_server_metrics_url(const lg_opts *o, char *url, size_t cap)
{
    if (!o->server_metrics[0] || !strcmp(o->server_metrics, "off")) {
        snprintf(url, cap, "%s", "");
    } else if (!strcmp(o->server_metrics, "target")) {
        const char *p = strstr(o->base_url, "://");
        size_t origin = p ? (size_t)(p + 3 - o->base_url) + strcspn(p + 3, "/?#") : 0;
        snprintf(url, cap, "%.*s/metrics", (int)origin, o->base_url);
    } else {
        snprintf(url, cap, "%s", o->server_metrics);
    }
}

int lg_url_is_loopback(const char *url)
{
    char host[256];
    if (url_host(url, host, sizeof host)) return 0;
    if (strcasecmp(host, "localhost") == 0 || strcmp(host, "::1") == 0) return 1;
    /* 127.0.0.0/8 as a dotted quad. */
    unsigned a, b, c, d;
    char tail;
    if (sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 &&
        c < 256 && d < 256)
        return 1;
    return 0;
}

static void size_pool(lg_opts *o);

/* vLLM's ramp-up: all three flags, over the --num-prompts of the one stage,
 * instead of --request-rate. Sets the stage's ramp. */
static int finish_ramp(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    int any = o->ramp_up || o->ramp_up_start_rps > 0 || o->ramp_up_end_rps > 0;
    if (!any) return 0;
    if (!o->ramp_up) {
        flag = o->ramp_up_start_rps > 0 ? "--ramp-up-start-rps" : "--ramp-up-end-rps";
        val = "without --ramp-up-strategy";
        return BAD("needs --ramp-up-strategy linear|exponential");
    }
    flag = "--ramp-up-strategy";
    if (!(o->ramp_up_start_rps > 0) || !(o->ramp_up_end_rps > 0)) {
        val = o->ramp_up == LG_RAMP_LINEAR ? "linear" : "exponential";
        return BAD("needs --ramp-up-start-rps and --ramp-up-end-rps");
    }
    val = "with this plan";
    if (o->rate_given)
        return BAD("cannot be combined with --request-rate (the ramp sets the rate, as vLLM's)");
    if (o->dataset == LG_DS_TRACE) return BAD("cannot ramp a trace (its rows set the times)");
    if (o->n_stages != 1 || o->sweep || o->n_closed_stages)
        return BAD("cannot be combined with --stage, --sweep or --closed-stage (one ramp)");
    if (!o->num_prompts_given)
        return BAD("needs --num-prompts: the ramp spreads its rates over the requests");
    o->stages[0].rate_per_s = o->ramp_up_start_rps;
    o->stages[0].ramp = (lg_ramp)o->ramp_up;
    o->stages[0].ramp_end_per_s = o->ramp_up_end_rps;
    return 0;
}

/* The URLs: the target's and the metrics', each http(s) with a host, on
 * loopback unless --allow-remote. */
static int finish_urls(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    if (strncmp(o->base_url, "http://", 7) != 0 && strncmp(o->base_url, "https://", 8) != 0) {
        flag = "--base-url";
        val = o->base_url;
        return BAD("must start with http:// or https://");
    }
    {
        char host[256];
        if (url_host(o->base_url, host, sizeof host)) {
            flag = "--base-url";
            val = o->base_url;
            return BAD("has no host");
        }
    }
    if (!o->allow_remote && !lg_url_is_loopback(o->base_url)) {
        flag = "--base-url";
        val = o->base_url;
        return BAD("is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote "
                   "to target another host");
    }
    if (o->server_metrics[0] && strcmp(o->server_metrics, "off") &&
        strcmp(o->server_metrics, "target")) {
        char host[256];
        flag = "--server-metrics";
        val = o->server_metrics;
        if (strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0)
            return BAD("must be an http:// or https:// URL, target or off");
        if (url_host(val, host, sizeof host)) return BAD("has no host");
        if (!o->allow_remote && !lg_url_is_loopback(val))
            return BAD("is not a loopback address (127.0.0.0/8, ::1, localhost); pass "
                       "--allow-remote to scrape another host");
    }
    if (o->prometheus_url[0]) {
        char host[256];
        flag = "--prometheus-url";
        val = o->prometheus_url;
        if (strncmp(val, "http://", 7) != 0 && strncmp(val, "https://", 8) != 0)
            return BAD("must be an http:// or https:// URL");
        if (url_host(val, host, sizeof host)) return BAD("has no host");
        if (!o->allow_remote && !lg_url_is_loopback(val))
            return BAD("is not a loopback address (127.0.0.0/8, ::1, localhost); pass "
                       "--allow-remote to query another host");
    }
    return 0;
}

/* The TLS flags: only with an https URL, --key with --cert, each file
 * readable. */
static int finish_tls(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    /* TLS options with no https URL to apply them to are a mistake. */
    char sm[600];
    lg_server_metrics_url(o, sm, sizeof sm);
    int https = strncmp(o->base_url, "https://", 8) == 0 || strncmp(sm, "https://", 8) == 0;
    if (o->insecure && o->ca_cert[0]) {
        flag = "--ca-cert";
        val = o->ca_cert;
        return BAD("cannot be given with --insecure (verify against the file, or not at all)");
    }
    if ((o->insecure || o->ca_cert[0] || o->client_cert[0] || o->client_key[0]) && !https) {
        flag = o->insecure         ? "--insecure"
               : o->ca_cert[0]     ? "--ca-cert"
               : o->client_cert[0] ? "--cert"
                                   : "--key";
        val = o->base_url;
        return BAD("applies to https:// only, and neither the base URL nor its metrics URL is "
                   "https://");
    }
    if (o->client_key[0] && !o->client_cert[0]) {
        flag = "--key";
        val = o->client_key;
        return BAD("is the key of a client certificate: give --cert too");
    }
    const char *files[3][2] = {
        {"--ca-cert", o->ca_cert}, {"--cert", o->client_cert}, {"--key", o->client_key}};
    for (int i = 0; i < 3; i++) {
        if (!files[i][1][0]) continue;
        FILE *f = fopen(files[i][1], "r");
        if (!f) {
            snprintf(err, errlen, "%s: cannot read '%s': %s", files[i][0], files[i][1],
                     strerror(errno));
            return -EINVAL;
        }
        fclose(f);
    }
    return 0;
}

/* What the run needs of the build and of its responses: MPI, and token
 * times only of streamed responses. */
static int finish_outputs(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    char num[64];
    if (o->mpi && !lg_mpi_available()) {
        flag = "--mpi";
        val = "on";
        return BAD("this build has no MPI (configure with -DRHOBENCH_MPI=ON)");
    }
    if (o->token_times_cap_given && !o->save_token_times) {
        snprintf(num, sizeof num, "%" PRId64, o->token_times_cap);
        flag = "--token-times-cap";
        val = num;
        return BAD("is the cap of --save-token-times: give that too");
    }
    if (o->save_token_times && !o->stream) {
        flag = "--save-token-times";
        val = "with --no-stream";
        return BAD("needs streamed responses (a whole response has no token times)");
    }
    return 0;
}

/* --sweep-probe: Inference Perf's sweep. Until the probe has run (lg_probe.c)
 * the plan is the probe's one stage: --sweep-probe-requests at a constant
 * rate over 5 s, cut at the timeout if that is shorter. */
static int finish_probe(lg_opts *o, char *err, size_t errlen)
{
    const char *flag = "--sweep-probe", *val;
    char num[64];
    if (o->sweep_probe_given) o->sweep_probe = 1;
    if (!o->sweep_probe) return 0;
    if (o->sweep_max_rate > 0.0 || o->sweep_min_rate > 0.0) {
        flag = o->sweep_max_rate > 0.0 ? "--sweep-max-rate" : "--sweep-min-rate";
        snprintf(num, sizeof num, "%g",
                 o->sweep_max_rate > 0.0 ? o->sweep_max_rate : o->sweep_min_rate);
        val = num;
        return BAD("cannot be combined with --sweep-probe, whose probe finds the sweep's rates");
    }
    if (o->n_stages || o->n_closed_stages || o->max_concurrency || o->mpi ||
        o->dataset == LG_DS_TRACE || o->ramp_up) {
        val = o->n_stages          ? "with --stage"
              : o->n_closed_stages ? "with --closed-stage"
              : o->max_concurrency ? "with --max-concurrency"
              : o->mpi             ? "with --mpi"
              : o->ramp_up         ? "with --ramp-up-strategy"
                                   : "with a trace";
        if (o->mpi)
            return BAD("cannot be combined: the probe reads every worker's in-flight count live, "
                       "which --mpi's ranks do not share");
        return BAD("cannot be combined: the probe places open-loop stages at its own rates");
    }
    if (o->sweep == LG_SWEEP_NONE) o->sweep = LG_SWEEP_GEOMETRIC;
    if (o->sweep_stages == 0) o->sweep_stages = o->sweep_until_saturation ? 10 : 5;
    if (o->stage_duration_ns == 0) {
        flag = "--stage-duration";
        val = "(none)";
        return BAD("is required by --sweep-probe (each generated stage's length)");
    }
    int64_t window = (int64_t)LG_PROBE_SEND_S * 1000000000LL;
    if (o->sweep_probe_timeout_ns < window) window = o->sweep_probe_timeout_ns;
    o->stages[0] = (lg_stage){.rate_per_s = (double)o->sweep_probe_requests / LG_PROBE_SEND_S,
                              .duration_ns = window};
    o->n_stages = 1;
    return 0;
}

/* --sweep (or --sweep-until-saturation): its stages, from its bounds. */
static int finish_sweep(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    char num[64];
    if (o->sweep_probe) return 0; /* finish_probe's */
    if (o->sweep != LG_SWEEP_NONE || o->sweep_until_saturation) {
        if (o->n_stages) {
            flag = "--sweep";
            val = "with --stage";
            return BAD("cannot be combined with --stage");
        }
        if (o->sweep == LG_SWEEP_NONE) o->sweep = LG_SWEEP_GEOMETRIC;
        if (!(o->sweep_max_rate > 0.0)) {
            flag = "--sweep-max-rate";
            val = "(none)";
            return BAD("is required by --sweep");
        }
        if (o->sweep_stages == 0) o->sweep_stages = o->sweep_until_saturation ? 10 : 5;
        if (o->stage_duration_ns == 0) {
            flag = "--stage-duration";
            val = "(none)";
            return BAD("is required by --sweep");
        }
        int n = o->sweep_stages;
        double lo = lg_sweep_min_rate(n, o->sweep_min_rate, o->sweep_max_rate),
               rates[LG_MAX_STAGES];
        if (lo > o->sweep_max_rate) {
            snprintf(num, sizeof num, "%g", lo);
            flag = "--sweep-min-rate";
            val = num;
            return BAD("must not exceed --sweep-max-rate");
        }
        if (lg_sweep_rates(o->sweep, n, lo, o->sweep_max_rate, rates) != 0) {
            snprintf(num, sizeof num, "%g", o->sweep_max_rate);
            flag = "--sweep-max-rate";
            val = num;
            return BAD("must be a finite rate > 0");
        }
        for (int i = 0; i < n; i++)
            o->stages[i] = (lg_stage){.rate_per_s = rates[i], .duration_ns = o->stage_duration_ns};
        o->n_stages = n;
    }
    return 0;
}

/* The stages: closed ones set the cap and bound the workers, stages and
 * the one-stage flags exclude each other, the ramp, and no infinite rate
 * without a bound. */
static int finish_stages(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    if (o->n_closed_stages) { /* the cap is the widest stage's; each worker needs a slot */
        if (o->max_concurrency || o->sweep != LG_SWEEP_NONE || o->dataset == LG_DS_TRACE) {
            flag = "--closed-stage";
            val = o->max_concurrency ? "with --max-concurrency" : "with a sweep or a trace";
            return BAD("sets its own concurrency per stage; cannot be combined");
        }
        if (o->mpi) { /* the stage barrier reads the other workers' shared slots */
            flag = "--closed-stage";
            val = "with --mpi";
            return BAD("needs the workers of one host (the fork back-end); cannot be combined");
        }
        int lo = o->stage_conc[0];
        for (int i = 0; i < o->n_stages; i++) {
            if (o->stage_conc[i] > o->max_concurrency) o->max_concurrency = o->stage_conc[i];
            if (o->stage_conc[i] < lo) lo = o->stage_conc[i];
        }
        if (o->num_workers > lo) o->num_workers = lo;
    }
    if (o->n_stages) {
        if (o->num_prompts_given || o->duration_ns) {
            flag = o->num_prompts_given ? "--num-prompts" : "--duration";
            val = "with stages";
            return BAD(
                "cannot be combined with --stage or --sweep (stages set their own durations)");
        }
        if (o->rate_given) {
            flag = "--request-rate";
            val = "with stages";
            return BAD("cannot be combined with --stage or --sweep (stages set their own rates)");
        }
    } else if (o->dataset != LG_DS_TRACE) {
        if (o->duration_ns && !o->num_prompts_given) o->num_prompts = 0;
        o->stages[0] = (lg_stage){.rate_per_s = o->request_rate,
                                  .duration_ns = o->duration_ns,
                                  .max_requests = o->num_prompts};
        o->n_stages = 1;
    }
    {
        int rc = finish_ramp(o, err, errlen);
        if (rc) return rc;
    }
    if (isinf(o->request_rate) && o->duration_ns && !o->num_prompts_given && o->n_stages == 1 &&
        !o->max_concurrency) {
        flag = "--duration";
        val = "with an infinite rate";
        return BAD("needs a finite --request-rate, --max-concurrency or --num-prompts");
    }
    for (int i = 0; i < o->n_stages; i++) {
        if (isinf(o->stages[i].rate_per_s) && o->stages[i].max_requests == 0 &&
            !o->max_concurrency) {
            flag = "--stage";
            val = "inf";
            return BAD("an infinite rate needs --num-prompts to bound it");
        }
    }
    return 0;
}

/* The dataset's flags and the concurrency they leave (the workers within
 * the cap, a closed loop's stage, vLLM's ignore_eos default). */
static int finish_dataset(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    if ((o->dataset == LG_DS_SHAREGPT || o->dataset == LG_DS_TRACE || o->dataset == LG_DS_CUSTOM) &&
        !o->dataset_path[0]) {
        flag = "--dataset-path";
        val = "(none)";
        return BAD("is required by --dataset-name sharegpt|custom|trace");
    }
    if (o->num_warmups && (o->dataset == LG_DS_TRACE || o->prefix_multi_turn)) {
        flag = "--num-warmups";
        val = o->dataset == LG_DS_TRACE ? "with a trace" : "with --prefix-multi-turn";
        return BAD("needs a dataset whose first request is one body (not a trace or sessions)");
    }
    if (o->random_prefix_len && o->dataset != LG_DS_RANDOM) {
        flag = "--random-prefix-len";
        val = "with this dataset";
        return BAD("needs --dataset-name random (shared-prefix: --prefix-system-len)");
    }
    if (o->dataset == LG_DS_TRACE && o->max_concurrency && !o->rate_given) {
        flag = "--max-concurrency";
        val = "with a trace";
        return BAD("a trace is replayed open loop; a cap needs --request-rate too");
    }
    if (o->prompt_pool_given && (o->dataset == LG_DS_PREFIX || o->dataset == LG_DS_TRACE)) {
        flag = "--prompt-pool-size";
        val = o->dataset == LG_DS_PREFIX ? "with shared-prefix" : "with a trace";
        return BAD(
            "sizes the random, sharegpt and custom pools only (shared-prefix: --prefix-groups x "
            "--prefix-prompts-per-group; a trace has no pool)");
    }
    if (o->prefix_multi_turn && (o->dataset != LG_DS_PREFIX || lg_closed_loop(o))) {
        flag = "--prefix-multi-turn";
        val = o->dataset != LG_DS_PREFIX ? "without shared-prefix" : "in a closed loop";
        return BAD("needs --dataset-name shared-prefix and an arrival rate (sessions wait per "
                   "user on an arrival schedule)");
    }
    if (o->token_ids && (o->chat || o->prefix_multi_turn ||
                         (o->dataset != LG_DS_RANDOM && o->dataset != LG_DS_PREFIX))) {
        flag = "--token-ids";
        val = o->chat                ? "with /v1/chat/completions"
              : o->prefix_multi_turn ? "with --prefix-multi-turn"
                                     : "with this dataset";
        return BAD("needs /v1/completions and --dataset-name random or shared-prefix (single "
                   "turn): only a completions prompt can be an array of token ids");
    }
    if (o->sweep_until_saturation && o->max_concurrency) {
        flag = "--sweep-until-saturation";
        val = "with --max-concurrency";
        return BAD("needs open loop (drop --max-concurrency)");
    }
    if (o->max_concurrency && o->num_workers > o->max_concurrency) {
        /* Each worker needs at least one slot of the cap. */
        o->num_workers = o->max_concurrency;
    }
    if (o->max_concurrency && !o->rate_given && !o->ramp_up && o->n_stages == 1) {
        /* Closed loop: no arrival times; the stage keeps only its bounds. */
        o->stages[0].rate_per_s = INFINITY;
    }
    /* vLLM's bench serve forces ignore_eos on its random dataset, so that
     * every output is as long as asked; the others leave it to the model. */
    if (o->ignore_eos < 0) o->ignore_eos = o->dataset == LG_DS_RANDOM;
    return 0;
}

/* --batch-tick reads each response up to a tick late: the user clock
 * would put that wait into every latency figure. */
static int finish_batch_tick(lg_opts *o, char *err, size_t errlen)
{
    if (!o->batch_tick_ns || o->receive_clock != LG_RXC_USER) return 0;
    const char *flag = "--receive-clock", *val = "user";
    return BAD("cannot be combined with --batch-tick, which reads each response up to a tick "
               "late: the user clock would time that wait (use wire or kernel)");
}

int lg_cli_finish(lg_opts *o, char *err, size_t errlen)
{
    int rc;
    if ((rc = finish_batch_tick(o, err, errlen))) return rc;
    if ((rc = finish_urls(o, err, errlen)) || (rc = finish_tls(o, err, errlen)) ||
        (rc = lg_extra_body_render(o, err, errlen)) || (rc = finish_outputs(o, err, errlen)))
        return rc;
    o->chat = strstr(o->endpoint, "chat") != NULL;
    if ((rc = finish_probe(o, err, errlen)) || (rc = finish_sweep(o, err, errlen)) ||
        (rc = finish_stages(o, err, errlen)) || (rc = finish_dataset(o, err, errlen)))
        return rc;
    size_pool(o);
    return 0;
}

int64_t lg_cli_planned_arrivals(const lg_opts *o)
{
    if (o->dataset == LG_DS_TRACE) return -1;
    double total = 0;
    for (int i = 0; i < o->n_stages; i++) {
        const lg_stage *st = &o->stages[i];
        if (st->max_requests > 0) {
            total += (double)st->max_requests;
            continue;
        }
        if (isinf(st->rate_per_s) || st->duration_ns <= 0) return -1;
        double n = st->rate_per_s * (double)st->duration_ns / 1e9;
        /* A gamma renewal process of shape b has a count variance near n / b. */
        double shape = o->burstiness < 1.0 ? o->burstiness : 1.0;
        total += n + 6.0 * sqrt(n / shape) + 16.0;
    }
    return total > 9e18 ? -1 : (int64_t)ceil(total);
}

/* The default pool: one fresh prompt per planned request, within memory. */
static void size_pool(lg_opts *o)
{
    o->planned_arrivals = lg_cli_planned_arrivals(o);
    if (o->prompt_pool_given) return;
    double words =
        (double)o->random_input_len * (1.0 + o->random_range_ratio) + (double)o->random_prefix_len;
    size_t per = lg_pool_bytes_per_prompt((int64_t)words);
    o->prompt_pool_size = (int64_t)lg_pool_size_for(o->planned_arrivals, per, LG_POOL_BUDGET_BYTES);
    /* A long or open-ended run of the random dataset makes each prompt when
     * it is sent: a pool of one prompt per request would cost the run's
     * start (a 3 s closed loop built 874,382 prompts: 53 us of CPU per
     * request against 18 without) and up to LG_POOL_BUDGET_BYTES of memory
     * (0.7 GB for 10 minutes at 5,000 req/s), and a smaller one repeats. */
    o->prompt_per_request = o->dataset == LG_DS_RANDOM &&
                            (o->planned_arrivals < 0 || o->planned_arrivals > LG_POOL_EAGER_MAX);
    if (o->prompt_per_request) o->prompt_pool_size = 1;
}

const char *lg_cli_usage(void)
{
    static char *text; /* built once, kept for the process */
    if (!text) text = rb_opts_usage(&lg_cli_spec);
    return text ? text : "loadgen: no memory for the usage text\n";
}
