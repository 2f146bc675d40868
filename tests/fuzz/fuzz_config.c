/* fuzz_config: the JSON config converter never crashes or leaks; what it
 * accepts is checked against lg_config.h's table, read independently from the
 * same bytes with cJSON: every flag is one the table names, with a value
 * exactly when the table gives one, in the order server, api, load, data,
 * report, each at most once except --stage and --goodput; a key is present
 * exactly when its flag is, strings pass through unchanged and numbers read
 * back equal; a second conversion gives the same list. Then the list goes
 * through the CLI's own parser and checks (lg_cli_parse, lg_cli_finish) as
 * loadgen --config does. What it refuses has a message naming a line, the
 * top level or a key path. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_config.h"

typedef struct flag_rule {
    const char *flag;
    int group;      /* 0 server, 1 api, 2 load, 3 data, 4 report */
    int has_value;  /* followed by a value */
    int repeatable; /* --stage, --goodput */
} flag_rule;

static const flag_rule RULES[] = {
    {"--base-url", 0, 1, 0},
    {"--model", 0, 1, 0},
    {"--cert", 0, 1, 0},
    {"--key", 0, 1, 0},
    {"--endpoint", 1, 1, 0},
    {"--stream", 1, 0, 0},
    {"--no-stream", 1, 0, 0},
    {"--burstiness", 2, 1, 0},
    {"--max-concurrency", 2, 1, 0},
    {"--stage", 2, 1, 1},
    {"--stage-pause", 2, 1, 0},
    {"--sweep", 2, 1, 0},
    {"--sweep-stages", 2, 1, 0},
    {"--sweep-max-rate", 2, 1, 0},
    {"--sweep-probe", 2, 0, 0},
    {"--sweep-probe-requests", 2, 1, 0},
    {"--sweep-probe-timeout", 2, 1, 0},
    {"--sweep-probe-percentile", 2, 1, 0},
    {"--stage-duration", 2, 1, 0},
    {"--num-workers", 2, 1, 0},
    {"--seed", 2, 1, 0},
    {"--lora-modules", 2, 1, 0},
    {"--dataset-name", 3, 1, 0},
    {"--dataset-path", 3, 1, 0},
    {"--random-input-len", 3, 1, 0},
    {"--random-output-len", 3, 1, 0},
    {"--prefix-groups", 3, 1, 0},
    {"--prefix-prompts-per-group", 3, 1, 0},
    {"--prefix-system-len", 3, 1, 0},
    {"--prefix-question-len", 3, 1, 0},
    {"--metric-percentiles", 4, 1, 0},
    {"--goodput", 4, 1, 1},
};
#define N_RULES (sizeof RULES / sizeof RULES[0])

/* The rule of argv[i] (a flag), or NULL. */
static const flag_rule *rule_of(const char *arg)
{
    for (size_t r = 0; r < N_RULES; r++)
        if (strcmp(arg, RULES[r].flag) == 0) return &RULES[r];
    return NULL;
}

/* Index of the next flag named `flag` at or after i (walking flag by flag,
 * so a value that looks like a flag is not taken for one), or -1. */
static int next_flag(const lg_args *a, int i, const char *flag)
{
    for (; i < a->argc; i += 1 + rule_of(a->argv[i])->has_value)
        if (strcmp(a->argv[i], flag) == 0) return i;
    return -1;
}

/* The value after the first `flag` ("" for a flag without one), or NULL;
 * how many times it occurs in *count. */
static const char *find(const lg_args *a, const char *flag, int *count)
{
    const char *v = NULL;
    *count = 0;
    for (int i = next_flag(a, 0, flag); i >= 0;
         i = next_flag(a, i + 1 + rule_of(flag)->has_value, flag)) {
        if (!v) v = rule_of(flag)->has_value ? a->argv[i + 1] : "";
        (*count)++;
    }
    return v;
}

/* The member at a dotted path ("load.sweep.type"), or NULL. */
static const cJSON *at(const cJSON *root, const char *path)
{
    char buf[128];
    strncpy(buf, path, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    const cJSON *v = root;
    for (char *k = strtok(buf, "."); k && v; k = strtok(NULL, "."))
        v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, k) : NULL;
    return v;
}

/* A number's flag reads back as the number. */
static int same_number(const char *text, const cJSON *v)
{
    char *end;
    double x = strtod(text, &end);
    return cJSON_IsNumber(v) && end != text && *end == '\0' && x == v->valuedouble;
}

/* The shape of the list: known flags, values where due, groups in order. */
static void check_shape(const lg_args *a)
{
    if (a->argc < 0 || (a->argc > 0 && !a->argv) || (a->argv && a->argv[a->argc])) abort();
    int group = 0, seen[N_RULES] = {0};
    for (int i = 0; i < a->argc; i++) {
        const flag_rule *r = rule_of(a->argv[i]);
        if (!r) abort(); /* not a flag of the table (or a value out of place) */
        if (r->group < group || (seen[r - RULES]++ && !r->repeatable)) abort();
        group = r->group;
        if (r->has_value && (++i >= a->argc || !a->argv[i] || !a->argv[i][0])) abort();
    }
}

/* Each key against its flag. */
static void check_mapping(const lg_args *a, const cJSON *root)
{
    static const struct {
        const char *path, *flag;
        int string; /* 1: passed through as is; 0: a number */
    } keys[] = {
        {"server.base_url", "--base-url", 1},
        {"server.model_name", "--model", 1},
        {"data.path", "--dataset-path", 1},
        {"load.concurrency", "--max-concurrency", 0},
        {"load.sweep.num_stages", "--sweep-stages", 0},
        {"load.sweep.max_rate", "--sweep-max-rate", 0},
        {"load.sweep.num_requests", "--sweep-probe-requests", 0},
        {"load.sweep.saturation_percentile", "--sweep-probe-percentile", 0},
        {"load.num_workers", "--num-workers", 0},
        {"load.seed", "--seed", 0},
        {"data.input_distribution.mean", "--random-input-len", 0},
        {"data.output_distribution.mean", "--random-output-len", 0},
        {"data.shared_prefix.num_groups", "--prefix-groups", 0},
        {"data.shared_prefix.num_prompts_per_group", "--prefix-prompts-per-group", 0},
        {"data.shared_prefix.system_prompt_len", "--prefix-system-len", 0},
        {"data.shared_prefix.question_len", "--prefix-question-len", 0},
    };
    int n;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = at(root, keys[i].path);
        const char *f = find(a, keys[i].flag, &n);
        if (!v != !f) abort(); /* a key without its flag, or a flag without its key */
        if (!v) continue;
        if (keys[i].string ? !cJSON_IsString(v) || strcmp(f, v->valuestring) != 0
                           : !same_number(f, v))
            abort();
    }
    /* keys given by name: the flag's value is the documented one */
    const cJSON *v = at(root, "api.type");
    const char *f = find(a, "--endpoint", &n);
    if (!v != !f || (v && strcmp(f, strcmp(v->valuestring, "chat") == 0 ? "/v1/chat/completions"
                                                                        : "/v1/completions")))
        abort();
    v = at(root, "api.streaming");
    int on, off;
    find(a, "--stream", &on);
    find(a, "--no-stream", &off);
    if ((v ? cJSON_IsTrue(v) : 0) != on || (v ? cJSON_IsFalse(v) : 0) != off) abort();
    v = at(root, "load.type");
    f = find(a, "--burstiness", &n);
    if (v && !strcmp(v->valuestring, "constant")  ? !f || strcmp(f, "inf")
        : v && !strcmp(v->valuestring, "poisson") ? !f || strcmp(f, "1")
                                                  : f != NULL)
        abort();
    v = at(root, "data.type");
    f = find(a, "--dataset-name", &n);
    if (!v != !f ||
        (v && strcmp(f, strcmp(v->valuestring, "shared_prefix") == 0 ? "prefix" : v->valuestring)))
        abort();
    v = at(root, "load.sweep.type");
    f = find(a, "--sweep", &n);
    if (!v != !f || (v && strcmp(f, v->valuestring))) abort();
    /* Inference Perf's sweep (no loadgen max_rate) is the probe's, once */
    v = at(root, "load.sweep");
    find(a, "--sweep-probe", &n);
    if (n != (v && !at(root, "load.sweep.max_rate") ? 1 : 0)) abort();
    /* durations carry a unit */
    static const char *const durs[][2] = {{"load.interval", "--stage-pause"},
                                          {"load.sweep.stage_duration", "--stage-duration"},
                                          {"load.sweep.timeout", "--sweep-probe-timeout"}};
    for (size_t i = 0; i < 3; i++) {
        v = at(root, durs[i][0]);
        f = find(a, durs[i][1], &n);
        if (!v != !f) abort();
        if (f && (strchr("0123456789.", f[strlen(f) - 1]) || strtod(f, NULL) < 0)) abort();
    }
    /* one --stage RATE:DURATION per stage, rate read back equal */
    v = at(root, "load.stages");
    find(a, "--stage", &n);
    if (n != (v ? cJSON_GetArraySize(v) : 0)) abort();
    const cJSON *st = v ? v->child : NULL;
    for (int i = next_flag(a, 0, "--stage"); i >= 0; i = next_flag(a, i + 2, "--stage")) {
        char rate[64];
        const char *colon = strchr(a->argv[i + 1], ':');
        if (!colon || colon - a->argv[i + 1] >= (long)sizeof rate || !st) abort();
        memcpy(rate, a->argv[i + 1], (size_t)(colon - a->argv[i + 1]));
        rate[colon - a->argv[i + 1]] = '\0';
        if (!same_number(rate, cJSON_GetObjectItemCaseSensitive(st, "rate")) ||
            strchr("0123456789.", colon[strlen(colon) - 1]))
            abort();
        st = st->next;
    }
    /* --lora-modules NAME=SPLIT,... : one item per entry, in order, the
     * name as it is, the split read back equal */
    v = at(root, "load.lora_traffic_split");
    f = find(a, "--lora-modules", &n);
    if (!v != !f) abort();
    st = v ? v->child : NULL;
    for (const char *s = f; s && *s; st = st->next) {
        const char *eq = strchr(s, '='), *comma = strchr(s, ',');
        const cJSON *name = st ? cJSON_GetObjectItemCaseSensitive(st, "name") : NULL;
        if (!eq || (comma && comma < eq) || !cJSON_IsString(name) ||
            strlen(name->valuestring) != (size_t)(eq - s) ||
            strncmp(s, name->valuestring, (size_t)(eq - s)))
            abort();
        char split[64];
        size_t l = comma ? (size_t)(comma - eq - 1) : strlen(eq + 1);
        if (l >= sizeof split) abort();
        memcpy(split, eq + 1, l);
        split[l] = '\0';
        if (!same_number(split, cJSON_GetObjectItemCaseSensitive(st, "split"))) abort();
        s = comma ? comma + 1 : eq + 1 + l;
    }
    if (st) abort();
    /* one entry of the list per percentile, in order, read back equal */
    v = at(root, "report.request_lifecycle.percentiles");
    f = find(a, "--metric-percentiles", &n);
    if (!v != !f) abort();
    if (f) {
        const cJSON *x = v->child;
        for (const char *s = f; *s; x = x->next) {
            char *end;
            double p = strtod(s, &end);
            if (!x || end == s || p != x->valuedouble || (*end && *end != ',')) abort();
            s = *end ? end + 1 : end;
        }
        if (x) abort();
    }
    /* one --goodput METRIC:MS per constraint, in order, e2e named e2el */
    v = at(root, "report.goodput.constraints");
    find(a, "--goodput", &n);
    if (n != (v ? cJSON_GetArraySize(v) : 0)) abort();
    const cJSON *m = v ? v->child : NULL;
    for (int i = next_flag(a, 0, "--goodput"); i >= 0; i = next_flag(a, i + 2, "--goodput")) {
        const char *item = a->argv[i + 1], *colon = strchr(item, ':');
        const char *name = strcmp(m->string, "e2e") == 0 ? "e2el" : m->string;
        if (!colon || (size_t)(colon - item) != strlen(name) ||
            strncmp(item, name, strlen(name)) != 0 || !same_number(colon + 1, m))
            abort();
        m = m->next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    lg_args a, again;
    char err[256];
    int rc = lg_config_to_args((const char *)in, size, &a, err, sizeof err);
    if (rc == 0) {
        check_shape(&a);
        cJSON *root = cJSON_ParseWithLength((const char *)in, size);
        if (!root) abort(); /* accepted, so it is JSON */
        check_mapping(&a, root);
        cJSON_Delete(root);
        if (lg_config_to_args((const char *)in, size, &again, err, sizeof err) != 0 ||
            again.argc != a.argc)
            abort();
        for (int i = 0; i < a.argc; i++)
            if (strcmp(a.argv[i], again.argv[i]) != 0) abort();
        lg_args_free(&again);
        lg_opts o;
        lg_opts_defaults(&o, 2);
        char cli_err[256];
        if (lg_cli_parse(&o, a.argc, a.argv, cli_err, sizeof cli_err) == 0)
            (void)lg_cli_finish(&o, cli_err, sizeof cli_err);
    } else {
        if (a.argv || a.argc || !memchr(err, '\0', sizeof err) || strncmp(err, "config: ", 8) != 0)
            abort();
        /* the message names a line, the top level or a key path */
        const char *w = err + 8;
        static const char *const heads[] = {"line ", "(top level)", "out of memory",
                                            "load",  "api",         "server",
                                            "data",  "report",      "metrics"};
        int named = strlen(err) == sizeof err - 1 || strstr(w, ": unknown key") != NULL;
        for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
            named |= strncmp(w, heads[i], strlen(heads[i])) == 0;
        if (!named) abort();
    }
    lg_args_free(&a);
    return 0;
}
