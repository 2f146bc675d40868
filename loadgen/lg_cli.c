/* lg_cli: the command-line parser of lg_cli.h. Table-free and flat on
 * purpose: each flag is one branch that parses its value with rb_units and
 * names itself when the value is wrong. */
#include "lg_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rb_units.h"

const char *const lg_metric_names[LG_N_METRICS] = {"ttft", "tpot", "itl", "e2el", "ntpot"};

void lg_opts_defaults(lg_opts *o, int online_cpus)
{
    *o = (lg_opts){
        .base_url = "http://127.0.0.1:8000",
        .endpoint = "/v1/completions",
        .model = "sim-model",
        .num_workers = online_cpus > 0 ? online_cpus : 1,
        .max_conn_per_worker = 512,
        .request_rate = INFINITY,
        .burstiness = 1.0,
        .num_prompts = 1000,
        .saturation_lag_ms = 10.0,
        .seed = 0,
        .dataset = LG_DS_RANDOM,
        .trace_speedup = 1.0,
        .random_input_len = 1024,
        .random_output_len = 128,
        .random_range_ratio = 0.0,
        .random_len_dist = LG_LEN_UNIFORM,
        .prefix_groups = 4,
        .prefix_prompts_per_group = 16,
        .prefix_system_len = 512,
        .prefix_question_len = 64,
        .stream = 1,
        .sim_stamps = LG_STAMPS_AUTO,
        .receive_clock = LG_RXC_KERNEL,
        .bias_budget_mean_us = 100.0,
        .bias_budget_p99_us = 2000.0,
        .request_timeout_ns = 60000000000LL,
        .drain_timeout_ns = 5000000000LL,
        .percentiles = {50, 90, 99},
        .n_percentiles = 3,
        .percentile_metrics = (1u << LG_N_METRICS) - 1,
        .result_dir = ".",
        .progress = -1,
    };
}

static int fail(char *err, size_t errlen, const char *fmt, const char *flag, const char *val)
{
    snprintf(err, errlen, fmt, flag, val ? val : "(none)");
    return -EINVAL;
}

#define BAD(what) fail(err, errlen, "%s: " what ", got '%s'", flag, val)

static int copy_str(char *dst, size_t cap, const char *flag, const char *val, char *err,
                    size_t errlen)
{
    if (strlen(val) >= cap) return BAD("too long");
    if (!*val) return BAD("must not be empty");
    strcpy(dst, val);
    return 0;
}

static int parse_percentiles(lg_opts *o, const char *flag, const char *val, char *err,
                             size_t errlen)
{
    char buf[512];
    if (strlen(val) >= sizeof buf || !*val) return BAD("expected a list like 50,90,99");
    strcpy(buf, val);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        double p;
        if (n == LG_MAX_PERCENTILES) return BAD("too many percentiles (at most 16)");
        if (rb_parse_double(tok, 0.0, 100.0, &p) || p <= 0.0 || p >= 100.0)
            return BAD("each percentile must be in (0, 100)");
        o->percentiles[n++] = p;
    }
    if (n == 0) return BAD("expected a list like 50,90,99");
    o->n_percentiles = n;
    return 0;
}

static int metric_index(const char *name)
{
    for (int i = 0; i < LG_N_METRICS; i++)
        if (strcasecmp(name, lg_metric_names[i]) == 0) return i;
    if (strcasecmp(name, "e2e") == 0) return LG_M_E2EL;
    return -1;
}

static int parse_metrics(lg_opts *o, const char *flag, const char *val, char *err, size_t errlen)
{
    char buf[256];
    if (strlen(val) >= sizeof buf || !*val)
        return BAD("expected a list of ttft,tpot,itl,e2el,ntpot");
    strcpy(buf, val);
    unsigned mask = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int m = metric_index(tok);
        if (m < 0) return BAD("unknown metric (known: ttft,tpot,itl,e2el,ntpot)");
        mask |= 1u << m;
    }
    o->percentile_metrics = mask;
    return 0;
}

int lg_goodput_parse_item(lg_goodput *g, const char *item, char *err, size_t errlen)
{
    const char *flag = "--goodput", *val = item;
    const char *colon = strchr(item, ':');
    if (!colon) return BAD("expected NAME:MS (e.g. ttft:300)");
    char name[32];
    size_t n = (size_t)(colon - item);
    if (n == 0 || n >= sizeof name) return BAD("expected NAME:MS (e.g. ttft:300)");
    memcpy(name, item, n);
    name[n] = '\0';
    int m = metric_index(name);
    if (m < 0) return BAD("unknown metric (known: ttft,tpot,itl,e2el,ntpot)");
    double ms;
    if (rb_parse_double(colon + 1, 0.0, 1e12, &ms) || ms <= 0.0)
        return BAD("the threshold must be a number of milliseconds > 0");
    g->slo_ns[m] = (int64_t)llround(ms * 1e6);
    g->enabled = 1;
    return 0;
}

static int parse_stage(lg_opts *o, const char *flag, const char *val, char *err, size_t errlen)
{
    if (o->n_stages == LG_MAX_STAGES) return BAD("too many stages (at most 64)");
    const char *colon = strchr(val, ':');
    if (!colon) return BAD("expected RATE:DURATION (e.g. 100:10s)");
    char rate[64];
    size_t n = (size_t)(colon - val);
    if (n == 0 || n >= sizeof rate) return BAD("expected RATE:DURATION (e.g. 100:10s)");
    memcpy(rate, val, n);
    rate[n] = '\0';
    lg_stage st = {0};
    if (rb_parse_double(rate, 0.0, INFINITY, &st.rate_per_s) || !(st.rate_per_s > 0.0))
        return BAD("the rate must be > 0 (or inf)");
    if (rb_parse_seconds_ns(colon + 1, &st.duration_ns) || st.duration_ns <= 0)
        return BAD("the duration must be > 0 (seconds, or with a unit: 10s, 500ms)");
    o->stages[o->n_stages++] = st;
    return 0;
}

static int parse_cost(lg_opts *o, const char *flag, const char *val, char *err, size_t errlen)
{
    const char *colon = strchr(val, ':');
    if (!colon) return BAD("expected fixed:US or exp:US");
    size_t n = (size_t)(colon - val);
    if (n == 5 && strncmp(val, "fixed", 5) == 0)
        o->client_cost = LG_COST_FIXED;
    else if (n == 3 && strncmp(val, "exp", 3) == 0)
        o->client_cost = LG_COST_EXP;
    else
        return BAD("expected fixed:US or exp:US");
    if (rb_parse_double(colon + 1, 0.0, 1e6, &o->client_cost_us))
        return BAD("the cost must be a number of microseconds in [0, 1e6]");
    if (o->client_cost_us == 0.0) o->client_cost = LG_COST_NONE;
    return 0;
}

/* "mean:100us,p99:2ms": either part alone keeps the other's value. Each
 * value needs its unit (a latency, not a run length). */
static int parse_budget(lg_opts *o, const char *flag, const char *val, char *err, size_t errlen)
{
    char buf[128];
    if (strlen(val) >= sizeof buf) return BAD("too long");
    snprintf(buf, sizeof buf, "%s", val);
    char *save = NULL;
    int any = 0;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        if (!colon) return BAD("expected mean:DURATION,p99:DURATION (e.g. mean:100us,p99:2ms)");
        *colon = '\0';
        const char *v = colon + 1;
        size_t n = strlen(v);
        int64_t ns;
        if (n == 0 || !(v[n - 1] >= 'a' && v[n - 1] <= 'z') || rb_parse_duration_ns(v, &ns) ||
            ns <= 0)
            return BAD("each budget must be a duration > 0 with its unit (e.g. 100us, 2ms)");
        if (strcmp(item, "mean") == 0)
            o->bias_budget_mean_us = (double)ns / 1e3;
        else if (strcmp(item, "p99") == 0)
            o->bias_budget_p99_us = (double)ns / 1e3;
        else
            return BAD("budgets are named mean and p99");
        any = 1;
    }
    if (!any) return BAD("expected mean:DURATION,p99:DURATION");
    return 0;
}

static int parse_i32(const char *flag, const char *val, int64_t min, int64_t max, int32_t *out,
                     char *err, size_t errlen)
{
    int64_t v;
    if (rb_parse_i64(val, min, max, &v)) {
        snprintf(err, errlen, "%s: must be a whole number in [%lld, %lld], got '%s'", flag,
                 (long long)min, (long long)max, val);
        return -EINVAL;
    }
    *out = (int32_t)v;
    return 0;
}

static int parse_int(const char *flag, const char *val, int64_t min, int64_t max, int *out,
                     char *err, size_t errlen)
{
    int32_t v;
    int rc = parse_i32(flag, val, min, max, &v, err, errlen);
    if (rc == 0) *out = v;
    return rc;
}

static int parse_dur(const char *flag, const char *val, int allow_zero, int64_t *out, char *err,
                     size_t errlen)
{
    int64_t v;
    if (rb_parse_seconds_ns(val, &v) || (!allow_zero && v <= 0)) {
        if (allow_zero) return BAD("must be seconds >= 0, or a duration with a unit (500ms, 2s)");
        return BAD("must be seconds > 0, or a duration with a unit (500ms, 2s)");
    }
    *out = v;
    return 0;
}

/* A flag last on the line without its value: "needs a value" if the flag is
 * known, "unknown flag" if not (found by parsing it with a dummy value). */
static int missing_value(const lg_opts *o, const char *flag, char *err, size_t errlen)
{
    lg_opts *scratch = malloc(sizeof *scratch);
    char e2[256] = "";
    char *probe[2] = {(char *)flag, "1"};
    if (scratch) {
        *scratch = *o;
        lg_cli_parse(scratch, 2, probe, e2, sizeof e2);
        free(scratch);
    }
    if (strncmp(e2, "unknown flag", 12) == 0) {
        snprintf(err, errlen, "%s", e2);
        return -EINVAL;
    }
    return fail(err, errlen, "%s: needs a value%s", flag, "");
}

int lg_cli_parse(lg_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *flag = argv[i];
        const char *val = NULL;
        char flagbuf[64];
        /* "--flag=value" is accepted as well as "--flag value". */
        const char *eq = strncmp(flag, "--", 2) == 0 ? strchr(flag, '=') : NULL;
        if (eq && (size_t)(eq - flag) < sizeof flagbuf) {
            memcpy(flagbuf, flag, (size_t)(eq - flag));
            flagbuf[eq - flag] = '\0';
            val = eq + 1;
            flag = flagbuf;
        }
#define IS(name) (strcmp(flag, name) == 0)
#define NEXT()                                                                                     \
    do {                                                                                           \
        if (!val) {                                                                                \
            if (i + 1 >= argc) return missing_value(o, flag, err, errlen);                         \
            val = argv[++i];                                                                       \
        }                                                                                          \
    } while (0)
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_) return rc_;                                                                       \
    } while (0)
        if (IS("--help") || IS("-h") || IS("--version")) return 1;
        /* flags without a value */
        if (IS("--allow-remote")) {
            o->allow_remote = 1;
            continue;
        }
        if (IS("--sweep-until-saturation")) {
            o->sweep_until_saturation = 1;
            continue;
        }
        if (IS("--ignore-eos")) {
            o->ignore_eos = 1;
            continue;
        }
        if (IS("--no-stream")) {
            o->stream = 0;
            continue;
        }
        if (IS("--stream")) {
            o->stream = 1;
            continue;
        }
        if (IS("--save-result")) {
            o->save_result = 1;
            continue;
        }
        if (IS("--save-detailed")) {
            o->save_detailed = 1;
            o->save_result = 1;
            continue;
        }
        if (IS("--force")) {
            o->force = 1;
            continue;
        }
        if (IS("--quiet")) {
            o->quiet = 1;
            continue;
        }
        if (IS("--mpi")) {
            o->mpi = 1;
            continue;
        }
        if (IS("--progress")) {
            o->progress = 1;
            continue;
        }
        if (IS("--no-progress")) {
            o->progress = 0;
            continue;
        }
        if (IS("--goodput")) {
            /* vLLM's form: one or more NAME:MS items after the flag. */
            int any = 0;
            if (val) {
                CHECK(lg_goodput_parse_item(&o->goodput, val, err, errlen));
                any = 1;
            }
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                CHECK(lg_goodput_parse_item(&o->goodput, argv[++i], err, errlen));
                any = 1;
            }
            if (!any) return fail(err, errlen, "%s: needs a value%s", flag, "");
            continue;
        }
        if (strncmp(flag, "--", 2) != 0)
            return fail(err, errlen, "unexpected argument '%s'%s", flag, "");
        NEXT();
        if (IS("--base-url"))
            CHECK(copy_str(o->base_url, sizeof o->base_url, flag, val, err, errlen));
        else if (IS("--endpoint")) {
            CHECK(copy_str(o->endpoint, sizeof o->endpoint, flag, val, err, errlen));
            if (val[0] != '/') return BAD("must start with '/'");
        } else if (IS("--model"))
            CHECK(copy_str(o->model, sizeof o->model, flag, val, err, errlen));
        else if (IS("--tokenizer"))
            CHECK(copy_str(o->tokenizer, sizeof o->tokenizer, flag, val, err, errlen));
        else if (IS("--metadata")) {
            size_t l = strlen(o->metadata);
            if (!strchr(val, '=') || val[0] == '=' || strchr(val, '\n'))
                return BAD("expected KEY=VALUE");
            if (l + strlen(val) + 2 > sizeof o->metadata) return BAD("too much metadata");
            snprintf(o->metadata + l, sizeof o->metadata - l, "%s\n", val);
        } else if (IS("--header")) {
            if (o->n_headers == LG_MAX_HEADERS) return BAD("too many headers (at most 32)");
            const char *c = strchr(val, ':');
            if (!c || c == val) return BAD("expected KEY:VALUE");
            if (strpbrk(val, "\r\n")) return BAD("must not contain a line break");
            o->headers[o->n_headers++] = (char *)val;
        } else if (IS("--num-workers"))
            CHECK(parse_int(flag, val, 0, 1024, &o->num_workers, err, errlen));
        else if (IS("--mpi-salvage"))
            CHECK(parse_int(flag, val, 1, 1 << 20, &o->mpi_salvage, err, errlen));
        else if (IS("--nice"))
            CHECK(parse_int(flag, val, -20, 19, &o->nice, err, errlen));
        else if (IS("--realtime-priority"))
            CHECK(parse_int(flag, val, 0, 99, &o->rt_priority, err, errlen));
        else if (IS("--max-connections-per-worker"))
            CHECK(parse_int(flag, val, 1, 100000, &o->max_conn_per_worker, err, errlen));
        else if (IS("--request-rate")) {
            if (rb_parse_double(val, 0.0, INFINITY, &o->request_rate) || !(o->request_rate > 0.0))
                return BAD("must be > 0 (or inf)");
            o->rate_given = 1;
        } else if (IS("--burstiness")) {
            if (rb_parse_double(val, 0.0, INFINITY, &o->burstiness) || !(o->burstiness > 0.0))
                return BAD("must be > 0 (1 is Poisson, inf is constant rate)");
        } else if (IS("--num-prompts")) {
            int64_t v;
            if (rb_parse_i64(val, 1, INT64_MAX / 4, &v)) return BAD("must be a whole number >= 1");
            o->num_prompts = v;
            o->num_prompts_given = 1;
        } else if (IS("--prompt-pool-size") || IS("--num-dataset-entries")) {
            int64_t v;
            if (rb_parse_i64(val, 1, LG_POOL_MAX, &v))
                return BAD("must be a whole number in [1, 10000000]");
            o->prompt_pool_size = v;
            o->prompt_pool_given = 1;
        } else if (IS("--duration"))
            CHECK(parse_dur(flag, val, 0, &o->duration_ns, err, errlen));
        else if (IS("--stage"))
            CHECK(parse_stage(o, flag, val, err, errlen));
        else if (IS("--stage-pause"))
            CHECK(parse_dur(flag, val, 1, &o->stage_pause_ns, err, errlen));
        else if (IS("--sweep")) {
            if (strcmp(val, "linear") == 0)
                o->sweep = LG_SWEEP_LINEAR;
            else if (strcmp(val, "geometric") == 0)
                o->sweep = LG_SWEEP_GEOMETRIC;
            else
                return BAD("must be linear or geometric");
        } else if (IS("--sweep-stages"))
            CHECK(parse_int(flag, val, 1, LG_MAX_STAGES, &o->sweep_stages, err, errlen));
        else if (IS("--sweep-max-rate")) {
            if (rb_parse_double(val, 0.0, 1e9, &o->sweep_max_rate) || !(o->sweep_max_rate > 0.0))
                return BAD("must be a finite rate > 0");
        } else if (IS("--sweep-min-rate")) {
            if (rb_parse_double(val, 0.0, 1e9, &o->sweep_min_rate) || !(o->sweep_min_rate > 0.0))
                return BAD("must be a finite rate > 0");
        } else if (IS("--stage-duration"))
            CHECK(parse_dur(flag, val, 0, &o->stage_duration_ns, err, errlen));
        else if (IS("--saturation-lag-ms")) {
            if (rb_parse_double(val, 0.0, 1e9, &o->saturation_lag_ms) ||
                !(o->saturation_lag_ms > 0.0))
                return BAD("must be a number of milliseconds > 0");
        } else if (IS("--max-concurrency"))
            CHECK(parse_int(flag, val, 1, 10000000, &o->max_concurrency, err, errlen));
        else if (IS("--seed")) {
            int64_t v;
            if (rb_parse_i64(val, 0, INT64_MAX, &v)) return BAD("must be a whole number >= 0");
            o->seed = (uint64_t)v;
        } else if (IS("--dataset-name")) {
            if (strcmp(val, "random") == 0)
                o->dataset = LG_DS_RANDOM;
            else if (strcmp(val, "prefix") == 0 || strcmp(val, "shared_prefix") == 0 ||
                     strcmp(val, "shared-prefix") == 0 || strcmp(val, "prefix_repetition") == 0)
                o->dataset = LG_DS_PREFIX;
            else if (strcmp(val, "sharegpt") == 0)
                o->dataset = LG_DS_SHAREGPT;
            else if (strcmp(val, "trace") == 0)
                o->dataset = LG_DS_TRACE;
            else
                return BAD("must be random, shared-prefix, sharegpt or trace");
        } else if (IS("--dataset-path"))
            CHECK(copy_str(o->dataset_path, sizeof o->dataset_path, flag, val, err, errlen));
        else if (IS("--trace-speedup")) {
            if (rb_parse_double(val, 0.0, 1e9, &o->trace_speedup) || !(o->trace_speedup > 0.0))
                return BAD("must be > 0");
        } else if (IS("--random-input-len"))
            CHECK(parse_i32(flag, val, 1, 1000000, &o->random_input_len, err, errlen));
        else if (IS("--random-output-len"))
            CHECK(parse_i32(flag, val, 1, 1000000, &o->random_output_len, err, errlen));
        else if (IS("--random-range-ratio")) {
            if (rb_parse_double(val, 0.0, 1.0, &o->random_range_ratio) ||
                o->random_range_ratio >= 1.0)
                return BAD("must be in [0, 1)");
        } else if (IS("--random-len-dist")) {
            if (strcmp(val, "fixed") == 0)
                o->random_len_dist = LG_LEN_FIXED;
            else if (strcmp(val, "uniform") == 0)
                o->random_len_dist = LG_LEN_UNIFORM;
            else if (strcmp(val, "normal") == 0)
                o->random_len_dist = LG_LEN_NORMAL;
            else if (strcmp(val, "lognormal") == 0)
                o->random_len_dist = LG_LEN_LOGNORMAL;
            else
                return BAD("must be fixed, uniform, normal or lognormal");
        } else if (IS("--prefix-groups"))
            CHECK(parse_i32(flag, val, 1, 100000, &o->prefix_groups, err, errlen));
        else if (IS("--prefix-prompts-per-group"))
            CHECK(parse_i32(flag, val, 1, 100000, &o->prefix_prompts_per_group, err, errlen));
        else if (IS("--prefix-system-len"))
            CHECK(parse_i32(flag, val, 0, 1000000, &o->prefix_system_len, err, errlen));
        else if (IS("--prefix-question-len"))
            CHECK(parse_i32(flag, val, 1, 1000000, &o->prefix_question_len, err, errlen));
        else if (IS("--sim-stamps")) {
            if (strcmp(val, "auto") == 0)
                o->sim_stamps = LG_STAMPS_AUTO;
            else if (strcmp(val, "on") == 0)
                o->sim_stamps = LG_STAMPS_ON;
            else if (strcmp(val, "off") == 0)
                o->sim_stamps = LG_STAMPS_OFF;
            else
                return BAD("must be auto, on or off");
        } else if (IS("--client-cost"))
            CHECK(parse_cost(o, flag, val, err, errlen));
        else if (IS("--receive-clock")) {
            if (strcmp(val, "kernel") == 0)
                o->receive_clock = LG_RXC_KERNEL;
            else if (strcmp(val, "user") == 0)
                o->receive_clock = LG_RXC_USER;
            else
                return BAD("must be kernel or user");
        } else if (IS("--bias-budget"))
            CHECK(parse_budget(o, flag, val, err, errlen));
        else if (IS("--request-timeout")) {
            CHECK(parse_dur(flag, val, 0, &o->request_timeout_ns, err, errlen));
            /* curl counts whole milliseconds, and reads 0 as "no timeout". */
            if (o->request_timeout_ns < 1000000) return BAD("must be at least 1ms");
        } else if (IS("--drain-timeout"))
            CHECK(parse_dur(flag, val, 1, &o->drain_timeout_ns, err, errlen));
        else if (IS("--metric-percentiles"))
            CHECK(parse_percentiles(o, flag, val, err, errlen));
        else if (IS("--percentile-metrics"))
            CHECK(parse_metrics(o, flag, val, err, errlen));
        else if (IS("--result-dir"))
            CHECK(copy_str(o->result_dir, sizeof o->result_dir, flag, val, err, errlen));
        else if (IS("--result-filename")) {
            CHECK(copy_str(o->result_filename, sizeof o->result_filename, flag, val, err, errlen));
            if (strchr(val, '/'))
                return BAD("must be a file name (use --result-dir for the folder)");
        } else if (IS("--certificate"))
            CHECK(copy_str(o->certificate, sizeof o->certificate, flag, val, err, errlen));
        else if (IS("--config"))
            CHECK(copy_str(o->config, sizeof o->config, flag, val, err, errlen));
        else
            return fail(err, errlen, "unknown flag '%s'%s (see --help)", flag, "");
#undef IS
#undef NEXT
#undef CHECK
    }
    return 0;
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

int lg_cli_finish(lg_opts *o, char *err, size_t errlen)
{
    const char *flag, *val;
    char num[64];
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
    o->chat = strstr(o->endpoint, "chat") != NULL;
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
        double lo =
            o->sweep_min_rate > 0.0 ? o->sweep_min_rate : o->sweep_max_rate / pow(2.0, n - 1);
        if (lo > o->sweep_max_rate) {
            snprintf(num, sizeof num, "%g", lo);
            flag = "--sweep-min-rate";
            val = num;
            return BAD("must not exceed --sweep-max-rate");
        }
        for (int i = 0; i < n; i++) {
            double r;
            if (o->sweep == LG_SWEEP_LINEAR)
                r = o->sweep_max_rate * (i + 1) / n;
            else
                r = n == 1 ? o->sweep_max_rate
                           : lo * pow(o->sweep_max_rate / lo, (double)i / (n - 1));
            o->stages[i] = (lg_stage){.rate_per_s = r, .duration_ns = o->stage_duration_ns};
        }
        o->n_stages = n;
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
    if ((o->dataset == LG_DS_SHAREGPT || o->dataset == LG_DS_TRACE) && !o->dataset_path[0]) {
        flag = "--dataset-path";
        val = "(none)";
        return BAD("is required by --dataset-name sharegpt|trace");
    }
    if (o->dataset == LG_DS_TRACE && o->max_concurrency && !o->rate_given) {
        flag = "--max-concurrency";
        val = "with a trace";
        return BAD("a trace is replayed open loop; a cap needs --request-rate too");
    }
    if (o->prompt_pool_given && (o->dataset == LG_DS_PREFIX || o->dataset == LG_DS_TRACE)) {
        flag = "--prompt-pool-size";
        val = o->dataset == LG_DS_PREFIX ? "with shared-prefix" : "with a trace";
        return BAD("sizes the random and sharegpt pools only (shared-prefix: --prefix-groups x "
                   "--prefix-prompts-per-group; a trace has no pool)");
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
    if (o->max_concurrency && !o->rate_given && o->n_stages == 1) {
        /* Closed loop: no arrival times; the stage keeps only its bounds. */
        o->stages[0].rate_per_s = INFINITY;
    }
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
    double words = (double)o->random_input_len * (1.0 + o->random_range_ratio);
    size_t per = lg_pool_bytes_per_prompt((int64_t)words);
    o->prompt_pool_size = (int64_t)lg_pool_size_for(o->planned_arrivals, per, LG_POOL_BUDGET_BYTES);
}

const char *lg_cli_usage(void)
{
    return "usage: loadgen [FLAGS]\n"
           "An open-loop, multi-process load generator for OpenAI-compatible servers.\n"
           "Latency is measured from each request's intended send time and from its\n"
           "actual dispatch; every report says how much of it is the client's own doing.\n"
           "\n"
           "Target:\n"
           "  --base-url URL                  server (default http://127.0.0.1:8000); loopback "
           "only\n"
           "  --allow-remote                  allow a base URL that is not a loopback address\n"
           "  --endpoint PATH                 /v1/completions (default) or /v1/chat/completions\n"
           "  --model NAME                    model name sent in each request (default sim-model)\n"
           "  --tokenizer NAME                recorded as tokenizer_id (token counts come from the "
           "server)\n"
           "  --metadata KEY=VALUE            written into the result JSON (repeatable)\n"
           "  --host H --port P, --backend B, --disable-tqdm, ...\n"
           "                                  vLLM bench's own flags, read as loadgen's "
           "(loadgen/lg_vllm.h)\n"
           "  --header K:V                    extra request header (repeatable)\n"
           "                                  OPENAI_API_KEY in the environment -> Authorization: "
           "Bearer\n"
           "Processes:\n"
           "  --num-workers K                 worker processes (default: online CPUs; 0: one "
           "in-process)\n"
           "  --max-connections-per-worker N  connection limit of each worker (default 512)\n"
           "  --nice N                        scheduling priority of the workers, -20..19 "
           "(default:\n"
           "                                  unchanged; negative needs privileges)\n"
           "  --realtime-priority P           run the workers SCHED_FIFO at priority 1..99 (needs\n"
           "                                  privileges): wake-ups on a shared host are then not\n"
           "                                  delayed by other processes (default 0: off)\n"
           "Durations (D): a plain number is seconds (10 = 10 s); a unit may be given:\n"
           "  250us, 500ms, 2s, 1.5m, 1h.\n"
           "Load (open loop by default):\n"
           "  --request-rate R                requests/s over all workers (default inf: all at "
           "once)\n"
           "  --burstiness B                  gamma shape of the gaps: 1 Poisson (default), inf "
           "constant\n"
           "  --num-prompts N                 requests to send (default 1000)\n"
           "  --duration D                    send for D seconds instead (e.g. 30, or 30s)\n"
           "  --stage RATE:D                  a stage of the run (repeatable; e.g. 100:10 or "
           "100:10s)\n"
           "  --stage-pause D                 idle time between stages (default 0)\n"
           "  --sweep linear|geometric        stages up to --sweep-max-rate\n"
           "  --sweep-stages N                number of sweep stages (default 5; 10 until "
           "saturation)\n"
           "  --sweep-max-rate R              the sweep's last rate\n"
           "  --sweep-min-rate R              geometric sweep's first rate (default max/2^(N-1))\n"
           "  --stage-duration D              duration of each sweep stage\n"
           "  --sweep-until-saturation        stop after the first saturated stage: by the client\n"
           "                                  (dispatched < 95% of scheduled, or > 1% later than\n"
           "                                  --saturation-lag-ms) or by the server (completed <\n"
           "                                  95% of offered with a growing backlog, or TTFT p50\n"
           "                                  past its knee); the report's \"knee\" says which\n"
           "  --saturation-lag-ms MS          lag bound of saturation (default 10)\n"
           "  --max-concurrency C             alone: closed loop with C in flight; with a rate: a "
           "cap\n"
           "                                  (waiting for a slot counts in latency from intended "
           "time)\n"
           "  --seed S                        seed of the arrival schedule and the dataset "
           "(default 0)\n"
           "Data:\n"
           "  --dataset-name NAME             random (default), shared-prefix, sharegpt, trace\n"
           "  --dataset-path FILE             ShareGPT JSON, or an Azure-style trace CSV\n"
           "  --trace-speedup X               replay a trace X times faster (default 1)\n"
           "  --prompt-pool-size N            distinct prompts; request i uses prompt i mod N\n"
           "                                  (default: one per planned request, within 512 MiB;\n"
           "                                  a smaller N repeats prompts on purpose)\n"
           "  --random-input-len N            prompt words (default 1024)\n"
           "  --random-output-len N           max_tokens (default 128)\n"
           "  --random-range-ratio R          spread of the lengths, in [0, 1) (default 0): "
           "lengths in\n"
           "                                  [L(1-R), L(1+R)], as today's vLLM; vLLM v0.6.1 "
           "drew\n"
           "                                  randint(L*R, L): its R=0.5 is not this R=0.5\n"
           "  --random-len-dist D             fixed, uniform (default), normal, lognormal\n"
           "  --prefix-groups N               shared-prefix: groups (default 4)\n"
           "  --prefix-prompts-per-group N    shared-prefix: prompts per group (default 16)\n"
           "  --prefix-system-len N           shared-prefix: system prompt words (default 512)\n"
           "  --prefix-question-len N         shared-prefix: question words (default 64)\n"
           "  --ignore-eos                    ask the server to ignore end-of-sequence\n"
           "  --no-stream | --stream          non-streamed responses, or streamed SSE (the "
           "default)\n"
           "  --sim-stamps auto|on|off        send X-Sim-Stamp: 1 for simserver's ground truth "
           "(auto: on)\n"
           "  --client-cost fixed:US|exp:US   busy CPU work per received event (emulates a slow "
           "client)\n"
           "  --receive-clock kernel|user     a token's receive time: the kernel's receive stamp\n"
           "                                  (default; user: when the loop picked it up)\n"
           "  --bias-budget mean:D,p99:D      the client's own delay per token the verdict\n"
           "                                  accepts (default mean:100us,p99:2ms)\n"
           "Limits:\n"
           "  --request-timeout D             bound on each request, at least 1ms (default 60s)\n"
           "  --drain-timeout D               wait for in-flight requests at the end or on SIGINT\n"
           "                                  (default 5s)\n"
           "  (fixed)                         a non-streamed response body is kept up to 1 MiB;\n"
           "                                  a longer one fails as body_too_large\n"
           "Report:\n"
           "  --metric-percentiles LIST       percentiles (default 50,90,99)\n"
           "  --percentile-metrics LIST       of ttft,tpot,itl,e2el,ntpot (default all)\n"
           "  --goodput NAME:MS ...           SLOs for goodput (ttft, tpot, itl, ntpot, e2el)\n"
           "  --save-result                   write the result JSON\n"
           "  --result-dir DIR                its folder (default .)\n"
           "  --result-filename NAME          its name (default "
           "loadgen-<rate>qps-<model>-<time>.json)\n"
           "  --save-detailed                 also one JSON line per request (<result>.jsonl)\n"
           "  --certificate FILE              refuse a plan beyond this host certificate\n"
           "  --force                         run anyway beyond the certificate\n"
           "  --quiet                         no summary table\n"
           "  --mpi                           under mpirun: each rank one worker, rank 0 reports\n"
           "  --mpi-salvage N                 report an --mpi run of N ranks from its snapshots\n"
           "  --progress | --no-progress      live progress line on stderr (default: when a "
           "terminal)\n"
           "  --config FILE                   Inference Perf config, YAML or JSON; flags override "
           "it\n"
           "  --help                          this text (--version: the version)\n"
           "\n"
           "Exit codes: 0 ok, 1 run failed, 2 bad usage or input, 130/143/129 interrupted\n"
           "(SIGINT/SIGTERM/SIGHUP).\n";
}
