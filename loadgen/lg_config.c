/* lg_config: Inference Perf's config keys (JSON) turned into loadgen's flags
 * (see lg_config.h for the mapping). Each key is checked for its type here,
 * so a mistake is reported by its key path; the CLI checks the values again. */
#include "lg_config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cli.h"
#include "rb_opts.h"
#include "rb_units.h"

typedef struct conv {
    lg_args *out;
    char *err;
    size_t errlen;
} conv;

/* The value as JSON text, shortened, for messages. */
static void show(const cJSON *v, char *buf, size_t cap)
{
    char *s = cJSON_PrintUnformatted(v);
    if (!s) {
        snprintf(buf, cap, "(?)");
        return;
    }
    if (strlen(s) > 60)
        snprintf(buf, cap, "%.57s...", s);
    else
        snprintf(buf, cap, "%s", s);
    free(s);
}

int lg_config_refuse(char *err, size_t errlen, const char *path, const cJSON *v, const char *what)
{
    char val[64];
    if (v) {
        show(v, val, sizeof val);
        snprintf(err, errlen, "config: %s: %s, got %s", path, what, val);
    } else {
        snprintf(err, errlen, "config: %s: %s", path, what);
    }
    return -EINVAL;
}

/* "config: PATH: WHAT, got VALUE"; returns -EINVAL. */
static int bad(conv *c, const char *path, const cJSON *v, const char *what)
{
    return lg_config_refuse(c->err, c->errlen, path, v, what);
}

int lg_args_add(lg_args *a, const char *s)
{
    char *d = strdup(s);
    if (!d) return -ENOMEM;
    char **p = realloc(a->argv, ((size_t)a->argc + 2) * sizeof *p);
    if (!p) {
        free(d);
        return -ENOMEM;
    }
    a->argv = p;
    a->argv[a->argc++] = d;
    a->argv[a->argc] = NULL;
    return 0;
}

static int push(conv *c, const char *s)
{
    if (lg_args_add(c->out, s) == 0) return 0;
    snprintf(c->err, c->errlen, "config: out of memory");
    return -ENOMEM;
}

static int emit(conv *c, const char *flag, const char *value)
{
    int rc = push(c, flag);
    return rc ? rc : value ? push(c, value) : 0;
}

/* The shortest text that reads back as v. */
static void fmt_num(double v, char *buf, size_t cap)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%lld", (long long)v);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, cap, "%.*g", p, v);
        if (strtod(buf, NULL) == v) return;
    }
}

/* Checks that obj is an object whose keys are all in `keys` (NULL-ended),
 * each at most once. */
static int check_object(conv *c, const cJSON *obj, const char *path, const char *const *keys)
{
    if (!cJSON_IsObject(obj)) return bad(c, *path ? path : "(top level)", obj, "must be an object");
    for (const cJSON *m = obj->child; m; m = m->next) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", m->string);
        int known = 0;
        for (const char *const *k = keys; *k; k++)
            known |= strcmp(m->string, *k) == 0;
        if (!known) {
            char what[320] = "unknown key (known here:";
            for (const char *const *k = keys; *k; k++) {
                size_t l = strlen(what);
                snprintf(what + l, sizeof what - l, " %s%s", *k, k[1] ? "," : ")");
            }
            return bad(c, sub, m, what);
        }
        for (const cJSON *p = obj->child; p != m; p = p->next)
            if (strcmp(p->string, m->string) == 0) return bad(c, sub, m, "given twice");
    }
    return 0;
}

/* The member at path.key, or NULL; the full path is written to sub. */
static const cJSON *member(const cJSON *obj, const char *path, const char *key, char *sub,
                           size_t cap)
{
    snprintf(sub, cap, "%s%s%s", path, *path ? "." : "", key);
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A whole number in [min, max] emitted as flag. */
static int emit_int(conv *c, const cJSON *v, const char *path, const char *flag, double min,
                    double max)
{
    char buf[64];
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < min ||
        v->valuedouble > max) {
        fmt_num(min, buf, sizeof buf);
        char what[128];
        int n = snprintf(what, sizeof what, "must be a whole number >= %s", buf);
        if (max < 9e15 && n > 0) {
            fmt_num(max, buf, sizeof buf);
            snprintf(what + n, sizeof what - (size_t)n, " and <= %s", buf);
        }
        return bad(c, path, v, what);
    }
    fmt_num(v->valuedouble, buf, sizeof buf);
    return emit(c, flag, buf);
}

/* A number > 0 (rates). */
static int positive(conv *c, const cJSON *v, const char *path, char *buf, size_t cap)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || isinf(v->valuedouble))
        return bad(c, path, v, "must be a number > 0");
    fmt_num(v->valuedouble, buf, cap);
    return 0;
}

/* A duration: a number of seconds (Inference Perf's unit) or a string with
 * a unit ("500ms", "2s"). Written to buf in the CLI's syntax. */
static int duration(conv *c, const cJSON *v, const char *path, int allow_zero, char *buf,
                    size_t cap)
{
    const char *what = allow_zero ? "must be seconds >= 0 or a duration with a unit (\"500ms\")"
                                  : "must be seconds > 0 or a duration with a unit (\"500ms\")";
    if (cJSON_IsNumber(v)) {
        double s = v->valuedouble;
        /* Under half a nanosecond would round to a zero duration. */
        if (!(s >= 0 && s < 1e9) || (!allow_zero && s < 0.5e-9)) return bad(c, path, v, what);
        fmt_num(s, buf, cap - 1);
        strcat(buf, "s");
        return 0;
    }
    int64_t ns;
    /* A bare number in a string is seconds too, as it is to the CLI. */
    if (!cJSON_IsString(v) || rb_parse_seconds_ns(v->valuestring, &ns) || (!allow_zero && ns == 0))
        return bad(c, path, v, what);
    size_t n = strlen(v->valuestring);
    /* The flag names its unit: a bare number gets the "s" it means. */
    int bare = n && strchr("0123456789.", v->valuestring[n - 1]);
    if (n + (size_t)bare >= cap) return bad(c, path, v, what);
    memcpy(buf, v->valuestring, n + 1);
    if (bare) strcat(buf, "s");
    return 0;
}

/* One of the strings in names (NULL-ended); returns its index or -1. */
static int choice(const cJSON *v, const char *const *names)
{
    if (!cJSON_IsString(v)) return -1;
    for (int i = 0; names[i]; i++)
        if (strcmp(v->valuestring, names[i]) == 0) return i;
    return -1;
}

#define TRY(x)                                                                                     \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_) return rc_;                                                                       \
    } while (0)

/* ---- keys that are one flag's: from loadgen's options table ----------- */

/* A JSON number is exact up to 2^53. */
#define JSON_EXACT 9007199254740992.0

/* A config key's lower bound where it is not its flag's: Inference Perf's
 * workers are processes, so 0 (loadgen's in-process mode) is not one. */
static const struct {
    const char *key;
    double lo;
} KEY_MIN[] = {{"load.num_workers", 1}};

static int no_flag(conv *c, const char *key)
{
    snprintf(c->err, c->errlen, "config: %s: no flag of loadgen's options table has this key", key);
    return -EINVAL;
}

/* The flag whose table entry has this config key, with its value. */
static int emit_key(conv *c, const char *key, const char *value)
{
    const rb_opt *e = rb_opts_find_key(&lg_cli_spec, key);
    if (!e) return no_flag(c, key);
    char flag[64];
    snprintf(flag, sizeof flag, "--%s", e->name);
    return emit(c, flag, value);
}

/* A non-empty string emitted as flag. */
static int emit_str(conv *c, const cJSON *v, const char *path, const char *flag)
{
    if (!cJSON_IsString(v) || !v->valuestring[0])
        return bad(c, path, v, "must be a non-empty string");
    return emit(c, flag, v->valuestring);
}

/* The value of a key that is the table entry e's, checked for e's type and
 * bounds (so a mistake is told by its key path) and emitted as e's flag. */
static int conv_value(conv *c, const cJSON *v, const char *path, const rb_opt *e)
{
    char flag[64], buf[160];
    snprintf(flag, sizeof flag, "--%s", e->name);
    switch (e->type) {
    case RB_OPT_INT: {
        double lo = (double)e->lo, hi = (double)e->hi < JSON_EXACT ? (double)e->hi : JSON_EXACT;
        for (size_t i = 0; i < sizeof KEY_MIN / sizeof KEY_MIN[0]; i++)
            if (strcmp(KEY_MIN[i].key, path) == 0) lo = KEY_MIN[i].lo;
        return emit_int(c, v, path, flag, lo, hi);
    }
    case RB_OPT_DOUBLE:
        if (!cJSON_IsNumber(v) || isinf(v->valuedouble) ||
            !(e->excl_min ? v->valuedouble > e->min : v->valuedouble >= e->min)) {
            fmt_num(e->min, buf, sizeof buf);
            char what[200];
            snprintf(what, sizeof what, "must be a number %s %s", e->excl_min ? ">" : ">=", buf);
            return bad(c, path, v, what);
        }
        if (v->valuedouble > e->max) return bad(c, path, v, e->why ? e->why : "is too large");
        fmt_num(v->valuedouble, buf, sizeof buf);
        return emit(c, flag, buf);
    case RB_OPT_SECONDS:
    case RB_OPT_DURATION:
        TRY(duration(c, v, path, e->lo <= 0, buf, sizeof buf));
        return emit(c, flag, buf);
    case RB_OPT_STR:
        return emit_str(c, v, path, flag);
    case RB_OPT_CHOICE: {
        for (const rb_choice *ch = e->choices; ch->name; ch++)
            if (cJSON_IsString(v) && strcmp(v->valuestring, ch->name) == 0)
                return emit(c, flag, ch->name);
        char what[256] = "must be";
        for (const rb_choice *ch = e->choices; ch->name; ch++) {
            size_t l = strlen(what);
            snprintf(what + l, sizeof what - l, "%s\"%s\"",
                     ch == e->choices ? " "
                     : ch[1].name     ? ", "
                                      : " or ",
                     ch->name);
        }
        return bad(c, path, v, what);
    }
    default:
        snprintf(c->err, c->errlen, "config: %s: --%s's values have no config form", path, e->name);
        return -EINVAL;
    }
}

/* ---- the keys that are not one flag's --------------------------------- */

static int lora_keys(conv *c, const cJSON *split);

static int load_keys(conv *c, const cJSON *load)
{
    char p[256], buf[160];
    const cJSON *v = member(load, "load", "type", p, sizeof p);
    int concurrent = 0;
    if (v) {
        static const char *const types[] = {"constant", "poisson", "concurrent", NULL};
        int t = choice(v, types);
        if (t < 0) return bad(c, p, v, "must be \"constant\", \"poisson\" or \"concurrent\"");
        if (t == 0)
            TRY(emit(c, "--burstiness", "inf"));
        else if (t == 1)
            TRY(emit(c, "--burstiness", "1"));
        concurrent = t == 2;
    }
    v = member(load, "load", "concurrency", p, sizeof p);
    const rb_opt *e = rb_opts_find_key(&lg_cli_spec, "load.concurrency");
    if (!e) return no_flag(c, "load.concurrency");
    if (v)
        TRY(conv_value(c, v, p, e));
    else if (concurrent)
        return bad(c, "load.concurrency", NULL, "is required when load.type is \"concurrent\"");
    const cJSON *stages = member(load, "load", "stages", p, sizeof p);
    if (stages) {
        if (!cJSON_IsArray(stages))
            return bad(c, p, stages, "must be an array of {\"rate\", \"duration\"}");
        int i = 0;
        for (const cJSON *st = stages->child; st; st = st->next, i++) {
            static const char *const skeys[] = {"rate", "duration", NULL};
            char sp[64], q[96], rate[64], dur[96];
            snprintf(sp, sizeof sp, "load.stages[%d]", i);
            TRY(check_object(c, st, sp, skeys));
            v = member(st, sp, "rate", q, sizeof q);
            if (!v) return bad(c, q, NULL, "is required");
            TRY(positive(c, v, q, rate, sizeof rate));
            v = member(st, sp, "duration", q, sizeof q);
            if (!v) return bad(c, q, NULL, "is required");
            TRY(duration(c, v, q, 0, dur, sizeof dur));
            snprintf(buf, sizeof buf, "%s:%s", rate, dur);
            TRY(emit_key(c, "load.stages", buf));
        }
    }
    const cJSON *lora = member(load, "load", "lora_traffic_split", p, sizeof p);
    return lora ? lora_keys(c, lora) : 0;
}

/* load.lora_traffic_split: [{"name", "split"}, ...], the splits >= 0 summing
 * to 1 (Inference Perf's MultiLoRAConfig), as --lora-modules NAME=SPLIT,... */
static int lora_keys(conv *c, const cJSON *split)
{
    static const char *const lkeys[] = {"name", "split", NULL};
    const char *path = "load.lora_traffic_split";
    if (!cJSON_IsArray(split) || !split->child)
        return bad(c, path, split, "must be a non-empty array of {\"name\", \"split\"}");
    char buf[LG_MAX_LORA * (LG_LORA_NAME + 32)] = "", sp[64], q[96], num[64];
    double sum = 0;
    int i = 0;
    for (const cJSON *it = split->child; it; it = it->next, i++) {
        snprintf(sp, sizeof sp, "%s[%d]", path, i);
        if (i == LG_MAX_LORA) return bad(c, path, NULL, "at most 16 adapters");
        TRY(check_object(c, it, sp, lkeys));
        const cJSON *v = member(it, sp, "name", q, sizeof q);
        if (!v) return bad(c, q, NULL, "is required");
        if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) >= LG_LORA_NAME ||
            strpbrk(v->valuestring, ",="))
            return bad(c, q, v,
                       "must be a non-empty string of at most 127 bytes without ',' or '='");
        const char *name = v->valuestring;
        v = member(it, sp, "split", q, sizeof q);
        if (!v) return bad(c, q, NULL, "is required");
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || isinf(v->valuedouble))
            return bad(c, q, v, "must be a number >= 0");
        sum += v->valuedouble;
        fmt_num(v->valuedouble, num, sizeof num);
        size_t l = strlen(buf);
        snprintf(buf + l, sizeof buf - l, "%s%s=%s", i ? "," : "", name, num);
    }
    if (fabs(sum - 1.0) > 1e-6) {
        snprintf(num, sizeof num, "the splits sum to %.9g, not 1", sum);
        return bad(c, path, NULL, num);
    }
    return emit_key(c, path, buf);
}

static int sweep_keys(conv *c, const cJSON *sweep)
{
    /* Inference Perf's sweep is always placed by its saturation probe
     * (timeout, saturation_percentile and num_requests are the probe's
     * flags); a sweep with load.sweep.max_rate (loadgen's own key) is placed
     * from that rate instead, with no probe. */
    char p[256];
    if (!member(sweep, "load.sweep", "max_rate", p, sizeof p)) TRY(emit(c, "--sweep-probe", NULL));
    return 0;
}

static int api_keys(conv *c, const cJSON *api)
{
    char p[64];
    const cJSON *v = member(api, "api", "type", p, sizeof p);
    if (v) {
        static const char *const types[] = {"completion", "chat", NULL};
        int t = choice(v, types);
        if (t < 0) return bad(c, p, v, "must be \"completion\" or \"chat\"");
        TRY(emit_key(c, "api.type", t == 0 ? "/v1/completions" : "/v1/chat/completions"));
    }
    v = member(api, "api", "streaming", p, sizeof p);
    if (v) {
        if (!cJSON_IsBool(v)) return bad(c, p, v, "must be true or false");
        TRY(emit(c, cJSON_IsTrue(v) ? "--stream" : "--no-stream", NULL));
    }
    return 0;
}

static int data_keys(conv *c, const cJSON *data)
{
    char p[96];
    const cJSON *v = member(data, "data", "type", p, sizeof p);
    if (v) {
        static const char *const types[] = {"random", "shared_prefix", "sharegpt", "trace", NULL};
        static const char *const names[] = {"random", "prefix", "sharegpt", "trace"};
        int t = choice(v, types);
        if (t < 0)
            return bad(c, p, v, "must be \"random\", \"shared_prefix\", \"sharegpt\" or \"trace\"");
        TRY(emit_key(c, "data.type", names[t]));
    }
    return 0;
}

static int report_keys(conv *c, const cJSON *report)
{
    char p[96];
    const cJSON *rl = member(report, "report", "request_lifecycle", p, sizeof p);
    if (rl) {
        static const char *const rkeys[] = {"percentiles", NULL};
        TRY(check_object(c, rl, p, rkeys));
        const cJSON *pc = member(rl, "report.request_lifecycle", "percentiles", p, sizeof p);
        if (pc) {
            if (!cJSON_IsArray(pc) || !pc->child)
                return bad(c, p, pc, "must be a non-empty array of numbers in (0, 100]");
            size_t n = (size_t)cJSON_GetArraySize(pc), cap = n * 24 + 1, len = 0;
            char *list = malloc(cap);
            if (!list) {
                snprintf(c->err, c->errlen, "config: out of memory");
                return -ENOMEM;
            }
            int i = 0;
            for (const cJSON *x = pc->child; x; x = x->next, i++) {
                if (!cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble <= 100)) {
                    char q[128];
                    snprintf(q, sizeof q, "%s[%d]", p, i);
                    free(list);
                    return bad(c, q, x, "must be a number in (0, 100]");
                }
                char num[32];
                fmt_num(x->valuedouble, num, sizeof num);
                len += (size_t)snprintf(list + len, cap - len, "%s%s", i ? "," : "", num);
            }
            int rc = emit_key(c, "report.request_lifecycle.percentiles", list);
            free(list);
            TRY(rc);
        }
    }
    const cJSON *gp = member(report, "report", "goodput", p, sizeof p);
    if (gp) {
        static const char *const gkeys[] = {"constraints", NULL};
        TRY(check_object(c, gp, p, gkeys));
        const cJSON *cs = member(gp, "report.goodput", "constraints", p, sizeof p);
        if (cs) {
            /* Inference Perf's and vLLM's names; e2e is an alias of e2el. */
            static const char *const metrics[] = {"ttft",  "tpot", "itl", "e2el",
                                                  "ntpot", "e2e",  NULL};
            TRY(check_object(c, cs, p, metrics));
            for (const cJSON *m = cs->child; m; m = m->next) {
                char q[160], ms[64], item[96];
                snprintf(q, sizeof q, "%s.%s", p, m->string);
                /* --goodput's unit; lg_cfgfile has turned Inference Perf's
                 * seconds into it. */
                if (!cJSON_IsNumber(m) || !(m->valuedouble > 0) || m->valuedouble > 1e12)
                    return bad(c, q, m, "must be a number of milliseconds > 0");
                fmt_num(m->valuedouble, ms, sizeof ms);
                snprintf(item, sizeof item, "%s:%s",
                         strcmp(m->string, "e2e") == 0 ? "e2el" : m->string, ms);
                TRY(emit_key(c, "report.goodput.constraints", item));
            }
        }
    }
    return 0;
}

/* ---- the sections ----------------------------------------------------- */

/* An object of the config: the order of its keys (Inference Perf's: the
 * order of the flags that come out, and of the keys a message lists; a key
 * of the table under this path that is not named here comes after them),
 * and its keys that are not one flag's, which conv converts first. */
typedef struct section {
    const char *path;
    const char *const *order;
    const char *const *special;
    int (*conv)(conv *c, const cJSON *obj);
} section;

static const char *const LOAD_ORDER[] = {
    "type", "stages",      "interval",           "sweep", "num_workers",
    "seed", "concurrency", "lora_traffic_split", NULL};
static const char *const LOAD_SPECIAL[] = {"type", "concurrency", "stages", "lora_traffic_split",
                                           NULL};
static const char *const SWEEP_ORDER[] = {"type",
                                          "num_stages",
                                          "max_rate",
                                          "stage_duration",
                                          "num_requests",
                                          "timeout",
                                          "saturation_percentile",
                                          NULL};
static const char *const API_ORDER[] = {"type", "streaming", NULL};
static const char *const DATA_ORDER[] = {
    "type", "path", "input_distribution", "output_distribution", "shared_prefix", NULL};
static const char *const DATA_SPECIAL[] = {"type", NULL};
static const char *const PREFIX_ORDER[] = {"num_groups", "num_prompts_per_group",
                                           "system_prompt_len", "question_len", NULL};
static const char *const REPORT_ORDER[] = {"request_lifecycle", "goodput", NULL};

static const section SECTIONS[] = {
    {"load", LOAD_ORDER, LOAD_SPECIAL, load_keys},
    {"load.sweep", SWEEP_ORDER, NULL, sweep_keys},
    {"api", API_ORDER, API_ORDER, api_keys},
    {"data", DATA_ORDER, DATA_SPECIAL, data_keys},
    {"data.shared_prefix", PREFIX_ORDER, NULL, NULL},
    {"report", REPORT_ORDER, REPORT_ORDER, report_keys},
};

static int named(const char *const *list, const char *key)
{
    for (; list && *list; list++)
        if (strcmp(*list, key) == 0) return 1;
    return 0;
}

/* The keys of the object at path, NULL-ended: the section's order, then the
 * next component of each table key under path. Returns how many. */
static size_t known_keys(const char *path, const section *sec, const char **out, char (*comp)[64],
                         size_t cap)
{
    size_t n = 0, pl = strlen(path);
    for (const char *const *k = sec ? sec->order : NULL; k && *k && n + 1 < cap; k++)
        out[n++] = *k;
    for (size_t i = 0; i < lg_cli_spec.n && n + 1 < cap; i++) {
        const char *key = lg_cli_spec.opts[i].key;
        if (!key || strncmp(key, path, pl) != 0 || key[pl] != '.') continue;
        const char *rest = key + pl + 1;
        size_t l = strcspn(rest, ".");
        if (l >= 64) continue;
        memcpy(comp[n], rest, l);
        comp[n][l] = '\0';
        int seen = 0;
        for (size_t j = 0; j < n; j++)
            seen |= strcmp(out[j], comp[n]) == 0;
        if (!seen) {
            out[n] = comp[n];
            n++;
        }
    }
    out[n] = NULL;
    return n;
}

/* The object at path: its keys checked, its special keys converted, then
 * each other key as its table entry's flag, or as an object of keys. */
static int conv_object(conv *c, const cJSON *obj, const char *path)
{
    const section *sec = NULL;
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++)
        if (strcmp(SECTIONS[i].path, path) == 0) sec = &SECTIONS[i];
    const char *known[40];
    char comp[40][64];
    size_t n = known_keys(path, sec, known, comp, 40);
    TRY(check_object(c, obj, path, known));
    if (sec && sec->conv) TRY(sec->conv(c, obj));
    for (size_t i = 0; i < n; i++) {
        if (sec && named(sec->special, known[i])) continue;
        char sub[256];
        const cJSON *v = member(obj, path, known[i], sub, sizeof sub);
        if (!v) continue;
        const rb_opt *e = rb_opts_find_key(&lg_cli_spec, sub);
        TRY(e ? conv_value(c, v, sub, e) : conv_object(c, v, sub));
    }
    return 0;
}

int lg_config_to_args(const char *json, size_t len, lg_args *out, char *err, size_t errlen)
{
    *out = (lg_args){0};
    char dummy[8];
    conv c = {.out = out,
              .err = err && errlen ? err : dummy,
              .errlen = err && errlen ? errlen : sizeof dummy};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    int rc;
    if (!root) {
        size_t at = end && end >= json && end <= json + len ? (size_t)(end - json) : 0, line = 1;
        for (size_t i = 0; i < at; i++)
            line += json[i] == '\n';
        snprintf(c.err, c.errlen, "config: line %zu: not valid JSON", line);
        return -EINVAL;
    }
    while (end && end < json + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r'))
        end++;
    if (end && end < json + len) {
        rc = bad(&c, "(top level)", NULL, "unexpected text after the JSON object");
        goto done;
    }
    static const char *const keys[] = {"load", "api", "server", "data", "report", "metrics", NULL};
    if ((rc = check_object(&c, root, "", keys))) goto done;
    const cJSON *v;
    /* The flags come out in a fixed order of the sections. */
    static const char *const order[] = {"server", "api", "load", "data", "report", "metrics"};
    for (int i = 0; i < 6 && !rc; i++)
        if ((v = cJSON_GetObjectItemCaseSensitive(root, order[i])))
            rc = conv_object(&c, v, order[i]);
done:
    cJSON_Delete(root);
    if (rc) lg_args_free(out);
    return rc;
}

void lg_args_free(lg_args *a)
{
    if (!a) return;
    for (int i = 0; i < a->argc; i++)
        free(a->argv[i]);
    free(a->argv);
    a->argv = NULL;
    a->argc = 0;
}
