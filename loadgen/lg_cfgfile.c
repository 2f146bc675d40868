/* lg_cfgfile: Inference Perf's config schema, YAML or JSON, mapped onto
 * lg_config's keys (see lg_cfgfile.h for the mapping). */
#include "lg_cfgfile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_yaml.h"

typedef struct cfx {
    lg_args extra;      /* flags lg_config has no key for */
    char ignored[1024]; /* key paths accepted without effect */
    char *notes;
    size_t notes_cap, notes_len;
    char *err;
    size_t errlen;
} cfx;

static void note(cfx *c, const char *fmt, ...)
{
    if (!c->notes || c->notes_len + 1 >= c->notes_cap) return;
    size_t room = c->notes_cap - c->notes_len;
    int n = snprintf(c->notes + c->notes_len, room, "config: ");
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < room) n += vsnprintf(c->notes + c->notes_len + n, room - n, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n + 1 >= room) {
        c->notes_len = c->notes_cap - 1; /* full: keep what fits */
        c->notes[c->notes_len - 1] = '\n';
        return;
    }
    c->notes_len += (size_t)n;
    c->notes[c->notes_len++] = '\n';
    c->notes[c->notes_len] = '\0';
}

/* "config: PATH: WHAT, got VALUE"; returns -EINVAL. */
static int refuse(cfx *c, const char *path, const cJSON *v, const char *what)
{
    return lg_config_refuse(c->err, c->errlen, path, v, what);
}

static int add_arg(cfx *c, const char *flag, const char *value)
{
    if (lg_args_add(&c->extra, flag) == 0 && (!value || lg_args_add(&c->extra, value) == 0))
        return 0;
    snprintf(c->err, c->errlen, "config: out of memory");
    return -ENOMEM;
}

/* A key accepted but without effect: removed from the tree, named in the
 * note. */
static void ignore(cfx *c, cJSON *obj, const char *path, const char *key)
{
    cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, key);
    if (!v) return;
    cJSON_Delete(v);
    size_t l = strlen(c->ignored);
    snprintf(c->ignored + l, sizeof c->ignored - l, "%s%s%s%s", l ? ", " : "", path,
             *path ? "." : "", key);
}

/* obj.key when obj is an object, else NULL. */
static cJSON *get(cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

/* Renames obj.from to obj.to (a repeated `to` is then lg_config's "given
 * twice"). */
static int rename_key(cfx *c, cJSON *obj, const char *from, const char *to)
{
    cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, from);
    if (!v) return 0;
    if (!cJSON_AddItemToObject(obj, to, v)) {
        cJSON_Delete(v);
        snprintf(c->err, c->errlen, "config: out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* A whole number in [1, max] as text, or an error naming path. */
static int whole(cfx *c, const cJSON *v, const char *path, double max, char *buf, size_t cap)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > max)
        return refuse(c, path, v, "must be a whole number >= 1");
    snprintf(buf, cap, "%.0f", v->valuedouble);
    return 0;
}

/* obj.key, a whole number in [1, max], taken out of the tree as flag. */
static int whole_flag(cfx *c, cJSON *obj, const char *path, const char *key, double max,
                      const char *flag)
{
    cJSON *v = get(obj, key);
    if (!v) return 0;
    char p[160], num[64];
    snprintf(p, sizeof p, "%s.%s", path, key);
    int rc = whole(c, v, p, max, num, sizeof num);
    if (!rc) rc = add_arg(c, flag, num);
    cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
    return rc;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) return rc_;                                                                       \
    } while (0)

int lg_url_unspecified_to_loopback(char *url, size_t cap)
{
    const char *scheme = strncmp(url, "http://", 7) == 0    ? "http://"
                         : strncmp(url, "https://", 8) == 0 ? "https://"
                                                            : NULL;
    if (!scheme) return 0;
    size_t s = strlen(scheme);
    const char *host = url + s;
    if (strncmp(host, "0.0.0.0", 7) != 0 || (host[7] && !strchr(":/?#", host[7]))) return 0;
    if (strlen(url) + 2 >= cap) return 0;
    memmove(url + s + 9, url + s + 7, strlen(url + s + 7) + 1);
    memcpy(url + s, "127.0.0.1", 9);
    return 1;
}

/* A header from the config: "K: V" as --header. */
static int add_header(cfx *c, const char *path, const char *k, const cJSON *v)
{
    char num[64];
    const char *val = cJSON_IsString(v) ? v->valuestring : NULL;
    if (cJSON_IsNumber(v)) {
        snprintf(num, sizeof num, "%.17g", v->valuedouble);
        val = num;
    }
    if (!val) return refuse(c, path, v, "must be a string");
    size_t n = strlen(k) + strlen(val) + 3;
    char *h = malloc(n);
    if (!h) {
        snprintf(c->err, c->errlen, "config: out of memory");
        return -ENOMEM;
    }
    snprintf(h, n, "%s: %s", k, val);
    int rc = add_arg(c, "--header", h);
    free(h);
    return rc;
}

/* server.api_key: Authorization: Bearer KEY; api.headers {K: V}: each a
 * --header K: V (Inference Perf's). */
static int map_headers(cfx *c, cJSON *server, cJSON *api)
{
    cJSON *key = get(server, "api_key");
    if (key) {
        if (!cJSON_IsString(key) || !key->valuestring[0])
            return refuse(c, "server.api_key", key, "must be a non-empty string");
        char *bearer = malloc(strlen(key->valuestring) + 8);
        if (!bearer) {
            snprintf(c->err, c->errlen, "config: out of memory");
            return -ENOMEM;
        }
        sprintf(bearer, "Bearer %s", key->valuestring);
        cJSON *b = cJSON_CreateString(bearer);
        free(bearer);
        int rc = b ? add_header(c, "server.api_key", "Authorization", b) : -ENOMEM;
        cJSON_Delete(b);
        if (rc) return rc;
        cJSON_DeleteItemFromObjectCaseSensitive(server, "api_key");
    }
    cJSON *hs = get(api, "headers");
    if (!hs) return 0;
    if (!cJSON_IsObject(hs))
        return refuse(c, "api.headers", hs, "must be an object of names and values");
    for (cJSON *h = hs->child; h; h = h->next) {
        char path[160];
        snprintf(path, sizeof path, "api.headers.%.100s", h->string);
        TRY(add_header(c, path, h->string, h));
    }
    cJSON_DeleteItemFromObjectCaseSensitive(api, "headers");
    return 0;
}

static int map_server(cfx *c, cJSON *server)
{
    if (!cJSON_IsObject(server)) return 0;
    ignore(c, server, "server", "type");
    cJSON *v = get(server, "ignore_eos");
    if (v) {
        if (!cJSON_IsBool(v)) return refuse(c, "server.ignore_eos", v, "must be true or false");
        TRY(add_arg(c, cJSON_IsTrue(v) ? "--ignore-eos" : "--no-ignore-eos", NULL));
        cJSON_DeleteItemFromObjectCaseSensitive(server, "ignore_eos");
    }
    v = get(server, "base_url");
    if (cJSON_IsString(v)) {
        char url[1024];
        snprintf(url, sizeof url, "%s", v->valuestring);
        if (strlen(v->valuestring) < sizeof url - 2 &&
            lg_url_unspecified_to_loopback(url, sizeof url)) {
            note(c, "server.base_url %s: 0.0.0.0 means this host; connecting to %s", v->valuestring,
                 url);
            if (!cJSON_SetValuestring(v, url)) {
                cJSON *n = cJSON_CreateString(url);
                if (!n || !cJSON_ReplaceItemInObjectCaseSensitive(server, "base_url", n)) {
                    cJSON_Delete(n);
                    snprintf(c->err, c->errlen, "config: out of memory");
                    return -ENOMEM;
                }
            }
        }
    }
    return 0;
}

/* load.type "concurrent" with Inference Perf's stages {concurrency_level,
 * num_requests}: one stage is a closed loop (--max-concurrency,
 * --num-prompts); more are closed stages run in turn (--closed-stage C:N),
 * with load.interval between them. */
static int map_concurrent(cfx *c, cJSON *load)
{
    cJSON *stages = get(load, "stages");
    if (!stages) return 0;
    int n = cJSON_IsArray(stages) ? cJSON_GetArraySize(stages) : 0;
    if (n < 1 || n > LG_MAX_STAGES)
        return refuse(c, "load.stages", stages,
                      "must be a list of 1 to 64 {concurrency_level, num_requests}");
    int i = 0;
    for (cJSON *st = stages->child; st; st = st->next, i++) {
        char at[48], num[32], cl[32] = "", nr[32] = "";
        snprintf(at, sizeof at, "load.stages[%d]", i);
        if (!cJSON_IsObject(st))
            return refuse(c, at, st, "must be {concurrency_level, num_requests}");
        for (cJSON *m = st->child; m; m = m->next) {
            char path[160];
            snprintf(path, sizeof path, "%s.%.80s", at, m->string);
            if (strcmp(m->string, "concurrency_level") == 0) {
                TRY(whole(c, m, path, 10000000, num, sizeof num));
                if (get(load, "concurrency"))
                    return refuse(c, path, m, "and load.concurrency both given");
                snprintf(cl, sizeof cl, "%s", num);
            } else if (strcmp(m->string, "num_requests") == 0) {
                TRY(whole(c, m, path, 1e15, num, sizeof num));
                snprintf(nr, sizeof nr, "%s", num);
            } else if ((strcmp(m->string, "rate") == 0 || strcmp(m->string, "duration") == 0) &&
                       cJSON_IsNull(m)) {
                /* set at run time by Inference Perf; null in a dumped config */
            } else {
                return refuse(c, path, m,
                              "unknown key in a concurrent stage (known here: "
                              "concurrency_level, num_requests)");
            }
        }
        if (!cl[0] || !nr[0])
            return refuse(c, at, st, "needs both concurrency_level and num_requests");
        if (n == 1) {
            cJSON *lvl = get(st, "concurrency_level");
            if (!cJSON_AddNumberToObject(load, "concurrency", lvl->valuedouble)) {
                snprintf(c->err, c->errlen, "config: out of memory");
                return -ENOMEM;
            }
            TRY(add_arg(c, "--num-prompts", nr));
        } else {
            char cn[72];
            snprintf(cn, sizeof cn, "%s:%s", cl, nr);
            TRY(add_arg(c, "--closed-stage", cn));
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(load, "stages");
    if (n > 1) cJSON_DeleteItemFromObjectCaseSensitive(load, "type"); /* the stages say it */
    return 0;
}

/* load.type "trace_replay": the trace's rows set the arrivals and lengths. */
static int map_trace(cfx *c, cJSON *root, cJSON *load)
{
    cJSON *trace = get(load, "trace");
    cJSON *file = get(trace, "file"), *format = get(trace, "format");
    if (!cJSON_IsObject(trace))
        return refuse(c, "load.trace", trace,
                      "is required by load.type \"trace_replay\": {file, format}");
    for (cJSON *m = trace->child; m; m = m->next)
        if (strcmp(m->string, "file") && strcmp(m->string, "format")) {
            char path[128];
            snprintf(path, sizeof path, "load.trace.%.80s", m->string);
            return refuse(c, path, m, "unknown key (known here: file, format)");
        }
    if (!cJSON_IsString(file) || !file->valuestring[0])
        return refuse(c, "load.trace.file", file, "must be a non-empty string");
    if (format && (!cJSON_IsString(format) || strcmp(format->valuestring, "AzurePublicDataset")))
        return refuse(c, "load.trace.format", format, "must be \"AzurePublicDataset\"");
    cJSON *data = get(root, "data");
    if (!data) {
        data = cJSON_AddObjectToObject(root, "data");
        if (!data) goto nomem;
    }
    if (!cJSON_IsObject(data)) return 0; /* lg_config names it */
    if (get(data, "path"))
        return refuse(c, "data.path", get(data, "path"), "and load.trace.file both given");
    cJSON *dtrace = get(data, "trace");
    if (dtrace) {
        cJSON *dfile = get(dtrace, "file");
        if (!cJSON_IsString(dfile) || strcmp(dfile->valuestring, file->valuestring))
            return refuse(c, "data.trace", dtrace,
                          "must name the same file as load.trace (lengths come from the trace)");
        cJSON_DeleteItemFromObjectCaseSensitive(data, "trace");
    }
    cJSON *dtype = get(data, "type");
    if (dtype && !(cJSON_IsString(dtype) && strcmp(dtype->valuestring, "random") == 0))
        return refuse(c, "data.type", dtype,
                      "must be \"random\" (or absent) with load.type \"trace_replay\"");
    cJSON_DeleteItemFromObjectCaseSensitive(data, "type");
    if (!cJSON_AddStringToObject(data, "type", "trace") ||
        !cJSON_AddStringToObject(data, "path", file->valuestring))
        goto nomem;
    if (get(load, "stages")) {
        note(c, "load.stages: a trace is replayed at its own timestamps (--trace-speedup "
                "scales them); the stages' rates and durations are not used");
        cJSON_DeleteItemFromObjectCaseSensitive(load, "stages");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(load, "trace");
    cJSON_DeleteItemFromObjectCaseSensitive(load, "type");
    return 0;
nomem:
    snprintf(c->err, c->errlen, "config: out of memory");
    return -ENOMEM;
}

static int map_load(cfx *c, cJSON *root, cJSON *load)
{
    if (!cJSON_IsObject(load)) return 0;
    TRY(rename_key(c, load, "base_seed", "seed"));
    /* Inference Perf waits 1 s between stages unless told otherwise. */
    cJSON *stages = get(load, "stages");
    if (cJSON_IsArray(stages) && cJSON_GetArraySize(stages) > 1 && !get(load, "interval") &&
        !cJSON_AddNumberToObject(load, "interval", 1)) {
        snprintf(c->err, c->errlen, "config: out of memory");
        return -ENOMEM;
    }
    ignore(c, load, "load", "circuit_breakers");
    ignore(c, load, "load", "worker_max_tcp_connections");
    TRY(whole_flag(c, load, "load", "worker_max_concurrency", 100000,
                   "--max-connections-per-worker"));
    char num[64];
    cJSON *v = get(load, "request_timeout");
    if (v && !cJSON_IsNull(v)) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e6)
            return refuse(c, "load.request_timeout", v, "must be a number of seconds > 0");
        snprintf(num, sizeof num, "%.9gs", v->valuedouble);
        TRY(add_arg(c, "--request-timeout", num));
    }
    if (v) cJSON_DeleteItemFromObjectCaseSensitive(load, "request_timeout");
    v = get(load, "type");
    if (cJSON_IsString(v) && strcmp(v->valuestring, "concurrent") == 0)
        TRY(map_concurrent(c, load));
    else if (cJSON_IsString(v) && strcmp(v->valuestring, "trace_replay") == 0)
        TRY(map_trace(c, root, load));
    return 0;
}

/* A length given as Inference Perf's distribution {type, mean, std_dev, min,
 * max, ...}: its mean, said in a note. */
static int dist_mean(cfx *c, cJSON *obj, const char *path, const char *key)
{
    cJSON *d = get(obj, key);
    if (!cJSON_IsObject(d)) return 0;
    cJSON *mean = get(d, "mean");
    char p[160];
    snprintf(p, sizeof p, "%s.%s", path, key);
    if (!cJSON_IsNumber(mean)) return refuse(c, p, d, "a distribution needs a number \"mean\"");
    note(c, "%s: a distribution; every prompt uses its mean, %.9g tokens", p,
         floor(mean->valuedouble + 0.5));
    cJSON *n = cJSON_CreateNumber(floor(mean->valuedouble + 0.5));
    if (!n || !cJSON_ReplaceItemInObjectCaseSensitive(obj, key, n)) {
        cJSON_Delete(n);
        snprintf(c->err, c->errlen, "config: out of memory");
        return -ENOMEM;
    }
    return 0;
}

/* data.input_distribution / output_distribution: Inference Perf's
 * {type, mean, std_dev, min, max} as --input-distribution's text (its mean
 * stays for lg_config's --random-input-len); lg_len_ip_parse checks it. */
static int map_distribution(cfx *c, cJSON *d, const char *key, const char *flag)
{
    if (!cJSON_IsObject(d)) return 0;
    char spec[256] = "", p[64];
    snprintf(p, sizeof p, "data.%s", key);
    static const char *const nums[] = {"mean", "std_dev", "min", "max"};
    for (int k = 0; k < 4; k++) {
        cJSON *v = get(d, nums[k]);
        if (!v) continue;
        if (!cJSON_IsNumber(v)) {
            char q[96];
            snprintf(q, sizeof q, "%s.%s", p, nums[k]);
            return refuse(c, q, v, "must be a number");
        }
        size_t l = strlen(spec);
        snprintf(spec + l, sizeof spec - l, "%s%s:%.17g", l ? "," : "", nums[k], v->valuedouble);
        if (k) cJSON_DeleteItemFromObjectCaseSensitive(d, nums[k]);
    }
    cJSON *t = get(d, "type");
    if (t) {
        if (!cJSON_IsString(t)) return refuse(c, p, t, "type must be a string");
        size_t l = strlen(spec);
        snprintf(spec + l, sizeof spec - l, "%stype:%.40s", l ? "," : "", t->valuestring);
        cJSON_DeleteItemFromObjectCaseSensitive(d, "type");
    }
    if (!get(d, "mean")) return 0; /* lg_config says what is missing */
    note(c, "%s: lengths drawn as Inference Perf draws them (%s)", p, spec);
    return add_arg(c, flag, spec);
}

static int map_data(cfx *c, cJSON *root, cJSON *data)
{
    if (!cJSON_IsObject(data)) return 0;
    cJSON *t = get(data, "type");
    if (cJSON_IsString(t) && strcmp(t->valuestring, "shareGPT") == 0) {
        cJSON_SetValuestring(t, "sharegpt");
    } else if (cJSON_IsString(t) && strcmp(t->valuestring, "synthetic") == 0) {
        note(c, "data.type synthetic: random prompts of the given lengths (no text corpus here)");
        cJSON_SetValuestring(t, "random");
    }
    static const char *const dkeys[] = {"input_distribution", "output_distribution"};
    static const char *const dflags[] = {"--input-distribution", "--output-distribution"};
    for (int i = 0; i < 2; i++)
        TRY(map_distribution(c, get(data, dkeys[i]), dkeys[i], dflags[i]));
    cJSON *sp = get(data, "shared_prefix");
    if (!cJSON_IsObject(sp)) return 0;
    TRY(rename_key(c, sp, "num_unique_system_prompts", "num_groups"));
    TRY(rename_key(c, sp, "num_users_per_system_prompt", "num_prompts_per_group"));
    TRY(dist_mean(c, sp, "data.shared_prefix", "system_prompt_len"));
    TRY(dist_mean(c, sp, "data.shared_prefix", "question_len"));
    TRY(dist_mean(c, sp, "data.shared_prefix", "output_len"));
    TRY(whole_flag(c, sp, "data.shared_prefix", "output_len", 1000000, "--random-output-len"));
    cJSON *v = get(sp, "enable_multi_turn_chat");
    if (v) {
        if (!cJSON_IsBool(v))
            return refuse(c, "data.shared_prefix.enable_multi_turn_chat", v,
                          "must be true or false");
        /* Inference Perf reads it with data.type shared_prefix only */
        int prefix = cJSON_IsString(t) && strcmp(t->valuestring, "shared_prefix") == 0;
        if (cJSON_IsTrue(v) && prefix) TRY(add_arg(c, "--prefix-multi-turn", NULL));
        if (cJSON_IsTrue(v) && !prefix)
            note(c, "data.shared_prefix.enable_multi_turn_chat: has no effect without data.type "
                    "shared_prefix");
        cJSON_DeleteItemFromObjectCaseSensitive(sp, "enable_multi_turn_chat");
    }
    v = cJSON_DetachItemFromObjectCaseSensitive(sp, "seed");
    if (v) {
        cJSON *load = get(root, "load");
        if (!load) load = cJSON_AddObjectToObject(root, "load");
        if (cJSON_IsObject(load) && !get(load, "seed")) {
            cJSON_AddItemToObject(load, "seed", v);
        } else {
            note(c, "data.shared_prefix.seed: the load's seed is used for the prompts too");
            cJSON_Delete(v);
        }
    }
    return 0;
}

static int map_report(cfx *c, cJSON *report)
{
    if (!cJSON_IsObject(report)) return 0;
    ignore(c, report, "report", "prometheus");
    ignore(c, report, "report", "session_lifecycle");
    cJSON *rl = get(report, "request_lifecycle");
    if (cJSON_IsTrue(get(rl, "summary")) || cJSON_IsTrue(get(rl, "per_stage")))
        note(c, "report.request_lifecycle: Inference Perf's summary and per-stage files are "
                "written with --report-format inference-perf (beside the result)");
    static const char *const rkeys[] = {"summary",           "per_stage",
                                        "per_request",       "per_adapter",
                                        "per_adapter_stage", "use_server_output_tokens",
                                        "max_error_messages"};
    for (size_t i = 0; i < sizeof rkeys / sizeof rkeys[0] && cJSON_IsObject(rl); i++)
        ignore(c, rl, "report.request_lifecycle", rkeys[i]);
    cJSON *cs = get(get(report, "goodput"), "constraints");
    if (!cJSON_IsObject(cs)) return 0;
    TRY(rename_key(c, cs, "request_latency", "e2el"));
    for (cJSON *m = cs->child; m; m = m->next) {
        char path[160];
        snprintf(path, sizeof path, "report.goodput.constraints.%.80s", m->string);
        if (!cJSON_IsNumber(m) || !(m->valuedouble > 0) || m->valuedouble > 1e9)
            return refuse(c, path, m, "must be a number of seconds > 0 (Inference Perf's unit)");
        cJSON_SetNumberValue(m, m->valuedouble * 1e3); /* lg_config reads ms */
    }
    return 0;
}

/* metrics: {type: prometheus, prometheus: {url, scrape_interval}} is
 * --prometheus-url and --prometheus-scrape-interval (lg_promql.h); the
 * rest of metrics, and another type, are accepted without effect. */
static void map_metrics(cfx *c, cJSON *metrics)
{
    cJSON *type = get(metrics, "type"), *prom = get(metrics, "prometheus");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "prometheus") || !cJSON_IsObject(prom))
        return;
    cJSON *keep = cJSON_CreateObject();
    cJSON *kp = keep ? cJSON_AddObjectToObject(keep, "prometheus") : NULL;
    static const char *const keys[] = {"url", "scrape_interval"};
    for (size_t i = 0; kp && i < sizeof keys / sizeof keys[0]; i++) {
        cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(prom, keys[i]);
        if (v) cJSON_AddItemToObject(kp, keys[i], v);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(metrics, "type");
    for (cJSON *k = prom->child; k; k = k->next) {
        size_t l = strlen(c->ignored);
        snprintf(c->ignored + l, sizeof c->ignored - l, "%smetrics.prometheus.%.60s", l ? ", " : "",
                 k->string);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(metrics, "prometheus");
    for (cJSON *k = metrics->child; k; k = k->next) {
        size_t l = strlen(c->ignored);
        snprintf(c->ignored + l, sizeof c->ignored - l, "%smetrics.%.60s", l ? ", " : "",
                 k->string);
    }
    /* metrics now holds what is kept, for lg_config's key mapping */
    while (metrics->child)
        cJSON_Delete(cJSON_DetachItemViaPointer(metrics, metrics->child));
    if (kp) cJSON_AddItemToObject(metrics, "prometheus", cJSON_DetachItemViaPointer(keep, kp));
    cJSON_Delete(keep);
}

/* The text as a tree: JSON when it looks like JSON and is, else YAML. */
static cJSON *read_tree(const char *text, size_t len, cfx *c, int *json_failed)
{
    *json_failed = 0;
    if (lg_yaml_looks_like_json(text, len)) {
        const char *end = NULL;
        cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
        if (root) {
            while (end && end < text + len && strchr(" \t\r\n", *end) && *end)
                end++;
            if (end && end == text + len) return root;
            cJSON_Delete(root);
        }
        *json_failed = 1;
    }
    char yerr[256];
    cJSON *root = lg_yaml_parse(text, len, yerr, sizeof yerr);
    if (!root && !*json_failed) snprintf(c->err, c->errlen, "config: %s", yerr);
    return root;
}

int lg_cfgfile_to_args(const char *text, size_t len, lg_args *out, char *notes, size_t notes_cap,
                       char *err, size_t errlen)
{
    *out = (lg_args){0};
    char dummy[8];
    cfx c = {.notes = notes && notes_cap ? notes : NULL,
             .notes_cap = notes_cap,
             .err = err && errlen ? err : dummy,
             .errlen = err && errlen ? errlen : sizeof dummy};
    if (c.notes) c.notes[0] = '\0';
    int json_failed;
    cJSON *root = read_tree(text, len, &c, &json_failed);
    if (!root) {
        /* Neither JSON nor YAML: the JSON reader's message, with its line. */
        int rc = json_failed ? lg_config_to_args(text, len, out, err, errlen) : -EINVAL;
        if (rc == 0) {
            lg_args_free(out);
            rc = -EINVAL;
        }
        return rc;
    }
    int rc = 0;
    if (cJSON_IsObject(root)) {
        ignore(&c, root, "", "tokenizer");
        if (cJSON_IsString(get(get(root, "metrics"), "type")) &&
            !strcmp(get(get(root, "metrics"), "type")->valuestring, "prometheus") &&
            cJSON_IsObject(get(get(root, "metrics"), "prometheus")))
            map_metrics(&c, get(root, "metrics"));
        else
            ignore(&c, root, "", "metrics");
        ignore(&c, root, "", "storage");
        ignore(&c, root, "", "circuit_breakers");
        if (!rc) rc = map_headers(&c, get(root, "server"), get(root, "api"));
        if (!rc) rc = map_server(&c, get(root, "server"));
        if (!rc) rc = map_load(&c, root, get(root, "load"));
        if (!rc) rc = map_data(&c, root, get(root, "data"));
        if (!rc) rc = map_report(&c, get(root, "report"));
    }
    char *json = rc ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!rc && !json) {
        snprintf(c.err, c.errlen, "config: out of memory");
        rc = -ENOMEM;
    }
    if (!rc) rc = lg_config_to_args(json, strlen(json), out, err, errlen);
    free(json);
    for (int i = 0; !rc && i < c.extra.argc; i++)
        if (lg_args_add(out, c.extra.argv[i])) {
            snprintf(c.err, c.errlen, "config: out of memory");
            rc = -ENOMEM;
        }
    lg_args_free(&c.extra);
    if (rc) {
        lg_args_free(out);
        if (c.notes) c.notes[0] = '\0';
        return rc;
    }
    if (c.ignored[0])
        note(&c, "accepted without effect (they configure parts loadgen does not have): %s",
             c.ignored);
    return 0;
}
