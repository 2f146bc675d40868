/* lg_export_vllm: the result in vLLM's `bench serve` layout (see
 * lg_export.h for the keys and where they come from). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_export.h"
#include "rb_json.h"

/* vLLM's metric keys: (mean|median|std|pNN)_(ttft|tpot|itl|e2el)_ms. */
static int vllm_metric_key(const char *k)
{
    static const char *const ms[] = {"_ttft_ms", "_tpot_ms", "_itl_ms", "_e2el_ms"};
    const char *u = strchr(k, '_');
    if (!u) return 0;
    size_t head = (size_t)(u - k);
    int stat = (head == 4 && !strncmp(k, "mean", 4)) || (head == 6 && !strncmp(k, "median", 6)) ||
               (head == 3 && !strncmp(k, "std", 3));
    if (!stat && k[0] == 'p' && head > 1) {
        char *end;
        strtod(k + 1, &end);
        stat = end == u;
    }
    if (!stat) return 0;
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
        if (strcmp(u, ms[i]) == 0) return 1;
    return 0;
}

/* The metadata's key of line l (to nl) into buf; 0 if the line has none. */
static int meta_key(const char *l, const char *nl, char *buf, size_t cap)
{
    const char *eq = memchr(l, '=', (size_t)(nl - l));
    if (!eq) return 0;
    while (l < eq && (*l == ' ' || *l == '\t'))
        l++;
    const char *e = eq;
    while (e > l && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    snprintf(buf, cap, "%.*s", (int)(e - l), l);
    return buf[0] != 0;
}

static int is_meta(const char *metadata, const char *k)
{
    char key[256];
    for (const char *l = metadata ? metadata : "", *nl; *l && (nl = strchr(l, '\n')); l = nl + 1)
        if (meta_key(l, nl, key, sizeof key) && strcmp(key, k) == 0) return 1;
    return 0;
}

/* The keys of vLLM's result that rhobench's result has under the same name. */
static const char *const vllm_head[] = {"date",
                                        "model_id",
                                        "tokenizer_id",
                                        "num_prompts",
                                        "request_rate",
                                        "burstiness",
                                        "max_concurrency",
                                        "ramp_up_strategy",
                                        "ramp_up_start_rps",
                                        "ramp_up_end_rps",
                                        "duration",
                                        "completed",
                                        "failed",
                                        "total_input_tokens",
                                        "total_output_tokens",
                                        "request_throughput",
                                        "request_goodput",
                                        "output_throughput",
                                        "total_token_throughput"};

/* A result written with --save-detailed carries some of the arrays: the
 * export writes its own from the records, not a copy under "rhobench". */
static int in_head(const char *k)
{
    for (size_t i = 0; i < sizeof vllm_head / sizeof vllm_head[0]; i++)
        if (strcmp(vllm_head[i], k) == 0) return 1;
    return strcmp(k, "backend") == 0 || vllm_metric_key(k) || lg_export_array_key(k);
}

/* A request's itls as vLLM's bench lists them (serve.py's output.itl: the
 * gap before each token after the first, s), from its token times; [] for
 * a record without them. */
static void itls_out(FILE *f, const lg_record *r)
{
    fputc('[', f);
    for (int64_t j = 1; j < r->n_token_times; j++)
        fprintf(f, j > 1 ? ",%.12g" : "%.12g",
                (double)(r->token_times_us[j] - r->token_times_us[j - 1]) / 1e6);
    fputc(']', f);
}

/* The arrays' names, in the order of their bits (LG_XA_*) and of vLLM's
 * result. */
static const char *const xarrays[] = {"input_lens",  "output_lens",     "ttfts", "itls",
                                      "start_times", "generated_texts", "errors"};
enum { N_XARRAYS = sizeof xarrays / sizeof xarrays[0] };

int lg_export_array_key(const char *k)
{
    for (int a = 0; a < N_XARRAYS; a++)
        if (strcmp(xarrays[a], k) == 0) return 1;
    return 0;
}

/* One of vLLM's per-request arrays, written straight to f (a long run has
 * millions of entries: no tree). */
static void array_out(FILE *f, const char *k, const lg_xrecs *x, int what)
{
    fprintf(f, ",\n\t\"%s\": [", k);
    for (size_t i = 0; i < x->n; i++) {
        const lg_record *r = &x->r[i];
        if (i) fputc(',', f);
        double v;
        switch (what) {
        case 0: /* input_lens */
            fprintf(f, "%lld", (long long)r->input_tokens);
            break;
        case 1: /* output_lens: 0 for a failure, as vLLM */
            fprintf(f, "%lld", lg_xrec_ok(r) ? (long long)r->output_tokens : 0LL);
            break;
        case 2: /* ttfts, s: 0.0 for a failure, as vLLM */
            v = lg_xrec_ok(r) ? lg_xrec_value(r, LG_X_TTFT) : NAN;
            fprintf(f, "%.12g", isnan(v) ? 0.0 : v);
            break;
        case 3: /* itls: from the token times, a failure's too (vLLM keeps those) */
            itls_out(f, r);
            break;
        case 4: /* start_times, s from the run's start: the intended send */
            fprintf(f, "%.12g", (double)r->intended_ns / 1e9);
            break;
        case 5: /* generated_texts: the records keep no text */
            fputs("\"\"", f);
            break;
        default: /* errors: "" for a success, else the failure's class */
            fprintf(f, "\"%s\"", lg_xrec_ok(r) ? "" : r->cls);
            break;
        }
    }
    fputc(']', f);
}

int lg_export_vllm(FILE *f, const cJSON *result, const lg_xrecs *recs, const char *metadata,
                   const char *source)
{
    cJSON *v = cJSON_CreateObject();
    if (!v) return -ENOMEM;
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(result, "endpoint");
    const char *be = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(result, "backend"));
    /* vLLM's --backend: openai-chat speaks chat/completions */
    if (cJSON_IsString(ep) && strstr(ep->valuestring, "chat/completions")) be = "openai-chat";
    rb_json_copy(v, result, "date");
    cJSON_AddStringToObject(v, "endpoint_type", be ? be : "openai");
    cJSON_AddStringToObject(v, "backend", be ? be : "openai");
    cJSON_AddNullToObject(v, "label");
    for (size_t i = 1; i < sizeof vllm_head / sizeof vllm_head[0]; i++) {
        if (i == 4) { /* the metadata's keys, where vLLM puts them */
            const cJSON *it;
            cJSON_ArrayForEach(it, result)
            {
                if (it->string && is_meta(metadata, it->string))
                    cJSON_AddItemToObject(v, it->string, cJSON_Duplicate(it, 1));
            }
        }
        if (cJSON_GetObjectItemCaseSensitive(result, vllm_head[i]))
            rb_json_copy(v, result, vllm_head[i]);
        else
            cJSON_AddNullToObject(v, vllm_head[i]);
    }
    /* vLLM's peak figures, which rhobench does not measure */
    cJSON_AddNullToObject(v, "max_output_tokens_per_s");
    cJSON_AddNullToObject(v, "max_concurrent_requests");
    const cJSON *it;
    cJSON_ArrayForEach(it, result)
    {
        if (it->string && vllm_metric_key(it->string))
            cJSON_AddItemToObject(v, it->string, cJSON_Duplicate(it, 1));
    }
    cJSON *rb = cJSON_AddObjectToObject(v, "rhobench");
    cJSON_AddStringToObject(rb, "source", source);
    cJSON_AddStringToObject(rb, "latency_from", "the intended send time");
    if (recs) {
        size_t timed = 0, truncated = 0;
        for (size_t i = 0; i < recs->n; i++) {
            timed += recs->r[i].has_token_times != 0;
            truncated += recs->r[i].token_times_dropped > 0;
        }
        cJSON_AddNumberToObject(rb, "per_request_records", (double)recs->n);
        cJSON_AddStringToObject(
            rb, "per_request",
            timed ? "itls from the records' token times (--save-token-times: the arrival times "
                    "the result's ITL is measured from, to 1 us), a request's list ending at "
                    "--token-times-cap (itls_truncated_requests); generated_texts empty "
                    "strings: the records keep no text; ttfts, start_times in seconds from the "
                    "intended send time and the run's start"
                  : "itls are empty and generated_texts empty strings: the per-request "
                    "records keep no token times (see --save-token-times) and no text; ttfts, "
                    "start_times in seconds from the intended send time and the run's start");
        if (timed)
            cJSON_AddNumberToObject(rb, "itls_truncated_requests", (double)truncated);
        else
            cJSON_AddNullToObject(rb, "itls_truncated_requests");
    }
    cJSON_ArrayForEach(it, result)
    {
        if (it->string && !in_head(it->string) && !is_meta(metadata, it->string))
            cJSON_AddItemToObject(rb, it->string, cJSON_Duplicate(it, 1));
    }
    char *txt = cJSON_Print(v);
    cJSON_Delete(v);
    if (!txt) return -ENOMEM;
    lg_export_arrays(f, txt, recs, LG_XA_ALL);
    free(txt);
    return 0;
}

void lg_export_arrays(FILE *f, const char *txt, const lg_xrecs *recs, unsigned which)
{
    char *close = strrchr(txt, '}'); /* reopened for the arrays */
    size_t n = close ? (size_t)(close - txt) : strlen(txt);
    while (n && (txt[n - 1] == '\n' || txt[n - 1] == '\t'))
        n--;
    fwrite(txt, 1, n, f);
    for (int a = 0; recs && a < N_XARRAYS; a++)
        if (which & (1u << a)) array_out(f, xarrays[a], recs, a);
    fputs("\n}\n", f);
}
